//! Core benchmarks (issue 2), reported as ratios measured in one run:
//! - as-of flatness: `as_of` on a key with 100 changes vs one with 100,000 changes;
//! - write throughput: single-field transactions per second through the library (WAL, FULL);
//! - CLI overhead: `hist set` vs `hist --version`, per invocation.
//!
//! Run with `cargo bench --bench core`. Set `HIST_BENCH_LONG=N` to change the long history.

use hist::{Actor, DocPath, Repo, Timestamp, TxOptions, When};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Writes a 40-field document under `key`, then `n - 1` single-field transactions; with
/// `batch > 1`, that many transactions share one SQLite commit.
fn fill(repo: &mut Repo, key: &str, n: i64, start: i64, batch: i64) {
    let actor = Actor::parse("bench:writer").expect("actor");
    let path = DocPath::parse("/price").expect("path");
    // A document of a realistic size: 40 fields, one of which changes.
    let mut txn = repo
        .begin(TxOptions::new(actor.clone(), "write", Timestamp(start)))
        .expect("begin");
    let base: serde_json::Map<String, serde_json::Value> = (0..40)
        .map(|i| (format!("field{i}"), json!(format!("value number {i}"))))
        .collect();
    txn.put(key, serde_json::Value::Object(base).into())
        .expect("put");
    txn.commit().expect("commit");
    for i in 1..n {
        if batch > 1 && i % batch == 1 {
            repo.commit_batch().expect("commit batch");
            repo.begin_batch().expect("batch");
        }
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "write", Timestamp(start + i)))
            .expect("begin");
        txn.set(key, &path, i.into()).expect("set");
        txn.commit().expect("commit");
    }
    repo.commit_batch().expect("commit batch");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let long: i64 = std::env::var("HIST_BENCH_LONG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut repo = Repo::init(dir.path()).expect("init");

    // Write throughput: every transaction synced on its own (synchronous=FULL), then 100
    // transactions per SQLite commit (as `hist import` does).
    let t = Instant::now();
    fill(&mut repo, "synced", 1_000, 1, 1);
    let synced_per_sec = 1_000.0 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    fill(&mut repo, "long", long, 1_000_000, 100);
    let per_sec = long as f64 / t.elapsed().as_secs_f64();
    fill(&mut repo, "short", 100, 10_000_000, 1);

    // As-of flatness: 50 targets spread over each history.
    let measure = |key: &str, first_at: i64, n: i64| {
        let mut times = Vec::new();
        for round in 0..3 {
            for k in 0..50 {
                let at = first_at + (n - 1) * k / 49;
                let t = Instant::now();
                let got = repo.as_of(key, When::At(Timestamp(at))).expect("as_of");
                times.push(t.elapsed());
                assert!(got.doc.is_some() && round < 3);
            }
        }
        median(times)
    };
    let short = measure("short", 10_000_000, 100);
    let long_t = measure("long", 1_000_000, long);

    // CLI overhead.
    let exe = env!("CARGO_BIN_EXE_hist");
    let run = |args: &[&str]| {
        let t = Instant::now();
        let status = Command::new(exe)
            .args(args)
            .current_dir(dir.path())
            .env("HIST_ACTOR", "bench:cli")
            .output()
            .expect("run hist");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        t.elapsed()
    };
    let version = median((0..30).map(|_| run(&["--version"])).collect());
    let set = median(
        (0..30)
            .map(|i| run(&["set", "cli", "/n", &i.to_string()]))
            .collect(),
    );

    println!("as-of median, 100 changes:        {short:?}");
    println!("as-of median, {long} changes:    {long_t:?}");
    println!(
        "as-of flatness ratio (long/short): {:.2}  (target <= 2)",
        long_t.as_secs_f64() / short.as_secs_f64()
    );
    println!("write throughput, one sync per transaction: {synced_per_sec:.0} transactions/s");
    println!(
        "write throughput, 100 transactions per commit: {per_sec:.0} transactions/s  (target >= 5000)"
    );
    println!(
        "CLI: hist --version {version:?}, hist set {set:?}, ratio {:.2}",
        set.as_secs_f64() / version.as_secs_f64()
    );
}
