//! One cursor's reading of the log: the segments a scan's bounds can match (found in the
//! `segment` index without decompressing anything), each decoded once, then the tail rows,
//! in pages; and the lookups that turn numbers into text (transactions, keys, paths),
//! cached for the cursor's life, so a row costs a few comparisons and no allocation.
//!
//! Order: per key (when the scan names few keys) or all keys at once, the segments in
//! version order, then the tail. SQL promises no order without `ORDER BY`, and neither
//! does this table.

use crate::plan::{self, Bounds, Plan};
use hist_segment::{Op, Segment, objects};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, Statement, params};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;
use std::rc::Rc;

pub(crate) type Result<T> = std::result::Result<T, rusqlite::Error>;

/// An error of the table, as SQLite reports it for the query.
pub(crate) fn failure(what: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::ModuleError(format!("hist_changes: {what}"))
}

thread_local! {
    /// Segments decoded on this thread (see [`crate::segments_decoded`]).
    pub(crate) static DECODED: Cell<u64> = const { Cell::new(0) };
}

/// Tail rows read per page.
const PAGE: i64 = 4096;

/// Keys named by a scan up to this many are read key by key (each an index lookup);
/// beyond, the whole index and tail are read and rows of other keys skipped.
const PER_KEY: usize = 256;

/// Decoded segments a cursor keeps (estimated bytes), so a scan that SQLite repeats (the
/// inner loop of a join, `key IN (…)`) decodes each segment once.
const DECODED_BUDGET: usize = 64 << 20;

/// The statements a cursor runs.
#[derive(Clone, Copy)]
enum Sql {
    SegmentsAll,
    SegmentsOfKey,
    /// The tail, with its values (`true`) or without (when the scan uses neither).
    TailAll(bool),
    TailOfKey(bool),
    Tx,
    Key,
    Path,
    KeysEq,
    KeysGlob,
}

const SEGMENTS: &str = "SELECT key_id, first_seq, last_seq, object FROM segment \
     WHERE last_tx >= ?1 AND first_tx <= ?2 \
     AND (?3 IS NULL OR last_at >= ?3) AND (?4 IS NULL OR first_at <= ?4)";
const TAIL: &str = "SELECT id, tx, key_id, seq, path_id, op, {values} \
     FROM change_log WHERE tx >= ?1 AND tx <= ?2";

impl Sql {
    /// The statement's place among a cursor's.
    fn slot(self) -> usize {
        match self {
            Sql::SegmentsAll => 0,
            Sql::SegmentsOfKey => 1,
            Sql::TailAll(values) => 2 + usize::from(values),
            Sql::TailOfKey(values) => 4 + usize::from(values),
            Sql::Tx => 6,
            Sql::Key => 7,
            Sql::Path => 8,
            Sql::KeysEq => 9,
            Sql::KeysGlob => 10,
        }
    }

    fn text(self) -> String {
        let tail = |values: bool| {
            TAIL.replace(
                "{values}",
                if values {
                    "old, new, old_obj, new_obj"
                } else {
                    "NULL, NULL, NULL, NULL"
                },
            )
        };
        match self {
            Sql::SegmentsAll => format!("{SEGMENTS} ORDER BY key_id, first_seq"),
            Sql::SegmentsOfKey => format!("{SEGMENTS} AND key_id = ?5 ORDER BY first_seq"),
            Sql::TailAll(values) => {
                format!("{} AND id > ?3 ORDER BY id LIMIT {PAGE}", tail(values))
            }
            Sql::TailOfKey(values) => format!(
                "{} AND key_id = ?4 AND seq > ?3 ORDER BY seq LIMIT {PAGE}",
                tail(values)
            ),
            Sql::Tx => "SELECT at, actor, reason FROM tx WHERE id = ?1".into(),
            Sql::Key => "SELECT key FROM change_key WHERE id = ?1".into(),
            Sql::Path => "SELECT path FROM path WHERE id = ?1".into(),
            Sql::KeysEq => "SELECT id, key FROM change_key WHERE key = ?1".into(),
            Sql::KeysGlob => "SELECT id, key FROM change_key WHERE key GLOB ?1".into(),
        }
    }
}

/// The statements, each prepared the first time it is needed.
struct Statements<'c> {
    conn: &'c Connection,
    slots: [Option<Statement<'c>>; 11],
}

impl<'c> Statements<'c> {
    fn get(&mut self, which: Sql) -> Result<&mut Statement<'c>> {
        let slot = &mut self.slots[which.slot()];
        match slot {
            Some(stmt) => Ok(stmt),
            None => {
                let stmt = self.conn.prepare(&which.text()).map_err(|e| {
                    failure(format!(
                        "cannot read the store ({e}); is this a hist store at schema 9 or later?"
                    ))
                })?;
                Ok(slot.insert(stmt))
            }
        }
    }
}

/// A hasher for row ids (small integers), much cheaper than the default.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Things looked up by id, each once, kept in the order they were found.
struct Cache<T> {
    index: HashMap<i64, u32, BuildHasherDefault<IdHasher>>,
    items: Vec<T>,
    last: Option<(i64, u32)>,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache {
            index: HashMap::default(),
            items: Vec::new(),
            last: None,
        }
    }
}

impl<T> Cache<T> {
    /// The place of the item `id`, loaded by `load` the first time.
    fn find(&mut self, id: i64, load: impl FnOnce() -> Result<T>) -> Result<u32> {
        if let Some((last, at)) = self.last
            && last == id
        {
            return Ok(at);
        }
        let at = match self.index.get(&id) {
            Some(&at) => at,
            None => self.insert(id, load()?)?,
        };
        self.last = Some((id, at));
        Ok(at)
    }

    fn insert(&mut self, id: i64, item: T) -> Result<u32> {
        if let Some(&at) = self.index.get(&id) {
            return Ok(at);
        }
        let at = u32::try_from(self.items.len()).map_err(|_| failure("too many names"))?;
        self.items.push(item);
        self.index.insert(id, at);
        Ok(at)
    }

    fn get(&self, at: u32) -> Option<&T> {
        self.items.get(at as usize)
    }
}

/// What a row shows of its transaction.
struct TxInfo {
    at: Box<str>,
    actor: Box<str>,
    reason: Option<Box<str>>,
}

/// A segment the index says the scan may need.
struct SegmentRef {
    key_id: i64,
    first_seq: i64,
    last_seq: i64,
    object: String,
}

/// Decoded segments, by object, the oldest dropped first past [`DECODED_BUDGET`].
#[derive(Default)]
struct Decoded {
    by_object: HashMap<String, (Rc<Segment>, usize)>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Decoded {
    fn get(&self, object: &str) -> Option<Rc<Segment>> {
        self.by_object.get(object).map(|(seg, _)| Rc::clone(seg))
    }

    fn keep(&mut self, object: &str, seg: &Rc<Segment>, size: usize) {
        while self.bytes + size > DECODED_BUDGET {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((_, n)) = self.by_object.remove(&old) {
                self.bytes -= n;
            }
        }
        if size <= DECODED_BUDGET {
            self.by_object
                .insert(object.to_owned(), (Rc::clone(seg), size));
            self.order.push_back(object.to_owned());
            self.bytes += size;
        }
    }
}

/// Where a tail value is.
#[derive(Clone, Copy)]
enum TailValue {
    /// Not read (the scan uses neither `old` nor `new`).
    Unread,
    Absent,
    /// Its text, in the page's `text`.
    Text(u32, u32),
    /// The name of the object holding it, in the page's `text`.
    Object(u32, u32),
}

/// A page of tail rows, column by column; its buffers are reused from page to page.
#[derive(Default)]
struct TailPage {
    ids: Vec<i64>,
    txs: Vec<i64>,
    keys: Vec<i64>,
    seqs: Vec<i64>,
    paths: Vec<i64>,
    ops: Vec<Op>,
    olds: Vec<TailValue>,
    news: Vec<TailValue>,
    text: String,
}

impl TailPage {
    fn clear(&mut self) {
        self.ids.clear();
        self.txs.clear();
        self.keys.clear();
        self.seqs.clear();
        self.paths.clear();
        self.ops.clear();
        self.olds.clear();
        self.news.clear();
        self.text.clear();
    }

    /// Appends `value` (NULL or text) and the object named by `object`.
    fn value(&mut self, value: ValueRef<'_>, object: ValueRef<'_>, id: i64) -> Result<TailValue> {
        fn text(v: ValueRef<'_>, id: i64) -> Result<Option<&str>> {
            match v {
                ValueRef::Text(t) => std::str::from_utf8(t)
                    .map(Some)
                    .map_err(|_| failure(format!("change {id} has a value that is not UTF-8"))),
                ValueRef::Null => Ok(None),
                _ => Err(failure(format!("change {id} has a value that is not text"))),
            }
        }
        let (value, object) = (text(value, id)?, text(object, id)?);
        let Some((t, is_object)) = object.map(|o| (o, true)).or(value.map(|v| (v, false))) else {
            return Ok(TailValue::Absent);
        };
        let start = self.text.len();
        self.text.push_str(t);
        let span = |n: usize| u32::try_from(n).map_err(|_| failure("a page of values is too long"));
        let (start, end) = (span(start)?, span(self.text.len())?);
        Ok(if is_object {
            TailValue::Object(start, end)
        } else {
            TailValue::Text(start, end)
        })
    }

    fn str(&self, start: u32, end: u32) -> &str {
        self.text
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }
}

/// Which keys a part of the scan reads.
#[derive(Clone, Copy)]
enum Group {
    All,
    Key(i64),
}

/// What the current row is in.
enum Source {
    Nothing,
    /// A decoded segment, and its key's place in the key cache (when the key is used).
    Segment(Rc<Segment>, u32),
    /// The tail page.
    Tail,
}

/// The current row's looked-up parts (places in the caches; only those the plan uses).
#[derive(Default)]
struct Current {
    tx: u32,
    key: u32,
    path: u32,
    /// A tail value read from its object (when `old` or `new` is used).
    old: String,
    new: String,
}

/// A cursor's reader.
pub(crate) struct Reader<'c> {
    stmts: Statements<'c>,
    objects: Option<&'c Path>,
    txs: Cache<TxInfo>,
    keys: Cache<Box<str>>,
    paths: Cache<Box<str>>,
    decoded: Decoded,
    plan: Plan,
    bounds: Bounds,
    /// The keys the scan may return, sorted (`None`: any).
    only: Option<Vec<i64>>,
    groups: VecDeque<Group>,
    group: Group,
    segments: VecDeque<SegmentRef>,
    /// The last id (all keys) or version (one key) of the tail read; `None` once read.
    tail_after: Option<i64>,
    page: TailPage,
    source: Source,
    row: usize,
    cur: Current,
    eof: bool,
}

impl<'c> Reader<'c> {
    /// A reader on `conn`, whose objects are in `objects` (`None`: a database without a
    /// file, whose segments and large values cannot be read).
    pub(crate) fn new(conn: &'c Connection, objects: Option<&'c Path>) -> Self {
        Reader {
            stmts: Statements {
                conn,
                slots: Default::default(),
            },
            objects,
            txs: Cache::default(),
            keys: Cache::default(),
            paths: Cache::default(),
            decoded: Decoded::default(),
            plan: Plan {
                cols: 0,
                args: Vec::new(),
            },
            bounds: Bounds::default(),
            only: None,
            groups: VecDeque::new(),
            group: Group::All,
            segments: VecDeque::new(),
            tail_after: None,
            page: TailPage::default(),
            source: Source::Nothing,
            row: 0,
            cur: Current::default(),
            eof: true,
        }
    }

    /// Starts a scan (`xFilter`) and moves to its first row.
    pub(crate) fn start(&mut self, plan: Plan, bounds: Bounds) -> Result<()> {
        self.plan = plan;
        self.bounds = bounds;
        self.groups.clear();
        self.segments.clear();
        self.tail_after = None;
        self.source = Source::Nothing;
        self.eof = false;
        if self.bounds.is_empty() {
            self.eof = true;
            return Ok(());
        }
        self.only = self.key_set()?;
        match &self.only {
            Some(keys) if keys.len() <= PER_KEY => {
                self.groups.extend(keys.iter().map(|&k| Group::Key(k)));
            }
            _ => self.groups.push_back(Group::All),
        }
        self.advance(true)
    }

    /// Moves to the next row (`xNext`).
    pub(crate) fn next(&mut self) -> Result<()> {
        self.advance(false)
    }

    /// True past the last row (`xEof`).
    pub(crate) fn eof(&self) -> bool {
        self.eof
    }

    /// The keys the scan's `key` constraints allow, sorted; `None` without such constraints.
    fn key_set(&mut self) -> Result<Option<Vec<i64>>> {
        let Reader {
            stmts,
            keys,
            bounds,
            ..
        } = self;
        let wanted = bounds
            .keys
            .iter()
            .map(|k| (Sql::KeysEq, k))
            .chain(bounds.globs.iter().map(|g| (Sql::KeysGlob, g)));
        let mut set: Option<Vec<i64>> = None;
        for (sql, value) in wanted {
            let stmt = stmts.get(sql)?;
            let mut rows = stmt.query([text_param(value)])?;
            let mut found = Vec::new();
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let key: String = row.get(1)?;
                keys.insert(id, key.into())?;
                found.push(id);
            }
            found.sort_unstable();
            set = Some(match set {
                None => found,
                Some(had) => had
                    .into_iter()
                    .filter(|k| found.binary_search(k).is_ok())
                    .collect(),
            });
        }
        Ok(set)
    }

    /// Moves to the first row (`first`) or the one after the current one that the
    /// bounds accept, loading segments and pages as it goes.
    fn advance(&mut self, mut first: bool) -> Result<()> {
        loop {
            let next = if first { 0 } else { self.row + 1 };
            first = false;
            let len = match &self.source {
                Source::Nothing => 0,
                Source::Segment(seg, _) => seg.len(),
                Source::Tail => self.page.ids.len(),
            };
            if next < len {
                self.row = next;
                if self.accept()? {
                    return Ok(());
                }
                continue;
            }
            if !self.load_next()? {
                self.source = Source::Nothing;
                self.eof = true;
                return Ok(());
            }
            first = true;
        }
    }

    /// Loads the next segment or tail page; false when the scan has read everything.
    fn load_next(&mut self) -> Result<bool> {
        loop {
            if let Some(seg) = self.segments.pop_front() {
                self.open_segment(&seg)?;
                return Ok(true);
            }
            if let Some(after) = self.tail_after {
                self.read_page(after)?;
                if !self.page.ids.is_empty() {
                    self.source = Source::Tail;
                    return Ok(true);
                }
                self.tail_after = None;
                continue;
            }
            let Some(group) = self.groups.pop_front() else {
                return Ok(false);
            };
            self.group = group;
            self.list_segments()?;
            self.tail_after = Some(i64::MIN);
        }
    }

    /// Finds the current group's segments that the bounds can match, from the index alone.
    fn list_segments(&mut self) -> Result<()> {
        let Reader {
            stmts,
            bounds,
            only,
            group,
            segments,
            ..
        } = self;
        let at_lo = bounds.at_lo.as_ref().map(|(t, _)| text_param(t));
        let at_hi = bounds.at_hi.as_ref().map(|(t, _)| text_param(t));
        let mut rows = match *group {
            Group::All => stmts.get(Sql::SegmentsAll)?.query(params![
                bounds.tx_lo,
                bounds.tx_hi,
                at_lo,
                at_hi
            ])?,
            Group::Key(key) => stmts.get(Sql::SegmentsOfKey)?.query(params![
                bounds.tx_lo,
                bounds.tx_hi,
                at_lo,
                at_hi,
                key
            ])?,
        };
        while let Some(row) = rows.next()? {
            let key_id: i64 = row.get(0)?;
            if matches!(group, Group::All)
                && only
                    .as_ref()
                    .is_some_and(|o| o.binary_search(&key_id).is_err())
            {
                continue;
            }
            segments.push_back(SegmentRef {
                key_id,
                first_seq: row.get(1)?,
                last_seq: row.get(2)?,
                object: row.get(3)?,
            });
        }
        Ok(())
    }

    /// Makes `seg` the current source, decoding it unless this cursor already has.
    fn open_segment(&mut self, seg: &SegmentRef) -> Result<()> {
        let key = if self.plan.uses(plan::KEY) {
            self.key(seg.key_id)?
        } else {
            0
        };
        let decoded = match self.decoded.get(&seg.object) {
            Some(decoded) => decoded,
            None => {
                let (decoded, size) = self.decode(seg)?;
                let decoded = Rc::new(decoded);
                self.decoded.keep(&seg.object, &decoded, size);
                decoded
            }
        };
        self.source = Source::Segment(decoded, key);
        Ok(())
    }

    /// Reads and decodes a segment, checked against its index row; and its size in memory
    /// (an estimate).
    fn decode(&mut self, seg: &SegmentRef) -> Result<(Segment, usize)> {
        let what = || {
            format!(
                "the segment of key {} versions {}..={} (object {})",
                seg.key_id, seg.first_seq, seg.last_seq, seg.object
            )
        };
        let bytes = self
            .object(&seg.object)
            .map_err(|e| failure(format!("{}: {e}", what())))?;
        DECODED.with(|n| n.set(n.get() + 1));
        let encoded = bytes.len();
        let decoded = Segment::decode(bytes).map_err(|e| failure(format!("{}: {e}", what())))?;
        let expected = seg.last_seq.checked_sub(seg.first_seq).map(|n| n + 1);
        if decoded.first_seq() != seg.first_seq || Some(decoded.len() as i64) != expected {
            return Err(failure(format!(
                "{}: it holds versions {}..{} (not what the index says)",
                what(),
                decoded.first_seq(),
                decoded.first_seq() + decoded.len() as i64
            )));
        }
        let size = encoded + decoded.len() * 48;
        Ok((decoded, size))
    }

    /// The bytes of the object named `name`.
    fn object(&self, name: &str) -> std::result::Result<Vec<u8>, String> {
        let dir = self.objects.ok_or_else(|| {
            "the database has no file, so hist's objects beside it cannot be read".to_owned()
        })?;
        let valid =
            name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !valid {
            return Err(format!("{name:?} is not an object name"));
        }
        objects::read(dir, name).map_err(|e| format!("cannot read object {name}: {e}"))
    }

    /// Reads the current group's next page of tail rows (after id or version `after`).
    fn read_page(&mut self, after: i64) -> Result<()> {
        let Reader {
            stmts,
            plan,
            bounds,
            group,
            page,
            tail_after,
            ..
        } = self;
        page.clear();
        // Values are copied only when the scan uses them.
        let values = plan.uses(plan::OLD) || plan.uses(plan::NEW);
        let mut rows = match *group {
            Group::All => stmts.get(Sql::TailAll(values))?.query(params![
                bounds.tx_lo,
                bounds.tx_hi,
                after
            ])?,
            Group::Key(key) => stmts.get(Sql::TailOfKey(values))?.query(params![
                bounds.tx_lo,
                bounds.tx_hi,
                after,
                key
            ])?,
        };
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            page.ids.push(id);
            page.txs.push(row.get(1)?);
            page.keys.push(row.get(2)?);
            page.seqs.push(row.get(3)?);
            page.paths.push(row.get(4)?);
            let op = match row.get_ref(5)? {
                ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(Op::parse),
                _ => None,
            };
            page.ops
                .push(op.ok_or_else(|| failure(format!("change {id} has an unknown op")))?);
            let (old, new) = if values {
                let old = page.value(row.get_ref(6)?, row.get_ref(8)?, id)?;
                (old, page.value(row.get_ref(7)?, row.get_ref(9)?, id)?)
            } else {
                (TailValue::Unread, TailValue::Unread)
            };
            page.olds.push(old);
            page.news.push(new);
        }
        let last = match group {
            Group::All => page.ids.last(),
            Group::Key(_) => page.seqs.last(),
        };
        *tail_after = match last {
            Some(&last) if page.ids.len() as i64 == PAGE => Some(last),
            _ => None,
        };
        Ok(())
    }

    /// The place in the key cache of key `id`.
    fn key(&mut self, id: i64) -> Result<u32> {
        let Reader { stmts, keys, .. } = self;
        keys.find(id, || {
            let key: Option<String> = stmts
                .get(Sql::Key)?
                .query_row([id], |r| r.get(0))
                .optional()?;
            key.map(Into::into)
                .ok_or_else(|| failure(format!("key number {id} is not in change_key")))
        })
    }

    /// Checks the current row against the bounds and looks up what the plan uses of it.
    fn accept(&mut self) -> Result<bool> {
        let i = self.row;
        let (id, tx, key, path) = match &self.source {
            Source::Nothing => return Ok(false),
            Source::Segment(seg, _) => {
                let Some(row) = seg.row(i) else {
                    return Ok(false);
                };
                let path = i64::try_from(row.path)
                    .map_err(|_| failure(format!("change {} has no valid path number", row.id)))?;
                (row.id, row.tx, None, path)
            }
            Source::Tail => {
                let p = &self.page;
                match (p.ids.get(i), p.txs.get(i), p.keys.get(i), p.paths.get(i)) {
                    (Some(&id), Some(&tx), Some(&key), Some(&path)) => (id, tx, Some(key), path),
                    _ => return Ok(false),
                }
            }
        };
        let other_key = |k| {
            self.only
                .as_ref()
                .is_some_and(|o| o.binary_search(&k).is_err())
        };
        if !self.bounds.tx_ok(tx) || key.is_some_and(other_key) {
            return Ok(false);
        }
        let plan = &self.plan;
        if self.bounds.has_at()
            || plan.uses(plan::AT)
            || plan.uses(plan::ACTOR)
            || plan.uses(plan::REASON)
        {
            let Reader { stmts, txs, .. } = self;
            let at = txs.find(tx, || {
                stmts
                    .get(Sql::Tx)?
                    .query_row([tx], |r| {
                        Ok(TxInfo {
                            at: r.get::<_, String>(0)?.into(),
                            actor: r.get::<_, String>(1)?.into(),
                            reason: r.get::<_, Option<String>>(2)?.map(Into::into),
                        })
                    })
                    .optional()?
                    .ok_or_else(|| {
                        failure(format!(
                            "change {id} names transaction {tx}, which is not in the log"
                        ))
                    })
            })?;
            let ok = txs
                .get(at)
                .is_some_and(|t| self.bounds.at_ok(t.at.as_bytes()));
            if !ok {
                return Ok(false);
            }
            self.cur.tx = at;
        }
        if let Some(key) = key
            && self.plan.uses(plan::KEY)
        {
            self.cur.key = self.key(key)?;
        }
        if self.plan.uses(plan::PATH) {
            let Reader { stmts, paths, .. } = self;
            self.cur.path = paths.find(path, || {
                let text: Option<String> = stmts
                    .get(Sql::Path)?
                    .query_row([path], |r| r.get(0))
                    .optional()?;
                text.map(Into::into).ok_or_else(|| {
                    failure(format!(
                        "change {id} names path number {path}, which is not in path"
                    ))
                })
            })?;
        }
        if matches!(self.source, Source::Tail) {
            for (col, old) in [(plan::OLD, true), (plan::NEW, false)] {
                if !self.plan.uses(col) {
                    continue;
                }
                let values = if old {
                    &self.page.olds
                } else {
                    &self.page.news
                };
                if let Some(&TailValue::Object(start, end)) = values.get(i) {
                    let name = self.page.str(start, end);
                    let bytes = self
                        .object(name)
                        .map_err(|e| failure(format!("a value of change {id}: {e}")))?;
                    let text = String::from_utf8(bytes).map_err(|_| {
                        failure(format!(
                            "a value of change {id} (object {name}) is not UTF-8"
                        ))
                    })?;
                    if old {
                        self.cur.old = text;
                    } else {
                        self.cur.new = text;
                    }
                }
            }
        }
        Ok(true)
    }

    /// The current row's change id (its rowid).
    pub(crate) fn id(&self) -> Result<i64> {
        match &self.source {
            Source::Segment(seg, _) => seg.row(self.row).map(|r| r.id),
            Source::Tail => self.page.ids.get(self.row).copied(),
            Source::Nothing => None,
        }
        .ok_or_else(|| failure("there is no current row"))
    }

    /// Column `col` of the current row.
    pub(crate) fn column(&self, col: usize) -> Result<ValueRef<'_>> {
        let i = self.row;
        let unplanned = || failure(format!("column {col} was not planned"));
        let tx = || self.txs.get(self.cur.tx).ok_or_else(unplanned);
        let shared = match col {
            plan::AT => Some(text(&tx()?.at)),
            plan::ACTOR => Some(text(&tx()?.actor)),
            plan::REASON => Some(tx()?.reason.as_deref().map_or(ValueRef::Null, text)),
            plan::PATH => Some(text(self.paths.get(self.cur.path).ok_or_else(unplanned)?)),
            _ => None,
        };
        if let Some(value) = shared {
            return Ok(value);
        }
        match &self.source {
            Source::Segment(seg, key) => {
                let row = seg
                    .row(i)
                    .ok_or_else(|| failure("there is no current row"))?;
                Ok(match col {
                    plan::ID => ValueRef::Integer(row.id),
                    plan::TX => ValueRef::Integer(row.tx),
                    plan::KEY => text(self.keys.get(*key).ok_or_else(unplanned)?),
                    plan::OP => text(row.op.as_str()),
                    plan::OLD => opt(row.old),
                    plan::NEW => opt(row.new),
                    _ => return Err(failure(format!("there is no column {col}"))),
                })
            }
            Source::Tail => {
                let p = &self.page;
                let value = |v: Option<&TailValue>, big| match v {
                    Some(&TailValue::Text(s, e)) => Ok(text(p.str(s, e))),
                    Some(TailValue::Object(..)) => Ok(text(big)),
                    Some(TailValue::Unread) => Err(unplanned()),
                    _ => Ok(ValueRef::Null),
                };
                let int = |v: Option<&i64>| v.map_or(ValueRef::Null, |&n| ValueRef::Integer(n));
                Ok(match col {
                    plan::ID => int(p.ids.get(i)),
                    plan::TX => int(p.txs.get(i)),
                    plan::KEY => text(self.keys.get(self.cur.key).ok_or_else(unplanned)?),
                    plan::OP => p.ops.get(i).map_or(ValueRef::Null, |op| text(op.as_str())),
                    plan::OLD => value(p.olds.get(i), &self.cur.old)?,
                    plan::NEW => value(p.news.get(i), &self.cur.new)?,
                    _ => return Err(failure(format!("there is no column {col}"))),
                })
            }
            Source::Nothing => Err(failure("there is no current row")),
        }
    }
}

/// Text as a statement parameter.
fn text_param(bytes: &[u8]) -> ToSqlOutput<'_> {
    ToSqlOutput::Borrowed(ValueRef::Text(bytes))
}

/// Text as a column value.
fn text(s: &str) -> ValueRef<'_> {
    ValueRef::Text(s.as_bytes())
}

/// Text or NULL as a column value.
fn opt(s: Option<&str>) -> ValueRef<'_> {
    s.map_or(ValueRef::Null, text)
}
