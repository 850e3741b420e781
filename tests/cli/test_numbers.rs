//! Integers beyond 2^53 and beyond 64 bits go through every command digit for digit: as
//! values, as keys of a keyed array, in the log, in patches, in SQL.

use crate::common::TestEnv;

/// Beyond 64 bits: the key of an element.
const BIG: &str = "123456789012345678901234567890";
/// 2^53 + 1 and 2^53 + 3: a double holds neither.
const NEAR: &str = "9007199254740993";
const NEAR2: &str = "9007199254740995";
/// Beyond 64 bits, negative.
const NEG: &str = "-98765432109876543210";
const NEG2: &str = "-98765432109876543211";

#[test]
fn big_integers_survive_every_command() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    let run = |args: &[&str]| env.run(&[args, &w].concat());
    run(&["rules", "array-key", "/items", "id"]).ok();
    let doc = |n: &str, neg: &str| {
        format!(r#"{{"items": [{{"id": 1, "n": 2}}, {{"id": {BIG}, "n": {n}}}], "neg": {neg}}}"#)
    };
    env.write("v1.json", doc(NEAR, NEG));
    env.write("v2.json", doc(NEAR2, NEG2));
    run(&["ingest", "k", "v1.json"]).ok();
    run(&["ingest", "k", "v2.json"]).ok();

    // Keyed by id, the big key sorts first (`[123…]` before `[1]`).
    let canonical =
        format!(r#"{{"items":[{{"id":{BIG},"n":{NEAR2}}},{{"id":1,"n":2}}],"neg":{NEG2}}}"#);
    assert_eq!(
        env.run(&["show", "k", "--json"]).ok(),
        format!("{canonical}\n")
    );
    assert_eq!(
        env.run(&["canon", "v2.json"]).ok().trim_end(),
        format!(r#"{{"items":[{{"id":1,"n":2}},{{"id":{BIG},"n":{NEAR2}}}],"neg":{NEG2}}}"#)
    );
    let element = format!("/items[id={BIG}]/n");
    assert_eq!(
        env.run(&["show", "k", "--path", &element]).ok(),
        format!("{NEAR2}\n")
    );
    assert_eq!(
        env.run(&["show", "k", "@tx:2", "--path", &element]).ok(),
        format!("{NEAR}\n")
    );
    assert!(
        env.run(&["show", "k"])
            .ok()
            .contains(&format!("\"neg\": {NEG2}"))
    );

    let history = env
        .run(&["history", "k", &element, "--json"])
        .ok()
        .to_owned();
    assert!(history.contains(&format!("\"new\":{NEAR}")), "{history}");
    assert!(
        history.contains(&format!("\"new\":{NEAR2},\"old\":{NEAR}")),
        "{history}"
    );
    let blame = env.run(&["blame", "k", "--json"]).ok().to_owned();
    assert!(
        blame.contains(&format!("\"path\":\"{element}\""))
            && blame.contains(&format!("\"value\":{NEAR2}")),
        "{blame}"
    );
    let export = env.run(&["export"]).ok().to_owned();
    assert!(
        export.contains(&format!("\"new\":{NEG2},\"old\":{NEG}")),
        "{export}"
    );
    let diff = env.run(&["diff", "k", "@tx:2", "--json"]).ok().to_owned();
    assert!(diff.contains(&format!("\"new\":{NEAR2}")), "{diff}");
    let patch = env
        .run(&["diff", "k", "@tx:2", "--format", "json-patch"])
        .ok()
        .to_owned();
    assert!(patch.contains(&format!("\"value\": {NEAR2}")), "{patch}");
    let log = env.run(&["log", "k", "-p", "--json"]).ok().to_owned();
    assert!(log.contains(&format!("\"old\":{NEG}")), "{log}");
    let sql = env
        .run(&[
            "sql",
            "SELECT new FROM changes WHERE path = '/neg'",
            "--json",
        ])
        .ok()
        .to_owned();
    assert!(sql.contains(NEG2), "{sql}");

    // Written by a field write and by a patch.
    run(&["set", "k", "/neg", BIG]).ok();
    env.write(
        "patch.json",
        format!(r#"[{{"op":"test","path":"/neg","value":{BIG}}},{{"op":"add","path":"/m","value":{NEG}}}]"#),
    );
    run(&["apply", "k", "patch.json"]).ok();
    let shown = env.run(&["show", "k", "--json"]).ok().to_owned();
    assert!(
        shown.contains(&format!("\"m\":{NEG},\"neg\":{BIG}")),
        "{shown}"
    );
    env.run(&["fsck"]).ok();
}
