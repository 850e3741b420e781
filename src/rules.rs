//! Rules: how arrays are diffed, which paths are personal, how long changes are kept.
//!
//! Every rule has a path pattern (member names and `[*]` for any array element; `""` is a
//! document that is itself an array) and may be scoped to keys by a glob (`--keys 'feed/*'`,
//! where `*` also crosses `/`, as in SQL's GLOB). When several rules of the same family
//! match, the one declared last wins.
//!
//! - `array-key PATTERN FIELD[,FIELD…]`: elements are matched by the value of their key
//!   fields (a missing field counts as `null`); an element is addressed as `[id=88]`.
//!   Order within a keyed array is not history: the canonical form orders elements by key.
//! - `set PATTERN`: order never matters; elements are addressed as `[="red"]`.
//! - every other array is one opaque value.
//! - `personal PATTERN [--subject-from PATH]`: values at the pattern are personal data of a
//!   subject (the document key, or the value at `PATH` of the document); they are sealed with
//!   the subject's own key before they are stored (see [`crate::shred`]).
//! - `retention PATTERN (--forever | --keep 90d [--then daily|hourly|drop])`: how long the
//!   changes at or below PATTERN are kept in full detail (see [`crate::retention`]).

use crate::canon::{ArrayOrder, OrderTree, Value};
use crate::path::{DocPath, PathPattern, PatternSegment};
use crate::retention::{Retention, Then};
use std::fmt;

pub use crate::canon::ArrayMode;

/// What a rule says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleKind {
    /// Arrays at the pattern are matched by these key fields.
    ArrayKey(Vec<String>),
    /// Arrays at the pattern are sets.
    Set,
    /// Values at the pattern are personal data, sealed with their subject's key. The
    /// subject is the document key, or the value at `subject_from` in the document.
    Personal {
        /// Where the subject is read from (`None`: the document key).
        subject_from: Option<DocPath>,
    },
    /// How long changes at or below the pattern are kept ([`crate::retention`]).
    Retention(Retention),
}

impl RuleKind {
    /// The stored name of the rule family.
    pub fn name(&self) -> &'static str {
        match self {
            RuleKind::ArrayKey(_) => "array-key",
            RuleKind::Set => "set",
            RuleKind::Personal { .. } => "personal",
            RuleKind::Retention(_) => "retention",
        }
    }

    /// True for the rules that say how arrays are diffed (array keys and sets).
    pub fn is_array_rule(&self) -> bool {
        matches!(self, RuleKind::ArrayKey(_) | RuleKind::Set)
    }

    /// The stored parameters, as JSON.
    pub fn spec(&self) -> Value {
        match self {
            RuleKind::ArrayKey(fields) => Value::from_iter([("fields", fields.clone())]),
            RuleKind::Set | RuleKind::Personal { subject_from: None } => {
                Value::Object(crate::canon::Map::new())
            }
            RuleKind::Personal {
                subject_from: Some(p),
            } => Value::from_iter([("subject_from", p.to_string())]),
            RuleKind::Retention(Retention::Forever) => Value::from_iter([("forever", true)]),
            RuleKind::Retention(Retention::Keep { seconds, then }) => Value::from_iter([
                ("keep_seconds", Value::from(*seconds)),
                ("then", Value::from(then.as_str())),
            ]),
        }
    }

    /// What the rule says about the order of arrays, for an array rule.
    pub fn array_order(&self) -> Option<ArrayOrder> {
        match self {
            RuleKind::ArrayKey(fields) => Some(ArrayOrder::Keyed(fields.clone())),
            RuleKind::Set => Some(ArrayOrder::Set),
            _ => None,
        }
    }

    /// Rebuilds a rule kind from its stored name and parameters.
    pub fn from_stored(name: &str, spec: &Value) -> Option<Self> {
        match name {
            "array-key" => {
                let fields = spec
                    .get("fields")?
                    .as_array()?
                    .iter()
                    .map(|f| f.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()?;
                (!fields.is_empty()).then_some(RuleKind::ArrayKey(fields))
            }
            "set" => Some(RuleKind::Set),
            "personal" => {
                let subject_from = match spec.get("subject_from") {
                    None => None,
                    Some(p) => Some(DocPath::parse(p.as_str()?).ok()?),
                };
                Some(RuleKind::Personal { subject_from })
            }
            "retention" => {
                if spec.get("forever").and_then(Value::as_bool) == Some(true) {
                    return Some(RuleKind::Retention(Retention::Forever));
                }
                let seconds = spec.get("keep_seconds")?.as_i64().filter(|s| *s > 0)?;
                let then = Then::parse(spec.get("then")?.as_str()?)?;
                Some(RuleKind::Retention(Retention::Keep { seconds, then }))
            }
            _ => None,
        }
    }
}

/// A declared rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Its id (stable across listings; used to remove it).
    pub id: i64,
    /// The transaction that declared it.
    pub tx: i64,
    /// Where it applies inside documents.
    pub pattern: PathPattern,
    /// Which keys it applies to (`None`: all).
    pub keys: Option<String>,
    /// What it says.
    pub kind: RuleKind,
}

impl Rule {
    /// True when this rule applies to documents under `key`.
    pub fn applies_to_key(&self, key: &str) -> bool {
        match &self.keys {
            None => true,
            Some(glob) => glob_matches(glob, key),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pattern = self.pattern.to_string();
        let pattern = if pattern.is_empty() {
            "\"\"".to_owned()
        } else {
            pattern
        };
        match &self.kind {
            RuleKind::ArrayKey(fields) => write!(f, "array-key {pattern} {}", fields.join(","))?,
            RuleKind::Set => write!(f, "set {pattern}")?,
            RuleKind::Personal { subject_from } => {
                write!(f, "personal {pattern}")?;
                if let Some(p) = subject_from {
                    write!(f, " --subject-from {p}")?;
                }
            }
            RuleKind::Retention(r) => write!(f, "retention {pattern} {r}")?,
        }
        if let Some(keys) = &self.keys {
            write!(f, " --keys {keys}")?;
        }
        Ok(())
    }
}

/// True when a key matches a `--keys` glob (`*` and `?` also match `/`).
pub fn glob_matches(glob: &str, key: &str) -> bool {
    globset::Glob::new(glob).is_ok_and(|g| g.compile_matcher().is_match(key))
}

/// A `--keys` glob compiled for matching many keys.
pub(crate) fn key_matcher(glob: &str) -> crate::Result<globset::GlobMatcher> {
    globset::Glob::new(glob)
        .map(|g| g.compile_matcher())
        .map_err(|e| crate::Error::Glob {
            glob: glob.to_owned(),
            message: e.to_string(),
        })
}

/// Checks that a `--keys` glob is well formed.
pub fn check_glob(glob: &str) -> Result<(), String> {
    globset::Glob::new(glob)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The rules that apply to one key, ready for diffing: an [`OrderTree`] of its array
/// rules.
#[derive(Clone, Debug, Default)]
pub struct KeyRules {
    tree: OrderTree,
}

impl KeyRules {
    /// The array rules of `rules` that apply to `key`, in declaration order (a later rule
    /// for the same pattern wins).
    pub fn for_key<'r>(rules: impl IntoIterator<Item = &'r Rule>, key: &str) -> Self {
        let mut tree = OrderTree::default();
        for rule in rules.into_iter().filter(|r| r.applies_to_key(key)) {
            if let Some(order) = rule.kind.array_order() {
                tree.insert(
                    rule.pattern.segments().iter().map(PatternSegment::step),
                    order,
                );
            }
        }
        Self { tree }
    }

    /// The rules as a tree over document shapes, for walking a document from the top.
    pub fn tree(&self) -> &OrderTree {
        &self.tree
    }

    /// No rules at all: every array is opaque.
    pub fn none() -> Self {
        Self::default()
    }

    /// The mode of the array at `shape` (the path with every selector written `[*]`).
    pub fn mode(&self, shape: &[PatternSegment]) -> ArrayMode<'_> {
        self.tree.mode(shape.iter().map(PatternSegment::step))
    }

    /// True when some rule applies strictly below `shape`.
    pub fn any_below(&self, shape: &[PatternSegment]) -> bool {
        self.tree.any_below(shape.iter().map(PatternSegment::step))
    }
}

/// The rules `declared` (pattern and kind, in order) as they apply to any key: for tests.
#[cfg(test)]
pub(crate) fn declared(declared: &[(&str, RuleKind)]) -> KeyRules {
    let rules: Vec<Rule> = (1..)
        .zip(declared)
        .map(|(id, (pattern, kind))| Rule {
            id,
            tx: 1,
            pattern: PathPattern::parse(pattern).expect("a test's pattern parses"),
            keys: None,
            kind: kind.clone(),
        })
        .collect();
    KeyRules::for_key(rules.iter(), "k")
}

/// The shape of a path: its selectors all written `[*]`.
pub fn shape_of(path: &DocPath) -> Vec<PatternSegment> {
    use crate::path::Segment;
    path.segments()
        .iter()
        .map(|s| match s {
            Segment::Field(name) => PatternSegment::Field(name.clone()),
            Segment::Keyed(_) | Segment::Member(_) => PatternSegment::AnyElement,
        })
        .collect()
}

/// A recorded rename.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    /// Its row id (0 while its transaction is being built).
    pub id: i64,
    /// The transaction that recorded it.
    pub tx: i64,
    /// Which keys it applies to (a glob; `*` also crosses `/`).
    pub keys: String,
    /// The old path.
    pub from: DocPath,
    /// The new path.
    pub to: DocPath,
}

impl Rename {
    /// True when this rename applies to documents under `key`.
    pub fn applies_to_key(&self, key: &str) -> bool {
        glob_matches(&self.keys, key)
    }

    /// `path` with FROM replaced by TO, when `path` is FROM or lies below it.
    pub fn apply_to(&self, path: &DocPath) -> Option<DocPath> {
        let rest = path.strip_prefix(&self.from)?;
        let mut segs = self.to.segments().to_vec();
        segs.extend_from_slice(rest);
        Some(DocPath::from_segments(segs))
    }
}
