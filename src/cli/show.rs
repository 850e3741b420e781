use super::{CliError, Env, Ui};
use clap::Args;
use hist::DocPath;
use std::borrow::Cow;

/// Print a document as pretty JSON, now or as of a past moment
///
/// WHEN is @2026-08-01 (00:00 UTC that day), @2026-08-01T16:40:00Z (any offset) or @tx:42.
/// Exits 1 with a message when the document (or the path) is absent then.
///
/// Examples:
///   hist show customer/4411
///   hist show customer/4411 @2026-08-01 --path /plan
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ShowArgs {
    /// The document key.
    pub key: String,
    /// Show it as of this moment (default: now).
    #[arg(value_name = "@WHEN")]
    pub when: Option<String>,
    /// Show only the value at this path.
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub path: Option<String>,
    /// Print compact canonical JSON on one line.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_show(ui: &mut Ui, env: &Env, args: &ShowArgs) -> Result<(), CliError> {
    let when = args.when.as_deref().map(|w| env.when(w)).transpose()?;
    let path = args.path.as_deref().map(DocPath::parse).transpose()?;
    let repo = env.repo()?;
    // The document as canonical text, stored or replayed to the moment asked for: no tree
    // of it is built, only the part shown is laid out.
    let text = match when {
        Some(when) => {
            let read = repo.as_of_text(&args.key, when)?;
            note_compacted(ui, &args.key, path.as_ref(), &read.compacted);
            read.text
        }
        None => repo.current_text(&args.key)?,
    };
    let then = when.map_or_else(|| "now".to_owned(), |w| format!("at {w}"));
    let Some(text) = text else {
        let key = args.key.clone();
        return Err(hist::Error::NoDocument { key, when }.into());
    };
    let shown: Cow<'_, str> = match &path {
        None => Cow::Borrowed(&text),
        Some(p) => match p.get_text(&text) {
            Some(value) => Cow::Borrowed(value),
            // Not found in the text: the parsed document has the last word.
            None => {
                let doc = hist::canon::parse_str(&text).map_err(|e| {
                    CliError::user(format!(
                        "the repository is damaged: the stored JSON of {} does not parse: {e}",
                        args.key
                    ))
                })?;
                let value = hist::diff::get(&doc, p.segments()).ok_or_else(|| {
                    CliError::user(format!("{} has nothing at {p} {then}", args.key))
                })?;
                Cow::Owned(hist::canon::to_canonical_string(value))
            }
        },
    };
    ui.page();
    if args.json {
        ui.line(shown)
    } else {
        ui.pretty(&shown)
    }
}

/// Says on stderr when a past read falls in a span compacted by `gc` (for the path shown).
fn note_compacted(ui: &mut Ui, key: &str, path: Option<&DocPath>, spans: &[hist::Compaction]) {
    let hit: Vec<&hist::Compaction> = spans
        .iter()
        .filter(|c| path.is_none_or(|p| p.starts_with(&c.path) || c.path.starts_with(p)))
        .collect();
    let Some(first) = hit.first() else {
        return;
    };
    let more = match hit.len() {
        1 => String::new(),
        2 => " and 1 other path".to_owned(),
        n => format!(" and {} other paths", n - 1),
    };
    let mode = match first.mode {
        hist::retention::Then::Daily => "one change per day",
        hist::retention::Then::Hourly => "one change per hour",
        hist::retention::Then::Drop => "the net effect only",
    };
    let (from, to) = (first.first_at.date(), first.last_at.date());
    let span = if from == to {
        format!("on {from}")
    } else {
        format!("from {from} to {to}")
    };
    ui.note(format!(
        "note: this read of {key} falls in history compacted by gc: {}{more} kept {mode} {span}; the values shown there are the compacted ones",
        first.path
    ));
}
