//! Keys at rest: `hist init --identity FILE` (or `--passphrase`), `HIST_IDENTITY`, and
//! `hist keys` to see or move what unlocks keys.db. Without it, what touches no personal
//! value works; what does fails with a clear error and a hint.

use crate::common::{Run, TestEnv};

const SAM: [&str; 2] = ["--actor", "user:sam"];

fn with_env(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut cmd = env.command(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    env.run_cmd(cmd, None)
}

#[test]
fn an_identity_kept_outside_unlocks_personal_values_only() {
    let env = TestEnv::new();
    let outside = tempfile::tempdir().unwrap();
    let id = outside.path().join("identity.txt");
    let id = id.to_str().unwrap();
    env.run(&["init", "--identity", id]).ok();
    assert!(
        std::fs::read_to_string(id)
            .unwrap()
            .contains("AGE-SECRET-KEY-1")
    );
    assert!(env.run(&["keys"]).ok().starts_with("identity: "));
    env.run(
        &[
            &["rules", "personal", "/email", "--keys", "customer/*"][..],
            &SAM,
        ]
        .concat(),
    )
    .ok();
    let doc = r#"{"email":"ada@example.com","plan":"pro"}"#;
    // Writing a personal value needs the identity…
    let err = env.run(&[&["set", "customer/1", "", doc][..], &SAM].concat());
    let stderr = err.fails(1);
    assert!(stderr.contains("keys.db is locked"), "{stderr}");
    assert!(
        stderr.contains("Hint: pass --identity FILE (or set HIST_IDENTITY)"),
        "{stderr}"
    );
    let unlocked = [("HIST_IDENTITY", id)];
    with_env(
        &env,
        &[&["set", "customer/1", "", doc][..], &SAM].concat(),
        &unlocked,
    )
    .ok();
    // …what touches no personal value does not.
    env.run(&[&["set", "customer/1", "/plan", "\"team\""][..], &SAM].concat())
        .ok();
    env.run(&[&["set", "feed/acme", "/price", "12"][..], &SAM].concat())
        .ok();
    assert_eq!(
        env.run(&["show", "feed/acme", "--json"]).ok(),
        "{\"price\":12}\n"
    );
    env.run(&["history", "customer/1", "/plan"]).ok();
    env.run(&["ls"]).ok();
    env.run(&["fsck"]).ok();
    env.run(&["sql", "SELECT count(*) FROM changes"]).ok();
    env.run(&["show", "customer/1"]).fails(1);
    assert_eq!(
        env.run(&["--identity", id, "show", "customer/1", "--json"])
            .ok(),
        "{\"email\":\"ada@example.com\",\"plan\":\"team\"}\n"
    );
    // Moved back inside, as a logged transaction: no identity needed any more.
    let out = with_env(
        &env,
        &[&["keys", "--to-repository"][..], &SAM].concat(),
        &unlocked,
    );
    assert!(
        out.ok().starts_with("keys.db: identity -> repository (tx "),
        "{out:?}"
    );
    assert!(
        env.run(&["log", "-n", "1", "--oneline"])
            .ok()
            .contains("user:sam keys.db now unlocks with: repository")
    );
    env.run(&["show", "customer/1"]).ok();
    assert!(env.run(&["keys"]).ok().starts_with("repository: "));
}

#[test]
fn a_passphrase_unlocks_keys_db() {
    let env = TestEnv::new();
    env.run(&["init", "--passphrase"]).fails(2);
    let secret = [("HIST_PASSPHRASE", "correct horse battery")];
    with_env(&env, &["init", "--passphrase"], &secret).ok();
    env.run(&[&["rules", "personal", "/email"][..], &SAM].concat())
        .ok();
    let set = [&["set", "c", "/email", "\"ada@example.com\""][..], &SAM].concat();
    assert!(env.run(&set).fails(1).contains("Hint: set HIST_PASSPHRASE"));
    with_env(&env, &set, &secret).ok();
    let wrong = [("HIST_PASSPHRASE", "wrong")];
    let out = with_env(&env, &["show", "c"], &wrong);
    assert!(
        out.fails(1)
            .contains("the passphrase does not open keys.db"),
        "{out:?}"
    );
    env.write("pass.txt", "correct horse battery\n");
    env.run(&["--passphrase-file", "pass.txt", "show", "c"])
        .ok();
}
