//! Tests: man pages and help texts, generated from the clap definitions.
//!
//! `man/` holds one page per command (`hist.1`, `hist-blame.1`, `hist-rules-array-key.1`,
//! …). This test renders them into memory and fails when the committed pages are stale;
//! run it with `HIST_UPDATE_MAN=1` to rewrite `man/` instead. The meta-tests check every
//! command that exists (recursively), not a fixed list. They are unit tests of the binary,
//! the only crate that holds the clap definitions.

use clap::CommandFactory;
use std::collections::BTreeMap;
use std::path::Path;

/// Every visible command, the root first, with its full name (`hist rules array-key`).
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
        out.push((name.to_owned(), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &format!("{name} {}", sub.get_name()), out);
        }
    }
    let mut root = super::Cli::command().disable_help_subcommand(true);
    root.build();
    let mut out = Vec::new();
    walk(&root, "hist", &mut out);
    out
}

/// The pages, by file name.
fn render_pages() -> BTreeMap<String, Vec<u8>> {
    commands()
        .into_iter()
        .map(|(_, cmd)| {
            let man = clap_mangen::Man::new(cmd);
            let mut bytes = Vec::new();
            man.render(&mut bytes).expect("render");
            (man.get_filename(), bytes)
        })
        .collect()
}

fn committed_pages(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.expect("read man/").path())
        .filter(|p| p.extension().is_some_and(|e| e == "1"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read page"))
        })
        .collect()
}

#[test]
fn man_pages_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let fresh = render_pages();
    assert!(fresh.contains_key("hist.1") && fresh.contains_key("hist-blame.1"));
    assert!(fresh.contains_key("hist-rules-array-key.1"));
    if std::env::var_os("HIST_UPDATE_MAN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).expect("mkdir man/");
        for name in committed_pages(&dir).keys() {
            if !fresh.contains_key(name) {
                std::fs::remove_file(dir.join(name)).expect("remove a stale page");
            }
        }
        for (name, bytes) in &fresh {
            std::fs::write(dir.join(name), bytes).expect("write page");
        }
        eprintln!("rewrote {} man pages in {}", fresh.len(), dir.display());
        return;
    }
    let committed = committed_pages(&dir);
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&fresh),
        "man/ does not hold one page per command; run `HIST_UPDATE_MAN=1 cargo test --bin hist man`"
    );
    for (name, bytes) in &fresh {
        assert!(
            committed.get(name) == Some(bytes),
            "man/{name} is stale; run `HIST_UPDATE_MAN=1 cargo test --bin hist man` and commit man/"
        );
    }
}

#[test]
fn every_command_has_a_long_help_with_an_example() {
    let all = commands();
    assert!(all.len() > 15, "{}", all.len());
    for (name, cmd) in &all {
        let about = cmd.get_about().map(ToString::to_string).unwrap_or_default();
        assert!(!about.is_empty(), "`{name}` has no summary");
        assert!(
            !about.contains('\n') && !about.ends_with('.'),
            "`{name}`: the summary is one line without a final period: {about:?}"
        );
        let long = cmd
            .get_long_about()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            long.contains("Example"),
            "`{name}` has no example in its long help (the doc comment of its Args struct, \
             with #[command(verbatim_doc_comment)]; no doc comment on the enum variant)"
        );
        // Examples run the command they document.
        let example = long
            .split_once("Example")
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        assert!(
            example.contains(&format!("  {name}")),
            "`{name}`: the example does not run `{name}`"
        );
    }
}

#[test]
fn every_argument_has_help() {
    for (name, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                !help.trim().is_empty(),
                "`{name}`: argument {id} has no help text"
            );
        }
    }
}
