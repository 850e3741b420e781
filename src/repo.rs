//! The repository: the one handle through which everything is read and written.
//!
//! A [`Repo`] holds the store ([`crate::store`]), the rules and renames in force, and the
//! keys of crypto-shredding. Writes go through a [`Txn`] ([`Repo::begin`]); reads are
//! methods of their own modules (`asof`, `history`, `log`, `blame`, …) on `Repo`.
//!
//! A handle may live for days (a service keeps one open) while other processes write. The
//! rules and renames it caches are reloaded, and the keys of subjects forgotten elsewhere
//! shredded, whenever another connection has committed since it last looked (SQLite's
//! `PRAGMA data_version`, read before every read and write: no I/O when nothing changed).

use crate::canon;
use crate::canon::Value;
use crate::error::{Error, Result};
use crate::model::{Actor, TxInfo, check_key};
use crate::rules::{KeyRules, Rename, Rule};
use crate::store::{Store, parse_stored};
use crate::time::{Timestamp, When};
use crate::txn::Txn;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory that holds a repository's store.
pub const HIST_DIR: &str = ".hist";

/// An open repository.
pub struct Repo {
    root: PathBuf,
    pub(crate) store: Store,
    loaded: RefCell<Loaded>,
    pub(crate) keys: crate::shred::Keys,
}

/// What a [`Repo`] caches from the store, and the `data_version` it was read at.
struct Loaded {
    version: i64,
    rules: Arc<Vec<Rule>>,
    renames: Arc<Vec<Rename>>,
}

impl Loaded {
    fn read(store: &Store) -> Result<Self> {
        Ok(Self {
            version: store.data_version()?,
            rules: Arc::new(store.rules()?),
            renames: Arc::new(store.renames()?),
        })
    }

    /// Reloads what another connection changed since this was read (nothing when
    /// `data_version` is the same), and shreds the keys of subjects it forgot (as an open
    /// does: a forget that stopped between logging and deleting the key is finished here).
    fn refresh(&mut self, store: &Store, keys: &crate::shred::Keys) -> Result<()> {
        if store.data_version()? != self.version {
            *self = Self::read(store)?;
            crate::shred::on_open(keys, store, None)?;
        }
        Ok(())
    }
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
    /// Creates `.hist/` in `root` (the key of `keys.db` stored inside it: see
    /// [`Repo::init_with`]).
    pub fn init(root: &Path) -> Result<Self> {
        Self::init_with(root, &crate::shred::KeyProtection::Repository)
    }

    /// Creates `.hist/` in `root`, its `keys.db` protected as `keys` says: with an age
    /// identity kept outside the repository or a passphrase, a copy of `.hist/` reveals no
    /// personal value.
    pub fn init_with(root: &Path, keys: &crate::shred::KeyProtection) -> Result<Self> {
        let dir = root.join(HIST_DIR);
        if dir.exists() {
            return Err(Error::AlreadyInitialized(dir));
        }
        std::fs::create_dir_all(dir.join("objects")).map_err(Error::io(&dir))?;
        let repo = Self::open_at(root, Some(keys));
        if repo.is_err() {
            // Nothing was recorded: leave no half-made repository behind.
            let _ = std::fs::remove_dir_all(&dir);
        }
        repo
    }

    /// Opens the repository whose `.hist/` is in `root`.
    pub fn open(root: &Path) -> Result<Self> {
        if !root.join(HIST_DIR).join("hist.db").is_file() {
            return Err(Error::NotARepository(root.to_path_buf()));
        }
        Self::open_at(root, None)
    }

    /// Finds the nearest `.hist` in `start` or above, as git does.
    pub fn discover(start: &Path) -> Result<Self> {
        let start = std::path::absolute(start).map_err(Error::io(start))?;
        let found = start
            .ancestors()
            .find(|d| d.join(HIST_DIR).join("hist.db").is_file());
        match found {
            Some(root) => Self::open_at(root, None),
            None => Err(Error::NotARepository(start)),
        }
    }

    fn open_at(root: &Path, create: Option<&crate::shred::KeyProtection>) -> Result<Self> {
        let dir = root.join(HIST_DIR);
        let store = Store::open(&dir, create.is_some())?;
        let repo = Self {
            root: root.to_path_buf(),
            loaded: RefCell::new(Loaded::read(&store)?),
            keys: crate::shred::Keys::new(dir.join("keys.db")),
            store,
        };
        crate::shred::on_open(&repo.keys, &repo.store, create)?;
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

    /// The rules in force, in declaration order (as of the last read or write through this
    /// handle, or [`Repo::refresh`]).
    pub fn rules(&self) -> Arc<Vec<Rule>> {
        Arc::clone(&self.loaded.borrow().rules)
    }

    /// The recorded renames, oldest first (as of the last read or write, as [`Repo::rules`]).
    pub fn renames(&self) -> Arc<Vec<Rename>> {
        Arc::clone(&self.loaded.borrow().renames)
    }

    /// The array rules that apply to `key`.
    pub fn key_rules(&self, key: &str) -> KeyRules {
        KeyRules::for_key(self.loaded.borrow().rules.iter(), key)
    }

    /// Catches up with what other connections committed since this handle last looked:
    /// reloads the rules and renames, and shreds the keys of forgotten subjects. Every read
    /// and write does this first; it costs one `PRAGMA data_version` when nothing changed.
    pub fn refresh(&self) -> Result<()> {
        self.loaded.borrow_mut().refresh(&self.store, &self.keys)
    }

    /// The newest transaction, if any.
    pub fn newest_tx(&self) -> Result<Option<TxInfo>> {
        self.store.newest_tx()
    }

    /// Begins a write. The actor was validated when the [`Actor`] was built.
    pub fn begin(&mut self, opts: TxOptions) -> Result<Txn<'_>> {
        let Repo {
            store,
            loaded,
            keys,
            ..
        } = self;
        let write = store.begin_write()?;
        // Under the write lock: no other writer can change the rules before this commits.
        let loaded = loaded.get_mut();
        loaded.refresh(write.store(), keys)?;
        let last = write.store().newest_tx_at()?;
        let at = match (opts.at, last.map(|(_, at)| at)) {
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
        let (rules, renames) = (
            Arc::make_mut(&mut loaded.rules),
            Arc::make_mut(&mut loaded.renames),
        );
        Ok(Txn::new(write, rules, keys, renames, info))
    }

    /// Starts a batch: every transaction begun until [`Repo::commit_batch`] is committed
    /// to SQLite together (one sync for many transactions, as bulk imports want). Each
    /// transaction of the batch still succeeds or fails whole; a batch that is never
    /// committed is rolled back when the repository is dropped.
    pub fn begin_batch(&mut self) -> Result<()> {
        self.store.begin_batch()
    }

    /// Commits the batch begun by [`Repo::begin_batch`].
    pub fn commit_batch(&mut self) -> Result<()> {
        self.store.commit_batch()
    }

    /// Rolls back the batch begun by [`Repo::begin_batch`]: none of its transactions stays.
    pub(crate) fn rollback_batch(&mut self) -> Result<()> {
        self.store.rollback_batch()
    }

    /// Runs the read `f` in one SQLite read transaction ([`Store::snapshot`]).
    /// The rules and renames are brought up to date first, inside the read transaction.
    pub(crate) fn snapshot<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.store.snapshot(|| {
            self.refresh()?;
            f()
        })
    }

    /// The last transaction included by `when` (`None`: before the first transaction).
    pub fn resolve(&self, when: When) -> Result<Option<i64>> {
        self.store.resolve(when)
    }

    /// The current document under `key` (personal values unsealed).
    pub fn current(&self, key: &str) -> Result<Option<Value>> {
        check_key(key)?;
        self.refresh()?;
        let doc = self.current_stored(key)?;
        self.unseal_doc(doc)
    }

    /// The canonical text of the current document under `key` (personal values unsealed):
    /// the stored text itself unless it holds sealed values, so no tree is built.
    pub fn current_text(&self, key: &str) -> Result<Option<String>> {
        check_key(key)?;
        self.refresh()?;
        match self.store.doc_text(key)? {
            Some(t) if t.contains(crate::shred::SEALED) => {
                let doc = self.unseal_doc(Some(parse_stored(&t)?))?;
                Ok(doc.as_ref().map(canon::to_canonical_string))
            }
            other => Ok(other),
        }
    }

    /// The current document under `key` as stored (personal values sealed).
    pub(crate) fn current_stored(&self, key: &str) -> Result<Option<Value>> {
        self.store
            .doc_text(key)?
            .map(|t| parse_stored(&t))
            .transpose()
    }

    /// Every key that currently holds a document, sorted.
    pub fn keys(&self) -> Result<Vec<String>> {
        self.store.live_keys()
    }

    /// Reads a transaction.
    pub fn tx(&self, id: i64) -> Result<Option<TxInfo>> {
        self.store.tx(id)
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
        assert!(reader.store.is_autocommit());
        assert_eq!(reader.current("k").unwrap(), Some(json!({"v": 2})));
        // A failed read ends its transaction too.
        let failed: Result<()> = reader.snapshot(|| Err(Error::Corrupt("test".into())));
        assert!(failed.is_err());
        assert!(reader.store.is_autocommit());
        // Inside a batch, a read runs in the batch and sees its writes.
        reader.begin_batch().unwrap();
        write(&mut reader, "k", json!({"v": 3}));
        let now = reader.snapshot(|| reader.current("k")).unwrap();
        assert_eq!(now, Some(json!({"v": 3})));
        assert!(!reader.store.is_autocommit());
        reader.commit_batch().unwrap();
    }

    #[test]
    fn temporary_data_is_kept_in_memory_except_for_vacuum() {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        write(&mut repo, "k", json!({"v": 1}));
        let temp_store = |repo: &Repo| repo.store.temp_store();
        assert_eq!(temp_store(&repo), 2, "MEMORY");
        let actor = Actor::parse("user:test").unwrap();
        repo.gc(TxOptions::new(actor, "gc", Timestamp(2_000_000)))
            .unwrap();
        assert_eq!(temp_store(&repo), 2, "MEMORY again after gc's VACUUM");
    }
}
