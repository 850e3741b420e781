//! `mv`: record a rename.

use super::{CliError, Env, OutputOpts, Ui, WriteOpts};
use clap::Args;
use hist::DocPath;

/// Rename a field in every matching document; later writes use the new name
///
/// Rename a field in every matching document, as one transaction, and make later writes
/// use the new name.
///
/// For every document whose key matches --keys and that has a value at FROM, the value
/// moves to TO (missing parent objects are created); a document that already has a value at
/// TO refuses the whole rename. The rename is recorded: later snapshots (ingest, import)
/// that still carry FROM are recorded at TO, field writes to FROM go to TO, and
/// `hist history KEY TO` follows the value back to FROM. Old changes are never rewritten.
///
/// Example:
///   hist mv --keys 'customer/*' /plan /tier --actor user:sam -m "plans are tiers now"
///   hist mv --keys 'customer/*' /billing /account/billing --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct MvArgs {
    /// Which documents: a glob over keys (`*` also matches `/`).
    #[arg(long, value_name = "GLOB")]
    pub keys: String,
    /// The old path (an object member: /plan, /billing/plan, /items[id=7]/cost).
    #[arg(allow_hyphen_values = true)]
    pub from: String,
    /// The new path.
    #[arg(allow_hyphen_values = true)]
    pub to: String,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_mv(ui: &mut Ui, env: &Env, args: &MvArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "rename")?;
    let from = DocPath::parse(&args.from)?;
    let to = DocPath::parse(&args.to)?;
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    let moved = txn.rename(&args.keys, &from, &to).map_err(|e| match e {
        hist::Error::Rename(_) => {
            CliError::from(e).hint("`hist show KEY` shows a document; pick a TO path that is free")
        }
        other => other.into(),
    })?;
    let commit = txn.commit()?;
    let tx = commit
        .tx
        .ok_or_else(|| CliError::internal("a rename recorded no transaction"))?;
    if args.output.json {
        for (key, changes) in &moved {
            for change in changes {
                ui.json(&hist::records::change(&tx, key, change))?;
            }
        }
        return Ok(());
    }
    for (key, _) in &moved {
        ui.line(format!("{key}: {from} -> {to}"))?;
    }
    let n = moved.len();
    if n == 0 {
        ui.note(format!(
            "no document matching '{}' has a value at {from} now; later snapshots that still use {from} will be recorded at {to}",
            args.keys
        ));
    }
    ui.line(format!(
        "recorded tx {}: {from} renamed to {to} in {n} document{}",
        tx.id,
        if n == 1 { "" } else { "s" }
    ))
}
