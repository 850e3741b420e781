//! Tests of `hist::canon`: RFC 8785 conformance, ECMAScript number form, strict parsing
//! (JSONTestSuite), the integer exception, errors and positions, and property tests.
//!
//! Conformance data comes from `<CARGO_MANIFEST_DIR>/../shared/conformance` when present
//! (skipped with a `SKIPPED:` line otherwise) and from the small byte-exact copy in
//! `fixtures/conformance/`, which is always checked.
use hist::canon::{self, MAX_DEPTH, Map, Number, ObjectId, ParseError, Value};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Conformance data
// ---------------------------------------------------------------------------------------

pub(crate) fn shared_conformance() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: ../shared/conformance not found");
        None
    }
}

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/conformance")
}

pub(crate) fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// RFC 8785 vectors: `input/NAME.json` canonicalizes to the bytes of `output/NAME.json`.
/// Returns the number of cases checked.
fn check_jcs(jcs: &Path) -> usize {
    let mut checked = 0;
    for input in sorted_files(&jcs.join("input")) {
        let name = file_name(&input);
        let bytes = std::fs::read(&input).unwrap();
        let expected = std::fs::read(jcs.join("output").join(&name)).unwrap();
        let value =
            canon::parse(&bytes).unwrap_or_else(|e| panic!("{name}: input should parse: {e}"));
        let mut out = Vec::new();
        canon::write_canonical(&value, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected),
            "{name}"
        );
        assert_eq!(out, expected, "{name}: bytes");
        assert_eq!(canon::to_canonical_string(&value).as_bytes(), &expected[..]);
        // The output is a fixed point, and the pretty form reads back the same.
        assert_eq!(canon::parse(&expected).unwrap(), value, "{name}");
        assert_eq!(
            canon::parse_str(&canon::to_pretty_string(&value)).unwrap(),
            value,
            "{name}"
        );
        checked += 1;
    }
    checked
}

/// ES6 number vectors: each line `hex-bits,expected`. Returns the number of lines checked.
fn check_es6_numbers(file: &Path) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let (hex, expected) = line
            .split_once(',')
            .unwrap_or_else(|| panic!("line {}: no comma", i + 1));
        let f = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        let number = canon::number_from_f64(f)
            .unwrap_or_else(|| panic!("line {}: {hex} should be finite", i + 1));
        assert_eq!(number.as_str(), expected, "line {}: {hex}", i + 1);
        checked += 1;
    }
    checked
}

/// How `canon::parse` answers each JSONTestSuite `i_` file: `Ok(canonical text)` or
/// `Err(start of the message)`. A change to any of these is a change of behavior to
/// notice (and to describe in the module doc of `canon`).
const I_OUTCOMES: &[(&str, Result<&str, &str>)] = &[
    ("i_number_double_huge_neg_exp.json", Ok("[0]")),
    (
        "i_number_huge_exp.json",
        Err("number 0.4e+006699999999999999999999"),
    ),
    (
        "i_number_neg_int_huge_exp.json",
        Err("number -1e+9999 is out of range (not a finite double)"),
    ),
    (
        "i_number_pos_double_huge_exp.json",
        Err("number 1.5e+9999 is out of range (not a finite double)"),
    ),
    (
        "i_number_real_neg_overflow.json",
        Err("number -123123e+100000 is out of range (not a finite double)"),
    ),
    (
        "i_number_real_pos_overflow.json",
        Err("number 123123e+100000 is out of range (not a finite double)"),
    ),
    ("i_number_real_underflow.json", Ok("[0]")),
    (
        "i_number_too_big_neg_int.json",
        Ok("[-123123123123123123123123123123]"),
    ),
    (
        "i_number_too_big_pos_int.json",
        Ok("[100000000000000000000]"),
    ),
    (
        "i_number_very_big_negative_int.json",
        Ok("[-237462374673276894279832749832423479823246327846]"),
    ),
    (
        "i_object_key_lone_2nd_surrogate.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_1st_surrogate_but_2nd_missing.json",
        Err("unexpected end of hex escape"),
    ),
    (
        "i_string_1st_valid_surrogate_2nd_invalid.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_UTF-16LE_with_BOM.json",
        Err("invalid UTF-8 at byte offset 0 (bytes ff)"),
    ),
    (
        "i_string_UTF-8_invalid_sequence.json",
        Err("invalid UTF-8 at byte offset 7 (bytes fa)"),
    ),
    (
        "i_string_UTF8_surrogate_U+D800.json",
        Err("invalid UTF-8 at byte offset 2 (bytes ed)"),
    ),
    (
        "i_string_incomplete_surrogate_and_escape_valid.json",
        Err("unexpected end of hex escape"),
    ),
    (
        "i_string_incomplete_surrogate_pair.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_incomplete_surrogates_escape_valid.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_invalid_lonely_surrogate.json",
        Err("unexpected end of hex escape"),
    ),
    (
        "i_string_invalid_surrogate.json",
        Err("unexpected end of hex escape"),
    ),
    (
        "i_string_invalid_utf-8.json",
        Err("invalid UTF-8 at byte offset 2 (bytes ff)"),
    ),
    (
        "i_string_inverted_surrogates_U+1D11E.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_iso_latin_1.json",
        Err("invalid UTF-8 at byte offset 2 (bytes e9)"),
    ),
    (
        "i_string_lone_second_surrogate.json",
        Err("lone leading surrogate in hex escape"),
    ),
    (
        "i_string_lone_utf8_continuation_byte.json",
        Err("invalid UTF-8 at byte offset 2 (bytes 81)"),
    ),
    (
        "i_string_not_in_unicode_range.json",
        Err("invalid UTF-8 at byte offset 2 (bytes f4)"),
    ),
    (
        "i_string_overlong_sequence_2_bytes.json",
        Err("invalid UTF-8 at byte offset 2 (bytes c0)"),
    ),
    (
        "i_string_overlong_sequence_6_bytes.json",
        Err("invalid UTF-8 at byte offset 2 (bytes fc)"),
    ),
    (
        "i_string_overlong_sequence_6_bytes_null.json",
        Err("invalid UTF-8 at byte offset 2 (bytes fc)"),
    ),
    (
        "i_string_truncated-utf-8.json",
        Err("invalid UTF-8 at byte offset 2 (bytes e0)"),
    ),
    (
        "i_string_utf16BE_no_BOM.json",
        Err("invalid UTF-8 at byte offset 5 (bytes e9)"),
    ),
    (
        "i_string_utf16LE_no_BOM.json",
        Err("invalid UTF-8 at byte offset 4 (bytes e9)"),
    ),
    (
        "i_structure_500_nested_arrays.json",
        Err("nesting deeper than 127 arrays and objects"),
    ),
    (
        "i_structure_UTF-8_BOM_empty_object.json",
        Err("a UTF-8 byte-order mark is not allowed"),
    ),
];

/// `y_` files that are valid JSON but refused on purpose: duplicate member names.
const Y_REFUSED: &[&str] = &[
    "y_object_duplicated_key.json",
    "y_object_duplicated_key_and_value.json",
];

/// Counts of (`y_`, `n_`, `i_`) files checked.
fn check_test_suite(dir: &Path) -> (usize, usize, usize) {
    let (mut y, mut n, mut i) = (0, 0, 0);
    for path in sorted_files(dir) {
        let name = file_name(&path);
        let bytes = std::fs::read(&path).unwrap();
        let result = canon::parse(&bytes);
        if name.starts_with("y_") {
            y += 1;
            if Y_REFUSED.contains(&name.as_str()) {
                let e = result.expect_err(&name);
                assert_eq!(e.message, r#"duplicate member name "a""#, "{name}");
            } else {
                let value = result.unwrap_or_else(|e| panic!("{name} should parse: {e}"));
                let text = canon::to_canonical_string(&value);
                assert_eq!(canon::parse_str(&text).as_ref(), Ok(&value), "{name}");
            }
        } else if name.starts_with("n_") {
            n += 1;
            assert!(result.is_err(), "{name} should be refused: {result:?}");
        } else if name.starts_with("i_") {
            i += 1;
            let (_, expected) = I_OUTCOMES
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{name}: no pinned outcome in I_OUTCOMES"));
            match (expected, &result) {
                (Ok(text), Ok(v)) => assert_eq!(canon::to_canonical_string(v), *text, "{name}"),
                (Err(prefix), Err(e)) => assert!(
                    e.message.starts_with(prefix),
                    "{name}: {:?} should start with {prefix:?}",
                    e.message
                ),
                _ => panic!("{name}: expected {expected:?}, got {result:?}"),
            }
        } else {
            panic!("{name}: unexpected file");
        }
    }
    (y, n, i)
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
fn es6_numbers_shared() {
    let Some(dir) = shared_conformance() else {
        return;
    };
    let file = dir.join("jcs/es6numbers/es6testfile-first10000.txt");
    assert_eq!(check_es6_numbers(&file), 10_000);
}

#[test]
fn es6_numbers_fixtures() {
    let file = fixtures().join("jcs/es6numbers/es6testfile-first100.txt");
    assert_eq!(check_es6_numbers(&file), 100);
}

#[test]
fn json_test_suite_shared() {
    let Some(dir) = shared_conformance() else {
        return;
    };
    let counts = check_test_suite(&dir.join("json-test-suite/test_parsing"));
    assert_eq!(counts, (95, 188, 35));
    assert_eq!(I_OUTCOMES.len(), 35);
}

#[test]
fn json_test_suite_fixtures() {
    let counts = check_test_suite(&fixtures().join("json-test-suite/test_parsing"));
    assert_eq!(counts, (6, 4, 5));
}

// ---------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------

fn canonical(text: &str) -> String {
    let value = canon::parse_str(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"));
    canon::to_canonical_string(&value)
}

fn refused(text: &str) -> ParseError {
    canon::parse_str(text).expect_err(text)
}

#[test]
fn integers_are_kept_digit_for_digit() {
    for text in [
        "12345678901234567890123",
        "-9007199254740993",
        "9007199254740993",
        "18446744073709551616",
        "-9223372036854775809",
        "100000000000000000000000000000000000000000000000000000000000000000000000",
        "0",
        "-1",
        "9007199254740992",
    ] {
        assert_eq!(canonical(text), text);
        assert_eq!(canonical(&format!("[{text}]")), format!("[{text}]"));
        let value = canon::parse_str(text).unwrap();
        assert_eq!(value.as_number().unwrap().as_str(), text);
        assert_eq!(text.parse::<Number>().unwrap().as_str(), text);
    }
    // Through a double these would have changed.
    assert_ne!(
        canon::number_from_f64(12345678901234567890123.0)
            .unwrap()
            .as_str(),
        "12345678901234567890123"
    );
}

#[test]
fn negative_zero_is_zero() {
    for text in ["-0", "-0.0", "-0e5", "0.0", "-0E-3", "0e0"] {
        assert_eq!(canonical(text), "0", "{text}");
    }
    assert_eq!(canon::parse_str("-0").unwrap(), json!(0));
    assert_eq!(canon::number_from_f64(-0.0).unwrap().as_str(), "0");
}

#[test]
fn non_integer_literals_take_the_ecmascript_form() {
    let table = [
        ("1E30", "1e+30"),
        ("4.50", "4.5"),
        ("1.0", "1"),
        ("2e-3", "0.002"),
        ("-1.5", "-1.5"),
        ("0.1", "0.1"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("123e-9", "1.23e-7"),
        ("0.000001", "0.000001"),
        ("0.0000001", "1e-7"),
        ("333333333.33333329", "333333333.3333333"),
        ("0.000000000000000000000000001", "1e-27"),
        ("1e-400", "0"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("5e-324", "5e-324"),
        ("9007199254740993.0", "9007199254740992"),
        ("1.0e25", "1e+25"),
    ];
    for (text, expected) in table {
        assert_eq!(canonical(text), expected, "{text}");
    }
}

#[test]
fn equal_numbers_parse_to_equal_values() {
    assert_eq!(
        canon::parse_str("1.0").unwrap(),
        canon::parse_str("1").unwrap()
    );
    assert_eq!(canon::parse_str("[1.0, 2.50]").unwrap(), json!([1, 2.5]));
    assert_eq!(
        canon::parse_str(r#"{"a": 1e2}"#).unwrap(),
        canon::parse_str(r#"{"a": 100}"#).unwrap()
    );
    // An integer literal and a non-integer literal of the same large value differ.
    assert_ne!(
        canon::parse_str("1e25").unwrap(),
        canon::parse_str("10000000000000000000000000").unwrap()
    );
}

#[test]
fn non_finite_numbers_are_refused() {
    let e = refused("[1e400]");
    assert_eq!(
        e,
        ParseError {
            line: 1,
            column: 6,
            message: "number 1e+400 is out of range (not a finite double)".to_owned()
        }
    );
    assert!(refused("-1e999").message.contains("out of range"));
    assert!(
        refused(r#"{"a": {"b": 2E+308}}"#)
            .message
            .contains("out of range")
    );

    // No number holds such a value: there is none to write.
    let e = "1e400".parse::<Number>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "number 1e400 is out of range (not a finite double)"
    );
    for text in ["", " 1", "1 ", "01", "1.", "+1", "0x10", "NaN", "1e", "--1"] {
        assert!(text.parse::<Number>().is_err(), "{text:?}");
    }

    assert_eq!(canon::number_from_f64(f64::INFINITY), None);
    assert_eq!(canon::number_from_f64(f64::NEG_INFINITY), None);
    assert_eq!(canon::number_from_f64(f64::NAN), None);
    assert_eq!(canon::number_from_f64(1e30).unwrap().as_str(), "1e+30");
    assert_eq!(canon::number_from_f64(0.5).unwrap().as_str(), "0.5");
    assert_eq!(canon::number_from_f64(3.0).unwrap(), Number::from(3));
}

#[test]
fn every_way_of_making_a_number_gives_its_canonical_form() {
    // `serde_json` holds these as doubles (`1.0`, `1e30`); converted, they are canonical.
    let value = json!({"a": [1.0, -0.0, 2.50, 1e30], "b": {"c": 0.1}, "d": "1.0"});
    let parsed = canon::parse_str(r#"{"a":[1,0,2.5,1e+30],"b":{"c":0.1},"d":"1.0"}"#).unwrap();
    assert_eq!(value, parsed);
    assert_eq!(
        canon::to_canonical_string(&value),
        r#"{"a":[1,0,2.5,1e+30],"b":{"c":0.1},"d":"1.0"}"#
    );
    assert_eq!(canon::hash(&value), canon::hash(&parsed));
    assert_eq!(Value::from(2.5), canon::parse_str("2.50").unwrap());
    assert_eq!(Value::from(-0.0), Value::from(0));
    assert_eq!(Value::from(u64::MAX).to_string(), "18446744073709551615");
    assert_eq!(Value::from(i128::MIN).to_string(), i128::MIN.to_string());
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(
        "4.50".parse::<Number>().unwrap(),
        Number::from_f64(4.5).unwrap()
    );
    assert_eq!(Value::from(1.5).as_f64(), Some(1.5));
    assert_eq!(Value::from(7).as_u64(), Some(7));
    assert_eq!(canon::parse_str("1e2").unwrap().as_u64(), Some(100));
}

// ---------------------------------------------------------------------------------------
// Strict parsing
// ---------------------------------------------------------------------------------------

#[test]
fn duplicate_member_names_are_refused() {
    assert_eq!(
        refused(r#"{"a":1,"a":2}"#),
        ParseError {
            line: 1,
            column: 10,
            message: r#"duplicate member name "a""#.to_owned()
        }
    );
    assert_eq!(
        refused("[{\"x\": {\"é\": 1,\n  \"é\": 1}}]"),
        ParseError {
            line: 2,
            column: 5,
            message: r#"duplicate member name "é""#.to_owned()
        }
    );
    assert_eq!(
        refused(r#"{"a": [{"b": 1, "c": {"\n": 0, "\u000a": 1}}]}"#).message,
        r#"duplicate member name "\n""#
    );
    // The same name in different objects is fine.
    assert_eq!(
        canonical(r#"{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}"#),
        r#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#
    );
}

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    format!(
        "{}{}{}",
        r#"{"a":"#.repeat(depth - 1),
        "{}",
        "}".repeat(depth - 1)
    )
}

#[test]
fn depth_limit_is_max_depth() {
    assert_eq!(MAX_DEPTH, 127);
    let deepest = canon::parse_str(&nested_arrays(MAX_DEPTH)).unwrap();
    assert_eq!(
        canon::to_canonical_string(&deepest),
        nested_arrays(MAX_DEPTH)
    );
    assert_eq!(
        canon::parse_str(&nested_objects(MAX_DEPTH)).unwrap(),
        canon::parse_str(&canon::to_pretty_string(
            &canon::parse_str(&nested_objects(MAX_DEPTH)).unwrap()
        ))
        .unwrap()
    );
    let message = "nesting deeper than 127 arrays and objects";
    assert_eq!(
        refused(&nested_arrays(MAX_DEPTH + 1)),
        ParseError {
            line: 1,
            column: 128,
            message: message.to_owned()
        }
    );
    assert_eq!(refused(&nested_objects(MAX_DEPTH + 1)).message, message);
    // Far deeper input is a clean error, not a stack overflow.
    assert_eq!(
        refused(&"[".repeat(100_000)),
        ParseError {
            line: 1,
            column: 128,
            message: message.to_owned()
        }
    );
    assert_eq!(refused(&r#"{"a":"#.repeat(100_000)).message, message);
    assert_eq!(refused(&"[{\"a\":".repeat(50_000)).message, message);
}

#[test]
fn invalid_utf8_is_refused() {
    assert_eq!(
        canon::parse(b"[\"ok\",\n \"\xff\"]").unwrap_err(),
        ParseError {
            line: 2,
            column: 3,
            message: "invalid UTF-8 at byte offset 9 (bytes ff); JSON text must be UTF-8"
                .to_owned()
        }
    );
    assert_eq!(
        canon::parse(b"\"\xc3\"").unwrap_err().message,
        "invalid UTF-8 at byte offset 1 (bytes c3); JSON text must be UTF-8"
    );
    // UTF-16 is not guessed.
    assert!(canon::parse(b"[\x001\x00]\x00").is_err());
}

#[test]
fn byte_order_mark_is_refused() {
    assert_eq!(
        canon::parse(b"\xEF\xBB\xBF{}").unwrap_err(),
        ParseError {
            line: 1,
            column: 1,
            message: "a UTF-8 byte-order mark is not allowed at the start of JSON text \
                      (remove the first 3 bytes)"
                .to_owned()
        }
    );
    // U+FEFF elsewhere is just a character in a string.
    assert_eq!(canonical("\"\u{feff}\""), "\"\u{feff}\"");
}

#[test]
fn errors_carry_line_and_column() {
    let cases: &[(&str, usize, usize, &str)] = &[
        ("", 1, 1, "EOF while parsing a value"),
        ("[1,]", 1, 4, "trailing comma"),
        ("{\n  \"a\": tru\n}", 2, 11, "expected ident"),
        // Columns count characters, not bytes.
        ("[\"é€😀\", x]", 1, 9, "expected value"),
        ("[1]\n\n  2", 3, 3, "trailing characters"),
        ("{\"a\" 1}", 1, 6, "expected `:`"),
        (
            "\"a\u{1}\"",
            1,
            3,
            "control character (\\u0000-\\u001F) found while parsing a string",
        ),
        (
            "[1,\n 1e999]",
            2,
            6,
            "number 1e+999 is out of range (not a finite double)",
        ),
    ];
    for &(text, line, column, message) in cases {
        assert_eq!(
            refused(text),
            ParseError {
                line,
                column,
                message: message.to_owned()
            },
            "{text:?}"
        );
    }
    assert_eq!(
        refused("[1,]").to_string(),
        "line 1, column 4: trailing comma"
    );
}

#[test]
fn serde_json_number_token_is_an_ordinary_member_name() {
    // hist once had to refuse it, when its numbers went through serde_json's with
    // `arbitrary_precision`; now it is a name like any other.
    for text in [
        r#"{"$serde_json::private::Number":"1"}"#,
        r#"{"$serde_json::private::Number":1}"#,
        r#"{"$serde_json::private::Number":"1","a":1}"#,
        r#"[{"b":{"$serde_json::private::Number":{"c":"1e400"}}}]"#,
    ] {
        assert_eq!(canonical(text), text);
    }
    assert_eq!(
        canon::parse_str(r#"{"$serde_json::private::Number":"1"}"#).unwrap()["$serde_json::private::Number"],
        "1"
    );
    // Duplicates are refused as any others.
    assert_eq!(
        refused(r#"{"$serde_json::private::Number":"1","$serde_json::private::Number":"1"}"#)
            .message,
        r#"duplicate member name "$serde_json::private::Number""#
    );
    // And this build's serde_json reads it as an object too: hist did not switch on its
    // `arbitrary_precision` for the whole program.
    assert!(
        serde_json::from_str::<serde_json::Value>(r#"{"$serde_json::private::Number":"1"}"#)
            .unwrap()
            .is_object()
    );
    let mut members = Map::new();
    members.insert("$serde_json::private::Number".to_owned(), json!("1"));
    assert_eq!(
        canon::to_canonical_string(&Value::Object(members)),
        r#"{"$serde_json::private::Number":"1"}"#
    );
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

#[test]
fn members_sort_by_utf16_code_units() {
    assert_eq!(
        canon::compare_keys("\u{e000}", "\u{1f600}"),
        Ordering::Greater
    );
    assert_eq!(canon::compare_keys("\u{1f600}", "\u{e000}"), Ordering::Less);
    assert_eq!(
        canon::compare_keys("\u{ffff}", "\u{10000}"),
        Ordering::Greater
    );
    assert_eq!(canon::compare_keys("\u{d7ff}", "\u{10000}"), Ordering::Less);
    assert_eq!(canon::compare_keys("a", "ab"), Ordering::Less);
    assert_eq!(canon::compare_keys("", ""), Ordering::Equal);
    assert_eq!(canon::compare_keys("B", "a"), Ordering::Less);
    assert_eq!(canon::compare_keys("é", "z"), Ordering::Greater);
    // Byte (and code point) order would put U+E000 first.
    let value = json!({"\u{e000}": 1, "\u{1f600}": 2, "a": 3, "\u{ff}": 4});
    assert_eq!(
        canon::to_canonical_string(&value),
        "{\"a\":3,\"\u{ff}\":4,\"\u{1f600}\":2,\"\u{e000}\":1}"
    );
    assert_eq!(
        canon::to_pretty_string(&value),
        "{\n  \"a\": 3,\n  \"\u{ff}\": 4,\n  \"\u{1f600}\": 2,\n  \"\u{e000}\": 1\n}"
    );
}

#[test]
fn strings_use_minimal_escaping() {
    let all_controls: String = (0u8..0x20).map(char::from).collect();
    let value = Value::String(format!("{all_controls}\"\\/\u{7f}é€😀<>&'"));
    assert_eq!(
        canon::to_canonical_string(&value),
        concat!(
            r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#,
            r#"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c"#,
            r#"\u001d\u001e\u001f\"\\/"#,
            "\u{7f}é€😀<>&'\""
        )
    );
    assert_eq!(canonical(r#""\u00e9\/\u001F\u20AC""#), "\"é/\\u001f€\"");
    assert_eq!(
        canonical(r#"{"\u0000": "\ud83d\ude00"}"#),
        "{\"\\u0000\":\"😀\"}"
    );
}

#[test]
fn pretty_layout() {
    let value = canon::parse_str(
        r#"{"b": [1, {"y": [], "x": {}}, "s"], "a": 1.50, "c": {"d": null, "e": true}}"#,
    )
    .unwrap();
    assert_eq!(
        canon::to_pretty_string(&value),
        r#"{
  "a": 1.5,
  "b": [
    1,
    {
      "x": {},
      "y": []
    },
    "s"
  ],
  "c": {
    "d": null,
    "e": true
  }
}"#
    );
    assert_eq!(canon::to_pretty_string(&json!({})), "{}");
    assert_eq!(canon::to_pretty_string(&json!([])), "[]");
    assert_eq!(canon::to_pretty_string(&json!("a\nb")), r#""a\nb""#);
    assert_eq!(
        canon::to_pretty_string(&json!({"a": 1})),
        "{\n  \"a\": 1\n}"
    );
    // Same layout as serde_json.
    let oracle = serde_json::json!({"a": [1, {"b": null}, [], {}], "c": "é"});
    assert_eq!(
        canon::to_pretty_string(&Value::from(oracle.clone())),
        serde_json::to_string_pretty(&oracle).unwrap()
    );
}

/// The canonical bytes and blake3 digest of a fixed document. A change here is a format
/// break: every stored hash changes.
#[test]
fn golden_digest() {
    let text = r#"{
        "zeta": [1.0, -0, 2.50, 1E30, 12345678901234567890123, "é\u0001/"],
        "alpha": {"\ue000": true, "\ud83d\ude00": null, "": -9007199254740993},
        "Beta": 0.000001
    }"#;
    let value = canon::parse_str(text).unwrap();
    let bytes = canon::to_canonical_string(&value);
    assert_eq!(
        bytes,
        "{\"Beta\":0.000001,\"alpha\":{\"\":-9007199254740993,\"😀\":null,\"\u{e000}\":true},\
         \"zeta\":[1,0,2.5,1e+30,12345678901234567890123,\"é\\u0001/\"]}"
    );
    let id = canon::hash(&value);
    assert_eq!(id, ObjectId::of(bytes.as_bytes()));
    assert_eq!(
        id.to_hex(),
        "14c8d92c4273b383f27cbdba109289c8f4cf014545f41f40a2b61777fa9e9e5d"
    );
    assert_eq!(id.to_string(), id.to_hex());
    assert_eq!(ObjectId::from_hex(&id.to_hex()), Some(id));
    assert_eq!(format!("{id:?}"), format!("ObjectId({})", id.to_hex()));
    assert_eq!(ObjectId::from_hex("xyz"), None);
    assert_eq!(ObjectId::from_hex(&"a".repeat(63)), None);
}

// ---------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------

/// Numbers as other code builds them: integers, big-integer texts, doubles in several
/// textual forms (most of them not canonical).
fn arb_number() -> impl Strategy<Value = Number> {
    let finite = any::<f64>().prop_filter("finite", |f| f.is_finite());
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        "-?[1-9][0-9]{18,40}".prop_map(|t| t.parse::<Number>().unwrap()),
        finite
            .clone()
            .prop_map(|f| format!("{f:?}").parse::<Number>().unwrap()),
        finite
            .clone()
            .prop_map(|f| format!("{f:e}").parse::<Number>().unwrap()),
        finite.prop_map(|f| Number::from_f64(f).unwrap()),
        (-1000i32..1000, -30i32..30)
            .prop_map(|(m, e)| format!("{m}.50E{e}").parse::<Number>().unwrap()),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-c\u{0}-\u{1f}\"\\\\/\u{7f}é\u{e000}\u{ffff}😀\u{10000}]{0,6}",
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    arb_value_with(arb_number())
}

/// Values whose numbers `numbers` makes.
fn arb_value_with(
    numbers: impl Strategy<Value = Number> + 'static,
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        numbers.prop_map(Value::Number),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((arb_string(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map>())),
        ]
    })
}

/// Whether byte order and UTF-16 order agree on every member name of `value`.
fn keys_below_e000(value: &Value) -> bool {
    match value {
        Value::Array(values) => values.iter().all(keys_below_e000),
        Value::Object(members) => members
            .iter()
            .all(|(k, v)| k.chars().all(|c| c < '\u{e000}') && keys_below_e000(v)),
        _ => true,
    }
}

/// A slow, obviously correct canonical writer: members sorted by their UTF-16 code units
/// collected into vectors, strings written by serde_json, numbers as the text they hold.
fn reference_canonical(value: &Value) -> String {
    match value {
        Value::Array(values) => {
            let items: Vec<String> = values.iter().map(reference_canonical).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by_key(|(k, _)| k.encode_utf16().collect::<Vec<u16>>());
            let items: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        serde_json::to_string(k).unwrap(),
                        reference_canonical(v)
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::String(s) => serde_json::to_string(s).unwrap(),
        Value::Number(n) => n.as_str().to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
    }
}

/// The same value as serde_json holds it (its numbers must fit 64 bits).
fn to_serde(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into(),
            (None, Some(u)) => u.into(),
            _ => panic!("{n} does not fit 64 bits"),
        },
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(items) => serde_json::Value::Array(items.iter().map(to_serde).collect()),
        Value::Object(members) => serde_json::Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_serde(v)))
                .collect(),
        ),
    }
}

/// A document larger than the pieces `write_pretty_text` writes out at a time (64 KiB) is
/// laid out as serde_json lays it out, whichever piece a token falls in: long strings, deep
/// nesting (past the 64 spaces written at once), numbers, literals and empty containers.
#[test]
fn pretty_text_of_a_large_document_is_laid_out_like_the_value() {
    let deep = (0..40).fold(
        serde_json::json!([1.5, "x"]),
        |v, i| serde_json::json!({ format!("level {i}"): v }),
    );
    let items: Vec<serde_json::Value> = (0..3000)
        .map(|i| {
            serde_json::json!({"id": i, "name": format!("item \"{i}\" {}", "z".repeat(i % 90)),
                   "price": i * 7, "ok": i % 3 == 0, "none": null,
                   "tags": [], "meta": {}, "deep": if i % 500 == 0 { deep.clone() } else { serde_json::json!(-(i as i64)) }})
        })
        .collect();
    let oracle = serde_json::json!({"items": items, "long": "y".repeat(100_000)});
    let value = Value::from(oracle.clone());
    let text = canon::to_canonical_string(&value);
    assert!(text.len() > 4 * 64 * 1024, "{} bytes", text.len());
    // serde_json lays out the same (ASCII member names sort the same way, and no number
    // here has two forms): an oracle that shares no code with hist's.
    let expected = serde_json::to_string_pretty(&oracle).unwrap();
    assert_eq!(canon::to_pretty_string(&value), expected);
    assert_eq!(canon::pretty_text(&text), expected);
    // Written to a writer that takes a few bytes at a time.
    struct Trickle(Vec<u8>);
    impl std::io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Trickle(Vec::new());
    canon::write_pretty_text(&text, &mut out).unwrap();
    assert_eq!(String::from_utf8(out.0).unwrap(), expected);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The pretty layout of canonical text equals the pretty layout of the value.
    #[test]
    fn pretty_text_lays_out_canonical_text_like_the_value(value in arb_value()) {
        let text = canon::to_canonical_string(&value);
        prop_assert_eq!(canon::pretty_text(&text), canon::to_pretty_string(&value));
    }

    #[test]
    fn canonical_text_parses_back_to_the_value(value in arb_value()) {
        let text = canon::to_canonical_string(&value);
        prop_assert_eq!(canon::parse_str(&text).unwrap(), value.clone());
        // Idempotent.
        let again = canon::to_canonical_string(&canon::parse_str(&text).unwrap());
        prop_assert_eq!(&again, &text);
        prop_assert_eq!(value.to_string(), text.clone());
        let mut bytes = Vec::new();
        canon::write_canonical(&value, &mut bytes);
        prop_assert_eq!(bytes, text.as_bytes());
        prop_assert_eq!(canon::hash(&value), ObjectId::of(text.as_bytes()));
        prop_assert_eq!(&text, &reference_canonical(&value));
        prop_assert_eq!(canon::canonical_text(text.as_bytes()).unwrap(), text);
    }

    #[test]
    fn pretty_text_parses_back_equal(value in arb_value()) {
        let pretty = canon::to_pretty_string(&value);
        prop_assert_eq!(canon::parse_str(&pretty).unwrap(), value.clone());
        prop_assert_eq!(format!("{value:#}"), pretty);
    }

    /// Oracle: where byte order is UTF-16 order, serde_json's own writers (which escape
    /// like RFC 8785, and print a 64-bit integer as hist does) give the same text.
    #[test]
    fn matches_serde_json_where_orders_agree(
        value in arb_value_with(any::<i64>().prop_map(Number::from))
    ) {
        prop_assume!(keys_below_e000(&value));
        let oracle = to_serde(&value);
        prop_assert_eq!(
            canon::to_canonical_string(&value),
            serde_json::to_string(&oracle).unwrap()
        );
        prop_assert_eq!(
            canon::to_pretty_string(&value),
            serde_json::to_string_pretty(&oracle).unwrap()
        );
        prop_assert_eq!(Value::from(oracle), value);
    }

    #[test]
    fn compare_keys_is_utf16_order(a in arb_string(), b in arb_string()) {
        prop_assert_eq!(canon::compare_keys(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
    }

    #[test]
    fn number_from_f64_round_trips(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let number = canon::number_from_f64(f).unwrap();
        let back: f64 = number.as_str().parse().unwrap();
        prop_assert_eq!(back, if f == 0.0 { 0.0 } else { f });
        let parsed = canon::parse_str(number.as_str()).unwrap();
        prop_assert_eq!(parsed, Value::Number(number));
    }

    #[test]
    fn parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = canon::parse(&bytes);
    }
}
