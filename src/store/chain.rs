//! The hash chain: each transaction stores `blake3(previous hash ‖ its fields ‖ its change
//! rows ‖ its records)`, so a row altered outside `hist` (a raw `UPDATE` in the sqlite3
//! shell) breaks the chain at that transaction. What the hash covers is defined here once:
//! a commit feeds the change rows as it inserts them, [`tx_hash`] reads them back (`fsck`
//! compares the two), and `gc` re-chains after rewriting rows ([`Store::rechain`]).

use super::{LARGE_VALUE, Store, WriteTxn};
use crate::canon::ObjectId;
use crate::error::Result;
use rusqlite::{Connection, OptionalExtension, params};

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

/// The chained hash of transaction `id`, computed from what is stored for it.
fn tx_hash(store: &Store, id: i64) -> Result<[u8; 32]> {
    let mut h = TxHasher::begin(&store.conn, id)?;
    h.stored_changes(store)?;
    h.finish(&store.conn, true)
}

/// A transaction's chained hash, fed in order: the previous transaction's hash and this
/// one's fields, its changes in the order of their ids, then its rule, forget, rename and
/// compaction rows. A commit feeds the changes as it records them; [`tx_hash`] reads them
/// back, and `fsck` compares the two.
///
/// A change is fed by its content, not by where it is stored (a row of the tail, a
/// segment): its key, version, path, op, and each value as its canonical text, or, for a
/// value longer than [`LARGE_VALUE`] bytes, as the hex blake3 hash of that text. (Until
/// schema 9 such values were stored as objects named by that hash, and the hash fed the
/// row's columns: this is the same hash of every change stored then.)
pub(super) struct TxHasher {
    h: blake3::Hasher,
    id: i64,
}

impl TxHasher {
    /// Starts the hash of transaction `id`, whose `tx` row is stored.
    pub(super) fn begin(conn: &Connection, id: i64) -> Result<Self> {
        let (at, actor, reason, kind): (String, String, Option<String>, String) = conn
            .prepare_cached("SELECT at, actor, reason, kind FROM tx WHERE id = ?1")?
            .query_row([id], |r| r.try_into())?;
        Self::of(
            conn,
            id,
            [Some(&at), Some(&actor), reason.as_deref(), Some(&kind)],
        )
    }

    /// [`TxHasher::begin`] for transaction `info`, whose row this write inserted with
    /// these very texts ([`super::write`]): the row is not read back.
    pub(super) fn begin_written(conn: &Connection, info: &crate::model::TxInfo) -> Result<Self> {
        Self::of(
            conn,
            info.id,
            [
                Some(&info.at.to_string()),
                Some(&info.actor),
                info.reason.as_deref(),
                Some(&info.kind),
            ],
        )
    }

    /// The hasher of transaction `id` whose row holds `fields` (at, actor, reason, kind).
    fn of(conn: &Connection, id: i64, fields: [Option<&str>; 4]) -> Result<Self> {
        let prev: Option<Vec<u8>> = conn
            .prepare_cached("SELECT hash FROM tx WHERE id < ?1 ORDER BY id DESC LIMIT 1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let mut h = blake3::Hasher::new();
        feed(&mut h, prev.as_deref());
        h.update(&id.to_le_bytes());
        for field in fields {
            feed(&mut h, field.map(str::as_bytes));
        }
        Ok(Self { h, id })
    }

    pub(super) fn change(
        &mut self,
        key: &str,
        seq: i64,
        path: &str,
        op: &str,
        values: [Option<&str>; 2],
    ) {
        fn small(v: Option<&str>) -> Option<&str> {
            v.filter(|t| t.len() <= LARGE_VALUE)
        }
        let large = |v: Option<&str>| {
            v.filter(|t| t.len() > LARGE_VALUE)
                .map(|t| ObjectId::of(t.as_bytes()).to_hex())
        };
        let [old, new] = values;
        let (old_hash, new_hash) = (large(old), large(new));
        self.h.update(b"c");
        self.h.update(&seq.to_le_bytes());
        feed(&mut self.h, Some(key.as_bytes()));
        for field in [
            Some(path),
            Some(op),
            small(old),
            small(new),
            old_hash.as_deref(),
            new_hash.as_deref(),
        ] {
            feed(&mut self.h, field.map(str::as_bytes));
        }
    }

    /// The transaction's changes as stored, in either tier.
    fn stored_changes(&mut self, store: &Store) -> Result<()> {
        for (key, c) in store.tx_changes(self.id)? {
            let old = store.value_text(c.old)?;
            let new = store.value_text(c.new)?;
            self.change(
                &key,
                c.seq,
                &c.path,
                c.op.as_str(),
                [old.as_deref(), new.as_deref()],
            );
        }
        Ok(())
    }

    /// Feeds the rows of the smaller tables the transaction wrote, and ends the hash.
    /// The hash, over the records (rules, forgets, renames, compactions) stored with the
    /// transaction; `records`: whether it has any (a write knows: it read none back).
    pub(super) fn finish(mut self, conn: &Connection, records: bool) -> Result<[u8; 32]> {
        if !records {
            return Ok(*self.h.finalize().as_bytes());
        }
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

impl Store {
    /// The chained hash of transaction `id`, computed from the rows stored for it.
    pub(crate) fn computed_tx_hash(&self, id: i64) -> Result<[u8; 32]> {
        tx_hash(self, id)
    }
}

impl WriteTxn<'_> {
    /// Recomputes the hash chain from transaction `from` on (after `gc` rewrote rows).
    pub(crate) fn rechain(&self, from: i64) -> Result<()> {
        let conn = self.conn();
        let ids: Vec<i64> = {
            let mut stmt = conn.prepare("SELECT id FROM tx WHERE id >= ?1 ORDER BY id")?;
            stmt.query_map([from], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut update = conn.prepare_cached("UPDATE tx SET hash = ?1 WHERE id = ?2")?;
        for id in ids {
            let hash = tx_hash(self.store(), id)?;
            update.execute(params![hash.to_vec(), id])?;
        }
        Ok(())
    }
}
