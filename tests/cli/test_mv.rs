//! `hist mv`: renames recorded in the log, followed by history, show and later ingests.

use crate::common::TestEnv;

fn sam(env: &TestEnv, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--actor", "user:sam"]);
    env.run(&all).ok().to_owned()
}

/// customer/1 and customer/2 with a plan each; customer/1's plan changed once.
fn customers() -> TestEnv {
    let env = TestEnv::init();
    env.write(
        "c1.json",
        r#"{"plan": "starter", "billing": {"card": 4242}}"#,
    );
    env.write("c1b.json", r#"{"plan": "pro", "billing": {"card": 4242}}"#);
    env.write("c2.json", r#"{"plan": "free"}"#);
    sam(
        &env,
        &["ingest", "customer/1", "c1.json", "--at", "@2026-01-10"],
    );
    sam(
        &env,
        &["ingest", "customer/1", "c1b.json", "--at", "@2026-03-02"],
    );
    sam(
        &env,
        &["ingest", "customer/2", "c2.json", "--at", "@2026-03-03"],
    );
    env
}

#[test]
fn rename_then_an_ingest_that_still_uses_the_old_name() {
    let env = customers();
    assert_eq!(
        sam(
            &env,
            &[
                "mv",
                "--keys",
                "customer/*",
                "/plan",
                "/tier",
                "-m",
                "plans are tiers"
            ]
        ),
        "customer/1: /plan -> /tier\n\
         customer/2: /plan -> /tier\n\
         recorded tx 4: /plan renamed to /tier in 2 documents\n"
    );
    assert_eq!(
        env.run(&["show", "customer/1", "--json"]).ok(),
        "{\"billing\":{\"card\":4242},\"tier\":\"pro\"}\n"
    );
    // The poller still sends /plan: one change to /tier, not a remove and an add.
    env.write("c1c.json", r#"{"plan": "team", "billing": {"card": 4242}}"#);
    assert_eq!(
        env.run(&["ingest", "customer/1", "c1c.json", "--actor", "poller:crm"])
            .ok(),
        "~ /tier: \"pro\" -> \"team\"\nrecorded tx 5 (1 change)\n"
    );
    assert_eq!(
        env.run(&["ingest", "customer/1", "c1c.json", "--actor", "poller:crm"])
            .ok(),
        "unchanged\n"
    );
    let history = env.run(&["history", "customer/1", "/tier"]);
    assert_eq!(
        history.ok(),
        "tx 1  2026-01-10T00:00:00Z  user:sam  /plan  + \"starter\"\n\
         tx 2  2026-03-02T00:00:00Z  user:sam  /plan  ~ \"starter\" -> \"pro\"\n\
         tx 4  2026-03-03T00:00:00Z  user:sam  > renamed from /plan (\"pro\")  (plans are tiers)\n\
         tx 5  2026-03-03T00:00:00Z  poller:crm  ~ \"pro\" -> \"team\"\n"
    );
    let json = env.run(&["history", "customer/1", "/tier", "--json"]);
    let lines: Vec<serde_json::Value> = json
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[2]["op"], "move");
    assert_eq!(lines[2]["from"], "/plan");
    assert_eq!(lines[2]["to"], "/tier");
    assert_eq!(lines[0]["path"], "/plan");
    assert_eq!(
        env.run(&["history", "customer/1", "/plan"]).ok(),
        "tx 1  2026-01-10T00:00:00Z  user:sam  + \"starter\"\n\
         tx 2  2026-03-02T00:00:00Z  user:sam  ~ \"starter\" -> \"pro\"\n\
         tx 4  2026-03-03T00:00:00Z  user:sam  > renamed to /tier (\"pro\")  (plans are tiers)\n"
    );
    // Show before the rename has /plan.
    assert_eq!(
        env.run(&["show", "customer/1", "@tx:3", "--path", "/plan"])
            .ok(),
        "\"pro\"\n"
    );
    assert!(env.run(&["fsck"]).ok().ends_with(": ok\n"));
}

#[test]
fn chains_and_parents() {
    let env = customers();
    sam(&env, &["mv", "--keys", "customer/*", "/plan", "/tier"]);
    sam(&env, &["mv", "--keys", "customer/1", "/tier", "/level"]);
    sam(
        &env,
        &["mv", "--keys", "customer/*", "/billing", "/account/billing"],
    );
    assert_eq!(
        env.run(&["show", "customer/1", "--json"]).ok(),
        "{\"account\":{\"billing\":{\"card\":4242}},\"level\":\"pro\"}\n"
    );
    let history = env.run(&["history", "customer/1", "/level", "--json"]);
    let paths: Vec<String> = history
        .ok()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {} {}",
                v["tx"],
                v["op"].as_str().unwrap(),
                v["path"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            "1 add /plan",
            "2 replace /plan",
            "4 move /tier",
            "5 move /level"
        ]
    );
    let card = env.run(&["history", "customer/1", "/account/billing/card", "--json"]);
    let paths: Vec<String> = card
        .ok()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {} {}",
                v["tx"],
                v["op"].as_str().unwrap(),
                v["path"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        paths,
        ["1 add /billing/card", "6 move /account/billing/card"]
    );
    // customer/2 had no /billing: untouched by the third rename.
    assert_eq!(
        env.run(&["show", "customer/2", "--json"]).ok(),
        "{\"tier\":\"free\"}\n"
    );
    assert!(env.run(&["fsck"]).ok().ends_with(": ok\n"));
}

#[test]
fn refusals_write_nothing() {
    let env = customers();
    env.run(&["set", "customer/2", "/tier", "\"x\"", "--actor", "user:sam"])
        .ok();
    let before = env.db_dump();
    let err = env.run(&[
        "mv",
        "--keys",
        "customer/*",
        "/plan",
        "/tier",
        "--actor",
        "user:sam",
    ]);
    assert_eq!(
        err.fails(1),
        "hist: error: customer/2 already has a value at /tier; a rename never overwrites one\n\
         Hint: `hist show KEY` shows a document; pick a TO path that is free\n"
    );
    let err = env.run(&["mv", "--keys", "customer/*", "/plan", "/tier"]);
    assert!(err.fails(2).contains("no actor given"));
    let err = env.run(&[
        "mv",
        "--keys",
        "customer/*",
        "/items[id=1]",
        "/x",
        "--actor",
        "user:sam",
    ]);
    assert!(err.fails(1).contains("is not an object member"));
    let err = env.run(&[
        "mv",
        "--keys",
        "customer/*",
        "/plan",
        "/plan/x",
        "--actor",
        "user:sam",
    ]);
    assert!(err.fails(1).contains("one is inside the other"));
    let err = env.run(&["mv", "/plan", "/tier", "--actor", "user:sam"]);
    assert!(err.fails(2).contains("--keys"));
    assert_eq!(env.db_dump(), before);
}

#[test]
fn a_rename_that_matches_nothing_yet_applies_to_later_snapshots() {
    let env = TestEnv::init();
    let out = env.run(&[
        "mv", "--keys", "vendor/*", "/plan", "/tier", "--actor", "user:sam",
    ]);
    assert_eq!(
        out.ok(),
        "recorded tx 1: /plan renamed to /tier in 0 documents\n"
    );
    assert!(
        out.stderr
            .contains("later snapshots that still use /plan will be recorded at /tier")
    );
    env.write("v.json", r#"{"plan": "gold"}"#);
    assert_eq!(
        env.run(&["ingest", "vendor/9", "v.json", "--actor", "poller:v"])
            .ok(),
        "+ (document): {\"tier\":\"gold\"}\nrecorded tx 2 (1 change)\n"
    );
}

#[test]
fn blame_follows_renames_back() {
    let env = crate::common::TestEnv::init();
    let w = ["--actor", "user:sam"];
    env.run(
        &[
            &[
                "set",
                "customer/1",
                "",
                "{\"billing\":{\"plan\":\"a\"},\"seats\":1}",
            ][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    env.run(&[
        "set",
        "customer/1",
        "/billing/plan",
        "\"b\"",
        "--actor",
        "user:maria",
    ])
    .ok();
    env.run(
        &[
            &["mv", "--keys", "customer/*", "/billing", "/account/billing"][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &[
                "mv",
                "--keys",
                "customer/*",
                "/account/billing/plan",
                "/account/billing/tier",
            ][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    let out = env.run(&["blame", "customer/1", "--json"]);
    let leaves: Vec<serde_json::Value> = out
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tier = leaves
        .iter()
        .find(|l| l["path"] == "/account/billing/tier")
        .unwrap();
    assert_eq!(tier["actor"], "user:maria", "{tier}");
    assert_eq!(tier["tx"], 2);
    assert_eq!(tier["change_path"], "/billing/plan");
    let seats = leaves.iter().find(|l| l["path"] == "/seats").unwrap();
    assert_eq!(seats["tx"], 1);
}
