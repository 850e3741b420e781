//! Document paths: the one path syntax used everywhere in hist (the change log, the CLI,
//! rules, the SQL views).
//!
//! A [`DocPath`] names one place inside one JSON document. Its text form, specified here, is
//! the reference for users and for the rest of the crate. [`DocPath::parse`] and `Display`
//! are exact inverses:
//!
//! - `DocPath::parse(&p.to_string()) == Ok(p)` for every valid path `p` (see
//!   [Validity](#validity)), and
//! - `DocPath::parse(t)?.to_string() == t` for every text `t` that is already canonical
//!   (see [Canonical text](#canonical-text)); other accepted texts print in canonical form.
//!
//! # Syntax
//!
//! The empty text `""` is the root: the whole document. Any other path is a sequence of
//! steps, each starting with `/` (an object member) or `[` (an array element). Text that
//! starts with anything else is an error.
//!
//! | step | example | names | [`Segment`] |
//! |---|---|---|---|
//! | object member | `/name` | the member `name` of an object | [`Segment::Field`] |
//! | keyed element | `[id=88]` | the element of a keyed array whose field `id` is `88` | [`Segment::Keyed`] |
//! | composite key | `[ip_prefix="3.5.140.0/22",service="EC2"]` | the element matching all fields | [`Segment::Keyed`] |
//! | set element | `[="red"]` | the element of a set equal to `"red"` | [`Segment::Member`] |
//!
//! Steps follow each other directly: `/items[id=88]/variants[sku="a"]/price`. A document
//! that is itself an array starts with its selector: `[id=42]/status`.
//!
//! ## Object members
//!
//! After `/` comes the member name, which runs up to the next `/`, the next `[` or the end
//! of the text. Three characters are escaped, as in JSON Pointer (RFC 6901) plus one:
//!
//! | escape | character |
//! |---|---|
//! | `~0` | `~` |
//! | `~1` | `/` |
//! | `~2` | `[` |
//!
//! Any other `~` sequence (`~3`, a `~` at the end of a name) is an error. Because `[` is
//! always escaped, a `[` in the text always starts a selector and never belongs to a name.
//! Every other character stands for itself: `]`, `=`, `,`, `"`, `*`, spaces, control
//! characters and non-ASCII text. A name may be empty: `/` is the member `""`, and `//` is
//! the member `""` of the member `""`.
//!
//! A path made only of members whose names contain no `[` is a JSON Pointer with the same
//! meaning, character for character (`/a~1b`, `/m~0n`). JSON Pointer's positional array
//! indexes (`/foo/0`) have no counterpart: here `/0` is always the member named `"0"`.
//!
//! ## Array elements (selectors)
//!
//! Arrays are addressed by content, never by position:
//!
//! - `[field=value,field=value,…]`: a keyed element. One or more `field=value` pairs
//!   separated by commas, in the order of the array-key rule's fields. A field name may
//!   appear only once.
//! - `[=value]`: a set element, the element equal to `value`.
//!
//! A **value** is any JSON text (RFC 8259): number, string, `true`, `false`, `null`, array
//! or object. It is read by a JSON scanner, so it ends where JSON says it ends: strings may
//! contain `]`, `,`, `=`, `"` (escaped as `\"`), `/` and anything else JSON allows.
//! Values are parsed and normalized by [`crate::canon`]. Types matter: `[id=88]` (a
//! number) and `[id="88"]` (a string) name different elements.
//!
//! A **field name** is written bare or as a JSON string literal:
//!
//! - bare: one or more ASCII letters, digits, `_`, `-`, `.`, `$` or `@` (`[id=1]`,
//!   `[sku-code=2]`, `[$ref=3]`, `[a.b=4]`, `[123=5]`);
//! - quoted: any JSON string literal (`["weird=name"="x"]`, `[""=1]`, `["a b"=2]`). This
//!   is hist's extension so that every member name can be used as a key field.
//!
//! Inside the brackets, JSON whitespace (space, tab, line feed, carriage return) is allowed
//! around field names, `=`, `,` and values: `[ id = 88 ]` reads as `[id=88]`.
//!
//! After the closing `]` comes `/`, `[` or the end of the text.
//!
//! ## Grammar
//!
//! ```text
//! path      = "" / 1*step
//! step      = member / selector
//! member    = "/" *( unescaped / "~0" / "~1" / "~2" )
//! unescaped = any character except "/", "~" and "["
//! selector  = "[" ws ( keyed / set ) ws "]"
//! keyed     = pair *( ws "," ws pair )
//! pair      = field ws "=" ws json-value
//! set       = "=" ws json-value
//! field     = 1*( ALPHA / DIGIT / "_" / "-" / "." / "$" / "@" ) / json-string
//! ws        = *( " " / %x09 / %x0A / %x0D )
//! ```
//!
//! ## Canonical text
//!
//! `Display` prints, and the stored log holds, the canonical text:
//!
//! - member names escape exactly `~`, `/` and `[` (as `~0`, `~1`, `~2`), in one pass;
//! - selectors contain no whitespace;
//! - a field name is bare when it can be (see [`is_bare_field_name`]), otherwise it is the
//!   canonical JSON string of the name;
//! - values are canonical JSON ([`crate::canon::to_canonical_string`]: RFC 8785, keys
//!   sorted, canonical numbers, minimal string escaping).
//!
//! ## Validity
//!
//! [`DocPath::from_segments`] accepts any segments, but two kinds have no text form and
//! make the round trip fail: a [`Segment::Keyed`] with no fields, and one naming a field
//! twice. `Display` still prints them (`[]`, `[id=1,id=2]`); `parse` refuses that text.
//! Values are compared as they are: a [`Value`]'s numbers are always canonical, so a
//! selector value prints and parses back to an equal [`Value`].
//!
//! # Rule patterns
//!
//! A [`PathPattern`] selects paths for a rule (array keys, sets, personal data,
//! retention). It uses member steps with the same escapes, and `[*]` for "any element"
//! (whitespace is allowed inside: `[ * ]`). `""` is the root, for a document that is
//! itself an array. Concrete selectors (`[id=1]`, `[="red"]`) are not allowed in a
//! pattern. [`PathPattern::matches`] compares step by step with the same number of steps:
//! a member step matches the member of that name, `[*]` matches any keyed or set element.
//!
//! # Errors
//!
//! A [`PathError`] gives the whole text, the byte offset where reading stopped and a
//! sentence saying what is wrong, for example `expected '=' after the field name` or
//! `unknown escape '~3'; use ~0 for '~', ~1 for '/', ~2 for '['`.
use crate::canon::{self, PatternStep, Selector, Value};
use std::fmt;
use std::str::FromStr;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object member: `/name`.
    Field(String),
    /// The element of a keyed array whose key fields equal these values: `[id=88]`.
    Keyed(Vec<(String, Value)>),
    /// The element of a set equal to this value: `[="red"]`.
    Member(Value),
}

impl Segment {
    /// True for [`Segment::Keyed`] and [`Segment::Member`]: a step into an array element.
    pub fn is_element(&self) -> bool {
        !matches!(self, Self::Field(_))
    }

    /// The step as [`canon::get_text`] takes it.
    pub fn selector(&self) -> Selector<'_> {
        match self {
            Self::Field(name) => Selector::Field(name),
            Self::Keyed(key) => Selector::Keyed(key),
            Self::Member(value) => Selector::Member(value),
        }
    }
}

impl fmt::Display for Segment {
    /// Prints the step's canonical text: `/name`, `[id=88]` or `[="red"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write_member(f, name),
            Self::Keyed(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    if is_bare_field_name(name) {
                        f.write_str(name)?;
                    } else {
                        f.write_str(&canon::quoted(name))?;
                    }
                    f.write_str("=")?;
                    f.write_str(&canon::to_canonical_string(value))?;
                }
                f.write_str("]")
            }
            Self::Member(value) => write!(f, "[={}]", canon::to_canonical_string(value)),
        }
    }
}

/// True when a key field name is written bare inside a selector: it is non-empty and made
/// only of ASCII letters, digits, `_`, `-`, `.`, `$` and `@`. Other names are written as
/// JSON string literals (`["a b"=1]`, `[""=1]`).
pub fn is_bare_field_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(is_bare_byte)
}

fn is_bare_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@')
}

/// Writes `/name` with `~`, `/` and `[` escaped.
fn write_member(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    f.write_str("/")?;
    let mut rest = name;
    while let Some(i) = rest.find(['~', '/', '[']) {
        f.write_str(&rest[..i])?;
        f.write_str(match rest.as_bytes()[i] {
            b'~' => "~0",
            b'/' => "~1",
            _ => "~2",
        })?;
        rest = &rest[i + 1..];
    }
    f.write_str(rest)
}

/// A path or pattern that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid path {text:?} at byte {offset}: {message}")]
pub struct PathError {
    /// The whole text.
    pub text: String,
    /// The byte offset in `text` where the problem is.
    pub offset: usize,
    /// What is wrong, as a sentence for the user.
    pub message: String,
}

/// Where a change happened inside a document. The root is the empty path.
///
/// The text form is specified in the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DocPath {
    segs: Vec<Segment>,
}

impl DocPath {
    /// The whole document.
    pub fn root() -> Self {
        Self::default()
    }
    /// Parses the text form (see the [module documentation](self)).
    pub fn parse(text: &str) -> Result<Self, PathError> {
        let mut parser = Parser::new(text);
        let mut segs = Vec::new();
        while let Some(b) = parser.peek() {
            if segs.len() == MAX_STEPS {
                return Err(too_many_steps(text, parser.pos));
            }
            match b {
                b'/' => {
                    parser.pos += 1;
                    segs.push(Segment::Field(parser.member_name()?));
                }
                b'[' => segs.push(parser.selector()?),
                _ => return Err(parser.bad_step_start()),
            }
        }
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
    /// Every proper ancestor, root first, nearest last; empty for the root.
    /// `/a[id=1]/b` gives `""`, `/a`, `/a[id=1]`.
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
    /// The canonical text of the value at this path inside the canonical text of a
    /// document (see [`canon::get_text`]), found without parsing the document. `None`:
    /// nothing there, or the text is not canonical JSON.
    ///
    /// ```
    /// let path = hist::DocPath::parse("/items[id=2]/price").unwrap();
    /// let doc = r#"{"items":[{"id":1,"price":5},{"id":2,"price":7.5}]}"#;
    /// assert_eq!(path.get_text(doc), Some("7.5"));
    /// ```
    pub fn get_text<'a>(&self, canonical: &'a str) -> Option<&'a str> {
        canon::get_text(canonical, self.segs.iter().map(Segment::selector))
    }
    /// The pattern this path is an instance of: every selector replaced by `[*]`.
    /// `/items[id=88]/price` gives `/items[*]/price`.
    pub fn to_pattern(&self) -> PathPattern {
        PathPattern {
            segs: self
                .segs
                .iter()
                .map(|s| match s {
                    Segment::Field(name) => PatternSegment::Field(name.clone()),
                    Segment::Keyed(_) | Segment::Member(_) => PatternSegment::AnyElement,
                })
                .collect(),
        }
    }
}

impl fmt::Display for DocPath {
    /// Prints the canonical text; the root prints as the empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.segs.iter().try_for_each(|seg| write!(f, "{seg}"))
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

impl PatternSegment {
    /// The step as an [`canon::OrderTree`] takes it.
    pub fn step(&self) -> PatternStep<'_> {
        match self {
            Self::Field(name) => PatternStep::Field(name),
            Self::AnyElement => PatternStep::AnyElement,
        }
    }
}

impl fmt::Display for PatternSegment {
    /// Prints the step's canonical text: `/name` or `[*]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write_member(f, name),
            Self::AnyElement => f.write_str("[*]"),
        }
    }
}

/// A path pattern of a rule: member names and `[*]` (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PathPattern {
    segs: Vec<PatternSegment>,
}

impl PathPattern {
    /// The root pattern `""`: a document that is itself an array, or the whole document.
    pub fn root() -> Self {
        Self::default()
    }
    /// Parses `/items[*]/variants`.
    pub fn parse(text: &str) -> Result<Self, PathError> {
        let mut parser = Parser::new(text);
        let mut segs = Vec::new();
        while let Some(b) = parser.peek() {
            if segs.len() == MAX_STEPS {
                return Err(too_many_steps(text, parser.pos));
            }
            match b {
                b'/' => {
                    parser.pos += 1;
                    segs.push(PatternSegment::Field(parser.member_name()?));
                }
                b'[' => {
                    parser.wildcard()?;
                    segs.push(PatternSegment::AnyElement);
                }
                _ => return Err(parser.bad_step_start()),
            }
        }
        Ok(Self { segs })
    }
    /// Builds a pattern from segments.
    pub fn from_segments(segs: Vec<PatternSegment>) -> Self {
        Self { segs }
    }
    /// The steps from the root.
    pub fn segments(&self) -> &[PatternSegment] {
        &self.segs
    }
    /// True for the empty pattern `""`.
    pub fn is_root(&self) -> bool {
        self.segs.is_empty()
    }
    /// True when `path` matches this pattern exactly (same length).
    pub fn matches(&self, path: &DocPath) -> bool {
        self.segs.len() == path.segments().len() && self.matches_start_of(path)
    }
    /// True when this pattern matches `path` or one of its ancestors, i.e. `path` is at or
    /// below a place the pattern selects. `/users[*]/email` covers
    /// `/users[id=1]/email/domain`.
    pub fn covers(&self, path: &DocPath) -> bool {
        self.segs.len() <= path.segments().len() && self.matches_start_of(path)
    }
    fn matches_start_of(&self, path: &DocPath) -> bool {
        self.segs
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
    /// Prints the canonical text; the root prints as the empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.segs.iter().try_for_each(|seg| write!(f, "{seg}"))
    }
}

impl FromStr for PathPattern {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The most steps a path or pattern may have: a path can never reach deeper than a
/// document nests ([`crate::canon::MAX_DEPTH`]), and a longer one is refused as it is read,
/// before anything is built from it.
pub const MAX_STEPS: usize = crate::canon::MAX_DEPTH;

fn too_many_steps(text: &str, offset: usize) -> PathError {
    let shown: String = text.chars().take(40).collect();
    PathError {
        text: if shown.len() < text.len() {
            format!("{shown}…")
        } else {
            shown
        },
        offset,
        message: format!(
            "a path has at most {MAX_STEPS} steps (no document nests deeper than that)"
        ),
    }
}

const ESCAPE_HELP: &str = "use ~0 for '~', ~1 for '/', ~2 for '['";
const QUOTE_HELP: &str = "a field name with characters other than ASCII letters, digits, \
                          '_', '-', '.', '$' and '@' is written as a JSON string, \
                          e.g. [\"a b\"=1]";

/// A cursor over the text. Every byte the parser dispatches on is ASCII, so `pos` is always
/// on a character boundary.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

/// The end (one past its closing bracket) of the selector starting at `start` (a `[`) in
/// path `text`, its JSON strings and values passed over whole; `None` when it does not
/// close. Only the brackets are matched: parsing the selector checks the rest.
pub(crate) fn bracketed_end(text: &str, start: usize) -> Option<usize> {
    Parser::new(text).nested_end(start).ok()
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn error(&self, offset: usize, message: impl Into<String>) -> PathError {
        PathError {
            text: self.text.to_owned(),
            offset,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The error for a step that starts with neither `/` nor `[`.
    fn bad_step_start(&self) -> PathError {
        if self.pos == 0 {
            let mut message = String::from(
                "a path is empty or starts with '/' (an object member) or '[' (an array element)",
            );
            let first_is_alnum = self.text.chars().next().is_some_and(char::is_alphanumeric);
            if first_is_alnum && !self.text.contains(['~', '[']) {
                message.push_str(&format!("; did you mean \"/{}\"?", self.text));
            }
            self.error(0, message)
        } else {
            self.error(
                self.pos,
                "expected '/', '[' or the end of the path after ']'",
            )
        }
    }

    /// Reads a member name (after its `/`) up to the next `/`, `[` or the end.
    fn member_name(&mut self) -> Result<String, PathError> {
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest.find(['/', '[']).unwrap_or(rest.len());
        let raw = &rest[..len];
        let mut name = String::with_capacity(raw.len());
        let mut chunks = raw.split('~');
        name.push_str(chunks.next().unwrap_or_default());
        let mut offset = start + name.len();
        for chunk in chunks {
            // `offset` is the position of this chunk's `~`.
            let replacement = match chunk.as_bytes().first() {
                Some(b'0') => '~',
                Some(b'1') => '/',
                Some(b'2') => '[',
                Some(_) => {
                    let c = chunk.chars().next().unwrap_or_default();
                    return Err(self.error(offset, format!("unknown escape '~{c}'; {ESCAPE_HELP}")));
                }
                None => {
                    return Err(self.error(
                        offset,
                        format!("'~' must be followed by 0, 1 or 2; {ESCAPE_HELP}"),
                    ));
                }
            };
            name.push(replacement);
            name.push_str(&chunk[1..]);
            offset += 1 + chunk.len();
        }
        self.pos = start + len;
        Ok(name)
    }

    /// Reads a selector, starting at its `[`.
    fn selector(&mut self) -> Result<Segment, PathError> {
        let open = self.pos;
        self.pos += 1;
        self.skip_ws();
        let seg = match self.peek() {
            Some(b'=') => {
                self.pos += 1;
                let value = self.value()?;
                self.skip_ws();
                if self.peek() != Some(b']') {
                    return Err(self.error(
                        self.pos,
                        "expected ']' after the value; a set element selector [=value] holds \
                         exactly one value",
                    ));
                }
                Segment::Member(value)
            }
            Some(b']') => {
                return Err(self.error(
                    self.pos,
                    "empty selector; name an element as [field=value] or [=value]",
                ));
            }
            Some(b'*') => {
                return Err(self.error(
                    self.pos,
                    "'[*]' is a rule pattern and does not name one element; \
                     write [field=value] or [=value]",
                ));
            }
            None => {
                return Err(self.error(self.pos, "unterminated selector after '['"));
            }
            Some(_) => {
                let mut fields: Vec<(String, Value)> = Vec::new();
                loop {
                    let name_at = self.pos;
                    let name = self.field_name(fields.is_empty())?;
                    if fields.iter().any(|(n, _)| *n == name) {
                        return Err(self.error(
                            name_at,
                            format!("the field {} appears twice in the selector", quoted(&name)),
                        ));
                    }
                    self.skip_ws();
                    if self.peek() != Some(b'=') {
                        return Err(self.missing_equals(&name));
                    }
                    self.pos += 1;
                    let value = self.value()?;
                    fields.push((name, value));
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip_ws();
                        }
                        Some(b']') => break,
                        _ => {
                            return Err(self.error(self.pos, "expected ',' or ']' after the value"));
                        }
                    }
                }
                Segment::Keyed(fields)
            }
        };
        // At the closing `]`.
        debug_assert!(self.peek() == Some(b']'), "selector at {open} not closed");
        self.pos += 1;
        Ok(seg)
    }

    /// Reads `[*]` (with optional whitespace inside), starting at its `[`.
    fn wildcard(&mut self) -> Result<(), PathError> {
        self.pos += 1;
        self.skip_ws();
        if self.peek() != Some(b'*') {
            return Err(self.error(
                self.pos,
                "a rule pattern selects array elements only with [*]; concrete selectors \
                 such as [id=1] or [=\"red\"] are not allowed in a pattern",
            ));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() != Some(b']') {
            return Err(self.error(self.pos, "expected ']' after '*'"));
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads a bare or quoted field name at the cursor.
    fn field_name(&mut self, first: bool) -> Result<String, PathError> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {
                let end = self.string_end(start)?;
                let literal = &self.text[start..end];
                match canon::parse_str(literal) {
                    Ok(Value::String(name)) => {
                        self.pos = end;
                        Ok(name)
                    }
                    Ok(_) => Err(self.error(start, "the field name is not a JSON string")),
                    Err(e) => Err(self.error(
                        start,
                        format!(
                            "the field name {literal} is not a valid JSON string: {}",
                            e.message
                        ),
                    )),
                }
            }
            Some(b) if is_bare_byte(b) => {
                let rest = &self.text.as_bytes()[start..];
                let len = rest
                    .iter()
                    .position(|&b| !is_bare_byte(b))
                    .unwrap_or(rest.len());
                self.pos = start + len;
                Ok(self.text[start..start + len].to_owned())
            }
            Some(b']') if !first => Err(self.error(start, "expected a field name after ','")),
            _ => Err(self.error(
                start,
                format!(
                    "expected a field name{}; {QUOTE_HELP}",
                    if first { " or '='" } else { "" }
                ),
            )),
        }
    }

    /// The error when `=` does not follow a field name.
    fn missing_equals(&self, name: &str) -> PathError {
        if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) && self.peek() == Some(b']')
        {
            return self.error(
                self.pos,
                "expected '=' after the field name; array elements are named by content, \
                 not position: write [field=value] for a keyed array or [=value] for a set",
            );
        }
        let mut message = String::from("expected '=' after the field name");
        if self.peek().is_some_and(|b| b != b']' && b != b',') {
            message.push_str("; ");
            message.push_str(QUOTE_HELP);
        }
        self.error(self.pos, message)
    }

    /// Reads a JSON value after `=`, with optional whitespace before it.
    fn value(&mut self) -> Result<Value, PathError> {
        self.skip_ws();
        let start = self.pos;
        let end = match self.peek() {
            Some(b'"') => self.string_end(start)?,
            Some(b'[' | b'{') => self.nested_end(start)?,
            Some(b) if is_scalar_byte(b) => {
                let rest = &self.text.as_bytes()[start..];
                start
                    + rest
                        .iter()
                        .position(|&b| !is_scalar_byte(b))
                        .unwrap_or(rest.len())
            }
            Some(b'\'') => {
                return Err(self.error(
                    start,
                    "expected a JSON value after '='; JSON strings use double quotes",
                ));
            }
            _ => return Err(self.error(start, "expected a JSON value after '='")),
        };
        let literal = &self.text[start..end];
        match canon::parse_str(literal) {
            Ok(value) => {
                self.pos = end;
                Ok(value)
            }
            Err(e) => {
                let looks_like_word = literal.bytes().all(|b| b.is_ascii_alphanumeric())
                    && literal.bytes().any(|b| b.is_ascii_alphabetic());
                let message = if looks_like_word {
                    format!(
                        "the value {literal} is not JSON; write a string in double quotes: \
                         \"{literal}\""
                    )
                } else {
                    format!("the value {literal} is not valid JSON: {}", e.message)
                };
                Err(self.error(start, message))
            }
        }
    }

    /// The end (one past the closing quote) of the JSON string starting at `start` (its
    /// contents are checked when the value is parsed).
    fn string_end(&self, start: usize) -> Result<usize, PathError> {
        canon::string_end(self.text.as_bytes(), start)
            .map_err(|_| self.error(start, "unterminated string: a closing '\"' is missing"))
    }

    /// The end (one past the closing bracket) of the JSON array or object starting at
    /// `start`. Brackets are only counted; the JSON parser checks that they pair up.
    fn nested_end(&self, start: usize) -> Result<usize, PathError> {
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut i = start;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'"' => {
                    i = self.string_end(i)?;
                    continue;
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.error(
            start,
            "unterminated JSON array or object: a closing ']' or '}' is missing",
        ))
    }
}

/// Bytes that can make up a JSON number or literal (`true`, `false`, `null`). The scan
/// also takes in letters so that a bare word is reported as one value.
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// A field name as it would be written in a message.
fn quoted(name: &str) -> String {
    canon::quoted(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_escapes_in_one_pass() {
        let p = DocPath::parse("/~01/~10").expect("parses");
        assert_eq!(
            p.segments(),
            [Segment::Field("~1".into()), Segment::Field("/0".into())]
        );
        assert_eq!(p.to_string(), "/~01/~10");
    }

    #[test]
    fn error_offsets_point_at_the_problem() {
        let e = DocPath::parse("/ab~3").expect_err("bad escape");
        assert_eq!(e.offset, 3);
        let e = DocPath::parse("/a~0b~").expect_err("trailing tilde");
        assert_eq!(e.offset, 5);
        let e = DocPath::parse("/a[id 1]").expect_err("missing =");
        assert_eq!(e.offset, 6);
        let e = DocPath::parse("/a[id=1]x").expect_err("junk after ]");
        assert_eq!(e.offset, 8);
    }
}
