//! Writing: one SQLite transaction (or savepoint, inside a batch) that commits what a
//! [`crate::Txn`] made, all or nothing, in named phases:
//!
//! 1. **append the transaction**: its row, with a placeholder hash;
//! 2. **append the changes** of each key, in order, each fed to the chain's hasher, and
//!    the key's version row;
//! 3. **update current state**: a checkpoint when the policy says one is due
//!    ([`super::checkpoint::due`]), then the key's document row;
//! 4. **append the records**: rules, forgets, renames, compactions ([`Record`]);
//! 5. **seal the chain**: the transaction's hash over all of the above;
//! 6. **record the checks** (snapshots found unchanged);
//! 7. **make it durable**: the SQLite commit, then `.hist/HEAD`.
//!
//! Objects (large values, checkpoints) are written before the rows that name them; a crash
//! leaves orphans, which `gc` removes, never a row naming a missing object.

use super::chain::TxHasher;
use super::value::encode_text;
use super::{Cached, Record, Store, head, records};
use crate::error::{Error, Result};
use crate::model::{ChangeText, TxInfo};
use rusqlite::{Connection, OptionalExtension, params};

/// Everything one transaction writes.
#[derive(Debug)]
pub(crate) struct WriteSet<'r> {
    /// The transaction.
    pub(crate) info: TxInfo,
    /// Whether the transaction is recorded (`false`: only checks are, if any).
    pub(crate) record_tx: bool,
    /// The keys it changed (keys without changes are skipped).
    pub(crate) docs: Vec<DocWrite>,
    /// What it records besides changes.
    pub(crate) records: Vec<Record>,
    /// Snapshots found unchanged: (key, hash of the canonical text, hex).
    pub(crate) checks: Vec<(String, String)>,
    /// The rules in force, which name the leaves of the checkpoints it writes.
    pub(crate) rules: &'r [crate::rules::Rule],
}

/// The changes a transaction made to one key and the document they leave.
#[derive(Debug)]
pub(crate) struct DocWrite {
    pub(crate) key: String,
    /// The key's version before the transaction.
    pub(crate) seq: i64,
    /// The checkpoint bookkeeping before it: the newest checkpoint's version, and the count
    /// and bytes of the changes since.
    pub(crate) ckpt_seq: i64,
    pub(crate) ckpt_count: i64,
    pub(crate) ckpt_bytes: i64,
    /// The last version sealed into a segment.
    pub(crate) sealed_seq: i64,
    /// The document after (canonical text; `None`: removed).
    pub(crate) text: Option<String>,
    /// The blake3 hash of `text`.
    pub(crate) hash: Option<Vec<u8>>,
    /// What `text` was written from, when a snapshot's input.
    pub(crate) input: Option<Vec<u8>>,
    /// The changes, in order, values as they are stored (personal values sealed).
    pub(crate) changes: Vec<ChangeText>,
}

/// What a commit reports: every change with its key, in order, and warnings (a `HEAD`
/// that could not be written).
#[derive(Debug)]
pub(crate) struct Committed {
    pub(crate) changes: Vec<(String, ChangeText)>,
    pub(crate) warnings: Vec<String>,
}

/// A write in progress: rolls back unless committed.
pub(crate) struct WriteTxn<'s> {
    store: &'s Store,
    nested: bool,
    open: bool,
    /// Paths this write numbered: forgotten by the store's cache if it rolls back.
    pub(super) inserted_paths: std::cell::RefCell<Vec<i64>>,
    /// Segment objects this write replaced: deleted once it is durable.
    pub(super) superseded: std::cell::RefCell<Vec<String>>,
    /// Whether this write sealed tail rows (and so freed their pages).
    pub(super) sealed: std::cell::Cell<bool>,
}

impl<'s> WriteTxn<'s> {
    pub(super) fn begin(store: &'s Store, nested: bool) -> Result<Self> {
        // Prepared once (a batch begins thousands): not parsed again each time.
        store.conn.cached_exec(
            if nested {
                "SAVEPOINT hist_tx"
            } else {
                "BEGIN IMMEDIATE"
            },
            [],
        )?;
        Ok(Self {
            store,
            nested,
            open: true,
            inserted_paths: Default::default(),
            superseded: Default::default(),
            sealed: Default::default(),
        })
    }

    /// The store, for reads inside this transaction (they see its writes).
    pub(crate) fn store(&self) -> &'s Store {
        self.store
    }

    pub(super) fn conn(&self) -> &'s Connection {
        &self.store.conn
    }

    /// Commits `set` (the phases in the module documentation). `before_durable`
    /// gets the changes, as stored, once everything is written and before the commit: what
    /// it does to them (unsealing them for the caller, say) happens only if the commit
    /// does, and an error from it rolls the whole transaction back.
    pub(crate) fn commit(
        self,
        set: WriteSet<'_>,
        before_durable: impl FnOnce(&mut [(String, ChangeText)]) -> Result<()>,
    ) -> Result<Committed> {
        let WriteSet {
            info,
            record_tx,
            docs,
            records,
            checks,
            rules,
        } = set;
        let mut changes = Vec::new();
        let mut head = None;
        if record_tx {
            let conn = self.conn();
            self.append_tx(&info)?;
            let mut hasher = TxHasher::begin_written(conn, &info)?;
            for doc in docs.into_iter().filter(|d| !d.changes.is_empty()) {
                let (key_id, bytes) = self.append_changes(info.id, &doc, &mut hasher)?;
                let key = doc.key.clone();
                let (seq, sealed) = (doc.seq, doc.sealed_seq);
                let doc_changes = self.update_current(info.id, doc, bytes, rules)?;
                let seq = seq + i64::try_from(doc_changes.len()).unwrap_or(i64::MAX);
                if seq - sealed >= super::segments::SEAL_ROWS {
                    self.seal(key_id, seq)?;
                }
                changes.extend(doc_changes.into_iter().map(|c| (key.clone(), c)));
            }
            records::insert(conn, info.id, &records)?;
            let hash = hasher.finish(conn, !records.is_empty())?;
            conn.cached_exec(
                "UPDATE tx SET hash = ?1 WHERE id = ?2",
                params![hash.to_vec(), info.id],
            )?;
            head = Some((info.id, hash));
        }
        self.record_checks(&info, &checks)?;
        before_durable(&mut changes)?;
        let rewrites_chain = records.iter().any(|r| matches!(r, Record::Compaction(_)));
        let warnings = self.make_durable(head, rewrites_chain)?;
        Ok(Committed { changes, warnings })
    }

    /// Phase 1: the transaction's row (its hash is set once everything is written).
    fn append_tx(&self, info: &TxInfo) -> Result<()> {
        self.conn().cached_exec(
            "INSERT INTO tx (id, at, actor, reason, kind, hash) VALUES (?1, ?2, ?3, ?4, ?5, x'')",
            params![
                info.id,
                info.at.to_string(),
                info.actor,
                info.reason,
                info.kind
            ],
        )?;
        Ok(())
    }

    /// Phase 2: the change rows of one key and its version row. Returns the key's number
    /// and the bytes of the values written.
    fn append_changes(&self, tx: i64, doc: &DocWrite, hasher: &mut TxHasher) -> Result<(i64, i64)> {
        let conn = self.conn();
        let key_id = self.key_id_or_insert(&doc.key)?;
        let mut insert = conn.prepare_cached(
            "INSERT INTO change_log (tx, key_id, seq, path_id, op, old, new, old_obj, new_obj)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        let objects = self.store.objects();
        let mut seq = doc.seq;
        let mut bytes = 0i64;
        for change in &doc.changes {
            seq += 1;
            let old = encode_text(objects, change.old.as_deref().map(Into::into))?;
            let new = encode_text(objects, change.new.as_deref().map(Into::into))?;
            bytes = bytes.saturating_add(i64::try_from(old.len + new.len).unwrap_or(i64::MAX));
            let path = change.path.to_string();
            insert.execute(params![
                tx,
                key_id,
                seq,
                self.intern_path(&path)?,
                change.op.as_str(),
                old.text,
                new.text,
                old.obj,
                new.obj
            ])?;
            hasher.change(
                &doc.key,
                seq,
                &path,
                change.op.as_str(),
                [change.old.as_deref(), change.new.as_deref()],
            );
        }
        conn.cached_exec(
            "INSERT INTO version (key_id, tx, first_seq, last_seq) VALUES (?1, ?2, ?3, ?4)",
            params![key_id, tx, doc.seq + 1, seq],
        )?;
        Ok((key_id, bytes))
    }

    /// Phase 3: a checkpoint when one is due, then the key's document row. Returns the
    /// key's changes.
    fn update_current(
        &self,
        tx: i64,
        doc: DocWrite,
        bytes: i64,
        rules: &[crate::rules::Rule],
    ) -> Result<Vec<ChangeText>> {
        let conn = self.conn();
        let n = i64::try_from(doc.changes.len()).unwrap_or(i64::MAX);
        let seq = doc.seq + n;
        let count = doc.ckpt_count.saturating_add(n);
        let weight = doc.ckpt_bytes.saturating_add(bytes);
        let doc_len = || {
            doc.text
                .as_ref()
                .map_or(0, |t| i64::try_from(t.len()).unwrap_or(i64::MAX))
        };
        let (ckpt_seq, ckpt_count, ckpt_bytes) = if super::checkpoint::due(count, weight, doc_len) {
            // Leaves only for a key whose versions replace values (this one, at least): a
            // read that adds or removes anything is replayed, patched leaves or not.
            let values_only = doc
                .changes
                .iter()
                .all(|c| c.op == crate::model::Op::Replace);
            let rules = values_only.then(|| crate::rules::KeyRules::for_key(rules, &doc.key));
            self.write_checkpoint(&doc.key, seq, tx, doc.text.as_deref(), rules.as_ref())?;
            (seq, 0, 0)
        } else {
            (doc.ckpt_seq, count, weight)
        };
        // Delete, then insert: the old document's pages are free before the new one is
        // written, so it reuses them (an update writes the new text first and leaves a
        // document's worth of free pages behind). The row keeps its rowid, so documents
        // stay in the order they were created.
        let rowid: Option<i64> = conn
            .cached_row(
                "DELETE FROM doc WHERE key = ?1 RETURNING rowid",
                [&doc.key],
                |r| r.get(0),
            )
            .optional()?;
        conn.cached_exec(
            "INSERT INTO doc (rowid, key, doc, seq, tx, hash, ckpt_seq, ckpt_count,
                 ckpt_bytes, input, sealed_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                rowid,
                doc.key,
                doc.text,
                seq,
                tx,
                doc.hash,
                ckpt_seq,
                ckpt_count,
                ckpt_bytes,
                doc.input,
                doc.sealed_seq
            ],
        )?;
        Ok(doc.changes)
    }

    /// Phase 6: the snapshots found unchanged.
    fn record_checks(&self, info: &TxInfo, checks: &[(String, String)]) -> Result<()> {
        let at = info.at.to_string();
        for (key, hash) in checks {
            self.conn().cached_exec(
                "INSERT INTO check_log (key, at, actor, hash) VALUES (?1, ?2, ?3, ?4)",
                params![key, at, info.actor, hash],
            )?;
        }
        Ok(())
    }

    /// Phase 7: the SQLite commit, then `HEAD` (inside a batch the savepoint is not durable
    /// yet: the batch's commit writes `HEAD`). A commit that rewrote the chain (`gc`)
    /// first records the head it is about to make ([`head::PENDING`]): until `HEAD` names
    /// it, the hash `HEAD` records no longer matches its transaction.
    fn make_durable(
        mut self,
        head: Option<(i64, [u8; 32])>,
        rewrites_chain: bool,
    ) -> Result<Vec<String>> {
        let head = if self.nested { None } else { head };
        let dir = self.store.dir();
        if let (true, Some((id, hash))) = (rewrites_chain, head) {
            head::write_pending(dir, id, &hash).map_err(Error::io(dir))?;
        }
        self.finish()?;
        let mut warnings = Vec::new();
        if let Some((id, hash)) = head
            && let Err(e) = head::write(dir, id, &hash).and_then(|()| {
                if rewrites_chain {
                    head::clear_pending(dir)
                } else {
                    Ok(())
                }
            })
        {
            // The transaction is committed; only the evidence of the head is missing.
            warnings.push(format!(
                "tx {id} is recorded, but .hist/{} could not be updated: {e}",
                head::FILE
            ));
        }
        Ok(warnings)
    }

    /// Commits what was written through [`WriteTxn::conn`] and nothing else (a write that
    /// recorded no transaction: a tracked file's stat cache, say).
    pub(crate) fn commit_rows(self) -> Result<()> {
        let mut this = self;
        this.finish()
    }

    fn finish(&mut self) -> Result<()> {
        self.conn().cached_exec(
            if self.nested {
                "RELEASE hist_tx"
            } else {
                "COMMIT"
            },
            [],
        )?;
        self.open = false;
        let superseded = self.superseded.take();
        if self.nested {
            self.store.superseded.borrow_mut().extend(superseded);
        } else {
            self.store.delete_superseded(superseded);
            if self.sealed.get() {
                // The write is durable: a failure here only leaves the pages for later.
                let _ = self.store.return_free_pages();
            }
        }
        Ok(())
    }

    /// The number `change_log` names `key` by: given to the key with its first change.
    fn key_id_or_insert(&self, key: &str) -> Result<i64> {
        if let Some(id) = self.store.key_id(key)? {
            return Ok(id);
        }
        let conn = self.conn();
        conn.cached_exec("INSERT INTO change_key (key) VALUES (?1)", [key])?;
        Ok(conn.last_insert_rowid())
    }
}

impl Drop for WriteTxn<'_> {
    fn drop(&mut self) {
        if self.open {
            self.store.forget_paths(&self.inserted_paths.borrow());
            let sql = if self.nested {
                "ROLLBACK TO hist_tx; RELEASE hist_tx"
            } else {
                "ROLLBACK"
            };
            // Nothing more can be done about a failed rollback: SQLite rolls back an open
            // transaction when the connection closes anyway.
            let _ = self.store.conn.execute_batch(sql);
        }
    }
}
