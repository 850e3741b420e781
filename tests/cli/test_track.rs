//! Versioning a directory of files: track, status, commit, untrack, restore (issue 4), on the
//! fixture tree in `fixtures/tree/`.

use crate::common::TestEnv;
use std::path::Path;

const ACTOR: &str = "--actor=user:maria";

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/tree")
            .join(rel),
    )
    .unwrap()
}

/// A repository holding a copy of the fixture tree, tracked as a whole in tx 1.
fn tracked() -> TestEnv {
    let env = TestEnv::init();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tree"),
        env.path(),
    );
    let out = env.run(&["track", ".", ACTOR, "-m", "first"]);
    assert_eq!(
        out.ok(),
        "new       .histignore\n\
         new       assets/logo.png\n\
         new       config/app.toml\n\
         new       config/features.json\n\
         new       k8s/base/deploy.yaml\n\
         new       notes/README.txt\n\
         recorded tx 1: 6 new, 0 modified, 0 deleted\n"
    );
    env
}

fn read(env: &TestEnv, rel: &str) -> Vec<u8> {
    std::fs::read(env.join(rel)).unwrap()
}

fn edit(env: &TestEnv, rel: &str, from: &str, to: &str) {
    let text = String::from_utf8(read(env, rel)).unwrap();
    assert!(text.contains(from), "{rel} lacks {from:?}");
    env.write(rel, text.replacen(from, to, 1));
}

fn objects(env: &TestEnv) -> usize {
    walk_count(&env.join(".hist/objects"))
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_count(&e.path())
            } else {
                1
            }
        })
        .sum()
}

/// Edits one field in each format (and the text and binary files), as tx 2.
fn edit_each_format(env: &TestEnv) {
    edit(env, "config/app.toml", "port = 8080", "port = 9090");
    edit(env, "config/features.json", "\"limit\": 5", "\"limit\": 7");
    edit(env, "k8s/base/deploy.yaml", "replicas: 2", "replicas: 3");
    edit(env, "notes/README.txt", "the shop.", "the shop (staging).");
    env.write(
        "assets/logo.png",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xff",
    );
}

#[test]
fn track_records_every_file_and_skips_ignored_ones() {
    let env = tracked();
    assert_eq!(
        env.run(&["sql", "--csv", "SELECT key FROM current ORDER BY key"])
            .ok(),
        "key\n.histignore\nassets/logo.png\nconfig/app.toml\nconfig/features.json\n\
         k8s/base/deploy.yaml\nnotes/README.txt\n"
    );
    assert_eq!(
        env.run(&["show", "config/app.toml", "--path", "/server", "--json"])
            .ok(),
        "{\"host\":\"0.0.0.0\",\"port\":8080}\n"
    );
    assert_eq!(
        env.run(&[
            "show",
            "k8s/base/deploy.yaml",
            "--path",
            "/spec/template/spec/containers",
            "--json"
        ])
        .ok(),
        "[{\"image\":\"shop/web:1.4.0\",\"name\":\"web\"}]\n"
    );
    assert_eq!(
        env.run(&["show", "notes/README.txt", "--json"]).ok(),
        "\"Config for the shop.\\nEdit, then `hist commit`.\\n\"\n"
    );
    let logo = env.run(&["show", "assets/logo.png", "--json"]);
    let logo: serde_json::Value = serde_json::from_str(logo.ok()).unwrap();
    assert_eq!(logo["size"], 18);
    assert_eq!(
        logo["$binary"],
        blake3::hash(&fixture("assets/logo.png")).to_hex().as_str()
    );
    assert_eq!(
        env.run(&[
            "sql",
            "--csv",
            "SELECT kind, actor, reason FROM transactions"
        ])
        .ok(),
        "kind,actor,reason\ntrack,user:maria,first\n"
    );
}

#[test]
fn keys_are_relative_to_the_root_whatever_the_directory() {
    let env = TestEnv::init();
    env.write("config/app.json", "{\"a\": 1}\n");
    let out = env.run(&["-C", "config", "track", "app.json", ACTOR]);
    assert_eq!(
        out.ok(),
        "new       config/app.json\nrecorded tx 1: 1 new, 0 modified, 0 deleted\n"
    );
    env.write("config/app.json", "{\"a\": 2}\n");
    assert_eq!(
        env.run(&["-C", "config", "status"]).ok(),
        "modified  config/app.json\n"
    );
}

#[test]
fn edit_a_field_in_each_format_then_status_and_commit() {
    let env = tracked();
    assert_eq!(
        env.run(&["status"]).ok(),
        "nothing to commit (6 tracked files unchanged)\n"
    );
    edit_each_format(&env);
    env.write("k8s/base/service.yml", "port: 80\n");
    env.write("debug.log", "more\n");
    let status = env.run(&["status"]);
    assert_eq!(
        status.ok(),
        "modified  assets/logo.png\n\
         modified  config/app.toml\n\
         modified  config/features.json\n\
         modified  k8s/base/deploy.yaml\n\
         new       k8s/base/service.yml\n\
         modified  notes/README.txt\n"
    );
    assert_eq!(
        env.run(&["status", "--json"]).ok(),
        "{\"key\":\"assets/logo.png\",\"status\":\"modified\"}\n\
         {\"key\":\"config/app.toml\",\"status\":\"modified\"}\n\
         {\"key\":\"config/features.json\",\"status\":\"modified\"}\n\
         {\"key\":\"k8s/base/deploy.yaml\",\"status\":\"modified\"}\n\
         {\"key\":\"k8s/base/service.yml\",\"status\":\"new\"}\n\
         {\"key\":\"notes/README.txt\",\"status\":\"modified\"}\n"
    );
    let commit = env.run(&["commit", "-m", "second", ACTOR]);
    assert_eq!(
        commit.ok(),
        "modified  assets/logo.png  (1 change)\n\
         modified  config/app.toml  (1 change)\n\
         modified  config/features.json  (1 change)\n\
         modified  k8s/base/deploy.yaml  (1 change)\n\
         new       k8s/base/service.yml\n\
         modified  notes/README.txt  (1 change)\n\
         recorded tx 2: 1 new, 5 modified, 0 deleted\n"
    );
    // One field-level change per structured file, in one transaction.
    let changes = env.run(&[
        "sql",
        "--csv",
        "SELECT key, path, op, old, new FROM changes WHERE tx = 2 AND key NOT IN ('assets/logo.png', 'notes/README.txt') ORDER BY key",
    ]);
    assert_eq!(
        changes.ok(),
        "key,path,op,old,new\n\
         config/app.toml,/server/port,replace,8080,9090\n\
         config/features.json,/checkout/limit,replace,5,7\n\
         k8s/base/deploy.yaml,/spec/replicas,replace,2,3\n\
         k8s/base/service.yml,,add,,\"{\"\"port\"\":80}\"\n"
    );
    assert_eq!(
        env.run(&["status"]).ok(),
        "nothing to commit (7 tracked files unchanged)\n"
    );
    assert_eq!(
        env.run(&["commit", ACTOR]).ok(),
        "nothing to commit (7 tracked files unchanged)\n"
    );
    assert_eq!(
        env.run(&["sql", "--csv", "SELECT count(*) FROM transactions"])
            .ok(),
        "count(*)\n2\n"
    );
}

#[test]
fn history_of_the_server_port_and_show_as_of_the_first_commit() {
    let env = tracked();
    edit_each_format(&env);
    env.run(&["commit", "-m", "second", ACTOR]).ok();
    edit(&env, "config/app.toml", "port = 9090", "port = 9443");
    env.run(&["commit", "-m", "tls", ACTOR]).ok();
    assert_eq!(
        env.run(&["history", "config/app.toml", "/server/port"])
            .ok(),
        "tx 1  2026-01-01T00:00:01Z  user:maria  + 8080  (first)\n\
         tx 2  2026-01-01T00:00:02Z  user:maria  ~ 8080 -> 9090  (second)\n\
         tx 3  2026-01-01T00:00:03Z  user:maria  ~ 9090 -> 9443  (tls)\n"
    );
    assert_eq!(
        env.run(&["show", "config/app.toml", "@tx:1"]).ok(),
        "{\n  \"database\": {\n    \"pool\": 10,\n    \"started\": \"2026-01-01T00:00:00Z\",\n    \
         \"url\": \"postgres://db/shop\"\n  },\n  \"server\": {\n    \"host\": \"0.0.0.0\",\n    \
         \"port\": 8080\n  },\n  \"title\": \"shop\"\n}\n"
    );
    assert_eq!(
        env.run(&[
            "show",
            "k8s/base/deploy.yaml",
            "@2026-01-01T00:00:01Z",
            "--path",
            "/spec/replicas"
        ])
        .ok(),
        "2\n"
    );
}

#[test]
fn restore_every_version_byte_exact() {
    let env = tracked();
    let keys = [
        "config/app.toml",
        "config/features.json",
        "k8s/base/deploy.yaml",
        "notes/README.txt",
        "assets/logo.png",
    ];
    let mut versions: Vec<Vec<Vec<u8>>> = vec![keys.iter().map(|k| read(&env, k)).collect()];
    edit_each_format(&env);
    env.run(&["commit", ACTOR]).ok();
    versions.push(keys.iter().map(|k| read(&env, k)).collect());
    // A comment-only edit changes no field but is a version of its own.
    edit(
        &env,
        "k8s/base/deploy.yaml",
        "# The web deployment.",
        "# The web deployment (v2).",
    );
    edit(&env, "config/app.toml", "# the public port", "# public");
    assert_eq!(
        env.run(&["commit", ACTOR]).ok(),
        "modified  config/app.toml  (bytes only)\n\
         modified  k8s/base/deploy.yaml  (bytes only)\n\
         recorded tx 3: 0 new, 2 modified, 0 deleted\n"
    );
    versions.push(keys.iter().map(|k| read(&env, k)).collect());
    assert_eq!(versions[0][0], fixture("config/app.toml"));
    let elsewhere = tempfile::tempdir().unwrap();
    let out = elsewhere.path().join("restored.out");
    let out_arg = out.to_str().unwrap();
    for (i, snapshot) in versions.iter().enumerate() {
        let when = format!("@tx:{}", i + 1);
        for (key, bytes) in keys.iter().zip(snapshot) {
            let _ = std::fs::remove_file(&out);
            env.run(&["restore", key, &when, "-o", out_arg]).ok();
            assert_eq!(&std::fs::read(&out).unwrap(), bytes, "{key} {when}");
            if std::str::from_utf8(bytes).is_ok() {
                let run = env.run(&["restore", key, &when, "-o", "-"]);
                assert_eq!(
                    run.stdout.as_bytes(),
                    bytes.as_slice(),
                    "{key} {when} to stdout"
                );
            }
        }
    }
    // In place, as of the first commit: every file exactly as the fixture.
    for key in keys {
        env.run(&["restore", key, "@tx:1"]).ok();
        assert_eq!(read(&env, key), fixture(key), "{key}");
    }
    assert_eq!(
        env.run(&["status"]).ok(),
        "modified  assets/logo.png\n\
         modified  config/app.toml\n\
         modified  config/features.json\n\
         modified  k8s/base/deploy.yaml\n\
         modified  notes/README.txt\n"
    );
}

#[test]
fn restore_asks_for_force_before_overwriting_uncommitted_changes() {
    let env = tracked();
    edit(&env, "config/app.toml", "port = 8080", "port = 1");
    let before = env.db_dump();
    let err = env.run(&["restore", "config/app.toml"]);
    assert_eq!(
        err.fails(1),
        "hist: error: config/app.toml has changes that are not committed\n\
         Hint: `hist commit` them first, or pass --force to overwrite them\n"
    );
    assert!(
        String::from_utf8(read(&env, "config/app.toml"))
            .unwrap()
            .contains("port = 1")
    );
    env.write("elsewhere.toml", "x");
    let err = env.run(&["restore", "config/app.toml", "-o", "elsewhere.toml"]);
    assert!(err.fails(1).contains("elsewhere.toml already exists"));
    assert_eq!(read(&env, "elsewhere.toml"), b"x");
    env.run(&["restore", "config/app.toml", "--force"]).ok();
    assert_eq!(read(&env, "config/app.toml"), fixture("config/app.toml"));
    assert_eq!(env.db_dump(), before);
}

#[test]
fn deletion_and_recreation_of_a_file() {
    let env = tracked();
    std::fs::remove_file(env.join("config/features.json")).unwrap();
    assert_eq!(
        env.run(&["status"]).ok(),
        "deleted   config/features.json\n"
    );
    assert_eq!(
        env.run(&["commit", "-m", "drop features", ACTOR]).ok(),
        "deleted   config/features.json\nrecorded tx 2: 0 new, 0 modified, 1 deleted\n"
    );
    let absent = env.run(&["show", "config/features.json"]);
    assert!(absent.fails(1).contains("does not exist now"));
    assert_eq!(
        env.run(&["status"]).ok(),
        "nothing to commit (5 tracked files unchanged)\n"
    );
    let gone = env.run(&["restore", "config/features.json"]);
    assert!(
        gone.fails(1)
            .contains("config/features.json was not a tracked file now")
    );
    // Re-created with other content: a new file again, recorded as an add.
    env.write(
        "config/features.json",
        "{\"checkout\": {\"enabled\": false}}\n",
    );
    assert_eq!(
        env.run(&["status"]).ok(),
        "new       config/features.json\n"
    );
    env.run(&["commit", "-m", "back", ACTOR]).ok();
    assert_eq!(
        env.run(&["history", "config/features.json", "/checkout/enabled"])
            .ok(),
        "tx 1  2026-01-01T00:00:01Z  user:maria  + true  (first)\n\
         tx 2  2026-01-01T00:00:03Z  user:maria  - true  (drop features)\n\
         tx 3  2026-01-01T00:00:08Z  user:maria  + false  (back)\n"
    );
    // The version before the deletion is still there, byte for byte.
    let elsewhere = tempfile::tempdir().unwrap();
    let old = elsewhere.path().join("old.json");
    env.run(&[
        "restore",
        "config/features.json",
        "@tx:1",
        "-o",
        old.to_str().unwrap(),
    ])
    .ok();
    assert_eq!(
        std::fs::read(&old).unwrap(),
        fixture("config/features.json")
    );
    env.run(&["fsck"]).ok();
}

/// One file that does not parse never blocks the others: the commit records the rest and
/// warns, naming the file; the file keeps its last good version (never turned into a text
/// document), `status` shows it as unparsable until it is fixed, and its field history goes
/// on after the fix.
#[test]
fn a_file_that_does_not_parse_never_blocks_the_others() {
    let env = tracked();
    edit(&env, "config/app.toml", "port = 8080", "port = 9090");
    env.write(
        "k8s/base/bad.yaml",
        "kind: Service\nspec:\n  ports: [80, 443\n  type: x\n",
    );
    edit(&env, "config/features.json", "{", "{ oops");
    let status = env.run(&["status"]).ok().to_owned();
    assert!(
        status.starts_with("modified  config/app.toml\n"),
        "{status}"
    );
    assert!(
        status.contains("\nunparsable config/features.json  (JSON, line "),
        "{status}"
    );
    // A new file is not read by status (as git does not): it is listed as new.
    assert!(
        status.ends_with("\nnew       k8s/base/bad.yaml\n"),
        "{status}"
    );
    let objects_before = objects(&env);
    let out = env.run(&["commit", ACTOR]);
    assert_eq!(
        out.ok(),
        "modified  config/app.toml  (1 change)\nrecorded tx 2: 0 new, 1 modified, 0 deleted\n"
    );
    // Only the good file's bytes were stored.
    assert_eq!(objects(&env), objects_before + 1);
    assert!(
        out.stderr
            .contains("hist: warning: k8s/base/bad.yaml is not valid YAML (line 4, column "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hist: warning: config/features.json is not valid JSON"),
        "{}",
        out.stderr
    );
    // The broken file kept its last version; the new one was not recorded at all.
    assert_eq!(
        env.run(&["restore", "config/features.json", "-o", "-"])
            .ok()
            .as_bytes(),
        fixture("config/features.json")
    );
    env.run(&["show", "k8s/base/bad.yaml"]).fails(1);
    let status = env.run(&["status", "--json"]).ok().to_owned();
    assert!(status.contains("\"status\":\"unparsable\""), "{status}");
    assert_eq!(env.run(&["status", "--quiet"]).code, 1);
    // Fixed, it is recorded field by field, its history unbroken.
    edit(&env, "config/features.json", "{ oops", "{");
    env.write("k8s/base/bad.yaml", "kind: Service\n");
    let out = env.run(&["commit", ACTOR]).ok().to_owned();
    assert_eq!(
        out,
        "new       k8s/base/bad.yaml\nrecorded tx 3: 1 new, 0 modified, 0 deleted\n"
    );
    assert_eq!(env.run(&["status", "--exit-code"]).code, 0);
    env.run(&["fsck"]).ok();
}

/// JSON with comments and trailing commas (tsconfig.json, .vscode/settings.json, *.jsonc,
/// *.json5) is diffed field by field; its bytes, comments included, restore exactly.
#[test]
fn json_with_comments_is_diffed_field_by_field() {
    let env = TestEnv::init();
    let settings = "// editor settings\n{\n  \"editor.tabSize\": 2, // two\n  \"files.exclude\": {\"**/.git\": true,},\n}\n";
    env.write(".vscode/settings.json", settings);
    env.write(
        "tsconfig.json",
        "{\n  /* strict */\n  \"compilerOptions\": {\"strict\": true,},\n}\n",
    );
    env.write("app.json5", "{name: 'app', port: 0x1F90,}\n");
    env.write("notes.jsonc", "[1, 2, /* three */ 3,]\n");
    assert_eq!(
        env.run(&["track", ".", ACTOR]).ok(),
        "new       .vscode/settings.json\nnew       app.json5\nnew       notes.jsonc\n\
         new       tsconfig.json\nrecorded tx 1: 4 new, 0 modified, 0 deleted\n"
    );
    assert_eq!(
        env.run(&["show", "app.json5", "--json"]).ok(),
        "{\"name\":\"app\",\"port\":8080}\n"
    );
    env.write(
        ".vscode/settings.json",
        settings.replace(
            "\"editor.tabSize\": 2, // two",
            "\"editor.tabSize\": 4, // four",
        ),
    );
    assert_eq!(
        env.run(&["commit", ACTOR]).ok(),
        "modified  .vscode/settings.json  (1 change)\nrecorded tx 2: 0 new, 1 modified, 0 deleted\n"
    );
    assert_eq!(
        env.run(&["history", ".vscode/settings.json", "/editor.tabSize"])
            .ok()
            .lines()
            .last(),
        Some("tx 2  2026-01-01T00:00:03Z  user:maria  ~ 2 -> 4")
    );
    assert_eq!(
        env.run(&["restore", ".vscode/settings.json", "@tx:1", "-o", "-"])
            .ok(),
        settings
    );
}

/// Ignore files as git reads them: `.gitignore` in every directory, `.git/info/exclude`,
/// `.histignore` in every directory (winning over `.gitignore`).
#[test]
fn ignore_files_in_every_directory() {
    let env = TestEnv::init();
    env.write(".gitignore", "*.log\n/build/\n");
    env.write("app/.gitignore", "secret.json\n");
    env.write(".git/info/exclude", "*.swp\n");
    env.write("app/deep/.histignore", "cache/\n!keep.log\n");
    for f in [
        "a.json",
        "x.log",
        "build/out.json",
        "app/conf.json",
        "app/secret.json",
        "app/deep/d.json",
        "app/deep/keep.log",
        "app/deep/cache/c.json",
        "notes.swp",
        "app/build/b.json",
    ] {
        env.write(f, "{}");
    }
    let out = env.run(&["track", ".", ACTOR]).ok().to_owned();
    assert_eq!(
        out,
        "new       .gitignore\nnew       a.json\nnew       app/.gitignore\n\
         new       app/build/b.json\nnew       app/conf.json\nnew       app/deep/.histignore\n\
         new       app/deep/d.json\nnew       app/deep/keep.log\n\
         recorded tx 1: 8 new, 0 modified, 0 deleted\n"
    );
    // Each source on its own, in status: a new ignored file is not listed.
    env.write("app/other.log", "x");
    env.write("app/secret.json", "{\"v\": 2}");
    env.write("y.swp", "x");
    env.write("app/deep/cache/d.json", "{}");
    env.write("app/new.json", "{}");
    assert_eq!(env.run(&["status"]).ok(), "new       app/new.json\n");
    // Named on the command line, an ignored path is tracked anyway.
    assert!(
        env.run(&["track", "app/secret.json", ACTOR])
            .ok()
            .contains("new       app/secret.json")
    );
}

#[test]
fn restore_outside_the_root_is_refused() {
    let env = tracked();
    let outside = env.path().parent().unwrap().join("etc-passwd-from-hist");
    let before = env.db_dump();
    for key in [
        "../../etc/passwd",
        "/etc/passwd",
        "config/../../x",
        "./config/app.toml",
        ".hist/hist.db",
    ] {
        let err = env.run(&["restore", key, "--force"]);
        assert_eq!(
            err.fails(1),
            format!(
                "hist: error: {key:?} does not name a file inside the repository; a tracked file's key is a relative path without `.` or `..`\n\
                 Hint: keys of tracked files are paths relative to the repository root\n"
            ),
            "{key}"
        );
    }
    assert!(!outside.exists());
    // Tracking something outside the root is refused too, and writes nothing.
    let err = env.run(&["track", "..", ACTOR]);
    assert!(err.fails(1).contains("is outside the repository"));
    assert_eq!(env.db_dump(), before);
    // A key set by hand is no tracked file either.
    // Keys with a `..` segment are refused everywhere, so none can be written or restored.
    assert!(
        env.run(&["set", "../escape", "", "{}", ACTOR])
            .fails(2)
            .contains("'..' segment")
    );
    assert_ne!(env.run(&["restore", "../escape"]).code, 0);
    assert!(!env.path().parent().unwrap().join("escape").exists());
}

#[test]
fn symlinks_are_not_followed_out_of_the_repository() {
    let env = TestEnv::init();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.json"), "{\"s\": 1}").unwrap();
    env.write("conf/a.json", "{\"a\": 1}");
    std::os::unix::fs::symlink(outside.path(), env.join("conf/linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.json"), env.join("conf/b.json"))
        .unwrap();
    let out = env.run(&["track", "conf", ACTOR]);
    assert_eq!(
        out.ok(),
        "new       conf/a.json\nrecorded tx 1: 1 new, 0 modified, 0 deleted\n"
    );
    assert!(
        out.stderr.contains("skipped 2 symbolic links"),
        "{}",
        out.stderr
    );
    let err = env.run(&["track", "conf/linked/secret.json", ACTOR]);
    assert!(err.fails(1).contains("conf/linked is a symbolic link"));
}

#[test]
fn untrack_stops_tracking_and_keeps_history() {
    let env = tracked();
    assert_eq!(
        env.run(&["untrack", "config/features.json"]).ok(),
        "untracked config/features.json\n"
    );
    edit(&env, "config/features.json", "\"limit\": 5", "\"limit\": 6");
    std::fs::remove_file(env.join("notes/README.txt")).unwrap();
    assert_eq!(env.run(&["status"]).ok(), "deleted   notes/README.txt\n");
    assert_eq!(
        env.run(&["show", "config/features.json", "--path", "/checkout/limit"])
            .ok(),
        "5\n"
    );
    let err = env.run(&["untrack", "config/features.json"]);
    assert!(err.fails(1).contains("config/features.json is not tracked"));
    // Tracking it again takes up the edit made meanwhile.
    assert_eq!(
        env.run(&["track", "config/features.json", ACTOR]).ok(),
        "modified  config/features.json  (1 change)\nrecorded tx 2: 0 new, 1 modified, 0 deleted\n"
    );
}

#[test]
fn array_rules_apply_to_tracked_files() {
    let env = tracked();
    env.run(&[
        "rules",
        "array-key",
        "/spec/template/spec/containers",
        "name",
        "--keys",
        "k8s/*.yaml",
        ACTOR,
    ])
    .ok();
    edit(
        &env,
        "k8s/base/deploy.yaml",
        "      containers:\n",
        "      containers:\n        - name: sidecar\n          image: proxy:2\n",
    );
    env.run(&["commit", ACTOR]).ok();
    assert_eq!(
        env.run(&[
            "sql",
            "--csv",
            "SELECT path, op, new FROM changes WHERE key = 'k8s/base/deploy.yaml' AND tx = 3"
        ])
        .ok(),
        "path,op,new\n\"/spec/template/spec/containers[name=\"\"sidecar\"\"]\",add,\"{\"\"image\"\":\"\"proxy:2\"\",\"\"name\"\":\"\"sidecar\"\"}\"\n"
    );
}

#[test]
fn racy_edit_keeping_size_and_mtime_is_still_found() {
    let env = tracked();
    // Same size, same inode, mtime put back: only the racy rule can notice.
    let path = env.join("config/app.toml");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    edit(&env, "config/app.toml", "port = 8080", "port = 8081");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(env.run(&["status"]).ok(), "modified  config/app.toml\n");
}

#[test]
fn git_directories_and_submodule_links_are_never_tracked() {
    let env = TestEnv::init();
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write("vendor/lib/.git", "gitdir: ../../.git/modules/lib\n");
    env.write("vendor/lib/conf.json", "{}");
    env.write("app.yaml", "a: 1\n");
    assert_eq!(
        env.run(&["track", ".", ACTOR]).ok(),
        "new       app.yaml\nnew       vendor/lib/conf.json\n\
         recorded tx 1: 2 new, 0 modified, 0 deleted\n"
    );
    let err = env.run(&["track", ".git/HEAD", ACTOR]);
    assert!(err.fails(1).contains(".git/HEAD is inside .hist/ or .git/"));
    let err = env.run(&["restore", ".git/HEAD"]);
    assert!(
        err.fails(1)
            .contains("does not name a file inside the repository")
    );
}

#[test]
fn an_ignored_path_tracked_by_name_stays_tracked() {
    let env = tracked();
    assert_eq!(
        env.run(&["track", "tmp", ACTOR]).ok(),
        "new       tmp/scratch.json\nrecorded tx 2: 1 new, 0 modified, 0 deleted\n"
    );
    env.write("tmp/more.json", "{}");
    env.write("debug.log", "still ignored\n");
    assert_eq!(env.run(&["status"]).ok(), "new       tmp/more.json\n");
}
