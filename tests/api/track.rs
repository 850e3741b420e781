//! Tests of tracked files through the library: the stat cache (what is read and parsed, and
//! when), the racy rule, and versions.
use hist::track::{FileState, FileStatus, RACY_NS};
use hist::{Actor, Repo, Timestamp, TxOptions};
use std::path::Path;
use std::time::{Duration, SystemTime};

fn opts() -> TxOptions {
    TxOptions::new(
        Actor::parse("user:test").unwrap(),
        "track",
        Timestamp(1_767_225_600_000_000),
    )
}

fn write(root: &Path, rel: &str, text: &str, mtime: SystemTime) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    set_mtime(root, rel, mtime);
}

fn set_mtime(root: &Path, rel: &str, mtime: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(root.join(rel))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// A repository with `n` files (a third each JSON, TOML, YAML) last modified an hour ago.
fn tree(n: usize) -> (tempfile::TempDir, Repo, SystemTime) {
    let dir = tempfile::tempdir().unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    for i in 0..n {
        match i % 3 {
            0 => write(
                dir.path(),
                &format!("a/{i}.json"),
                &format!("{{\"n\": {i}}}"),
                old,
            ),
            1 => write(
                dir.path(),
                &format!("b/{i}.toml"),
                &format!("n = {i}\n"),
                old,
            ),
            _ => write(
                dir.path(),
                &format!("c/d/{i}.yaml"),
                &format!("n: {i}\n"),
                old,
            ),
        }
    }
    let repo = Repo::init(dir.path()).unwrap();
    (dir, repo, old)
}

fn nothing(_: hist::track::Progress) {}

#[test]
fn an_untouched_tree_is_not_read_again() {
    let (dir, mut repo, _) = tree(30);
    let now = SystemTime::now();
    let rec = repo
        .track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    assert_eq!((rec.files.len(), rec.hashed, rec.parsed), (30, 30, 30));
    assert_eq!(rec.tx.as_ref().map(|t| t.id), Some(1));
    let status = repo.status(now).unwrap();
    assert_eq!(
        (status.files.len(), status.tracked, status.hashed),
        (0, 30, 0)
    );
    let rec = repo
        .commit_files(&[], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    assert_eq!((rec.tx, rec.hashed, rec.parsed), (None, 0, 0));
}

#[test]
fn only_changed_files_are_read_and_parsed() {
    let (dir, mut repo, old) = tree(30);
    let now = SystemTime::now();
    repo.track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    // Same size, another mtime; and another size, same mtime.
    write(
        dir.path(),
        "a/0.json",
        "{\"n\": 9}",
        old + Duration::from_secs(1),
    );
    write(dir.path(), "b/1.toml", "n = 100\n", old);
    let status = repo.status(now).unwrap();
    assert_eq!(status.hashed, 2);
    assert_eq!(
        status.files,
        vec![
            FileStatus {
                key: "a/0.json".into(),
                state: FileState::Modified,
                error: None,
            },
            FileStatus {
                key: "b/1.toml".into(),
                state: FileState::Modified,
                error: None,
            },
        ]
    );
    let rec = repo
        .commit_files(&[], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    assert_eq!((rec.files.len(), rec.parsed), (2, 2));
    assert_eq!(repo.status(now).unwrap().hashed, 0);
}

#[test]
fn a_touched_but_unchanged_file_is_hashed_once_and_not_recorded() {
    let (dir, mut repo, old) = tree(3);
    let now = SystemTime::now();
    repo.track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    set_mtime(dir.path(), "a/0.json", old + Duration::from_secs(5));
    let status = repo.status(now).unwrap();
    assert_eq!((status.files.len(), status.hashed), (0, 1));
    // The refreshed entry vouches for it from now on.
    assert_eq!(repo.status(now).unwrap().hashed, 0);
}

#[test]
fn racy_entries_are_hashed_until_the_mtime_is_old_enough() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = SystemTime::now();
    write(dir.path(), "app.json", "{\"port\": 8080}", t0);
    let mut repo = Repo::init(dir.path()).unwrap();
    repo.track(
        &[Path::new("app.json")],
        dir.path(),
        opts(),
        t0,
        &mut nothing,
    )
    .unwrap();
    // Same size, same mtime, same inode: only the racy rule finds this edit.
    write(dir.path(), "app.json", "{\"port\": 8081}", t0);
    let status = repo.status(t0).unwrap();
    assert_eq!(status.hashed, 1);
    assert_eq!(status.files.len(), 1);
    // Once the cache entry is older than the mtime by the margin, it is trusted.
    let later = t0 + Duration::from_nanos(u64::try_from(RACY_NS).unwrap() + 1);
    repo.commit_files(&[], dir.path(), opts(), later, &mut nothing)
        .unwrap();
    assert_eq!(repo.status(later).unwrap().hashed, 0);
}

#[test]
fn a_new_inode_is_read_even_with_the_same_size_and_mtime() {
    let (dir, mut repo, old) = tree(3);
    let now = SystemTime::now();
    repo.track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    // An editor's save: a new file renamed over the old one, mtime put back.
    write(dir.path(), "a/tmp", "{\"n\": 7}", old);
    std::fs::rename(dir.path().join("a/tmp"), dir.path().join("a/0.json")).unwrap();
    let status = repo.status(now).unwrap();
    assert_eq!(status.hashed, 1);
    assert_eq!(status.files[0].key, "a/0.json");
}

#[test]
fn versions_keep_raw_bytes() {
    let (dir, mut repo, _) = tree(1);
    let now = SystemTime::now();
    repo.track(&[Path::new("a")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    std::fs::write(dir.path().join("a/0.json"), "{ \"n\" : 0 }  ").unwrap();
    let rec = repo
        .commit_files(&[], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    // Same JSON, other bytes: a version without field changes.
    assert_eq!(rec.files[0].changes, 0);
    let versions = repo.file_versions("a/0.json").unwrap();
    assert_eq!(versions.len(), 2);
    let (_, first) = repo
        .file_bytes("a/0.json", Some(hist::When::Tx(1)))
        .unwrap();
    assert_eq!(first, b"{\"n\": 0}");
    let (_, now_bytes) = repo.file_bytes("a/0.json", None).unwrap();
    assert_eq!(now_bytes, b"{ \"n\" : 0 }  ");
    assert_eq!(repo.fsck().unwrap().problems, Vec::<String>::new());
}

#[test]
fn fsck_reports_a_missing_raw_bytes_object() {
    let (dir, mut repo, _) = tree(1);
    let now = SystemTime::now();
    repo.track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    let id = repo.file_versions("a/0.json").unwrap()[0].object.unwrap();
    let hex = id.to_hex();
    std::fs::remove_file(
        dir.path()
            .join(".hist/objects")
            .join(&hex[..2])
            .join(&hex[2..]),
    )
    .unwrap();
    assert_eq!(
        repo.fsck().unwrap().problems,
        vec![format!("object {hex} is referenced but missing")]
    );
}

#[test]
fn status_does_not_read_new_files() {
    let (dir, mut repo, old) = tree(3);
    let now = SystemTime::now();
    repo.track(&[Path::new(".")], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    write(dir.path(), "a/new.json", "{}", old);
    let status = repo.status(now).unwrap();
    assert_eq!((status.hashed, status.tracked), (0, 3));
    assert_eq!(
        status.files,
        vec![FileStatus {
            key: "a/new.json".into(),
            state: FileState::New,
            error: None,
        }]
    );
    let rec = repo
        .commit_files(&[], dir.path(), opts(), now, &mut nothing)
        .unwrap();
    assert_eq!((rec.hashed, rec.parsed, rec.tracked), (1, 1, 4));
}
