//! `hist backup`: a consistent copy that keeps its keys apart.

use super::{CliError, Env, Ui};
use clap::Args;
use std::path::PathBuf;

/// Write a consistent copy of the repository, with its keys in a separate file
///
/// Write a consistent copy of the repository to DIR/.hist: the log through SQLite's backup
/// API (safe while others write), every object, and the keys in a separate file
/// (DIR/.hist/keys.db, or --keys FILE to keep them elsewhere). Open it with `hist -C DIR`,
/// or copy it back into place.
///
/// A keys.db restored from a backup older than a `hist forget` is shredded again the next
/// time the repository is opened: the log remembers every forget.
///
/// Example:
///   hist backup /mnt/backup/2026-12-01 --keys /mnt/vault/2026-12-01-keys.db
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct BackupArgs {
    /// The directory to write the copy into (it must not hold a .hist yet).
    pub dir: PathBuf,
    /// Write the keys to this file instead of DIR/.hist/keys.db.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
}

pub fn cmd_backup(ui: &mut Ui, env: &Env, args: &BackupArgs) -> Result<(), CliError> {
    let repo = env.repo()?;
    let dir = env.cwd.join(&args.dir);
    let keys = args.keys.as_ref().map(|k| env.cwd.join(k));
    let done = repo.backup(&dir, keys.as_deref())?;
    ui.line(format!(
        "backed up to {} ({} object{})",
        done.dir.display(),
        done.objects,
        if done.objects == 1 { "" } else { "s" }
    ))?;
    match &done.keys {
        Some(k) => ui.line(format!("keys in {}", k.display())),
        None => ui.line("no keys (this repository has no keys.db)"),
    }
}
