//! JSON Patch (RFC 6902) on hist's [`Value`]s: what `hist apply` and
//! [`Txn::patch`](crate::Txn::patch) take.
//!
//! A [`Patch`] is read from a JSON value ([`Patch::from_value`]): an array of operations
//! `{"op": "add" | "remove" | "replace" | "move" | "copy" | "test", "path": …, …}`, each
//! path (and `from`) a JSON Pointer (RFC 6901). Members an operation does not use are
//! ignored. [`Patch::apply`] applies the operations in order, all or none.
//!
//! The semantics are RFC 6902's, as the `json-patch` crate implements them (hist used it
//! before it had its own value type), messages included: `add` into an object sets the
//! member (replacing it), into an array inserts at the index (`-`: at the end); `remove`
//! and `replace` need a value there; `move` cannot move a value into itself; `test`
//! compares values as JSON (numbers by value, since hist's numbers are canonical). The root
//! (`""`) can be added (replacing the whole document) and replaced, not removed.

use crate::canon::{Value, pointer_tokens};
use std::borrow::Cow;

/// An RFC 6902 patch: operations applied in order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Patch(pub Vec<Operation>);

/// One operation of a [`Patch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Sets the value at `path` (an array element is inserted).
    Add {
        /// Where.
        path: Pointer,
        /// What.
        value: Value,
    },
    /// Removes the value at `path`.
    Remove {
        /// Where.
        path: Pointer,
    },
    /// Replaces the value at `path`, which must exist.
    Replace {
        /// Where.
        path: Pointer,
        /// The new value.
        value: Value,
    },
    /// Removes the value at `from` and adds it at `path`.
    Move {
        /// Where the value is.
        from: Pointer,
        /// Where it goes.
        path: Pointer,
    },
    /// Adds a copy of the value at `from` at `path`.
    Copy {
        /// Where the value is.
        from: Pointer,
        /// Where the copy goes.
        path: Pointer,
    },
    /// Checks that the value at `path` equals `value` (else the patch fails).
    Test {
        /// Where.
        path: Pointer,
        /// The value expected there.
        value: Value,
    },
}

impl Operation {
    /// The operation's `path`.
    pub fn path(&self) -> &Pointer {
        match self {
            Operation::Add { path, .. }
            | Operation::Remove { path }
            | Operation::Replace { path, .. }
            | Operation::Move { path, .. }
            | Operation::Copy { path, .. }
            | Operation::Test { path, .. } => path,
        }
    }
}

/// A JSON Pointer (RFC 6901): `""` (the whole document) or `/`-separated reference tokens,
/// `~1` standing for `/` and `~0` for `~`. Held as its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Pointer(String);

impl Pointer {
    /// Checks a pointer's text.
    pub fn parse(text: &str) -> Result<Self, PatchParseError> {
        if !text.is_empty() && !text.starts_with('/') {
            return Err(PatchParseError(
                "json pointer failed to parse; does not start with a slash ('/') and is not empty"
                    .to_owned(),
            ));
        }
        let b = text.as_bytes();
        for (i, _) in text.match_indices('~') {
            if !matches!(b.get(i + 1), Some(b'0' | b'1')) {
                let token = text.get(..i).and_then(|t| t.rfind('/')).unwrap_or(0);
                return Err(PatchParseError(format!(
                    "json pointer failed to parse; the first token in the partial-pointer \
                     starting at offset {token} is malformed"
                )));
            }
        }
        Ok(Self(text.to_owned()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The pointer to the parent, and the last reference token (unescaped); `None` for the
    /// root.
    fn split_last(&self) -> Option<(&str, Cow<'_, str>)> {
        let i = self.0.rfind('/')?;
        let parent = self.0.get(..i)?;
        let last = pointer_tokens(self.0.get(i..)?)?.next()?;
        Some((parent, last))
    }

    /// True when this pointer is `other` or inside it, token by token.
    fn starts_with(&self, other: &Pointer) -> bool {
        self.0.starts_with(&other.0)
            && (self.0.len() == other.0.len()
                || self.0.as_bytes().get(other.0.len()) == Some(&b'/'))
    }
}

impl std::fmt::Display for Pointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A value that is not an RFC 6902 patch. The message is the one `hist apply` always gave
/// (`missing field `path``, `unknown variant `spam`, …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatchParseError(pub String);

/// Why an operation of a patch could not be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchErrorKind {
    /// A `test` found another value.
    #[error("value did not match")]
    TestFailed,
    /// Nothing at a `move`'s or `copy`'s `from`.
    #[error("\"from\" path is invalid")]
    InvalidFromPointer,
    /// The `path` does not lead where the operation needs it to.
    #[error("path is invalid")]
    InvalidPointer,
    /// A `move` into the value it moves.
    #[error("cannot move the value inside itself")]
    CannotMoveInsideItself,
}

/// An operation of a patch that could not be applied; the document is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation '/{operation}' failed at path '{path}': {kind}")]
pub struct PatchError {
    /// Index of the operation, from 0.
    pub operation: usize,
    /// Its `path`.
    pub path: Pointer,
    /// What went wrong.
    pub kind: PatchErrorKind,
}

/// How a value is named in messages about its type (as `serde` names it).
fn unexpected(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(_) => "number".to_owned(),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    }
}

/// A number as `serde` names it where a string was expected.
fn unexpected_scalar(v: &Value) -> String {
    match (v.as_i64(), v.as_u64(), v.as_f64()) {
        (Some(i), _, _) => format!("integer `{i}`"),
        (None, Some(u), _) => format!("integer `{u}`"),
        (None, None, Some(f)) if v.is_number() => format!("floating point `{f:?}`"),
        _ => unexpected(v),
    }
}

const OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

impl Patch {
    /// Reads a patch from its JSON value.
    ///
    /// ```
    /// use hist::canon::{Value, parse_str};
    /// use hist::patch::Patch;
    /// let patch = Patch::from_value(&parse_str(r#"[{"op":"add","path":"/b","value":2}]"#).unwrap()).unwrap();
    /// let mut doc = parse_str(r#"{"a":1}"#).unwrap();
    /// patch.apply(&mut doc).unwrap();
    /// assert_eq!(doc.to_string(), r#"{"a":1,"b":2}"#);
    /// assert!(Patch::from_value(&parse_str(r#"[{"op":"spam","path":"/a"}]"#).unwrap()).is_err());
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, PatchParseError> {
        let fail = |message: String| Err(PatchParseError(message));
        let Value::Array(items) = value else {
            return fail(format!(
                "invalid type: {}, expected a sequence",
                unexpected(value)
            ));
        };
        let mut ops = Vec::with_capacity(items.len());
        for item in items {
            let members = match item {
                Value::Object(members) => members,
                Value::Array(a) if a.is_empty() => return fail("missing field `op`".to_owned()),
                other => {
                    return fail(format!(
                        "invalid type: {}, expected internally tagged enum PatchOperation",
                        unexpected_scalar(other)
                    ));
                }
            };
            let op = match members.get("op") {
                None => return fail("missing field `op`".to_owned()),
                Some(Value::String(op)) => op.as_str(),
                Some(other) => {
                    return fail(format!(
                        "invalid type: {}, expected variant identifier",
                        unexpected(other)
                    ));
                }
            };
            if !OPS.contains(&op) {
                return fail(format!(
                    "unknown variant `{op}`, expected one of `add`, `remove`, `replace`, \
                     `move`, `copy`, `test`"
                ));
            }
            let pointer = |name: &str| -> Result<Option<Pointer>, PatchParseError> {
                match members.get(name) {
                    None => Ok(None),
                    Some(Value::String(text)) => Pointer::parse(text).map(Some),
                    Some(other) => Err(PatchParseError(format!(
                        "invalid type: {}, expected a string",
                        unexpected_scalar(other)
                    ))),
                }
            };
            let missing = |name: &str| PatchParseError(format!("missing field `{name}`"));
            // Members are read in name order (`from`, `path`, `value`), then a missing one
            // is reported in the operation's own order.
            let from = if matches!(op, "move" | "copy") {
                pointer("from")?
            } else {
                None
            };
            let path = pointer("path")?;
            let value = members.get("value").cloned();
            let with_value = |make: fn(Pointer, Value) -> Operation| {
                let path = path.clone().ok_or_else(|| missing("path"))?;
                let value = value.clone().ok_or_else(|| missing("value"))?;
                Ok::<_, PatchParseError>(make(path, value))
            };
            let with_from = |make: fn(Pointer, Pointer) -> Operation| {
                let from = from.clone().ok_or_else(|| missing("from"))?;
                let path = path.clone().ok_or_else(|| missing("path"))?;
                Ok::<_, PatchParseError>(make(from, path))
            };
            ops.push(match op {
                "add" => with_value(|path, value| Operation::Add { path, value })?,
                "replace" => with_value(|path, value| Operation::Replace { path, value })?,
                "test" => with_value(|path, value| Operation::Test { path, value })?,
                "move" => with_from(|from, path| Operation::Move { from, path })?,
                "copy" => with_from(|from, path| Operation::Copy { from, path })?,
                _ => Operation::Remove {
                    path: path.ok_or_else(|| missing("path"))?,
                },
            });
        }
        Ok(Self(ops))
    }

    /// Applies the operations to `doc` in order. All or none: on an error, `doc` is left as
    /// it was.
    pub fn apply(&self, doc: &mut Value) -> Result<(), PatchError> {
        let mut work = doc.clone();
        for (operation, op) in self.0.iter().enumerate() {
            apply_one(&mut work, op).map_err(|kind| PatchError {
                operation,
                path: op.path().clone(),
                kind,
            })?;
        }
        *doc = work;
        Ok(())
    }
}

fn apply_one(doc: &mut Value, op: &Operation) -> Result<(), PatchErrorKind> {
    use PatchErrorKind::{CannotMoveInsideItself, InvalidFromPointer, InvalidPointer, TestFailed};
    match op {
        Operation::Add { path, value } => add(doc, path, value.clone()),
        Operation::Remove { path } => remove(doc, path).map(drop),
        Operation::Replace { path, value } => {
            *doc.pointer_mut(path.as_str()).ok_or(InvalidPointer)? = value.clone();
            Ok(())
        }
        Operation::Move { from, path } => {
            if path.starts_with(from) && path.0.len() != from.0.len() {
                return Err(CannotMoveInsideItself);
            }
            let value = remove(doc, from).map_err(|e| match e {
                InvalidPointer => InvalidFromPointer,
                e => e,
            })?;
            add(doc, path, value)
        }
        Operation::Copy { from, path } => {
            let value = doc
                .pointer(from.as_str())
                .ok_or(InvalidFromPointer)?
                .clone();
            add(doc, path, value)
        }
        Operation::Test { path, value } => {
            let found = doc.pointer(path.as_str()).ok_or(InvalidPointer)?;
            if found == value {
                Ok(())
            } else {
                Err(TestFailed)
            }
        }
    }
}

/// An array index of a pointer: `-` (past the end) or digits without a leading zero.
enum Index {
    Next,
    At(usize),
}

fn index(token: &str) -> Result<Index, PatchErrorKind> {
    if token == "-" {
        return Ok(Index::Next);
    }
    crate::canon::array_index(token)
        .map(Index::At)
        .ok_or(PatchErrorKind::InvalidPointer)
}

fn add(doc: &mut Value, path: &Pointer, value: Value) -> Result<(), PatchErrorKind> {
    let Some((parent, last)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    match doc.pointer_mut(parent) {
        Some(Value::Object(members)) => {
            members.insert(last.into_owned(), value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            let at = match index(&last)? {
                Index::Next => items.len(),
                Index::At(i) if i <= items.len() => i,
                Index::At(_) => return Err(PatchErrorKind::InvalidPointer),
            };
            items.insert(at, value);
            Ok(())
        }
        _ => Err(PatchErrorKind::InvalidPointer),
    }
}

fn remove(doc: &mut Value, path: &Pointer) -> Result<Value, PatchErrorKind> {
    let (parent, last) = path.split_last().ok_or(PatchErrorKind::InvalidPointer)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(members)) => members
            .remove(last.as_ref())
            .ok_or(PatchErrorKind::InvalidPointer),
        Some(Value::Array(items)) => match index(&last)? {
            Index::At(i) if i < items.len() => Ok(items.remove(i)),
            _ => Err(PatchErrorKind::InvalidPointer),
        },
        _ => Err(PatchErrorKind::InvalidPointer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::parse_str;

    fn patch(text: &str) -> Result<Patch, String> {
        Patch::from_value(&parse_str(text).unwrap()).map_err(|e| e.0)
    }

    /// The messages of the `json-patch` crate, which `hist apply` printed before.
    #[test]
    fn refusals_read_as_they_always_have() {
        for (text, message) in [
            (r#"{"op":"add"}"#, "invalid type: map, expected a sequence"),
            ("7", "invalid type: number, expected a sequence"),
            (r#""s""#, "invalid type: string \"s\", expected a sequence"),
            (
                "[1]",
                "invalid type: integer `1`, expected internally tagged enum PatchOperation",
            ),
            (
                "[null]",
                "invalid type: null, expected internally tagged enum PatchOperation",
            ),
            ("[{}]", "missing field `op`"),
            (
                r#"[{"op":1,"path":"/a"}]"#,
                "invalid type: number, expected variant identifier",
            ),
            (
                r#"[{"op":"spam","path":"/a"}]"#,
                "unknown variant `spam`, expected one of `add`, `remove`, `replace`, `move`, `copy`, `test`",
            ),
            (r#"[{"op":"add","path":"/a"}]"#, "missing field `value`"),
            (r#"[{"op":"add","value":1}]"#, "missing field `path`"),
            (r#"[{"op":"move","path":"/a"}]"#, "missing field `from`"),
            (r#"[{"op":"copy","from":"/a"}]"#, "missing field `path`"),
            (
                r#"[{"op":"add","path":1,"value":1}]"#,
                "invalid type: integer `1`, expected a string",
            ),
            (
                r#"[{"op":"add","path":1.5,"value":1}]"#,
                "invalid type: floating point `1.5`, expected a string",
            ),
            (
                r#"[{"op":"add","path":"a","value":1}]"#,
                "json pointer failed to parse; does not start with a slash ('/') and is not empty",
            ),
            (
                r#"[{"op":"add","path":"/x/a~","value":1}]"#,
                "json pointer failed to parse; the first token in the partial-pointer starting at offset 2 is malformed",
            ),
        ] {
            assert_eq!(patch(text), Err(message.to_owned()), "{text}");
        }
        assert!(patch(r#"[{"op":"remove","path":"/a","value":1,"from":7}]"#).is_ok());
    }

    #[test]
    fn failures_name_the_operation_and_leave_the_document() {
        let doc = parse_str(r#"{"a":{"b":[1,2]},"c":3}"#).unwrap();
        for (text, message) in [
            (
                r#"[{"op":"add","path":"/x/y","value":1}]"#,
                "operation '/0' failed at path '/x/y': path is invalid",
            ),
            (
                r#"[{"op":"add","path":"/a/b/5","value":1}]"#,
                "operation '/0' failed at path '/a/b/5': path is invalid",
            ),
            (
                r#"[{"op":"remove","path":"/a/b/-"}]"#,
                "operation '/0' failed at path '/a/b/-': path is invalid",
            ),
            (
                r#"[{"op":"move","from":"/a","path":"/a/z"}]"#,
                "operation '/0' failed at path '/a/z': cannot move the value inside itself",
            ),
            (
                r#"[{"op":"move","from":"/q","path":"/z"}]"#,
                "operation '/0' failed at path '/z': \"from\" path is invalid",
            ),
            (
                r#"[{"op":"copy","from":"/q","path":"/z"}]"#,
                "operation '/0' failed at path '/z': \"from\" path is invalid",
            ),
            (
                r#"[{"op":"add","path":"/n","value":1},{"op":"test","path":"/c","value":4}]"#,
                "operation '/1' failed at path '/c': value did not match",
            ),
            (
                r#"[{"op":"remove","path":""}]"#,
                "operation '/0' failed at path '': path is invalid",
            ),
            (
                r#"[{"op":"replace","path":"/zz","value":1}]"#,
                "operation '/0' failed at path '/zz': path is invalid",
            ),
            (
                r#"[{"op":"add","path":"/a/b/01","value":1}]"#,
                "operation '/0' failed at path '/a/b/01': path is invalid",
            ),
        ] {
            let mut d = doc.clone();
            let e = patch(text).unwrap().apply(&mut d).unwrap_err();
            assert_eq!(e.to_string(), message, "{text}");
            assert_eq!(d, doc, "{text}");
        }
        let mut d = doc.clone();
        patch(r#"[{"op":"move","from":"/a/b/0","path":"/a/b/-"},{"op":"copy","from":"/c","path":"/a/c~1d"},{"op":"test","path":"/a/c~1d","value":3.0}]"#)
            .unwrap()
            .apply(&mut d)
            .unwrap();
        assert_eq!(d.to_string(), r#"{"a":{"b":[2,1],"c/d":3},"c":3}"#);
    }
}
