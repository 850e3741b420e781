//! Tests of `Repo::diff`: the changes between two moments, and as an RFC 6902 patch.
use hist::canon::Value;
use hist::path::{DocPath, PathPattern};
use hist::rules::RuleKind;
use hist::{Actor, Op, Repo, Timestamp, TxOptions, When};

/// 2026-01-01T00:00:00Z
const T0: i64 = 1_767_225_600_000_000;
const DAY: i64 = 86_400_000_000;

fn repo(versions: &[Value]) -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    key_items_by_id(&mut repo, Timestamp(T0));
    let actor = Actor::parse("user:sam").unwrap();
    for (day, doc) in (1..).zip(versions) {
        let opts = TxOptions::new(actor.clone(), "ingest", Timestamp(T0 + day * DAY));
        let mut txn = repo.begin(opts).unwrap();
        txn.put("doc", doc.clone()).unwrap();
        txn.commit().unwrap();
    }
    (dir, repo)
}

/// Declares that the elements of `/items` are matched by their `id` (in every document).
pub fn key_items_by_id(repo: &mut Repo, now: Timestamp) {
    let actor = Actor::parse("user:sam").unwrap();
    let mut txn = repo.begin(TxOptions::new(actor, "rules", now)).unwrap();
    let items = PathPattern::parse("/items").unwrap();
    let kind = RuleKind::ArrayKey(vec!["id".into()]);
    txn.add_rule(&items, None, &kind).unwrap();
    txn.commit().unwrap();
}

fn at(day: i64) -> When {
    When::At(Timestamp(T0 + day * DAY))
}

#[test]
fn diff_between_two_moments_and_until_now() {
    let v1 = json!({"plan": "pro", "items": [{"id": 1, "n": 1}]});
    let v2 = json!({"plan": "team", "items": [{"id": 2, "n": 5}, {"id": 1, "n": 1}]});
    let v3 = json!({"plan": "team"});
    let (_dir, repo) = repo(&[v1, v2.clone(), v3]);
    let d = repo.diff("doc", at(1), Some(at(2))).unwrap();
    assert_eq!(d.key, "doc");
    let summary: Vec<(String, Op)> = d
        .changes
        .iter()
        .map(|c| (c.path.to_string(), c.op))
        .collect();
    assert_eq!(
        summary,
        [
            ("/items[id=2]".to_owned(), Op::Add),
            ("/plan".to_owned(), Op::Replace)
        ]
    );
    assert!(d.warnings.is_empty() && d.compacted.is_empty());
    // Until now, from before the document existed.
    let d = repo.diff("doc", at(0), None).unwrap();
    assert_eq!(d.from, None);
    assert_eq!(d.changes.len(), 1);
    assert_eq!(d.changes[0].path, DocPath::parse("").unwrap());
    assert_eq!(d.changes[0].new, Some(json!({"plan": "team"})));
    // No change.
    assert!(repo.diff("doc", at(3), None).unwrap().changes.is_empty());
    assert!(repo.diff("/bad", at(3), None).is_err());
}

#[test]
fn json_patch_turns_the_first_version_into_the_second() {
    let versions = [
        json!({"plan": "pro", "items": [{"id": 3}, {"id": 1, "n": 1}], "tags": ["a"]}),
        json!({"items": [{"id": 1, "n": 2}, {"id": 2}], "tags": ["a", "b"], "x": null}),
        json!([1, 2]),
    ];
    let (_dir, repo) = repo(&versions);
    for (a, b) in [(0, 1), (1, 2), (0, 2), (1, 3), (0, 3), (3, 2)] {
        let d = repo.diff("doc", at(a), Some(at(b))).unwrap();
        // An independent RFC 6902 tool (the json-patch crate, on serde_json's values).
        let patch = Value::Array(d.to_json_patch().unwrap()).to_string();
        let patch: json_patch::Patch = serde_json::from_str(&patch).unwrap();
        let read = |day| {
            let text = repo.as_of_text("doc", at(day)).unwrap().text;
            text.map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap())
        };
        // An absent document is patched as null, as RFC 6902 tools see it.
        let mut doc = read(a).unwrap_or(serde_json::Value::Null);
        json_patch::patch(&mut doc, &patch).unwrap();
        assert_eq!(Some(doc), read(b), "{a} -> {b}");
    }
}
