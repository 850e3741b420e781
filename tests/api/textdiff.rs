//! The text functions against their oracle, the `Value` functions of `diff`: on random
//! documents and random rules, `diff::canonical_text` (one streaming pass over any JSON
//! text) gives the text and warnings of `canonicalize`, and `textdiff::diff_text` gives
//! exactly the `Diff` of `diff` (old versions derived from new ones by random edits, fully
//! random pairs, old versions canonicalized with other rules, raw unsorted texts).
//! Malformed texts are refused, never a panic.

use hist::canon;
use hist::canon::{Map, Value};
use hist::diff::{Diff, canonical_text, canonicalize, diff};
use hist::path::PathPattern;
use hist::rules::{KeyRules, Rule, RuleKind};
use hist::textdiff::diff_text;
use proptest::prelude::*;

/// Member names: escapes, a name above U+FFFF and names in U+E000..=U+FFFF (where UTF-16
/// order and byte order differ), and the names the rules use.
const NAMES: &[&str] = &[
    "a",
    "b",
    "id",
    "sku",
    "k\"",
    "items",
    "tags",
    "variants",
    "m",
    "sub",
    "x/y",
    "\\",
    "\n",
    "\u{1}",
    "é",
    "",
    "\u{e000}",
    "\u{ffff}",
    "\u{1f600}",
    "\u{10000}a",
    "ab",
    "\u{7f}",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "1.5",
    "0.25",
    "1e+30",
    "1e-7",
    "12345678901234567890123",
    "-12345678901234567890123",
    "0.1",
    "72057594037927936",
    "5e-324",
];

const STRINGS: &[&str] = &[
    "",
    "a",
    "red",
    "1",
    "x]y",
    "\"q\"",
    "tab\t",
    "\u{0}",
    "\u{1f600}",
    "\u{e000}",
    "\u{ffff}",
    "back\\slash",
    "é",
];

/// Reads the proptest input as a stream of choices, then (once it runs out) a fixed
/// pseudo-random stream, so that short inputs still give varied documents.
struct Gen<'a> {
    data: &'a [u8],
    state: u32,
}

impl<'a> Gen<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            state: 0x9E37_79B9,
        }
    }

    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => {
                self.state ^= self.state << 13;
                self.state ^= self.state >> 17;
                self.state ^= self.state << 5;
                self.state.to_le_bytes()[1]
            }
        }
    }

    fn pick<'s>(&mut self, list: &[&'s str]) -> &'s str {
        list[usize::from(self.byte()) % list.len()]
    }

    fn name(&mut self) -> String {
        self.pick(NAMES).to_owned()
    }

    fn number(&mut self) -> Value {
        canon::parse_str(self.pick(NUMBERS)).unwrap()
    }

    fn scalar(&mut self) -> Value {
        match self.byte() % 7 {
            0 => Value::Null,
            1 => Value::Bool(self.byte().is_multiple_of(2)),
            2 => Value::from(i64::from(self.byte() % 6)),
            3 => Value::String((self.byte() % 6).to_string()),
            4 => self.number(),
            5 => Value::String(self.pick(STRINGS).to_owned()),
            _ => Value::String(self.name()),
        }
    }

    /// A key value: mostly small numbers, sometimes the same as a string, a float, null, an
    /// array (which a set rule may reorder) or an object.
    fn key(&mut self) -> Value {
        match self.byte() % 12 {
            0..=6 => Value::from(i64::from(self.byte() % 32)),
            7 | 8 => Value::String((self.byte() % 32).to_string()),
            9 => match self.byte() % 3 {
                0 => Value::Null,
                1 => json!([self.byte() % 3, self.byte() % 3]),
                _ => json!({"a": self.byte() % 3}),
            },
            _ => self.number(),
        }
    }

    /// An array element: mostly objects keyed by `id` and `sku` (some missing, some shared).
    fn element(&mut self, depth: u32) -> Value {
        match self.byte() % 5 {
            0 => self.value(depth),
            _ => {
                let mut m = Map::new();
                if !self.byte().is_multiple_of(16) {
                    m.insert("id".into(), self.key());
                }
                for field in ["sku", "k\"", "\u{1f600}"] {
                    if !self.byte().is_multiple_of(2) {
                        m.insert(field.into(), self.key());
                    }
                }
                for _ in 0..self.byte() % 3 {
                    let name = self.name();
                    let v = self.member(&name, depth);
                    m.insert(name, v);
                }
                Value::Object(m)
            }
        }
    }

    fn array(&mut self, depth: u32) -> Value {
        let n = self.byte() % 6;
        Value::Array((0..n).map(|_| self.element(depth + 1)).collect())
    }

    /// The value of a member: the names the rules use hold arrays.
    fn member(&mut self, name: &str, depth: u32) -> Value {
        if depth > 3 {
            return self.scalar();
        }
        match name {
            "items" | "variants" | "sub" | "a" | "\u{1f600}" | "\u{e000}" => {
                if self.byte().is_multiple_of(4) {
                    self.value(depth + 1)
                } else {
                    self.array(depth + 1)
                }
            }
            "tags" => Value::Array((0..self.byte() % 6).map(|_| self.scalar()).collect()),
            "m" => Value::Array(
                (0..self.byte() % 4)
                    .map(|_| match self.byte() % 3 {
                        0 => self.element(depth + 1),
                        _ => Value::Array((0..self.byte() % 4).map(|_| self.scalar()).collect()),
                    })
                    .collect(),
            ),
            _ => self.value(depth + 1),
        }
    }

    /// A document: often a feed (`items` holding keyed records) or a root array.
    fn document(&mut self) -> Value {
        match self.byte() % 4 {
            0 | 1 => {
                let n = 2 + self.byte() % 10;
                let items = (0..n).map(|_| self.element(1)).collect();
                let mut m = Map::new();
                m.insert("items".into(), Value::Array(items));
                for _ in 0..self.byte() % 3 {
                    let name = self.name();
                    let v = self.member(&name, 0);
                    m.insert(name, v);
                }
                Value::Object(m)
            }
            2 => Value::Array((0..self.byte() % 10).map(|_| self.element(1)).collect()),
            _ => self.value(0),
        }
    }

    fn value(&mut self, depth: u32) -> Value {
        if depth > 3 {
            return self.scalar();
        }
        match self.byte() % 5 {
            0..=2 => {
                let mut m = Map::new();
                for _ in 0..self.byte() % 6 {
                    let name = self.name();
                    let v = self.member(&name, depth);
                    m.insert(name, v);
                }
                Value::Object(m)
            }
            3 => self.array(depth),
            _ => self.scalar(),
        }
    }

    /// A new version of `v`: mostly the same, with small random edits (a changed scalar, a
    /// type change such as 1 to "1", inserted, removed, duplicated or reordered elements,
    /// added and removed members).
    fn edit(&mut self, v: &Value, depth: u32) -> Value {
        match self.byte() % 16 {
            0..=11 => {}
            12 | 13 => return v.clone(),
            14 => return self.value(depth),
            _ => return self.scalar(),
        }
        match v {
            Value::Object(map) => {
                let mut out = Map::new();
                for (name, child) in map {
                    match self.byte() % 8 {
                        0..=4 => {
                            out.insert(name.clone(), self.edit(child, depth + 1));
                        }
                        5 => {}
                        6 => {
                            out.insert(name.clone(), child.clone());
                        }
                        _ => {
                            out.insert(name.clone(), child.clone());
                            let name = self.name();
                            let v = self.member(&name, depth);
                            out.insert(name, v);
                        }
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    match self.byte() % 10 {
                        0..=4 => out.push(self.edit(item, depth + 1)),
                        5 => {}
                        6 => {
                            out.push(item.clone());
                            out.push(self.edit(item, depth + 1));
                        }
                        7 => {
                            out.push(self.element(depth + 1));
                            out.push(item.clone());
                        }
                        _ => out.push(item.clone()),
                    }
                }
                match self.byte() % 6 {
                    1 => out.reverse(),
                    2 if !out.is_empty() => out.rotate_left(1),
                    _ => {}
                }
                Value::Array(out)
            }
            Value::Number(n) => match self.byte() % 3 {
                0 => Value::String(n.to_string()),
                1 => self.number(),
                _ => v.clone(),
            },
            _ => match self.byte() % 3 {
                0 => self.scalar(),
                _ => v.clone(),
            },
        }
    }

    /// Random rules from a pool (array keys, sets, `[*]` nesting, the root pattern, names
    /// with escapes and above U+FFFF), in a random order (the last one wins).
    fn rules(&mut self) -> KeyRules {
        let pool: Vec<(&str, RuleKind)> = vec![
            ("/items", key(&["id"])),
            ("/items", key(&["sku", "id"])),
            ("/tags", RuleKind::Set),
            ("", key(&["id"])),
            ("", RuleKind::Set),
            ("/items[*]/variants", key(&["sku", "id"])),
            ("/items[*]/tags", RuleKind::Set),
            ("/items[*]/id", RuleKind::Set),
            ("/a", key(&["k\""])),
            ("/\u{1f600}", key(&["\u{1f600}"])),
            ("/a/tags", RuleKind::Set),
            ("/items[*]/variants[*]/sub", key(&["id"])),
            ("/m[*]", RuleKind::Set),
            ("/m", key(&["id"])),
            ("/m", RuleKind::Set),
            ("/\u{e000}", key(&["id", "id"])),
            ("", key(&["sku"])),
            ("/items[*]/variants", RuleKind::Set),
            ("[*]/items", key(&["id"])),
            ("[*]/variants", key(&["id"])),
        ];
        let mask = u32::from_le_bytes([self.byte(), self.byte(), self.byte(), 0]);
        let start = usize::from(self.byte()) % pool.len();
        let chosen: Vec<(&str, RuleKind)> = (0..pool.len())
            .map(|i| (i + start) % pool.len())
            .filter(|i| mask & (1 << i) != 0)
            .filter_map(|i| pool.get(i).cloned())
            .collect();
        rules_of(&chosen)
    }
}

fn key(fields: &[&str]) -> RuleKind {
    RuleKind::ArrayKey(fields.iter().map(|f| (*f).to_owned()).collect())
}

/// A value as stored documents hold it: parsed from its canonical text.
fn normalized(v: &Value) -> Value {
    canon::parse_str(&canon::to_canonical_string(v)).unwrap()
}

/// The oracle's canonical form and warnings.
fn oracle_canonical(v: &Value, rules: &KeyRules) -> (Value, Vec<String>) {
    let mut v = v.clone();
    let mut warnings = Vec::new();
    canonicalize(&mut v, rules, &mut warnings);
    (v, warnings)
}

/// `canonical_text` of `raw`, written canonically and written pretty (members in another
/// order, whitespace), gives the oracle's text, and the oracle's warnings (as a set: the
/// oracle visits elements in input order, the text function in canonical order); ordering
/// its own output again changes nothing.
fn check_canonicalize(raw: &Value, rules: &KeyRules) {
    let (expected, mut expected_warnings) = oracle_canonical(raw, rules);
    let expected = canon::to_canonical_string(&expected);
    expected_warnings.sort();
    for input in [
        canon::to_canonical_string(raw),
        canon::to_pretty_string(raw),
    ] {
        let mut warnings = vec!["before".to_owned()];
        let got = canonical_text(input.as_bytes(), rules, &mut warnings).unwrap();
        assert_eq!(got, expected, "canonical_text of {input}");
        assert_eq!(warnings.first().map(String::as_str), Some("before"));
        warnings.remove(0);
        warnings.sort();
        assert_eq!(warnings, expected_warnings, "warnings of {input}");
        let mut again = Vec::new();
        let twice = canonical_text(got.as_bytes(), rules, &mut again).unwrap();
        assert_eq!(twice, got, "ordering twice changes nothing: {input}");
        again.sort();
        assert_eq!(
            again, expected_warnings,
            "warnings the second time: {input}"
        );
    }
}

fn check_diff(old: Option<&Value>, new: Option<&Value>, rules: &KeyRules) -> Diff {
    let expected = diff(old, new, rules);
    let old_text = old.map(canon::to_canonical_string);
    let new_text = new.map(canon::to_canonical_string);
    let got = diff_text(old_text.as_deref(), new_text.as_deref(), rules).unwrap();
    assert_eq!(
        got, expected,
        "diff_text of\nold {old_text:?}\nnew {new_text:?}"
    );
    expected
}

/// Every proper prefix of a text that starts a container or a string is refused; a mutated
/// text never panics, and when it is accepted it is canonical JSON.
fn check_malformed(text: &str, other: &str, rules: &KeyRules, g: &mut Gen<'_>) {
    let must_fail = text.starts_with(['{', '[', '"']);
    // Every cut of a short text, about 60 spread over a long one.
    let step = (text.len() / 60).max(1);
    let cuts = (0..text.len()).filter(|&e| e % step == 0 || e + 8 > text.len());
    for end in cuts.filter(|&e| text.is_char_boundary(e)) {
        let prefix = &text[..end];
        let got = diff_text(Some(prefix), Some(other), rules);
        let canon_got = canonical_text(prefix.as_bytes(), rules, &mut Vec::new());
        if must_fail || end == 0 {
            assert!(got.is_err(), "prefix {prefix:?} accepted");
            assert!(canon_got.is_err(), "prefix {prefix:?} accepted");
        }
        assert!(diff_text(Some(other), Some(prefix), rules).is_err() == got.is_err());
    }
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..4 {
        if bytes.is_empty() {
            break;
        }
        let at = usize::from(g.byte()) * 7 % bytes.len();
        let b = b" \"\\,:[]{}0-.eEu1a\n\x01"[usize::from(g.byte()) % 19];
        match g.byte() % 3 {
            0 => bytes[at] = b,
            1 => bytes.insert(at, b),
            _ => {
                bytes.remove(at);
            }
        }
        let Ok(mutated) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let got = diff_text(Some(mutated), Some(other), rules);
        let canon_got = canonical_text(mutated.as_bytes(), rules, &mut Vec::new());
        assert_eq!(
            canon_got.is_ok(),
            canon::parse_str(mutated).is_ok(),
            "{mutated:?}"
        );
        let canonical = canon::parse_str(mutated)
            .map(|v| canon::to_canonical_string(&v) == mutated)
            .unwrap_or(false);
        assert_eq!(
            got.is_ok(),
            canonical,
            "accepted iff canonical: {mutated:?}"
        );
        if canonical {
            let old = canon::parse_str(mutated).unwrap();
            let new = canon::parse_str(other).unwrap();
            assert_eq!(got.unwrap(), diff(Some(&old), Some(&new), rules));
        }
    }
}

/// One case: two sets of rules, an old document, and a new one that is either an edited
/// copy of the old one or (one time in four) another random document. Each part reads its
/// own input, so that a large document does not leave the edits without choices.
fn run(rules: &[u8], doc: &[u8], edits: &[u8]) {
    let mut g = Gen::new(rules);
    let rules_a = g.rules();
    let rules_b = g.rules();
    let old_raw = normalized(&Gen::new(doc).document());
    let mut g = Gen::new(edits);
    let new_raw = if g.byte().is_multiple_of(4) {
        normalized(&g.document())
    } else {
        normalized(&g.edit(&old_raw, 0))
    };

    check_canonicalize(&old_raw, &rules_a);
    check_canonicalize(&new_raw, &rules_a);
    check_canonicalize(&old_raw, &rules_b);

    let (old_a, _) = oracle_canonical(&old_raw, &rules_a);
    let (new_a, _) = oracle_canonical(&new_raw, &rules_a);
    let (old_b, _) = oracle_canonical(&old_raw, &rules_b);
    check_diff(Some(&old_a), Some(&new_a), &rules_a);
    check_diff(Some(&old_b), Some(&new_a), &rules_a);
    check_diff(Some(&new_a), Some(&old_b), &rules_a);
    check_diff(Some(&old_raw), Some(&new_raw), &rules_a);
    check_diff(Some(&old_raw), Some(&old_raw), &rules_a);
    check_diff(Some(&old_a), Some(&old_a), &rules_a);
    check_diff(None, Some(&new_a), &rules_a);
    check_diff(Some(&old_a), None, &rules_a);
    check_diff(None, None, &rules_a);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn text_functions_equal_the_value_functions(
        rules in proptest::collection::vec(any::<u8>(), 8),
        doc in proptest::collection::vec(any::<u8>(), 0..400),
        edits in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        run(&rules, &doc, &edits);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn malformed_text_is_refused_without_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut g = Gen::new(&data);
        let rules = g.rules();
        let (doc, _) = oracle_canonical(&normalized(&g.document()), &rules);
        let (other, _) = oracle_canonical(&normalized(&g.document()), &rules);
        let text = canon::to_canonical_string(&doc);
        let other = canon::to_canonical_string(&other);
        check_malformed(&text, &other, &rules, &mut g);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[ \\[\\]{}\":,0-9.eE+\\-a-z\\\\]{0,40}") {
        let rules = rules_all();
        let got = diff_text(Some(&text), Some("{}"), &rules);
        let canonical = canon::parse_str(&text)
            .map(|v| canon::to_canonical_string(&v) == text)
            .unwrap_or(false);
        prop_assert_eq!(got.is_ok(), canonical);
        prop_assert_eq!(
            canonical_text(text.as_bytes(), &rules, &mut Vec::new()).is_ok(),
            canon::parse_str(&text).is_ok()
        );
    }
}

/// Every rule of the pool, in order.
pub(crate) fn rules_all() -> KeyRules {
    Gen::new(&[0xFF, 0xFF, 0xFF, 0]).rules()
}

fn rules_of(list: &[(&str, RuleKind)]) -> KeyRules {
    let rules: Vec<Rule> = list
        .iter()
        .zip(1..)
        .map(|((pattern, kind), id)| Rule {
            id,
            tx: 1,
            pattern: PathPattern::parse(pattern).unwrap(),
            keys: None,
            kind: kind.clone(),
        })
        .collect();
    KeyRules::for_key(rules.iter(), "doc")
}

#[test]
fn members_are_visited_in_map_order_not_text_order() {
    // In the text "\u{1f600}" comes first (UTF-16 order); a Map visits "\u{e000}" first.
    let rules = rules_of(&[("/\u{e000}", key(&["id"])), ("/\u{1f600}", key(&["id"]))]);
    let doc = json!({"\u{e000}": [{"id": 1}, {"id": 1}], "\u{1f600}": [{"id": 2}, {"id": 2}]});
    check_canonicalize(&doc, &rules);
    let d = check_diff(Some(&doc), Some(&doc), &rules);
    assert_eq!(d.warnings.len(), 2);
    assert!(d.warnings[0].contains('\u{e000}'), "{:?}", d.warnings);
    let new = json!({"\u{e000}": 1, "\u{1f600}": 2, "\u{ffff}": 3, "\u{10000}": 4});
    let d = check_diff(Some(&json!({"\u{e001}": 0})), Some(&new), &rules);
    assert_eq!(d.changes.len(), 5);
}

#[test]
fn the_feed_case() {
    let rules = rules_of(&[("/items", key(&["id"]))]);
    let old = json!({"items": [{"id": 3, "p": 1}, {"id": 1, "p": 1}, {"id": 2, "p": 1}]});
    let new = json!({"items": [{"id": 4, "p": 1}, {"id": 2, "p": 2}, {"id": 1, "p": 1}]});
    let (old, _) = oracle_canonical(&old, &rules);
    let (new, _) = oracle_canonical(&new, &rules);
    let d = check_diff(Some(&old), Some(&new), &rules);
    assert_eq!(d.changes.len(), 3, "{:?}", d.changes);
    check_canonicalize(&old, &rules);
}

#[test]
fn non_canonical_text_is_refused() {
    let rules = rules_all();
    for text in [
        "",
        " {}",
        "{} ",
        "{ }",
        "[1, 2]",
        "{\"b\":1,\"a\":2}",
        "{\"a\":1,\"a\":2}",
        "{\"\u{e000}\":1,\"\u{1f600}\":2}",
        "-0",
        "1.0",
        "1E5",
        "1e400",
        "01",
        "1.",
        ".5",
        "+1",
        "\"\\u0041\"",
        "\"\\/\"",
        "\"\\u000A\"",
        "\"\\u000a\"",
        "\"\\u001F\"",
        "\"\\ud83d\\ude00\"",
        "\"\u{1}\"",
        "\"abc",
        "[1,]",
        "[,1]",
        "{\"a\"}",
        "{\"a\":}",
        "nul",
        "truex",
        "[1]]",
        "{\"a\":1}}",
        "]",
        "}",
    ] {
        assert!(diff_text(Some(text), None, &rules).is_err(), "{text:?}");
        assert!(diff_text(None, Some(text), &rules).is_err(), "{text:?}");
    }
    for text in [
        "{\"\u{1f600}\":1,\"\u{e000}\":2}",
        "\"\\u001f\\n\"",
        "1e+30",
        "-1.5",
        "{\"$serde_json::private::Number\":\"1\"}",
    ] {
        assert!(diff_text(Some(text), None, &rules).is_ok(), "{text:?}");
    }
}

#[test]
fn deep_nesting_is_refused_without_overflow() {
    let rules = rules_all();
    let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    assert!(canon::parse_str(&ok).is_ok());
    assert!(diff_text(Some(&ok), Some("1"), &rules).is_ok());
    let too_deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(canon::parse_str(&too_deep).is_err());
    assert!(canonical_text(too_deep.as_bytes(), &KeyRules::none(), &mut Vec::new()).is_err());
    assert!(canonical_text(too_deep.as_bytes(), &rules, &mut Vec::new()).is_err());
    assert!(diff_text(Some(&too_deep), Some(&too_deep), &KeyRules::none()).is_err());
    assert!(diff_text(Some(&too_deep), Some("1"), &rules).is_err());
    let huge = "[".repeat(1_000_000);
    assert!(diff_text(Some(&huge), Some("1"), &rules).is_err());
    let objects = "{\"a\":".repeat(1_000_000);
    assert!(canonical_text(objects.as_bytes(), &rules, &mut Vec::new()).is_err());
}

/// `Txn::put_json` records what `Txn::put` records for the same snapshot, and refuses text
/// that is not JSON without writing anything.
#[test]
fn put_json_records_what_put_records_and_refuses_invalid_json() {
    use hist::{Actor, PutOutcome, Repo, Timestamp, TxOptions};
    let snapshots = [
        json!({"items": [{"id": 2, "p": 1}, {"id": 1, "p": 2.5}], "n": "x"}),
        json!({"items": [{"id": 3, "p": 1}, {"id": 1, "p": 3}], "n": "x"}),
        json!({"items": [{"id": 3, "p": 1}, {"id": 1, "p": 3}], "n": "x"}),
    ];
    let actor = Actor::parse("test:text").unwrap();
    let record = |by_text: bool| {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "rules", Timestamp(1)))
            .unwrap();
        let items = hist::path::PathPattern::parse("/items").unwrap();
        txn.add_rule(
            &items,
            None,
            &hist::rules::RuleKind::ArrayKey(vec!["id".into()]),
        )
        .unwrap();
        txn.commit().unwrap();
        let mut outcomes = Vec::new();
        for (i, doc) in snapshots.iter().enumerate() {
            let opts = TxOptions::new(actor.clone(), "ingest", Timestamp(2 + i as i64));
            let mut txn = repo.begin(opts).unwrap();
            let outcome = if by_text {
                let text = canon::to_pretty_string(doc);
                txn.put_json("feed", text.as_bytes()).unwrap()
            } else {
                txn.put("feed", doc.clone()).unwrap()
            };
            let commit = txn.commit().unwrap();
            outcomes.push(match outcome {
                PutOutcome::Unchanged => None,
                PutOutcome::Changed(n) => {
                    assert_eq!(commit.changes.len(), n);
                    Some(commit.changes)
                }
            });
        }
        let current = repo.current("feed").unwrap();
        (outcomes, current, dir)
    };
    let (by_text, text_doc, dir) = record(true);
    let (by_value, value_doc, _) = record(false);
    assert_eq!(by_text, by_value);
    assert_eq!(text_doc, value_doc);
    assert_eq!(by_text[2], None, "the third snapshot repeats the second");

    let mut repo = Repo::open(dir.path()).unwrap();
    let before = repo.current("feed").unwrap();
    let opts = TxOptions::new(actor.clone(), "ingest", Timestamp(10));
    let mut txn = repo.begin(opts).unwrap();
    let err = txn
        .put_json("feed", b"{\n \"n\": 1,\n \"n\": 2}")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the snapshot of feed is not valid JSON: line 3, column 4: duplicate member name \"n\""
    );
    let err = txn.put_json("feed", b"{\"n\": [1}").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "the snapshot of feed is not valid JSON: line 1, column 9: expected `,` or `]`"
        ),
        "{err}"
    );
    drop(txn);
    assert_eq!(repo.current("feed").unwrap(), before);
}

/// A changed snapshot is written over the pages of the one it replaces: the database does
/// not keep a document's worth of free pages after each large write.
#[test]
fn a_changed_snapshot_reuses_the_pages_of_the_old_one() {
    use hist::{Actor, Repo, Timestamp, TxOptions};
    let dir = tempfile::tempdir().unwrap();
    Repo::init(dir.path()).unwrap();
    let actor = Actor::parse("test:pages").unwrap();
    let doc = |v: usize| {
        // Large enough (9 MB) that an upsert of the row left the old pages free.
        let items: Vec<serde_json::Value> = (0..200_000)
            .map(|i| serde_json::json!({"id": i, "name": format!("item {i} of version {v}")}))
            .collect();
        serde_json::to_vec(&serde_json::json!({ "items": items })).unwrap()
    };
    for v in 0..2 {
        // A process per snapshot, as `hist ingest` runs.
        let mut repo = Repo::open(dir.path()).unwrap();
        let opts = TxOptions::new(actor.clone(), "ingest", Timestamp(1 + v as i64));
        let mut txn = repo.begin(opts).unwrap();
        txn.put_json("feed", &doc(v)).unwrap();
        txn.commit().unwrap();
    }
    let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
    let free: i64 = db
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .unwrap();
    let page: i64 = db.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    let doc_len = doc(1).len() as i64;
    assert!(
        free * page < doc_len / 4,
        "{free} free pages of {page} bytes after writing a {doc_len}-byte document"
    );
}

/// Stored text is trusted only when its hash is the one recorded with it: altered text is a
/// corrupt store, reported, never a panic, whether or not the hash was altered to match.
#[test]
fn altered_stored_text_is_an_error_not_a_panic() {
    use hist::{Actor, Repo, Timestamp, TxOptions};
    let actor = Actor::parse("test:tamper").unwrap();
    for rehash in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "ingest", Timestamp(1)))
            .unwrap();
        txn.put_json("k", br#"{"a":[1,2],"b":{"c":"d"}}"#).unwrap();
        txn.commit().unwrap();
        let bad = r#"{"a":[1,2},"b":{"c":"d"]]"#;
        let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
        db.execute("UPDATE doc SET doc = ?1 WHERE key = 'k'", [bad])
            .unwrap();
        if rehash {
            let hash = blake3::hash(bad.as_bytes()).as_bytes().to_vec();
            db.execute("UPDATE doc SET hash = ?1 WHERE key = 'k'", [hash])
                .unwrap();
        }
        drop(db);
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "ingest", Timestamp(2)))
            .unwrap();
        let out = txn.put_json("k", br#"{"a":[1,3],"b":{"c":"e"}}"#);
        if !rehash {
            let err = out.unwrap_err().to_string();
            assert!(err.contains("malformed canonical JSON"), "{err}");
        }
    }
}
