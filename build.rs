//! Links the `hist` binary (only it: not the library, not a program that embeds it) as a
//! position-dependent executable on Linux. A position-independent one has its ~10,000
//! relative relocations applied by the dynamic loader at every start, each write making a
//! private copy of a page of `.data.rel.ro`: 37 page faults of the 195 a `hist --version`
//! takes. Linked at a fixed address, the linker resolves them once. Measured by
//! `benches/startup.sh` (issue 24): `hist --version` 1.09x and `hist show` 1.06x faster.
//! The price: the binary's own code is not at a random address (ASLR still places the
//! libraries, the stack and the heap).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bin=hist=-no-pie");
    }
}
