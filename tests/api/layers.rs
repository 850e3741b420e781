//! The layers stay apart. The library, built without the `cli` feature (as a program that
//! embeds it builds it), pulls no command-line or terminal crate; and the command line
//! (`src/cli/`, `src/main.rs`) never touches the storage crates, only `hist::`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates that belong to a command line or a terminal, never to the library.
const TERMINAL_CRATES: &[&str] = &[
    "clap",
    "clap_builder",
    "clap_derive",
    "clap_lex",
    "clap_complete",
    "clap_mangen",
    "indicatif",
    "anstream",
    "anstyle-parse",
    "anstyle-query",
    "anstyle-wincon",
    "colorchoice",
    "comfy-table",
    "crossterm",
    "console",
    "termcolor",
    "terminal_size",
    "termion",
    "owo-colors",
    "colored",
    "dialoguer",
    "ratatui",
];

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo tree` of the library without default features: normal dependencies only, one
/// crate name per line (first the crate itself).
fn library_tree(extra: &[&str]) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let out = Command::new(cargo)
        .current_dir(manifest_dir())
        .args(["tree", "--offline", "--locked", "--no-default-features"])
        .args(["-e", "normal", "--prefix", "none", "-p", "hist"])
        .args(extra)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("cargo tree prints UTF-8");
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.dedup();
    names
}

#[test]
fn the_library_pulls_no_terminal_crate() {
    let crates = library_tree(&[]);
    assert_eq!(crates.first().map(String::as_str), Some("hist"));
    assert!(crates.len() > 20, "{crates:?}");
    for name in TERMINAL_CRATES {
        assert!(
            !crates.iter().any(|c| c == name),
            "the library (--no-default-features) depends on {name}: a command-line crate \
             belongs behind the `cli` feature\n{}",
            library_tree(&["-i", name]).join("\n")
        );
    }
    // anstyle (types for ANSI styles, no dependencies and no I/O) comes in only with the
    // YAML reader's error snippets (serde-saphyr -> annotate-snippets), never directly.
    if crates.iter().any(|c| c == "anstyle") {
        let dependents = library_tree(&["-i", "anstyle"]);
        for name in &dependents {
            assert!(
                ["anstyle", "annotate-snippets", "serde-saphyr", "hist"].contains(&name.as_str()),
                "anstyle reaches the library through {name}: {dependents:?}"
            );
        }
        let direct = library_tree(&["--depth", "1"]);
        assert!(!direct.iter().any(|c| c == "anstyle"), "{direct:?}");
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_command_line_never_touches_the_storage_crates() {
    let mut files = vec![manifest_dir().join("src/main.rs")];
    rust_files(&manifest_dir().join("src/cli"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        for (i, line) in text.lines().enumerate() {
            // Code only: what comments and help texts say is not an import.
            let code = line.split("//").next().unwrap_or_default();
            let mut words = code.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if let Some(word) = words.find(|w| *w == "rusqlite" || *w == "zstd") {
                panic!(
                    "{}:{}: the command line uses {word}; storage stays behind the library's \
                     API (hist::Repo)\n{line}",
                    file.display(),
                    i + 1
                );
            }
        }
    }
}
