//! The repository's side of crypto-shredding (the mechanism is [`crate::shred`]): reads
//! that unseal personal values, `forget`, `backup` (the keys kept apart), and `fsck`'s
//! check that every sealed value opens or belongs to a forgotten subject.

use crate::canon::Value;
use crate::error::{Error, Result, ShredError};
use crate::model::{Change, TxInfo};
use crate::repo::{HIST_DIR, Repo, TxOptions};
use crate::shred::seal;
use crate::shred::{FreshKeys, open_sealed, unseal_change_in, unseal_in};
use crate::store::objects::Objects;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

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

/// What [`Repo::protect_keys`] did.
#[derive(Clone, Debug)]
pub struct KeysProtected {
    /// The protection before.
    pub before: crate::shred::Protection,
    /// The protection now.
    pub after: crate::shred::Protection,
    /// The logged transaction (kind `keys`).
    pub tx: TxInfo,
}

impl Repo {
    /// What unlocks `keys.db` when its key is kept outside the repository (an identity
    /// file, a passphrase). Reads and writes that touch no personal value never need it.
    pub fn set_key_access(&mut self, access: crate::shred::KeyAccess) {
        self.keys.set_access(access);
    }

    /// How `keys.db` is protected at rest (`None`: the repository has no `keys.db`).
    pub fn key_protection(&self) -> Result<Option<crate::shred::Protection>> {
        self.keys.protection()
    }

    /// Moves the key that unlocks `keys.db`: into the repository, to an age identity file
    /// outside it, or to a passphrase. The master key is unlocked the current way (see
    /// [`Repo::set_key_access`]), encrypted the new way, the old identity deleted from
    /// `keys.db`, and the move logged as a transaction of kind `keys` (no secret in it).
    pub fn protect_keys(
        &mut self,
        opts: TxOptions,
        protection: &crate::shred::KeyProtection,
    ) -> Result<KeysProtected> {
        use crate::shred::{KeyProtection, Protection};
        if self.keys.protection()?.is_none() {
            self.keys.create(&KeyProtection::Repository)?;
        }
        let after = match protection {
            KeyProtection::Repository => Protection::Repository,
            KeyProtection::IdentityFile(_) => Protection::Identity,
            KeyProtection::Passphrase(_) => Protection::Passphrase,
        };
        let mut opts = opts;
        "keys".clone_into(&mut opts.kind);
        if opts.reason.is_none() {
            opts.reason = Some(format!("keys.db now unlocks with: {}", after.as_str()));
        }
        // The write lock is held while keys.db changes: the move and its record go together.
        let mut txn = self.begin(opts)?;
        let before = txn.keys().reprotect(protection)?;
        txn.record_always();
        let commit = txn.commit()?;
        let tx = commit
            .tx
            .ok_or_else(|| Error::Corrupt("a keys move recorded no transaction".into()))?;
        Ok(KeysProtected { before, after, tx })
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
        // Locked (its key kept outside and not given): the sealed values cannot be checked.
        match self.keys.subject_id("") {
            Err(Error::Shred(ShredError::Locked(_))) => return Ok(()),
            Err(e) => return Err(e),
            Ok(_) => {}
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
