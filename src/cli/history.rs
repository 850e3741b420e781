use super::ui::{one_line, palette, show_time};
use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::DocPath;

/// List every change that altered the value at PATH, oldest first
///
/// With who, when and why. Changes to a parent (a whole object replaced) and to children (a
/// field inside PATH) are included, with old and new projected onto PATH.
///
/// Examples:
///   hist history customer/4411 /plan
///   hist history feed/acme '/items[id=1]/price' --json
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct HistoryArgs {
    /// The document key.
    pub key: String,
    /// The path ("" for the whole document).
    #[arg(allow_hyphen_values = true)]
    pub path: String,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_history(ui: &mut Ui, env: &Env, args: &HistoryArgs) -> Result<(), CliError> {
    let path = DocPath::parse(&args.path)?;
    let repo = env.repo()?;
    let entries = repo.history(&args.key, &path)?;
    ui.page();
    for e in &entries {
        if args.output.json {
            ui.json(&hist::records::history_entry(&args.key, e))?;
        } else {
            let what = match (e.op, &e.moved) {
                (hist::Op::Move, Some(m)) if m.to == e.path => {
                    format!("> renamed from {} ({})", m.from, one_line(e.new.as_ref()))
                }
                (hist::Op::Move, Some(m)) => {
                    format!("> renamed to {} ({})", m.to, one_line(e.old.as_ref()))
                }
                (hist::Op::Add, _) => {
                    ui.paint(palette::ADD, format!("+ {}", one_line(e.new.as_ref())))
                }
                (hist::Op::Remove, _) => {
                    ui.paint(palette::REMOVE, format!("- {}", one_line(e.old.as_ref())))
                }
                _ => ui.paint(
                    palette::REPLACE,
                    format!(
                        "~ {} -> {}",
                        one_line(e.old.as_ref()),
                        one_line(e.new.as_ref())
                    ),
                ),
            };
            let reason =
                e.tx.reason
                    .as_ref()
                    .map(|r| format!("  ({r})"))
                    .unwrap_or_default();
            let path = if e.path == path {
                String::new()
            } else {
                format!("{}  ", e.path)
            };
            let compacted = if e.compacted { "  [compacted]" } else { "" };
            ui.line(format!(
                "{}  {}  {}  {path}{what}{reason}{compacted}",
                ui.paint(palette::TX, format!("tx {}", e.tx.id)),
                show_time(e.tx.at),
                e.tx.actor
            ))?;
        }
    }
    if entries.iter().any(|e| e.compacted) && !args.output.json {
        ui.note(
            "note: entries marked [compacted] stand for several changes that gc compacted (the first old value, the last new value)",
        );
    }
    if entries.is_empty() && !args.output.json {
        ui.note(format!(
            "no changes to {} in {}",
            super::ui::show_path(&path),
            args.key
        ));
    }
    Ok(())
}
