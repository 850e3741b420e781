//! `keys.db`: the secrets of crypto-shredding, in their own SQLite file next to `hist.db`.
//!
//! Three levels, so that age's per-message header (about 200 bytes, and an X25519 exchange
//! of about 55 µs) is paid once per repository rather than once per value or subject:
//!
//! 1. what unlocks the master key ([`Protection`], `meta.protection`): an age X25519
//!    identity stored in `keys.db` itself (`repository`, the default: file permissions are
//!    then the only protection at rest), an age identity kept outside the repository
//!    (`identity`: `keys.db` holds only its public key, `meta.recipient`), or a passphrase
//!    (`passphrase`: age's scrypt);
//! 2. a random 32-byte master key, age-encrypted to that identity or passphrase
//!    (`meta.master`);
//! 3. per subject, a random 32-byte data key, stored XChaCha20-Poly1305-sealed under the
//!    master key with the subject id as associated data (72 bytes a subject).
//!
//! The master key is decrypted only when a personal value is read or written: everything
//! else (including deleting the keys of forgotten subjects on open) works without it.
//!
//! Forgetting a subject deletes its one row; with `secure_delete` on and a rollback journal
//! (deleted at commit, never a WAL that keeps old pages), no byte of the data key remains in
//! any file. The file is created owner-only (0600) and put back to 0600 when found wider.

use super::{KeyAccess, KeyProtection, Protection, ShredError};
use crate::error::Result;
use crate::store::Store;
use age::secrecy::ExposeSecret as _;
use chacha20poly1305::aead::rand_core::RngCore as _;
use chacha20poly1305::aead::{Aead, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A 32-byte secret.
pub(crate) type Secret = [u8; 32];

const SCHEMA: &str = include_str!("keys.sql");
const VERSION: i64 = 1;
const NONCE_LEN: usize = 24;

/// The scrypt work factor (log2 N) of a passphrase-protected `keys.db`: about 0.1 s (and
/// 64 MiB) per process that reads or writes personal values, where age's self-tuned
/// default would take a second or two each time.
const SCRYPT_LOG_N: u8 = 16;

/// The handle on `keys.db`, opened on first use.
pub(crate) struct Keys {
    path: PathBuf,
    open: RefCell<Option<Open>>,
    personal_seen: Cell<bool>,
    access: RefCell<KeyAccess>,
}

struct Open {
    conn: Connection,
    /// Decrypted on first need.
    master: Option<Secret>,
    data_version: i64,
    cache: HashMap<String, Secret>,
}

/// Fresh random bytes from the operating system.
pub(crate) fn random_secret() -> Result<Secret> {
    let mut key = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut key)
        .map_err(|e| ShredError::Crypto(format!("no randomness from the system: {e}")))?;
    Ok(key)
}

fn crypto(what: &str) -> impl FnOnce(String) -> crate::Error + '_ {
    move |e| ShredError::Crypto(format!("{what}: {e}")).into()
}

impl Keys {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            open: RefCell::new(None),
            personal_seen: Cell::new(false),
            access: RefCell::new(KeyAccess::default()),
        }
    }

    /// What unlocks the master key, when it is kept outside the repository.
    pub(crate) fn set_access(&self, access: KeyAccess) {
        *self.access.borrow_mut() = access;
        if let Some(open) = self.open.borrow_mut().as_mut() {
            open.master = None;
            open.cache.clear();
        }
    }

    /// Where `keys.db` is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Creates `keys.db` with a new master key, protected as `protection` says.
    pub(crate) fn create(&self, protection: &KeyProtection) -> Result<()> {
        let master = random_secret()?;
        let meta = protect(&master, protection)?;
        create_private_file(&self.path)?;
        self.fill(&meta)
    }

    /// Writes the schema and `meta` into an empty `keys.db`.
    fn fill(&self, meta: &[(&'static str, rusqlite::types::Value)]) -> Result<()> {
        let conn = self.connect()?;
        conn.execute_batch(&format!("BEGIN; {SCHEMA}"))?;
        for (name, value) in meta {
            conn.execute(
                "INSERT INTO meta (name, value) VALUES (?1, ?2)",
                params![name, value],
            )?;
        }
        conn.execute_batch(&format!("PRAGMA user_version = {VERSION}; COMMIT;"))?;
        Ok(())
    }

    /// How `keys.db` is protected (`None`: there is no `keys.db`).
    pub(crate) fn protection(&self) -> Result<Option<Protection>> {
        if !self.path.is_file() {
            return Ok(None);
        }
        self.with(|o| Ok(Some(protection_of(&o.conn)?)))
    }

    /// Protects the master key as `protection` says instead (unlocking it the current way
    /// first): the old identity is deleted from `keys.db` (`secure_delete`) when it moves
    /// out. Returns the protection before.
    pub(crate) fn reprotect(&self, protection: &KeyProtection) -> Result<Protection> {
        self.with_master(|o| {
            let before = protection_of(&o.conn)?;
            let master = o.master.ok_or(ShredError::Locked(before))?;
            let meta = protect(&master, protection)?;
            let t = o
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            t.execute(
                "DELETE FROM meta WHERE name IN ('identity', 'recipient', 'master', 'protection')",
                [],
            )?;
            for (name, value) in &meta {
                t.execute(
                    "INSERT INTO meta (name, value) VALUES (?1, ?2)",
                    params![name, value],
                )?;
            }
            t.commit()?;
            // The file shrinks to what it holds: no free page keeps the old identity.
            o.conn.execute_batch("VACUUM")?;
            // From now on it unlocks the new way only.
            o.master = None;
            o.cache.clear();
            Ok(before)
        })
    }

    /// Creates `keys.db` for a repository made before it existed, when its first personal
    /// rule is declared (never once personal values may be stored: a lost `keys.db` is
    /// an error, not something to paper over).
    pub(crate) fn create_if_first(&self, hist: &Store) -> Result<()> {
        if self.path.exists() || self.personal_seen(hist)? {
            return Ok(());
        }
        self.create(&KeyProtection::Repository)
    }

    /// True once a personal rule has been declared in this repository (ever): only then can
    /// a stored document hold sealed values, so only then do reads look for them.
    pub(crate) fn personal_seen(&self, hist: &Store) -> Result<bool> {
        if !self.personal_seen.get() {
            // Asked on every read and write until the answer is yes.
            self.personal_seen.set(hist.any_personal_rule()?);
        }
        Ok(self.personal_seen.get())
    }

    /// Runs `f` on the open `keys.db` (the master key not needed).
    fn with<T>(&self, f: impl FnOnce(&mut Open) -> Result<T>) -> Result<T> {
        let mut slot = self.open.borrow_mut();
        let open = match &mut *slot {
            Some(open) => open,
            empty => empty.insert(self.load()?),
        };
        f(open)
    }

    /// Runs `f` on the open `keys.db` with its master key decrypted.
    fn with_master<T>(&self, f: impl FnOnce(&mut Open) -> Result<T>) -> Result<T> {
        self.with(|o| {
            if o.master.is_none() {
                o.master = Some(unlock(&o.conn, &self.access.borrow())?);
            }
            f(o)
        })
    }

    fn connect(&self) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE;
             PRAGMA synchronous = FULL;
             PRAGMA secure_delete = ON;",
        )?;
        Ok(conn)
    }

    fn load(&self) -> Result<Open> {
        if !self.path.is_file() {
            return Err(ShredError::KeysMissing(self.path.clone()).into());
        }
        restrict_permissions(&self.path)?;
        let conn = self.connect()?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == 0 {
            // An empty file (a crash during `init` before it was filled): as `init` does.
            drop(conn);
            let meta = protect(&random_secret()?, &KeyProtection::Repository)?;
            self.fill(&meta)?;
            return self.load();
        } else if version > VERSION {
            return Err(ShredError::Crypto(format!(
                "{} has schema version {version}; this hist understands up to {VERSION}",
                self.path.display()
            ))
            .into());
        }
        let data_version = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok(Open {
            conn,
            master: None,
            data_version,
            cache: HashMap::new(),
        })
    }

    /// The master key, for tests that look for its bytes in files.
    #[cfg(test)]
    pub(crate) fn master_for_tests(&self) -> Result<Secret> {
        self.with_master(|o| master_of(o))
    }

    /// The id of a subject: the first 16 bytes of its blake3 hash keyed by a key derived
    /// from the master key, in hex. It says nothing about the subject to whoever lacks
    /// `keys.db`, and stays the same for the life of the repository.
    pub(crate) fn subject_id(&self, subject: &str) -> Result<String> {
        self.with_master(|o| {
            let key = blake3::derive_key("hist 2026-12 subject id", &master_of(o)?);
            let hash = blake3::keyed_hash(&key, subject.as_bytes());
            Ok(hash.to_hex()[..32].to_owned())
        })
    }

    /// The data key of subject `sid`, if it has one.
    pub(crate) fn get(&self, sid: &str) -> Result<Option<Secret>> {
        self.with_master(|o| {
            // Another connection (a `forget` elsewhere) may have deleted keys since.
            let version: i64 = o.conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
            if version != o.data_version {
                o.cache.clear();
                o.data_version = version;
            }
            if let Some(key) = o.cache.get(sid) {
                return Ok(Some(*key));
            }
            let row: Option<Vec<u8>> = o
                .conn
                .query_row(
                    "SELECT key FROM subject_key WHERE subject = ?1",
                    [sid],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(row) = row else {
                return Ok(None);
            };
            let key = unwrap_key(&master_of(o)?, sid, &row)?;
            o.cache.insert(sid.to_owned(), key);
            Ok(Some(key))
        })
    }

    /// Stores new data keys, made by transaction `since_tx`, durably (before the log
    /// that uses them commits).
    pub(crate) fn store(&self, fresh: &[(String, Secret)], since_tx: i64) -> Result<()> {
        self.with_master(|o| {
            let master = master_of(o)?;
            let t = o
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            for (sid, key) in fresh {
                let wrapped = wrap_key(&master, sid, key)?;
                t.execute(
                    "INSERT INTO subject_key (subject, since_tx, key) VALUES (?1, ?2, ?3)",
                    params![sid, since_tx, wrapped],
                )?;
            }
            t.commit()?;
            o.cache.extend(fresh.iter().cloned());
            Ok(())
        })
    }

    /// Deletes the key of every subject the log of `hist` says was forgotten (keys made
    /// before the forget; a key made afterwards belongs to new values). Runs on every open,
    /// so a `keys.db` restored from an older backup is shredded again before any read.
    /// Only forgets newer than the last one handled here are looked at. Returns how many
    /// keys were deleted.
    pub(crate) fn shred_forgotten(&self, hist: &Store) -> Result<usize> {
        let newest = hist.newest_forget()?;
        let Some(newest) = newest else {
            return Ok(0);
        };
        if !self.path.is_file() {
            return Ok(0);
        }
        self.with(|o| {
            let meta = |name: &str| -> rusqlite::Result<Option<rusqlite::types::Value>> {
                o.conn
                    .query_row("SELECT value FROM meta WHERE name = ?1", [name], |r| {
                        r.get(0)
                    })
                    .optional()
            };
            use rusqlite::types::Value as V;
            let from = match (meta("shredded_tx")?, meta("shredded_hash")?) {
                (Some(V::Integer(tx)), Some(V::Blob(hash))) => {
                    let stored = hist.tx_hash(tx)?;
                    if stored == Some(hash) { tx } else { 0 }
                }
                _ => 0,
            };
            if from >= newest {
                return Ok(0);
            }
            let rows = hist.forgets_after(from)?;
            let newest_hash = hist.tx_hash(newest)?.unwrap_or_default();
            let t = o
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut deleted = 0;
            for (sid, tx) in &rows {
                deleted += t.execute(
                    "DELETE FROM subject_key WHERE subject = ?1 AND since_tx <= ?2",
                    params![sid, tx],
                )?;
            }
            t.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES ('shredded_tx', ?1), ('shredded_hash', ?2)",
                params![newest, newest_hash],
            )?;
            t.commit()?;
            o.cache.clear();
            Ok(deleted)
        })
    }

    /// Writes a consistent copy of `keys.db` to `dest` (a new file, owner-only).
    pub(crate) fn backup_to(&self, dest: &Path) -> Result<()> {
        create_private_file(dest)?;
        self.with(|o| {
            o.conn.backup(
                rusqlite::MAIN_DB,
                dest,
                None::<fn(rusqlite::backup::Progress)>,
            )?;
            Ok(())
        })?;
        restrict_permissions(dest)
    }
}

/// The master key of an open `keys.db` (unlocked by [`Keys::with_master`]).
fn master_of(o: &Open) -> Result<Secret> {
    o.master
        .ok_or_else(|| ShredError::Crypto("the master key is not unlocked".to_owned()).into())
}

/// How the `keys.db` on `conn` is protected (a `keys.db` made before protections existed
/// holds its identity).
fn protection_of(conn: &Connection) -> Result<Protection> {
    let name: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'protection'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(match name.as_deref() {
        None | Some("repository") => Protection::Repository,
        Some("identity") => Protection::Identity,
        Some("passphrase") => Protection::Passphrase,
        Some(other) => {
            return Err(ShredError::Crypto(format!(
                "keys.db is protected by {other:?}, which this hist does not know"
            ))
            .into());
        }
    })
}

/// The `meta` rows that protect `master` as `protection` says.
fn protect(
    master: &Secret,
    protection: &KeyProtection,
) -> Result<Vec<(&'static str, rusqlite::types::Value)>> {
    use rusqlite::types::Value as V;
    Ok(match protection {
        KeyProtection::Repository => {
            let identity = age::x25519::Identity::generate();
            let wrapped = age::encrypt(&identity.to_public(), master)
                .map_err(|e| crypto("sealing the master key")(e.to_string()))?;
            vec![
                ("protection", V::Text("repository".into())),
                (
                    "identity",
                    V::Text(identity.to_string().expose_secret().to_owned()),
                ),
                ("master", V::Blob(wrapped)),
            ]
        }
        KeyProtection::IdentityFile(path) => {
            let identity = identity_file(path, true)?;
            let recipient = identity.to_public();
            let wrapped = age::encrypt(&recipient, master)
                .map_err(|e| crypto("sealing the master key")(e.to_string()))?;
            vec![
                ("protection", V::Text("identity".into())),
                ("recipient", V::Text(recipient.to_string())),
                ("master", V::Blob(wrapped)),
            ]
        }
        KeyProtection::Passphrase(passphrase) => {
            if passphrase.expose_secret().is_empty() {
                return Err(ShredError::WrongKey("the passphrase is empty".to_owned()).into());
            }
            let mut recipient = age::scrypt::Recipient::new(passphrase.clone());
            recipient.set_work_factor(SCRYPT_LOG_N);
            let wrapped = age::encrypt(&recipient, master)
                .map_err(|e| crypto("sealing the master key")(e.to_string()))?;
            vec![
                ("protection", V::Text("passphrase".into())),
                ("master", V::Blob(wrapped)),
            ]
        }
    })
}

/// Decrypts the master key of the `keys.db` on `conn` with what `access` gives.
fn unlock(conn: &Connection, access: &KeyAccess) -> Result<Secret> {
    let protection = protection_of(conn)?;
    let wrapped: Vec<u8> =
        conn.query_row("SELECT value FROM meta WHERE name = 'master'", [], |r| {
            r.get(0)
        })?;
    let master = match protection {
        Protection::Repository => {
            let identity: String =
                conn.query_row("SELECT value FROM meta WHERE name = 'identity'", [], |r| {
                    r.get(0)
                })?;
            let identity: age::x25519::Identity = identity
                .parse()
                .map_err(|e: &str| crypto("the repository identity in keys.db")(e.to_owned()))?;
            age::decrypt(&identity, &wrapped)
                .map_err(|e| crypto("the master key in keys.db")(e.to_string()))?
        }
        Protection::Identity => {
            let path = access
                .identity
                .as_deref()
                .ok_or(ShredError::Locked(Protection::Identity))?;
            let identity = identity_file(path, false)?;
            age::decrypt(&identity, &wrapped).map_err(|_| {
                ShredError::WrongKey(format!(
                    "the identity in {} does not open keys.db",
                    path.display()
                ))
            })?
        }
        Protection::Passphrase => {
            let passphrase = access
                .passphrase
                .clone()
                .ok_or(ShredError::Locked(Protection::Passphrase))?;
            let identity = age::scrypt::Identity::new(passphrase);
            age::decrypt(&identity, &wrapped).map_err(|_| {
                ShredError::WrongKey("the passphrase does not open keys.db".to_owned())
            })?
        }
    };
    master
        .as_slice()
        .try_into()
        .map_err(|_| crypto("the master key in keys.db")("it is not 32 bytes long".to_owned()))
}

/// The age X25519 identity in the file at `path` (the format `age-keygen` writes: `#`
/// comments, then `AGE-SECRET-KEY-1…`). With `create`, a missing file is created, owner
/// only, with a new identity.
fn identity_file(path: &Path, create: bool) -> Result<age::x25519::Identity> {
    let bad = |what: String| -> crate::Error {
        ShredError::WrongKey(format!("{}: {what}", path.display())).into()
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if create && e.kind() == std::io::ErrorKind::NotFound => {
            let identity = age::x25519::Identity::generate();
            create_private_file(path)?;
            let text = format!(
                "# hist keys.db identity; public key: {}\n{}\n",
                identity.to_public(),
                identity.to_string().expose_secret()
            );
            std::fs::write(path, text).map_err(crate::Error::io(path))?;
            return Ok(identity);
        }
        Err(e) => return Err(bad(format!("cannot read it: {e}"))),
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or_else(|| bad("it holds no age identity".to_owned()))?;
    line.parse()
        .map_err(|_| bad("its first line that is not a comment is not an age X25519 identity (AGE-SECRET-KEY-1…)".to_owned()))
}

fn wrap_key(master: &Secret, sid: &str, key: &Secret) -> Result<Vec<u8>> {
    let wrap = blake3::derive_key("hist 2026-12 subject key wrap", master);
    let nonce_bytes = random_secret()?;
    let nonce = XNonce::from_slice(&nonce_bytes[..NONCE_LEN]);
    let sealed = XChaCha20Poly1305::new(&wrap.into())
        .encrypt(
            nonce,
            Payload {
                msg: key,
                aad: sid.as_bytes(),
            },
        )
        .map_err(|_| crypto("sealing a subject key")("encryption failed".to_owned()))?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    Ok(out)
}

fn unwrap_key(master: &Secret, sid: &str, wrapped: &[u8]) -> Result<Secret> {
    let bad = || crypto("a subject key in keys.db")(format!("the key of subject {sid} is damaged"));
    if wrapped.len() < NONCE_LEN {
        return Err(bad());
    }
    let (nonce, sealed) = wrapped.split_at(NONCE_LEN);
    let wrap = blake3::derive_key("hist 2026-12 subject key wrap", master);
    let key = XChaCha20Poly1305::new(&wrap.into())
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: sid.as_bytes(),
            },
        )
        .map_err(|_| bad())?;
    key.as_slice().try_into().map_err(|_| bad())
}

/// Creates a new, empty file readable and writable by its owner only.
pub(crate) fn create_private_file(path: &Path) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path).map(drop).map_err(crate::Error::io(path))
}

/// Puts a file back to owner-only permissions when it is wider.
fn restrict_permissions(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::metadata(path).map_err(crate::Error::io(path))?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(crate::Error::io(path))?;
        }
    }
    Ok(())
}
