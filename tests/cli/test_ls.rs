//! `hist ls`: the keys that exist now or then, with the tx, time and actor of their last
//! change.

use crate::common::TestEnv;

fn story() -> TestEnv {
    let env = TestEnv::init();
    let w = |actor: &'static str, at: &'static str| ["--actor", actor, "--at", at];
    env.run(
        &[
            &["set", "customer/4411", "/plan", "\"pro\""][..],
            &w("user:sam", "@2026-01-10"),
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &["set", "feed/acme", "/price", "12"][..],
            &w("poller:acme", "@2026-02-01"),
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &["set", "customer/7", "/plan", "\"team\""][..],
            &w("user:maria", "@2026-03-01"),
        ]
        .concat(),
    )
    .ok();
    env.run(
        &[
            &["set", "customer/4411", "/plan", "\"team\""][..],
            &w("user:maria", "@2026-04-01"),
        ]
        .concat(),
    )
    .ok();
    env.run(&[&["rm", "customer/7"][..], &w("user:sam", "@2026-05-01")].concat())
        .ok();
    env
}

#[test]
fn lists_the_keys_that_exist_now_with_their_last_change() {
    let env = story();
    assert_eq!(
        env.run(&["ls"]).ok(),
        "customer/4411  tx 4  2026-04-01T00:00:00Z  user:maria\n\
         feed/acme      tx 2  2026-02-01T00:00:00Z  poller:acme\n"
    );
    assert_eq!(
        env.run(&["ls", "--keys", "customer/*"]).ok(),
        "customer/4411  tx 4  2026-04-01T00:00:00Z  user:maria\n"
    );
    assert_eq!(
        env.run(&["ls", "--json", "--keys", "feed/*"]).ok(),
        "{\"actor\":\"poller:acme\",\"at\":\"2026-02-01T00:00:00.000000Z\",\"key\":\"feed/acme\",\"kind\":\"write\",\"reason\":null,\"tx\":2}\n"
    );
}

#[test]
fn lists_the_keys_that_existed_then() {
    let env = story();
    // Before the removal and the second write of customer/4411.
    assert_eq!(
        env.run(&["ls", "@2026-03-15"]).ok(),
        "customer/4411  tx 1  2026-01-10T00:00:00Z  user:sam\n\
         customer/7     tx 3  2026-03-01T00:00:00Z  user:maria\n\
         feed/acme      tx 2  2026-02-01T00:00:00Z  poller:acme\n"
    );
    assert_eq!(
        env.run(&["ls", "@tx:1", "--keys", "*"]).ok(),
        "customer/4411  tx 1  2026-01-10T00:00:00Z  user:sam\n"
    );
    // Before the first transaction: nothing, said on stderr.
    let out = env.run(&["ls", "@2025-12-01"]);
    assert_eq!(out.ok(), "");
    assert!(
        out.stderr.contains("no documents at @2025-12-01"),
        "{out:?}"
    );
    // A document put back after its removal is listed again.
    env.run(&[
        "set",
        "customer/7",
        "/plan",
        "\"pro\"",
        "--actor",
        "user:sam",
    ])
    .ok();
    assert!(env.run(&["ls"]).ok().contains("customer/7     tx 6"));
    env.run(&["ls", "--keys", "a[b"]).fails(2);
}
