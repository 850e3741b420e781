//! A handle that stays open while other connections write (a service keeps one for days):
//! before each read and write it sees the rules, renames and forgets they committed
//! (`Repo::refresh`, on SQLite's `PRAGMA data_version`). The other writer here is a second
//! handle, a connection of its own exactly as another process's is; the bindings' tests do
//! the same with the `hist` command.

use hist::canon::Value;
use hist::path::PathPattern;
use hist::rules::RuleKind;
use hist::{Actor, DocPath, Repo, Timestamp, TxOptions};

fn opts(kind: &str, second: i64) -> TxOptions {
    let at = Timestamp(1_767_225_600_000_000 + second * 1_000_000);
    TxOptions::new(Actor::parse("user:ops").unwrap(), kind, at)
}

fn ingest(repo: &mut Repo, second: i64, key: &str, doc: &Value) -> Vec<String> {
    let mut txn = repo.begin(opts("ingest", second)).unwrap();
    txn.put_json(key, hist::canon::to_canonical_string(doc).as_bytes())
        .unwrap();
    let written = txn.commit().unwrap();
    written
        .changes
        .iter()
        .map(|(_, c)| format!("{} {}", c.op, c.path))
        .collect()
}

fn add_rule(repo: &mut Repo, second: i64, pattern: &str, kind: RuleKind) {
    let mut txn = repo.begin(opts("rules", second)).unwrap();
    txn.add_rule(&PathPattern::parse(pattern).unwrap(), None, &kind)
        .unwrap();
    txn.commit().unwrap();
}

#[test]
fn an_open_handle_uses_a_rule_declared_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut service = Repo::init(dir.path()).unwrap();
    let v1 = json!({"items": [{"id": 1, "price": 10}]});
    assert_eq!(ingest(&mut service, 1, "feed/acme", &v1), ["add "]);
    // Another connection declares the array key while the service's handle stays open.
    let mut other = Repo::open(dir.path()).unwrap();
    add_rule(
        &mut other,
        2,
        "/items",
        RuleKind::ArrayKey(vec!["id".into()]),
    );
    drop(other);
    assert!(service.rules().is_empty(), "nothing read yet");
    // The next write through the open handle diffs the array by key: one add, not the
    // whole array replaced.
    let v2 = json!({"items": [{"id": 2, "price": 5}, {"id": 1, "price": 10}]});
    assert_eq!(
        ingest(&mut service, 3, "feed/acme", &v2),
        ["add /items[id=2]"]
    );
    assert_eq!(service.rules().len(), 1);
}

#[test]
fn an_open_handle_reads_with_renames_and_rules_recorded_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut service = Repo::init(dir.path()).unwrap();
    ingest(&mut service, 1, "customer/1", &json!({"plan": "pro"}));
    let mut other = Repo::open(dir.path()).unwrap();
    let mut txn = other.begin(opts("rename", 2)).unwrap();
    let from = DocPath::parse("/plan").unwrap();
    let to = DocPath::parse("/tier").unwrap();
    txn.rename("customer/*", &from, &to).unwrap();
    txn.commit().unwrap();
    add_rule(&mut other, 3, "/tags", RuleKind::Set);
    // A read: history follows the rename back to /plan.
    let history = service.history("customer/1", &to).unwrap();
    let paths: Vec<String> = history.iter().map(|e| e.path.to_string()).collect();
    assert_eq!(paths, ["/plan", "/tier"]);
    assert_eq!(service.renames().len(), 1);
    assert_eq!(service.rules().len(), 1);
    // A write at the old name goes to the new one.
    let mut txn = service.begin(opts("write", 4)).unwrap();
    txn.set("customer/1", &from, json!("team")).unwrap();
    txn.commit().unwrap();
    assert_eq!(
        service.current("customer/1").unwrap(),
        Some(json!({"tier": "team"}))
    );
}

#[test]
fn an_open_handle_sees_a_forget_committed_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut service = Repo::init(dir.path()).unwrap();
    add_rule(
        &mut service,
        1,
        "/email",
        RuleKind::Personal { subject_from: None },
    );
    ingest(
        &mut service,
        2,
        "customer/1",
        &json!({"email": "a@example.com"}),
    );
    assert_eq!(
        service.current("customer/1").unwrap(),
        Some(json!({"email": "a@example.com"}))
    );
    let mut other = Repo::open(dir.path()).unwrap();
    other.forget(opts("forget", 3), "customer/1").unwrap();
    drop(other);
    let doc = service.current("customer/1").unwrap().unwrap();
    assert_eq!(doc["email"], hist::shred::forgotten_marker());
}

/// A service moves its handle between threads (the Python binding releases the GIL around
/// every call, Go behind a mutex): the handle must be `Send`. A compile-time check: this test
/// stops compiling if a cache inside the store holds something that is not.
#[test]
fn a_handle_can_move_to_another_thread() {
    fn send<T: Send>() {}
    send::<Repo>();
}
