//! `Repo::import_git` through the library: an import interrupted right after it reported a
//! batch committed keeps everything it reported, and a rerun ends where one import does.

use hist::import::git::GitImport;
use hist::import::{ImportOptions, SourceEvent};
use hist::{Repo, Timestamp};

#[path = "../cli/common/git.rs"]
mod git;

/// 2021-01-01T00:00:00Z.
const DAY0: i64 = 1_609_459_200;

/// A feed committed 30 times (a version a day, one of them not JSON), and a status file
/// every tenth day.
fn scraper(dir: &std::path::Path) -> git::GitRepo {
    let repo = git::GitRepo::init(dir);
    for day in 0..30 {
        let feed = if day == 13 {
            "{\"items\": [".to_owned()
        } else {
            format!(
                "{{\"day\": {day}, \"items\": [{{\"id\": {}, \"v\": {day}}}]}}",
                day % 4
            )
        };
        let status = format!("{{\"ok\": {}}}", day % 20 == 0);
        let mut files = vec![("feed.json", Some(feed.as_str()))];
        if day % 10 == 0 {
            files.push(("status.json", Some(status.as_str())));
        }
        repo.commit(DAY0 + day * 86_400, &format!("day {day}"), &files);
    }
    repo
}

fn spec(dir: &std::path::Path) -> GitImport {
    GitImport::new(dir.join("scraper"))
        .file("feed.json", Some("feed"))
        .file("status.json", None)
}

#[test]
fn an_interrupted_import_keeps_what_it_reported_and_resumes() {
    if !git::git_available("an_interrupted_import_keeps_what_it_reported_and_resumes") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    scraper(&dir.path().join("scraper"));
    let now = Timestamp(2_000_000_000_000_000);
    let small = ImportOptions::default().batch(4);

    let single = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(single.path()).unwrap();
    let done = repo
        .import_git(&spec(dir.path()), now, &small, |_| {})
        .unwrap();
    assert_eq!((done.summary.read, done.summary.skipped), (30, 1));
    assert_eq!(done.summary.snapshots.snapshots(), 32);
    drop(repo);

    let interrupted = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(interrupted.path()).unwrap();
    let mut reported = None;
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut batches = 0;
        repo.import_git(&spec(dir.path()), now, &small, |e| {
            if let SourceEvent::Committed { done, summary } = e {
                reported = Some((done, summary.snapshots()));
                batches += 1;
                if batches == 3 {
                    panic!("interrupted");
                }
            }
        })
    }));
    assert!(stopped.is_err());
    drop(repo);
    let (commits, snapshots) = reported.unwrap();
    // Three batches of at least four snapshots, at most two a commit: the import stopped
    // partway.
    assert!((6..30).contains(&commits), "{commits}");
    let repo = Repo::open(interrupted.path()).unwrap();
    let recorded = repo
        .query_readonly(
            "SELECT (SELECT count(*) FROM transactions) + (SELECT count(*) FROM checks)",
        )
        .unwrap();
    assert_eq!(
        recorded.rows[0][0],
        hist::SqlValue::Integer(i64::try_from(snapshots).unwrap()),
        "every snapshot reported is recorded, and no other"
    );
    drop(repo);
    let mut repo = Repo::open(interrupted.path()).unwrap();
    let rest = repo
        .import_git(&spec(dir.path()), now, &small, |_| {})
        .unwrap();
    assert_eq!(rest.summary.read, 30 - commits);
    assert!(rest.after.is_some());
    drop(repo);
    assert_eq!(
        crate::gc::dump(interrupted.path()),
        crate::gc::dump(single.path())
    );
}
