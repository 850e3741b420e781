use super::ui::{paint_change, palette, show_time};
use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::canon::Value;
use hist::{DocPath, LogFilter};

/// List transactions, newest first
///
/// One block per transaction: its id, time, actor and kind, then its reason, then (with -p)
/// its changes as `~ /path: old -> new`, `+ /path: new` and `- /path: old`.
///
/// Examples:
///   hist log customer/4411 --path /plan -p
///   hist log --actor user:maria --since @2026-08-01 --oneline
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct LogArgs {
    /// Only transactions that changed this document.
    pub key: Option<String>,
    /// Only changes at, above or below this path.
    #[arg(long, allow_hyphen_values = true)]
    pub path: Option<String>,
    /// Only transactions by this actor.
    #[arg(long)]
    pub actor: Option<String>,
    /// Only transactions at or after WHEN.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only transactions at or before WHEN.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// At most N transactions.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub limit: Option<usize>,
    /// Show each transaction's changes.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// One line per transaction.
    #[arg(long, conflicts_with = "patch")]
    pub oneline: bool,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_log(ui: &mut Ui, env: &Env, args: &LogArgs) -> Result<(), CliError> {
    let filter = LogFilter {
        key: args.key.clone(),
        path: args.path.as_deref().map(DocPath::parse).transpose()?,
        actor: args.actor.clone(),
        since: args.since.as_deref().map(|w| env.when(w)).transpose()?,
        until: args.until.as_deref().map(|w| env.when(w)).transpose()?,
        limit: args.limit,
        with_changes: args.patch,
    };
    let repo = env.repo()?;
    let entries = repo.log(&filter)?;
    ui.page();
    for entry in entries {
        let tx = &entry.tx;
        if args.output.json {
            let mut obj = Value::from_iter([
                ("tx", Value::from(tx.id)),
                ("at", Value::from(tx.at.to_string())),
                ("actor", Value::from(&tx.actor)),
                ("reason", Value::from(tx.reason.clone())),
                ("kind", Value::from(&tx.kind)),
                ("change_count", Value::from(entry.change_count)),
            ]);
            if args.patch {
                let changes: Vec<_> = entry
                    .changes
                    .iter()
                    .map(|c| hist::records::change(tx, &c.key, &c.change))
                    .collect();
                obj["changes"] = Value::Array(changes);
            }
            ui.json(&obj)?;
            continue;
        }
        let n = entry.change_count;
        let count = format!("{n} change{}", if n == 1 { "" } else { "s" });
        if args.oneline {
            let reason = tx
                .reason
                .as_deref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            ui.line(format!(
                "{} {} {}{reason} ({count})",
                ui.paint(palette::TX, tx.id),
                tx.at.date(),
                tx.actor
            ))?;
            continue;
        }
        ui.line(format!(
            "{}  {}  {}  {} ({count})",
            ui.paint(palette::TX, format!("tx {}", tx.id)),
            show_time(tx.at),
            tx.actor,
            tx.kind
        ))?;
        if let Some(reason) = &tx.reason {
            ui.line(format!("    {reason}"))?;
        }
        for c in &entry.changes {
            ui.line(format!("    {} {}", c.key, paint_change(ui, &c.change)))?;
        }
        ui.line("")?;
    }
    Ok(())
}
