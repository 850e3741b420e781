//! hist against the tools users would pick instead (issue 9), every figure a ratio of two
//! measurements taken in the same run, on data the benchmark generates itself:
//!
//! 1. **git scraping**: the same 1,000 versions of a 5,000-record feed (pretty JSON, 0.5% of
//!    the records changed, two replaced, per version) ingested into hist (`hist ingest` per
//!    version; the first 200 also by `hist import` of NDJSON, 100 a process) and committed
//!    into git (`git add` + `git commit` per version, dated so `rev-list --before` works).
//!    Time, repository size (every byte under `.git/` after `git gc --aggressive`, and
//!    under `.hist/` after `hist gc`, and as the polls left it), and as-of reads at 20 points, process wall time: `hist show KEY @WHEN` vs
//!    `git rev-list -1 --before=WHEN HEAD` + `git show SHA:feed.json` (outputs checked equal).
//! 2. **an audit table**: the same field updates written to a SQLite table whose AFTER
//!    UPDATE trigger copies the old and new rows into an audit table (rusqlite, WAL,
//!    synchronous=FULL, as hist), and to hist through the library; one commit per write and
//!    100 writes per commit. Then "every change to field X of object K" and "state of K at
//!    time T", answered both ways (and checked equal).
//! 3. **scale**: as-of, history and blame latency as one key's history grows from 10^2 to
//!    10^6 changes (every key built first, then read in rounds that take each size in
//!    turn, so that all sizes are measured under the same load); ingest time and peak memory as a document grows from 10 KB to 10 MB (100 MB
//!    on request).
//!
//! Run with `cargo bench --bench compare` (or `benches/run.sh` for every benchmark). The
//! environment changes the sizes: `HIST_BENCH_ONLY=git,audit,scale,size` picks sections;
//! `HIST_BENCH_GIT_VERSIONS` (1000), `HIST_BENCH_RECORDS` (5000) and
//! `HIST_BENCH_IMPORT_VERSIONS` (200) the feed; `HIST_BENCH_CUSTOMERS` (1000),
//! `HIST_BENCH_SYNCED` (1000), `HIST_BENCH_BATCHED` (50000), `HIST_BENCH_QUESTIONS` (200)
//! and `HIST_BENCH_ROUNDS` (5) the audit comparison; `HIST_BENCH_SCALE_MAX` (1000000) the longest history;
//! `HIST_BENCH_SIZE_MAX_MB` (100) the largest document. With `HIST_BENCH_KEEP` set, the git
//! comparison leaves its repositories behind for a closer look (it prints where).

#[path = "common/measure.rs"]
mod measure;

use hist::{Actor, DocPath, Repo, Timestamp, TxOptions, When};
use measure::{dir_size, gnu_time, wrapped};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// 2026-01-01T00:00:00Z, in seconds.
const BASE: i64 = 1_767_225_600;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A duration the way people read them.
fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn rfc3339(secs: i64) -> String {
    Timestamp(secs * 1_000_000).to_string()
}

/// Runs a command to completion; returns its wall time, its stdout, and its peak resident
/// memory in KB when `/usr/bin/time` is there to measure it.
fn run(cmd: &mut Command, measure_memory: bool) -> (Duration, Vec<u8>, Option<u64>) {
    let time = gnu_time().filter(|_| measure_memory);
    let use_time = time.is_some();
    let mut full = wrapped(cmd, time, ["-f", "%M"]);
    let t = Instant::now();
    let out = full.output().expect("run a command");
    let elapsed = t.elapsed();
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
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
    (elapsed, out.stdout, kb)
}

fn hist_cmd(repo: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hist"));
    // Rules are declared "now", before the history the benchmark records.
    c.current_dir(repo)
        .env("HIST_ACTOR", "bench:poller")
        .env("HIST_NOW", "2025-12-31T00:00:00Z");
    c
}

/// The lines of the results table: what, hist, the alternative, the ratio, the target.
#[derive(Default)]
struct Table(Vec<[String; 5]>);

impl Table {
    fn row(&mut self, what: &str, hist: String, other: String, ratio: String, target: &str) {
        println!("  {what}: hist {hist} | other {other} | {ratio} | target {target}");
        self.0
            .push([what.into(), hist, other, ratio, target.into()]);
    }
    fn note(&mut self, what: &str, text: String) {
        println!("  {what}: {text}");
        self.0.push([
            what.into(),
            text,
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}×", a / b)
}

// ---------------------------------------------------------------------------------------
// The feed: records keyed by `id`, a few of which change in each version.

const BRANDS: [&str; 6] = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"];
const CATEGORIES: [&str; 5] = ["tools", "garden", "kitchen", "office", "toys"];
const TAGS: [&str; 8] = ["new", "sale", "eco", "bulk", "gift", "red", "blue", "xl"];

fn record(id: u64, rng: &mut Rng, at: &str) -> Value {
    let tags: Vec<&str> = TAGS.iter().copied().filter(|_| rng.below(4) == 0).collect();
    json!({
        "id": id,
        "sku": format!("SKU-{id:08}"),
        "name": format!("{} {} model {}", rng.pick(&BRANDS), rng.pick(&CATEGORIES), rng.below(1000)),
        "category": rng.pick(&CATEGORIES),
        "price": {"amount": (rng.below(100_000) as f64) / 100.0, "currency": "EUR"},
        "stock": rng.below(500),
        "active": rng.below(10) != 0,
        "tags": tags,
        "dimensions": {"w": rng.below(100), "h": rng.below(100), "d": rng.below(100)},
        "updated_at": at,
    })
}

struct Feed {
    items: Vec<Value>,
    next_id: u64,
    rng: Rng,
}

impl Feed {
    fn new(records: u64, at: &str) -> Self {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let items = (1..=records).map(|id| record(id, &mut rng, at)).collect();
        Self {
            items,
            next_id: records + 1,
            rng,
        }
    }

    /// One poll later: 0.5% of the records change price or stock, two are discontinued
    /// and two are added.
    fn step(&mut self, at: &str) {
        let rng = &mut self.rng;
        for _ in 0..(self.items.len() / 200).max(1) {
            let i = rng.below(self.items.len() as u64) as usize;
            let item = &mut self.items[i];
            if rng.below(2) == 0 {
                item["price"]["amount"] = json!((rng.below(100_000) as f64) / 100.0);
            } else {
                item["stock"] = json!(rng.below(500));
            }
            item["updated_at"] = json!(at);
        }
        for _ in 0..2 {
            let i = rng.below(self.items.len() as u64) as usize;
            self.items.remove(i);
            self.items.push(record(self.next_id, rng, at));
            self.next_id += 1;
        }
    }

    fn doc(&self, at: &str) -> Value {
        json!({"source": "acme", "generated_at": at, "items": self.items})
    }

    /// The version as pretty JSON (the file a scraper commits) and as one compact NDJSON
    /// import record, without copying the records.
    fn texts(&mut self, at: &str) -> (Vec<u8>, Vec<u8>) {
        let doc = json!({
            "source": "acme",
            "generated_at": at,
            "items": Value::Array(std::mem::take(&mut self.items)),
        });
        let pretty = serde_json::to_vec_pretty(&doc).expect("json");
        let mut line = format!(r#"{{"key":"feed/acme","at":"{at}","actor":"bench:poller","doc":"#)
            .into_bytes();
        serde_json::to_writer(&mut line, &doc).expect("json");
        line.extend_from_slice(b"}\n");
        if let Value::Object(mut map) = doc
            && let Some(Value::Array(items)) = map.remove("items")
        {
            self.items = items;
        }
        (pretty, line)
    }
}

/// A feed document with its items in `id` order (hist stores keyed arrays in key order).
fn by_id(mut doc: hist::canon::Value) -> hist::canon::Value {
    if let Some(items) = doc
        .get_mut("items")
        .and_then(hist::canon::Value::as_array_mut)
    {
        items.sort_by_key(|e| e["id"].as_u64());
    }
    doc
}

// ---------------------------------------------------------------------------------------
// 1. hist vs git scraping.

fn vs_git(table: &mut Table) {
    let versions = env_num("HIST_BENCH_GIT_VERSIONS", 1000) as i64;
    let records = env_num("HIST_BENCH_RECORDS", 5000);
    let imported = (env_num("HIST_BENCH_IMPORT_VERSIONS", 200) as i64).min(versions);
    println!(
        "1. snapshot history vs git: {versions} versions of a {records}-record feed (the first {imported} also through hist import)"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    if std::env::var_os("HIST_BENCH_KEEP").is_some() {
        println!("  keeping the repositories in {}", tmp.path().display());
    }
    let (git_dir, ingest_dir, import_dir) = (
        tmp.path().join("git"),
        tmp.path().join("ingest"),
        tmp.path().join("import"),
    );
    for d in [&git_dir, &ingest_dir, &import_dir] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let git = |args: &[&str]| {
        let mut c = Command::new("git");
        c.args(args)
            .current_dir(&git_dir)
            .env("HOME", tmp.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "poller")
            .env("GIT_AUTHOR_EMAIL", "poller@example.com")
            .env("GIT_COMMITTER_NAME", "poller")
            .env("GIT_COMMITTER_EMAIL", "poller@example.com");
        c
    };
    run(&mut git(&["init", "-q", "-b", "main"]), false);
    for dir in [&ingest_dir, &import_dir] {
        run(hist_cmd(dir).arg("init"), false);
        run(
            hist_cmd(dir).args(["rules", "array-key", "/items", "id"]),
            false,
        );
    }
    let file = git_dir.join("feed.json");
    let file_arg = file.to_str().expect("utf-8 path").to_owned();
    let chunk_file = tmp.path().join("chunk.ndjson");
    let chunk_arg = chunk_file.to_str().expect("utf-8 path").to_owned();
    const CHUNK: i64 = 100;

    let mut feed = Feed::new(records, &rfc3339(BASE));
    let (mut t_ingest, mut t_import, mut t_git) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut t_git_imported = Duration::ZERO;
    let (mut peak_ingest, mut peak_import, mut chunk_bytes) = (0u64, 0u64, 0u64);
    let mut chunk = Vec::new();
    let mut file_bytes = 0u64;
    let started = Instant::now();
    for v in 0..versions {
        let at_secs = BASE + v * 3600;
        let at = rfc3339(at_secs);
        if v > 0 {
            feed.step(&at);
        }
        let (pretty, line) = feed.texts(&at);
        file_bytes = pretty.len() as u64;
        std::fs::write(&file, &pretty).expect("write feed");
        if v < imported {
            chunk.extend_from_slice(&line);
        }

        let ingest = |t: &mut Duration, peak: &mut u64| {
            let (d, _, kb) = run(
                hist_cmd(&ingest_dir).args(["ingest", "feed/acme", &file_arg, "--at", &at]),
                v % 50 == 1,
            );
            *t += d;
            *peak = (*peak).max(kb.unwrap_or(0));
        };
        let commit = |t: &mut Duration| {
            let date = format!("{at_secs} +0000");
            *t += run(&mut git(&["add", "feed.json"]), false).0;
            *t += run(
                git(&["commit", "-q", "-m", &format!("poll {v}")])
                    .env("GIT_AUTHOR_DATE", &date)
                    .env("GIT_COMMITTER_DATE", &date),
                false,
            )
            .0;
        };
        // Alternate who goes first, so neither always finds the file in a warmer cache.
        if v % 2 == 0 {
            ingest(&mut t_ingest, &mut peak_ingest);
            commit(&mut t_git);
        } else {
            commit(&mut t_git);
            ingest(&mut t_ingest, &mut peak_ingest);
        }
        if v + 1 == imported {
            t_git_imported = t_git;
        }
        if v < imported && ((v + 1) % CHUNK == 0 || v + 1 == imported) {
            std::fs::write(&chunk_file, &chunk).expect("write ndjson");
            chunk_bytes = chunk_bytes.max(chunk.len() as u64);
            chunk.clear();
            let (d, _, kb) = run(hist_cmd(&import_dir).args(["import", &chunk_arg]), true);
            t_import += d;
            peak_import = peak_import.max(kb.unwrap_or(0));
        }
        if v % 100 == 99 {
            println!(
                "  … {} versions in {} (hist ingest {}, hist import {}, git {})",
                v + 1,
                show(started.elapsed()),
                show(t_ingest),
                show(t_import),
                show(t_git)
            );
        }
    }
    if chunk_file.exists() {
        std::fs::remove_file(&chunk_file).expect("rm");
    }
    let git_loose = dir_size(&git_dir.join(".git"));
    let (t_gc, _, _) = run(
        &mut git(&["gc", "-q", "--aggressive", "--prune=now"]),
        false,
    );
    let git_packed = dir_size(&git_dir.join(".git"));
    let hist_ingest_bytes = dir_size(&ingest_dir.join(".hist"));
    // Each tool after its own maintenance: git's `gc --aggressive` above, `hist gc` here
    // (which seals what is left and rewrites the database compactly). The reads below run
    // on both.
    let (t_hist_gc, _, _) = run(hist_cmd(&ingest_dir).arg("gc"), false);
    let hist_gc_bytes = dir_size(&ingest_dir.join(".hist"));

    // As-of reads at 20 points, half an hour after a poll.
    let points: Vec<i64> = (0..20)
        .map(|k| BASE + (k * (versions - 1) / 19) * 3600 + 1800)
        .collect();
    let (mut hist_reads, mut git_reads) = (Vec::new(), Vec::new());
    for round in 0..3 {
        for &when in &points {
            let (d, hist_out, _) = run(
                hist_cmd(&ingest_dir).args(["show", "feed/acme", &format!("@{}", rfc3339(when))]),
                false,
            );
            hist_reads.push(d);
            let (d1, sha, _) = run(
                &mut git(&["rev-list", "-1", &format!("--before={when}"), "HEAD"]),
                false,
            );
            let sha = String::from_utf8(sha).expect("sha");
            let (d2, git_out, _) = run(
                &mut git(&["show", &format!("{}:feed.json", sha.trim())]),
                false,
            );
            git_reads.push(d1 + d2);
            if round == 0 {
                // Compared as values (numbers in canonical form: git holds `42.0` where
                // hist prints the same number as `42`).
                let h = hist::canon::parse(&hist_out).expect("hist show output");
                let g = hist::canon::parse(&git_out).expect("git show output");
                if by_id(h.clone()) != by_id(g.clone()) {
                    let dump = std::env::temp_dir().join("hist-bench-disagreement");
                    std::fs::create_dir_all(&dump).expect("mkdir");
                    std::fs::write(dump.join("hist.json"), &hist_out).expect("write");
                    std::fs::write(dump.join("git.json"), &git_out).expect("write");
                    panic!(
                        "hist and git disagree at {when}: both outputs are in {}",
                        dump.display()
                    );
                }
            }
        }
    }
    // The import repository holds the same history (as far as it goes).
    let last = rfc3339(BASE + (imported - 1) * 3600);
    let a = run(
        hist_cmd(&ingest_dir).args(["show", "feed/acme", &format!("@{last}"), "--json"]),
        false,
    )
    .1;
    let b = run(
        hist_cmd(&import_dir).args(["show", "feed/acme", &format!("@{last}"), "--json"]),
        false,
    )
    .1;
    assert!(a == b, "ingest and import repositories differ");

    let (hist_read, git_read) = (median(hist_reads), median(git_reads));
    let n = versions as u32;
    println!(
        "  feed {} per version (pretty JSON); git loose objects {}, gc --aggressive took {}",
        mb(file_bytes),
        mb(git_loose),
        show(t_gc)
    );
    table.row(
        "git: ingest 1 version (per-poll process)",
        show(t_ingest / n),
        format!("{} (add+commit)", show(t_git / n)),
        ratio(secs(t_ingest), secs(t_git)),
        "≤ 1×",
    );
    let m = imported as u32;
    table.row(
        &format!("git: hist import (NDJSON, 100 a process), per version, first {imported}"),
        show(t_import / m),
        format!("{} (add+commit)", show(t_git_imported / m)),
        ratio(secs(t_import), secs(t_git_imported)),
        "≤ 1×",
    );
    table.row(
        "git: storage after the history, each after its gc",
        format!("{} (gc, {})", mb(hist_gc_bytes), show(t_hist_gc)),
        format!("{} (gc --aggressive, {})", mb(git_packed), show(t_gc)),
        ratio(hist_gc_bytes as f64, git_packed as f64),
        "≤ 1×",
    );
    table.row(
        "git: … hist as the polls left it, no gc",
        mb(hist_ingest_bytes),
        format!("{} (gc --aggressive)", mb(git_packed)),
        ratio(hist_ingest_bytes as f64, git_packed as f64),
        "",
    );
    table.row(
        "git: as-of read (process wall time, median of 60)",
        show(hist_read),
        format!("{} (rev-list + show)", show(git_read)),
        format!("{:.2}× faster", secs(git_read) / secs(hist_read)),
        "≥ 3× faster",
    );
    if peak_ingest > 0 {
        table.note(
            "git: peak memory of hist",
            format!(
                "ingest {} ({:.1}× the {} file); import {} (the NDJSON of 100 versions is {})",
                mb(peak_ingest * 1024),
                peak_ingest as f64 * 1024.0 / file_bytes as f64,
                mb(file_bytes),
                mb(peak_import * 1024),
                mb(chunk_bytes)
            ),
        );
    }
    if std::env::var_os("HIST_BENCH_KEEP").is_some() {
        let _ = tmp.keep();
    }
}

// ---------------------------------------------------------------------------------------
// 2. hist vs an audit table kept by a trigger.

const FIELDS: [&str; 12] = [
    "name", "email", "plan", "seats", "status", "region", "mrr", "owner", "phone", "company",
    "country", "notes",
];
const INT_FIELDS: [&str; 2] = ["seats", "mrr"];

fn field_value(field: &str, rng: &mut Rng) -> Value {
    let n = rng.below(1_000_000);
    match field {
        "seats" => json!(1 + n % 500),
        "mrr" => json!(n % 100_000),
        "plan" => json!(["starter", "pro", "team", "enterprise"][(n % 4) as usize]),
        "status" => json!(["trial", "active", "past_due", "churned"][(n % 4) as usize]),
        "region" => json!(["eu-west", "us-east", "ap-south"][(n % 3) as usize]),
        "email" => json!(format!("billing{n}@example.com")),
        "phone" => json!(format!(
            "+33 1 {:02} {:02} {:02} {:02}",
            n % 100,
            n / 100 % 100,
            n / 10_000 % 100,
            n % 97
        )),
        "notes" => json!(format!(
            "Renewal call scheduled, ticket {n}; prefers email contact."
        )),
        other => json!(format!("{other} {n}")),
    }
}

fn sql_of(v: &Value) -> rusqlite::types::Value {
    match v {
        Value::String(s) => rusqlite::types::Value::Text(s.clone()),
        other => rusqlite::types::Value::Integer(other.as_i64().expect("integer field")),
    }
}

fn json_of(v: rusqlite::types::Value) -> Value {
    match v {
        rusqlite::types::Value::Text(s) => Value::String(s),
        rusqlite::types::Value::Integer(i) => json!(i),
        _ => Value::Null,
    }
}

struct Audit {
    conn: Connection,
}

impl Audit {
    fn create(path: &Path) -> Self {
        let conn = Connection::open(path).expect("open audit db");
        let cols = FIELDS
            .iter()
            .map(|f| {
                let ty = if INT_FIELDS.contains(f) {
                    "INTEGER"
                } else {
                    "TEXT"
                };
                format!("{f} {ty}")
            })
            .collect::<Vec<_>>()
            .join(", ");
        let old_new = FIELDS
            .iter()
            .map(|f| format!("old_{f}, new_{f}"))
            .collect::<Vec<_>>()
            .join(", ");
        let values = FIELDS
            .iter()
            .map(|f| format!("OLD.{f}, NEW.{f}"))
            .collect::<Vec<_>>()
            .join(", ");
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             CREATE TABLE customer (id INTEGER PRIMARY KEY, {cols},
                 updated_at INTEGER NOT NULL, updated_by TEXT NOT NULL);
             CREATE TABLE customer_audit (aid INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL,
                 changed_at INTEGER NOT NULL, changed_by TEXT NOT NULL, {old_new});
             CREATE INDEX customer_audit_at ON customer_audit (customer_id, changed_at);
             CREATE TRIGGER customer_audited AFTER UPDATE ON customer BEGIN
                 INSERT INTO customer_audit (customer_id, changed_at, changed_by, {old_new})
                 VALUES (OLD.id, NEW.updated_at, NEW.updated_by, {values});
             END;"
        ))
        .expect("audit schema");
        Self { conn }
    }

    fn insert(&self, id: u64, doc: &Value, at: i64) {
        let cols = FIELDS.join(", ");
        let marks = (3..3 + FIELDS.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "INSERT INTO customer (id, updated_at, updated_by, {cols}) VALUES (?1, ?2, 'bench:seed', {marks})"
            ))
            .expect("prepare");
        let mut args: Vec<rusqlite::types::Value> = vec![(id as i64).into(), at.into()];
        args.extend(FIELDS.iter().map(|f| sql_of(&doc[*f])));
        stmt.execute(rusqlite::params_from_iter(args))
            .expect("insert");
    }

    fn update(&self, id: u64, field: &str, value: &Value, at: i64, by: &str) {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "UPDATE customer SET {field} = ?1, updated_at = ?2, updated_by = ?3 WHERE id = ?4"
            ))
            .expect("prepare");
        stmt.execute(params![sql_of(value), at, by, id as i64])
            .expect("update");
    }

    /// Every change to `field` of customer `id`: (time, old, new), oldest first.
    fn history(&self, id: u64, field: &str) -> Vec<(i64, Value, Value)> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT changed_at, old_{field}, new_{field} FROM customer_audit
                 WHERE customer_id = ?1 AND old_{field} IS NOT new_{field} ORDER BY aid"
            ))
            .expect("prepare");
        stmt.query_map([id as i64], |r| {
            Ok((r.get(0)?, json_of(r.get(1)?), json_of(r.get(2)?)))
        })
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
    }

    /// Customer `id` as of `at`: the newest audited row at or before it, else the old row of
    /// the first change after it, else the current row.
    fn as_of(&self, id: u64, at: i64) -> Value {
        let row = |prefix: &str, sql: &str| -> Option<Value> {
            let cols = FIELDS
                .iter()
                .map(|f| format!("{prefix}{f}"))
                .collect::<Vec<_>>()
                .join(", ");
            let mut stmt = self
                .conn
                .prepare_cached(&sql.replace("COLS", &cols))
                .expect("prepare");
            stmt.query_row(params![id as i64, at], |r| {
                let mut doc = Map::new();
                for (i, f) in FIELDS.iter().enumerate() {
                    doc.insert((*f).to_owned(), json_of(r.get(i)?));
                }
                Ok(Value::Object(doc))
            })
            .optional()
            .expect("query")
        };
        row(
            "new_",
            "SELECT COLS FROM customer_audit WHERE customer_id = ?1 AND changed_at <= ?2
             ORDER BY changed_at DESC, aid DESC LIMIT 1",
        )
        .or_else(|| {
            row(
                "old_",
                "SELECT COLS FROM customer_audit WHERE customer_id = ?1 AND changed_at > ?2
                 ORDER BY changed_at, aid LIMIT 1",
            )
        })
        .or_else(|| row("", "SELECT COLS FROM customer WHERE id = ?1 AND ?2 = ?2"))
        .expect("customer exists")
    }
}

fn vs_audit(table: &mut Table) {
    let customers = env_num("HIST_BENCH_CUSTOMERS", 1000);
    let synced = env_num("HIST_BENCH_SYNCED", 1000);
    let batched = env_num("HIST_BENCH_BATCHED", 50_000);
    println!(
        "2. field history vs an audit table: {customers} customers, {synced} synced + {batched} batched field writes"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let audit = Audit::create(&tmp.path().join("audit.db"));
    let mut repo = Repo::init(&tmp.path().join("hist")).expect("init");
    let actor = Actor::parse("bench:seed").expect("actor");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let micros = |s: i64| s * 1_000_000;

    // The customers, loaded untimed.
    audit.conn.execute_batch("BEGIN").expect("begin");
    repo.begin_batch().expect("batch");
    for id in 1..=customers {
        let doc: Map<String, Value> = FIELDS
            .iter()
            .map(|f| ((*f).to_owned(), field_value(f, &mut rng)))
            .collect();
        let doc = Value::Object(doc);
        audit.insert(id, &doc, micros(BASE));
        let mut txn = repo
            .begin(TxOptions::new(
                actor.clone(),
                "write",
                Timestamp(micros(BASE)),
            ))
            .expect("begin");
        txn.put(&format!("customer/{id}"), doc.into()).expect("put");
        txn.commit().expect("commit");
    }
    repo.commit_batch().expect("batch");
    audit.conn.execute_batch("COMMIT").expect("commit");

    // The same field writes for both, one second apart.
    let writes: Vec<(u64, &str, Value, i64)> = (0..synced + batched)
        .map(|i| {
            let id = 1 + rng.below(customers);
            let field = FIELDS[rng.below(FIELDS.len() as u64) as usize];
            (
                id,
                field,
                field_value(field, &mut rng),
                BASE + 10 + i as i64,
            )
        })
        .collect();
    let paths: Vec<DocPath> = FIELDS
        .iter()
        .map(|f| DocPath::parse(&format!("/{f}")).expect("path"))
        .collect();
    let path_of = |field: &str| &paths[FIELDS.iter().position(|f| *f == field).expect("field")];
    let writer = Actor::parse("user:maria").expect("actor");
    let hist_write = |repo: &mut Repo, (id, field, value, at): &(u64, &str, Value, i64)| {
        let mut txn = repo
            .begin(TxOptions::new(
                writer.clone(),
                "write",
                Timestamp(micros(*at)),
            ))
            .expect("begin");
        txn.set(
            &format!("customer/{id}"),
            path_of(field),
            value.clone().into(),
        )
        .expect("set");
        txn.commit().expect("commit");
    };
    let (synced_writes, batched_writes) = writes.split_at(synced as usize);

    // One commit (one sync) per write, both, interleaved so that both see the same load.
    let (mut audit_synced, mut hist_synced) = (Duration::ZERO, Duration::ZERO);
    for w in synced_writes {
        let t = Instant::now();
        audit.update(w.0, w.1, &w.2, micros(w.3), "user:maria");
        audit_synced += t.elapsed();
        let t = Instant::now();
        hist_write(&mut repo, w);
        hist_synced += t.elapsed();
    }

    // 100 writes per commit, both, batch after batch.
    let (mut audit_batched, mut hist_batched) = (Duration::ZERO, Duration::ZERO);
    for batch in batched_writes.chunks(100) {
        let t = Instant::now();
        audit.conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        for w in batch {
            audit.update(w.0, w.1, &w.2, micros(w.3), "user:maria");
        }
        audit.conn.execute_batch("COMMIT").expect("commit");
        audit_batched += t.elapsed();
        let t = Instant::now();
        repo.begin_batch().expect("batch");
        for w in batch {
            hist_write(&mut repo, w);
        }
        repo.commit_batch().expect("commit batch");
        hist_batched += t.elapsed();
    }

    // The questions: (customer, field) and (customer, time) pairs, each asked of both.
    let asked = env_num("HIST_BENCH_QUESTIONS", 200).max(1);
    let last = BASE + 10 + (synced + batched) as i64;
    let questions: Vec<(u64, &str, i64)> = (0..asked)
        .map(|_| {
            let id = 1 + rng.below(customers);
            let field = FIELDS[rng.below(FIELDS.len() as u64) as usize];
            (
                id,
                field,
                BASE + 10 + rng.below((last - BASE - 10) as u64) as i64,
            )
        })
        .collect();
    let (mut h_hist, mut h_audit, mut a_hist, mut a_audit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut entries = 0;
    for round in 0..env_num("HIST_BENCH_ROUNDS", 5) {
        for &(id, field, at) in &questions {
            let key = format!("customer/{id}");
            let t = Instant::now();
            let ours = repo.history(&key, path_of(field)).expect("history");
            h_hist.push(t.elapsed());
            let t = Instant::now();
            let theirs = audit.history(id, field);
            h_audit.push(t.elapsed());
            let t = Instant::now();
            let ours_then = repo
                .as_of(&key, When::At(Timestamp(micros(at))))
                .expect("as_of")
                .doc;
            a_hist.push(t.elapsed());
            let t = Instant::now();
            let theirs_then = audit.as_of(id, micros(at));
            a_audit.push(t.elapsed());
            if round == 0 {
                // hist also lists the initial value (the put); the trigger saw no insert.
                let changes: Vec<(i64, hist::canon::Value, hist::canon::Value)> = ours
                    .iter()
                    .filter(|e| e.old.is_some())
                    .map(|e| {
                        (
                            e.tx.at.0,
                            e.old.clone().unwrap_or_default(),
                            e.new.clone().unwrap_or_default(),
                        )
                    })
                    .collect();
                let theirs_changes: Vec<(i64, hist::canon::Value, hist::canon::Value)> = theirs
                    .iter()
                    .map(|(at, old, new)| (*at, old.clone().into(), new.clone().into()))
                    .collect();
                assert_eq!(changes, theirs_changes, "history of {key} {field}");
                assert_eq!(ours_then, Some(theirs_then.into()), "{key} at {at}");
                entries += theirs.len();
            }
        }
    }
    let hist_bytes = dir_size(&tmp.path().join("hist").join(".hist"));
    let audit_bytes = dir_size(tmp.path()) - hist_bytes;
    let per_sec = |n: u64, d: Duration| format!("{:.0}/s", n as f64 / secs(d));
    table.row(
        "audit: writes, one commit (sync) each",
        per_sec(synced, hist_synced),
        per_sec(synced, audit_synced),
        format!("{:.2}× the time", secs(hist_synced) / secs(audit_synced)),
        "≤ 1.5×",
    );
    table.row(
        "audit: writes, 100 per commit",
        per_sec(batched, hist_batched),
        per_sec(batched, audit_batched),
        format!("{:.2}× the time", secs(hist_batched) / secs(audit_batched)),
        "≤ 1.5×",
    );
    let (hh, ha) = (median(h_hist), median(h_audit));
    table.row(
        &format!(
            "audit: every change to field X of K ({:.1} entries of ~{} changes to K)",
            entries as f64 / asked as f64,
            (synced + batched) / customers
        ),
        show(hh),
        show(ha),
        format!("{:.2}× faster", secs(ha) / secs(hh)),
        "> 1× faster",
    );
    let (ah, aa) = (median(a_hist), median(a_audit));
    table.row(
        "audit: state of K at time T",
        show(ah),
        show(aa),
        format!("{:.2}× faster", secs(aa) / secs(ah)),
        "> 1× faster",
    );
    table.row(
        "audit: storage",
        mb(hist_bytes),
        mb(audit_bytes),
        ratio(hist_bytes as f64, audit_bytes as f64),
        "(none)",
    );
}

// ---------------------------------------------------------------------------------------
// 3a. Reads as one key's history grows.

fn scale_history(table: &mut Table) {
    let max = env_num("HIST_BENCH_SCALE_MAX", 1_000_000);
    println!("3a. reads as one key's history grows to {max} changes");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut repo = Repo::init(tmp.path()).expect("init");
    let actor = Actor::parse("bench:writer").expect("actor");
    let (price, plan) = (
        DocPath::parse("/price").expect("path"),
        DocPath::parse("/plan").expect("path"),
    );
    // Every key first (key, changes, first time, build time); then the reads of all of
    // them in rounds, the sizes one after the other in each round, so that every size
    // is measured under the same load (measured size after size, a slower minute of the
    // machine made one size look slow and the ratio with it).
    let mut keys = Vec::new();
    let mut n = 100u64;
    let mut start = BASE * 1_000_000;
    while n <= max {
        let key = format!("scale/{n}");
        let t = Instant::now();
        // A 40-field document; /price changes in every transaction, /plan in one of N/10.
        let mut doc: Map<String, Value> = (0..38)
            .map(|i| (format!("field{i}"), json!(format!("value number {i}"))))
            .collect();
        doc.insert("plan".into(), json!("starter"));
        doc.insert("price".into(), json!(0));
        repo.begin_batch().expect("batch");
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "write", Timestamp(start)))
            .expect("begin");
        txn.put(&key, Value::Object(doc).into()).expect("put");
        txn.commit().expect("commit");
        for i in 1..n as i64 {
            if i % 100 == 0 {
                repo.commit_batch().expect("commit batch");
                repo.begin_batch().expect("batch");
            }
            let mut txn = repo
                .begin(TxOptions::new(actor.clone(), "write", Timestamp(start + i)))
                .expect("begin");
            if i % (n as i64 / 10) == 0 {
                txn.set(&key, &plan, format!("plan {i}").into())
                    .expect("set");
            } else {
                txn.set(&key, &price, i.into()).expect("set");
            }
            txn.commit().expect("commit");
        }
        repo.commit_batch().expect("commit batch");
        let build = t.elapsed();
        println!(
            "  {n:>8} changes: built in {} ({:.0} tx/s)",
            show(build),
            n as f64 / secs(build)
        );
        keys.push((key, n, start, build));
        start += n as i64 + 1_000_000;
        n *= 10;
    }

    let sizes = keys.len();
    let (mut as_of, mut hist, mut blame) = (
        vec![Vec::new(); sizes],
        vec![Vec::new(); sizes],
        vec![Vec::new(); sizes],
    );
    for _ in 0..3 {
        for (i, (key, n, start, _)) in keys.iter().enumerate() {
            for k in 0..50 {
                let at = start + (*n as i64 - 1) * k / 49;
                let t = Instant::now();
                let got = repo.as_of(key, When::At(Timestamp(at))).expect("as_of");
                as_of[i].push(t.elapsed());
                assert!(got.doc.is_some());
            }
            for _ in 0..7 {
                let t = Instant::now();
                let got = repo.history(key, &plan).expect("history");
                hist[i].push(t.elapsed());
                assert_eq!(got.len(), 10, "history of /plan");
            }
            for _ in 0..2 {
                let t = Instant::now();
                let got = repo.blame(key, None, None).expect("blame");
                blame[i].push(t.elapsed());
                assert_eq!(got.leaves.len(), 40, "one blame leaf per field");
            }
        }
    }
    let mut results = Vec::new();
    for (i, (key, n, _, build)) in keys.iter().enumerate() {
        let t = Instant::now();
        let all = repo.history(key, &price).expect("history");
        let hot = t.elapsed();
        assert_eq!(all.len() as u64, n - 9, "history of /price");
        let (a, h, b) = (
            median(as_of[i].clone()),
            median(hist[i].clone()),
            median(blame[i].clone()),
        );
        println!(
            "  {n:>8} changes: as-of {}; history of a field with 10 changes {}; blame {}; history of the field with {} changes {} ({:.1} µs each)",
            show(a),
            show(h),
            show(b),
            all.len(),
            show(hot),
            secs(hot) * 1e6 / all.len() as f64
        );
        results.push((*n, a, h, hot, *build, b));
    }
    let (first, last) = (&results[0], &results[results.len() - 1]);
    table.row(
        &format!("scale: as-of read, {} vs {} changes", first.0, last.0),
        show(last.1),
        show(first.1),
        ratio(secs(last.1), secs(first.1)),
        "flat (≤ 2×)",
    );
    table.row(
        &format!(
            "scale: history of a field with 10 changes, key with {} vs {} changes",
            first.0, last.0
        ),
        show(last.2),
        show(first.2),
        ratio(secs(last.2), secs(first.2)),
        "flat (≤ 2×)",
    );
    table.note(
        &format!("scale: history of the field with {} changes", last.0 - 9),
        format!(
            "{} ({:.1} µs per entry)",
            show(last.3),
            secs(last.3) * 1e6 / (last.0 - 9) as f64
        ),
    );
    table.note(
        "scale: batched writes while building",
        format!(
            "{:.0} tx/s at {} changes, {:.0} tx/s at {}",
            first.0 as f64 / secs(first.4),
            first.0,
            last.0 as f64 / secs(last.4),
            last.0
        ),
    );
    table.row(
        &format!(
            "scale: blame of the whole document, key with {} vs {} changes",
            first.0, last.0
        ),
        show(last.5),
        show(first.5),
        ratio(secs(last.5), secs(first.5)),
        "flat (≤ 2×)",
    );
}

// ---------------------------------------------------------------------------------------
// 3b. Ingest as one document grows.

fn scale_size(table: &mut Table) {
    let max_mb = env_num("HIST_BENCH_SIZE_MAX_MB", 100);
    println!("3b. ingest as a document grows to {max_mb} MB");
    let mut rows = Vec::new();
    let mut target = 10_000u64;
    while target <= max_mb * 1_000_000 {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).expect("mkdir");
        run(hist_cmd(&repo).arg("init"), false);
        run(
            hist_cmd(&repo).args(["rules", "array-key", "/items", "id"]),
            false,
        );
        // About 280 bytes a record.
        let at0 = rfc3339(BASE);
        let mut feed = Feed::new((target / 280).max(1), &at0);
        let mut bytes = serde_json::to_vec(&feed.doc(&at0)).expect("json");
        while (bytes.len() as u64) < target {
            let per_record = bytes.len() as u64 / feed.items.len() as u64;
            for _ in 0..(target - bytes.len() as u64).div_ceil(per_record) {
                let id = feed.next_id;
                feed.next_id += 1;
                let r = record(id, &mut feed.rng, &at0);
                feed.items.push(r);
            }
            bytes = serde_json::to_vec(&feed.doc(&at0)).expect("json");
        }
        let file = tmp.path().join("doc.json");
        let f = file.to_str().expect("utf-8 path").to_owned();
        std::fs::write(&file, &bytes).expect("write");
        let (first, _, first_kb) = run(hist_cmd(&repo).args(["ingest", "doc", &f]), true);
        let at1 = rfc3339(BASE + 3600);
        feed.step(&at1);
        let bytes = serde_json::to_vec(&feed.doc(&at1)).expect("json");
        std::fs::write(&file, &bytes).expect("write");
        let (canon, _, _) = run(hist_cmd(&repo).args(["canon", &f]), false);
        let (next, _, next_kb) = run(hist_cmd(&repo).args(["ingest", "doc", &f]), true);
        let (first_peak, next_peak) = (first_kb.unwrap_or(0) * 1024, next_kb.unwrap_or(0) * 1024);
        let times = |peak: u64| peak as f64 / bytes.len() as f64;
        println!(
            "  {:>9}: first version {} (peak memory {:.1}× the file), changed version {} ({:.1}×); hist canon {}",
            mb(bytes.len() as u64),
            show(first),
            times(first_peak),
            show(next),
            times(next_peak),
            show(canon),
        );
        rows.push((bytes.len() as u64, first, next, first_peak, next_peak));
        target *= 10;
    }
    let per_mb = |r: &(u64, Duration, Duration, u64, u64)| secs(r.2) / (r.0 as f64 / 1e6);
    let big = &rows[rows.len() - 1];
    if let Some(mid) = rows.iter().find(|r| r.0 >= 1_000_000 && r.0 < big.0) {
        table.row(
            &format!(
                "size: ingest time per MB, {} vs {} document",
                mb(big.0),
                mb(mid.0)
            ),
            format!("{:.0} ms/MB", per_mb(big) * 1e3),
            format!("{:.0} ms/MB", per_mb(mid) * 1e3),
            ratio(per_mb(big), per_mb(mid)),
            "linear (≈ 1×)",
        );
    }
    if big.4 > 0 {
        table.row(
            &format!(
                "size: peak memory, ingest of a changed {} document",
                mb(big.0)
            ),
            mb(big.4),
            mb(big.0),
            format!("{:.1}× the file", big.4 as f64 / big.0 as f64),
            "≤ 8×",
        );
        table.row(
            &format!(
                "size: peak memory, first ingest of a {} document",
                mb(big.0)
            ),
            mb(big.3),
            mb(big.0),
            format!("{:.1}× the file", big.3 as f64 / big.0 as f64),
            "≤ 8×",
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let only = std::env::var("HIST_BENCH_ONLY").unwrap_or_default();
    let wanted = |s: &str| only.is_empty() || only.split(',').any(|o| o.trim() == s);
    let mut table = Table::default();
    let started = Instant::now();
    let mut timings = String::new();
    type Section = fn(&mut Table);
    let sections: [(&str, Section); 4] = [
        ("git", vs_git),
        ("audit", vs_audit),
        ("scale", scale_history),
        ("size", scale_size),
    ];
    for (name, f) in sections {
        if wanted(name) {
            let t = Instant::now();
            f(&mut table);
            let _ = write!(timings, " {name} {}", show(t.elapsed()));
        }
    }
    println!();
    println!("| measure | hist | alternative | ratio | target |");
    println!("|---|---|---|---|---|");
    for [a, b, c, d, e] in &table.0 {
        println!("| {a} | {b} | {c} | {d} | {e} |");
    }
    println!();
    println!(
        "compare: finished in {} ({})",
        show(started.elapsed()),
        timings.trim()
    );
}
