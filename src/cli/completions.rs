use super::{Cli, CliError, Env, Ui};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Print a shell completion script for hist
///
/// Completes commands, options and option values. Load it once in your shell's start-up
/// file, or save it where your shell looks for completions.
///
/// Examples:
///   hist completions bash > ~/.local/share/bash-completion/completions/hist
///   hist completions zsh > ~/.zfunc/_hist      # with fpath+=(~/.zfunc) in ~/.zshrc
///   hist completions fish > ~/.config/fish/completions/hist.fish
///   echo 'eval "$(hist completions bash)"' >> ~/.bashrc
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn cmd_completions(ui: &mut Ui, _env: &Env, args: &CompletionsArgs) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "hist", &mut script);
    ui.raw(&script)
}
