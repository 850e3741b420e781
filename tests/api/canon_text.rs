//! Tests of `hist::canon::canonical_text`, the canonical text written while parsing.
//!
//! The oracle is the tree-based path: `parse(b).map(|v| to_canonical_string(&v))`. For every
//! input the two must agree exactly: the same text, or the same error (line, column and
//! message). Inputs: the conformance data (JCS vectors, every JSONTestSuite file), the
//! project's `fixtures/` JSON files, hand-picked cases, and generated JSON texts.
use crate::canon::{file_name, fixtures, shared_conformance, sorted_files};
use crate::textdiff::rules_all;
use hist::canon::{self, MAX_DEPTH, ParseError};
use proptest::prelude::*;
use std::path::Path;

fn oracle(bytes: &[u8]) -> Result<String, ParseError> {
    canon::parse(bytes).map(|v| canon::to_canonical_string(&v))
}

/// The oracle of `diff::canonical_text` with every rule of the test pool: parse, order,
/// print.
fn ordered_oracle(bytes: &[u8]) -> Result<String, ParseError> {
    canon::parse(bytes).map(|mut v| {
        hist::diff::canonicalize(&mut v, &rules_all(), &mut Vec::new());
        canon::to_canonical_string(&v)
    })
}

/// `diff::canonical_text` with every rule of the test pool: arrays are ordered in the same
/// pass, which must refuse exactly what the plain pass refuses, at the same place.
fn ordered(bytes: &[u8]) -> Result<String, ParseError> {
    hist::diff::canonical_text(bytes, &rules_all(), &mut Vec::new())
}

/// Asserts that `canonical_text`, plain and ordered by rules, agrees with its oracle on
/// `bytes`, and returns the plain result.
#[track_caller]
fn agrees(bytes: &[u8]) -> Result<String, ParseError> {
    let got = canon::canonical_text(bytes);
    let input = String::from_utf8_lossy(bytes);
    assert_eq!(got, oracle(bytes), "input: {input:?}");
    assert_eq!(
        ordered(bytes),
        ordered_oracle(bytes),
        "ordered, input: {input:?}"
    );
    got
}

#[track_caller]
fn accepted(text: &str) -> String {
    agrees(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?} should be accepted: {e}"))
}

#[track_caller]
fn refused(text: &str) -> ParseError {
    agrees(text.as_bytes()).expect_err(text)
}

// ---------------------------------------------------------------------------------------
// Conformance data and fixtures
// ---------------------------------------------------------------------------------------

/// `input/NAME.json` gives exactly the bytes of `output/NAME.json`. Returns the count.
fn check_jcs(jcs: &Path) -> usize {
    let mut checked = 0;
    for input in sorted_files(&jcs.join("input")) {
        let name = file_name(&input);
        let bytes = std::fs::read(&input).unwrap();
        let expected = std::fs::read(jcs.join("output").join(&name)).unwrap();
        let text = agrees(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(text.as_bytes(), &expected[..], "{name}");
        checked += 1;
    }
    checked
}

/// Every file agrees with the oracle. Returns the counts of (accepted, refused) files.
fn check_all(files: &[std::path::PathBuf]) -> (usize, usize) {
    let (mut ok, mut err) = (0, 0);
    for path in files {
        let bytes = std::fs::read(path).unwrap();
        let got = agrees(&bytes);
        match got {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    (ok, err)
}

#[test]
fn jcs_vectors_shared() {
    let Some(dir) = shared_conformance() else {
        return;
    };
    assert_eq!(check_jcs(&dir.join("jcs")), 6);
}

#[test]
fn jcs_vectors_fixtures() {
    assert_eq!(check_jcs(&fixtures().join("jcs")), 6);
}

#[test]
fn json_test_suite_shared() {
    let Some(dir) = shared_conformance() else {
        return;
    };
    let files = sorted_files(&dir.join("json-test-suite/test_parsing"));
    assert_eq!(files.len(), 318);
    // 95 y_ files (2 refused: duplicate names) + 5 accepted i_ files; the rest refused.
    assert_eq!(check_all(&files), (98, 220));
}

#[test]
fn json_test_suite_fixtures() {
    let files = sorted_files(&fixtures().join("json-test-suite/test_parsing"));
    assert_eq!(check_all(&files), (5, 10));
}

#[test]
fn every_fixture_json_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<_> = walkdir::WalkDir::new(&root)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 31);
    assert_eq!(check_all(&files), (21, 10));
}

// ---------------------------------------------------------------------------------------
// Hand-picked cases
// ---------------------------------------------------------------------------------------

#[test]
fn objects_are_sorted_at_every_depth() {
    assert_eq!(
        accepted(r#" { "b" : 1 , "a" : { "d" : [ 1 , { "z" : 0 , "y" : 1.0 } ] , "c" : 2e-3 } } "#),
        r#"{"a":{"c":0.002,"d":[1,{"y":1,"z":0}]},"b":1}"#
    );
    // UTF-16 order: U+E000 sorts after U+1F600, whatever order they come in.
    assert_eq!(
        accepted("{\"\u{e000}\":1,\"😀\":2,\"a\":3}"),
        "{\"a\":3,\"😀\":2,\"\u{e000}\":1}"
    );
    assert_eq!(
        accepted(r#"{"\ue000":1,"\ud83d\ude00":[{"\u0062":"\u0000","a":"\/"}]}"#),
        "{\"😀\":[{\"a\":\"/\",\"b\":\"\\u0000\"}],\"\u{e000}\":1}"
    );
    // A large object in reverse order (the hash-set path), nested in an unsorted one.
    let members: Vec<String> = (0..100)
        .rev()
        .map(|i| format!("\"k{i:03}\":[{i}]"))
        .collect();
    let text = format!("{{\"z\":{{{}}},\"a\":{{}}}}", members.join(","));
    let sorted: Vec<String> = (0..100).map(|i| format!("\"k{i:03}\":[{i}]")).collect();
    assert_eq!(
        accepted(&text),
        format!("{{\"a\":{{}},\"z\":{{{}}}}}", sorted.join(","))
    );
    assert_eq!(accepted("[]"), "[]");
    assert_eq!(accepted(" {\n} "), "{}");
    assert_eq!(accepted("[{},[],[[]],{\"\":{}}]"), "[{},[],[[]],{\"\":{}}]");
}

#[test]
fn duplicates_are_refused_where_the_name_is_read() {
    let cases = [
        (r#"{"a":1,"a":2}"#, r#""a""#),
        (r#"{"a":1,"b":{"c":1,"c":2}}"#, r#""c""#),
        (r#"{"b":1,"a":2,"b":3}"#, r#""b""#),
        (r#"{"a":1,"\u0061":2}"#, r#""a""#),
        (r#"[[{"x":{"\n":1,"\n":2}}]]"#, r#""\n""#),
        ("{\"\":1,\"\":2}", r#""""#),
    ];
    for (text, name) in cases {
        let e = refused(text);
        assert_eq!(e.message, format!("duplicate member name {name}"), "{text}");
    }
    // Large objects: in order then a repeat; out of order then a repeat; at both ends.
    for keys in [
        (0..40).chain([5]).collect::<Vec<_>>(),
        (0..40).rev().chain([39]).collect(),
        (0..40).rev().chain([0]).collect(),
        (0..20).rev().chain(20..40).chain([10]).collect(),
        (0..40).chain([39]).collect(),
    ] {
        let members: Vec<String> = keys.iter().map(|k| format!("\n \"k{k}\": {k}")).collect();
        let text = format!("{{{}}}", members.join(","));
        let e = refused(&text);
        let last = keys.last().unwrap();
        assert_eq!(e.message, format!("duplicate member name \"k{last}\""));
        assert_eq!(e.line, keys.len() + 1, "{text}");
    }
}

#[test]
fn the_number_token_is_an_ordinary_name() {
    for text in [
        r#"{"$serde_json::private::Number":"1"}"#,
        r#"{"$serde_json::private::Number":1}"#,
        r#"{"$serde_json::private::Number":[1,2]}"#,
        r#"{"$serde_json::private::Number":{"a":1}}"#,
        r#"{"$serde_json::private::Number":"1","a":1}"#,
        r#"[{"b":{"$serde_json::private::Number":null}}]"#,
    ] {
        assert_eq!(accepted(text), text);
    }
    let e = refused(r#"{"$serde_json::private::Number":"1","$serde_json::private::Number":"1"}"#);
    assert!(e.message.starts_with("duplicate member name"), "{e}");
}

#[test]
fn numbers_take_their_canonical_form() {
    let cases = [
        ("1.0", "1"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("1E30", "1e+30"),
        ("2e-3", "0.002"),
        ("4.50", "4.5"),
        ("1e-400", "0"),
        (
            "-123456789012345678901234567890",
            "-123456789012345678901234567890",
        ),
        ("1.0e25", "1e+25"),
    ];
    for (text, expected) in cases {
        assert_eq!(accepted(text), expected);
        assert_eq!(accepted(&format!("[{text}]")), format!("[{expected}]"));
    }
    for text in ["1e400", "-1e999", "[1,\n  1E400]", "{\"a\":{\"b\":-1e309}}"] {
        let e = refused(text);
        assert!(e.message.contains("out of range"), "{text}: {e}");
    }
}

fn nested(depth: usize, objects: bool) -> String {
    let (open, close) = if objects {
        ("{\"a\":", "}")
    } else {
        ("[", "]")
    };
    format!("{}0{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn depth_limit_is_max_depth() {
    for objects in [false, true] {
        accepted(&nested(MAX_DEPTH, objects));
        // A number inside the deepest level does not count as a level.
        accepted(&nested(MAX_DEPTH, objects).replace('0', "1.5"));
        let e = refused(&nested(MAX_DEPTH + 1, objects));
        assert!(e.message.starts_with("nesting deeper than"), "{e}");
        refused(&nested(100_000, objects));
    }
    let mixed = |pairs: usize| format!("{}0{}", "[{\"a\":".repeat(pairs), "}]".repeat(pairs));
    assert_eq!(accepted(&mixed(MAX_DEPTH / 2)), mixed(MAX_DEPTH / 2));
    refused(&mixed(MAX_DEPTH / 2 + 1));
}

#[test]
fn other_refusals_agree() {
    for text in [
        "",
        " \n ",
        "{} x",
        "[1] ]",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:1}",
        "[\"\\ud800\"]",
        "[\"a\tb\"]",
        "\"\\x\"",
        "[01]",
        "{\"a\":[1,2}",
        "nul",
        "[1 2]",
        "{\"b\":1,\"a\":2,}",
        "{\"b\":1,\"a\":2 x",
    ] {
        refused(text);
    }
    let e = agrees(b"\xEF\xBB\xBF{}").unwrap_err();
    assert!(e.message.contains("byte-order mark"), "{e}");
    let e = agrees(b"{\"a\":\n \"\xff\"}").unwrap_err();
    assert_eq!((e.line, e.column), (2, 3));
}

// ---------------------------------------------------------------------------------------
// Generated JSON texts
// ---------------------------------------------------------------------------------------

/// Whitespace between tokens: mostly none, sometimes any of the four kinds.
fn ws() -> impl Strategy<Value = String> {
    prop_oneof![4 => Just(String::new()), 1 => "[ \t\n\r]{1,3}"]
}

fn arb_number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec![
            "0",
            "-0",
            "1",
            "1.0",
            "-0.0",
            "1E30",
            "1e+30",
            "2e-3",
            "4.50",
            "1e-400",
            "123456789012345678901234567890",
            "-9007199254740993",
            "0.1",
            "1E-7",
            "1e21",
            "1e20",
            "5e-324",
            "1.7976931348623157e308",
        ])
        .prop_map(str::to_owned),
        12 => "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?",
        // Not finite as a double, or not finite only just.
        1 => "-?[1-9](\\.[0-9]{1,5})?[eE][+-]?[23][0-9]{2}",
        1 => prop::sample::select(vec!["1e400", "-1e999", "1.8e308"]).prop_map(str::to_owned),
        // Not numbers.
        1 => prop::sample::select(vec![
            "01", "1.", ".5", "+1", "-", "1e", "0x10", "NaN", "-Infinity", "1e+", "-01",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A string literal: raw characters (some that sort differently in UTF-16), escapes of
/// every kind (surrogate pairs, control characters) and, rarely, something invalid.
fn arb_string_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        30 => "[a-c/é\u{7f}\u{e000}\u{ffff}😀\u{10000}\u{10ffff}]",
        10 => prop::sample::select(vec![
            "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0061", "\\u00e9",
            "\\uE000", "\\uffff", "\\ud83d\\ude00", "\\uD800\\uDC00", "\\uDBFF\\uDFFF",
        ])
        .prop_map(str::to_owned),
        5 => (0u32..0x20).prop_map(|c| format!("\\u{c:04x}")),
        1 => prop::sample::select(vec!["\\ud800", "\\udc00", "\\x", "\\u12", "\u{1}", "\t"])
            .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|p| format!("\"{}\"", p.concat()))
}

/// Member names: a few that collide often (also through escapes), short random ones, any
/// string literal, and rarely the name `serde_json` once reserved.
fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::sample::select(vec![
            "\"a\"", "\"b\"", "\"\\u0061\"", "\"\u{e000}\"", "\"\\ue000\"", "\"😀\"",
            "\"\\ud83d\\ude00\"", "\"\"", "\"\u{ffff}\"", "\"\u{10000}\"",
        ])
        .prop_map(str::to_owned),
        24 => "\"[a-z]{1,2}\"",
        8 => arb_string_text(),
        1 => Just("\"$serde_json::private::Number\"".to_owned()),
    ]
}

fn arb_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        1 => Just("null".to_owned()),
        1 => Just("true".to_owned()),
        1 => Just("false".to_owned()),
        3 => arb_number_text(),
        3 => arb_string_text(),
    ];
    leaf.prop_recursive(6, 200, 24, |inner| {
        prop_oneof![
            prop::collection::vec((ws(), inner.clone(), ws()), 0..8).prop_map(|elements| {
                let parts: Vec<String> = elements
                    .into_iter()
                    .map(|(a, v, b)| format!("{a}{v}{b}"))
                    .collect();
                format!("[{}]", parts.join(","))
            }),
            prop::collection::vec((ws(), arb_name(), ws(), ws(), inner, ws()), 0..24).prop_map(
                |members| {
                    let parts: Vec<String> = members
                        .into_iter()
                        .map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
                        .collect();
                    format!("{{{}}}", parts.join(","))
                }
            ),
        ]
    })
}

/// Large objects with distinct names in a random order, sometimes with one name repeated.
fn arb_big_object() -> impl Strategy<Value = String> {
    let names = prop::sample::subsequence((0..120).collect::<Vec<u32>>(), 0..60).prop_shuffle();
    (names, arb_json(), any::<Option<prop::sample::Index>>()).prop_map(|(names, v, repeat)| {
        let mut names: Vec<String> = names
            .into_iter()
            .map(|i| match i % 3 {
                0 => format!("\"k{i}\""),
                1 => format!("\"\u{e000}{i}\""),
                _ => format!("\"\\ud83d\\ude00{i}\""),
            })
            .collect();
        if let Some(at) = repeat
            && !names.is_empty()
        {
            names.push(at.get(&names).clone());
        }
        let members: Vec<String> = names.iter().map(|k| format!("{k}:{v}")).collect();
        format!("{{{}}}", members.join(",\n"))
    })
}

/// Nesting around the limit, arrays and objects mixed, around a generated value.
fn arb_deep() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(any::<bool>(), MAX_DEPTH - 6..MAX_DEPTH + 3),
        arb_number_text(),
    )
        .prop_map(|(levels, leaf)| {
            let mut text = String::new();
            for &object in &levels {
                text.push_str(if object { "{\"a\":" } else { "[" });
            }
            text.push_str(&leaf);
            for &object in levels.iter().rev() {
                text.push(if object { '}' } else { ']' });
            }
            text
        })
}

/// A whole text: a value, whitespace, and sometimes something after it.
fn arb_text() -> impl Strategy<Value = String> {
    let trailing = prop_oneof![
        8 => Just(""),
        1 => prop::sample::select(vec!["x", ",", "]", "}", "1", "\"a\"", "null", "\u{0}", "//", "{}"]),
    ];
    let value = prop_oneof![6 => arb_json(), 2 => arb_big_object(), 1 => arb_deep()];
    (ws(), value, ws(), trailing).prop_map(|(a, v, b, t)| format!("{a}{v}{b}{t}"))
}

/// A byte edit: delete, insert or replace at a position (taken modulo the length).
fn mutate(text: &str, at: prop::sample::Index, op: u8, byte: u8) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    if bytes.is_empty() {
        return vec![byte];
    }
    let i = at.index(bytes.len());
    match op % 3 {
        0 => {
            bytes.remove(i);
        }
        1 => bytes.insert(i, byte),
        _ => bytes[i] = byte,
    }
    bytes
}

/// What `serde_json` (built as hist leaves it: without `arbitrary_precision`) says about a
/// text hist's own checks let through (UTF-8, no byte-order mark): accepted, or refused at a
/// line and character column with a message, as hist reports them.
fn serde_json_verdict(bytes: &[u8]) -> Option<Result<(), ParseError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.starts_with('\u{feff}') {
        return None;
    }
    let Err(e) = serde_json::from_str::<serde_json::Value>(text) else {
        return Some(Ok(()));
    };
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = match full.strip_suffix(&suffix).unwrap_or(&full) {
        "recursion limit exceeded" => format!("nesting deeper than {MAX_DEPTH} arrays and objects"),
        m => m.to_owned(),
    };
    // serde_json counts bytes, and column `c` of line `l` is the byte `c - 1` of the line.
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line() - 1)
        .map(str::len)
        .sum();
    let mut at = match e.column() {
        0 => line_start.saturating_sub(1),
        c => (line_start + c - 1).min(text.len()),
    };
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = 1 + before.matches('\n').count();
    let column = 1 + before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count();
    Some(Err(ParseError {
        line,
        column,
        message,
    }))
}

/// hist's parser accepts what `serde_json` accepts and refuses the rest with the same
/// message at the same place, except where hist is stricter: a duplicate member name (then
/// found no later than `serde_json`'s own error, if any) and a number beyond a double's
/// range (`serde_json`'s "number out of range", worded hist's way).
fn agrees_with_serde_json(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Some(verdict) = serde_json_verdict(bytes) else {
        return Ok(());
    };
    let got = canon::parse(bytes).map(drop);
    let input = String::from_utf8_lossy(bytes);
    let duplicate = |e: &ParseError| e.message.starts_with("duplicate member name");
    match (&verdict, &got) {
        (Ok(()), Ok(())) => {}
        (Ok(()), Err(e)) => prop_assert!(duplicate(e), "{input:?}: {e}"),
        (Err(theirs), Err(ours)) if theirs.message == "number out of range" => prop_assert!(
            ours.message
                .ends_with("is out of range (not a finite double)")
                || duplicate(ours),
            "{input:?}: {ours}"
        ),
        (Err(theirs), Err(ours)) if duplicate(ours) => prop_assert!(
            (ours.line, ours.column) <= (theirs.line, theirs.column),
            "{input:?}: {ours} after {theirs}"
        ),
        (Err(theirs), ours) => prop_assert_eq!(ours, &Err(theirs.clone()), "{:?}", input),
    }
    Ok(())
}

#[test]
fn refusals_are_serde_jsons_in_the_conformance_data() {
    let mut files = sorted_files(&fixtures().join("json-test-suite/test_parsing"));
    if let Some(dir) = shared_conformance() {
        files.extend(sorted_files(&dir.join("json-test-suite/test_parsing")));
    }
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        agrees_with_serde_json(&bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn generated_texts_are_read_as_serde_json_reads_them(text in arb_text()) {
        agrees_with_serde_json(text.as_bytes())?;
    }

    #[test]
    fn edited_texts_are_read_as_serde_json_reads_them(
        text in arb_text(),
        at in any::<prop::sample::Index>(),
        op in any::<u8>(),
        byte in prop::sample::select(b"\"\\,:{}[]0e-. \n\x01\xff\xc3a".to_vec()),
    ) {
        agrees_with_serde_json(&mutate(&text, at, op, byte))?;
    }

    #[test]
    fn generated_texts_agree_with_the_oracle(text in arb_text()) {
        let got = canon::canonical_text(text.as_bytes());
        prop_assert_eq!(&got, &oracle(text.as_bytes()), "input: {:?}", text);
        prop_assert_eq!(ordered(text.as_bytes()), ordered_oracle(text.as_bytes()), "ordered: {:?}", text);
        if let Ok(canonical) = got {
            // The canonical text is a fixed point.
            prop_assert_eq!(canon::canonical_text(canonical.as_bytes()), Ok(canonical.clone()));
        }
    }

    #[test]
    fn edited_texts_agree_with_the_oracle(
        text in arb_text(),
        at in any::<prop::sample::Index>(),
        op in any::<u8>(),
        byte in prop::sample::select(b"\"\\,:{}[]0e-. \n\x01\xff\xc3a".to_vec()),
    ) {
        let bytes = mutate(&text, at, op, byte);
        prop_assert_eq!(
            canon::canonical_text(&bytes),
            oracle(&bytes),
            "input: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        prop_assert_eq!(ordered(&bytes), ordered_oracle(&bytes));
    }

    #[test]
    fn random_bytes_agree_with_the_oracle(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(canon::canonical_text(&bytes), oracle(&bytes));
    }
}
