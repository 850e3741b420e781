//! `include/hist.h` is generated from `src/lib.rs` by cbindgen and checked in: this test
//! fails when it is stale. `HIST_UPDATE_HEADER=1 cargo test -p hist-c --test header`
//! rewrites it.

use std::path::Path;

#[test]
fn the_header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_src(dir.join("src/lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen reads src/lib.rs");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let path = dir.join("include/hist.h");
    if std::env::var_os("HIST_UPDATE_HEADER").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).expect("write include/hist.h");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "bindings/c/include/hist.h is stale: regenerate it with \
         `HIST_UPDATE_HEADER=1 cargo test -p hist-c --test header` and commit it"
    );
}
