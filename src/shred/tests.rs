//! Library tests of crypto-shredding: what is stored, what is left after a forget (raw
//! bytes of every file), subjects from a field, keyed arrays, large values, checkpoints,
//! raw bytes of tracked files, and the measured cost.

use super::*;
use crate::model::Actor;
use crate::path::PathPattern;
use crate::repo::{Repo, TxOptions};
use crate::time::{Timestamp, When};
use age::secrecy::ExposeSecret as _;
use std::path::{Path, PathBuf};

const ALICE_EMAIL: &str = "alice.unique@example.com";
const ALICE_NAME: &str = "Alice Uniquename";

fn opts(kind: &str) -> TxOptions {
    TxOptions::new(
        Actor::parse("user:test").unwrap(),
        kind,
        Timestamp(1_000_000),
    )
}

fn personal(repo: &mut Repo, pattern: &str, keys: Option<&str>, from: Option<&str>) -> Result<()> {
    let mut txn = repo.begin(opts("rules"))?;
    txn.add_rule(
        &PathPattern::parse(pattern)?,
        keys,
        &RuleKind::Personal {
            subject_from: from.map(|p| DocPath::parse(p).unwrap()),
        },
    )?;
    txn.commit().map(drop)
}

/// Records a snapshot; the changes its commit reports, unsealed (`None`: unchanged).
fn put(repo: &mut Repo, key: &str, doc: Value) -> Option<Vec<crate::Change>> {
    let mut txn = repo.begin(opts("ingest")).unwrap();
    let out = txn.put(key, doc).unwrap();
    let commit = txn.commit().unwrap();
    let changes: Vec<crate::Change> = commit
        .changes
        .iter()
        .map(|(_, c)| c.to_change().unwrap())
        .collect();
    match out {
        crate::PutOutcome::Unchanged => {
            assert!(changes.is_empty());
            None
        }
        crate::PutOutcome::Changed(n) => {
            assert_eq!(changes.len(), n);
            Some(changes)
        }
    }
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// The files under `.hist/` that contain `needle`, in raw bytes or (for objects) once
/// decompressed.
fn found_in(repo: &Repo, needle: &[u8]) -> Vec<PathBuf> {
    found_under(&repo.hist_dir(), needle)
}

/// The files under `dir` that contain `needle`, in raw bytes or once decompressed.
fn found_under(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let has = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    files_under(dir)
        .into_iter()
        .filter(|(_, bytes)| {
            has(bytes) || zstd::stream::decode_all(bytes.as_slice()).is_ok_and(|d| has(&d))
        })
        .map(|(p, _)| p)
        .collect()
}

fn customer(email: &str, name: &str, plan: &str) -> Value {
    json!({"email": email, "name": name, "plan": plan, "notes": "x".repeat(300)})
}

#[test]
fn nothing_of_a_forgotten_subject_is_left_in_any_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", Some("customer/*"), None).unwrap();
    personal(&mut repo, "/name", Some("customer/*"), None).unwrap();
    personal(&mut repo, "/cv", Some("customer/*"), None).unwrap();
    // Enough writes for checkpoints, a value large enough to be an object.
    for i in 0..40 {
        let email = format!("alice.unique+{i}@example.com");
        put(
            &mut repo,
            "customer/1",
            customer(&email, ALICE_NAME, &format!("plan-{i}")),
        );
        let email = format!("bob+{i}@example.com");
        put(
            &mut repo,
            "customer/2",
            customer(&email, "Bob", &format!("plan-{i}")),
        );
    }
    let cv = format!("{ALICE_NAME} CV: {}", "experience ".repeat(600));
    let mut txn = repo.begin(opts("write")).unwrap();
    txn.set("customer/1", &DocPath::parse("/cv").unwrap(), json!(cv))
        .unwrap();
    txn.commit().unwrap();
    let checkpoints: usize = ["customer/1", "customer/2"]
        .iter()
        .map(|key| repo.store.checkpoints(key).unwrap().len())
        .sum();
    assert!(checkpoints >= 2, "{checkpoints} checkpoints");
    assert!(repo.store.objects().list().unwrap().len() >= 3);

    let sid = repo.subject_id("customer/1").unwrap();
    let data_key = repo.keys.get(&sid).unwrap().unwrap();
    let wrapped: Vec<u8> = rusqlite::Connection::open(repo.keys.path())
        .unwrap()
        .query_row(
            "SELECT key FROM subject_key WHERE subject = ?1",
            [&sid],
            |r| r.get(0),
        )
        .unwrap();
    let secrets: [&[u8]; 4] = [b"alice.unique", ALICE_NAME.as_bytes(), &data_key, &wrapped];
    // Before: the plaintext is nowhere (it never was), the stored key is in keys.db only.
    for s in &secrets[..3] {
        assert_eq!(found_in(&repo, s), Vec::<PathBuf>::new());
    }
    assert_eq!(
        found_in(&repo, &wrapped),
        vec![repo.keys.path().to_path_buf()]
    );
    assert_eq!(
        repo.current("customer/1").unwrap().unwrap()["email"],
        json!("alice.unique+39@example.com")
    );

    repo.forget(opts("forget").reason(Some("erasure".into())), "customer/1")
        .unwrap();
    for s in secrets {
        assert_eq!(found_in(&repo, s), Vec::<PathBuf>::new());
    }
    // Opened again (a new process): still nothing, and reads show the marker.
    drop(repo);
    let repo = Repo::open(dir.path()).unwrap();
    for s in secrets {
        assert_eq!(found_in(&repo, s), Vec::<PathBuf>::new());
    }
    let doc = repo.current("customer/1").unwrap().unwrap();
    assert_eq!(doc["email"], forgotten_marker());
    assert_eq!(doc["cv"], forgotten_marker());
    assert_eq!(doc["plan"], json!("plan-39"));
    let old = repo.as_of("customer/1", When::Tx(10)).unwrap();
    assert_eq!(old.doc.unwrap()["name"], forgotten_marker());
    let bob = repo.current("customer/2").unwrap().unwrap();
    assert_eq!(bob["email"], json!("bob+39@example.com"));
    // Read forwards from a checkpoint, too: customer/2's 19th version is tx 4 + 2 × 19.
    let early = repo.as_of("customer/2", When::Tx(42)).unwrap();
    assert_eq!(early.direction, crate::Direction::Forward);
    assert!(early.replayed < 19, "{} replayed", early.replayed);
    assert_eq!(early.doc.unwrap()["email"], json!("bob+18@example.com"));
    let report = repo.fsck().unwrap();
    assert!(report.ok(), "{:?}", report.problems);
}

#[test]
fn unchanged_snapshots_stay_unchanged_and_the_hash_is_keyed() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", None, None).unwrap();
    let doc = json!({"email": ALICE_EMAIL, "plan": "pro"});
    assert!(put(&mut repo, "c/1", doc.clone()).is_some());
    assert_eq!(put(&mut repo, "c/1", doc.clone()), None);
    // The stored hash is not the plain hash of the document (which a guess could match).
    let stored = repo.store.last_written("c/1").unwrap().hash.unwrap();
    assert_ne!(stored, crate::canon::hash(&doc).0.to_vec());
    // A change to a personal field is one replace at its path, shown in plaintext.
    let out = put(
        &mut repo,
        "c/1",
        json!({"email": "new@example.com", "plan": "pro"}),
    );
    let changes = out.expect("changed");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].path.to_string(), "/email");
    assert_eq!(changes[0].new, Some(json!("new@example.com")));
    assert_eq!(changes[0].old, Some(json!(ALICE_EMAIL)));
}

#[test]
fn subject_from_a_field_and_personal_elements_of_keyed_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut txn = repo.begin(opts("rules")).unwrap();
    txn.add_rule(
        &PathPattern::parse("/contacts").unwrap(),
        None,
        &RuleKind::ArrayKey(vec!["id".into()]),
    )
    .unwrap();
    txn.commit().unwrap();
    personal(&mut repo, "/contacts[*]/phone", None, Some("/customer_id")).unwrap();
    let doc = json!({"customer_id": "C-77", "contacts": [
        {"id": 2, "phone": "+33 6 11 22 33 44"}, {"id": 1, "phone": "+33 6 55 66 77 88"}]});
    put(&mut repo, "account/9", doc);
    let stored = repo.current_stored("account/9").unwrap().unwrap();
    assert!(!stored.to_string().contains("+33"));
    assert!(
        stored
            .to_string()
            .contains(&repo.subject_id("C-77").unwrap())
    );
    // One element changes: one change, at the element's phone.
    let out = put(
        &mut repo,
        "account/9",
        json!({"customer_id": "C-77", "contacts": [
            {"id": 1, "phone": "+33 6 55 66 77 88"}, {"id": 2, "phone": "+33 7 00 00 00 00"}]}),
    );
    let changes = out.expect("changed");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].path.to_string(), "/contacts[id=2]/phone");
    let history = repo
        .history(
            "account/9",
            &DocPath::parse("/contacts[id=2]/phone").unwrap(),
        )
        .unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].new, Some(json!("+33 7 00 00 00 00")));
    // The subject is the customer id, not the key.
    let err = repo
        .forget(opts("forget"), "account/9")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "no personal values of subject \"account/9\" are stored"
    );
    repo.forget(opts("forget"), "C-77").unwrap();
    let doc = repo.current("account/9").unwrap().unwrap();
    assert_eq!(doc["contacts"][0]["phone"], forgotten_marker());
    assert_eq!(doc["customer_id"], json!("C-77"));
    // A document without its subject field cannot store a personal value.
    let mut txn = repo.begin(opts("write")).unwrap();
    let err = txn
        .put(
            "account/10",
            json!({"contacts": [{"id": 1, "phone": "+1"}]}),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "account/10: the personal value at /contacts[*]/phone takes its subject from \
         /customer_id, where the document holds no string or number"
    );
}

#[test]
fn a_rule_over_plaintext_already_in_the_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    put(
        &mut repo,
        "customer/1",
        json!({"profile": {"email": ALICE_EMAIL}}),
    );
    put(&mut repo, "other/1", json!({"email": ALICE_EMAIL}));
    let err = personal(&mut repo, "/profile/email", None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot declare /profile/email personal: 1 change in the log (the first: customer/1, \
         tx 1) already holds plaintext there"
    );
    assert_eq!(repo.rules().len(), 0);
    assert_eq!(repo.newest_tx().unwrap().unwrap().id, 2);
    // Other paths, and other keys, are fine.
    personal(&mut repo, "/profile/name", None, None).unwrap();
    personal(&mut repo, "/email", Some("customer/*"), None).unwrap();
    assert!(personal(&mut repo, "/email", None, None).is_err());
}

#[test]
fn raw_bytes_of_tracked_files_are_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", Some("people/*"), None).unwrap();
    let raw = format!("email: {ALICE_EMAIL}\n").into_bytes();
    let mut txn = repo.begin(opts("track")).unwrap();
    let plain = txn.seal_raw("config/app.yaml", None, &raw).unwrap();
    let sealed = txn.seal_raw("people/alice.yaml", None, &raw).unwrap();
    txn.put("people/alice.yaml", json!({"email": ALICE_EMAIL}))
        .unwrap();
    txn.commit().unwrap();
    assert_eq!(plain, raw);
    assert!(
        !sealed
            .windows(ALICE_EMAIL.len())
            .any(|w| w == ALICE_EMAIL.as_bytes())
    );
    assert_eq!(repo.unseal_raw(sealed.clone()).unwrap(), Some(raw.clone()));
    assert_eq!(repo.unseal_raw(raw.clone()).unwrap(), Some(raw));
    repo.forget(opts("forget"), "people/alice.yaml").unwrap();
    assert_eq!(repo.unseal_raw(sealed).unwrap(), None);
}

#[test]
fn a_missing_keys_db_is_an_error_not_a_silent_forget() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", None, None).unwrap();
    put(
        &mut repo,
        "c/1",
        json!({"email": ALICE_EMAIL, "plan": "pro"}),
    );
    drop(repo);
    std::fs::remove_file(dir.path().join(".hist/keys.db")).unwrap();
    let repo = Repo::open(dir.path()).unwrap();
    let err = repo.current("c/1").unwrap_err();
    assert!(
        matches!(err, Error::Shred(ShredError::KeysMissing(_))),
        "{err}"
    );
    let report = repo.fsck().unwrap();
    assert_eq!(report.problems.len(), 1);
    assert!(report.problems[0].ends_with("keys.db is missing: no personal value can be read"));
    // Another repository's keys.db: the values are there but cannot be opened.
    let other = tempfile::tempdir().unwrap();
    drop(Repo::init(other.path()).unwrap());
    std::fs::copy(
        other.path().join(".hist/keys.db"),
        dir.path().join(".hist/keys.db"),
    )
    .unwrap();
    let repo = Repo::open(dir.path()).unwrap();
    let stored = repo.current_stored("c/1").unwrap().unwrap();
    let (_, sid) = seal::as_sealed(&stored["email"]).unwrap();
    assert_eq!(
        repo.fsck().unwrap().problems,
        vec![format!(
            "subject {sid}: 1 sealed value has no key, and the subject was never forgotten"
        )]
    );
}

#[cfg(unix)]
#[test]
fn keys_db_is_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(repo.keys.path()), 0o600);
    drop(repo);
    let path = dir.path().join(".hist/keys.db");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let repo = Repo::open(dir.path()).unwrap();
    repo.subject_id("x").unwrap();
    assert_eq!(mode(&path), 0o600);
}

/// The cost of sealing: bytes of overhead per value and time per value. Prints the figures
/// (`cargo test --release --lib shred::tests::cost -- --nocapture`); asserts only the size
/// formula, never a time.
#[test]
fn cost() {
    use std::time::Instant;
    let key = [9u8; 32];
    let sid = "0123456789abcdef0123456789abcdef";
    for plain in [
        json!("alice.unique@example.com"),
        json!("Alice Uniquename"),
        json!(42),
        json!("x".repeat(1000)),
    ] {
        let n = crate::canon::to_canonical_string(&plain).len();
        let sealed = seal::seal(&plain, sid, &key).unwrap();
        let m = crate::canon::to_canonical_string(&sealed).len();
        // "$hist:sealed:" + 32 + ":" + base64(24 + 16 + n), in quotes.
        assert_eq!(m, 2 + 13 + 32 + 1 + (4 * (40 + n)).div_ceil(3));
        let rounds = if cfg!(debug_assertions) {
            200u32
        } else {
            20_000
        };
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(seal::seal(std::hint::black_box(&plain), sid, &key).unwrap());
        }
        let enc = t.elapsed() / rounds;
        let (blob, s) = seal::as_sealed(&sealed).unwrap();
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(seal::open(std::hint::black_box(blob), s, &key).unwrap());
        }
        let dec = t.elapsed() / rounds;
        eprintln!(
            "sealed value: {n} B plaintext -> {m} B stored (+{} B); seal {enc:?}, open {dec:?}",
            m - n
        );
    }
    let t = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    let init = t.elapsed();
    drop(repo);
    let t = Instant::now();
    let repo = Repo::open(dir.path()).unwrap();
    repo.subject_id("x").unwrap();
    eprintln!(
        "keys.db: init with identity and master key {init:?}; open + age-decrypt master {:?}; 72 B per subject key",
        t.elapsed()
    );
}

#[test]
fn writes_never_unseal_a_value_no_rule_covers() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", None, None).unwrap();
    put(
        &mut repo,
        "c/1",
        json!({"email": ALICE_EMAIL, "plan": "pro"}),
    );
    // The rule goes (as a rename would move the value away from it): later writes of other
    // fields keep the sealed value sealed, and reads still open it.
    let id = repo.rules()[0].id;
    let mut txn = repo.begin(opts("rules")).unwrap();
    txn.remove_rule(id).unwrap();
    txn.commit().unwrap();
    let mut txn = repo.begin(opts("write")).unwrap();
    let changes = txn
        .set("c/1", &DocPath::parse("/plan").unwrap(), json!("team"))
        .unwrap();
    txn.commit().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(found_in(&repo, b"alice.unique"), Vec::<PathBuf>::new());
    let stored = repo.current_stored("c/1").unwrap().unwrap();
    assert!(seal::as_sealed(&stored["email"]).is_some());
    assert_eq!(
        repo.current("c/1").unwrap().unwrap()["email"],
        json!(ALICE_EMAIL)
    );
}

/// The files under `dir` holding an age identity (`AGE-SECRET-KEY-1` and its key; the
/// schema's comment names the prefix alone).
fn holding_an_identity(dir: &Path) -> Vec<PathBuf> {
    let prefix = b"AGE-SECRET-KEY-1";
    files_under(dir)
        .into_iter()
        .filter(|(_, bytes)| {
            bytes
                .windows(prefix.len() + 1)
                .any(|w| w.starts_with(prefix) && w[prefix.len()].is_ascii_alphanumeric())
        })
        .map(|(p, _)| p)
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Issue 24: with the age identity kept outside the repository, a byte scan of a copied
/// `.hist/` finds no personal value and no key that opens one (not the identity, not the
/// master key, not a subject's data key); the copy reads and writes what is not personal,
/// and refuses, clearly, what is.
#[test]
fn with_the_identity_outside_a_copy_of_hist_reveals_no_personal_value() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let identity = outside.path().join("identity.txt");
    let mut repo =
        Repo::init_with(dir.path(), &KeyProtection::IdentityFile(identity.clone())).unwrap();
    let access = KeyAccess {
        identity: Some(identity.clone()),
        passphrase: None,
    };
    repo.set_key_access(access.clone());
    personal(&mut repo, "/email", Some("customer/*"), None).unwrap();
    personal(&mut repo, "/name", Some("customer/*"), None).unwrap();
    for i in 0..30 {
        put(
            &mut repo,
            "customer/1",
            customer(ALICE_EMAIL, ALICE_NAME, &format!("plan-{i}")),
        );
    }
    put(&mut repo, "feed/acme", json!({"price": 12}));
    let master = repo.keys.master_for_tests().unwrap();
    let sid = repo.subject_id("customer/1").unwrap();
    let data_key = repo.keys.get(&sid).unwrap().unwrap();
    let secret = std::fs::read_to_string(&identity).unwrap();
    let secret = secret
        .lines()
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"))
        .unwrap()
        .to_owned();
    assert_eq!(repo.key_protection().unwrap(), Some(Protection::Identity));
    drop(repo);
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&dir.path().join(".hist"), &copy.path().join(".hist"));
    for needle in [
        ALICE_EMAIL.as_bytes(),
        ALICE_NAME.as_bytes(),
        &master,
        &data_key,
        secret.as_bytes(),
    ] {
        let found = found_under(copy.path(), needle);
        assert!(
            found.is_empty(),
            "{:?} found in {found:?}",
            String::from_utf8_lossy(needle)
        );
    }
    assert!(holding_an_identity(copy.path()).is_empty());
    // The copy, without the identity: what is not personal reads and writes…
    let mut copied = Repo::open(copy.path()).unwrap();
    assert_eq!(
        copied.current("feed/acme").unwrap(),
        Some(json!({"price": 12}))
    );
    let mut txn = copied.begin(opts("write")).unwrap();
    txn.set(
        "customer/1",
        &DocPath::parse("/plan").unwrap(),
        json!("team"),
    )
    .unwrap();
    txn.commit().unwrap();
    assert!(
        copied
            .history("customer/1", &DocPath::parse("/plan").unwrap())
            .is_ok()
    );
    // …what is personal fails, saying why.
    let err = copied.current("customer/1").unwrap_err();
    assert!(
        matches!(err, Error::Shred(ShredError::Locked(Protection::Identity))),
        "{err}"
    );
    let mut txn = copied.begin(opts("write")).unwrap();
    let err = txn
        .set(
            "customer/2",
            &DocPath::parse("/email").unwrap(),
            json!("x@example.com"),
        )
        .unwrap_err();
    assert!(matches!(err, Error::Shred(ShredError::Locked(_))), "{err}");
    drop(txn);
    // A wrong identity is told apart from none.
    let other = outside.path().join("other.txt");
    std::fs::write(
        &other,
        format!(
            "{}\n",
            age::x25519::Identity::generate()
                .to_string()
                .expose_secret()
        ),
    )
    .unwrap();
    copied.set_key_access(KeyAccess {
        identity: Some(other),
        passphrase: None,
    });
    assert!(matches!(
        copied.current("customer/1").unwrap_err(),
        Error::Shred(ShredError::WrongKey(_))
    ));
    // With it, everything reads; fsck checks the sealed values.
    copied.set_key_access(access);
    let doc = copied.current("customer/1").unwrap().unwrap();
    assert_eq!(doc["email"], json!(ALICE_EMAIL));
    assert_eq!(doc["plan"], json!("team"));
    assert!(copied.fsck().unwrap().problems.is_empty());
}

/// Moving the identity (inside → outside → passphrase → inside) is a logged transaction; the
/// identity leaves `keys.db` when it moves out, and every value still opens.
#[test]
fn the_identity_moves_with_a_logged_transaction() {
    use age::secrecy::ExposeSecret as _;
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    personal(&mut repo, "/email", Some("customer/*"), None).unwrap();
    put(
        &mut repo,
        "customer/1",
        customer(ALICE_EMAIL, ALICE_NAME, "pro"),
    );
    assert_eq!(repo.key_protection().unwrap(), Some(Protection::Repository));
    assert!(!holding_an_identity(&repo.hist_dir()).is_empty());
    let identity = outside.path().join("id.txt");
    let moved = repo
        .protect_keys(opts("keys"), &KeyProtection::IdentityFile(identity.clone()))
        .unwrap();
    assert_eq!(
        (moved.before, moved.after),
        (Protection::Repository, Protection::Identity)
    );
    assert_eq!(moved.tx.kind, "keys");
    assert!(holding_an_identity(&repo.hist_dir()).is_empty());
    assert!(identity.is_file());
    // Locked until the identity is given.
    assert!(repo.current("customer/1").is_err());
    repo.set_key_access(KeyAccess {
        identity: Some(identity),
        passphrase: None,
    });
    assert_eq!(
        repo.current("customer/1").unwrap().unwrap()["email"],
        json!(ALICE_EMAIL)
    );
    let passphrase = age::secrecy::SecretString::from("correct horse".to_owned());
    repo.protect_keys(opts("keys"), &KeyProtection::Passphrase(passphrase.clone()))
        .unwrap();
    assert_eq!(repo.key_protection().unwrap(), Some(Protection::Passphrase));
    repo.set_key_access(KeyAccess {
        identity: None,
        passphrase: Some(passphrase.clone()),
    });
    assert_eq!(
        repo.current("customer/1").unwrap().unwrap()["email"],
        json!(ALICE_EMAIL)
    );
    assert_eq!(passphrase.expose_secret(), "correct horse");
    repo.protect_keys(opts("keys"), &KeyProtection::Repository)
        .unwrap();
    repo.set_key_access(KeyAccess::default());
    assert_eq!(
        repo.current("customer/1").unwrap().unwrap()["email"],
        json!(ALICE_EMAIL)
    );
    let log = repo.log(&crate::LogFilter::default()).unwrap();
    let kinds: Vec<&str> = log.iter().map(|e| e.tx.kind.as_str()).take(3).collect();
    assert_eq!(kinds, ["keys", "keys", "keys"]);
}

#[test]
fn an_identity_file_that_does_not_exist_is_refused_before_any_key_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let missing = KeyAccess {
        identity: Some(dir.path().join("nowhere.txt")),
        passphrase: None,
    };
    let err = missing.check().unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert_eq!(err.class(), crate::ErrorClass::Failure);
    let file = dir.path().join("id.txt");
    std::fs::write(&file, "AGE-SECRET-KEY-1").unwrap();
    let present = KeyAccess {
        identity: Some(file),
        passphrase: None,
    };
    assert!(present.check().is_ok());
    assert!(KeyAccess::default().check().is_ok());
}
