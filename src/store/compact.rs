//! Rewriting a key's log for `gc` compaction: rows deleted and merged, versions renumbered,
//! version rows and checkpoints rebuilt, the document row's position updated. `gc` decides
//! what to rewrite; this is only the writing.

use super::checkpoint::Checkpoint;
use super::value::encode_text;
use super::{Cached, Store, WriteTxn};
use crate::error::Result;
use crate::model::ChangeText;
use rusqlite::params;
use std::collections::{HashMap, HashSet};

/// A change row rewritten as the replacement of a group of compacted changes.
#[derive(Clone, Debug)]
pub(crate) struct Merge {
    /// The row (its id).
    pub(crate) row: i64,
    /// What it says now (values as canonical text).
    pub(crate) change: ChangeText,
}

/// The rewrite of one key's log.
#[derive(Clone, Debug)]
pub(crate) struct KeyRewrite<'a> {
    pub(crate) key: &'a str,
    /// Change rows to delete (ids).
    pub(crate) deleted: &'a [i64],
    /// Change rows to rewrite.
    pub(crate) merges: &'a [Merge],
}

/// The checkpoints a key had before its log was rewritten, by their version in the
/// rewritten log (the versions that survived), and how many there were in all.
#[derive(Clone, Debug, Default)]
pub(crate) struct RebuiltCheckpoint {
    pub(crate) survivors: HashMap<i64, Checkpoint>,
    pub(crate) before: usize,
}

impl WriteTxn<'_> {
    /// Moves every sealed change of key `key_id` back into the tail (rows keep their ids),
    /// so that its log can be rewritten row by row; sealing it again is the caller's.
    pub(crate) fn unseal_key(&self, key_id: i64) -> Result<()> {
        let store = self.store();
        let segments = store.key_segments(key_id)?;
        if segments.is_empty() {
            return Ok(());
        }
        let conn = self.conn();
        let mut insert = conn.prepare_cached(
            "INSERT INTO change_log (id, tx, key_id, seq, path_id, op, old, new, old_obj, new_obj)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for seg in &segments {
            let decoded = store.decoded(seg)?;
            for row in decoded.rows() {
                let old = encode_text(store.objects(), row.old.map(Into::into))?;
                let new = encode_text(store.objects(), row.new.map(Into::into))?;
                insert.execute(params![
                    row.id,
                    row.tx,
                    key_id,
                    row.seq,
                    i64::try_from(row.path).map_err(|_| super::corrupt("a path number"))?,
                    row.op.as_str(),
                    old.text,
                    new.text,
                    old.obj,
                    new.obj
                ])?;
            }
            conn.cached_exec(
                "DELETE FROM segment WHERE key_id = ?1 AND first_seq = ?2",
                params![key_id, seg.first_seq],
            )?;
        }
        conn.cached_exec(
            "UPDATE doc SET sealed_seq = 0 WHERE key = (SELECT key FROM change_key WHERE id = ?1)",
            [key_id],
        )?;
        Ok(())
    }

    /// Deletes and rewrites the rows of `rw`, renumbers the key's versions 1, 2, 3…,
    /// rebuilds its version rows and deletes its checkpoints (the caller writes them again
    /// while it replays the rewritten log: [`WriteTxn::insert_checkpoint`]). Returns the
    /// old checkpoints by their new version numbers.
    pub(crate) fn rewrite_key_log(&self, rw: &KeyRewrite<'_>) -> Result<RebuiltCheckpoint> {
        let conn = self.conn();
        let key = rw.key;
        {
            let mut delete = conn.prepare_cached("DELETE FROM change_log WHERE id = ?1")?;
            for id in rw.deleted {
                delete.execute([id])?;
            }
            let mut update = conn.prepare_cached(
                "UPDATE change_log SET path_id = ?1, op = ?2, old = ?3, new = ?4, old_obj = ?5,
                     new_obj = ?6 WHERE id = ?7",
            )?;
            let objects = self.store().objects();
            for m in rw.merges {
                let old = encode_text(objects, m.change.old.as_deref().map(Into::into))?;
                let new = encode_text(objects, m.change.new.as_deref().map(Into::into))?;
                update.execute(params![
                    self.intern_path(&m.change.path.to_string())?,
                    m.change.op.as_str(),
                    old.text,
                    new.text,
                    old.obj,
                    new.obj,
                    m.row
                ])?;
            }
        }
        let old_checkpoints = self.store().checkpoints(key)?;
        let old_at: HashMap<i64, &Checkpoint> =
            old_checkpoints.iter().map(|c| (c.seq, c)).collect();
        let mut survivors = HashMap::new();
        // Renumber 1, 2, 3…: rows only went away, so in ascending order each new number is
        // free by the time it is written.
        {
            let rows: Vec<(i64, i64)> = {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, seq FROM change_log
                     WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY seq",
                )?;
                stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?
            };
            let mut renumber =
                conn.prepare_cached("UPDATE change_log SET seq = ?1 WHERE id = ?2")?;
            for (n, (id, seq)) in (1..).zip(rows) {
                if let Some(c) = old_at.get(&seq) {
                    survivors.insert(
                        n,
                        Checkpoint {
                            seq: n,
                            ..(*c).clone()
                        },
                    );
                }
                if seq != n {
                    renumber.execute(params![n, id])?;
                }
            }
        }
        conn.execute("DELETE FROM checkpoint WHERE key = ?1", [key])?;
        conn.execute(
            "DELETE FROM version WHERE key_id = (SELECT id FROM change_key WHERE key = ?1)",
            [key],
        )?;
        conn.execute(
            "INSERT INTO version (key_id, tx, first_seq, last_seq)
             SELECT key_id, tx, min(seq), max(seq) FROM change_log
             WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) GROUP BY tx",
            [key],
        )?;
        Ok(RebuiltCheckpoint {
            survivors,
            before: old_checkpoints.len(),
        })
    }

    /// Sets where `key`'s log and checkpoints stand after a rewrite: its newest version
    /// `seq` (of transaction `tx`), and the checkpoint bookkeeping.
    pub(crate) fn set_doc_position(
        &self,
        key: &str,
        (seq, tx): (i64, i64),
        (ckpt_seq, count, bytes): (i64, i64, i64),
    ) -> Result<()> {
        self.conn().execute(
            "UPDATE doc SET seq = ?2, tx = ?3, ckpt_seq = ?4, ckpt_count = ?5,
                 ckpt_bytes = ?6 WHERE key = ?1",
            params![key, seq, tx, ckpt_seq, count, bytes],
        )?;
        Ok(())
    }

    /// Deletes `key`'s document row (its log is empty after a rewrite).
    pub(crate) fn delete_doc(&self, key: &str) -> Result<()> {
        self.conn()
            .execute("DELETE FROM doc WHERE key = ?1", [key])?;
        Ok(())
    }
}

/// True for a column that holds object ids, by the store's naming convention: `object`,
/// `obj`, or a name ending in `_obj` or `_object`. Any table following it is safe from gc.
fn is_object_column(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "object" || name == "obj" || name.ends_with("_obj") || name.ends_with("_object")
}

impl Store {
    /// Every object id referenced from the database (hex, lowercase).
    pub(crate) fn referenced_objects(&self) -> Result<HashSet<String>> {
        let conn = &self.conn;
        let tables: Vec<String> = {
            let mut stmt = conn.prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            )?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut out = HashSet::new();
        for table in tables {
            let columns: Vec<String> = {
                let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
                stmt.query_map([&table], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            };
            for column in columns.iter().filter(|c| is_object_column(c)) {
                let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
                let sql = format!(
                    "SELECT DISTINCT {c} FROM {t} WHERE {c} IS NOT NULL",
                    c = quote(column),
                    t = quote(&table)
                );
                let mut stmt = conn.prepare(&sql)?;
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    if let rusqlite::types::ValueRef::Text(t) = r.get_ref(0)? {
                        out.insert(String::from_utf8_lossy(t).to_ascii_lowercase());
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_columns() {
        for yes in [
            "object",
            "obj",
            "old_obj",
            "new_obj",
            "raw_object",
            "OBJECT",
        ] {
            assert!(is_object_column(yes), "{yes}");
        }
        for no in ["objects_count", "hash", "doc", "objective", "key"] {
            assert!(!is_object_column(no), "{no}");
        }
    }
}
