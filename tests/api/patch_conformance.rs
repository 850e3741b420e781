//! `Txn::patch` (what `hist apply` runs) against the public JSON Patch test suite
//! (json-patch/json-patch-tests): every enabled case's expected result, and every error case
//! refused with nothing written.

use hist::canon::Value;
use hist::patch::Patch;
use hist::{Actor, Repo, Timestamp, TxOptions};
use std::path::PathBuf;

fn suite(name: &str) -> Option<Vec<Value>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance/json-patch-tests")
        .join(name);
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!(
            "SKIPPED: ../shared/conformance not found ({})",
            path.display()
        );
        return None;
    };
    // A lenient reader on purpose: two disabled records repeat the key "op". The suite's
    // numbers fit serde_json's own.
    let cases: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
    Some(cases.into_iter().map(Value::from).collect())
}

fn run_suite(name: &str) {
    let Some(cases) = suite(name) else { return };
    let (mut passed, mut refused) = (0, 0);
    for (i, case) in cases.iter().enumerate() {
        if case.get("disabled") == Some(&Value::Bool(true)) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut repo = Repo::init(dir.path()).unwrap();
        let actor = Actor::parse("test:patch").unwrap();
        let doc = case["doc"].clone();
        let mut txn = repo
            .begin(TxOptions::new(actor.clone(), "write", Timestamp(1)))
            .unwrap();
        txn.put("k", doc.clone()).unwrap();
        txn.commit().unwrap();
        let comment = case.get("comment").and_then(Value::as_str).unwrap_or("");
        let patch = Patch::from_value(&case["patch"]);
        let mut txn = repo
            .begin(TxOptions::new(actor, "write", Timestamp(2)))
            .unwrap();
        let result = patch
            .map_err(|e| e.to_string())
            .and_then(|p| txn.patch("k", &p).map_err(|e| e.to_string()));
        if let Some(expected) = case.get("expected") {
            result.unwrap_or_else(|e| panic!("{name} #{i} ({comment}): {e}"));
            txn.commit().unwrap();
            let expected = expected.clone();
            assert_eq!(
                repo.current("k").unwrap(),
                Some(expected),
                "{name} #{i} ({comment})"
            );
            passed += 1;
        } else if case.get("error").is_some() {
            assert!(result.is_err(), "{name} #{i} ({comment}) should fail");
            drop(txn);
            assert_eq!(
                repo.current("k").unwrap(),
                Some(doc),
                "{name} #{i}: a refused patch wrote"
            );
            assert_eq!(repo.log(&hist::LogFilter::default()).unwrap().len(), 1);
            refused += 1;
        } else {
            result.unwrap_or_else(|e| panic!("{name} #{i} ({comment}): {e}"));
        }
    }
    eprintln!("{name}: {passed} expected results, {refused} errors refused");
    assert!(passed > 10 && refused > 3);
}

#[test]
fn json_patch_tests() {
    run_suite("tests.json");
}

#[test]
fn rfc6902_spec_tests() {
    run_suite("spec_tests.json");
}
