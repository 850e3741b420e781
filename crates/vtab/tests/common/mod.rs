#![allow(dead_code)] // each test binary uses part of it
//! A schema-9 store built by hand: the migrations of `src/store/sql/`, a generated history
//! of a few keys, part of it sealed into segments (objects under `objects/`) and the rest
//! left in the tail, large tail values in objects; and the same changes as a plain table.

use hist_segment::{Change, Op, objects, pathset};
use rusqlite::Connection;
use rusqlite::types::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const MIGRATIONS: &[&str] = &[
    include_str!("../../../../src/store/sql/0001_init.sql"),
    include_str!("../../../../src/store/sql/0002_track.sql"),
    include_str!("../../../../src/store/sql/0003_retention.sql"),
    include_str!("../../../../src/store/sql/0004_personal.sql"),
    include_str!("../../../../src/store/sql/0005_input.sql"),
    include_str!("../../../../src/store/sql/0006_path_seq.sql"),
    include_str!("../../../../src/store/sql/0007_key_ids.sql"),
    include_str!("../../../../src/store/sql/0008_doc_rowid.sql"),
    include_str!("../../../../src/store/sql/0009_segments.sql"),
];

/// A new database at `path` with the store's schema 9 and `hist_changes` registered.
pub fn schema_9(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    for sql in MIGRATIONS {
        conn.execute_batch(sql).unwrap();
    }
    hist_vtab::register(&conn).unwrap();
    conn
}

/// Tail values longer than this are stored as objects, as the store does.
const LARGE: usize = 1000;

/// One change of the generated history.
#[derive(Clone, Debug)]
pub struct Logical {
    pub id: i64,
    pub tx: i64,
    pub key: String,
    pub seq: i64,
    pub path: String,
    pub op: Op,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The time of transaction `tx`: one a day from 2026-08-01.
pub fn at(tx: i64) -> String {
    let d = tx - 1;
    let (month, day) = if d < 31 { (8, d + 1) } else { (9, d - 30) };
    format!("2026-{month:02}-{day:02}T12:00:00.000000Z")
}

/// A history: 40 transactions; keys change on their own rhythm, a few paths each, with
/// numbers, strings, removals and two large values.
pub fn history() -> Vec<Logical> {
    let keys = [
        "a/1",
        "a/2",
        "b/1",
        "cdc/states",
        "feed/acme-1",
        "feed/acme-2",
    ];
    let paths = ["/price", "/stock", "/name", "/tags/0", "/dims/w"];
    let mut out = Vec::new();
    let mut seqs: HashMap<&str, i64> = HashMap::new();
    let mut values: HashMap<(&str, &str), String> = HashMap::new();
    let mut id = 100;
    for tx in 1..=40i64 {
        for (k, key) in keys.iter().enumerate() {
            let k = k as i64;
            if (tx + k) % (k % 3 + 1) != 0 {
                continue;
            }
            for (p, path) in paths.iter().enumerate() {
                let p = p as i64;
                if (tx * 7 + k * 3 + p) % 4 == 0 {
                    continue;
                }
                let old = values.get(&(*key, *path)).cloned();
                let new = match (p, (tx + p) % 9) {
                    (_, 0) if old.is_some() => None,
                    (2, _) => Some(format!("\"{key} v{tx}\"")),
                    (3, _) if tx == 17 => Some(format!("\"{}\"", "x".repeat(3000))),
                    (3, _) => Some(format!("[{tx},{p}]")),
                    _ => Some(format!("{}.{}", 60 + tx + k, tx % 10)),
                };
                let op = match (&old, &new) {
                    (None, None) => continue,
                    (None, Some(_)) => Op::Add,
                    (Some(_), None) => Op::Remove,
                    (Some(_), Some(_)) => Op::Replace,
                };
                match &new {
                    Some(v) => values.insert((key, path), v.clone()),
                    None => values.remove(&(*key, *path)),
                };
                let seq = seqs.entry(key).or_insert(0);
                *seq += 1;
                id += 1;
                out.push(Logical {
                    id,
                    tx,
                    key: (*key).to_owned(),
                    seq: *seq,
                    path: (*path).to_owned(),
                    op,
                    old,
                    new,
                });
            }
        }
    }
    out
}

/// A store in a temporary directory.
pub struct Store {
    pub dir: tempfile::TempDir,
    pub conn: Connection,
    /// Segment objects by key, in version order.
    pub segments: HashMap<String, Vec<String>>,
}

impl Store {
    /// A schema-9 store holding `changes`: of each key, the versions up to
    /// `sealed(key)` in segments of `rows` changes, the rest in the tail.
    pub fn new(changes: &[Logical], rows: usize, sealed: impl Fn(&str) -> i64) -> Store {
        let dir = tempfile::tempdir().unwrap();
        let conn = schema_9(&dir.path().join("hist.db"));
        conn.execute_batch("PRAGMA synchronous = OFF; BEGIN")
            .unwrap();
        let mut store = Store {
            dir,
            conn,
            segments: HashMap::new(),
        };
        let mut keys: HashMap<String, i64> = HashMap::new();
        let mut paths: HashMap<String, i64> = HashMap::new();
        for c in changes {
            let n = keys.len() as i64 + 1;
            keys.entry(c.key.clone()).or_insert(n);
            let n = paths.len() as i64 + 1;
            paths.entry(c.path.clone()).or_insert(n);
        }
        for t in 1..=changes.iter().map(|c| c.tx).max().unwrap_or(0) {
            store
                .conn
                .execute(
                    "INSERT INTO tx (id, at, actor, reason, kind, hash) VALUES (?1, ?2, ?3, ?4, 'commit', x'00')",
                    rusqlite::params![t, at(t), format!("user:u{}", t % 3), (t % 4 == 0).then(|| format!("reason {t}"))],
                )
                .unwrap();
        }
        for (key, id) in &keys {
            store
                .conn
                .execute(
                    "INSERT INTO change_key (id, key) VALUES (?1, ?2)",
                    rusqlite::params![id, key],
                )
                .unwrap();
        }
        for (path, id) in &paths {
            store
                .conn
                .execute(
                    "INSERT INTO path (id, path) VALUES (?1, ?2)",
                    rusqlite::params![id, path],
                )
                .unwrap();
        }
        let mut by_key: Vec<(&String, &i64)> = keys.iter().collect();
        by_key.sort();
        for (key, &key_id) in by_key {
            let mine: Vec<&Logical> = changes.iter().filter(|c| &c.key == key).collect();
            let last_sealed = sealed(key);
            let (sealed_part, tail): (Vec<&Logical>, Vec<&Logical>) =
                mine.into_iter().partition(|c| c.seq <= last_sealed);
            for chunk in sealed_part.chunks(rows) {
                let object = store.seal(key_id, chunk, &paths);
                store.segments.entry(key.clone()).or_default().push(object);
            }
            for c in tail {
                let (old, old_obj) = store.tail_value(c.old.as_deref());
                let (new, new_obj) = store.tail_value(c.new.as_deref());
                store
                    .conn
                    .execute(
                        "INSERT INTO change_log (id, tx, key_id, seq, path_id, op, old, new, old_obj, new_obj)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                        rusqlite::params![c.id, c.tx, key_id, c.seq, paths[&c.path], c.op.as_str(), old, new, old_obj, new_obj],
                    )
                    .unwrap();
            }
        }
        store.plain(changes);
        store.conn.execute_batch("COMMIT").unwrap();
        store
    }

    pub fn objects(&self) -> PathBuf {
        self.dir.path().join("objects")
    }

    /// Writes `bytes` as an object; its name.
    pub fn write_object(&self, bytes: &[u8]) -> String {
        write_object(&self.objects(), bytes)
    }

    fn tail_value(&self, value: Option<&str>) -> (Option<String>, Option<String>) {
        match value {
            Some(v) if v.len() > LARGE => (None, Some(self.write_object(v.as_bytes()))),
            v => (v.map(str::to_owned), None),
        }
    }

    /// Seals `chunk` (consecutive versions of one key) into a segment; its object.
    fn seal(&self, key_id: i64, chunk: &[&Logical], paths: &HashMap<String, i64>) -> String {
        let changes: Vec<Change<'_>> = chunk
            .iter()
            .map(|c| Change {
                id: c.id,
                seq: c.seq,
                tx: c.tx,
                path: paths[&c.path] as u64,
                op: c.op,
                old: c.old.as_deref(),
                new: c.new.as_deref(),
            })
            .collect();
        write_segment(&self.conn, &self.objects(), key_id, &changes, at)
    }

    /// The same changes as a plain table, `plain`, with the virtual table's columns.
    fn plain(&self, changes: &[Logical]) {
        self.conn
            .execute_batch(
                "CREATE TABLE plain(id INTEGER PRIMARY KEY, tx INTEGER, at TEXT, actor TEXT, reason TEXT, key TEXT, path TEXT, op TEXT, old TEXT, new TEXT)",
            )
            .unwrap();
        for c in changes {
            self.conn
                .execute(
                    "INSERT INTO plain SELECT ?1, ?2, t.at, t.actor, t.reason, ?3, ?4, ?5, ?6, ?7 FROM tx t WHERE t.id = ?2",
                    rusqlite::params![c.id, c.tx, c.key, c.path, c.op.as_str(), c.old, c.new],
                )
                .unwrap();
        }
    }

    /// The rows of `sql` (with `{t}` standing for the table), as values.
    pub fn rows(&self, sql: &str, table: &str) -> rusqlite::Result<Vec<Vec<Value>>> {
        rows(&self.conn, &sql.replace("{t}", table))
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The rows of `sql` on `conn`.
pub fn rows(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<Vec<Value>>> {
    let mut stmt = conn.prepare(sql)?;
    let n = stmt.column_count();
    let rows = stmt.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?;
    rows.collect()
}

/// Writes `bytes` as an object under `objects`; its name.
pub fn write_object(objects: &Path, bytes: &[u8]) -> String {
    // Any 64 hex digits do here (the store names an object by its blake3 hash).
    let mut name = String::new();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    while name.len() < 64 {
        for b in bytes.iter().chain(name.as_bytes()) {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        name.push_str(&format!("{h:016x}"));
    }
    let path = objects::path_of(objects, &name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, zstd::encode_all(bytes, 3).unwrap()).unwrap();
    name
}

/// Seals `changes` (consecutive versions of key `key_id`) into a segment, as the store
/// does: an object, and its row in `segment` (`at` gives a transaction's time). Its object.
pub fn write_segment(
    conn: &Connection,
    objects: &Path,
    key_id: i64,
    changes: &[Change<'_>],
    at: impl Fn(i64) -> String,
) -> String {
    let object = write_object(objects, &hist_segment::encode(changes).unwrap());
    let mut ids: Vec<u64> = changes.iter().map(|c| c.path).collect();
    ids.sort_unstable();
    ids.dedup();
    let (first, last) = (&changes[0], &changes[changes.len() - 1]);
    conn.execute(
        "INSERT INTO segment (key_id, first_seq, last_seq, first_tx, last_tx, first_at, last_at, moves, object, paths)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9)",
        rusqlite::params![key_id, first.seq, last.seq, first.tx, last.tx, at(first.tx), at(last.tx), object, pathset::encode(&ids)],
    )
    .unwrap();
    object
}
