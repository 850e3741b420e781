//! The Rust library's side of `benches/bindings.sh` (which runs the Go, Python and command
//! line sides and prints the ratios): `cargo bench --bench bindings -- MODE DIR [N]`.
//!
//! - `prepare DIR`: a repository in `DIR/repo` whose `customer/1` (a small document) has 200
//!   transactions, and the benchmark feed's first two versions as `DIR/feed-v0.json` and
//!   `DIR/feed-v1.json` (`common/feed.rs`);
//! - `read DIR N`: N as-of reads of `customer/1` at `@tx:100` through one open handle;
//!   prints the nanoseconds per read;
//! - `ingest DIR N`: N times, in a fresh repository with the feed's rules, ingests version 0
//!   then times the ingest of version 1 (given as bytes); prints the median in seconds.

#[path = "common/feed.rs"]
mod feed;

use hist::{Actor, DocPath, Repo, Timestamp, TxOptions, When};
use std::path::Path;
use std::time::Instant;

fn opts(kind: &str) -> TxOptions {
    TxOptions::new(
        Actor::parse("bench:rust").expect("actor"),
        kind,
        Timestamp(0),
    )
}

fn prepare(dir: &Path) {
    let mut repo = Repo::init(&dir.join("repo")).expect("init");
    for i in 0..200 {
        let mut txn = repo.begin(opts("write")).expect("begin");
        let (path, value) = if i % 2 == 0 {
            (
                "/plan",
                hist::canon::Value::from(["free", "pro", "team"][i % 3]),
            )
        } else {
            ("/seats", hist::canon::Value::from(i))
        };
        txn.set("customer/1", &DocPath::parse(path).expect("path"), value)
            .expect("set");
        txn.commit().expect("commit");
    }
    let mut feed = feed::Feed::first();
    for v in 0..2 {
        if v > 0 {
            feed.advance();
        }
        let bytes = serde_json::to_vec(&feed.doc()).expect("json");
        std::fs::write(dir.join(format!("feed-v{v}.json")), bytes).expect("write the feed");
    }
}

fn read(dir: &Path, n: u32) {
    let repo = Repo::open(&dir.join("repo")).expect("open");
    let read = || repo.as_of_text("customer/1", When::Tx(100)).expect("read");
    for _ in 0..n / 10 {
        read();
    }
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(read());
    }
    println!("{}", start.elapsed().as_nanos() / u128::from(n));
}

/// A fresh repository with the feed's rules (as `hist rules` declares them).
fn feed_repo(dir: &Path) -> Repo {
    let mut repo = Repo::init(dir).expect("init");
    let mut txn = repo.begin(opts("rules")).expect("begin");
    let pattern = |p: &str| hist::path::PathPattern::parse(p).expect("pattern");
    txn.add_rule(
        &pattern("/items"),
        None,
        &hist::rules::RuleKind::ArrayKey(vec!["id".into()]),
    )
    .expect("rule");
    txn.add_rule(
        &pattern("/items[*]/tags"),
        None,
        &hist::rules::RuleKind::Set,
    )
    .expect("rule");
    txn.commit().expect("commit");
    repo
}

fn ingest(dir: &Path, n: u32) {
    let v0 = std::fs::read(dir.join("feed-v0.json")).expect("feed-v0.json");
    let v1 = std::fs::read(dir.join("feed-v1.json")).expect("feed-v1.json");
    let mut times = Vec::new();
    for _ in 0..n {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut repo = feed_repo(tmp.path());
        let put = |repo: &mut Repo, bytes: &[u8]| {
            let mut txn = repo.begin(opts("ingest")).expect("begin");
            txn.put_json("feed/acme", bytes).expect("ingest");
            txn.commit().expect("commit");
        };
        put(&mut repo, &v0);
        let start = Instant::now();
        put(&mut repo, &v1);
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!("{}", times[times.len() / 2]);
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let n = |i: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(5);
    match args.first().map(String::as_str) {
        Some("prepare") => prepare(Path::new(&args[1])),
        Some("read") => read(Path::new(&args[1]), n(2)),
        Some("ingest") => ingest(Path::new(&args[1]), n(2)),
        _ => eprintln!(
            "run benches/bindings.sh (this is its Rust side: prepare|read|ingest DIR [N])"
        ),
    }
}
