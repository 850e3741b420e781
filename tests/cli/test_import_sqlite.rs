//! `hist import --sqlite`: stored API responses in a SQLite table, imported in time order
//! across keys, with and without an actor column; the database is only read.

use crate::common::TestEnv;
use rusqlite::{Connection, params};

/// A table of stored responses, out of time order, times in several forms: ISO-8601 with
/// `Z` or an offset, Unix seconds as a number and as text. One body is not JSON, one NULL.
fn responses(env: &TestEnv, with_actor: bool) -> std::path::PathBuf {
    let path = env.join("api.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE responses (url TEXT, fetched TEXT, body TEXT, who TEXT, why TEXT);",
    )
    .unwrap();
    let rows: [(&str, rusqlite::types::Value, Option<&str>, Option<&str>); 7] = [
        (
            "feed/b",
            "2021-01-03T00:00:00Z".to_owned().into(),
            Some(r#"{"v": 2}"#),
            Some("poller:b"),
        ),
        (
            "feed/a",
            "2021-01-02T02:00:00+02:00".to_owned().into(),
            Some(r#"{"v": 1}"#),
            None,
        ),
        (
            "feed/a",
            1_609_545_600_i64.into(),
            Some(r#"{"v": 0}"#),
            Some("poller:a"),
        ), // 2021-01-02T00:00:00Z
        (
            "feed/b",
            "1609459200".to_owned().into(),
            Some(r#"{"v": 1}"#),
            Some("poller:b"),
        ), // 2021-01-01
        (
            "feed/a",
            "2021-01-04T00:00:00Z".to_owned().into(),
            Some("<html>busy</html>"),
            Some("poller:a"),
        ),
        (
            "feed/a",
            "2021-01-05T00:00:00Z".to_owned().into(),
            None,
            Some("poller:a"),
        ),
        (
            "feed/a",
            "2021-01-06T00:00:00.5Z".to_owned().into(),
            Some(r#"{"v": 3}"#),
            Some("poller:a"),
        ),
    ];
    for (url, fetched, body, who) in rows {
        let who = if with_actor { who } else { None };
        conn.execute(
            "INSERT INTO responses VALUES (?1, ?2, ?3, ?4, 'poll')",
            params![url, fetched, body, who],
        )
        .unwrap();
    }
    path
}

const QUERY: &str = "SELECT url AS key, fetched AS at, body AS doc FROM responses";
const QUERY_ACTOR: &str =
    "SELECT url AS key, fetched AS at, body AS doc, who AS actor, why AS reason FROM responses;";

#[test]
fn rows_are_imported_in_time_order_with_the_actor_given() {
    let env = TestEnv::init();
    let db = responses(&env, false);
    let bytes = std::fs::read(&db).unwrap();
    let run = env.run(&[
        "import",
        "--sqlite",
        "api.db",
        "--query",
        QUERY,
        "--actor",
        "poller:api",
    ]);
    assert_eq!(
        run.ok(),
        "imported 7 rows: 5 snapshots: 5 changed (5 changes), 0 unchanged; 2 skipped\n"
    );
    assert_eq!(
        run.stderr,
        "hist: warning: row feed/a at 2021-01-04T00:00:00Z: doc is not valid JSON (line 1, column 1: expected value); skipped\n\
         hist: warning: row feed/a at 2021-01-05T00:00:00Z: doc is NULL; skipped\n"
    );
    let txs = env
        .run(&[
            "sql",
            "SELECT id, at, actor FROM transactions WHERE kind = 'ingest'",
            "--csv",
        ])
        .ok()
        .to_owned();
    assert_eq!(
        txs,
        "id,at,actor\n\
         1,2021-01-01T00:00:00.000000Z,poller:api\n\
         2,2021-01-02T00:00:00.000000Z,poller:api\n\
         3,2021-01-02T00:00:00.000000Z,poller:api\n\
         4,2021-01-03T00:00:00.000000Z,poller:api\n\
         5,2021-01-06T00:00:00.500000Z,poller:api\n"
    );
    // Rows at the same time keep the query's order: feed/a's {"v": 1} came first.
    assert_eq!(
        env.run(&["show", "feed/a", "@2021-01-03", "--json"]).ok(),
        "{\"v\":0}\n"
    );
    assert_eq!(env.run(&["show", "feed/a", "--json"]).ok(), "{\"v\":3}\n");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "the database is only read"
    );
}

#[test]
fn the_actor_and_reason_columns_name_each_row() {
    let env = TestEnv::init();
    responses(&env, true);
    // Rows without an actor get --actor's (here from HIST_ACTOR).
    let mut cmd = env.command(&[
        "import",
        "--sqlite",
        "api.db",
        "--query",
        QUERY_ACTOR,
        "--json",
    ]);
    cmd.env("HIST_ACTOR", "job:backfill");
    let out = env.run_cmd(cmd, None).ok().to_owned();
    assert_eq!(
        out,
        "{\"changed\":5,\"changes\":5,\"raised\":0,\"rows\":7,\"skipped\":2,\"snapshots\":5,\"source\":\"sqlite\",\"unchanged\":0}\n"
    );
    let txs = env
        .run(&[
            "sql",
            "SELECT actor, reason FROM transactions ORDER BY id",
            "--csv",
        ])
        .ok()
        .to_owned();
    assert_eq!(
        txs,
        "actor,reason\npoller:b,poll\njob:backfill,poll\npoller:a,poll\npoller:b,poll\npoller:a,poll\n"
    );
}

#[test]
fn bad_queries_and_rows_are_refused_clearly() {
    let env = TestEnv::init();
    responses(&env, true);
    let before = crate::robust::full_dump(env.path());
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &[
                "import",
                "--sqlite",
                "api.db",
                "--query",
                "SELECT url AS key, body AS doc FROM responses",
                "--actor",
                "a:b",
            ],
            1,
            "the query gives no \"at\" column (it gives key, doc)",
        ),
        (
            &[
                "import",
                "--sqlite",
                "api.db",
                "--query",
                "SELECT * FROM missing",
                "--actor",
                "a:b",
            ],
            1,
            "the query does not run: no such table: missing",
        ),
        (
            &["import", "--sqlite", "api.db", "--query", QUERY],
            2,
            "the query gives no actor column and no actor was given",
        ),
        (
            &[
                "import", "--sqlite", "none.db", "--query", QUERY, "--actor", "a:b",
            ],
            1,
            "none.db: no such file",
        ),
        (
            &[
                "import",
                "--sqlite",
                "api.db",
                "--query",
                "SELECT url AS key, 'yesterday' AS at, body AS doc FROM responses",
                "--actor",
                "a:b",
            ],
            1,
            "row feed/b at yesterday: \"at\" is not a time: yesterday",
        ),
    ];
    for (args, code, want) in cases {
        let err = env.run(args).fails(code).to_owned();
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(crate::robust::full_dump(env.path()), before);
    // Writes are refused by the read-only connection.
    let err = env
        .run(&[
            "import",
            "--sqlite",
            "api.db",
            "--query",
            "DELETE FROM responses RETURNING url AS key, fetched AS at, body AS doc",
            "--actor",
            "a:b",
        ])
        .fails(1)
        .to_owned();
    assert!(err.contains("the query does not run"), "{err}");
    // A history older than the repository's newest transaction.
    env.run(&["set", "x", "/a", "1", "--actor", "user:t"]).ok();
    let err = env
        .run(&["import", "--sqlite", "api.db", "--query", QUERY_ACTOR])
        .fails(1)
        .to_owned();
    assert!(
        err.contains(
            "the history starts at 2021-01-01T00:00:00.000000Z (row feed/b at 1609459200)"
        ),
        "{err}"
    );
}
