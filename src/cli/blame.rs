use super::ui::{palette, show_path};
use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::DocPath;

/// Show who last set every field of a document, and when and why
///
/// Prints the document as pretty JSON with a gutter on each line: the transaction, the
/// actor and the date of the change that last set the value on that line (lines that only
/// open or close an object or array have none). A field is answered for on its own: an
/// edit to one field never re-blames its neighbours. Elements of keyed arrays are walked
/// into, set elements are blamed one by one, other arrays as one value.
///
/// With --json, prints one NDJSON object per leaf: {key, path, value, tx, at, actor,
/// reason, op, change_path}, where change_path is where the setting change was recorded
/// (the field itself, or a parent written whole).
///
/// Blame reads the log newest first and stops as soon as every field is answered for; a
/// field that no recent change explains is looked up in an index of the log instead. Its
/// cost follows the document and the recent history, not the length of the whole history.
///
/// Examples:
///   hist blame customer/4411
///   hist blame feed/acme @2026-09-02 --path '/items[id=1]'
///   hist blame feed/acme --json
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct BlameArgs {
    /// The document key.
    pub key: String,
    /// Blame the document as of this moment (default: now).
    #[arg(value_name = "@WHEN")]
    pub when: Option<String>,
    /// Only the fields at or below this path.
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub path: Option<String>,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_blame(ui: &mut Ui, env: &Env, args: &BlameArgs) -> Result<(), CliError> {
    let when = args.when.as_deref().map(|w| env.when(w)).transpose()?;
    let path = args.path.as_deref().map(DocPath::parse).transpose()?;
    let repo = env.repo()?;
    let blame = repo.blame(&args.key, when, path.as_ref())?;
    let then = when.map_or_else(|| "now".to_owned(), |w| format!("at {w}"));
    if !blame.document {
        let absent = hist::Error::NoDocument {
            key: args.key.clone(),
            when,
        };
        return Err(CliError::from(absent)
            .hint("`hist ls` lists the documents; `hist log KEY` shows when one existed"));
    }
    if blame.value.is_none() {
        return Err(CliError::user(format!(
            "{} has nothing at {} {then}",
            args.key,
            show_path(&blame.path)
        )));
    }
    ui.page();
    if args.output.json {
        for leaf in &blame.leaves {
            ui.json(&hist::records::blame_leaf(&args.key, leaf))?;
        }
        return Ok(());
    }
    let compacted = blame
        .leaves
        .iter()
        .filter(|l| l.setter.as_ref().is_some_and(|s| s.compacted))
        .count();
    if compacted > 0 {
        ui.note(format!(
            "note: {compacted} leaves were last set in history that gc compacted: their setter \
             is the last of several changes, the earlier ones are no longer known"
        ));
    }
    // The gutter: `TX (ACTOR DATE) `, aligned like git blame; empty on structure lines.
    let gutters: Vec<Option<(String, String, String)>> = blame
        .leaves
        .iter()
        .map(|l| {
            l.setter
                .as_ref()
                .map(|s| (s.tx.id.to_string(), s.tx.actor.clone(), s.tx.at.date()))
        })
        .collect();
    let tx_w = gutters
        .iter()
        .flatten()
        .map(|g| g.0.len())
        .max()
        .unwrap_or(1);
    let actor_w = gutters
        .iter()
        .flatten()
        .map(|g| g.1.chars().count())
        .max()
        .unwrap_or(1);
    let date_w = 10;
    let blank = " ".repeat(tx_w + actor_w + date_w + 5);
    for line in blame.lines() {
        let gutter = match line.leaf.and_then(|i| gutters.get(i)) {
            Some(Some((tx, actor, date))) => format!(
                "{} ({actor:<actor_w$} {}) ",
                ui.paint(palette::TX, format!("{tx:>tx_w$}")),
                ui.paint(palette::DIM, format!("{date:<date_w$}"))
            ),
            Some(None) => format!("{:<w$}", "?", w = blank.len()),
            None => blank.clone(),
        };
        ui.line(format!("{gutter}{}", line.text).trim_end())?;
        if ui.closed() {
            break;
        }
    }
    Ok(())
}
