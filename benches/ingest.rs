//! Snapshot ingest benchmark (issue 3), reported as ratios measured in one run.
//!
//! Generates (no downloads) a product feed of 50,000 records keyed by `id` (about 10 MB) and
//! a sequence of versions where 1% of records change a field, 0.2% are inserted at the top,
//! 0.2% are removed, and tags are reshuffled. Measures, with the release `hist` binary:
//! - ingest of a changed version vs `hist canon` of the same file (target <= 3x);
//! - re-ingest of an unchanged version vs `hist canon` (target <= 1.5x): the same bytes
//!   again, and the same version pretty-printed (unchanged only by its canonical form);
//! - peak memory of an ingest vs the file size (target <= 8x; needs /usr/bin/time);
//! - bytes under `.hist/` after N versions vs the N files zstd-compressed one by one
//!   (target < 1/4).
//!
//! Run with `cargo bench --bench ingest`; `HIST_BENCH_VERSIONS` sets N (default 100).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/feed.rs"]
mod feed;
#[path = "common/measure.rs"]
mod measure;

use measure::dir_size;

fn timed(cmd: &mut Command) -> (Duration, Option<u64>) {
    let use_time = Path::new("/usr/bin/time").exists();
    let mut full = if use_time {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-f")
            .arg("%M")
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(d) = cmd.get_current_dir() {
            c.current_dir(d);
        }
        c
    } else {
        Command::new(cmd.get_program())
    };
    if !use_time {
        full.args(cmd.get_args());
        if let Some(d) = cmd.get_current_dir() {
            full.current_dir(d);
        }
    }
    full.env("HIST_ACTOR", "bench:poller");
    let t = Instant::now();
    let out = full.output().expect("run");
    let elapsed = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kb = use_time
        .then(|| {
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
        })
        .flatten();
    (elapsed, kb)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let versions: usize = std::env::var("HIST_BENCH_VERSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let exe = env!("CARGO_BIN_EXE_hist");
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let hist = |args: &[&str]| {
        let mut c = Command::new(exe);
        c.args(args).current_dir(&repo);
        c
    };
    timed(&mut hist(&["init"]));
    timed(&mut hist(&["rules", "array-key", "/items", "id"]));
    timed(&mut hist(&["rules", "set", "/items[*]/tags"]));

    let mut feed = feed::Feed::first();
    let (mut canon_t, mut ingest_t, mut unchanged_t) = (Vec::new(), Vec::new(), Vec::new());
    let (mut canon_pretty_t, mut unchanged_pretty_t) = (Vec::new(), Vec::new());
    let (mut peak_kb, mut file_bytes, mut zstd_bytes) = (0u64, 0u64, 0u64);
    for v in 0..versions {
        if v > 0 {
            feed.advance();
        }
        let bytes = serde_json::to_vec(&feed.doc()).expect("json");
        let file = tmp.path().join(format!("v{v}.json"));
        std::fs::write(&file, &bytes).expect("write");
        file_bytes = bytes.len() as u64;
        zstd_bytes += zstd::bulk::compress(&bytes, 3).expect("zstd").len() as u64;
        let f = file.to_str().expect("utf-8 path");
        let (c, _) = timed(&mut hist(&["canon", f]));
        let (t, kb) = timed(&mut hist(&["ingest", "feed/acme", f]));
        if v > 0 {
            canon_t.push(c);
            ingest_t.push(t);
        }
        peak_kb = peak_kb.max(kb.unwrap_or(0));
        if v % 10 == 1 {
            unchanged_t.push(timed(&mut hist(&["ingest", "feed/acme", f])).0);
            let pretty = serde_json::to_vec_pretty(&feed.doc()).expect("json");
            let pretty_file = tmp.path().join("pretty.json");
            std::fs::write(&pretty_file, &pretty).expect("write");
            let p = pretty_file.to_str().expect("utf-8 path");
            canon_pretty_t.push(timed(&mut hist(&["canon", p])).0);
            unchanged_pretty_t.push(timed(&mut hist(&["ingest", "feed/acme", p])).0);
            std::fs::remove_file(&pretty_file).expect("rm");
        }
        std::fs::remove_file(&file).expect("rm");
    }
    let median = |mut xs: Vec<Duration>| {
        xs.sort();
        xs[xs.len() / 2]
    };
    let (c, i, u) = (median(canon_t), median(ingest_t), median(unchanged_t));
    let (cp, up) = (median(canon_pretty_t), median(unchanged_pretty_t));
    let stored = dir_size(&repo.join(".hist"));
    println!(
        "feed: {} records, {:.1} MB per version, {versions} versions",
        feed.items.len(),
        file_bytes as f64 / 1e6
    );
    println!(
        "hist canon median {c:?}; ingest (changed) median {i:?}; re-ingest (unchanged) median {u:?}"
    );
    println!(
        "ingest changed / canon:   {:.2}  (target <= 3)",
        i.as_secs_f64() / c.as_secs_f64()
    );
    println!(
        "ingest unchanged / canon: {:.2}  (target <= 1.5; the same bytes again)",
        u.as_secs_f64() / c.as_secs_f64()
    );
    println!(
        "ingest unchanged, pretty-printed / its canon: {:.2}  (target <= 1.5; {up:?} vs {cp:?})",
        up.as_secs_f64() / cp.as_secs_f64()
    );
    if peak_kb > 0 {
        println!(
            "peak memory of an ingest / file size: {:.1}  (target <= 8)",
            peak_kb as f64 * 1024.0 / file_bytes as f64
        );
    } else {
        println!("peak memory: /usr/bin/time not found, not measured");
    }
    println!(
        "storage: .hist {:.1} MB vs {versions} files zstd'd one by one {:.1} MB: ratio {:.3}  (target < 0.25)",
        stored as f64 / 1e6,
        zstd_bytes as f64 / 1e6,
        stored as f64 / zstd_bytes as f64
    );
}
