//! As-of reads against an oracle: random writes over a few keys; after every transaction the
//! test records what each document should be, then checks that reading as of that
//! transaction gives exactly that, in both reconstruction directions (on values and on
//! text), and that no read replays more changes than the checkpoint policy allows. Then
//! snapshots with keyed arrays and sets: reads on text give what reads on values give.

use hist::canon::Value;
use hist::{Actor, Direction, DocPath, Repo, Timestamp, TxOptions};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Set {
        key: usize,
        path: Vec<String>,
        value: Value,
    },
    Remove {
        key: usize,
        path: Vec<String>,
    },
    Put {
        key: usize,
        doc: Value,
    },
    /// Seal the recent changes of every key with at least this many.
    Seal(usize),
}

const KEYS: [&str; 3] = ["a", "b/c", "d"];
/// Names whose order differs between UTF-16 code units (canonical JSON's order) and bytes.
const FIELDS: [&str; 6] = ["x", "y", "z", "w~/[", "\u{e000}", "\u{1f600}"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::String),
        prop::collection::vec((-5i64..5).prop_map(Value::from), 0..3).prop_map(Value::Array),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 16, 4, |inner| {
        prop::collection::btree_map(
            prop::sample::select(&FIELDS[..]).prop_map(String::from),
            inner,
            0..4,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect()))
    })
}

fn path() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop::sample::select(&FIELDS[..]).prop_map(String::from),
        1..3,
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..KEYS.len(), path(), value()).prop_map(|(key, path, value)| Op::Set { key, path, value }),
        1 => (0..KEYS.len(), path()).prop_map(|(key, path)| Op::Remove { key, path }),
        2 => (0..KEYS.len(), value()).prop_map(|(key, doc)| Op::Put { key, doc }),
        1 => (1usize..4).prop_map(Op::Seal),
    ]
}

fn doc_path(names: &[String]) -> DocPath {
    DocPath::from_segments(
        names
            .iter()
            .cloned()
            .map(hist::path::Segment::Field)
            .collect(),
    )
}

/// What the oracle expects after an op (mirrors `set`'s mkdir -p and `rm`'s semantics);
/// `None` when the op must fail.
fn model_apply(doc: &Option<Value>, op: &Op) -> Option<Option<Value>> {
    match op {
        Op::Put { doc: new, .. } => Some(Some(new.clone())),
        Op::Set { path, value, .. } => {
            let mut root = doc.clone().unwrap_or_else(|| json!({}));
            let mut cur = &mut root;
            for name in &path[..path.len() - 1] {
                let obj = cur.as_object_mut()?;
                cur = obj.entry(name.clone()).or_insert_with(|| json!({}));
            }
            cur.as_object_mut()?
                .insert(path[path.len() - 1].clone(), value.clone());
            Some(Some(root))
        }
        Op::Seal(_) => Some(doc.clone()),
        Op::Remove { path, .. } => {
            let mut root = doc.clone()?;
            let mut cur = &mut root;
            for name in &path[..path.len() - 1] {
                cur = cur.as_object_mut()?.get_mut(name)?;
            }
            cur.as_object_mut()?.remove(&path[path.len() - 1])?;
            Some(Some(root))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn as_of_every_transaction_matches_the_oracle(ops in prop::collection::vec(op(), 1..160)) {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let actor = Actor::parse("test:oracle").unwrap();
        let mut state: Vec<Option<Value>> = vec![None; KEYS.len()];
        // tx id -> every document after it
        let mut snapshots: BTreeMap<i64, Vec<Option<Value>>> = BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            let key = match op {
                Op::Set { key, .. } | Op::Remove { key, .. } | Op::Put { key, .. } => *key,
                Op::Seal(min) => {
                    // Sealing changes no answer: the reads below must not see it.
                    repo.seal(*min).unwrap();
                    continue;
                }
            };
            let expected = model_apply(&state[key], op);
            let opts = TxOptions::new(actor.clone(), "write", Timestamp(1_000_000 * i as i64));
            let mut txn = repo.begin(opts).unwrap();
            let result = match op {
                Op::Set { path, value, .. } => txn.set(KEYS[key], &doc_path(path), value.clone()).map(drop),
                Op::Remove { path, .. } => txn.remove(KEYS[key], &doc_path(path)).map(drop),
                Op::Put { doc, .. } => txn.put(KEYS[key], doc.clone()).map(drop),
                Op::Seal(_) => unreachable!("handled above"),
            };
            match expected {
                None => prop_assert!(result.is_err(), "{op:?} should fail on {:?}", state[key]),
                Some(new) => {
                    result.unwrap();
                    let commit = txn.commit().unwrap();
                    state[key] = new;
                    if let Some(tx) = commit.tx {
                        snapshots.insert(tx.id, state.clone());
                    }
                }
            }
        }
        for (tx, docs) in &snapshots {
            for (k, key) in KEYS.iter().enumerate() {
                for via in [Direction::Forward, Direction::Backward] {
                    let got = repo.as_of_tx_via(key, *tx, Some(via)).unwrap();
                    prop_assert_eq!(&got.doc, &docs[k], "{} at tx {} via {:?}", key, tx, via);
                    let text = repo.as_of_text_via(key, *tx, Some(via)).unwrap();
                    let expected = docs[k].as_ref().map(hist::canon::to_canonical_string);
                    prop_assert_eq!(text.text, expected, "{} at tx {} via {:?}, on text", key, tx, via);
                    prop_assert!(!text.on_values, "{} at tx {} via {:?} not on text", key, tx, via);
                }
                let best = repo.as_of_tx(key, *tx).unwrap();
                prop_assert!(best.replayed <= hist::CHECKPOINT_EVERY as usize, "replayed {}", best.replayed);
            }
        }
        for (k, key) in KEYS.iter().enumerate() {
            prop_assert_eq!(&repo.current(key).unwrap(), &state[k]);
        }
        let report = repo.fsck().unwrap();
        prop_assert!(report.ok(), "{:?}", report.problems);
    }
}

#[test]
fn reads_stay_bounded_on_a_long_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let actor = Actor::parse("test:long").unwrap();
    let path = DocPath::parse("/n").unwrap();
    for i in 0..1000i64 {
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "write", Timestamp(i)))
            .unwrap();
        txn.set("k", &path, json!(i)).unwrap();
        txn.commit().unwrap();
    }
    let mut worst = 0;
    for tx in 1..=1000 {
        let got = repo.as_of_tx("k", tx).unwrap();
        assert_eq!(got.doc, Some(json!({ "n": tx - 1 })));
        worst = worst.max(got.replayed);
    }
    assert!(
        worst <= hist::CHECKPOINT_EVERY as usize,
        "a read replayed {worst} changes"
    );
    assert!(worst > 0);
}

// ---------------------------------------------------------------------------------------
// Snapshots with keyed arrays and sets: the read on text equals the read on values.
// ---------------------------------------------------------------------------------------

/// Puts the documents `data` generates (the `diff_apply` generator: keyed arrays, sets,
/// composite keys, a root array, hostile names) one after another, with a field write
/// between them, then reads every version both ways in both directions.
fn text_equals_values(data: &[u8]) {
    use hist::path::PathPattern;
    use hist::rules::RuleKind;
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let actor = Actor::parse("test:text").unwrap();
    let mut n = 0;
    let mut opts = || {
        n += 1;
        TxOptions::new(actor.clone(), "write", Timestamp(1_000_000 * n))
    };
    let mut txn = repo.begin(opts()).unwrap();
    for (pattern, kind) in [
        ("/items", RuleKind::ArrayKey(vec!["id".into()])),
        ("/tags", RuleKind::Set),
        ("", RuleKind::ArrayKey(vec!["id".into()])),
        (
            "/items[*]/variants",
            RuleKind::ArrayKey(vec!["sku".into(), "id".into()]),
        ),
        ("/a/tags", RuleKind::Set),
    ] {
        txn.add_rule(&PathPattern::parse(pattern).unwrap(), None, &kind)
            .unwrap();
    }
    txn.commit().unwrap();
    let mut g = crate::diff_apply::Gen { data };
    let mut txs = Vec::new();
    for round in 0..6 {
        let doc = g.value(0);
        let mut txn = repo.begin(opts()).unwrap();
        txn.put("doc", doc).unwrap();
        if let Some(tx) = txn.commit().unwrap().tx {
            txs.push(tx.id);
        }
        // A field write too, where the document is an object.
        let mut txn = repo.begin(opts()).unwrap();
        let path = DocPath::parse("/b").unwrap();
        if txn.set("doc", &path, json!(round)).is_ok()
            && let Some(tx) = txn.commit().unwrap().tx
        {
            txs.push(tx.id);
        }
    }
    for &tx in &txs {
        for via in [None, Some(Direction::Forward), Some(Direction::Backward)] {
            let values = repo.as_of_tx_via("doc", tx, via).unwrap();
            let text = repo.as_of_text_via("doc", tx, via).unwrap();
            let expected = values.doc.as_ref().map(hist::canon::to_canonical_string);
            assert_eq!(text.text, expected, "tx {tx} via {via:?}");
            assert!(!text.on_values, "tx {tx} via {via:?} was not read on text");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn reads_on_text_equal_reads_on_values(data in prop::collection::vec(any::<u8>(), 0..600)) {
        text_equals_values(&data);
    }
}

/// A stored change value that is not JSON (edited outside hist) makes an as-of read that
/// replays it an error, on text as on values: never a document with the bytes spliced in.
#[test]
fn a_damaged_change_value_is_an_error_on_text_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let actor = Actor::parse("test:damage").unwrap();
    for (i, doc) in [json!({"a": 1, "b": [1]}), json!({"a": 2, "b": [1]})]
        .into_iter()
        .enumerate()
    {
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "write", Timestamp(i as i64)))
            .unwrap();
        txn.put("k", doc).unwrap();
        txn.commit().unwrap();
    }
    let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
    // The change at version 2 (tx 2): its new value read going forward, its old value
    // going back from the current document to tx 1. The first change puts the whole
    // document: a forward read to tx 1 starts from its value.
    db.execute_batch(
        "UPDATE change_log SET new = '{\"a\":', old = '[' WHERE key_id = (SELECT id FROM change_key WHERE key = 'k') AND seq = 2;
         UPDATE change_log SET new = '{\"a\":1,\"b\":[1]' WHERE key_id = (SELECT id FROM change_key WHERE key = 'k') AND seq = 1;",
    )
    .unwrap();
    drop(db);
    let repo = Repo::open(dir.path()).unwrap();
    for (tx, via) in [
        (2, Direction::Forward),
        (1, Direction::Backward),
        (1, Direction::Forward),
    ] {
        assert!(repo.as_of_tx_via("k", tx, Some(via)).is_err(), "{via:?}");
        let read = repo.as_of_text_via("k", tx, Some(via));
        assert!(read.is_err(), "{via:?}: {read:?}");
    }
}

/// A snapshot after a field write of the same document in the same transaction is diffed
/// against what that write made (as text), and the log replays to it.
#[test]
fn a_snapshot_after_a_write_in_the_same_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let actor = Actor::parse("test:mixed").unwrap();
    let mut txn = repo
        .begin(TxOptions::new(actor.clone(), "write", Timestamp(1)))
        .unwrap();
    txn.set("k", &DocPath::parse("/a").unwrap(), json!({"x": 1}))
        .unwrap();
    let outcome = txn.put("k", json!({"a": {"x": 2}, "b": true})).unwrap();
    assert_eq!(outcome, hist::PutOutcome::Changed(2));
    let commit = txn.commit().unwrap();
    let paths: Vec<String> = commit
        .changes
        .iter()
        .map(|(_, c)| format!("{} {}", c.op.as_str(), c.path))
        .collect();
    assert_eq!(paths, ["add ", "replace /a/x", "add /b"]);
    let tx = commit.tx.unwrap().id;
    assert_eq!(
        repo.as_of_tx_via("k", tx, Some(Direction::Forward))
            .unwrap()
            .doc,
        Some(json!({"a": {"x": 2}, "b": true}))
    );
    assert!(repo.fsck().unwrap().ok());
}
