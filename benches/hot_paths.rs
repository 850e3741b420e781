//! The library's hot paths one by one (divan): parsing, canonicalizing, hashing and diffing
//! a snapshot, applying changes, the SQLite writes of an ingest and of a field write, and the
//! three reads (as-of, history, blame). `compare`, `core` and `ingest` measure whole
//! programs against git and an audit table; this says where their time goes.
//!
//! Run with `cargo bench --bench hot_paths` (part of `benches/run.sh`). All data is
//! generated: a feed of 5,000 records keyed by `id` with tag sets (`HIST_BENCH_RECORDS`
//! changes the size), and a version of it one poll later, with 25 records changed, two
//! removed and two added.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use hist::path::PathPattern;
use hist::rules::{KeyRules, RuleKind};
use hist::{Actor, DocPath, Repo, Timestamp, TxOptions, When};
use serde_json::{Value, json};
use std::sync::LazyLock;

fn main() {
    divan::main();
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const TAGS: [&str; 6] = ["new", "sale", "eco", "bulk", "gift", "outlet"];

fn record(id: u64, rng: &mut Rng, at: &str) -> Value {
    let tags: Vec<&str> = TAGS.iter().copied().filter(|_| rng.below(4) == 0).collect();
    json!({
        "id": id,
        "sku": format!("SKU-{id:08}"),
        "name": format!("model {}", rng.below(1000)),
        "price": {"amount": (rng.below(100_000) as f64) / 100.0, "currency": "EUR"},
        "stock": rng.below(500),
        "active": rng.below(10) != 0,
        "tags": tags,
        "updated_at": at,
    })
}

/// A feed as a poller fetches it (pretty-printed, records in the vendor's order), and the
/// same feed one poll later.
struct Feeds {
    before: Vec<u8>,
    after: Vec<u8>,
}

static FEEDS: LazyLock<Feeds> = LazyLock::new(|| {
    let records = std::env::var("HIST_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000u64);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut items: Vec<Value> = (1..=records)
        .map(|id| record(id, &mut rng, "2026-01-01T00:00:00Z"))
        .collect();
    let feed = |items: &[Value]| {
        serde_json::to_vec_pretty(&json!({"vendor": "acme", "items": items})).expect("feed")
    };
    let before = feed(&items);
    let later = "2026-01-01T01:00:00Z";
    for _ in 0..(records / 200).max(1) {
        let i = rng.below(items.len() as u64) as usize;
        items[i]["price"]["amount"] = json!((rng.below(100_000) as f64) / 100.0);
        items[i]["updated_at"] = json!(later);
    }
    for n in 0..2 {
        let i = rng.below(items.len() as u64) as usize;
        items.remove(i);
        items.push(record(records + 1 + n, &mut rng, later));
    }
    Feeds {
        before,
        after: feed(&items),
    }
});

/// The feed's array rules: records keyed by `id`, tags a set.
fn declare_rules(repo: &mut Repo) {
    let mut txn = repo
        .begin(TxOptions::new(actor(), "rules", Timestamp(0)))
        .expect("begin");
    let pattern = |p: &str| PathPattern::parse(p).expect("pattern");
    txn.add_rule(
        &pattern("/items"),
        None,
        &RuleKind::ArrayKey(vec!["id".to_owned()]),
    )
    .expect("rule");
    txn.add_rule(&pattern("/items[*]/tags"), None, &RuleKind::Set)
        .expect("rule");
    txn.commit().expect("commit");
}

/// A document of a realistic size for field writes: 40 fields of short text.
fn forty_fields() -> hist::canon::Value {
    (0..40)
        .map(|i| (format!("field{i}"), format!("value number {i}")))
        .collect()
}

fn actor() -> Actor {
    Actor::parse("bench:hot-paths").expect("actor")
}

/// A repository with the feed's rules, in a directory that lives as long as it.
fn repo_with_rules() -> (tempfile::TempDir, Repo, KeyRules) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut repo = Repo::init(dir.path()).expect("init");
    declare_rules(&mut repo);
    let rules = repo.key_rules("feed");
    (dir, repo, rules)
}

/// Both versions of the feed, canonical and in the order the rules give.
fn canonical_feeds(rules: &KeyRules) -> (String, String) {
    let canonical = |bytes: &[u8]| {
        hist::diff::canonical_text(bytes, rules, &mut Vec::new()).expect("canonical")
    };
    (canonical(&FEEDS.before), canonical(&FEEDS.after))
}

mod snapshot {
    use super::*;

    /// The snapshot parsed into a tree, as strictly as every input is.
    #[divan::bench]
    fn parse(bencher: Bencher) {
        bencher
            .counter(BytesCount::new(FEEDS.after.len()))
            .bench(|| hist::canon::parse(black_box(&FEEDS.after)).expect("parse"));
    }

    /// Canonical text in one pass, keyed arrays and sets in canonical order: what an
    /// ingest does instead of parsing.
    #[divan::bench]
    fn canonicalize(bencher: Bencher) {
        let (_dir, _repo, rules) = repo_with_rules();
        bencher
            .counter(BytesCount::new(FEEDS.after.len()))
            .bench_local(|| {
                hist::diff::canonical_text(black_box(&FEEDS.after), &rules, &mut Vec::new())
                    .expect("canonical")
            });
    }

    /// The blake3 hash that names an object and tells an unchanged snapshot.
    #[divan::bench]
    fn hash(bencher: Bencher) {
        let (_dir, _repo, rules) = repo_with_rules();
        let (_, after) = canonical_feeds(&rules);
        bencher
            .counter(BytesCount::new(after.len()))
            .bench_local(|| hist::canon::ObjectId::of(black_box(after.as_bytes())));
    }

    /// The changes between the two canonical texts, found without building trees. The
    /// public function first checks that both texts are canonical and returns the changes'
    /// values parsed; an ingest skips both for the texts it wrote itself.
    #[divan::bench]
    fn diff_text(bencher: Bencher) {
        let (_dir, _repo, rules) = repo_with_rules();
        let (before, after) = canonical_feeds(&rules);
        bencher
            .counter(BytesCount::new(before.len() + after.len()))
            .bench_local(|| {
                hist::textdiff::diff_text(Some(&before), Some(black_box(&after)), &rules)
                    .expect("diff")
            });
    }

    /// The same changes found on parsed trees.
    #[divan::bench]
    fn diff_values(bencher: Bencher) {
        let (_dir, _repo, rules) = repo_with_rules();
        let (before, after) = canonical_feeds(&rules);
        let parse = |t: &str| hist::canon::parse_str(t).expect("parse");
        let (before, after) = (parse(&before), parse(&after));
        bencher.bench_local(|| hist::diff::diff(Some(&before), Some(black_box(&after)), &rules));
    }

    /// The changes applied to the older tree (copying the tree is not timed).
    #[divan::bench]
    fn apply(bencher: Bencher) {
        let (_dir, _repo, rules) = repo_with_rules();
        let (before, after) = canonical_feeds(&rules);
        let changes = hist::textdiff::diff_text(Some(&before), Some(&after), &rules)
            .expect("diff")
            .changes;
        let before = hist::canon::parse_str(&before).expect("parse");
        bencher
            .with_inputs(|| Some(before.clone()))
            .bench_local_refs(|doc| {
                for change in &changes {
                    hist::diff::apply(doc, change).expect("apply");
                }
            });
    }
}

mod write {
    use super::*;

    /// One ingest of the changed feed, committed and synced (the versions alternate, so
    /// every ingest records changes): canonicalize, hash, diff, and the SQLite writes of
    /// the change rows and the new current document.
    #[divan::bench(sample_count = 30)]
    fn ingest(bencher: Bencher) {
        let (_dir, mut repo, _) = repo_with_rules();
        let mut n = 0i64;
        bencher
            .counter(BytesCount::new(FEEDS.after.len()))
            .bench_local(|| {
                n += 1;
                let bytes = if n % 2 == 0 {
                    &FEEDS.before
                } else {
                    &FEEDS.after
                };
                let mut txn = repo
                    .begin(TxOptions::new(actor(), "snapshot", Timestamp(n)))
                    .expect("begin");
                txn.put_json("feed", bytes).expect("ingest");
                txn.commit().expect("commit")
            });
    }

    /// A single-field transaction on a 40-field document, 100 to a SQLite commit.
    #[divan::bench]
    fn field(bencher: Bencher) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut repo = Repo::init(dir.path()).expect("init");
        let path = DocPath::parse("/price").expect("path");
        let mut txn = repo
            .begin(TxOptions::new(actor(), "write", Timestamp(0)))
            .expect("begin");
        txn.put("customer/1", forty_fields()).expect("put");
        txn.commit().expect("commit");
        let mut n = 0i64;
        repo.begin_batch().expect("batch");
        bencher.bench_local(|| {
            n += 1;
            if n % 100 == 0 {
                repo.commit_batch().expect("commit batch");
                repo.begin_batch().expect("batch");
            }
            let mut txn = repo
                .begin(TxOptions::new(actor(), "write", Timestamp(n)))
                .expect("begin");
            txn.set("customer/1", &path, n.into()).expect("set");
            txn.commit().expect("commit")
        });
        repo.commit_batch().expect("commit batch");
    }
}

mod read {
    use super::*;

    /// A 40-field document with 10,000 single-field writes, spread over its fields.
    fn history_of_writes() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut repo = Repo::init(dir.path()).expect("init");
        repo.begin_batch().expect("batch");
        let mut txn = repo
            .begin(TxOptions::new(actor(), "write", Timestamp(0)))
            .expect("begin");
        txn.put("doc", forty_fields()).expect("put");
        txn.commit().expect("commit");
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for n in 1..10_000 {
            let field = DocPath::parse(&format!("/field{}", rng.below(40))).expect("path");
            let mut txn = repo
                .begin(TxOptions::new(actor(), "write", Timestamp(n)))
                .expect("begin");
            txn.set("doc", &field, n.into()).expect("set");
            txn.commit().expect("commit");
        }
        repo.commit_batch().expect("commit batch");
        (dir, repo)
    }

    /// The document as of a moment picked at random in its history.
    #[divan::bench]
    fn as_of(bencher: Bencher) {
        let (_dir, repo) = history_of_writes();
        let mut rng = Rng(7);
        bencher.bench_local(|| {
            let at = Timestamp(rng.below(10_000) as i64);
            repo.as_of("doc", When::At(at)).expect("as of")
        });
    }

    /// Every change to one field (about 250 of them).
    #[divan::bench]
    fn history(bencher: Bencher) {
        let (_dir, repo) = history_of_writes();
        let path = DocPath::parse("/field7").expect("path");
        bencher.bench_local(|| repo.history("doc", &path).expect("history"));
    }

    /// Who last set each of the 40 fields.
    #[divan::bench]
    fn blame(bencher: Bencher) {
        let (_dir, repo) = history_of_writes();
        bencher.bench_local(|| repo.blame("doc", None, None).expect("blame"));
    }
}
