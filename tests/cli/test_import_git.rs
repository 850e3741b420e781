//! `hist import --git`: a scraper's repository built here with the `git` program (two files,
//! a keyed array, an empty commit, a half-written version, a merge, a committer date that
//! goes backwards, a reformatted but equal version, a commit that touches neither file),
//! imported and read back commit by commit; resumed imports, rewritten histories, histories
//! older than the repository, and an import killed at random moments.

use crate::common::git::{GitRepo, git_available};
use crate::common::{Run, TestEnv};
use serde_json::Value;

/// 2021-01-01T00:00:00Z.
const DAY0: i64 = 1_609_459_200;
const DAY: i64 = 86_400;

const FEED_V1: &str = r#"{"as_of": "d1", "items": [{"id": 1, "name": "Anvil", "price": 10}, {"id": 2, "name": "Rope", "price": 20}]}"#;
/// Reordered, and item 1's price changed.
const FEED_V2: &str = r#"{"as_of": "d2", "items": [{"id": 2, "name": "Rope", "price": 20}, {"id": 1, "name": "Anvil", "price": 12}]}"#;
const FEED_BAD: &str = r#"{"as_of": "d4", "items": ["#;
const FEED_V3: &str = r#"{"as_of": "d5", "items": [{"id": 1, "name": "Anvil", "price": 12}, {"id": 2, "name": "Rope", "price": 20}, {"id": 3, "name": "Seeds", "price": 3}]}"#;
const FEED_V4: &str = r#"{"as_of": "d6", "items": [{"id": 1, "name": "Anvil", "price": 12}, {"id": 2, "name": "Rope", "price": 25}, {"id": 3, "name": "Seeds", "price": 3}]}"#;
const FEED_V5: &str = r#"{"as_of": "d7", "items": [{"id": 1, "name": "Anvil", "price": 12}, {"id": 2, "name": "Rope", "price": 25}]}"#;

/// One commit (or a few) of the scraper's history.
type Step = Box<dyn Fn(&GitRepo)>;

/// The scraper's repository up to `upto` commits of its main line (all: 10). Returns the
/// repository.
fn scraper(dir: &std::path::Path, upto: usize) -> GitRepo {
    let repo = GitRepo::init(dir);
    let day = |n: i64| DAY0 + n * DAY;
    let steps: Vec<Step> = vec![
        Box::new(move |r| {
            r.commit(
                day(0),
                "first scrape",
                &[
                    ("feed.json", Some(FEED_V1)),
                    ("status.json", Some(r#"{"ok": true}"#)),
                ],
            );
        }),
        Box::new(move |r| {
            r.commit_as(
                day(1),
                day(1),
                "Ann Example",
                "prices",
                &[("feed.json", Some(FEED_V2))],
            );
        }),
        Box::new(move |r| {
            r.commit(day(2), "nothing new", &[]);
        }),
        Box::new(move |r| {
            r.commit(day(3), "half-written", &[("feed.json", Some(FEED_BAD))]);
        }),
        Box::new(move |r| {
            r.commit(
                day(4),
                "seeds",
                &[
                    ("feed.json", Some(FEED_V3)),
                    ("status.json", Some(r#"{"ok": false}"#)),
                ],
            );
        }),
        Box::new(move |r| {
            // A side branch changes the feed; the main line changes the status; the merge
            // brings the side's feed in.
            r.git(&["checkout", "-q", "-b", "side"], 0);
            r.commit(day(5), "rope up", &[("feed.json", Some(FEED_V4))]);
            r.git(&["checkout", "-q", "main"], 0);
            r.commit(
                day(6),
                "status back",
                &[("status.json", Some(r#"{"note": "back", "ok": true}"#))],
            );
        }),
        Box::new(move |r| {
            r.git(
                &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
                day(7),
            );
        }),
        Box::new(move |r| {
            // Committed half a day before the merge: raised to the merge's time.
            r.commit(
                day(6) + DAY / 2,
                "no seeds",
                &[("feed.json", Some(FEED_V5))],
            );
        }),
        Box::new(move |r| {
            let pretty =
                serde_json::to_string_pretty(&serde_json::from_str::<Value>(FEED_V5).unwrap())
                    .unwrap();
            r.commit(day(8), "pretty", &[("feed.json", Some(&pretty))]);
        }),
        Box::new(move |r| {
            r.commit(day(9), "readme", &[("README", Some("scraped\n"))]);
        }),
    ];
    for step in steps.iter().take(upto) {
        step(&repo);
    }
    repo
}

/// A fresh hist repository with the feed's rule, dated before the history.
fn hist_repo() -> TestEnv {
    let env = TestEnv::init();
    env.run(&[
        "rules",
        "array-key",
        "/items",
        "id",
        "--keys",
        "feed/*",
        "--actor",
        "user:t",
        "--at",
        "@2020-12-31",
    ])
    .ok();
    env
}

fn import(env: &TestEnv, extra: &[&str]) -> Run {
    let mut args = vec![
        "import",
        "--git",
        "scraper",
        "--file",
        "feed.json",
        "--key",
        "feed/acme",
        "--file",
        "status.json",
    ];
    args.extend(extra);
    env.run(&args)
}

/// A document with its keyed arrays in key order (their order is not history).
fn normal(text: &[u8]) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(text).ok()?;
    if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
        items.sort_by_key(|i| i["id"].as_i64());
    }
    Some(v)
}

fn at(secs: i64) -> String {
    format!(
        "@{}",
        chrono::DateTime::from_timestamp(secs, 0)
            .unwrap()
            .to_rfc3339()
    )
}

/// Everything a repository recorded, as the commands print it (ids, times, actors,
/// reasons, changes, checks).
fn recorded(env: &TestEnv) -> String {
    let export = env.run(&["export"]).ok().to_owned();
    let txs = env
        .run(&["sql", "SELECT * FROM transactions ORDER BY id", "--csv"])
        .ok()
        .to_owned();
    let checks = env
        .run(&["sql", "SELECT * FROM checks ORDER BY at, key", "--csv"])
        .ok()
        .to_owned();
    format!("{export}\n{txs}\n{checks}")
}

#[test]
fn every_version_reads_back_as_the_file_at_its_commit() {
    if !git_available("every_version_reads_back_as_the_file_at_its_commit") {
        return;
    }
    let env = hist_repo();
    let git = scraper(&env.join("scraper"), 10);
    let run = import(&env, &[]);
    let out = run.ok();
    let tip = &git.git(&["rev-parse", "main"], 0)[..12];
    assert_eq!(
        out,
        format!(
            "imported 8 commits of scraper up to {tip}: 9 snapshots: 8 changed (13 changes), 1 unchanged; 1 skipped; 1 committer time raised\n"
        ),
        "{}",
        run.stderr
    );
    let half = &git.git(&["rev-parse", "main~6"], 0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].starts_with(&format!(
            "hist: warning: commit {} (half-written): feed.json is not valid JSON (",
            &half[..12]
        )),
        "{}",
        run.stderr
    );
    // Read back at each commit of the first-parent history: the file as it was then (the
    // last valid version where one is not JSON), times raised where they went backwards.
    let commits = git.first_parent();
    assert_eq!(commits.len(), 10);
    let mut floor = 0;
    let mut expected: [Option<Value>; 2] = [None, None];
    for (i, (id, time)) in commits.iter().enumerate() {
        floor = floor.max(*time);
        for (slot, path) in ["feed.json", "status.json"].iter().enumerate() {
            if let Some(doc) = git.file_at(id, path).and_then(|b| normal(&b)) {
                expected[slot] = Some(doc);
            }
        }
        let next = commits.get(i + 1).map(|(_, t)| (*t).max(floor));
        if next == Some(floor) {
            continue; // the next commit is recorded at the same time: read after it
        }
        for (slot, key) in ["feed/acme", "status.json"].iter().enumerate() {
            let shown = env.run(&["show", key, &at(floor), "--json"]);
            assert_eq!(
                normal(shown.ok().as_bytes()),
                expected[slot],
                "{key} at commit {i} ({id})"
            );
        }
    }
    // Actors, reasons and times.
    let log = env.run(&["log", "feed/acme", "--json"]).ok().to_owned();
    let entries: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let prices = &entries[entries.len() - 2];
    assert_eq!(prices["actor"], "git:ann-example");
    let prices_id = &commits[1].0[..12];
    assert_eq!(prices["reason"], format!("prices ({prices_id})"));
    assert_eq!(prices["at"], "2021-01-02T00:00:00.000000Z");
    assert_eq!(entries[0]["actor"], "git:scraper-bot");
    assert_eq!(
        entries[0]["reason"],
        format!("no seeds ({})", &commits[7].0[..12])
    );
    assert_eq!(
        entries[0]["at"], "2021-01-08T00:00:00.000000Z",
        "raised to the merge's time"
    );
    // The reformatted version recorded a check only.
    let checks = env
        .run(&["sql", "SELECT key, at FROM checks", "--csv"])
        .ok()
        .to_owned();
    assert_eq!(checks, "key,at\nfeed/acme,2021-01-09T00:00:00.000000Z\n");
    // Keyed: item 1's price has its own history.
    let history = env
        .run(&["history", "feed/acme", "/items[id=1]/price"])
        .ok()
        .to_owned();
    assert_eq!(history.lines().count(), 2, "{history}");
    assert_eq!(
        env.run(&["fsck"])
            .ok()
            .lines()
            .last()
            .map(|l| l.ends_with("ok")),
        Some(true)
    );
}

#[test]
fn a_resumed_import_records_what_a_single_one_does() {
    if !git_available("a_resumed_import_records_what_a_single_one_does") {
        return;
    }
    let single = hist_repo();
    scraper(&single.join("scraper"), 10);
    import(&single, &[]).ok();

    let resumed = hist_repo();
    let dir = resumed.join("scraper");
    for upto in [1, 4, 6, 8, 10] {
        // The repository grows between runs, as a scraper's does between cron jobs.
        std::fs::remove_dir_all(&dir).ok();
        scraper(&dir, upto);
        let out = import(&resumed, &["--json"]).ok().to_owned();
        let summary: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(summary["source"], "git");
        assert_eq!(summary["after"].is_null(), upto == 1, "{summary}");
    }
    assert_eq!(recorded(&resumed), recorded(&single));
    let again = import(&resumed, &[]).ok().to_owned();
    assert!(
        again.starts_with("up to date: nothing new in scraper up to "),
        "{again}"
    );
    assert_eq!(recorded(&resumed), recorded(&single));
}

#[test]
fn a_rewritten_history_is_refused_and_nothing_changes() {
    if !git_available("a_rewritten_history_is_refused_and_nothing_changes") {
        return;
    }
    let env = hist_repo();
    let git = scraper(&env.join("scraper"), 5);
    import(&env, &[]).ok();
    // Rewrite: the last commit replaced by another.
    git.git(&["reset", "-q", "--hard", "HEAD~1"], 0);
    git.commit(
        DAY0 + 5 * DAY,
        "seeds, again",
        &[("feed.json", Some(FEED_V4))],
    );
    let before = crate::robust::full_dump(env.path());
    let err = import(&env, &[]).fails(1).to_owned();
    assert!(
        err.contains(
            "which is no longer in the first-parent history of HEAD: the history was rewritten"
        ),
        "{err}"
    );
    assert!(err.contains("Hint: nothing was recorded"), "{err}");
    assert_eq!(crate::robust::full_dump(env.path()), before);
}

#[test]
fn a_history_older_than_the_repository_is_refused_with_a_hint() {
    if !git_available("a_history_older_than_the_repository_is_refused_with_a_hint") {
        return;
    }
    // The rule is dated now (2026), after the history (2021).
    let env = TestEnv::init();
    env.run(&["rules", "array-key", "/items", "id", "--actor", "user:t"])
        .ok();
    scraper(&env.join("scraper"), 3);
    let before = crate::robust::full_dump(env.path());
    let err = import(&env, &[]).fails(1).to_owned();
    assert!(
        err.starts_with("hist: error: the history starts at 2021-01-01T00:00:00.000000Z (commit "),
        "{err}"
    );
    assert!(
        err.contains("before the repository's newest transaction (tx 1 at 2026-"),
        "{err}"
    );
    assert!(err.contains("hist rules … --at @2021-01-01"), "{err}");
    assert_eq!(crate::robust::full_dump(env.path()), before);
}

#[test]
fn mistakes_are_refused_before_anything_is_written() {
    if !git_available("mistakes_are_refused_before_anything_is_written") {
        return;
    }
    let env = hist_repo();
    scraper(&env.join("scraper"), 2);
    let before = crate::robust::full_dump(env.path());
    let cases: [(&[&str], i32, &str); 7] = [
        (
            &["import", "--git", "scraper", "--file", "nope.json"],
            1,
            "nope.json is in no commit of HEAD in /",
        ),
        (
            &[
                "import",
                "--git",
                "scraper",
                "--file",
                "feed.json",
                "--branch",
                "nope",
            ],
            1,
            "has no commit nope",
        ),
        (
            &["import", "--git", "nowhere", "--file", "feed.json"],
            1,
            "nowhere: no such directory",
        ),
        (
            &["import", "--git", ".hist", "--file", "feed.json"],
            1,
            "is not a git repository",
        ),
        (
            &[
                "import",
                "--git",
                "scraper",
                "--key",
                "k",
                "--file",
                "feed.json",
            ],
            2,
            "--key k follows no --file",
        ),
        (
            &[
                "import",
                "--git",
                "scraper",
                "--file",
                "feed.json",
                "--key",
                "k",
                "--file",
                "status.json",
                "--key",
                "k",
            ],
            2,
            "\"k\" is named twice",
        ),
        (
            &[
                "import",
                "--git",
                "scraper",
                "--file",
                "feed.json",
                "--actor",
                "nobody",
            ],
            2,
            "is not of the form kind:name",
        ),
    ];
    for (args, code, want) in cases {
        let err = env.run(args).fails(code).to_owned();
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(crate::robust::full_dump(env.path()), before);
    // Files imported apart are refused: the history of one would go back in time.
    env.run(&[
        "import",
        "--git",
        "scraper",
        "--file",
        "feed.json",
        "--key",
        "feed/acme",
    ])
    .ok();
    let err = import(&env, &[]).fails(1).to_owned();
    assert!(
        err.contains("status.json was never imported, feed.json was imported up to commit"),
        "{err}"
    );
}

#[test]
fn an_actor_given_names_every_version() {
    if !git_available("an_actor_given_names_every_version") {
        return;
    }
    let env = hist_repo();
    scraper(&env.join("scraper"), 2);
    import(&env, &["--actor", "poller:acme"]).ok();
    let actors = env
        .run(&[
            "sql",
            "SELECT DISTINCT actor FROM transactions WHERE kind = 'ingest'",
            "--csv",
        ])
        .ok()
        .to_owned();
    assert_eq!(actors, "actor\npoller:acme\n");
}

/// `hist import --git` killed with SIGKILL at random moments of a long import, then run
/// again: the repository is consistent after each kill and ends recording what one
/// uninterrupted import does.
#[test]
fn an_import_killed_at_random_moments_resumes_to_the_same_record() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    if !git_available("an_import_killed_at_random_moments_resumes_to_the_same_record") {
        return;
    }
    // 1,200 versions (three batches of 500), written with fast-import.
    let single = TestEnv::init();
    let git = GitRepo::init(&single.join("scraper"));
    let mut stream = String::new();
    for i in 0..1200 {
        let doc = format!(
            "{{\"n\": {i}, \"items\": [{{\"id\": {}, \"v\": {i}}}]}}\n",
            i % 7
        );
        let msg = format!("scrape {i}");
        let t = DAY0 + i * 60;
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter Bot <b@x> {t} +0000\ndata {}\n{msg}\nM 100644 inline feed.json\ndata {}\n{doc}\n",
            msg.len(),
            doc.len()
        ));
    }
    let mut fast = std::process::Command::new("git")
        .arg("-C")
        .arg(&git.dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(fast.stdin.as_mut().unwrap(), stream.as_bytes()).unwrap();
    drop(fast.stdin.take());
    assert!(fast.wait().unwrap().success());
    let args = ["import", "--git", "scraper", "--file", "feed.json"];
    let started = Instant::now();
    single.run(&args).ok();
    let full = started.elapsed();

    let killed = TestEnv::init();
    std::fs::rename(single.join("scraper"), killed.join("scraper")).unwrap();
    let mut rng = crate::robust::Rng::from_env("import_killed", 26);
    for _ in 0..3 {
        let mut child = killed
            .command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = full.mul_f64(rng.below(1000) as f64 / 1000.0);
        std::thread::sleep(delay.min(Duration::from_secs(30)));
        let _ = child.kill();
        child.wait().unwrap();
        assert!(killed.run(&["fsck"]).ok().trim_end().ends_with("ok"));
    }
    let last = killed.run(&args);
    last.ok();
    std::fs::rename(killed.join("scraper"), single.join("scraper")).unwrap();
    assert_eq!(recorded(&killed), recorded(&single));
}
