//! How the command line reports failure: `hist: error: …`, hints, exit codes
//! (1 a failure, 2 a usage error, 255 an internal bug).

use hist::shred::ShredError;
use std::process::ExitCode;

/// Which kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The command could not do what was asked (exit 1).
    User,
    /// The command was called wrongly (exit 2).
    Usage,
    /// A bug in hist (exit 255).
    Internal,
    /// A failure of a command run with `--exit-code`, where 1 means "changed" (exit 2, as
    /// diff(1) does).
    Trouble,
}

/// A failure of a command, with hints for the user.
#[derive(Debug)]
pub struct CliError {
    kind: Kind,
    message: String,
    hints: Vec<String>,
    /// Set when the command printed its own report and only needs the exit code.
    silent: bool,
}

impl CliError {
    /// A failure (exit 1).
    pub fn user(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::User,
            message: message.into(),
            hints: Vec::new(),
            silent: false,
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Usage,
            message: message.into(),
            hints: Vec::new(),
            silent: false,
        }
    }

    /// A bug (exit 255).
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Internal,
            message: message.into(),
            hints: Vec::new(),
            silent: false,
        }
    }

    /// Exit 1 without a message (the command already reported).
    pub fn exit_quietly() -> Self {
        Self {
            kind: Kind::User,
            message: String::new(),
            hints: Vec::new(),
            silent: true,
        }
    }

    /// Exit 1 without a message: "something changed", for `--exit-code`.
    pub fn changed() -> Self {
        Self::exit_quietly()
    }

    /// The error as a command run with `--exit-code` reports it: a failure exits 2, since
    /// 1 means that something changed; usage errors (2) and bugs (255) keep their code.
    #[must_use]
    pub fn under_exit_code(mut self) -> Self {
        if self.kind == Kind::User && !self.silent {
            self.kind = Kind::Trouble;
        }
        self
    }

    /// Adds a hint line.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Prints the error to stderr, with `hist: error:` painted when `color`, and returns
    /// the exit code.
    pub fn report_styled(&self, color: bool) -> ExitCode {
        if !self.silent {
            let mut text = format!("{}{}\n", prefix(color), self.message);
            for hint in &self.hints {
                text.push_str(&format!("Hint: {hint}\n"));
            }
            if self.kind == Kind::Internal {
                text.push_str(
                    "Hint: this is a bug in hist; please report it with the command you ran\n",
                );
            }
            eprint!("{text}");
        }
        ExitCode::from(match self.kind {
            Kind::User => 1,
            Kind::Usage | Kind::Trouble => 2,
            Kind::Internal => 255,
        })
    }
}

/// `hist: error: `, bold red when `color`.
pub(crate) fn prefix(color: bool) -> String {
    if color {
        let style = anstyle::AnsiColor::Red.on_default().bold();
        format!("{style}hist: error:{style:#} ")
    } else {
        "hist: error: ".to_owned()
    }
}

impl From<hist::Error> for CliError {
    fn from(e: hist::Error) -> Self {
        use hist::Error as E;
        let message = e.to_string();
        if e.is_disk_full() {
            return CliError::user(message).hint(DISK_FULL_HINT);
        }
        match e {
            E::NotARepository(_) => CliError::user(message)
                .hint("create one with `hist init`, or point at one with -C DIR"),
            E::Actor(_) | E::Key(_) | E::Path(_) | E::When(_) => CliError::usage(message),
            E::AtBeforeNewest { .. } => CliError::user(message)
                .hint("a correction of the past is a new change with a reason (-m)"),
            E::Query(_) => CliError::user(message),
            E::Shred(s) => match shred_hint(&s) {
                Some(hint) => CliError::user(message).hint(hint),
                None => CliError::user(message),
            },
            _ => CliError::user(message),
        }
    }
}

const DISK_FULL_HINT: &str =
    "the disk is full; nothing was recorded: free some space and run the command again";

impl From<hist::time::WhenError> for CliError {
    fn from(e: hist::time::WhenError) -> Self {
        CliError::usage(e.to_string())
    }
}

impl From<hist::path::PathError> for CliError {
    fn from(e: hist::path::PathError) -> Self {
        CliError::usage(e.to_string())
    }
}

/// A hint for the person at the terminal about a crypto-shredding error.
fn shred_hint(e: &ShredError) -> Option<&'static str> {
    Some(match e {
        ShredError::KeysMissing(_) => {
            "restore keys.db from a backup (`hist backup DIR` writes one); without it the personal values cannot be read"
        }
        ShredError::PlaintextInLog { .. } => {
            "personal paths are declared before the first write that touches them; the log is append-only, so values already in it cannot be encrypted afterwards. Declare the rule in a new repository and import the data there"
        }
        ShredError::NoSubject { .. } => {
            "write the subject field in the same document, or declare the rule without --subject-from (the subject is then the document key)"
        }
        ShredError::Locked(hist::shred::Protection::Passphrase) => {
            "set HIST_PASSPHRASE, or pass --passphrase-file FILE; reads and writes that touch no personal value work without it"
        }
        ShredError::Locked(_) => {
            "pass --identity FILE (or set HIST_IDENTITY) with the age identity kept outside the repository; reads and writes that touch no personal value work without it"
        }
        ShredError::WrongKey(_) => {
            "`hist keys` says what unlocks keys.db; give that identity file or passphrase"
        }
        ShredError::UnknownSubject(_) => {
            "the subject is the document key, or the value at the rule's --subject-from path; `hist rules` lists the personal rules"
        }
        _ => return None,
    })
}
