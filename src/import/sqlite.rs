//! Importing stored documents from a SQLite database: the rows of a query, each a snapshot,
//! in time order across all keys ([`Repo::import_sqlite`]).
//!
//! The query gives columns named `key`, `at` and `doc`, and optionally `actor` and
//! `reason` (alias them: `SELECT url AS key, fetched_at AS at, body AS doc FROM responses`):
//!
//! - `key`: the document key (text; an integer is taken as its digits);
//! - `at`: ISO-8601 text with an offset or `Z` (`2021-03-28T12:00:00Z`), or Unix seconds (a
//!   number, or text of digits);
//! - `doc`: JSON text (text or a blob), or a number;
//! - `actor`: `kind:name`; where there is no such column, or it is NULL, the actor given to
//!   the import ([`SqliteImport::actor`]);
//! - `reason`: any text, or NULL.
//!
//! The database is opened read-only and is never written. SQLite sorts the rows by time
//! (rows at the same time keep the query's order), so the import holds one row at a time
//! whatever the table's size. A row whose `doc` is not JSON (or is NULL) is skipped with a
//! warning naming its key and time; a row without a valid key, time or actor stops the
//! import (the batches committed before it stay).

use super::source::SourceRun;
use super::{
    ImportOptions, RecordError, Refusal, Snapshot, SourceError, SourceEvent, SourceSummary,
};
use crate::model::{Actor, ActorError};
use crate::repo::Repo;
use crate::time::Timestamp;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;

/// What to import from a SQLite database.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SqliteImport {
    /// The database file (opened read-only).
    pub db: PathBuf,
    /// The query (see the [module doc](self) for its columns).
    pub query: String,
    /// The actor of rows without one.
    pub actor: Option<Actor>,
    /// Count the rows first, for a progress report ([`SourceEvent::Total`]).
    pub count: bool,
}

impl SqliteImport {
    /// The rows of `query` in the database `db`.
    pub fn new(db: impl Into<PathBuf>, query: impl Into<String>) -> Self {
        Self {
            db: db.into(),
            query: query.into(),
            actor: None,
            count: false,
        }
    }

    /// With `actor` for rows that name none.
    #[must_use]
    pub fn actor(mut self, actor: Option<Actor>) -> Self {
        self.actor = actor;
        self
    }

    /// Counting the rows first (for a progress bar) or not.
    #[must_use]
    pub fn count(mut self, count: bool) -> Self {
        self.count = count;
        self
    }
}

/// Where the columns the import reads are in the sorted query's rows.
struct Columns {
    actor: bool,
    reason: bool,
}

/// A column name quoted for SQL.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Opens `db` read-only and prepares `query` sorted by time: the statement's text and
/// which optional columns it gives.
fn sorted_query(conn: &Connection, query: &str) -> Result<(String, Columns), Refusal> {
    let query = query.trim().trim_end_matches(';').trim_end();
    let names: Vec<String> = conn
        .prepare(query)
        .map_err(|e| Refusal::Sqlite(format!("the query does not run: {e}")))?
        .column_names()
        .map(str::to_owned)
        .collect();
    let find = |want: &str| names.iter().find(|n| n.eq_ignore_ascii_case(want));
    let gives = || names.join(", ");
    let key = find("key").ok_or_else(|| Refusal::NoColumn("key", gives()))?;
    let at = find("at").ok_or_else(|| Refusal::NoColumn("at", gives()))?;
    let doc = find("doc").ok_or_else(|| Refusal::NoColumn("doc", gives()))?;
    let (actor, reason) = (find("actor"), find("reason"));
    let mut select = vec![quote(key), quote(at), quote(doc)];
    select.extend(actor.map(|a| quote(a)));
    select.extend(reason.map(|r| quote(r)));
    // Numbers are Unix seconds, as is text of digits; other text is ISO-8601, which
    // SQLite's `unixepoch` reads with its offset. What it cannot read sorts first (NULL)
    // and stops the import before anything is written.
    let at = quote(at);
    let sql = format!(
        "SELECT {} FROM (SELECT *, row_number() OVER () AS hist_row FROM ({query}))
         ORDER BY CASE
             WHEN typeof({at}) IN ('integer', 'real') THEN {at}
             WHEN trim({at}) GLOB '[0-9]*' AND trim({at}) NOT GLOB '*[^0-9.]*'
                 THEN CAST(trim({at}) AS REAL)
             ELSE unixepoch({at}, 'subsec') END,
           hist_row",
        select.join(", ")
    );
    let columns = Columns {
        actor: actor.is_some(),
        reason: reason.is_some(),
    };
    Ok((sql, columns))
}

/// Reads `at` as a time: Unix seconds (a number, or text of digits) or ISO-8601 text with
/// an offset.
fn time_of(value: ValueRef<'_>) -> Option<Timestamp> {
    let seconds = |s: f64| {
        let micros = (s * 1e6).round();
        #[allow(clippy::cast_possible_truncation)] // in range: checked
        (micros.is_finite() && micros.abs() < 9.0e18).then_some(Timestamp(micros as i64))
    };
    match value {
        ValueRef::Integer(s) => s.checked_mul(1_000_000).map(Timestamp),
        ValueRef::Real(s) => seconds(s),
        ValueRef::Text(t) => {
            let text = std::str::from_utf8(t).ok()?.trim();
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                seconds(text.parse().ok()?)
            } else {
                Timestamp::parse_rfc3339(text)
            }
        }
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
}

/// A value as text, for a place in a warning.
fn shown(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

/// One row, read.
struct Row {
    /// The key, or the value that is not one.
    key: Result<String, String>,
    at: Option<Timestamp>,
    at_text: String,
    /// The document's text, or why there is none.
    doc: Result<Vec<u8>, &'static str>,
    actor: Option<Result<Actor, ActorError>>,
    reason: Option<String>,
}

impl Row {
    fn read(row: &rusqlite::Row<'_>, columns: &Columns) -> rusqlite::Result<Self> {
        let key = match row.get_ref(0)? {
            ValueRef::Text(t) => std::str::from_utf8(t)
                .map(str::to_owned)
                .map_err(|_| shown(ValueRef::Text(t))),
            ValueRef::Integer(i) => Ok(i.to_string()),
            other => Err(shown(other)),
        };
        let at_value = row.get_ref(1)?;
        let doc = match row.get_ref(2)? {
            ValueRef::Text(t) | ValueRef::Blob(t) => Ok(t.to_vec()),
            ValueRef::Integer(i) => Ok(i.to_string().into_bytes()),
            ValueRef::Real(f) if f.is_finite() => Ok(f.to_string().into_bytes()),
            ValueRef::Real(_) => Err("doc is not a finite number"),
            ValueRef::Null => Err("doc is NULL"),
        };
        let mut next = 3;
        let mut optional = |present: bool| -> rusqlite::Result<Option<ValueRef<'_>>> {
            if !present {
                return Ok(None);
            }
            next += 1;
            Ok(Some(row.get_ref(next - 1)?).filter(|v| *v != ValueRef::Null))
        };
        let actor = optional(columns.actor)?.map(|v| Actor::parse(&shown(v)));
        let reason = optional(columns.reason)?.map(shown);
        Ok(Self {
            key,
            at: time_of(at_value),
            at_text: shown(at_value),
            doc,
            actor,
            reason,
        })
    }

    /// `row KEY at AT`, as warnings name it.
    fn place(&self) -> String {
        let (Ok(key) | Err(key)) = &self.key;
        format!("row {key} at {}", self.at_text)
    }
}

impl Repo {
    /// Imports the rows of `spec`'s query (see the [module doc](self)) in time order, each
    /// an `ingest` transaction at its time (a time earlier than the one before it, which
    /// SQLite's sorting to the millisecond can leave, is raised to it), committed in
    /// batches. `progress` hears of the count (when asked for), of warnings, and of each
    /// batch committed.
    ///
    /// Refused before anything is written ([`SourceError::Refused`]) when the database or
    /// the query cannot be read, when a column is missing, and when the first row is older
    /// than the repository's newest transaction.
    pub fn import_sqlite(
        &mut self,
        spec: &SqliteImport,
        now: Timestamp,
        options: &ImportOptions,
        mut progress: impl FnMut(SourceEvent<'_>),
    ) -> Result<SourceSummary, SourceError> {
        if !spec.db.is_file() {
            return Err(Refusal::Sqlite(format!("{}: no such file", spec.db.display())).into());
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&spec.db, flags)
            .map_err(|e| Refusal::Sqlite(format!("{}: {e}", spec.db.display())))?;
        let (sql, columns) = sorted_query(&conn, &spec.query)?;
        if !columns.actor && spec.actor.is_none() {
            return Err(Refusal::NoActor.into());
        }
        if spec.count {
            let query = spec.query.trim().trim_end_matches(';');
            let count: i64 = conn
                .query_row(&format!("SELECT count(*) FROM ({query})"), [], |r| r.get(0))
                .map_err(|e| Refusal::Sqlite(format!("the query does not run: {e}")))?;
            progress(SourceEvent::Total(u64::try_from(count).unwrap_or(0)));
        }
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| Refusal::Sqlite(format!("the query does not run: {e}")))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| Refusal::Sqlite(format!("the query does not run: {e}")))?;
        let mut run = SourceRun::begin(self, now, options, None)?;
        loop {
            let row = match rows.next() {
                Ok(Some(row)) => Row::read(row, &columns),
                Ok(None) => break,
                Err(e) => Err(e),
            }
            .map_err(|e| SourceError::Read {
                message: format!("reading the query's rows: {e}"),
                recorded: run.committed(),
            })?;
            let place = row.place();
            let key = row
                .key
                .as_deref()
                .map_err(|_| run.item(&place, RecordError::NoKey))?;
            let at = row
                .at
                .ok_or_else(|| run.item(&place, RecordError::At(row.at_text.clone())))?;
            let at = run.read(at, || place.clone())?;
            let actor = match &row.actor {
                Some(Ok(actor)) => actor.clone(),
                Some(Err(e)) => return Err(run.item(&place, RecordError::Actor(e.clone()))),
                None => spec
                    .actor
                    .clone()
                    .ok_or_else(|| run.item(&place, RecordError::Actor(ActorError::Missing)))?,
            };
            let mut warn = |message: &str| {
                progress(SourceEvent::Warning {
                    place: &place,
                    message,
                });
            };
            match &row.doc {
                Ok(doc) => {
                    let snapshot = Snapshot {
                        key,
                        at: Some(at),
                        actor: &actor,
                        reason: row.reason.as_deref(),
                        doc,
                    };
                    run.ingest(&snapshot, "doc", &place, &mut warn)?;
                }
                Err(why) => run.skip(&mut warn, &format!("{why}; skipped")),
            }
            run.done(&mut progress)?;
        }
        run.finish(&mut progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_unix_seconds_or_iso_8601_with_an_offset() {
        let t = |v: ValueRef<'_>| time_of(v).map(|t| t.to_string());
        let day = Some("2021-01-01T00:00:00.000000Z".to_owned());
        assert_eq!(t(ValueRef::Integer(1_609_459_200)), day);
        assert_eq!(
            t(ValueRef::Real(1_609_459_200.25)),
            Some("2021-01-01T00:00:00.250000Z".into())
        );
        assert_eq!(t(ValueRef::Text(b"1609459200")), day);
        assert_eq!(t(ValueRef::Text(b" 1609459200 ")), day);
        assert_eq!(t(ValueRef::Text(b"2021-01-01T00:00:00Z")), day);
        assert_eq!(t(ValueRef::Text(b"2021-01-01T02:00:00+02:00")), day);
        for bad in [
            &b"2021-01-01"[..],
            b"2021-01-01T00:00:00",
            b"yesterday",
            b"",
            b"1.2.3",
        ] {
            assert_eq!(
                t(ValueRef::Text(bad)),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(t(ValueRef::Null), None);
        assert_eq!(t(ValueRef::Integer(i64::MAX)), None);
        assert_eq!(t(ValueRef::Real(f64::NAN)), None);
    }

    #[test]
    fn sqlite_sorts_times_as_hist_reads_them() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (k TEXT, a ANY, d TEXT);
             INSERT INTO t VALUES ('c', '2021-01-01T03:00:00+02:00', '3'),
                                  ('a', 1609459200, '1'),
                                  ('d', '2021-01-01T01:00:00.5Z', '4'),
                                  ('b', '1609459201.5', '2'),
                                  ('e', '2021-01-01T01:00:00.5Z', '5');",
        )
        .unwrap();
        let (sql, columns) =
            sorted_query(&conn, "SELECT k AS key, a AS at, d AS doc FROM t;").unwrap();
        assert!(!columns.actor && !columns.reason);
        let keys: Vec<String> = conn
            .prepare(&sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(keys, ["a", "b", "c", "d", "e"]);
    }
}
