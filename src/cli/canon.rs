use super::ui::{parse_json, read_input};
use super::{CliError, Env, Ui};
use clap::Args;
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
    let Some(key) = &args.key else {
        // No array rules: the canonical text straight from the input, without a tree.
        let text = crate::canon::canonical_text(&bytes)
            .map_err(|e| CliError::user(format!("{name} is not valid JSON: {e}")))?;
        drop(bytes);
        return if args.hash {
            ui.line(crate::canon::ObjectId::of(text.as_bytes()).to_hex())
        } else {
            ui.raw(text.as_bytes())?;
            ui.raw(b"\n")
        };
    };
    let mut value = parse_json(&name, &bytes)?;
    let repo = env.repo()?;
    let mut warnings = Vec::new();
    crate::diff::canonicalize(&mut value, &repo.key_rules(key), &mut warnings);
    for w in warnings {
        ui.warn(w);
    }
    if args.hash {
        ui.line(crate::canon::hash(&value).to_hex())
    } else {
        let mut out = Vec::with_capacity(bytes.len());
        crate::canon::write_canonical(&value, &mut out);
        out.push(b'\n');
        ui.raw(&out)
    }
}
