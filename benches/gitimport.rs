//! `hist import --git` on a real git-scraping history (issue 26), every figure a ratio of
//! two measurements taken in the same run:
//!
//! 1. The repository: `../shared/data`'s 737 versions of the CDC's `states.json` (see its
//!    README), one commit each (pretty JSON, as a scraper writes it), committer dates from
//!    the versions' `at`, built with `git fast-import`.
//! 2. **Import**: `hist import --git` (the array of records keyed by `Location`, declared
//!    first) against `git-history file` (PyPI `git-history`, `--convert` to the
//!    `vaccination_data` array, `--id Location`) on the same repository and file. Target:
//!    hist at least 10× faster.
//! 3. **Reading git**: the part of the import that reads git (`GitHistory`, the library's
//!    reader: `git log` and `git cat-file --batch`), timed to the last blob read, against
//!    `git log -p` over the file. Target: no slower.
//! 4. **Storage**: `.hist` (every byte under it) against the git repository packed by
//!    `git gc --aggressive`.
//! 5. **As-of reads** at 20 moments: `hist show KEY @WHEN` against `git rev-list -1
//!    --before=WHEN` + `git show SHA:states.json` (outputs checked equal as values).
//!
//! Run with `cargo bench --bench gitimport`. The data is read from `../shared/data` (or
//! `HIST_BENCH_DATA`, the `.ndjson.zst` file); without it the benchmark says so and stops.
//! `git-history` is looked for on the PATH (or `HIST_BENCH_GIT_HISTORY`); without it that
//! comparison is skipped with a message (`pip install git-history`). `HIST_BENCH_KEEP` keeps
//! the repositories and prints where.

#[path = "common/measure.rs"]
mod measure;

use hist::import::git::GitHistory;
use measure::{dir_size, gnu_time, wrapped};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn data_file() -> PathBuf {
    std::env::var_os("HIST_BENCH_DATA").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/data/cdc-vaccination-states.ndjson.zst")
        },
        PathBuf::from,
    )
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn git(repo: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(repo).args(args);
    c
}

/// What a command took: wall time, CPU time and peak memory (through GNU time, where
/// there is `/usr/bin/time`), and its output.
struct Measured {
    wall: Duration,
    cpu: Option<Duration>,
    peak_kib: Option<u64>,
    stdout: Vec<u8>,
}

/// Runs `cmd` to completion under `/usr/bin/time` where there is one (its report written
/// into `scratch`).
fn measured(cmd: &Command, scratch: &Path) -> Measured {
    let report = scratch.join("time.report");
    let time = gnu_time();
    let gnu = time.is_some();
    let mut run = wrapped(
        cmd,
        time,
        [
            "-f".as_ref(),
            "%U %S %M".as_ref(),
            "-o".as_ref(),
            report.as_os_str(),
        ],
    );
    let (wall, stdout) = timed(&mut run);
    let fields: Vec<f64> = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| t.lines().last().map(str::to_owned))
        .map(|l| l.split(' ').filter_map(|f| f.parse().ok()).collect())
        .unwrap_or_default();
    let (cpu, peak_kib) = match fields[..] {
        [user, system, kib] if gnu => (
            Some(Duration::from_secs_f64(user + system)),
            Some(kib as u64),
        ),
        _ => (None, None),
    };
    Measured {
        wall,
        cpu,
        peak_kib,
        stdout,
    }
}

/// Runs a command to completion, its output drained; its wall time and stdout.
fn timed(cmd: &mut Command) -> (Duration, Vec<u8>) {
    let t = Instant::now();
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .expect("run a command");
    let elapsed = t.elapsed();
    assert!(out.status.success(), "{cmd:?} failed");
    (elapsed, out.stdout)
}

fn hist(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hist"));
    c.current_dir(dir).env("HIST_NOW", "2026-01-01T00:00:00Z");
    c
}

/// The versions as a git repository: one commit per version, pretty JSON. Returns the
/// number of versions and the times of their commits (Unix seconds).
fn build_repo(data: &Path, repo: &Path) -> (usize, Vec<i64>) {
    assert!(
        git(
            repo.parent().expect("bench setup"),
            &["init", "-q", "-b", "main"]
        )
        .arg(repo)
        .status()
        .expect("bench setup")
        .success()
    );
    let mut fast = git(repo, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    let mut input = std::io::BufWriter::new(fast.stdin.take().expect("bench setup"));
    let mut decoder =
        zstd::stream::read::Decoder::new(std::fs::File::open(data).expect("bench setup"))
            .expect("bench setup");
    decoder.window_log_max(27).expect("bench setup");
    let mut times = Vec::new();
    for line in BufReader::new(decoder).lines() {
        let record: serde_json::Value =
            serde_json::from_str(&line.expect("bench setup")).expect("bench setup");
        let at = record["at"].as_str().expect("bench setup");
        let secs = hist::Timestamp::parse_rfc3339(at).expect("bench setup").0 / 1_000_000;
        let doc = serde_json::to_string_pretty(&record["doc"]).expect("bench setup") + "\n";
        let message = format!("Latest data: {at}");
        let who = "Automated <actions@users.noreply.github.com>";
        write!(
            input,
            "commit refs/heads/main\nauthor {who} {secs} +0000\ncommitter {who} {secs} +0000\n\
             data {}\n{message}\nM 100644 inline states.json\ndata {}\n{doc}\n",
            message.len(),
            doc.len()
        )
        .expect("bench setup");
        times.push(secs);
    }
    drop(input);
    assert!(fast.wait().expect("bench setup").success());
    // git-history reads the file from the work tree first.
    assert!(
        git(repo, &["reset", "-q", "--hard"])
            .status()
            .expect("bench setup")
            .success()
    );
    (times.len(), times)
}

/// `vaccination_data` ordered by `Location`, the rest as is: what both sides hold.
fn normal(text: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(text).expect("JSON");
    if let Some(a) = v.get_mut("vaccination_data").and_then(|a| a.as_array_mut()) {
        a.sort_by(|x, y| x["Location"].to_string().cmp(&y["Location"].to_string()));
    }
    v
}

fn main() {
    let data = data_file();
    if !data.is_file() {
        println!(
            "SKIPPED: the git import benchmark reads {} (see ../shared/data/README.md); it is absent",
            data.display()
        );
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let repo = work.path().join("scraper");
    let t = Instant::now();
    let (versions, times) = build_repo(&data, &repo);
    println!(
        "built a git repository of {versions} versions of states.json in {}",
        show(t.elapsed())
    );

    // Reading git: `git log -p` over the file, and hist's reader to the last blob.
    let (logp, patch) = timed(&mut git(
        &repo,
        &["log", "-p", "--first-parent", "--", "states.json"],
    ));
    let t = Instant::now();
    let mut history =
        GitHistory::open(&repo, "HEAD", None, &["states.json".to_owned()]).expect("open");
    let (mut commits, mut bytes, mut largest) = (0u64, 0u64, 0u64);
    while let Some((_, versions)) = history.next_commit().expect("read") {
        commits += 1;
        for (_, content) in versions {
            if let hist::import::git::Content::Bytes(b) = content {
                bytes += b.len() as u64;
                largest = largest.max(b.len() as u64);
            }
        }
    }
    let read = t.elapsed();
    drop(history);

    // The import.
    let store = work.path().join("hist");
    std::fs::create_dir_all(&store).expect("bench setup");
    timed(hist(&store).arg("init"));
    timed(hist(&store).args([
        "rules",
        "array-key",
        "/vaccination_data",
        "Location",
        "--actor",
        "user:bench",
        "--at",
        "@2021-01-01",
    ]));
    let mut import_cmd = hist(&store);
    import_cmd.args([
        "import",
        "--git",
        repo.to_str().expect("bench setup"),
        "--file",
        "states.json",
        "--key",
        "cdc/states",
        "--json",
    ]);
    let import = measured(&import_cmd, work.path());
    let summary = String::from_utf8_lossy(&import.stdout).trim().to_owned();

    // git-history, where installed.
    let git_history = std::env::var_os("HIST_BENCH_GIT_HISTORY")
        .map_or_else(|| PathBuf::from("git-history"), PathBuf::from);
    let gh_db = work.path().join("git-history.db");
    let installed = Command::new(&git_history)
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let gh = if installed {
        let mut cmd = Command::new(&git_history);
        cmd.arg("file")
            .arg(&gh_db)
            .arg("states.json")
            .arg("--repo")
            .arg(&repo)
            .args([
                "--convert",
                "json.loads(content)[\"vaccination_data\"]",
                "--id",
                "Location",
            ]);
        Some(measured(&cmd, work.path()))
    } else {
        None
    };

    // Storage.
    let hist_bytes = dir_size(&store.join(".hist"));
    let t = Instant::now();
    timed(&mut git(
        &repo,
        &["gc", "-q", "--aggressive", "--prune=now"],
    ));
    let gc = t.elapsed();
    let pack_bytes: u64 = std::fs::read_dir(repo.join(".git/objects/pack"))
        .expect("bench setup")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .map(|e| e.metadata().expect("bench setup").len())
        .sum();

    // As-of reads at 20 moments, an hour after a version.
    let (mut hist_reads, mut git_reads) = (Vec::new(), Vec::new());
    for round in 0..3 {
        for k in 0..20 {
            let when = times[k * (versions - 1) / 19] + 3600;
            let at = hist::Timestamp(when * 1_000_000).to_string();
            let (d, h) = timed(hist(&store).args(["show", "cdc/states", &format!("@{at}")]));
            hist_reads.push(d);
            let (d1, sha) = timed(&mut git(
                &repo,
                &["rev-list", "-1", &format!("--before={when}"), "HEAD"],
            ));
            let sha = String::from_utf8(sha).expect("bench setup");
            let (d2, g) = timed(&mut git(
                &repo,
                &["show", &format!("{}:states.json", sha.trim())],
            ));
            git_reads.push(d1 + d2);
            if round == 0 {
                assert!(normal(&h) == normal(&g), "hist and git disagree at {at}");
            }
        }
    }
    let (hist_read, git_read) = (median(hist_reads), median(git_reads));

    println!("import summary: {summary}");
    if let Some(kib) = import.peak_kib {
        println!(
            "import peak memory: {} (the largest of hist and the git processes it runs, \
             whose delta cache and mapped pack count; largest version {}, all versions {})",
            mb(kib * 1024),
            mb(largest),
            mb(bytes)
        );
    }
    println!();
    println!("| what | hist | other | ratio | target |");
    println!("|---|---|---|---|---|");
    match &gh {
        Some(gh) => {
            println!(
                "| import {versions} versions: `hist import --git` vs `git-history file`, wall | {} | {} | {:.1}× faster | ≥ 10× |",
                show(import.wall),
                show(gh.wall),
                gh.wall.as_secs_f64() / import.wall.as_secs_f64()
            );
            if let (Some(h), Some(g)) = (import.cpu, gh.cpu) {
                println!(
                    "| … CPU time (user + system, git's processes included) | {} | {} | {:.1}× less | |",
                    show(h),
                    show(g),
                    g.as_secs_f64() / h.as_secs_f64()
                );
            }
        }
        None => println!(
            "| import {versions} versions: `hist import --git` | {} | git-history not found (pip install git-history) | | ≥ 10× |",
            show(import.wall)
        ),
    }
    println!(
        "| reading git to the last blob ({commits} commits, {}) vs `git log -p` ({}) | {} | {} | {:.2}× the time | ≤ 1× |",
        mb(bytes),
        mb(patch.len() as u64),
        show(read),
        show(logp),
        read.as_secs_f64() / logp.as_secs_f64()
    );
    println!(
        "| storage: `.hist` vs the pack after `git gc --aggressive` ({}) | {} | {} | {:.2}× | < 1× |",
        show(gc),
        mb(hist_bytes),
        mb(pack_bytes),
        hist_bytes as f64 / pack_bytes as f64
    );
    println!(
        "| as-of read: `hist show @T` vs `git rev-list` + `git show` (medians of 60) | {} | {} | {:.2}× faster | |",
        show(hist_read),
        show(git_read),
        git_read.as_secs_f64() / hist_read.as_secs_f64()
    );
    if std::env::var_os("HIST_BENCH_KEEP").is_some() {
        let kept = work.keep();
        println!("kept the repositories in {}", kept.display());
    }
}
