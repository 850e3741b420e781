//! `hist rules retention` and `hist gc`: plans, dry runs, the logged compaction, flagged
//! reads, the object sweep, refusals and crash safety.

use crate::common::{TestEnv, copy_dir};
use std::path::Path;

fn run_ok(env: &TestEnv, args: &[&str]) -> String {
    env.run(args).ok().to_owned()
}

/// Prices of two items changing three times a day on 2025-06-01 and 06-02 and once on
/// 06-03; item 1's name twice on 06-01. Prices are kept 90 days then daily; names forever.
/// Transactions: 1-3 rules, 4 the first snapshot, 5-20 the writes (see the comments).
fn feed() -> TestEnv {
    let env = TestEnv::init();
    let sam = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--actor", "user:sam"]);
        run_ok(&env, &all)
    };
    sam(&["rules", "array-key", "/items", "id", "--at", "@2025-01-01"]);
    assert_eq!(
        sam(&[
            "rules",
            "retention",
            "/items[*]/price",
            "--keep",
            "90d",
            "--then",
            "daily",
            "--at",
            "@2025-01-01"
        ]),
        "added rule: retention /items[*]/price --keep 90d --then daily (tx 2)\n"
    );
    sam(&[
        "rules",
        "retention",
        "/items[*]/name",
        "--forever",
        "--at",
        "@2025-01-01",
    ]);
    env.write(
        "feed.json",
        r#"{"items": [{"id": 1, "name": "a", "price": 10}, {"id": 2, "name": "b", "price": 20}]}"#,
    );
    sam(&["ingest", "feed/a", "feed.json", "--at", "@2025-05-31"]);
    let set = |path: &str, value: &str, at: &str| {
        sam(&["set", "feed/a", path, value, "--at", at]);
    };
    for (day, prices) in [("01", [11, 12, 13]), ("02", [14, 15, 16])] {
        for (i, hour) in ["01", "07", "13"].iter().enumerate() {
            let p1 = prices[i].to_string();
            let p2 = (prices[i] + 10).to_string();
            set(
                "/items[id=1]/price",
                &p1,
                &format!("@2025-06-{day}T{hour}:00:00Z"),
            );
            set(
                "/items[id=2]/price",
                &p2,
                &format!("@2025-06-{day}T{hour}:30:00Z"),
            );
            if day == "01" && i < 2 {
                let name = format!("\"a{i}\"");
                set(
                    "/items[id=1]/name",
                    &name,
                    &format!("@2025-06-01T{hour}:45:00Z"),
                );
            }
        }
    }
    set("/items[id=1]/price", "17", "@2025-06-03T01:00:00Z");
    set("/items[id=2]/price", "27", "@2025-06-03T01:30:00Z");
    env
}

const PLAN: &str = "\
feed/a  /items[id=1]/price  daily  6 changes -> 2  2025-06-01T01:00:00Z .. 2025-06-02T13:00:00Z
feed/a  /items[id=2]/price  daily  6 changes -> 2  2025-06-01T01:30:00Z .. 2025-06-02T13:30:00Z
";

/// Everything in the database and the object store, for "nothing was written" checks.
fn everything(env: &TestEnv) -> String {
    let mut out = env.db_dump();
    for query in [
        "SELECT * FROM changes ORDER BY id",
        "SELECT * FROM transactions ORDER BY id",
        "SELECT * FROM compactions",
    ] {
        out.push_str(&run_ok(env, &["sql", query]));
    }
    let mut files = Vec::new();
    list(&env.join(".hist/objects"), &mut files);
    files.sort();
    out + &files.join("\n")
}

fn list(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            list(&entry.path(), out);
        } else {
            out.push(entry.path().display().to_string());
        }
    }
}

#[test]
fn dry_run_then_gc() {
    let env = feed();
    let before = everything(&env);
    let history_before = run_ok(&env, &["history", "feed/a", "/items[id=1]/price"]);
    assert_eq!(
        run_ok(&env, &["gc", "--dry-run"]),
        format!(
            "{PLAN}would compact 12 changes into 4 on 2 paths of 1 document (dry run: nothing written)\n"
        )
    );
    assert_eq!(everything(&env), before);
    let dry_json = run_ok(&env, &["gc", "--dry-run", "--json"]);
    assert_eq!(dry_json.lines().count(), 3);
    assert!(dry_json.lines().next().unwrap().contains("\"replaced\":6"));

    let gc = env.run(&["gc", "--actor", "job:gc"]);
    assert_eq!(
        gc.ok(),
        format!("{PLAN}compacted 12 changes into 4 on 2 paths of 1 document (tx 21)\n")
    );
    assert!(gc.stderr.starts_with("freed "), "{}", gc.stderr);
    assert!(run_ok(&env, &["fsck"]).ends_with(": ok\n"));
    assert_eq!(
        run_ok(&env, &["log", "-n", "1"]),
        "tx 21  2026-01-01T00:00:32Z  job:gc  compact (0 changes)\n    retention: 12 changes compacted into 4\n\n"
    );
    assert_eq!(
        run_ok(
            &env,
            &[
                "sql",
                "SELECT tx, key, path, mode, replaced, kept FROM compactions ORDER BY path",
                "--csv"
            ]
        ),
        "tx,key,path,mode,replaced,kept\n\
         21,feed/a,/items[id=1]/price,daily,6,2\n\
         21,feed/a,/items[id=2]/price,daily,6,2\n"
    );
    // History: one change per day before the window, flagged; the rest as it was.
    assert_eq!(
        run_ok(&env, &["history", "feed/a", "/items[id=1]/price"]),
        "tx 4  2025-05-31T00:00:00Z  user:sam  + 10\n\
         tx 11  2025-06-01T13:00:00Z  user:sam  ~ 10 -> 13  [compacted]\n\
         tx 17  2025-06-02T13:00:00Z  user:sam  ~ 13 -> 16  [compacted]\n\
         tx 19  2025-06-03T01:00:00Z  user:sam  ~ 16 -> 17\n"
    );
    assert_eq!(history_before.lines().count(), 8);
    let json = run_ok(&env, &["history", "feed/a", "/items[id=1]/price", "--json"]);
    let flags: Vec<bool> = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["compacted"] == true)
        .collect();
    assert_eq!(flags, [false, true, true, false]);
    // Names are untouched.
    assert_eq!(
        run_ok(&env, &["history", "feed/a", "/items[id=1]/name"]),
        "tx 4  2025-05-31T00:00:00Z  user:sam  + \"a\"\n\
         tx 7  2025-06-01T01:45:00Z  user:sam  ~ \"a\" -> \"a0\"\n\
         tx 10  2025-06-01T07:45:00Z  user:sam  ~ \"a0\" -> \"a1\"\n"
    );
    // A read inside the span shows the compacted value and says so; after it, none.
    let inside = env.run(&[
        "show",
        "feed/a",
        "@2025-06-01T12:00:00Z",
        "--path",
        "/items[id=1]/price",
    ]);
    assert_eq!(inside.ok(), "10\n");
    assert_eq!(
        inside.stderr,
        "note: this read of feed/a falls in history compacted by gc: /items[id=1]/price kept one change per day from 2025-06-01 to 2025-06-02; the values shown there are the compacted ones\n"
    );
    let name = env.run(&[
        "show",
        "feed/a",
        "@2025-06-01T12:00:00Z",
        "--path",
        "/items[id=1]/name",
    ]);
    assert_eq!(name.ok(), "\"a1\"\n");
    assert_eq!(name.stderr, "");
    let after = env.run(&["show", "feed/a", "@2025-06-02T23:00:00Z", "--json"]);
    assert_eq!(
        after.ok(),
        "{\"items\":[{\"id\":1,\"name\":\"a1\",\"price\":16},{\"id\":2,\"name\":\"b\",\"price\":26}]}\n"
    );
    assert_eq!(after.stderr, "");
    // Nothing left to do.
    let again = env.run(&["gc", "--actor", "job:gc"]);
    assert_eq!(again.ok(), "nothing to compact\n");
    assert!(again.stderr.starts_with("freed "), "{}", again.stderr);
}

#[test]
fn refusals_write_nothing() {
    let env = feed();
    let before = everything(&env);
    let err = env.run(&["gc"]);
    assert!(err.fails(2).contains("no actor given"));
    let err = env.run(&[
        "rules",
        "retention",
        "/x",
        "--keep",
        "90",
        "--actor",
        "user:sam",
    ]);
    assert!(
        err.fails(2).contains("\"90\" is not a duration"),
        "{}",
        err.stderr
    );
    let err = env.run(&[
        "rules",
        "retention",
        "/x",
        "--then",
        "daily",
        "--actor",
        "user:sam",
    ]);
    err.fails(2);
    let err = env.run(&[
        "rules",
        "retention",
        "/x",
        "--forever",
        "--keep",
        "1d",
        "--actor",
        "user:sam",
    ]);
    err.fails(2);
    let err = env.run(&[
        "rules",
        "retention",
        "/x",
        "--keep",
        "1d",
        "--then",
        "weekly",
        "--actor",
        "user:sam",
    ]);
    err.fails(2);
    assert_eq!(everything(&env), before);
    assert_eq!(
        run_ok(&env, &["rules"]),
        concat!(
            "   1  array-key /items id\n",
            "   2  retention /items[*]/price --keep 90d --then daily\n",
            "   3  retention /items[*]/name --forever\n"
        )
    );
}

#[test]
fn gc_deletes_unreferenced_objects_and_temp_files_only() {
    let env = TestEnv::init();
    // A large value is stored as an object; once the bytes of the changes outweigh the
    // document, a checkpoint object. Too few changes for gc to seal them into a segment
    // (which would hold the large value itself, its object then unreferenced).
    let big = format!("\"{}\"", "x".repeat(5000));
    run_ok(&env, &["set", "doc", "/big", &big, "--actor", "user:sam"]);
    for i in 0..40 {
        run_ok(
            &env,
            &["set", "doc", "/n", &i.to_string(), "--actor", "user:sam"],
        );
    }
    let mut objects = Vec::new();
    list(&env.join(".hist/objects"), &mut objects);
    assert!(objects.len() >= 2, "{objects:?}");
    env.write(".hist/objects/.tmp-crashed", "half an object");
    let orphan = format!(".hist/objects/ab/{}", "c".repeat(62));
    env.write(&orphan, "an object no row names");
    let gc = env.run(&["gc", "--actor", "job:gc"]);
    assert_eq!(gc.ok(), "nothing to compact\n");
    assert!(
        gc.stderr
            .ends_with(", 1 object and 1 temporary file removed\n"),
        "{}",
        gc.stderr
    );
    assert!(!env.join(&orphan).exists());
    assert!(!env.join(".hist/objects/.tmp-crashed").exists());
    let mut left = Vec::new();
    list(&env.join(".hist/objects"), &mut left);
    left.sort();
    objects.sort();
    assert_eq!(left, objects);
    assert!(run_ok(&env, &["fsck"]).ends_with(": ok\n"));
    let json = run_ok(&env, &["gc", "--actor", "job:gc", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(summary["summary"], true);
    assert_eq!(summary["objects_removed"], 0);
    assert_eq!(summary["tx"], serde_json::Value::Null);
}

/// `kill -9` at various moments of a gc leaves a repository that fsck accepts, holding
/// either the whole compaction or none of it.
#[test]
fn gc_killed_at_any_moment_leaves_all_or_nothing() {
    let source = TestEnv::init();
    run_ok(
        &source,
        &[
            "rules",
            "retention",
            "/p",
            "--keep",
            "1d",
            "--then",
            "hourly",
            "--actor",
            "user:sam",
            "--at",
            "@2025-01-01",
        ],
    );
    let mut records = String::new();
    for i in 0..400 {
        let at = format!(
            "2025-02-{:02}T{:02}:{:02}:00Z",
            1 + i / 96,
            (i / 4) % 24,
            (i % 4) * 15
        );
        records.push_str(&format!(
            "{{\"key\": \"k{}\", \"at\": \"{at}\", \"actor\": \"poller:p\", \"doc\": {{\"p\": {i}, \"q\": {}}}}}\n",
            i % 3,
            i / 10
        ));
    }
    source.write("records.ndjson", &records);
    run_ok(&source, &["import", "records.ndjson"]);
    let changes = "SELECT count(*) FROM changes";
    let total = run_ok(&source, &["sql", changes]);
    let (mut complete, mut untouched) = (0, 0);
    for delay_ms in [0, 5, 15, 30, 60, 120, 250, 500] {
        let env = TestEnv::new();
        copy_dir(&source.join(".hist"), &env.join(".hist"));
        let mut child = env
            .command(&["gc", "--actor", "job:gc"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let fsck = env.run(&["fsck"]);
        assert_eq!(
            fsck.code, 0,
            "after a kill at {delay_ms} ms: {}",
            fsck.stdout
        );
        let kinds = run_ok(
            &env,
            &[
                "sql",
                "SELECT count(*) FROM transactions WHERE kind = 'compact'",
            ],
        );
        if kinds.ends_with("1\n") {
            complete += 1;
            assert_ne!(run_ok(&env, &["sql", changes]), total);
            let more = "SELECT count(*) FROM changes WHERE path = '/p' GROUP BY key, substr(at, 1, 13) HAVING count(*) > 1";
            assert_eq!(
                run_ok(&env, &["sql", more]).lines().count(),
                1,
                "only the header"
            );
        } else {
            untouched += 1;
            assert_eq!(run_ok(&env, &["sql", changes]), total);
        }
    }
    eprintln!("COVER complete {complete} untouched {untouched}");
    assert_eq!(complete + untouched, 8);
}

#[test]
fn blame_says_where_a_leaf_was_compacted() {
    let env = feed();
    let at = "@2025-06-02T20:00:00Z";
    let before = run_ok(&env, &["blame", "feed/a", at, "--json"]);
    assert!(!before.contains("compacted"));
    env.run(&["gc", "--actor", "job:gc"]).ok();
    let out = env.run(&["blame", "feed/a", at, "--json"]);
    let leaves: Vec<serde_json::Value> = out
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let flagged: Vec<&str> = leaves
        .iter()
        .filter(|l| l["compacted"] == true)
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    // As of the end of the second day, both prices were last set by a compacted change;
    // names are kept forever and never flagged.
    assert_eq!(flagged, ["/items[id=1]/price", "/items[id=2]/price"]);
    let human = env.run(&["blame", "feed/a", at]);
    assert!(human.ok().contains("price"));
    assert!(
        human
            .stderr
            .contains("2 leaves were last set in history that gc compacted"),
        "{}",
        human.stderr
    );
    // Today's prices were set after the compacted span: not flagged.
    assert!(!run_ok(&env, &["blame", "feed/a", "--json"]).contains("compacted"));
}

/// A gc that committed its rewritten chain but died before updating `.hist/HEAD` leaves
/// `HEAD` naming a transaction whose hash changed; the pending head it wrote before its
/// commit vouches for the log. Without it, the same state is reported as a rewritten log.
#[test]
fn a_gc_stopped_before_updating_head_is_not_taken_for_tampering() {
    let env = feed();
    let head_before = std::fs::read_to_string(env.join(".hist/HEAD")).unwrap();
    run_ok(&env, &["gc", "--actor", "job:gc"]);
    let head_after = std::fs::read_to_string(env.join(".hist/HEAD")).unwrap();
    assert!(head_after.starts_with("tx 21 "), "{head_after}");
    assert!(!env.join(".hist/HEAD.pending").exists());

    // The state a kill between the SQLite commit and the HEAD update leaves.
    std::fs::write(env.join(".hist/HEAD"), &head_before).unwrap();
    std::fs::write(env.join(".hist/HEAD.pending"), &head_after).unwrap();
    assert!(run_ok(&env, &["fsck"]).ends_with(": ok\n"));

    // Without the pending head, the rewritten chain is reported.
    std::fs::remove_file(env.join(".hist/HEAD.pending")).unwrap();
    let fsck = env.run(&["fsck"]);
    assert_eq!(fsck.code, 1, "{}", fsck.stdout);
    assert!(
        fsck.stdout.contains("is not the one that was committed"),
        "{}",
        fsck.stdout
    );
    // A pending head that the log does not hold vouches for nothing.
    std::fs::write(
        env.join(".hist/HEAD.pending"),
        "tx 21 ".to_owned() + &"0".repeat(64),
    )
    .unwrap();
    assert_eq!(env.run(&["fsck"]).code, 1);
}
