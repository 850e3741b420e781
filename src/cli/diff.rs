use super::ui::paint_change;
use super::{CliError, Env, ExitCodeOpts, Ui};
use clap::{Args, ValueEnum};
use hist::canon::Value;
use hist::time::When;

/// Show the changes to a document between two moments
///
/// The changes that turn the document as of @A into the document as of @B (default: now).
/// The internal format lists structural changes (`~ /path: old -> new`); json-patch prints an
/// RFC 6902 patch with positional JSON Pointers, valid against the document at A.
///
/// WHEN is @2026-08-01 (00:00 UTC), @2026-08-01T16:40:00Z (any offset), @tx:42, or what git
/// takes: @yesterday, @'2 weeks ago', @'2026-08-01 16:40' (UTC).
/// With --exit-code (or --quiet, which prints nothing), exits 1 when there are differences,
/// 0 when there are none and 2 on an error.
///
/// Examples:
///   hist diff customer/4411 @2026-01-01
///   hist diff feed/acme @2026-09-01 @2026-10-01 --format json-patch
///   hist diff feed/acme @yesterday --quiet || echo "the feed changed since yesterday"
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct DiffArgs {
    /// The document key.
    pub key: String,
    /// From this moment.
    #[arg(value_name = "@A")]
    pub from: String,
    /// To this moment (default: now).
    #[arg(value_name = "@B")]
    pub to: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Internal)]
    pub format: Format,
    /// Print NDJSON (internal format).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub exit: ExitCodeOpts,
}

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// hist's own paths: one change per line.
    Internal,
    /// An RFC 6902 JSON Patch.
    JsonPatch,
}

pub fn cmd_diff(ui: &mut Ui, env: &Env, args: &DiffArgs) -> Result<(), CliError> {
    args.exit.finish(diff(ui, env, args))
}

/// Prints the diff; true when there are differences.
fn diff(ui: &mut Ui, env: &Env, args: &DiffArgs) -> Result<bool, CliError> {
    let from = env.when(&args.from)?;
    let to = args.to.as_deref().map(|w| env.when(w)).transpose()?;
    let repo = env.repo()?;
    let d = repo.diff(&args.key, from, to)?;
    let changed = !d.changes.is_empty();
    if args.exit.quiet {
        return Ok(changed);
    }
    ui.page();
    match args.format {
        Format::JsonPatch => {
            let patch = d.to_json_patch().map_err(|e| match e {
                hist::Error::Apply { source, .. } => {
                    CliError::internal(format!("cannot export the diff: {source}"))
                }
                e => e.into(),
            })?;
            ui.line(hist::canon::to_pretty_string(&hist::canon::Value::Array(
                patch,
            )))?;
        }
        Format::Internal if args.json => {
            for c in &d.changes {
                let mut obj = Value::from_iter([
                    ("key", Value::from(&args.key)),
                    ("path", Value::from(c.path.to_string())),
                    ("op", Value::from(c.op.as_str())),
                ]);
                if let Some(old) = &c.old {
                    obj["old"] = old.clone();
                }
                if let Some(new) = &c.new {
                    obj["new"] = new.clone();
                }
                ui.json(&obj)?;
            }
        }
        Format::Internal => {
            for c in &d.changes {
                let line = paint_change(ui, c);
                ui.line(line)?;
            }
            if d.changes.is_empty() {
                let to = to.map_or_else(|| "now".to_owned(), |w: When| w.to_string());
                ui.note(format!("no differences between {from} and {to}"));
            }
        }
    }
    Ok(changed)
}
