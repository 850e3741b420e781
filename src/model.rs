//! The vocabulary of the log: actors, keys, operations and change records.

use crate::canon::Value;
use crate::path::DocPath;
use crate::time::Timestamp;
use std::fmt;

/// Who made a write: `kind:name` (`user:maria`, `job:nightly-reprice`, `poller:acme`).
///
/// `kind` is a lowercase ASCII word (`a-z`, digits, `-`, `_`, starting with a letter);
/// `name` is any non-empty text without white space or control characters.
/// There is no default actor and no fallback to the login name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Actor(String);

/// Why an actor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActorError {
    /// No actor given at all.
    #[error("no actor given: every write names who made it")]
    Missing,
    /// The text is not `kind:name`.
    #[error("actor {0:?} is not of the form kind:name (for example user:maria or job:nightly)")]
    Malformed(String),
}

impl Actor {
    /// Validates an actor.
    pub fn parse(text: &str) -> Result<Self, ActorError> {
        if text.trim().is_empty() {
            return Err(ActorError::Missing);
        }
        let malformed = || ActorError::Malformed(text.to_owned());
        let (kind, name) = text.split_once(':').ok_or_else(malformed)?;
        let kind_ok = kind.starts_with(|c: char| c.is_ascii_lowercase())
            && kind
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        let name_ok =
            !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control());
        if kind_ok && name_ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(malformed())
        }
    }

    /// The text form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An actor of `kind` (a valid kind: a lowercase ASCII word) named after `name`, any
    /// text (a git author's name): runs of white space and control characters become one
    /// `-`, letters are lowercased, and an empty name is `unknown`. Always valid:
    /// `Ann  Example` is `git:ann-example`.
    pub fn normalized(kind: &str, name: &str) -> Self {
        debug_assert!(Self::parse(&format!("{kind}:x")).is_ok(), "kind {kind:?}");
        let words: Vec<&str> = name
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|w| !w.is_empty())
            .collect();
        let name = words.join("-").to_lowercase();
        let name = if name.is_empty() { "unknown" } else { &name };
        Self(format!("{kind}:{name}"))
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a document key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid key {0:?}: a key is non-empty UTF-8 text without control characters, \
     not starting with '/' and without a '..' segment"
)]
pub struct KeyError(pub String);

/// Checks a document key: non-empty, no control characters, no leading `/`, and no `..`
/// segment (`a/../b`, `../x`, `x/..`).
///
/// Keys name files for `hist track` and may be used as paths by tools that export a
/// repository, so a key that could climb out of a directory is refused everywhere, for
/// reads as well as writes. A `.` or `..` inside a segment (`v1..2`, `.env`) is fine.
pub fn check_key(key: &str) -> Result<(), KeyError> {
    if key.is_empty()
        || key.chars().any(char::is_control)
        || key.starts_with('/')
        || key.split('/').any(|segment| segment == "..")
    {
        Err(KeyError(key.to_owned()))
    } else {
        Ok(())
    }
}

/// What a change did at its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A value appeared (`old` is absent).
    Add,
    /// A value disappeared (`new` is absent).
    Remove,
    /// A value was replaced (both present).
    Replace,
    /// A recorded rename: the value moved from `old` (a path, as a JSON string) to this
    /// path; `new` is the value that moved.
    Move,
}

impl Op {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Remove => "remove",
            Op::Replace => "replace",
            Op::Move => "move",
        }
    }

    /// Parses the stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "add" => Op::Add,
            "remove" => Op::Remove,
            "replace" => Op::Replace,
            "move" => Op::Move,
            _ => return None,
        })
    }

    /// The op of a change from a value there (`before`) or not, to one there (`after`) or
    /// not (`None`: neither).
    pub fn between_presence(before: bool, after: bool) -> Option<Self> {
        match (before, after) {
            (false, false) => None,
            (false, true) => Some(Op::Add),
            (true, false) => Some(Op::Remove),
            (true, true) => Some(Op::Replace),
        }
    }

    /// The op that changes `old` into `new` (`None` when both are absent).
    pub fn between(old: Option<&Value>, new: Option<&Value>) -> Option<Self> {
        match (old, new) {
            (None, None) => None,
            (None, Some(_)) => Some(Op::Add),
            (Some(_), None) => Some(Op::Remove),
            (Some(_), Some(_)) => Some(Op::Replace),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One field-level change inside one document: the unit of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Where in the document.
    pub path: DocPath,
    /// What happened.
    pub op: Op,
    /// The value before (absent for `add`).
    pub old: Option<Value>,
    /// The value after (absent for `remove`).
    pub new: Option<Value>,
}

impl Change {
    /// The change that undoes this one.
    pub fn inverse(&self) -> Change {
        // A move from `old` (a path, as a JSON string) to `path` is undone by the move back.
        if self.op == Op::Move
            && let Some(from) = self
                .old
                .as_ref()
                .and_then(Value::as_str)
                .and_then(|t| DocPath::parse(t).ok())
        {
            return Change {
                path: from,
                op: Op::Move,
                old: Some(Value::String(self.path.to_string())),
                new: self.new.clone(),
            };
        }
        let op = match self.op {
            Op::Add => Op::Remove,
            Op::Remove => Op::Add,
            other => other,
        };
        Change {
            path: self.path.clone(),
            op,
            old: self.new.clone(),
            new: self.old.clone(),
        }
    }
}

/// A [`Change`] with its values as canonical JSON text ([`crate::canon`]), as a write records
/// it: what [`Written`](crate::Written) returns, so that a large snapshot's changes are never
/// parsed into trees unless a caller asks ([`ChangeText::to_change`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeText {
    /// Where in the document.
    pub path: DocPath,
    /// What happened.
    pub op: Op,
    /// The value before, canonical JSON (absent for `add`).
    pub old: Option<String>,
    /// The value after, canonical JSON (absent for `remove`).
    pub new: Option<String>,
}

impl ChangeText {
    /// The change with its values in canonical text.
    pub fn of(change: &Change) -> Self {
        let text = |v: &Option<Value>| v.as_ref().map(crate::canon::to_canonical_string);
        Self {
            path: change.path.clone(),
            op: change.op,
            old: text(&change.old),
            new: text(&change.new),
        }
    }

    /// The change with its values parsed.
    pub fn to_change(&self) -> Result<Change, crate::canon::ParseError> {
        let value = |t: &Option<String>| t.as_deref().map(crate::canon::parse_str).transpose();
        Ok(Change {
            path: self.path.clone(),
            op: self.op,
            old: value(&self.old)?,
            new: value(&self.new)?,
        })
    }
}

/// A transaction as recorded in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxInfo {
    /// Increasing id.
    pub id: i64,
    /// When it was recorded (never earlier than the transaction before it).
    pub at: Timestamp,
    /// Who made it.
    pub actor: String,
    /// Why, if given.
    pub reason: Option<String>,
    /// `write`, `ingest`, `track`, `rename`, `rules`, `compact`, `forget`, …
    pub kind: String,
}

/// A change as read back from the log, with its transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedChange {
    /// The change row's id.
    pub id: i64,
    /// Its transaction.
    pub tx: TxInfo,
    /// The document key.
    pub key: String,
    /// The change itself.
    pub change: Change,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_actors_are_always_valid() {
        for (name, want) in [
            ("Ann Example", "git:ann-example"),
            ("  Ann \t\n  Example ", "git:ann-example"),
            ("github-actions[bot]", "git:github-actions[bot]"),
            ("Zoë\u{7}Ü", "git:zoë-ü"),
            ("", "git:unknown"),
            (" \u{0} ", "git:unknown"),
        ] {
            let actor = Actor::normalized("git", name);
            assert_eq!(actor.as_str(), want, "{name:?}");
            assert_eq!(Actor::parse(actor.as_str()), Ok(actor));
        }
    }

    #[test]
    fn actors() {
        for good in [
            "user:maria",
            "job:nightly-reprice",
            "poller:acme",
            "svc_2:x@y.z",
        ] {
            assert!(Actor::parse(good).is_ok(), "{good}");
        }
        assert_eq!(Actor::parse(""), Err(ActorError::Missing));
        assert_eq!(Actor::parse("  "), Err(ActorError::Missing));
        for bad in [
            "system",
            "maria",
            ":maria",
            "user:",
            "User:maria",
            "user:ma ria",
            "user:a\tb",
            "1x:y",
        ] {
            assert!(
                matches!(Actor::parse(bad), Err(ActorError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn keys() {
        assert!(check_key("customer/4411").is_ok());
        assert!(check_key("").is_err());
        assert!(check_key("a\nb").is_err());
        for good in [
            "a/b",
            "v1..2",
            ".env",
            "a/.../b",
            "a/./b",
            "x/y/",
            "feed/acme..",
        ] {
            assert!(check_key(good).is_ok(), "{good}");
        }
        for bad in [
            "/etc/passwd",
            "/",
            "..",
            "../x",
            "a/../b",
            "x/..",
            "a\u{7f}",
            "a\u{85}b",
        ] {
            assert!(check_key(bad).is_err(), "{bad}");
        }
    }
}
