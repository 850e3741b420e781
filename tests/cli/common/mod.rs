//! A hermetic environment for driving the `hist` binary: a temporary directory, a cleared
//! environment, and a clock (`HIST_NOW`) that moves one second per command.

#![allow(dead_code)]

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
