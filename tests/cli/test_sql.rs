//! `hist sql`'s table: columns aligned by display width, control characters escaped.

use crate::common::TestEnv;

#[test]
fn the_table_aligns_wide_characters_and_escapes_control_characters() {
    let env = TestEnv::init();
    let w = ["--actor", "user:sam"];
    env.run(&[&["set", "k/漢字", "/v", "\"東京\""][..], &w].concat())
        .ok();
    env.run(&[&["set", "k/emoji", "/v", "\"🎉🎉\""][..], &w].concat())
        .ok();
    env.run(
        &[
            &["set", "k/ascii", "/v", "\"line\\nbreak\\u001b[31m\""][..],
            &w,
        ]
        .concat(),
    )
    .ok();
    let out = env
        .run(&[
            "sql",
            "SELECT key, doc ->> '$.v' AS v, 'x' AS end FROM current ORDER BY key",
        ])
        .ok()
        .to_owned();
    assert_eq!(
        out,
        "key      v                      end\n\
         k/ascii  line\\nbreak\\u{1b}[31m  x\n\
         k/emoji  🎉🎉                   x\n\
         k/漢字   東京                   x\n",
        "{out}"
    );
    // Programs get the values as they are.
    let json = env
        .run(&[
            "sql",
            "--json",
            "SELECT doc ->> '$.v' AS v FROM current WHERE key = 'k/ascii'",
        ])
        .ok()
        .to_owned();
    assert_eq!(json, "{\"v\":\"line\\nbreak\\u001b[31m\"}\n");
}
