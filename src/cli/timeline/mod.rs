use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::canon::Value;
use hist::{DocPath, LogFilter, Timeline, TimelineOptions};
use std::io::IsTerminal;
use std::path::PathBuf;

mod page;

/// Draw a document's history as one self-contained HTML page
///
/// A time axis with every transaction that changed the document (colored by actor; its
/// actor and reason on hover or focus), then a lane for each of the most changed paths
/// (--lanes, 30 by default; the page says how many more changed) with its changes as
/// marks, a line of the value for numbers, and the spans gc compacted and the values
/// forgotten marked as such. Choosing a mark shows the change, old -> new, and its
/// transaction. The page needs no network (its script and style are inline) and, with
/// scripts off, shows a table of the transactions.
///
/// Changes are merged per pixel column of the axis, so a page stays small whatever the
/// length of the history. With -o FILE the page goes to FILE (-o - : stdout). Without -o
/// it goes to stdout when stdout is not a terminal (`hist timeline KEY > page.html`), and
/// on a terminal to a new temporary file whose path is printed. With --json the page goes to
/// a file (FILE, or a new temporary one) and stdout gets one JSON object saying where and
/// what it shows.
///
/// Examples:
///   hist timeline feed/acme -o acme.html
///   hist timeline feed/acme --path '/items[id=1]' --since @2026-09-01 --lanes 10 > item.html
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct TimelineArgs {
    /// The document key.
    pub key: String,
    /// Only changes at this path or below it.
    #[arg(long, allow_hyphen_values = true)]
    pub path: Option<String>,
    /// Only transactions at or after WHEN (the axis starts there).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only transactions at or before WHEN (the axis ends there).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// How many of the most changed paths get a lane (1 to 200).
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u16).range(1..=200))]
    pub lanes: u16,
    /// Write the page to FILE (`-` for stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub format: OutputOpts,
}

pub fn cmd_timeline(ui: &mut Ui, env: &Env, args: &TimelineArgs) -> Result<(), CliError> {
    hist::model::check_key(&args.key).map_err(|e| CliError::usage(e.to_string()))?;
    let opts = TimelineOptions {
        path: args.path.as_deref().map(DocPath::parse).transpose()?,
        since: args.since.as_deref().map(|w| env.when(w)).transpose()?,
        until: args.until.as_deref().map(|w| env.when(w)).transpose()?,
        lanes: usize::from(args.lanes),
        columns: page::COLUMNS,
    };
    let repo = env.repo()?;
    let timeline = repo.timeline(&args.key, &opts)?;
    if timeline.transactions.is_empty() {
        return Err(nothing_to_draw(&repo, args));
    }
    let html = page::render(&timeline);
    let to_stdout = match &args.output {
        Some(path) if path.as_os_str() == "-" => true,
        Some(_) => false,
        None => !args.format.json && !std::io::stdout().is_terminal(),
    };
    if to_stdout {
        if args.format.json {
            return Err(CliError::usage(
                "--json prints a summary on stdout, so the page cannot go there too",
            )
            .hint("name a file with -o FILE, or leave -o out for a temporary file"));
        }
        return ui.raw(html.as_bytes());
    }
    let path = match &args.output {
        Some(path) => env.cwd.join(path),
        None => temporary_file()?,
    };
    std::fs::write(&path, &html).map_err(|e| {
        CliError::user(format!("cannot write {}: {e}", path.display()))
            .hint("name a file in a directory you can write to with -o FILE")
    })?;
    if args.format.json {
        return ui.json(&summary_json(&timeline, &path, html.len()));
    }
    let what = format!(
        "the timeline of {}: {} transactions, {} lanes, {} KB",
        args.key,
        timeline.transactions.len(),
        timeline.lanes.len(),
        html.len().div_ceil(1024)
    );
    if args.output.is_some() {
        ui.note(format!("wrote {what} to {}", path.display()));
        return Ok(());
    }
    ui.line(path.display().to_string())?;
    ui.note(format!("wrote {what}; open it in a browser"));
    Ok(())
}

/// A new file in the temporary directory, kept after the command ends.
fn temporary_file() -> Result<PathBuf, CliError> {
    tempfile::Builder::new()
        .prefix("hist-timeline-")
        .suffix(".html")
        .tempfile()
        .and_then(|f| f.keep().map_err(|e| e.error))
        .map(|(_, path)| path)
        .map_err(|e| {
            CliError::user(format!("cannot create a temporary file: {e}"))
                .hint("write the page elsewhere with -o FILE")
        })
}

/// The `--json` summary: where the page is and what it shows.
fn summary_json(t: &Timeline, path: &std::path::Path, bytes: usize) -> Value {
    Value::from_iter([
        ("file", Value::from(path.display().to_string())),
        ("bytes", Value::from(bytes)),
        ("key", Value::from(t.key.as_str())),
        (
            "path",
            Value::from(t.path.as_ref().map(ToString::to_string)),
        ),
        ("start", Value::from(t.start.to_string())),
        ("end", Value::from(t.end.to_string())),
        ("transactions", Value::from(t.transactions.len())),
        ("changes", Value::from(t.changes)),
        ("paths", Value::from(t.paths)),
        (
            "lanes",
            t.lanes
                .iter()
                .map(|l| Value::from(l.path.to_string()))
                .collect(),
        ),
        ("paths_not_shown", Value::from(t.paths_not_shown())),
    ])
}

/// The error for a timeline with no transaction: the key has no history at all, or none
/// in the span and subtree asked about.
fn nothing_to_draw(repo: &hist::Repo, args: &TimelineArgs) -> CliError {
    let any = repo.log(&LogFilter {
        key: Some(args.key.clone()),
        limit: Some(1),
        ..LogFilter::default()
    });
    if any.is_ok_and(|found| found.is_empty()) {
        return CliError::user(format!(
            "{} has no history: nothing was ever written to it",
            args.key
        ))
        .hint("`hist ls` lists the documents");
    }
    let mut what = args.key.clone();
    if let Some(p) = &args.path {
        what.push_str(&format!(" at or below {p}"));
    }
    CliError::user(format!("nothing changed in {what} in the span asked for"))
        .hint("widen the span (--since, --until) or the subtree (--path); `hist log KEY` lists its transactions")
}
