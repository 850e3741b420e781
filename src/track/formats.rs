//! Reading a tracked file into the JSON model, chosen by its extension:
//!
//! - `.json`: strict JSON ([`crate::canon::parse`]); a `.json` file that is not, but is JSON
//!   with comments (`tsconfig.json`, `.vscode/settings.json`), is read as `.jsonc` is.
//! - `.jsonc`, `.json5`: JSON with comments, trailing commas and JSON5's extensions (single
//!   quotes, unquoted names, hexadecimal and `+` numbers), by the `jsonc-parser` crate.
//!   Numbers keep their digits; hexadecimal ones become integers; `Infinity`/`NaN` become
//!   the strings `"inf"`, `"-inf"`, `"nan"` (as in TOML). Comments are not part of the value:
//!   they are kept with the raw bytes.
//! - `.toml`: TOML 1.1, walked into JSON by hand: datetimes become their RFC 3339 text,
//!   integers stay exact, `inf`/`-inf`/`nan` become the strings `"inf"`, `"-inf"`, `"nan"`.
//! - `.yaml`/`.yml`: YAML 1.2 typing (`yes`, `on` and `010` stay strings; `.inf`/`.nan`
//!   become strings). One document is its value; a stream of several documents is an array of
//!   them; an empty stream is `null`. Duplicate keys are refused.
//! - anything else: UTF-8 text as one JSON string; other bytes as
//!   `{"$binary": "<blake3 hex of the bytes>", "size": N}`.
//!
//! A leading UTF-8 byte-order mark is ignored by the three structured formats. The raw bytes are
//! kept apart (as an object), so nothing here needs to be reversible.

use crate::canon::{self, ObjectId};
use crate::canon::{Map, Value};
use crate::error::FileParseError;

/// How a tracked file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.json`
    Json,
    /// `.jsonc` or `.json5`: JSON with comments and trailing commas.
    Jsonc,
    /// `.toml`
    Toml,
    /// `.yaml` or `.yml`
    Yaml,
    /// Anything else: a string, or a hash for bytes that are not UTF-8.
    Opaque,
}

impl Format {
    /// The format of a file, by its extension (case-insensitive).
    pub fn of(name: &str) -> Self {
        let base = name.rsplit('/').next().unwrap_or(name);
        let ext = match base.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
            _ => return Format::Opaque,
        };
        match ext.as_str() {
            "json" => Format::Json,
            "jsonc" | "json5" => Format::Jsonc,
            "toml" => Format::Toml,
            "yaml" | "yml" => Format::Yaml,
            _ => Format::Opaque,
        }
    }

    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Jsonc => "JSONC",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
            Format::Opaque => "text",
        }
    }
}

/// Reads the bytes of the file `key` into the JSON model.
pub fn parse_file(key: &str, bytes: &[u8]) -> Result<Value, FileParseError> {
    let format = Format::of(key);
    let fail = |line: usize, column: usize, message: String| FileParseError {
        file: key.to_owned(),
        format: format.name(),
        line,
        column,
        message,
    };
    if format == Format::Opaque {
        return Ok(match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => opaque_binary(bytes),
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if format == Format::Json {
        let strict = canon::parse(bytes);
        // A `.json` file with comments (tsconfig.json, .vscode/settings.json) is JSONC;
        // one that is neither reports the strict parser's error.
        return match strict {
            Ok(v) => Ok(v),
            Err(e) => std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| parse_jsonc(text).ok())
                .ok_or_else(|| fail(e.line, e.column, first_line(&e.message))),
        };
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_column(bytes, e.valid_up_to());
        fail(line, column, "the file is not UTF-8 text".to_owned())
    })?;
    match format {
        Format::Jsonc => parse_jsonc(text).map_err(|(line, column, msg)| fail(line, column, msg)),
        Format::Toml => parse_toml(text).map_err(|(at, msg)| {
            let (line, column) = line_column(text.as_bytes(), at);
            fail(line, column, msg)
        }),
        _ => parse_yaml(text).map_err(|(line, column, msg)| fail(line, column, msg)),
    }
}

/// The value of a file whose bytes are not UTF-8 text.
pub fn opaque_binary(bytes: &[u8]) -> Value {
    let mut obj = Map::new();
    obj.insert(
        "$binary".into(),
        Value::String(ObjectId::of(bytes).to_hex()),
    );
    obj.insert("size".into(), Value::from(bytes.len() as u64));
    Value::Object(obj)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

fn parse_jsonc(text: &str) -> Result<Value, (usize, usize, String)> {
    // What JSON5 allows, and comments; not JSONC's missing commas.
    let options = jsonc_parser::ParseOptions {
        allow_missing_commas: false,
        ..jsonc_parser::ParseOptions::default()
    };
    let value = jsonc_parser::parse_to_value(text, &options)
        .map_err(|e| (e.line_display(), e.column_display(), e.kind().to_string()))?;
    match value {
        Some(v) => jsonc_value(v).map_err(|msg| (1, 1, msg)),
        None => Err((1, 1, "the file holds no value".to_owned())),
    }
}

fn jsonc_value(value: jsonc_parser::JsonValue<'_>) -> Result<Value, String> {
    use jsonc_parser::JsonValue as J;
    Ok(match value {
        J::Null => Value::Null,
        J::Boolean(b) => Value::Bool(b),
        J::String(s) => Value::String(s.into_owned()),
        J::Number(text) => jsonc_number(text)?,
        J::Array(items) => Value::Array(
            items
                .into_iter()
                .map(jsonc_value)
                .collect::<Result<_, _>>()?,
        ),
        J::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(k, v)| Ok((k.into_owned(), jsonc_value(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// A JSONC/JSON5 number as an exact JSON number (its digits kept), or a string for the
/// non-finite ones.
fn jsonc_number(text: &str) -> Result<Value, String> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    match digits {
        "Infinity" => return Ok(Value::String(if negative { "-inf" } else { "inf" }.into())),
        "NaN" => return Ok(Value::String("nan".into())),
        _ => {}
    }
    let normal = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        let n =
            u128::from_str_radix(hex, 16).map_err(|_| format!("the number {text} is too large"))?;
        n.to_string()
    } else {
        // JSON5's `.5` and `5.`.
        let mut d = digits.to_owned();
        if d.starts_with('.') {
            d.insert(0, '0');
        }
        if let Some(i) = d.find('.')
            && !d[i + 1..].starts_with(|c: char| c.is_ascii_digit())
        {
            d.insert(i + 1, '0');
        }
        d
    };
    let normal = if negative {
        format!("-{normal}")
    } else {
        normal
    };
    canon::parse_str(&normal).map_err(|_| format!("{text} is not a number"))
}

fn parse_toml(text: &str) -> Result<Value, (usize, String)> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map_or(0, |s| s.start);
        (at, e.message().trim().to_owned())
    })?;
    Ok(toml_table(table))
}

fn toml_table(table: toml::Table) -> Value {
    Value::Object(table.into_iter().map(|(k, v)| (k, toml_value(v))).collect())
}

fn toml_value(value: toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => match canon::number_from_f64(f) {
            Some(n) if f.is_finite() => Value::Number(n),
            _ => Value::String(non_finite_name(f).to_owned()),
        },
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_value).collect()),
        toml::Value::Table(t) => toml_table(t),
    }
}

fn non_finite_name(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

fn parse_yaml(text: &str) -> Result<Value, (usize, usize, String)> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
    };
    let mut docs: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|e| {
            let (line, column) = e.location().map_or((1, 1), |l| {
                (
                    usize::try_from(l.line()).unwrap_or(1).max(1),
                    usize::try_from(l.column()).unwrap_or(1).max(1),
                )
            });
            let message = e.without_snippet().to_string();
            (line, column, first_line(&message))
        })?;
    Ok(match docs.len() {
        0 => Value::Null,
        1 => docs.pop().unwrap_or(Value::Null),
        _ => Value::Array(docs),
    })
}

/// The first line of a parser's message, without the position it repeats and without advice
/// about the parser's own options.
fn first_line(message: &str) -> String {
    let mut text = message.lines().next().unwrap_or(message).trim();
    if let Some(i) = text.rfind(" at line ") {
        let tail = &text[i + " at line ".len()..];
        if tail
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | ' ') || "column".contains(c))
        {
            text = &text[..i];
        }
    }
    if let Some(i) = text.find(", set DuplicateKeyPolicy") {
        text = &text[..i];
    }
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of("a/b.json"), Format::Json);
        assert_eq!(Format::of("a/B.TOML"), Format::Toml);
        assert_eq!(Format::of("x.yml"), Format::Yaml);
        assert_eq!(Format::of("x.yaml"), Format::Yaml);
        assert_eq!(Format::of(".json"), Format::Opaque);
        assert_eq!(Format::of("dir.json/README"), Format::Opaque);
        assert_eq!(Format::of("notes.txt"), Format::Opaque);
        assert_eq!(Format::of("a.jsonc"), Format::Jsonc);
        assert_eq!(Format::of("b.JSON5"), Format::Jsonc);
    }

    #[test]
    fn toml_into_json() {
        let v = parse_file(
            "a.toml",
            b"title = \"x\"\nbig = 9007199254740993\nf = 1.5\ninf = inf\nwhen = 1979-05-27T07:32:00Z\n[server]\nport = 8080\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"title": "x", "big": 9_007_199_254_740_993_i64, "f": 1.5, "inf": "inf",
                   "when": "1979-05-27T07:32:00Z", "server": {"port": 8080}})
        );
    }

    #[test]
    fn yaml_into_json() {
        let v = parse_file("a.yaml", b"# c\nlist: [x, y]\nflag: yes\nzip: 010\nn: 3\n").unwrap();
        assert_eq!(
            v,
            json!({"list": ["x", "y"], "flag": "yes", "zip": "010", "n": 3})
        );
        let stream = parse_file("a.yml", b"a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(stream, json!([{"a": 1}, {"b": 2}]));
        assert_eq!(
            parse_file("e.yaml", b"# only a comment\n").unwrap(),
            Value::Null
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse_file("k8s/bad.yaml", b"a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.format), ("k8s/bad.yaml", "YAML"));
        assert!(e.line >= 2, "{e}");
        let e = parse_file("c.toml", b"a = 1\nb = = 2\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 5), "{e}");
        let e = parse_file("c.json", b"{\n  \"a\": 1,\n]").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(!e.message.contains("line"), "{e}");
        let e = parse_file("d.yaml", b"a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert_eq!(e.message, "duplicate mapping key: a");
    }

    #[test]
    fn json_with_comments() {
        let text = b"// settings\n{\n  /* the editor */ \"editor.tabSize\": 2,\n  \"files\": {\"exclude\": [\"a\",],},\n}\n";
        let want = json!({"editor.tabSize": 2, "files": {"exclude": ["a"]}});
        assert_eq!(parse_file(".vscode/settings.json", text).unwrap(), want);
        assert_eq!(parse_file("a.jsonc", text).unwrap(), want);
        let five = b"{unquoted: 'single', hex: 0xFF, plus: +1, half: .5, whole: 5., big: 123456789012345678901234567890, inf: -Infinity, nan: NaN}";
        assert_eq!(
            crate::canon::to_canonical_string(&parse_file("a.json5", five).unwrap()),
            r#"{"big":123456789012345678901234567890,"half":0.5,"hex":255,"inf":"-inf","nan":"nan","plus":1,"unquoted":"single","whole":5}"#
        );
        // Neither JSON nor JSONC: the strict parser's error.
        let e = parse_file("c.json", b"{\n  \"a\": 1,\n  oops\n").unwrap_err();
        assert_eq!((e.format, e.line), ("JSON", 3), "{e}");
        parse_file("c.jsonc", b"{\"a\": 1 \"b\": 2}").unwrap_err();
        let e = parse_file("c.jsonc", b"{\n  \"a\": [1, 2\n").unwrap_err();
        assert_eq!(e.format, "JSONC", "{e}");
        assert!(e.line >= 2, "{e}");
    }

    #[test]
    fn opaque_files() {
        assert_eq!(
            parse_file("notes.txt", b"hello\n").unwrap(),
            json!("hello\n")
        );
        let v = parse_file("logo.bin", &[0xff, 0x00, 0x01]).unwrap();
        assert_eq!(v["size"], json!(3));
        assert_eq!(
            v["$binary"],
            json!(ObjectId::of(&[0xff, 0x00, 0x01]).to_hex())
        );
    }
}
