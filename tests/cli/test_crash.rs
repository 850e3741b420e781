//! Crash safety: `hist` writes killed with SIGKILL at random moments never leave a partial
//! transaction, never lose one they reported, and never stop the next write.
//!
//! The driver runs a seeded sequence of writes (snapshot ingests with large values stored as
//! objects, field sets, multi-operation patches, multi-record imports), each as its own
//! `hist` process, and kills most of them after a random delay drawn around the measured
//! length of a write, so kills land before, during and after the SQLite commit. After each
//! kill it checks: fsck passes (the library's, in process; the CLI's at the end), every transaction any child reported (`recorded tx N
//! (k changes)`) is present with exactly its k changes, every transaction in the log has
//! exactly the changes its write must produce, and a fresh write succeeds. Wide snapshots
//! make writes seal the log's recent rows into segments (and merge segments), so kills
//! also land while a write seals.
//! `HIST_TEST_SEED` picks another sequence; `HIST_CRASH_KILLS` another number of kills.

use crate::common::TestEnv;
use crate::robust::Rng;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Fields of an ingested document besides `round` and `big`.
const FIELDS: usize = 12;

/// What one write must produce, per transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    /// A snapshot of `doc/N`: one `add` when the key is new, else every field replaced.
    Ingest,
    /// `set cell/N /count`: one change.
    Set,
    /// A three-operation patch on `pat/N`: three changes.
    Apply,
    /// One record of an import into `imp/N`: one `add` when new, else two replaces.
    Import,
    /// A snapshot of `wide/N` with [`WIDE`] fields, all of them changed: enough changes
    /// that the key's recent rows are sealed into a segment every few writes (and its
    /// small segments merged), so that kills land while a write seals.
    Wide,
}

/// Fields of a wide document.
const WIDE: usize = 2500;

fn wide(round: u64) -> String {
    let mut doc = serde_json::Map::new();
    for i in 0..WIDE {
        doc.insert(format!("w{i}"), (round * 7 + i as u64).into());
    }
    serde_json::Value::Object(doc).to_string()
}

fn snapshot(round: u64) -> String {
    let mut doc = serde_json::Map::new();
    doc.insert("round".into(), round.into());
    for i in 0..FIELDS {
        doc.insert(format!("f{i}"), format!("r{round}-{i}").into());
    }
    // Large enough to be stored as an object (and checkpointed as one).
    doc.insert("big".into(), format!("{round}:{}", "x".repeat(6000)).into());
    serde_json::Value::Object(doc).to_string()
}

fn spawn(env: &TestEnv, shape: Shape, rng: &mut Rng, round: u64) -> Child {
    let reason = format!("r{round}");
    let args: Vec<String> = match shape {
        Shape::Wide => {
            let file = format!("in/{round}.wide.json");
            env.write(&file, wide(round));
            vec![
                "ingest".into(),
                "wide/0".into(),
                file,
                "-m".into(),
                format!("{reason} wide"),
            ]
        }
        Shape::Ingest => {
            let file = format!("in/{round}.json");
            env.write(&file, snapshot(round));
            vec![
                "ingest".into(),
                format!("doc/{}", rng.below(3)),
                file,
                "-m".into(),
                format!("{reason} ingest"),
            ]
        }
        Shape::Set => vec![
            "set".into(),
            format!("cell/{}", rng.below(2)),
            "/count".into(),
            round.to_string(),
            "-m".into(),
            format!("{reason} set"),
        ],
        Shape::Apply => {
            let file = format!("in/{round}.patch");
            env.write(
                &file,
                format!(
                    r#"[{{"op":"replace","path":"/a","value":{round}}},
                            {{"op":"replace","path":"/b","value":"{round}"}},
                            {{"op":"add","path":"/c","value":[{round}]}}]"#
                ),
            );
            vec![
                "apply".into(),
                format!("pat/{}", rng.below(2)),
                file,
                "-m".into(),
                format!("{reason} apply"),
            ]
        }
        Shape::Import => {
            let file = format!("in/{round}.ndjson");
            let mut lines = String::new();
            for j in 0..3 {
                lines.push_str(&format!(
                    "{{\"key\":\"imp/{}\",\"actor\":\"job:import\",\"reason\":\"{reason} import\",\"doc\":{{\"v\":{round},\"w\":\"{round}\"}}}}\n",
                    (round + j) % 5
                ));
            }
            env.write(&file, lines);
            vec!["import".into(), file]
        }
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = env.command(&args);
    cmd.env("HIST_ACTOR", "job:crash")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

fn shape_of(reason: &str) -> Shape {
    match reason.rsplit(' ').next() {
        Some("ingest") => Shape::Ingest,
        Some("set") => Shape::Set,
        Some("apply") => Shape::Apply,
        Some("import") => Shape::Import,
        Some("wide") => Shape::Wide,
        _ => panic!("unexpected reason {reason:?}"),
    }
}

/// Checks that every transaction holds exactly the changes its write must produce, and
/// that every reported transaction is there with its reported count. The changes are read
/// through the library, from both tiers of the log (rows and sealed segments).
fn check_log(repo: &hist::Repo, reported: &BTreeMap<i64, usize>) {
    let filter = hist::LogFilter {
        with_changes: true,
        ..hist::LogFilter::default()
    };
    let mut log = repo.log(&filter).unwrap();
    log.reverse();
    // Changes of each key before the transaction at hand.
    let mut earlier: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_tx: BTreeMap<i64, usize> = BTreeMap::new();
    for entry in log {
        let tx = entry.tx.id;
        let reason = entry.tx.reason.clone().unwrap_or_default();
        let mut per_key: BTreeMap<String, usize> = BTreeMap::new();
        for c in &entry.changes {
            *per_key.entry(c.key.clone()).or_default() += 1;
        }
        if reason == "setup" {
            for (key, n) in per_key {
                *earlier.entry(key).or_default() += n;
            }
            continue;
        }
        assert!(!per_key.is_empty(), "tx {tx} ({reason}) has no changes");
        for (key, count) in per_key {
            let before = earlier.get(&key).copied().unwrap_or(0);
            let expected = match shape_of(&reason) {
                Shape::Ingest | Shape::Wide if before == 0 => 1,
                Shape::Ingest => FIELDS + 2,
                Shape::Wide => WIDE,
                Shape::Set | Shape::Import if before == 0 => 1,
                Shape::Set => 1,
                Shape::Import => 2,
                Shape::Apply => 3,
            };
            assert_eq!(
                count, expected,
                "tx {tx} ({reason}) on {key} has {count} changes, its write makes {expected}: a partial transaction"
            );
            *earlier.entry(key).or_default() += count;
            *per_tx.entry(tx).or_default() += count;
        }
    }
    for (tx, count) in reported {
        assert_eq!(
            per_tx.get(tx),
            Some(count),
            "tx {tx} was reported committed with {count} changes"
        );
    }
}

/// Parses `recorded tx N (k changes…)` from a child's output.
fn reported_tx(stdout: &str) -> Option<(i64, usize)> {
    let line = stdout.lines().find(|l| l.starts_with("recorded tx "))?;
    let rest = line.strip_prefix("recorded tx ")?;
    let (id, rest) = rest.split_once(" (")?;
    let count = rest.split(' ').next()?;
    Some((id.parse().ok()?, count.parse().ok()?))
}

/// Repositories crashed side by side (each its own sequence): a write mostly waits for
/// fsync, so two at once take about the time of one.
const LANES: u64 = 2;

#[test]
fn kill_9_never_loses_or_splits_a_transaction() {
    let kills_wanted: usize = std::env::var("HIST_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let rng = Rng::from_env("kill_9_never_loses_or_splits_a_transaction", 0x5eed_0008);
    let lanes: Vec<_> = (0..LANES)
        .map(|lane| {
            let seed = rng.seed().wrapping_add(lane);
            let kills = kills_wanted.div_ceil(LANES as usize);
            std::thread::spawn(move || crash_lane(lane, Rng::new(seed), kills))
        })
        .collect();
    let total: usize = lanes.into_iter().map(|l| l.join().unwrap()).sum();
    assert!(total >= kills_wanted);
}

/// Kills `kills_wanted` writes to one repository; returns the number of kills.
fn crash_lane(lane: u64, mut rng: Rng, kills_wanted: usize) -> usize {
    let env = TestEnv::init();
    for key in ["pat/0", "pat/1"] {
        env.run(&[
            "set",
            key,
            "",
            r#"{"a":0,"b":"0","c":[]}"#,
            "--actor",
            "job:setup",
            "-m",
            "setup",
        ])
        .ok();
    }
    // How long each kind of write takes here (updated as the run goes), so kills can be
    // spread over the part of a write's run, where it diffs, writes objects and
    // commits.
    let shapes = [
        Shape::Ingest,
        Shape::Ingest,
        Shape::Set,
        Shape::Apply,
        Shape::Import,
        Shape::Wide,
        Shape::Wide,
    ];
    let mut took: BTreeMap<Shape, u64> = BTreeMap::new();
    for (i, shape) in shapes.iter().enumerate() {
        let start = Instant::now();
        let child = spawn(&env, *shape, &mut rng, 1_000_000 + i as u64);
        assert!(child.wait_with_output().unwrap().status.success());
        took.insert(*shape, start.elapsed().as_micros() as u64);
    }
    let db = env.join(".hist/hist.db");
    let mut reported: BTreeMap<i64, usize> = BTreeMap::new();
    let (mut kills, mut finished, mut killed_after_commit, mut rounds) = (0, 0, 0, 0u64);
    let started = Instant::now();
    while kills < kills_wanted {
        rounds += 1;
        assert!(
            rounds < 5 * kills_wanted as u64,
            "too few kills landed while hist ran"
        );
        let before: i64 = Connection::open(&db)
            .unwrap()
            .query_row("SELECT coalesce(max(id), 0) FROM tx", [], |r| r.get(0))
            .unwrap();
        let shape = *rng.pick(&shapes);
        let estimate = took[&shape].max(2000);
        // One write in ten runs to the end, which also keeps the estimate current.
        let delay = (rng.below(10) != 0).then(|| estimate * 3 / 10 + rng.below(estimate * 6 / 10));
        let start = Instant::now();
        let mut child = spawn(&env, shape, &mut rng, rounds);
        if let Some(delay) = delay {
            std::thread::sleep(Duration::from_micros(delay));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code().is_some() {
            assert!(out.status.success(), "a write failed:\n{stdout}\n{stderr}");
            finished += 1;
            if delay.is_none() {
                let t = took.get_mut(&shape).unwrap();
                *t = (*t * 3 + start.elapsed().as_micros() as u64) / 4;
            }
        } else {
            kills += 1;
        }
        if let Some((tx, count)) = reported_tx(&stdout) {
            reported.insert(tx, count);
        }
        let conn = Connection::open(&db).unwrap();
        let after: i64 = conn
            .query_row("SELECT coalesce(max(id), 0) FROM tx", [], |r| r.get(0))
            .unwrap();
        if after > before && out.status.code().is_none() {
            killed_after_commit += 1;
        }
        drop(conn);
        // `hist fsck`'s own code, run in this process to spare a process start per round.
        let repo = hist::Repo::open(env.path()).unwrap();
        check_log(&repo, &reported);
        let report = repo.fsck().unwrap();
        assert!(
            report.ok(),
            "fsck after round {rounds}: {:#?}",
            report.problems
        );
        env.run(&[
            "set",
            "probe",
            "/round",
            &rounds.to_string(),
            "--actor",
            "job:probe",
            "-m",
            "r0 set",
        ])
        .ok();
    }
    // The wide documents' writes sealed their changes, more than once.
    let report = hist::Repo::open(env.path()).unwrap().fsck().unwrap();
    assert!(report.segments > 0, "no write sealed a segment");
    let orphans = std::fs::read_dir(env.join(".hist/objects"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count();
    eprintln!(
        "lane {lane}: {kills} kills in {rounds} rounds ({finished} ran to the end; {killed_after_commit} killed \
         after their commit; {} transactions reported; {orphans} orphaned object temp files) in {:?}",
        reported.len(),
        started.elapsed()
    );
    // An orphaned temporary object file (a write killed between writing and renaming it)
    // is harmless: fsck ignores it, and reads never look at it.
    env.write(
        ".hist/objects/.tmp-partial",
        b"\x28\xb5\x2f\xfd half a blob",
    );
    env.run(&["fsck"]).ok();
    assert_eq!(
        env.run(&["show", "probe", "--path", "/round"]).ok(),
        format!("{rounds}\n")
    );
    kills
}
