//! Comparing a document at two moments: [`Repo::diff`], and the result as an RFC 6902
//! JSON Patch ([`DocDiff::to_json_patch`]).

use crate::canon::Value;
use crate::error::{Error, Result};
use crate::model::Change;
use crate::repo::Repo;
use crate::retention::Compaction;
use crate::store::parse_stored;
use crate::time::When;

/// The changes to one document between two moments ([`Repo::diff`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DocDiff {
    /// The document's key.
    pub key: String,
    /// The document at the first moment, as canonical text (`None`: absent then).
    pub from: Option<String>,
    /// The changes that turn the document at the first moment into the document at the
    /// second, in document order (paths in hist's syntax, values in full).
    pub changes: Vec<Change>,
    /// Arrays compared as one opaque value because their keys are not unique, one
    /// sentence each.
    pub warnings: Vec<String>,
    /// The spans compacted by `gc` that either read falls into (empty: both reads are
    /// exact). Inside one, the values at its path are the compacted ones.
    pub compacted: Vec<Compaction>,
}

impl Repo {
    /// The changes to the document under `key` from the moment `from` to the moment `to`
    /// (`None`: now). Both versions are read in one read transaction, as canonical text,
    /// and compared as text (no tree of either is built), with `key`'s array rules.
    pub fn diff(&self, key: &str, from: When, to: Option<When>) -> Result<DocDiff> {
        self.snapshot(|| {
            let start = self.as_of_text(key, from)?;
            let mut compacted = start.compacted;
            let end = match to {
                Some(when) => {
                    let end = self.as_of_text(key, when)?;
                    for c in end.compacted {
                        if !compacted.contains(&c) {
                            compacted.push(c);
                        }
                    }
                    end.text
                }
                None => self.current_text(key)?,
            };
            let rules = self.key_rules(key);
            let d = crate::textdiff::diff_text(start.text.as_deref(), end.as_deref(), &rules)
                .map_err(|e| {
                    Error::Corrupt(format!("cannot compare two versions of {key}: {e}"))
                })?;
            Ok(DocDiff {
                key: key.to_owned(),
                from: start.text,
                changes: d.changes,
                warnings: d.warnings,
                compacted,
            })
        })
    }
}

impl DocDiff {
    /// The changes as an RFC 6902 JSON Patch (its operations, in order), with positional
    /// JSON Pointers valid against the document at the first moment: applied to it with
    /// any RFC 6902 implementation, they give the document at the second. A recorded
    /// rename is a `move`.
    pub fn to_json_patch(&self) -> Result<Vec<Value>> {
        let start = self.from.as_deref().map(parse_stored).transpose()?;
        crate::diff::to_json_patch(start.as_ref(), &self.changes).map_err(|source| Error::Apply {
            key: self.key.clone(),
            source,
        })
    }
}
