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

use crate::path::{DocPath, PathPattern, PatternSegment};
use crate::retention::{Retention, Then};
use serde_json::{Value, json};
use std::fmt;

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
            RuleKind::ArrayKey(fields) => json!({ "fields": fields }),
            RuleKind::Set => json!({}),
            RuleKind::Personal { subject_from: None } => json!({}),
            RuleKind::Personal {
                subject_from: Some(p),
            } => json!({ "subject_from": p.to_string() }),
            RuleKind::Retention(Retention::Forever) => json!({ "forever": true }),
            RuleKind::Retention(Retention::Keep { seconds, then }) => {
                json!({ "keep_seconds": seconds, "then": then.as_str() })
            }
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

/// Checks that a `--keys` glob is well formed.
pub fn check_glob(glob: &str) -> Result<(), String> {
    globset::Glob::new(glob)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// How an array at some place in a document is diffed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayMode<'a> {
    /// One value: any change replaces it whole.
    Opaque,
    /// Elements matched by these key fields.
    Keyed(&'a [String]),
    /// Elements are a set.
    Set,
}

/// The rules that apply to one key, ready for diffing.
#[derive(Clone, Debug, Default)]
pub struct KeyRules {
    arrays: Vec<(Vec<PatternSegment>, RuleKind)>,
    tree: RuleTree,
}

impl KeyRules {
    /// The array rules of `rules` that apply to `key`, in declaration order.
    pub fn for_key<'r>(rules: impl IntoIterator<Item = &'r Rule>, key: &str) -> Self {
        let arrays = rules
            .into_iter()
            .filter(|r| r.kind.is_array_rule() && r.applies_to_key(key))
            .map(|r| (r.pattern.segments().to_vec(), r.kind.clone()))
            .collect::<Vec<_>>();
        let tree = RuleTree::of(&arrays);
        Self { arrays, tree }
    }

    /// The rules as a tree over document shapes, for walking a document from the top.
    pub(crate) fn tree(&self) -> &RuleTree {
        &self.tree
    }

    /// No rules at all: every array is opaque.
    pub fn none() -> Self {
        Self::default()
    }

    /// The mode of the array at `shape` (the path with every selector written `[*]`).
    pub fn mode(&self, shape: &[PatternSegment]) -> ArrayMode<'_> {
        match self
            .arrays
            .iter()
            .rev()
            .find(|(p, _)| p.as_slice() == shape)
        {
            Some((_, RuleKind::ArrayKey(fields))) => ArrayMode::Keyed(fields),
            Some((_, RuleKind::Set)) => ArrayMode::Set,
            // Only array rules are collected by `for_key`.
            _ => ArrayMode::Opaque,
        }
    }

    /// True when some rule applies strictly below `shape`.
    pub fn any_below(&self, shape: &[PatternSegment]) -> bool {
        self.arrays
            .iter()
            .any(|(p, _)| p.len() > shape.len() && p.starts_with(shape))
    }
}

/// [`KeyRules`] as a tree: one node per prefix of a rule's pattern, so that a walk down a
/// document finds the mode of each array, and whether any rule lies below, in one step per
/// level. A subtree without a node has no rule at or below it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RuleTree {
    /// Node 0 is the document's root.
    nodes: Vec<RuleNode>,
}

/// A node of a [`RuleTree`]: the shape of one pattern prefix.
#[derive(Clone, Debug, Default)]
struct RuleNode {
    fields: Vec<(String, usize)>,
    element: Option<usize>,
    /// The rule whose pattern ends here (the last declared one wins).
    kind: Option<RuleKind>,
}

/// A place in a [`RuleTree`].
pub(crate) type RuleNodeId = usize;

impl RuleTree {
    fn of(arrays: &[(Vec<PatternSegment>, RuleKind)]) -> Self {
        let mut tree = Self {
            nodes: vec![RuleNode::default()],
        };
        for (pattern, kind) in arrays {
            let mut at = 0;
            for seg in pattern {
                let existing = match seg {
                    PatternSegment::Field(name) => tree.nodes[at]
                        .fields
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|&(_, i)| i),
                    PatternSegment::AnyElement => tree.nodes[at].element,
                };
                at = existing.unwrap_or_else(|| {
                    let i = tree.nodes.len();
                    tree.nodes.push(RuleNode::default());
                    match seg {
                        PatternSegment::Field(name) => {
                            tree.nodes[at].fields.push((name.clone(), i));
                        }
                        PatternSegment::AnyElement => tree.nodes[at].element = Some(i),
                    }
                    i
                });
            }
            tree.nodes[at].kind = Some(kind.clone());
        }
        tree
    }

    /// The root, unless no rule applies at all.
    pub(crate) fn root(&self) -> Option<RuleNodeId> {
        self.nodes
            .first()
            .filter(|n| n.kind.is_some() || n.element.is_some() || !n.fields.is_empty())
            .map(|_| 0)
    }

    /// The member `name` of an object at `node`, if some rule lies at or below it.
    pub(crate) fn field(&self, node: RuleNodeId, name: &str) -> Option<RuleNodeId> {
        let fields = &self.nodes.get(node)?.fields;
        fields.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    /// How the array at `node` is ordered, and the node of its elements (`None` for an
    /// opaque array: nothing inside it is ordered either).
    pub(crate) fn array(&self, node: RuleNodeId) -> (ArrayMode<'_>, Option<RuleNodeId>) {
        let Some(n) = self.nodes.get(node) else {
            return (ArrayMode::Opaque, None);
        };
        match &n.kind {
            Some(RuleKind::ArrayKey(fields)) => (ArrayMode::Keyed(fields), n.element),
            Some(RuleKind::Set) => (ArrayMode::Set, n.element),
            _ => (ArrayMode::Opaque, None),
        }
    }
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
