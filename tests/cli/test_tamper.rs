//! Tamper evidence: rows altered outside `hist` (with the sqlite3 shell, say) are reported
//! by `hist fsck`, naming the first altered transaction; so are a log cut short and a
//! database replaced by an older copy (through `.hist/HEAD`).
//!
//! Not detectable, and documented in the README: an edit followed by recomputing the whole
//! chain and rewriting `.hist/HEAD` (the chain has no secret; keep `hist fsck --json`'s
//! `head` elsewhere to catch that), and edits to `checks` rows (they are not transactions).

use crate::common::TestEnv;
use rusqlite::Connection;

/// Six transactions: tx 1 and 2 write `k`, tx 3 declares a rule, tx 4 and 5 ingest `feed`
/// (tx 5 makes two changes), tx 6 writes `tail`.
fn story() -> TestEnv {
    let env = TestEnv::init();
    let actor = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &actor[..]].concat()).ok().to_owned();
    run(&["set", "k", "/plan", "\"starter\""]);
    run(&["set", "k", "/plan", "\"pro\"", "-m", "upgrade"]);
    run(&["rules", "array-key", "/items", "id"]);
    env.write("feed.json", r#"{"items":[{"id":1,"p":1}],"name":"x"}"#);
    run(&["ingest", "feed", "feed.json"]);
    env.write(
        "feed.json",
        r#"{"items":[{"id":1,"p":2},{"id":2,"p":3}],"name":"x"}"#,
    );
    run(&["ingest", "feed", "feed.json"]);
    run(&["set", "tail", "", "{\"n\":1}"]);
    env.run(&["fsck"]).ok();
    env
}

fn sql(env: &TestEnv, statements: &str) {
    let conn = Connection::open(env.join(".hist/hist.db")).unwrap();
    conn.execute_batch(statements).unwrap();
}

/// Runs fsck, expects it to fail, returns its problem lines.
#[track_caller]
fn problems(env: &TestEnv) -> Vec<String> {
    let run = env.run(&["fsck"]);
    assert_eq!(run.code, 1, "fsck passed:\n{}{}", run.stdout, run.stderr);
    assert!(run.stdout.ends_with(": PROBLEMS FOUND\n"), "{}", run.stdout);
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("problem: "))
        .map(str::to_owned)
        .collect()
}

#[track_caller]
fn first_altered(env: &TestEnv, tx: i64) {
    let found = problems(env);
    let chain: Vec<&String> = found.iter().filter(|p| p.contains("its hash")).collect();
    assert_eq!(
        chain,
        [&format!(
            "transaction {tx} does not match its hash: its rows were altered outside hist"
        )],
        "{found:#?}"
    );
}

#[test]
fn every_kind_of_row_edit_names_the_first_altered_transaction() {
    let tx_of_feed_change = "(SELECT min(id) FROM change_log WHERE tx = 5)";
    let cases: Vec<(String, i64)> = vec![
        (
            "UPDATE change_log SET new = '\"free\"' WHERE tx = 2".into(),
            2,
        ),
        (
            format!("DELETE FROM change_log WHERE id = {tx_of_feed_change}"),
            5,
        ),
        (
            "INSERT INTO path (path) VALUES ('/x');
             INSERT INTO change_log (tx, key_id, seq, path_id, op, new)
             VALUES (2, (SELECT id FROM change_key WHERE key = 'k'), 99, last_insert_rowid(),
                 'add', '1')"
                .into(),
            2,
        ),
        (
            "PRAGMA foreign_keys = OFF;
             INSERT INTO path (path) VALUES ('/x');
             INSERT INTO change_log (tx, key_id, seq, path_id, op, new)
             VALUES (99, (SELECT id FROM change_key WHERE key = 'k'), 99, last_insert_rowid(),
                 'add', '1')"
                .into(),
            99,
        ),
        (
            "INSERT INTO path (path) VALUES ('/tier');
             UPDATE change_log SET path_id = last_insert_rowid() WHERE tx = 1"
                .into(),
            1,
        ),
        // An interned path renamed: every change at it is altered, the first one named.
        (
            "UPDATE path SET path = '/tier' WHERE path = '/plan'".into(),
            2,
        ),
        (
            "INSERT INTO change_key (key) VALUES ('k2');
             UPDATE change_log SET key_id = last_insert_rowid() WHERE tx = 6"
                .into(),
            6,
        ),
        ("UPDATE change_log SET tx = 4 WHERE tx = 5".into(), 4),
        ("DELETE FROM version WHERE tx = 5".into(), 5),
        (
            "UPDATE version SET last_seq = last_seq + 1 WHERE tx = 2".into(),
            2,
        ),
        (
            "UPDATE tx SET actor = 'user:mallory' WHERE id = 2".into(),
            2,
        ),
        ("UPDATE tx SET reason = NULL WHERE id = 2".into(), 2),
        (
            "UPDATE tx SET at = '2020-01-01T00:00:00.000000Z' WHERE id = 4".into(),
            4,
        ),
        ("UPDATE tx SET kind = 'ingest' WHERE id = 1".into(), 1),
        ("UPDATE rule SET spec = '{\"fields\":[\"sku\"]}'".into(), 3),
        ("UPDATE rule SET pattern = '/other'".into(), 3),
        ("DELETE FROM rule".into(), 3),
        ("UPDATE rule SET removed_tx = 6".into(), 6),
        ("UPDATE tx SET hash = zeroblob(32) WHERE id = 4".into(), 4),
        // Two edits: the earlier transaction is named.
        (
            "UPDATE tx SET actor = 'user:mallory' WHERE id = 5;
             UPDATE change_log SET new = '\"free\"' WHERE tx = 2"
                .into(),
            2,
        ),
    ];
    for (statements, tx) in cases {
        let env = story();
        sql(&env, &statements);
        first_altered(&env, tx);
    }
}

#[test]
fn derived_state_edits_are_found_by_replay() {
    let env = story();
    sql(
        &env,
        "UPDATE doc SET doc = '{\"plan\":\"enterprise\"}' WHERE key = 'k'",
    );
    assert_eq!(
        problems(&env),
        ["k: current state differs from the replayed log"]
    );
    let env = story();
    sql(&env, "DELETE FROM doc WHERE key = 'feed'");
    assert_eq!(
        problems(&env),
        ["feed: the log has changes for it but current state has no record of it"]
    );
}

#[test]
fn a_log_cut_short_is_found_through_head() {
    let env = story();
    // A careful edit: the last transaction goes, with its change and the document it made,
    // so the chain and the replay are both consistent.
    sql(
        &env,
        "DELETE FROM change_log WHERE tx = 6; DELETE FROM version WHERE tx = 6;
         DELETE FROM doc WHERE key = 'tail'; DELETE FROM tx WHERE id = 6;",
    );
    assert_eq!(
        problems(&env),
        [
            "transaction 6 was committed (.hist/HEAD) but the log ends at transaction 5: \
          transactions were removed from the end of the log"
        ]
    );
    // A new transaction that takes the removed one's id does not erase the evidence.
    env.run(&["set", "x", "/a", "1", "--actor", "user:sam"])
        .ok();
    assert_eq!(
        problems(&env),
        [
            "transaction 6 is not the one that was committed (.hist/HEAD records another hash): \
          the log was replaced or rewritten"
        ]
    );
    // Once investigated, deleting HEAD accepts the log as it is.
    std::fs::remove_file(env.join(".hist/HEAD")).unwrap();
    env.run(&["fsck"]).ok();
    env.run(&["set", "x", "/a", "2", "--actor", "user:sam"])
        .ok();
    assert!(
        std::fs::read_to_string(env.join(".hist/HEAD"))
            .unwrap()
            .starts_with("tx 7 ")
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn a_database_replaced_by_an_older_copy_is_found_through_head() {
    let env = story();
    let old = env.join("old.db");
    sql(&env, &format!("VACUUM INTO '{}'", old.display()));
    env.run(&["set", "k", "/plan", "\"team\"", "--actor", "user:maria"])
        .ok();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.join(&format!(".hist/hist.db{suffix}")));
    }
    std::fs::copy(&old, env.join(".hist/hist.db")).unwrap();
    assert_eq!(
        problems(&env),
        [
            "transaction 7 was committed (.hist/HEAD) but the log ends at transaction 6: \
          transactions were removed from the end of the log"
        ]
    );
}

#[test]
fn a_head_that_does_not_read_is_a_problem_not_a_crash() {
    let env = story();
    env.write(".hist/HEAD", "garbage\n");
    assert_eq!(
        problems(&env),
        ["HEAD does not read as \"tx ID HASH\": \"garbage\""]
    );
    // Without HEAD (a repository from before it existed), fsck checks the rest.
    std::fs::remove_file(env.join(".hist/HEAD")).unwrap();
    env.run(&["fsck"]).ok();
}

#[test]
fn fsck_json_prints_the_head_to_keep_elsewhere() {
    let env = story();
    let out = env.run(&["fsck", "--json"]);
    let report: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["head"]["tx"], 6);
    let head = std::fs::read_to_string(env.join(".hist/HEAD")).unwrap();
    // `tx ID HASH CHECK`: the check lets a reader tell a line caught half-written.
    let words: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(
        words[..3],
        ["tx", "6", report["head"]["hash"].as_str().unwrap()]
    );
    assert_eq!(words.len(), 4, "{head}");
}
