//! `hist sql` is read-only, one refusal at a time: no writes, no schema or pragma changes,
//! no attaching or creating files, no extensions, no second statement smuggled after a
//! first. (`sql_cannot_write` in test_foundation covers the plain INSERT/UPDATE/DELETE/DROP
//! cases.)

use crate::common::TestEnv;
use crate::robust::{assert_no_panic, full_dump};

fn story() -> TestEnv {
    let env = TestEnv::init();
    env.run(&["set", "k", "/a", "1", "--actor", "user:sam"])
        .ok();
    env.run(&[
        "set", "k", "/b", "\"x\"", "--actor", "user:sam", "-m", "why",
    ])
    .ok();
    env
}

fn journal_mode(env: &TestEnv) -> String {
    rusqlite::Connection::open(env.join(".hist/hist.db"))
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn sql_refuses_everything_that_is_not_a_read() {
    let env = story();
    let before = full_dump(env.path());
    let scratch = tempfile::tempdir().unwrap();
    let evil = scratch.path().join("evil.db");
    let evil = evil.to_str().unwrap();
    let attempts = [
        // Pragmas that matter, directly and as table-valued functions.
        "PRAGMA query_only = OFF".to_owned(),
        "PRAGMA query_only = 0".to_owned(),
        "PRAGMA foreign_keys = OFF".to_owned(),
        "PRAGMA user_version = 99".to_owned(),
        "PRAGMA schema_version = 1".to_owned(),
        "PRAGMA main.journal_mode = DELETE".to_owned(),
        "PRAGMA wal_checkpoint(TRUNCATE)".to_owned(),
        "PRAGMA trusted_schema = ON".to_owned(),
        "PRAGMA mmap_size = 1000000".to_owned(),
        "PRAGMA optimize".to_owned(),
        "PRAGMA incremental_vacuum".to_owned(),
        "PRAGMA integrity_check".to_owned(),
        "SELECT * FROM pragma_journal_mode('delete')".to_owned(),
        "SELECT * FROM pragma_query_only(0)".to_owned(),
        // Files: attach (also with a computed name), vacuum into, shell-only functions.
        format!("ATTACH DATABASE '{evil}' AS e"),
        format!("ATTACH DATABASE 'file:{evil}?mode=rwc' AS e"),
        format!("ATTACH (SELECT '{evil}') AS e"),
        format!("ATTACH (VALUES ('{evil}')) AS e"),
        format!("VACUUM INTO '{evil}'"),
        format!("SELECT writefile('{evil}', 'x')"),
        "SELECT readfile('/etc/passwd')".to_owned(),
        "SELECT edit('x')".to_owned(),
        "SELECT load_extension('libevil')".to_owned(),
        "SELECT fts3_tokenizer('simple', x'0000000000000000')".to_owned(),
        // Schema and state.
        "CREATE VIRTUAL TABLE temp.t USING fts5(x)".to_owned(),
        "CREATE TEMP VIEW v AS SELECT 1".to_owned(),
        "CREATE TEMP TRIGGER t AFTER INSERT ON tx BEGIN SELECT 1; END".to_owned(),
        "CREATE INDEX evil ON tx(actor)".to_owned(),
        "ALTER TABLE tx ADD COLUMN evil".to_owned(),
        "ANALYZE".to_owned(),
        "REINDEX".to_owned(),
        "DETACH main".to_owned(),
        "SAVEPOINT s".to_owned(),
        "COMMIT".to_owned(),
        "INSERT INTO temp.sqlite_master VALUES (1, 2, 3, 4, 5)".to_owned(),
        "UPDATE doc SET doc = NULL RETURNING key".to_owned(),
        "INSERT INTO change_log SELECT * FROM change_log".to_owned(),
        // A write smuggled after a read.
        "SELECT 1; DELETE FROM change_log".to_owned(),
        "SELECT 1; PRAGMA query_only = OFF; DELETE FROM tx".to_owned(),
    ];
    for sql in &attempts {
        let run = env.run(&["sql", sql]);
        assert_eq!(
            run.code, 1,
            "{sql} was not refused:\n{}{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stderr.starts_with("hist: error: "),
            "{sql}: {}",
            run.stderr
        );
        assert_no_panic(sql, &run.stderr);
        assert!(
            !scratch.path().join("evil.db").exists(),
            "{sql} created a file"
        );
    }
    assert_eq!(full_dump(env.path()), before);
    assert_eq!(journal_mode(&env), "wal");
    // Reading stays possible, including the read-only pragmas and recursive queries.
    assert_eq!(
        env.run(&["sql", "SELECT count(*) AS n FROM changes"]).ok(),
        "n\n2\n"
    );
    assert!(
        env.run(&["sql", "PRAGMA table_info(tx)"])
            .ok()
            .contains("actor")
    );
    assert_eq!(
        env.run(&[
            "sql",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) \
             SELECT sum(x) AS s FROM c"
        ])
        .ok(),
        "s\n6\n"
    );
    env.run(&["fsck"]).ok();
}
