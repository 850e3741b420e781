//! Crypto-shredding end to end: personal rules, forget, the raw bytes left under `.hist/`,
//! backups restored from before a forget, `hist sql`, `fsck`.

use crate::common::TestEnv;
use std::path::{Path, PathBuf};

/// Every personal value the story writes for customer 1 (distinctive, so a raw-byte scan
/// cannot find them by accident).
const ALICE: [&str; 4] = [
    "alice.unique@example.com",
    "alice.second@example.com",
    "Alice Uniquename",
    "Alice Uniquename-Smith",
];
const BOB: [&str; 2] = ["bob.distinct@example.com", "Bob Distinctname"];
const FORGOTTEN: &str = "{\"$hist:forgotten\":true}";

fn write(env: &TestEnv, args: &[&str], at: &str) {
    env.run(&[args, &["--actor", "user:sam", "--at", at]].concat())
        .ok();
}

/// Three customers with `/email` and `/name` personal and `/plan` not; customer 1 changes
/// through several writes and an ingest.
fn customers() -> TestEnv {
    let env = TestEnv::init();
    for path in ["/email", "/name"] {
        let out = env.run(&[
            "rules",
            "personal",
            path,
            "--keys",
            "customer/*",
            "--actor",
            "user:dpo",
            "--at",
            "@2026-01-02",
        ]);
        assert!(
            out.ok().starts_with("added rule: personal"),
            "{}",
            out.stdout
        );
    }
    let doc = |email: &str, name: &str, plan: &str| {
        format!(r#"{{"email":"{email}","name":"{name}","plan":"{plan}"}}"#)
    };
    write(
        &env,
        &["set", "customer/1", "", &doc(ALICE[0], ALICE[2], "starter")],
        "@2026-02-01",
    );
    write(
        &env,
        &["set", "customer/2", "", &doc(BOB[0], BOB[1], "pro")],
        "@2026-02-02",
    );
    write(
        &env,
        &[
            "set",
            "customer/3",
            "",
            &doc("carol@example.com", "Carol", "team"),
        ],
        "@2026-02-03",
    );
    write(
        &env,
        &["set", "customer/1", "/plan", "\"pro\""],
        "@2026-03-01",
    );
    write(
        &env,
        &["set", "customer/1", "/email", &format!("\"{}\"", ALICE[1])],
        "@2026-04-01",
    );
    let snapshot = env.write("alice.json", doc(ALICE[1], ALICE[3], "team"));
    let snapshot = snapshot.to_str().unwrap();
    let out = env.run(&[
        "ingest",
        "customer/1",
        snapshot,
        "--actor",
        "poller:crm",
        "--at",
        "@2026-05-01",
    ]);
    assert_eq!(
        out.ok(),
        format!(
            "~ /name: \"{}\" -> \"{}\"\n~ /plan: \"pro\" -> \"team\"\nrecorded tx 8 (2 changes)\n",
            ALICE[2], ALICE[3]
        )
    );
    let again = env.run(&["ingest", "customer/1", snapshot, "--actor", "poller:crm"]);
    assert_eq!(again.ok(), "unchanged\n");
    env
}

/// Every file under `.hist/` (WAL and shared-memory files included) that holds `needle`,
/// in its raw bytes or, for objects, once decompressed.
fn files_holding(hist: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let has = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    let mut found = Vec::new();
    let mut dirs = vec![hist.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            if has(&bytes) || zstd::stream::decode_all(bytes.as_slice()).is_ok_and(|d| has(&d)) {
                found.push(path);
            }
        }
    }
    found
}

/// The subject keys stored in a `keys.db`: (subject id, stored key bytes).
fn stored_keys(keys_db: &Path) -> Vec<(String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(keys_db).unwrap();
    let mut stmt = conn
        .prepare("SELECT subject, key FROM subject_key ORDER BY subject")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0).unwrap(), r.get(1).unwrap())))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn forget_alice(env: &TestEnv) -> String {
    let out = env.run(&[
        "forget",
        "customer/1",
        "--actor",
        "user:dpo",
        "-m",
        "erasure request 118",
        "--at",
        "@2026-06-01",
    ]);
    let line = out.ok();
    let sid = line
        .strip_prefix("forgot customer/1 (subject id ")
        .and_then(|rest| rest.strip_suffix(", tx 9)\n"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        sid.len() == 32 && sid.bytes().all(|b| b.is_ascii_hexdigit()),
        "{sid}"
    );
    sid.to_owned()
}

#[test]
fn reads_are_transparent_until_the_forget() {
    let env = customers();
    assert_eq!(
        env.run(&["show", "customer/1"]).ok(),
        format!(
            "{{\n  \"email\": \"{}\",\n  \"name\": \"{}\",\n  \"plan\": \"team\"\n}}\n",
            ALICE[1], ALICE[3]
        )
    );
    assert_eq!(
        env.run(&["history", "customer/1", "/email"]).ok(),
        format!(
            "tx 3  2026-02-01T00:00:00Z  user:sam  + \"{}\"\n\
             tx 7  2026-04-01T00:00:00Z  user:sam  ~ \"{}\" -> \"{}\"\n",
            ALICE[0], ALICE[0], ALICE[1]
        )
    );
    assert_eq!(
        env.run(&["show", "customer/1", "@2026-03-15", "--path", "/email"])
            .ok(),
        format!("\"{}\"\n", ALICE[0])
    );
    assert_eq!(
        env.run(&["rules"]).ok(),
        "   1  personal /email --keys customer/*\n   2  personal /name --keys customer/*\n"
    );
}

#[test]
fn forget_one_customer() {
    let env = customers();
    let hist = env.join(".hist");
    // The plaintext never reaches any file; each customer has one key in keys.db.
    for value in ALICE.iter().chain(&BOB) {
        assert_eq!(
            files_holding(&hist, value.as_bytes()),
            Vec::<PathBuf>::new()
        );
    }
    let keys_before = stored_keys(&hist.join("keys.db"));
    assert_eq!(keys_before.len(), 3);

    let sid = forget_alice(&env);
    let (_, alice_key) = keys_before.iter().find(|(s, _)| *s == sid).unwrap();
    assert!(
        stored_keys(&hist.join("keys.db"))
            .iter()
            .all(|(s, _)| *s != sid)
    );

    // show: every personal value of customer 1 is forgotten, now and then; /plan is intact.
    let marker = "{\n    \"$hist:forgotten\": true\n  }";
    assert_eq!(
        env.run(&["show", "customer/1"]).ok(),
        format!("{{\n  \"email\": {marker},\n  \"name\": {marker},\n  \"plan\": \"team\"\n}}\n")
    );
    assert_eq!(
        env.run(&["show", "customer/1", "@tx:3", "--json"]).ok(),
        format!("{{\"email\":{FORGOTTEN},\"name\":{FORGOTTEN},\"plan\":\"starter\"}}\n")
    );
    // The other customers are untouched.
    assert_eq!(
        env.run(&["show", "customer/2", "--json"]).ok(),
        format!(
            "{{\"email\":\"{}\",\"name\":\"{}\",\"plan\":\"pro\"}}\n",
            BOB[0], BOB[1]
        )
    );
    // history: every change is still there, with who, when and why; the values are gone.
    assert_eq!(
        env.run(&["history", "customer/1", "/email"]).ok(),
        format!(
            "tx 3  2026-02-01T00:00:00Z  user:sam  + {FORGOTTEN}\n\
             tx 7  2026-04-01T00:00:00Z  user:sam  ~ {FORGOTTEN} -> {FORGOTTEN}\n"
        )
    );
    assert_eq!(
        env.run(&["history", "customer/1", "/name"]).ok(),
        format!(
            "tx 3  2026-02-01T00:00:00Z  user:sam  + {FORGOTTEN}\n\
             tx 8  2026-05-01T00:00:00Z  poller:crm  ~ {FORGOTTEN} -> {FORGOTTEN}\n"
        )
    );
    assert_eq!(
        env.run(&["history", "customer/1", "/plan"]).ok(),
        "tx 3  2026-02-01T00:00:00Z  user:sam  + \"starter\"\n\
         tx 6  2026-03-01T00:00:00Z  user:sam  ~ \"starter\" -> \"pro\"\n\
         tx 8  2026-05-01T00:00:00Z  poller:crm  ~ \"pro\" -> \"team\"\n"
    );
    assert_eq!(
        env.run(&["history", "customer/2", "/email"]).ok(),
        format!("tx 4  2026-02-02T00:00:00Z  user:sam  + \"{}\"\n", BOB[0])
    );
    // log -p: the forget is logged with its reason; old changes show the marker.
    assert_eq!(
        env.run(&["log", "-p", "-n", "2"]).ok(),
        format!(
            "tx 9  2026-06-01T00:00:00Z  user:dpo  forget (0 changes)\n    erasure request 118\n\n\
             tx 8  2026-05-01T00:00:00Z  poller:crm  ingest (2 changes)\n\
             \x20   customer/1 ~ /name: {FORGOTTEN} -> {FORGOTTEN}\n\
             \x20   customer/1 ~ /plan: \"pro\" -> \"team\"\n\n"
        )
    );
    // diff: forgotten values cannot differ; the rest of the diff is exact.
    assert_eq!(
        env.run(&["diff", "customer/1", "@tx:3"]).ok(),
        "~ /plan: \"starter\" -> \"team\"\n"
    );
    // sql sees sealed values only, and the forget by subject id.
    let sql = env.run(&[
        "sql",
        "SELECT c.key, c.path, c.old, c.new, d.doc FROM changes c JOIN current d USING (key)",
        "--csv",
    ]);
    for value in ALICE.iter().chain(&BOB) {
        assert!(!sql.ok().contains(value), "{value} in {}", sql.stdout);
    }
    assert!(sql.ok().contains(&format!("$hist:sealed:{sid}:")));
    assert_eq!(
        env.run(&[
            "sql",
            "SELECT subject, tx, actor, reason FROM forgets",
            "--csv"
        ])
        .ok(),
        format!("subject,tx,actor,reason\n{sid},9,user:dpo,erasure request 118\n")
    );
    assert_eq!(
        env.run(&["fsck"]).ok(),
        "checked 9 transactions, 3 keys, 7 changes, 0 checkpoints, 0 objects: ok\n"
    );
    // No byte of the forgotten values or of the key is left in any file under .hist/.
    for value in ALICE {
        assert_eq!(
            files_holding(&hist, value.as_bytes()),
            Vec::<PathBuf>::new()
        );
    }
    assert_eq!(files_holding(&hist, alice_key), Vec::<PathBuf>::new());
}

#[test]
fn a_backup_from_before_the_forget_is_shredded_again_on_open() {
    let env = customers();
    let hist = env.join(".hist");
    let out = env.run(&["backup", "old", "--keys", "vault/old-keys.db"]);
    assert_eq!(
        out.ok(),
        format!(
            "backed up to {}/old/.hist (0 objects)\nkeys in {}/vault/old-keys.db\n",
            env.path().display(),
            env.path().display()
        )
    );
    // The backup is a repository (with its keys put back in place, it reads as before).
    std::fs::copy(env.join("vault/old-keys.db"), env.join("old/.hist/keys.db")).unwrap();
    assert_eq!(
        env.run(&["-C", "old", "show", "customer/1", "--path", "/name"])
            .ok(),
        format!("\"{}\"\n", ALICE[3])
    );

    let sid = forget_alice(&env);
    let (_, alice_key) = stored_keys(&env.join("vault/old-keys.db"))
        .into_iter()
        .find(|(s, _)| *s == sid)
        .unwrap();
    // Restore keys.db from the backup: the forgotten key is back in the file…
    std::fs::copy(env.join("vault/old-keys.db"), hist.join("keys.db")).unwrap();
    assert_eq!(files_holding(&hist, &alice_key), vec![hist.join("keys.db")]);
    // …until the repository is opened: it is deleted before anything is read.
    assert_eq!(
        env.run(&["show", "customer/1", "--path", "/email", "--json"])
            .ok(),
        format!("{FORGOTTEN}\n")
    );
    assert_eq!(files_holding(&hist, &alice_key), Vec::<PathBuf>::new());
    assert_eq!(stored_keys(&hist.join("keys.db")).len(), 2);
    assert_eq!(
        env.run(&["show", "customer/2", "--path", "/email"]).ok(),
        format!("\"{}\"\n", BOB[0])
    );
    for value in ALICE {
        assert_eq!(
            files_holding(&hist, value.as_bytes()),
            Vec::<PathBuf>::new()
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(hist.join("keys.db"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    env.run(&["fsck"]).ok();
    // A backup to a place that holds one is refused.
    let err = env.run(&["backup", "old"]);
    assert_eq!(
        err.fails(1),
        format!(
            "hist: error: {}/old/.hist already exists; a backup goes to a new place\n",
            env.path().display()
        )
    );
}

#[test]
fn new_values_after_a_forget_get_a_new_key() {
    let env = customers();
    forget_alice(&env);
    let out = env.run(&[
        "set",
        "customer/1",
        "/email",
        "\"alice.third@example.com\"",
        "--actor",
        "user:sam",
        "--at",
        "@2026-07-01",
    ]);
    assert_eq!(
        out.ok(),
        format!(
            "~ /email: {FORGOTTEN} -> \"alice.third@example.com\"\nrecorded tx 10 (1 change)\n"
        )
    );
    assert_eq!(
        out.stderr,
        "hist: warning: customer/1: subject customer/1 was forgotten in tx 9; its new personal values get a new key\n"
    );
    assert_eq!(
        env.run(&["show", "customer/1", "--json"]).ok(),
        format!(
            "{{\"email\":\"alice.third@example.com\",\"name\":{FORGOTTEN},\"plan\":\"team\"}}\n"
        )
    );
    // Reopening does not shred the new key: it was made after the forget.
    assert_eq!(
        env.run(&["show", "customer/1", "--path", "/email"]).ok(),
        "\"alice.third@example.com\"\n"
    );
    env.run(&["fsck"]).ok();
}

#[test]
fn refusals_write_nothing() {
    let env = customers();
    let before = env.db_dump();
    // A personal rule over values already in the log in plaintext.
    write(
        &env,
        &[
            "set",
            "vendor/1",
            "/iban",
            "\"FR76 3000 6000 0112 3456 7890 189\"",
        ],
        "@2026-05-02",
    );
    let before_rule = env.db_dump();
    let err = env.run(&["rules", "personal", "/iban", "--actor", "user:dpo"]);
    assert_eq!(
        err.fails(1),
        "hist: error: cannot declare /iban personal: 1 change in the log (the first: vendor/1, tx 9) already holds plaintext there\n\
         Hint: personal paths are declared before the first write that touches them; the log is append-only, so values already in it cannot be encrypted afterwards. Declare the rule in a new repository and import the data there\n"
    );
    assert_eq!(env.db_dump(), before_rule);
    assert_ne!(before, before_rule);
    // Scoped to other keys, the same pattern is fine.
    env.run(&[
        "rules",
        "personal",
        "/iban",
        "--keys",
        "customer/*",
        "--actor",
        "user:dpo",
    ])
    .ok();
    let before = env.db_dump();
    let err = env.run(&["forget", "customer/1", "--actor", "user:dpo"]);
    assert_eq!(
        err.fails(2),
        "hist: error: a forget needs a reason\nHint: say why with -m, for example -m \"erasure request 2026-118\"\n"
    );
    let err = env.run(&["forget", "customer/9", "--actor", "user:dpo", "-m", "x"]);
    assert_eq!(
        err.fails(1),
        "hist: error: no personal values of subject \"customer/9\" are stored\n\
         Hint: the subject is the document key, or the value at the rule's --subject-from path; `hist rules` lists the personal rules\n"
    );
    env.run(&["forget", "customer/1", "--actor", "user:dpo"])
        .fails(2);
    assert_eq!(env.db_dump(), before);
    env.run(&[
        "forget",
        "customer/1",
        "--actor",
        "user:dpo",
        "-m",
        "request",
    ])
    .ok();
    let before = env.db_dump();
    let err = env.run(&["forget", "customer/1", "--actor", "user:dpo", "-m", "again"]);
    assert_eq!(
        err.fails(1),
        "hist: error: subject \"customer/1\" was already forgotten in tx 11\n"
    );
    assert_eq!(env.db_dump(), before);
}

#[test]
fn the_subject_can_come_from_a_field() {
    let env = TestEnv::init();
    env.run(&[
        "rules",
        "personal",
        "/phone",
        "--subject-from",
        "/customer_id",
        "--actor",
        "user:dpo",
    ])
    .ok();
    write(
        &env,
        &[
            "set",
            "order/1",
            "",
            r#"{"customer_id":"C-7","phone":"+33 6 12 34 56 78"}"#,
        ],
        "@2026-02-01",
    );
    write(
        &env,
        &[
            "set",
            "order/2",
            "",
            r#"{"customer_id":"C-7","phone":"+33 6 98 76 54 32"}"#,
        ],
        "@2026-02-02",
    );
    write(
        &env,
        &[
            "set",
            "order/3",
            "",
            r#"{"customer_id":"C-8","phone":"+1 555 0100"}"#,
        ],
        "@2026-02-03",
    );
    let before = env.db_dump();
    let err = env.run(&[
        "set",
        "order/4",
        "/phone",
        "\"+1 555 0199\"",
        "--actor",
        "user:sam",
    ]);
    assert_eq!(
        err.fails(1),
        "hist: error: order/4: the personal value at /phone takes its subject from /customer_id, where the document holds no string or number\n\
         Hint: write the subject field in the same document, or declare the rule without --subject-from (the subject is then the document key)\n"
    );
    assert_eq!(env.db_dump(), before);
    env.run(&["forget", "C-7", "--actor", "user:dpo", "-m", "request 9"])
        .ok();
    for key in ["order/1", "order/2"] {
        assert_eq!(
            env.run(&["show", key, "--json"]).ok(),
            format!("{{\"customer_id\":\"C-7\",\"phone\":{FORGOTTEN}}}\n")
        );
    }
    assert_eq!(
        env.run(&["show", "order/3", "--path", "/phone"]).ok(),
        "\"+1 555 0100\"\n"
    );
    assert_eq!(
        env.run(&["rules"]).ok(),
        "   1  personal /phone --subject-from /customer_id\n"
    );
    let hist = env.join(".hist");
    for value in ["+33 6 12 34 56 78", "+33 6 98 76 54 32"] {
        assert_eq!(
            files_holding(&hist, value.as_bytes()),
            Vec::<PathBuf>::new()
        );
    }
}

#[test]
fn tracked_files_with_personal_paths_keep_their_bytes_sealed() {
    let env = TestEnv::init();
    env.run(&[
        "rules", "personal", "/email", "--keys", "people/*", "--actor", "user:dpo",
    ])
    .ok();
    env.write(
        "people/ada.json",
        "{\n  \"email\": \"ada.tracked@example.com\",\n  \"plan\": \"pro\"\n}\n",
    );
    env.run(&["track", "people", "--actor", "user:sam"]).ok();
    // While the key exists, restore is byte-exact.
    std::fs::remove_file(env.join("people/ada.json")).unwrap();
    env.run(&["restore", "people/ada.json"]).ok();
    assert!(
        std::fs::read_to_string(env.join("people/ada.json"))
            .unwrap()
            .contains("ada.tracked@example.com")
    );
    // The raw bytes are not stored in clear.
    assert!(files_holding(&env.join(".hist"), b"ada.tracked@example.com").is_empty());
    env.run(&[
        "forget",
        "people/ada.json",
        "--actor",
        "user:dpo",
        "-m",
        "erasure",
    ])
    .ok();
    assert!(files_holding(&env.join(".hist"), b"ada.tracked@example.com").is_empty());
    let out = env.run(&["restore", "people/ada.json", "-o", "copy.json"]);
    assert!(out.fails(1).contains("forgotten"), "{}", out.stderr);
    assert_eq!(
        env.run(&["show", "people/ada.json", "--path", "/plan"])
            .ok(),
        "\"pro\"\n"
    );
    env.run(&["fsck"]).ok();
}
