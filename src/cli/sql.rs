use super::{CliError, Env, Ui};
use clap::Args;
use hist::SqlValue;
use unicode_width::UnicodeWidthStr;

/// Run a read-only SQL query over the change log
///
/// The views: changes(id, tx, at, actor, reason, key, path, op, old, new), transactions(id,
/// at, actor, reason, kind), current(key, doc, updated_at) and checks(key, at, actor, hash).
/// `at` is ISO-8601 UTC text, so `at >= '2026-09-01'` works; old and new are JSON text. Any
/// write is refused. The table lines up wide characters (CJK, emoji) by their width on the
/// terminal, and shows control characters escaped (`\n`, `\u{1b}`); --json and --csv print
/// values as they are.
///
/// Examples:
///   hist sql "SELECT path, count(*) AS changes FROM changes GROUP BY path ORDER BY changes DESC LIMIT 3"
///   hist sql --csv "SELECT id, at, actor, reason FROM transactions"
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct SqlArgs {
    /// The query.
    pub query: String,
    /// Print NDJSON, one object per row.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header line.
    #[arg(long)]
    pub csv: bool,
}

fn text(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => String::new(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(f) => f.to_string(),
        SqlValue::Text(t) => t.clone(),
        SqlValue::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

/// A cell as the table shows it: control characters and the marks that reorder text on
/// screen (bidirectional overrides) escaped, so a value cannot drive the terminal or break
/// the table's lines.
fn shown(s: &str) -> String {
    let hostile = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(hostile) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if hostile(c) {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

pub fn cmd_sql(ui: &mut Ui, env: &Env, args: &SqlArgs) -> Result<(), CliError> {
    let repo = env.repo()?;
    let result = repo.query_readonly(&args.query)?;
    if args.json {
        for row in &result.rows {
            ui.json(&hist::records::sql_row(&result.columns, row))?;
        }
    } else if args.csv {
        ui.line(
            result
                .columns
                .iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(","),
        )?;
        for row in &result.rows {
            ui.line(
                row.iter()
                    .map(|v| csv_field(&text(v)))
                    .collect::<Vec<_>>()
                    .join(","),
            )?;
        }
    } else {
        let cells: Vec<Vec<String>> = result
            .rows
            .iter()
            .map(|r| r.iter().map(|v| shown(&text(v))).collect())
            .collect();
        let columns: Vec<String> = result.columns.iter().map(|c| shown(c)).collect();
        let mut widths: Vec<usize> = columns.iter().map(|c| c.width()).collect();
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.width());
            }
        }
        let fmt_row = |row: &[String]| {
            row.iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.width()))))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        };
        ui.line(fmt_row(&columns))?;
        for row in &cells {
            ui.line(fmt_row(row))?;
        }
    }
    Ok(())
}
