use super::{CliError, Env, Ui};
use clap::Args;
use hist::canon::Value;

/// Verify the log, current state, checkpoints and objects
///
/// Checks the hash chain over every transaction, replays every document from empty and
/// compares it with current state and every checkpoint, and checks every object against its
/// name. Exits 1 and lists the problems when anything is wrong.
///
/// Examples:
///   hist fsck
///   hist fsck --json
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct FsckArgs {
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_fsck(ui: &mut Ui, env: &Env, args: &FsckArgs) -> Result<(), CliError> {
    let repo = env.repo()?;
    let r = repo.fsck()?;
    if args.json {
        let head = r.head.as_ref().map(|(tx, hash)| {
            Value::from_iter([("tx", Value::from(*tx)), ("hash", Value::from(hash))])
        });
        ui.json(&Value::from_iter([
            ("ok", Value::from(r.ok())),
            ("transactions", Value::from(r.transactions)),
            ("keys", Value::from(r.keys)),
            ("changes", Value::from(r.changes)),
            ("checkpoints", Value::from(r.checkpoints)),
            ("objects", Value::from(r.objects)),
            ("problems", Value::from(r.problems.clone())),
            ("head", Value::from(head)),
        ]))?;
    } else {
        for p in &r.problems {
            ui.line(format!("problem: {p}"))?;
        }
        ui.line(format!(
            "checked {} transactions, {} keys, {} changes, {} checkpoints, {} objects: {}",
            r.transactions,
            r.keys,
            r.changes,
            r.checkpoints,
            r.objects,
            if r.ok() { "ok" } else { "PROBLEMS FOUND" }
        ))?;
    }
    if r.ok() {
        Ok(())
    } else {
        Err(CliError::exit_quietly())
    }
}
