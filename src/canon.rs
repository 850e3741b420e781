//! Canonical JSON (STUB: being replaced by the full implementation).
use serde_json::{Number, Value};
use std::fmt;

/// Deepest nesting of arrays and objects accepted on input.
pub const MAX_DEPTH: usize = 128;

/// Where and why a JSON text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses JSON strictly: UTF-8, no duplicate member names, bounded depth, numbers normalized.
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    serde_json::from_slice(bytes).map_err(|e| ParseError {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

/// [`parse`] for text.
pub fn parse_str(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes())
}

/// A number that cannot be represented (not finite).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("number {0} is out of range")]
pub struct NumberError(pub String);

/// Rewrites every number of `value` in canonical form.
pub fn normalize(value: Value) -> Result<Value, NumberError> {
    Ok(value)
}

/// The canonical number for a double, or `None` when it is not finite.
pub fn number_from_f64(f: f64) -> Option<Number> {
    Number::from_f64(f)
}

/// Canonical text of a value.
pub fn to_canonical_string(value: &Value) -> String {
    value.to_string()
}

/// Appends the canonical bytes of a value.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    out.extend_from_slice(value.to_string().as_bytes());
}

/// Pretty (2-space) text in canonical member order with canonical numbers.
pub fn to_pretty_string(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Orders member names by UTF-16 code units, as RFC 8785 does.
pub fn compare_keys(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A blake3 digest naming content.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    /// The id of some bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }
    /// Parses 64 lowercase hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        blake3::Hash::from_hex(text)
            .ok()
            .map(|h| Self(*h.as_bytes()))
    }
    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", self.to_hex())
    }
}

/// The id of a value's canonical bytes.
pub fn hash(value: &Value) -> ObjectId {
    let mut bytes = Vec::new();
    write_canonical(value, &mut bytes);
    ObjectId::of(&bytes)
}
