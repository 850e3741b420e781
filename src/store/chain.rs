//! The hash chain: each transaction stores `blake3(previous hash ‖ its fields ‖ its change
//! rows ‖ its records)`, so a row altered outside `hist` (a raw `UPDATE` in the sqlite3
//! shell) breaks the chain at that transaction. What the hash covers is defined here once:
//! a commit feeds the change rows as it inserts them, [`tx_hash`] reads them back (`fsck`
//! compares the two), and `gc` re-chains after rewriting rows ([`Store::rechain`]).

use super::{Store, WriteTxn};
use crate::error::{Error, Result};
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

/// The chained hash of transaction `id`, computed from the rows stored for it.
pub(super) fn tx_hash(conn: &Connection, id: i64) -> Result<[u8; 32]> {
    let mut h = TxHasher::begin(conn, id)?;
    h.stored_changes(conn)?;
    h.finish(conn)
}

/// A transaction's chained hash, fed in order: the previous transaction's hash and this
/// one's fields, its change rows in the order of their ids, then its rule, forget, rename
/// and compaction rows. A commit feeds the change rows as it inserts them; [`tx_hash`]
/// reads them back, and `fsck` compares the two.
pub(super) struct TxHasher {
    h: blake3::Hasher,
    id: i64,
}

impl TxHasher {
    /// Starts the hash of transaction `id`, whose `tx` row is stored.
    pub(super) fn begin(conn: &Connection, id: i64) -> Result<Self> {
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
    pub(super) fn change(&mut self, key: &str, seq: i64, fields: [Option<&str>; 6]) {
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
    pub(super) fn finish(mut self, conn: &Connection) -> Result<[u8; 32]> {
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
        tx_hash(&self.conn, id)
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
            let hash = tx_hash(conn, id)?;
            update.execute(params![hash.to_vec(), id])?;
        }
        Ok(())
    }
}
