//! Tests of `Repo::import_ndjson`: batches, the tally, line numbers, what stays recorded.
use hist::import::{ImportError, ImportEvent, ImportOptions, ImportSummary, RecordError};
use hist::{Repo, Timestamp, When};

/// 2026-01-01T00:00:00Z
const T0: i64 = 1_767_225_600_000_000;

fn record(key: &str, doc: &str) -> String {
    format!("{{\"key\":\"{key}\",\"actor\":\"poller:a\",\"doc\":{doc}}}\n")
}

fn import(
    repo: &mut Repo,
    text: &str,
    batch: usize,
) -> (Result<ImportSummary, ImportError>, Vec<String>) {
    let mut events = Vec::new();
    let result = repo.import_ndjson(
        text.as_bytes(),
        Timestamp(T0),
        &ImportOptions::default().batch(batch),
        |e| {
            events.push(match e {
                ImportEvent::Recorded { line, key, outcome } => {
                    format!("{line} {key} {outcome:?}")
                }
                ImportEvent::Warning { line, message } => format!("{line} warning: {message}"),
                e => format!("{e:?}"),
            });
        },
    );
    (result, events)
}

#[test]
fn imports_in_batches_and_tallies() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut text = String::new();
    for (i, doc) in [
        "1",
        "1",
        "{\"a\":1}",
        "{\"a\":2,\"b\":3}",
        "{\"a\":2,\"b\":3}",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&record("k", doc));
        if i == 1 {
            text.push_str("  \n");
        }
    }
    let (result, events) = import(&mut repo, &text, 2);
    assert_eq!(
        result.unwrap(),
        ImportSummary {
            changed: 3,
            unchanged: 2,
            changes: 4
        }
    );
    assert_eq!(
        events,
        [
            "1 k Changed(1)",
            "2 k Unchanged",
            "4 k Changed(1)",
            "5 k Changed(2)",
            "6 k Unchanged"
        ]
    );
    assert_eq!(
        repo.current_text("k").unwrap().as_deref(),
        Some("{\"a\":2,\"b\":3}")
    );
    drop(repo);
    // Every batch was committed: a new handle sees them all.
    let repo = Repo::open(dir.path()).unwrap();
    assert_eq!(repo.fsck().unwrap().problems, Vec::<String>::new());
    assert_eq!(
        repo.as_of_text("k", When::Tx(1)).unwrap().text.as_deref(),
        Some("1")
    );
}

#[test]
fn a_bad_record_stops_the_import_and_what_came_before_stays() {
    for batch in [1, 2, 3, 500] {
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let text = [
            record("a", "1"),
            record("b", "2"),
            record("c", "3"),
            "{\"key\":\"d\",\"actor\":\"nobody\",\"doc\":4}\n".to_owned(),
            record("e", "5"),
        ]
        .concat();
        let (result, events) = import(&mut repo, &text, batch);
        let Err(ImportError::Record {
            line,
            problem: RecordError::Actor(_),
            recorded,
        }) = result
        else {
            panic!("{result:?}");
        };
        assert_eq!(line, 4);
        assert_eq!(recorded.snapshots(), 3, "batch {batch}");
        assert_eq!(events.len(), 3);
        drop(repo);
        let repo = Repo::open(dir.path()).unwrap();
        for key in ["a", "b", "c"] {
            assert!(repo.current_text(key).unwrap().is_some(), "{key}");
        }
        for key in ["d", "e"] {
            assert_eq!(repo.current_text(key).unwrap(), None, "{key}");
        }
    }
}

#[test]
fn record_errors_name_the_line_and_the_place_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let cases = [
        ("{\"key\":", "line 1: not valid JSON: line 1, column 7: "),
        (
            "{\"actor\":\"user:a\",\"doc\":1}",
            "line 1: no \"key\" string",
        ),
        ("{\"key\":\"k\",\"actor\":\"user:a\"}", "line 1: no \"doc\""),
        (
            "{\"key\":\"k\",\"actor\":\"user:a\",\"at\":5,\"doc\":1}",
            "line 1: \"at\" is not a time: 5",
        ),
        (
            // The document's error is placed in the line, not in the document.
            "{\"key\":\"k\",\"actor\":\"user:a\",\"doc\":{\"a\":1,\"a\":2}}",
            "line 1: not valid JSON: line 1, column 44: ",
        ),
        (
            "{\"key\":\"/k\",\"actor\":\"user:a\",\"doc\":1}",
            "line 1: invalid key",
        ),
    ];
    for (line, want) in cases {
        let (result, _) = import(&mut repo, line, 500);
        let err = result.unwrap_err();
        assert!(err.to_string().starts_with(want), "{line}: {err}");
        assert_eq!(err.recorded(), ImportSummary::default());
    }
    assert_eq!(repo.current_text("k").unwrap(), None);
}

#[test]
fn an_at_before_the_newest_transaction_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let text = [
        "{\"key\":\"k\",\"actor\":\"user:a\",\"at\":\"2026-02-01T00:00:00Z\",\"doc\":1}\n",
        "{\"key\":\"k\",\"actor\":\"user:a\",\"at\":\"2026-01-01\",\"doc\":2}\n",
    ]
    .concat();
    let (result, _) = import(&mut repo, &text, 500);
    match result {
        Err(ImportError::Record {
            line: 2,
            problem: RecordError::Refused(e),
            recorded,
        }) if matches!(*e, hist::Error::AtBeforeNewest { .. }) => assert_eq!(recorded.changed, 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn warnings_come_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    crate::compare::key_items_by_id(&mut repo, Timestamp(T0));
    let text = record("k", "{\"items\":[{\"id\":1},{\"id\":1}]}");
    let (result, events) = import(&mut repo, &format!("\n{text}"), 500);
    assert_eq!(result.unwrap().changed, 1);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].starts_with("2 warning: "), "{events:?}");
    assert_eq!(events[1], "2 k Changed(1)");
}

#[test]
fn input_that_is_not_utf8_stops_the_import_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut input = record("a", r#"{"n":1}"#).into_bytes();
    input.extend_from_slice(b"{\"key\":\"b\",\"doc\":\"\xff\"}\n");
    input.extend_from_slice(record("c", r#"{"n":3}"#).as_bytes());
    let err = repo
        .import_ndjson(&input[..], Timestamp(T0), &ImportOptions::default(), |_| {})
        .unwrap_err();
    match &err {
        ImportError::Record { line, problem, .. } => {
            assert_eq!(*line, 2);
            assert!(
                matches!(problem, hist::import::RecordError::NotUtf8),
                "{problem:?}"
            );
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(err.recorded().snapshots(), 1);
    assert!(repo.as_of_tx("a", i64::MAX).unwrap().doc.is_some());
    assert!(repo.as_of_tx("c", i64::MAX).unwrap().doc.is_none());
}
