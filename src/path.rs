//! Document paths (STUB: object members only; being replaced by the full implementation).
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object member: `/name`.
    Field(String),
    /// The element of a keyed array whose key fields equal these values: `[id=88]`.
    Keyed(Vec<(String, Value)>),
    /// The element of a set equal to this value: `[="red"]`.
    Member(Value),
}

/// A path that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid path {text:?} at byte {offset}: {message}")]
pub struct PathError {
    /// The whole text.
    pub text: String,
    /// Where parsing stopped.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Where a change happened inside a document. The root is the empty path.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DocPath {
    segs: Vec<Segment>,
}

impl DocPath {
    /// The whole document.
    pub fn root() -> Self {
        Self::default()
    }
    /// Parses the text form.
    pub fn parse(text: &str) -> Result<Self, PathError> {
        if text.is_empty() {
            return Ok(Self::root());
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PathError {
                text: text.into(),
                offset: 0,
                message: "a path starts with '/' or '['".into(),
            });
        };
        let segs = rest
            .split('/')
            .map(|s| Segment::Field(s.replace("~1", "/").replace("~2", "[").replace("~0", "~")))
            .collect();
        Ok(Self { segs })
    }
    /// Builds a path from segments.
    pub fn from_segments(segs: Vec<Segment>) -> Self {
        Self { segs }
    }
    /// The steps from the root.
    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }
    /// True for the empty path.
    pub fn is_root(&self) -> bool {
        self.segs.is_empty()
    }
    /// This path extended by one step.
    pub fn child(&self, seg: Segment) -> Self {
        let mut segs = self.segs.clone();
        segs.push(seg);
        Self { segs }
    }
    /// Appends a step.
    pub fn push(&mut self, seg: Segment) {
        self.segs.push(seg);
    }
    /// Removes the last step.
    pub fn pop(&mut self) -> Option<Segment> {
        self.segs.pop()
    }
    /// The path without its last step (`None` for the root).
    pub fn parent(&self) -> Option<Self> {
        let (_, init) = self.segs.split_last()?;
        Some(Self {
            segs: init.to_vec(),
        })
    }
    /// Every proper ancestor, root first.
    pub fn ancestors(&self) -> Vec<DocPath> {
        (0..self.segs.len())
            .map(|n| Self {
                segs: self.segs[..n].to_vec(),
            })
            .collect()
    }
    /// The last step.
    pub fn last(&self) -> Option<&Segment> {
        self.segs.last()
    }
    /// True when `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &DocPath) -> bool {
        self.segs.starts_with(&prefix.segs)
    }
    /// The steps after `prefix`, when `prefix` is this path or an ancestor.
    pub fn strip_prefix(&self, prefix: &DocPath) -> Option<&[Segment]> {
        self.segs.strip_prefix(prefix.segs.as_slice())
    }
}

impl fmt::Display for DocPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seg in &self.segs {
            match seg {
                Segment::Field(name) => {
                    write!(
                        f,
                        "/{}",
                        name.replace('~', "~0")
                            .replace('/', "~1")
                            .replace('[', "~2")
                    )?;
                }
                Segment::Keyed(fields) => {
                    f.write_str("[")?;
                    for (i, (name, value)) in fields.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{name}={}", crate::canon::to_canonical_string(value))?;
                    }
                    f.write_str("]")?;
                }
                Segment::Member(value) => {
                    write!(f, "[={}]", crate::canon::to_canonical_string(value))?
                }
            }
        }
        Ok(())
    }
}

impl FromStr for DocPath {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// One step of a rule pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternSegment {
    /// An object member.
    Field(String),
    /// `[*]`: any element of an array.
    AnyElement,
}

/// A path pattern of a rule: member names and `[*]`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PathPattern {
    segs: Vec<PatternSegment>,
}

impl PathPattern {
    /// Parses `/items[*]/variants`.
    pub fn parse(text: &str) -> Result<Self, PathError> {
        let path = DocPath::parse(text)?;
        Ok(Self {
            segs: path
                .segments()
                .iter()
                .map(|s| match s {
                    Segment::Field(n) => PatternSegment::Field(n.clone()),
                    _ => PatternSegment::AnyElement,
                })
                .collect(),
        })
    }
    /// The steps of the pattern.
    pub fn segments(&self) -> &[PatternSegment] {
        &self.segs
    }
    /// True when `path` matches this pattern exactly (same length).
    pub fn matches(&self, path: &DocPath) -> bool {
        self.segs.len() == path.segments().len()
            && self
                .segs
                .iter()
                .zip(path.segments())
                .all(|(p, s)| match (p, s) {
                    (PatternSegment::Field(a), Segment::Field(b)) => a == b,
                    (PatternSegment::AnyElement, Segment::Keyed(_) | Segment::Member(_)) => true,
                    _ => false,
                })
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seg in &self.segs {
            match seg {
                PatternSegment::Field(name) => {
                    write!(
                        f,
                        "/{}",
                        name.replace('~', "~0")
                            .replace('/', "~1")
                            .replace('[', "~2")
                    )?;
                }
                PatternSegment::AnyElement => f.write_str("[*]")?,
            }
        }
        Ok(())
    }
}
