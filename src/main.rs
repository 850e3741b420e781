//! The `hist` command.
fn main() -> std::process::ExitCode {
    hist::cli::run()
}
