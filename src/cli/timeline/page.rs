//! The page: `template.html` filled in, with `timeline.css` and `timeline.js` inline and the
//! timeline's data as JSON for the script.
//!
//! The template is filled in one pass: `{{name}}` is replaced by the named field, escaped
//! for HTML (the style, the script and the JSON data are inserted as they are, the data
//! with every `<` written `\u003c`, so nothing in it can close its `<script>` element).
//! The part between `<!--row-->` and `<!--/row-->` is repeated for each transaction of the
//! table.

use hist::Timeline;
use hist::canon::Value;
use hist::model::Op;

const TEMPLATE: &str = include_str!("template.html");
const STYLE: &str = include_str!("timeline.css");
const SCRIPT: &str = include_str!("timeline.js");

/// How many columns (pixels) the axis has.
pub const COLUMNS: usize = 960;
/// Values longer than this (in characters of canonical JSON) are cut on the page.
const VALUE_CHARS: usize = 160;
/// The table lists at most this many transactions (the newest).
const TABLE_ROWS: usize = 2000;

/// The page for `timeline`.
pub fn render(timeline: &Timeline) -> String {
    let (head, rest) = TEMPLATE.split_once("<!--row-->").unwrap_or((TEMPLATE, ""));
    let (row, tail) = rest.split_once("<!--/row-->").unwrap_or(("", rest));
    let row = row.trim_end_matches('\n');
    let mut out = String::with_capacity(STYLE.len() + SCRIPT.len() + 64 * 1024);
    fill(head, &mut out, |name| page_field(timeline, name));
    for t in timeline.transactions.iter().rev().take(TABLE_ROWS) {
        fill(row, &mut out, |name| {
            Some(Field::Text(match name {
                "tx" => t.tx.id.to_string(),
                "at" => t.tx.at.to_string(),
                "at_text" => short_time(t.tx.at),
                "actor" => t.tx.actor.clone(),
                "kind" => t.tx.kind.clone(),
                "changes" => thousands(t.changes),
                "reason" => t.tx.reason.clone().unwrap_or_default(),
                _ => return None,
            }))
        });
        out.push('\n');
    }
    fill(tail, &mut out, |name| page_field(timeline, name));
    out
}

/// What replaces a `{{name}}`.
enum Field {
    /// Text, escaped for HTML.
    Text(String),
    /// Inserted as is.
    Raw(String),
}

fn page_field(t: &Timeline, name: &str) -> Option<Field> {
    let n = t.transactions.len();
    let text = match name {
        "style" => return Some(Field::Raw(STYLE.to_owned())),
        "script" => return Some(Field::Raw(SCRIPT.to_owned())),
        "data" => return Some(Field::Raw(data(t).to_string().replace('<', "\\u003c"))),
        "version" => env!("CARGO_PKG_VERSION").to_owned(),
        "title" => format!("{} · hist timeline", t.key),
        "key" => t.key.clone(),
        "scope" => match &t.path {
            Some(p) if !p.is_root() => format!("Changes at {p} and below."),
            _ => "Changes anywhere in the document.".to_owned(),
        },
        "summary" => format!(
            "{} {} from {} to {}: {} {} to {} {}.",
            thousands(n as u64),
            plural(n as u64, "transaction", "transactions"),
            short_time(t.start),
            short_time(t.end),
            thousands(t.changes),
            plural(t.changes, "change", "changes"),
            thousands(t.paths as u64),
            plural(t.paths as u64, "path", "paths"),
        ),
        "more" => match t.paths_not_shown() {
            0 => format!(
                "Every path that changed has a lane ({}).",
                thousands(t.lanes.len() as u64)
            ),
            more => format!(
                "The {} most changed {} a lane; {} more {} changed ({} {}).",
                thousands(t.lanes.len() as u64),
                plural(t.lanes.len() as u64, "path has", "paths have"),
                thousands(more as u64),
                plural(more as u64, "path", "paths"),
                thousands(t.changes_not_shown),
                plural(t.changes_not_shown, "change", "changes"),
            ),
        },
        "tx_count" => thousands(n as u64),
        "table_note" => {
            if n > TABLE_ROWS {
                format!(
                    "The {} newest, newest first; {} older ones are not listed (narrow the span with --since and --until, or see hist log).",
                    thousands(TABLE_ROWS as u64),
                    thousands((n - TABLE_ROWS) as u64)
                )
            } else {
                "Newest first.".to_owned()
            }
        }
        _ => return None,
    };
    Some(Field::Text(text))
}

/// Appends `template` to `out` with each `{{name}}` replaced by `field(name)` (left as it is
/// when `field` knows no such name). Inserted text is never scanned again.
fn fill(template: &str, out: &mut String, field: impl Fn(&str) -> Option<Field>) {
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after
            .find("}}")
            .and_then(|end| Some((end, field(&after[..end])?)))
        {
            Some((end, Field::Text(text))) => {
                escape_into(&text, out);
                rest = &after[end + 2..];
            }
            Some((end, Field::Raw(text))) => {
                out.push_str(&text);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
}

/// `text` escaped for HTML text and attribute values.
fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// `1645583` as `1,645,583`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn short_time(at: hist::Timestamp) -> String {
    match at.to_datetime() {
        Some(dt) if at.0 % 1_000_000 == 0 => dt.format("%Y-%m-%d %H:%M:%SZ").to_string(),
        _ => at.to_string(),
    }
}

/// A value as the page shows it: canonical JSON, cut after [`VALUE_CHARS`] characters.
fn value_text(v: Option<&Value>) -> Value {
    let Some(v) = v else {
        return Value::Null;
    };
    let text = hist::canon::to_canonical_string(v);
    match text.char_indices().nth(VALUE_CHARS) {
        Some((cut, _)) => Value::String(format!("{}… ({} bytes)", &text[..cut], text.len())),
        None => Value::String(text),
    }
}

fn op_code(op: Option<Op>) -> &'static str {
    match op {
        Some(Op::Add) => "+",
        Some(Op::Remove) => "-",
        Some(Op::Replace) => "~",
        Some(Op::Move) => ">",
        None => "0",
    }
}

/// The data the script draws (its shape is described at the top of `timeline.js`).
fn data(t: &Timeline) -> Value {
    use std::collections::{BTreeMap, BTreeSet};
    // Actors, the busiest first.
    let mut busy: BTreeMap<&str, usize> = BTreeMap::new();
    for x in &t.transactions {
        *busy.entry(x.tx.actor.as_str()).or_default() += 1;
    }
    let mut actors: Vec<(&str, usize)> = busy.into_iter().collect();
    actors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let actor_index: BTreeMap<&str, usize> = actors
        .iter()
        .enumerate()
        .map(|(i, (a, _))| (*a, i))
        .collect();
    // The axis: transactions merged per column.
    let mut axis: Vec<Value> = Vec::new();
    let mut referenced = BTreeSet::new();
    let mut i = 0;
    while i < t.transactions.len() {
        let column = t.transactions[i].column;
        let run: Vec<_> = t.transactions[i..]
            .iter()
            .take_while(|x| x.column == column)
            .collect();
        i += run.len();
        let mut by: BTreeMap<usize, usize> = BTreeMap::new();
        for x in &run {
            *by.entry(actor_index[x.tx.actor.as_str()]).or_default() += 1;
        }
        let mut by: Vec<(usize, usize)> = by.into_iter().collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let (first, last) = (run[0].tx.id, run[run.len() - 1].tx.id);
        referenced.extend([first, last]);
        axis.push(Value::from_iter([
            Value::from(column),
            Value::from(run.len()),
            Value::from(first),
            Value::from(last),
            by.into_iter()
                .map(|(a, n)| Value::from_iter([Value::from(a), Value::from(n)]))
                .collect(),
        ]));
    }
    let lanes: Vec<Value> = t
        .lanes
        .iter()
        .map(|lane| {
            let marks: Vec<Value> = lane
                .marks
                .iter()
                .map(|m| {
                    referenced.extend([m.first_tx, m.last_tx]);
                    let flags = u8::from(m.compacted) | (u8::from(m.forgotten) << 1);
                    let mut mark = vec![
                        Value::from(m.column),
                        Value::from(m.changes),
                        Value::from(m.first_tx),
                        Value::from(m.last_tx),
                        Value::from(op_code(m.op)),
                        value_text(m.old.as_ref()),
                        value_text(m.new.as_ref()),
                        Value::from(flags),
                        Value::from(m.above),
                    ];
                    if let (true, Some((lo, hi))) = (lane.numeric && m.changes > 1, m.range) {
                        mark.extend([Value::from(lo), Value::from(hi)]);
                    }
                    Value::Array(mark)
                })
                .collect();
            Value::from_iter([
                ("path", Value::from(lane.path.to_string())),
                ("changes", Value::from(lane.changes)),
                ("numeric", Value::Bool(lane.numeric)),
                ("marks", Value::Array(marks)),
            ])
        })
        .collect();
    let txs: Vec<Value> = t
        .transactions
        .iter()
        .filter(|x| referenced.contains(&x.tx.id))
        .map(|x| {
            Value::from_iter([
                Value::from(x.tx.id),
                Value::from(x.tx.at.0),
                Value::from(actor_index[x.tx.actor.as_str()]),
                Value::from(x.tx.kind.as_str()),
                Value::from(x.tx.reason.clone()),
                Value::from(x.changes),
            ])
        })
        .collect();
    let compactions: Vec<Value> = t
        .compactions
        .iter()
        .map(|c| {
            Value::from_iter([
                Value::from(c.path.to_string()),
                Value::from(c.mode.as_str()),
                Value::from(c.first_at.0),
                Value::from(c.last_at.0),
                Value::from(c.replaced),
                Value::from(c.kept),
                Value::from(c.tx),
            ])
        })
        .collect();
    Value::from_iter([
        ("key", Value::from(t.key.as_str())),
        (
            "path",
            Value::from(t.path.as_ref().map(ToString::to_string)),
        ),
        ("start", Value::from(t.start.0)),
        ("end", Value::from(t.end.0)),
        ("columns", Value::from(t.columns)),
        ("txCount", Value::from(t.transactions.len())),
        (
            "actors",
            actors.iter().map(|(a, _)| Value::from(*a)).collect(),
        ),
        ("txs", Value::Array(txs)),
        ("axis", Value::Array(axis)),
        ("lanes", Value::Array(lanes)),
        ("compactions", Value::Array(compactions)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colors of `timeline.css` (`--name: #rrggbb;`).
    fn colors() -> BTreeMap<String, [f64; 3]> {
        STYLE
            .lines()
            .filter_map(|l| {
                let (name, value) = l.trim().strip_prefix("--")?.split_once(':')?;
                let hex = value.trim().strip_prefix('#')?.strip_suffix(';')?;
                let c = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok().map(f64::from);
                Some((name.to_owned(), [c(0)?, c(2)?, c(4)?]))
            })
            .collect()
    }
    use std::collections::BTreeMap;

    fn luminance(rgb: [f64; 3]) -> f64 {
        let lin = |c: f64| {
            let c = c / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])
    }

    fn contrast(a: [f64; 3], b: [f64; 3]) -> f64 {
        let (la, lb) = (luminance(a), luminance(b));
        (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
    }

    /// WCAG 2: text 4.5:1 against its background, marks (graphics) 3:1.
    #[test]
    fn the_page_s_colors_have_enough_contrast() {
        let colors = colors();
        let bg = colors["bg"];
        for text in ["fg", "muted", "a0"] {
            let c = contrast(colors[text], bg);
            assert!(c >= 4.5, "--{text} on --bg: {c:.2}");
        }
        // The tooltip: background text on the foreground color.
        assert!(contrast(colors["bg"], colors["fg"]) >= 4.5);
        let marks: Vec<_> = (0..=8).map(|i| format!("a{i}")).collect();
        for mark in marks.iter().map(String::as_str).chain(["line", "focus"]) {
            let c = contrast(colors[mark], bg);
            assert!(c >= 3.0, "--{mark} on --bg: {c:.2}");
            let c = contrast(colors[mark], colors["lane"]);
            assert!(c >= 3.0, "--{mark} on --lane: {c:.2}");
        }
        assert_eq!(colors.len(), 16, "{colors:?}");
    }

    #[test]
    fn the_template_is_filled_in_one_pass_and_escaped() {
        let mut out = String::new();
        fill(
            "a {{x}} b {{y}} {{unknown}} {{",
            &mut out,
            |name| match name {
                "x" => Some(Field::Text("<{{y}}>&\"'".to_owned())),
                "y" => Some(Field::Raw("<b>".to_owned())),
                _ => None,
            },
        );
        assert_eq!(out, "a &lt;{{y}}&gt;&amp;&quot;&#39; b <b> {{unknown}} {{");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_645_583), "1,645,583");
        let long = Value::String("é".repeat(500));
        let Value::String(cut) = value_text(Some(&long)) else {
            panic!()
        };
        assert!(
            cut.starts_with("\"éé") && cut.ends_with("… (1002 bytes)"),
            "{cut}"
        );
    }

    #[test]
    fn the_template_has_every_part() {
        for part in [
            "{{style}}",
            "{{script}}",
            "{{data}}",
            "<!--row-->",
            "<!--/row-->",
            "<noscript>",
        ] {
            assert!(TEMPLATE.contains(part), "template.html lacks {part}");
        }
        assert!(!TEMPLATE.contains("http://") && !TEMPLATE.contains("https://"));
        assert!(!SCRIPT.contains("fetch(") && !SCRIPT.contains("XMLHttpRequest"));
    }
}
