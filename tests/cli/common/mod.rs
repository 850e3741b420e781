//! A hermetic environment for driving the `hist` binary: a temporary directory, a cleared
//! environment, and a clock (`HIST_NOW`) that moves one second per command.

#![allow(dead_code)]

pub mod git;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary directory to run `hist` in.
pub struct TestEnv {
    dir: tempfile::TempDir,
    clock: Cell<i64>,
}

/// What one command did.
#[derive(Debug)]
pub struct Run {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code.
    pub code: i32,
}

impl Run {
    /// Asserts exit 0 and returns stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        &self.stdout
    }

    /// Asserts the exit code and returns stderr.
    #[track_caller]
    pub fn fails(&self, code: i32) -> &str {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        assert!(
            self.stderr.starts_with("hist: error: ") || self.stderr.starts_with("error: "),
            "{}",
            self.stderr
        );
        &self.stderr
    }
}

impl TestEnv {
    /// A fresh directory (no repository yet).
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
            // 2026-01-01T00:00:00Z
            clock: Cell::new(1_767_225_600),
        }
    }

    /// A fresh directory with `hist init` done.
    pub fn init() -> Self {
        let env = Self::new();
        env.run(&["init"]).ok();
        env
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the directory.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a file inside the directory.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, contents).expect("write");
        p
    }

    /// A command for `hist` with a cleared environment and the test clock.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hist"));
        let now = self.clock.get();
        self.clock.set(now + 1);
        let at = chrono::DateTime::from_timestamp(now, 0)
            .expect("time")
            .to_rfc3339();
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HIST_NOW", at)
            .env("NO_COLOR", "1")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd
    }

    /// Runs `hist ARGS` with no standard input.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_cmd(self.command(args), None)
    }

    /// Runs `hist ARGS` with `input` on standard input.
    pub fn run_stdin(&self, args: &[&str], input: &[u8]) -> Run {
        self.run_cmd(self.command(args), Some(input))
    }

    /// Runs a prepared command.
    pub fn run_cmd(&self, mut cmd: Command, input: Option<&[u8]>) -> Run {
        use std::io::Write;
        use std::process::Stdio;
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn hist");
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input).expect("write stdin");
        }
        let out = child.wait_with_output().expect("wait");
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }

    /// A byte-for-byte snapshot of `.hist/hist.db` content as SQL text (for "nothing was
    /// written" checks): every row of every table.
    pub fn db_dump(&self) -> String {
        let out = self.run(&["sql", "SELECT (SELECT count(*) FROM transactions) || ',' || (SELECT count(*) FROM changes) || ',' || (SELECT count(*) FROM checks) || ',' || (SELECT group_concat(key || '=' || doc, ';') FROM current)"]);
        out.stdout
    }
}

/// A command of the `hist` binary as its `-h` shows it.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Its words after `hist` (`["rules", "array-key"]`; empty for `hist` itself).
    pub path: Vec<String>,
    /// How many positional arguments it takes.
    pub positionals: usize,
    /// Its options, by long name (`--reason`) or short (`-C`) when it has no long one,
    /// with whether each takes a value; `--help` and `--version` left out, and so are the
    /// global options of `hist` on its commands.
    pub options: Vec<(String, bool)>,
    /// The names of its subcommands (`help` left out).
    pub subcommands: Vec<String>,
}

/// Every visible command of `hist`, `hist` itself first, found by walking the `-h` of
/// `hist` and of each command recursively (the CLI definition lives in the binary alone),
/// so commands added later are found too.
pub fn command_tree(env: &TestEnv) -> Vec<CommandSpec> {
    fn walk(
        env: &TestEnv,
        path: Vec<String>,
        globals: &[(String, bool)],
        out: &mut Vec<CommandSpec>,
    ) {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let help = env.run(&args);
        let mut spec = parse_help(path, help.ok());
        spec.options.retain(|o| !globals.contains(o));
        let subcommands = spec.subcommands.clone();
        let path = spec.path.clone();
        out.push(spec);
        for sub in subcommands {
            let mut sub_path = path.clone();
            sub_path.push(sub);
            walk(env, sub_path, globals, out);
        }
    }
    let root = parse_help(Vec::new(), env.run(&["-h"]).ok());
    let globals = root.options.clone();
    let mut out = vec![root.clone()];
    for sub in &root.subcommands {
        walk(env, vec![sub.clone()], &globals, &mut out);
    }
    out
}

/// Reads clap's short help: the `Arguments:`, `Options:` and `Commands:` sections.
fn parse_help(path: Vec<String>, help: &str) -> CommandSpec {
    let mut spec = CommandSpec {
        path,
        positionals: 0,
        options: Vec::new(),
        subcommands: Vec::new(),
    };
    let mut section = "";
    for line in help.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            section = line;
            continue;
        }
        // Entries are indented 2 (6 for a long option without a short one); what wraps
        // of their descriptions is indented further.
        let indent = line.len() - line.trim_start().len();
        let entry = line.trim_start();
        let head = entry.split("  ").next().unwrap_or_default();
        match section {
            "Arguments:" if indent == 2 => spec.positionals += 1,
            "Commands:" if indent == 2 && head != "help" => spec.subcommands.push(head.to_owned()),
            "Options:" if indent <= 6 && entry.starts_with('-') => {
                let words: Vec<&str> = head.split_whitespace().collect();
                let long = words.iter().find(|w| w.starts_with("--"));
                let name = long.or(words.first()).unwrap_or(&"").trim_end_matches(',');
                let takes_value = words.iter().any(|w| w.contains('<'));
                if name != "--help" && name != "--version" {
                    spec.options.push((name.to_owned(), takes_value));
                }
            }
            _ => {}
        }
    }
    spec
}

/// Copies the directory `from`, with all it holds, to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}
