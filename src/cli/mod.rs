//! The `hist` command line: git-style porcelain over the library.
//!
//! Each command lives in its own file with its `XArgs` (whose doc comment is its help) and
//! `cmd_x`; the logic lives in the library. This module holds the command enum, the shared
//! options and the dispatch.

mod error;
mod ui;

mod backup;
mod blame;
mod canon;
mod completions;
mod diff;
mod export;
mod forget;
mod fsck;
mod gc;
mod history;
mod import;
mod import_from;
mod ingest;
mod init;
mod keys;
mod log;
mod ls;
#[cfg(test)]
mod man;
mod mv;
mod restore;
mod rules;
mod rules_personal;
mod show;
mod sql;
mod status;
mod timeline;
mod track;
mod write;

pub use error::CliError;
pub use ui::{ColorChoice, Ui};

use clap::{Args, Parser, Subcommand};
use hist::model::Actor;
use hist::time::{Timestamp, When};
use hist::{Repo, TxOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// A history-first document store: who changed what, when, and why
///
/// Every write names who made it; every change is kept with its old value, so any document
/// can be read as of any past moment, any field's history listed, any field blamed, and
/// anything else asked in SQL over the change log.
///
/// Each command has its own page: `hist help COMMAND` or `man hist-COMMAND`.
///
/// Examples:
///   hist init
///   hist set customer/4411 /plan '"pro"' --actor user:sam -m "upgrade"
///   hist history customer/4411 /plan
///   hist blame customer/4411
#[derive(Debug, Parser)]
#[command(name = "hist", version, propagate_version = true, max_term_width = 100)]
#[command(verbatim_doc_comment)]
pub struct Cli {
    /// Run as if hist was started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
    /// When to color the output: auto (on a terminal, unless NO_COLOR is set), always or
    /// never.
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t)]
    pub color: ColorChoice,
    /// Never send the output through a pager (by default long output on a terminal goes
    /// through $HIST_PAGER, $PAGER or `less -FRX`).
    #[arg(long, global = true)]
    pub no_pager: bool,
    /// The age identity file that unlocks keys.db when it is kept outside the repository
    /// (needed only to read or write personal values).
    #[arg(long, global = true, env = "HIST_IDENTITY", value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// A file whose first line is the passphrase that unlocks keys.db (or set
    /// HIST_PASSPHRASE).
    #[arg(long, global = true, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
///
/// The help of each command (`hist COMMAND --help`, its man page) is the doc comment of its
/// `…Args` struct, with an example: do not put doc comments on these variants, clap would
/// use them instead and drop the struct's.
///
/// Each command's arguments are defined only when that command runs (`defer`): building all
/// 29 of them took a fifth of a `hist --version`. Help that lists the commands builds them
/// all first ([`run`]).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
#[allow(missing_docs)]
pub enum Command {
    Init(init::InitArgs),
    Keys(keys::KeysArgs),
    Set(write::SetArgs),
    Rm(write::RmArgs),
    Apply(write::ApplyArgs),
    Ingest(ingest::IngestArgs),
    Import(import::ImportArgs),
    Show(show::ShowArgs),
    History(history::HistoryArgs),
    Log(log::LogArgs),
    Ls(ls::LsArgs),
    Blame(blame::BlameArgs),
    Diff(diff::DiffArgs),
    Sql(sql::SqlArgs),
    Rules(rules::RulesArgs),
    Mv(mv::MvArgs),
    Gc(gc::GcArgs),
    Fsck(fsck::FsckArgs),
    Canon(canon::CanonArgs),
    Forget(forget::ForgetArgs),
    Backup(backup::BackupArgs),
    Export(export::ExportArgs),
    Timeline(timeline::TimelineArgs),
    Completions(completions::CompletionsArgs),
    Track(track::TrackArgs),
    Status(status::StatusArgs),
    Commit(track::CommitArgs),
    Untrack(status::UntrackArgs),
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

/// `--exit-code` and `--quiet`, for commands that tell whether something changed (`diff`,
/// `status`, `ingest`), as diff(1) and `git diff --exit-code` do.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct ExitCodeOpts {
    /// Exit 0 when nothing changed, 1 when something did, 2 on an error (255: a bug in
    /// hist).
    #[arg(long)]
    pub exit_code: bool,
    /// Print nothing on stdout; implies --exit-code.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl ExitCodeOpts {
    /// True when the exit code tells whether something changed.
    pub fn wanted(self) -> bool {
        self.exit_code || self.quiet
    }

    /// The end of a command that found `changed`: exit 1 when it did and the code is
    /// wanted; a failure exits 2 then.
    pub fn finish(self, result: Result<bool, CliError>) -> Result<(), CliError> {
        match result {
            Ok(true) if self.wanted() => Err(CliError::changed()),
            Ok(_) => Ok(()),
            Err(e) if self.wanted() => Err(e.under_exit_code()),
            Err(e) => Err(e),
        }
    }
}

/// What commands need from the outside world.
pub struct Env {
    /// The clock (HIST_NOW pins it for tests and reproducible imports).
    pub now: Timestamp,
    /// Where the command runs.
    pub cwd: PathBuf,
    /// What unlocks keys.db (--identity, HIST_IDENTITY, --passphrase-file, HIST_PASSPHRASE).
    pub keys: hist::shred::KeyAccess,
}

impl Env {
    fn from_process(cli: &Cli) -> Result<Self, CliError> {
        let dir = cli.chdir.clone();
        let now = match std::env::var("HIST_NOW") {
            Ok(text) => Timestamp::parse_rfc3339(&text).ok_or_else(|| {
                CliError::usage(format!("HIST_NOW={text:?} is not an RFC 3339 time"))
            })?,
            Err(_) => Timestamp::from_datetime(std::time::SystemTime::now().into()),
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
        let keys = hist::shred::KeyAccess {
            identity: cli.identity.as_ref().map(|p| cwd.join(p)),
            passphrase: passphrase(cli.passphrase_file.as_deref(), "HIST_PASSPHRASE", &cwd)?,
        };
        Ok(Self { now, cwd, keys })
    }

    /// Opens the repository that contains the working directory.
    pub fn repo(&self) -> Result<Repo, CliError> {
        let mut repo = Repo::discover(&self.cwd)?;
        repo.set_key_access(self.keys.clone());
        Ok(repo)
    }

    /// Validates the write options into transaction options.
    pub fn tx_options(&self, opts: &WriteOpts, kind: &str) -> Result<TxOptions, CliError> {
        let actor = Actor::parse(opts.actor.as_deref().unwrap_or_default()).map_err(|e| {
            CliError::usage(e.to_string()).hint(
                "name the actor with --actor kind:name or the HIST_ACTOR environment variable",
            )
        })?;
        let at = opts.at.as_deref().map(|t| self.write_time(t)).transpose()?;
        Ok(TxOptions::new(actor, kind, self.now)
            .reason(opts.reason.clone())
            .at(at))
    }
}

impl Env {
    /// Parses a `WHEN` (an argument or the value of `--since`, `--until`, …): every command
    /// reads times through this one parser, relative forms against the command's clock.
    pub fn when(&self, text: &str) -> Result<When, CliError> {
        Ok(When::parse_at(text, self.now)?)
    }

    /// Parses `--at` for a write: a time, not a transaction.
    pub fn write_time(&self, text: &str) -> Result<Timestamp, CliError> {
        match self.when(text)? {
            When::At(ts) => Ok(ts),
            When::Tx(_) => Err(CliError::usage("--at takes a time for a write, not @tx:N")),
        }
    }
}

/// A passphrase: the first line of `file`, or the environment variable `var`.
pub fn passphrase(
    file: Option<&std::path::Path>,
    var: &str,
    cwd: &std::path::Path,
) -> Result<Option<hist::shred::SecretString>, CliError> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(cwd.join(file)).map_err(|e| {
            CliError::user(format!(
                "cannot read the passphrase from {}: {e}",
                file.display()
            ))
        })?;
        let line = text.lines().next().unwrap_or_default().to_owned();
        return Ok(Some(line.into()));
    }
    Ok(std::env::var(var).ok().map(Into::into))
}

/// Runs the command line and returns the exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(&help_with_every_command(e)),
    };
    let mut ui = Ui::for_terminal(cli.color, !cli.no_pager);
    let result = Env::from_process(&cli).and_then(|env| dispatch(&mut ui, &env, cli.command));
    // Close the pager (if any) before an error is printed, so the error stays on screen.
    let finished = ui.finish();
    match result.and(finished) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report_styled(stderr_colors(cli.color)),
    }
}

/// The commands are defined when they run (`defer`): help that lists them (`hist -h`,
/// `hist help`, `hist` alone) is rendered again from a command tree built whole, so that
/// each shows its summary.
fn help_with_every_command(e: clap::Error) -> clap::Error {
    use clap::CommandFactory;
    use clap::error::ErrorKind;
    if !matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return e;
    }
    let mut cmd = Cli::command();
    cmd.build();
    cmd.try_get_matches_from_mut(std::env::args_os())
        .err()
        .unwrap_or(e)
}

/// True when messages on stderr may be painted.
fn stderr_colors(choice: ColorChoice) -> bool {
    use std::io::IsTerminal;
    ui::colors_wanted(choice, std::io::stderr().is_terminal())
}

/// Prints a parse error of clap as hist prints errors (`hist: error: …`), or the help and
/// version it was asked for; returns clap's exit code (2 for usage errors).
fn report_clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
        }
        _ => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("{}{text}", error::prefix(stderr_colors(ColorChoice::Auto)));
        }
    }
    ExitCode::from(code)
}

fn dispatch(ui: &mut Ui, env: &Env, command: Command) -> Result<(), CliError> {
    match command {
        Command::Init(args) => init::cmd_init(ui, env, &args),
        Command::Keys(args) => keys::cmd_keys(ui, env, &args),
        Command::Set(args) => write::cmd_set(ui, env, &args),
        Command::Rm(args) => write::cmd_rm(ui, env, &args),
        Command::Apply(args) => write::cmd_apply(ui, env, &args),
        Command::Ingest(args) => ingest::cmd_ingest(ui, env, &args),
        Command::Import(args) => import::cmd_import(ui, env, &args),
        Command::Show(args) => show::cmd_show(ui, env, &args),
        Command::History(args) => history::cmd_history(ui, env, &args),
        Command::Log(args) => log::cmd_log(ui, env, &args),
        Command::Ls(args) => ls::cmd_ls(ui, env, &args),
        Command::Diff(args) => diff::cmd_diff(ui, env, &args),
        Command::Sql(args) => sql::cmd_sql(ui, env, &args),
        Command::Rules(args) => rules::cmd_rules(ui, env, &args),
        Command::Mv(args) => mv::cmd_mv(ui, env, &args),
        Command::Gc(args) => gc::cmd_gc(ui, env, &args),
        Command::Fsck(args) => fsck::cmd_fsck(ui, env, &args),
        Command::Canon(args) => canon::cmd_canon(ui, env, &args),
        Command::Forget(args) => forget::cmd_forget(ui, env, &args),
        Command::Backup(args) => backup::cmd_backup(ui, env, &args),
        Command::Blame(args) => blame::cmd_blame(ui, env, &args),
        Command::Export(args) => export::cmd_export(ui, env, &args),
        Command::Timeline(args) => timeline::cmd_timeline(ui, env, &args),
        Command::Completions(args) => completions::cmd_completions(ui, env, &args),
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
