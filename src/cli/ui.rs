//! Output: data to stdout (buffered; a closed pipe ends quietly), chatter to stderr.
//!
//! Like git, long output goes through a pager when stdout is a terminal
//! ([`Ui::page`]: `$HIST_PAGER`, then `$PAGER`, then `less -FRX`; `--no-pager`, or an
//! empty `HIST_PAGER` as an empty `GIT_PAGER` does for git, turns it off), and colors are
//! used only on a terminal, never when `NO_COLOR` is set (unless `--color always` asks
//! for them: an explicit flag wins, as no-color.org says) or with `--color never`
//! ([`Ui::paint`]).

use super::CliError;
use anstyle::{AnsiColor, Style};
use hist::canon::Value;
use hist::model::{Change, ChangeText};
use hist::time::Timestamp;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

/// When to use colors (`--color`): `auto` on a terminal only (a non-empty NO_COLOR or
/// CLICOLOR=0 turns them off, CLICOLOR_FORCE on), `always` even when the output is not a
/// terminal and whatever NO_COLOR says (an explicit flag wins), `never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
#[allow(missing_docs)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// The styles hist paints with.
pub mod palette {
    use super::{AnsiColor, Style};
    /// Transaction ids.
    pub const TX: Style = AnsiColor::Yellow.on_default();
    /// Added values (`+`).
    pub const ADD: Style = AnsiColor::Green.on_default();
    /// Removed values (`-`).
    pub const REMOVE: Style = AnsiColor::Red.on_default();
    /// Replaced values (`~`) and moves.
    pub const REPLACE: Style = AnsiColor::Cyan.on_default();
    /// Secondary text (dates, reasons, counts).
    pub const DIM: Style = Style::new().dimmed();
}

/// Where data goes: stdout, or the stdin of a pager.
enum Sink {
    Stdout(io::Stdout),
    Pager(ChildStdin),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Pager(p) => p.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Pager(p) => p.flush(),
        }
    }
}

/// The command's view of the terminal.
pub struct Ui {
    out: BufWriter<Sink>,
    broken_pipe: bool,
    color: bool,
    may_page: bool,
    pager: Option<Child>,
}

impl Default for Ui {
    fn default() -> Self {
        Self::new()
    }
}

/// A setting read from the environment: unset and empty are the same.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The pager to run: `$HIST_PAGER`, then `$PAGER`, then `less -FRX`. A variable that is set
/// but empty (or `cat`) means no pager, as `GIT_PAGER=""` does for git.
fn pager_command() -> Option<String> {
    let command = ["HIST_PAGER", "PAGER"]
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .unwrap_or_else(|| "less -FRX".to_owned());
    let trimmed = command.trim();
    (!trimmed.is_empty() && trimmed != "cat").then_some(command)
}

/// True when colors should be used on stdout (`stdout_tty`: stdout is a terminal).
pub fn colors_wanted(choice: ColorChoice, stdout_tty: bool) -> bool {
    match choice {
        ColorChoice::Never => false,
        ColorChoice::Always => true,
        ColorChoice::Auto => {
            if env_var("NO_COLOR").is_some() {
                return false;
            }
            if env_var("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                return true;
            }
            stdout_tty
                && env_var("CLICOLOR").is_none_or(|v| v != "0")
                && env_var("TERM").is_none_or(|t| t != "dumb")
        }
    }
}

impl Ui {
    /// Stdout, buffered; no colors, no pager.
    pub fn new() -> Self {
        Self {
            out: BufWriter::new(Sink::Stdout(io::stdout())),
            broken_pipe: false,
            color: false,
            may_page: false,
            pager: None,
        }
    }

    /// Stdout as the user asked for it: colors per `color` and the environment, and a
    /// pager for long output when stdout is a terminal and `pager` is true.
    pub fn for_terminal(color: ColorChoice, pager: bool) -> Self {
        let tty = io::stdout().is_terminal();
        Self {
            color: colors_wanted(color, tty),
            may_page: pager && tty,
            ..Self::new()
        }
    }

    /// `text` in `style` when colors are on, as is otherwise.
    pub fn paint(&self, style: Style, text: impl std::fmt::Display) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// Sends the rest of the output through a pager, when stdout is a terminal and paging
    /// is allowed. Commands with long output (log, history, blame, show, diff) call it
    /// before they print. A pager that cannot be started is skipped with a warning.
    pub fn page(&mut self) {
        if !self.may_page || self.pager.is_some() {
            return;
        }
        let Some(command) = pager_command() else {
            return;
        };
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&command).stdin(Stdio::piped());
        if std::env::var_os("LESS").is_none() {
            cmd.env("LESS", "FRX");
        }
        if std::env::var_os("LV").is_none() {
            cmd.env("LV", "-c");
        }
        match cmd.spawn() {
            Ok(mut child) => {
                let _ = self.out.flush();
                if let Some(stdin) = child.stdin.take() {
                    self.out = BufWriter::new(Sink::Pager(stdin));
                    self.pager = Some(child);
                }
            }
            Err(e) => self.warn(format!("cannot start the pager {command:?}: {e}")),
        }
    }

    /// True once the reader of the output has gone away (a closed pipe, a pager quit):
    /// long commands may stop early.
    pub fn closed(&self) -> bool {
        self.broken_pipe
    }

    /// Writes one line of data to stdout.
    pub fn line(&mut self, text: impl AsRef<str>) -> Result<(), CliError> {
        if self.broken_pipe {
            return Ok(());
        }
        let r = self
            .out
            .write_all(text.as_ref().as_bytes())
            .and_then(|()| self.out.write_all(b"\n"));
        self.check(r)
    }

    /// Writes a document, given as canonical text, laid out for people, and a newline.
    pub fn pretty(&mut self, canonical: &str) -> Result<(), CliError> {
        if self.broken_pipe {
            return Ok(());
        }
        let r = hist::canon::write_pretty_text(canonical, &mut self.out)
            .and_then(|()| self.out.write_all(b"\n"));
        self.check(r)
    }

    /// Writes data to stdout as is.
    pub fn raw(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        if self.broken_pipe {
            return Ok(());
        }
        let r = self.out.write_all(bytes);
        self.check(r)
    }

    /// Writes one NDJSON record.
    pub fn json(&mut self, value: &Value) -> Result<(), CliError> {
        self.line(hist::canon::to_canonical_string(value))
    }

    /// A message for the person at the terminal (stderr).
    pub fn note(&mut self, text: impl AsRef<str>) {
        let _ = self.out.flush();
        eprintln!("{}", text.as_ref());
    }

    /// A warning (stderr).
    pub fn warn(&mut self, text: impl AsRef<str>) {
        let _ = self.out.flush();
        eprintln!("hist: warning: {}", text.as_ref());
    }

    fn check(&mut self, r: io::Result<()>) -> Result<(), CliError> {
        match r {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.broken_pipe = true;
                Ok(())
            }
            Err(e) => Err(CliError::user(format!("cannot write the output: {e}"))),
        }
    }

    /// Flushes stdout at the end of the command; closes the pager and waits for the
    /// user to leave it.
    pub fn finish(&mut self) -> Result<(), CliError> {
        let r = self.out.flush();
        let r = self.check(r);
        if let Some(mut pager) = self.pager.take() {
            // Dropping the pipe's writing end tells the pager the output is complete.
            self.out = BufWriter::new(Sink::Stdout(io::stdout()));
            let _ = pager.wait();
        }
        r
    }
}

/// A change as one line, painted by its op: `+` green, `-` red, `~` cyan.
pub fn paint_change(ui: &Ui, change: &Change) -> String {
    let style = match change.op {
        hist::Op::Add => palette::ADD,
        hist::Op::Remove => palette::REMOVE,
        _ => palette::REPLACE,
    };
    ui.paint(style, change_line(change))
}
/// A value on one line: compact canonical JSON, or `(absent)`.
pub fn one_line(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), hist::canon::to_canonical_string)
}

/// A path for people: the root is shown as `(document)`; a path whose member names hold
/// control characters is shown as a JSON string (`"/a\u001bb"`), so hostile names cannot
/// send escape sequences to the terminal or forge extra lines.
pub fn show_path(path: &hist::DocPath) -> String {
    if path.is_root() {
        return "(document)".to_owned();
    }
    let text = path.to_string();
    if text.chars().any(char::is_control) {
        hist::canon::to_canonical_string(&Value::String(text))
    } else {
        text
    }
}

/// A change as one line: `~ /path: old -> new`, `+ /path: new`, `- /path: old`.
pub fn change_line(change: &Change) -> String {
    let text = |v: &Option<Value>| v.as_ref().map(hist::canon::to_canonical_string);
    let (old, new) = (text(&change.old), text(&change.new));
    line_of(
        &change.path,
        change.op,
        old.as_deref(),
        new.as_deref(),
        usize::MAX,
    )
}

/// A change a write recorded, as [`change_line`] shows it but with long values cut (their
/// size shown instead of the rest): the first snapshot of a large document is one change
/// whose value is the whole document.
pub fn change_brief(change: &ChangeText) -> String {
    let (old, new) = (change.old.as_deref(), change.new.as_deref());
    line_of(&change.path, change.op, old, new, BRIEF_BYTES)
}

/// Longest value [`change_brief`] shows whole, in bytes.
const BRIEF_BYTES: usize = 100;

fn line_of(
    path: &hist::DocPath,
    op: hist::Op,
    old: Option<&str>,
    new: Option<&str>,
    max: usize,
) -> String {
    let show = |text: Option<&str>| {
        let text = text.unwrap_or("(absent)");
        if text.len() <= max {
            return text.to_owned();
        }
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}… ({} bytes)", &text[..cut], text.len())
    };
    let path = show_path(path);
    match op {
        hist::Op::Add => format!("+ {path}: {}", show(new)),
        hist::Op::Remove => format!("- {path}: {}", show(old)),
        hist::Op::Replace => format!("~ {path}: {} -> {}", show(old), show(new)),
        hist::Op::Move => format!("> {path}: moved from {}", show(old)),
    }
}

/// A time for people: seconds precision unless it has a fraction.
pub fn show_time(at: Timestamp) -> String {
    match at.to_datetime() {
        Some(dt) if at.0 % 1_000_000 == 0 => dt.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        _ => at.to_string(),
    }
}

/// The largest JSON document a command reads (256 MiB): a larger input is refused before it
/// is held in memory whole, so a hostile or mistaken input cannot exhaust memory.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// Opens a file argument, or stdin for `-` or no argument: its name for messages, a reader
/// and the file's size (0 for stdin).
pub fn open_input(
    file: Option<&std::path::Path>,
    env: &super::Env,
) -> Result<(String, Box<dyn io::Read>, u64), CliError> {
    Ok(match file {
        None => ("standard input".to_owned(), Box::new(io::stdin()), 0),
        Some(p) if p.as_os_str() == "-" => ("standard input".to_owned(), Box::new(io::stdin()), 0),
        Some(p) => {
            let full = if p.is_absolute() {
                p.to_path_buf()
            } else {
                env.cwd.join(p)
            };
            let file = std::fs::File::open(&full)
                .map_err(|e| CliError::user(format!("cannot read {}: {e}", p.display())))?;
            let size = file.metadata().map_or(0, |m| m.len());
            (p.display().to_string(), Box::new(file), size)
        }
    })
}

/// Reads a file argument, or stdin for `-` or no argument; refuses more than
/// [`MAX_DOCUMENT_BYTES`].
pub fn read_input(
    file: Option<&std::path::Path>,
    env: &super::Env,
) -> Result<(String, Vec<u8>), CliError> {
    use std::io::Read;
    // A file's size sizes the buffer: growing it by doubling would hold up to twice the
    // document, and peak memory is one of the things an ingest is measured by.
    let (name, reader, size) = open_input(file, env)?;
    let capacity = size.min(MAX_DOCUMENT_BYTES).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    reader
        .take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::user(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(CliError::user(format!(
            "{name} is larger than {} MiB, the largest document hist reads",
            MAX_DOCUMENT_BYTES >> 20
        ))
        .hint("split the document into several keys"));
    }
    Ok((name, bytes))
}

/// Parses JSON input strictly, naming the input in the error.
pub fn parse_json(what: &str, bytes: &[u8]) -> Result<Value, CliError> {
    hist::canon::parse(bytes).map_err(|e| CliError::user(format!("{what} is not valid JSON: {e}")))
}
