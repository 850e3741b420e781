use super::ui::read_input_with_limit;
use super::{CliError, Env, Ui};
use crate::canon::{self, Value};
use crate::model::Actor;
use crate::time::When;
use crate::{PutOutcome, Repo, TxOptions};
use clap::Args;
use std::path::PathBuf;

/// Record many snapshots from NDJSON records {key, at, actor, reason, doc}
///
/// One record per line: {"key": K, "at": TIME, "actor": A, "reason": R, "doc": {...}}
/// (reason optional; at optional, default now). Records are ingested in order with the same
/// rules as `ingest`. A bad record stops the import with its line number; everything before
/// it stays recorded.
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

/// One NDJSON record, its document left as text. Other members are ignored.
struct Record<'a> {
    key: Option<Value>,
    at: Option<Value>,
    actor: Option<Value>,
    reason: Option<Value>,
    doc: Option<&'a str>,
}

impl<'a> Record<'a> {
    /// Reads a record's envelope; its document stays text.
    fn read(line: &'a str) -> Result<Self, canon::ParseError> {
        let mut record = Record {
            key: None,
            at: None,
            actor: None,
            reason: None,
            doc: None,
        };
        for (name, text) in canon::object_members(line)? {
            // `null` is no value, for the document too: `"doc": null` is no "doc".
            if text == "null" {
                continue;
            }
            let slot = match name.as_str() {
                "doc" => {
                    record.doc = Some(text);
                    continue;
                }
                "key" => &mut record.key,
                "at" => &mut record.at,
                "actor" => &mut record.actor,
                "reason" => &mut record.reason,
                _ => continue,
            };
            *slot = Some(canon::parse_str(text).map_err(|e| in_line(e, line, text))?);
        }
        Ok(record)
    }
}

/// An error in `part`, a slice of `line`, placed in the line.
fn in_line(mut e: canon::ParseError, line: &str, part: &str) -> canon::ParseError {
    if e.line == 1 {
        let offset = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
        e.column += line.get(..offset).map_or(0, |s| s.chars().count());
    }
    e
}

/// Snapshots per SQLite commit.
const BATCH: usize = 500;

#[derive(Default)]
struct Tally {
    changed: usize,
    unchanged: usize,
    changes: usize,
}

impl Tally {
    fn summary(&self) -> String {
        format!(
            "{} snapshots: {} changed ({} changes), {} unchanged",
            self.changed + self.unchanged,
            self.changed,
            self.changes,
            self.unchanged
        )
    }
}

pub fn cmd_import(ui: &mut Ui, env: &Env, args: &ImportArgs) -> Result<(), CliError> {
    let (name, bytes) = read_input_with_limit(args.file.as_deref(), env, None)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| CliError::user(format!("{name} is not UTF-8: {e}")))?;
    let mut repo = env.repo()?;
    let mut tally = Tally::default();
    repo.begin_batch()?;
    let result = import_lines(ui, env, &mut repo, &name, text, &mut tally);
    // Whatever was recorded before a bad record stays recorded.
    repo.commit_batch()?;
    match result {
        Ok(()) => ui.line(format!("imported {}", tally.summary())),
        Err(e) => Err(e.hint(format!("recorded before it: {}", tally.summary()))),
    }
}

fn import_lines(
    ui: &mut Ui,
    env: &Env,
    repo: &mut Repo,
    name: &str,
    text: &str,
    tally: &mut Tally,
) -> Result<(), CliError> {
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if (tally.changed + tally.unchanged) % BATCH == BATCH - 1 {
            repo.commit_batch()?;
            repo.begin_batch()?;
        }
        let fail = |msg: String| CliError::user(format!("{name} line {lineno}: {msg}"));
        // The envelope is read here; the document, still text, is parsed strictly once, by
        // `put_json`, straight into its canonical text (no tree of it is built).
        let record = Record::read(line).map_err(|e| fail(format!("not valid JSON: {e}")))?;
        let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_owned);
        let key = text(&record.key).ok_or_else(|| fail("no \"key\" string".into()))?;
        let actor = text(&record.actor).unwrap_or_default();
        let actor = Actor::parse(&actor).map_err(|e| fail(e.to_string()))?;
        let reason = text(&record.reason);
        let at = match record.at {
            None => None,
            Some(v) => match v.as_str().map(When::parse) {
                Some(Ok(When::At(ts))) => Some(ts),
                _ => return Err(fail(format!("\"at\" is not a time: {v}"))),
            },
        };
        let doc = record.doc.ok_or_else(|| fail("no \"doc\"".into()))?;
        let opts = TxOptions::new(actor, "ingest", env.now)
            .reason(reason)
            .at(at);
        let mut txn = repo.begin(opts).map_err(|e| fail(e.to_string()))?;
        let outcome = txn.put_json(&key, doc.as_bytes()).map_err(|e| match e {
            crate::Error::Json { source, .. } => {
                // Positions in the line, not in the document.
                fail(format!("not valid JSON: {}", in_line(source, line, doc)))
            }
            e => fail(e.to_string()),
        })?;
        let commit = txn.commit().map_err(|e| fail(e.to_string()))?;
        for w in &commit.warnings {
            ui.warn(format!("line {lineno}: {w}"));
        }
        match outcome {
            PutOutcome::Unchanged => tally.unchanged += 1,
            PutOutcome::Changed(n) => {
                tally.changed += 1;
                tally.changes += n;
            }
        }
    }
    Ok(())
}
