use super::ui::{palette, show_time};
use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::LsFilter;
use hist::canon::Value;
use unicode_width::UnicodeWidthStr;

/// List the documents: the keys that exist now or at a past moment, with their last change
///
/// One line per key, sorted: the key, then the transaction, time and actor of its last
/// change (up to WHEN). A removed document is not listed from the moment it was removed.
/// WHEN is @2026-08-01, @2026-08-01T16:40:00Z (any offset), @tx:42, @yesterday or
/// @'2 weeks ago'. With --json: one NDJSON object per key, {key, tx, at, actor, reason,
/// kind}.
///
/// Examples:
///   hist ls
///   hist ls --keys 'customer/*' @2026-08-01
///   hist ls --json @yesterday
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct LsArgs {
    /// Only keys matching this glob (`*` also matches `/`).
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    /// The keys as of this moment (default: now).
    #[arg(value_name = "@WHEN")]
    pub when: Option<String>,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_ls(ui: &mut Ui, env: &Env, args: &LsArgs) -> Result<(), CliError> {
    if let Some(glob) = &args.keys {
        hist::rules::check_glob(glob)
            .map_err(|e| CliError::usage(format!("--keys {glob:?}: {e}")))?;
    }
    let when = args.when.as_deref().map(|w| env.when(w)).transpose()?;
    let repo = env.repo()?;
    let filter = LsFilter {
        keys: args.keys.clone(),
    };
    let listed = repo.ls(&filter, when)?;
    ui.page();
    if args.output.json {
        for l in &listed {
            ui.json(&Value::from_iter([
                ("key", Value::from(&l.key)),
                ("tx", Value::from(l.tx.id)),
                ("at", Value::from(l.tx.at.to_string())),
                ("actor", Value::from(&l.tx.actor)),
                ("reason", Value::from(l.tx.reason.clone())),
                ("kind", Value::from(&l.tx.kind)),
            ]))?;
        }
        return Ok(());
    }
    // Keys hold no control characters (they are refused); wide ones are aligned by width.
    let key_w = listed.iter().map(|l| l.key.width()).max().unwrap_or(0);
    let tx_w = listed
        .iter()
        .map(|l| l.tx.id.to_string().len())
        .max()
        .unwrap_or(0);
    for l in &listed {
        let pad = " ".repeat(key_w - l.key.width());
        ui.line(format!(
            "{}{pad}  {}  {}  {}",
            l.key,
            ui.paint(palette::TX, format!("tx {:<tx_w$}", l.tx.id)),
            ui.paint(palette::DIM, show_time(l.tx.at)),
            l.tx.actor
        ))?;
        if ui.closed() {
            break;
        }
    }
    if listed.is_empty() {
        let then = when.map_or_else(|| "now".to_owned(), |w| format!("at {w}"));
        ui.note(format!("no documents {then}"));
    }
    Ok(())
}
