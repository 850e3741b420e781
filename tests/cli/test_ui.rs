//! Colors and the pager: only on a terminal, never with NO_COLOR (unless --color always) or
//! --color never; --no-pager, HIST_PAGER (empty: no pager), PAGER; -p is --patch.

use crate::common::TestEnv;

fn story() -> TestEnv {
    let env = TestEnv::init();
    for (value, actor) in [("\"starter\"", "user:sam"), ("\"pro\"", "user:maria")] {
        env.run(&["set", "c/1", "/plan", value, "--actor", actor])
            .ok();
    }
    env.run(&["rm", "c/1", "/plan", "--actor", "user:sam"]).ok();
    env.run(&["set", "c/1", "/plan", "\"team\"", "--actor", "user:sam"])
        .ok();
    env
}

const ESC: char = '\u{1b}';

/// The commands that paint.
const PAINTED: &[&[&str]] = &[
    &["log", "-p"],
    &["log", "--oneline"],
    &["history", "c/1", "/plan"],
    &["blame", "c/1"],
    &["diff", "c/1", "@tx:1"],
];

#[test]
fn no_colors_off_a_terminal_or_when_refused() {
    let env = story();
    for args in PAINTED {
        // Not a terminal (TestEnv sets NO_COLOR too; remove it to test "auto" alone).
        let mut cmd = env.command(args);
        cmd.env_remove("NO_COLOR");
        let out = env.run_cmd(cmd, None);
        assert!(!out.ok().contains(ESC), "{args:?}: {}", out.stdout);
        // --color never, even when forced by the environment.
        let mut cmd = env.command(&[&["--color", "never"][..], args].concat());
        cmd.env_remove("NO_COLOR").env("CLICOLOR_FORCE", "1");
        let out = env.run_cmd(cmd, None);
        assert!(!out.ok().contains(ESC), "{args:?}: {}", out.stdout);
        // NO_COLOR beats CLICOLOR_FORCE.
        let mut cmd = env.command(args);
        cmd.env("CLICOLOR_FORCE", "1");
        let out = env.run_cmd(cmd, None);
        assert!(!out.ok().contains(ESC), "{args:?}: {}", out.stdout);
    }
}

/// no-color.org: "user-level configuration files and per-instance command-line arguments
/// should override NO_COLOR": `--color always` paints even under NO_COLOR.
#[test]
fn color_always_wins_over_no_color() {
    let env = story();
    for args in PAINTED {
        // TestEnv sets NO_COLOR=1.
        let out = env.run(&[&["--color", "always"][..], args].concat());
        assert!(out.ok().contains(ESC), "{args:?}: {}", out.stdout);
    }
}

/// `-p` is `--patch` wherever a command has it, as in git; `--path` has no short form.
#[test]
fn dash_p_means_patch_everywhere() {
    let env = story();
    for spec in crate::common::command_tree(&env) {
        let mut args: Vec<&str> = spec.path.iter().map(String::as_str).collect();
        args.push("-h");
        let help = env.run(&args).ok().to_owned();
        for line in help.lines().map(str::trim_start) {
            if line.starts_with("-p,") || line.starts_with("-p ") {
                assert!(line.starts_with("-p, --patch"), "{:?}: {line}", spec.path);
            }
        }
    }
    let out = env.run(&["show", "c/1", "-p", "/plan"]);
    assert!(out.fails(2).contains("-p"), "{}", out.stderr);
    env.run(&["show", "c/1", "--path", "/plan"]).ok();
    env.run(&["log", "-p", "-n", "1"]).ok();
}

#[test]
fn colors_when_asked() {
    let env = story();
    let yellow = "\u{1b}[33m";
    let green = "\u{1b}[32m";
    let red = "\u{1b}[31m";
    let run = |args: &[&str], force: bool| {
        let mut cmd = if force {
            let mut c = env.command(args);
            c.env("CLICOLOR_FORCE", "1");
            c
        } else {
            env.command(&[&["--color", "always"][..], args].concat())
        };
        cmd.env_remove("NO_COLOR");
        env.run_cmd(cmd, None).ok().to_owned()
    };
    for force in [false, true] {
        let log = run(&["log", "-p"], force);
        assert!(log.contains(&format!("{yellow}tx 4")), "{log}");
        assert!(log.contains(&format!("{green}+ /plan: \"team\"")), "{log}");
        assert!(log.contains(&format!("{red}- /plan: \"pro\"")), "{log}");
        let history = run(&["history", "c/1", "/plan"], force);
        assert!(
            history.contains(&format!("{green}+ \"starter\"")),
            "{history}"
        );
        let blame = run(&["blame", "c/1"], force);
        assert!(blame.contains(&format!("{yellow}4")), "{blame}");
        let diff = run(&["diff", "c/1", "@tx:1"], force);
        assert!(diff.contains(ESC), "{diff}");
    }
    // Data meant for programs is never painted.
    let json = run(&["log", "--json"], false);
    assert!(!json.contains(ESC), "{json}");
    env.run(&["--color", "sometimes", "log"]).fails(2);
}

/// Runs `hist ARGS` under a pseudo-terminal (util-linux `script`), with `env` added.
/// `None` when `script` is not available.
fn on_a_terminal(env: &TestEnv, args: &str, vars: &[(&str, &str)]) -> Option<String> {
    let probe = std::process::Command::new("script")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: util-linux `script` is not available to make a terminal");
        return None;
    }
    let hist = env!("CARGO_BIN_EXE_hist");
    let mut cmd = env.command(&[]);
    cmd.env_remove("NO_COLOR");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut script = std::process::Command::new("script");
    script
        .args(["-q", "-e", "-c", &format!("{hist} {args}"), "/dev/null"])
        .current_dir(env.path())
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let out = env.run_cmd(script, None);
    Some(out.ok().replace("\r\n", "\n"))
}

#[test]
fn long_output_goes_through_the_pager_on_a_terminal() {
    let env = story();
    let pager = [("HIST_PAGER", "sed -e 's/^/paged: /'")];
    let Some(out) = on_a_terminal(&env, "--color never log --oneline", &pager) else {
        return;
    };
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(out.lines().all(|l| l.starts_with("paged: ")), "{out}");
    // Every long command pages; colors are on (a terminal).
    for args in [
        "history c/1 /plan",
        "blame c/1",
        "show c/1",
        "diff c/1 @tx:1",
        "log",
    ] {
        let out = on_a_terminal(&env, args, &pager).unwrap_or_default();
        assert!(out.starts_with("paged: "), "{args}: {out}");
        if args != "show c/1" {
            assert!(out.contains(ESC), "{args}: {out}");
        }
    }
    // --no-pager, and a pager of `cat`, print directly.
    let out = on_a_terminal(&env, "--no-pager log --oneline", &pager).unwrap_or_default();
    assert!(
        !out.contains("paged: ") && out.contains("user:sam"),
        "{out}"
    );
    let cat = [("HIST_PAGER", "cat"), ("PAGER", "sed -e 's/^/paged: /'")];
    let out = on_a_terminal(&env, "log --oneline", &cat).unwrap_or_default();
    assert!(
        !out.contains("paged: ") && out.contains("user:sam"),
        "{out}"
    );
    // An empty HIST_PAGER turns the pager off, as GIT_PAGER="" does.
    let empty = [("HIST_PAGER", ""), ("PAGER", "sed -e 's/^/paged: /'")];
    let out = on_a_terminal(&env, "log --oneline", &empty).unwrap_or_default();
    assert!(
        !out.contains("paged: ") && out.contains("user:sam"),
        "{out}"
    );
    // PAGER when HIST_PAGER is not set.
    let pager = [("PAGER", "sed -e 's/^/via PAGER: /'")];
    let out = on_a_terminal(&env, "log --oneline", &pager).unwrap_or_default();
    assert!(out.starts_with("via PAGER: "), "{out}");
    // Short commands that are not listings never page.
    let out = on_a_terminal(&env, "sql 'SELECT 1 AS one'", &pager).unwrap_or_default();
    assert_eq!(out, "one\n1\n");
}

#[test]
fn no_pager_off_a_terminal() {
    let env = story();
    let mut cmd = env.command(&["log", "--oneline"]);
    cmd.env("HIST_PAGER", "sed -e 's/^/paged: /'");
    let out = env.run_cmd(cmd, None);
    assert!(!out.ok().contains("paged"), "{}", out.stdout);
    assert_eq!(out.stdout.lines().count(), 4);
}
