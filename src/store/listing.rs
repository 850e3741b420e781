//! Listing keys: the documents that exist now, or after a past transaction, each with the
//! transaction of its last change (`hist ls`).

use super::txlog::tx_at_column;
use super::{Store, corrupt};
use crate::error::Result;
use crate::model::{Op, TxInfo};
use rusqlite::params;

impl Store {
    /// Every key whose current document exists, sorted, with the transaction of its last
    /// change.
    pub(crate) fn listed_now(&self) -> Result<Vec<(String, TxInfo)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.key, t.id, t.at, t.actor, t.reason, t.kind
             FROM doc d JOIN tx t ON t.id = d.tx
             WHERE d.doc IS NOT NULL ORDER BY d.key",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push((r.get(0)?, tx_at_column(r, 1)?));
        }
        Ok(out)
    }

    /// Every key whose document existed right after transaction `bound`, sorted, with the
    /// transaction of its last change up to then. A key's document is absent after a
    /// transaction whose last change to it removed it whole.
    pub(crate) fn listed_at(&self, bound: i64) -> Result<Vec<(String, TxInfo)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT k.id, v.last_seq, k.key, t.id, t.at, t.actor, t.reason, t.kind
             FROM change_key k
             JOIN version v ON v.key_id = k.id AND v.tx = (
                 SELECT max(tx) FROM version WHERE key_id = k.id AND tx <= ?1)
             JOIN tx t ON t.id = v.tx
             ORDER BY k.key",
        )?;
        let mut rows = stmt.query(params![bound])?;
        let mut found: Vec<(i64, i64, String, TxInfo)> = Vec::new();
        while let Some(r) = rows.next()? {
            found.push((r.get(0)?, r.get(1)?, r.get(2)?, tx_at_column(r, 3)?));
        }
        drop(rows);
        let mut out = Vec::with_capacity(found.len());
        for (key_id, seq, key, tx) in found {
            let last = self.change_head(key_id, seq)?;
            if last.tx != tx.id {
                return Err(corrupt(format!(
                    "change {seq} of {key} belongs to tx {}, its version row says tx {}",
                    last.tx, tx.id
                )));
            }
            if !(last.op == Op::Remove && last.path.is_empty()) {
                out.push((key, tx));
            }
        }
        Ok(out)
    }
}
