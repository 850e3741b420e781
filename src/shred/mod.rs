//! Crypto-shredding: personal paths, per-subject keys, `forget`, and backups that forget.
//!
//! # Terms
//!
//! - **Personal rule**: `personal PATTERN [--keys GLOB] [--subject-from PATH]`. Values at
//!   paths matching the pattern are personal data. It must be declared before the first
//!   write that touches those paths: declaring it over plaintext already in the log is
//!   refused ([`ShredError::PlaintextInLog`]), since an append-only log cannot take it back.
//! - **Subject**: whose data a personal value is: the document key, or the value (a string
//!   or a number) at the rule's `--subject-from` path in the same document.
//! - **Subject id**: 32 hex digits, a keyed blake3 hash of the subject (the key lives in
//!   `keys.db`). The log names subjects only by id, so it holds no personal data even when
//!   the subject itself is (an e-mail address, a customer number).
//! - **Sealed value**: what the log, current state, checkpoints, objects and `hist sql` hold
//!   in place of a personal value: the string `"$hist:sealed:<subject id>:<base64>"`
//!   (see [`seal`] for the construction).
//! - **Forgotten marker**: what every read shows in place of a value whose key is gone:
//!   `{"$hist:forgotten": true}` ([`forgotten_marker`]).
//!
//! # Where it plugs in
//!
//! Writes seal personal values right after a document is built and before it is
//! canonicalized, diffed, hashed or stored (`Txn::put`, `Txn::set`…), so nothing downstream
//! ever sees plaintext. Sealing is deterministic per subject, so an unchanged value stays
//! byte-equal and an unchanged snapshot is still "unchanged". Reads ([`Repo::current`],
//! [`Repo::as_of`], [`Repo::history`], [`Repo::log`] with changes) compute on the sealed
//! form, then unseal their result in one place ([`Repo::unseal`]).
//!
//! # Forget
//!
//! [`Repo::forget`] logs a `forget` transaction with a row in `forgotten(subject, tx)` (the
//! subject id only), then deletes the subject's key from `keys.db`. Every open deletes any
//! key the log says was forgotten, so a `keys.db` restored from an older backup is shredded
//! again before anything is read. A key made after a forget (the subject's data came back)
//! is new and unaffected.
//!
//! # Costs (measured by `cargo test --release --lib shred::tests::cost -- --nocapture`)
//!
//! A sealed value is `46 + 4/3 × (40 + n)` bytes of JSON text for `n` bytes of canonical
//! plaintext: 24 bytes of nonce and 16 of tag, base64, plus the prefix and subject id.
//! Sealing or opening one small value takes about a microsecond; the one age decryption
//! (of the master key) happens once per process that reads personal values.

mod keys;
mod seal;

pub(crate) use keys::Keys;
pub use seal::{FORGOTTEN, RAW_MAGIC, SEALED, forgotten_marker};

use crate::canon::Value;
use crate::error::{Error, Result};
use crate::model::{Change, TxInfo};
use crate::path::{DocPath, PathPattern, PatternSegment};
use crate::repo::{HIST_DIR, Repo, TxOptions};
use crate::rules::{Rule, RuleKind, glob_matches};
use crate::store::Store;
use crate::store::objects::Objects;
use keys::Secret;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Why a crypto-shredding operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShredError {
    /// `keys.db` is not there, but sealed values need it.
    #[error("{} is missing; it holds the keys of the personal values", .0.display())]
    KeysMissing(PathBuf),
    /// Something cryptographic failed (a damaged `keys.db`, no randomness).
    #[error("{0}")]
    Crypto(String),
    /// A personal rule over values that are already in the log in plaintext.
    #[error(
        "cannot declare {pattern} personal: {count} {changes} in the log (the first: {key}, tx {tx}) \
         already {hold} plaintext there",
        changes = if *count == 1 { "change" } else { "changes" },
        hold = if *count == 1 { "holds" } else { "hold" },
    )]
    PlaintextInLog {
        /// The rule's pattern.
        pattern: String,
        /// How many change rows hold plaintext there.
        count: usize,
        /// The first such row's key…
        key: String,
        /// …and transaction.
        tx: i64,
    },
    /// A personal value whose subject cannot be read from the document.
    #[error(
        "{key}: the personal value at {pattern} takes its subject from {from}, \
         where the document holds no string or number"
    )]
    NoSubject {
        /// The document.
        key: String,
        /// Where the personal value is.
        pattern: String,
        /// The rule's `--subject-from`.
        from: String,
    },
    /// `forget` of a subject that has no key.
    #[error("no personal values of subject {0:?} are stored")]
    UnknownSubject(String),
    /// `forget` of a subject that was forgotten and has no new values.
    #[error("subject {subject:?} was already forgotten in tx {tx}")]
    AlreadyForgotten {
        /// The subject.
        subject: String,
        /// The forget.
        tx: i64,
    },
    /// A backup to a place that already holds one.
    #[error("{} already exists; a backup goes to a new place", .0.display())]
    BackupExists(PathBuf),
    /// A sealed value that its subject's key does not open (and the subject was never
    /// forgotten): damage.
    #[error("a sealed value of subject {0} does not decrypt with its key")]
    Damaged(String),
}

impl ShredError {
    /// A hint for the person at the terminal.
    pub fn hint(&self) -> Option<&'static str> {
        Some(match self {
            ShredError::KeysMissing(_) => {
                "restore keys.db from a backup (`hist backup DIR` writes one); without it the personal values cannot be read"
            }
            ShredError::PlaintextInLog { .. } => {
                "personal paths are declared before the first write that touches them; the log is append-only, so values already in it cannot be encrypted afterwards. Declare the rule in a new repository and import the data there"
            }
            ShredError::NoSubject { .. } => {
                "write the subject field in the same document, or declare the rule without --subject-from (the subject is then the document key)"
            }
            ShredError::UnknownSubject(_) => {
                "the subject is the document key, or the value at the rule's --subject-from path; `hist rules` lists the personal rules"
            }
            _ => return None,
        })
    }
}

/// What [`Repo::forget`] did.
#[derive(Clone, Debug)]
pub struct Forgotten {
    /// The subject id the log names.
    pub subject_id: String,
    /// The `forget` transaction.
    pub tx: TxInfo,
}

/// What [`Repo::backup`] wrote.
#[derive(Clone, Debug)]
pub struct Backup {
    /// The new `.hist` directory.
    pub dir: PathBuf,
    /// How many objects were copied.
    pub objects: usize,
    /// Where the keys went (`None`: the repository has no `keys.db`).
    pub keys: Option<PathBuf>,
}

/// Called when a repository is opened: the keys of forgotten subjects are deleted before
/// anything is read.
///
/// `hist.db` needs no `secure_delete`: personal values are sealed before they reach it, so
/// its free pages never hold plaintext (zeroing them doubled the pages a large snapshot
/// writes). `keys.db` has it on (`keys.rs`).
pub(crate) fn on_open(repo: &Repo, create: bool) -> Result<()> {
    if create {
        repo.keys.create()?;
    }
    repo.keys.shred_forgotten(&repo.store)?;
    Ok(())
}

/// New data keys made while a transaction seals values; stored before it commits.
#[derive(Default)]
pub(crate) struct FreshKeys {
    pub(crate) keys: Vec<(String, Secret)>,
    pub(crate) warnings: Vec<String>,
}

/// The personal rules that apply to `key`: (pattern, subject-from), in declaration order.
pub(crate) fn personal_rules<'r>(
    rules: &'r [Rule],
    key: &str,
) -> Vec<(&'r [PatternSegment], Option<&'r DocPath>)> {
    rules
        .iter()
        .filter(|r| r.applies_to_key(key))
        .filter_map(|r| match &r.kind {
            RuleKind::Personal { subject_from } => {
                Some((r.pattern.segments(), subject_from.as_ref()))
            }
            _ => None,
        })
        .collect()
}

fn subject_text(value: Option<&Value>) -> Option<String> {
    match value? {
        v @ Value::String(s) if seal::as_sealed(v).is_none() => Some(s.clone()),
        n @ Value::Number(_) => Some(crate::canon::to_canonical_string(n)),
        _ => None,
    }
}

/// Seals every personal value of `doc` (the document under `key`) that is not sealed yet.
pub(crate) fn seal_doc(
    doc: &mut Value,
    key: &str,
    rules: &[Rule],
    keys: &Keys,
    fresh: &mut FreshKeys,
    hist: &Store,
) -> Result<()> {
    let personal = personal_rules(rules, key);
    if personal.is_empty() {
        return Ok(());
    }
    let subjects: Vec<Option<String>> = personal
        .iter()
        .map(|(_, from)| match from {
            None => Some(key.to_owned()),
            Some(p) => subject_text(crate::diff::get(doc, p.segments())),
        })
        .collect();
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut seal_one = |i: usize, value: &mut Value, shape: &[PatternSegment]| -> Result<()> {
        if seal::as_sealed(value).is_some() {
            return Ok(());
        }
        let Some(subject) = subjects[i].as_deref() else {
            return Err(ShredError::NoSubject {
                key: key.to_owned(),
                pattern: PathPattern::from_segments(shape.to_vec()).to_string(),
                from: personal[i].1.map(ToString::to_string).unwrap_or_default(),
            }
            .into());
        };
        let sid = match ids.iter().find(|(s, _)| s == subject) {
            Some((_, sid)) => sid.clone(),
            None => {
                let sid = keys.subject_id(subject)?;
                ids.push((subject.to_owned(), sid.clone()));
                sid
            }
        };
        let data_key = data_key_for(key, subject, &sid, keys, fresh, hist)?;
        *value = seal::seal(value, &sid, &data_key)?;
        Ok(())
    };
    let mut shape = Vec::new();
    seal_walk(doc, &mut shape, &personal, &mut seal_one)
}

/// The data key of a subject: the one made earlier in this transaction, the stored one, or
/// a new one (stored when the transaction commits).
fn data_key_for(
    key: &str,
    subject: &str,
    sid: &str,
    keys: &Keys,
    fresh: &mut FreshKeys,
    hist: &Store,
) -> Result<Secret> {
    if let Some((_, k)) = fresh.keys.iter().find(|(s, _)| s == sid) {
        return Ok(*k);
    }
    if let Some(k) = keys.get(sid)? {
        return Ok(k);
    }
    let k = keys::random_secret()?;
    if let Some(tx) = hist.forgotten_in(sid)? {
        fresh.warnings.push(format!(
            "{key}: subject {subject} was forgotten in tx {tx}; its new personal values get a new key"
        ));
    }
    fresh.keys.push((sid.to_owned(), k));
    Ok(k)
}

/// Seals the raw bytes of a tracked file stored under `key` (its parsed document: `doc`)
/// when a personal rule applies to `key`, for the subject of the rule declared last;
/// returns them as they are otherwise.
pub(crate) fn seal_raw(
    bytes: &[u8],
    key: &str,
    doc: Option<&Value>,
    rules: &[Rule],
    keys: &Keys,
    fresh: &mut FreshKeys,
    hist: &Store,
) -> Result<Vec<u8>> {
    let personal = personal_rules(rules, key);
    let Some((pattern, from)) = personal.last() else {
        return Ok(bytes.to_vec());
    };
    let subject = match from {
        None => Some(key.to_owned()),
        Some(p) => subject_text(doc.and_then(|d| crate::diff::get(d, p.segments()))),
    };
    let subject = subject.ok_or_else(|| ShredError::NoSubject {
        key: key.to_owned(),
        pattern: PathPattern::from_segments(pattern.to_vec()).to_string(),
        from: from.map(ToString::to_string).unwrap_or_default(),
    })?;
    let sid = keys.subject_id(&subject)?;
    let data_key = data_key_for(key, &subject, &sid, keys, fresh, hist)?;
    Ok(seal::seal_bytes(bytes, &sid, &data_key)?)
}

/// Calls `seal_one` on every value of `value` at a personal path (not below one).
fn seal_walk(
    value: &mut Value,
    shape: &mut Vec<PatternSegment>,
    personal: &[(&[PatternSegment], Option<&DocPath>)],
    seal_one: &mut impl FnMut(usize, &mut Value, &[PatternSegment]) -> Result<()>,
) -> Result<()> {
    // The rule declared last wins, as for the other rule families.
    if let Some(i) = personal.iter().rposition(|(p, _)| *p == shape.as_slice()) {
        return seal_one(i, value, shape);
    }
    if !personal
        .iter()
        .any(|(p, _)| p.len() > shape.len() && p.starts_with(shape))
    {
        return Ok(());
    }
    match value {
        Value::Object(map) => {
            for (name, child) in map.iter_mut() {
                shape.push(PatternSegment::Field(name.clone()));
                let r = seal_walk(child, shape, personal, seal_one);
                shape.pop();
                r?;
            }
        }
        Value::Array(items) => {
            shape.push(PatternSegment::AnyElement);
            let r = items
                .iter_mut()
                .try_for_each(|item| seal_walk(item, shape, personal, seal_one));
            shape.pop();
            r?;
        }
        _ => {}
    }
    Ok(())
}

/// The plaintext of a sealed value; `None` when its key is gone (forgotten, or a newer key
/// made after a forget). A key that exists but does not open it, for a subject never
/// forgotten, is damage.
fn open_sealed(
    value: &Value,
    keys: &Keys,
    fresh: &FreshKeys,
    hist: &Store,
) -> Result<Option<Value>> {
    let Some((blob, sid)) = seal::as_sealed(value) else {
        return Ok(None);
    };
    let key = match fresh.keys.iter().find(|(s, _)| s == sid) {
        Some((_, k)) => Some(*k),
        None => keys.get(sid)?,
    };
    if let Some(plain) = key.as_ref().and_then(|k| seal::open(blob, sid, k)) {
        return Ok(Some(plain));
    }
    if key.is_some() && hist.forgotten_in(sid)?.is_none() {
        return Err(ShredError::Damaged(sid.to_owned()).into());
    }
    Ok(None)
}

/// Replaces every sealed value in `value` by its plaintext, or by the forgotten marker
/// (`fresh`: keys made by the transaction in progress, not stored yet). For reads.
pub(crate) fn unseal_in(
    value: &mut Value,
    keys: &Keys,
    fresh: &FreshKeys,
    hist: &Store,
) -> Result<()> {
    if !keys.personal_seen(hist)? {
        return Ok(());
    }
    seal::for_each_sealed(value, &mut |v| {
        *v = open_sealed(v, keys, fresh, hist)?.unwrap_or_else(forgotten_marker);
        Ok(())
    })
}

/// A write's view of the document under `key`: the sealed values at personal paths that
/// can be read are unsealed (sealing them again gives the same bytes); every other sealed
/// value stays as it is, so that a write never stores a personal value in plaintext, not
/// even one that a rename moved to a path no rule covers.
pub(crate) fn working_view(
    doc: &mut Value,
    key: &str,
    rules: &[Rule],
    keys: &Keys,
    fresh: &FreshKeys,
    hist: &Store,
) -> Result<()> {
    let personal = personal_rules(rules, key);
    if personal.is_empty() {
        return Ok(());
    }
    let mut open_one = |_: usize, value: &mut Value, _: &[PatternSegment]| -> Result<()> {
        if let Some(plain) = open_sealed(value, keys, fresh, hist)? {
            *value = plain;
        }
        Ok(())
    };
    seal_walk(doc, &mut Vec::new(), &personal, &mut open_one)
}

/// Unseals the values of a change for display (forgotten values as the marker).
pub(crate) fn unseal_change_in(
    change: &mut Change,
    keys: &Keys,
    fresh: &FreshKeys,
    hist: &Store,
) -> Result<()> {
    for v in [&mut change.old, &mut change.new].into_iter().flatten() {
        unseal_in(v, keys, fresh, hist)?;
    }
    Ok(())
}

/// [`unseal_change_in`] for a change whose values are canonical text: only a value that
/// holds a sealed value is parsed (and written back unsealed).
pub(crate) fn unseal_change_text(
    change: &mut crate::model::ChangeText,
    keys: &Keys,
    fresh: &FreshKeys,
    hist: &Store,
) -> Result<()> {
    for text in [&mut change.old, &mut change.new].into_iter().flatten() {
        if text.contains(SEALED) && keys.personal_seen(hist)? {
            let mut value = crate::store::parse_stored(text)?;
            unseal_in(&mut value, keys, fresh, hist)?;
            *text = crate::canon::to_canonical_string(&value);
        }
    }
    Ok(())
}

/// Refuses a personal rule over paths that already hold plaintext in the log.
pub(crate) fn check_no_plaintext(
    store: &Store,
    pattern: &PathPattern,
    keys: Option<&str>,
) -> Result<()> {
    let target = pattern.segments();
    let mut count = 0;
    let mut first = None;
    store.each_change(None, |tx, key, stored| {
        if keys.is_some_and(|glob| !glob_matches(glob, &key)) || stored.op == crate::Op::Move {
            return Ok::<_, Error>(ControlFlow::Continue(()));
        }
        let change = store.load_change(stored)?;
        let shape = change.path.to_pattern().segments().to_vec();
        let plain = [&change.old, &change.new]
            .into_iter()
            .flatten()
            .any(|v| holds_plain(v, &mut shape.clone(), target));
        if plain {
            count += 1;
            if first.is_none() {
                first = Some((key, tx.id));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    match first {
        None => Ok(()),
        Some((key, tx)) => Err(ShredError::PlaintextInLog {
            pattern: pattern.to_string(),
            count,
            key,
            tx,
        }
        .into()),
    }
}

/// True when `value`, found at `shape`, holds an unsealed value at `target` (or is inside
/// one).
fn holds_plain(value: &Value, shape: &mut Vec<PatternSegment>, target: &[PatternSegment]) -> bool {
    if shape.len() >= target.len() {
        return shape.starts_with(target)
            && !(shape.len() == target.len() && seal::as_sealed(value).is_some());
    }
    if !target.starts_with(shape) {
        return false;
    }
    match value {
        Value::Object(map) => map.iter().any(|(name, child)| {
            shape.push(PatternSegment::Field(name.clone()));
            let found = holds_plain(child, shape, target);
            shape.pop();
            found
        }),
        Value::Array(items) => {
            shape.push(PatternSegment::AnyElement);
            let found = items.iter().any(|item| holds_plain(item, shape, target));
            shape.pop();
            found
        }
        _ => false,
    }
}

impl Repo {
    /// Replaces every sealed value in `value` by its plaintext, or by the forgotten marker
    /// `{"$hist:forgotten": true}` when its subject was forgotten. Reads do this already;
    /// it is for values taken from the log some other way.
    pub fn unseal(&self, value: &mut Value) -> Result<()> {
        let none = FreshKeys::default();
        unseal_in(value, &self.keys, &none, &self.store)
    }

    /// [`Repo::unseal`] for an optional document.
    pub(crate) fn unseal_doc(&self, mut doc: Option<Value>) -> Result<Option<Value>> {
        if let Some(d) = doc.as_mut() {
            self.unseal(d)?;
        }
        Ok(doc)
    }

    /// [`Repo::unseal`] for the values of a change.
    pub(crate) fn unseal_change(&self, mut change: Change) -> Result<Change> {
        let none = FreshKeys::default();
        unseal_change_in(&mut change, &self.keys, &none, &self.store)?;
        Ok(change)
    }

    /// The original bytes of raw bytes stored by [`crate::Txn::seal_raw`] (a tracked file's
    /// bytes); `None` when their subject was forgotten. Bytes that were not sealed come back
    /// as they are.
    pub fn unseal_raw(&self, stored: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let Some((sid, blob)) = seal::as_sealed_bytes(&stored) else {
            return Ok(Some(stored));
        };
        let key = self.keys.get(sid)?;
        if let Some(plain) = key.as_ref().and_then(|k| seal::open_bytes(blob, sid, k)) {
            return Ok(Some(plain));
        }
        if key.is_some() && self.store.forgotten_in(sid)?.is_none() {
            return Err(ShredError::Damaged(sid.to_owned()).into());
        }
        Ok(None)
    }

    /// The id under which the log knows `subject`.
    pub fn subject_id(&self, subject: &str) -> Result<String> {
        self.keys.subject_id(subject)
    }

    /// Forgets a subject: logs a `forget` transaction naming it (by id) and deletes its
    /// key, so that every personal value of the subject, now and in all of history, reads
    /// as forgotten. Refused when the subject has no key (nothing stored, or already
    /// forgotten).
    pub fn forget(&mut self, opts: TxOptions, subject: &str) -> Result<Forgotten> {
        let sid = self.keys.subject_id(subject)?;
        if self.keys.get(&sid)?.is_none() {
            return Err(match self.store.forgotten_in(&sid)? {
                Some(tx) => ShredError::AlreadyForgotten {
                    subject: subject.to_owned(),
                    tx,
                },
                None => ShredError::UnknownSubject(subject.to_owned()),
            }
            .into());
        }
        let mut opts = opts;
        "forget".clone_into(&mut opts.kind);
        let mut txn = self.begin(opts)?;
        txn.forget_subject(sid.clone());
        let commit = txn.commit()?;
        let tx = commit
            .tx
            .ok_or_else(|| Error::Corrupt("a forget recorded no transaction".into()))?;
        self.keys.shred_forgotten(&self.store)?;
        Ok(Forgotten {
            subject_id: sid,
            tx,
        })
    }

    /// Writes a consistent copy of the repository to `DIR/.hist` (the log through SQLite's
    /// backup API, then every object), with the keys in a separate file: `keys_to`, or
    /// `DIR/.hist/keys.db`. Refused when either already exists.
    pub fn backup(&self, dir: &Path, keys_to: Option<&Path>) -> Result<Backup> {
        let dest = dir.join(HIST_DIR);
        let keys_dest = keys_to.map_or_else(|| dest.join("keys.db"), Path::to_path_buf);
        for taken in [&dest, &keys_dest] {
            if taken.exists() {
                return Err(ShredError::BackupExists(taken.clone()).into());
            }
        }
        let objects_dest = dest.join("objects");
        std::fs::create_dir_all(&objects_dest).map_err(Error::io(&objects_dest))?;
        self.store.backup_db(&dest.join("hist.db"))?;
        // Objects are immutable and written before the rows that name them, so every
        // object the copied log needs is there now.
        let objects = self.store.objects();
        let ids = objects.list().map_err(Error::io(objects.dir()))?;
        let copy = Objects::new(objects_dest);
        for id in &ids {
            let to = copy.path_of(id);
            if let Some(shard) = to.parent() {
                std::fs::create_dir_all(shard).map_err(Error::io(shard))?;
            }
            std::fs::copy(objects.path_of(id), &to).map_err(Error::io(&to))?;
        }
        let keys = if self.keys.path().is_file() {
            if let Some(parent) = keys_dest.parent() {
                std::fs::create_dir_all(parent).map_err(Error::io(parent))?;
            }
            self.keys.backup_to(&keys_dest)?;
            Some(keys_dest)
        } else {
            None
        };
        Ok(Backup {
            dir: dest,
            objects: ids.len(),
            keys,
        })
    }
}

impl Repo {
    /// For `fsck`: every sealed value in the log opens with its subject's key, or its
    /// subject was forgotten. Problems are added to `problems`, one sentence per subject.
    pub(crate) fn check_sealed(&self, problems: &mut Vec<String>) -> Result<()> {
        if !self.keys.personal_seen(&self.store)? {
            return Ok(());
        }
        if !self.keys.path().is_file() {
            problems.push(format!(
                "{} is missing: no personal value can be read",
                self.keys.path().display()
            ));
            return Ok(());
        }
        let none = FreshKeys::default();
        // Per subject: how many values, and whether their key is missing (or damaged).
        let mut bad: std::collections::BTreeMap<String, (usize, bool)> = Default::default();
        self.store.each_change(None, |_, _, stored| {
            let change = self.store.load_change(stored)?;
            for mut value in [change.old, change.new].into_iter().flatten() {
                seal::for_each_sealed(&mut value, &mut |v| {
                    let sid = seal::as_sealed(v).map_or("", |(_, sid)| sid).to_owned();
                    let what = match open_sealed(v, &self.keys, &none, &self.store) {
                        Ok(Some(_)) => return Ok(()),
                        Ok(None) if self.store.forgotten_in(&sid)?.is_some() => return Ok(()),
                        Ok(None) => true,
                        Err(Error::Shred(ShredError::Damaged(_))) => false,
                        Err(e) => return Err(e),
                    };
                    bad.entry(sid).or_insert((0, what)).0 += 1;
                    Ok(())
                })?;
            }
            Ok::<_, Error>(ControlFlow::Continue(()))
        })?;
        for (sid, (n, missing)) in bad {
            let (values, what) = match (n, missing) {
                (1, true) => ("value has", "no key, and the subject was never forgotten"),
                (_, true) => ("values have", "no key, and the subject was never forgotten"),
                (1, false) => ("value does", "not decrypt with its key"),
                (_, false) => ("values do", "not decrypt with their key"),
            };
            problems.push(format!("subject {sid}: {n} sealed {values} {what}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
