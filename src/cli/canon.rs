use super::ui::read_input;
use super::{CliError, Env, Ui};
use clap::Args;
use hist::rules::KeyRules;
use std::path::PathBuf;

/// Print a JSON document's canonical form, or its hash
///
/// The canonical form is RFC 8785, with integers beyond 2^53 kept digit for digit; --hash
/// prints the blake3 hash of those bytes. With --key, that key's array rules are applied
/// (keyed arrays and sets put in canonical order).
///
/// Examples:
///   hist canon feed.json
///   hist canon feed.json --hash --key feed/acme
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CanonArgs {
    /// The JSON file (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
    /// Print the blake3 hash of the canonical bytes instead.
    #[arg(long)]
    pub hash: bool,
    /// Apply the array rules of this key (needs a repository).
    #[arg(long)]
    pub key: Option<String>,
}

pub fn cmd_canon(ui: &mut Ui, env: &Env, args: &CanonArgs) -> Result<(), CliError> {
    let (name, bytes) = read_input(args.file.as_deref(), env)?;
    let rules = match &args.key {
        Some(key) => env.repo()?.key_rules(key),
        None => KeyRules::none(),
    };
    // Written while it is parsed, arrays ordered on the way: no tree is built.
    let mut warnings = Vec::new();
    let text = hist::diff::canonical_text(&bytes, &rules, &mut warnings)
        .map_err(|e| CliError::user(format!("{name} is not valid JSON: {e}")))?;
    drop(bytes);
    for w in warnings {
        ui.warn(w);
    }
    if args.hash {
        ui.line(hist::canon::ObjectId::of(text.as_bytes()).to_hex())
    } else {
        ui.raw(text.as_bytes())?;
        ui.raw(b"\n")
    }
}
