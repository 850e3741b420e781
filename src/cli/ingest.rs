use super::ui::{change_brief, read_input};
use super::write::report_written;
use super::{CliError, Env, ExitCodeOpts, OutputOpts, Ui, WriteOpts};
use clap::Args;
use hist::PutOutcome;
use std::path::PathBuf;

/// Record a whole JSON snapshot of a document
///
/// The snapshot is canonicalized and hashed; if it equals the last snapshot only a check is
/// recorded ("unchanged"), otherwise only its structural difference from the last version is
/// stored, with arrays matched by the declared rules (`hist rules`).
/// With --exit-code (or --quiet, which prints nothing), exits 1 when the snapshot changed the
/// document, 0 when it was unchanged and 2 on an error: a poller can act on a change.
///
/// Examples:
///   hist ingest feed/acme feed.json --actor poller:acme
///   curl -s https://api.example.com/feed | hist ingest feed/acme - --actor poller:acme
///   curl -s https://api.example.com/feed | hist ingest feed/acme - --exit-code --quiet || notify
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct IngestArgs {
    /// The document key.
    pub key: String,
    /// The JSON file (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
    #[command(flatten)]
    pub exit: ExitCodeOpts,
}

pub fn cmd_ingest(ui: &mut Ui, env: &Env, args: &IngestArgs) -> Result<(), CliError> {
    args.exit.finish(ingest(ui, env, args))
}

/// Records the snapshot and reports it; true when it changed the document.
fn ingest(ui: &mut Ui, env: &Env, args: &IngestArgs) -> Result<bool, CliError> {
    let opts = env.tx_options(&args.write, "ingest")?;
    let (name, bytes) = read_input(args.file.as_deref(), env)?;
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    let outcome = txn.put_json(&args.key, &bytes).map_err(|e| match e {
        hist::Error::Json { source, .. } => {
            CliError::user(format!("{name} is not valid JSON: {source}"))
        }
        e => e.into(),
    })?;
    drop(bytes);
    let commit = txn.commit()?;
    if args.exit.quiet {
        for w in &commit.warnings {
            ui.warn(w);
        }
        return Ok(outcome != PutOutcome::Unchanged);
    }
    if outcome == PutOutcome::Unchanged {
        if !args.output.json {
            ui.line("unchanged")?;
        }
        return Ok(false);
    }
    if args.output.json || commit.changes.len() <= 20 {
        report_written(ui, commit, args.output)?;
        return Ok(true);
    }
    // A short summary for large diffs.
    for w in &commit.warnings {
        ui.warn(w);
    }
    let (mut add, mut rm, mut rep) = (0, 0, 0);
    for (_, c) in &commit.changes {
        match c.op {
            hist::Op::Add => add += 1,
            hist::Op::Remove => rm += 1,
            _ => rep += 1,
        }
    }
    for (_, c) in commit.changes.iter().take(10) {
        ui.line(change_brief(c))?;
    }
    ui.line(format!("… and {} more", commit.changes.len() - 10))?;
    let tx = commit.tx.as_ref().map_or(0, |t| t.id);
    ui.line(format!(
        "recorded tx {tx} ({} changes: {add} added, {rm} removed, {rep} replaced)",
        commit.changes.len()
    ))?;
    Ok(true)
}
