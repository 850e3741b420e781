//! The repository's scripts find the `hist` binary wherever cargo put it (issue 24, item 8):
//! `bash fixtures/demo.sh` used to run `target/debug/hist` and failed under CARGO_TARGET_DIR.

use std::path::{Path, PathBuf};

fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name().into_string().unwrap_or_default();
        if entry.file_type().unwrap().is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | ".hist") {
                scripts(&path, out);
            }
        } else if name.ends_with(".sh") || path.ends_with(".ci/run") {
            out.push(path);
        }
    }
}

/// No script names a place in `target/`: each asks cargo (`fixtures/hist-bin.sh`).
#[test]
fn no_script_guesses_where_cargo_put_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    scripts(root, &mut found);
    assert!(found.iter().any(|p| p.ends_with("fixtures/demo.sh")));
    for script in found {
        let text = std::fs::read_to_string(&script).unwrap();
        for guess in ["target/debug", "target/release"] {
            assert!(
                !text.contains(guess),
                "{} names {guess}: use hist_bin from fixtures/hist-bin.sh",
                script.display()
            );
        }
    }
}

/// `hist_bin` prints the binary cargo built, wherever CARGO_TARGET_DIR put it.
#[test]
fn hist_bin_asks_cargo_where_the_binary_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = Path::new(env!("CARGO_BIN_EXE_hist"));
    // The target directory this test binary was built in: …/TARGET/debug/hist.
    let Some(target) = built.parent().and_then(Path::parent) else {
        return;
    };
    // The profile it was built with: the directory's name (`debug` is the dev profile).
    let profile = match built
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
    {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    };
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            ". fixtures/hist-bin.sh && hist_bin --profile {profile}"
        ))
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("HIST")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(
        printed.canonicalize().unwrap(),
        built.canonicalize().unwrap()
    );
}
