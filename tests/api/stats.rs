//! `Repo::path_stats` (changes per path over a span) and `Repo::timeline` (what `hist
//! timeline` draws), against independent answers: the `changes` SQL view (the virtual
//! table over both tiers, another reader of the log) and `Repo::history`.

use hist::canon::Value;
use hist::path::PathPattern;
use hist::retention::{Retention, Then};
use hist::rules::RuleKind;
use hist::{
    Actor, DocPath, KeyStats, Repo, SqlValue, StatsFilter, TimelineOptions, Timestamp, TxOptions,
    When,
};

const HOUR: i64 = 3_600_000_000;
/// 2026-03-01T00:00:00Z.
const START: i64 = 1_772_323_200_000_000;

fn at(hours: i64) -> Timestamp {
    Timestamp(START + hours * HOUR)
}

fn opts(actor: &str, hours: i64) -> TxOptions {
    TxOptions::new(Actor::parse(actor).unwrap(), "write", at(hours)).at(Some(at(hours)))
}

/// A feed of items keyed by id, written 60 times (prices, stock, a name, an item added and
/// one removed, a runid), with a second key beside it; sealed into segments after 25 writes
/// and again after 45, so its changes are in both tiers. Stock is kept 2 days, then daily.
fn feed(dir: &std::path::Path) -> Repo {
    let mut repo = Repo::init(dir).unwrap();
    let mut txn = repo.begin(opts("user:sam", 0)).unwrap();
    txn.add_rule(
        &PathPattern::parse("/items").unwrap(),
        None,
        &RuleKind::ArrayKey(vec!["id".into()]),
    )
    .unwrap();
    txn.add_rule(
        &PathPattern::parse("/items[*]/stock").unwrap(),
        None,
        &RuleKind::Retention(Retention::Keep {
            seconds: 2 * 86_400,
            then: Then::Daily,
        }),
    )
    .unwrap();
    txn.commit().unwrap();
    for v in 1..=60i64 {
        let mut items = Vec::new();
        for id in 1..=4i64 {
            if (id == 4 && v < 20) || (id == 3 && v > 40) {
                continue;
            }
            let price = 100 * id + (v * (id + 3)) % 17;
            let name = if id == 2 && v >= 30 {
                "two (new)"
            } else {
                "item"
            };
            items.push(serde_json::json!({"id": id, "price": price, "stock": (v * 7 + id) % 5, "name": name}));
        }
        let actor = if v % 10 == 0 {
            "user:maria"
        } else {
            "poller:feed"
        };
        let mut txn = repo.begin(opts(actor, v * 6)).unwrap();
        txn.put("feed", json!({"runid": v, "items": items}))
            .unwrap();
        if v % 7 == 0 {
            txn.put("other", json!({"n": v})).unwrap();
        }
        txn.commit().unwrap();
        if v == 25 || v == 45 {
            assert!(repo.seal(1).unwrap() > 0);
        }
    }
    repo
}

/// `SELECT … FROM changes WHERE key = 'feed' AND <cond> GROUP BY <group> ORDER BY …`.
fn sql_rows(repo: &Repo, select: &str, cond: &str, group: &str, order: &str) -> Vec<Vec<String>> {
    let q = format!(
        "SELECT {select} FROM changes WHERE key = 'feed' AND {cond} GROUP BY {group} ORDER BY {order}"
    );
    let result = repo.query_readonly(&q).unwrap();
    result
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    SqlValue::Integer(i) => i.to_string(),
                    SqlValue::Text(t) => t.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

/// The SQL condition of a filter (`at` is ISO text in the view).
fn condition(filter: &StatsFilter) -> String {
    let mut cond = vec!["1 = 1".to_owned()];
    for (when, cmp) in [(filter.since, ">="), (filter.until, "<=")] {
        match when {
            Some(When::At(ts)) => cond.push(format!("at {cmp} '{ts}'")),
            Some(When::Tx(id)) => cond.push(format!("tx {cmp} {id}")),
            None => {}
        }
    }
    if let Some(p) = filter.path.as_ref().filter(|p| !p.is_root()) {
        let p = p.to_string().replace('\'', "''");
        cond.push(format!(
            "(path = '{p}' OR substr(path, 1, {n}) IN ('{p}/', '{p}['))",
            n = p.chars().count() + 1
        ));
    }
    cond.join(" AND ")
}

fn check_against_sql(repo: &Repo, filter: &StatsFilter) -> KeyStats {
    let stats = repo.path_stats("feed", filter).unwrap();
    let cond = condition(filter);
    let expected = sql_rows(
        repo,
        "path, count(*), min(tx), max(tx)",
        &cond,
        "path",
        "count(*) DESC, path",
    );
    let got: Vec<Vec<String>> = stats
        .paths
        .iter()
        .map(|p| {
            vec![
                p.path.to_string(),
                p.changes.to_string(),
                p.first_tx.to_string(),
                p.last_tx.to_string(),
            ]
        })
        .collect();
    assert_eq!(got, expected, "{filter:?}");
    let by_tx = sql_rows(repo, "tx, count(*)", &cond, "tx", "tx");
    let got: Vec<Vec<String>> = stats
        .transactions
        .iter()
        .map(|(tx, n)| vec![tx.to_string(), n.to_string()])
        .collect();
    assert_eq!(got, by_tx, "{filter:?}");
    let total: u64 = stats.paths.iter().map(|p| p.changes).sum();
    assert_eq!(stats.changes, total);
    stats
}

#[test]
fn path_stats_count_what_the_changes_view_counts_in_both_tiers() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = feed(dir.path());
    let tiers = repo
        .query_readonly("SELECT count(*) FROM changes WHERE key = 'feed'")
        .unwrap();
    assert!(matches!(tiers.rows[0][0], SqlValue::Integer(n) if n > 300));
    let path = |p: &str| Some(DocPath::parse(p).unwrap());
    let filters = [
        StatsFilter::default(),
        StatsFilter {
            since: Some(When::At(at(100))),
            ..StatsFilter::default()
        },
        StatsFilter {
            since: Some(When::At(at(100))),
            until: Some(When::At(Timestamp(at(250).0 - 1))),
            ..StatsFilter::default()
        },
        StatsFilter {
            since: Some(When::Tx(30)),
            until: Some(When::Tx(52)),
            ..StatsFilter::default()
        },
        StatsFilter {
            path: path("/items[id=2]"),
            ..StatsFilter::default()
        },
        StatsFilter {
            path: path("/items"),
            since: Some(When::At(at(200))),
            ..StatsFilter::default()
        },
        StatsFilter {
            path: path("/runid"),
            until: Some(When::Tx(10)),
            ..StatsFilter::default()
        },
        StatsFilter {
            path: path(""),
            ..StatsFilter::default()
        },
        StatsFilter {
            path: path("/nothing/here"),
            ..StatsFilter::default()
        },
    ];
    for filter in &filters {
        check_against_sql(&repo, filter);
    }
    let all = check_against_sql(&repo, &StatsFilter::default());
    // The most changed first, equal counts in the order of their text: the prices and
    // stocks of items 1 and 2 and the runid changed in every write after the first.
    let top: Vec<(String, u64)> = all.paths[..6]
        .iter()
        .map(|p| (p.path.to_string(), p.changes))
        .collect();
    let every: Vec<(String, u64)> = [
        "/items[id=1]/price",
        "/items[id=1]/stock",
        "/items[id=2]/price",
        "/items[id=2]/stock",
        "/runid",
    ]
    .iter()
    .map(|p| ((*p).to_owned(), 59))
    .collect();
    assert_eq!(top[..5], every[..]);
    assert!(top[5].1 < 59, "{top:?}");
    assert!(
        all.paths
            .iter()
            .any(|p| p.path.to_string() == "/items[id=4]")
    );
    // The same after gc compacted old stock changes (and sealed the rest).
    repo.gc(opts("job:gc", 60 * 6 + 1)).unwrap();
    let compacted = repo.compactions("feed").unwrap();
    assert!(!compacted.is_empty());
    for filter in &filters {
        check_against_sql(&repo, filter);
    }
    // A key never written has no changes; a bad key is refused.
    assert_eq!(
        repo.path_stats("nobody", &StatsFilter::default()).unwrap(),
        KeyStats::default()
    );
    assert!(repo.path_stats("/bad", &StatsFilter::default()).is_err());
    // A span with nothing in it.
    let empty = repo
        .path_stats(
            "feed",
            &StatsFilter {
                since: Some(When::At(at(10_000))),
                ..StatsFilter::default()
            },
        )
        .unwrap();
    assert_eq!(empty, KeyStats::default());
}

/// A number as `history` and the timeline's marks hold it.
fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

#[test]
fn a_timeline_s_lanes_are_the_history_of_their_paths_merged_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = feed(dir.path());
    repo.gc(opts("job:gc", 60 * 6 + 1)).unwrap();
    // A column per hour of the span: every change in a column of its own.
    let fine = TimelineOptions {
        lanes: 8,
        columns: 60 * 6 * 4,
        ..TimelineOptions::default()
    };
    let t = repo.timeline("feed", &fine).unwrap();
    let stats = repo.path_stats("feed", &StatsFilter::default()).unwrap();
    assert_eq!(t.lanes.len(), 8);
    assert_eq!(t.paths, stats.paths.len());
    assert_eq!(t.changes, stats.changes);
    let shown: u64 = stats.paths[..8].iter().map(|p| p.changes).sum();
    assert_eq!(t.changes_not_shown, stats.changes - shown);
    assert_eq!(t.paths_not_shown(), stats.paths.len() - 8);
    let tx_ids: Vec<i64> = t.transactions.iter().map(|x| x.tx.id).collect();
    let stat_ids: Vec<i64> = stats.transactions.iter().map(|x| x.0).collect();
    assert_eq!(tx_ids, stat_ids);
    assert!(
        t.transactions
            .windows(2)
            .all(|w| w[0].column <= w[1].column)
    );
    assert_eq!(t.transactions.last().unwrap().column, fine.columns - 1);
    assert_eq!(t.transactions[0].column, 0);
    let mut numeric = 0;
    let mut compacted = 0;
    for (lane, s) in t.lanes.iter().zip(&stats.paths) {
        assert_eq!(lane.path, s.path);
        assert_eq!(lane.changes, s.changes);
        let history = repo.history("feed", &lane.path).unwrap();
        let marks: Vec<_> = lane
            .marks
            .iter()
            .map(|m| {
                (
                    m.last_tx,
                    m.changes,
                    m.old.clone(),
                    m.new.clone(),
                    m.compacted,
                )
            })
            .collect();
        let expected: Vec<_> = history
            .iter()
            .map(|e| (e.tx.id, 1, e.old.clone(), e.new.clone(), e.compacted))
            .collect();
        assert_eq!(marks, expected, "{}", lane.path);
        let own: u64 = lane.marks.iter().map(|m| m.changes - m.above).sum();
        assert_eq!(own, lane.changes, "{}", lane.path);
        numeric += usize::from(lane.numeric);
        compacted += lane.marks.iter().filter(|m| m.compacted).count();
    }
    assert!(numeric >= 5, "{numeric} numeric lanes");
    assert!(compacted > 0, "no compacted mark");
    // One column: a mark per lane, from the first old value to the last new one, with the
    // range of the numbers in between.
    let one = repo
        .timeline(
            "feed",
            &TimelineOptions {
                lanes: 8,
                columns: 1,
                ..TimelineOptions::default()
            },
        )
        .unwrap();
    for lane in &one.lanes {
        let history = repo.history("feed", &lane.path).unwrap();
        assert_eq!(lane.marks.len(), 1, "{}", lane.path);
        let m = &lane.marks[0];
        assert_eq!(m.changes, history.len() as u64);
        assert_eq!(m.first_tx, history[0].tx.id);
        assert_eq!(m.old, history[0].old);
        assert_eq!(m.new, history.last().unwrap().new);
        if lane.numeric {
            let news: Vec<f64> = history
                .iter()
                .filter_map(|e| number(e.new.as_ref()))
                .collect();
            let lo = news.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = news.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(m.range, Some((lo, hi)), "{}", lane.path);
        }
    }
    // The span and the subtree narrow it; the axis starts and ends where asked.
    let narrow = repo
        .timeline(
            "feed",
            &TimelineOptions {
                path: Some(DocPath::parse("/items[id=1]").unwrap()),
                since: Some(When::At(at(120))),
                until: Some(When::At(at(240))),
                ..TimelineOptions::default()
            },
        )
        .unwrap();
    assert_eq!((narrow.start, narrow.end), (at(120), at(240)));
    assert!(
        narrow
            .lanes
            .iter()
            .all(|l| l.path.to_string().starts_with("/items[id=1]"))
    );
    assert!(
        narrow
            .lanes
            .iter()
            .any(|l| l.path.to_string() == "/items[id=1]/price")
    );
    assert!(
        narrow
            .transactions
            .iter()
            .all(|x| x.tx.at >= at(120) && x.tx.at <= at(240))
    );
    assert_eq!(narrow.transactions.len(), 21);
    // Compactions overlapping the span are reported with it.
    assert!(!t.compactions.is_empty());
    assert!(
        repo.timeline("nobody", &fine)
            .unwrap()
            .transactions
            .is_empty()
    );
}
