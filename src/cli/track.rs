//! `track` and `commit`: recording a directory of files.

use super::{CliError, Env, OutputOpts, Ui, WriteOpts};
use clap::Args;
use hist::canon::Value;
use hist::track::{FileState, Phase, Progress, Recorded};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Track files and directories: record them now and version them from then on
///
/// Track files and directories: record the content of every file under them now, and
/// version them from then on (`hist status`, `hist commit`).
///
/// Each file's key is its path relative to the repository root (`config/app.toml`), whatever
/// directory the command runs in. JSON, TOML and YAML files are parsed, so history and diffs
/// are per field; other files are one text value (or a hash, for binary files). The raw bytes
/// are kept too, so `hist restore` writes a file back exactly. JSON with comments (`.jsonc`,
/// `.json5`, `tsconfig.json`, `.vscode/settings.json`) is diffed per field too.
///
/// `.hist/`, `.git/` and symbolic links are skipped, and so is what ignore files list, as
/// git does: `.gitignore` in every directory, `.git/info/exclude`, and `.histignore` in every
/// directory (gitignore syntax; it wins over `.gitignore`). A path named on the command line
/// is tracked even if ignored. A file that does not parse is not recorded, with a warning
/// naming it; the others are, and it keeps its last version (`hist status` shows it as
/// unparsable until it is fixed).
///
/// Example:
///   hist track config/ k8s/deploy.yaml --actor user:maria -m "start versioning config"
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct TrackArgs {
    /// Files and directories to track.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

/// Record every changed tracked file as one transaction
///
/// Record every tracked file that changed, appeared in a tracked directory or was deleted,
/// as one transaction. A deleted file removes its document (its history stays). A file that
/// does not parse is left out with a warning and keeps its last version.
///
/// Example:
///   hist commit -m "raise the port" --actor user:maria
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CommitArgs {
    /// Only files under these paths (default: everything tracked).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

/// A progress bar on stderr for large trees, drawn only on a terminal.
#[derive(Default)]
struct Bar {
    bar: Option<(Phase, indicatif::ProgressBar)>,
}

impl Bar {
    const MIN_FILES: usize = 2000;

    fn update(&mut self, p: Progress) {
        if p.total < Self::MIN_FILES || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            return;
        }
        if self.bar.as_ref().is_none_or(|(phase, _)| *phase != p.phase) {
            self.finish();
            let style = indicatif::ProgressStyle::with_template("{msg:>9} {bar:40} {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            let bar = indicatif::ProgressBar::new(p.total as u64).with_style(style);
            bar.set_message(match p.phase {
                Phase::Scanning => "scanning",
                Phase::Recording => "recording",
            });
            self.bar = Some((p.phase, bar));
        }
        if let Some((_, bar)) = &self.bar {
            bar.set_position(p.done as u64);
        }
    }

    fn finish(&mut self) {
        if let Some((_, bar)) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

pub(super) fn paths(list: &[PathBuf]) -> Vec<&Path> {
    list.iter().map(PathBuf::as_path).collect()
}

pub fn cmd_track(ui: &mut Ui, env: &Env, args: &TrackArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "track")?;
    let mut repo = env.repo()?;
    let mut bar = Bar::default();
    let result = repo.track(
        &paths(&args.paths),
        &env.cwd,
        opts,
        SystemTime::now(),
        &mut |p| bar.update(p),
    );
    bar.finish();
    report(
        ui,
        result.map_err(track_error)?,
        args.output,
        "nothing new to record",
    )
}

pub fn cmd_commit(ui: &mut Ui, env: &Env, args: &CommitArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "track")?;
    let mut repo = env.repo()?;
    let mut bar = Bar::default();
    let result = repo.commit_files(
        &paths(&args.paths),
        &env.cwd,
        opts,
        SystemTime::now(),
        &mut |p| bar.update(p),
    );
    bar.finish();
    report(
        ui,
        result.map_err(track_error)?,
        args.output,
        "nothing to commit",
    )
}

/// Prints what was recorded: one line per file (at most 50 unless `--json`), then a summary.
fn report(ui: &mut Ui, rec: Recorded, output: OutputOpts, nothing: &str) -> Result<(), CliError> {
    for w in &rec.warnings {
        ui.warn(w);
    }
    for e in &rec.unparsable {
        ui.warn(format!(
            "{e}; not recorded: it keeps its last version until it is fixed"
        ));
    }
    if !rec.skipped.is_empty() {
        ui.warn(format!(
            "skipped {} symbolic links, special files or unusable names: {}",
            rec.skipped.len(),
            rec.skipped.join(", ")
        ));
    }
    let Some(tx) = rec.tx else {
        if !output.json {
            ui.line(format!(
                "{nothing} ({} tracked files unchanged)",
                rec.tracked
            ))?;
        }
        return Ok(());
    };
    for (i, f) in rec.files.iter().enumerate() {
        if output.json {
            ui.json(&Value::from_iter([
                ("at", Value::from(tx.at.to_string())),
                ("actor", Value::from(&tx.actor)),
                ("tx", Value::from(tx.id)),
                ("reason", Value::from(tx.reason.clone())),
                ("key", Value::from(&f.key)),
                ("status", Value::from(f.state.as_str())),
                ("changes", Value::from(f.changes)),
            ]))?;
        } else if i < 50 {
            let note = match (f.state, f.changes) {
                (FileState::Modified, 0) => "  (bytes only)".to_owned(),
                (FileState::Modified, 1) => "  (1 change)".to_owned(),
                (FileState::Modified, n) => format!("  ({n} changes)"),
                _ => String::new(),
            };
            ui.line(format!("{:<9} {}{note}", f.state.as_str(), f.key))?;
        } else if i == 50 {
            ui.line(format!("… and {} more files", rec.files.len() - 50))?;
        }
    }
    if !output.json {
        let count = |s| rec.files.iter().filter(|f| f.state == s).count();
        ui.line(format!(
            "recorded tx {}: {} new, {} modified, {} deleted",
            tx.id,
            count(FileState::New),
            count(FileState::Modified),
            count(FileState::Deleted)
        ))?;
    }
    Ok(())
}

/// A library error with the hint that helps for tracked files.
pub(super) fn track_error(e: hist::Error) -> CliError {
    use hist::track::TrackError as T;
    let hint = match &e {
        hist::Error::Track(T::Parse(_)) => Some("fix the file and run the command again"),
        hist::Error::Track(T::Ignore(_)) => {
            Some("fix the pattern in that file (gitignore syntax); nothing was recorded")
        }
        hist::Error::Track(T::NotTracked(_)) => {
            Some("`hist status` lists tracked files; `hist track PATH` adds one")
        }
        hist::Error::Track(T::OutsideRoot { .. } | T::UnsafeKey(_)) => {
            Some("keys of tracked files are paths relative to the repository root")
        }
        hist::Error::Track(T::Uncommitted(_)) => {
            Some("`hist commit` them first, or pass --force to overwrite them")
        }
        hist::Error::Track(T::Exists(_)) => Some("pass --force to overwrite it"),
        _ => None,
    };
    let err = CliError::from(e);
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}
