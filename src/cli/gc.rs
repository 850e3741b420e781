//! `gc`: apply retention, drop unreferenced objects, reclaim space.

use super::{CliError, Env, OutputOpts, Ui, WriteOpts};
use clap::Args;
use hist::canon::Value;
use hist::{Compaction, GcOutcome};

/// Apply retention rules, drop unreferenced objects and reclaim space
///
/// Apply the retention rules, rebuild checkpoints, delete objects nothing references, and
/// reclaim space.
///
/// Changes older than a retention rule's window are compacted to one change per path and
/// day (or hour): the old value of the first, the new value of the last; with `--then drop`
/// they are folded into one change carrying their net effect. The compaction is ONE logged
/// transaction of kind `compact` that records, per document and path, how many changes it
/// replaced and their span; reads that reach into a compacted span say so. Changes that no
/// rule covers are never touched. `--dry-run` prints the same plan and writes nothing.
///
/// Example:
///   hist rules retention '/items[*]/price' --keep 90d --then daily --actor user:sam
///   hist gc --dry-run
///   hist gc --actor job:nightly-gc
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct GcArgs {
    /// Print the plan and write nothing (no actor needed).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub write: WriteOpts,
    #[command(flatten)]
    pub output: OutputOpts,
}

pub fn cmd_gc(ui: &mut Ui, env: &Env, args: &GcArgs) -> Result<(), CliError> {
    if args.dry_run {
        let at = args
            .write
            .at
            .as_deref()
            .map(|t| env.write_time(t))
            .transpose()?;
        let repo = env.repo()?;
        let plan = repo.gc_plan(at.unwrap_or(env.now))?;
        print_plan(ui, &plan.compactions, args.output)?;
        if args.output.json {
            return ui.json(&Value::from_iter([
                ("summary", Value::from(true)),
                ("dry_run", Value::from(true)),
                ("replaced", Value::from(plan.replaced())),
                ("kept", Value::from(plan.kept())),
            ]));
        }
        return ui.line(if plan.is_empty() {
            "nothing to compact (dry run: nothing written)".to_owned()
        } else {
            format!(
                "would compact {} (dry run: nothing written)",
                totals(&plan.compactions)
            )
        });
    }
    let opts = env.tx_options(&args.write, "compact")?;
    let mut repo = env.repo()?;
    let outcome = repo.gc(opts)?;
    print_plan(ui, &outcome.plan.compactions, args.output)?;
    if args.output.json {
        return ui.json(&summary_json(&outcome));
    }
    match &outcome.tx {
        Some(tx) => ui.line(format!(
            "compacted {} (tx {})",
            totals(&outcome.plan.compactions),
            tx.id
        ))?,
        None => ui.line("nothing to compact")?,
    }
    // What was freed depends on the file system: chatter, on stderr.
    if outcome.checkpoints_written + outcome.checkpoints_dropped > 0 {
        ui.note(format!(
            "checkpoints: {} dropped, {} written",
            outcome.checkpoints_dropped, outcome.checkpoints_written
        ));
    }
    ui.note(format!(
        "freed {}: database {} -> {}, {} object{} and {} temporary file{} removed",
        size(
            outcome
                .db_bytes_before
                .saturating_sub(outcome.db_bytes_after)
                .saturating_add(outcome.object_bytes_freed)
        ),
        size(outcome.db_bytes_before),
        size(outcome.db_bytes_after),
        outcome.objects_removed,
        plural(outcome.objects_removed),
        outcome.temp_files_removed,
        plural(outcome.temp_files_removed),
    ));
    Ok(())
}

fn print_plan(ui: &mut Ui, plan: &[Compaction], output: OutputOpts) -> Result<(), CliError> {
    for c in plan {
        if output.json {
            ui.json(&Value::from_iter([
                ("tx", Value::from(c.tx)),
                ("key", Value::from(&c.key)),
                ("path", Value::from(c.path.to_string())),
                ("rule", Value::from(c.rule)),
                ("mode", Value::from(c.mode.as_str())),
                ("replaced", Value::from(c.replaced)),
                ("kept", Value::from(c.kept)),
                ("first_tx", Value::from(c.first_tx)),
                ("last_tx", Value::from(c.last_tx)),
                ("first_at", Value::from(c.first_at.to_string())),
                ("last_at", Value::from(c.last_at.to_string())),
            ]))?;
        } else {
            ui.line(format!(
                "{}  {}  {}  {} changes -> {}  {} .. {}",
                c.key,
                super::ui::show_path(&c.path),
                c.mode,
                c.replaced,
                c.kept,
                super::ui::show_time(c.first_at),
                super::ui::show_time(c.last_at)
            ))?;
        }
    }
    Ok(())
}

/// "12 changes into 3 on 2 paths of 1 document".
fn totals(plan: &[Compaction]) -> String {
    let replaced: usize = plan.iter().map(|c| c.replaced).sum();
    let kept: usize = plan.iter().map(|c| c.kept).sum();
    let mut keys: Vec<&str> = plan.iter().map(|c| c.key.as_str()).collect();
    keys.dedup();
    format!(
        "{replaced} changes into {kept} on {} path{} of {} document{}",
        plan.len(),
        plural(plan.len()),
        keys.len(),
        plural(keys.len())
    )
}

fn summary_json(o: &GcOutcome) -> Value {
    Value::from_iter([
        ("summary", Value::from(true)),
        ("dry_run", Value::from(false)),
        ("tx", Value::from(o.tx.as_ref().map(|t| t.id))),
        ("replaced", Value::from(o.plan.replaced())),
        ("kept", Value::from(o.plan.kept())),
        ("checkpoints_written", Value::from(o.checkpoints_written)),
        ("checkpoints_dropped", Value::from(o.checkpoints_dropped)),
        ("objects_removed", Value::from(o.objects_removed)),
        ("object_bytes_freed", Value::from(o.object_bytes_freed)),
        ("temp_files_removed", Value::from(o.temp_files_removed)),
        ("db_bytes_before", Value::from(o.db_bytes_before)),
        ("db_bytes_after", Value::from(o.db_bytes_after)),
    ])
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A byte count for people: 512 B, 4.0 KiB, 1.3 MiB.
#[allow(clippy::cast_precision_loss)]
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
