//! The `hist` command: a thin adapter over the library (`src/cli/`), which it reaches
//! through `hist::`'s public API only.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod cli;

fn main() -> std::process::ExitCode {
    tune_malloc();
    cli::run()
}

/// glibc's malloc gives every block above 128 KiB a mapping of its own and unmaps it when
/// freed, so each large buffer of a snapshot (the input, its canonical text, the stored
/// version, their indexes) is faulted in and zeroed by the kernel page by page, over and
/// over: 7% of a changed 8 MB ingest. Blocks up to 32 MiB come from the heap instead, and
/// freed memory stays there for the next one. Peak memory is unchanged (measured). Only the
/// binary does this: a program that links the library keeps its own malloc settings.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_malloc() {
    // SAFETY: mallopt takes two integers and only sets malloc parameters; it runs first
    // thing in main, before any thread exists. A refused value leaves the default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}
