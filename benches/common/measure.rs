//! What the benchmarks measure with: sizes on disk, and commands run under GNU time.
// Each benchmark uses part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// Bytes of the files under `p`.
pub fn dir_size(p: &Path) -> u64 {
    walkdir::WalkDir::new(p)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum()
}

/// `/usr/bin/time`, when the machine has it (GNU time: `-f` formats, `-o` files).
pub fn gnu_time() -> Option<&'static Path> {
    let time = Path::new("/usr/bin/time");
    time.is_file().then_some(time)
}

/// `cmd` run by `time` with `time_args` before it, or, without `time`, as it is: the same
/// program, arguments, directory and environment either way.
pub fn wrapped<S: AsRef<OsStr>>(
    cmd: &Command,
    time: Option<&Path>,
    time_args: impl IntoIterator<Item = S>,
) -> Command {
    let mut run = match time {
        Some(time) => {
            let mut c = Command::new(time);
            c.args(time_args).arg(cmd.get_program());
            c
        }
        None => Command::new(cmd.get_program()),
    };
    run.args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        run.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => run.env(k, v),
            None => run.env_remove(k),
        };
    }
    run
}
