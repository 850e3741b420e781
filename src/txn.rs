//! Writes: a [`Txn`] names an actor, holds any number of operations on any number of
//! keys, and commits them as one transaction that appends the changes to the log and
//! updates current state together (all or nothing).
//!
//! The transaction works in memory (each key's document as canonical text or a tree, its
//! changes, what it records besides them) and hands the store one [`WriteSet`] to commit
//! ([`crate::store`] writes it in named phases). Personal values are sealed on the way in
//! ([`crate::shred`]).

use crate::canon::Value;
use crate::canon::{self, ObjectId};
use crate::diff::{self, Diff, canonicalize};
use crate::error::{Error, Result, RuleError};
use crate::model::{Change, ChangeText, TxInfo, check_key};
use crate::path::{DocPath, PathPattern};
use crate::rules::{KeyRules, Rename, Rule, RuleKind};
use crate::store::{DocWrite, LastWritten, Record, Store, WriteSet, WriteTxn, parse_stored};
use crate::textdiff;
use std::collections::HashMap;

/// The error for stored text that is not the canonical JSON it must be.
fn corrupt(e: textdiff::MalformedText) -> Error {
    Error::Corrupt(format!("stored document: {e}"))
}

/// What a snapshot given as JSON text is, for [`Txn::put_json`]: the blake3 of the ids of the
/// array rules that apply to `key` (any rule declared or removed changes them) and of its
/// raw bytes.
fn input_id(bytes: &[u8], rules: &[Rule], key: &str) -> Vec<u8> {
    let mut hasher = blake3::Hasher::new();
    for rule in rules
        .iter()
        .filter(|r| r.kind.is_array_rule() && r.applies_to_key(key))
    {
        hasher.update(&rule.id.to_le_bytes());
    }
    hasher.update(b"\0");
    hasher.update(bytes);
    hasher.finalize().as_bytes().to_vec()
}

/// How many arrays and objects are nested at the deepest point of `value`.
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// What a snapshot write found.
#[derive(Clone, Debug, PartialEq)]
pub enum PutOutcome {
    /// Equal to the last snapshot: only a check is recorded.
    Unchanged,
    /// This many changes were recorded ([`Written::changes`] lists them).
    Changed(usize),
}

/// What a committed transaction wrote ([`Txn::commit`]).
#[derive(Clone, Debug, Default)]
pub struct Written {
    /// The transaction, or `None` when nothing changed (nothing was recorded).
    pub tx: Option<TxInfo>,
    /// Every change, with its key, in order; personal values unsealed.
    pub changes: Vec<(String, ChangeText)>,
    /// How many "unchanged" checks were recorded.
    pub checks: usize,
    /// Warnings from diffing (arrays treated as opaque).
    pub warnings: Vec<String>,
}

/// A document as a transaction holds it: the canonical text read from the store (or bound
/// for it), until something needs the parsed value. Snapshots are diffed on the text, so an
/// ingest never builds a tree of either version.
enum DocState {
    Text(Option<String>),
    /// A document a write made, with its canonical text (written once, for its hash and
    /// for storing).
    Both(Option<Value>, Option<String>),
}

impl DocState {
    /// The state of a document a write made, and the hash of its canonical text.
    fn made(value: Option<Value>) -> (Self, Option<Vec<u8>>) {
        let text = value.as_ref().map(canon::to_canonical_string);
        let hash = text.as_ref().map(|t| ObjectId::of(t.as_bytes()).0.to_vec());
        (DocState::Both(value, text), hash)
    }

    /// The parsed document (parsing the text the first time).
    fn value(&mut self) -> Result<Option<&Value>> {
        if let DocState::Text(text) = self {
            let parsed = text.as_deref().map(parse_stored).transpose()?;
            *self = DocState::Both(parsed, text.take());
        }
        Ok(match self {
            DocState::Both(v, _) => v.as_ref(),
            DocState::Text(_) => None,
        })
    }

    /// The canonical text, for storing.
    fn into_text(self) -> Option<String> {
        match self {
            DocState::Text(text) | DocState::Both(_, text) => text,
        }
    }
}

struct Pending {
    key: String,
    doc: DocState,
    hash: Option<Vec<u8>>,
    seq: i64,
    ckpt_seq: i64,
    ckpt_count: i64,
    ckpt_bytes: i64,
    sealed_seq: i64,
    /// Sealed, as they will be stored.
    changes: Vec<ChangeText>,
    /// What `doc` was written from, when it is a snapshot's text ([`input_id`]); `None`
    /// once anything else changes it.
    input: Option<Vec<u8>>,
}

/// A write in progress. Dropping it without [`Txn::commit`] writes nothing.
pub struct Txn<'r> {
    write: WriteTxn<'r>,
    rules: &'r mut Vec<Rule>,
    keys: &'r crate::shred::Keys,
    renames: &'r mut Vec<Rename>,
    info: TxInfo,
    pending: Vec<Pending>,
    index: HashMap<String, usize>,
    checks: Vec<(String, String)>,
    /// What the transaction records besides changes: rules, forgets, renames, compactions.
    records: Vec<Record>,
    pub(crate) warnings: Vec<String>,
    fresh: crate::shred::FreshKeys,
    record_always: bool,
}

impl<'r> Txn<'r> {
    /// A write of transaction `info` in `write`, under the rules and renames in force.
    pub(crate) fn new(
        write: WriteTxn<'r>,
        rules: &'r mut Vec<Rule>,
        keys: &'r crate::shred::Keys,
        renames: &'r mut Vec<Rename>,
        info: TxInfo,
    ) -> Self {
        Self {
            write,
            rules,
            keys,
            renames,
            info,
            pending: Vec::new(),
            index: HashMap::new(),
            checks: Vec::new(),
            records: Vec::new(),
            warnings: Vec::new(),
            fresh: crate::shred::FreshKeys::default(),
            record_always: false,
        }
    }
}

impl Txn<'_> {
    /// The store's write this transaction commits with, for rows of other features that
    /// must commit together with it (tracked files, gc).
    pub(crate) fn write(&self) -> &WriteTxn<'_> {
        &self.write
    }

    /// The store, for reads inside this transaction (they see what it wrote so far).
    pub(crate) fn store(&self) -> &Store {
        self.write.store()
    }

    /// Adds something the transaction records besides changes.
    pub(crate) fn push_record(&mut self, record: Record) {
        self.records.push(record);
    }

    /// The keys of crypto-shredding (`hist keys` moves what protects them).
    pub(crate) fn keys(&self) -> &crate::shred::Keys {
        self.keys
    }

    /// Records the transaction even if it changes no document (a tracked file whose bytes
    /// changed while its parsed content did not).
    pub(crate) fn record_always(&mut self) {
        self.record_always = true;
    }

    /// The transaction being built (its id is the one it will get).
    pub fn info(&self) -> &TxInfo {
        &self.info
    }

    /// The rules in force.
    pub(crate) fn rules(&self) -> &[Rule] {
        self.rules
    }

    /// Sets the transaction's reason (when the caller composes one).
    pub(crate) fn set_reason(&mut self, reason: String) {
        self.info.reason = Some(reason);
    }

    /// The renames in force, including those recorded by this transaction so far.
    pub(crate) fn renames(&self) -> impl Iterator<Item = &Rename> + '_ {
        let added = self.records.iter().filter_map(|r| match r {
            Record::Rename(rename) => Some(rename),
            _ => None,
        });
        self.renames.iter().chain(added)
    }

    /// Records `changes` of `key` whose result is `next` (the caller computed both).
    pub(crate) fn record(
        &mut self,
        key: &str,
        changes: Vec<Change>,
        next: Option<Value>,
    ) -> Result<()> {
        let p = self.pending(key)?;
        (p.doc, p.hash) = DocState::made(next);
        p.input = None;
        p.changes.extend(changes.iter().map(ChangeText::of));
        Ok(())
    }

    /// Every key this transaction has touched so far.
    pub(crate) fn pending_keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.pending.iter().map(|p| p.key.as_str())
    }

    fn pending(&mut self, key: &str) -> Result<&mut Pending> {
        check_key(key)?;
        if let Some(&i) = self.index.get(key) {
            return Ok(&mut self.pending[i]);
        }
        let base = self.write.store().doc_base(key)?;
        self.pending.push(Pending {
            key: key.to_owned(),
            doc: DocState::Text(base.text),
            hash: base.hash,
            seq: base.seq,
            ckpt_seq: base.ckpt_seq,
            ckpt_count: base.ckpt_count,
            ckpt_bytes: base.ckpt_bytes,
            sealed_seq: base.sealed_seq,
            changes: Vec::new(),
            input: None,
        });
        self.index.insert(key.to_owned(), self.pending.len() - 1);
        let last = self.pending.len() - 1;
        Ok(&mut self.pending[last])
    }

    /// The document under `key` as this transaction sees it so far: the personal values
    /// at personal paths unsealed, except those of forgotten subjects, which stay sealed
    /// (and so unchanged), as does any sealed value elsewhere.
    pub fn current(&mut self, key: &str) -> Result<Option<Value>> {
        let mut doc = self.pending(key)?.doc.value()?.cloned();
        if let Some(d) = doc.as_mut() {
            crate::shred::working_view(
                d,
                key,
                self.rules,
                self.keys,
                &self.fresh,
                self.write.store(),
            )?;
        }
        Ok(doc)
    }

    /// Seals the personal values of a document about to be written under `key`.
    fn seal(&mut self, key: &str, doc: &mut Value) -> Result<()> {
        crate::shred::seal_doc(
            doc,
            key,
            self.rules,
            self.keys,
            &mut self.fresh,
            self.write.store(),
        )
    }

    /// The bytes to store for the raw bytes of a tracked file under `key` (its parsed
    /// document: `doc`): sealed with the subject's key when a personal rule applies to
    /// `key`, as they are otherwise. [`Repo::unseal_raw`] reads them back.
    pub fn seal_raw(&mut self, key: &str, doc: Option<&Value>, bytes: &[u8]) -> Result<Vec<u8>> {
        crate::shred::seal_raw(
            bytes,
            key,
            doc,
            self.rules,
            self.keys,
            &mut self.fresh,
            self.write.store(),
        )
    }

    /// Records that subject `sid` is forgotten (with this transaction).
    pub(crate) fn forget_subject(&mut self, sid: String) {
        self.records.push(Record::Forget(sid));
    }

    /// Replaces the whole document under `key` by `next` (`None` removes it), recording the
    /// structural difference. Returns the changes.
    fn replace_doc(&mut self, key: &str, next: Option<Value>) -> Result<Vec<Change>> {
        if let Some(doc) = &next {
            // Field writes and patches can nest deeper than any parsed input; refuse what
            // could not be read back.
            let depth = nesting(doc);
            if depth > canon::MAX_DEPTH {
                return Err(Error::TooDeep {
                    key: key.to_owned(),
                    depth,
                    max: canon::MAX_DEPTH,
                });
            }
        }
        let rules = KeyRules::for_key(self.rules.iter(), key);
        let mut next = next;
        let mut warnings = Vec::new();
        if let Some(doc) = next.as_mut() {
            self.seal(key, doc)?;
            canonicalize(doc, &rules, &mut warnings);
        }
        self.replace_canonical(key, next, &rules, warnings)
    }

    /// [`Txn::replace_doc`] for a document already in canonical order.
    fn replace_canonical(
        &mut self,
        key: &str,
        next: Option<Value>,
        rules: &KeyRules,
        warnings: Vec<String>,
    ) -> Result<Vec<Change>> {
        let p = self.pending(key)?;
        let d = diff::diff(p.doc.value()?, next.as_ref(), rules);
        (p.doc, p.hash) = DocState::made(next);
        p.input = None;
        self.record_diff(key, d, warnings)
    }

    /// Adds the changes of `d` to `key`'s pending changes and its warnings (with those of
    /// canonicalization) to the transaction's; returns the changes, personal values unsealed.
    fn record_diff(&mut self, key: &str, d: Diff, warnings: Vec<String>) -> Result<Vec<Change>> {
        self.add_warnings(key, warnings, d.warnings);
        let p = self.pending(key)?;
        p.changes.extend(d.changes.iter().map(ChangeText::of));
        let mut changes = d.changes;
        for c in &mut changes {
            crate::shred::unseal_change_in(c, self.keys, &self.fresh, self.write.store())?;
        }
        Ok(changes)
    }

    /// Adds the warnings of canonicalizing and diffing `key`'s document, each once.
    fn add_warnings(&mut self, key: &str, mut warnings: Vec<String>, diffing: Vec<String>) {
        warnings.extend(diffing);
        warnings.sort();
        warnings.dedup();
        self.warnings
            .extend(warnings.into_iter().map(|w| format!("{key}: {w}")));
    }

    /// Writes `value` at `path` (the root: the whole document), creating missing parents.
    pub fn set(&mut self, key: &str, path: &DocPath, value: Value) -> Result<Vec<Change>> {
        let path = &self.renamed_path(key, path);
        let mut doc = self.current(key)?;
        diff::set_at(&mut doc, path, value).map_err(|source| Error::Apply {
            key: key.to_owned(),
            source,
        })?;
        self.replace_doc(key, doc)
    }

    /// Removes the value at `path`, or the whole document when `path` is the root.
    pub fn remove(&mut self, key: &str, path: &DocPath) -> Result<Vec<Change>> {
        let path = &self.renamed_path(key, path);
        let mut doc = self.current(key)?;
        diff::remove_at(&mut doc, path).map_err(|source| Error::Apply {
            key: key.to_owned(),
            source,
        })?;
        self.replace_doc(key, doc)
    }

    /// Applies an RFC 6902 patch to the document (all operations or none). An absent
    /// document is patched as `null`.
    pub fn patch(&mut self, key: &str, patch: &crate::patch::Patch) -> Result<Vec<Change>> {
        let mut doc = self.current(key)?.unwrap_or(Value::Null);
        patch.apply(&mut doc).map_err(|source| Error::Patch {
            key: key.to_owned(),
            source,
        })?;
        self.replace_doc(key, Some(doc))
    }

    /// Records a whole snapshot of the document: only its structural difference from the
    /// last version is stored; an equal snapshot records a check and nothing else.
    pub fn put(&mut self, key: &str, mut doc: Value) -> Result<PutOutcome> {
        check_key(key)?;
        self.rename_snapshot(key, &mut doc);
        let rules = KeyRules::for_key(self.rules.iter(), key);
        let mut warnings = Vec::new();
        self.seal(key, &mut doc)?;
        canonicalize(&mut doc, &rules, &mut warnings);
        let text = canon::to_canonical_string(&doc);
        drop(doc);
        let stored = self.last_written(key)?.hash;
        self.put_canonical(key, text, stored, &rules, warnings)
    }

    /// [`Txn::put`] for a snapshot given as JSON text, parsed as strictly as
    /// [`canon::parse`] (invalid JSON is an [`Error::Json`] naming the line and column).
    /// Unless the key has personal rules or renames, which need the parsed document, no tree
    /// of either version is ever built: the snapshot is canonicalized and ordered by the
    /// key's rules in one pass ([`diff::canonical_text`]), then hashed and diffed as text, so
    /// an ingest needs little more memory than the two texts. Bytes identical to those that
    /// wrote the current document, under the same array rules, are unchanged without being
    /// parsed at all (a poller mostly fetches the same bytes again).
    pub fn put_json(&mut self, key: &str, bytes: &[u8]) -> Result<PutOutcome> {
        check_key(key)?;
        let json_error = |source| Error::Json {
            what: format!("the snapshot of {key}"),
            source,
        };
        let renamed = self.renames().any(|r| r.applies_to_key(key));
        if renamed || !crate::shred::personal_rules(self.rules, key).is_empty() {
            let doc = canon::parse(bytes).map_err(json_error)?;
            return self.put(key, doc);
        }
        // The same bytes under the same rules give the same canonical text: a snapshot
        // byte for byte the one that wrote the current document is unchanged unparsed.
        let input = input_id(bytes, self.rules, key);
        let last = self.last_written(key)?;
        if let (Some(hash), Some(last_input)) = (&last.hash, last.input)
            && last_input == input
            && let Ok(hash) = <[u8; 32]>::try_from(hash.as_slice())
        {
            self.checks.push((key.to_owned(), ObjectId(hash).to_hex()));
            return Ok(PutOutcome::Unchanged);
        }
        let rules = KeyRules::for_key(self.rules.iter(), key);
        let mut warnings = Vec::new();
        let text = diff::canonical_text(bytes, &rules, &mut warnings).map_err(json_error)?;
        let outcome = self.put_canonical(key, text, last.hash, &rules, warnings)?;
        if let (PutOutcome::Changed(_), Some(&i)) = (&outcome, self.index.get(key))
            && let Some(p) = self.pending.get_mut(i)
        {
            p.input = Some(input);
        }
        Ok(outcome)
    }

    /// The hash of `key`'s current document and the [`input_id`] that wrote it, as this
    /// transaction sees them, without reading the document.
    fn last_written(&self, key: &str) -> Result<LastWritten> {
        if let Some(p) = self.index.get(key).and_then(|&i| self.pending.get(i)) {
            return Ok(LastWritten {
                hash: p.hash.clone(),
                input: p.input.clone(),
            });
        }
        self.write.store().last_written(key)
    }

    /// Records the snapshot `text`: canonical (written by [`canon`], so the diff indexes it
    /// without checking it again), rules applied, personal values sealed; `stored` is the
    /// hash of the current document ([`Txn::last_written`]).
    fn put_canonical(
        &mut self,
        key: &str,
        text: String,
        stored: Option<Vec<u8>>,
        rules: &KeyRules,
        warnings: Vec<String>,
    ) -> Result<PutOutcome> {
        let hash = ObjectId::of(text.as_bytes());
        // Compare hashes before reading the stored document: an unchanged snapshot costs
        // little more than reading the new one.
        if stored.as_deref() == Some(hash.0.as_slice()) {
            self.checks.push((key.to_owned(), hash.to_hex()));
            return Ok(PutOutcome::Unchanged);
        }
        let p = self.pending(key)?;
        let (DocState::Text(old) | DocState::Both(_, old)) = &p.doc;
        // Text with the hash recorded beside it is what this store (or this transaction)
        // wrote: canonical, so hashing it again is all the checking it needs.
        let own = old
            .as_deref()
            .is_some_and(|t| p.hash.as_deref() == Some(ObjectId::of(t.as_bytes()).0.as_slice()));
        let d = textdiff::diff_own_text(old.as_deref(), own, &text, rules).map_err(corrupt)?;
        let (changes, diffing) = (d.changes, d.warnings);
        p.hash = Some(hash.0.to_vec());
        p.doc = DocState::Text(Some(text));
        p.input = None;
        let n = changes.len();
        p.changes.extend(changes);
        self.add_warnings(key, warnings, diffing);
        Ok(PutOutcome::Changed(n))
    }

    /// Declares a rule (recorded with this transaction). A personal rule is refused over
    /// paths that already hold plaintext in the log.
    pub fn add_rule(
        &mut self,
        pattern: &PathPattern,
        keys: Option<&str>,
        kind: &RuleKind,
    ) -> Result<()> {
        if matches!(kind, RuleKind::Personal { .. }) {
            let store = self.write.store();
            crate::shred::check_no_plaintext(store, pattern, keys)?;
            self.keys.create_if_first(store)?;
        }
        self.records.push(Record::AddRule {
            pattern: pattern.clone(),
            keys: keys.map(str::to_owned),
            kind: kind.clone(),
        });
        Ok(())
    }

    /// Removes a rule by id (recorded with this transaction).
    pub fn remove_rule(&mut self, id: i64) -> Result<()> {
        if !self.rules.iter().any(|r| r.id == id) {
            return Err(RuleError::NoSuchRule(id).into());
        }
        self.records.push(Record::RemoveRule(id));
        Ok(())
    }

    /// Commits everything as one transaction. Nothing is recorded when nothing changed.
    pub fn commit(self) -> Result<Written> {
        let Txn {
            write,
            rules,
            keys,
            renames,
            info,
            pending,
            checks,
            records,
            mut warnings,
            mut fresh,
            record_always,
            ..
        } = self;
        warnings.append(&mut fresh.warnings);
        let record_tx =
            record_always || !records.is_empty() || pending.iter().any(|p| !p.changes.is_empty());
        if record_tx && !fresh.keys.is_empty() {
            // The keys land before the values sealed with them.
            keys.store(&fresh.keys, info.id)?;
        }
        let rules_changed = records
            .iter()
            .any(|r| matches!(r, Record::AddRule { .. } | Record::RemoveRule(_)));
        let renames_changed = records.iter().any(|r| matches!(r, Record::Rename(_)));
        let checked = checks.len();
        let store = write.store();
        let set = WriteSet {
            info: info.clone(),
            record_tx,
            docs: pending.into_iter().map(Pending::into_write).collect(),
            records,
            checks,
            rules: rules.as_slice(),
        };
        let committed = write.commit(set, |changes| {
            // What the caller sees has its personal values unsealed.
            for (_, change) in changes {
                crate::shred::unseal_change_text(change, keys, &fresh, store)?;
            }
            Ok(())
        })?;
        warnings.extend(committed.warnings);
        if rules_changed {
            *rules = store.rules()?;
        }
        if renames_changed {
            *renames = store.renames()?;
        }
        Ok(Written {
            tx: record_tx.then_some(info),
            changes: committed.changes,
            checks: checked,
            warnings,
        })
    }
}

impl Pending {
    /// What the store writes for this key.
    fn into_write(self) -> DocWrite {
        DocWrite {
            key: self.key,
            seq: self.seq,
            ckpt_seq: self.ckpt_seq,
            ckpt_count: self.ckpt_count,
            ckpt_bytes: self.ckpt_bytes,
            sealed_seq: self.sealed_seq,
            text: self.doc.into_text(),
            hash: self.hash,
            input: self.input,
            changes: self.changes,
        }
    }
}
