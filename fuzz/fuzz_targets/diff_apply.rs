//! Diff then apply: for two documents A and B (built from the fuzz input, shaped like the
//! documents hist stores: objects, keyed arrays under `/items`, sets under `/tags`, a keyed
//! root array, opaque arrays, scalars), canonicalized with the rules,
//! - applying `diff(A, B)` to A gives exactly B (what `fsck` checks when it replays), and
//! - applying the inverse changes, newest first, to B gives exactly A (what an as-of read
//!   does when it walks backwards),
//! and the same from and to an absent document.
#![no_main]

use hist::canon::{Map, Value};
use hist::diff::{apply, canonicalize, diff};
use hist::path::PathPattern;
use hist::rules::{KeyRules, Rule, RuleKind};
use libfuzzer_sys::fuzz_target;

/// Reads the fuzz input as a stream of choices.
struct Gen<'a> {
    data: &'a [u8],
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

    fn value(&mut self, depth: u32) -> Value {
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
                        "tags" => Value::Array(
                            (0..self.byte() % 5).map(|_| self.scalar()).collect(),
                        ),
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
    assert_eq!(doc.as_ref(), b, "diff then apply\nA = {a:?}\nchanges = {:?}", d.changes);
    let mut doc = b.cloned();
    for change in d.changes.iter().rev() {
        apply(&mut doc, &change.inverse()).unwrap_or_else(|e| {
            panic!("undoing {change:?} on {doc:?} failed: {e}\nA = {a:?}\nB = {b:?}")
        });
    }
    assert_eq!(doc.as_ref(), a, "inverse replay\nB = {b:?}\nchanges = {:?}", d.changes);
}

fuzz_target!(|data: &[u8]| {
    let mut g = Gen { data };
    let rules = rules();
    let mut warnings = Vec::new();
    let mut a = g.value(0);
    let mut b = g.value(0);
    canonicalize(&mut a, &rules, &mut warnings);
    canonicalize(&mut b, &rules, &mut warnings);
    check(Some(&a), Some(&b), &rules);
    check(None, Some(&b), &rules);
    check(Some(&a), None, &rules);
});
