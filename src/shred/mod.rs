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
pub(crate) mod seal;

pub use age::secrecy::SecretString;

pub use crate::error::Protection;

/// How to protect `keys.db` ([`crate::Repo::init_with`], [`crate::Repo::protect_keys`]).
#[derive(Clone)]
pub enum KeyProtection {
    /// A new age identity stored in `keys.db` (file permissions protect it).
    Repository,
    /// The age identity in this file, outside the repository; a missing file is created
    /// (owner-only) with a new identity.
    IdentityFile(std::path::PathBuf),
    /// A passphrase (age's scrypt).
    Passphrase(SecretString),
}

impl std::fmt::Debug for KeyProtection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyProtection::Repository => f.write_str("Repository"),
            KeyProtection::IdentityFile(p) => f.debug_tuple("IdentityFile").field(p).finish(),
            KeyProtection::Passphrase(_) => f.write_str("Passphrase(…)"),
        }
    }
}

/// What unlocks a `keys.db` whose key is kept outside the repository
/// ([`crate::Repo::set_key_access`]). Without it, reads and writes of personal values fail
/// with [`ShredError::Locked`]; everything else works.
#[derive(Clone, Default)]
pub struct KeyAccess {
    /// An age identity file.
    pub identity: Option<std::path::PathBuf>,
    /// A passphrase.
    pub passphrase: Option<SecretString>,
}

impl KeyAccess {
    /// Checks what can be checked before the key is needed: that the identity file given
    /// exists (a program that links hist says so when it opens a repository, not at the
    /// first personal value).
    pub fn check(&self) -> Result<()> {
        match self.identity.as_ref().filter(|file| !file.is_file()) {
            Some(file) => Err(ShredError::WrongKey(format!(
                "the identity file {} does not exist; give the file that `hist init \
                 --identity` or `hist keys` wrote",
                file.display()
            ))
            .into()),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for KeyAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyAccess")
            .field("identity", &self.identity)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "…"))
            .finish()
    }
}

pub use crate::error::ShredError;
pub(crate) use keys::Keys;
pub use seal::{FORGOTTEN, RAW_MAGIC, SEALED, forgotten_marker};

use crate::canon::Value;
use crate::error::{Error, Result};
use crate::model::Change;
use crate::path::{DocPath, PathPattern, PatternSegment};
use crate::rules::{Rule, RuleKind, glob_matches};
use crate::store::Store;
use keys::Secret;
use std::ops::ControlFlow;

/// Called when a repository is opened: the keys of forgotten subjects are deleted before
/// anything is read.
///
/// `hist.db` needs no `secure_delete`: personal values are sealed before they reach it, so
/// its free pages never hold plaintext (zeroing them doubled the pages a large snapshot
/// writes). `keys.db` has it on (`keys.rs`).
pub(crate) fn on_open(keys: &Keys, store: &Store, create: Option<&KeyProtection>) -> Result<()> {
    if let Some(protection) = create {
        keys.create(protection)?;
    }
    keys.shred_forgotten(store)?;
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
pub(crate) fn open_sealed(
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
        match open_sealed(value, keys, fresh, hist) {
            Ok(Some(plain)) => *value = plain,
            Ok(None) => {}
            // Locked (the key kept outside, not given): the value stays sealed, as it is
            // stored; a write that leaves it alone needs no key.
            Err(Error::Shred(ShredError::Locked(_))) => {}
            Err(e) => return Err(e),
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

#[cfg(test)]
mod tests;
