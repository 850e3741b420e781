//! Diff then apply, as a property test (the same property and document generator as the
//! `diff_apply` fuzz target in `fuzz/`, so CI checks it without cargo-fuzz): for two
//! documents A and B canonicalized with the rules, applying `diff(A, B)` to A gives exactly B,
//! and undoing it newest first on B gives exactly A; also from and to an absent document.

use hist::canon::{Map, Value};
use hist::diff::{apply, canonicalize, diff};
use hist::path::PathPattern;
use hist::rules::{KeyRules, Rule, RuleKind};
use proptest::prelude::*;

/// Reads the fuzz input as a stream of choices.
pub(crate) struct Gen<'a> {
    pub(crate) data: &'a [u8],
}

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn name(&mut self) -> String {
        const NAMES: &[&str] = &[
            "a", "b", "id", "sku", "price", "items", "tags", "variants", "x/y", "~", "[", "é", "",
        ];
        NAMES[usize::from(self.byte()) % NAMES.len()].to_owned()
    }

    fn scalar(&mut self) -> Value {
        match self.byte() % 7 {
            0 => Value::Null,
            1 => Value::Bool(self.byte().is_multiple_of(2)),
            2 => Value::from(i64::from(self.byte() % 8)),
            3 => Value::from(f64::from(self.byte()) / 4.0),
            4 => Value::String(["", "a", "b", "red", "x]y"][usize::from(self.byte() % 5)].into()),
            5 => Value::from(u64::from(self.byte()) << 56),
            _ => Value::String(self.name()),
        }
    }

    fn element(&mut self, depth: u32) -> Value {
        // Mostly objects with an id (some without, some sharing one), as keyed arrays hold.
        match self.byte() % 4 {
            0 => self.value(depth),
            _ => {
                let mut m = Map::new();
                if !self.byte().is_multiple_of(5) {
                    m.insert("id".into(), Value::from(i64::from(self.byte() % 6)));
                }
                for _ in 0..self.byte() % 3 {
                    let name = self.name();
                    let v = if name == "variants" {
                        self.array(depth)
                    } else {
                        self.value(depth)
                    };
                    m.insert(name, v);
                }
                Value::Object(m)
            }
        }
    }

    fn array(&mut self, depth: u32) -> Value {
        let n = self.byte() % 5;
        Value::Array((0..n).map(|_| self.element(depth + 1)).collect())
    }

    pub(crate) fn value(&mut self, depth: u32) -> Value {
        if depth > 4 {
            return self.scalar();
        }
        match self.byte() % 4 {
            0 | 1 => {
                let mut m = Map::new();
                for _ in 0..self.byte() % 5 {
                    let name = self.name();
                    let v = match name.as_str() {
                        "items" | "variants" => self.array(depth + 1),
                        "tags" => {
                            Value::Array((0..self.byte() % 5).map(|_| self.scalar()).collect())
                        }
                        _ => self.value(depth + 1),
                    };
                    m.insert(name, v);
                }
                Value::Object(m)
            }
            2 => self.array(depth),
            _ => self.scalar(),
        }
    }
}

fn rules() -> KeyRules {
    let rule = |id, pattern: &str, kind| Rule {
        id,
        tx: 1,
        pattern: PathPattern::parse(pattern).expect("pattern"),
        keys: None,
        kind,
    };
    let rules = [
        rule(1, "/items", RuleKind::ArrayKey(vec!["id".into()])),
        rule(2, "/tags", RuleKind::Set),
        rule(3, "", RuleKind::ArrayKey(vec!["id".into()])),
        rule(
            4,
            "/items[*]/variants",
            RuleKind::ArrayKey(vec!["sku".into(), "id".into()]),
        ),
        rule(5, "/a/tags", RuleKind::Set),
    ];
    KeyRules::for_key(rules.iter(), "doc")
}

fn check(a: Option<&Value>, b: Option<&Value>, rules: &KeyRules) {
    let d = diff(a, b, rules);
    let mut doc = a.cloned();
    for change in &d.changes {
        apply(&mut doc, change).unwrap_or_else(|e| {
            panic!("applying {change:?} to {doc:?} failed: {e}\nA = {a:?}\nB = {b:?}")
        });
    }
    assert_eq!(
        doc.as_ref(),
        b,
        "diff then apply\nA = {a:?}\nchanges = {:?}",
        d.changes
    );
    let mut doc = b.cloned();
    for change in d.changes.iter().rev() {
        apply(&mut doc, &change.inverse()).unwrap_or_else(|e| {
            panic!("undoing {change:?} on {doc:?} failed: {e}\nA = {a:?}\nB = {b:?}")
        });
    }
    assert_eq!(
        doc.as_ref(),
        a,
        "inverse replay\nB = {b:?}\nchanges = {:?}",
        d.changes
    );
}

fn run(data: &[u8]) {
    let mut g = Gen { data };
    let rules = rules();
    let mut warnings = Vec::new();
    // Documents as the store holds them: canonical numbers (`4.0` is `4`), so that an
    // element equal to another in canonical form is equal as a value too.
    let stored = |v: Value| {
        hist::canon::parse_str(&hist::canon::to_canonical_string(&v)).expect("canonical text")
    };
    let mut a = stored(g.value(0));
    let mut b = stored(g.value(0));
    canonicalize(&mut a, &rules, &mut warnings);
    canonicalize(&mut b, &rules, &mut warnings);
    check(Some(&a), Some(&b), &rules);
    check(None, Some(&b), &rules);
    check(Some(&a), None, &rules);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn diff_then_apply_gives_the_new_document(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        run(&data);
    }
}

/// Inputs the fuzzer found, kept as regression tests.
#[test]
fn fuzz_regressions() {
    for data in FUZZ_REGRESSIONS {
        run(data);
    }
}

const FUZZ_REGRESSIONS: &[&[u8]] = &[
    // A set holding 4 in one version and 4.0 in the next (generated numbers were not
    // canonical).
    &[
        108, 76, 240, 107, 212, 28, 0, 132, 199, 8, 12, 25, 0, 48, 17, 34, 28, 27, 8, 72, 75, 150,
        63, 4, 0, 232, 21, 1, 0, 60, 0, 125, 6, 0, 3, 92, 126, 157, 0, 22, 0, 57, 16, 0, 79, 0,
        161, 8, 3, 1, 0, 0, 130, 166, 57, 41, 0, 80, 0, 11, 7, 34, 83, 7, 201, 126, 192, 16,
    ],
];

/// A document with a keyed array long enough for binary searches (`/items` by `id`, with
/// composite-keyed `variants`) and a set.
fn long_doc() -> impl Strategy<Value = Value> {
    let item = (
        0u32..400,
        0u8..4,
        prop::collection::btree_set(0u8..30, 0..20),
    )
        .prop_map(|(id, price, variants)| {
            let variants: Vec<serde_json::Value> = variants
                .into_iter()
                .map(|v| serde_json::json!({"sku": format!("s{}", v % 7), "id": v, "n": v % 3}))
                .collect();
            json!({"id": id, "price": price, "variants": variants})
        });
    (
        prop::collection::vec(item, 0..60),
        prop::collection::btree_set("[a-e]", 0..25),
    )
        .prop_map(|(items, tags)| {
            let mut seen = std::collections::BTreeSet::new();
            let items: Vec<Value> = items
                .into_iter()
                .filter(|i| seen.insert(i["id"].as_u64()))
                .collect();
            let tags: Vec<Value> = tags.into_iter().map(Value::from).collect();
            Value::from_iter([("items", Value::from(items)), ("tags", Value::from(tags))])
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The JSON Patch export of a diff, applied by an independent RFC 6902 implementation
    /// (the json-patch crate), turns A into B: positional pointers stay right in arrays
    /// long enough to be searched by halves.
    #[test]
    fn json_patch_of_long_arrays_turns_a_into_b(a in long_doc(), b in long_doc()) {
        let rules = rules();
        let mut warnings = Vec::new();
        let (mut a, mut b) = (a, b);
        canonicalize(&mut a, &rules, &mut warnings);
        canonicalize(&mut b, &rules, &mut warnings);
        let d = diff(Some(&a), Some(&b), &rules);
        let patch = hist::diff::to_json_patch(Some(&a), &d.changes).unwrap();
        // The oracle reads them as JSON text: these documents' numbers fit its own.
        let oracle = |v: &Value| serde_json::from_str::<serde_json::Value>(&v.to_string()).unwrap();
        let patch: json_patch::Patch = serde_json::from_value(oracle(&Value::Array(patch))).unwrap();
        let mut doc = oracle(&a);
        json_patch::patch(&mut doc, &patch).unwrap();
        prop_assert_eq!(Value::from(doc), b);
    }
}
