//! `restore`: write a tracked file back, byte for byte.

use super::track::track_error;
use super::{CliError, Env, Ui};
use clap::Args;
use std::path::PathBuf;

/// Write a tracked file back, byte for byte, now or as of a past moment
///
/// Write a tracked file back exactly as it was recorded (comments and formatting included),
/// now or as of a past moment, to its place in the repository or elsewhere with -o.
///
/// KEY is the file's path relative to the repository root. A key that would land outside the
/// root (`..`, an absolute path) is refused. A file with changes that are not committed is
/// only overwritten with --force. WHEN is @2026-08-01, @2026-08-01T16:40:00Z or @tx:42.
///
/// Example:
///   hist restore config/app.toml @2026-08-01 -o /tmp/app.toml
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RestoreArgs {
    /// The tracked file's key (its path relative to the repository root).
    pub key: String,
    /// The version as of this moment (default: the newest).
    #[arg(value_name = "@WHEN")]
    pub when: Option<String>,
    /// Write to FILE instead (`-` for standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite a file with changes that are not committed (or, with -o, a different file).
    #[arg(long)]
    pub force: bool,
}

pub fn cmd_restore(ui: &mut Ui, env: &Env, args: &RestoreArgs) -> Result<(), CliError> {
    let when = args.when.as_deref().map(|w| env.when(w)).transpose()?;
    hist::track::check_file_key(&args.key).map_err(|e| track_error(e.into()))?;
    let repo = env.repo()?;
    if args.output.as_deref().is_some_and(|o| o.as_os_str() == "-") {
        let (_, bytes) = repo.file_bytes(&args.key, when).map_err(track_error)?;
        return ui.raw(&bytes);
    }
    let out = args.output.as_ref().map(|o| env.cwd.join(o));
    let done = repo
        .restore_file(&args.key, when, out.as_deref(), args.force)
        .map_err(track_error)?;
    let shown = match &args.output {
        Some(o) => o.display().to_string(),
        None => args.key.clone(),
    };
    if done.unchanged {
        ui.note(format!(
            "{shown} already holds the version of tx {}",
            done.tx
        ));
    } else {
        ui.note(format!(
            "restored {shown} from tx {} ({} bytes)",
            done.tx, done.size
        ));
    }
    Ok(())
}
