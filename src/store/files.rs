//! Tracked files (`hist track`): the tracked set, the index of each file's newest version
//! with its stat cache, and every recorded version's raw bytes (an object id).

use super::{Store, WriteTxn};
use crate::canon::ObjectId;
use crate::error::{Error, Result};
use rusqlite::{OptionalExtension, params};
use std::collections::{BTreeMap, HashMap};

/// What `stat` says about a file, as the cache records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) inode: u64,
}

/// One stat-cache entry: the file held `object` when it had `stat`, read at `cached_ns`.
#[derive(Clone, Debug)]
pub(crate) struct CacheEntry {
    pub(crate) stat: FileStat,
    pub(crate) object: ObjectId,
    pub(crate) cached_ns: i64,
}

/// One row of the index: a tracked file's newest version, and the stat cache.
#[derive(Clone, Debug)]
pub(crate) struct IndexEntry {
    pub(crate) recorded: ObjectId,
    pub(crate) cache: Option<CacheEntry>,
}

/// One recorded version of a tracked file: its transaction, the object of its raw bytes
/// (hex; `None`: deleted) and their size.
pub(crate) type FileVersionRow = (String, i64, Option<String>, Option<i64>);

fn blob_id(bytes: &[u8]) -> Option<ObjectId> {
    <[u8; 32]>::try_from(bytes).ok().map(ObjectId)
}

fn version_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileVersionRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
}

impl Store {
    /// The tracked set: path → included (true) or excluded inside an included one.
    pub(crate) fn track_specs(&self) -> Result<BTreeMap<String, bool>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, include FROM track_spec")?;
        let entries = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(entries)
    }

    /// Replaces the tracked set, in a transaction of its own.
    pub(crate) fn save_track_specs_now(&self, entries: &BTreeMap<String, bool>) -> Result<()> {
        let w = self.begin_write()?;
        w.save_track_specs(entries)?;
        w.commit_rows()
    }

    /// The index: every tracked file that exists in its newest version, by key.
    pub(crate) fn track_index(&self) -> Result<HashMap<String, IndexEntry>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, object, size, mtime_ns, inode, seen, cached_ns FROM track_index",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = HashMap::with_capacity(1024);
        while let Some(r) = rows.next()? {
            let key: String = r.get(0)?;
            let recorded = r
                .get_ref(1)?
                .as_blob()
                .ok()
                .and_then(blob_id)
                .ok_or_else(|| {
                    Error::Corrupt(format!("the index entry of {key} has a bad object id"))
                })?;
            let stat = (
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            );
            let seen = r.get_ref(5)?.as_blob().ok().and_then(blob_id);
            let cache = match (stat, seen, r.get::<_, Option<i64>>(6)?) {
                ((Some(size), Some(mtime_ns), Some(inode)), Some(object), Some(cached_ns)) => {
                    Some(CacheEntry {
                        stat: FileStat {
                            size: u64::try_from(size).unwrap_or(u64::MAX),
                            mtime_ns,
                            inode: inode.cast_unsigned(),
                        },
                        object,
                        cached_ns,
                    })
                }
                _ => None, // no entry, or a damaged one: simply not used
            };
            out.insert(key, IndexEntry { recorded, cache });
        }
        Ok(out)
    }

    /// The newest recorded version of one tracked file that exists.
    pub(crate) fn recorded_object(&self, key: &str) -> Result<Option<ObjectId>> {
        let blob: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT object FROM track_index WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        Ok(blob.as_deref().and_then(blob_id))
    }

    /// Saves stat-cache entries in a transaction of their own.
    pub(crate) fn save_stat_cache_now(
        &self,
        updates: &[(String, FileStat, ObjectId)],
        cached_ns: i64,
    ) -> Result<()> {
        let w = self.begin_write()?;
        w.save_stat_cache(updates, cached_ns)?;
        w.commit_rows()
    }

    /// Every recorded version of the file `key`, oldest first (deletions included).
    pub(crate) fn file_versions(&self, key: &str) -> Result<Vec<FileVersionRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, tx, object, size FROM file_version WHERE key = ?1 ORDER BY tx",
        )?;
        let rows = stmt
            .query_map([key], version_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The newest recorded version of the file `key` up to transaction `bound`.
    pub(crate) fn file_version_at(&self, key: &str, bound: i64) -> Result<Option<FileVersionRow>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT key, tx, object, size FROM file_version WHERE key = ?1 AND tx <= ?2
                 ORDER BY tx DESC LIMIT 1",
            )?
            .query_row(params![key, bound], version_row)
            .optional()?)
    }
}

impl WriteTxn<'_> {
    /// Replaces the tracked set.
    pub(crate) fn save_track_specs(&self, entries: &BTreeMap<String, bool>) -> Result<()> {
        let conn = self.conn();
        conn.execute("DELETE FROM track_spec", [])?;
        let mut stmt =
            conn.prepare_cached("INSERT INTO track_spec (path, include) VALUES (?1, ?2)")?;
        for (path, include) in entries {
            stmt.execute(params![path, include])?;
        }
        Ok(())
    }

    /// Records a version of the file `key` made by transaction `tx`: its raw bytes as
    /// stored (`object`; `None`: deleted) and their size.
    pub(crate) fn insert_file_version(
        &self,
        key: &str,
        tx: i64,
        object: Option<ObjectId>,
        size: Option<usize>,
    ) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO file_version (key, tx, object, size) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                key,
                tx,
                object.map(|id| id.to_hex()),
                size.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
            ])?;
        Ok(())
    }

    /// Records a new version of a file in the index (`None`: deleted), keeping its cache
    /// entry.
    pub(crate) fn set_recorded(&self, key: &str, object: Option<ObjectId>, tx: i64) -> Result<()> {
        let conn = self.conn();
        match object {
            Some(id) => conn
                .prepare_cached(
                    "INSERT INTO track_index (key, object, tx) VALUES (?1, ?2, ?3)
                     ON CONFLICT (key) DO UPDATE SET object = ?2, tx = ?3",
                )?
                .execute(params![key, id.0.as_slice(), tx])?,
            None => conn
                .prepare_cached("DELETE FROM track_index WHERE key = ?1")?
                .execute([key])?,
        };
        Ok(())
    }

    /// New stat-cache entries (for files in the index).
    pub(crate) fn save_stat_cache(
        &self,
        updates: &[(String, FileStat, ObjectId)],
        cached_ns: i64,
    ) -> Result<()> {
        let mut stmt = self.conn().prepare_cached(
            "UPDATE track_index SET size = ?2, mtime_ns = ?3, inode = ?4, seen = ?5, cached_ns = ?6
             WHERE key = ?1",
        )?;
        for (key, stat, object) in updates {
            stmt.execute(params![
                key,
                i64::try_from(stat.size).unwrap_or(i64::MAX),
                stat.mtime_ns,
                // Inodes above i63 are stored wrapped; equality is all the cache needs.
                stat.inode.cast_signed(),
                object.0.as_slice(),
                cached_ns
            ])?;
        }
        Ok(())
    }
}
