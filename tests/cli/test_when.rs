//! WHEN as git users type it (`@yesterday`, `--since '2 weeks ago'`, `@'2025-12-25 12:00'`),
//! read by one parser in every command that takes a time, against the command's clock
//! (HIST_NOW; the test clock starts at 2026-01-01T00:00:00Z).

use crate::common::TestEnv;

fn story() -> TestEnv {
    let env = TestEnv::init();
    for (at, plan) in [
        ("@2025-12-10", "starter"),
        ("@2025-12-25T18:00:00Z", "pro"),
        ("@2025-12-30", "team"),
    ] {
        let value = format!("\"{plan}\"");
        env.run(&[
            "set", "c/1", "/plan", &value, "--actor", "user:sam", "--at", at,
        ])
        .ok();
    }
    env
}

#[test]
fn every_command_reads_relative_times() {
    let env = story();
    let show = |when: &str| {
        env.run(&["show", "c/1", when, "--path", "/plan"])
            .ok()
            .to_owned()
    };
    assert_eq!(show("@yesterday"), "\"team\"\n");
    assert_eq!(show("@3 days ago"), "\"pro\"\n");
    assert_eq!(show("@2 weeks ago"), "\"starter\"\n");
    // A time without an offset is UTC, like @2026-08-01.
    assert_eq!(show("@2025-12-25 17:59"), "\"starter\"\n");
    assert_eq!(show("@2025-12-25 18:00"), "\"pro\"\n");
    assert_eq!(show("@2025-12-25T18:00"), "\"pro\"\n");
    let log = env
        .run(&["log", "--since", "1 week ago", "--oneline"])
        .ok()
        .to_owned();
    assert_eq!(log.lines().count(), 2, "{log}");
    let log = env
        .run(&[
            "log",
            "--since",
            "2 weeks ago",
            "--until",
            "3 days ago",
            "--oneline",
        ])
        .ok()
        .to_owned();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.starts_with("2 2025-12-25"), "{log}");
    let diff = env.run(&["diff", "c/1", "@5 days ago"]).ok().to_owned();
    assert_eq!(diff, "~ /plan: \"pro\" -> \"team\"\n");
    // --exit-code / --quiet: 1 with differences, 0 without, 2 on an error.
    let quiet = env.run(&["diff", "c/1", "@5 days ago", "--quiet"]);
    assert_eq!((quiet.code, quiet.stdout.as_str()), (1, ""), "{quiet:?}");
    let none = env.run(&["diff", "c/1", "@yesterday", "--exit-code"]);
    assert_eq!(none.code, 0, "{none:?}");
    // A failure that exits 1 without the flag (no repository there) exits 2 with it.
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().to_str().unwrap();
    env.run(&["-C", dir, "diff", "c/1", "@yesterday"]).fails(1);
    env.run(&["-C", dir, "diff", "c/1", "@yesterday", "--exit-code"])
        .fails(2);
    let blame = env
        .run(&["blame", "c/1", "@2 weeks ago", "--path", "/plan"])
        .ok()
        .to_owned();
    assert!(blame.starts_with("1 (user:sam 2025-12-10)"), "{blame}");
    let export = env
        .run(&["export", "--since", "3 days ago"])
        .ok()
        .to_owned();
    assert_eq!(export.lines().count(), 1, "{export}");
    // Writes: --at takes the same forms.
    env.run(&[
        "set", "c/2", "/v", "1", "--actor", "user:sam", "--at", "now",
    ])
    .ok();
    // Files: restore as of a relative time.
    env.write("a.json", "{\"v\": 1}\n");
    env.run(&["track", "a.json", "--actor", "user:sam"]).ok();
    let out = env
        .run(&["restore", "a.json", "@now", "-o", "-"])
        .ok()
        .to_owned();
    assert_eq!(out, "{\"v\": 1}\n");
}

#[test]
fn an_unreadable_time_is_a_usage_error_that_shows_the_forms() {
    let env = story();
    let err = env
        .run(&["log", "--since", "2 bananas ago"])
        .fails(2)
        .to_owned();
    assert!(
        err.contains("cannot read \"2 bananas ago\" as a time"),
        "{err}"
    );
    assert!(err.contains("@yesterday"), "{err}");
}
