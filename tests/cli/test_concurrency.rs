//! Concurrent writers and readers: several `hist` processes at once never lose a write,
//! never fail with "database is locked", never interleave a transaction, and readers never
//! see half of one.

use crate::common::TestEnv;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// `hist` in `dir` with the real clock (each process reads it at its own moment).
fn hist(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hist"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HIST_ACTOR", "job:concurrent")
        .output()
        .unwrap()
}

#[track_caller]
fn ok(what: &str, out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("locked"), "{what}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tx_of(stdout: &str) -> i64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recorded tx "))
        .unwrap_or_else(|| panic!("no tx reported: {stdout}"));
    line["recorded tx ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn writers_and_readers_at_once() {
    let env = TestEnv::init();
    let dir = env.path().to_path_buf();
    ok(
        "setup",
        &hist(
            &dir,
            &["set", "pair", "", r#"{"x":0,"y":0}"#, "-m", "setup"],
        ),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let run_for = Duration::from_secs(3);
    let mut writers = Vec::new();
    // Four writers on their own keys, two on one shared key (each on its own field), and
    // one that always changes two fields together in one transaction.
    let jobs: Vec<(String, String)> = (0..4)
        .map(|i| (format!("own/{i}"), "/n".to_owned()))
        .chain((0..2).map(|i| ("shared".to_owned(), format!("/w{i}"))))
        .collect();
    for (key, path) in jobs {
        let dir = dir.clone();
        writers.push(thread::spawn(move || {
            let start = Instant::now();
            let mut txs = Vec::new();
            let mut n = 0;
            while start.elapsed() < run_for {
                n += 1;
                let out = hist(&dir, &["set", &key, &path, &n.to_string()]);
                txs.push(tx_of(&ok(&format!("set {key} {path} {n}"), &out)));
            }
            (key, path, n, txs)
        }));
    }
    let pair = {
        let dir = dir.clone();
        thread::spawn(move || {
            let start = Instant::now();
            let mut n = 0;
            let mut txs = Vec::new();
            while start.elapsed() < run_for {
                n += 1;
                let patch = dir.join(format!("pair-{n}.json"));
                std::fs::write(
                    &patch,
                    format!(
                        r#"[{{"op":"replace","path":"/x","value":{n}}},{{"op":"replace","path":"/y","value":{n}}}]"#
                    ),
                )
                .unwrap();
                let out = hist(
                    &dir,
                    &["apply", "pair", patch.to_str().unwrap(), "-m", "pair"],
                );
                txs.push(tx_of(&ok("apply pair", &out)));
            }
            (n, txs)
        })
    };
    // Readers: the pair is always seen whole, in current state and in the log alike, and
    // the log never shows a transaction without its changes.
    let check = "SELECT json_extract(doc, '$.x') = json_extract(doc, '$.y') AS same,
            (SELECT count(*) FROM changes WHERE key = 'pair' AND reason = 'pair')
              = 2 * (SELECT count(*) FROM transactions WHERE reason = 'pair') AS whole,
            coalesce((SELECT new FROM changes WHERE key = 'pair' AND path = '/x' ORDER BY id DESC LIMIT 1), '0')
              = json_extract(doc, '$.x') || '' AS agree,
            (SELECT count(*) FROM transactions t
               WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.tx = t.id)) AS empty
         FROM current WHERE key = 'pair'";
    let mut readers = Vec::new();
    for r in 0..2 {
        let dir = dir.clone();
        let stop = Arc::clone(&stop);
        readers.push(thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                let out = ok("sql", &hist(&dir, &["sql", "--csv", check]));
                let row = out.lines().nth(1).unwrap_or_default().to_owned();
                assert_eq!(row, "1,1,1,0", "a reader saw half a transaction");
                let args: &[&str] = if r == 0 {
                    &["show", "pair"]
                } else {
                    &["log", "-n", "5"]
                };
                let out = ok(args[0], &hist(&dir, args));
                if r == 0 {
                    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
                    assert_eq!(doc["x"], doc["y"], "show saw half a transaction");
                }
                reads += 2;
            }
            reads
        }));
    }
    let mut all_txs = Vec::new();
    let mut expected = Vec::new();
    for w in writers {
        let (key, path, n, txs) = w.join().unwrap();
        assert_eq!(txs.len(), n);
        all_txs.extend(txs);
        expected.push((key, path, n));
    }
    let (pairs, pair_txs) = pair.join().unwrap();
    all_txs.extend(pair_txs);
    stop.store(true, Ordering::Relaxed);
    let reads: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    eprintln!("{} writes and {reads} reads in parallel", all_txs.len());
    assert!(reads > 0);

    // No write lost, none reported twice: tx ids 2..=N+1 each reported once.
    all_txs.sort_unstable();
    let n = all_txs.len() as i64;
    assert_eq!(all_txs, (2..=n + 1).collect::<Vec<_>>());
    for (key, path, n) in expected {
        assert_eq!(
            env.run(&["show", &key, "--path", &path]).ok(),
            format!("{n}\n"),
            "{key} {path}"
        );
    }
    assert_eq!(
        env.run(&["show", "pair"]).ok(),
        format!("{{\n  \"x\": {pairs},\n  \"y\": {pairs}\n}}\n")
    );
    // Ids and times are totally ordered: a higher id never has an earlier time.
    assert_eq!(
        env.run(&[
            "sql",
            "SELECT count(*) FROM transactions a JOIN transactions b ON b.id = a.id + 1 WHERE b.at < a.at"
        ])
        .ok(),
        "count(*)\n0\n"
    );
    assert_eq!(
        env.run(&["sql", "SELECT count(*) FROM transactions"]).ok(),
        format!("count(*)\n{}\n", n + 1)
    );
    env.run(&["fsck"]).ok();
}
