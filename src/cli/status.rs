//! `status` and `untrack`: what changed in the tracked files, and leaving some out.

use super::track::{paths, track_error};
use super::{CliError, Env, ExitCodeOpts, OutputOpts, Ui};
use clap::Args;
use hist::canon::Value;
use std::path::PathBuf;
use std::time::SystemTime;

/// List tracked files that are modified, new or deleted
///
/// List tracked files that differ from their last recorded version: modified, new (inside a
/// tracked directory), deleted, and unparsable (changed, and not valid in its format: a
/// commit leaves it out until it is fixed). Only files whose size, mtime or inode changed
/// are read.
/// With --exit-code (or --quiet, which prints nothing), exits 1 when a file differs, 0 when
/// none does and 2 on an error.
///
/// Examples:
///   hist status --json
///   hist status --quiet || hist commit -m "nightly" --actor job:nightly
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct StatusArgs {
    #[command(flatten)]
    pub output: OutputOpts,
    #[command(flatten)]
    pub exit: ExitCodeOpts,
}

/// Stop tracking files or directories (their history stays)
///
/// Stop tracking files or directories. Their history and documents stay, and the files on
/// disk are not touched; `hist track` takes them up again.
///
/// Example:
///   hist untrack config/local.json
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct UntrackArgs {
    /// Files and directories to stop tracking.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_status(ui: &mut Ui, env: &Env, args: &StatusArgs) -> Result<(), CliError> {
    args.exit.finish(status(ui, env, args))
}

/// Prints the status; true when a file differs.
fn status(ui: &mut Ui, env: &Env, args: &StatusArgs) -> Result<bool, CliError> {
    let repo = env.repo()?;
    let status = repo.status(SystemTime::now()).map_err(track_error)?;
    let changed = !status.files.is_empty();
    if args.exit.quiet {
        return Ok(changed);
    }
    for f in &status.files {
        if args.output.json {
            let mut record = Value::from_iter([
                ("key", Value::from(&f.key)),
                ("status", Value::from(f.state.as_str())),
            ]);
            if let Some(e) = &f.error {
                record["error"] = Value::from(e.to_string());
            }
            ui.json(&record)?;
        } else {
            let why = f
                .error
                .as_ref()
                .map(|e| {
                    format!(
                        "  ({}, line {} column {}: {})",
                        e.format, e.line, e.column, e.message
                    )
                })
                .unwrap_or_default();
            ui.line(format!("{:<9} {}{why}", f.state.as_str(), f.key))?;
        }
    }
    if status.files.is_empty() && !args.output.json {
        ui.line(format!(
            "nothing to commit ({} tracked files unchanged)",
            status.tracked
        ))?;
    }
    Ok(changed)
}

pub fn cmd_untrack(ui: &mut Ui, env: &Env, args: &UntrackArgs) -> Result<(), CliError> {
    let mut repo = env.repo()?;
    let done = repo
        .untrack(&paths(&args.paths), &env.cwd)
        .map_err(track_error)?;
    for key in &done.keys {
        if args.output.json {
            ui.json(&Value::from_iter([
                ("key", Value::from(key)),
                ("status", Value::from("untracked")),
            ]))?;
        } else {
            ui.line(format!("untracked {key}"))?;
        }
    }
    Ok(())
}
