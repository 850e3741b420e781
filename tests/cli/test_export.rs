//! `hist export`: the change log as NDJSON.

use crate::common::TestEnv;

#[test]
fn export_prints_one_change_per_line_with_its_transaction() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    env.run(
        &[
            &[
                "set",
                "customer/1",
                "/plan",
                "\"pro\"",
                "--at",
                "@2026-08-01",
            ][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &[
                "set",
                "feed/acme",
                "",
                "{\"a\":1,\"b\":2}",
                "--at",
                "@2026-09-01",
            ][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &[
                "set",
                "feed/acme",
                "",
                "{\"a\":3}",
                "-m",
                "price feed",
                "--at",
                "@2026-09-02",
            ][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    let all = env.run(&["export"]);
    assert_eq!(
        all.ok(),
        concat!(
            r#"{"actor":"user:sam","at":"2026-08-01T00:00:00.000000Z","key":"customer/1","kind":"write","new":{"plan":"pro"},"op":"add","path":"","reason":null,"tx":1}"#,
            "\n",
            r#"{"actor":"user:sam","at":"2026-09-01T00:00:00.000000Z","key":"feed/acme","kind":"write","new":{"a":1,"b":2},"op":"add","path":"","reason":null,"tx":2}"#,
            "\n",
            r#"{"actor":"user:sam","at":"2026-09-02T00:00:00.000000Z","key":"feed/acme","kind":"write","new":3,"old":1,"op":"replace","path":"/a","reason":"price feed","tx":3}"#,
            "\n",
            r#"{"actor":"user:sam","at":"2026-09-02T00:00:00.000000Z","key":"feed/acme","kind":"write","old":2,"op":"remove","path":"/b","reason":"price feed","tx":3}"#,
            "\n",
        )
    );
    let feed = env.run(&["export", "--keys", "feed/*", "--since", "@2026-09-02"]);
    assert_eq!(feed.ok().lines().count(), 2);
    let since_tx = env.run(&["export", "--since", "@tx:2"]);
    assert_eq!(since_tx.ok().lines().count(), 3);
    assert_eq!(env.run(&["export", "--keys", "nothing/*"]).ok(), "");
    env.run(&["export", "--since", "soon"]).fails(2);
}
