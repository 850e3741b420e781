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

// ---------------------------------------------------------------------------------------
// A feed of figures: most writes replace values the checkpoints list as leaves, and reads
// patch the checkpoint's text; the rest (new and removed fields, new records, a record's
// key replaced, whole snapshots) send reads back to the replay. Every read equals the
// document the store held right after that transaction.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Feed {
    /// A figure replaced: `/rows[id=R]/F` or `/t`.
    Figure(i64, &'static str, Value),
    /// A field that may not be there yet, set (an add, or a replace).
    Field(i64, Value),
    /// A field removed.
    Drop(i64),
    /// A record's key replaced (it may collide: the array is then one opaque value).
    Rekey(i64, i64),
    /// A new version of the whole document.
    Snapshot(Vec<(i64, Value)>),
    Seal(usize),
}

fn figure() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-500i64..500).prop_map(Value::from),
        "[a-c]{0,3}".prop_map(Value::String),
        Just(Value::Null),
        prop::collection::vec((0i64..3).prop_map(Value::from), 0..2).prop_map(Value::Array),
    ]
}

fn feed_op() -> impl Strategy<Value = Feed> {
    let row = 0i64..5;
    prop_oneof![
        30 => (row.clone(), prop::sample::select(&["a", "b", "t"][..]), figure())
            .prop_map(|(r, f, v)| Feed::Figure(r, f, v)),
        2 => (row.clone(), figure()).prop_map(|(r, v)| Feed::Field(r, v)),
        1 => row.clone().prop_map(Feed::Drop),
        1 => (row.clone(), 0i64..7).prop_map(|(r, to)| Feed::Rekey(r, to)),
        1 => prop::collection::vec((0i64..6, figure()), 0..5).prop_map(Feed::Snapshot),
        2 => (1usize..40).prop_map(Feed::Seal),
    ]
}

fn feed_doc(rows: &[(i64, Value)]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|(id, a)| {
            let mut row = hist::canon::Map::new();
            row.insert("id".into(), json!(id));
            row.insert("a".into(), a.clone());
            row.insert("b".into(), json!({ "c": id }));
            Value::Object(row)
        })
        .collect();
    let mut doc = hist::canon::Map::new();
    doc.insert("rows".into(), Value::Array(rows));
    doc.insert("t".into(), json!(0));
    Value::Object(doc)
}

/// The feed's `n`th transaction's options.
fn feed_opts(n: i64) -> TxOptions {
    TxOptions::new(
        Actor::parse("test:feed").unwrap(),
        "write",
        Timestamp(1_000 * n),
    )
}

/// A repository with the feed's rule (records keyed by `id`) and its first version (five
/// records), written by `feed_opts(1)`: the repository and that transaction.
fn feed_repo(dir: &std::path::Path) -> (Repo, i64) {
    use hist::path::PathPattern;
    use hist::rules::RuleKind;
    let mut repo = Repo::init(dir).unwrap();
    let mut txn = repo.begin(feed_opts(1)).unwrap();
    txn.add_rule(
        &PathPattern::parse("/rows").unwrap(),
        None,
        &RuleKind::ArrayKey(vec!["id".into()]),
    )
    .unwrap();
    txn.put(
        "feed",
        feed_doc(&(0..5).map(|i| (i, json!(i))).collect::<Vec<_>>()),
    )
    .unwrap();
    let tx = txn.commit().unwrap().tx.unwrap().id;
    (repo, tx)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn reads_patched_on_leaves_equal_the_documents_written(ops in prop::collection::vec(feed_op(), 80..260)) {
        let dir = tempfile::tempdir().unwrap();
        let (mut repo, tx) = feed_repo(dir.path());
        let mut n = 1;
        let mut opts = || {
            n += 1;
            feed_opts(n)
        };
        let mut written = vec![(tx, repo.current("feed").unwrap())];
        for op in &ops {
            let mut txn = repo.begin(opts()).unwrap();
            let at = |r: &i64, f: &str| DocPath::parse(&format!("/rows[id={r}]/{f}")).unwrap();
            // Writes that do not apply (the record is gone, or was rekeyed) are skipped.
            let done = match op {
                Feed::Figure(_, "t", v) => txn.set("feed", &DocPath::parse("/t").unwrap(), v.clone()).is_ok(),
                Feed::Figure(r, f, v) => txn.set("feed", &at(r, f), v.clone()).is_ok(),
                Feed::Field(r, v) => txn.set("feed", &at(r, "new"), v.clone()).is_ok(),
                Feed::Drop(r) => txn.remove("feed", &at(r, "new")).is_ok(),
                Feed::Rekey(r, to) => txn.set("feed", &at(r, "id"), json!(to)).is_ok(),
                Feed::Snapshot(rows) => txn.put("feed", feed_doc(rows)).is_ok(),
                Feed::Seal(min) => {
                    drop(txn);
                    repo.seal(*min).unwrap();
                    continue;
                }
            };
            if done && let Some(tx) = txn.commit().unwrap().tx {
                written.push((tx.id, repo.current("feed").unwrap()));
            }
        }
        for (tx, doc) in &written {
            let expected = doc.as_ref().map(hist::canon::to_canonical_string);
            for via in [None, Some(Direction::Forward), Some(Direction::Backward)] {
                let read = repo.as_of_text_via("feed", *tx, via).unwrap();
                prop_assert_eq!(&read.text, &expected, "tx {} via {:?} (patched: {})", tx, via, read.patched);
            }
        }
        let report = repo.fsck().unwrap();
        prop_assert!(report.ok(), "{:?}", report.problems);
    }
}

/// A feed of 5 records keyed by `id` and `versions` writes of one figure each (the
/// write numbered 250 adds a field instead), sealed after the 150th: each write's
/// transaction and number.
fn figures(dir: &std::path::Path, versions: i64) -> (Repo, Vec<(i64, Option<i64>)>) {
    let (mut repo, tx) = feed_repo(dir);
    let mut written = vec![(tx, None)];
    let mut n = 1;
    let mut opts = || {
        n += 1;
        feed_opts(n)
    };
    for i in 0..versions {
        let mut txn = repo.begin(opts()).unwrap();
        let path = match i {
            // A field that was never there: an add, which a patch cannot do.
            250 => "/rows[id=2]/new".to_owned(),
            _ => format!("/rows[id={}]/a", i % 5),
        };
        txn.set("feed", &DocPath::parse(&path).unwrap(), json!(1000 + i * 7))
            .unwrap();
        written.push((txn.commit().unwrap().tx.unwrap().id, Some(i)));
        if i == 150 {
            repo.seal(1).unwrap();
        }
    }
    (repo, written)
}

/// The feed above without its random parts: reads between checkpoints are patched, both
/// ways and sealed or not, and a read over a new field is replayed; all equal what was
/// written.
#[test]
fn a_feed_of_figures_is_read_patched() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, written) = figures(dir.path(), 400);
    let mut patched = [0, 0];
    for &(tx, i) in &written {
        let expected = repo.as_of_tx_via("feed", tx, None).unwrap();
        let expected = expected.doc.as_ref().map(hist::canon::to_canonical_string);
        for (k, via) in [Direction::Forward, Direction::Backward]
            .into_iter()
            .enumerate()
        {
            let read = repo.as_of_text_via("feed", tx, Some(via)).unwrap();
            assert_eq!(read.text, expected, "tx {tx} via {via:?}");
            patched[k] += usize::from(read.patched);
            // Reads over the new field's add replay it: forwards to it, backwards from
            // before it.
            let over = match via {
                Direction::Forward => i == Some(250),
                Direction::Backward => i == Some(249),
            };
            if over && read.replayed > 0 {
                assert!(!read.patched, "tx {tx} via {via:?}: the add was patched");
            }
        }
    }
    // Most reads between checkpoints, in both directions.
    assert!(
        patched.iter().all(|&p| p > 200),
        "patched {patched:?} of {}",
        written.len()
    );
}

/// Leaves put where their paths do not lead (the store edited outside hist) would make
/// patched reads wrong: fsck finds them.
#[test]
fn leaves_out_of_place_are_found_by_fsck() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = figures(dir.path(), 200);
    assert!(repo.fsck().unwrap().ok());
    drop(repo);
    let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
    // A checkpoint's leaves stored alone (a first byte of 0, then a zstd frame): the paths
    // of its first two leaves swapped.
    let (seq, blob): (i64, Vec<u8>) = db
        .query_row(
            "SELECT seq, leaves FROM checkpoint WHERE substr(leaves, 1, 1) = x'00' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut leaves = hist_segment::leafset::decode(&zstd::decode_all(&blob[1..]).unwrap()).unwrap();
    assert!(leaves.len() >= 2, "{leaves:?}");
    let (a, b) = (leaves[0].1, leaves[1].1);
    (leaves[0].1, leaves[1].1) = (b, a);
    let mut swapped = vec![0u8];
    swapped
        .extend(zstd::encode_all(&hist_segment::leafset::encode(&leaves).unwrap()[..], 3).unwrap());
    db.execute(
        "UPDATE checkpoint SET leaves = ?1 WHERE seq = ?2",
        rusqlite::params![swapped, seq],
    )
    .unwrap();
    drop(db);
    let report = Repo::open(dir.path()).unwrap().fsck().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains(&format!("leaves of the checkpoint at version {seq}"))),
        "{:?}",
        report.problems
    );
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
