//! Tests of `Repo::export`: order, filters, early stop.
use hist::path::DocPath;
use hist::{Actor, Error, ExportFilter, LoggedChange, Repo, Timestamp, TxOptions, When};
use std::ops::ControlFlow;

/// 2026-01-01T00:00:00Z
const T0: i64 = 1_767_225_600_000_000;

fn repo() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let writes = [
        ("customer/1", "/plan", json!("pro")),
        ("feed/acme", "/price", json!(1)),
        ("feed/acme/eu", "/price", json!(2)),
        ("customer/1", "/plan", json!("team")),
    ];
    for (i, (key, path, value)) in writes.into_iter().enumerate() {
        let day = i64::try_from(i).unwrap() * 86_400_000_000;
        let opts = TxOptions::new(Actor::parse("user:sam").unwrap(), "write", Timestamp(T0))
            .at(Some(Timestamp(T0 + day)))
            .reason(Some(format!("step {i}")));
        let mut txn = repo.begin(opts).unwrap();
        txn.set(key, &DocPath::parse(path).unwrap(), value).unwrap();
        txn.commit().unwrap();
    }
    (dir, repo)
}

fn export(repo: &Repo, filter: &ExportFilter) -> Vec<LoggedChange> {
    let mut out = Vec::new();
    let n = repo
        .export(filter, |c| {
            out.push(c);
            Ok::<_, Error>(ControlFlow::Continue(()))
        })
        .unwrap();
    assert_eq!(n, out.len() as u64);
    out
}

fn keys_and_tx(changes: &[LoggedChange]) -> Vec<(String, i64)> {
    changes.iter().map(|c| (c.key.clone(), c.tx.id)).collect()
}

#[test]
fn exports_every_change_in_log_order() {
    let (_dir, repo) = repo();
    let all = export(&repo, &ExportFilter::default());
    assert_eq!(
        keys_and_tx(&all),
        [
            ("customer/1".to_owned(), 1),
            ("feed/acme".to_owned(), 2),
            ("feed/acme/eu".to_owned(), 3),
            ("customer/1".to_owned(), 4),
        ]
    );
    let last = &all[3];
    assert_eq!(last.change.path.to_string(), "/plan");
    assert_eq!(last.change.old, Some(json!("pro")));
    assert_eq!(last.change.new, Some(json!("team")));
    assert_eq!(last.tx.reason.as_deref(), Some("step 3"));
    assert_eq!(last.tx.kind, "write");
    assert_eq!(all[0].change.old, None);
}

#[test]
fn filters_by_key_glob_and_time() {
    let (_dir, repo) = repo();
    let feed = ExportFilter {
        keys: Some("feed/*".into()),
        since: None,
    };
    // `*` crosses `/`, as in the rules' --keys.
    assert_eq!(
        keys_and_tx(&export(&repo, &feed)),
        [("feed/acme".to_owned(), 2), ("feed/acme/eu".to_owned(), 3)]
    );
    let since = ExportFilter {
        keys: None,
        since: Some(When::At(Timestamp(T0 + 2 * 86_400_000_000))),
    };
    assert_eq!(
        keys_and_tx(&export(&repo, &since)),
        [("feed/acme/eu".to_owned(), 3), ("customer/1".to_owned(), 4)]
    );
    let tx = ExportFilter {
        keys: Some("customer/*".into()),
        since: Some(When::Tx(2)),
    };
    assert_eq!(
        keys_and_tx(&export(&repo, &tx)),
        [("customer/1".to_owned(), 4)]
    );
    let bad = ExportFilter {
        keys: Some("feed/[".into()),
        since: None,
    };
    let err = repo
        .export(&bad, |_| Ok::<_, Error>(ControlFlow::Continue(())))
        .unwrap_err();
    assert!(matches!(err, Error::Glob { .. }), "{err}");
}

#[test]
fn the_callback_can_stop_early() {
    let (_dir, repo) = repo();
    let mut seen = 0;
    let n = repo
        .export(&ExportFilter::default(), |_| {
            seen += 1;
            Ok::<_, Error>(if seen == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        })
        .unwrap();
    assert_eq!((n, seen), (2, 2));
    // An error from the callback stops the export and comes back as is.
    let err = repo
        .export(&ExportFilter::default(), |_| {
            Err::<ControlFlow<()>, _>(Error::Corrupt("stop".into()))
        })
        .unwrap_err();
    assert_eq!(err.to_string(), "the repository is damaged: stop");
}
