//! Tests that drive the `hist` binary. One test binary; every file in this directory is a
//! module of it (a test checks that none is forgotten).
#![allow(clippy::unwrap_used)]

mod common;

mod test_blame;
mod test_completions;
mod test_errors;
mod test_export;
mod test_forget;
mod test_foundation;
mod test_track;

mod robust;
mod test_concurrency;
mod test_crash;
mod test_disk_full;
mod test_garbage_args;
mod test_gc;
mod test_hostile;
mod test_import_git;
mod test_import_sqlite;
mod test_ingest;
mod test_keys;
mod test_ls;
mod test_mv;
mod test_numbers;
mod test_readme;
mod test_scripts;
mod test_sql;
mod test_sql_extension;
mod test_sql_lockdown;
mod test_tamper;
mod test_timeline;
mod test_ui;
mod test_upgrade;
mod test_when;

#[test]
fn no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            assert!(
                main.contains(&format!("mod {module};")),
                "tests/cli/{name} is not declared in main.rs"
            );
        }
    }
}
