use super::{CliError, Env, Ui};
use clap::Args;

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
        ui.json(&serde_json::json!({
            "ok": r.ok(), "transactions": r.transactions, "keys": r.keys, "changes": r.changes,
            "checkpoints": r.checkpoints, "objects": r.objects, "problems": r.problems,
            "head": r.head.as_ref().map(|(tx, hash)| serde_json::json!({"tx": tx, "hash": hash})),
        }))?;
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
