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

/// The library's top-level modules and those each one names (`crate::m`), from the sources
/// (tests excluded: a test may use anything).
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut graph: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    let src = manifest_dir().join("src");
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&src).unwrap().to_path_buf();
        let name = rel.to_string_lossy().replace('\\', "/");
        if !name.ends_with(".rs")
            || name.starts_with("cli/")
            || name == "lib.rs"
            || name == "main.rs"
            || name.ends_with("/tests.rs")
        {
            continue;
        }
        let top = name
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        // Code only: comments and the unit tests at the end of a file left out.
        let code: String = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        let deps = graph.entry(top.clone()).or_default();
        let mut rest = code.as_str();
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end]
                    .split(',')
                    .map(|p| p.trim().split("::").next().unwrap().trim())
                    .collect()
            } else {
                vec![
                    rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap(),
                ]
            };
            for dep in names {
                if !dep.is_empty()
                    && dep != top
                    && dep.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                {
                    deps.insert(dep.to_owned());
                }
            }
        }
    }
    let modules: std::collections::BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

#[test]
fn the_library_s_modules_form_no_cycle_and_canonical_json_stands_alone() {
    let graph = module_graph();
    assert!(graph.len() > 20, "{graph:?}");
    assert!(
        graph["canon"].is_empty(),
        "canonical JSON depends on {:?}",
        graph["canon"]
    );
    // Peel off modules that depend on nothing left; what remains is in a cycle.
    let mut left = graph.clone();
    while let Some(free) = left
        .iter()
        .find(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
        .map(|(m, _)| m.clone())
    {
        left.remove(&free);
    }
    assert!(left.is_empty(), "modules in an import cycle: {left:?}");
    // The transaction core calls down only: never into the features built on it.
    for feature in ["gc", "rename", "fsck", "personal", "blame", "track"] {
        assert!(!graph["txn"].contains(feature), "txn imports {feature}");
        assert!(!graph["store"].contains(feature), "store imports {feature}");
    }
}

#[test]
fn only_the_store_speaks_sql_to_the_log() {
    let tables = [
        "tx",
        "change_log",
        "change_key",
        "version",
        "doc",
        "checkpoint",
        "check_log",
        "rule",
        "rename",
        "compaction",
        "forgotten",
        "track_index",
        "track_spec",
        "file_version",
        "git_import",
    ];
    let src = manifest_dir().join("src");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if !rel.ends_with(".rs") || rel.starts_with("store/") || rel.ends_with("/tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        // SQL keywords are written in capitals, table names in small letters.
        for line in code.lines() {
            for verb in ["FROM ", "JOIN ", "INTO ", "UPDATE "] {
                for table in tables {
                    let needle = format!("{verb}{table}");
                    if let Some(at) = line.find(&needle) {
                        let after = line[at + needle.len()..].chars().next();
                        if after.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
                            found.push(format!("src/{rel}: {}", line.trim()));
                        }
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "SQL on the log's tables outside src/store/:\n{}",
        found.join("\n")
    );
}
