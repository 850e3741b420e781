//! `hist blame`: the gutter, --json, @WHEN, --path, refusals.

use crate::common::TestEnv;

fn customer() -> TestEnv {
    let env = TestEnv::init();
    let w = |args: &[&str]| env.run(args).ok().to_owned();
    w(&[
        "set",
        "customer/4411",
        "",
        r#"{"plan": "starter", "email": "ops@example.com", "billing": {"seats": 3, "tags": []}}"#,
        "--actor",
        "user:sam",
        "--at",
        "@2026-01-10",
    ]);
    w(&[
        "set",
        "customer/4411",
        "/plan",
        "\"pro\"",
        "--actor",
        "user:sam",
        "--at",
        "@2026-03-02T10:14:00Z",
    ]);
    w(&[
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
    ]);
    w(&[
        "set",
        "customer/4411",
        "/billing/seats",
        "12",
        "--actor",
        "job:seat-sync",
        "--at",
        "@2026-09-01",
    ]);
    env
}

#[test]
fn blame_shows_the_document_with_a_gutter() {
    let env = customer();
    assert_eq!(
        env.run(&["blame", "customer/4411"]).ok(),
        r#"                             {
                               "billing": {
4 (job:seat-sync 2026-09-01)     "seats": 12,
1 (user:sam      2026-01-10)     "tags": []
                               },
1 (user:sam      2026-01-10)   "email": "ops@example.com",
3 (user:maria    2026-08-19)   "plan": "team"
                             }
"#
    );
    // As of a past moment, and a subtree.
    assert_eq!(
        env.run(&["blame", "customer/4411", "@2026-05-01", "--path", "/plan"])
            .ok(),
        "2 (user:sam 2026-03-02) \"pro\"\n"
    );
    // Without the gutter, the text is exactly what `show` prints.
    let shown = env.run(&["show", "customer/4411"]);
    let blamed = env.run(&["blame", "customer/4411"]);
    let stripped: Vec<&str> = blamed
        .ok()
        .lines()
        .map(|l| l.get(29..).unwrap_or(""))
        .collect();
    assert_eq!(stripped.join("\n") + "\n", shown.ok());
}

#[test]
fn blame_json_is_one_record_per_leaf() {
    let env = customer();
    let out = env.run(&["blame", "customer/4411", "--json"]);
    assert_eq!(
        out.ok(),
        concat!(
            r#"{"actor":"job:seat-sync","at":"2026-09-01T00:00:00.000000Z","change_path":"/billing/seats","key":"customer/4411","op":"replace","path":"/billing/seats","reason":null,"tx":4,"value":12}"#,
            "\n",
            r#"{"actor":"user:sam","at":"2026-01-10T00:00:00.000000Z","change_path":"","key":"customer/4411","op":"add","path":"/billing/tags","reason":null,"tx":1,"value":[]}"#,
            "\n",
            r#"{"actor":"user:sam","at":"2026-01-10T00:00:00.000000Z","change_path":"","key":"customer/4411","op":"add","path":"/email","reason":null,"tx":1,"value":"ops@example.com"}"#,
            "\n",
            r#"{"actor":"user:maria","at":"2026-08-19T16:40:00.000000Z","change_path":"/plan","key":"customer/4411","op":"replace","path":"/plan","reason":"ticket 1182","tx":3,"value":"team"}"#,
            "\n",
        )
    );
}

#[test]
fn blame_walks_keyed_arrays_and_sets() {
    let env = TestEnv::init();
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/docs");
    let v1 = docs.join("feed-v1.json");
    let v2 = docs.join("feed-v2.json");
    let w = ["--actor", "poller:acme"];
    env.run(&[&["rules", "array-key", "/items", "id"][..], &w].concat())
        .ok();
    env.run(&[&["rules", "set", "/items[*]/tags"][..], &w].concat())
        .ok();
    let at = |day: &'static str| ["--at", day];
    env.run(
        &[
            &["ingest", "feed/acme", v1.to_str().unwrap()][..],
            &w,
            &at("@2026-09-01"),
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &["ingest", "feed/acme", v2.to_str().unwrap()][..],
            &w,
            &at("@2026-09-03"),
        ]
        .concat(),
    )
    .ok();
    let out = env.run(&["blame", "feed/acme", "--path", "/items[id=1]"]);
    assert_eq!(
        out.ok(),
        r#"                           {
3 (poller:acme 2026-09-01)   "id": 1,
3 (poller:acme 2026-09-01)   "name": "Anvil",
4 (poller:acme 2026-09-03)   "price": 99.5,
                             "tags": [
3 (poller:acme 2026-09-01)     "heavy",
3 (poller:acme 2026-09-01)     "iron"
                             ]
                           }
"#
    );
}

#[test]
fn blame_refusals() {
    let env = customer();
    let before = env.db_dump();
    let err = env.run(&["blame", "customer/9"]);
    let msg = err.fails(1);
    assert!(
        msg.starts_with("hist: error: customer/9 does not exist now\nHint: "),
        "{msg}"
    );
    let err = env.run(&["blame", "customer/4411", "@2025-01-01"]);
    assert!(
        err.fails(1)
            .contains("customer/4411 does not exist at @2025-01-01T00:00:00.000000Z")
    );
    let err = env.run(&["blame", "customer/4411", "--path", "/nope"]);
    assert_eq!(
        err.fails(1),
        "hist: error: customer/4411 has nothing at /nope now\n"
    );
    env.run(&["blame", "customer/4411", "--path", "nope"])
        .fails(2);
    env.run(&["blame", "customer/4411", "next bananas"])
        .fails(2);
    assert_eq!(env.db_dump(), before);
}
