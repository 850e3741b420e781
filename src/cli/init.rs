use super::{CliError, Env, Ui};
use clap::Args;
use hist::Repo;
use std::path::PathBuf;

/// Create an empty repository
///
/// Creates a `.hist/` directory holding the log (SQLite, WAL) and the object store, in DIR or
/// in the current directory. Commands run in it or below it find it, as git does.
///
/// Examples:
///   hist init
///   hist init config-repo
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct InitArgs {
    /// Where to create it (default: the current directory).
    pub dir: Option<PathBuf>,
}

pub fn cmd_init(ui: &mut Ui, env: &Env, args: &InitArgs) -> Result<(), CliError> {
    let dir = match &args.dir {
        Some(d) => env.cwd.join(d),
        None => env.cwd.clone(),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::user(format!("cannot create {}: {e}", dir.display())))?;
    let repo = Repo::init(&dir)?;
    ui.line(format!(
        "Initialized empty hist repository in {}",
        repo.hist_dir().display()
    ))
}
