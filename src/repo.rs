//! The repository: the one handle through which everything is read and written.
//!
//! A write is a [`Txn`]: it names an actor, holds any number of operations on any number
//! of keys, and commits them as one SQLite transaction that appends the changes to the log
//! and updates current state together (all or nothing).

use crate::canon::Value;
use crate::canon::{self, ObjectId};
use crate::diff::{self, Diff, canonicalize};
use crate::error::{Error, Result};
use crate::model::{Actor, Change, ChangeText, Op, TxInfo, check_key};
use crate::path::DocPath;
use crate::rename::Rename;
use crate::rules::{KeyRules, Rule, RuleKind};
use crate::store::Cached;
use crate::store::{self, objects::Objects};
use crate::textdiff;
use crate::time::{Timestamp, When};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The directory that holds a repository's store.
pub const HIST_DIR: &str = ".hist";

/// A checkpoint is written once this many changes have accumulated since the last one
/// (more for large documents: see [`checkpoint_span`])…
pub const CHECKPOINT_EVERY: i64 = 64;
/// …or once the bytes of those changes outweigh the document (but at least this many bytes).
pub const CHECKPOINT_MIN_BYTES: i64 = 4096;

/// How many changes may pile up after a checkpoint of a document of `doc_bytes` canonical
/// bytes before the next one: [`CHECKPOINT_EVERY`], or one change per 256 bytes of document
/// for large documents (replaying a few hundred small changes costs less than
/// decompressing and parsing one large checkpoint, and storage stays near git's). No as-of
/// read replays more than this many changes.
pub fn checkpoint_span(doc_bytes: i64) -> i64 {
    CHECKPOINT_EVERY.max(doc_bytes / 256)
}

/// An open repository.
pub struct Repo {
    root: PathBuf,
    pub(crate) conn: Connection,
    pub(crate) objects: Objects,
    rules: Vec<Rule>,
    /// Inside [`Repo::begin_batch`]: transactions are savepoints of one SQLite transaction.
    batch: bool,
    pub(crate) keys: crate::shred::Keys,
    renames: Vec<Rename>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// How a transaction is recorded.
#[derive(Clone, Debug)]
pub struct TxOptions {
    /// Who makes it (required).
    pub actor: Actor,
    /// Why (optional).
    pub reason: Option<String>,
    /// `write`, `ingest`, `track`, `rules`, …
    pub kind: String,
    /// The clock's reading now (the library never reads the clock itself).
    pub now: Timestamp,
    /// An explicit time for importing recorded history; refused if before the newest tx.
    pub at: Option<Timestamp>,
}

impl TxOptions {
    /// A transaction of `kind` by `actor` at `now`.
    pub fn new(actor: Actor, kind: &str, now: Timestamp) -> Self {
        Self {
            actor,
            reason: None,
            kind: kind.to_owned(),
            now,
            at: None,
        }
    }

    /// With a reason.
    #[must_use]
    pub fn reason(mut self, reason: Option<String>) -> Self {
        self.reason = reason;
        self
    }

    /// With an explicit time.
    #[must_use]
    pub fn at(mut self, at: Option<Timestamp>) -> Self {
        self.at = at;
        self
    }
}

impl Repo {
    /// Creates `.hist/` in `root`.
    pub fn init(root: &Path) -> Result<Self> {
        let dir = root.join(HIST_DIR);
        if dir.exists() {
            return Err(Error::AlreadyInitialized(dir));
        }
        std::fs::create_dir_all(dir.join("objects")).map_err(Error::io(&dir))?;
        Self::open_at(root, true)
    }

    /// Opens the repository whose `.hist/` is in `root`.
    pub fn open(root: &Path) -> Result<Self> {
        if !root.join(HIST_DIR).join("hist.db").is_file() {
            return Err(Error::NotARepository(root.to_path_buf()));
        }
        Self::open_at(root, false)
    }

    /// Finds the nearest `.hist` in `start` or above, as git does.
    pub fn discover(start: &Path) -> Result<Self> {
        let start = std::path::absolute(start).map_err(Error::io(start))?;
        let found = start
            .ancestors()
            .find(|d| d.join(HIST_DIR).join("hist.db").is_file());
        match found {
            Some(root) => Self::open_at(root, false),
            None => Err(Error::NotARepository(start)),
        }
    }

    fn open_at(root: &Path, create: bool) -> Result<Self> {
        let dir = root.join(HIST_DIR);
        let mut conn = store::open_db(&dir.join("hist.db"), create)?;
        let found = store::migrate(&mut conn)?;
        if found > store::schema_version() {
            return Err(Error::NewerSchema {
                found,
                supported: store::schema_version(),
            });
        }
        let mut repo = Self {
            root: root.to_path_buf(),
            conn,
            objects: Objects::new(dir.join("objects")),
            rules: Vec::new(),
            batch: false,
            keys: crate::shred::Keys::new(dir.join("keys.db")),
            renames: Vec::new(),
        };
        repo.rules = load_rules(&repo.conn)?;
        repo.renames = crate::rename::load_renames(&repo.conn)?;
        crate::shred::on_open(&repo, create)?;
        Ok(repo)
    }

    /// The directory that contains `.hist/`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `.hist/` directory.
    pub fn hist_dir(&self) -> PathBuf {
        self.root.join(HIST_DIR)
    }

    /// The rules in force, in declaration order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The recorded renames, oldest first.
    pub fn renames(&self) -> &[Rename] {
        &self.renames
    }

    /// The array rules that apply to `key`.
    pub fn key_rules(&self, key: &str) -> KeyRules {
        KeyRules::for_key(&self.rules, key)
    }
}

fn load_rules(conn: &Connection) -> Result<Vec<Rule>> {
    {
        let mut stmt = conn.prepare(
            "SELECT id, tx, kind, pattern, keys, spec FROM rule WHERE removed_tx IS NULL ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, String>(5)?,
            ))
        })?;
        let mut rules = Vec::new();
        for row in rows {
            let (id, tx, kind, pattern, keys, spec) = row?;
            let spec: Value =
                canon::parse_str(&spec).map_err(|e| Error::Corrupt(format!("rule {id}: {e}")))?;
            let kind = RuleKind::from_stored(&kind, &spec)
                .ok_or_else(|| Error::Corrupt(format!("rule {id} has an unknown kind {kind:?}")))?;
            let pattern = crate::path::PathPattern::parse(&pattern)?;
            rules.push(Rule {
                id,
                tx,
                pattern,
                keys,
                kind,
            });
        }
        Ok(rules)
    }
}

impl Repo {
    /// The newest transaction, if any.
    pub fn newest_tx(&self) -> Result<Option<TxInfo>> {
        Ok(self
            .conn
            .cached_row(
                "SELECT id, at, actor, reason, kind FROM tx ORDER BY id DESC LIMIT 1",
                [],
                tx_from_row,
            )
            .optional()?)
    }

    /// Begins a write. The actor was validated when the [`Actor`] was built.
    pub fn begin(&mut self, opts: TxOptions) -> Result<Txn<'_>> {
        let Repo {
            conn,
            objects,
            rules,
            batch,
            keys,
            renames,
            ..
        } = self;
        let sql = SqlTx::begin(conn, *batch)?;
        let last: Option<(i64, String)> = sql
            .cached_row("SELECT id, at FROM tx ORDER BY id DESC LIMIT 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let last_at = match &last {
            Some((_, at)) => Some(parse_at(at)?),
            None => None,
        };
        let at = match (opts.at, last_at) {
            (Some(at), Some(newest)) if at < newest => {
                return Err(Error::AtBeforeNewest { at, newest });
            }
            (Some(at), _) => at,
            (None, Some(newest)) => opts.now.max(newest),
            (None, None) => opts.now,
        };
        let info = TxInfo {
            id: last.map_or(1, |(id, _)| id + 1),
            at,
            actor: opts.actor.as_str().to_owned(),
            reason: opts.reason.filter(|r| !r.is_empty()),
            kind: opts.kind,
        };
        Ok(Txn {
            sql,
            objects,
            rules,
            keys,
            renames,
            info,
            pending: Vec::new(),
            index: HashMap::new(),
            checks: Vec::new(),
            added_rules: Vec::new(),
            removed_rules: Vec::new(),
            added_renames: Vec::new(),
            compactions: Vec::new(),
            warnings: Vec::new(),
            fresh: crate::shred::FreshKeys::default(),
            forgets: Vec::new(),
            record_always: false,
        })
    }

    /// Starts a batch: every transaction begun until [`Repo::commit_batch`] is committed
    /// to SQLite together (one sync for many transactions, as bulk imports want). Each
    /// transaction of the batch still succeeds or fails whole; a batch that is never
    /// committed is rolled back when the repository is dropped.
    pub fn begin_batch(&mut self) -> Result<()> {
        if !self.batch {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.batch = true;
        }
        Ok(())
    }

    /// Commits the batch begun by [`Repo::begin_batch`].
    pub fn commit_batch(&mut self) -> Result<()> {
        if self.batch {
            self.conn.execute_batch("COMMIT")?;
            self.batch = false;
            let newest: Option<(i64, Vec<u8>)> = self
                .conn
                .cached_row(
                    "SELECT id, hash FROM tx ORDER BY id DESC LIMIT 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((id, hash)) = newest
                && let Ok(hash) = <[u8; 32]>::try_from(hash.as_slice())
            {
                crate::head::write(&self.hist_dir(), id, &hash)
                    .map_err(Error::io(self.hist_dir()))?;
            }
        }
        Ok(())
    }

    /// Runs the read `f` in one SQLite read transaction, so that all its queries see one
    /// state of the store even while another process commits, and the database is locked
    /// and checked for changes once rather than once per query. Inside a transaction
    /// (a batch, a write) `f` runs in that one.
    pub(crate) fn snapshot<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.conn.is_autocommit() {
            return f();
        }
        self.conn.cached_exec("BEGIN DEFERRED", [])?;
        let out = f();
        // Nothing was written: ending the read cannot lose anything, and its own failure
        // matters only when the read succeeded.
        let end = self.conn.cached_exec("COMMIT", []);
        let out = out?;
        end?;
        Ok(out)
    }

    /// The last transaction included by `when` (`None`: before the first transaction).
    pub fn resolve(&self, when: When) -> Result<Option<i64>> {
        match when {
            When::Tx(id) => Ok(Some(id)),
            When::At(ts) => Ok(self
                .conn
                .cached_row(
                    "SELECT id FROM tx WHERE at <= ?1 ORDER BY at DESC, id DESC LIMIT 1",
                    [ts.to_string()],
                    |r| r.get(0),
                )
                .optional()?),
        }
    }

    /// The current document under `key` (personal values unsealed).
    pub fn current(&self, key: &str) -> Result<Option<Value>> {
        check_key(key)?;
        let doc = self.current_stored(key)?;
        self.unseal_doc(doc)
    }

    /// The canonical text of the current document under `key` (personal values unsealed):
    /// the stored text itself unless it holds sealed values, so no tree is built.
    pub fn current_text(&self, key: &str) -> Result<Option<String>> {
        check_key(key)?;
        match self.stored_text(key)? {
            Some(t) if t.contains(crate::shred::SEALED) => {
                let doc = self.unseal_doc(Some(parse_stored(&t)?))?;
                Ok(doc.as_ref().map(canon::to_canonical_string))
            }
            other => Ok(other),
        }
    }

    /// The current document under `key` as stored (personal values sealed).
    pub(crate) fn current_stored(&self, key: &str) -> Result<Option<Value>> {
        self.stored_text(key)?.map(|t| parse_stored(&t)).transpose()
    }

    /// The canonical text of the current document under `key` as stored (personal values
    /// sealed); `None` when there is none.
    pub(crate) fn stored_text(&self, key: &str) -> Result<Option<String>> {
        let text: Option<Option<String>> = self
            .conn
            .cached_row("SELECT doc FROM doc WHERE key = ?1", [key], |r| r.get(0))
            .optional()?;
        Ok(text.flatten())
    }

    /// Every key that currently holds a document, sorted.
    pub fn keys(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key FROM doc WHERE doc IS NOT NULL ORDER BY key")?;
        let keys = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
    }

    /// Reads a transaction.
    pub fn tx(&self, id: i64) -> Result<Option<TxInfo>> {
        Ok(self
            .conn
            .cached_row(
                "SELECT id, at, actor, reason, kind FROM tx WHERE id = ?1",
                [id],
                tx_from_row,
            )
            .optional()?)
    }

    /// Reads and parses a stored object.
    pub(crate) fn load_object(&self, id: &ObjectId) -> Result<Value> {
        load_object(&self.objects, id)
    }
}

pub(crate) fn tx_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TxInfo> {
    let at: String = r.get(1)?;
    Ok(TxInfo {
        id: r.get(0)?,
        at: Timestamp::parse_rfc3339(&at).unwrap_or(Timestamp(0)),
        actor: r.get(2)?,
        reason: r.get(3)?,
        kind: r.get(4)?,
    })
}

fn parse_at(text: &str) -> Result<Timestamp> {
    Timestamp::parse_rfc3339(text)
        .ok_or_else(|| Error::Corrupt(format!("a transaction time {text:?} does not parse")))
}

/// The error for stored text that is not the canonical JSON it must be.
fn corrupt(e: textdiff::MalformedText) -> Error {
    Error::Corrupt(format!("stored document: {e}"))
}

/// Parses JSON text written by hist itself.
pub(crate) fn parse_stored(text: &str) -> Result<Value> {
    canon::parse_str(text).map_err(|e| Error::Corrupt(format!("stored JSON does not parse: {e}")))
}

pub(crate) fn load_object(objects: &Objects, id: &ObjectId) -> Result<Value> {
    let bytes = objects.get(id).map_err(Error::io(objects.path_of(id)))?;
    canon::parse(&bytes).map_err(|e| Error::Corrupt(format!("object {id} does not parse: {e}")))
}

pub(crate) fn load_value(
    objects: &Objects,
    text: Option<String>,
    obj: Option<String>,
) -> Result<Option<Value>> {
    match (text, obj) {
        (_, Some(obj)) => {
            let id = ObjectId::from_hex(&obj)
                .ok_or_else(|| Error::Corrupt(format!("bad object id {obj:?}")))?;
            load_object(objects, &id).map(Some)
        }
        (Some(text), None) => parse_stored(&text).map(Some),
        (None, None) => Ok(None),
    }
}

/// A stored value: inline canonical text, or an object id for large values.
pub(crate) struct Encoded<'t> {
    pub(crate) text: Option<std::borrow::Cow<'t, str>>,
    pub(crate) obj: Option<String>,
    pub(crate) len: usize,
}

pub(crate) fn encode_value(objects: &Objects, value: Option<&Value>) -> Result<Encoded<'static>> {
    encode_text(objects, value.map(|v| canon::to_canonical_string(v).into()))
}

/// [`encode_value`] for a value already in canonical text.
pub(crate) fn encode_text<'t>(
    objects: &Objects,
    text: Option<std::borrow::Cow<'t, str>>,
) -> Result<Encoded<'t>> {
    let Some(text) = text else {
        return Ok(Encoded {
            text: None,
            obj: None,
            len: 0,
        });
    };
    let len = text.len();
    if len > store::LARGE_VALUE {
        let id = objects
            .put(text.as_bytes())
            .map_err(Error::io(objects.dir()))?;
        Ok(Encoded {
            text: None,
            obj: Some(id.to_hex()),
            len,
        })
    } else {
        Ok(Encoded {
            text: Some(text),
            obj: None,
            len,
        })
    }
}

/// What a key's current document is known by without reading it ([`Txn::last_written`]).
#[derive(Default)]
struct LastWritten {
    /// The hash of its canonical text (`None`: no document).
    hash: Option<Vec<u8>>,
    /// The [`input_id`] of the snapshot that wrote it, if one did.
    input: Option<Vec<u8>>,
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
    /// This many changes were recorded ([`Commit::changes`] lists them).
    Changed(usize),
}

/// The result of a commit.
#[derive(Clone, Debug, Default)]
pub struct Commit {
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
    /// Sealed, as they will be stored.
    changes: Vec<ChangeText>,
    /// What `doc` was written from, when it is a snapshot's text ([`input_id`]); `None`
    /// once anything else changes it.
    input: Option<Vec<u8>>,
}

/// A write in progress. Dropping it without [`Txn::commit`] writes nothing.
pub struct Txn<'r> {
    sql: SqlTx<'r>,
    objects: &'r Objects,
    rules: &'r mut Vec<Rule>,
    keys: &'r crate::shred::Keys,
    renames: &'r mut Vec<Rename>,
    info: TxInfo,
    pending: Vec<Pending>,
    index: HashMap<String, usize>,
    checks: Vec<(String, String)>,
    added_rules: Vec<(String, String, Option<String>, String)>,
    removed_rules: Vec<i64>,
    pub(crate) warnings: Vec<String>,
    fresh: crate::shred::FreshKeys,
    forgets: Vec<String>,
    /// Renames recorded by this transaction (`rename.rs`).
    pub(crate) added_renames: Vec<Rename>,
    /// Compaction records of a `compact` transaction (`gc.rs`).
    pub(crate) compactions: Vec<crate::gc::Compaction>,
    record_always: bool,
}

impl Txn<'_> {
    /// The SQLite transaction this write commits with, for rows of other modules that must
    /// commit together with it (tracked files, gc, renames).
    pub(crate) fn sql(&self) -> &Connection {
        &self.sql
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

    /// The object store.
    pub(crate) fn objects(&self) -> &Objects {
        self.objects
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
        self.renames.iter().chain(self.added_renames.iter())
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
        type Row = (Option<String>, i64, Option<Vec<u8>>, i64, i64, i64);
        let row: Option<Row> = self
            .sql
            .cached_row(
                "SELECT doc, seq, hash, ckpt_seq, ckpt_count, ckpt_bytes FROM doc WHERE key = ?1",
                [key],
                |r| r.try_into(),
            )
            .optional()?;
        let (doc, seq, hash, ckpt_seq, ckpt_count, ckpt_bytes) =
            row.unwrap_or((None, 0, None, 0, 0, 0));
        self.pending.push(Pending {
            key: key.to_owned(),
            doc: DocState::Text(doc),
            hash,
            seq,
            ckpt_seq,
            ckpt_count,
            ckpt_bytes,
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
            crate::shred::working_view(d, key, self.rules, self.keys, &self.fresh, &self.sql)?;
        }
        Ok(doc)
    }

    /// Seals the personal values of a document about to be written under `key`.
    fn seal(&mut self, key: &str, doc: &mut Value) -> Result<()> {
        crate::shred::seal_doc(doc, key, self.rules, self.keys, &mut self.fresh, &self.sql)
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
            &self.sql,
        )
    }

    /// Records that subject `sid` is forgotten (with this transaction).
    pub(crate) fn forget_subject(&mut self, sid: String) {
        self.forgets.push(sid);
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
            crate::shred::unseal_change_in(c, self.keys, &self.fresh, &self.sql)?;
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
        patch
            .apply(&mut doc)
            .map_err(|e| Error::Patch(format!("{key}: {e}")))?;
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
        let row = self
            .sql
            .cached_row("SELECT hash, input FROM doc WHERE key = ?1", [key], |r| {
                Ok(LastWritten {
                    hash: r.get(0)?,
                    input: r.get(1)?,
                })
            })
            .optional()?;
        Ok(row.unwrap_or_default())
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

    /// Declares a rule (recorded with this transaction).
    pub fn add_rule(
        &mut self,
        pattern: &crate::path::PathPattern,
        keys: Option<&str>,
        kind: &RuleKind,
    ) {
        self.added_rules.push((
            kind.name().to_owned(),
            pattern.to_string(),
            keys.map(str::to_owned),
            canon::to_canonical_string(&kind.spec()),
        ));
    }

    /// Removes a rule by id (recorded with this transaction).
    pub fn remove_rule(&mut self, id: i64) -> Result<()> {
        if !self.rules.iter().any(|r| r.id == id) {
            return Err(Error::Rule(format!(
                "there is no rule {id}; `hist rules` lists them"
            )));
        }
        self.removed_rules.push(id);
        Ok(())
    }

    /// Commits everything as one transaction. Nothing is recorded when nothing changed.
    pub fn commit(self) -> Result<Commit> {
        let Txn {
            sql,
            objects,
            rules,
            info,
            pending,
            checks,
            added_rules,
            removed_rules,
            mut warnings,
            keys,
            fresh,
            forgets,
            added_renames,
            compactions,
            renames,
            record_always,
            ..
        } = self;
        let mut fresh = fresh;
        warnings.append(&mut fresh.warnings);
        let n_changes: usize = pending.iter().map(|p| p.changes.len()).sum();
        let records_tx = n_changes > 0
            || !added_rules.is_empty()
            || !removed_rules.is_empty()
            || !forgets.is_empty()
            || !added_renames.is_empty()
            || !compactions.is_empty()
            || record_always;
        if !records_tx && checks.is_empty() {
            // Rows added through `sql()` (caches) still commit; nothing else was written.
            sql.commit()?;
            return Ok(Commit {
                warnings,
                ..Commit::default()
            });
        }
        let at = info.at.to_string();
        let mut all = Vec::with_capacity(n_changes);
        let mut head = None;
        if records_tx {
            for (kind, pattern, globs, _) in &added_rules {
                if kind == "personal" {
                    crate::shred::check_no_plaintext(&sql, objects, pattern, globs.as_deref())?;
                    keys.create_if_first(&sql)?;
                }
            }
            if !fresh.keys.is_empty() {
                // The keys land before the values sealed with them.
                keys.store(&fresh.keys, info.id)?;
            }
            sql.cached_exec(
                "INSERT INTO tx (id, at, actor, reason, kind, hash) VALUES (?1, ?2, ?3, ?4, ?5, x'')",
                params![info.id, at, info.actor, info.reason, info.kind],
            )?;
            let mut hasher = crate::fsck::TxHasher::begin(&sql, info.id)?;
            let mut insert = sql.prepare_cached(
                "INSERT INTO change_log (tx, key_id, seq, path, op, old, new, old_obj, new_obj)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for p in pending.into_iter().filter(|p| !p.changes.is_empty()) {
                let key_id = store::key_id(&sql, &p.key)?;
                let mut seq = p.seq;
                let mut bytes = 0i64;
                for change in &p.changes {
                    seq += 1;
                    let old = encode_text(objects, change.old.as_deref().map(Into::into))?;
                    let new = encode_text(objects, change.new.as_deref().map(Into::into))?;
                    bytes += i64::try_from(old.len + new.len).unwrap_or(i64::MAX);
                    let path = change.path.to_string();
                    insert.execute(params![
                        info.id,
                        key_id,
                        seq,
                        path,
                        change.op.as_str(),
                        old.text,
                        new.text,
                        old.obj,
                        new.obj
                    ])?;
                    hasher.change(
                        &p.key,
                        seq,
                        [
                            Some(&path),
                            Some(change.op.as_str()),
                            old.text.as_deref(),
                            new.text.as_deref(),
                            old.obj.as_deref(),
                            new.obj.as_deref(),
                        ],
                    );
                }
                sql.cached_exec(
                    "INSERT INTO version (key_id, tx, first_seq, last_seq) VALUES (?1, ?2, ?3, ?4)",
                    params![key_id, info.id, p.seq + 1, seq],
                )?;
                let text = p.doc.into_text();
                let doc_len = text
                    .as_ref()
                    .map_or(0, |t| i64::try_from(t.len()).unwrap_or(i64::MAX));
                let count = p.ckpt_count + i64::try_from(p.changes.len()).unwrap_or(i64::MAX);
                let weight = p.ckpt_bytes.saturating_add(bytes);
                let (ckpt_seq, ckpt_count, ckpt_bytes) = if count >= checkpoint_span(doc_len)
                    || weight > doc_len.max(CHECKPOINT_MIN_BYTES)
                {
                    let object = match &text {
                        Some(t) => Some(
                            objects
                                .put(t.as_bytes())
                                .map_err(Error::io(objects.dir()))?
                                .to_hex(),
                        ),
                        None => None,
                    };
                    sql.cached_exec(
                            "INSERT OR REPLACE INTO checkpoint (key, seq, tx, object) VALUES (?1, ?2, ?3, ?4)",
                            params![p.key, seq, info.id, object],
                        )?;
                    (seq, 0, 0)
                } else {
                    (p.ckpt_seq, count, weight)
                };
                // Delete, then insert: the old document's pages are free before the new
                // one is written, so it reuses them (an update writes the new text first
                // and leaves a document's worth of free pages behind). The row keeps its
                // rowid, so documents stay in the order they were created.
                let rowid: Option<i64> = sql
                    .cached_row(
                        "DELETE FROM doc WHERE key = ?1 RETURNING rowid",
                        [&p.key],
                        |r| r.get(0),
                    )
                    .optional()?;
                sql.cached_exec(
                    "INSERT INTO doc (rowid, key, doc, seq, tx, hash, ckpt_seq, ckpt_count,
                         ckpt_bytes, input)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        rowid, p.key, text, seq, info.id, p.hash, ckpt_seq, ckpt_count, ckpt_bytes,
                        p.input
                    ],
                )?;
                all.extend(p.changes.into_iter().map(|c| (p.key.clone(), c)));
            }
            drop(insert);
            for (kind, pattern, keys, spec) in &added_rules {
                sql.cached_exec(
                    "INSERT INTO rule (tx, kind, pattern, keys, spec) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![info.id, kind, pattern, keys, spec],
                )?;
            }
            for id in &removed_rules {
                sql.cached_exec(
                    "UPDATE rule SET removed_tx = ?1 WHERE id = ?2",
                    params![info.id, id],
                )?;
            }
            for sid in &forgets {
                sql.cached_exec(
                    "INSERT INTO forgotten (subject, tx) VALUES (?1, ?2)",
                    params![sid, info.id],
                )?;
            }
            for (_, change) in &mut all {
                crate::shred::unseal_change_text(change, keys, &fresh, &sql)?;
            }
            crate::rename::insert_renames(&sql, info.id, &added_renames)?;
            crate::gc::insert_compactions(&sql, info.id, &compactions)?;
            // The change rows were fed as they were inserted; fsck reads them back.
            let hash = hasher.finish(&sql)?;
            sql.cached_exec(
                "UPDATE tx SET hash = ?1 WHERE id = ?2",
                params![hash.to_vec(), info.id],
            )?;
            head = Some(hash);
        }
        for (key, hash) in &checks {
            sql.cached_exec(
                "INSERT INTO check_log (key, at, actor, hash) VALUES (?1, ?2, ?3, ?4)",
                params![key, at, info.actor, hash],
            )?;
        }
        let fresh = if added_rules.is_empty() && removed_rules.is_empty() {
            None
        } else {
            Some(load_rules(&sql)?)
        };
        let fresh_renames = if added_renames.is_empty() {
            None
        } else {
            Some(crate::rename::load_renames(&sql)?)
        };
        // Inside a batch the savepoint is not durable yet: the batch's commit writes HEAD.
        let head = if sql.nested { None } else { head };
        // A compaction rewrote the chain: until `HEAD` names the new head, the hash `HEAD`
        // records no longer matches its transaction; the pending head vouches meanwhile.
        let rewrites_chain = !compactions.is_empty();
        if let (true, Some(hash), Some(hist_dir)) = (rewrites_chain, head, objects.dir().parent()) {
            crate::head::write_pending(hist_dir, info.id, &hash).map_err(Error::io(hist_dir))?;
        }
        sql.commit()?;
        if let Some(fresh) = fresh {
            *rules = fresh;
        }
        if let Some(fresh) = fresh_renames {
            *renames = fresh;
        }
        if let (Some(hash), Some(hist_dir)) = (head, objects.dir().parent())
            && let Err(e) = crate::head::write(hist_dir, info.id, &hash).and_then(|()| {
                if rewrites_chain {
                    crate::head::clear_pending(hist_dir)
                } else {
                    Ok(())
                }
            })
        {
            // The transaction is committed; only the evidence of the head is missing.
            warnings.push(format!(
                "tx {} is recorded, but .hist/{} could not be updated: {e}",
                info.id,
                crate::head::FILE
            ));
        }
        Ok(Commit {
            tx: records_tx.then_some(info),
            changes: all,
            checks: checks.len(),
            warnings,
        })
    }
}

/// Applies `op` to a change for display and replay: the stored op of `old`/`new`.
pub(crate) fn change_from_row(
    objects: &Objects,
    path: &str,
    op: &str,
    old: (Option<String>, Option<String>),
    new: (Option<String>, Option<String>),
) -> Result<Change> {
    let path = DocPath::parse(path).map_err(|e| Error::Corrupt(format!("stored path: {e}")))?;
    let op = Op::parse(op).ok_or_else(|| Error::Corrupt(format!("unknown op {op:?}")))?;
    Ok(Change {
        path,
        op,
        old: load_value(objects, old.0, old.1)?,
        new: load_value(objects, new.0, new.1)?,
    })
}

/// One SQLite transaction (or, inside a batch, one savepoint) that rolls back unless
/// committed.
pub(crate) struct SqlTx<'c> {
    conn: &'c Connection,
    nested: bool,
    open: bool,
}

impl<'c> SqlTx<'c> {
    fn begin(conn: &'c Connection, nested: bool) -> rusqlite::Result<Self> {
        conn.execute_batch(if nested {
            "SAVEPOINT hist_tx"
        } else {
            "BEGIN IMMEDIATE"
        })?;
        Ok(Self {
            conn,
            nested,
            open: true,
        })
    }

    fn commit(mut self) -> rusqlite::Result<()> {
        self.open = false;
        self.conn.execute_batch(if self.nested {
            "RELEASE hist_tx"
        } else {
            "COMMIT"
        })
    }
}

impl std::ops::Deref for SqlTx<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for SqlTx<'_> {
    fn drop(&mut self) {
        if self.open {
            let sql = if self.nested {
                "ROLLBACK TO hist_tx; RELEASE hist_tx"
            } else {
                "ROLLBACK"
            };
            // Nothing more can be done about a failed rollback: SQLite rolls back an open
            // transaction when the connection closes anyway.
            let _ = self.conn.execute_batch(sql);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(repo: &mut Repo, key: &str, doc: Value) {
        let actor = Actor::parse("user:test").unwrap();
        let mut txn = repo
            .begin(TxOptions::new(actor, "write", Timestamp(1_000_000)))
            .unwrap();
        txn.put(key, doc).unwrap();
        txn.commit().unwrap();
    }

    #[test]
    fn a_read_sees_one_state_while_another_process_commits() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = Repo::init(dir.path()).unwrap();
        write(&mut reader, "k", json!({"v": 1}));
        let mut writer = Repo::open(dir.path()).unwrap();
        let (before, after) = reader
            .snapshot(|| {
                let before = reader.current("k")?;
                write(&mut writer, "k", json!({"v": 2}));
                Ok((before, reader.current("k")?))
            })
            .unwrap();
        assert_eq!(before, after);
        // The read ended: the next one sees the commit.
        assert!(reader.conn.is_autocommit());
        assert_eq!(reader.current("k").unwrap(), Some(json!({"v": 2})));
        // A failed read ends its transaction too.
        let failed: Result<()> = reader.snapshot(|| Err(Error::Corrupt("test".into())));
        assert!(failed.is_err());
        assert!(reader.conn.is_autocommit());
        // Inside a batch, a read runs in the batch and sees its writes.
        reader.begin_batch().unwrap();
        write(&mut reader, "k", json!({"v": 3}));
        let now = reader.snapshot(|| reader.current("k")).unwrap();
        assert_eq!(now, Some(json!({"v": 3})));
        assert!(!reader.conn.is_autocommit());
        reader.commit_batch().unwrap();
    }

    #[test]
    fn temporary_data_is_kept_in_memory_except_for_vacuum() {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        write(&mut repo, "k", json!({"v": 1}));
        let temp_store = |repo: &Repo| -> i64 {
            repo.conn
                .query_row("PRAGMA temp_store", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(temp_store(&repo), 2, "MEMORY");
        let actor = Actor::parse("user:test").unwrap();
        repo.gc(TxOptions::new(actor, "gc", Timestamp(2_000_000)))
            .unwrap();
        assert_eq!(temp_store(&repo), 2, "MEMORY again after gc's VACUUM");
    }
}
