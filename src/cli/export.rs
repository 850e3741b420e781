use super::{CliError, Env, Ui};
use clap::Args;
use hist::ExportFilter;
use hist::canon::Value;
use std::ops::ControlFlow;

/// Print the change log as NDJSON, one change per line, oldest first
///
/// Each line holds a change and its transaction, with the field names of the SQL view
/// `changes` and of every --json output: at, actor, tx, reason, kind, key, path, op, old,
/// new (old is absent for an add, new for a remove). The log is streamed: exporting a
/// log of any length uses the same small amount of memory.
///
/// Examples:
///   hist export > log.ndjson
///   hist export --keys 'feed/*' --since @2026-09-01
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ExportArgs {
    /// Only documents whose key matches this glob (`*` also matches `/`).
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    /// Only transactions at or after WHEN (@2026-09-01, @2026-09-01T12:00:00Z, @tx:42).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
}

pub fn cmd_export(ui: &mut Ui, env: &Env, args: &ExportArgs) -> Result<(), CliError> {
    if let Some(glob) = &args.keys {
        hist::rules::check_glob(glob)
            .map_err(|e| CliError::usage(format!("--keys {glob:?}: {e}")))?;
    }
    let filter = ExportFilter {
        keys: args.keys.clone(),
        since: args.since.as_deref().map(|w| env.when(w)).transpose()?,
    };
    let repo = env.repo()?;
    repo.export(&filter, |c| {
        let mut record = hist::records::change(&c.tx, &c.key, &c.change);
        if let Value::Object(map) = &mut record {
            map.insert("kind".into(), Value::String(c.tx.kind.clone()));
        }
        ui.json(&record)?;
        Ok::<_, CliError>(if ui.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    })?;
    Ok(())
}
