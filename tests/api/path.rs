//! Tests of `hist::path`: the path syntax, its errors, round trips and JSON Pointer
//! compatibility.
use hist::canon;
use hist::canon::Value;
use hist::path::{DocPath, PathPattern, PatternSegment, Segment, is_bare_field_name};
use proptest::prelude::*;
use std::path::Path;

fn field(name: &str) -> Segment {
    Segment::Field(name.to_owned())
}

fn keyed(fields: &[(&str, Value)]) -> Segment {
    Segment::Keyed(
        fields
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone()))
            .collect(),
    )
}

fn parse(text: &str) -> DocPath {
    DocPath::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

// ---------------------------------------------------------------------------------------
// Table tests: canonical texts
// ---------------------------------------------------------------------------------------

/// Canonical texts and what they mean. Each must parse to these segments and print back
/// unchanged.
fn canonical_examples() -> Vec<(&'static str, Vec<Segment>)> {
    vec![
        ("", vec![]),
        ("/name", vec![field("name")]),
        ("/", vec![field("")]),
        ("//", vec![field(""), field("")]),
        ("/a/b/c", vec![field("a"), field("b"), field("c")]),
        // Escapes: RFC 6901 plus ~2 for '['.
        ("/a~1b", vec![field("a/b")]),
        ("/m~0n", vec![field("m~n")]),
        ("/x~2y", vec![field("x[y")]),
        ("/~0~1~2", vec![field("~/[")]),
        ("/~01", vec![field("~1")]),
        ("/~10", vec![field("/0")]),
        // Characters that stand for themselves in member names.
        (
            "/a]b=c,\"d\" é😂\u{1}\n*",
            vec![field("a]b=c,\"d\" é😂\u{1}\n*")],
        ),
        ("/ ", vec![field(" ")]),
        ("/0", vec![field("0")]),
        // Keyed elements: numbers and strings differ.
        ("[id=88]", vec![keyed(&[("id", json!(88))])]),
        ("[id=\"88\"]", vec![keyed(&[("id", json!("88"))])]),
        ("[id=\"sku-1\"]", vec![keyed(&[("id", json!("sku-1"))])]),
        (
            "/items[id=88]",
            vec![field("items"), keyed(&[("id", json!(88))])],
        ),
        (
            "/prefixes[ip_prefix=\"3.5.140.0/22\",service=\"EC2\"]",
            vec![
                field("prefixes"),
                keyed(&[
                    ("ip_prefix", json!("3.5.140.0/22")),
                    ("service", json!("EC2")),
                ]),
            ],
        ),
        // Field order is the rule's order, not sorted.
        (
            "[z=1,a=2]",
            vec![keyed(&[("z", json!(1)), ("a", json!(2))])],
        ),
        // Set elements.
        (
            "/tags[=\"red\"]",
            vec![field("tags"), Segment::Member(json!("red"))],
        ),
        (
            "[=1][=null]",
            vec![Segment::Member(json!(1)), Segment::Member(Value::Null)],
        ),
        // A document that is itself an array.
        (
            "[id=42]/status",
            vec![keyed(&[("id", json!(42))]), field("status")],
        ),
        // Nested.
        (
            "/items[id=88]/variants[sku=\"a\"]/price",
            vec![
                field("items"),
                keyed(&[("id", json!(88))]),
                field("variants"),
                keyed(&[("sku", json!("a"))]),
                field("price"),
            ],
        ),
        // Empty member after a selector.
        ("[id=1]/", vec![keyed(&[("id", json!(1))]), field("")]),
        // Every kind of JSON value.
        (
            "[a=null,b=true,c=false,d=-7,e=\"\",f=[],g={}]",
            vec![keyed(&[
                ("a", Value::Null),
                ("b", json!(true)),
                ("c", json!(false)),
                ("d", json!(-7)),
                ("e", json!("")),
                ("f", json!([])),
                ("g", json!({})),
            ])],
        ),
        // Values containing the path's own punctuation.
        (
            "[s=\"a]b,c=d\\\"e/f[g~0\"]",
            vec![keyed(&[("s", json!("a]b,c=d\"e/f[g~0"))])],
        ),
        (
            "[k=[1,\"]\",{\"a\":\"[x=1]\",\"b\":[[]]}]]/x",
            vec![
                keyed(&[("k", json!([1, "]", {"a": "[x=1]", "b": [[]]}]))]),
                field("x"),
            ],
        ),
        ("[=\"\\u0000\\n\"]", vec![Segment::Member(json!("\u{0}\n"))]),
        // Bare field names: letters, digits, _ - . $ @.
        (
            "[$ref=1,@type=2,a.b=3,x-y=4,_=5,123=6,ABCxyz=7]",
            vec![keyed(&[
                ("$ref", json!(1)),
                ("@type", json!(2)),
                ("a.b", json!(3)),
                ("x-y", json!(4)),
                ("_", json!(5)),
                ("123", json!(6)),
                ("ABCxyz", json!(7)),
            ])],
        ),
        // Quoted field names.
        (
            "[\"weird=name\"=\"x\"]",
            vec![keyed(&[("weird=name", json!("x"))])],
        ),
        ("[\"\"=1]", vec![keyed(&[("", json!(1))])]),
        ("[\"a b\"=1]", vec![keyed(&[("a b", json!(1))])]),
        ("[\"é\"=1]", vec![keyed(&[("é", json!(1))])]),
        ("[\"*\"=1]", vec![keyed(&[("*", json!(1))])]),
        (
            "[\"\\\"]\"=1,\"a,b\"=2,\"[\"=3]",
            vec![keyed(&[
                ("\"]", json!(1)),
                ("a,b", json!(2)),
                ("[", json!(3)),
            ])],
        ),
    ]
}

#[test]
fn canonical_examples_parse_and_print_back() {
    for (text, segs) in canonical_examples() {
        let path = parse(text);
        assert_eq!(path.segments(), segs.as_slice(), "segments of {text:?}");
        assert_eq!(path.to_string(), text, "printing {text:?}");
        assert_eq!(DocPath::from_segments(segs).to_string(), text);
        assert_eq!(text.parse::<DocPath>().as_ref(), Ok(&path));
    }
}

#[test]
fn number_and_string_keys_are_different_elements() {
    assert_ne!(parse("[id=88]"), parse("[id=\"88\"]"));
    assert_ne!(parse("[=true]"), parse("[=\"true\"]"));
    assert_ne!(parse("[=null]"), parse("[id=null]"));
}

/// Accepted texts that are not canonical, and their canonical form.
#[test]
fn non_canonical_texts_print_canonically() {
    let cases = [
        ("[ id = 88 ]", "[id=88]"),
        ("[\tid=88\r\n]", "[id=88]"),
        ("[ip=1 , b=2]", "[ip=1,b=2]"),
        ("[= \"red\" ]", "[=\"red\"]"),
        ("[\"id\"=88]", "[id=88]"),
        ("[\"\\u0069d\"=88]", "[id=88]"),
        ("[k={\"b\":1, \"a\":[ 2 ]}]", "[k={\"a\":[2],\"b\":1}]"),
        ("[s=\"\\/\"]", "[s=\"/\"]"),
        ("[s=\"\\u00e9\"]", "[s=\"é\"]"),
        ("[\"a\\u0020b\"=1]", "[\"a b\"=1]"),
    ];
    for (text, canonical) in cases {
        let path = parse(text);
        assert_eq!(path.to_string(), canonical, "canonical form of {text:?}");
        assert_eq!(parse(canonical), path);
    }
}

/// Values are read and normalized by `canon`; the path prints canonical numbers. This
/// test asks canon what the canonical form is, so it holds for the stub canon (which keeps
/// `1.0`) and for the real one (which writes `1`).
#[test]
fn numbers_are_normalized_by_canon() {
    for number in [
        "1.0",
        "1e2",
        "-0",
        "0.50",
        "123456789012345678901234567890",
        "1E+30",
    ] {
        let value = canon::parse_str(number).expect("a JSON number");
        let path = parse(&format!("[id={number}]"));
        assert_eq!(path.segments(), [keyed(&[("id", value.clone())])]);
        assert_eq!(
            path.to_string(),
            format!("[id={}]", canon::to_canonical_string(&value))
        );
        assert_eq!(parse(&path.to_string()), path);
    }
}

#[test]
fn segments_display_on_their_own() {
    assert_eq!(field("a/b").to_string(), "/a~1b");
    assert_eq!(keyed(&[("a b", json!(1))]).to_string(), "[\"a b\"=1]");
    assert_eq!(Segment::Member(json!("x")).to_string(), "[=\"x\"]");
    assert_eq!(PatternSegment::AnyElement.to_string(), "[*]");
    assert_eq!(PatternSegment::Field("[".into()).to_string(), "/~2");
    assert!(keyed(&[("id", json!(1))]).is_element());
    assert!(Segment::Member(json!(1)).is_element());
    assert!(!field("id").is_element());
}

#[test]
fn bare_field_names() {
    for name in ["id", "ID_2", "a.b", "x-y", "$ref", "@type", "0", "-", "."] {
        assert!(is_bare_field_name(name), "{name:?} is bare");
    }
    for name in [
        "", "a b", "a=b", "é", "a\"", "a,b", "[", "]", "*", "/", "~", "a\n",
    ] {
        assert!(!is_bare_field_name(name), "{name:?} is quoted");
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// (text, byte offset, part of the message)
const BAD_PATHS: &[(&str, usize, &str)] = &[
    ("a", 0, "starts with '/'"),
    ("items", 0, "did you mean \"/items\"?"),
    (" /a", 0, "starts with '/'"),
    ("x[id=1]", 0, "starts with '/'"),
    (
        "/a~3",
        2,
        "unknown escape '~3'; use ~0 for '~', ~1 for '/', ~2 for '['",
    ),
    ("/a~", 2, "'~' must be followed by 0, 1 or 2"),
    ("/a~~0", 2, "'~' must be followed by 0, 1 or 2"),
    ("/é~x", 3, "unknown escape '~x'"),
    ("/a[", 3, "unterminated selector"),
    ("/a[ ", 4, "unterminated selector"),
    ("/a[]", 3, "empty selector"),
    ("/a[*]", 3, "rule pattern"),
    ("/a[id]", 5, "expected '=' after the field name"),
    ("/a[id 1]", 6, "expected '=' after the field name"),
    ("/a[0]", 4, "named by content, not position"),
    ("/a[we!rd=1]", 5, "written as a JSON string"),
    ("/a[=]", 4, "expected a JSON value after '='"),
    ("/a[id=]", 6, "expected a JSON value after '='"),
    ("/a[id=", 6, "expected a JSON value after '='"),
    ("/a[id=abc]", 6, "write a string in double quotes: \"abc\""),
    ("/a[id='x']", 6, "double quotes"),
    ("/a[id=01]", 6, "not valid JSON"),
    ("/a[id=1.]", 6, "not valid JSON"),
    ("/a[id=tru]", 6, "not JSON"),
    ("/a[id=\"x]", 6, "unterminated string"),
    ("/a[id=\"x\\\"]", 6, "unterminated string"),
    ("/a[id=\"\u{1}\"]", 6, "not valid JSON"),
    ("/a[id=\"\\q\"]", 6, "not valid JSON"),
    ("/a[id=[1,2]", 11, "expected ',' or ']' after the value"),
    ("/a[id=[1,2", 6, "unterminated JSON array or object"),
    ("/a[id={\"a\":1]", 6, "not valid JSON"),
    ("/a[id={\"a\":1", 6, "unterminated JSON array or object"),
    ("/a[id=[1}]", 6, "not valid JSON"),
    ("/a[id=1", 7, "expected ',' or ']' after the value"),
    ("/a[id=1 2]", 8, "expected ',' or ']' after the value"),
    ("/a[id=1,]", 8, "expected a field name after ','"),
    ("/a[id=1,,b=2]", 8, "expected a field name"),
    ("/a[id=1,id=2]", 8, "the field \"id\" appears twice"),
    ("/a[\"id\"=1,id=2]", 10, "appears twice"),
    ("/a[=1,2]", 5, "exactly one value"),
    ("/a[=1", 5, "expected ']'"),
    ("/a[\"x\\q\"=1]", 3, "not a valid JSON string"),
    ("/a[\"x=1]", 3, "unterminated string"),
    (
        "/a[id=1]b",
        8,
        "expected '/', '[' or the end of the path after ']'",
    ),
    ("[id=1] ", 6, "expected '/', '[' or the end"),
    ("[=1]]", 4, "expected '/', '[' or the end"),
];

#[test]
fn bad_paths_say_where_and_what() {
    for &(text, offset, message) in BAD_PATHS {
        let err = DocPath::parse(text).expect_err(text);
        assert_eq!(err.text, text);
        assert!(
            err.message.contains(message),
            "{text:?}: message {:?} should contain {message:?}",
            err.message
        );
        assert_eq!(err.offset, offset, "{text:?}: offset ({})", err.message);
        let shown = err.to_string();
        assert!(shown.contains(&format!("at byte {offset}")), "{shown}");
        assert!(shown.contains(&err.message), "{shown}");
    }
}

#[test]
fn segments_without_text_form_do_not_round_trip() {
    // Documented in the module: these print, but the text is refused.
    let empty = DocPath::from_segments(vec![Segment::Keyed(vec![])]);
    assert_eq!(empty.to_string(), "[]");
    assert!(DocPath::parse(&empty.to_string()).is_err());
    let twice = DocPath::from_segments(vec![keyed(&[("id", json!(1)), ("id", json!(2))])]);
    assert!(DocPath::parse(&twice.to_string()).is_err());
}

// ---------------------------------------------------------------------------------------
// Path helpers
// ---------------------------------------------------------------------------------------

#[test]
fn ancestors_parent_and_prefixes() {
    let path = parse("/a[id=1]/b");
    let ancestors: Vec<String> = path.ancestors().iter().map(ToString::to_string).collect();
    assert_eq!(ancestors, ["", "/a", "/a[id=1]"]);
    assert!(DocPath::root().ancestors().is_empty());
    assert_eq!(parse("/a").ancestors(), [DocPath::root()]);
    assert_eq!(path.parent(), Some(parse("/a[id=1]")));
    assert_eq!(DocPath::root().parent(), None);
    for ancestor in path.ancestors() {
        assert!(path.starts_with(&ancestor));
        assert_ne!(ancestor, path);
    }
    assert_eq!(
        path.strip_prefix(&parse("/a")),
        Some([keyed(&[("id", json!(1))]), field("b")].as_slice())
    );
    assert_eq!(path.strip_prefix(&parse("/b")), None);

    let mut built = DocPath::root();
    assert!(built.is_root());
    built.push(field("a"));
    let built = built.child(keyed(&[("id", json!(1))])).child(field("b"));
    assert_eq!(built, path);
    assert_eq!(built.last(), Some(&field("b")));
}

// ---------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------

#[test]
fn patterns_parse_print_and_match() {
    let cases: &[(&str, &[PatternSegment])] = &[
        ("", &[]),
        ("[*]", &[PatternSegment::AnyElement]),
        (
            "/items[*]/variants",
            &[
                PatternSegment::Field(String::new()),
                PatternSegment::AnyElement,
                PatternSegment::Field(String::new()),
            ],
        ),
        (
            "/a~1b[*][*]/~0~2",
            &[
                PatternSegment::Field(String::new()),
                PatternSegment::AnyElement,
                PatternSegment::AnyElement,
                PatternSegment::Field(String::new()),
            ],
        ),
        ("/", &[PatternSegment::Field(String::new())]),
    ];
    for (text, shape) in cases {
        let pattern = PathPattern::parse(text).expect(text);
        assert_eq!(pattern.to_string(), *text);
        assert_eq!(pattern.segments().len(), shape.len());
        for (got, want) in pattern.segments().iter().zip(shape.iter()) {
            assert_eq!(
                matches!(got, PatternSegment::AnyElement),
                matches!(want, PatternSegment::AnyElement)
            );
        }
        assert_eq!(text.parse::<PathPattern>().as_ref(), Ok(&pattern));
    }
    let pattern = PathPattern::parse("/a~1b[*][*]/~0~2").expect("parses");
    assert_eq!(
        pattern.segments(),
        [
            PatternSegment::Field("a/b".into()),
            PatternSegment::AnyElement,
            PatternSegment::AnyElement,
            PatternSegment::Field("~[".into()),
        ]
    );
    assert_eq!(
        PathPattern::parse("[ * ]").map(|p| p.to_string()),
        Ok("[*]".into())
    );
    assert!(PathPattern::parse("").expect("root").is_root());
    assert_eq!(PathPattern::root(), PathPattern::from_segments(vec![]));

    let items = PathPattern::parse("/items[*]/variants").expect("parses");
    assert!(items.matches(&parse("/items[id=88]/variants")));
    assert!(items.matches(&parse("/items[=\"x\"]/variants")));
    assert!(!items.matches(&parse("/items[id=88]/variants[sku=\"a\"]")));
    assert!(!items.matches(&parse("/items[id=88]")));
    assert!(!items.matches(&parse("/items/x/variants")));
    assert!(!items.matches(&parse("/other[id=1]/variants")));
    assert!(items.covers(&parse("/items[id=88]/variants")));
    assert!(items.covers(&parse("/items[id=88]/variants[sku=\"a\"]/price")));
    assert!(!items.covers(&parse("/items[id=88]")));

    let root = PathPattern::root();
    assert!(root.matches(&DocPath::root()));
    assert!(!root.matches(&parse("[id=1]")));
    assert!(root.covers(&parse("[id=1]")));
    let root_elements = PathPattern::parse("[*]").expect("parses");
    assert!(root_elements.matches(&parse("[id=42]")));
    assert!(!root_elements.matches(&parse("/id")));

    let path = parse("/a[id=1]/b[=2]");
    assert_eq!(path.to_pattern().to_string(), "/a[*]/b[*]");
    assert!(path.to_pattern().matches(&path));
}

#[test]
fn bad_patterns_say_where_and_what() {
    let cases = [
        ("a", 0, "starts with '/'"),
        ("/a[id=1]", 3, "only with [*]"),
        ("/a[=\"red\"]", 3, "only with [*]"),
        ("/a[]", 3, "only with [*]"),
        ("/a[", 3, "only with [*]"),
        ("/a[*", 4, "expected ']' after '*'"),
        ("/a[**]", 4, "expected ']' after '*'"),
        ("/a[*]b", 5, "expected '/', '[' or the end"),
        ("/a~5", 2, "unknown escape '~5'"),
    ];
    for (text, offset, message) in cases {
        let err = PathPattern::parse(text).expect_err(text);
        assert!(
            err.message.contains(message),
            "{text:?}: {:?} should contain {message:?}",
            err.message
        );
        assert_eq!(err.offset, offset, "{text:?}: {}", err.message);
    }
}

// ---------------------------------------------------------------------------------------
// JSON Pointer (RFC 6901) compatibility
// ---------------------------------------------------------------------------------------

fn conformance_dir() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/json-pointer");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: ../shared/conformance not found");
        None
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// RFC 6901 section 4 decoding, the reference our member names must agree with.
fn rfc6901_names(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return vec![];
    }
    pointer[1..]
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect()
}

#[test]
fn rfc6901_examples_evaluate_as_member_paths() {
    let Some(dir) = conformance_dir() else {
        return;
    };
    let examples = read_json(&dir.join("rfc6901-examples.json"));
    let document = &examples["document"];
    let rows = examples["json_string_representation"]
        .as_array()
        .expect("json_string_representation is an array");
    let mut evaluated = 0;
    for row in rows {
        let pointer = row["pointer"].as_str().expect("pointer is a string");
        if pointer.contains('[') {
            continue; // `[` starts a selector in our syntax; JSON Pointer spells it raw.
        }
        let path = parse(pointer);
        let names: Vec<Segment> = rfc6901_names(pointer)
            .into_iter()
            .map(Segment::Field)
            .collect();
        assert_eq!(path.segments(), names.as_slice(), "names of {pointer:?}");
        assert_eq!(path.to_string(), pointer, "{pointer:?} prints back");

        // Walk object members only. Our syntax addresses array elements by content
        // ([id=..], [=..]), never by position, so a pointer that steps into an array
        // (`/foo/0`) has no equivalent here and is skipped.
        let mut current = document;
        let mut into_array = false;
        for seg in path.segments() {
            let Segment::Field(name) = seg else {
                unreachable!("a pointer without '[' parses to members only");
            };
            match current {
                Value::Object(members) => {
                    current = members
                        .get(name)
                        .unwrap_or_else(|| panic!("{pointer:?}: no member {name:?}"));
                }
                Value::Array(_) => {
                    into_array = true;
                    break;
                }
                other => panic!("{pointer:?} steps into the scalar {other}"),
            }
        }
        if into_array {
            continue;
        }
        assert_eq!(current, &row["expected"], "value at {pointer:?}");
        evaluated += 1;
    }
    assert_eq!(evaluated, rows.len() - 1, "only /foo/0 is skipped");
}

/// JSON Schema's `json-pointer` format tests: every valid pointer without `[` parses and
/// prints back unchanged; every invalid one is refused, except `/~2`, which is our `[`.
#[test]
fn json_schema_pointer_format_tests() {
    let Some(dir) = conformance_dir() else {
        return;
    };
    let suite = read_json(&dir.join("jsonschema-format-json-pointer.json"));
    let tests = suite[0]["tests"].as_array().expect("tests is an array");
    let mut checked = 0;
    for test in tests {
        let Some(pointer) = test["data"].as_str() else {
            continue; // Non-string data tests JSON Schema's format rule, not pointers.
        };
        let valid = test["valid"].as_bool().expect("valid is a boolean");
        let parsed = DocPath::parse(pointer);
        if pointer.contains("~2") {
            // Invalid in RFC 6901; `~2` is our escape for '['.
            assert_eq!(parsed.map(|p| p.to_string()), Ok(pointer.to_owned()));
        } else if valid {
            let path = parsed.unwrap_or_else(|e| panic!("{pointer:?}: {e}"));
            assert_eq!(path.to_string(), pointer);
            let names: Vec<Segment> = rfc6901_names(pointer)
                .into_iter()
                .map(Segment::Field)
                .collect();
            assert_eq!(path.segments(), names.as_slice());
        } else {
            assert!(parsed.is_err(), "{pointer:?} should be refused");
        }
        checked += 1;
    }
    assert_eq!(checked, 34);
}

// ---------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------

/// Characters that mean something in the path syntax or in JSON, plus anything at all.
fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::sample::select(vec![
            '/', '~', '[', ']', '=', '"', ',', '*', '\\', '{', '}', ':', ' ', '\t', '\n', '\r',
            '\u{0}', '\u{1f}', '\u{7f}', '0', '1', '2', 'a', 'Z', '_', '$', '@', '.', '-', 'é',
            '😂', '\u{2028}', '\u{feff}', '\u{fffd}',
        ]),
        1 => any::<char>(),
    ]
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..8).prop_map(String::from_iter)
}

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof!["[A-Za-z0-9_.$@-]{1,6}", hostile_string(),]
}

/// Numbers as text, read through canon so they are normalized the way paths are.
fn json_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        any::<u64>().prop_map(|i| i.to_string()),
        "-?[1-9][0-9]{15,40}",
        "-?(0|[1-9][0-9]{0,3})\\.[0-9]{0,2}[1-9]",
        Just("-0".to_owned()),
    ]
    .prop_map(|text| canon::parse_str(&text).expect("generated a JSON number"))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        hostile_string().prop_map(Value::String),
        json_number(),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((hostile_string(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        hostile_string().prop_map(Segment::Field),
        prop::collection::vec((field_name(), json_value()), 1..4).prop_map(|pairs| {
            let mut fields: Vec<(String, Value)> = Vec::new();
            for (name, value) in pairs {
                if !fields.iter().any(|(n, _)| *n == name) {
                    fields.push((name, value));
                }
            }
            Segment::Keyed(fields)
        }),
        json_value().prop_map(Segment::Member),
    ]
}

fn doc_path() -> impl Strategy<Value = DocPath> {
    prop::collection::vec(segment(), 0..6).prop_map(DocPath::from_segments)
}

fn pattern() -> impl Strategy<Value = PathPattern> {
    prop::collection::vec(
        prop_oneof![
            hostile_string().prop_map(PatternSegment::Field),
            Just(PatternSegment::AnyElement),
        ],
        0..6,
    )
    .prop_map(PathPattern::from_segments)
}

/// Text built from fragments of the syntax, to look for panics and unstable printing.
fn path_like_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        hostile_char().prop_map(String::from),
        prop::sample::select(vec![
            "/", "[", "]", "[id=", "[=", "[*]", "=", ",", "\"", "\\\"", "~0", "~1", "~2", "~", "1",
            "-0", "1.0", "null", "true", "[1,", "{\"a\":", "}", " ", "\"x\"",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn paths_round_trip(path in doc_path()) {
        let text = path.to_string();
        let parsed = DocPath::parse(&text);
        prop_assert_eq!(parsed.as_ref(), Ok(&path), "text {:?}", text);
        prop_assert_eq!(parsed.map(|p| p.to_string()), Ok(text));
        prop_assert!(path.to_pattern().matches(&path));
    }

    #[test]
    fn patterns_round_trip(pattern in pattern()) {
        let text = pattern.to_string();
        let parsed = PathPattern::parse(&text);
        prop_assert_eq!(parsed.as_ref(), Ok(&pattern), "text {:?}", text);
        prop_assert_eq!(parsed.map(|p| p.to_string()), Ok(text));
    }

    #[test]
    fn any_accepted_text_prints_stably(text in path_like_text()) {
        if let Ok(path) = DocPath::parse(&text) {
            let canonical = path.to_string();
            prop_assert_eq!(DocPath::parse(&canonical), Ok(path), "from {:?}", text);
        }
        if let Ok(pattern) = PathPattern::parse(&text) {
            let canonical = pattern.to_string();
            prop_assert_eq!(PathPattern::parse(&canonical), Ok(pattern));
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        if let Ok(path) = DocPath::parse(&text) {
            prop_assert_eq!(DocPath::parse(&path.to_string()), Ok(path));
        }
        let _ = PathPattern::parse(&text);
    }

    #[test]
    fn member_paths_are_json_pointers(names in prop::collection::vec(hostile_string(), 0..5)) {
        // With no '[' in the names, the text is exactly the RFC 6901 pointer.
        let names: Vec<String> = names.into_iter().map(|n| n.replace('[', "")).collect();
        let path = DocPath::from_segments(names.iter().cloned().map(Segment::Field).collect());
        let pointer: String = names
            .iter()
            .map(|n| format!("/{}", n.replace('~', "~0").replace('/', "~1")))
            .collect();
        prop_assert_eq!(path.to_string(), pointer.clone());
        prop_assert_eq!(rfc6901_names(&pointer), names);
    }
}
