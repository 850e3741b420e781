//! `Repo::ls`: the keys that exist now or at a past moment, with their last change, the
//! same whichever tier of the log holds the changes (recent rows or sealed segments).

use hist::{Actor, DocPath, LsFilter, Repo, Timestamp, TxOptions, When};

fn opts(i: i64) -> TxOptions {
    TxOptions::new(
        Actor::parse("test:ls").unwrap(),
        "write",
        Timestamp(i * 1_000_000),
    )
}

/// Every answer of `ls`, now and after each transaction, as text.
fn listings(repo: &Repo) -> Vec<String> {
    let newest = repo.newest_tx().unwrap().map_or(0, |t| t.id);
    let whens = std::iter::once(None).chain((0..=newest).map(|t| Some(When::Tx(t))));
    let mut out = Vec::new();
    for when in whens {
        for keys in [None, Some("a/*".to_owned())] {
            let listed = repo.ls(&LsFilter { keys: keys.clone() }, when).unwrap();
            let shown: Vec<String> = listed
                .iter()
                .map(|l| format!("{} tx{} {}", l.key, l.tx.id, l.tx.actor))
                .collect();
            out.push(format!("{when:?} {keys:?}: {}", shown.join(", ")));
        }
    }
    out
}

#[test]
fn ls_answers_the_same_from_either_tier() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::init(dir.path()).unwrap();
    let mut t = 0;
    let mut write = |repo: &mut Repo, key: &str, path: &str, value: i64| {
        t += 1;
        let mut txn = repo.begin(opts(t)).unwrap();
        txn.set(key, &DocPath::parse(path).unwrap(), json!(value))
            .unwrap();
        txn.commit().unwrap();
    };
    for i in 0..10 {
        write(&mut repo, "a/1", "/v", i);
        write(&mut repo, "b/2", "/v", i);
    }
    let mut txn = repo.begin(opts(100)).unwrap();
    txn.remove("a/1", &DocPath::root()).unwrap();
    txn.commit().unwrap();
    write(&mut repo, "a/3", "/v", 1);
    let before = listings(&repo);
    // Now: a/1 was removed; as of tx 20, it was there.
    assert_eq!(
        before[0], "None None: a/3 tx22 test:ls, b/2 tx20 test:ls",
        "{before:#?}"
    );
    assert!(before.contains(&"Some(Tx(20)) Some(\"a/*\"): a/1 tx19 test:ls".to_owned()));
    assert!(before.contains(&"Some(Tx(0)) None: ".to_owned()));
    assert!(repo.seal(1).unwrap() > 0);
    assert_eq!(listings(&repo), before);
}
