//! The foundation: init, field writes, as-of reads, history, log, sql, fsck, refusals.

use crate::common::TestEnv;

/// The story of customer 4411, as in the README.
fn story() -> TestEnv {
    let env = TestEnv::init();
    env.run(&[
        "set",
        "customer/4411",
        "/plan",
        "\"starter\"",
        "--actor",
        "user:sam",
        "--at",
        "@2026-01-10",
    ])
    .ok();
    env.run(&[
        "set",
        "customer/4411",
        "/plan",
        "\"pro\"",
        "--actor",
        "user:sam",
        "--at",
        "@2026-03-02T10:14:00Z",
    ])
    .ok();
    env.run(&[
        "set",
        "customer/4411",
        "/plan",
        "\"team\"",
        "--actor",
        "user:maria",
        "-m",
        "ticket 1182",
        "--at",
        "@2026-08-19T16:40:00Z",
    ])
    .ok();
    env
}

#[test]
fn the_story_of_customer_4411() {
    let env = story();
    assert_eq!(
        env.run(&["show", "customer/4411", "@2026-08-01", "--path", "/plan"])
            .ok(),
        "\"pro\"\n"
    );
    assert_eq!(
        env.run(&["history", "customer/4411", "/plan"]).ok(),
        "tx 1  2026-01-10T00:00:00Z  user:sam  + \"starter\"\n\
         tx 2  2026-03-02T10:14:00Z  user:sam  ~ \"starter\" -> \"pro\"\n\
         tx 3  2026-08-19T16:40:00Z  user:maria  ~ \"pro\" -> \"team\"  (ticket 1182)\n"
    );
    let json = env.run(&["history", "customer/4411", "/plan", "--json"]);
    let lines: Vec<serde_json::Value> = json
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["actor"], "user:maria");
    assert_eq!(lines[2]["reason"], "ticket 1182");
    assert_eq!(lines[2]["old"], "pro");
    assert_eq!(lines[2]["new"], "team");
    assert_eq!(lines[2]["at"], "2026-08-19T16:40:00.000000Z");
    assert_eq!(lines[0]["op"], "add");
    assert!(lines[0].get("old").is_none());
    assert_eq!(
        env.run(&["show", "customer/4411", "@tx:1", "--path", "/plan"])
            .ok(),
        "\"starter\"\n"
    );
    assert_eq!(
        env.run(&["show", "customer/4411"]).ok(),
        "{\n  \"plan\": \"team\"\n}\n"
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn show_before_the_first_write_is_absent() {
    let env = story();
    let err = env.run(&["show", "customer/4411", "@2025-12-31"]);
    assert!(
        err.fails(1)
            .contains("customer/4411 does not exist at @2025-12-31")
    );
    assert!(
        env.run(&["show", "nobody"])
            .fails(1)
            .contains("nobody does not exist now")
    );
    assert!(
        env.run(&["show", "customer/4411", "--path", "/nope"])
            .fails(1)
            .contains("nothing at /nope")
    );
}

#[test]
fn actors_are_required_and_checked() {
    let env = story();
    let before = env.db_dump();
    for actor in [
        None,
        Some(""),
        Some("system"),
        Some("maria"),
        Some("user:"),
        Some("User:x"),
    ] {
        let mut args = vec!["set", "customer/4411", "/plan", "\"free\""];
        if let Some(a) = actor {
            args.extend(["--actor", a]);
        }
        let err = env.run(&args);
        let msg = err.fails(2);
        assert!(msg.contains("actor"), "{msg}");
    }
    // The environment variable works too, and is checked the same way.
    let mut cmd = env.command(&["set", "customer/4411", "/plan", "\"free\""]);
    cmd.env("HIST_ACTOR", "system");
    env.run_cmd(cmd, None).fails(2);
    assert_eq!(env.db_dump(), before);
    let mut cmd = env.command(&["set", "customer/4411", "/plan", "\"free\""]);
    cmd.env("HIST_ACTOR", "job:billing");
    env.run_cmd(cmd, None).ok();
}

#[test]
fn time_never_goes_backwards() {
    let env = story();
    let before = env.db_dump();
    let err = env.run(&[
        "set",
        "customer/4411",
        "/plan",
        "\"x\"",
        "--actor",
        "user:sam",
        "--at",
        "@2026-08-01",
    ]);
    assert!(err.fails(1).contains("earlier than the newest transaction"));
    assert_eq!(env.db_dump(), before);
    // The test clock says 2026-01-01, earlier than the newest transaction: the new tx gets
    // the newest time instead of going backwards.
    env.run(&["set", "customer/4411", "/seats", "5", "--actor", "user:sam"])
        .ok();
    let out = env.run(&["log", "-n", "1", "--json"]);
    let tx: serde_json::Value = serde_json::from_str(out.ok().trim()).unwrap();
    assert_eq!(tx["at"], "2026-08-19T16:40:00.000000Z");
    assert_eq!(tx["tx"], 4);
    for bad in ["@tx:3", "bananas", "2026-08-40"] {
        env.run(&["set", "k", "/a", "1", "--actor", "user:sam", "--at", bad])
            .fails(2);
    }
}

#[test]
fn set_creates_parents_and_refuses_to_go_through_scalars() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &w].concat());
    run(&["set", "cfg", "/server/tls/port", "443"]).ok();
    assert_eq!(
        env.run(&["show", "cfg", "--json"]).ok(),
        "{\"server\":{\"tls\":{\"port\":443}}}\n"
    );
    let before = env.db_dump();
    let err = run(&["set", "cfg", "/server/tls/port/x", "1"]);
    assert!(
        err.fails(1).contains("cannot go through /server/tls/port"),
        "{}",
        err.stderr
    );
    run(&["set", "cfg", "/a", "{not json"]).fails(1);
    run(&["set", "cfg", "no-slash", "1"]).fails(2);
    assert_eq!(env.db_dump(), before);
    // Writing the same value again records nothing and says so.
    assert_eq!(
        run(&["set", "cfg", "/server/tls/port", "443"]).ok(),
        "unchanged (nothing recorded)\n"
    );
    assert_eq!(env.db_dump(), before);
}

#[test]
fn null_is_a_value_not_an_absence() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &w].concat());
    run(&["set", "k", "/a", "1"]).ok();
    assert_eq!(
        run(&["set", "k", "/a", "null"]).ok(),
        "~ /a: 1 -> null\nrecorded tx 2 (1 change)\n"
    );
    assert_eq!(
        run(&["rm", "k", "/a"]).ok(),
        "- /a: null\nrecorded tx 3 (1 change)\n"
    );
    let h = env.run(&["history", "k", "/a", "--json"]);
    let ops: Vec<String> = h
        .ok()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["op"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ops, ["add", "replace", "remove"]);
}

#[test]
fn rm_removes_a_path_or_the_document() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &w].concat());
    run(&["set", "k", "", "{\"a\":1,\"b\":2}"]).ok();
    run(&["rm", "k", "/a"]).ok();
    assert_eq!(env.run(&["show", "k", "--json"]).ok(), "{\"b\":2}\n");
    let before = env.db_dump();
    assert!(
        run(&["rm", "k", "/zzz"])
            .fails(1)
            .contains("nothing at /zzz")
    );
    assert_eq!(env.db_dump(), before);
    run(&["rm", "k"]).ok();
    env.run(&["show", "k"]).fails(1);
    assert_eq!(
        env.run(&["show", "k", "@tx:2", "--json"]).ok(),
        "{\"b\":2}\n"
    );
    run(&["set", "k", "/c", "3"]).ok();
    assert_eq!(env.run(&["show", "k", "--json"]).ok(), "{\"c\":3}\n");
    env.run(&["fsck"]).ok();
}

#[test]
fn apply_is_all_or_nothing() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    env.run(&[
        "set",
        "k",
        "",
        "{\"a\":1,\"list\":[1,2]}",
        "--actor",
        "user:sam",
    ])
    .ok();
    env.write("ok.json", r#"[{"op":"test","path":"/a","value":1},{"op":"add","path":"/list/1","value":9},{"op":"move","from":"/a","path":"/b"},{"op":"copy","from":"/b","path":"/c"}]"#);
    env.run(&[&["apply", "k", "ok.json"][..], &w].concat()).ok();
    assert_eq!(
        env.run(&["show", "k", "--json"]).ok(),
        "{\"b\":1,\"c\":1,\"list\":[1,9,2]}\n"
    );
    let before = env.db_dump();
    env.write(
        "bad.json",
        r#"[{"op":"add","path":"/d","value":1},{"op":"test","path":"/b","value":2}]"#,
    );
    env.run(&[&["apply", "k", "bad.json"][..], &w].concat())
        .fails(1);
    env.write("worse.json", r#"[{"op":"spam","path":"/d"}]"#);
    env.run(&[&["apply", "k", "worse.json"][..], &w].concat())
        .fails(1);
    assert_eq!(env.db_dump(), before);
    // From standard input.
    env.run_stdin(
        &[&["apply", "k", "-"][..], &w].concat(),
        br#"[{"op":"remove","path":"/c"}]"#,
    )
    .ok();
    assert_eq!(
        env.run(&["show", "k", "--json"]).ok(),
        "{\"b\":1,\"list\":[1,9,2]}\n"
    );
}

#[test]
fn history_includes_ancestors_and_descendants() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &w].concat());
    run(&["set", "k", "/billing", "{\"plan\":\"a\",\"seats\":1}"]).ok();
    run(&["set", "k", "/billing/seats", "2"]).ok(); // does not touch /billing/plan
    run(&["set", "k", "/billing/plan", "\"b\""]).ok();
    run(&["set", "k", "/billing", "{\"plan\":\"c\"}"]).ok();
    run(&["rm", "k"]).ok();
    let out = env.run(&["history", "k", "/billing/plan"]);
    let whats: Vec<&str> = out
        .ok()
        .lines()
        .map(|l| l.split("  ").nth(3).unwrap())
        .collect();
    assert_eq!(
        whats,
        ["+ \"a\"", "~ \"a\" -> \"b\"", "~ \"b\" -> \"c\"", "- \"c\""]
    );
    // Changes below the path show the whole value before and after.
    let out = env.run(&["history", "k", "/billing", "--json"]);
    let last: Vec<serde_json::Value> = out
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One entry per transaction: the last write replaced /billing/plan and removed
    // /billing/seats in one go.
    assert_eq!(last.len(), 5);
    assert_eq!(last[3]["old"], serde_json::json!({"plan":"b","seats":2}));
    assert_eq!(last[3]["new"], serde_json::json!({"plan":"c"}));
    assert_eq!(last[3]["change_path"], "/billing");
    assert_eq!(last[1]["old"], serde_json::json!({"plan":"a","seats":1}));
    assert_eq!(last[1]["new"], serde_json::json!({"plan":"a","seats":2}));
    assert_eq!(last[1]["change_path"], "/billing/seats");
}

#[test]
fn log_filters() {
    let env = story();
    env.run(&["set", "other", "/x", "1", "--actor", "user:bob"])
        .ok();
    let ids = |args: &[&str]| -> Vec<i64> {
        env.run(args)
            .ok()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["tx"]
                    .as_i64()
                    .unwrap()
            })
            .collect()
    };
    assert_eq!(ids(&["log", "--json"]), [4, 3, 2, 1]);
    assert_eq!(ids(&["log", "customer/4411", "--json"]), [3, 2, 1]);
    assert_eq!(ids(&["log", "--actor", "user:sam", "--json"]), [2, 1]);
    assert_eq!(
        ids(&[
            "log",
            "--since",
            "@2026-03-01",
            "--until",
            "@2026-08-19",
            "--json"
        ]),
        [2]
    );
    assert_eq!(
        ids(&["log", "--since", "@tx:2", "--until", "@tx:3", "--json"]),
        [3, 2]
    );
    assert_eq!(ids(&["log", "-n", "2", "--json"]), [4, 3]);
    assert_eq!(ids(&["log", "--path", "/x", "--json"]), [4]);
    let p = env.run(&["log", "customer/4411", "-n", "1", "-p"]);
    assert_eq!(
        p.ok(),
        "tx 3  2026-08-19T16:40:00Z  user:maria  write (1 change)\n    ticket 1182\n    customer/4411 ~ /plan: \"pro\" -> \"team\"\n\n"
    );
    assert_eq!(
        env.run(&["log", "--oneline", "-n", "1", "customer/4411"])
            .ok(),
        "3 2026-08-19 user:maria ticket 1182 (1 change)\n"
    );
}

#[test]
fn sql_reads_the_views() {
    let env = story();
    let out = env.run(&[
        "sql",
        "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM changes WHERE key GLOB 'customer/*' AND at >= '2026-03-01' GROUP BY path ORDER BY changes DESC LIMIT 3;",
    ]);
    assert_eq!(out.ok(), "path   changes  objects\n/plan  2        1\n");
    let out = env.run(&[
        "sql",
        "--csv",
        "SELECT id, actor, reason FROM transactions ORDER BY id",
    ]);
    assert_eq!(
        out.ok(),
        "id,actor,reason\n1,user:sam,\n2,user:sam,\n3,user:maria,ticket 1182\n"
    );
    let out = env.run(&["sql", "--json", "SELECT key, doc FROM current"]);
    assert_eq!(
        out.ok(),
        "{\"doc\":\"{\\\"plan\\\":\\\"team\\\"}\",\"key\":\"customer/4411\"}\n"
    );
    // The query quoted in the design runs unchanged.
    env.run(&["sql", "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM changes WHERE key GLOB 'feed/acme*' AND at >= '2026-09-01' GROUP BY path ORDER BY changes DESC LIMIT 3;"]).ok();
}

/// `current` lists documents in the order they were created, however often they change
/// (a write replaces a document's row and keeps its place), and `doc` holds no row twice.
#[test]
fn current_keeps_documents_in_creation_order() {
    let env = TestEnv::init();
    for key in ["zeta", "alpha", "mid"] {
        env.run(&["set", key, "/n", "1", "--actor", "user:sam"])
            .ok();
    }
    env.run(&["set", "zeta", "/n", "2", "--actor", "user:sam"])
        .ok();
    env.run(&["set", "alpha", "/n", "3", "--actor", "user:sam"])
        .ok();
    let out = env.run(&["sql", "--csv", "SELECT key, doc FROM current"]);
    assert_eq!(
        out.ok(),
        "key,doc\nzeta,\"{\"\"n\"\":2}\"\nalpha,\"{\"\"n\"\":3}\"\nmid,\"{\"\"n\"\":1}\"\n"
    );
}

#[test]
fn sql_cannot_write() {
    let env = story();
    let before = env.db_dump();
    let attempts = [
        "INSERT INTO tx (at, actor, kind, hash) VALUES ('x', 'user:evil', 'write', x'')",
        "UPDATE change_log SET new = '\"free\"'",
        "DELETE FROM change_log",
        "DROP TABLE change_log",
        "CREATE TABLE evil (x)",
        "CREATE TEMP TABLE evil (x)",
        "ATTACH DATABASE 'evil.db' AS evil",
        "ATTACH DATABASE ':memory:' AS evil",
        "PRAGMA writable_schema = ON",
        "PRAGMA journal_mode = DELETE",
        "VACUUM",
        "VACUUM INTO 'copy.db'",
        "SELECT load_extension('/tmp/evil.so')",
        "BEGIN",
        "REPLACE INTO doc (key, doc, seq, tx) VALUES ('k', '1', 1, 1)",
        "WITH x AS (SELECT 1) DELETE FROM tx",
    ];
    for sql in attempts {
        let out = env.run(&["sql", sql]);
        out.fails(1);
        assert!(
            !env.join("copy.db").exists() && !env.join("evil.db").exists(),
            "{sql}"
        );
    }
    assert_eq!(env.db_dump(), before);
    env.run(&["fsck"]).ok();
}

#[test]
fn fsck_finds_rows_altered_outside_hist() {
    let env = story();
    env.run(&["fsck"]).ok();
    let db = env.join(".hist/hist.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE change_log SET new = '\"enterprise\"' WHERE id = 2",
        [],
    )
    .unwrap();
    drop(conn);
    let out = env.run(&["fsck"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("transaction 2 does not match its hash"),
        "{}",
        out.stdout
    );
}

#[test]
fn repository_discovery_and_dash_c() {
    let env = story();
    std::fs::create_dir_all(env.join("a/b")).unwrap();
    let mut cmd = env.command(&["show", "customer/4411", "--json"]);
    cmd.current_dir(env.join("a/b"));
    assert_eq!(env.run_cmd(cmd, None).ok(), "{\"plan\":\"team\"}\n");
    let outside = TestEnv::new();
    let dir = env.path().to_str().unwrap();
    assert_eq!(
        outside
            .run(&["-C", dir, "show", "customer/4411", "--json"])
            .ok(),
        "{\"plan\":\"team\"}\n"
    );
    let err = outside.run(&["show", "customer/4411"]);
    assert!(err.fails(1).contains("not a hist repository"));
    assert!(env.run(&["init"]).fails(1).contains("already exists"));
    outside.run(&["init", "sub/dir"]).ok();
    assert!(outside.join("sub/dir/.hist/hist.db").is_file());
}

#[test]
fn many_writes_stay_consistent_with_checkpoints() {
    let env = TestEnv::init();
    for i in 0..150 {
        env.run(&["set", "k", "/n", &i.to_string(), "--actor", "user:sam"])
            .ok();
    }
    assert_eq!(
        env.run(&["show", "k", "@tx:37", "--path", "/n"]).ok(),
        "36\n"
    );
    assert_eq!(
        env.run(&["show", "k", "@tx:140", "--path", "/n"]).ok(),
        "139\n"
    );
    let ck = env.run(&["sql", "SELECT count(*) AS n FROM checks"]);
    assert_eq!(ck.ok(), "n\n0\n");
    let fsck = env.run(&["fsck"]);
    assert!(fsck.ok().contains("2 checkpoints"), "{}", fsck.stdout);
}

#[test]
fn writes_cannot_nest_deeper_than_parsing_allows() {
    let env = TestEnv::init();
    let deep: String = "/a".repeat(127);
    env.run(&["set", "k", &deep, "1", "--actor", "user:sam"])
        .ok();
    let before = env.db_dump();
    let err = env.run(&[
        "set",
        "k",
        &format!("{}/c/d", "/a".repeat(126)),
        "1",
        "--actor",
        "user:sam",
    ]);
    assert!(err.fails(2).contains("at most 127 steps"), "{}", err.stderr);
    let err = env.run(&[
        "set",
        "k",
        "/x",
        &format!("{}1{}", "[".repeat(127), "]".repeat(127)),
        "--actor",
        "user:sam",
    ]);
    assert!(err.fails(1).contains("levels deep"), "{}", err.stderr);
    assert_eq!(env.db_dump(), before);
    env.run(&["show", "k"]).ok();
    env.run(&["fsck"]).ok();
}
