//! The two tiers of the log: sealing changes into segments changes no answer. A history
//! with renames, removals, large values and keyed arrays is read every way (as of every
//! transaction in both directions, history, blame, the log with and without paths, a
//! transaction's changes, the export, fsck), sealed at several points, and read again.

use hist::path::PathPattern;
use hist::rules::RuleKind;
use hist::{Actor, Direction, DocPath, ExportFilter, LogFilter, Repo, Timestamp, TxOptions, When};
use std::ops::ControlFlow;

fn opts(i: i64) -> TxOptions {
    TxOptions::new(
        Actor::parse("test:tiers").unwrap(),
        "write",
        Timestamp(i * 1_000_000),
    )
}

/// Everything a reader can ask, as text to compare.
fn answers(repo: &Repo) -> Vec<String> {
    let mut out = Vec::new();
    let newest = repo.newest_tx().unwrap().map_or(0, |t| t.id);
    for key in ["feed", "cfg/app", "big"] {
        for tx in 0..=newest {
            for via in [Direction::Forward, Direction::Backward] {
                let text = repo.as_of_text_via(key, tx, Some(via)).unwrap();
                out.push(format!("{key}@{tx}: {:?} {}", text.text, text.on_values));
                let values = repo.as_of_tx_via(key, tx, Some(via)).unwrap();
                out.push(format!("{key}@{tx} on values: {:?}", values.doc));
            }
            let blame = repo.blame(key, Some(When::Tx(tx)), None).unwrap();
            for line in blame.lines() {
                out.push(format!("blame {key}@{tx}: {line:?}"));
            }
        }
        for path in [
            "",
            "/items[id=1]",
            "/items[id=1]/price",
            "/tier",
            "/plan",
            "/list",
        ] {
            let path = DocPath::parse(path).unwrap();
            out.push(format!(
                "history {key} {path}: {:?}",
                repo.history(key, &path).unwrap()
            ));
        }
    }
    for (key, path) in [
        (None, None),
        (Some("feed"), Some("/items[id=2]")),
        (None, Some("/tier")),
    ] {
        let filter = LogFilter {
            key: key.map(str::to_owned),
            path: path.map(|p| DocPath::parse(p).unwrap()),
            with_changes: true,
            ..LogFilter::default()
        };
        out.push(format!(
            "log {key:?} {path:?}: {:?}",
            repo.log(&filter).unwrap()
        ));
    }
    repo.export(&ExportFilter::default(), |c| {
        out.push(format!("export: {c:?}"));
        Ok::<_, hist::Error>(ControlFlow::Continue(()))
    })
    .unwrap();
    let report = repo.fsck().unwrap();
    assert!(report.ok(), "{:?}", report.problems);
    out.push(format!(
        "fsck: {} transactions, {} keys, {} changes",
        report.transactions, report.keys, report.changes
    ));
    out
}

fn write(repo: &mut Repo, i: &mut i64, f: impl FnOnce(&mut hist::Txn<'_>)) {
    *i += 1;
    let mut txn = repo.begin(opts(*i)).unwrap();
    f(&mut txn);
    txn.commit().unwrap();
}

#[test]
fn sealing_changes_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut i = 0;
    write(&mut repo, &mut i, |t| {
        t.add_rule(
            &PathPattern::parse("/items").unwrap(),
            None,
            &RuleKind::ArrayKey(vec!["id".into()]),
        )
        .unwrap();
    });
    let mut expected = Vec::new();
    for round in 0..4i64 {
        for v in 0..6i64 {
            let n = round * 6 + v;
            write(&mut repo, &mut i, |t| {
                let items: Vec<serde_json::Value> = (1..=3 + n % 3)
                    .map(
                        |id| serde_json::json!({"id": id, "price": 100 * id + n, "name": format!("item {id}")}),
                    )
                    .collect();
                t.put("feed", json!({"items": items, "runid": n})).unwrap();
                t.set(
                    "cfg/app",
                    &DocPath::parse("/plan").unwrap(),
                    json!(format!("p{n}")),
                )
                .unwrap();
            });
        }
        if round == 1 {
            write(&mut repo, &mut i, |t| {
                t.rename(
                    "cfg/*",
                    &DocPath::parse("/plan").unwrap(),
                    &DocPath::parse("/tier").unwrap(),
                )
                .unwrap();
            });
        }
        // A large value (stored as an object while in the tail), then a removal.
        write(&mut repo, &mut i, |t| {
            let list: Vec<String> = (0..400).map(|x| format!("x{x:05}-{round}")).collect();
            t.set("big", &DocPath::parse("/list").unwrap(), json!(list))
                .unwrap();
        });
        if round == 2 {
            write(&mut repo, &mut i, |t| {
                t.remove("big", &DocPath::root()).unwrap();
            });
        }
        expected = answers(&repo);
        // Sealed at a different point each round (1: everything, 3: only longer tails).
        let sealed = repo
            .seal(usize::try_from(round % 2 * 3 + 1).unwrap())
            .unwrap();
        assert!(sealed > 0 || round % 2 == 1, "round {round} sealed nothing");
        assert_eq!(answers(&repo), expected, "round {round}");
    }
    let report = repo.fsck().unwrap();
    assert!(report.segments >= 3, "{} segments", report.segments);
    // Writes after sealing, then everything sealed and merged, then gc.
    write(&mut repo, &mut i, |t| {
        t.set(
            "feed",
            &DocPath::parse("/items[id=1]/price").unwrap(),
            json!(1),
        )
        .unwrap();
    });
    let before = answers(&repo);
    repo.seal(1).unwrap();
    assert_eq!(answers(&repo), before);
    repo.gc(opts(i + 1)).unwrap();
    assert_eq!(answers(&repo), before);
    assert_ne!(before, expected);
}

/// A change's id is never given twice, even once the rows with the highest ids have left
/// the tail for a segment (SQLite reuses the largest free rowid otherwise).
#[test]
fn a_sealed_change_id_is_never_given_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut i = 0;
    write(&mut repo, &mut i, |t| {
        t.put("short", json!({"a": 1, "b": 2})).unwrap();
    });
    for n in 0..10 {
        write(&mut repo, &mut i, |t| {
            t.put("long", json!({"n": n, "m": -n})).unwrap();
        });
    }
    // Only the long history is sealed: the highest ids leave the tail.
    assert!(repo.seal(5).unwrap() > 0);
    write(&mut repo, &mut i, |t| {
        t.put("long", json!({"n": 99})).unwrap();
    });
    let ids = repo
        .query_readonly("SELECT count(*), count(DISTINCT id), max(id) FROM changes")
        .unwrap();
    let row: Vec<String> = ids.rows[0].iter().map(|v| format!("{v:?}")).collect();
    assert_eq!(row[0], row[1], "ids given twice: {row:?}");
    assert_eq!(row[0], row[2], "ids are 1, 2, 3…: {row:?}");
    assert!(repo.fsck().unwrap().ok());
}

/// A write that seals its key's tail deletes those rows: their pages go back to the file
/// system as it commits, not only after a batch or `gc`.
#[test]
fn a_write_that_seals_gives_the_rows_pages_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let free_pages = || -> i64 {
        let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
        db.query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap()
    };
    let sealed = || -> i64 {
        let db = rusqlite::Connection::open(dir.path().join(".hist/hist.db")).unwrap();
        db.query_row("SELECT count(*) FROM segment", [], |r| r.get(0))
            .unwrap()
    };
    // 50 transactions of 100 changes: the tail passes 4,096 rows and is sealed by a
    // transaction's own commit.
    let mut i = 0;
    for round in 0..50 {
        write(&mut repo, &mut i, |txn| {
            for field in 0..100 {
                let path = DocPath::parse(&format!("/field{field}")).unwrap();
                let value = format!("a value written in round {round}, long enough to fill pages");
                txn.set("doc", &path, value.into()).unwrap();
            }
        });
    }
    assert!(sealed() > 0, "nothing was sealed");
    assert_eq!(
        free_pages(),
        0,
        "the sealed rows' pages are still in the file"
    );
}
