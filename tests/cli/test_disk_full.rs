//! Disk full: on a 2 MB tmpfs, writes that run out of space fail with a clear error, exit
//! 1, record nothing, and leave a repository that fsck passes and that takes writes again
//! once space is freed. Needs root (to mount); skipped with a visible message otherwise.

use crate::robust::{Rng, assert_no_panic};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A mounted tmpfs, unmounted on drop (also when the test fails).
struct Tmpfs {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Self { _dir: dir, mount })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

fn hist(dir: &Path, args: &[&str], now: &mut i64) -> Output {
    *now += 1;
    let at = chrono::DateTime::from_timestamp(*now, 0)
        .unwrap()
        .to_rfc3339();
    Command::new(env!("CARGO_BIN_EXE_hist"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HIST_ACTOR", "job:fill")
        .env("HIST_NOW", at)
        .output()
        .unwrap()
}

/// An incompressible document of about `len` bytes.
fn noise(rng: &mut Rng, len: usize) -> String {
    let hex: String = (0..len / 16)
        .map(|_| format!("{:016x}", rng.next_u64()))
        .collect();
    format!("{{\"blob\":\"{hex}\"}}")
}

/// Every row of the database (object files left out).
fn db_rows(dir: &Path) -> String {
    crate::robust::full_dump(dir)
        .lines()
        .filter(|l| !l.starts_with("file objects/"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_full_disk_fails_cleanly_and_leaves_the_repository_intact() {
    let fs = match Tmpfs::mount("2m") {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!("SKIPPED: disk-full test: cannot mount a tmpfs ({e}); run as root");
            return;
        }
    };
    let dir = fs.mount.clone();
    let mut now = 1_767_225_600;
    let mut rng = Rng::from_env("a_full_disk_fails_cleanly", 8);
    assert!(hist(&dir, &["init"], &mut now).status.success());
    let mut recorded = 0;
    let mut failures = 0;
    let mut i = 0;
    while failures < 5 {
        i += 1;
        assert!(i < 1000, "the disk never filled");
        let file = format!("/tmp/hist-fill-{}-{i}.json", std::process::id());
        std::fs::write(&file, noise(&mut rng, 40_000)).unwrap();
        let before = db_rows(&dir);
        let key = format!("doc/{}", i % 7);
        let out = hist(&dir, &["ingest", &key, &file], &mut now);
        std::fs::remove_file(&file).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            recorded += 1;
            continue;
        }
        failures += 1;
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with("hist: error: "), "{stderr}");
        assert!(
            stderr.contains("full") || stderr.contains("No space left"),
            "{stderr}"
        );
        assert!(
            stderr.contains("Hint: the disk is full; nothing was recorded"),
            "{stderr}"
        );
        assert_no_panic("ingest on a full disk", &stderr);
        // Nothing recorded: objects written before the commit failed are unreferenced
        // (harmless; gc removes them), fsck checks that every referenced one is there.
        assert_eq!(db_rows(&dir), before, "a failed write changed the log");
        let out = hist(&dir, &["fsck"], &mut now);
        assert!(
            out.status.success(),
            "fsck on a full disk: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    eprintln!("{recorded} writes recorded before the disk filled, then {failures} refused");
    assert!(recorded > 3);
    // Free space: remove whatever temporary files failed writes left, and the noise.
    for entry in std::fs::read_dir(dir.join(".hist/objects")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name().to_string_lossy().starts_with(".tmp-") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let out = hist(&dir, &["rm", "doc/0"], &mut now);
    let out = if out.status.success() {
        out
    } else {
        // Still too full to record a removal: grow the file system instead.
        let remount = Command::new("mount")
            .args(["-o", "remount,size=8m"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(remount.success());
        hist(&dir, &["rm", "doc/0"], &mut now)
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = hist(&dir, &["fsck"], &mut now);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = hist(
        &dir,
        &["sql", "SELECT count(*) FROM transactions"],
        &mut now,
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("count(*)\n{}\n", recorded + 1)
    );
}
