//! What a transaction records besides changes: rules declared or removed, forgotten
//! subjects, renames and compactions. A commit writes them ([`Record`]) in one place, and
//! the hash chain covers them (`chain.rs`).

use super::{Cached, Store, corrupt, parse_stored};
use crate::canon;
use crate::error::Result;
use crate::path::{DocPath, PathPattern};
use crate::retention::{Compaction, Then};
use crate::rules::{Rename, Rule, RuleKind};
use crate::time::Timestamp;
use rusqlite::{Connection, params};

/// One thing a transaction records besides its changes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Record {
    /// A rule declared: its pattern, key glob and kind (with its parameters).
    AddRule {
        pattern: PathPattern,
        keys: Option<String>,
        kind: RuleKind,
    },
    /// A rule removed, by id.
    RemoveRule(i64),
    /// A subject forgotten, by subject id.
    Forget(String),
    /// A rename (its id and tx are given when it is stored).
    Rename(Rename),
    /// What a compaction did to one key and path.
    Compaction(Compaction),
}

/// Writes the records of transaction `tx`.
pub(super) fn insert(conn: &Connection, tx: i64, records: &[Record]) -> Result<()> {
    for record in records {
        match record {
            Record::AddRule {
                pattern,
                keys,
                kind,
            } => conn.cached_exec(
                "INSERT INTO rule (tx, kind, pattern, keys, spec) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    tx,
                    kind.name(),
                    pattern.to_string(),
                    keys,
                    canon::to_canonical_string(&kind.spec())
                ],
            )?,
            Record::RemoveRule(id) => conn.cached_exec(
                "UPDATE rule SET removed_tx = ?1 WHERE id = ?2",
                params![tx, id],
            )?,
            Record::Forget(subject) => conn.cached_exec(
                "INSERT INTO forgotten (subject, tx) VALUES (?1, ?2)",
                params![subject, tx],
            )?,
            Record::Rename(r) => conn.cached_exec(
                "INSERT INTO rename (tx, keys, src, dst) VALUES (?1, ?2, ?3, ?4)",
                params![tx, r.keys, r.from.to_string(), r.to.to_string()],
            )?,
            Record::Compaction(c) => conn.cached_exec(
                "INSERT INTO compaction (tx, key, path, rule, mode, replaced, kept, first_tx,
                     last_tx, first_at, last_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    tx,
                    c.key,
                    c.path.to_string(),
                    c.rule,
                    c.mode.as_str(),
                    i64::try_from(c.replaced).unwrap_or(i64::MAX),
                    i64::try_from(c.kept).unwrap_or(i64::MAX),
                    c.first_tx,
                    c.last_tx,
                    c.first_at.to_string(),
                    c.last_at.to_string()
                ],
            )?,
        };
    }
    Ok(())
}

impl Store {
    /// The rules in force, in declaration order.
    pub(crate) fn rules(&self) -> Result<Vec<Rule>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, tx, kind, pattern, keys, spec FROM rule WHERE removed_tx IS NULL ORDER BY id",
        )?;
        let rows: Vec<(i64, i64, String, String, Option<String>, String)> = stmt
            .query_map([], |r| r.try_into())?
            .collect::<rusqlite::Result<_>>()?;
        let mut rules = Vec::with_capacity(rows.len());
        for (id, tx, kind, pattern, keys, spec) in rows {
            let spec = parse_stored(&spec).map_err(|e| corrupt(format!("rule {id}: {e}")))?;
            let kind = RuleKind::from_stored(&kind, &spec)
                .ok_or_else(|| corrupt(format!("rule {id} has an unknown kind {kind:?}")))?;
            rules.push(Rule {
                id,
                tx,
                pattern: PathPattern::parse(&pattern)?,
                keys,
                kind,
            });
        }
        Ok(rules)
    }

    /// True once a personal rule has been declared (ever, removed or not).
    pub(crate) fn any_personal_rule(&self) -> Result<bool> {
        Ok(self.conn.cached_row(
            "SELECT EXISTS (SELECT 1 FROM rule WHERE kind = 'personal')",
            [],
            |r| r.get(0),
        )?)
    }

    /// The recorded renames, oldest first.
    pub(crate) fn renames(&self) -> Result<Vec<Rename>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, tx, keys, src, dst FROM rename ORDER BY id")?;
        let rows: Vec<(i64, i64, String, String, String)> = stmt
            .query_map([], |r| r.try_into())?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, tx, keys, from, to) in rows {
            let parse =
                |text: &str| DocPath::parse(text).map_err(|e| corrupt(format!("rename {id}: {e}")));
            out.push(Rename {
                id,
                tx,
                keys,
                from: parse(&from)?,
                to: parse(&to)?,
            });
        }
        Ok(out)
    }

    /// The compactions recorded for `key`, oldest first.
    pub(crate) fn compactions(&self, key: &str) -> Result<Vec<Compaction>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT tx, key, path, rule, mode, replaced, kept, first_tx, last_tx, first_at, last_at
             FROM compaction WHERE key = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([key], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                (r.get::<_, i64>(5)?, r.get::<_, i64>(6)?),
                (r.get::<_, i64>(7)?, r.get::<_, i64>(8)?),
                (r.get::<_, String>(9)?, r.get::<_, String>(10)?),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (tx, key, path, rule, mode, (replaced, kept), (first_tx, last_tx), (fa, la)) = row?;
            let bad = |what: &str| corrupt(format!("compaction record of tx {tx}: {what}"));
            out.push(Compaction {
                tx: Some(tx),
                key,
                path: DocPath::parse(&path).map_err(|e| bad(&e.to_string()))?,
                rule,
                mode: Then::parse(&mode).ok_or_else(|| bad("unknown mode"))?,
                replaced: usize::try_from(replaced).unwrap_or(0),
                kept: usize::try_from(kept).unwrap_or(0),
                first_tx,
                last_tx,
                first_at: Timestamp::parse_rfc3339(&fa).ok_or_else(|| bad("bad time"))?,
                last_at: Timestamp::parse_rfc3339(&la).ok_or_else(|| bad("bad time"))?,
            });
        }
        Ok(out)
    }

    /// The newest forget of subject `sid`, if any.
    pub(crate) fn forgotten_in(&self, sid: &str) -> Result<Option<i64>> {
        Ok(self.conn.cached_row(
            "SELECT max(tx) FROM forgotten WHERE subject = ?1",
            [sid],
            |r| r.get(0),
        )?)
    }

    /// The newest forget transaction, if any.
    pub(crate) fn newest_forget(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .cached_row("SELECT max(tx) FROM forgotten", [], |r| r.get(0))?)
    }

    /// The subjects forgotten after transaction `after`, in order: (subject id, tx).
    pub(crate) fn forgets_after(&self, after: i64) -> Result<Vec<(String, i64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT subject, tx FROM forgotten WHERE tx > ?1 ORDER BY tx, subject",
        )?;
        let rows = stmt
            .query_map([after], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}
