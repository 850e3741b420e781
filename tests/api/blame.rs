//! Tests of `Repo::blame`: leaves, setters, subtrees, as-of, early stop, and a property
//! test against a naive oracle (replaying every version).
use hist::canon::Value;
use hist::path::{DocPath, Segment};
use hist::rules::RuleKind;
use hist::{Actor, Blame, BlameReads, Repo, Timestamp, TxOptions, When};
use proptest::prelude::*;

/// 2026-01-01T00:00:00Z
const T0: i64 = 1_767_225_600_000_000;

struct Fixture {
    _dir: tempfile::TempDir,
    repo: Repo,
    n: i64,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init(dir.path()).unwrap();
        Self {
            _dir: dir,
            repo,
            n: 0,
        }
    }

    fn opts(&mut self, actor: &str, reason: Option<&str>) -> TxOptions {
        self.n += 1;
        TxOptions::new(
            Actor::parse(actor).unwrap(),
            "write",
            Timestamp(T0 + self.n * 86_400_000_000),
        )
        .reason(reason.map(str::to_owned))
    }

    fn set(&mut self, path: &str, value: Value) {
        self.set_by("user:sam", path, value);
    }

    fn set_by(&mut self, actor: &str, path: &str, value: Value) {
        let opts = self.opts(actor, None);
        let mut txn = self.repo.begin(opts).unwrap();
        txn.set("k", &DocPath::parse(path).unwrap(), value).unwrap();
        txn.commit().unwrap();
    }

    fn rm(&mut self, path: &str) {
        let opts = self.opts("user:sam", None);
        let mut txn = self.repo.begin(opts).unwrap();
        txn.remove("k", &DocPath::parse(path).unwrap()).unwrap();
        txn.commit().unwrap();
    }

    fn put(&mut self, doc: Value) {
        let opts = self.opts("poller:acme", None);
        let mut txn = self.repo.begin(opts).unwrap();
        txn.put("k", doc).unwrap();
        txn.commit().unwrap();
    }

    fn rule(&mut self, pattern: &str, kind: RuleKind) {
        let opts = self.opts("user:sam", None);
        let mut txn = self.repo.begin(opts).unwrap();
        txn.add_rule(
            &hist::path::PathPattern::parse(pattern).unwrap(),
            None,
            &kind,
        )
        .unwrap();
        txn.commit().unwrap();
    }

    fn blame(&self) -> Blame {
        self.blame_at(None, None)
    }

    /// Blame, checked to be the same however the log is read: the whole newest-first
    /// stream, lookups by path from the start or after one row, or the default mix.
    fn blame_at(&self, when: Option<When>, path: Option<&str>) -> Blame {
        let path = path.map(|p| DocPath::parse(p).unwrap());
        let blame = self.repo.blame("k", when, path.as_ref()).unwrap();
        for reads in [
            BlameReads::StreamOnly,
            BlameReads::LookupAfter(0),
            BlameReads::LookupAfter(1),
        ] {
            let other = self
                .repo
                .blame_reading("k", when, path.as_ref(), reads)
                .unwrap();
            assert_eq!(other.leaves, blame.leaves, "read as {reads:?}");
            assert_eq!(other.value, blame.value);
        }
        blame
    }
}

/// `path -> (tx, change_path)` for every leaf.
fn summary(blame: &Blame) -> Vec<(String, i64, String)> {
    blame
        .leaves
        .iter()
        .map(|l| {
            let s = l.setter.as_ref().expect("every leaf is attributed");
            (l.path.to_string(), s.tx.id, s.change_path.to_string())
        })
        .collect()
}

fn row(path: &str, tx: i64, change_path: &str) -> (String, i64, String) {
    (path.to_owned(), tx, change_path.to_owned())
}

#[test]
fn each_leaf_gets_its_own_setter() {
    let mut f = Fixture::new();
    f.set(
        "",
        json!({"plan": "starter", "email": "a@example.com", "billing": {"seats": 3}}),
    );
    f.set("/plan", json!("pro"));
    f.set_by("user:maria", "/plan", json!("team"));
    f.set("/billing/cycle", json!("yearly"));
    let blame = f.blame();
    assert_eq!(
        summary(&blame),
        [
            row("/billing/cycle", 4, "/billing/cycle"),
            row("/billing/seats", 1, ""),
            row("/email", 1, ""),
            row("/plan", 3, "/plan"),
        ]
    );
    let plan = &blame.leaves[3];
    assert_eq!(plan.value, json!("team"));
    let setter = plan.setter.as_ref().unwrap();
    assert_eq!(setter.tx.actor, "user:maria");
    assert_eq!(setter.op, hist::Op::Replace);
    // The whole-document add explains the rest: 4 rows read, not more.
    assert_eq!(blame.rows_read, 4);
}

#[test]
fn reading_stops_once_every_leaf_is_attributed() {
    let mut f = Fixture::new();
    f.set("", json!({"a": 0, "b": 0}));
    for i in 1..=50 {
        f.set("/a", json!(i));
    }
    f.set("/b", json!(1));
    let blame = f.blame();
    assert_eq!(summary(&blame), [row("/a", 51, "/a"), row("/b", 52, "/b")]);
    // Two rows answer for both leaves; the 51 older rows are never read.
    assert_eq!(blame.rows_read, 2);
}

#[test]
fn as_of_and_subtree() {
    let mut f = Fixture::new();
    f.set("", json!({"a": {"x": 1, "y": 2}, "b": 1}));
    f.set("/a/x", json!(10));
    f.set("/b", json!(2));
    f.set("/a/y", json!(20));
    let then = f.blame_at(Some(When::Tx(3)), None);
    assert_eq!(then.tx, Some(3));
    assert_eq!(
        summary(&then),
        [
            row("/a/x", 2, "/a/x"),
            row("/a/y", 1, ""),
            row("/b", 3, "/b")
        ]
    );
    assert_eq!(then.value, Some(json!({"a": {"x": 10, "y": 2}, "b": 2})));
    let sub = f.blame_at(None, Some("/a"));
    assert_eq!(
        summary(&sub),
        [row("/a/x", 2, "/a/x"), row("/a/y", 4, "/a/y")]
    );
    // A change to an ancestor of the subtree sets it too.
    let sub = f.blame_at(Some(When::Tx(1)), Some("/a"));
    assert_eq!(summary(&sub), [row("/a/x", 1, ""), row("/a/y", 1, "")]);
    // Absent: before the first transaction, a missing key, a missing path.
    let before = f
        .repo
        .blame("k", Some(When::At(Timestamp(T0))), None)
        .unwrap();
    assert!(!before.document && before.value.is_none() && before.leaves.is_empty());
    let missing = f.repo.blame("nobody", None, None).unwrap();
    assert!(!missing.document);
    let nothing = f
        .repo
        .blame("k", None, Some(&DocPath::parse("/zzz").unwrap()))
        .unwrap();
    assert!(nothing.document && nothing.value.is_none());
}

#[test]
fn a_long_history_costs_lookups_not_rows() {
    let mut f = Fixture::new();
    let fields: serde_json::Map<String, serde_json::Value> = (0..20)
        .map(|i| (format!("f{i}"), serde_json::json!(i)))
        .collect();
    f.set(
        "",
        json!({"fixed": fields, "hot": 0, "list": [1, 2], "empty": {}}),
    );
    for i in 1..=300 {
        f.set("/hot", json!(i));
    }
    let blame = f.blame();
    assert_eq!(blame.leaves.len(), 23);
    for leaf in &blame.leaves {
        let setter = leaf.setter.as_ref().unwrap();
        let expected = if leaf.path.to_string() == "/hot" {
            301
        } else {
            1
        };
        assert_eq!(setter.tx.id, expected, "{}", leaf.path);
    }
    // 64 rows of the stream, then one row per setter found by lookup: not 301 rows.
    assert!(blame.rows_read <= 64 + 1, "{} rows read", blame.rows_read);
    let streamed = f
        .repo
        .blame_reading("k", None, None, BlameReads::StreamOnly)
        .unwrap();
    assert_eq!(streamed.rows_read, 301);
}

#[test]
fn keyed_arrays_and_sets_are_walked_into() {
    let mut f = Fixture::new();
    f.rule("/items", RuleKind::ArrayKey(vec!["id".into()]));
    f.rule("/items[*]/tags", RuleKind::Set);
    let v1: Value = serde_json::from_str(include_str!("../../fixtures/docs/feed-v1.json")).unwrap();
    let v2: Value = serde_json::from_str(include_str!("../../fixtures/docs/feed-v2.json")).unwrap();
    f.put(v1); // tx 3
    f.put(v2); // tx 4: item 4 added, item 1's price changed, tags only reordered
    let blame = f.blame();
    assert_eq!(
        summary(&blame),
        [
            row("/items[id=1]/id", 3, ""),
            row("/items[id=1]/name", 3, ""),
            row("/items[id=1]/price", 4, "/items[id=1]/price"),
            row("/items[id=1]/tags[=\"heavy\"]", 3, ""),
            row("/items[id=1]/tags[=\"iron\"]", 3, ""),
            row("/items[id=2]/id", 3, ""),
            row("/items[id=2]/name", 3, ""),
            row("/items[id=2]/price", 3, ""),
            row("/items[id=2]/tags[=\"fast\"]", 3, ""),
            row("/items[id=3]/id", 3, ""),
            row("/items[id=3]/name", 3, ""),
            row("/items[id=3]/price", 3, ""),
            row("/items[id=3]/tags[=\"iron\"]", 3, ""),
            row("/items[id=3]/tags[=\"magnetic\"]", 3, ""),
            row("/items[id=4]/id", 4, "/items[id=4]"),
            row("/items[id=4]/name", 4, "/items[id=4]"),
            row("/items[id=4]/price", 4, "/items[id=4]"),
            row("/items[id=4]/tags", 4, "/items[id=4]"),
            row("/vendor", 3, ""),
        ]
    );
    // The lines: each field on its own line, structure lines without a leaf.
    let lines = blame.lines();
    let price = lines
        .iter()
        .find(|l| l.text.contains("99.5"))
        .and_then(|l| l.leaf)
        .unwrap();
    assert_eq!(blame.leaves[price].path.to_string(), "/items[id=1]/price");
    assert_eq!(lines[0].text, "{");
    assert_eq!(lines[0].leaf, None);
}

#[test]
fn changes_below_a_leaf_set_it() {
    let mut f = Fixture::new();
    f.rule("/tags", RuleKind::Set);
    f.set("", json!({"tags": ["a"], "o": {"x": 1}}));
    f.rm("/tags[=\"a\"]"); // the set is now empty: the removal set the leaf `/tags`
    f.rm("/o/x"); // the object is now empty: the removal set the leaf `/o`
    let blame = f.blame();
    assert_eq!(
        summary(&blame),
        [row("/o", 4, "/o/x"), row("/tags", 3, "/tags[=\"a\"]")]
    );
    assert_eq!(
        blame.leaves[1].setter.as_ref().unwrap().op,
        hist::Op::Remove
    );
    // An opaque array is one leaf, set by a whole replacement.
    f.set("/list", json!([1, 2, 3]));
    f.set("/list", json!([1, 2, 4]));
    let blame = f.blame();
    assert_eq!(blame.leaves[0].path.to_string(), "/list");
    assert_eq!(blame.leaves[0].setter.as_ref().unwrap().tx.id, 6);
}

#[test]
fn a_scalar_document_is_one_leaf() {
    let mut f = Fixture::new();
    f.set("", json!(1));
    f.set("", json!("two"));
    let blame = f.blame();
    assert_eq!(summary(&blame), [row("", 2, "")]);
    assert_eq!(blame.lines()[0].text, "\"two\"");
}

// ---------------------------------------------------------------------------------------
// Property test: blame agrees with a naive oracle
// ---------------------------------------------------------------------------------------

/// The paths a random history writes to (nested, so parents and children interact).
const PATHS: &[&str] = &["", "/a", "/a/x", "/a/y", "/b", "/b/z", "/c"];

#[derive(Clone, Debug)]
enum Step {
    Set(usize, Value),
    Remove(usize),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0..3i64).prop_map(Value::from),
        Just(Value::Null),
        Just(json!("s")),
        Just(json!({})),
        Just(json!([])),
        Just(json!([1, 2])),
        Just(json!({"x": 1})),
        Just(json!({"x": 2, "y": {"q": 1}})),
        Just(json!({"z": [1]})),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..PATHS.len(), value()).prop_map(|(p, v)| Step::Set(p, v)),
        1 => (1..PATHS.len()).prop_map(Step::Remove),
    ]
}

/// The value at `path` in `doc`, if any.
fn at<'a>(doc: Option<&'a Value>, path: &DocPath) -> Option<&'a Value> {
    hist::diff::get(doc?, path.segments())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every leaf is attributed, to the last transaction that changed the value at the
    /// leaf's path (found by comparing every pair of consecutive versions).
    #[test]
    fn blame_matches_replaying_every_version(steps in prop::collection::vec(step(), 1..12)) {
        let mut f = Fixture::new();
        for s in &steps {
            let opts = f.opts("user:sam", None);
            let mut txn = f.repo.begin(opts).unwrap();
            // Writes that do not fit the document (through a scalar, nothing there) are
            // simply skipped, as a refused command would be.
            let ok = match s {
                Step::Set(p, v) => txn.set("k", &DocPath::parse(PATHS[*p]).unwrap(), v.clone()).is_ok(),
                Step::Remove(p) => txn.remove("k", &DocPath::parse(PATHS[*p]).unwrap()).is_ok(),
            };
            if ok {
                txn.commit().unwrap();
            }
        }
        let newest = f.repo.newest_tx().unwrap().map_or(0, |t| t.id);
        let versions: Vec<Option<Value>> = (0..=newest)
            .map(|t| if t == 0 { None } else { f.repo.as_of_tx("k", t).unwrap().doc })
            .collect();
        let blame = f.blame(); // every way of reading the log, checked to agree
        prop_assert_eq!(blame.value.as_ref(), versions[usize::try_from(newest).unwrap()].as_ref());
        for leaf in &blame.leaves {
            let setter = leaf.setter.as_ref();
            prop_assert!(setter.is_some(), "{} is not attributed", leaf.path);
            let expected = (1..=newest).rev().find(|&t| {
                let t = usize::try_from(t).unwrap();
                at(versions[t].as_ref(), &leaf.path) != at(versions[t - 1].as_ref(), &leaf.path)
            });
            prop_assert_eq!(setter.map(|s| s.tx.id), expected, "leaf {}", leaf.path);
            prop_assert!(
                setter.is_some_and(|s| leaf.path.starts_with(&s.change_path)
                    || s.change_path.starts_with(&leaf.path)),
                "change path of {}", leaf.path
            );
        }
        // The leaves are exactly the places that hold no object members.
        let n_leaves = blame.leaves.len();
        let printed: Vec<usize> = blame.lines().iter().filter_map(|l| l.leaf).collect();
        prop_assert!(printed.iter().all(|&i| i < n_leaves));
        for leaf in &blame.leaves {
            let is_container = matches!(&leaf.value, Value::Object(m) if !m.is_empty());
            prop_assert!(!is_container, "{} is an object with members", leaf.path);
            prop_assert!(!leaf.path.segments().iter().any(Segment::is_element));
        }
    }
}
