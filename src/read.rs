//! Reads: a document as of any point, the history of one field, the transaction log.
//!
//! An as-of read starts from whichever is nearer to the target version: the current
//! document, walking backwards by inverting changes, or the nearest checkpoint at or before
//! the target, replaying forwards. Checkpoints are written often enough
//! ([`crate::repo::CHECKPOINT_EVERY`]) that no read replays more than that many changes,
//! however long the history.

use crate::canon;
use crate::canon::ObjectId;
use crate::canon::Value;
use crate::diff;
use crate::error::{Error, Result};
use crate::gc::Compaction;
use crate::model::{Change, LoggedChange, Op, TxInfo};
use crate::path::DocPath;
use crate::repo::{Repo, change_from_row, parse_stored, tx_from_row};
use crate::store::Cached;
use crate::time::{Timestamp, When};
use rusqlite::{OptionalExtension, params};

/// A document as of some point.
#[derive(Clone, Debug, PartialEq)]
pub struct AsOf {
    /// The document (`None`: absent then).
    pub doc: Option<Value>,
    /// The last transaction included (`None`: before any).
    pub tx: Option<i64>,
    /// How many changes the read replayed (the checkpoint policy bounds it).
    pub replayed: usize,
    /// Which way it read.
    pub direction: Direction,
    /// The spans compacted by `gc` that this read falls into (empty: the read is exact).
    /// Inside one, the values at its path are the compacted ones, not necessarily those in
    /// force at that moment.
    pub compacted: Vec<Compaction>,
}

/// A document as of some point, as canonical text ([`Repo::as_of_text`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AsOfText {
    /// The document's canonical text (`None`: absent then).
    pub text: Option<String>,
    /// The last transaction included (`None`: before any).
    pub tx: Option<i64>,
    /// How many changes the read replayed (the checkpoint policy bounds it).
    pub replayed: usize,
    /// Which way it read.
    pub direction: Direction,
    /// As [`AsOf::compacted`].
    pub compacted: Vec<Compaction>,
    /// True when the changes could not be replayed on the stored text (a `move`, an array
    /// out of canonical order) and were replayed on values instead: the same document, read
    /// more slowly.
    pub on_values: bool,
}

/// Where an as-of read of key number `key_id` starts: version `target` is wanted; the
/// current one is `seq_now`; the nearest checkpoint at or before `target` is version
/// `ckpt_seq` (0 and `None`: none, start from empty).
struct Start {
    key_id: i64,
    seq_now: i64,
    target: i64,
    ckpt_seq: i64,
    ckpt_obj: Option<ObjectId>,
    /// Whether `gc` compacted any of the key's changes.
    compacted: bool,
}

impl Start {
    /// `via`, or the direction that replays fewer changes.
    fn direction(&self, via: Option<Direction>) -> Direction {
        match via {
            Some(d) => d,
            None if self.seq_now - self.target <= self.target - self.ckpt_seq => {
                Direction::Backward
            }
            None => Direction::Forward,
        }
    }
}

/// Which way an as-of read reconstructed the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Backwards from the current document.
    Backward,
    /// Forwards from a checkpoint (or from empty).
    Forward,
}

/// One change that altered the value at a path, projected onto that path.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryEntry {
    /// The transaction.
    pub tx: TxInfo,
    /// The path asked about.
    pub path: DocPath,
    /// The path the change was recorded at (an ancestor, the path itself, or below it).
    pub change_path: DocPath,
    /// What happened to the value at `path`.
    pub op: Op,
    /// The value at `path` before (absent: there was none).
    pub old: Option<Value>,
    /// The value at `path` after.
    pub new: Option<Value>,
    /// True when the change lies in a span compacted by `gc`: it stands for several
    /// changes (one per day, hour, or the whole span), with their first `old` and last `new`.
    pub compacted: bool,
    /// For a recorded rename (`op` is `move`): where the value was and where it went.
    /// `path` is where it is after the move (or, when it moved away from the path asked
    /// about, where it was, and `new` is absent).
    pub moved: Option<Moved>,
}

/// A rename as history shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moved {
    /// The path before the rename.
    pub from: DocPath,
    /// The path after it.
    pub to: DocPath,
}

/// Which transactions `log` lists.
#[derive(Clone, Debug, Default)]
pub struct LogFilter {
    /// Only transactions that changed this key.
    pub key: Option<String>,
    /// Only changes at, above or below this path (needs `key`… or applies to every key).
    pub path: Option<DocPath>,
    /// Only this actor.
    pub actor: Option<String>,
    /// Only at or after.
    pub since: Option<When>,
    /// Only at or before.
    pub until: Option<When>,
    /// At most this many.
    pub limit: Option<usize>,
    /// Also load each transaction's changes (matching the key and path filters).
    pub with_changes: bool,
}

/// A transaction as `log` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// The transaction.
    pub tx: TxInfo,
    /// How many changes it made (all keys).
    pub change_count: usize,
    /// Its changes, when asked for.
    pub changes: Vec<LoggedChange>,
}

type RawChange = (
    String,
    String,
    (Option<String>, Option<String>),
    (Option<String>, Option<String>),
);

fn raw_change(r: &rusqlite::Row<'_>, base: usize) -> rusqlite::Result<RawChange> {
    Ok((
        r.get(base)?,
        r.get(base + 1)?,
        (r.get(base + 2)?, r.get(base + 4)?),
        (r.get(base + 3)?, r.get(base + 5)?),
    ))
}

/// SQL that selects changes at, above or below a path: `?2` ancestors as a JSON array,
/// `?3` the path itself.
const PATH_MATCH: &str = "(c.path IN (SELECT value FROM json_each(?2)) OR c.path = ?3
    OR (c.path > ?3 || '/' AND c.path < ?3 || '0')
    OR (c.path > ?3 || '[' AND c.path < ?3 || '\\'))";

impl Repo {
    /// The document under `key` as of `when`.
    pub fn as_of(&self, key: &str, when: When) -> Result<AsOf> {
        self.snapshot(|| {
            crate::model::check_key(key)?;
            let bound = self.resolve(when)?;
            match bound {
                Some(tx) => self.as_of_tx(key, tx),
                None => Ok(AsOf {
                    doc: None,
                    tx: None,
                    replayed: 0,
                    direction: Direction::Forward,
                    compacted: Vec::new(),
                }),
            }
        })
    }

    /// The document under `key` after transaction `bound` (and every one before it),
    /// read in whichever direction replays fewer changes.
    pub fn as_of_tx(&self, key: &str, bound: i64) -> Result<AsOf> {
        self.snapshot(|| {
            // Replayed on text (see `as_of_text`), then parsed once: cheaper than parsing the
            // stored document and every change's values and replaying on the tree.
            let read = self.as_of_text_via(key, bound, None)?;
            Ok(AsOf {
                doc: read.text.as_deref().map(parse_stored).transpose()?,
                tx: read.tx,
                replayed: read.replayed,
                direction: read.direction,
                compacted: read.compacted,
            })
        })
    }

    /// [`Repo::as_of_tx`] replayed on values, change by change, forced to read in one
    /// direction (`None`: the cheaper one). Both directions must agree, and so must the
    /// reads on text; tests use this as their reference.
    pub fn as_of_tx_via(&self, key: &str, bound: i64, via: Option<Direction>) -> Result<AsOf> {
        let mut found = self.as_of_tx_stored(key, bound, via)?;
        found.doc = self.unseal_doc(found.doc)?;
        found.compacted = self.compacted_at(key, bound)?;
        Ok(found)
    }

    /// The spans of `key` compacted by `gc` that a read after transaction `bound` falls in.
    fn compacted_at(&self, key: &str, bound: i64) -> Result<Vec<Compaction>> {
        let mut spans = self.compactions(key)?;
        spans.retain(|c| c.covers_tx(bound));
        Ok(spans)
    }

    /// [`Repo::as_of_tx_via`] as stored: personal values sealed, no compaction flags.
    pub(crate) fn as_of_tx_stored(
        &self,
        key: &str,
        bound: i64,
        via: Option<Direction>,
    ) -> Result<AsOf> {
        match self.plan(key, bound)? {
            None => Ok(AsOf {
                doc: None,
                tx: Some(bound),
                replayed: 0,
                direction: Direction::Forward,
                compacted: Vec::new(),
            }),
            Some(start) => self.replay_values(key, bound, &start, start.direction(via)),
        }
    }

    /// The read from `start` in `direction`, replayed on values.
    fn replay_values(
        &self,
        key: &str,
        bound: i64,
        start: &Start,
        direction: Direction,
    ) -> Result<AsOf> {
        let (mut doc, changes) = match direction {
            Direction::Backward => (
                self.current_stored(key)?,
                self.changes_between(start.key_id, start.target, start.seq_now, true)?,
            ),
            Direction::Forward => (
                match &start.ckpt_obj {
                    Some(id) => Some(self.load_object(id)?),
                    None => None,
                },
                self.changes_between(start.key_id, start.ckpt_seq, start.target, false)?,
            ),
        };
        for change in &changes {
            let change = match direction {
                Direction::Backward => &change.inverse(),
                Direction::Forward => change,
            };
            diff::apply(&mut doc, change).map_err(|e| replay_error(key, &e))?;
        }
        Ok(AsOf {
            doc,
            tx: Some(bound),
            replayed: changes.len(),
            direction,
            compacted: Vec::new(),
        })
    }

    /// The version (`seq`) of `key` after transaction `bound`: the last change of the newest
    /// transaction up to it that changed the key (0: none did).
    pub(crate) fn version_at(&self, key: &str, bound: i64) -> Result<i64> {
        Ok(self
            .conn
            .cached_row(
                "SELECT last_seq FROM version
                 WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) AND tx <= ?2
                 ORDER BY tx DESC LIMIT 1",
                params![key, bound],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// Where an as-of read of `key` after transaction `bound` starts: the versions now,
    /// wanted and of the nearest checkpoint at or before it (with its object). One
    /// statement, which also says whether `gc` compacted any of the key's changes: a read
    /// of a small document costs about as much per statement as per change replayed.
    fn plan(&self, key: &str, bound: i64) -> Result<Option<Start>> {
        // The current text is read only when the replay starts from it (going backward).
        type Row = (i64, i64, Option<i64>, Option<i64>, Option<String>, bool);
        let row: Option<Row> = self
            .conn
            .cached_row(
                "WITH p AS (
                     SELECT k.id AS key_id, d.seq AS seq_now,
                            (SELECT last_seq FROM version WHERE key_id = k.id AND tx <= ?2
                             ORDER BY tx DESC LIMIT 1) AS target
                     FROM doc d JOIN change_key k ON k.key = d.key WHERE d.key = ?1)
                 SELECT p.key_id, p.seq_now, p.target, c.seq, c.object,
                        EXISTS (SELECT 1 FROM compaction WHERE key = ?1)
                 FROM p LEFT JOIN checkpoint c ON c.key = ?1 AND c.seq = (
                     SELECT max(seq) FROM checkpoint WHERE key = ?1 AND seq <= p.target)",
                params![key, bound],
                |r| r.try_into(),
            )
            .optional()?;
        let Some((key_id, seq_now, Some(target), ckpt_seq, ckpt_obj, compacted)) = row else {
            return Ok(None);
        };
        let ckpt_obj = ckpt_obj
            .map(|hex| {
                ObjectId::from_hex(&hex)
                    .ok_or_else(|| Error::Corrupt(format!("checkpoint object id {hex:?}")))
            })
            .transpose()?;
        Ok(Some(Start {
            key_id,
            seq_now,
            target,
            ckpt_seq: ckpt_seq.unwrap_or(0),
            ckpt_obj,
            compacted,
        }))
    }

    /// The document under `key` as of `when`, as canonical text (personal values
    /// unsealed): [`Repo::as_of`]'s document, replayed on the stored text
    /// ([`crate::replay`]) instead of a tree wherever it can be, so that reading a large
    /// document as it was costs about what copying it does.
    pub fn as_of_text(&self, key: &str, when: When) -> Result<AsOfText> {
        self.snapshot(|| {
            crate::model::check_key(key)?;
            match self.resolve(when)? {
                Some(bound) => self.as_of_text_via(key, bound, None),
                None => Ok(AsOfText {
                    text: None,
                    tx: None,
                    replayed: 0,
                    direction: Direction::Forward,
                    compacted: Vec::new(),
                    on_values: false,
                }),
            }
        })
    }

    /// [`Repo::as_of_text`] after transaction `bound`, forced to read in one direction
    /// (`None`: the cheaper one). Every way must agree with [`Repo::as_of_tx_via`]; tests
    /// use this to prove it.
    #[doc(hidden)]
    pub fn as_of_text_via(
        &self,
        key: &str,
        bound: i64,
        via: Option<Direction>,
    ) -> Result<AsOfText> {
        let Some(start) = self.plan(key, bound)? else {
            return Ok(AsOfText {
                text: None,
                tx: Some(bound),
                replayed: 0,
                direction: Direction::Forward,
                compacted: self.compacted_at(key, bound)?,
                on_values: false,
            });
        };
        let compacted = match start.compacted {
            true => self.compacted_at(key, bound)?,
            false => Vec::new(),
        };
        let direction = start.direction(via);
        let (base, checked, steps) = match direction {
            Direction::Backward => {
                let (text, hash): (Option<String>, Option<Vec<u8>>) = self.conn.cached_row(
                    "SELECT doc, hash FROM doc WHERE key = ?1",
                    [key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let checked = text.as_deref().is_some_and(|t| {
                    hash.as_deref() == Some(ObjectId::of(t.as_bytes()).0.as_slice())
                });
                let steps =
                    self.steps_between(key, start.key_id, start.target, start.seq_now, true)?;
                (text, checked, steps)
            }
            Direction::Forward => {
                let (text, checked) = match &start.ckpt_obj {
                    Some(id) => {
                        let text = self.object_text(id)?;
                        let checked = ObjectId::of(text.as_bytes()) == *id;
                        (Some(text), checked)
                    }
                    None => (None, true),
                };
                let steps =
                    self.steps_between(key, start.key_id, start.ckpt_seq, start.target, false)?;
                (text, checked, steps)
            }
        };
        let replayed = steps.len();
        let (text, on_values) = match crate::replay::replay(base.as_deref(), checked, steps) {
            Some(Some(text)) if text.contains(crate::shred::SEALED) => {
                let doc = self.unseal_doc(Some(parse_stored(&text)?))?;
                (doc.as_ref().map(canon::to_canonical_string), false)
            }
            Some(text) => (text, false),
            // Not replayable on text: on values, which also names what is wrong.
            None => {
                let doc = self.replay_values(key, bound, &start, direction)?.doc;
                let doc = self.unseal_doc(doc)?;
                (doc.as_ref().map(canon::to_canonical_string), true)
            }
        };
        Ok(AsOfText {
            text,
            tx: Some(bound),
            replayed,
            direction,
            compacted,
            on_values,
        })
    }

    /// The changes of `key` with `after < seq <= upto` as replay steps: oldest first, or
    /// newest first and inverted (to go back from `upto` to `after`).
    fn steps_between(
        &self,
        key: &str,
        key_id: i64,
        after: i64,
        upto: i64,
        backward: bool,
    ) -> Result<Vec<crate::replay::Step>> {
        let sql = if backward {
            "SELECT path, op, old, old_obj FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq DESC"
        } else {
            "SELECT path, op, new, new_obj FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            // Path and op are read in place, not copied out.
            let text = |i| {
                row.get_ref(i)?
                    .as_str()
                    .map_err(|e| Error::Corrupt(format!("stored change of {key}: {e}")))
            };
            let path = text(0)?;
            let path = DocPath::parse(path)
                .map_err(|e| Error::Corrupt(format!("stored path {path:?}: {e}")))?;
            let op = text(1)?;
            let op = Op::parse(op).ok_or_else(|| Error::Corrupt(format!("unknown op {op:?}")))?;
            let op = match (backward, op) {
                (true, Op::Add) => Op::Remove,
                (true, Op::Remove) => Op::Add,
                (_, op) => op,
            };
            let new = match (
                row.get::<_, Option<String>>(2)?,
                row.get::<_, Option<String>>(3)?,
            ) {
                (_, Some(hex)) => {
                    let id = ObjectId::from_hex(&hex)
                        .ok_or_else(|| Error::Corrupt(format!("bad object id {hex:?}")))?;
                    Some(self.object_text(&id)?)
                }
                (text, None) => text,
            };
            out.push(crate::replay::Step { path, op, new });
        }
        Ok(out)
    }

    /// A stored object's bytes as text (not checked to be JSON: the replay does that).
    fn object_text(&self, id: &ObjectId) -> Result<String> {
        let bytes = self
            .objects
            .get(id)
            .map_err(Error::io(self.objects.path_of(id)))?;
        String::from_utf8(bytes)
            .map_err(|_| Error::Corrupt(format!("object {id} is not UTF-8 text")))
    }

    /// Changes of key number `key_id` with `after < seq <= upto`, oldest first (or newest first).
    fn changes_between(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
        newest_first: bool,
    ) -> Result<Vec<Change>> {
        let sql = if newest_first {
            "SELECT path, op, old, new, old_obj, new_obj FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq DESC"
        } else {
            "SELECT path, op, old, new, old_obj, new_obj FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params![key_id, after, upto], |r| raw_change(r, 0))?;
        let mut out = Vec::new();
        for row in rows {
            let (path, op, old, new) = row?;
            out.push(change_from_row(&self.objects, &path, &op, old, new)?);
        }
        Ok(out)
    }

    /// Every change that altered the value at `path` in `key`, oldest first, with `old`
    /// and `new` projected onto `path` (writes to ancestors and descendants included).
    ///
    /// Renames are followed back: for `/tier`, renamed from `/plan`, the changes to `/plan`
    /// before the rename come first (with `path` `/plan`), then the move, then the changes
    /// to `/tier`. Chains (a → b → c) and renamed parents (`/billing` → `/account/billing`
    /// for `/account/billing/plan`) are followed the same way. Entries in a span compacted
    /// by `gc` are flagged.
    pub fn history(&self, key: &str, path: &DocPath) -> Result<Vec<HistoryEntry>> {
        self.snapshot(|| {
            crate::model::check_key(key)?;
            // Walk back from now. Each rename that moved the value now at `q` (a move at `q`
            // or at an ancestor of it) ends a segment: older changes are looked up at the path
            // the value had before the rename.
            let mut q = path.clone();
            let mut upto = i64::MAX;
            let mut after = self
                .current_stored(key)?
                .and_then(|d| diff::get(&d, q.segments()).cloned());
            let mut newest_first = Vec::new();
            let moves = self.moves(key)?;
            let with_moves = !moves.is_empty();
            for m in moves {
                let Some(rest) = q.strip_prefix(&m.to).map(<[_]>::to_vec) else {
                    continue;
                };
                let (entries, moved) =
                    self.history_between(key, &q, (m.seq, upto), after, with_moves)?;
                newest_first.extend(entries);
                let mut before = m.from.segments().to_vec();
                before.extend(rest);
                let before = DocPath::from_segments(before);
                if moved.is_some() {
                    let tx = self
                        .tx(m.tx)?
                        .ok_or_else(|| Error::Corrupt(format!("{key}: no transaction {}", m.tx)))?;
                    newest_first.push(HistoryEntry {
                        tx,
                        path: q.clone(),
                        change_path: m.to.clone(),
                        op: Op::Move,
                        old: moved.clone(),
                        new: moved.clone(),
                        compacted: false,
                        moved: Some(Moved {
                            from: before.clone(),
                            to: q.clone(),
                        }),
                    });
                }
                q = before;
                upto = m.seq - 1;
                after = moved;
            }
            let (entries, _) = self.history_between(key, &q, (0, upto), after, with_moves)?;
            newest_first.extend(entries);
            newest_first.reverse();
            let spans = self.compactions(key)?;
            // Asked once: it cannot change within this read.
            let personal = self.keys.personal_seen(&self.conn)?;
            for e in &mut newest_first {
                e.compacted = e.moved.is_none()
                    && spans.iter().any(|c| {
                        c.first_tx <= e.tx.id
                            && e.tx.id <= c.last_tx
                            && e.change_path.starts_with(&c.path)
                    });
                if personal {
                    e.old = self.unseal_doc(e.old.take())?;
                    e.new = self.unseal_doc(e.new.take())?;
                }
            }
            Ok(newest_first)
        })
    }

    /// The history of `path` among the changes `after_seq < seq <= upto`, newest first,
    /// given the value at `path` right after `upto` (`after`). Also returns the value at
    /// `path` right after `after_seq`. `with_moves`: the key's log has renames.
    fn history_between(
        &self,
        key: &str,
        path: &DocPath,
        (after_seq, upto): (i64, i64),
        mut after: Option<Value>,
        with_moves: bool,
    ) -> Result<(Vec<HistoryEntry>, Option<Value>)> {
        let ancestors: Vec<String> = path.ancestors().iter().map(ToString::to_string).collect();
        // Each branch of the union is one seek on the (key, path) index: the ancestors and
        // the path itself, then its descendants (`/…` and `[…` children). The sequence
        // bounds are kept off the index (`+c.seq`), and the index is named: otherwise the
        // planner scans the whole key in `seq` order to save sorting the few rows found.
        let columns = "SELECT c.seq, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj,
                    t.id, t.at, t.actor, t.reason, t.kind";
        let select = format!(
            "{columns} FROM change_log c INDEXED BY change_key_path
             JOIN tx t ON t.id = c.tx WHERE c.key_id = (SELECT id FROM change_key WHERE key = ?1)"
        );
        let bounds = "AND +c.seq > ?4 AND +c.seq <= ?5";
        // With renames, moves are selected whatever their path: one may have moved the
        // value away.
        let moves = if with_moves {
            format!(
                "UNION ALL {columns} FROM change_log c JOIN tx t ON t.id = c.tx
                 WHERE c.key_id = (SELECT id FROM change_key WHERE key = ?1) AND c.op = 'move' AND NOT {PATH_MATCH} {bounds}"
            )
        } else {
            String::new()
        };
        let sql = format!(
            "{select} AND c.path IN (SELECT value FROM json_each(?6)) {bounds}
             UNION ALL {select} AND c.path > ?3 || '/' AND c.path < ?3 || '0' {bounds}
             UNION ALL {select} AND c.path > ?3 || '[' AND c.path < ?3 || '\\' {bounds}
             {moves}
             ORDER BY 1 DESC"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ancestors_json = ancestors.iter().collect::<Value>().to_string();
        // The ancestors and the path itself, as one list (an `OR` would cost the index).
        let mut exact = ancestors;
        exact.push(path.to_string());
        let exact_json = exact.iter().collect::<Value>().to_string();
        let rows = stmt.query_map(
            params![
                key,
                ancestors_json,
                path.to_string(),
                after_seq,
                upto,
                exact_json
            ],
            |r| Ok((raw_change(r, 1)?, tx_from_row_at(r, 7)?)),
        )?;
        let mut out = Vec::new();
        for row in rows {
            let ((cpath, op, old, new), tx) = row?;
            let change = change_from_row(&self.objects, &cpath, &op, old, new)?;
            if change.op == Op::Move {
                let from = diff::move_source(&change).map_err(|e| replay_error(key, &e))?;
                if let Some(rest) = path.strip_prefix(&from) {
                    // The value at `path` moved away (renamed) here.
                    let before = change
                        .new
                        .as_ref()
                        .and_then(|v| diff::get(v, rest))
                        .cloned();
                    if before.is_some() {
                        let mut to = change.path.segments().to_vec();
                        to.extend_from_slice(rest);
                        out.push(HistoryEntry {
                            tx,
                            path: path.clone(),
                            change_path: change.path.clone(),
                            op: Op::Move,
                            old: before.clone(),
                            new: None,
                            compacted: false,
                            moved: Some(Moved {
                                from: path.clone(),
                                to: DocPath::from_segments(to),
                            }),
                        });
                    }
                    after = before;
                    continue;
                }
                // A rename inside the value at `path`: undo it locally.
                let inside_to = change.path.strip_prefix(path).map(<[_]>::to_vec);
                let inside_from = from.strip_prefix(path).map(<[_]>::to_vec);
                if inside_to.is_none() && inside_from.is_none() {
                    continue;
                }
                let mut value = after.clone();
                if let Some(rest) = inside_to {
                    let undo = Change {
                        path: DocPath::from_segments(rest),
                        op: Op::Remove,
                        old: change.new.clone(),
                        new: None,
                    };
                    diff::apply(&mut value, &undo).map_err(|e| replay_error(key, &e))?;
                }
                if let Some(rest) = inside_from {
                    let undo = Change {
                        path: DocPath::from_segments(rest),
                        op: Op::Add,
                        old: None,
                        new: change.new.clone(),
                    };
                    diff::apply(&mut value, &undo).map_err(|e| replay_error(key, &e))?;
                }
                if let Some(op) = Op::between(value.as_ref(), after.as_ref()) {
                    out.push(HistoryEntry {
                        tx,
                        path: path.clone(),
                        change_path: change.path.clone(),
                        op,
                        old: value.clone(),
                        new: after.clone(),
                        compacted: false,
                        moved: None,
                    });
                }
                after = value;
                continue;
            }
            let before = if let Some(rest) = path.strip_prefix(&change.path) {
                // The change is at the path or above it: project its values.
                let project =
                    |v: &Option<Value>| v.as_ref().and_then(|v| diff::get(v, rest)).cloned();
                let (b, a) = (project(&change.old), project(&change.new));
                if b == a {
                    continue;
                }
                after = a;
                b
            } else {
                // The change is below the path: undo it on the value we hold.
                let rest = change.path.strip_prefix(path).unwrap_or_default();
                let mut value = after.clone();
                let local = Change {
                    path: DocPath::from_segments(rest.to_vec()),
                    ..change.inverse()
                };
                diff::apply(&mut value, &local).map_err(|e| replay_error(key, &e))?;
                value
            };
            let same_tx = out
                .last()
                .is_some_and(|e: &HistoryEntry| e.tx.id == tx.id && e.moved.is_none());
            if same_tx {
                // Several changes of one transaction: one entry, from before the first.
                if let Some(e) = out.last_mut() {
                    if !e.change_path.starts_with(&change.path) {
                        e.change_path = common_prefix(&e.change_path, &change.path);
                    }
                    e.old.clone_from(&before);
                    e.op = Op::between(e.old.as_ref(), e.new.as_ref()).unwrap_or(Op::Replace);
                }
                if out.last().is_some_and(|e| e.old == e.new) {
                    out.pop();
                }
            } else if let Some(op) = Op::between(before.as_ref(), after.as_ref()) {
                out.push(HistoryEntry {
                    tx,
                    path: path.clone(),
                    change_path: change.path,
                    op,
                    old: before.clone(),
                    new: after.clone(),
                    compacted: false,
                    moved: None,
                });
            }
            after = before;
        }
        Ok((out, after))
    }

    /// Transactions, newest first, filtered.
    pub fn log(&self, filter: &LogFilter) -> Result<Vec<LogEntry>> {
        self.snapshot(|| {
            if let Some(key) = &filter.key {
                crate::model::check_key(key)?;
            }
            let mut wheres = vec!["1 = 1".to_owned()];
            let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
            let path_args = |path: &DocPath| -> (String, String) {
                let a: Vec<String> = path.ancestors().iter().map(ToString::to_string).collect();
                (
                    Value::from(a).to_string(),
                    path.to_string(),
                )
            };
            if filter.key.is_some() || filter.path.is_some() {
                let mut sub = "SELECT 1 FROM version v".to_owned();
                if filter.path.is_some() {
                    sub.push_str(
                        " JOIN change_log c
                          ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq",
                    );
                }
                sub.push_str(" WHERE v.tx = t.id");
                if let Some(key) = &filter.key {
                    args.push(Box::new(key.clone()));
                    sub.push_str(&format!(
                        " AND v.key_id = (SELECT id FROM change_key WHERE key = ?{})",
                        args.len()
                    ));
                }
                if let Some(path) = &filter.path {
                    let (anc, p) = path_args(path);
                    args.push(Box::new(anc));
                    let a = args.len();
                    args.push(Box::new(p));
                    let b = args.len();
                    sub.push_str(&format!(
                        " AND {}",
                        PATH_MATCH
                            .replace("?2", &format!("?{a}"))
                            .replace("?3", &format!("?{b}"))
                    ));
                }
                wheres.push(format!("EXISTS ({sub})"));
            }
            if let Some(actor) = &filter.actor {
                args.push(Box::new(actor.clone()));
                wheres.push(format!("t.actor = ?{}", args.len()));
            }
            for (bound, cmp) in [(filter.since, ">="), (filter.until, "<=")] {
                let col = match bound {
                    None => continue,
                    Some(When::Tx(id)) => {
                        args.push(Box::new(id));
                        "t.id"
                    }
                    Some(When::At(ts)) => {
                        args.push(Box::new(ts.to_string()));
                        "t.at"
                    }
                };
                wheres.push(format!("{col} {cmp} ?{}", args.len()));
            }
            // A path filter is refined in Rust (a write above the path counts only when it
            // altered the value at the path), so the limit is applied after it.
            let sql_limit = if filter.path.is_some() {
                None
            } else {
                filter.limit
            };
            let limit = sql_limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
            let sql = format!(
                "SELECT t.id, t.at, t.actor, t.reason, t.kind,
                        (SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM version v WHERE v.tx = t.id)
                 FROM tx t WHERE {} ORDER BY t.id DESC LIMIT {limit}",
                wheres.join(" AND ")
            );
            let mut stmt = self.conn.prepare(&sql)?;
            let params: Vec<&dyn rusqlite::ToSql> = args.iter().map(AsRef::as_ref).collect();
            let rows = stmt.query_map(params.as_slice(), |r| {
                Ok((tx_from_row(r)?, r.get::<_, i64>(5)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (tx, count) = row?;
                out.push(LogEntry {
                    tx,
                    change_count: usize::try_from(count).unwrap_or(0),
                    changes: Vec::new(),
                });
            }
            if filter.path.is_some() {
                let mut kept = Vec::new();
                for mut entry in out {
                    let changes =
                        self.tx_changes(&entry.tx, filter.key.as_deref(), filter.path.as_ref())?;
                    if !changes.is_empty() {
                        if filter.with_changes {
                            entry.changes = changes;
                        }
                        kept.push(entry);
                    }
                    if filter.limit.is_some_and(|n| kept.len() >= n) {
                        break;
                    }
                }
                return Ok(kept);
            }
            if filter.with_changes {
                for entry in &mut out {
                    entry.changes = self.tx_changes(&entry.tx, filter.key.as_deref(), None)?;
                }
            }
            Ok(out)
        })
    }

    /// The changes of one transaction, optionally only those of `key` at/above/below `path`.
    pub fn tx_changes(
        &self,
        tx: &TxInfo,
        key: Option<&str>,
        path: Option<&DocPath>,
    ) -> Result<Vec<LoggedChange>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, k.key, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM version v JOIN change_key k ON k.id = v.key_id
             JOIN change_log c ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq
             WHERE v.tx = ?1 ORDER BY c.id",
        )?;
        let rows = stmt.query_map([tx.id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                raw_change(r, 2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, k, (p, op, old, new)) = row?;
            if key.is_some_and(|key| key != k) {
                continue;
            }
            let change = change_from_row(&self.objects, &p, &op, old, new)?;
            if let Some(path) = path {
                let keep = match path.strip_prefix(&change.path) {
                    Some(rest) => {
                        let old = change.old.as_ref().and_then(|v| diff::get(v, rest));
                        let new = change.new.as_ref().and_then(|v| diff::get(v, rest));
                        old != new
                    }
                    None => change.path.starts_with(path),
                };
                if !keep {
                    continue;
                }
            }
            out.push(LoggedChange {
                id,
                tx: tx.clone(),
                key: k,
                change: self.unseal_change(change)?,
            });
        }
        Ok(out)
    }
}

fn tx_from_row_at(r: &rusqlite::Row<'_>, base: usize) -> rusqlite::Result<TxInfo> {
    let at: String = r.get(base + 1)?;
    Ok(TxInfo {
        id: r.get(base)?,
        at: Timestamp::parse_rfc3339(&at).unwrap_or(Timestamp(0)),
        actor: r.get(base + 2)?,
        reason: r.get(base + 3)?,
        kind: r.get(base + 4)?,
    })
}

fn common_prefix(a: &DocPath, b: &DocPath) -> DocPath {
    let n = a
        .segments()
        .iter()
        .zip(b.segments())
        .take_while(|(x, y)| x == y)
        .count();
    DocPath::from_segments(a.segments()[..n].to_vec())
}

fn replay_error(key: &str, e: &diff::ApplyError) -> Error {
    Error::Corrupt(format!("replaying {key}: {e}"))
}
