//! The C ABI from a C program: `tests/c/test_hist.c`, compiled with `cc` against
//! `libhistc.a` and `include/hist.h`, run on a fresh directory. Where the compiler has
//! AddressSanitizer, the program is built with it, so a string the library returns and the
//! program does not free with `hist_free` (or one freed twice) fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `libhistc.a` cargo built for this test: in `deps/`, beside the test binary (built
/// as the tests' dependency), or in `target/<profile>` (by `cargo build -p hist-c`).
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("deps/");
    let candidates = [deps.join("libhistc.a"), deps.join("../libhistc.a")];
    let found = candidates.iter().find(|p| p.is_file());
    found
        .unwrap_or_else(|| panic!("libhistc.a was not built (looked for {candidates:?})"))
        .clone()
}

/// Compiles the test program; `sanitize`: with AddressSanitizer.
fn compile(out: &Path, sanitize: bool) -> std::process::Output {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = static_lib();
    let mut cc = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()));
    if sanitize {
        cc.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    cc.args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-I"])
        .arg(dir.join("include"))
        .arg(dir.join("tests/c/test_hist.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(out)
        .output()
        .expect("run cc")
}

#[test]
fn the_c_program_passes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let exe = tmp.path().join("test_hist");
    // AddressSanitizer where the compiler has it; plain otherwise.
    let mut sanitized = true;
    let built = compile(&exe, true);
    if !built.status.success() {
        sanitized = false;
        let plain = compile(&exe, false);
        assert!(
            plain.status.success(),
            "cc failed:\n{}",
            String::from_utf8_lossy(&plain.stderr)
        );
    }
    let repo = tmp.path().join("repo");
    let run = Command::new(&exe)
        .arg(&repo)
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .expect("run the C test program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the C test program failed (AddressSanitizer: {sanitized}):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    eprintln!("C ABI: {} (AddressSanitizer: {sanitized})", stdout.trim());
}
