//! Integrity: the hash chain over transactions, replay from empty, checkpoints and objects.
//!
//! Each transaction stores `blake3(previous hash ‖ its fields ‖ its change rows ‖ its rule
//! rows)`, so a row altered outside `hist` (a raw `UPDATE` in the sqlite3 shell) breaks the
//! chain at that transaction. [`Repo::fsck`] recomputes the chain, replays every key from
//! empty and compares the result with current state and every checkpoint, and checks that
//! every object's content matches its name.

use crate::canon::{self, ObjectId};
use crate::diff;
use crate::error::{Error, Result};
use crate::repo::{Repo, change_from_row};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashSet;

fn feed(hasher: &mut blake3::Hasher, field: Option<&[u8]>) {
    match field {
        None => {
            hasher.update(&[0]);
        }
        Some(bytes) => {
            hasher.update(&[1]);
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
    }
}

/// The chained hash of transaction `id`, computed from the rows stored for it.
pub(crate) fn tx_hash(conn: &Connection, id: i64) -> Result<[u8; 32]> {
    let mut h = TxHasher::begin(conn, id)?;
    h.stored_changes(conn)?;
    h.finish(conn)
}

/// A transaction's chained hash, fed in order: the previous transaction's hash and this
/// one's fields, its change rows in the order of their ids, then its rule, forget, rename
/// and compaction rows. A commit feeds the change rows as it inserts them; [`tx_hash`]
/// reads them back, and `fsck` compares the two.
pub(crate) struct TxHasher {
    h: blake3::Hasher,
    id: i64,
}

impl TxHasher {
    /// Starts the hash of transaction `id`, whose `tx` row is stored.
    pub(crate) fn begin(conn: &Connection, id: i64) -> Result<Self> {
        let prev: Option<Vec<u8>> = conn
            .prepare_cached("SELECT hash FROM tx WHERE id < ?1 ORDER BY id DESC LIMIT 1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let mut h = blake3::Hasher::new();
        feed(&mut h, prev.as_deref());
        let (at, actor, reason, kind): (String, String, Option<String>, String) = conn
            .prepare_cached("SELECT at, actor, reason, kind FROM tx WHERE id = ?1")?
            .query_row([id], |r| r.try_into())?;
        h.update(&id.to_le_bytes());
        for field in [Some(at), Some(actor), reason, Some(kind)] {
            feed(&mut h, field.as_deref().map(str::as_bytes));
        }
        Ok(Self { h, id })
    }

    /// One change row: `fields` are its path, op, old, new, old_obj and new_obj columns.
    pub(crate) fn change(&mut self, key: &str, seq: i64, fields: [Option<&str>; 6]) {
        self.h.update(b"c");
        self.h.update(&seq.to_le_bytes());
        feed(&mut self.h, Some(key.as_bytes()));
        for field in fields {
            feed(&mut self.h, field.map(str::as_bytes));
        }
    }

    /// The transaction's change rows as stored.
    fn stored_changes(&mut self, conn: &Connection) -> Result<()> {
        let mut stmt = conn.prepare_cached(
            "SELECT k.key, c.seq, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM version v JOIN change_key k ON k.id = v.key_id
             JOIN change_log c ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq
             WHERE v.tx = ?1 ORDER BY c.id",
        )?;
        let mut rows = stmt.query([self.id])?;
        while let Some(r) = rows.next()? {
            let text = |i| {
                r.get_ref(i)?.as_str_or_null().map_err(|e| {
                    Error::Corrupt(format!("a change row of transaction {}: {e}", self.id))
                })
            };
            let key = text(0)?.unwrap_or_default();
            let fields = [text(2)?, text(3)?, text(4)?, text(5)?, text(6)?, text(7)?];
            self.change(key, r.get(1)?, fields);
        }
        Ok(())
    }

    /// Feeds the rows of the smaller tables the transaction wrote, and ends the hash.
    pub(crate) fn finish(mut self, conn: &Connection) -> Result<[u8; 32]> {
        let mut stmt = conn.prepare_cached(
            "SELECT kind, pattern, keys, spec, tx = ?1 FROM rule WHERE tx = ?1 OR removed_tx = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([self.id])?;
        while let Some(r) = rows.next()? {
            let added: bool = r.get(4)?;
            self.h.update(if added { b"r+" } else { b"r-" });
            for i in 0..4 {
                let v: Option<String> = r.get(i)?;
                feed(&mut self.h, v.as_deref().map(str::as_bytes));
            }
        }
        let mut stmt =
            conn.prepare_cached("SELECT subject FROM forgotten WHERE tx = ?1 ORDER BY subject")?;
        let mut rows = stmt.query([self.id])?;
        while let Some(r) = rows.next()? {
            self.h.update(b"f");
            let subject: String = r.get(0)?;
            feed(&mut self.h, Some(subject.as_bytes()));
        }
        // Renames and compaction records (schema 3) are part of the transaction that made them;
        // a transaction without any feeds nothing here, so older hashes are unchanged.
        let mut stmt =
            conn.prepare_cached("SELECT keys, src, dst FROM rename WHERE tx = ?1 ORDER BY id")?;
        let mut rows = stmt.query([self.id])?;
        while let Some(r) = rows.next()? {
            self.h.update(b"m");
            for i in 0..3 {
                let v: String = r.get(i)?;
                feed(&mut self.h, Some(v.as_bytes()));
            }
        }
        let mut stmt = conn.prepare_cached(
            "SELECT key, path, mode, first_at, last_at, rule, replaced, kept, first_tx, last_tx
             FROM compaction WHERE tx = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([self.id])?;
        while let Some(r) = rows.next()? {
            self.h.update(b"k");
            for i in 0..5 {
                let v: String = r.get(i)?;
                feed(&mut self.h, Some(v.as_bytes()));
            }
            for i in 5..10 {
                let v: i64 = r.get(i)?;
                self.h.update(&v.to_le_bytes());
            }
        }
        Ok(*self.h.finalize().as_bytes())
    }
}

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
        self.check_replay(&mut report)?;
        self.check_objects(&mut report)?;
        self.check_sealed(&mut report.problems)?;
        Ok(report)
    }

    fn check_chain(&self, report: &mut FsckReport) -> Result<()> {
        let mut stmt = self.conn.prepare("SELECT id, hash FROM tx ORDER BY id")?;
        let rows: Vec<(i64, Vec<u8>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        // The hash reads a transaction's change rows through `version`: a row added outside
        // hist, or moved to another transaction or key, is not in it; this finds those.
        let stray: Option<i64> = self.conn.query_row(
            "SELECT min(tx) FROM (
                 SELECT tx FROM (
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx
                     EXCEPT
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM version)
                 UNION ALL
                 SELECT tx FROM (
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM version
                     EXCEPT
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx))",
            [],
            |r| r.get(0),
        )?;
        let mut last_at = String::new();
        report.head = rows
            .last()
            .map(|(id, hash)| (*id, hash.iter().map(|b| format!("{b:02x}")).collect()));
        let altered = |id: i64| {
            format!("transaction {id} does not match its hash: its rows were altered outside hist")
        };
        let mut found = false;
        for (id, stored) in rows {
            report.transactions += 1;
            if stray == Some(id) || tx_hash(&self.conn, id)?.as_slice() != stored.as_slice() {
                report.problems.push(altered(id));
                found = true;
                break;
            }
            let at: String = self
                .conn
                .query_row("SELECT at FROM tx WHERE id = ?1", [id], |r| r.get(0))?;
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
        let head = match crate::head::read(&self.hist_dir()) {
            Ok(Some(head)) => head,
            Ok(None) => return Ok(()),
            Err(problem) => {
                report.problems.push(problem);
                return Ok(());
            }
        };
        let (id, hash) = head;
        let stored_hash = |id: i64| -> Result<Option<Vec<u8>>> {
            Ok(self
                .conn
                .query_row("SELECT hash FROM tx WHERE id = ?1", [id], |r| r.get(0))
                .optional()?)
        };
        let stored = stored_hash(id)?;
        if stored.as_deref() != Some(hash.as_slice())
            && let Ok(Some((pending_id, pending_hash))) =
                crate::head::read_pending(&self.hist_dir())
            && stored_hash(pending_id)?.as_deref() == Some(pending_hash.as_slice())
        {
            // A gc committed its rewritten chain but stopped before updating `HEAD`.
            return Ok(());
        }
        match stored {
            None => {
                let last: Option<i64> = self
                    .conn
                    .query_row("SELECT max(id) FROM tx", [], |r| r.get(0))?;
                report.problems.push(format!(
                    "transaction {id} was committed (.hist/{}) but the log ends at {}: \
                     transactions were removed from the end of the log",
                    crate::head::FILE,
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
                    crate::head::FILE
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn check_replay(&self, report: &mut FsckReport) -> Result<()> {
        let mut orphans = self.conn.prepare(
            "SELECT key FROM change_key WHERE key NOT IN (SELECT key FROM doc)
                 AND id IN (SELECT key_id FROM change_log) ORDER BY key",
        )?;
        let orphans: Vec<String> = orphans
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for key in orphans {
            report.problems.push(format!(
                "{key}: the log has changes for it but current state has no record of it"
            ));
        }
        let mut stmt = self
            .conn
            .prepare("SELECT key, doc, seq, hash FROM doc ORDER BY key")?;
        type Row = (String, Option<String>, i64, Option<Vec<u8>>);
        let docs: Vec<Row> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (key, current, seq_now, hash) in docs {
            report.keys += 1;
            let mut ckpts = self
                .conn
                .prepare_cached("SELECT seq, object FROM checkpoint WHERE key = ?1 ORDER BY seq")?;
            let checkpoints: Vec<(i64, Option<String>)> = ckpts
                .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut next_ckpt = checkpoints.iter().peekable();
            let mut doc = None;
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, path, op, old, new, old_obj, new_obj FROM change_log
                 WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY seq",
            )?;
            let mut rows = stmt.query([&key])?;
            let mut expected_seq = 0;
            let mut broken = false;
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                expected_seq += 1;
                if seq != expected_seq {
                    report
                        .problems
                        .push(format!("{key}: change sequence jumps to {seq}"));
                }
                let change = change_from_row(
                    &self.objects,
                    &r.get::<_, String>(1)?,
                    &r.get::<_, String>(2)?,
                    (r.get(3)?, r.get(5)?),
                    (r.get(4)?, r.get(6)?),
                )?;
                report.changes += 1;
                if let Err(e) = diff::apply(&mut doc, &change) {
                    report
                        .problems
                        .push(format!("{key}: change {seq} does not replay: {e}"));
                    broken = true;
                    break;
                }
                while let Some((cseq, obj)) = next_ckpt.next_if(|(s, _)| *s <= seq) {
                    report.checkpoints += 1;
                    if *cseq != seq {
                        continue;
                    }
                    let stored = match obj {
                        Some(hex) => match ObjectId::from_hex(hex) {
                            Some(id) => match self.load_object(&id) {
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
                    }
                }
            }
            if broken {
                continue;
            }
            if expected_seq != seq_now {
                report.problems.push(format!(
                    "{key}: current state is at version {seq_now} but the log has {expected_seq} changes"
                ));
            }
            let current = current.map(|t| crate::repo::parse_stored(&t)).transpose()?;
            if current != doc {
                report.problems.push(format!(
                    "{key}: current state differs from the replayed log"
                ));
            }
            let replay_hash = doc.as_ref().map(|d| canon::hash(d).0.to_vec());
            if hash != replay_hash {
                report
                    .problems
                    .push(format!("{key}: the stored snapshot hash is wrong"));
            }
        }
        Ok(())
    }

    fn check_objects(&self, report: &mut FsckReport) -> Result<()> {
        let dir = self.objects.dir().to_path_buf();
        let ids = self.objects.list().map_err(Error::io(&dir))?;
        let present: HashSet<ObjectId> = ids.iter().copied().collect();
        for id in &ids {
            report.objects += 1;
            match self.objects.get(id) {
                Ok(bytes) if ObjectId::of(&bytes) == *id => {}
                Ok(_) => report
                    .problems
                    .push(format!("object {id} does not match its name")),
                Err(e) => report
                    .problems
                    .push(format!("object {id} cannot be read: {e}")),
            }
        }
        let mut stmt = self.conn.prepare(
            "SELECT object FROM checkpoint WHERE object IS NOT NULL
             UNION SELECT old_obj FROM change_log WHERE old_obj IS NOT NULL
             UNION SELECT new_obj FROM change_log WHERE new_obj IS NOT NULL
             UNION SELECT object FROM file_version WHERE object IS NOT NULL",
        )?;
        let referenced: Vec<String> = stmt
            .query_map(params![], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for hex in referenced {
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
