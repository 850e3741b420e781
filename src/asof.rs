//! As-of reads: a document as it was after any transaction.
//!
//! A read starts from whichever is nearer to the target version: the nearest checkpoint
//! after it (or the current document), walking backwards by inverting changes, or the
//! nearest checkpoint at or before it, replaying forwards. The checkpoint policy ([`crate::store::checkpoint`]) bounds
//! how many changes any read replays, however long the history. Changes are replayed on
//! the stored canonical text ([`crate::replay`]) wherever they can be, on values otherwise.

use crate::canon::Value;
use crate::canon::{self, ObjectId};
use crate::diff;
use crate::error::{Error, Result};
use crate::model::Op;
use crate::replay::{self, Step};
use crate::repo::Repo;
use crate::retention::Compaction;
use crate::store::{Order, ReadPlan, Side, SideChanges, parse_stored};
use crate::time::When;
use std::borrow::Cow;

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
    /// True when every change the read went through replaced a value its checkpoint lists
    /// as a leaf, and the checkpoint's text was patched in one pass instead.
    pub patched: bool,
}

/// `plan`'s direction: `via`, or the one that replays fewer changes.
fn direction(plan: &ReadPlan, via: Option<Direction>) -> Direction {
    match via {
        Some(d) => d,
        None if plan.back_from() - plan.target <= plan.target - plan.ckpt_seq => {
            Direction::Backward
        }
        None => Direction::Forward,
    }
}

/// Which way an as-of read reconstructed the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Backwards from the nearest checkpoint after the target, or the current document.
    Backward,
    /// Forwards from a checkpoint (or from empty).
    Forward,
}

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
        match self.store.read_plan(key, bound)? {
            None => Ok(AsOf {
                doc: None,
                tx: Some(bound),
                replayed: 0,
                direction: Direction::Forward,
                compacted: Vec::new(),
            }),
            Some(start) => self.replay_values(key, bound, &start, direction(&start, via)),
        }
    }

    /// The read from `plan` in `direction`, replayed on values.
    fn replay_values(
        &self,
        key: &str,
        bound: i64,
        plan: &ReadPlan,
        direction: Direction,
    ) -> Result<AsOf> {
        let (mut doc, changes) = match direction {
            Direction::Backward => (
                match &plan.later {
                    Some((_, Some(id))) => Some(self.store.load_object(id)?),
                    Some((_, None)) => None,
                    None => self.current_stored(key)?,
                },
                self.store.changes(
                    plan.key_id,
                    plan.target,
                    plan.back_from(),
                    Order::NewestFirst,
                )?,
            ),
            Direction::Forward => (
                match &plan.ckpt_obj {
                    Some(id) => Some(self.store.load_object(id)?),
                    None => None,
                },
                self.store
                    .changes(plan.key_id, plan.ckpt_seq, plan.target, Order::OldestFirst)?,
            ),
        };
        let replayed = changes.len();
        for change in changes {
            let change = self.store.load_change(change)?;
            let change = match direction {
                Direction::Backward => change.inverse(),
                Direction::Forward => change,
            };
            diff::apply(&mut doc, &change).map_err(|e| replay_error(key, &e))?;
        }
        Ok(AsOf {
            doc,
            tx: Some(bound),
            replayed,
            direction,
            compacted: Vec::new(),
        })
    }

    /// The version (`seq`) of `key` after transaction `bound` (0: not written by then).
    pub(crate) fn version_at(&self, key: &str, bound: i64) -> Result<i64> {
        self.store.version_at(key, bound)
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
                    patched: false,
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
        let Some(start) = self.store.read_plan(key, bound)? else {
            return Ok(AsOfText {
                text: None,
                tx: Some(bound),
                replayed: 0,
                direction: Direction::Forward,
                compacted: self.compacted_at(key, bound)?,
                on_values: false,
                patched: false,
            });
        };
        let compacted = match start.compacted {
            true => self.compacted_at(key, bound)?,
            false => Vec::new(),
        };
        let direction = direction(&start, via);
        // The text read from, whether it is the text its name says, and the version of
        // the checkpoint it is (`None`: the current document).
        let (base, checked, from, read) = match direction {
            Direction::Backward => {
                let (text, checked) = match &start.later {
                    Some((_, object)) => self.checkpoint_text(object.as_ref())?,
                    None => {
                        let (text, hash) = self.store.doc_text_and_hash(key)?;
                        let checked = text.as_deref().is_some_and(|t| {
                            hash.as_deref() == Some(ObjectId::of(t.as_bytes()).0.as_slice())
                        });
                        (text, checked)
                    }
                };
                let read = self.store.side_changes(
                    start.key_id,
                    start.sealed_seq,
                    start.target,
                    start.back_from(),
                    Side::Old,
                )?;
                (text, checked, start.later.as_ref().map(|l| l.0), read)
            }
            Direction::Forward => {
                let (text, checked) = self.checkpoint_text(start.ckpt_obj.as_ref())?;
                let read = self.store.side_changes(
                    start.key_id,
                    start.sealed_seq,
                    start.ckpt_seq,
                    start.target,
                    Side::New,
                )?;
                (text, checked, Some(start.ckpt_seq), read)
            }
        };
        let patched = match (&base, from) {
            (Some(base), Some(seq)) if checked => self.patched(key, seq, base, &read)?,
            _ => None,
        };
        let was_patched = patched.is_some();
        let (replayed, replay) = match patched {
            Some((text, edits)) => (edits, Some(Some(text))),
            None => {
                let Steps { steps, ids, paths } = self.steps(read)?;
                let replayed = steps.len();
                (
                    replayed,
                    replay::replay_numbered(base.as_deref(), checked, steps, ids, paths),
                )
            }
        };
        let (text, on_values) = match replay {
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
            patched: was_patched,
        })
    }

    /// The read `read` as the checkpoint at version `seq` of `key` (its text `base`)
    /// patched ([`crate::leaves`]) when every change of it replaces the value of one of
    /// the checkpoint's leaves, with the number of leaves it wrote; `None` otherwise (or
    /// when the checkpoint's leaves are not indexed).
    fn patched(
        &self,
        key: &str,
        seq: i64,
        base: &str,
        read: &SideChanges,
    ) -> Result<Option<(String, usize)>> {
        // Nothing to patch, or something a patch cannot do: the leaves are not read.
        if read.changes.is_empty() || read.changes.iter().any(|c| c.op != Op::Replace) {
            return Ok(None);
        }
        let Some(leaves) = self.store.checkpoint_leaves(key, seq)? else {
            return Ok(None);
        };
        // Each leaf's last change in the read's order.
        let mut last: rustc_hash::FxHashMap<u32, usize> = Default::default();
        for (i, change) in read.changes.iter().enumerate() {
            match leaves.get(&change.path_id) {
                Some(&n) => _ = last.insert(n, i),
                None => return Ok(None),
            }
        }
        let mut values = Vec::with_capacity(last.len());
        for (n, i) in last {
            let change = &read.changes[i];
            let text = match read.inline(change) {
                Some(text) => Cow::Borrowed(text),
                None => match self.store.value_text(read.value(change))? {
                    Some(text) => Cow::Owned(text),
                    None => return Ok(None),
                },
            };
            // A value is spliced in as it stands: it must be canonical JSON.
            if canon::checked_index(&text).is_err() {
                return Ok(None);
            }
            values.push((n, text));
        }
        let edits = values.len();
        let text = crate::leaves::patch(base, values.iter().map(|(n, t)| (*n, &**t)).collect());
        Ok(text.map(|text| (text, edits)))
    }

    /// A checkpoint's text (`None`: the document was absent then), and whether it is the
    /// text its name says.
    fn checkpoint_text(&self, object: Option<&ObjectId>) -> Result<(Option<String>, bool)> {
        Ok(match object {
            Some(id) => {
                let text = self.store.object_text(id)?;
                let checked = ObjectId::of(text.as_bytes()) == *id;
                (Some(text), checked)
            }
            None => (None, true),
        })
    }

    /// A read's changes (`read`: oldest first, or newest first to be inverted) as replay
    /// steps.
    fn steps(&self, read: SideChanges) -> Result<Steps> {
        let side = read.side();
        // Every path of the read at once: a replay of many versions names thousands.
        self.store
            .load_path_texts(read.changes.iter().map(|c| c.path_id))?;
        let ops: Vec<Op> = read
            .changes
            .iter()
            .map(|row| match (side, row.op) {
                (Side::Old, Op::Add) => Op::Remove,
                (Side::Old, Op::Remove) => Op::Add,
                (_, op) => op,
            })
            .collect();
        // The paths numbered in the order they first appear, to fold each one's run of
        // changes into one before any value is laid out.
        let mut numbers: rustc_hash::FxHashMap<i64, usize> = Default::default();
        let mut texts = Vec::new();
        let mut ids = Vec::with_capacity(ops.len());
        for row in &read.changes {
            let id = match numbers.get(&row.path_id) {
                Some(&id) => id,
                None => {
                    texts.push(self.store.path_text(row.path_id)?);
                    numbers.insert(row.path_id, texts.len() - 1);
                    texts.len() - 1
                }
            };
            ids.push(id);
        }
        let mut paths = replay::Paths::new(texts);
        let fate = paths.folded(&ids, &ops);
        let kept = fate
            .as_ref()
            .map_or(ops.len(), |f| f.iter().flatten().count());
        let (mut steps, mut kept_ids) = (Vec::with_capacity(kept), Vec::with_capacity(kept));
        for (i, row) in read.changes.iter().enumerate() {
            let op = match &fate {
                Some(fate) => match fate[i] {
                    Some(op) => op,
                    None => continue,
                },
                None => ops[i],
            };
            steps.push(Step {
                path: paths.text(ids[i]).clone(),
                op,
                new: self.store.value_text(read.value(row))?,
            });
            kept_ids.push(ids[i]);
        }
        Ok(Steps {
            steps,
            ids: kept_ids,
            paths,
        })
    }
}

/// What a replay reads: its steps, and the number [`replay::Paths`] gave each one's path.
struct Steps {
    steps: Vec<Step>,
    ids: Vec<usize>,
    paths: replay::Paths,
}

fn replay_error(key: &str, e: &diff::ApplyError) -> Error {
    Error::Corrupt(format!("replaying {key}: {e}"))
}
