use super::{CliError, Env, Ui};
use clap::Args;
use hist::Repo;
use std::path::PathBuf;

/// Create an empty repository
///
/// Creates a `.hist/` directory holding the log (SQLite, WAL) and the object store, in DIR or
/// in the current directory. Commands run in it or below it find it, as git does.
///
/// The keys of personal values (keys.db) are unlocked by an age identity. By default it is
/// stored in keys.db itself, where file permissions are its only protection. With
/// --identity FILE (or HIST_IDENTITY) it is the identity in FILE, kept outside the
/// repository (FILE is created if missing); with --passphrase, a passphrase (read from
/// HIST_PASSPHRASE or --passphrase-file). Then a copy of .hist/ reveals no personal value.
/// `hist keys` moves it later.
///
/// Examples:
///   hist init
///   hist init config-repo
///   hist init --identity /media/usb/hist-identity.txt
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct InitArgs {
    /// Where to create it (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Protect keys.db with a passphrase (from HIST_PASSPHRASE or --passphrase-file).
    #[arg(long, conflicts_with = "identity")]
    pub passphrase: bool,
}

pub fn cmd_init(ui: &mut Ui, env: &Env, args: &InitArgs) -> Result<(), CliError> {
    let dir = match &args.dir {
        Some(d) => env.cwd.join(d),
        None => env.cwd.clone(),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::user(format!("cannot create {}: {e}", dir.display())))?;
    let protection = super::keys::protection(env, env.keys.identity.clone(), args.passphrase)?;
    let repo = Repo::init_with(&dir, &protection)?;
    ui.line(format!(
        "Initialized empty hist repository in {}",
        repo.hist_dir().display()
    ))
}
