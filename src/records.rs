//! The JSON records hist answers with: what `hist … --json` prints, one object per line
//! (NDJSON), and what the C ABI, Go and Python bindings return. One implementation, so that
//! every door names and fills the fields the same way.
//!
//! Field names are a stable contract (DESIGN §5): a change is `at, actor, tx, reason, key,
//! path, op, old, new` (`old` absent for an `add`, `new` for a `remove`); a history entry adds
//! `change_path` and, where they apply, `compacted`, `from` and `to`; a blame leaf is `key,
//! path, value, tx, at, actor, reason, op, change_path` (and `compacted`); an SQL row is one
//! member per column. Every record is written in canonical form ([`crate::canon`]): members
//! sorted, numbers exact.

use crate::blame::BlameLeaf;
use crate::canon::{self, Map, Value};
use crate::history::HistoryEntry;
use crate::model::{Change, ChangeText, Op, TxInfo};
use crate::path::DocPath;
use crate::sql::{QueryResult, SqlValue};
use crate::txn::Written;

/// The record of a change: `at, actor, tx, reason, key, path, op, old, new`.
pub fn change(tx: &TxInfo, key: &str, change: &Change) -> Value {
    let mut obj: Map = change_fields(tx, key, &change.path, change.op)
        .into_iter()
        .map(|(name, v)| (name.to_owned(), v))
        .collect();
    if let Some(old) = &change.old {
        obj.insert("old".into(), old.clone());
    }
    if let Some(new) = &change.new {
        obj.insert("new".into(), new.clone());
    }
    Value::Object(obj)
}

/// [`change`] of a change a write recorded, as canonical text: its values are spliced in as
/// the text they are, never parsed (the first snapshot of a large document is one change
/// whose value is the whole document).
pub fn change_text(tx: &TxInfo, key: &str, change: &ChangeText) -> String {
    let fields: Vec<(&str, String)> = change_fields(tx, key, &change.path, change.op)
        .into_iter()
        .map(|(name, v)| (name, canon::to_canonical_string(&v)))
        .collect();
    let mut members: Vec<(&str, &str)> = fields.iter().map(|(n, t)| (*n, t.as_str())).collect();
    members.extend(change.old.as_deref().map(|t| ("old", t)));
    members.extend(change.new.as_deref().map(|t| ("new", t)));
    canon::object_text(members)
}

/// What a write recorded, as NDJSON: one [`change_text`] line per change, each ending in a
/// newline; empty when nothing was recorded (an unchanged snapshot, a write of the value
/// already there).
pub fn written(written: &Written) -> String {
    let Some(tx) = &written.tx else {
        return String::new();
    };
    written
        .changes
        .iter()
        .map(|(key, c)| change_text(tx, key, c) + "\n")
        .collect()
}

/// The fields of a change record other than its values.
fn change_fields(tx: &TxInfo, key: &str, path: &DocPath, op: Op) -> [(&'static str, Value); 7] {
    [
        ("at", Value::String(tx.at.to_string())),
        ("actor", Value::String(tx.actor.clone())),
        ("tx", Value::from(tx.id)),
        (
            "reason",
            tx.reason.clone().map_or(Value::Null, Value::String),
        ),
        ("key", Value::String(key.to_owned())),
        ("path", Value::String(path.to_string())),
        ("op", Value::String(op.to_string())),
    ]
}

/// The record of one entry of [`Repo::history`](crate::Repo::history) of `key`: a change's
/// fields with `old` and `new` projected onto the path asked about, plus `change_path`
/// (where the change was recorded), `compacted: true` for an entry that stands for several
/// compacted changes, and `from`/`to` for a rename.
pub fn history_entry(key: &str, e: &HistoryEntry) -> Value {
    let mut obj = Map::from_iter([
        ("at".to_owned(), Value::from(e.tx.at.to_string())),
        ("actor".to_owned(), Value::from(&e.tx.actor)),
        ("tx".to_owned(), Value::from(e.tx.id)),
        ("reason".to_owned(), Value::from(e.tx.reason.clone())),
        ("key".to_owned(), Value::from(key)),
        ("path".to_owned(), Value::from(e.path.to_string())),
        ("op".to_owned(), Value::from(e.op.as_str())),
        (
            "change_path".to_owned(),
            Value::from(e.change_path.to_string()),
        ),
    ]);
    if e.compacted {
        obj.insert("compacted".into(), Value::Bool(true));
    }
    if let Some(m) = &e.moved {
        obj.insert("from".into(), Value::String(m.from.to_string()));
        obj.insert("to".into(), Value::String(m.to.to_string()));
    }
    if let Some(old) = &e.old {
        obj.insert("old".into(), old.clone());
    }
    if let Some(new) = &e.new {
        obj.insert("new".into(), new.clone());
    }
    Value::Object(obj)
}

/// The record of one leaf of a [`Blame`](crate::Blame) of `key`: `key, path, value`, and
/// the setter's `tx, at, actor, reason, op, change_path` (all `null` when the log does not
/// explain the leaf), plus `compacted: true` when the setter is the last of several
/// compacted changes.
pub fn blame_leaf(key: &str, leaf: &BlameLeaf) -> Value {
    let mut obj = Map::from_iter([
        ("key".to_owned(), Value::from(key)),
        ("path".to_owned(), Value::from(leaf.path.to_string())),
        ("value".to_owned(), leaf.value.clone()),
        ("tx".to_owned(), Value::Null),
        ("at".to_owned(), Value::Null),
        ("actor".to_owned(), Value::Null),
        ("reason".to_owned(), Value::Null),
        ("op".to_owned(), Value::Null),
        ("change_path".to_owned(), Value::Null),
    ]);
    if let Some(s) = &leaf.setter {
        obj.insert("tx".into(), Value::from(s.tx.id));
        obj.insert("at".into(), Value::String(s.tx.at.to_string()));
        obj.insert("actor".into(), Value::String(s.tx.actor.clone()));
        obj.insert("reason".into(), Value::from(s.tx.reason.clone()));
        obj.insert("op".into(), Value::String(s.op.as_str().to_owned()));
        obj.insert(
            "change_path".into(),
            Value::String(s.change_path.to_string()),
        );
        if s.compacted {
            obj.insert("compacted".into(), Value::Bool(true));
        }
    }
    Value::Object(obj)
}

/// An SQL value as JSON: `null`, a number, a string; a blob as its bytes in lowercase hex.
pub fn sql_value(v: &SqlValue) -> Value {
    match v {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => Value::from(*i),
        SqlValue::Real(f) => canon::number_from_f64(*f).map_or(Value::Null, Value::Number),
        SqlValue::Text(t) => Value::String(t.clone()),
        SqlValue::Blob(b) => Value::String(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

/// The record of one row of a query: one member per column, named as the column.
pub fn sql_row(columns: &[String], row: &[SqlValue]) -> Value {
    Value::Object(
        columns
            .iter()
            .cloned()
            .zip(row.iter().map(sql_value))
            .collect(),
    )
}

/// Every row of a query as NDJSON ([`sql_row`], one line each).
pub fn sql(result: &QueryResult) -> String {
    ndjson(result.rows.iter().map(|row| sql_row(&result.columns, row)))
}

/// Records as NDJSON: each in canonical form on its own line, ending in a newline.
pub fn ndjson(records: impl IntoIterator<Item = Value>) -> String {
    let mut out = String::new();
    for record in records {
        out.push_str(&canon::to_canonical_string(&record));
        out.push('\n');
    }
    out
}
