use super::{CliError, Env, Ui, WriteOpts};
use clap::Args;
use hist::shred::{KeyProtection, Protection};
use std::path::PathBuf;

/// Show or move what protects the keys of personal values at rest
///
/// keys.db holds the keys of personal values, under a master key that an age identity (or
/// a passphrase) unlocks. Without an option, prints where that is: `repository` (the
/// identity is stored in keys.db: file permissions are its only protection), `identity` (an
/// age identity file kept outside the repository) or `passphrase`.
///
/// With --to-identity FILE, --to-passphrase or --to-repository, moves it: the master key is
/// unlocked the current way (--identity / HIST_IDENTITY, or HIST_PASSPHRASE /
/// --passphrase-file), encrypted the new way, the old identity deleted from keys.db, and the
/// move logged as a transaction of kind `keys`. The new passphrase comes from
/// HIST_NEW_PASSPHRASE or --new-passphrase-file. Without the identity or passphrase, reads
/// and writes of personal values fail; everything else works.
///
/// Examples:
///   hist keys
///   hist keys --to-identity /media/usb/hist-identity.txt --actor user:dpo
///   HIST_NEW_PASSPHRASE=… hist keys --to-passphrase --actor user:dpo
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct KeysArgs {
    /// Keep the identity in FILE, outside the repository (created if missing).
    #[arg(long, value_name = "FILE", group = "to")]
    pub to_identity: Option<PathBuf>,
    /// Unlock keys.db with a passphrase instead.
    #[arg(long, group = "to")]
    pub to_passphrase: bool,
    /// Store the identity in keys.db again (file permissions protect it).
    #[arg(long, group = "to")]
    pub to_repository: bool,
    /// A file whose first line is the new passphrase (or set HIST_NEW_PASSPHRASE).
    #[arg(long, value_name = "FILE")]
    pub new_passphrase_file: Option<PathBuf>,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// What `hist init` or `hist keys` asked for.
pub fn protection(
    env: &Env,
    identity: Option<PathBuf>,
    passphrase: bool,
) -> Result<KeyProtection, CliError> {
    if let Some(file) = identity {
        return Ok(KeyProtection::IdentityFile(env.cwd.join(file)));
    }
    if passphrase {
        return env
            .keys
            .passphrase
            .clone()
            .map(KeyProtection::Passphrase)
            .ok_or_else(|| {
                CliError::usage("--passphrase needs the passphrase")
                    .hint("set HIST_PASSPHRASE, or pass --passphrase-file FILE")
            });
    }
    Ok(KeyProtection::Repository)
}

pub fn cmd_keys(ui: &mut Ui, env: &Env, args: &KeysArgs) -> Result<(), CliError> {
    let target = if let Some(file) = &args.to_identity {
        Some(KeyProtection::IdentityFile(env.cwd.join(file)))
    } else if args.to_passphrase {
        let new = super::passphrase(
            args.new_passphrase_file.as_deref(),
            "HIST_NEW_PASSPHRASE",
            &env.cwd,
        )?
        .ok_or_else(|| {
            CliError::usage("--to-passphrase needs the new passphrase")
                .hint("set HIST_NEW_PASSPHRASE, or pass --new-passphrase-file FILE")
        })?;
        Some(KeyProtection::Passphrase(new))
    } else if args.to_repository {
        Some(KeyProtection::Repository)
    } else {
        None
    };
    let Some(target) = target else {
        let repo = env.repo()?;
        let shown = repo
            .key_protection()?
            .map_or("none (no keys.db yet)", describe);
        return ui.line(shown);
    };
    let opts = env.tx_options(&args.write, "keys")?;
    let mut repo = env.repo()?;
    let done = repo.protect_keys(opts, &target)?;
    ui.line(format!(
        "keys.db: {} -> {} (tx {})",
        done.before.as_str(),
        done.after.as_str(),
        done.tx.id
    ))
}

fn describe(p: Protection) -> &'static str {
    match p {
        Protection::Repository => {
            "repository: the age identity is stored in keys.db; file permissions are its only protection"
        }
        Protection::Identity => {
            "identity: an age identity kept outside the repository unlocks keys.db (--identity FILE or HIST_IDENTITY)"
        }
        Protection::Passphrase => {
            "passphrase: a passphrase unlocks keys.db (HIST_PASSPHRASE or --passphrase-file)"
        }
    }
}
