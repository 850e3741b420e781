//! hist's loadable SQLite extension (`bindings/sqlite`), loaded by the programs people
//! use: Debian's `sqlite3` shell (`.load`) and Debian's `python3` (whose `sqlite3` module
//! can load extensions; the pyenv one cannot). Their answers are compared with `hist sql`'s
//! on a repository made by `hist`, as it is, and on a copy of it whose log is sealed into
//! segments the way the store seals it (schema 9), so that the table must read both tiers.
//! The extension is built with cargo, once, under `target/sqlite-extension`.

use crate::common::{TestEnv, copy_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const PYTHON: &str = "/usr/bin/python3";

/// The brief's query and others that exercise the pushed-down constraints.
const QUERIES: &[&str] = &[
    "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM changes WHERE key GLOB 'feed/acme*' AND at >= '2026-09-01' GROUP BY path ORDER BY changes DESC LIMIT 3",
    "SELECT * FROM changes ORDER BY id",
    "SELECT key, count(*) AS n, min(at) AS first, max(at) AS last FROM changes GROUP BY key ORDER BY key",
    "SELECT id, key, path, op, new FROM changes WHERE key IN ('feed/acme-1', 'cdc/states') AND tx BETWEEN 5 AND 20 ORDER BY id",
    "SELECT id, at, path FROM changes WHERE key = 'feed/acme-2' AND at < '2026-08-20' ORDER BY id",
    "SELECT count(*) AS n FROM changes WHERE at > '2026-09-10'",
    "SELECT t.actor, count(*) AS n FROM changes c JOIN transactions t ON t.id = c.tx GROUP BY t.actor ORDER BY t.actor",
    "SELECT id FROM changes WHERE key = 'nope'",
];

/// The extension (`libhist_sqlite.so`), built once for this test run.
fn extension() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = root.join("target/sqlite-extension");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let build = |offline: bool| {
            let mut cmd = Command::new(&cargo);
            cmd.current_dir(root)
                .args([
                    "build",
                    "--locked",
                    "--manifest-path",
                    "bindings/sqlite/Cargo.toml",
                ])
                .arg("--target-dir")
                .arg(&target);
            if offline {
                cmd.arg("--offline");
            }
            cmd.output().expect("run cargo")
        };
        // Offline when the crates are here (CI fetched them); else fetch them.
        let mut out = build(true);
        if !out.status.success() {
            out = build(false);
        }
        assert!(
            out.status.success(),
            "building the extension failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target.join("debug/libhist_sqlite.so")
    })
}

/// A repository with a history: four keys imported over August and September 2026, one
/// with a value large enough to be stored as an object.
fn feed() -> TestEnv {
    let env = TestEnv::init();
    let mut lines = String::new();
    let keys = ["feed/acme-1", "feed/acme-2", "feed/other", "cdc/states"];
    for day in 0..50 {
        let (month, dom) = if day < 31 {
            (8, day + 1)
        } else {
            (9, day - 30)
        };
        let at = format!("2026-{month:02}-{dom:02}T09:00:00Z");
        for (k, key) in keys.iter().enumerate() {
            if (day + k) % (k + 1) != 0 {
                continue;
            }
            let mut doc = serde_json::json!({
                "name": format!("{key} {}", day / 7),
                "price": 100 + (day * 7 + k * 3) % 23,
                "stock": (day * 13 + k) % 5,
                "tags": (0..(day % 4)).map(|t| format!("t{t}")).collect::<Vec<_>>(),
            });
            if k == 1 && day % 10 == 3 {
                doc["notes"] = Value::String(format!("{day} ").repeat(2000));
            }
            let reason = if day % 5 == 0 {
                Value::from("weekly")
            } else {
                Value::Null
            };
            let record = serde_json::json!({
                "key": key, "at": at, "actor": format!("poller:p{}", k % 2),
                "reason": reason, "doc": doc,
            });
            lines.push_str(&record.to_string());
            lines.push('\n');
        }
    }
    env.write("feed.ndjson", lines);
    env.run(&["import", "feed.ndjson"]).ok();
    env
}

/// A program on the machine, or `None` (and a visible message) when it is absent.
fn tool(program: &str, probe: &[&str]) -> Option<String> {
    let found = Command::new(program)
        .args(probe)
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: {program} is not installed (.ci/run installs it)");
    }
    found.then(|| program.to_owned())
}

/// `hist sql --json`'s rows.
fn hist_sql(env: &TestEnv, query: &str) -> Vec<Value> {
    env.run(&["sql", "--json", query])
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The sqlite3 shell's rows for `query` on `db`, after `.load` of the extension (when
/// `load`); its error message when it fails.
fn shell(db: &Path, load: bool, query: &str) -> Result<Vec<Value>, String> {
    let mut cmd = Command::new("sqlite3");
    cmd.arg("-json").arg(db);
    if load {
        // As the README shows it: the file name without `.so`.
        let ext = extension().with_extension("");
        cmd.arg(format!(".load {}", ext.display()));
    }
    let out = cmd.arg(query).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() || !stderr.is_empty() {
        return Err(stderr);
    }
    Ok(if stdout.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(&stdout).unwrap()
    })
}

/// Debian's python3's rows for `query` on `db`, after loading the extension.
fn python(db: &Path, query: &str) -> Vec<Value> {
    let script = "import json, sqlite3, sys\n\
        db = sqlite3.connect(sys.argv[1])\n\
        db.enable_load_extension(True)\n\
        db.load_extension(sys.argv[2])\n\
        db.enable_load_extension(False)\n\
        cur = db.execute(sys.argv[3])\n\
        cols = [d[0] for d in cur.description]\n\
        print(json.dumps([dict(zip(cols, row)) for row in cur.fetchall()]))\n";
    let out = Command::new(PYTHON)
        .args(["-c", script])
        .arg(db)
        .arg(extension())
        .arg(query)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3: {query}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A copy of `env`'s repository at schema 9 with each key's log sealed into segments of
/// five changes but for its last three, written as the store writes them: objects named by
/// the blake3 hash of their bytes, zstd-compressed, indexed in `segment`. Large values,
/// stored as objects in the tail, are inline in segments.
fn sealed_copy(env: &TestEnv) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&env.join(".hist"), &copy.path().join(".hist"));
    let hist = copy.path().join(".hist");
    let objects = hist.join("objects");
    let mut conn = rusqlite::Connection::open(hist.join("hist.db")).unwrap();
    hist_vtab::register(&conn).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    if version < 9 {
        conn.execute_batch(include_str!("../../src/store/sql/0009_segments.sql"))
            .unwrap();
        conn.execute_batch("PRAGMA user_version = 9").unwrap();
    }
    let tx = conn.transaction().unwrap();
    let keys: Vec<(i64, i64)> = {
        let mut stmt = tx
            .prepare("SELECT key_id, max(seq) FROM change_log GROUP BY key_id ORDER BY key_id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    for (key_id, max_seq) in keys {
        let rows: Vec<TailRow> = {
            let mut stmt = tx
                .prepare(
                    "SELECT c.id, c.seq, c.tx, c.path_id, c.op, c.old, c.old_obj, c.new,
                            c.new_obj, t.at
                     FROM change_log c JOIN tx t ON t.id = c.tx
                     WHERE c.key_id = ?1 AND c.seq <= ?2 ORDER BY c.seq",
                )
                .unwrap();
            let value = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Option<String>> {
                // A value stored as an object: its text, inline in the segment.
                Ok(match r.get::<_, Option<String>>(i + 1)? {
                    Some(name) => Some(
                        String::from_utf8(hist_segment::objects::read(&objects, &name).unwrap())
                            .unwrap(),
                    ),
                    None => r.get(i)?,
                })
            };
            let read = |r: &rusqlite::Row<'_>| {
                Ok(TailRow {
                    id: r.get(0)?,
                    seq: r.get(1)?,
                    tx: r.get(2)?,
                    path: r.get(3)?,
                    op: r.get(4)?,
                    old: value(r, 5)?,
                    new: value(r, 7)?,
                    at: r.get(9)?,
                })
            };
            stmt.query_map(rusqlite::params![key_id, max_seq - 3], read)
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        for chunk in rows.chunks(5) {
            let changes: Vec<hist_segment::Change<'_>> = chunk
                .iter()
                .map(|r| hist_segment::Change {
                    id: r.id,
                    seq: r.seq,
                    tx: r.tx,
                    path: r.path as u64,
                    op: hist_segment::Op::parse(&r.op).unwrap(),
                    old: r.old.as_deref(),
                    new: r.new.as_deref(),
                })
                .collect();
            let bytes = hist_segment::encode(&changes).unwrap();
            let name = blake3::hash(&bytes).to_hex().to_string();
            let path = hist_segment::objects::path_of(&objects, &name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
            let mut paths: Vec<u64> = changes.iter().map(|c| c.path).collect();
            paths.sort_unstable();
            paths.dedup();
            let (first, last) = (&chunk[0], &chunk[chunk.len() - 1]);
            let moves = chunk.iter().filter(|r| r.op == "move").count() as i64;
            tx.execute(
                "INSERT INTO segment (key_id, first_seq, last_seq, first_tx, last_tx, first_at,
                     last_at, moves, object, paths) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                rusqlite::params![
                    key_id,
                    first.seq,
                    last.seq,
                    first.tx,
                    last.tx,
                    first.at,
                    last.at,
                    moves,
                    name,
                    hist_segment::pathset::encode(&paths)
                ],
            )
            .unwrap();
            tx.execute(
                "DELETE FROM change_log WHERE key_id = ?1 AND seq BETWEEN ?2 AND ?3",
                rusqlite::params![key_id, first.seq, last.seq],
            )
            .unwrap();
            tx.execute(
                "UPDATE doc SET sealed_seq = ?2 WHERE key = (SELECT key FROM change_key WHERE id = ?1)",
                rusqlite::params![key_id, last.seq],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
    let (segments, tail): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM segment), (SELECT count(*) FROM change_log)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        segments > 10 && tail > 0,
        "{segments} segments, {tail} tail rows"
    );
    copy
}

/// A change of the tail, to seal.
struct TailRow {
    id: i64,
    seq: i64,
    tx: i64,
    path: i64,
    op: String,
    old: Option<String>,
    new: Option<String>,
    at: String,
}

/// `rows` with every `{"$hist_object": id}` (how the log's tail showed a large value
/// before schema 9) replaced by the value, read from `env`'s objects.
fn resolved(env: &TestEnv, rows: Vec<Value>) -> Vec<Value> {
    let objects = env.join(".hist/objects");
    let resolve = |v: Value| match &v {
        Value::String(s) if s.starts_with("{\"$hist_object\":") => {
            let reference: Value = serde_json::from_str(s).unwrap();
            let name = reference["$hist_object"].as_str().unwrap();
            let bytes = hist_segment::objects::read(&objects, name).unwrap();
            Value::String(String::from_utf8(bytes).unwrap())
        }
        _ => v,
    };
    rows.into_iter()
        .map(|row| match row {
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (k, resolve(v))).collect())
            }
            other => other,
        })
        .collect()
}

#[test]
fn the_sqlite3_shell_with_the_extension_answers_as_hist_sql_does() {
    if tool("sqlite3", &["-version"]).is_none() {
        return;
    }
    let env = feed();
    let db = env.join(".hist/hist.db");
    let sealed = sealed_copy(&env);
    let sealed_db = sealed.path().join(".hist/hist.db");
    for query in QUERIES {
        let expected = hist_sql(&env, query);
        assert!(
            !expected.is_empty() || query.contains("nope"),
            "{query} answers nothing"
        );
        assert_eq!(shell(&db, true, query).unwrap(), expected, "{query}");
        assert_eq!(
            shell(&sealed_db, true, query).unwrap(),
            resolved(&env, expected),
            "{query} (sealed)"
        );
    }
    // Large values are text, whatever the tier.
    let large = shell(
        &sealed_db,
        true,
        "SELECT count(*) AS n FROM changes WHERE length(new) > 4096 AND new NOT LIKE '%hist_object%'",
    )
    .unwrap();
    assert_ne!(large, vec![serde_json::json!({"n": 0})]);
    // The view may use the table where the schema is not trusted (it is innocuous).
    let untrusted = shell(
        &sealed_db,
        true,
        "PRAGMA trusted_schema = OFF; SELECT count(*) AS n FROM changes",
    )
    .unwrap();
    assert_eq!(
        untrusted,
        hist_sql(&env, "SELECT count(*) AS n FROM changes")
    );
    // Without the extension: an error, never the tail alone.
    let err = shell(&sealed_db, false, "SELECT count(*) FROM changes").unwrap_err();
    assert!(err.contains("no such table: main.hist_changes"), "{err}");
    // Nothing that writes.
    let err = shell(&sealed_db, true, "DELETE FROM hist_changes").unwrap_err();
    assert!(err.contains("may not be modified"), "{err}");
}

#[test]
fn python_loads_the_extension_and_answers_as_hist_sql_does() {
    if tool(
        PYTHON,
        &[
            "-c",
            "import sqlite3; sqlite3.connect(':memory:').enable_load_extension(True)",
        ],
    )
    .is_none()
    {
        return;
    }
    let env = feed();
    let sealed = sealed_copy(&env);
    for query in [QUERIES[0], QUERIES[3], QUERIES[6]] {
        let expected = hist_sql(&env, query);
        assert_eq!(
            python(&env.join(".hist/hist.db"), query),
            expected,
            "{query}"
        );
        assert_eq!(
            python(&sealed.path().join(".hist/hist.db"), query),
            resolved(&env, expected),
            "{query} (sealed)"
        );
    }
}
