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
use crate::error::{Error, RenameError, Result};
use crate::model::{Change, Op};
use crate::path::{DocPath, Segment};
use crate::repo::Repo;
use crate::rules::{Rename, check_glob};
use crate::store::Record;
use crate::txn::Txn;
use std::collections::BTreeSet;

/// Refuses renames that cannot be recorded: the root, a selector at the end, a path into
/// itself, a bad glob.
fn check_rename(glob: &str, from: &DocPath, to: &DocPath) -> Result<()> {
    check_glob(glob).map_err(|message| RenameError::Glob {
        glob: glob.to_owned(),
        message,
    })?;
    for (what, path) in [("FROM", from), ("TO", to)] {
        if !matches!(path.last(), Some(Segment::Field(_))) {
            let path = if path.is_root() {
                "\"\"".to_owned()
            } else {
                path.to_string()
            };
            return Err(RenameError::NotAMember { what, path }.into());
        }
    }
    if from.starts_with(to) || to.starts_with(from) {
        return Err(RenameError::Nested {
            from: from.clone(),
            to: to.clone(),
        }
        .into());
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
        return Err(RenameError::NotAnObject {
            key: key.to_owned(),
            to: to.clone(),
            holder: if at.is_root() {
                "the document".to_owned()
            } else {
                at.to_string()
            },
            found: found.to_owned(),
        }
        .into());
    }
    if present == segs.len() {
        return Ok(None);
    }
    let mut value = Value::Object(Map::new());
    for seg in segs[present + 1..].iter().rev() {
        let Segment::Field(name) = seg else {
            return Err(RenameError::NoParent {
                key: key.to_owned(),
                to: to.clone(),
                missing: DocPath::from_segments(segs[..=present].to_vec()),
            }
            .into());
        };
        let mut map = Map::new();
        map.insert(name.clone(), value);
        value = Value::Object(map);
    }
    if !matches!(segs[present], Segment::Field(_)) {
        return Err(RenameError::NoParent {
            key: key.to_owned(),
            to: to.clone(),
            missing: DocPath::from_segments(segs[..=present].to_vec()),
        }
        .into());
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
        let mut keys: BTreeSet<String> = self.store().live_keys()?.into_iter().collect();
        keys.extend(self.pending_keys().map(str::to_owned));
        let matcher = globset::Glob::new(glob)
            .map_err(|e| RenameError::Glob {
                glob: glob.to_owned(),
                message: e.to_string(),
            })?
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
                return Err(RenameError::Occupied {
                    key,
                    to: to.clone(),
                }
                .into());
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
        self.push_record(Record::Rename(Rename {
            id: 0,
            tx,
            keys: glob.to_owned(),
            from: from.clone(),
            to: to.clone(),
        }));
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
        let Some(key_id) = self.store.key_id(key)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for row in self.store.moves(key_id)? {
            let (seq, tx) = (row.seq, row.tx);
            // The moved value is not loaded (only the two paths are needed).
            let change = self.store.load_change(row)?;
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
