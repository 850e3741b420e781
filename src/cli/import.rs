use super::ui::open_input;
use super::{CliError, Env, Ui};
use clap::Args;
use hist::import::{ImportError, ImportEvent, ImportOptions, ImportSummary};
use std::io::{BufReader, IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Record many snapshots from NDJSON records {key, at, actor, reason, doc}
///
/// One record per line: {"key": K, "at": TIME, "actor": A, "reason": R, "doc": {...}}
/// (reason optional; at optional, default now). Records are ingested in order with the same
/// rules as `ingest`. A bad record stops the import with its line number; everything before
/// it stays recorded. The input is read as it is imported, one line at a time, so an input
/// of any size is imported in little memory; on a terminal, a progress bar shows how far it
/// got.
///
/// Examples:
///   hist import snapshots.ndjson
///   sqlite3 -json api.db "SELECT …" | jq -c '.[]' | hist import -
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ImportArgs {
    /// The NDJSON file (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
}

pub fn cmd_import(ui: &mut Ui, env: &Env, args: &ImportArgs) -> Result<(), CliError> {
    let (name, reader, size) = open_input(args.file.as_deref(), env)?;
    let size = (size > 0).then_some(size);
    let read = Arc::new(AtomicU64::new(0));
    let input = BufReader::with_capacity(
        1 << 16,
        Counted {
            inner: reader,
            read: Arc::clone(&read),
        },
    );
    let bar = progress_bar(size);
    let mut repo = env.repo()?;
    let imported = repo.import_ndjson(
        input,
        env.now,
        &ImportOptions::default(),
        |event| match event {
            ImportEvent::Warning { line, message } => {
                bar.suspend(|| ui.warn(format!("line {line}: {message}")));
            }
            ImportEvent::Recorded { .. } => bar.set_position(read.load(Ordering::Relaxed)),
            _ => {}
        },
    );
    bar.finish_and_clear();
    match imported {
        Ok(summary) => ui.line(format!("imported {}", tally(&summary))),
        Err(e) => {
            let hint = format!("recorded before it: {}", tally(&e.recorded()));
            let e = match e {
                ImportError::Record { line, problem, .. } => {
                    CliError::user(format!("{name} line {line}: {problem}"))
                }
                ImportError::Read { line, error, .. } => {
                    CliError::user(format!("cannot read {name} at line {line}: {error}"))
                }
                ImportError::Store { error, .. } => error.into(),
                e => CliError::user(e.to_string()),
            };
            Err(e.hint(hint))
        }
    }
}

/// A reader that counts the bytes read through it (for the progress bar).
struct Counted {
    inner: Box<dyn Read>,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A progress bar on stderr when it is a terminal (hidden otherwise): bytes of a file of
/// known size, or a count of bytes read from a pipe.
fn progress_bar(size: Option<u64>) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let (bar, template) = match size {
        Some(n) => (
            indicatif::ProgressBar::new(n),
            "importing {bar:40} {bytes}/{total_bytes} ({eta})",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "importing {spinner} {bytes}",
        ),
    };
    let style = indicatif::ProgressStyle::with_template(template)
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.with_style(style)
}

fn tally(s: &ImportSummary) -> String {
    format!(
        "{} snapshots: {} changed ({} changes), {} unchanged",
        s.snapshots(),
        s.changed,
        s.changes,
        s.unchanged
    )
}
