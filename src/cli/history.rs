use super::ui::{one_line, palette, show_time};
use super::{CliError, Env, OutputOpts, Ui};
use clap::Args;
use hist::DocPath;
use hist::canon::Value;

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
            let mut obj = Value::from_iter([
                ("at", Value::from(e.tx.at.to_string())),
                ("actor", Value::from(&e.tx.actor)),
                ("tx", Value::from(e.tx.id)),
                ("reason", Value::from(e.tx.reason.clone())),
                ("key", Value::from(&args.key)),
                ("path", Value::from(e.path.to_string())),
                ("op", Value::from(e.op.as_str())),
                ("change_path", Value::from(e.change_path.to_string())),
            ]);
            if let Value::Object(map) = &mut obj {
                if e.compacted {
                    map.insert("compacted".into(), Value::Bool(true));
                }
                if let Some(m) = &e.moved {
                    map.insert("from".into(), Value::String(m.from.to_string()));
                    map.insert("to".into(), Value::String(m.to.to_string()));
                }
                if let Some(old) = &e.old {
                    map.insert("old".into(), old.clone());
                }
                if let Some(new) = &e.new {
                    map.insert("new".into(), new.clone());
                }
            }
            ui.json(&obj)?;
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
