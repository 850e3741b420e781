//! The `hist` command line: git-style porcelain over the library.
//!
//! Each command lives in its own file with its `XArgs` (whose doc comment is its help) and
//! `cmd_x`; the logic lives in the library. This module holds the command enum, the shared
//! options and the dispatch.

mod error;
mod ui;

mod canon;
mod diff;
mod fsck;
mod history;
mod import;
mod ingest;
mod init;
mod log;
mod restore;
mod rules;
mod show;
mod sql;
mod status;
mod track;
mod write;

pub use error::CliError;
pub use ui::Ui;

use crate::model::Actor;
use crate::time::{Timestamp, When};
use crate::{Repo, TxOptions};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// hist: a history-first document store.
///
/// Every write names who made it; every change is kept with its old value, so any document
/// can be read as of any past moment, any field's history listed, and anything else asked
/// in SQL.
#[derive(Debug, Parser)]
#[command(name = "hist", version, propagate_version = true, max_term_width = 100)]
#[command(
    after_long_help = "Example:\n  hist init && hist set customer/4411 /plan '\"pro\"' --actor user:sam"
)]
pub struct Cli {
    /// Run as if hist was started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create an empty repository (`.hist/`).
    Init(init::InitArgs),
    /// Write a JSON value at a path of a document.
    Set(write::SetArgs),
    /// Remove a path of a document, or the whole document.
    Rm(write::RmArgs),
    /// Apply an RFC 6902 JSON Patch to a document, as one transaction.
    Apply(write::ApplyArgs),
    /// Record a whole JSON snapshot of a document; only the difference is stored.
    Ingest(ingest::IngestArgs),
    /// Record many snapshots from NDJSON records {key, at, actor, reason, doc}.
    Import(import::ImportArgs),
    /// Print a document, now or as of a past moment.
    Show(show::ShowArgs),
    /// List every change that altered one path of a document.
    History(history::HistoryArgs),
    /// List transactions, newest first.
    Log(log::LogArgs),
    /// Show the changes to a document between two moments.
    Diff(diff::DiffArgs),
    /// Run a read-only SQL query over the change log.
    Sql(sql::SqlArgs),
    /// List or declare rules: array keys, sets.
    Rules(rules::RulesArgs),
    /// Verify the log, current state, checkpoints and objects.
    Fsck(fsck::FsckArgs),
    /// Print a JSON document's canonical form, or its hash.
    Canon(canon::CanonArgs),
    /// Track files and directories: record them now and version them from then on.
    Track(track::TrackArgs),
    /// List tracked files that are modified, new or deleted.
    Status(status::StatusArgs),
    /// Record every changed tracked file as one transaction.
    Commit(track::CommitArgs),
    /// Stop tracking files or directories (their history stays).
    Untrack(status::UntrackArgs),
    /// Write a tracked file back, byte for byte, now or as of a past moment.
    Restore(restore::RestoreArgs),
}

/// Options every write takes.
#[derive(Debug, Args, Clone)]
pub struct WriteOpts {
    /// Who makes the write, as kind:name (user:maria, job:nightly).
    #[arg(long, env = "HIST_ACTOR", value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Why the write is made.
    #[arg(short = 'm', long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Record the write at this time (importing recorded history); refused if it precedes
    /// the newest transaction.
    #[arg(long, value_name = "WHEN")]
    pub at: Option<String>,
}

/// Options of commands that print lists.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct OutputOpts {
    /// Print NDJSON, one object per line, with stable field names.
    #[arg(long)]
    pub json: bool,
}

/// What commands need from the outside world.
pub struct Env {
    /// The clock (HIST_NOW pins it for tests and reproducible imports).
    pub now: Timestamp,
    /// Where the command runs.
    pub cwd: PathBuf,
}

impl Env {
    fn from_process(dir: Option<PathBuf>) -> Result<Self, CliError> {
        let now = match std::env::var("HIST_NOW") {
            Ok(text) => Timestamp::parse_rfc3339(&text).ok_or_else(|| {
                CliError::usage(format!("HIST_NOW={text:?} is not an RFC 3339 time"))
            })?,
            Err(_) => Timestamp::from_datetime(chrono::Utc::now()),
        };
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::user(format!("cannot read the current directory: {e}")))?;
        let cwd = match dir {
            Some(d) if d.is_absolute() => d,
            Some(d) => cwd.join(d),
            None => cwd,
        };
        if !cwd.is_dir() {
            return Err(CliError::user(format!(
                "{} is not a directory",
                cwd.display()
            )));
        }
        Ok(Self { now, cwd })
    }

    /// Opens the repository that contains the working directory.
    pub fn repo(&self) -> Result<Repo, CliError> {
        Repo::discover(&self.cwd).map_err(Into::into)
    }

    /// Validates the write options into transaction options.
    pub fn tx_options(&self, opts: &WriteOpts, kind: &str) -> Result<TxOptions, CliError> {
        let actor = Actor::parse(opts.actor.as_deref().unwrap_or_default()).map_err(|e| {
            CliError::usage(e.to_string()).hint(
                "name the actor with --actor kind:name or the HIST_ACTOR environment variable",
            )
        })?;
        let at = opts.at.as_deref().map(parse_write_time).transpose()?;
        Ok(TxOptions::new(actor, kind, self.now)
            .reason(opts.reason.clone())
            .at(at))
    }
}

/// Parses `--at` for a write: a time, not a transaction.
fn parse_write_time(text: &str) -> Result<Timestamp, CliError> {
    match When::parse(text)? {
        When::At(ts) => Ok(ts),
        When::Tx(_) => Err(CliError::usage("--at takes a time for a write, not @tx:N")),
    }
}

/// Parses a `@WHEN` argument.
pub fn parse_when(text: &str) -> Result<When, CliError> {
    Ok(When::parse(text)?)
}

/// Runs the command line and returns the exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
    };
    let mut ui = Ui::new();
    let result = Env::from_process(cli.chdir).and_then(|env| dispatch(&mut ui, &env, cli.command));
    let result = result.and_then(|()| ui.finish());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

fn dispatch(ui: &mut Ui, env: &Env, command: Command) -> Result<(), CliError> {
    match command {
        Command::Init(args) => init::cmd_init(ui, env, &args),
        Command::Set(args) => write::cmd_set(ui, env, &args),
        Command::Rm(args) => write::cmd_rm(ui, env, &args),
        Command::Apply(args) => write::cmd_apply(ui, env, &args),
        Command::Ingest(args) => ingest::cmd_ingest(ui, env, &args),
        Command::Import(args) => import::cmd_import(ui, env, &args),
        Command::Show(args) => show::cmd_show(ui, env, &args),
        Command::History(args) => history::cmd_history(ui, env, &args),
        Command::Log(args) => log::cmd_log(ui, env, &args),
        Command::Diff(args) => diff::cmd_diff(ui, env, &args),
        Command::Sql(args) => sql::cmd_sql(ui, env, &args),
        Command::Rules(args) => rules::cmd_rules(ui, env, &args),
        Command::Fsck(args) => fsck::cmd_fsck(ui, env, &args),
        Command::Canon(args) => canon::cmd_canon(ui, env, &args),
        Command::Track(args) => track::cmd_track(ui, env, &args),
        Command::Status(args) => status::cmd_status(ui, env, &args),
        Command::Commit(args) => track::cmd_commit(ui, env, &args),
        Command::Untrack(args) => status::cmd_untrack(ui, env, &args),
        Command::Restore(args) => restore::cmd_restore(ui, env, &args),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_app() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
