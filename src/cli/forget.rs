//! `hist forget`: crypto-shred one subject.

use super::{CliError, Env, Ui, WriteOpts};
use clap::Args;
use hist::canon::Value;

/// Crypto-shred one subject: its personal values read as forgotten from now on
///
/// Forget a subject: delete its key from `.hist/keys.db` and log a `forget` transaction
/// that names it by its subject id (no personal data). Every personal value of the subject,
/// now and in all of history, then reads as {"$hist:forgotten": true}; everything else in
/// the history is unchanged. No byte of the key is left in any file under `.hist/`.
///
/// SUBJECT is the document key, or the value at the personal rule's --subject-from path.
/// A reason is required: say why (a ticket, a request).
///
/// Example:
///   hist forget customer/4411 --actor user:dpo -m "erasure request 2026-118"
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ForgetArgs {
    /// The subject.
    pub subject: String,
    #[command(flatten)]
    pub write: WriteOpts,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_forget(ui: &mut Ui, env: &Env, args: &ForgetArgs) -> Result<(), CliError> {
    let opts = env.tx_options(&args.write, "forget")?;
    if opts.reason.is_none() {
        return Err(CliError::usage("a forget needs a reason")
            .hint("say why with -m, for example -m \"erasure request 2026-118\""));
    }
    let mut repo = env.repo()?;
    let done = repo.forget(opts, &args.subject)?;
    if args.json {
        return ui.json(&Value::from_iter([
            ("tx", Value::from(done.tx.id)),
            ("at", Value::from(done.tx.at.to_string())),
            ("actor", Value::from(&done.tx.actor)),
            ("reason", Value::from(done.tx.reason.clone())),
            ("subject", Value::from(&args.subject)),
            ("subject_id", Value::from(&done.subject_id)),
        ]));
    }
    ui.line(format!(
        "forgot {} (subject id {}, tx {})",
        args.subject, done.subject_id, done.tx.id
    ))
}
