//! `hist import --git` and `hist import --sqlite`: the files' pairs of `--file`/`--key`,
//! the progress bar, the summary and the errors.

use super::import::{ImportArgs, tally, tally_fields};
use super::{CliError, Env, Ui};
use clap::{Arg, ArgAction, ArgMatches};
use hist::canon::Value;
use hist::import::git::{GitImport, GitSummary, short_id};
use hist::import::sqlite::SqliteImport;
use hist::import::{ImportOptions, RecordError, Refusal, SourceError, SourceEvent, SourceSummary};
use hist::model::Actor;
use std::io::IsTerminal;
use std::path::Path;

/// The files of `--git`, each `--file PATH` with the `--key KEY` that follows it (if any).
#[derive(Debug, Default)]
pub struct GitFiles {
    /// (path, key) in the order given.
    pub pairs: Vec<(String, Option<String>)>,
}

impl clap::FromArgMatches for GitFiles {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let placed = |id: &str| -> Vec<(usize, String)> {
            match (m.indices_of(id), m.get_many::<String>(id)) {
                (Some(at), Some(values)) => at.zip(values.cloned()).collect(),
                _ => Vec::new(),
            }
        };
        let files = placed("git_file");
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for (at, key) in placed("git_key") {
            // The key belongs to the last --file before it, which must have none yet.
            let owner = files.iter().rposition(|(f, _)| *f < at);
            match owner {
                Some(i) if pairs.len() <= i || pairs[i].1.is_none() => {
                    while pairs.len() <= i {
                        pairs.push((files[pairs.len()].1.clone(), None));
                    }
                    pairs[i].1 = Some(key);
                }
                _ => {
                    return Err(clap::Error::raw(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!(
                            "--key {key} follows no --file of its own: give each --key \
                             right after the --file it names\n"
                        ),
                    ));
                }
            }
        }
        while pairs.len() < files.len() {
            pairs.push((files[pairs.len()].1.clone(), None));
        }
        Ok(Self { pairs })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for GitFiles {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("git_file")
                .long("file")
                .value_name("PATH")
                .action(ArgAction::Append)
                .requires("git")
                .help("With --git: a file to import, its path from the repository's top (repeat for several files)."),
        )
        .arg(
            Arg::new("git_key")
                .long("key")
                .value_name("KEY")
                .action(ArgAction::Append)
                .requires("git_file")
                .help("The key of the --file before it (default: its path)."),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// A progress bar on stderr, drawn only on a terminal: items recorded for good.
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    fn new() -> Self {
        Self(None)
    }

    /// True when a bar can be drawn (and the import should count what it will read).
    fn wanted() -> bool {
        std::io::stderr().is_terminal()
    }

    fn event(&mut self, ui: &mut Ui, event: SourceEvent<'_>, unit: &str) {
        match event {
            SourceEvent::Total(total) => {
                let template = format!(
                    "{{bar:30}} {{pos}}/{{len}} {unit} ({{per_sec}}, {{eta}} left) {{msg}}"
                );
                let style = indicatif::ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                self.0 = Some(indicatif::ProgressBar::new(total).with_style(style));
            }
            SourceEvent::Warning { place, message } => {
                let text = format!("{place}: {message}");
                match &self.0 {
                    Some(bar) => bar.suspend(|| ui.warn(&text)),
                    None => ui.warn(&text),
                }
            }
            SourceEvent::Read { done } => {
                if let Some(bar) = &self.0 {
                    bar.set_position(done);
                }
            }
            // What a kill would not lose: the batches committed.
            SourceEvent::Committed { done, .. } => {
                if let Some(bar) = &self.0 {
                    bar.set_position(done);
                    bar.set_message(format!("{done} {unit} committed"));
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// Runs an import with a progress bar of its `unit`s (commits, rows) on a terminal.
fn with_bar<T>(
    ui: &mut Ui,
    unit: &str,
    import: impl FnOnce(&mut dyn FnMut(SourceEvent<'_>)) -> Result<T, SourceError>,
) -> Result<T, CliError> {
    let mut bar = Bar::new();
    let result = import(&mut |e| bar.event(ui, e, unit));
    bar.finish();
    result.map_err(|e| source_error(e, unit))
}

fn actor(text: Option<&str>) -> Result<Option<Actor>, CliError> {
    text.map(|a| Actor::parse(a).map_err(|e| CliError::usage(e.to_string())))
        .transpose()
}

pub fn cmd_git(ui: &mut Ui, env: &Env, args: &ImportArgs, repo: &Path) -> Result<(), CliError> {
    let mut spec = GitImport::new(env.cwd.join(repo))
        .branch(args.branch.clone())
        .actor(actor(args.actor.as_deref())?)
        .count(Bar::wanted());
    for (path, key) in &args.files.pairs {
        spec = spec.file(path, key.as_deref());
    }
    let mut hist_repo = env.repo()?;
    let done = with_bar(ui, "commits", |progress| {
        hist_repo.import_git(&spec, env.now, &ImportOptions::default(), progress)
    })?;
    if args.json {
        let mut fields = vec![
            ("source", Value::from("git")),
            ("git_dir", Value::from(done.git_dir.as_str())),
            ("tip", Value::from(done.tip.as_str())),
            ("after", Value::from(done.after.clone())),
            ("commits", Value::from(done.summary.read)),
        ];
        fields.extend(summary_fields(&done.summary));
        return ui.json(&Value::from_iter(fields));
    }
    ui.line(git_line(&done, &repo.display().to_string()))
}

/// What `hist import --git` says it did.
fn git_line(done: &GitSummary, repo: &str) -> String {
    let s = &done.summary;
    let tip = short_id(&done.tip);
    if s.read == 0 && done.after.is_some() {
        return format!("up to date: nothing new in {repo} up to {tip}");
    }
    let commits = if s.read == 1 { "commit" } else { "commits" };
    format!(
        "imported {} {commits} of {repo} up to {tip}: {}{}",
        s.read,
        tally(&s.snapshots),
        extras(s, "committer time")
    )
}

/// `; N skipped; M committer times raised`, where not zero.
fn extras(s: &SourceSummary, time: &str) -> String {
    let mut out = String::new();
    if s.skipped > 0 {
        out.push_str(&format!("; {} skipped", s.skipped));
    }
    if s.raised > 0 {
        let plural = if s.raised == 1 { "" } else { "s" };
        out.push_str(&format!("; {} {time}{plural} raised", s.raised));
    }
    out
}

fn summary_fields(s: &SourceSummary) -> Vec<(&'static str, Value)> {
    let mut fields = tally_fields(&s.snapshots);
    fields.push(("skipped", Value::from(s.skipped)));
    fields.push(("raised", Value::from(s.raised)));
    fields
}

pub fn cmd_sqlite(
    ui: &mut Ui,
    env: &Env,
    args: &ImportArgs,
    db: &Path,
    query: &str,
) -> Result<(), CliError> {
    let actor_text = args
        .actor
        .clone()
        .or_else(|| std::env::var("HIST_ACTOR").ok().filter(|a| !a.is_empty()));
    let spec = SqliteImport::new(env.cwd.join(db), query)
        .actor(actor(actor_text.as_deref())?)
        .count(Bar::wanted());
    let mut repo = env.repo()?;
    let done = with_bar(ui, "rows", |progress| {
        repo.import_sqlite(&spec, env.now, &ImportOptions::default(), progress)
    })?;
    if args.json {
        let mut fields = vec![
            ("source", Value::from("sqlite")),
            ("rows", Value::from(done.read)),
        ];
        fields.extend(summary_fields(&done));
        return ui.json(&Value::from_iter(fields));
    }
    let rows = if done.read == 1 { "row" } else { "rows" };
    ui.line(format!(
        "imported {} {rows}: {}{}",
        done.read,
        tally(&done.snapshots),
        extras(&done, "time")
    ))
}

/// The command's error for an import that stopped, with what to do about it.
fn source_error(e: SourceError, unit: &str) -> CliError {
    let recorded = e.recorded();
    let kept = format!(
        "recorded before it, and kept: {} {unit}, {}; running the import again goes on from there",
        recorded.read,
        tally(&recorded.snapshots)
    );
    match e {
        SourceError::Refused(r) => {
            let message = r.to_string();
            match r {
                Refusal::BeforeNewest { first, .. } => CliError::user(message).hint(format!(
                    "import into a fresh repository, import all the files in one run, and \
                     declare rules dated no later than the first version (hist rules … --at \
                     @{})",
                    first.date()
                )),
                Refusal::Rewritten { .. } => CliError::user(message).hint(
                    "nothing was recorded; import the rewritten history into a fresh repository",
                ),
                Refusal::Apart { .. } => CliError::user(message).hint(
                    "import them all in one run from the start, into a fresh repository",
                ),
                Refusal::NoSuchFile { .. } => CliError::user(message)
                    .hint("--file takes the file's path inside the repository, from its top"),
                Refusal::NoColumn(..) => CliError::user(message)
                    .hint("name the columns with AS: SELECT url AS key, fetched_at AS at, body AS doc …"),
                Refusal::NoActor => CliError::usage(message).hint(
                    "name it with --actor kind:name (or HIST_ACTOR), or give the query an actor column",
                ),
                Refusal::Key(_) | Refusal::Twice(_) | Refusal::NoFile => CliError::usage(message),
                _ => CliError::user(message),
            }
        }
        SourceError::Item {
            place,
            problem: RecordError::Refused(error),
            ..
        } => CliError::from(*error)
            .hint(format!("at {place}"))
            .hint(kept),
        SourceError::Item { .. } => {
            let at_hint = matches!(
                &e,
                SourceError::Item {
                    problem: RecordError::At(_),
                    ..
                }
            );
            let mut err = CliError::user(e.to_string());
            if at_hint {
                err = err.hint(
                    "at is ISO-8601 with an offset or Z (2021-03-28T12:00:00Z), or Unix seconds",
                );
            }
            err.hint(kept)
        }
        SourceError::Store { error, .. } => CliError::from(*error).hint(kept),
        e => CliError::user(e.to_string()).hint(kept),
    }
}
