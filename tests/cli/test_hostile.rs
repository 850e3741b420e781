//! Hostile input through the command line: every refusal is a clear `hist: error:` with exit
//! 1 or 2, never a panic or a crash, and writes nothing (the whole store is compared before
//! and after).

use crate::common::{Run, TestEnv};
use crate::robust::{assert_no_panic, full_dump};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// A repository with a little history, to refuse things against.
fn repo() -> TestEnv {
    let env = TestEnv::init();
    env.run(&["set", "k", "/a", "1", "--actor", "user:sam"])
        .ok();
    env.run(&["set", "k", "/b", r#"{"c":[1,2]}"#, "--actor", "user:sam"])
        .ok();
    env
}

/// Asserts a clean refusal: exit 1 or 2, `hist: error:` (or clap's `error:`), no panic.
#[track_caller]
fn refused(what: &str, run: &Run) {
    assert!(
        run.code == 1 || run.code == 2,
        "{what}: exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.starts_with("hist: error: ") || run.stderr.starts_with("error: "),
        "{what}: {}",
        run.stderr
    );
    assert_no_panic(what, &run.stderr);
}

/// Runs `hist ARGS` with `input` on stdin, tolerating a child that stops reading early.
fn run_with_input(env: &TestEnv, args: &[&str], input: Vec<u8>) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = env.command(args);
    cmd.env("HIST_ACTOR", "user:eve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // A refusal may close the pipe before all is written: that is fine.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

#[test]
fn json_test_suite_n_files_are_refused() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance/json-test-suite/test_parsing");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIPPED: {} is absent", dir.display());
        return;
    };
    let mut files: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("n_"))
        .collect();
    files.sort();
    assert!(files.len() > 150, "only {} n_ files", files.len());
    let env = repo();
    let before = full_dump(env.path());
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let run = env.run(&["ingest", "k", file.to_str().unwrap(), "--actor", "user:eve"]);
        refused(&name, &run);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains("is not valid JSON"),
            "{name}: {}",
            run.stderr
        );
    }
    assert_eq!(full_dump(env.path()), before);
}

#[test]
fn invalid_utf8_is_refused() {
    let env = repo();
    let before = full_dump(env.path());
    for (what, input) in [
        ("a bad byte in a string", &b"{\"a\":\"\xff\"}"[..]),
        ("a bad byte in a member name", b"{\"\xc3\x28\":1}"),
        ("an overlong encoding", b"{\"a\":\"\xc0\xaf\"}"),
        ("a truncated sequence", b"{\"a\":\"\xe2\x82\"}"),
        ("an encoded surrogate", b"{\"a\":\"\xed\xa0\x80\"}"),
        ("a lone surrogate escape", b"{\"a\":\"\\ud800\"}"),
        ("UTF-16", b"\xff\xfe{\x00}\x00"),
    ] {
        let run = run_with_input(&env, &["ingest", "k"], input.to_vec());
        refused(what, &run);
        assert_eq!(run.code, 1, "{what}");
    }
    // Arguments that are not UTF-8: a key, a path, a value, an actor.
    for (i, what) in ["key", "path", "value", "actor"].iter().enumerate() {
        let mut args: Vec<&OsStr> = ["set", "k", "/a", "1", "--actor", "user:eve"]
            .iter()
            .map(OsStr::new)
            .collect();
        args[[1, 2, 3, 5][i]] = OsStr::from_bytes(b"x\xffy");
        let mut cmd = env.command(&[]);
        cmd.args(args);
        let run = env.run_cmd(cmd, None);
        refused(what, &run);
    }
    assert_eq!(full_dump(env.path()), before);
}

#[test]
fn deep_nesting_is_refused_without_a_crash() {
    let env = repo();
    let before = full_dump(env.path());
    let depth = 100_000;
    for (what, input) in [
        (
            "arrays",
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        ),
        (
            "objects",
            format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)),
        ),
        ("unclosed", "[{\"a\":".repeat(depth)),
    ] {
        for args in [&["ingest", "k"][..], &["canon"][..]] {
            let run = run_with_input(&env, args, input.clone().into_bytes());
            refused(what, &run);
            assert_eq!(run.code, 1, "{what}");
        }
    }
    // A path as deep as an argument can be, and depth built from a path plus a value.
    let long_path = "/a".repeat(60_000);
    let run = env.run(&["set", "k", &long_path, "1", "--actor", "user:eve"]);
    refused("a 60,000-step path", &run);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("steps (no document nests deeper than that)"),
        "{}",
        run.stderr
    );
    for args in [
        &["show", "k", "--path", &long_path][..],
        &["history", "k", &long_path],
        &["log", "--path", &long_path],
        &["rm", "k", &long_path, "--actor", "user:eve"],
    ] {
        refused(args[0], &env.run(args));
    }
    let path = "/a".repeat(100);
    let value = format!("{}{}", "[".repeat(50), "]".repeat(50));
    let run = env.run(&["set", "d", &path, &value, "--actor", "user:eve"]);
    refused("150 levels", &run);
    assert!(
        run.stderr
            .contains("d: the document would nest 150 levels deep; at most"),
        "{}",
        run.stderr
    );
    assert_eq!(full_dump(env.path()), before);
    // A document 127 levels deep (the most the strict parser accepts) is recorded and
    // reads back.
    let value = format!("{}{}", "[".repeat(27), "]".repeat(27));
    env.run(&["set", "deep", &path, &value, "--actor", "user:eve"])
        .ok();
    assert_eq!(env.run(&["show", "deep"]).ok().lines().count(), 2 * 127 - 1);
    env.run(&["fsck"]).ok();
}

#[test]
fn a_270_mb_string_is_refused_with_bounded_memory() {
    let env = repo();
    let before = full_dump(env.path());
    let mut input = Vec::with_capacity(270_000_010);
    input.extend_from_slice(b"{\"s\":\"");
    input.resize(270_000_006, b'a');
    input.extend_from_slice(b"\"}");
    let run = run_with_input(&env, &["ingest", "big"], input);
    refused("270 MB", &run);
    assert_eq!(
        run.stderr,
        "hist: error: standard input is larger than 256 MiB, the largest document hist reads\n\
         Hint: split the document into several keys\n"
    );
    assert_eq!(full_dump(env.path()), before);
    // A large document under the limit is recorded (once, as a compressed object).
    let mut input = b"{\"s\":\"".to_vec();
    input.resize(6 + 5_000_000, b'b');
    input.extend_from_slice(b"\"}");
    let run = run_with_input(&env, &["ingest", "big"], input);
    assert_eq!(run.stdout.lines().last(), Some("recorded tx 3 (1 change)"));
    env.run(&["fsck"]).ok();
}

#[test]
fn duplicate_member_names_are_refused_naming_the_name() {
    let env = repo();
    let before = full_dump(env.path());
    for (input, name) in [
        (r#"{"a":1,"a":2}"#, "\"a\""),
        (r#"{"x":{"price":1,"qty":2,"price":1}}"#, "\"price\""),
        (r#"[{"id":1,"id":1}]"#, "\"id\""),
    ] {
        let run = run_with_input(&env, &["ingest", "k"], input.as_bytes().to_vec());
        refused(input, &run);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr.contains("duplicate") && run.stderr.contains(name),
            "{input}: {}",
            run.stderr
        );
    }
    assert_eq!(full_dump(env.path()), before);
}

#[test]
fn out_of_range_numbers_are_refused_and_minus_zero_is_zero() {
    let env = repo();
    let before = full_dump(env.path());
    for input in [r#"{"n":1e400}"#, r#"{"n":-1e400}"#, "[1E+999]"] {
        let run = run_with_input(&env, &["ingest", "k"], input.as_bytes().to_vec());
        refused(input, &run);
        assert_eq!(run.code, 1);
    }
    assert_eq!(full_dump(env.path()), before);
    // -0 is stored as 0 (RFC 8785 prints negative zero as 0).
    let run = run_with_input(&env, &["ingest", "z"], br#"{"n":-0,"m":-0.0}"#.to_vec());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        env.run(&["show", "z"]).ok(),
        "{\n  \"m\": 0,\n  \"n\": 0\n}\n"
    );
}

#[test]
fn keys_that_climb_or_hold_control_characters_are_refused_everywhere() {
    let env = repo();
    let before = full_dump(env.path());
    for key in [
        "../etc/passwd",
        "a/../../b",
        "x/..",
        "..",
        "/etc/passwd",
        "/",
        "",
        "a\nb",
        "a\u{1b}[31mred",
        "tab\there",
        "nul\u{7f}",
    ] {
        for args in [
            &["set", key, "/a", "1", "--actor", "user:eve"][..],
            &["rm", key, "--actor", "user:eve"],
            &["show", key],
            &["history", key, "/a"],
            &["log", key],
            &["diff", key, "@tx:1"],
        ] {
            let run = env.run(args);
            refused(&format!("{args:?}"), &run);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("invalid key"),
                "{args:?}: {}",
                run.stderr
            );
        }
        let run = run_with_input(&env, &["ingest", key], b"{}".to_vec());
        refused(key, &run);
        let record = serde_json::json!({"key": key, "actor": "user:eve", "doc": {}});
        let run = run_with_input(&env, &["import"], format!("{record}\n").into_bytes());
        refused(key, &run);
        assert!(run.stderr.contains("line 1"), "{}", run.stderr);
    }
    assert_eq!(full_dump(env.path()), before);
    // Dots inside a segment are fine.
    env.run(&["set", "v1..2/.env", "/a", "1", "--actor", "user:sam"])
        .ok();
}

#[test]
fn member_names_with_control_characters_round_trip() {
    let env = repo();
    let doc = "{\"a\\u0001b\":{\"x\\ny\":1},\"esc\\u001b[2J\":\"v\",\"..\":{\"/\":2}}";
    let run = run_with_input(&env, &["ingest", "ctl"], doc.as_bytes().to_vec());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shown = env.run(&["show", "ctl"]);
    let value: serde_json::Value = serde_json::from_str(shown.ok()).unwrap();
    assert_eq!(
        value,
        serde_json::from_str::<serde_json::Value>(doc).unwrap()
    );
    let doc2 = doc.replace(":1}", ":2}");
    let run = run_with_input(&env, &["ingest", "ctl"], doc2.into_bytes());
    // The path is shown escaped, so a name cannot drive the terminal.
    assert_eq!(
        run.stdout,
        "~ \"/a\\u0001b/x\\ny\": 1 -> 2\nrecorded tx 4 (1 change)\n"
    );
    // The stored path parses back: history finds the change by it.
    let history = env.run(&["history", "ctl", "/a\u{1}b/x\ny", "--json"]);
    let lines: Vec<serde_json::Value> = history
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["old"], 1);
    assert_eq!(lines[1]["new"], 2);
    assert_eq!(lines[1]["path"], "/a\u{1}b/x\ny");
    env.run(&["fsck"]).ok();
}

#[test]
fn paths_that_do_not_parse_are_refused() {
    let env = repo();
    let before = full_dump(env.path());
    for path in [
        "a",
        "/a[",
        "/a[id=",
        "/a[id=]",
        "/a[id=1",
        "/a[=]",
        "/a~3",
        "/a~",
        "/a[id=1]x",
        "[",
        "/a[id=\"x]",
        "/a[id=1,]",
        "/a[*]",
    ] {
        for args in [
            &["set", "k", path, "1", "--actor", "user:eve"][..],
            &["rm", "k", path, "--actor", "user:eve"],
            &["show", "k", "--path", path],
            &["history", "k", path],
            &["log", "--path", path],
        ] {
            let run = env.run(args);
            refused(&format!("{args:?}"), &run);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("invalid path"),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    for pattern in ["/items[", "items", "/items[id=1]"] {
        let run = env.run(&["rules", "array-key", pattern, "id", "--actor", "user:eve"]);
        refused(pattern, &run);
    }
    assert_eq!(full_dump(env.path()), before);
}
