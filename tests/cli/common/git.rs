//! Git repositories the tests build with the `git` program: a scraper's history, commit by
//! commit, with the dates and authors the test chooses. Shared by the API tests
//! (`#[path]`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// True when the `git` program runs; a test that needs it prints `SKIPPED: …` otherwise.
pub fn git_available(test: &str) -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: {test}: the git program is not installed");
    }
    ok
}

/// A git repository with a work tree.
pub struct GitRepo {
    pub dir: PathBuf,
}

impl GitRepo {
    /// `git init` in `dir` (created), branch `main`.
    pub fn init(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let repo = Self {
            dir: dir.to_path_buf(),
        };
        repo.git(&["init", "-q", "-b", "main"], 0);
        repo
    }

    /// Runs git in the repository, hermetically (no user or system configuration), with
    /// author and committer dated `secs` (Unix seconds, UTC); its output.
    pub fn git(&self, args: &[&str], secs: i64) -> String {
        self.git_as(args, secs, secs, "Scraper Bot")
    }

    /// [`GitRepo::git`] with an author name and separate author and committer times.
    pub fn git_as(
        &self,
        args: &[&str],
        author_secs: i64,
        committer_secs: i64,
        author: &str,
    ) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", author)
            .env("GIT_AUTHOR_EMAIL", "bot@example.com")
            .env("GIT_COMMITTER_NAME", "Scraper Bot")
            .env("GIT_COMMITTER_EMAIL", "bot@example.com")
            .env("GIT_AUTHOR_DATE", format!("@{author_secs} +0000"))
            .env("GIT_COMMITTER_DATE", format!("@{committer_secs} +0000"))
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    /// Writes (`Some`) or deletes (`None`) files, then commits everything at `secs` with
    /// `message` (an empty commit when nothing changed); the commit's id.
    pub fn commit(&self, secs: i64, message: &str, files: &[(&str, Option<&str>)]) -> String {
        self.commit_as(secs, secs, "Scraper Bot", message, files)
    }

    /// [`GitRepo::commit`] by `author`, authored at `author_secs`, committed at
    /// `committer_secs`.
    pub fn commit_as(
        &self,
        author_secs: i64,
        committer_secs: i64,
        author: &str,
        message: &str,
        files: &[(&str, Option<&str>)],
    ) -> String {
        for (path, text) in files {
            let p = self.dir.join(path);
            match text {
                Some(text) => {
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(&p, text).unwrap();
                }
                None => std::fs::remove_file(&p).unwrap(),
            }
        }
        self.git_as(&["add", "-A"], author_secs, committer_secs, author);
        self.git_as(
            &["commit", "-q", "--allow-empty", "-m", message],
            author_secs,
            committer_secs,
            author,
        );
        self.git(&["rev-parse", "HEAD"], 0)
    }

    /// The first-parent history of `main`, oldest first: (id, committer time in seconds).
    pub fn first_parent(&self) -> Vec<(String, i64)> {
        self.git(
            &[
                "log",
                "--first-parent",
                "--reverse",
                "--format=%H %ct",
                "main",
            ],
            0,
        )
        .lines()
        .map(|l| {
            let (id, t) = l.split_once(' ').unwrap();
            (id.to_owned(), t.parse().unwrap())
        })
        .collect()
    }

    /// The bytes of `path` at `commit`, if it is there.
    pub fn file_at(&self, commit: &str, path: &str) -> Option<Vec<u8>> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(["cat-file", "blob", &format!("{commit}:{path}")])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.status.success().then_some(out.stdout)
    }
}
