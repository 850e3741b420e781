//! Snapshot ingest: unchanged detection, keyed arrays, sets, composite keys, root arrays,
//! refusals, import, and JSON Patch export checked by an independent RFC 6902 implementation.

use crate::common::TestEnv;
use serde_json::{Value, json};

const W: [&str; 2] = ["--actor", "poller:acme"];

fn ingest(env: &TestEnv, key: &str, doc: &Value) -> crate::common::Run {
    env.run_stdin(
        &[&["ingest", key, "-"][..], &W].concat(),
        doc.to_string().as_bytes(),
    )
}

fn rules(env: &TestEnv, args: &[&str]) {
    env.run(&[&["rules"][..], args, &["--actor", "user:sam"]].concat())
        .ok();
}

fn sql(env: &TestEnv, q: &str) -> String {
    env.run(&["sql", "--csv", q])
        .ok()
        .lines()
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_equal_snapshot_records_only_a_check() {
    let env = TestEnv::init();
    let doc = json!({"b": [1, 2], "a": {"x": 1.0}});
    ingest(&env, "feed/acme", &doc).ok();
    // Same content, other member order and number spelling: unchanged.
    let same = env.run_stdin(
        &[&["ingest", "feed/acme", "-"][..], &W].concat(),
        br#"{"a":{"x":1},"b":[1,2]}"#,
    );
    assert_eq!(same.ok(), "unchanged\n");
    assert_eq!(sql(&env, "SELECT count(*) FROM transactions"), "1");
    assert_eq!(
        sql(&env, "SELECT key, actor FROM checks"),
        "feed/acme,poller:acme"
    );
    let hash = env.run_stdin(&["canon", "--hash", "-"], doc.to_string().as_bytes());
    assert_eq!(sql(&env, "SELECT hash FROM checks"), hash.ok().trim());
}

#[test]
fn an_insert_at_the_top_of_a_keyed_list_is_one_add() {
    let env = TestEnv::init();
    rules(&env, &["array-key", "/items", "id"]);
    let items: Vec<Value> = (1..=1000)
        .map(|i| json!({"id": i, "price": i * 10}))
        .collect();
    ingest(&env, "feed", &json!({ "items": items })).ok();
    let mut more = vec![json!({"id": 0, "price": 5})];
    more.extend(items.iter().cloned());
    more[500]["price"] = json!(1);
    let out = ingest(&env, "feed", &json!({ "items": more }));
    assert_eq!(
        out.ok(),
        "+ /items[id=0]: {\"id\":0,\"price\":5}\n~ /items[id=500]/price: 5000 -> 1\nrecorded tx 3 (2 changes)\n"
    );
    // Order within a keyed array is not history.
    more.reverse();
    assert_eq!(
        ingest(&env, "feed", &json!({ "items": more })).ok(),
        "unchanged\n"
    );
    assert_eq!(
        env.run(&["show", "feed", "--path", "/items[id=500]/price"])
            .ok(),
        "1\n"
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn sets_ignore_order_and_record_element_changes() {
    let env = TestEnv::init();
    rules(&env, &["array-key", "/items", "id"]);
    rules(&env, &["set", "/items[*]/tags"]);
    ingest(
        &env,
        "f",
        &json!({"items": [{"id": 1, "tags": ["red", "big"]}]}),
    )
    .ok();
    assert_eq!(
        ingest(
            &env,
            "f",
            &json!({"items": [{"id": 1, "tags": ["big", "red"]}]})
        )
        .ok(),
        "unchanged\n"
    );
    let out = ingest(
        &env,
        "f",
        &json!({"items": [{"id": 1, "tags": ["big", "blue"]}]}),
    );
    // Element changes come in canonical element order.
    assert_eq!(
        out.ok(),
        "+ /items[id=1]/tags[=\"blue\"]: \"blue\"\n- /items[id=1]/tags[=\"red\"]: \"red\"\nrecorded tx 4 (2 changes)\n"
    );
    let h = env.run(&["history", "f", "/items[id=1]/tags[=\"red\"]"]);
    assert!(h.ok().contains("- \"red\""), "{}", h.stdout);
}

#[test]
fn composite_keys_and_root_arrays() {
    let env = TestEnv::init();
    rules(
        &env,
        &["array-key", "/prefixes", "ip_prefix,service,region"],
    );
    let p = |ip: &str, svc: &str, region: &str, n: i64| json!({"ip_prefix": ip, "service": svc, "region": region, "n": n});
    ingest(&env, "aws", &json!({"prefixes": [p("3.5.140.0/22", "EC2", "ap-northeast-2", 1), p("3.5.140.0/22", "S3", "ap-northeast-2", 1)]})).ok();
    let out = ingest(
        &env,
        "aws",
        &json!({"prefixes": [p("3.5.140.0/22", "EC2", "ap-northeast-2", 2), p("3.5.140.0/22", "S3", "ap-northeast-2", 1)]}),
    );
    assert_eq!(
        out.ok(),
        "~ /prefixes[ip_prefix=\"3.5.140.0/22\",service=\"EC2\",region=\"ap-northeast-2\"]/n: 1 -> 2\nrecorded tx 3 (1 change)\n"
    );
    // A document that is itself an array.
    env.run(&[
        "rules",
        "array-key",
        "\"\"",
        "id",
        "--keys",
        "list/*",
        "--actor",
        "user:sam",
    ])
    .ok();
    ingest(
        &env,
        "list/a",
        &json!([{"id": 42, "status": "open"}, {"id": 7, "status": "open"}]),
    )
    .ok();
    let out = ingest(
        &env,
        "list/a",
        &json!([{"id": 42, "status": "closed"}, {"id": 7, "status": "open"}]),
    );
    assert_eq!(
        out.ok(),
        "~ [id=42]/status: \"open\" -> \"closed\"\nrecorded tx 6 (1 change)\n"
    );
    assert_eq!(
        env.run(&["show", "list/a", "@tx:5", "--path", "[id=42]/status"])
            .ok(),
        "\"open\"\n"
    );
}

#[test]
fn missing_key_fields_count_as_null_and_duplicates_fall_back_to_opaque() {
    let env = TestEnv::init();
    rules(&env, &["array-key", "/items", "id"]);
    ingest(&env, "f", &json!({"items": [{"id": 1}, {"name": "no id"}]})).ok();
    let out = ingest(
        &env,
        "f",
        &json!({"items": [{"id": 1}, {"name": "still no id"}]}),
    );
    assert_eq!(
        out.ok(),
        "~ /items[id=null]/name: \"no id\" -> \"still no id\"\nrecorded tx 3 (1 change)\n"
    );
    // Two elements without an id: not unique, so the array is one value for this write.
    let out = ingest(
        &env,
        "f",
        &json!({"items": [{"id": 1}, {"name": "a"}, {"name": "b"}]}),
    );
    assert!(
        out.stderr
            .contains("hist: warning: f: the array at /items has elements with the same key (id)"),
        "{}",
        out.stderr
    );
    assert!(out.ok().starts_with("~ /items: "));
    assert_eq!(
        env.run(&["show", "f", "--json"]).ok(),
        "{\"items\":[{\"id\":1},{\"name\":\"a\"},{\"name\":\"b\"}]}\n"
    );
    // A key may change type: 123 and "123" are different elements.
    ingest(&env, "g", &json!({"items": [{"id": 123}]})).ok();
    let out = ingest(&env, "g", &json!({"items": [{"id": "123"}]}));
    assert_eq!(
        out.ok(),
        "+ /items[id=\"123\"]: {\"id\":\"123\"}\n- /items[id=123]: {\"id\":123}\nrecorded tx 6 (2 changes)\n"
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn invalid_json_is_refused_with_its_position() {
    let env = TestEnv::init();
    ingest(&env, "k", &json!({"a": 1})).ok();
    let before = env.db_dump();
    let out = env.run_stdin(
        &[&["ingest", "k", "-"][..], &W].concat(),
        b"{\"a\": 1,\n \"b\": }",
    );
    let err = out.fails(1);
    assert!(err.contains("line 2, column"), "{err}");
    env.write("dup.json", r#"{"a": 1, "a": 2}"#);
    let err = env.run(&[&["ingest", "k", "dup.json"][..], &W].concat());
    assert!(err.fails(1).contains("\"a\""), "{}", err.stderr);
    assert_eq!(env.db_dump(), before);
}

#[test]
fn large_values_are_stored_once_as_objects() {
    let env = TestEnv::init();
    let big: Vec<Value> = (0..20_000)
        .map(|i| json!(format!("entry number {i}")))
        .collect();
    ingest(&env, "k", &json!({"big": big, "v": 1})).ok();
    let mut big2 = big.clone();
    big2.push(json!("one more"));
    // The summary a write prints cuts long values and says how long they are.
    let run = ingest(&env, "k", &json!({"big": big2, "v": 1}));
    let line = run.ok().lines().next().unwrap_or_default();
    assert!(
        line.starts_with("~ /big: [\"entry number 0\",\"entry"),
        "{line}"
    );
    assert!(
        line.contains("… (408891 bytes) -> [\"entry number 0\""),
        "{line}"
    );
    assert!(line.ends_with("… (408902 bytes)"), "{line}");
    assert!(line.len() < 300, "{line}");
    ingest(&env, "k", &json!({"big": big, "v": 1})).ok();
    // The array is opaque: each change replaces it whole, but rows reference objects, and
    // the new value of one change is the old value of the next: the same object.
    assert_eq!(
        sql(
            &env,
            "SELECT count(*) FROM change_log WHERE length(coalesce(old, '')) + length(coalesce(new, '')) > 4096"
        ),
        "0"
    );
    assert_eq!(
        sql(
            &env,
            "SELECT count(DISTINCT new_obj) FROM change_log WHERE new_obj IS NOT NULL"
        ),
        "3"
    );
    assert_eq!(
        sql(
            &env,
            "SELECT count(*) FROM change_log a JOIN change_log b ON b.seq = a.seq + 1 AND b.key_id = a.key_id WHERE a.new_obj = b.old_obj"
        ),
        "1"
    );
    assert_eq!(
        env.run(&["show", "k", "@tx:2", "--path", "/big"])
            .ok()
            .lines()
            .count(),
        20_003
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn import_batches_snapshots_and_stops_at_a_bad_record() {
    let env = TestEnv::init();
    let mut lines = String::new();
    for day in 1..=9 {
        let doc = json!({"price": day / 3});
        lines.push_str(&json!({"key": "feed/a", "at": format!("2026-09-0{day}T00:00:00Z"), "actor": "poller:a", "doc": doc}).to_string());
        lines.push('\n');
    }
    let out = env.run_stdin(&["import", "-"], lines.as_bytes());
    assert_eq!(
        out.ok(),
        "imported 9 snapshots: 4 changed (4 changes), 5 unchanged\n"
    );
    assert_eq!(
        env.run(&["show", "feed/a", "@2026-09-05", "--json"]).ok(),
        "{\"price\":1}\n"
    );
    let bad = "{\"key\":\"feed/b\",\"actor\":\"poller:a\",\"doc\":1}\n{\"key\":\"feed/b\",\"actor\":\"nobody\",\"doc\":2}\n{\"key\":\"feed/b\",\"actor\":\"poller:a\",\"doc\":3}\n";
    let out = env.run_stdin(&["import", "-"], bad.as_bytes());
    let err = out.fails(1);
    assert!(
        err.contains("standard input line 2: actor \"nobody\""),
        "{err}"
    );
    assert!(
        err.contains("recorded before it: 1 snapshots: 1 changed"),
        "{err}"
    );
    assert_eq!(env.run(&["show", "feed/b"]).ok(), "1\n");
    env.run(&["fsck"]).ok();
}

/// Applies an RFC 6902 patch with an independent implementation (the json-patch crate).
fn apply_patch(doc: &Value, patch: &str) -> Value {
    let patch: json_patch::Patch = serde_json::from_str(patch).unwrap();
    let mut doc = doc.clone();
    json_patch::patch(&mut doc, &patch).unwrap();
    doc
}

#[test]
fn json_patch_export_turns_a_into_b() {
    let env = TestEnv::init();
    rules(&env, &["array-key", "/items", "id"]);
    rules(&env, &["set", "/items[*]/tags"]);
    let versions = [
        json!({"items": [{"id": 5, "tags": ["a"]}, {"id": 2, "tags": []}], "v": 1}),
        json!({"items": [{"id": 1, "tags": ["z", "a"]}, {"id": 5, "tags": ["b", "a"]}, {"id": 9, "tags": []}], "v": 2}),
        json!({"items": [{"id": 9, "tags": ["q"]}], "w": [1, 2]}),
        json!({"items": [{"id": 3, "tags": []}, {"id": 9, "tags": ["q", "r"]}, {"id": 4, "tags": []}]}),
    ];
    for v in &versions {
        ingest(&env, "k", v).ok();
    }
    // Transactions 3..=6 hold the versions (1 and 2 declared the rules).
    for a in 3..=6 {
        for b in 3..=6 {
            let at = |tx: i64| -> Value {
                serde_json::from_str(
                    &env.run(&["show", "k", &format!("@tx:{tx}"), "--json"])
                        .stdout,
                )
                .unwrap()
            };
            let patch = env.run(&[
                "diff",
                "k",
                &format!("@tx:{a}"),
                &format!("@tx:{b}"),
                "--format",
                "json-patch",
            ]);
            assert_eq!(
                apply_patch(&at(a), patch.ok()),
                at(b),
                "diff @tx:{a} @tx:{b}"
            );
        }
    }
}

#[test]
fn rules_are_listed_logged_and_removable() {
    let env = TestEnv::init();
    rules(&env, &["array-key", "/items", "id", "--keys", "feed/*"]);
    rules(&env, &["set", "/items[*]/tags"]);
    assert_eq!(
        env.run(&["rules"]).ok(),
        "   1  array-key /items id --keys feed/*\n   2  set /items[*]/tags\n"
    );
    let log = env.run(&["log", "--oneline"]);
    assert_eq!(
        log.ok(),
        "2 2026-01-01 user:sam (0 changes)\n1 2026-01-01 user:sam (0 changes)\n"
    );
    assert_eq!(sql(&env, "SELECT kind FROM transactions"), "rules\nrules");
    let out = env.run(&["rules", "rm", "1", "--actor", "user:sam"]);
    assert_eq!(out.ok(), "removed rule 1 (tx 3)\n");
    assert_eq!(
        env.run(&["rules", "--json"]).ok(),
        "{\"id\":2,\"keys\":null,\"kind\":\"set\",\"pattern\":\"/items[*]/tags\",\"spec\":{},\"tx\":2}\n"
    );
    // Refusals write nothing.
    let before = env.db_dump();
    env.run(&["rules", "rm", "1", "--actor", "user:sam"])
        .fails(1);
    env.run(&["rules", "array-key", "/items", "id"]).fails(2);
    env.run(&[
        "rules",
        "array-key",
        "/items[id=1]",
        "id",
        "--actor",
        "user:sam",
    ])
    .fails(2);
    env.run(&[
        "rules",
        "array-key",
        "/items",
        "a,,b",
        "--actor",
        "user:sam",
    ])
    .fails(2);
    assert_eq!(env.db_dump(), before);
    env.run(&["fsck"]).ok();
}

#[test]
fn json_output_of_a_write_is_the_exported_record() {
    let env = TestEnv::init();
    let first = env.run_stdin(
        &[&["ingest", "k", "-", "--json", "-m", "first"][..], &W].concat(),
        "{\"b\":[1,2.50],\"a\":{\"\u{e9}\":\"x\\u0001\"}}".as_bytes(),
    );
    assert_eq!(
        first.ok().split_once(",\"key\"").map(|(_, rest)| rest),
        Some(
            ":\"k\",\"new\":{\"a\":{\"\u{e9}\":\"x\\u0001\"},\"b\":[1,2.5]},\"op\":\"add\",\"path\":\"\",\"reason\":\"first\",\"tx\":1}\n"
        )
    );
    let second = env.run(&[&["set", "k", "/b", "[3]", "--json"][..], &W].concat());
    let written: Vec<String> = [first.ok(), second.ok()]
        .concat()
        .lines()
        .map(str::to_owned)
        .collect();
    let exported: Vec<String> = env
        .run(&["export"])
        .ok()
        .lines()
        .map(|line| {
            let mut record = hist::canon::parse_str(line).unwrap();
            record.as_object_mut().unwrap().remove("kind");
            hist::canon::to_canonical_string(&record)
        })
        .collect();
    assert_eq!(written, exported);
}

#[test]
fn a_byte_identical_snapshot_is_unchanged_until_the_document_or_its_rules_change() {
    let env = TestEnv::init();
    let a: &[u8] = br#"{"items":[{"id":2,"p":1},{"id":1,"p":2}],"n":"x"}"#;
    let ingest_a = || env.run_stdin(&[&["ingest", "k", "-"][..], &W].concat(), a);
    // What the current document was written from, if a snapshot's bytes.
    let input = || -> Option<Vec<u8>> {
        let db = rusqlite::Connection::open(env.join(".hist/hist.db")).unwrap();
        db.query_row("SELECT input FROM doc WHERE key = 'k'", [], |r| r.get(0))
            .unwrap()
    };
    ingest_a().ok();
    assert_eq!(input().map(|i| i.len()), Some(32));
    assert_eq!(ingest_a().ok(), "unchanged\n");
    // The check names the canonical hash, as for any unchanged snapshot.
    let hash = env.run_stdin(&["canon", "--hash", "-"], a);
    assert_eq!(sql(&env, "SELECT hash FROM checks"), hash.ok().trim());
    // A field write changes the document: the same bytes again are a change back.
    env.run(&[&["set", "k", "/n", "\"y\""][..], &W].concat())
        .ok();
    assert_eq!(input(), None);
    assert_eq!(
        ingest_a().ok(),
        "~ /n: \"y\" -> \"x\"\nrecorded tx 3 (1 change)\n"
    );
    assert_eq!(ingest_a().ok(), "unchanged\n");
    // A rule changes what the bytes mean: they are diffed again under it.
    rules(&env, &["array-key", "/items", "id"]);
    assert_eq!(
        ingest_a().ok(),
        "~ /items: [{\"id\":2,\"p\":1},{\"id\":1,\"p\":2}] -> [{\"id\":1,\"p\":2},{\"id\":2,\"p\":1}]\nrecorded tx 5 (1 change)\n"
    );
    assert_eq!(ingest_a().ok(), "unchanged\n");
    // One import of another version and the first again records both.
    let record = |at: &str, doc: &str| {
        format!("{{\"key\":\"k\",\"at\":\"{at}\",\"actor\":\"p:a\",\"doc\":{doc}}}\n")
    };
    let a_text = std::str::from_utf8(a).unwrap();
    let lines = [
        record("2030-01-01", r#"{"items":[],"n":"z"}"#),
        record("2030-01-02", a_text),
    ]
    .concat();
    assert_eq!(
        env.run_stdin(&["import", "-"], lines.as_bytes()).ok(),
        "imported 2 snapshots: 2 changed (6 changes), 0 unchanged\n"
    );
    assert_eq!(ingest_a().ok(), "unchanged\n");
    env.run(&["fsck"]).ok();
}

/// A member of an import record that is `null` counts as absent, as it always has: no "at"
/// means now, and a `null` document is no document.
#[test]
fn import_reads_null_members_as_absent() {
    let env = TestEnv::init();
    let lines = concat!(
        r#"{"key":"a","actor":"poller:a","at":null,"reason":null,"doc":{"x":1}}"#,
        "\n",
        r#"{"key":"b","actor":"poller:a","doc":null}"#,
        "\n",
    );
    let err = env
        .run_stdin(&["import", "-"], lines.as_bytes())
        .fails(1)
        .to_owned();
    assert!(err.contains("standard input line 2: no \"doc\""), "{err}");
    assert_eq!(env.run(&["show", "a", "--json"]).ok(), "{\"x\":1}\n");
}

/// A poller: `hist ingest KEY - --exit-code --quiet || notify`. 1 when the snapshot
/// changed the document, 0 when not, 2 on an error (never 1), nothing on stdout.
#[test]
fn ingest_exit_code_tells_a_poller_what_changed() {
    let env = TestEnv::init();
    let args = [
        &["ingest", "feed/acme", "-", "--exit-code", "--quiet"][..],
        &W,
    ]
    .concat();
    let first = env.run_stdin(&args, br#"{"price": 1}"#);
    assert_eq!((first.code, first.stdout.as_str()), (1, ""), "{first:?}");
    let same = env.run_stdin(&args, br#"{"price": 1}"#);
    assert_eq!((same.code, same.stdout.as_str()), (0, ""), "{same:?}");
    let bad = env.run_stdin(&args, b"{not json");
    assert!(bad.fails(2).contains("is not valid JSON"), "{bad:?}");
    // --exit-code alone prints what it always prints.
    let args = [&["ingest", "feed/acme", "-", "--exit-code"][..], &W].concat();
    let changed = env.run_stdin(&args, br#"{"price": 2}"#);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert!(changed.stdout.contains("~ /price: 1 -> 2"), "{changed:?}");
    // Without the flag, a change exits 0 and a failure 1, as before.
    let args = [&["ingest", "feed/acme", "-"][..], &W].concat();
    env.run_stdin(&args, br#"{"price": 3}"#).ok();
    env.run_stdin(&args, b"{not json").fails(1);
}

/// `hist import` reads its input as it goes: the records before a line that is not UTF-8
/// are recorded (it used to read the whole input first and refuse all of it).
#[test]
fn import_streams_and_stops_at_the_line_it_cannot_read() {
    let env = TestEnv::init();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"key\":\"feed/a\",\"actor\":\"poller:a\",\"doc\":{\"v\":1}}\r\n");
    input.extend_from_slice(b"\n{\"key\":\"feed/b\",\"actor\":\"poller:a\",\"doc\":{\"v\":2}}\n");
    input.extend_from_slice(b"{\"key\":\"feed/c\",\"actor\":\"poller:a\",\"doc\":\"\xff\"}\n");
    input.extend_from_slice(b"{\"key\":\"feed/d\",\"actor\":\"poller:a\",\"doc\":{\"v\":4}}\n");
    let out = env.run_stdin(&["import", "-"], &input);
    let err = out.fails(1);
    assert!(
        err.contains("standard input line 4: the line is not UTF-8 text"),
        "{err}"
    );
    assert!(err.contains("recorded before it: 2 snapshots"), "{err}");
    assert_eq!(env.run(&["show", "feed/b", "--json"]).ok(), "{\"v\":2}\n");
    env.run(&["show", "feed/d"]).fails(1);
    // A file, read the same way.
    env.write(
        "more.ndjson",
        "{\"key\":\"feed/e\",\"actor\":\"poller:a\",\"doc\":5}\n",
    );
    assert_eq!(
        env.run(&["import", "more.ndjson"]).ok(),
        "imported 1 snapshots: 1 changed (1 changes), 0 unchanged\n"
    );
}
