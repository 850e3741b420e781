//! `hist_changes` against an oracle: the same changes as a plain table, queried alike; and
//! what it must not do: read segments the constraints exclude, answer from part of the
//! log, panic on damage, write.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Logical, Store, at, history};
use rusqlite::types::Value;

/// A store with every key partly sealed (segments of 7 changes) and `b/1` all in the tail.
fn mixed() -> (Vec<Logical>, Store) {
    let changes = history();
    let store = Store::new(&changes, 7, |key| match key {
        "b/1" => 0,
        "a/1" => i64::MAX,
        _ => 20,
    });
    (changes, store)
}

/// Queries whose answer must be the plain table's (`{t}` is the table).
const QUERIES: &[&str] = &[
    "SELECT * FROM {t} ORDER BY id",
    "SELECT rowid, id FROM {t} ORDER BY id",
    "SELECT count(*) FROM {t}",
    "SELECT * FROM {t} WHERE key = 'a/2' ORDER BY id",
    "SELECT * FROM {t} WHERE key = 'nope' ORDER BY id",
    "SELECT * FROM {t} WHERE key = 'a/2' AND key = 'b/1' ORDER BY id",
    "SELECT id, key FROM {t} WHERE key IN ('a/1', 'b/1', 'nope', 'a/1') ORDER BY id",
    "SELECT id, key FROM {t} WHERE key IN (SELECT key FROM change_key WHERE id % 2 = 0) ORDER BY id",
    "SELECT id, key, path FROM {t} WHERE key GLOB 'a/*' ORDER BY id",
    "SELECT id FROM {t} WHERE key GLOB '*acme*' AND key GLOB 'feed/*' ORDER BY id",
    "SELECT id FROM {t} WHERE key GLOB 'A/*' ORDER BY id",
    "SELECT id FROM {t} WHERE key LIKE 'A/%' ORDER BY id",
    "SELECT id FROM {t} WHERE key = 'A/2' COLLATE NOCASE ORDER BY id",
    "SELECT id FROM {t} WHERE key > 'b' ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx = 17 ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx BETWEEN 9 AND 13 ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx > 38 OR tx < 2 ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx > 10 AND tx < 11 ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx IN (3, 17, 40, 99) ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx >= '30' ORDER BY id",
    "SELECT id, tx FROM {t} WHERE tx < 9223372036854775807 AND tx > -9223372036854775808 ORDER BY id",
    "SELECT id, at FROM {t} WHERE at >= '2026-09-01' ORDER BY id",
    "SELECT id, at FROM {t} WHERE at > '2026-09-01T12:00:00.000000Z' AND at <= '2026-09-04' ORDER BY id",
    "SELECT id, at FROM {t} WHERE at = '2026-08-20T12:00:00.000000Z' ORDER BY id",
    "SELECT id, at FROM {t} WHERE at < '2026-08-03' ORDER BY id",
    "SELECT id FROM {t} WHERE at >= 2026 ORDER BY id",
    "SELECT id FROM {t} WHERE at >= '2026-09-10' ORDER BY id",
    "SELECT id, actor, reason FROM {t} WHERE reason IS NOT NULL ORDER BY id",
    "SELECT key, path, op, old, new FROM {t} WHERE length(new) > 1000 OR length(old) > 1000 ORDER BY id",
    "SELECT op, count(*) FROM {t} GROUP BY op ORDER BY op",
    "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM {t} WHERE key GLOB 'feed/acme*' AND at >= '2026-09-01' GROUP BY path ORDER BY changes DESC, path LIMIT 3",
    "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM {t} WHERE key GLOB 'cdc/*' AND at >= '2026-08-20' GROUP BY path ORDER BY changes DESC, path",
    "SELECT c.id, t.kind FROM {t} c JOIN tx t ON t.id = c.tx WHERE t.id % 5 = 0 ORDER BY c.id",
    "SELECT a.id, b.id FROM {t} a JOIN {t} b ON b.key = a.key AND b.id = a.id + 1 ORDER BY a.id",
    "SELECT k.key, (SELECT count(*) FROM {t} c WHERE c.key = k.key AND c.tx >= 20) FROM change_key k ORDER BY k.key",
    "SELECT max(id), min(at), max(at) FROM {t} WHERE key = 'cdc/states'",
];

#[test]
fn it_answers_as_a_plain_table_of_the_same_changes_would() {
    let (_, store) = mixed();
    assert!(
        store.segments["a/1"].len() > 2,
        "a/1 is sealed in several segments"
    );
    assert!(!store.segments.contains_key("b/1"), "b/1 is all tail");
    for query in QUERIES {
        let expected = store.rows(query, "plain").unwrap();
        let got = store.rows(query, "hist_changes").unwrap();
        assert_eq!(got, expected, "{query}");
        // A view has no rowid.
        if !query.contains("rowid") {
            let via_view = store.rows(query, "changes").unwrap();
            assert_eq!(via_view, expected, "{query} (through the view)");
        }
    }
}

#[test]
fn parameters_of_any_type_give_the_same_answer_as_sqlite_would() {
    let (_, store) = mixed();
    let conn = &store.conn;
    let params: &[(&str, Value)] = &[
        ("key = ?1", Value::Text("a/2".into())),
        ("key = ?1", Value::Integer(5)),
        ("key = ?1", Value::Null),
        ("key GLOB ?1", Value::Text("feed/*".into())),
        ("tx = ?1", Value::Integer(12)),
        ("tx >= ?1", Value::Text("35".into())),
        ("tx < ?1", Value::Real(5.5)),
        ("tx > ?1", Value::Null),
        ("at >= ?1", Value::Text("2026-09-05".into())),
        ("at >= ?1", Value::Integer(2026)),
        ("at < ?1", Value::Blob(b"2026-08-05".to_vec())),
    ];
    for (cond, value) in params {
        let run = |table: &str| {
            let sql = format!("SELECT id FROM {table} WHERE {cond} ORDER BY id");
            let mut stmt = conn.prepare(&sql).unwrap();
            let rows = stmt.query_map([value], |r| r.get::<_, i64>(0)).unwrap();
            rows.collect::<rusqlite::Result<Vec<i64>>>().unwrap()
        };
        assert_eq!(run("hist_changes"), run("plain"), "{cond} with {value:?}");
    }
}

#[test]
fn large_values_come_from_their_objects_never_as_references() {
    let (changes, store) = mixed();
    let large: Vec<&Logical> = changes
        .iter()
        .filter(|c| c.new.as_ref().is_some_and(|v| v.len() > 1000))
        .collect();
    assert!(!large.is_empty());
    // In the tail (`b/1`, and the other keys' late versions) as objects, in segments inline.
    let in_tail = store
        .rows(
            "SELECT count(*) FROM change_log WHERE new_obj IS NOT NULL",
            "",
        )
        .unwrap();
    assert_ne!(in_tail, vec![vec![Value::Integer(0)]]);
    for c in large {
        let got = store
            .rows(
                &format!("SELECT new FROM hist_changes WHERE id = {}", c.id),
                "",
            )
            .unwrap();
        assert_eq!(got, vec![vec![Value::Text(c.new.clone().unwrap())]]);
    }
    let references = store
        .rows(
            "SELECT count(*) FROM hist_changes WHERE old LIKE '%$hist_object%' OR new LIKE '%$hist_object%'",
            "",
        )
        .unwrap();
    assert_eq!(references, vec![vec![Value::Integer(0)]]);
}

/// Segments decoded by this thread while `f` runs.
fn decoded(f: impl FnOnce()) -> u64 {
    let before = hist_vtab::segments_decoded();
    f();
    hist_vtab::segments_decoded() - before
}

#[test]
fn constraints_skip_segments_without_decompressing_them() {
    let changes = history();
    // Small segments: each key's history is many of them.
    let store = Store::new(&changes, 3, |_| 30);
    let count = |sql: &str| store.rows(sql, "").unwrap();
    let segments = |cond: &str| -> u64 {
        let n = count(&format!(
            "SELECT count(*) FROM segment s JOIN change_key k ON k.id = s.key_id WHERE {cond}"
        ));
        match n[0][0] {
            Value::Integer(n) => n as u64,
            _ => unreachable!(),
        }
    };
    let all = segments("1");
    assert!(all > 20, "{all} segments");
    let q = |sql: &str| {
        let mut n = 0;
        let d = decoded(|| n = count(sql).len());
        (d, n)
    };
    // Everything: each segment once.
    assert_eq!(q("SELECT * FROM hist_changes").0, all);
    // By key.
    assert_eq!(
        q("SELECT * FROM hist_changes WHERE key = 'a/2'").0,
        segments("k.key = 'a/2'")
    );
    assert_eq!(
        q("SELECT * FROM hist_changes WHERE key IN ('a/2', 'b/1')").0,
        segments("k.key IN ('a/2', 'b/1')")
    );
    // The brief's query, adapted: by key pattern and time.
    let brief = "SELECT path, count(*), count(DISTINCT key) FROM changes \
                 WHERE key GLOB 'feed/acme*' AND at >= '2026-08-20' GROUP BY path";
    let expected = segments("k.key GLOB 'feed/acme*' AND s.last_at >= '2026-08-20'");
    assert!(expected > 0 && expected < segments("k.key GLOB 'feed/acme*'"));
    assert_eq!(q(brief).0, expected);
    // By transaction range and by time range alone.
    assert_eq!(
        q("SELECT * FROM hist_changes WHERE tx BETWEEN 10 AND 12").0,
        segments("s.last_tx >= 10 AND s.first_tx <= 12")
    );
    assert_eq!(
        q("SELECT * FROM hist_changes WHERE at < '2026-08-05'").0,
        segments("s.first_at < '2026-08-05'")
    );
    // Nothing to read: nothing decoded.
    assert_eq!(q("SELECT * FROM hist_changes WHERE key = 'nope'"), (0, 0));
    assert_eq!(q("SELECT * FROM hist_changes WHERE at > '2027'"), (0, 0));
    // Read again by the inner loop of a join: still once each.
    let join = "SELECT count(*) FROM (SELECT 'a/2' AS k UNION ALL SELECT 'a/2' UNION ALL SELECT 'a/2') v \
                JOIN hist_changes h ON h.key = v.k";
    assert_eq!(q(join).0, segments("k.key = 'a/2'"));
}

#[test]
fn a_damaged_segment_is_an_error_of_the_queries_that_need_it_only() {
    let changes = history();
    let store = Store::new(&changes, 5, |_| 25);
    let victim = &store.segments["a/2"][1];
    let path = hist_segment::objects::path_of(&store.objects(), victim);
    // Valid zstd, not a segment.
    std::fs::write(
        &path,
        zstd::encode_all(&b"HSG1\xff\xff\xff"[..], 3).unwrap(),
    )
    .unwrap();
    let err = store
        .rows("SELECT * FROM hist_changes WHERE key = 'a/2'", "")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hist_changes") && err.contains(victim.as_str()),
        "{err}"
    );
    // The full log: an error, never a partial answer.
    assert!(store.rows("SELECT count(*) FROM changes", "").is_err());
    // Queries that exclude it never read it.
    let ok = store
        .rows(
            "SELECT count(*) FROM hist_changes WHERE key GLOB 'feed/*' OR key = 'b/1'",
            "",
        )
        .unwrap();
    let plain = store
        .rows(
            "SELECT count(*) FROM plain WHERE key GLOB 'feed/*' OR key = 'b/1'",
            "",
        )
        .unwrap();
    assert_eq!(ok, plain);
    // Not zstd at all, and missing.
    std::fs::write(&path, b"garbage").unwrap();
    assert!(
        store
            .rows("SELECT * FROM hist_changes WHERE key = 'a/2'", "")
            .is_err()
    );
    std::fs::remove_file(&path).unwrap();
    let err = store
        .rows("SELECT * FROM hist_changes WHERE key = 'a/2'", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read object"), "{err}");
    // A segment that decodes but is not what the index says.
    let other = &store.segments["a/2"][0];
    let bytes = std::fs::read(hist_segment::objects::path_of(&store.objects(), other)).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let err = store
        .rows("SELECT * FROM hist_changes WHERE key = 'a/2'", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not what the index says"), "{err}");
    // A name that is not an object's is never opened.
    store
        .conn
        .execute(
            "UPDATE segment SET object = '../../hist.db' WHERE object = ?1",
            [other],
        )
        .unwrap();
    let err = store
        .rows("SELECT * FROM hist_changes WHERE key = 'a/2'", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not an object name"), "{err}");
}

#[test]
fn damaged_rows_of_the_tail_are_errors() {
    let changes = history();
    let store = Store::new(&changes, 5, |_| 0);
    store
        .conn
        .execute_batch(
            "PRAGMA foreign_keys = OFF; UPDATE change_log SET path_id = 999 WHERE id = (SELECT min(id) FROM change_log)",
        )
        .unwrap();
    let err = store
        .rows("SELECT path FROM hist_changes", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("path number 999"), "{err}");
    // The path is not read when not asked for.
    assert!(store.rows("SELECT id FROM hist_changes", "").is_ok());
    store
        .conn
        .execute_batch("UPDATE change_log SET new = NULL, new_obj = 'abc' WHERE id = (SELECT max(id) FROM change_log)")
        .unwrap();
    let err = store
        .rows("SELECT new FROM hist_changes", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an object name"), "{err}");
}

#[test]
fn it_sees_what_the_query_sees_inside_a_transaction() {
    let (changes, mut store) = mixed();
    let n = changes.len() as i64;
    let tx = store.conn.transaction().unwrap();
    tx.execute(
        "INSERT INTO change_log (id, tx, key_id, seq, path_id, op, old, new) VALUES (99999, 40, 2, 999, 1, 'add', NULL, '1')",
        [],
    )
    .unwrap();
    let count: i64 = tx
        .query_row("SELECT count(*) FROM changes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, n + 1);
    tx.rollback().unwrap();
    let count: i64 = store
        .conn
        .query_row("SELECT count(*) FROM changes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, n);
}

#[test]
fn without_the_module_changes_is_an_error_and_with_it_nothing_can_write() {
    let (_, store) = mixed();
    let plain = rusqlite::Connection::open(store.path().join("hist.db")).unwrap();
    let err = common::rows(&plain, "SELECT * FROM changes")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such table: main.hist_changes"), "{err}");
    for write in [
        "INSERT INTO hist_changes (id) VALUES (1)",
        "DELETE FROM hist_changes",
        "UPDATE hist_changes SET op = 'add'",
        "CREATE VIRTUAL TABLE other USING hist_changes",
    ] {
        assert!(store.conn.execute_batch(write).is_err(), "{write}");
    }
}

#[test]
fn an_empty_store_and_a_store_without_segments_table_answer_or_say_why() {
    let store = Store::new(&[], 5, |_| 0);
    assert!(store.rows("SELECT * FROM changes", "").unwrap().is_empty());
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    hist_vtab::register(&conn).unwrap();
    let err = common::rows(&conn, "SELECT * FROM hist_changes")
        .unwrap_err()
        .to_string();
    assert!(err.contains("hist store at schema 9"), "{err}");
}

#[test]
fn times_are_the_transactions() {
    let (changes, store) = mixed();
    let c = &changes[changes.len() / 2];
    let got = store
        .rows(
            &format!("SELECT at, tx FROM hist_changes WHERE id = {}", c.id),
            "",
        )
        .unwrap();
    assert_eq!(got, vec![vec![Value::Text(at(c.tx)), Value::Integer(c.tx)]]);
}

#[test]
fn a_pattern_that_names_many_keys_reads_the_index_once_and_skips_the_rest() {
    // More keys than the reader looks up one by one.
    let mut changes = Vec::new();
    for k in 0..600i64 {
        for seq in 1..=3 {
            changes.push(Logical {
                id: k * 10 + seq,
                tx: seq * 10 + k % 10,
                key: format!("{}/{k:03}", if k % 3 == 0 { "x" } else { "y" }),
                seq,
                path: format!("/p{}", k % 7),
                op: if seq == 1 {
                    hist_segment::Op::Add
                } else {
                    hist_segment::Op::Replace
                },
                old: (seq > 1).then(|| (seq - 1).to_string()),
                new: Some(seq.to_string()),
            });
        }
    }
    changes.sort_by_key(|c| c.tx);
    let store = Store::new(&changes, 2, |key| if key.ends_with('1') { 3 } else { 2 });
    for query in [
        "SELECT id, key, path, tx FROM {t} WHERE key GLOB 'y/*' ORDER BY id",
        "SELECT id, key FROM {t} WHERE key GLOB 'y/*' AND key GLOB '*1' AND tx >= 25 ORDER BY id",
        "SELECT key, count(*) FROM {t} WHERE key GLOB 'x/*' GROUP BY key ORDER BY key",
    ] {
        let expected = store.rows(query, "plain").unwrap();
        assert!(!expected.is_empty());
        assert_eq!(
            store.rows(query, "hist_changes").unwrap(),
            expected,
            "{query}"
        );
    }
    let sealed_y = store
        .rows(
            "SELECT count(*) FROM segment s JOIN change_key k ON k.id = s.key_id WHERE k.key GLOB 'y/*'",
            "",
        )
        .unwrap();
    let before = hist_vtab::segments_decoded();
    store
        .rows("SELECT * FROM hist_changes WHERE key GLOB 'y/*'", "")
        .unwrap();
    let n = (hist_vtab::segments_decoded() - before) as i64;
    assert_eq!(vec![vec![Value::Integer(n)]], sealed_y);
}
