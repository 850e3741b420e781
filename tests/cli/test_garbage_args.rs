//! Garbage arguments: every subcommand, found by walking `hist -h` (so commands added later
//! are covered too), is run with random strings, unknown flags, missing arguments,
//! huge numbers, WHENs and paths that do not parse. Each run either succeeds (some garbage
//! is valid input) or fails with exit 1 or 2 and a `hist: error:` (or clap `error:`)
//! message: never a panic, a backtrace, a Debug dump or an internal-error exit.

use crate::common::{TestEnv, command_tree};
use crate::robust::{Rng, assert_no_panic};

const GARBAGE: &[&str] = &[
    "",
    " ",
    "-",
    "--",
    "--bogus",
    "-Z",
    "x",
    "k",
    "ünïcödé",
    "\u{1b}[31m",
    "a\nb",
    "0",
    "-1",
    "18446744073709551616",
    "99999999999999999999999999",
    "-9223372036854775809",
    "1e400",
    "NaN",
    "@",
    "@tx:",
    "@tx:-5",
    "@tx:99999999999999999999",
    "@9999-99-99",
    "@2026-02-30",
    "@+275760-09-13T00:00:00Z",
    "@yesterday",
    "/a[",
    "/a[id=",
    "[=",
    "/~3",
    "..",
    "../x",
    "/etc/passwd",
    "{",
    "[1,",
    "{\"a\":1,\"a\":2}",
    "\"unterminated",
    "user:",
    ":x",
    "kind:name with space",
    "*",
    "[",
    "%s%n%x",
    "SELECT",
];

#[test]
fn every_subcommand_survives_garbage_arguments() {
    let mut rng = Rng::from_env("every_subcommand_survives_garbage_arguments", 0x6a7b);
    let env = TestEnv::init();
    env.run(&["set", "k", "/a", "[1,2]", "--actor", "user:sam"])
        .ok();
    let commands = command_tree(&env);
    assert!(commands.len() > 10, "{} commands", commands.len());
    let (mut runs, mut refusals) = (0, 0);
    for command in &commands {
        let path = &command.path;
        let positionals = command.positionals;
        let options = command.options.clone();
        let mut cases: Vec<Vec<String>> = vec![
            vec![],
            vec!["--bogus".into()],
            vec!["-C".into(), "/nonexistent/dir".into()],
        ];
        // `init` creates what it is given: keep it inside the test directory.
        let pool: Vec<&str> = if path.first().is_some_and(|c| c == "init") {
            GARBAGE
                .iter()
                .copied()
                .filter(|g| !g.contains("..") && !g.starts_with('/'))
                .collect()
        } else {
            GARBAGE.to_vec()
        };
        let options: Vec<(String, bool)> = options
            .into_iter()
            .filter(|(name, _)| name != "-C" || pool.len() == GARBAGE.len())
            .collect();
        for _ in 0..24 {
            let mut args = Vec::new();
            for _ in 0..rng.below(positionals as u64 + 2) {
                args.push((*rng.pick(&pool)).to_owned());
            }
            if !options.is_empty() {
                for _ in 0..rng.below(3) {
                    let (name, takes_value) = rng.pick(&options).clone();
                    args.push(name);
                    if takes_value {
                        args.push((*rng.pick(&pool)).to_owned());
                    }
                }
            }
            cases.push(args);
        }
        for case in cases {
            let args: Vec<&str> = path.iter().chain(&case).map(String::as_str).collect();
            let mut command = env.command(&args);
            if rng.below(4) == 0 {
                command.env("HIST_ACTOR", "user:fuzz");
            }
            let run = env.run_cmd(command, None);
            runs += 1;
            let what = format!("hist {args:?}");
            assert_no_panic(&what, &run.stderr);
            assert_no_panic(&what, &run.stdout);
            if run.code == 0 {
                continue;
            }
            refusals += 1;
            assert!(
                run.code == 1 || run.code == 2,
                "{what}: exit {}\n{}",
                run.code,
                run.stderr
            );
            // A missing subcommand prints the help (clap's choice), with exit 2.
            let help = run.code == 2 && run.stderr.contains("\nUsage: hist");
            assert!(
                run.stderr.starts_with("hist: error: ")
                    || run.stderr.starts_with("error: ")
                    || help,
                "{what}: {}",
                run.stderr
            );
        }
    }
    eprintln!(
        "{runs} runs over {} commands, {refusals} refused",
        commands.len()
    );
    assert!(
        refusals * 10 > runs * 7,
        "too few refusals: garbage is not reaching the checks"
    );
    env.run(&["fsck"]).ok();
    // A malformed clock is a usage error too.
    let mut command = env.command(&["show", "k"]);
    command.env("HIST_NOW", "yesterday");
    let run = env.run_cmd(command, None);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "hist: error: HIST_NOW=\"yesterday\" is not an RFC 3339 time\n"
    );
}
