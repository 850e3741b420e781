//! Retention and gc through the library: a generated year of price changes on a feed.

use hist::canon::Value;
use hist::path::PathPattern;
use hist::retention::{Retention, Then};
use hist::rules::RuleKind;
use hist::{Actor, DocPath, Repo, SqlValue, Timestamp, TxOptions};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const DAY: i64 = 86_400_000_000;
const HOUR: i64 = 3_600_000_000;
/// 2025-01-01T00:00:00Z.
const START: i64 = 1_735_689_600_000_000;
const FEED: &str = "feed/acme";

fn actor(name: &str) -> Actor {
    Actor::parse(name).unwrap()
}

fn opts(kind: &str, at: i64) -> TxOptions {
    TxOptions::new(actor("poller:acme"), kind, Timestamp(at)).at(Some(Timestamp(at)))
}

/// A small deterministic pseudo-random sequence.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn item(id: u64, name: &str, price: u64) -> Value {
    json!({"id": id, "name": name, "price": price, "stock": id * 10})
}

/// A year (2025) of snapshots of a feed: three per day, prices of 5 items changing most
/// times (several per day), a name changing every 9 days, item 6 added on day 100
/// (a change at an ancestor of its price), plus a document `config/app` whose `/price` no
/// rule covers. Rules: items keyed by id, prices kept 90 days then daily, names forever.
fn generated_year(dir: &Path) -> Repo {
    let mut repo = Repo::init(dir).unwrap();
    let mut txn = repo.begin(opts("rules", START - DAY)).unwrap();
    let rule = |p: &str| PathPattern::parse(p).unwrap();
    txn.add_rule(
        &rule("/items"),
        None,
        &RuleKind::ArrayKey(vec!["id".into()]),
    )
    .unwrap();
    txn.add_rule(
        &rule("/items[*]/price"),
        None,
        &RuleKind::Retention(Retention::Keep {
            seconds: 90 * 86_400,
            then: Then::Daily,
        }),
    )
    .unwrap();
    txn.add_rule(
        &rule("/items[*]/name"),
        None,
        &RuleKind::Retention(Retention::Forever),
    )
    .unwrap();
    txn.commit().unwrap();
    let mut rng = Lcg(7);
    let mut prices: BTreeMap<u64, u64> = (1..=5).map(|id| (id, 100 * id)).collect();
    let mut names: BTreeMap<u64, String> = (1..=5).map(|id| (id, format!("item {id}"))).collect();
    for day in 0..365 {
        if day == 100 {
            prices.insert(6, 600);
            names.insert(6, "item 6".into());
        }
        for tick in 0..3 {
            let minute = i64::try_from(rng.next(50)).unwrap();
            let at = START + day * DAY + (tick * 7 + 2) * HOUR + minute * 60_000_000;
            for price in prices.values_mut() {
                if rng.next(4) != 0 {
                    *price = 50 + rng.next(1000);
                }
            }
            if tick == 1 && day % 9 == 0 {
                let id = 1 + rng.next(5);
                names.insert(id, format!("item {id} v{day}"));
            }
            let items: Vec<Value> = prices
                .iter()
                .map(|(id, p)| item(*id, &names[id], *p))
                .collect();
            let mut txn = repo.begin(opts("ingest", at)).unwrap();
            let feed =
                Value::from_iter([("currency", json!("EUR")), ("items", Value::from(items))]);
            txn.put(FEED, feed).unwrap();
            if tick == 2 && day % 30 == 0 {
                txn.put("config/app", json!({"price": day, "items": []}))
                    .unwrap();
            }
            txn.commit().unwrap();
        }
    }
    repo
}

/// Every row of every table, as text, for "nothing was written" checks.
pub(crate) fn dump(dir: &Path) -> String {
    let conn = rusqlite::Connection::open_with_flags(
        dir.join(".hist/hist.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = String::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.sort();
        out.push_str(&format!("{table}:\n{}\n", rows.join("\n")));
    }
    let mut objects: Vec<String> = walk(&dir.join(".hist/objects"));
    objects.sort();
    out.push_str(&objects.join("\n"));
    out
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&entry.path()));
        } else {
            out.push(entry.path().display().to_string());
        }
    }
    out
}

fn text(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "null".into(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(r) => r.to_string(),
        SqlValue::Text(t) => t.clone(),
        SqlValue::Blob(_) => "blob".into(),
    }
}

fn rows(repo: &Repo, query: &str) -> Vec<String> {
    repo.query_readonly(query)
        .unwrap()
        .rows
        .iter()
        .map(|r| r.iter().map(text).collect::<Vec<_>>().join(" "))
        .collect()
}

/// 2025-10-03: 90 days before 2026-01-01, when gc runs.
const CUTOFF: &str = "2025-10-03";
const GC_AT: i64 = START + 365 * DAY;

const MORE_THAN_ONE_PRICE_A_DAY: &str =
    "SELECT path, substr(at, 1, 10) AS day, count(*) FROM changes
     WHERE key = 'feed/acme' AND path GLOB '/items*/price' AND at < '2025-10-03'
     GROUP BY path, day HAVING count(*) > 1";

#[test]
fn a_year_of_prices_compacted_daily_after_90_days() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = generated_year(dir.path());
    assert!(repo.fsck().unwrap().ok());
    let newest = repo.newest_tx().unwrap().unwrap().id;

    // Before: every read, every history, every row of the kept window and of names.
    let mut before: HashMap<(&str, i64), Option<Value>> = HashMap::new();
    for key in [FEED, "config/app"] {
        for tx in 0..=newest {
            before.insert((key, tx), repo.as_of_tx(key, tx).unwrap().doc);
        }
    }
    let kept_rows = format!(
        "SELECT id, tx, at, key, path, op, old, new FROM changes WHERE at >= '{CUTOFF}' ORDER BY id"
    );
    let untouched_rows = "SELECT id, tx, at, key, path, op, old, new FROM changes
         WHERE NOT (key = 'feed/acme' AND path GLOB '/items*/price') ORDER BY id";
    let kept_before = rows(&repo, &kept_rows);
    let untouched_before = rows(&repo, untouched_rows);
    assert!(rows(&repo, MORE_THAN_ONE_PRICE_A_DAY).len() > 1000);
    let item6 = DocPath::parse("/items[id=6]/price").unwrap();
    let history_before = repo.history(FEED, &item6).unwrap();

    // The dry run writes nothing and plans what gc then does.
    let dumped = dump(dir.path());
    let plan = repo.gc_plan(Timestamp(GC_AT)).unwrap();
    assert_eq!(dump(dir.path()), dumped);
    assert_eq!(plan.compactions.len(), 6, "one per item price");
    assert!(
        plan.compactions
            .iter()
            .all(|c| c.key == FEED && c.mode == Then::Daily)
    );

    let outcome = repo
        .gc(TxOptions::new(actor("job:gc"), "compact", Timestamp(GC_AT)))
        .unwrap();
    let compact = outcome.tx.clone().unwrap();
    assert_eq!(compact.id, newest + 1);
    assert_eq!(compact.kind, "compact");
    assert_eq!(compact.actor, "job:gc");
    let planned: Vec<_> = plan
        .compactions
        .iter()
        .map(|c| (c.path.to_string(), c.replaced, c.kept))
        .collect();
    let done: Vec<_> = outcome
        .plan
        .compactions
        .iter()
        .map(|c| (c.path.to_string(), c.replaced, c.kept))
        .collect();
    assert_eq!(planned, done);
    assert!(outcome.plan.replaced() > 2 * outcome.plan.kept());

    let report = repo.fsck().unwrap();
    assert!(report.ok(), "{:?}", report.problems);

    // At most one change per item price per day before the window; the rest untouched.
    assert_eq!(rows(&repo, MORE_THAN_ONE_PRICE_A_DAY), Vec::<String>::new());
    assert_eq!(rows(&repo, &kept_rows), kept_before);
    assert_eq!(rows(&repo, untouched_rows), untouched_before);
    let replaced: i64 = rows(&repo, "SELECT sum(replaced) - sum(kept) FROM compactions")[0]
        .parse()
        .unwrap();
    let total_before = i64::try_from(untouched_before.len()).unwrap();
    let _ = total_before;
    assert_eq!(
        usize::try_from(replaced).unwrap(),
        outcome.plan.replaced() - outcome.plan.kept()
    );

    // The compact transaction and its records are in the log.
    let log = rows(
        &repo,
        "SELECT id, kind, actor FROM transactions ORDER BY id DESC LIMIT 1",
    );
    assert_eq!(log, vec![format!("{} compact job:gc", compact.id)]);
    let spans = repo.compactions(FEED).unwrap();
    assert_eq!(spans.len(), 6);
    assert!(spans.iter().all(|c| c.tx == Some(compact.id)));
    assert!(repo.compactions("config/app").unwrap().is_empty());

    // Every read: exact where not flagged (the whole kept window among them); flagged reads
    // return values that were really there that day, never invented ones.
    let at_of: HashMap<i64, Timestamp> = (1..=newest)
        .map(|tx| (tx, repo.tx(tx).unwrap().unwrap().at))
        .collect();
    let mut seen_on: HashMap<i64, Vec<&Value>> = HashMap::new();
    for t in 1..=newest {
        if let Some(doc) = &before[&(FEED, t)] {
            seen_on
                .entry(at_of[&t].0.div_euclid(DAY))
                .or_default()
                .push(doc);
        }
    }
    let mut flagged = 0;
    for key in [FEED, "config/app"] {
        for tx in 0..=newest {
            let read = repo.as_of_tx(key, tx).unwrap();
            let old = &before[&(key, tx)];
            let in_window = tx > 0 && at_of[&tx].to_string().as_str() >= CUTOFF;
            if in_window {
                assert!(
                    read.compacted.is_empty(),
                    "{key} @tx:{tx} in the kept window"
                );
            }
            if read.compacted.is_empty() {
                assert_eq!(&read.doc, old, "{key} @tx:{tx}");
                continue;
            }
            flagged += 1;
            assert_eq!(key, FEED);
            let day = at_of[&tx].0.div_euclid(DAY);
            let doc = read.doc.as_ref().unwrap();
            // Everything but prices is exact.
            let strip = |d: &Value| {
                let mut d = d.clone();
                for item in d["items"].as_array_mut().unwrap() {
                    item.as_object_mut().unwrap().remove("price");
                }
                d
            };
            assert_eq!(strip(doc), strip(old.as_ref().unwrap()), "@tx:{tx}");
            for it in doc["items"].as_array().unwrap() {
                let path = format!("/items[id={}]/price", it["id"]);
                let p = DocPath::parse(&path).unwrap();
                let seen = [day - 1, day]
                    .iter()
                    .flat_map(|d| seen_on.get(d).into_iter().flatten())
                    .any(|v| hist::diff::get(v, p.segments()) == Some(&it["price"]));
                assert!(seen, "@tx:{tx} {path} = {} was never there", it["price"]);
            }
        }
    }
    assert!(flagged > 100);
    // The end of every compacted day reads exactly as before.
    let mut last_of_day: BTreeMap<i64, i64> = BTreeMap::new();
    for (tx, at) in &at_of {
        let e = last_of_day.entry(at.0.div_euclid(DAY)).or_insert(*tx);
        *e = (*e).max(*tx);
    }
    for tx in last_of_day.values() {
        assert_eq!(
            &repo.as_of_tx(FEED, *tx).unwrap().doc,
            &before[&(FEED, *tx)]
        );
    }

    // History: compacted entries are flagged, the kept window's are as before.
    let history = repo.history(FEED, &item6).unwrap();
    let cut = Timestamp::parse_rfc3339(&format!("{CUTOFF}T00:00:00Z")).unwrap();
    let recent = |h: &[hist::HistoryEntry]| -> Vec<(i64, Option<Value>, Option<Value>)> {
        h.iter()
            .filter(|e| e.tx.at >= cut)
            .map(|e| (e.tx.id, e.old.clone(), e.new.clone()))
            .collect()
    };
    assert_eq!(recent(&history), recent(&history_before));
    assert!(
        history
            .iter()
            .filter(|e| e.tx.at >= cut)
            .all(|e| !e.compacted)
    );
    let old: Vec<_> = history.iter().filter(|e| e.tx.at < cut).collect();
    assert!(old.len() > 100 && old.len() < history_before.len());
    // The add of item 6 (an ancestor change, not covered) is kept and not flagged.
    assert_eq!(old[0].op, hist::Op::Add);
    assert!(!old[0].compacted);
    let span = spans.iter().find(|c| c.path == item6).unwrap();
    assert!(
        old[1..]
            .iter()
            .all(|e| e.compacted == (span.first_tx <= e.tx.id && e.tx.id <= span.last_tx))
    );
    assert!(old.iter().filter(|e| e.compacted).count() > 100);

    // A second gc finds nothing to compact and the repository still checks.
    let again = repo
        .gc(TxOptions::new(actor("job:gc"), "compact", Timestamp(GC_AT)))
        .unwrap();
    assert!(again.tx.is_none());
    assert!(repo.fsck().unwrap().ok());
}

/// A group of changes whose net effect is nothing leaves no change; drop folds a span into
/// one change; a change at an ancestor of the compacted path (not covered) ends a group and
/// is kept as it was.
#[test]
fn drop_and_net_zero_and_ancestors() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut txn = repo.begin(opts("rules", START)).unwrap();
    txn.add_rule(
        &PathPattern::parse("/a/x").unwrap(),
        None,
        &RuleKind::Retention(Retention::Keep {
            seconds: 86_400,
            then: Then::Drop,
        }),
    )
    .unwrap();
    txn.add_rule(
        &PathPattern::parse("/b").unwrap(),
        Some("k*"),
        &RuleKind::Retention(Retention::Keep {
            seconds: 86_400,
            then: Then::Hourly,
        }),
    )
    .unwrap();
    txn.commit().unwrap();
    let write = |repo: &mut Repo, at: i64, path: &str, value: Option<Value>| {
        let mut txn = repo.begin(opts("write", at)).unwrap();
        let path = DocPath::parse(path).unwrap();
        match value {
            Some(v) => txn.set("k", &path, v).unwrap(),
            None => txn.remove("k", &path).unwrap(),
        };
        txn.commit().unwrap();
    };
    let minute = 60_000_000;
    for i in 0..5 {
        write(
            &mut repo,
            START + HOUR + (i + 1) * minute,
            "/a/x",
            Some(json!(i)),
        );
    }
    write(&mut repo, START + HOUR + 6 * minute, "/a", None);
    for i in 0..4 {
        write(
            &mut repo,
            START + HOUR + (7 + i) * minute,
            "/a/x",
            Some(json!(100 + i)),
        );
    }
    write(&mut repo, START + 2 * HOUR, "/b", Some(json!(5)));
    write(&mut repo, START + 3 * HOUR + minute, "/b", Some(json!(6)));
    write(
        &mut repo,
        START + 3 * HOUR + 2 * minute,
        "/b",
        Some(json!(5)),
    );
    let all = "SELECT path, op, old, new FROM changes ORDER BY id";
    assert_eq!(rows(&repo, all).len(), 13);
    let outcome = repo
        .gc(TxOptions::new(
            actor("job:gc"),
            "compact",
            Timestamp(START + 10 * DAY),
        ))
        .unwrap();
    assert!(repo.fsck().unwrap().ok());
    assert_eq!(
        rows(&repo, all),
        vec![
            " add null {\"a\":{\"x\":0}}",
            "/a/x replace 0 4",
            "/a remove {\"x\":4} null",
            "/a add null {\"x\":100}",
            "/a/x replace 100 103",
            "/b add null 5",
        ]
    );
    let summary: Vec<_> = outcome
        .plan
        .compactions
        .iter()
        .map(|c| (c.path.to_string(), c.mode, c.replaced, c.kept))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("/a/x".to_owned(), Then::Drop, 7, 2),
            ("/b".to_owned(), Then::Hourly, 2, 0)
        ]
    );
    assert_eq!(
        repo.current("k").unwrap(),
        Some(json!({"a": {"x": 103}, "b": 5}))
    );
    // A read inside a compacted span is flagged and shows the compacted value; reads after
    // the span's end are exact and unflagged.
    let inside = repo.as_of_tx("k", 3).unwrap();
    assert_eq!(inside.doc, Some(json!({"a": {"x": 0}})));
    assert_eq!(inside.compacted.len(), 1);
    assert_eq!(inside.compacted[0].path.to_string(), "/a/x");
    let after = repo.as_of_tx("k", 12).unwrap();
    assert_eq!(after.doc, Some(json!({"a": {"x": 103}, "b": 5})));
    assert!(after.compacted.is_empty());
}

/// Retention rules are stored, listed and reloaded like the others, and do not change how
/// arrays are diffed.
#[test]
fn retention_rules_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut txn = repo.begin(opts("rules", START)).unwrap();
    let keep = RuleKind::Retention(Retention::Keep {
        seconds: 90 * 86_400,
        then: Then::Daily,
    });
    txn.add_rule(&PathPattern::parse("/items").unwrap(), None, &keep)
        .unwrap();
    txn.add_rule(
        &PathPattern::parse("/tags").unwrap(),
        Some("feed/*"),
        &RuleKind::Retention(Retention::Forever),
    )
    .unwrap();
    txn.commit().unwrap();
    drop(repo);
    let mut repo = Repo::open(dir.path()).unwrap();
    let shown: Vec<String> = repo.rules().iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "retention /items --keep 90d --then daily",
            "retention /tags --forever --keys feed/*"
        ]
    );
    assert_eq!(repo.rules()[0].kind, keep);
    // /items is still an opaque array: a retention rule is not an array rule.
    let mut txn = repo.begin(opts("write", START + DAY)).unwrap();
    txn.put("feed/x", json!({"items": [1, 2]})).unwrap();
    txn.commit().unwrap();
    let mut txn = repo.begin(opts("write", START + 2 * DAY)).unwrap();
    let outcome = txn.put("feed/x", json!({"items": [2, 1, 3]})).unwrap();
    assert_eq!(outcome, hist::PutOutcome::Changed(1));
    let commit = txn.commit().unwrap();
    assert_eq!(
        commit.changes[0].1.to_change().unwrap(),
        hist::Change {
            path: DocPath::parse("/items").unwrap(),
            op: hist::Op::Replace,
            old: Some(json!([1, 2])),
            new: Some(json!([2, 1, 3])),
        }
    );
}

/// gc rebuilds the checkpoints of a rewritten key by the policy every commit follows: a
/// large document with small changes gets one per change per 256 bytes of document, not
/// one every 64 changes (the rule gc once had of its own).
#[test]
fn gc_rebuilds_checkpoints_by_the_commit_policy() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut txn = repo.begin(opts("rules", START)).unwrap();
    txn.add_rule(
        &PathPattern::parse("/price").unwrap(),
        None,
        &RuleKind::Retention(Retention::Keep {
            seconds: 86_400,
            then: Then::Drop,
        }),
    )
    .unwrap();
    txn.commit().unwrap();
    // 100 kB: a checkpoint is due every 390 changes, or once 100 kB of changes pile up.
    let blob = "x".repeat(100_000);
    for i in 0..300 {
        let mut txn = repo.begin(opts("write", START + i * HOUR)).unwrap();
        txn.put(FEED, json!({"blob": blob, "n": i, "price": i}))
            .unwrap();
        txn.commit().unwrap();
    }
    let outcome = repo.gc(opts("gc", START + 40 * DAY)).unwrap();
    assert!(outcome.plan.replaced() > 200, "{:?}", outcome.plan);
    let report = repo.fsck().unwrap();
    assert!(report.ok(), "{:?}", report.problems);
    // The put (whose value outweighs nothing yet) may get one; 300 small changes do not.
    assert!(
        report.checkpoints <= 2,
        "{} checkpoints",
        report.checkpoints
    );
}
