//! The sealed tier: interned paths, the index of segments, decoding them (with a small
//! cache), and sealing a key's oldest tail rows into a segment.
//!
//! Sealing ([`WriteTxn::seal`]) runs inside a write: it encodes the tail rows of one key up
//! to a version, stores the segment as an object (before any row names it), inserts its
//! index row, deletes the rows and records the version in `doc.sealed_seq`, all in the
//! write's SQLite transaction. A crash leaves the old rows or the new segment, never both
//! or neither (at worst an orphan object, which `gc` removes). The hash chain covers the
//! changes' content, not where they are, so sealing changes no transaction's hash.
//!
//! Tails are sealed in small segments of about [`SEAL_ROWS`] changes as they grow, and the
//! newest small segments of a key are merged into one of up to [`SEGMENT_ROWS`] once they
//! add up to nearly that many: columns compress better the longer they are, and a read
//! decodes one segment for most ranges of versions.

use super::changes::{StoredChange, stored_op};
use super::{Cached, Store, Stored, WriteTxn, corrupt};
use crate::canon::ObjectId;
use crate::error::Result;
use crate::path::DocPath;
use rusqlite::{OptionalExtension, params};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// A key's tail is sealed once it holds this many changes.
pub(crate) const SEAL_ROWS: i64 = 4096;
/// Small segments are merged into one of about this many changes.
pub(crate) const SEGMENT_ROWS: i64 = 65_536;
/// The zstd level of segments (3.7 MB for the CDC feed's changes at 9, 3.9 MB at 3).
const SEGMENT_LEVEL: i32 = 9;
/// How many decoded segments a store keeps.
const CACHED_SEGMENTS: usize = 4;
/// How many segment files a store keeps as they are stored (a field's history in a key of
/// 10^6 changes reads about ten; with eight kept, every read read them all again)…
const CACHED_FILES: usize = 64;
/// … of at most this size each (a larger one is read in part, each time)…
const CACHED_FILE_BYTES: u64 = 1 << 20;
/// … and at most this size together.
const CACHED_FILES_TOTAL: usize = 8 << 20;

/// A change with its old and new values' text, ready to seal.
type LoadedChange = (StoredChange, Option<String>, Option<String>);

/// A row of the segment index.
#[derive(Clone, Debug)]
pub(crate) struct SegmentRow {
    pub(crate) key_id: i64,
    pub(crate) first_seq: i64,
    pub(crate) last_seq: i64,
    pub(crate) moves: i64,
    /// The object holding it (hex).
    pub(crate) object: String,
    /// The numbers of the paths it touches ([`hist_segment::pathset`]).
    pub(crate) paths: Vec<u8>,
}

/// The store's caches of path numbers, decoded segments and delta bases.
#[derive(Default)]
pub(super) struct Caches {
    path_text: rustc_hash::FxHashMap<i64, Arc<str>>,
    path_id: HashMap<Arc<str>, i64>,
    /// Whole decoded segments, by object id, the most recently decoded last.
    segments: Vec<(String, Arc<hist_segment::Segment>)>,
    /// Segment files as stored (compressed), by object id: a handle that reads one key
    /// again and again (a service) reads each file once.
    files: Recent<String, Arc<hist_segment::SegmentFile>>,
    /// Decompressed bases of delta objects (see [`Store::object_bytes`]).
    pub(super) bases: Recent<ObjectId, Arc<[u8]>>,
    /// How many times a segment was read and decoded (whole or in part).
    decodes: u64,
}

/// Values kept for reuse, by key, the most recently used last, each with its size.
pub(super) struct Recent<K, V> {
    entries: Vec<(K, V, usize)>,
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K, V: Clone> Recent<K, V> {
    /// The value kept for `key` (now the most recently used).
    pub(super) fn get<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: PartialEq + ?Sized,
    {
        let i = self.entries.iter().position(|(k, ..)| k.borrow() == key)?;
        let entry = self.entries.remove(i);
        let value = entry.1.clone();
        self.entries.push(entry);
        Some(value)
    }

    /// Keeps `value` (of `size` bytes) for `key`; the least recently used go beyond `count`
    /// values or `bytes` in all.
    pub(super) fn put(&mut self, key: K, value: V, size: usize, (count, bytes): (usize, usize)) {
        self.entries.push((key, value, size));
        let mut total: usize = self.entries.iter().map(|e| e.2).sum();
        while self.entries.len() > count || total > bytes {
            total -= self.entries.remove(0).2;
        }
    }
}

impl Caches {
    fn remember_path(&mut self, id: i64, text: &str) -> Arc<str> {
        let text: Arc<str> = Arc::from(text);
        self.path_text.insert(id, text.clone());
        self.path_id.insert(text.clone(), id);
        text
    }
}

impl Store {
    /// The text of path number `id`.
    pub(crate) fn path_text(&self, id: i64) -> Result<Arc<str>> {
        if let Some(text) = self.caches.borrow().path_text.get(&id) {
            return Ok(text.clone());
        }
        let text: String = self
            .conn
            .cached_row("SELECT path FROM path WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| corrupt(format!("path number {id} is missing")))?;
        Ok(self.caches.borrow_mut().remember_path(id, &text))
    }

    /// Reads the texts of the paths `ids` that are not cached yet, in one query.
    pub(crate) fn load_path_texts(&self, ids: impl IntoIterator<Item = i64>) -> Result<()> {
        let mut missing: Vec<i64> = {
            let caches = self.caches.borrow();
            ids.into_iter()
                .filter(|id| !caches.path_text.contains_key(id))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        // A segment's paths are mostly runs of numbers (numbered as they first appear): one
        // range scan in the order of the numbers, those not asked for passed over.
        let (Some(&lo), Some(&hi)) = (missing.first(), missing.last()) else {
            return Ok(());
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, path FROM path WHERE id BETWEEN ?1 AND ?2 ORDER BY id")?;
        let mut rows = stmt.query([lo, hi])?;
        let mut caches = self.caches.borrow_mut();
        caches.path_text.reserve(missing.len());
        let mut wanted = missing.iter().peekable();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            while wanted.next_if(|&&w| w < id).is_some() {}
            if wanted.next_if_eq(&&id).is_none() {
                continue;
            }
            let text = r
                .get_ref(1)?
                .as_str()
                .map_err(|e| corrupt(format!("a path: {e}")))?;
            caches.path_text.insert(id, Arc::from(text));
        }
        Ok(())
    }

    /// The number of path `text`, if any change was ever recorded at it.
    pub(crate) fn path_id(&self, text: &str) -> Result<Option<i64>> {
        if let Some(&id) = self.caches.borrow().path_id.get(text) {
            return Ok(Some(id));
        }
        let id: Option<i64> = self
            .conn
            .cached_row("SELECT id FROM path WHERE path = ?1", [text], |r| r.get(0))
            .optional()?;
        if let Some(id) = id {
            self.caches.borrow_mut().remember_path(id, text);
        }
        Ok(id)
    }

    /// The numbers of `paths` that exist.
    pub(crate) fn path_ids_of(&self, paths: &[DocPath]) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        for p in paths {
            if let Some(id) = self.path_id(&p.to_string())? {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// The numbers of the paths below `path` (text), sorted.
    pub(crate) fn path_ids_below(&self, path: &str) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM path WHERE path > ?1 || '/' AND path < ?1 || '0'
             UNION ALL SELECT id FROM path WHERE path > ?1 || '[' AND path < ?1 || '\\'",
        )?;
        let mut ids: Vec<i64> = stmt
            .query_map([path], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// The numbers of the paths at `path`, above it or below it, sorted.
    pub(crate) fn path_ids_touching(&self, path: &DocPath) -> Result<Vec<u64>> {
        let mut exact = path.ancestors();
        exact.push(path.clone());
        let mut ids = self.path_ids_of(&exact)?;
        ids.extend(self.path_ids_below(&path.to_string())?);
        Ok(sorted_ids(ids))
    }

    /// The segments of key `key_id` holding versions in `after < seq <= upto`, oldest first.
    pub(crate) fn segments_between(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
    ) -> Result<Vec<SegmentRow>> {
        // No version in the range: no segment to read (an as-of read at a checkpoint's
        // version would decode the one after it, up to that version, for nothing).
        if after >= upto {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT key_id, first_seq, last_seq, moves, object, paths FROM segment
             WHERE key_id = ?1 AND first_seq <= ?3 AND last_seq > ?2 ORDER BY first_seq",
        )?;
        let rows = stmt
            .query_map(params![key_id, after, upto], |r| {
                Ok(SegmentRow {
                    key_id: r.get(0)?,
                    first_seq: r.get(1)?,
                    last_seq: r.get(2)?,
                    moves: r.get(3)?,
                    object: r.get(4)?,
                    paths: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Every segment of key `key_id`, oldest first.
    pub(crate) fn key_segments(&self, key_id: i64) -> Result<Vec<SegmentRow>> {
        self.segments_between(key_id, 0, i64::MAX)
    }

    /// Segment `seg`, decoded whole (from the cache when it holds it).
    pub(crate) fn decoded(&self, seg: &SegmentRow) -> Result<Arc<hist_segment::Segment>> {
        self.decoded_from(seg, None)
    }

    /// [`Store::decoded`], from the segment's file `kept` when the caller has it in hand.
    fn decoded_from(
        &self,
        seg: &SegmentRow,
        kept: Option<&hist_segment::SegmentFile>,
    ) -> Result<Arc<hist_segment::Segment>> {
        if let Some(decoded) = self.cached_segment(seg) {
            return Ok(decoded);
        }
        let decoded = Arc::new(self.decode_segment(seg, (0, i64::MAX), kept)?);
        let mut caches = self.caches.borrow_mut();
        if caches.segments.len() >= CACHED_SEGMENTS {
            caches.segments.remove(0);
        }
        caches.segments.push((seg.object.clone(), decoded.clone()));
        Ok(decoded)
    }

    /// The changes of segment `seg` with `after < seq <= upto`: from the cache when it holds
    /// the segment, else decoded for the range alone (what one read needs: an as-of read
    /// decodes a part of one or two segments, and keeps none of it).
    pub(crate) fn decoded_range(
        &self,
        seg: &SegmentRow,
        after: i64,
        upto: i64,
    ) -> Result<Arc<hist_segment::Segment>> {
        if let Some(decoded) = self.cached_segment(seg) {
            return Ok(decoded);
        }
        Ok(Arc::new(self.decode_segment(seg, (after, upto), None)?))
    }

    fn cached_segment(&self, seg: &SegmentRow) -> Option<Arc<hist_segment::Segment>> {
        let caches = self.caches.borrow();
        caches
            .segments
            .iter()
            .find(|(object, _)| *object == seg.object)
            .map(|(_, decoded)| decoded.clone())
    }

    /// Reads (from `kept`, its file, when given) and decodes the versions `after < seq <=
    /// upto` of segment `seg`, checking they are the ones its index row says it holds.
    fn decode_segment(
        &self,
        seg: &SegmentRow,
        (after, upto): (i64, i64),
        kept: Option<&hist_segment::SegmentFile>,
    ) -> Result<hist_segment::Segment> {
        self.caches.borrow_mut().decodes += 1;
        let (after, upto) = (after.max(seg.first_seq - 1), upto.min(seg.last_seq));
        let read = match kept {
            Some(kept) => kept.read_range(after, upto),
            None => self.read_segment(&seg.object, after, upto)?,
        };
        let decoded =
            read.map_err(|e| corrupt(format!("segment {} (key {}): {e}", seg.object, seg.key_id)))?;
        let expected = usize::try_from(upto - after).unwrap_or(0);
        if decoded.len() != expected || (expected > 0 && decoded.first_seq() != after + 1) {
            return Err(corrupt(format!(
                "segment {} does not hold versions {}..={} of key {}",
                seg.object,
                after + 1,
                upto,
                seg.key_id
            )));
        }
        Ok(decoded)
    }

    /// The versions `after < seq <= upto` of the segment in object `object`: from its file
    /// as cached, or read (and cached when small), or for a large file, read in part.
    fn read_segment(
        &self,
        object: &str,
        after: i64,
        upto: i64,
    ) -> Result<std::result::Result<hist_segment::Segment, hist_segment::Error>> {
        if let Some(kept) = self.cached_file(object) {
            return Ok(kept.read_range(after, upto));
        }
        let (mut file, size) = self.open_segment(object)?;
        if size > CACHED_FILE_BYTES {
            return Ok(hist_segment::Segment::read_range_from(
                &mut file, after, upto,
            ));
        }
        Ok(self.read_whole(object, file, size)?.read_range(after, upto))
    }

    /// The blocks of segment `seg` holding versions `after < seq <= upto` that touch any of
    /// `wanted` (sorted path numbers), each decoded for that range with at least the
    /// changes at those paths. A segment the cache holds decoded, or whose table lists no
    /// block's paths (one block), comes whole, through that cache: a blame asks for it once
    /// per field.
    pub(crate) fn segment_blocks_touching(
        &self,
        seg: &SegmentRow,
        wanted: &[u64],
        after: i64,
        upto: i64,
    ) -> Result<Vec<Arc<hist_segment::Segment>>> {
        if let Some(decoded) = self.cached_segment(seg) {
            return Ok(vec![decoded]);
        }
        let kept = match self.cached_file(&seg.object) {
            Some(kept) => kept,
            None => {
                let (file, size) = self.open_segment(&seg.object)?;
                self.read_whole(&seg.object, file, size)?
            }
        };
        if !kept.lists_paths() {
            return Ok(vec![self.decoded_from(seg, Some(&kept))?]);
        }
        self.caches.borrow_mut().decodes += 1;
        let blocks = kept
            .read_touching(wanted, after, upto)
            .map_err(|e| corrupt(format!("segment {} (key {}): {e}", seg.object, seg.key_id)))?;
        Ok(blocks.into_iter().map(Arc::new).collect())
    }

    /// The file of the segment in object `object` as cached (now the most recently used).
    fn cached_file(&self, object: &str) -> Option<Arc<hist_segment::SegmentFile>> {
        self.caches.borrow_mut().files.get(object)
    }

    /// The file of the segment in object `object`, opened, and its size.
    fn open_segment(&self, object: &str) -> Result<(std::fs::File, u64)> {
        let path = hist_segment::objects::path_of(self.objects.dir(), object);
        let file = std::fs::File::open(&path).map_err(crate::Error::io(&path))?;
        let size = file.metadata().map_err(crate::Error::io(&path))?.len();
        Ok((file, size))
    }

    /// Segment file `file` (of object `object`) read whole, its table of frames read and
    /// checked; kept when it is small.
    fn read_whole(
        &self,
        object: &str,
        mut file: std::fs::File,
        size: u64,
    ) -> Result<Arc<hist_segment::SegmentFile>> {
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(crate::Error::io(
            hist_segment::objects::path_of(self.objects.dir(), object),
        ))?;
        let kept = hist_segment::SegmentFile::new(bytes)
            .map_err(|e| corrupt(format!("segment {object}: {e}")))?;
        let kept = Arc::new(kept);
        if size <= CACHED_FILE_BYTES {
            self.caches.borrow_mut().files.put(
                object.to_owned(),
                kept.clone(),
                kept.len(),
                (CACHED_FILES, CACHED_FILES_TOTAL),
            );
        }
        Ok(kept)
    }

    /// Forgets the paths a write inserted and then rolled back (their numbers will be
    /// given again).
    pub(super) fn forget_paths(&self, ids: &[i64]) {
        let mut caches = self.caches.borrow_mut();
        for id in ids {
            if let Some(text) = caches.path_text.remove(id) {
                caches.path_id.remove(&text);
            }
        }
    }

    /// Deletes segment objects that a committed write replaced and that no segment names
    /// (failures are left to `gc`, which deletes every unreferenced object).
    pub(super) fn delete_superseded(&self, objects: Vec<String>) {
        for hex in objects {
            let named: rusqlite::Result<bool> = self.conn.cached_row(
                "SELECT EXISTS (SELECT 1 FROM segment WHERE object = ?1)",
                [&hex],
                |r| r.get(0),
            );
            if let (Ok(false), Some(id)) = (named, crate::canon::ObjectId::from_hex(&hex)) {
                let _ = std::fs::remove_file(self.objects.path_of(&id));
            }
        }
    }

    /// Forgets every cached path and segment.
    pub(super) fn clear_caches(&self) {
        *self.caches.borrow_mut() = Caches::default();
    }

    /// How many times a segment was read and decoded since the caches were last cleared.
    #[cfg(test)]
    pub(crate) fn segments_decoded(&self) -> u64 {
        self.caches.borrow().decodes
    }
}

impl WriteTxn<'_> {
    /// The number of path `text`, given to it now if it has none.
    pub(crate) fn intern_path(&self, text: &str) -> Result<i64> {
        if let Some(id) = self.store().path_id(text)? {
            return Ok(id);
        }
        let conn = self.conn();
        conn.cached_exec("INSERT INTO path (path) VALUES (?1)", [text])?;
        let id = conn.last_insert_rowid();
        self.inserted_paths.borrow_mut().push(id);
        self.store().caches.borrow_mut().remember_path(id, text);
        Ok(id)
    }

    /// Seals the tail rows of key `key_id` up to version `upto` into a segment, then merges
    /// the key's newest small segments when they add up to nearly [`SEGMENT_ROWS`].
    /// Returns whether anything was sealed.
    pub(crate) fn seal(&self, key_id: i64, upto: i64) -> Result<bool> {
        let store = self.store();
        let sealed_seq: i64 = self.conn().cached_row(
            "SELECT sealed_seq FROM doc WHERE key = (SELECT key FROM change_key WHERE id = ?1)",
            [key_id],
            |r| r.get(0),
        )?;
        if upto <= sealed_seq {
            return Ok(false);
        }
        let rows = store.tail_rows(key_id, sealed_seq, upto)?;
        if rows.is_empty() {
            return Ok(false);
        }
        // Sized once (collecting through `Result` would grow it by doubling).
        let mut changes = Vec::with_capacity(rows.len());
        for (c, old, new) in &rows {
            changes.push(hist_segment::Change {
                id: c.id,
                seq: c.seq,
                tx: c.tx,
                path: u64::try_from(c.path_id).map_err(|_| corrupt("a negative path number"))?,
                op: sealed(c.op),
                old: old.as_deref(),
                new: new.as_deref(),
            });
        }
        self.write_segment(key_id, &changes)?;
        self.conn().cached_exec(
            "DELETE FROM change_log WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3",
            params![key_id, sealed_seq, upto],
        )?;
        self.conn().cached_exec(
            "UPDATE doc SET sealed_seq = ?2 WHERE key = (SELECT key FROM change_key WHERE id = ?1)",
            params![key_id, upto],
        )?;
        self.merge_small(key_id)?;
        self.sealed.set(true);
        Ok(true)
    }

    /// Encodes `changes` (consecutive versions of key `key_id`) as a segment, stores it and
    /// indexes it.
    fn write_segment(&self, key_id: i64, changes: &[hist_segment::Change<'_>]) -> Result<()> {
        let store = self.store();
        let bytes = hist_segment::encode(changes).map_err(corrupt)?;
        let object = store.put_segment(&bytes, SEGMENT_LEVEL)?;
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else {
            return Ok(());
        };
        let mut paths: Vec<u64> = changes.iter().map(|c| c.path).collect();
        paths.sort_unstable();
        paths.dedup();
        let moves = changes
            .iter()
            .filter(|c| c.op == hist_segment::Op::Move)
            .count();
        let at = |tx: i64| -> Result<String> {
            Ok(store
                .tx(tx)?
                .ok_or_else(|| corrupt(format!("a change names a missing transaction {tx}")))?
                .at
                .to_string())
        };
        self.conn().cached_exec(
            "INSERT INTO segment (key_id, first_seq, last_seq, first_tx, last_tx, first_at,
                 last_at, moves, object, paths)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                key_id,
                first.seq,
                last.seq,
                first.tx,
                last.tx,
                at(first.tx)?,
                at(last.tx)?,
                i64::try_from(moves).unwrap_or(i64::MAX),
                object.to_hex(),
                hist_segment::pathset::encode(&paths)
            ],
        )?;
        Ok(())
    }

    /// Merges the newest small segments of key `key_id` into one once they add up to
    /// nearly [`SEGMENT_ROWS`] (or, `all`, whenever there are two or more).
    pub(crate) fn merge_small_segments(&self, key_id: i64, all: bool) -> Result<()> {
        let segments = self.store().key_segments(key_id)?;
        let mut run = Vec::new();
        let mut total = 0;
        for seg in segments.iter().rev() {
            let rows = seg.last_seq - seg.first_seq + 1;
            if rows >= SEGMENT_ROWS - SEAL_ROWS || total + rows > SEGMENT_ROWS + SEAL_ROWS {
                break;
            }
            total += rows;
            run.push(seg.clone());
        }
        let full = total >= SEGMENT_ROWS - 2 * SEAL_ROWS;
        if run.len() < 2 || !(full || all) {
            return Ok(());
        }
        run.reverse();
        let store = self.store();
        // The run's segments decoded, and its changes borrowing their values from them: no
        // value is copied (this is an import's largest allocation).
        let decoded = run
            .iter()
            .map(|seg| store.decoded(seg))
            .collect::<Result<Vec<_>>>()?;
        let mut changes = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
        for segment in &decoded {
            changes.extend(segment.rows().map(|row| hist_segment::Change {
                id: row.id,
                seq: row.seq,
                tx: row.tx,
                path: row.path,
                op: row.op,
                old: row.old,
                new: row.new,
            }));
        }
        for seg in &run {
            self.conn().cached_exec(
                "DELETE FROM segment WHERE key_id = ?1 AND first_seq = ?2",
                params![key_id, seg.first_seq],
            )?;
            self.superseded.borrow_mut().push(seg.object.clone());
        }
        self.write_segment(key_id, &changes)
    }

    /// Seals the tail of every key that holds at least `min` changes, and merges each
    /// key's newest small segments. Returns how many changes were sealed.
    pub(crate) fn seal_tails(&self, min: i64) -> Result<usize> {
        let tails: Vec<(i64, i64, i64)> = {
            let mut stmt = self.conn().prepare(
                "SELECT k.id, d.seq, d.sealed_seq FROM doc d JOIN change_key k ON k.key = d.key
                 ORDER BY k.id",
            )?;
            stmt.query_map([], |r| r.try_into())?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut sealed = 0;
        for (key_id, seq, sealed_seq) in tails {
            if seq - sealed_seq >= min && self.seal(key_id, seq)? {
                sealed += usize::try_from(seq - sealed_seq).unwrap_or(0);
            }
            self.merge_small_segments(key_id, true)?;
        }
        Ok(sealed)
    }

    fn merge_small(&self, key_id: i64) -> Result<()> {
        self.merge_small_segments(key_id, false)
    }
}

impl Store {
    /// The tail rows of key `key_id` with `after < seq <= upto`, oldest first, each with
    /// its values' text (large values read from their objects).
    fn tail_rows(&self, key_id: i64, after: i64, upto: i64) -> Result<Vec<LoadedChange>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, seq, tx, path_id, op, old, new, old_obj, new_obj FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let c = StoredChange {
                id: r.get(0)?,
                seq: r.get(1)?,
                tx: r.get(2)?,
                path_id: r.get(3)?,
                path: String::new(),
                op: stored_op(&r.get::<_, String>(4)?)?,
                old: Stored::from_columns(r.get(5)?, r.get(7)?)?,
                new: Stored::from_columns(r.get(6)?, r.get(8)?)?,
            };
            let old = self.value_text(c.old.clone())?;
            let new = self.value_text(c.new.clone())?;
            out.push((c, old, new));
        }
        Ok(out)
    }
}

fn sealed(op: crate::model::Op) -> hist_segment::Op {
    match op {
        crate::model::Op::Add => hist_segment::Op::Add,
        crate::model::Op::Remove => hist_segment::Op::Remove,
        crate::model::Op::Replace => hist_segment::Op::Replace,
        crate::model::Op::Move => hist_segment::Op::Move,
    }
}

/// Where a key's caches live.
pub(super) type SharedCaches = RefCell<Caches>;

/// Path numbers as the segments' filters take them: sorted, once each.
pub(super) fn sorted_ids(ids: Vec<i64>) -> Vec<u64> {
    let mut ids: Vec<u64> = ids
        .into_iter()
        .filter_map(|i| u64::try_from(i).ok())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use crate::{Actor, DocPath, Repo, Timestamp, TxOptions};

    /// A field's history decodes the segments that touch it or an ancestor, and no other.
    #[test]
    fn a_field_history_reads_only_the_segments_that_touch_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let mut at = 0;
        let mut write = |repo: &mut Repo, path: &str, value: &str| {
            at += 1;
            let opts = TxOptions::new(Actor::parse("user:t").unwrap(), "write", Timestamp(at));
            let mut txn = repo.begin(opts).unwrap();
            let value = crate::canon::parse(value.as_bytes()).unwrap();
            txn.set("k", &DocPath::parse(path).unwrap(), value).unwrap();
            txn.commit().unwrap();
        };
        // Three segments (sealed one by one, never merged): the document made and /a
        // changed, /a again, then /b alone.
        write(&mut repo, "", r#"{"a":0,"b":0}"#);
        for (path, from, upto) in [("/a", 1, 6), ("/a", 10, 11), ("/b", 20, 16)] {
            for n in from..from + 5 {
                write(&mut repo, path, &n.to_string());
            }
            let w = repo.store.begin_write().unwrap();
            let key_id = repo.store.key_id("k").unwrap().unwrap();
            assert!(w.seal(key_id, upto).unwrap());
            w.commit_rows().unwrap();
        }
        assert_eq!(repo.fsck().unwrap().segments, 3);
        for (path, changes, decoded) in [("/b", 6, 2), ("/a", 11, 2), ("", 16, 3)] {
            repo.store.clear_caches();
            let history = repo.history("k", &DocPath::parse(path).unwrap()).unwrap();
            assert_eq!(history.len(), changes, "{path}");
            assert_eq!(repo.store.segments_decoded(), decoded, "{path}");
        }
        // An empty range of versions reads no segment, in either direction.
        let key_id = repo.store.key_id("k").unwrap().unwrap();
        for side in [crate::store::Side::New, crate::store::Side::Old] {
            repo.store.clear_caches();
            for v in [0, 3, 8, 16] {
                assert!(
                    repo.store
                        .side_changes(key_id, 16, v, v, side)
                        .unwrap()
                        .changes
                        .is_empty()
                );
            }
            assert_eq!(repo.store.segments_decoded(), 0);
            assert_eq!(
                repo.store
                    .side_changes(key_id, 16, 3, 4, side)
                    .unwrap()
                    .changes
                    .len(),
                1
            );
            assert_eq!(repo.store.segments_decoded(), 1);
        }
    }
}
