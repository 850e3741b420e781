//! Canonical JSON: strict parsing, the canonical byte form, and content ids.
//!
//! Canonical bytes are what `hist` hashes (blake3) and stores in objects, so this module
//! doc is the specification of the format. A change to any rule below changes hashes: it is
//! a format break and needs a changelog note. Golden tests (`tests/api/canon.rs`) pin the
//! bytes and digests.
//!
//! # The canonical form
//!
//! The canonical form is RFC 8785 (JSON Canonicalization Scheme, "JCS") with one deliberate
//! exception for integers:
//!
//! - **No whitespace** anywhere outside strings.
//! - **Object members** are sorted by their names compared as sequences of UTF-16 code
//!   units ([`compare_keys`]), not by code points, bytes or locale. The two orders differ
//!   only when a name holds a character in U+E000..=U+FFFF and another a character above
//!   U+FFFF: `"\u{e000}"` sorts *after* `"\u{1f600}"` (whose first code unit is 0xD83D).
//!   Member names are never normalized (no Unicode normalization).
//! - **Strings** use minimal escaping: only `"` (as `\"`), `\` (as `\\`) and the control
//!   characters U+0000..=U+001F are escaped; `\b`, `\f`, `\n`, `\r`, `\t` use their short
//!   forms, the other controls are `\u00xx` with lowercase hex. `/`, U+007F and every
//!   non-ASCII character are written as themselves (UTF-8).
//! - **Numbers**:
//!   - an *integer literal* (its text has no `.`, `e` or `E`) is kept exactly, digit for
//!     digit, whatever its size: `12345678901234567890123` stays as written and is never
//!     rounded through a double. This is the exception to RFC 8785, which would print
//!     `1.2345678901234568e+22`. `-0` is written `0`.
//!   - any other literal is read as an IEEE-754 double (round to nearest) and written as
//!     ECMAScript's `Number.prototype.toString` writes it: `1E30` → `1e+30`, `4.50` →
//!     `4.5`, `1.0` → `1`, `2e-3` → `0.002`, `-0.0` → `0`, `1e-400` → `0`. So `1.0` and
//!     `1` are the same value, while `1.0e25` and `10000000000000000000000000` are not
//!     (`1e+25` versus the 26 digits).
//!   - a literal that is not finite as a double (`1e400`) has no canonical form: [`parse`]
//!     and [`normalize`] refuse it. The writers never fail; given such a number in a
//!     [`Value`] built elsewhere they write its text unchanged (which [`parse`] refuses).
//! - Array elements keep their order.
//!
//! [`write_canonical`] and [`to_canonical_string`] produce this form for any [`Value`],
//! even one whose numbers are not normalized (they normalize while writing).
//! [`to_pretty_string`] is the same form laid out with 2-space indentation, for people.
//!
//! # Numbers in memory
//!
//! `serde_json` is built with `arbitrary_precision`, so a [`Number`] is its text and two
//! numbers are equal when their texts are. Every number that [`parse`], [`normalize`] and
//! [`number_from_f64`] return holds its canonical text, so `parse("1.0") == parse("1")`.
//! A [`Value`] built elsewhere (with `json!` or `serde_json::from_str`) may hold
//! non-canonical texts such as `1.0`; pass it through [`normalize`] before comparing it.
//!
//! # What [`parse`] refuses, and why
//!
//! [`parse`] accepts exactly RFC 8259 JSON (through `serde_json`), minus:
//!
//! - **bytes that are not UTF-8**: JSON exchanged between systems must be UTF-8
//!   (RFC 8259 §8.1); guessing another encoding would make the stored form depend on a guess.
//! - **a UTF-8 byte-order mark** at the start: RFC 8259 forbids adding one and lets parsers
//!   ignore it; we refuse it so that a file's bytes and its parsed content never disagree
//!   silently. Strip it and retry.
//! - **duplicate member names** in an object (at any depth): RFC 8259 leaves their meaning
//!   to the implementation; keeping either value would silently drop data. The error names
//!   the member, e.g. `duplicate member name "a"`.
//! - **numbers that are not finite as a double** (`1e400`, `-1e999`).
//! - **nesting deeper than [`MAX_DEPTH`]** arrays and objects. This is `serde_json`'s
//!   recursion limit; it keeps parsing (and dropping the result) far from a stack overflow,
//!   whatever the input (100,000 `[` is a clean error).
//! - lone surrogate escapes such as `"\ud800"` (not a Unicode scalar value; `serde_json`
//!   refuses them), control characters inside strings, and the rest of `serde_json`'s
//!   RFC 8259 checks.
//!
//! Error positions are 1-based: `line` counts `\n`, `column` counts characters (Unicode
//! scalar values) from the start of the line. Where a check fires after a token has been
//! read (a duplicate name, a non-finite number), the column is the token's last character.
//!
//! Of the 35 JSONTestSuite files a parser may accept or refuse (`i_*`; each outcome is
//! pinned in `tests/api/canon.rs`), 5 are accepted and 30 refused:
//! - accepted: integers beyond 64 bits, kept digit for digit (`i_number_too_big_pos_int`,
//!   `i_number_too_big_neg_int`, `i_number_very_big_negative_int`), and doubles that
//!   underflow to `0` (`i_number_real_underflow`, `i_number_double_huge_neg_exp`);
//! - refused: the 5 numbers that overflow a double (`i_number_huge_exp`, ...), the 10 lone,
//!   truncated or inverted surrogate escapes, the 13 files that are not UTF-8 (among them
//!   an encoded surrogate U+D800, overlong forms and the 3 UTF-16 files), the UTF-8 BOM
//!   (`i_structure_UTF-8_BOM_empty_object`) and 500 nested arrays (over [`MAX_DEPTH`]).
//!
//! Values that do not come from [`parse`] are not depth-checked: [`normalize`] and the
//! writers recurse, so a value nested many thousands of levels deep (which [`parse`] never
//! returns) could exhaust the stack.
//!
//! # The reserved member name `$serde_json::private::Number`
//!
//! With `arbitrary_precision`, `serde_json` hands each number to a visitor disguised as a
//! one-member object whose name is `$serde_json::private::Number` and whose value is the
//! number's text. [`parse`] tells the two apart by how the value arrives (an owned string
//! from the number path, a parsed JSON value from real input) and **refuses a real member
//! with that name**, wherever it stands: `{"$serde_json::private::Number":"1"}` is an error
//! (`member name "$serde_json::private::Number" is reserved ...`), never the number `1`.
//! Accepting it would not be safe: `serde_json::from_str` (which hist uses to read back its
//! own stored text) would turn that object into the number `1`, silently changing the
//! document. The writers and [`normalize`] treat such a member, in a [`Value`] built
//! elsewhere, as an ordinary member.
use crate::rules::{ArrayMode, RuleNodeId, RuleTree};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

/// Deepest nesting of arrays and objects accepted on input: 127 levels parse, 128 are
/// refused (`serde_json`'s recursion limit, kept so that no input can overflow the stack).
pub const MAX_DEPTH: usize = 127;

/// The member name `serde_json` uses to pass a number's text through a map.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Where and why a JSON text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line (lines end at `\n`).
    pub line: usize,
    /// 1-based column, in characters from the start of the line.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses JSON strictly: UTF-8 without a byte-order mark, no duplicate member names,
/// nesting at most [`MAX_DEPTH`], finite numbers only. Every number of the result holds its
/// canonical text (see the module doc), so `1.0` and `1` parse to equal values.
///
/// ```
/// let v = hist::canon::parse(br#"{"b": 1.0, "a": -0}"#).unwrap();
/// assert_eq!(hist::canon::to_canonical_string(&v), r#"{"a":0,"b":1}"#);
/// assert!(hist::canon::parse(br#"{"a": 1, "a": 2}"#).is_err());
/// ```
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    let text = checked_text(bytes)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = ValueSeed
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| parse_error(text, &e))?;
    Ok(value)
}

/// The canonical text of a JSON text, written while it is parsed, without building a
/// [`Value`]: the same result as `parse(bytes).map(|v| to_canonical_string(&v))`, success
/// or refusal (the same [`ParseError`], line, column and message), for every input.
///
/// Memory is the input, the output and, for an object whose members are not already in
/// canonical order, a copy of that object's canonical text while it is reordered; no tree
/// is built. Use it where only the canonical bytes are needed (hashing, storing).
///
/// ```
/// let text = hist::canon::canonical_text(br#"{"b": [1.0, 2e-3], "a": -0}"#).unwrap();
/// assert_eq!(text, r#"{"a":0,"b":[1,0.002]}"#);
/// assert!(hist::canon::canonical_text(br#"{"a": 1, "a": 2}"#).is_err());
/// ```
pub fn canonical_text(bytes: &[u8]) -> Result<String, ParseError> {
    ordered_text(bytes, &RuleTree::default()).map(|(text, _)| text)
}

/// [`canonical_text`] with the keyed arrays and sets of `tree` put in canonical order, as
/// [`diff::canonicalize`](crate::diff::canonicalize) orders them, in the same single pass.
/// The flag is true when some ordered array has elements with equal sort texts (keys not
/// unique): such an array is left in the order written, as `canonicalize` leaves it.
pub(crate) fn ordered_text(bytes: &[u8], tree: &RuleTree) -> Result<(String, bool), ParseError> {
    let text = checked_text(bytes)?;
    let mut writer = Writer {
        out: Vec::with_capacity(text.len()),
        spare: Vec::new(),
        spare_elements: Vec::new(),
        scratch: Vec::new(),
        tree,
        not_unique: false,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    WriteSeed {
        w: &mut writer,
        node: tree.root(),
        keys: None,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| parse_error(text, &e))?;
    // Only valid UTF-8 is ever written: string contents and ASCII.
    let out = String::from_utf8(writer.out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((out, writer.not_unique))
}

/// The input as text: refuses a byte-order mark and bytes that are not UTF-8.
fn checked_text(bytes: &[u8]) -> Result<&str, ParseError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "a UTF-8 byte-order mark is not allowed at the start of JSON text \
                      (remove the first 3 bytes)"
                .to_owned(),
        });
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let (line, column) = position_of_byte(bytes, at);
        let end = bytes.len().min(at + e.error_len().unwrap_or(1));
        let bad = bytes.get(at..end).unwrap_or_default();
        let hex: Vec<String> = bad.iter().map(|b| format!("{b:02x}")).collect();
        ParseError {
            line,
            column,
            message: format!(
                "invalid UTF-8 at byte offset {at} (bytes {}); JSON text must be UTF-8",
                hex.join(" ")
            ),
        }
    })
}

impl ParseError {
    /// A `serde_json` error met while reading `text`, with a character column.
    pub(crate) fn of_serde(text: &str, e: &serde_json::Error) -> Self {
        parse_error(text, e)
    }
}

/// [`parse`] for text.
pub fn parse_str(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes())
}

/// Turns a `serde_json` error into a [`ParseError`] with a character column.
fn parse_error(text: &str, e: &serde_json::Error) -> ParseError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    let message = if message == "recursion limit exceeded" {
        format!("nesting deeper than {MAX_DEPTH} arrays and objects")
    } else {
        message.to_owned()
    };
    // serde_json counts bytes, and column `c` of line `l` is the byte `c - 1` of the line
    // (column 0: the line's first byte is not read yet, the error is at the `\n` before).
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = match e.column() {
        0 => line_start.saturating_sub(1),
        c => (line_start + c - 1).min(text.len()),
    };
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let (line, column) = position_of_byte(text.as_bytes(), at);
    ParseError {
        line,
        column,
        message,
    }
}

/// 1-based line and character column of the byte at `at` (which may be past the end).
fn position_of_byte(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = 1 + before[line_start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count();
    (line, column)
}

// ---------------------------------------------------------------------------------------
// Parsing: a Value visitor that refuses duplicates and normalizes numbers
// ---------------------------------------------------------------------------------------

/// Builds a [`Value`] from any `serde_json` deserializer.
struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        number_from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("number {v} is not finite")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element_seed(ValueSeed)? {
            values.push(v);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(members));
        };
        if first == NUMBER_TOKEN {
            let text = map.next_value_seed(NumberTextSeed)?;
            return canonical_number(&text)
                .map(Value::Number)
                .map_err(de::Error::custom);
        }
        let first_value = map.next_value_seed(ValueSeed)?;
        members.insert(first, first_value);
        while let Some(key) = map.next_key::<String>()? {
            if key == NUMBER_TOKEN {
                return Err(reserved_name());
            }
            match members.entry(key) {
                Entry::Occupied(o) => {
                    return Err(de::Error::custom(format!(
                        "duplicate member name {}",
                        to_canonical_string(&Value::String(o.key().clone()))
                    )));
                }
                Entry::Vacant(v) => {
                    v.insert(map.next_value_seed(ValueSeed)?);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

/// The error for a real member named `$serde_json::private::Number`.
fn reserved_name<E: de::Error>() -> E {
    E::custom(format!(
        "member name \"{NUMBER_TOKEN}\" is reserved (serde_json uses it to carry numbers)"
    ))
}

/// The text of a number that `serde_json` passes as the value of a
/// `$serde_json::private::Number` member. Only its number path calls `visit_string` (its
/// parser hands real strings over as `&str`); any other value means a real member with that
/// name, which is refused.
struct NumberTextSeed;

impl<'de> DeserializeSeed<'de> for NumberTextSeed {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(NumberTextVisitor)
    }
}

struct NumberTextVisitor;

impl<'de> Visitor<'de> for NumberTextVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(reserved_name())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(reserved_name())
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(reserved_name())
    }
}

// ---------------------------------------------------------------------------------------
// Streaming: canonical text written while parsing (`canonical_text`)
// ---------------------------------------------------------------------------------------
//
// The visitors below make exactly the calls `ValueVisitor` makes on the deserializer, in the
// same order, and fail at the same points with the same errors, so that `serde_json` reports
// the same positions. Only what they build differs: bytes appended to `Writer::out`.

/// Objects with more members than this check a new name against a hash set of the earlier
/// ones (once their names stop arriving in canonical order); smaller ones scan.
const LINEAR_SCAN_MEMBERS: usize = 16;

/// The output of [`ordered_text`], the member and element lists of finished objects and
/// arrays and the buffer that reorders them (kept for reuse: a feed has an object and a
/// small set per record), and the rules that order arrays.
struct Writer<'t, 'de> {
    out: Vec<u8>,
    spare: Vec<Vec<Member<'de>>>,
    spare_elements: Vec<Vec<Element>>,
    scratch: Vec<u8>,
    tree: &'t RuleTree,
    /// Some ordered array was left as written: its sort texts are not unique.
    not_unique: bool,
}

/// The key field values of the element of a keyed array being written, collected from its
/// members as they are written, and turned into its sort text once it is complete.
struct KeyCapture<'t> {
    fields: &'t [String],
    /// Where each field's canonical value text is in `found`; `None`: missing so far.
    values: Vec<Option<(usize, usize)>>,
    found: Vec<u8>,
}

impl KeyCapture<'_> {
    /// Keeps the value of member `name` if it is a key field (a key may name a field twice).
    fn offer(&mut self, name: &str, value: &[u8]) {
        let mut kept = None;
        for (field, slot) in self.fields.iter().zip(&mut self.values) {
            if field == name {
                let range = *kept.get_or_insert_with(|| {
                    let start = self.found.len();
                    self.found.extend_from_slice(value);
                    (start, self.found.len())
                });
                *slot = Some(range);
            }
        }
    }

    /// Appends the sort text of the element (`[v1,v2,…]`, a missing field as `null`, as
    /// `diff::keyed_sort_text` writes it) to `out`, and forgets the element.
    fn finish(&mut self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, v) in self.values.iter_mut().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match v.take() {
                Some((start, end)) => out.extend_from_slice(&self.found[start..end]),
                None => out.extend_from_slice(b"null"),
            }
        }
        out.push(b']');
        self.found.clear();
    }
}

/// An element of an ordered array: where its text is in [`Writer::out`], and where its
/// sort text is (a keyed array's in the array's own buffer, a set's is its text).
struct Element {
    text: (usize, usize),
    sort: (usize, usize),
}

/// An object member already written: its name and where its `"name":value` bytes are in
/// [`Writer::out`].
struct Member<'de> {
    name: Cow<'de, str>,
    start: usize,
    end: usize,
}

/// Writes the canonical text of one value to [`Writer::out`].
struct WriteSeed<'w, 't, 'de> {
    w: &'w mut Writer<'t, 'de>,
    /// Where the value is in the rule tree (`None`: no rule applies at or below it).
    node: Option<RuleNodeId>,
    /// Set for an element of a keyed array: collects its key field values.
    keys: Option<&'w mut KeyCapture<'t>>,
}

impl<'de> DeserializeSeed<'de> for WriteSeed<'_, '_, 'de> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(WriteVisitor {
            w: self.w,
            node: self.node,
            keys: self.keys,
        })
    }
}

struct WriteVisitor<'w, 't, 'de> {
    w: &'w mut Writer<'t, 'de>,
    node: Option<RuleNodeId>,
    keys: Option<&'w mut KeyCapture<'t>>,
}

impl<'de> Visitor<'de> for WriteVisitor<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        let text: &[u8] = if v { b"true" } else { b"false" };
        self.w.out.extend_from_slice(text);
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        write_number(&v.into(), &mut self.w.out);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        write_number(&v.into(), &mut self.w.out);
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = number_from_f64(v).ok_or_else(|| E::custom(format!("number {v} is not finite")))?;
        write_number(&n, &mut self.w.out);
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<(), E> {
        write_string(v, &mut self.w.out);
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        write_string(v, &mut self.w.out);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.w.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.w.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let tree = self.w.tree;
        let (mode, node) = self
            .node
            .map_or((ArrayMode::Opaque, None), |n| tree.array(n));
        let ordered = mode != ArrayMode::Opaque;
        let mut keys = match mode {
            ArrayMode::Keyed(fields) => Some(KeyCapture {
                fields,
                values: vec![None; fields.len()],
                found: Vec::new(),
            }),
            _ => None,
        };
        let mut elements = self.w.spare_elements.pop().unwrap_or_default();
        elements.clear();
        let mut sort_texts = Vec::new();
        self.w.out.push(b'[');
        let base = self.w.out.len();
        loop {
            // The separator goes out before the element is known to exist; taken back at
            // the end.
            let mark = self.w.out.len();
            if mark > base {
                self.w.out.push(b',');
            }
            let start = self.w.out.len();
            let seed = WriteSeed {
                w: self.w,
                node,
                keys: keys.as_mut(),
            };
            if seq.next_element_seed(seed)?.is_none() {
                self.w.out.truncate(mark);
                break;
            }
            if ordered {
                let text = (start, self.w.out.len());
                let sort = match &mut keys {
                    Some(k) => {
                        let from = sort_texts.len();
                        k.finish(&mut sort_texts);
                        (from, sort_texts.len())
                    }
                    None => text,
                };
                elements.push(Element { text, sort });
            }
        }
        if elements.len() > 1 {
            let by = keys.is_some().then_some(sort_texts.as_slice());
            let w = &mut *self.w;
            if !order_elements(&mut w.out, base, &elements, by, &mut w.scratch)
                .map_err(de::Error::custom)?
            {
                w.not_unique = true;
            }
        }
        elements.clear();
        self.w.spare_elements.push(elements);
        self.w.out.push(b']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some(first) = map.next_key_seed(NameSeed)? else {
            self.w.out.extend_from_slice(b"{}");
            return Ok(());
        };
        if first == NUMBER_TOKEN {
            let text = map.next_value_seed(NumberTextSeed)?;
            let mut buf = ryu_js::Buffer::new();
            let canonical = canonical_number_text(&text, &mut buf)
                .ok_or_else(|| de::Error::custom(NumberError(text.clone())))?;
            self.w.out.extend_from_slice(canonical.as_bytes());
            return Ok(());
        }
        let mut members = self.w.spare.pop().unwrap_or_default();
        members.clear();
        let (node, mut keys) = (self.node, self.keys);
        self.w.out.push(b'{');
        let base = self.w.out.len();
        write_member(
            &mut map,
            self.w,
            &mut members,
            first,
            node,
            keys.as_deref_mut(),
        )?;
        // Names so far are in strictly increasing canonical order: the object needs no
        // sorting, and a duplicate can only equal the last name.
        let mut in_order = true;
        let mut seen: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(name) = map.next_key_seed(NameSeed)? {
            if name == NUMBER_TOKEN {
                return Err(reserved_name());
            }
            let last = members.last().map_or("", |m| m.name.as_ref());
            let duplicate = match (in_order, compare_keys(last, &name)) {
                (true, Ordering::Less) => false,
                (true, Ordering::Equal) => true,
                _ => {
                    in_order = false;
                    if members.len() < LINEAR_SCAN_MEMBERS {
                        members.iter().any(|m| m.name == name)
                    } else {
                        let seen = seen.get_or_insert_with(|| {
                            members.iter().map(|m| m.name.clone()).collect()
                        });
                        !seen.insert(name.clone())
                    }
                }
            };
            if duplicate {
                return Err(de::Error::custom(format!(
                    "duplicate member name {}",
                    quoted(&name)
                )));
            }
            self.w.out.push(b',');
            write_member(
                &mut map,
                self.w,
                &mut members,
                name,
                node,
                keys.as_deref_mut(),
            )?;
        }
        if !in_order {
            let w = &mut *self.w;
            sort_members(&mut w.out, base, &mut members, &mut w.scratch)
                .map_err(de::Error::custom)?;
        }
        self.w.out.push(b'}');
        members.clear();
        self.w.spare.push(members);
        Ok(())
    }
}

/// Writes `"name":value` for the member whose name was just read, and records it; `node`
/// is the object's place in the rule tree, `keys` set when the object is an element of a
/// keyed array.
fn write_member<'de, A: MapAccess<'de>>(
    map: &mut A,
    w: &mut Writer<'_, 'de>,
    members: &mut Vec<Member<'de>>,
    name: Cow<'de, str>,
    node: Option<RuleNodeId>,
    keys: Option<&mut KeyCapture<'_>>,
) -> Result<(), A::Error> {
    let start = w.out.len();
    write_string(&name, &mut w.out);
    w.out.push(b':');
    let value_start = w.out.len();
    let node = node.and_then(|n| w.tree.field(n, &name));
    map.next_value_seed(WriteSeed {
        w: &mut *w,
        node,
        keys: None,
    })?;
    if let Some(keys) = keys {
        keys.offer(&name, &w.out[value_start..]);
    }
    members.push(Member {
        name,
        start,
        end: w.out.len(),
    });
    Ok(())
}

/// Rewrites the members of an object, written from `out[base..]` on and separated by
/// commas, in canonical order of their (distinct) names.
fn sort_members(
    out: &mut Vec<u8>,
    base: usize,
    members: &mut [Member<'_>],
    scratch: &mut Vec<u8>,
) -> Result<(), String> {
    let out_of_range = "internal error: a member's bytes are out of range";
    members.sort_unstable_by(|a, b| compare_keys(&a.name, &b.name));
    scratch.clear();
    scratch.extend_from_slice(out.get(base..).ok_or(out_of_range)?);
    out.truncate(base);
    let written = &*scratch;
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let bytes = m
            .start
            .checked_sub(base)
            .zip(m.end.checked_sub(base))
            .and_then(|(start, end)| written.get(start..end))
            .ok_or(out_of_range)?;
        out.extend_from_slice(bytes);
    }
    Ok(())
}

/// Rewrites the elements of an ordered array, written from `out[base..]` on and separated
/// by commas, in the order of their sort texts (in `sort_texts`, or for a set in `out`
/// itself). Returns false, leaving them as written, when two sort texts are equal.
fn order_elements(
    out: &mut Vec<u8>,
    base: usize,
    elements: &[Element],
    sort_texts: Option<&[u8]>,
    scratch: &mut Vec<u8>,
) -> Result<bool, String> {
    let out_of_range = "internal error: an element's bytes are out of range";
    let order: Vec<usize> = {
        let source = sort_texts.unwrap_or(out);
        let text = |i: usize| {
            let (start, end) = elements[i].sort;
            source.get(start..end).unwrap_or_default()
        };
        if elements
            .iter()
            .any(|e| source.get(e.sort.0..e.sort.1).is_none())
        {
            return Err(out_of_range.into());
        }
        if (1..elements.len()).all(|i| text(i - 1) < text(i)) {
            return Ok(true);
        }
        // Most comparisons are settled by the first 8 bytes, compared as one number.
        let prefix = |i: usize| {
            let t = text(i);
            let mut head = [0u8; 8];
            let n = t.len().min(8);
            head[..n].copy_from_slice(&t[..n]);
            u64::from_be_bytes(head)
        };
        let mut keyed: Vec<(u64, usize)> = (0..elements.len()).map(|i| (prefix(i), i)).collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| text(a.1).cmp(text(b.1))));
        let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
        if order.windows(2).any(|w| text(w[0]) == text(w[1])) {
            return Ok(false);
        }
        order
    };
    scratch.clear();
    scratch.extend_from_slice(out.get(base..).ok_or(out_of_range)?);
    out.truncate(base);
    let written = &*scratch;
    for (i, &k) in order.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let (start, end) = elements[k].text;
        let bytes = start
            .checked_sub(base)
            .zip(end.checked_sub(base))
            .and_then(|(start, end)| written.get(start..end))
            .ok_or(out_of_range)?;
        out.extend_from_slice(bytes);
    }
    Ok(true)
}

/// A member name as canonical text (`"a"`), for messages.
fn quoted(name: &str) -> String {
    let mut out = Vec::with_capacity(name.len() + 2);
    write_string(name, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A member name, borrowed from the input when it holds no escape.
struct NameSeed;

impl<'de> DeserializeSeed<'de> for NameSeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

// ---------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------

/// A number that has no canonical form: not finite as a double.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("number {0} is out of range (not a finite double)")]
pub struct NumberError(pub String);

/// Whether a number's text is an integer literal: no `.`, `e` or `E`.
fn is_integer_literal(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// The canonical text of a number's text, written into `buf` when it must be computed.
pub(crate) fn canonical_number_text<'a>(
    text: &'a str,
    buf: &'a mut ryu_js::Buffer,
) -> Option<&'a str> {
    if is_integer_literal(text) {
        return Some(if text == "-0" { "0" } else { text });
    }
    let f = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    Some(buf.format_finite(f))
}

/// The canonical [`Number`] for a number's text.
fn canonical_number(text: &str) -> Result<Number, NumberError> {
    let mut buf = ryu_js::Buffer::new();
    let canonical =
        canonical_number_text(text, &mut buf).ok_or_else(|| NumberError(text.to_owned()))?;
    Number::from_str(canonical).map_err(|_| NumberError(text.to_owned()))
}

/// Rewrites every number of `value` in canonical form (see the module doc), or refuses a
/// number that is not finite as a double.
///
/// ```
/// let v = hist::canon::normalize(serde_json::json!([1.0, -0.0, 2.50])).unwrap();
/// assert_eq!(v, hist::canon::parse_str("[1, 0, 2.5]").unwrap());
/// ```
pub fn normalize(mut value: Value) -> Result<Value, NumberError> {
    normalize_in_place(&mut value)?;
    Ok(value)
}

fn normalize_in_place(value: &mut Value) -> Result<(), NumberError> {
    match value {
        Value::Number(n) => {
            let mut buf = ryu_js::Buffer::new();
            let text = n.as_str();
            let canonical = canonical_number_text(text, &mut buf)
                .ok_or_else(|| NumberError(text.to_owned()))?;
            if canonical != text {
                *n = Number::from_str(canonical).map_err(|_| NumberError(text.to_owned()))?;
            }
        }
        Value::Array(values) => {
            for v in values {
                normalize_in_place(v)?;
            }
        }
        Value::Object(members) => {
            for v in members.values_mut() {
                normalize_in_place(v)?;
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
    Ok(())
}

/// The canonical [`Number`] for a double (ECMAScript form: `1e+30`, `0.002`, `-0` → `0`),
/// or `None` when it is not finite.
pub fn number_from_f64(f: f64) -> Option<Number> {
    if !f.is_finite() {
        return None;
    }
    Number::from_str(ryu_js::Buffer::new().format_finite(f)).ok()
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

/// Canonical text of a value (see the module doc). Numbers need not be normalized.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // Only valid UTF-8 is ever written: string contents and ASCII.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Appends the canonical bytes of a value to `out`. Numbers need not be normalized.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(values) => {
            out.push(b'[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, v)) in Members::of(members).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
    }
}

/// [`to_pretty_string`] of the value whose canonical text is `canonical`, laid out straight
/// from the text (no tree is built). The text must be canonical, as stored documents are;
/// any other text is laid out as it stands, without panicking.
///
/// ```
/// let v = hist::canon::parse_str(r#"{"b":[1,{}],"a":"x,y"}"#).unwrap();
/// let text = hist::canon::to_canonical_string(&v);
/// assert_eq!(hist::canon::pretty_text(&text), hist::canon::to_pretty_string(&v));
/// ```
pub fn pretty_text(canonical: &str) -> String {
    let mut out = Vec::with_capacity(canonical.len() * 2);
    // Writing to a Vec cannot fail.
    let _ = write_pretty_text(canonical, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`pretty_text`], written to `out` a piece at a time: a large document is laid out
/// without ever holding its pretty form (twice its size) in memory.
pub fn write_pretty_text<W: std::io::Write + ?Sized>(
    canonical: &str,
    out: &mut W,
) -> std::io::Result<()> {
    const PIECE: usize = 64 * 1024;
    let b = canonical.as_bytes();
    let mut buf = Vec::with_capacity(PIECE.min(b.len() * 2) + 256);
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if buf.len() >= PIECE {
            out.write_all(&buf)?;
            buf.clear();
        }
        match c {
            b'"' => {
                // A string, escapes included, is copied as it stands.
                let end = string_end(b, i).unwrap_or(b.len());
                buf.extend_from_slice(b.get(i..end).unwrap_or_default());
                i = end;
                continue;
            }
            b'[' | b'{' => {
                let close = if c == b'[' { b']' } else { b'}' };
                if b.get(i + 1) == Some(&close) {
                    buf.extend_from_slice(&[c, close]);
                    i += 2;
                    continue;
                }
                buf.push(c);
                depth += 1;
                newline(depth, &mut buf);
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                newline(depth, &mut buf);
                buf.push(c);
            }
            b',' => {
                buf.push(b',');
                newline(depth, &mut buf);
            }
            b':' => buf.extend_from_slice(b": "),
            _ => {
                // A number or a literal, copied up to the byte that ends it.
                let rest = b.get(i..).unwrap_or_default();
                let len = rest
                    .iter()
                    .position(|&x| matches!(x, b'"' | b'[' | b'{' | b']' | b'}' | b',' | b':'))
                    .unwrap_or(rest.len())
                    .max(1);
                buf.extend_from_slice(rest.get(..len).unwrap_or_default());
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out.write_all(&buf)
}

/// Pretty text for people: the canonical form (member order, numbers, escaping) laid out
/// like `serde_json::to_string_pretty`, with 2-space indentation (`{\n  "a": 1\n}`, `[]`,
/// `{}`). No final newline.
pub fn to_pretty_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_pretty(value, 0, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A line break and the indentation of `depth`, in the pretty form.
fn newline(depth: usize, out: &mut Vec<u8>) {
    const SPACES: [u8; 64] = [b' '; 64];
    out.push(b'\n');
    let mut n = 2 * depth;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.extend_from_slice(SPACES.get(..k).unwrap_or_default());
        n -= k;
    }
}

/// The end of the string starting (with its quote) at `i`, or where it runs off the text.
pub(crate) fn string_end(b: &[u8], i: usize) -> Result<usize, usize> {
    let mut j = i + 1;
    // Most strings (member names, short values) end within a few bytes: a plain loop finds
    // their end sooner than setting up a vector search does.
    let short = (j + 16).min(b.len());
    while j < short {
        match b.get(j) {
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => j += 2,
            _ => j += 1,
        }
    }
    loop {
        let rest = b.get(j..).unwrap_or_default();
        let k = memchr::memchr2(b'"', b'\\', rest).ok_or(b.len())?;
        j += k;
        if b.get(j) == Some(&b'"') {
            return Ok(j + 1);
        }
        j += 2;
    }
}

fn write_pretty(value: &Value, depth: usize, out: &mut Vec<u8>) {
    match value {
        Value::Array(values) if !values.is_empty() => {
            out.push(b'[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(depth + 1, out);
                write_pretty(v, depth + 1, out);
            }
            newline(depth, out);
            out.push(b']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push(b'{');
            for (i, (k, v)) in Members::of(members).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(depth + 1, out);
                write_string(k, out);
                out.extend_from_slice(b": ");
                write_pretty(v, depth + 1, out);
            }
            newline(depth, out);
            out.push(b'}');
        }
        _ => write_canonical(value, out),
    }
}

/// An object's members in canonical order: straight from the map when it is already in
/// that order (the usual case: a `BTreeMap` orders by code points, which differs from
/// UTF-16 order only for rare names), else sorted references.
enum Members<'a> {
    InOrder(serde_json::map::Iter<'a>),
    Sorted(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> Members<'a> {
    fn of(members: &'a Map<String, Value>) -> Self {
        let in_order = members
            .keys()
            .zip(members.keys().skip(1))
            .all(|(a, b)| compare_keys(a, b) == Ordering::Less);
        if in_order {
            Self::InOrder(members.iter())
        } else {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| compare_keys(a.0, b.0));
            Self::Sorted(sorted.into_iter())
        }
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::InOrder(it) => it.next(),
            Self::Sorted(it) => it.next(),
        }
    }
}

fn write_number(n: &Number, out: &mut Vec<u8>) {
    let text = n.as_str();
    let mut buf = ryu_js::Buffer::new();
    // A number that is not finite has no canonical form; keep its text (never panic).
    let canonical = canonical_number_text(text, &mut buf).unwrap_or(text);
    out.extend_from_slice(canonical.as_bytes());
}

/// How each byte is written inside a string: 0 as itself, `u` as `\u00xx`, else `\` and
/// that byte.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes a string with minimal escaping (see the module doc).
pub(crate) fn write_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(b)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        if escape == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The canonical text of an object whose members' values are already canonical text:
/// members ordered by [`compare_keys`], each value spliced in as it is, never parsed (so a
/// record can be built around large stored values at the cost of copying them). Values
/// that are not canonical JSON text (as [`to_canonical_string`] writes it, or as the store
/// returns it) make a text that is not canonical either.
///
/// ```
/// let text = hist::canon::object_text(vec![("new", "[1,2]"), ("key", "\"k\"")]);
/// assert_eq!(text, r#"{"key":"k","new":[1,2]}"#);
/// ```
pub fn object_text(mut members: Vec<(&str, &str)>) -> String {
    members.sort_by(|a, b| compare_keys(a.0, b.0));
    let len = members
        .iter()
        .map(|(k, v)| k.len() + v.len() + 4)
        .sum::<usize>();
    let mut out = Vec::with_capacity(len + 2);
    out.push(b'{');
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(name, &mut out);
        out.push(b':');
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
    // Names were escaped from `&str`s and values are `&str`s: the bytes are UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Orders member names by UTF-16 code units, as RFC 8785 does (not by bytes or code
/// points: `"\u{e000}"` sorts after `"\u{1f600}"`). Allocation-free.
pub fn compare_keys(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let Some(i) = ab.iter().zip(bb).position(|(x, y)| x != y) else {
        return ab.len().cmp(&bb.len());
    };
    // Both strings agree up to `i`, so they share the char boundary at or before it.
    let mut start = i;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let ca = a[start..].chars().next().map_or(0, u32::from);
    let cb = b[start..].chars().next().map_or(0, u32::from);
    utf16_key(ca).cmp(&utf16_key(cb))
}

/// A code point's UTF-16 code units, as a comparable pair.
fn utf16_key(c: u32) -> (u32, u32) {
    if c < 0x1_0000 {
        (c, 0)
    } else {
        let v = c - 0x1_0000;
        (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
    }
}

// ---------------------------------------------------------------------------------------
// Content ids
// ---------------------------------------------------------------------------------------

/// A blake3 digest naming content (an object's bytes, a document's canonical bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    /// The id of some bytes: their blake3 digest.
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }
    /// Parses 64 hex digits (as [`ObjectId::to_hex`] writes them), or `None`.
    pub fn from_hex(text: &str) -> Option<Self> {
        blake3::Hash::from_hex(text)
            .ok()
            .map(|h| Self(*h.as_bytes()))
    }
    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", self.to_hex())
    }
}

/// The id of a value's canonical bytes ([`write_canonical`]).
pub fn hash(value: &Value) -> ObjectId {
    let mut bytes = Vec::new();
    write_canonical(value, &mut bytes);
    ObjectId::of(&bytes)
}
