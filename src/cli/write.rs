//! `set`, `rm` and `apply`: field writes.

use super::ui::{change_brief, parse_json, read_input};
use super::{CliError, Env, OutputOpts, Ui, WriteOpts};
use clap::Args;
use hist::{DocPath, Written};
use std::path::PathBuf;

/// Write a JSON value at a path of a document
///
/// One transaction. Missing parent objects are created on the way; an absent document is
/// created. Setting through a scalar is an error. A write that changes nothing records
/// nothing.
///
/// Examples:
///   hist set customer/4411 /plan '"pro"' --actor user:sam -m "upgrade"
///   hist set customer/4411 /billing '{"seats": 5, "cycle": "yearly"}' --actor user:sam
///   hist set config/app "" '{"debug": false}' --actor job:deploy
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct SetArgs {
    /// The document key.
    pub key: String,
    /// Where in the document ("" for the whole document; /a/b, /items[id=7]/price).
    #[arg(allow_hyphen_values = true)]
    pub path: String,
    /// The value, as JSON (a string needs its quotes: '"pro"').
    #[arg(allow_hyphen_values = true)]
    pub value: String,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

/// Remove a path of a document, or the whole document
///
/// Removing is a change like any other: the old value stays in the log, and the document can
/// still be read as of any moment before.
///
/// Examples:
///   hist rm customer/4411 /discount --actor user:sam
///   hist rm customer/4411 --actor user:sam -m "account closed"
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RmArgs {
    /// The document key.
    pub key: String,
    /// The path to remove (default: the whole document).
    pub path: Option<String>,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

/// Apply an RFC 6902 JSON Patch to a document, as one transaction
///
/// Every operation (add, remove, replace, move, copy, test) applies, or nothing is written.
///
/// Examples:
///   hist apply customer/4411 patch.json --actor user:sam
///   echo '[{"op":"replace","path":"/plan","value":"team"}]' | hist apply customer/4411 - --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ApplyArgs {
    /// The document key.
    pub key: String,
    /// The patch file (`-` for standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_set(ui: &mut Ui, env: &Env, args: &SetArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "write")?;
    let path = DocPath::parse(&args.path)?;
    let value = parse_json("the value", args.value.as_bytes())
        .map_err(|e| e.hint("a JSON string needs its quotes, for example '\"pro\"'"))?;
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    txn.set(&args.key, &path, value)?;
    report_written(ui, txn.commit()?, args.output)
}

pub fn cmd_rm(ui: &mut Ui, env: &Env, args: &RmArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "write")?;
    let path = DocPath::parse(args.path.as_deref().unwrap_or_default())?;
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    txn.remove(&args.key, &path)?;
    report_written(ui, txn.commit()?, args.output)
}

pub fn cmd_apply(ui: &mut Ui, env: &Env, args: &ApplyArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "write")?;
    let (name, bytes) = read_input(Some(&args.file), env)?;
    let value = parse_json(&name, &bytes)?;
    let patch = hist::patch::Patch::from_value(&value)
        .map_err(|e| CliError::user(format!("{name} is not an RFC 6902 patch: {e}")))?;
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    txn.patch(&args.key, &patch)?;
    report_written(ui, txn.commit()?, args.output)
}

/// Prints what a commit recorded: its changes, then a summary line.
pub fn report_written(ui: &mut Ui, commit: Written, output: OutputOpts) -> Result<(), CliError> {
    for warning in &commit.warnings {
        ui.warn(warning);
    }
    let Some(tx) = &commit.tx else {
        if !output.json {
            ui.line("unchanged (nothing recorded)")?;
        }
        return Ok(());
    };
    if output.json {
        return ui.raw(hist::records::written(&commit).as_bytes());
    }
    let keys: std::collections::BTreeSet<&str> =
        commit.changes.iter().map(|(k, _)| k.as_str()).collect();
    for (key, change) in &commit.changes {
        if keys.len() > 1 {
            ui.line(format!("{key} {}", change_brief(change)))?;
        } else {
            ui.line(change_brief(change))?;
        }
    }
    let n = commit.changes.len();
    ui.line(format!(
        "recorded tx {} ({n} change{})",
        tx.id,
        if n == 1 { "" } else { "s" }
    ))
}
