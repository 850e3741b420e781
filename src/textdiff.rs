//! TEMPORARY SHIM (replaced by the textdiff branch): the text API over the Value functions.

use crate::diff::{self, Diff};
use crate::rules::KeyRules;

/// Canonical text that is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed canonical JSON at byte {offset}: {message}")]
pub struct MalformedText {
    /// Where.
    pub offset: usize,
    /// What.
    pub message: String,
}

fn parse(text: &str) -> Result<serde_json::Value, MalformedText> {
    serde_json::from_str(text).map_err(|e| MalformedText {
        offset: 0,
        message: e.to_string(),
    })
}

/// Shim.
pub fn canonicalize_text(
    text: String,
    rules: &KeyRules,
    warnings: &mut Vec<String>,
) -> Result<String, MalformedText> {
    let mut v = parse(&text)?;
    diff::canonicalize(&mut v, rules, warnings);
    Ok(crate::canon::to_canonical_string(&v))
}

/// Shim.
pub fn diff_text(
    old: Option<&str>,
    new: Option<&str>,
    rules: &KeyRules,
) -> Result<Diff, MalformedText> {
    let old = old.map(parse).transpose()?;
    let new = new.map(parse).transpose()?;
    Ok(diff::diff(old.as_ref(), new.as_ref(), rules))
}
