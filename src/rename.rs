//! Renames: `hist mv --keys GLOB FROM TO` records a migration of the documents' shape.
//!
//! A rename is ONE transaction of kind `rename`. For every matching key whose document has
//! a value at FROM, it records a change with op `move` at TO whose `old` is FROM (the path,
//! as a JSON string) and whose `new` is the value that moved; current state moves the value.
//! When TO's parent objects are missing, one `add` of the highest missing one comes first
//! (so undoing the rename removes them again). Old change rows are never rewritten.
//!
//! The rename itself is also stored (`rename` table: glob, from, to, tx), so LATER writes
//! use the new path: a snapshot ([`Txn::put`]) that still has a value at FROM (and none at
//! TO) is translated before it is diffed, and a field write ([`Txn::set`],
//! [`Txn::remove`]) at or below FROM is redirected below TO, with a warning.
//!
//! Reads follow renames back: [`Repo::history`] of `/tier` lists the changes to `/tier`,
//! the move, then the changes to `/plan` before it (chains and renamed parents included);
//! [`Repo::path_before`] maps a path back across the renames after a transaction.

use crate::canon::{Map, Value};
use crate::diff;
use crate::error::{Error, Result};
use crate::model::{Change, Op};
use crate::path::{DocPath, Segment};
use crate::repo::{Repo, Txn, change_from_row};
use crate::rules::{check_glob, glob_matches};
use rusqlite::{Connection, params};
use std::collections::BTreeSet;

/// A recorded rename.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    /// Its row id (0 while its transaction is being built).
    pub id: i64,
    /// The transaction that recorded it.
    pub tx: i64,
    /// Which keys it applies to (a glob; `*` also crosses `/`).
    pub keys: String,
    /// The old path.
    pub from: DocPath,
    /// The new path.
    pub to: DocPath,
}

impl Rename {
    /// True when this rename applies to documents under `key`.
    pub fn applies_to_key(&self, key: &str) -> bool {
        glob_matches(&self.keys, key)
    }

    /// `path` with FROM replaced by TO, when `path` is FROM or lies below it.
    pub fn apply_to(&self, path: &DocPath) -> Option<DocPath> {
        let rest = path.strip_prefix(&self.from)?;
        let mut segs = self.to.segments().to_vec();
        segs.extend_from_slice(rest);
        Some(DocPath::from_segments(segs))
    }
}

pub(crate) fn load_renames(conn: &Connection) -> Result<Vec<Rename>> {
    let mut stmt = conn.prepare("SELECT id, tx, keys, src, dst FROM rename ORDER BY id")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, tx, keys, from, to) = row?;
        let parse = |text: &str| {
            DocPath::parse(text).map_err(|e| Error::Corrupt(format!("rename {id}: {e}")))
        };
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

pub(crate) fn insert_renames(conn: &Connection, tx: i64, renames: &[Rename]) -> Result<()> {
    for r in renames {
        conn.execute(
            "INSERT INTO rename (tx, keys, src, dst) VALUES (?1, ?2, ?3, ?4)",
            params![tx, r.keys, r.from.to_string(), r.to.to_string()],
        )?;
    }
    Ok(())
}

/// Refuses renames that cannot be recorded: the root, a selector at the end, a path into
/// itself, a bad glob.
fn check_rename(glob: &str, from: &DocPath, to: &DocPath) -> Result<()> {
    check_glob(glob).map_err(|e| Error::Rename(format!("--keys {glob:?}: {e}")))?;
    for (what, path) in [("FROM", from), ("TO", to)] {
        if !matches!(path.last(), Some(Segment::Field(_))) {
            let shown = if path.is_root() {
                "\"\"".to_owned()
            } else {
                path.to_string()
            };
            return Err(Error::Rename(format!(
                "{what} {shown} is not an object member: a rename moves a field (/plan, /billing/plan, /items[id=7]/cost)"
            )));
        }
    }
    if from.starts_with(to) || to.starts_with(from) {
        return Err(Error::Rename(format!(
            "cannot rename {from} to {to}: one is inside the other"
        )));
    }
    Ok(())
}

/// The value that creates the missing parents of `to` in `doc`: `(where, value)` for one
/// `add` of the highest missing parent, `None` when every parent exists.
fn missing_parents(key: &str, doc: &Value, to: &DocPath) -> Result<Option<(DocPath, Value)>> {
    let parent = to.parent().unwrap_or_default();
    let segs = parent.segments();
    let mut present = 0;
    while present < segs.len() && diff::get(doc, &segs[..=present]).is_some() {
        present += 1;
    }
    let holder = diff::get(doc, &segs[..present]);
    if !holder.is_some_and(Value::is_object) {
        let at = DocPath::from_segments(segs[..present].to_vec());
        let found = holder.map_or("nothing", diff::type_name);
        return Err(Error::Rename(format!(
            "{key}: cannot move a value to {to}: {} holds {found}, not an object",
            if at.is_root() {
                "the document".to_owned()
            } else {
                at.to_string()
            }
        )));
    }
    if present == segs.len() {
        return Ok(None);
    }
    let mut value = Value::Object(Map::new());
    for seg in segs[present + 1..].iter().rev() {
        let Segment::Field(name) = seg else {
            return Err(Error::Rename(format!(
                "{key}: cannot move a value to {to}: there is no {}",
                DocPath::from_segments(segs[..=present].to_vec())
            )));
        };
        let mut map = Map::new();
        map.insert(name.clone(), value);
        value = Value::Object(map);
    }
    if !matches!(segs[present], Segment::Field(_)) {
        return Err(Error::Rename(format!(
            "{key}: cannot move a value to {to}: there is no {}",
            DocPath::from_segments(segs[..=present].to_vec())
        )));
    }
    Ok(Some((
        DocPath::from_segments(segs[..=present].to_vec()),
        value,
    )))
}

impl Txn<'_> {
    /// Records a rename of FROM to TO in every document whose key matches `glob` and that
    /// has a value at FROM (see the [module documentation](self)), and stores the rename so
    /// later snapshots and writes use TO. Returns the changes, per key. A document that
    /// already has a value at TO refuses the whole rename.
    pub fn rename(
        &mut self,
        glob: &str,
        from: &DocPath,
        to: &DocPath,
    ) -> Result<Vec<(String, Vec<Change>)>> {
        check_rename(glob, from, to)?;
        let mut keys: BTreeSet<String> = BTreeSet::new();
        {
            let mut stmt = self
                .sql()
                .prepare("SELECT key FROM doc WHERE doc IS NOT NULL ORDER BY key")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            for key in rows {
                keys.insert(key?);
            }
        }
        keys.extend(self.pending_keys().map(str::to_owned));
        let matcher = globset::Glob::new(glob)
            .map_err(|e| Error::Rename(format!("--keys {glob:?}: {e}")))?
            .compile_matcher();
        let mut out = Vec::new();
        for key in keys.into_iter().filter(|k| matcher.is_match(k)) {
            let Some(doc) = self.current(&key)? else {
                continue;
            };
            let Some(value) = diff::get(&doc, from.segments()).cloned() else {
                continue;
            };
            if diff::get(&doc, to.segments()).is_some() {
                return Err(Error::Rename(format!(
                    "{key} already has a value at {to}; a rename never overwrites one"
                )));
            }
            let mut changes = Vec::new();
            if let Some((path, value)) = missing_parents(&key, &doc, to)? {
                changes.push(Change {
                    path,
                    op: Op::Add,
                    old: None,
                    new: Some(value),
                });
            }
            changes.push(Change {
                path: to.clone(),
                op: Op::Move,
                old: Some(Value::String(from.to_string())),
                new: Some(value),
            });
            let mut next = Some(doc);
            for change in &changes {
                diff::apply(&mut next, change).map_err(|source| Error::Apply {
                    key: key.clone(),
                    source,
                })?;
            }
            self.record(&key, changes.clone(), next)?;
            out.push((key, changes));
        }
        let tx = self.info().id;
        self.added_renames.push(Rename {
            id: 0,
            tx,
            keys: glob.to_owned(),
            from: from.clone(),
            to: to.clone(),
        });
        Ok(out)
    }

    /// `path` after the renames recorded for `key` (a write at an old name goes to the new
    /// one, with a warning).
    pub(crate) fn renamed_path(&mut self, key: &str, path: &DocPath) -> DocPath {
        let mut current = path.clone();
        let mut notes = Vec::new();
        for r in self.renames().filter(|r| r.applies_to_key(key)) {
            if let Some(moved) = r.apply_to(&current) {
                notes.push(format!(
                    "{key}: {} was renamed to {} (tx {}); writing {moved}",
                    current, r.to, r.tx
                ));
                current = moved;
            }
        }
        self.warnings.extend(notes);
        current
    }

    /// Translates a snapshot that still uses old names: for each rename of `key`, oldest
    /// first, a value at FROM moves to TO when TO holds nothing.
    pub(crate) fn rename_snapshot(&self, key: &str, doc: &mut Value) {
        for r in self.renames().filter(|r| r.applies_to_key(key)) {
            let Some(value) = diff::get(doc, r.from.segments()).cloned() else {
                continue;
            };
            if diff::get(doc, r.to.segments()).is_some() {
                continue;
            }
            let mut next = Some(doc.clone());
            let moved = diff::remove_at(&mut next, &r.from)
                .and_then(|()| diff::set_at(&mut next, &r.to, value));
            if let (Ok(()), Some(next)) = (moved, next) {
                *doc = next;
            }
        }
    }
}

/// One recorded move in a document's log.
#[derive(Clone, Debug)]
pub(crate) struct MoveRow {
    pub(crate) seq: i64,
    pub(crate) tx: i64,
    /// Where the value went.
    pub(crate) to: DocPath,
    /// Where it was.
    pub(crate) from: DocPath,
}

impl Repo {
    /// The moves recorded in `key`'s log, newest first.
    pub(crate) fn moves(&self, key: &str) -> Result<Vec<MoveRow>> {
        let mut stmt = self.conn.prepare_cached(
            // Driven by the (few) rename transactions, each looked up in `version`: never
            // a scan of the key's log, however long.
            "SELECT c.seq, c.tx, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM (SELECT DISTINCT tx FROM rename) r
             CROSS JOIN version v
                 ON v.key_id = (SELECT id FROM change_key WHERE key = ?1) AND v.tx = r.tx
             CROSS JOIN change_log c
                 ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq
             WHERE c.op = 'move'
             ORDER BY c.seq DESC",
        )?;
        let rows = stmt.query_map([key], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, tx, path, op, old, old_obj) = row?;
            // The moved value is not needed here; only the two paths.
            let change = change_from_row(&self.objects, &path, &op, (old, old_obj), (None, None))?;
            let from = diff::move_source(&change)
                .map_err(|e| Error::Corrupt(format!("{key}: change {seq}: {e}")))?;
            out.push(MoveRow {
                seq,
                tx,
                to: change.path,
                from,
            });
        }
        Ok(out)
    }

    /// The path that the value now at `path` in `key` had right after transaction `tx`:
    /// `path` mapped back across every rename recorded after `tx` (`/tier` before the
    /// rename of `/plan` to `/tier` is `/plan`; chains and renamed parents are followed).
    pub fn path_before(&self, key: &str, path: &DocPath, tx: i64) -> Result<DocPath> {
        let mut current = path.clone();
        for m in self.moves(key)?.iter().filter(|m| m.tx > tx) {
            if let Some(rest) = current.strip_prefix(&m.to) {
                let mut segs = m.from.segments().to_vec();
                segs.extend_from_slice(rest);
                current = DocPath::from_segments(segs);
            }
        }
        Ok(current)
    }
}
