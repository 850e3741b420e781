//! A store written by an older `hist` opens with this one: it is migrated in place, and every
//! question it answered before gets the same answer, byte for byte, but where the schema
//! changed an answer on purpose.
//!
//! `fixtures/store-v6` and `fixtures/store-v8` are repositories made by hist at schemas 6
//! and 8 (their `make.sh` says how): personal values and a forget, keyed ingests, a large
//! value kept as an object, a rename, a deleted document and a retention compaction.
//! `answers.txt` holds what that hist printed; `answers-v9.txt` what changed with schema 9,
//! where the `changes` view gives a large value itself instead of a reference to its object.

use crate::common::TestEnv;
use std::path::{Path, PathBuf};

const NOW: &str = "2026-10-01T00:00:00Z";
const FIXTURES: [&str; 2] = ["store-v6", "store-v8"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// A copy of an old store in a fresh directory.
fn old_store(name: &str) -> TestEnv {
    let env = TestEnv::new();
    let fixture = fixture(name);
    for entry in walkdir::WalkDir::new(fixture.join(".hist")) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&fixture).unwrap();
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(env.join(rel.to_str().unwrap())).unwrap();
        } else {
            env.write(rel.to_str().unwrap(), std::fs::read(entry.path()).unwrap());
        }
    }
    env
}

/// Recorded questions and answers: `$ ["show", "KEY"]` lines, each followed by its output.
fn read_answers(path: &Path) -> Vec<(Vec<String>, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        match line.strip_prefix("$ ") {
            Some(args) => out.push((serde_json::from_str(args).unwrap(), String::new())),
            None => out.last_mut().unwrap().1.push_str(line),
        }
    }
    out
}

/// The answers the old hist gave, with those schema 9 changed on purpose put in their place:
/// each of them replaced an answer that named an object (`$hist_object`) and names none.
fn answers(name: &str) -> Vec<(Vec<String>, String)> {
    let mut answers = read_answers(&fixture(name).join("answers.txt"));
    let changed = read_answers(&fixture(name).join("answers-v9.txt"));
    assert!(!changed.is_empty());
    for (args, new) in changed {
        let old = answers
            .iter_mut()
            .find(|(a, _)| *a == args)
            .unwrap_or_else(|| panic!("{args:?} is not among the old answers"));
        assert!(old.1.contains("$hist_object"), "{args:?}");
        assert!(!new.contains("$hist_object"), "{args:?}");
        old.1 = new;
    }
    answers
}

fn ask(env: &TestEnv, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = env.command(&args);
    cmd.env("HIST_NOW", NOW);
    env.run_cmd(cmd, None).ok().to_owned()
}

#[test]
fn old_stores_answer_as_they_did() {
    for name in FIXTURES {
        answers_as_it_did(name);
    }
}

fn answers_as_it_did(name: &str) {
    let env = old_store(name);
    let answers = answers(name);
    assert!(answers.len() > 20, "{} answers", answers.len());
    for (args, expected) in &answers {
        assert_eq!(&ask(&env, args), expected, "{name}: hist {args:?}");
    }
    // Migrated, and ready for new writes that history and blame see.
    let version = ["sql".to_owned(), "PRAGMA user_version".to_owned()];
    assert_eq!(ask(&env, &version), ask(&TestEnv::init(), &version));
    let mut cmd = env.command(&["set", "customer/4411", "/seats", "5", "--actor", "user:kim"]);
    cmd.env("HIST_NOW", NOW);
    env.run_cmd(cmd, None).ok();
    let history = ask(
        &env,
        &["history".into(), "customer/4411".into(), "/seats".into()],
    );
    assert!(history.contains("user:kim"), "{history}");
    let blame = ask(&env, &["blame".into(), "customer/4411".into()]);
    assert!(
        blame.contains("user:kim") && blame.contains("user:maria"),
        "{blame}"
    );
    let fsck = ask(&env, &["fsck".into()]);
    assert!(fsck.ends_with(": ok\n"), "{name}: {fsck}");
}

#[test]
fn two_processes_opening_an_old_store_at_once_migrate_it_once() {
    for name in FIXTURES {
        migrate_once(name);
    }
}

fn migrate_once(name: &str) {
    use std::process::Stdio;
    let env = old_store(name);
    let spawn = || {
        let mut cmd = env.command(&["show", "customer/4411", "--json"]);
        cmd.env("HIST_NOW", NOW)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"team\""));
    }
    let fsck = ask(&env, &["fsck".into()]);
    assert!(fsck.ends_with(": ok\n"), "{fsck}");
    let versions = ask(&env, &["sql".into(), "SELECT count(*) FROM version".into()]);
    let changes = ask(
        &env,
        &[
            "sql".into(),
            "SELECT count(DISTINCT key || ' ' || tx) FROM changes".into(),
        ],
    );
    assert_eq!(versions.lines().last(), changes.lines().last());
}
