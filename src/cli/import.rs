use super::ui::open_input;
use super::{CliError, Env, Ui};
use clap::Args;
use hist::import::{ImportError, ImportEvent, ImportOptions, ImportSummary};
use std::path::PathBuf;

/// Record many snapshots from NDJSON records {key, at, actor, reason, doc}
///
/// One record per line: {"key": K, "at": TIME, "actor": A, "reason": R, "doc": {...}}
/// (reason optional; at optional, default now). Records are ingested in order with the same
/// rules as `ingest`. A bad record stops the import with its line number; everything before
/// it stays recorded.
///
/// Examples:
///   hist import snapshots.ndjson
///   sqlite3 -json api.db "SELECT …" | jq -c '.[]' | hist import -
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ImportArgs {
    /// The NDJSON file (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
}

pub fn cmd_import(ui: &mut Ui, env: &Env, args: &ImportArgs) -> Result<(), CliError> {
    let (name, input, _) = open_input(args.file.as_deref(), env)?;
    let mut repo = env.repo()?;
    let input = std::io::BufReader::with_capacity(1 << 16, input);
    let imported = repo.import_ndjson(input, env.now, &ImportOptions::default(), |event| {
        if let ImportEvent::Warning { line, message } = event {
            ui.warn(format!("line {line}: {message}"));
        }
    });
    match imported {
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

fn tally(s: &ImportSummary) -> String {
    format!(
        "{} snapshots: {} changed ({} changes), {} unchanged",
        s.snapshots(),
        s.changed,
        s.changes,
        s.unchanged
    )
}
