//! Structural diff, apply and navigation.
//!
//! [`diff`] turns two versions of a document into a minimal list of [`Change`]s: objects
//! are compared member by member, keyed arrays element by element (matched by key), sets
//! element by element, and every other array as one opaque value. A new subtree is one
//! `add` carrying the whole value; a type change is one `replace`; unchanged subtrees
//! produce nothing.
//!
//! [`apply`] replays a change onto a document; inverting a change ([`Change::inverse`]) and
//! applying it undoes it. Both directions are what as-of reads are made of.
//!
//! [`canonicalize`] puts keyed arrays and sets in their canonical order (by the canonical
//! text of the element's key, or of the element itself), so a reordered list is unchanged.

use crate::canon::{self, Arrangement, ArrayMode, Map, SortText, Value};
use crate::model::{Change, Op};
use crate::path::{DocPath, PatternSegment, Segment};
use crate::rules::KeyRules;

/// The changes between two versions, and what the diff had to warn about.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diff {
    /// The changes, in document order.
    pub changes: Vec<Change>,
    /// Arrays that had to be treated as opaque (keys not unique), one sentence each.
    pub warnings: Vec<String>,
}

/// Why a change or a write could not be applied to a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Nothing at the path (or its parent) where something was expected.
    #[error("nothing at {0}")]
    Missing(String),
    /// Something at the path where nothing was expected.
    #[error("a value already exists at {0}")]
    Exists(String),
    /// The path steps into a value of the wrong type.
    #[error("cannot go through {path}: it holds {found}, not {expected}")]
    WrongType {
        /// Where.
        path: String,
        /// What the step needs.
        expected: &'static str,
        /// What is there.
        found: &'static str,
    },
    /// A set element was written with a value other than itself.
    #[error("the set element {0} can only hold its own value")]
    SetValue(String),
    /// A `move` change whose `old` is not a path (as a JSON string).
    #[error("the move to {0} does not name the path it moved from")]
    BadMove(String),
}

/// A JSON type name, for messages ([`Value::type_name`]).
pub fn type_name(v: &Value) -> &'static str {
    v.type_name()
}

/// The key of a keyed-array element: the values of `fields` (missing fields are `null`).
pub fn element_key(elem: &Value, fields: &[String]) -> Vec<(String, Value)> {
    fields
        .iter()
        .map(|f| (f.clone(), elem.get(f).cloned().unwrap_or(Value::Null)))
        .collect()
}

/// The index of the element `key` names: a binary search when the array is in canonical
/// order (as keyed arrays are wherever a keyed change was recorded), a scan otherwise.
fn find_keyed(items: &[Value], key: &[(String, Value)]) -> Option<usize> {
    if items.len() > 16 {
        match search_keyed(items, key) {
            Ok(i) => return Some(i),
            Err(_) => {
                let fields: Vec<String> = key.iter().map(|(f, _)| f.clone()).collect();
                if keyed_sorted(items, &fields) {
                    return None;
                }
            }
        }
    }
    items.iter().position(|e| key_matches(e, key))
}

/// Binary search of a keyed array assumed to be in canonical order: `Ok` with the index of
/// the element `key` names, or `Err` with where it would go.
fn search_keyed(items: &[Value], key: &[(String, Value)]) -> Result<usize, usize> {
    let fields: Vec<String> = key.iter().map(|(f, _)| f.clone()).collect();
    let mode = ArrayMode::Keyed(&fields);
    let target = key_sort_text(key);
    let mut buf = Vec::new();
    let i = items.partition_point(|e| {
        canon::write_sort_text(e, &mode, &mut buf);
        buf < target
    });
    if items.get(i).is_some_and(|e| key_matches(e, key)) {
        Ok(i)
    } else {
        Err(i)
    }
}

/// True when the elements of `items` are in canonical keyed order (strictly ascending).
fn keyed_sorted(items: &[Value], fields: &[String]) -> bool {
    let mode = ArrayMode::Keyed(fields);
    let (mut prev, mut cur) = (Vec::new(), Vec::new());
    for (n, e) in items.iter().enumerate() {
        canon::write_sort_text(e, &mode, &mut cur);
        if n > 0 && prev >= cur {
            return false;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    true
}

/// True when `elem` is the element that `key` names.
fn key_matches(elem: &Value, key: &[(String, Value)]) -> bool {
    key.iter()
        .all(|(f, v)| elem.get(f).unwrap_or(&Value::Null) == v)
}

/// The sort text of the element `key` names (see [`canon::order`]).
fn key_sort_text(key: &[(String, Value)]) -> Vec<u8> {
    let mut out = Vec::new();
    canon::write_key_values(key.iter().map(|(_, v)| v), &mut out);
    out
}

/// The sort text of every element of an ordered array.
fn sort_texts(items: &[Value], mode: &ArrayMode<'_>) -> Vec<Vec<u8>> {
    items
        .iter()
        .map(|e| {
            let mut text = Vec::new();
            canon::write_sort_text(e, mode, &mut text);
            text
        })
        .collect()
}

/// True when the elements of an ordered array have distinct sort texts (keys, or set
/// elements, unique): only then is it diffed element by element.
pub(crate) fn unique_elements(items: &[Value], mode: &ArrayMode<'_>) -> bool {
    arrange_texts(&sort_texts(items, mode)) != Arrangement::NotUnique
}

/// The canonical order of elements whose sort texts are `texts`.
fn arrange_texts(texts: &[Vec<u8>]) -> Arrangement {
    canon::arrange(texts.len(), |i| {
        SortText::whole(texts.get(i).map_or(&[][..], Vec::as_slice))
    })
}

/// Orders keyed arrays and sets of `doc` canonically, in place. Arrays whose keys are not
/// unique are left as they are (opaque) and reported in `warnings`.
///
/// The order is bottom-up: the elements of an array are put in canonical form before they
/// are compared, so that equal elements are found equal and ordering twice changes nothing.
/// A warning inside an element names the element as it is once canonical.
pub fn canonicalize(doc: &mut Value, rules: &KeyRules, warnings: &mut Vec<String>) {
    let mut shape = Vec::new();
    let mut path = DocPath::root();
    canonicalize_at(doc, rules, &mut shape, &mut path, warnings);
}

fn canonicalize_at(
    value: &mut Value,
    rules: &KeyRules,
    shape: &mut Vec<PatternSegment>,
    path: &mut DocPath,
    warnings: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            if !rules.any_below(shape) {
                return;
            }
            for (name, child) in map.iter_mut() {
                shape.push(PatternSegment::Field(name.clone()));
                path.push(Segment::Field(name.clone()));
                canonicalize_at(child, rules, shape, path, warnings);
                path.pop();
                shape.pop();
            }
        }
        Value::Array(items) => {
            let mode = rules.mode(shape);
            if mode == ArrayMode::Opaque {
                return;
            }
            if rules.any_below(shape) {
                shape.push(PatternSegment::AnyElement);
                for item in items.iter_mut() {
                    // The element's own path needs it canonical, so its warnings are
                    // collected again, with that path, when there are any.
                    let mut inside = Vec::new();
                    canonicalize_at(item, rules, shape, path, &mut inside);
                    if !inside.is_empty() {
                        path.push(element_segment(item, &mode));
                        canonicalize_at(item, rules, shape, path, warnings);
                        path.pop();
                    }
                }
                shape.pop();
            }
            match arrange_texts(&sort_texts(items, &mode)) {
                Arrangement::InOrder => {}
                Arrangement::NotUnique => warnings.push(not_unique_warning(path, &mode)),
                Arrangement::Reorder(order) => {
                    let mut taken: Vec<Option<Value>> =
                        std::mem::take(items).into_iter().map(Some).collect();
                    *items = order
                        .iter()
                        .filter_map(|&i| taken.get_mut(i).and_then(Option::take))
                        .collect();
                }
            }
        }
        _ => {}
    }
}

/// The canonical text of a JSON text with `rules` applied: `canonicalize` of
/// [`canon::parse`], written by [`canon::to_canonical_string`], with the same warnings, or
/// the same [`ParseError`](canon::ParseError). It is computed in one pass over the input
/// without building a tree (unless some array's keys are not unique, when the tree of the
/// result is built to name it in a warning).
///
/// ```
/// use hist::rules::{KeyRules, Rule};
/// let rules: Vec<Rule> = vec![]; // no rules: every array opaque
/// let mut warnings = Vec::new();
/// let text = hist::diff::canonical_text(br#"{"b":[2,1],"a":1.0}"#, &KeyRules::for_key(&rules, "k"), &mut warnings);
/// assert_eq!(text.unwrap(), r#"{"a":1,"b":[2,1]}"#);
/// ```
pub fn canonical_text(
    bytes: &[u8],
    rules: &KeyRules,
    warnings: &mut Vec<String>,
) -> Result<String, canon::ParseError> {
    let (text, not_unique) = canon::ordered_text(bytes, rules.tree())?;
    if not_unique {
        let mut doc = canon::parse_str(&text)?;
        canonicalize(&mut doc, rules, warnings);
    }
    Ok(text)
}

pub(crate) fn not_unique_warning(path: &DocPath, mode: &ArrayMode<'_>) -> String {
    let at = if path.is_root() {
        "the document".to_owned()
    } else {
        path.to_string()
    };
    match mode {
        ArrayMode::Keyed(fields) => format!(
            "the array at {at} has elements with the same key ({}); it is stored as one opaque value this time",
            fields.join(",")
        ),
        _ => format!(
            "the set at {at} has duplicate elements; it is stored as one opaque value this time"
        ),
    }
}

fn element_segment(elem: &Value, mode: &ArrayMode<'_>) -> Segment {
    match mode {
        ArrayMode::Keyed(fields) => Segment::Keyed(element_key(elem, fields)),
        _ => Segment::Member(elem.clone()),
    }
}

/// The changes that turn `old` into `new` (`None` = the key is absent).
///
/// `new` should already be [`canonicalize`]d with the same rules.
pub fn diff(old: Option<&Value>, new: Option<&Value>, rules: &KeyRules) -> Diff {
    let mut out = Diff::default();
    let mut shape = Vec::new();
    let mut path = DocPath::root();
    match (old, new) {
        (None, None) => {}
        (Some(o), Some(n)) => diff_at(o, n, rules, &mut shape, &mut path, &mut out),
        (o, n) => out.changes.push(Change {
            path,
            op: Op::between(o, n).unwrap_or(Op::Replace),
            old: o.cloned(),
            new: n.cloned(),
        }),
    }
    out
}

fn diff_at(
    old: &Value,
    new: &Value,
    rules: &KeyRules,
    shape: &mut Vec<PatternSegment>,
    path: &mut DocPath,
    out: &mut Diff,
) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (name, ov) in o {
                shape.push(PatternSegment::Field(name.clone()));
                path.push(Segment::Field(name.clone()));
                match n.get(name) {
                    Some(nv) => diff_at(ov, nv, rules, shape, path, out),
                    None => out.changes.push(Change {
                        path: path.clone(),
                        op: Op::Remove,
                        old: Some(ov.clone()),
                        new: None,
                    }),
                }
                path.pop();
                shape.pop();
            }
            for (name, nv) in n {
                if !o.contains_key(name) {
                    out.changes.push(Change {
                        path: path.child(Segment::Field(name.clone())),
                        op: Op::Add,
                        old: None,
                        new: Some(nv.clone()),
                    });
                }
            }
        }
        (Value::Array(o), Value::Array(n)) => {
            let mode = rules.mode(shape);
            if mode == ArrayMode::Opaque || !diff_elements(o, n, &mode, rules, shape, path, out) {
                replace(old, new, path, out);
            }
        }
        _ => replace(old, new, path, out),
    }
}

fn replace(old: &Value, new: &Value, path: &DocPath, out: &mut Diff) {
    if old != new {
        out.changes.push(Change {
            path: path.clone(),
            op: Op::Replace,
            old: Some(old.clone()),
            new: Some(new.clone()),
        });
    }
}

/// Diffs a keyed array or set element by element. Returns false when it cannot (keys not
/// unique, or the old array is not in canonical order), and the caller replaces it whole.
fn diff_elements(
    old: &[Value],
    new: &[Value],
    mode: &ArrayMode<'_>,
    rules: &KeyRules,
    shape: &mut Vec<PatternSegment>,
    path: &mut DocPath,
    out: &mut Diff,
) -> bool {
    let new_texts = sort_texts(new, mode);
    let new_order = arrange_texts(&new_texts);
    if new_order == Arrangement::NotUnique {
        out.warnings.push(not_unique_warning(path, mode));
        return false;
    }
    let old_texts = sort_texts(old, mode);
    if arrange_texts(&old_texts) != Arrangement::InOrder || new_order != Arrangement::InOrder {
        return false;
    }
    shape.push(PatternSegment::AnyElement);
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old_texts.get(i), new_texts.get(j)) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                out.changes.push(Change {
                    path: path.child(element_segment(&old[i], mode)),
                    op: Op::Remove,
                    old: Some(old[i].clone()),
                    new: None,
                });
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.changes.push(Change {
                    path: path.child(element_segment(&new[j], mode)),
                    op: Op::Add,
                    old: None,
                    new: Some(new[j].clone()),
                });
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if *mode != ArrayMode::Set && old[i] != new[j] {
                    path.push(element_segment(&old[i], mode));
                    diff_at(&old[i], &new[j], rules, shape, path, out);
                    path.pop();
                }
                i += 1;
                j += 1;
            }
        }
    }
    shape.pop();
    true
}

fn describe(segs: &[Segment]) -> String {
    let path = DocPath::from_segments(segs.to_vec());
    if path.is_root() {
        "the document root".to_owned()
    } else {
        path.to_string()
    }
}

/// The value at `segs` inside `doc`, if any.
pub fn get<'a>(doc: &'a Value, segs: &[Segment]) -> Option<&'a Value> {
    segs.iter().try_fold(doc, |v, seg| step(v, seg))
}

fn step<'a>(value: &'a Value, seg: &Segment) -> Option<&'a Value> {
    match (seg, value) {
        (Segment::Field(name), Value::Object(map)) => map.get(name),
        (Segment::Keyed(key), Value::Array(items)) => find_keyed(items, key).map(|i| &items[i]),
        (Segment::Member(m), Value::Array(items)) => items.iter().find(|e| *e == m),
        _ => None,
    }
}

fn step_mut<'a>(
    value: &'a mut Value,
    seg: &Segment,
    at: &[Segment],
) -> Result<&'a mut Value, ApplyError> {
    let found = type_name(value);
    let wrong = |expected| ApplyError::WrongType {
        path: describe(at),
        expected,
        found,
    };
    match seg {
        Segment::Field(name) => match value {
            Value::Object(map) => map
                .get_mut(name)
                .ok_or_else(|| ApplyError::Missing(describe(at))),
            _ => Err(wrong("an object")),
        },
        Segment::Keyed(key) => match value {
            Value::Array(items) => match find_keyed(items, key) {
                Some(i) => Ok(&mut items[i]),
                None => Err(ApplyError::Missing(describe(at))),
            },
            _ => Err(wrong("an array")),
        },
        Segment::Member(m) => match value {
            Value::Array(items) => items
                .iter_mut()
                .find(|e| *e == m)
                .ok_or_else(|| ApplyError::Missing(describe(at))),
            _ => Err(wrong("an array")),
        },
    }
}

/// Replays one change onto a document (`None` = absent). `add` requires the place to be
/// empty, `remove` and `replace` require a value there; elements added to keyed arrays and
/// sets go to their canonical position.
pub fn apply(doc: &mut Option<Value>, change: &Change) -> Result<(), ApplyError> {
    if change.op == Op::Move {
        return apply_move(doc, change);
    }
    let segs = change.path.segments();
    let Some((last, parents)) = segs.split_last() else {
        match (change.op, doc.is_some()) {
            (Op::Add, true) => return Err(ApplyError::Exists(describe(segs))),
            (Op::Remove | Op::Replace, false) => return Err(ApplyError::Missing(describe(segs))),
            _ => {}
        }
        *doc = change.new.clone();
        return Ok(());
    };
    let mut cur = doc
        .as_mut()
        .ok_or_else(|| ApplyError::Missing(describe(&[])))?;
    for (i, seg) in parents.iter().enumerate() {
        cur = step_mut(cur, seg, &segs[..=i])?;
    }
    let at = describe(segs);
    let found = type_name(cur);
    match (last, cur) {
        (Segment::Field(name), Value::Object(map)) => match change.op {
            Op::Add if map.contains_key(name) => Err(ApplyError::Exists(at)),
            Op::Add | Op::Replace | Op::Move => {
                if change.op == Op::Replace && !map.contains_key(name) {
                    return Err(ApplyError::Missing(at));
                }
                map.insert(name.clone(), change.new.clone().unwrap_or(Value::Null));
                Ok(())
            }
            Op::Remove => map.remove(name).map(drop).ok_or(ApplyError::Missing(at)),
        },
        (Segment::Keyed(key), Value::Array(items)) => {
            // A keyed change is only ever recorded between arrays in canonical order, so a
            // replayed `add` needs no proof that its key is absent beyond the binary search.
            let pos = if change.op == Op::Add && items.len() > 16 {
                search_keyed(items, key).ok()
            } else {
                find_keyed(items, key)
            };
            apply_element(items, pos, last, change, at)
        }
        (Segment::Member(m), Value::Array(items)) => {
            let pos = items.iter().position(|e| e == m);
            apply_element(items, pos, last, change, at)
        }
        (Segment::Field(_), _) => Err(ApplyError::WrongType {
            path: describe(parents),
            expected: "an object",
            found,
        }),
        _ => Err(ApplyError::WrongType {
            path: describe(parents),
            expected: "an array",
            found,
        }),
    }
}

/// The path a `move` change moved its value from (its `old`, a path as a JSON string).
pub fn move_source(change: &Change) -> Result<DocPath, ApplyError> {
    change
        .old
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|text| DocPath::parse(text).ok())
        .ok_or_else(|| ApplyError::BadMove(change.path.to_string()))
}

/// Replays a recorded rename: the value at the source path is removed there and added at
/// the change's path (which must be empty, its parent present).
fn apply_move(doc: &mut Option<Value>, change: &Change) -> Result<(), ApplyError> {
    let from = move_source(change)?;
    let value = doc
        .as_ref()
        .and_then(|d| get(d, from.segments()))
        .cloned()
        .ok_or_else(|| ApplyError::Missing(describe(from.segments())))?;
    let remove = Change {
        path: from,
        op: Op::Remove,
        old: Some(value.clone()),
        new: None,
    };
    apply(doc, &remove)?;
    let add = Change {
        path: change.path.clone(),
        op: Op::Add,
        old: None,
        new: Some(value),
    };
    apply(doc, &add)
}

/// Where the element `seg` names goes in an array in canonical order: after every element
/// whose sort text (see [`canon::order`]) is smaller than its own.
fn insertion_point(items: &[Value], seg: &Segment) -> usize {
    let (target, fields) = match seg {
        Segment::Keyed(key) => (
            key_sort_text(key),
            key.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(),
        ),
        Segment::Member(m) => (canon::to_canonical_string(m).into_bytes(), Vec::new()),
        Segment::Field(_) => return 0,
    };
    let mode = match seg {
        Segment::Keyed(_) => ArrayMode::Keyed(&fields),
        _ => ArrayMode::Set,
    };
    let mut buf = Vec::new();
    items.partition_point(|e| {
        canon::write_sort_text(e, &mode, &mut buf);
        buf < target
    })
}

fn apply_element(
    items: &mut Vec<Value>,
    pos: Option<usize>,
    seg: &Segment,
    change: &Change,
    at: String,
) -> Result<(), ApplyError> {
    match (change.op, pos) {
        (Op::Add, Some(_)) => Err(ApplyError::Exists(at)),
        (Op::Add | Op::Move, None) => {
            let idx = insertion_point(items, seg);
            items.insert(idx, change.new.clone().unwrap_or(Value::Null));
            Ok(())
        }
        (Op::Remove, Some(i)) => {
            items.remove(i);
            Ok(())
        }
        (Op::Replace | Op::Move, Some(i)) => {
            items[i] = change.new.clone().unwrap_or(Value::Null);
            Ok(())
        }
        (Op::Remove | Op::Replace, None) => Err(ApplyError::Missing(at)),
    }
}

/// Writes `value` at `path` in `doc`, creating the document and missing parent objects on the
/// way (like `mkdir -p`); a missing keyed element is created from its key. Going through a
/// scalar is an error.
pub fn set_at(doc: &mut Option<Value>, path: &DocPath, value: Value) -> Result<(), ApplyError> {
    let segs = path.segments();
    let Some((last, parents)) = segs.split_last() else {
        *doc = Some(value);
        return Ok(());
    };
    let mut cur = doc.get_or_insert_with(|| empty_container(&segs[0]));
    for (i, seg) in parents.iter().enumerate() {
        cur = step_or_create(cur, seg, &segs[i + 1], &segs[..=i])?;
    }
    let found = type_name(cur);
    match (last, cur) {
        (Segment::Field(name), Value::Object(map)) => {
            map.insert(name.clone(), value);
            Ok(())
        }
        (Segment::Keyed(key), Value::Array(items)) => {
            match items.iter_mut().find(|e| key_matches(e, key)) {
                Some(e) => *e = value,
                None => items.push(value),
            }
            Ok(())
        }
        (Segment::Member(m), Value::Array(items)) => {
            if value != *m {
                return Err(ApplyError::SetValue(path.to_string()));
            }
            if !items.contains(m) {
                items.push(value);
            }
            Ok(())
        }
        (Segment::Field(_), _) => Err(ApplyError::WrongType {
            path: describe(parents),
            expected: "an object",
            found,
        }),
        _ => Err(ApplyError::WrongType {
            path: describe(parents),
            expected: "an array",
            found,
        }),
    }
}

fn empty_container(next: &Segment) -> Value {
    match next {
        Segment::Field(_) => Value::Object(Map::new()),
        _ => Value::Array(Vec::new()),
    }
}

fn step_or_create<'a>(
    value: &'a mut Value,
    seg: &Segment,
    next: &Segment,
    at: &[Segment],
) -> Result<&'a mut Value, ApplyError> {
    let found = type_name(value);
    match (seg, value) {
        (Segment::Field(name), Value::Object(map)) => Ok(map
            .entry(name.clone())
            .or_insert_with(|| empty_container(next))),
        (Segment::Keyed(key), Value::Array(items)) => {
            let idx = match items.iter().position(|e| key_matches(e, key)) {
                Some(i) => i,
                None => {
                    let elem: Map = key.iter().cloned().collect();
                    items.push(Value::Object(elem));
                    items.len() - 1
                }
            };
            Ok(&mut items[idx])
        }
        (Segment::Member(m), Value::Array(items)) => items
            .iter_mut()
            .find(|e| *e == m)
            .ok_or_else(|| ApplyError::Missing(describe(at))),
        (Segment::Field(_), _) => Err(ApplyError::WrongType {
            path: describe(&at[..at.len() - 1]),
            expected: "an object",
            found,
        }),
        _ => Err(ApplyError::WrongType {
            path: describe(&at[..at.len() - 1]),
            expected: "an array",
            found,
        }),
    }
}

/// Removes the value at `path` (the whole document for the root).
pub fn remove_at(doc: &mut Option<Value>, path: &DocPath) -> Result<(), ApplyError> {
    let Some(current) = doc.as_ref() else {
        return Err(ApplyError::Missing(describe(&[])));
    };
    let old = get(current, path.segments())
        .cloned()
        .ok_or_else(|| ApplyError::Missing(describe(path.segments())))?;
    apply(
        doc,
        &Change {
            path: path.clone(),
            op: Op::Remove,
            old: Some(old),
            new: None,
        },
    )
}

/// Escapes a member name for a JSON Pointer (RFC 6901).
fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Turns changes into an RFC 6902 patch with positional JSON Pointers, valid against
/// `start` (the document the changes apply to) when the operations are applied in order.
/// A recorded rename becomes an RFC 6902 `move`.
pub fn to_json_patch(start: Option<&Value>, changes: &[Change]) -> Result<Vec<Value>, ApplyError> {
    let mut doc = start.cloned();
    let mut out = Vec::with_capacity(changes.len());
    for change in changes {
        let pointer = json_pointer(doc.as_ref(), change.path.segments(), change.op)?;
        let mut op = Map::new();
        let (name, value) = match change.op {
            Op::Add => ("add", change.new.clone()),
            Op::Remove => ("remove", None),
            Op::Replace => ("replace", change.new.clone()),
            Op::Move => {
                let from = move_source(change)?;
                let from = json_pointer(doc.as_ref(), from.segments(), Op::Remove)?;
                op.insert("from".into(), Value::String(from));
                ("move", None)
            }
        };
        op.insert("op".into(), Value::String(name.into()));
        op.insert("path".into(), Value::String(pointer));
        if let Some(v) = value {
            op.insert("value".into(), v);
        }
        out.push(Value::Object(op));
        apply(&mut doc, change)?;
    }
    Ok(out)
}

/// The positional JSON Pointer of `segs` in `doc`, for an operation `op` there (an `add`
/// or a `move` may name an element or member that does not exist yet).
fn json_pointer(doc: Option<&Value>, segs: &[Segment], op: Op) -> Result<String, ApplyError> {
    let mut pointer = String::new();
    let mut cur = doc;
    for (i, seg) in segs.iter().enumerate() {
        let is_last = i + 1 == segs.len();
        let here = cur.ok_or_else(|| ApplyError::Missing(describe(&segs[..i])))?;
        match (seg, here) {
            (Segment::Field(name), _) => {
                pointer.push('/');
                pointer.push_str(&pointer_escape(name));
                cur = here.get(name);
            }
            (Segment::Keyed(_) | Segment::Member(_), Value::Array(items)) => {
                let pos = match seg {
                    // A binary search where the array is in canonical order.
                    Segment::Keyed(key) => find_keyed(items, key),
                    Segment::Member(m) => items.iter().position(|e| e == m),
                    Segment::Field(_) => None,
                };
                let idx = match (pos, is_last && matches!(op, Op::Add | Op::Move)) {
                    (Some(p), false) => p,
                    (None, true) => insertion_point(items, seg),
                    (Some(_), true) => return Err(ApplyError::Exists(describe(&segs[..=i]))),
                    (None, false) => return Err(ApplyError::Missing(describe(&segs[..=i]))),
                };
                pointer.push('/');
                pointer.push_str(&idx.to_string());
                cur = items.get(idx);
            }
            (_, other) => {
                return Err(ApplyError::WrongType {
                    path: describe(&segs[..i]),
                    expected: "an array",
                    found: type_name(other),
                });
            }
        }
    }
    Ok(pointer)
}
