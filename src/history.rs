//! The history of one field: every change that altered the value at a path, projected
//! onto it, following renames back.

use crate::canon::Value;
use crate::diff;
use crate::error::{Error, Result};
use crate::model::{Change, Op, TxInfo};
use crate::path::DocPath;
use crate::repo::Repo;

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

impl Repo {
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
            let personal = self.keys.personal_seen(&self.store)?;
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
        let Some(key_id) = self.store.key_id(key)? else {
            return Ok((Vec::new(), after));
        };
        let rows = self
            .store
            .changes_touching(key_id, path, (after_seq, upto), with_moves)?;
        let mut out = Vec::new();
        for (row, tx) in rows {
            let change = self.store.load_change(row)?;
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
