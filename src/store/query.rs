//! `hist sql`: read-only SQL over the views `changes`, `transactions`, `current`, `checks`.
//!
//! Queries run on a separate connection opened read-only, with `PRAGMA query_only`, and an
//! authorizer that allows reading and nothing else: no writes, no schema changes, no
//! ATTACH, no transactions, no pragmas but a few read-only ones, no `load_extension`.
//! Refusals are told apart from failures by SQLite's error codes.

use super::Store;
use crate::error::{QueryError, Result};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{Connection, ErrorCode, OpenFlags, types::ValueRef};

/// A value in a query result.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    /// NULL.
    Null,
    /// An integer.
    Integer(i64),
    /// A real.
    Real(f64),
    /// Text.
    Text(String),
    /// A blob.
    Blob(Vec<u8>),
}

/// The result of a query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<SqlValue>>,
}

const READ_ONLY_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "foreign_key_list",
    "user_version",
    "schema_version",
];

fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name } => {
            let name = function_name.to_ascii_lowercase();
            if matches!(
                name.as_str(),
                "load_extension" | "readfile" | "writefile" | "edit"
            ) {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value: None,
        } if READ_ONLY_PRAGMAS.contains(&pragma_name.to_ascii_lowercase().as_str()) => {
            Authorization::Allow
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value: Some(_),
        } if READ_ONLY_PRAGMAS[..6].contains(&pragma_name.to_ascii_lowercase().as_str()) => {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

impl Store {
    /// Runs one read-only query. Anything that would write, attach, change a pragma that
    /// matters or load an extension is refused.
    pub(crate) fn query_readonly(&self, query: &str) -> Result<QueryResult> {
        let path = self.dir.join("hist.db");
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.execute_batch("PRAGMA query_only = ON")?;
        // The `changes` view reads the log's two tiers through it (schema 9).
        hist_vtab::register(&conn)?;
        conn.authorizer(Some(authorize))?;
        let mut stmt = conn.prepare(query).map_err(refused)?;
        if !stmt.readonly() {
            return Err(QueryError::Writes.into());
        }
        let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let n = columns.len();
        let mut rows = stmt.query([]).map_err(refused)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(refused)? {
            let mut values = Vec::with_capacity(n);
            for i in 0..n {
                values.push(match row.get_ref(i)? {
                    ValueRef::Null => SqlValue::Null,
                    ValueRef::Integer(v) => SqlValue::Integer(v),
                    ValueRef::Real(v) => SqlValue::Real(v),
                    ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
                });
            }
            out.push(values);
        }
        Ok(QueryResult { columns, rows: out })
    }
}

/// A query's failure: refused (denied by the authorizer, or a write on the read-only
/// connection) or failed, told apart by SQLite's error code.
fn refused(e: rusqlite::Error) -> crate::Error {
    let text = e.to_string();
    match e.sqlite_error_code() {
        Some(ErrorCode::AuthorizationForStatementDenied | ErrorCode::ReadOnly) => {
            QueryError::Refused(text).into()
        }
        _ => QueryError::Failed(text).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Store, schema_version};
    use super::SqlValue;
    use crate::error::{Error, QueryError};

    /// A store at schema 9 (applied here until the store applies it itself) holding the
    /// changes of one key: two sealed in a segment, one in the tail with a large value
    /// stored as an object.
    fn schema_9_store(dir: &std::path::Path) -> Store {
        let store = Store::open(dir, true).unwrap();
        let conn = rusqlite::Connection::open(dir.join("hist.db")).unwrap();
        if schema_version() < 9 {
            conn.execute_batch(include_str!("sql/0009_segments.sql"))
                .unwrap();
        }
        let changes = [
            hist_segment::Change {
                id: 1,
                seq: 1,
                tx: 1,
                path: 1,
                op: hist_segment::Op::Add,
                old: None,
                new: Some("1"),
            },
            hist_segment::Change {
                id: 2,
                seq: 2,
                tx: 1,
                path: 2,
                op: hist_segment::Op::Add,
                old: None,
                new: Some("\"x\""),
            },
        ];
        let segment = store
            .objects()
            .put(&hist_segment::encode(&changes).unwrap())
            .unwrap();
        let large = format!("\"{}\"", "y".repeat(5000));
        let value = store.objects().put(large.as_bytes()).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO tx (id, at, actor, reason, kind, hash)
                 VALUES (1, '2026-08-19T16:40:00.000000Z', 'user:a', NULL, 'commit', x'00'),
                        (2, '2026-09-02T10:00:00.000000Z', 'user:b', 'why', 'commit', x'00');
             INSERT INTO change_key (id, key) VALUES (1, 'feed/acme');
             INSERT INTO path (id, path) VALUES (1, '/a'), (2, '/b');
             INSERT INTO segment VALUES (1, 1, 2, 1, 1, '2026-08-19T16:40:00.000000Z',
                 '2026-08-19T16:40:00.000000Z', 0, '{}', x'0101');
             INSERT INTO change_log (id, tx, key_id, seq, path_id, op, old, new, new_obj)
                 VALUES (3, 2, 1, 3, 2, 'replace', '\"x\"', NULL, '{}');",
            segment.to_hex(),
            value.to_hex()
        ))
        .unwrap();
        store
    }

    #[test]
    fn changes_reads_both_tiers_through_the_authorizer_and_nothing_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = schema_9_store(dir.path());
        let result = store
            .query_readonly(
                "SELECT id, at, actor, reason, key, path, op, old, length(new) FROM changes ORDER BY id",
            )
            .unwrap();
        let text = |s: &str| SqlValue::Text(s.to_owned());
        assert_eq!(
            result.rows,
            vec![
                vec![
                    SqlValue::Integer(1),
                    text("2026-08-19T16:40:00.000000Z"),
                    text("user:a"),
                    SqlValue::Null,
                    text("feed/acme"),
                    text("/a"),
                    text("add"),
                    SqlValue::Null,
                    SqlValue::Integer(1),
                ],
                vec![
                    SqlValue::Integer(2),
                    text("2026-08-19T16:40:00.000000Z"),
                    text("user:a"),
                    SqlValue::Null,
                    text("feed/acme"),
                    text("/b"),
                    text("add"),
                    SqlValue::Null,
                    SqlValue::Integer(3),
                ],
                vec![
                    SqlValue::Integer(3),
                    text("2026-09-02T10:00:00.000000Z"),
                    text("user:b"),
                    text("why"),
                    text("feed/acme"),
                    text("/b"),
                    text("replace"),
                    text("\"x\""),
                    SqlValue::Integer(5002),
                ],
            ]
        );
        let brief = store
            .query_readonly(
                "SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM changes \
                 WHERE key GLOB 'feed/acme*' AND at >= '2026-09-01' GROUP BY path \
                 ORDER BY changes DESC LIMIT 3",
            )
            .unwrap();
        assert_eq!(
            brief.rows,
            vec![vec![text("/b"), SqlValue::Integer(1), SqlValue::Integer(1)]]
        );
        for write in [
            "DELETE FROM hist_changes",
            "INSERT INTO hist_changes (id) VALUES (9)",
            "UPDATE changes SET op = 'add'",
            "CREATE VIRTUAL TABLE t USING hist_changes",
            "DROP TABLE hist_changes",
        ] {
            // Refused by the authorizer, or by SQLite itself (the table has no xUpdate, a view
            // cannot be written).
            let err = store.query_readonly(write).unwrap_err();
            let refused = match &err {
                Error::Query(QueryError::Refused(_) | QueryError::Writes) => true,
                Error::Query(QueryError::Failed(m)) => {
                    m.contains("may not be modified") || m.contains("cannot modify")
                }
                _ => false,
            };
            assert!(refused, "{write}: {err:?}");
        }
    }
}
