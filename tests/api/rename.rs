//! Renames through the library: moves in the log, later snapshots translated, history,
//! as-of reads and path mapping following renames back.

use hist::canon::Value;
use hist::{Actor, DocPath, Op, PutOutcome, Repo, Timestamp, TxOptions, When};

/// 2026-01-01T00:00:00Z.
const START: i64 = 1_767_225_600_000_000;
const DAY: i64 = 86_400_000_000;

fn opts(kind: &str, day: i64) -> TxOptions {
    let at = Timestamp(START + day * DAY);
    TxOptions::new(Actor::parse("user:sam").unwrap(), kind, at).at(Some(at))
}

fn path(text: &str) -> DocPath {
    DocPath::parse(text).unwrap()
}

/// Records a snapshot; the changes its commit reports (`None`: unchanged).
fn put(repo: &mut Repo, day: i64, key: &str, doc: Value) -> Option<Vec<hist::Change>> {
    let mut txn = repo.begin(opts("ingest", day)).unwrap();
    let out = txn.put(key, doc).unwrap();
    let commit = txn.commit().unwrap();
    let changes: Vec<hist::Change> = commit
        .changes
        .iter()
        .map(|(_, c)| c.to_change().unwrap())
        .collect();
    match out {
        PutOutcome::Unchanged => {
            assert!(changes.is_empty());
            None
        }
        PutOutcome::Changed(n) => {
            assert_eq!(changes.len(), n);
            Some(changes)
        }
    }
}

fn rename(repo: &mut Repo, day: i64, glob: &str, from: &str, to: &str) -> usize {
    let mut txn = repo.begin(opts("rename", day)).unwrap();
    let moved = txn.rename(glob, &path(from), &path(to)).unwrap();
    txn.commit().unwrap();
    moved.len()
}

/// (tx, path, op, old, new) of a history entry.
type Entry = (i64, String, Op, Option<Value>, Option<Value>);

/// Each history entry, as an [`Entry`].
fn history(repo: &Repo, key: &str, p: &str) -> Vec<Entry> {
    repo.history(key, &path(p))
        .unwrap()
        .into_iter()
        .map(|e| (e.tx.id, e.path.to_string(), e.op, e.old, e.new))
        .collect()
}

fn read(repo: &Repo, key: &str, tx: i64) -> Option<Value> {
    repo.as_of(key, When::Tx(tx)).unwrap().doc
}

#[test]
fn plan_to_tier_then_an_ingest_that_still_says_plan() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    put(
        &mut repo,
        1,
        "customer/1",
        json!({"plan": "starter", "seats": 1}),
    ); // tx 1
    put(
        &mut repo,
        2,
        "customer/1",
        json!({"plan": "pro", "seats": 1}),
    ); // tx 2
    put(&mut repo, 2, "customer/2", json!({"seats": 3})); // tx 3
    assert_eq!(rename(&mut repo, 3, "customer/*", "/plan", "/tier"), 1); // tx 4
    assert_eq!(
        repo.current("customer/1").unwrap(),
        Some(json!({"tier": "pro", "seats": 1}))
    );
    // A poller still sending /plan: recorded as a change to /tier, not remove + add.
    let out = put(
        &mut repo,
        4,
        "customer/1",
        json!({"plan": "team", "seats": 1}),
    ); // tx 5
    assert_eq!(
        out,
        Some(vec![hist::Change {
            path: path("/tier"),
            op: Op::Replace,
            old: Some(json!("pro")),
            new: Some(json!("team")),
        }])
    );
    // The same snapshot again is unchanged; one already using /tier is also unchanged.
    assert_eq!(
        put(
            &mut repo,
            5,
            "customer/1",
            json!({"plan": "team", "seats": 1})
        ),
        None
    );
    assert_eq!(
        put(
            &mut repo,
            5,
            "customer/1",
            json!({"tier": "team", "seats": 1})
        ),
        None
    );
    // A key created after the rename that matches the glob is translated too.
    put(&mut repo, 5, "customer/3", json!({"plan": "free"})); // tx 6
    assert_eq!(
        repo.current("customer/3").unwrap(),
        Some(json!({"tier": "free"}))
    );
    // A key the glob does not match is not.
    put(&mut repo, 5, "vendor/1", json!({"plan": "x"})); // tx 7
    assert_eq!(
        repo.current("vendor/1").unwrap(),
        Some(json!({"plan": "x"}))
    );
    // A field write to the old name goes to the new one, with a warning.
    let mut txn = repo.begin(opts("write", 6)).unwrap();
    txn.set("customer/1", &path("/plan"), json!("enterprise"))
        .unwrap();
    let commit = txn.commit().unwrap(); // tx 8
    assert_eq!(commit.changes[0].1.path, path("/tier"));
    assert_eq!(
        commit.warnings,
        vec!["customer/1: /plan was renamed to /tier (tx 4); writing /tier"]
    );

    // History of /tier: /plan's changes, the move, /tier's changes.
    assert_eq!(
        history(&repo, "customer/1", "/tier"),
        vec![
            (1, "/plan".into(), Op::Add, None, Some(json!("starter"))),
            (
                2,
                "/plan".into(),
                Op::Replace,
                Some(json!("starter")),
                Some(json!("pro"))
            ),
            (
                4,
                "/tier".into(),
                Op::Move,
                Some(json!("pro")),
                Some(json!("pro"))
            ),
            (
                5,
                "/tier".into(),
                Op::Replace,
                Some(json!("pro")),
                Some(json!("team"))
            ),
            (
                8,
                "/tier".into(),
                Op::Replace,
                Some(json!("team")),
                Some(json!("enterprise"))
            ),
        ]
    );
    let entries = repo.history("customer/1", &path("/tier")).unwrap();
    let moved = entries[2].moved.clone().unwrap();
    assert_eq!((moved.from, moved.to), (path("/plan"), path("/tier")));
    // History of /plan ends with the value moving away.
    assert_eq!(
        history(&repo, "customer/1", "/plan"),
        vec![
            (1, "/plan".into(), Op::Add, None, Some(json!("starter"))),
            (
                2,
                "/plan".into(),
                Op::Replace,
                Some(json!("starter")),
                Some(json!("pro"))
            ),
            (4, "/plan".into(), Op::Move, Some(json!("pro")), None),
        ]
    );
    // As-of reads agree: /plan before the rename, /tier after.
    assert_eq!(
        read(&repo, "customer/1", 3),
        Some(json!({"plan": "pro", "seats": 1}))
    );
    assert_eq!(
        read(&repo, "customer/1", 4),
        Some(json!({"tier": "pro", "seats": 1}))
    );
    assert_eq!(
        repo.path_before("customer/1", &path("/tier"), 3).unwrap(),
        path("/plan")
    );
    assert_eq!(
        repo.path_before("customer/1", &path("/tier"), 4).unwrap(),
        path("/tier")
    );
    assert_eq!(
        repo.path_before("customer/2", &path("/tier"), 3).unwrap(),
        path("/tier")
    );
    assert!(repo.fsck().unwrap().ok());
}

#[test]
fn chains_and_renamed_parents() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    put(
        &mut repo,
        1,
        "c/1",
        json!({"a": 1, "billing": {"plan": "x", "card": 4}}),
    ); // tx 1
    put(
        &mut repo,
        2,
        "c/1",
        json!({"a": 2, "billing": {"plan": "y", "card": 4}}),
    ); // tx 2
    rename(&mut repo, 3, "c/*", "/a", "/b"); // tx 3
    put(
        &mut repo,
        4,
        "c/1",
        json!({"b": 3, "billing": {"plan": "y", "card": 4}}),
    ); // tx 4
    rename(&mut repo, 5, "c/*", "/b", "/c"); // tx 5
    // Still the oldest name: translated through the chain.
    put(
        &mut repo,
        6,
        "c/1",
        json!({"a": 4, "billing": {"plan": "y", "card": 4}}),
    ); // tx 6
    assert_eq!(
        history(&repo, "c/1", "/c"),
        vec![
            (1, "/a".into(), Op::Add, None, Some(json!(1))),
            (2, "/a".into(), Op::Replace, Some(json!(1)), Some(json!(2))),
            (3, "/b".into(), Op::Move, Some(json!(2)), Some(json!(2))),
            (4, "/b".into(), Op::Replace, Some(json!(2)), Some(json!(3))),
            (5, "/c".into(), Op::Move, Some(json!(3)), Some(json!(3))),
            (6, "/c".into(), Op::Replace, Some(json!(3)), Some(json!(4))),
        ]
    );
    assert_eq!(repo.path_before("c/1", &path("/c"), 2).unwrap(), path("/a"));
    assert_eq!(repo.path_before("c/1", &path("/c"), 4).unwrap(), path("/b"));

    // A parent renamed into a new parent object: /billing -> /account/billing.
    rename(&mut repo, 7, "c/*", "/billing", "/account/billing"); // tx 7
    assert_eq!(
        repo.current("c/1").unwrap(),
        Some(json!({"c": 4, "account": {"billing": {"plan": "y", "card": 4}}}))
    );
    put(
        &mut repo,
        8,
        "c/1",
        json!({"c": 4, "billing": {"plan": "z", "card": 4}}),
    ); // tx 8
    assert_eq!(
        history(&repo, "c/1", "/account/billing/plan"),
        vec![
            (1, "/billing/plan".into(), Op::Add, None, Some(json!("x"))),
            (
                2,
                "/billing/plan".into(),
                Op::Replace,
                Some(json!("x")),
                Some(json!("y"))
            ),
            (
                7,
                "/account/billing/plan".into(),
                Op::Move,
                Some(json!("y")),
                Some(json!("y"))
            ),
            (
                8,
                "/account/billing/plan".into(),
                Op::Replace,
                Some(json!("y")),
                Some(json!("z"))
            ),
        ]
    );
    // Before the rename there was no /account: reading back removes the parent it created.
    assert_eq!(
        read(&repo, "c/1", 6),
        Some(json!({"c": 4, "billing": {"plan": "y", "card": 4}}))
    );
    assert_eq!(
        repo.path_before("c/1", &path("/account/billing/plan"), 6)
            .unwrap(),
        path("/billing/plan")
    );
    // History of the new parent sees the value arrive with the rename.
    let account = history(&repo, "c/1", "/account");
    assert_eq!(account[0].0, 7);
    assert_eq!(account[0].2, Op::Add);
    assert!(repo.fsck().unwrap().ok());

    // A diff across renames exports as an RFC 6902 move.
    let changes: Vec<hist::Change> = (7..=7)
        .flat_map(|tx| {
            let info = repo.tx(tx).unwrap().unwrap();
            repo.tx_changes(&info, Some("c/1"), None).unwrap()
        })
        .map(|c| c.change)
        .collect();
    let patch = hist::diff::to_json_patch(read(&repo, "c/1", 6).as_ref(), &changes).unwrap();
    assert_eq!(
        patch,
        vec![
            json!({"op": "add", "path": "/account", "value": {}}),
            json!({"op": "move", "from": "/billing", "path": "/account/billing"}),
        ]
    );
}

#[test]
fn refusals_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    put(
        &mut repo,
        1,
        "c/1",
        json!({"plan": "x", "tier": "y", "n": 5}),
    );
    put(&mut repo, 1, "c/2", json!({"plan": "x"}));
    let cases = [
        ("c/*", "/plan", "/tier", "c/1 already has a value at /tier"),
        ("c/*", "", "/tier", "FROM \"\" is not an object member"),
        ("c/*", "/plan", "/plan/x", "one is inside the other"),
        (
            "c/*",
            "/plan",
            "/n/x",
            "c/1: cannot move a value to /n/x: /n holds a number",
        ),
        ("c/[", "/plan", "/x", "--keys \"c/[\""),
    ];
    for (glob, from, to, message) in cases {
        let mut txn = repo.begin(opts("rename", 2)).unwrap();
        let err = txn.rename(glob, &path(from), &path(to)).unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
        drop(txn);
    }
    assert_eq!(repo.newest_tx().unwrap().unwrap().id, 2);
    assert!(repo.renames().is_empty());
    assert_eq!(repo.current("c/2").unwrap(), Some(json!({"plan": "x"})));
}

/// gc never compacts across a rename: a move ends every group it touches.
#[test]
fn gc_keeps_moves() {
    use hist::path::PathPattern;
    use hist::retention::{Retention, Then};
    use hist::rules::RuleKind;
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut txn = repo.begin(opts("rules", 0)).unwrap();
    for p in ["/a", "/b"] {
        txn.add_rule(
            &PathPattern::parse(p).unwrap(),
            None,
            &RuleKind::Retention(Retention::Keep {
                seconds: 86_400,
                then: Then::Drop,
            }),
        )
        .unwrap();
    }
    txn.commit().unwrap();
    put(&mut repo, 1, "k", json!({"a": 1, "z": 0}));
    put(&mut repo, 2, "k", json!({"a": 2, "z": 0}));
    put(&mut repo, 3, "k", json!({"a": 3, "z": 0}));
    rename(&mut repo, 4, "k", "/a", "/b");
    put(&mut repo, 5, "k", json!({"b": 4, "z": 0}));
    put(&mut repo, 6, "k", json!({"b": 5, "z": 0}));
    let now = Timestamp(START + 30 * DAY);
    let outcome = repo
        .gc(TxOptions::new(
            Actor::parse("job:gc").unwrap(),
            "compact",
            now,
        ))
        .unwrap();
    assert!(repo.fsck().unwrap().ok());
    let kept: Vec<(i64, String, Op)> = repo
        .history("k", &path("/b"))
        .unwrap()
        .into_iter()
        .map(|e| (e.tx.id, e.path.to_string(), e.op))
        .collect();
    // /a: 1 -> 2 -> 3 folded into 1 -> 3 at tx 4; the move stays; /b: 4 -> 5 folded.
    assert_eq!(
        kept,
        vec![
            (2, "/a".into(), Op::Add),
            (4, "/a".into(), Op::Replace),
            (5, "/b".into(), Op::Move),
            (7, "/b".into(), Op::Replace),
        ]
    );
    assert_eq!(outcome.plan.replaced(), 4);
    assert_eq!(read(&repo, "k", 5), Some(json!({"b": 3, "z": 0})));
}
