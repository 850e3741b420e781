use super::ui::open_input;
use super::{CliError, Env, Ui, import_from};
use clap::Args;
use hist::canon::Value;
use hist::import::{ImportError, ImportEvent, ImportOptions, ImportSummary};
use std::io::{BufReader, IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Record many snapshots: NDJSON records, a git repository's versions of files, SQL rows
///
/// NDJSON: one record per line, {"key": K, "at": TIME, "actor": A, "reason": R, "doc": {...}}
/// (reason optional; at optional, default now). Records are ingested in order with the same
/// rules as `ingest`. A bad record stops the import with its line number; everything before
/// it stays recorded. The input is read as it is imported, one line at a time, so an input
/// of any size is imported in little memory; on a terminal, a progress bar shows how far it
/// got.
///
/// --git REPO --file PATH [--key KEY]…: every version of each file along the first-parent
/// history of --branch (default HEAD), oldest first, each a snapshot at its commit's
/// committer time (UTC), by `git:` and the author's name (or --actor), with the commit's
/// subject and short id as reason. Several files are imported together, in commit order; a
/// committer time earlier than the one before it is raised to it. A version that is not
/// JSON, or a deleted file, is skipped with a warning; commits that do not touch a file
/// record nothing. The repository remembers where each import got to: running it again
/// records only the commits that came since. Declare rules first, dated no later than the
/// first version (`hist rules … --at`). Git is read with the `git` program.
///
/// --sqlite DB --query SQL: the query's rows, with columns key, at (ISO-8601 with an offset
/// or Z, or Unix seconds), doc (JSON text) and optionally actor and reason, in time order
/// across all keys; the database is opened read-only. A row whose doc is not JSON is skipped
/// with a warning.
///
/// Examples:
///   hist import snapshots.ndjson
///   hist import --git ../scraper --file states.json --key cdc/states
///   hist import --git ../scraper --file a.json --key feed/a --file b.json --key feed/b
///   hist import --sqlite api.db --query 'SELECT url AS key, fetched_at AS at, body AS doc
///     FROM responses' --actor poller:api
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ImportArgs {
    /// The NDJSON file (`-` or nothing: standard input).
    #[arg(conflicts_with_all = ["git", "sqlite"])]
    pub file: Option<PathBuf>,
    /// Import the versions of files of this git repository (with --file).
    #[arg(
        long,
        value_name = "REPO",
        conflicts_with = "sqlite",
        requires = "git_file"
    )]
    pub git: Option<PathBuf>,
    #[command(flatten)]
    pub files: import_from::GitFiles,
    /// With --git: the branch, tag or commit whose first-parent history is imported
    /// (default: HEAD).
    #[arg(long, value_name = "BRANCH", requires = "git")]
    pub branch: Option<String>,
    /// Import the rows of a query on this SQLite database (with --query).
    #[arg(long, value_name = "DB", requires = "query")]
    pub sqlite: Option<PathBuf>,
    /// With --sqlite: the query, giving columns key, at, doc and optionally actor, reason.
    #[arg(long, value_name = "SQL", requires = "sqlite")]
    pub query: Option<String>,
    /// With --git: the actor of every version (default: git: and the author's name). With
    /// --sqlite: the actor of rows without one (default: $HIST_ACTOR).
    #[arg(long, value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_import(ui: &mut Ui, env: &Env, args: &ImportArgs) -> Result<(), CliError> {
    if let Some(repo) = &args.git {
        return import_from::cmd_git(ui, env, args, repo);
    }
    if let (Some(db), Some(query)) = (&args.sqlite, &args.query) {
        return import_from::cmd_sqlite(ui, env, args, db, query);
    }
    if args.actor.is_some() {
        return Err(CliError::usage(
            "--actor is for --git and --sqlite; NDJSON records name their own actor",
        ));
    }
    let (name, reader, size) = open_input(args.file.as_deref(), env)?;
    let size = (size > 0).then_some(size);
    let read = Arc::new(AtomicU64::new(0));
    let input = BufReader::with_capacity(
        1 << 16,
        Counted {
            inner: reader,
            read: Arc::clone(&read),
        },
    );
    let bar = progress_bar(size);
    let mut repo = env.repo()?;
    let imported = repo.import_ndjson(
        input,
        env.now,
        &ImportOptions::default(),
        |event| match event {
            ImportEvent::Warning { line, message } => {
                bar.suspend(|| ui.warn(format!("line {line}: {message}")));
            }
            ImportEvent::Recorded { .. } => bar.set_position(read.load(Ordering::Relaxed)),
            _ => {}
        },
    );
    bar.finish_and_clear();
    match imported {
        Ok(summary) if args.json => ui.json(&Value::from_iter(tally_fields(&summary))),
        Ok(summary) => ui.line(format!("imported {}", tally(&summary))),
        Err(e) => {
            let hint = format!("recorded before it: {}", tally(&e.recorded()));
            let e = match e {
                ImportError::Record { line, problem, .. } => {
                    CliError::user(format!("{name} line {line}: {problem}"))
                }
                ImportError::Read { line, error, .. } => {
                    CliError::user(format!("cannot read {name} at line {line}: {error}"))
                }
                ImportError::Store { error, .. } => error.into(),
                e => CliError::user(e.to_string()),
            };
            Err(e.hint(hint))
        }
    }
}

/// A reader that counts the bytes read through it (for the progress bar).
struct Counted {
    inner: Box<dyn Read>,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A progress bar on stderr when it is a terminal (hidden otherwise): bytes of a file of
/// known size, or a count of bytes read from a pipe.
fn progress_bar(size: Option<u64>) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let (bar, template) = match size {
        Some(n) => (
            indicatif::ProgressBar::new(n),
            "importing {bar:40} {bytes}/{total_bytes} ({eta})",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "importing {spinner} {bytes}",
        ),
    };
    let style = indicatif::ProgressStyle::with_template(template)
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.with_style(style)
}

/// `N snapshots: C changed (X changes), U unchanged`.
pub(super) fn tally(s: &ImportSummary) -> String {
    format!(
        "{} snapshots: {} changed ({} changes), {} unchanged",
        s.snapshots(),
        s.changed,
        s.changes,
        s.unchanged
    )
}

/// The tally's fields for `--json`.
pub(super) fn tally_fields(s: &ImportSummary) -> Vec<(&'static str, Value)> {
    vec![
        ("snapshots", Value::from(s.snapshots())),
        ("changed", Value::from(s.changed)),
        ("unchanged", Value::from(s.unchanged)),
        ("changes", Value::from(s.changes)),
    ]
}
