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
