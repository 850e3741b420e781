//! Integrity: the hash chain over transactions, replay from empty, checkpoints and objects.
//!
//! Each transaction stores a hash chained over the one before it and everything it
//! recorded (the chain is defined in the store), so a row altered outside `hist` (a raw
//! `UPDATE` in the sqlite3 shell) breaks the chain at that transaction. [`Repo::fsck`]
//! recomputes the chain, replays every key from empty and compares the result with current
//! state and every checkpoint, and checks that every object's content matches its name.

use crate::canon::{self, ObjectId};
use crate::diff;
use crate::error::{Error, Result};
use crate::repo::Repo;
use crate::store::{Order, head, parse_stored};
use std::collections::HashSet;

/// Changes replayed at once.
const PAGE: i64 = 4096;

/// What `fsck` found.
#[derive(Clone, Debug, Default)]
pub struct FsckReport {
    /// Transactions checked.
    pub transactions: usize,
    /// Keys replayed.
    pub keys: usize,
    /// Changes replayed.
    pub changes: usize,
    /// Checkpoints compared.
    pub checkpoints: usize,
    /// Objects verified.
    pub objects: usize,
    /// Sealed segments checked against their index rows.
    pub segments: usize,
    /// Every problem, one sentence each (empty: all is well).
    pub problems: Vec<String>,
    /// The newest transaction and its chained hash (hex). Kept somewhere else, it lets a
    /// later `fsck` be compared against it: a log whose chain was recomputed after an edit
    /// ends in another hash.
    pub head: Option<(i64, String)>,
}

impl FsckReport {
    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Repo {
    /// Verifies the log's hash chain, replays every key from empty and compares it with
    /// current state and every checkpoint, and checks every object against its name.
    pub fn fsck(&self) -> Result<FsckReport> {
        let mut report = FsckReport::default();
        self.check_chain(&mut report)?;
        self.check_segments(&mut report)?;
        self.check_replay(&mut report)?;
        self.check_objects(&mut report)?;
        self.check_sealed(&mut report.problems)?;
        Ok(report)
    }

    fn check_chain(&self, report: &mut FsckReport) -> Result<()> {
        let rows = self.store.tx_chain()?;
        // The hash reads a transaction's change rows through `version`: a row added outside
        // hist, or moved to another transaction or key, is not in it; this finds those.
        let stray = self.store.stray_tx()?;
        let mut last_at = String::new();
        report.head = rows
            .last()
            .map(|(id, _, hash)| (*id, hash.iter().map(|b| format!("{b:02x}")).collect()));
        let altered = |id: i64| {
            format!("transaction {id} does not match its hash: its rows were altered outside hist")
        };
        let mut found = false;
        for (id, at, stored) in rows {
            report.transactions += 1;
            if stray == Some(id) || self.store.computed_tx_hash(id)?.as_slice() != stored.as_slice()
            {
                report.problems.push(altered(id));
                found = true;
                break;
            }
            if at < last_at {
                report.problems.push(format!(
                    "transaction {id} is earlier than the one before it"
                ));
            }
            last_at = at;
        }
        if let Some(id) = stray.filter(|_| !found) {
            // Rows of a transaction that is not in the log.
            report.problems.push(altered(id));
        }
        self.check_head(report)
    }

    /// Checks that the log still holds the transaction `.hist/HEAD` names, unchanged.
    fn check_head(&self, report: &mut FsckReport) -> Result<()> {
        let head = match head::read(&self.hist_dir()) {
            Ok(Some(head)) => head,
            Ok(None) => return Ok(()),
            Err(problem) => {
                report.problems.push(problem);
                return Ok(());
            }
        };
        let (id, hash) = head;
        let stored_hash = |id: i64| self.store.tx_hash(id);
        let stored = stored_hash(id)?;
        if stored.as_deref() != Some(hash.as_slice())
            && let Ok(Some((pending_id, pending_hash))) = head::read_pending(&self.hist_dir())
            && stored_hash(pending_id)?.as_deref() == Some(pending_hash.as_slice())
        {
            // A gc committed its rewritten chain but stopped before updating `HEAD`.
            return Ok(());
        }
        match stored {
            None => {
                let last = self.store.max_tx_id()?;
                report.problems.push(format!(
                    "transaction {id} was committed (.hist/{}) but the log ends at {}: \
                     transactions were removed from the end of the log",
                    head::FILE,
                    last.map_or_else(
                        || "no transaction".to_owned(),
                        |l| format!("transaction {l}")
                    ),
                ));
            }
            Some(stored) if stored.as_slice() != hash.as_slice() => {
                report.problems.push(format!(
                    "transaction {id} is not the one that was committed (.hist/{} records \
                     another hash): the log was replaced or rewritten",
                    head::FILE
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn check_replay(&self, report: &mut FsckReport) -> Result<()> {
        for key in self.store.orphan_keys()? {
            report.problems.push(format!(
                "{key}: the log has changes for it but current state has no record of it"
            ));
        }
        for row in self.store.doc_rows()? {
            let key = row.key;
            report.keys += 1;
            let checkpoints = self.store.checkpoints(&key)?;
            let mut next_ckpt = checkpoints.iter().peekable();
            let mut doc = None;
            let key_id = self.store.key_id(&key)?.unwrap_or(0);
            let mut expected_seq = 0;
            let mut broken = false;
            let mut after = 0;
            // Each transaction's versions of the key, as the changes say.
            let mut versions: Vec<(i64, i64, i64)> = Vec::new();
            'replay: loop {
                let page = self
                    .store
                    .changes(key_id, after, after + PAGE, Order::OldestFirst)?;
                if page.is_empty() {
                    break;
                }
                after += PAGE;
                for stored in page {
                    let seq = stored.seq;
                    expected_seq += 1;
                    if seq != expected_seq {
                        report
                            .problems
                            .push(format!("{key}: change sequence jumps to {seq}"));
                    }
                    match versions.last_mut() {
                        Some((tx, _, last)) if *tx == stored.tx => *last = seq,
                        _ => versions.push((stored.tx, seq, seq)),
                    }
                    let change = self.store.load_change(stored)?;
                    report.changes += 1;
                    if let Err(e) = diff::apply(&mut doc, &change) {
                        report
                            .problems
                            .push(format!("{key}: change {seq} does not replay: {e}"));
                        broken = true;
                        break 'replay;
                    }
                    while let Some(ckpt) = next_ckpt.next_if(|c| c.seq <= seq) {
                        report.checkpoints += 1;
                        let cseq = ckpt.seq;
                        if cseq != seq {
                            continue;
                        }
                        let stored = match &ckpt.object {
                            Some(hex) => match ObjectId::from_hex(hex) {
                                Some(id) => match self.store.load_object(&id) {
                                    Ok(v) => Some(v),
                                    Err(e) => {
                                        report
                                            .problems
                                            .push(format!("{key}: checkpoint at {cseq}: {e}"));
                                        continue;
                                    }
                                },
                                None => None,
                            },
                            None => None,
                        };
                        if stored != doc {
                            report.problems.push(format!(
                                "{key}: checkpoint at version {cseq} differs from the replayed log"
                            ));
                        } else if let Some(doc) = &doc
                            && ckpt.leaves.is_some()
                            && let Some(problem) = self.check_leaves(&key, cseq, doc)?
                        {
                            report.problems.push(problem);
                        }
                    }
                }
            }
            if broken {
                continue;
            }
            if key_id != 0 && versions != self.store.versions(key_id)? {
                report.problems.push(format!(
                    "{key}: its changes do not match the record of which transaction made \
                     which: they were altered outside hist"
                ));
            }
            if expected_seq != row.seq {
                report.problems.push(format!(
                    "{key}: current state is at version {} but the log has {expected_seq} changes",
                    row.seq
                ));
            }
            let current = row.text.map(|t| parse_stored(&t)).transpose()?;
            if current != doc {
                report.problems.push(format!(
                    "{key}: current state differs from the replayed log"
                ));
            }
            let replay_hash = doc.as_ref().map(|d| canon::hash(d).0.to_vec());
            if row.hash != replay_hash {
                report
                    .problems
                    .push(format!("{key}: the stored snapshot hash is wrong"));
            }
        }
        Ok(())
    }

    /// Whether the leaves of `key`'s checkpoint at version `seq` (its document `doc`) are
    /// where their paths lead ([`crate::leaves`]): a patched read trusts them. Leaves
    /// named as the rules in force name them are checked by name; others (named under
    /// rules since changed) by following their paths.
    fn check_leaves(&self, key: &str, seq: i64, doc: &canon::Value) -> Result<Option<String>> {
        let problem = |what: &str| {
            Some(format!(
                "{key}: the leaves of the checkpoint at version {seq} {what}: they were altered \
                 outside hist"
            ))
        };
        let Ok(Some(stored)) = self.store.checkpoint_leaves(key, seq) else {
            return Ok(problem("do not decode"));
        };
        let text = canon::to_canonical_string(doc);
        let Ok(named) = crate::leaves::numbered(&text, &self.key_rules(key)) else {
            return Ok(problem("cannot be listed"));
        };
        let named: std::collections::HashMap<u32, String> = named.into_iter().collect();
        let mut by_number: Vec<(u32, i64)> = stored.into_iter().map(|(p, n)| (n, p)).collect();
        by_number.sort_unstable();
        let mut wanted = by_number.iter().map(|e| e.0).peekable();
        let spans =
            crate::leaves::spans(&text, |n, _| wanted.next_if_eq(&n).is_some()).unwrap_or_default();
        if spans.len() != by_number.len() {
            return Ok(problem("name values the document does not have"));
        }
        for ((n, path_id), (_, start, end)) in by_number.into_iter().zip(spans) {
            let Ok(path) = self.store.path_text(path_id) else {
                return Ok(problem("name a path that does not exist"));
            };
            if named.get(&n).is_some_and(|p| **p == *path) {
                continue;
            }
            let found = crate::path::DocPath::parse(&path)
                .ok()
                .and_then(|p| p.get_text(&text))
                .map(|t| {
                    let at = t.as_ptr() as usize - text.as_ptr() as usize;
                    (at, at + t.len())
                });
            if found != Some((start, end)) {
                return Ok(problem(&format!("put {path} where it is not")));
            }
        }
        Ok(None)
    }

    /// Every segment decodes, holds the versions, transactions and paths its index row
    /// says, and its versions follow on from the key's previous segment.
    fn check_segments(&self, report: &mut FsckReport) -> Result<()> {
        for row in self.store.doc_rows()? {
            let Some(key_id) = self.store.key_id(&row.key)? else {
                continue;
            };
            let mut next = 1;
            for seg in self.store.key_segments(key_id)? {
                report.segments += 1;
                let name = &seg.object;
                if seg.first_seq != next {
                    report.problems.push(format!(
                        "{}: segment {name} starts at version {} where {next} was expected",
                        row.key, seg.first_seq
                    ));
                }
                next = seg.last_seq + 1;
                if let Some(problem) = self.store.check_segment(&seg)? {
                    report
                        .problems
                        .push(format!("{}: segment {name}: {problem}", row.key));
                }
            }
            if next - 1 != row.sealed_seq {
                report.problems.push(format!(
                    "{}: its segments end at version {} but the key says {}",
                    row.key,
                    next - 1,
                    row.sealed_seq
                ));
            }
        }
        Ok(())
    }

    fn check_objects(&self, report: &mut FsckReport) -> Result<()> {
        let objects = self.store.objects();
        let dir = objects.dir().to_path_buf();
        let ids = objects.list().map_err(Error::io(&dir))?;
        let present: HashSet<ObjectId> = ids.iter().copied().collect();
        for id in &ids {
            report.objects += 1;
            match objects.get(id) {
                Ok(bytes) if ObjectId::of(&bytes) == *id => {}
                Ok(_) => report
                    .problems
                    .push(format!("object {id} does not match its name")),
                Err(e) => report
                    .problems
                    .push(format!("object {id} cannot be read: {e}")),
            }
        }
        for hex in self.store.named_objects()? {
            match ObjectId::from_hex(&hex) {
                Some(id) if present.contains(&id) => {}
                _ => report
                    .problems
                    .push(format!("object {hex} is referenced but missing")),
            }
        }
        Ok(())
    }
}
