//! README.md runs: every ```console block is a session in a fresh directory (with
//! `fixtures/` copied in and the clock pinned, as in every test here). A line `$ hist …`
//! is run (shell quoting as in sh; `NAME=value` prefixes set the environment; `> FILE`
//! sends stdout to a file) and must succeed; the lines after it, up to the next `$`, are
//! its exact stdout, where `[..]` stands for any text within a line. `$ bash fixtures/…`
//! lines run a fixture's script (one builds the git repository an example imports), but
//! `fixtures/demo.sh`, which builds the project; other
//! `$ cargo …` and `$ bash …` lines (and their output) are not run here: they build and test
//! the project itself. Any other program fails the test, so the README cannot show what is
//! not run.

use crate::common::{TestEnv, copy_dir};
use std::path::Path;

/// The ```console blocks of a Markdown text: (line number of the fence, lines).
fn console_blocks(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```console" => current = Some((i + 1, Vec::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, lines)) => lines.push(line.to_owned()),
        }
    }
    assert!(
        current.is_none(),
        "README.md: a ```console block is not closed"
    );
    blocks
}

/// True when `actual` matches `expected`, where `[..]` matches any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

fn output_matches(expected: &[String], actual: &str) -> bool {
    let actual: Vec<&str> = actual.lines().collect();
    actual.len() == expected.len()
        && expected
            .iter()
            .zip(&actual)
            .all(|(e, a)| line_matches(e, a))
}

/// Runs one command line of a block; returns its stdout, or `None` for a skipped line.
fn run_line(env: &TestEnv, line: &str, at: &str) -> Option<String> {
    let words = shlex::split(line).unwrap_or_else(|| panic!("{at}: cannot split {line:?}"));
    let mut words = words.into_iter().peekable();
    let mut vars = Vec::new();
    while let Some((k, v)) = words.peek().and_then(|w| w.split_once('=')) {
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            break;
        }
        vars.push((k.to_owned(), v.to_owned()));
        words.next();
    }
    let program = words.next().unwrap_or_default();
    // `fixtures/demo.sh` builds the project itself (cargo): not run here, as `cargo` lines.
    let fixture = program == "bash"
        && words
            .peek()
            .is_some_and(|w| w.starts_with("fixtures/") && w != "fixtures/demo.sh");
    match program.as_str() {
        "hist" => {}
        "bash" if fixture => {}
        "cargo" | "bash" => return None,
        other => panic!("{at}: README shows `{other}`, which the README test cannot run"),
    }
    let mut args = Vec::new();
    let mut redirect = None;
    while let Some(word) = words.next() {
        if word == ">" {
            redirect = Some(
                words
                    .next()
                    .unwrap_or_else(|| panic!("{at}: `>` without a file")),
            );
        } else if let Some(file) = word.strip_prefix('>') {
            redirect = Some(file.to_owned());
        } else {
            args.push(word);
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = if fixture {
        let mut cmd = std::process::Command::new("bash");
        cmd.args(&args)
            .current_dir(env.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd
    } else {
        env.command(&args)
    };
    cmd.envs(vars);
    let out = env.run_cmd(cmd, None);
    assert_eq!(
        out.code, 0,
        "{at}: `{line}` failed\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    Some(match redirect {
        Some(file) => {
            env.write(&file, &out.stdout);
            String::new()
        }
        None => out.stdout,
    })
}

#[test]
fn every_command_in_the_readme_runs_and_prints_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(
        blocks.len() >= 5,
        "README.md has {} console blocks",
        blocks.len()
    );
    let mut ran = 0;
    for (fence, lines) in blocks {
        let env = TestEnv::new();
        copy_dir(&root.join("fixtures"), &env.join("fixtures"));
        let mut i = 0;
        while i < lines.len() {
            let at = format!("README.md:{}", fence + i + 1);
            let line = lines[i]
                .strip_prefix("$ ")
                .unwrap_or_else(|| panic!("{at}: output without a command: {:?}", lines[i]));
            let expected: Vec<String> = lines[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with("$ "))
                .cloned()
                .collect();
            i += 1 + expected.len();
            let Some(stdout) = run_line(&env, line, &at) else {
                continue;
            };
            ran += 1;
            assert!(
                output_matches(&expected, &stdout),
                "{at}: `{line}` printed\n{stdout}\nbut README.md shows\n{}\n",
                expected.join("\n")
            );
        }
    }
    assert!(ran >= 20, "only {ran} commands ran");
}

#[test]
fn wildcards_match_within_a_line() {
    assert!(line_matches("in [..]/.hist", "in /tmp/x/.hist"));
    assert!(line_matches("a[..]b[..]c", "a1b2c"));
    assert!(!line_matches("a[..]b", "a1c"));
    assert!(!line_matches("exact", "exact "));
    assert!(output_matches(&["x".into()], "x\n"));
    assert!(!output_matches(&[], "x\n"));
}
