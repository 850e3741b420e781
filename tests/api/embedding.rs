//! Linking hist changes nothing else in the program (DESIGN.md section 7): a crate that
//! depends on hist, without its default features, and on `serde_json` gets a `serde_json`
//! with none of the features that change how a program's JSON is read or written.
//!
//! The check asks cargo for the crate's feature graph (`cargo tree`, which resolves and
//! compiles nothing), offline, with this repository's lock file so the versions are the
//! ones it builds with.

use std::path::Path;
use std::process::Command;

/// `serde_json` features that change behaviour for the whole program once any crate
/// switches them on.
const FORBIDDEN: [&str; 4] = [
    "arbitrary_precision",
    "preserve_order",
    "float_roundtrip",
    "unbounded_depth",
];

#[test]
fn linking_hist_switches_on_no_serde_json_feature() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    // `default-features = false` works whether or not hist has features yet.
    let manifest = format!(
        "[package]\nname = \"embeds-hist\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\nhist = {{ path = {:?}, default-features = false }}\n\
         serde_json = \"1\"\n\n[workspace]\n",
        repo.display().to_string()
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-e", "features", "-i", "serde_json"])
        .arg("--manifest-path")
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", repo.join("target/embedding"))
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The graph is there: serde_json with its default features, reached through hist.
    assert!(tree.contains("serde_json feature \"std\""), "{tree}");
    assert!(tree.contains("hist v"), "{tree}");
    for feature in FORBIDDEN {
        assert!(
            !tree.contains(&format!("serde_json feature \"{feature}\"")),
            "{feature} is switched on:\n{tree}"
        );
    }
}
