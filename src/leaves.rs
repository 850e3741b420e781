//! A checkpoint's leaves: the values of its document that a change can replace where they
//! stand, each with the number of its path, so that a read whose changes only replace
//! such values patches the checkpoint's text in one pass ([`patch`]): no path parsed, no
//! tree of paths built, nothing laid out but the new values.
//!
//! A feed whose versions update thousands of figures (the CDC's vaccination data: 5,000 of
//! the 6,600 values of a 218 kB document, week after week) is read that way: the replay
//! of 10,000 changes from a checkpoint took 6.0 ms in one process, most of it reading,
//! parsing and arranging 5,800 paths, and takes 3.8 ms patched, most of that decoding the
//! changes (benches/README.md).
//!
//! The values are numbered in document order, every value counting (objects, arrays and
//! the scalars inside them; member names do not), by one scanner of the canonical text
//! ([`spans`]) that both the writer and the reader use. A leaf is a scalar, an array the
//! rules leave opaque (or whose keys are not unique), or an empty container, reached
//! through members and the elements of keyed arrays, and named by its path as a diff
//! names it. Left out: the key fields of keyed elements (replacing one changes which
//! element the paths through it name) and everything inside sets (their elements are
//! only ever added or removed).
//!
//! Why a patch is the replay: a path denotes one place in a document, whatever rules
//! named it, as long as the keys along it stay as they are. When every change of a read
//! replaces the value at a leaf's path, no change touches a key field, an ancestor or
//! anything inside a leaf, so each leaf's value after the read is the last one written
//! to it (walking backwards: the `old` of the first), and every other byte of the
//! checkpoint's text stays. Anything else (an `add`, a `remove`, a `move`, a path the
//! checkpoint does not list) is replayed as before.

use crate::canon::{self, Arrangement, ArrayMode, MalformedText, SortTexts, Val, Value};
use crate::path::{DocPath, PatternSegment, Segment};
use crate::rules::KeyRules;

/// The leaves of canonical `text`, in document order: where each starts, and its path.
pub(crate) fn leaves(text: &str, rules: &KeyRules) -> Result<Vec<(usize, String)>, MalformedText> {
    let ends = canon::checked_index(text)?;
    let mut out = Vec::new();
    let mut walk = Walk {
        rules,
        shape: Vec::new(),
        path: DocPath::root(),
        out: &mut out,
    };
    walk.value(Val::whole(text, &ends))?;
    Ok(out)
}

struct Walk<'r, 'o> {
    rules: &'r KeyRules,
    shape: Vec<PatternSegment>,
    path: DocPath,
    out: &'o mut Vec<(usize, String)>,
}

impl Walk<'_, '_> {
    fn value(&mut self, val: Val<'_>) -> Result<(), MalformedText> {
        match val.first() {
            b'{' => {
                let mut empty = true;
                for member in val.members() {
                    empty = false;
                    let member = member?;
                    self.member(&member.name()?, member.value)?;
                }
                if empty {
                    self.leaf(val);
                }
            }
            b'[' => {
                let items = val.elements().collect::<Result<Vec<_>, _>>()?;
                let mode = self.rules.mode(&self.shape);
                let unique = !items.is_empty()
                    && mode != ArrayMode::Opaque
                    && SortTexts::of(&items, &mode)?.arrangement() == Arrangement::InOrder;
                match mode {
                    // A diff replaces such an array whole.
                    _ if !unique => self.leaf(val),
                    ArrayMode::Keyed(fields) => {
                        let quoted = canon::quote_all(fields);
                        self.shape.push(PatternSegment::AnyElement);
                        for item in items.into_iter().filter(|i| i.first() == b'{') {
                            let key = fields
                                .iter()
                                .zip(canon::key_values(item, &quoted)?)
                                .map(|(f, v)| {
                                    Ok((f.clone(), v.map_or(Ok(Value::Null), Val::parse)?))
                                })
                                .collect::<Result<Vec<_>, MalformedText>>()?;
                            self.path.push(Segment::Keyed(key));
                            for member in item.members() {
                                let member = member?;
                                let name = member.name()?;
                                if !fields.iter().any(|f| *f == name) {
                                    self.member(&name, member.value)?;
                                }
                            }
                            self.path.pop();
                        }
                        self.shape.pop();
                    }
                    // A set's elements are added and removed, never replaced.
                    _ => {}
                }
            }
            _ => self.leaf(val),
        }
        Ok(())
    }

    fn member(&mut self, name: &str, value: Val<'_>) -> Result<(), MalformedText> {
        self.shape.push(PatternSegment::Field(name.to_owned()));
        self.path.push(Segment::Field(name.to_owned()));
        self.value(value)?;
        self.path.pop();
        self.shape.pop();
        Ok(())
    }

    fn leaf(&mut self, val: Val<'_>) {
        self.out.push((val.offset(), self.path.to_string()));
    }
}

/// Every value of canonical `text` in document order, numbered from 0 (the document
/// itself): `want(number, start)` says which to return, as (number, start, end). `None`
/// when the text is not well formed.
pub(crate) fn spans(
    text: &str,
    mut want: impl FnMut(u32, usize) -> bool,
) -> Option<Vec<(u32, usize, usize)>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Per open container: where its entry in `out` is, when it was wanted.
    let mut open: Vec<Option<usize>> = Vec::new();
    let (mut n, mut i) = (0u32, 0usize);
    while let Some(&c) = b.get(i) {
        match c {
            b'{' | b'[' => {
                open.push(want(n, i).then(|| {
                    out.push((n, i, i));
                    out.len() - 1
                }));
                n = n.checked_add(1)?;
                i += 1;
            }
            b'}' | b']' => {
                if let Some(entry) = open.pop()? {
                    out.get_mut(entry)?.2 = i + 1;
                }
                i += 1;
            }
            b',' | b':' => i += 1,
            _ => {
                let end = match c {
                    b'"' => canon::string_end(b, i).ok()?,
                    _ => b[i..]
                        .iter()
                        .position(|&c| matches!(c, b',' | b']' | b'}'))
                        .map_or(b.len(), |k| i + k),
                };
                // A member's name is not a value.
                if c != b'"' || b.get(end) != Some(&b':') {
                    if want(n, i) {
                        out.push((n, i, end));
                    }
                    n = n.checked_add(1)?;
                }
                i = end;
            }
        }
    }
    open.is_empty().then_some(out)
}

/// The leaves of canonical `text` as (number, path) pairs, in document order: [`leaves`]
/// numbered by [`spans`].
pub(crate) fn numbered(text: &str, rules: &KeyRules) -> Result<Vec<(u32, String)>, MalformedText> {
    let found = leaves(text, rules)?;
    let mut next = found.iter().map(|(start, _)| *start).peekable();
    let numbers =
        spans(text, |_, start| next.next_if_eq(&start).is_some()).ok_or_else(|| MalformedText {
            offset: 0,
            message: "a value could not be numbered".to_owned(),
        })?;
    if numbers.len() != found.len() {
        return Err(MalformedText {
            offset: 0,
            message: "a leaf could not be numbered".to_owned(),
        });
    }
    Ok(numbers
        .into_iter()
        .zip(found)
        .map(|((n, _, _), (_, path))| (n, path))
        .collect())
}

/// `text` with the values numbered `edits` replaced by the texts given (each number once,
/// in any order); `None` when a number is past the text's values or the text is not well
/// formed.
pub(crate) fn patch(text: &str, mut edits: Vec<(u32, &str)>) -> Option<String> {
    edits.sort_unstable_by_key(|e| e.0);
    let mut next = edits.iter().map(|e| e.0).peekable();
    let found = spans(text, |n, _| next.next_if_eq(&n).is_some())?;
    if found.len() != edits.len() {
        return None;
    }
    let grown: usize = edits.iter().map(|e| e.1.len()).sum();
    let mut out = String::with_capacity(text.len() + grown);
    let mut at = 0;
    for ((_, start, end), (_, value)) in found.into_iter().zip(&edits) {
        out.push_str(text.get(at..start)?);
        out.push_str(value);
        at = end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::Map;
    use crate::rules::RuleKind;
    use proptest::prelude::*;

    fn rules() -> KeyRules {
        crate::rules::declared(&[
            ("/rows", RuleKind::ArrayKey(vec!["id".into()])),
            ("/rows[*]/tags", RuleKind::Set),
            ("/s", RuleKind::Set),
        ])
    }

    #[test]
    fn leaves_are_named_as_a_diff_names_them() {
        let text = r#"{"a":1,"e":{},"l":[3,1],"rows":[{"id":1,"tags":["t"],"v":"x","w":[]},{"id":2,"v":null}],"s":["q"]}"#;
        let found = numbered(text, &rules()).unwrap();
        let paths: Vec<(u32, &str)> = found.iter().map(|(n, p)| (*n, p.as_str())).collect();
        assert_eq!(
            paths,
            [
                (1, "/a"),
                (2, "/e"),
                (3, "/l"),
                (11, "/rows[id=1]/v"),
                (12, "/rows[id=1]/w"),
                (15, "/rows[id=2]/v"),
            ]
        );
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-50i64..50).prop_map(Value::from),
            "[a-c\"\\\\é]{0,3}".prop_map(|s| Value::from(s.as_str())),
        ]
    }

    /// Documents with members, nested objects, opaque arrays, a keyed array (its keys
    /// unique or not), sets inside its elements and at the top.
    fn document() -> impl Strategy<Value = Value> {
        let members = || prop::collection::btree_map("[a-d]", scalar(), 0..4);
        let row = (0i64..6, members(), prop::collection::vec(scalar(), 0..3)).prop_map(
            |(id, m, tags)| {
                let mut m: Map = m.into_iter().collect();
                m.insert("id".into(), Value::from(id));
                m.insert("tags".into(), Value::Array(tags));
                Value::Object(m)
            },
        );
        (
            members(),
            members(),
            prop::collection::vec(row, 0..5),
            prop::collection::vec(scalar(), 0..3),
            prop::collection::vec(scalar(), 0..3),
        )
            .prop_map(|(top, inner, rows, l, s)| {
                let mut m: Map = top.into_iter().collect();
                m.insert("o".into(), Value::Object(inner.into_iter().collect()));
                m.insert("rows".into(), Value::Array(rows));
                m.insert("l".into(), Value::Array(l));
                m.insert("s".into(), Value::Array(s));
                Value::Object(m)
            })
    }

    fn canonical(mut doc: Value) -> String {
        crate::diff::canonicalize(&mut doc, &rules(), &mut Vec::new());
        canon::to_canonical_string(&doc)
    }

    proptest! {
        /// Each leaf's number gives the very bytes its path finds in the text.
        #[test]
        fn each_leaf_is_where_its_path_leads(doc in document()) {
            let text = canonical(doc);
            let found = numbered(&text, &rules()).unwrap();
            let mut wanted = found.iter().map(|(n, _)| *n).peekable();
            let at = spans(&text, |n, _| wanted.next_if_eq(&n).is_some()).unwrap();
            prop_assert_eq!(at.len(), found.len());
            for ((n, path), (m, start, end)) in found.iter().zip(at) {
                prop_assert_eq!(*n, m);
                let slice = DocPath::parse(path).unwrap().get_text(&text).unwrap();
                let offset = slice.as_ptr() as usize - text.as_ptr() as usize;
                prop_assert_eq!((offset, offset + slice.len()), (start, end), "{}", path);
            }
        }

        /// Patching leaves gives the document that setting their paths on the tree gives.
        #[test]
        fn a_patch_is_setting_the_paths(doc in document(), picks in prop::collection::vec((any::<prop::sample::Index>(), scalar()), 0..6)) {
            let text = canonical(doc);
            let found = numbered(&text, &rules()).unwrap();
            prop_assume!(!found.is_empty());
            let mut edits = std::collections::BTreeMap::new();
            for (pick, value) in picks {
                let (n, path) = &found[pick.index(found.len())];
                edits.insert(*n, (path.clone(), canon::to_canonical_string(&value), value));
            }
            let patched = patch(&text, edits.iter().map(|(n, (_, t, _))| (*n, t.as_str())).collect()).unwrap();
            let mut expected = Some(canon::parse_str(&text).unwrap());
            for (path, _, value) in edits.into_values() {
                crate::diff::set_at(&mut expected, &DocPath::parse(&path).unwrap(), value).unwrap();
            }
            prop_assert_eq!(patched, canon::to_canonical_string(&expected.unwrap()));
        }
    }

    #[test]
    fn a_patch_past_the_values_is_refused() {
        assert_eq!(patch("[1,2]", vec![(2, "5")]).as_deref(), Some("[1,5]"));
        assert_eq!(patch("[1,2]", vec![(3, "5")]), None);
        assert_eq!(patch("[1,2", vec![(1, "5")]), None);
    }
}
