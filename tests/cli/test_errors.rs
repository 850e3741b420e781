//! Errors: `hist: error: …` with a hint where one helps; usage errors exit 2, other
//! failures 1, and a failed command writes nothing.

use crate::common::TestEnv;

fn story() -> TestEnv {
    let env = TestEnv::init();
    env.run(&["set", "c/1", "/plan", "\"pro\"", "--actor", "user:sam"])
        .ok();
    env
}

#[test]
fn usage_errors_exit_2() {
    let env = story();
    let before = env.db_dump();
    let cases: &[(&[&str], &str)] = &[
        (
            &["frobnicate"],
            "hist: error: unrecognized subcommand 'frobnicate'",
        ),
        (
            &["log", "--bogus"],
            "hist: error: unexpected argument '--bogus' found",
        ),
        (
            &["show"],
            "hist: error: the following required arguments were not provided",
        ),
        (
            &["log", "-n", "many"],
            "hist: error: invalid value 'many' for '--max-count <N>'",
        ),
        (
            &["show", "c/1", "the day before"],
            "hist: error: cannot read \"the day before\" as a time",
        ),
        (
            &["show", "c/1", "--path", "plan"],
            "hist: error: invalid path \"plan\"",
        ),
        (
            &["set", "c/1", "/plan", "\"x\""],
            "hist: error: no actor given",
        ),
        (
            &["set", "c/1", "/plan", "\"x\"", "--actor", "sam"],
            "hist: error: actor \"sam\"",
        ),
        (
            &["export", "--keys", "feed/["],
            "hist: error: --keys \"feed/[\"",
        ),
        (
            &["--color", "pink", "log"],
            "hist: error: invalid value 'pink' for '--color <WHEN>'",
        ),
    ];
    for (args, start) in cases {
        let out = env.run(args);
        let stderr = out.fails(2);
        assert!(stderr.starts_with(start), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    // No command at all: the help, on stderr, as a usage error.
    let out = env.run(&[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("Usage: hist [OPTIONS] <COMMAND>"),
        "{}",
        out.stderr
    );
    // The actor error says how to fix it.
    let out = env.run(&["set", "c/1", "/plan", "\"x\""]);
    assert!(
        out.stderr.contains("\nHint: name the actor with --actor"),
        "{}",
        out.stderr
    );
    // clap's usage errors keep their tip and usage lines.
    let out = env.run(&["log", "--bogus"]);
    assert!(
        out.stderr.contains("Usage: hist log [OPTIONS] [KEY]"),
        "{}",
        out.stderr
    );
    assert_eq!(env.db_dump(), before);
}

#[test]
fn other_failures_exit_1() {
    let env = story();
    let before = env.db_dump();
    let cases: &[(&[&str], &str, Option<&str>)] = &[
        (
            &["show", "c/9"],
            "hist: error: c/9 does not exist now",
            None,
        ),
        (
            &["blame", "c/9"],
            "hist: error: c/9 does not exist now",
            Some("Hint: "),
        ),
        (
            &["set", "c/1", "/plan", "pro", "--actor", "user:sam"],
            "hist: error: the value is not valid JSON",
            Some("Hint: a JSON string needs its quotes"),
        ),
        (
            &[
                "set",
                "c/1",
                "/plan",
                "\"x\"",
                "--actor",
                "user:sam",
                "--at",
                "@2000-01-01",
            ],
            "hist: error: --at 2000-01-01T00:00:00.000000Z is earlier than the newest transaction",
            Some("Hint: a correction of the past is a new change"),
        ),
        (&["sql", "DELETE FROM change_log"], "hist: error: ", None),
        (
            &["ingest", "c/1", "missing.json", "--actor", "user:sam"],
            "hist: error: cannot read missing.json",
            None,
        ),
    ];
    for (args, start, hint) in cases {
        let out = env.run(args);
        let stderr = out.fails(1);
        assert!(stderr.starts_with(start), "{args:?}: {stderr}");
        if let Some(hint) = hint {
            assert!(stderr.contains(&format!("\n{hint}")), "{args:?}: {stderr}");
        }
    }
    assert_eq!(env.db_dump(), before);
    // Outside a repository.
    let outside = TestEnv::new();
    let out = outside.run(&["log"]);
    let stderr = out.fails(1);
    assert!(
        stderr.starts_with("hist: error: not a hist repository"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\nHint: create one with `hist init`"),
        "{stderr}"
    );
}

#[test]
fn help_and_version_succeed_on_stdout() {
    let env = TestEnv::new();
    let out = env.run(&["--version"]);
    assert_eq!(out.ok(), format!("hist {}\n", env!("CARGO_PKG_VERSION")));
    let out = env.run(&["blame", "--help"]);
    assert!(
        out.ok().contains("Examples:\n  hist blame customer/4411\n"),
        "{}",
        out.stdout
    );
    let out = env.run(&["help", "log"]);
    assert!(
        out.ok().starts_with("List transactions, newest first\n"),
        "{}",
        out.stdout
    );
}
