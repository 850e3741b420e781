//! [`diff::diff`](crate::diff::diff) computed on canonical JSON text, without building a
//! tree of the whole document. (Its partner on the way in, ordering keyed arrays and sets
//! while the input is parsed, is [`diff::canonical_text`](crate::diff::canonical_text).)
//!
//! Canonical text ([`crate::canon`]) is unique per value, so two values are equal exactly
//! when their canonical texts are byte-equal. The functions here walk the texts with the
//! canonical-text reader of [`canon`] (members of an object, elements of an array), compare
//! slices byte for byte, and parse a slice into a [`Value`] only where a path needs it (the
//! key values of a keyed element, a set element). A change's old and new values are the
//! slices themselves ([`ChangeText`]): the store keeps canonical text, so they are never
//! parsed.
//!
//! They give exactly what the [`Value`] functions give on the parsed texts: the same changes
//! in the same order, the same warnings in the same order. In particular object members are
//! visited in the order of a [`canon::Map`] (Rust string order, by bytes, as a
//! `serde_json::Map` keeps them), not in the text's order (UTF-16 code units), which differs
//! for names with characters in U+E000..=U+FFFF and above U+FFFF.
//!
//! Every text is checked first ([`canon::validate`]), in one pass that never recurses;
//! anything that is not canonical JSON is a [`MalformedText`], never a panic. Besides the
//! texts, memory is the table of container ends that pass records, the per-array lists of
//! element slices and sort texts, and the values the changes carry.

use crate::canon::{self, Arrangement, ArrayMode, Member, SortTexts, Val, Value};
use crate::diff::{Diff, not_unique_warning};
use crate::model::{ChangeText, Op};
use crate::path::{DocPath, PatternSegment, Segment};
use crate::rules::KeyRules;
use std::borrow::Cow;
use std::cmp::Ordering;

pub use crate::canon::MalformedText;

/// The changes that turn `old` into `new` (canonical texts; `None` = absent): exactly
/// [`diff::diff`](crate::diff::diff) of the parsed texts — same changes, same order, same
/// warnings.
pub fn diff_text(
    old: Option<&str>,
    new: Option<&str>,
    rules: &KeyRules,
) -> Result<Diff, MalformedText> {
    let d = diff_with(old, new, rules, false, false)?;
    let changes = d
        .changes
        .iter()
        .map(ChangeText::to_change)
        .collect::<Result<_, _>>()
        .map_err(|e| MalformedText {
            offset: 0,
            message: e.to_string(),
        })?;
    Ok(Diff {
        changes,
        warnings: d.warnings,
    })
}

/// A [`Diff`] whose changes carry their values as the slices of text they were found in.
pub(crate) struct DiffText {
    /// The changes, in the order [`diff::diff`](crate::diff::diff) gives them.
    pub changes: Vec<ChangeText>,
    /// As [`Diff::warnings`].
    pub warnings: Vec<String>,
}

/// [`diff_text`] where `new` is text this process wrote itself (canonical by
/// construction, so it is indexed without being checked again), and so is `old` when
/// `old_is_own` (the caller made sure it is what the store wrote); otherwise `old` is
/// checked.
pub(crate) fn diff_own_text(
    old: Option<&str>,
    old_is_own: bool,
    new: &str,
    rules: &KeyRules,
) -> Result<DiffText, MalformedText> {
    diff_with(old, Some(new), rules, old_is_own, true)
}

fn diff_with(
    old: Option<&str>,
    new: Option<&str>,
    rules: &KeyRules,
    old_is_own: bool,
    new_is_own: bool,
) -> Result<DiffText, MalformedText> {
    fn in_text(which: &'static str) -> impl Fn(MalformedText) -> MalformedText {
        move |e| MalformedText {
            offset: e.offset,
            message: format!("{} (in the {which} text)", e.message),
        }
    }
    let old_ends = match old {
        Some(text) if old_is_own => canon::index(text),
        Some(text) => canon::checked_index(text).map_err(in_text("old"))?,
        None => Vec::new(),
    };
    let new_ends = match new {
        Some(text) if new_is_own => canon::index(text),
        Some(text) => canon::checked_index(text).map_err(in_text("new"))?,
        None => Vec::new(),
    };
    let mut walk = Walk::new(rules);
    match (old, new) {
        (None, None) => {}
        (Some(o), Some(n)) => {
            walk.diff_at(Val::whole(o, &old_ends), Val::whole(n, &new_ends))?;
        }
        (o, n) => {
            walk.changes.push(ChangeText {
                path: DocPath::root(),
                op: if o.is_some() { Op::Remove } else { Op::Add },
                old: o.map(str::to_owned),
                new: n.map(str::to_owned),
            });
        }
    }
    Ok(DiffText {
        changes: walk.changes,
        warnings: walk.warnings,
    })
}

// ---------------------------------------------------------------------------------------
// Walking: canonicalize and diff, mirroring `crate::diff`
// ---------------------------------------------------------------------------------------

/// One step of the current path, made into a [`Segment`] only when a change or a warning
/// names the path.
#[derive(Clone)]
enum Step<'a, 'r> {
    /// An object member; its name is the [`PatternSegment::Field`] at the same depth of
    /// the shape.
    Field,
    /// An element of a keyed array or a set.
    Element(Val<'a>, ArrayMode<'r>),
}

/// The state of one walk: where it is, and what it found.
struct Walk<'a, 'r> {
    rules: &'r KeyRules,
    shape: Vec<PatternSegment>,
    path: Vec<Step<'a, 'r>>,
    changes: Vec<ChangeText>,
    warnings: Vec<String>,
}

impl<'a, 'r> Walk<'a, 'r> {
    fn new(rules: &'r KeyRules) -> Self {
        Self {
            rules,
            shape: Vec::new(),
            path: Vec::new(),
            changes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The current path as a [`DocPath`].
    fn doc_path(&self) -> Result<DocPath, MalformedText> {
        let mut segs = Vec::with_capacity(self.path.len());
        for (step, shape) in self.path.iter().zip(&self.shape) {
            segs.push(match (step, shape) {
                (Step::Field, PatternSegment::Field(name)) => Segment::Field(name.clone()),
                (Step::Element(v, mode), _) => element_segment(*v, mode)?,
                (Step::Field, PatternSegment::AnyElement) => {
                    return Err(MalformedText {
                        offset: 0,
                        message: "internal error: the path and its shape disagree".into(),
                    });
                }
            });
        }
        Ok(DocPath::from_segments(segs))
    }

    fn warn_not_unique(&mut self, mode: &ArrayMode<'_>) -> Result<(), MalformedText> {
        let path = self.doc_path()?;
        self.warnings.push(not_unique_warning(&path, mode));
        Ok(())
    }

    /// Mirrors `diff::diff_at`.
    fn diff_at(&mut self, old: Val<'a>, new: Val<'a>) -> Result<(), MalformedText> {
        if old.text == new.text {
            return self.diff_equal(new);
        }
        match (old.first(), new.first()) {
            (b'{', b'{') => self.diff_objects(old, new),
            (b'[', b'[') => {
                let mode = self.rules.mode(&self.shape);
                if mode == ArrayMode::Opaque || !self.diff_elements(old, new, &mode)? {
                    self.replace(old, new)?;
                }
                Ok(())
            }
            _ => self.replace(old, new),
        }
    }

    /// What `diff::diff_at` does with two equal values: no change, but a warning for each
    /// keyed array or set (reached through objects) whose elements are not unique.
    fn diff_equal(&mut self, value: Val<'a>) -> Result<(), MalformedText> {
        match value.first() {
            b'{' if self.rules.any_below(&self.shape) => self.diff_objects(value, value),
            b'[' => {
                let mode = self.rules.mode(&self.shape);
                if mode != ArrayMode::Opaque {
                    let items = value.elements().collect::<Result<Vec<_>, _>>()?;
                    if SortTexts::of(&items, &mode)?.arrangement() == Arrangement::NotUnique {
                        self.warn_not_unique(&mode)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The object case of `diff::diff_at`: old members in map order (recurse or remove),
    /// then new members in map order (add).
    fn diff_objects(&mut self, old: Val<'a>, new: Val<'a>) -> Result<(), MalformedText> {
        let old_members = old.members().collect::<Result<Vec<_>, _>>()?;
        let new_members = new.members().collect::<Result<Vec<_>, _>>()?;
        let old_sorted = in_map_order(&old_members)?;
        let new_sorted = in_map_order(&new_members)?;
        let mut added = Vec::new();
        let mut news = new_sorted.into_iter().peekable();
        for (_, name, member) in old_sorted {
            while let Some((_, n, m)) = news.next_if(|(_, n, _)| *n < name) {
                added.push((n, m));
            }
            let counterpart = news.next_if(|(_, n, _)| *n == name).map(|(_, _, m)| m);
            self.shape.push(PatternSegment::Field(name.into_owned()));
            self.path.push(Step::Field);
            match counterpart {
                Some(n) => self.diff_at(member.value, n.value)?,
                None => {
                    let change = ChangeText {
                        path: self.doc_path()?,
                        op: Op::Remove,
                        old: Some(member.value.text.to_owned()),
                        new: None,
                    };
                    self.changes.push(change);
                }
            }
            self.path.pop();
            self.shape.pop();
        }
        added.extend(news.map(|(_, n, m)| (n, m)));
        for (name, member) in added {
            let change = ChangeText {
                path: self.doc_path()?.child(Segment::Field(name.into_owned())),
                op: Op::Add,
                old: None,
                new: Some(member.value.text.to_owned()),
            };
            self.changes.push(change);
        }
        Ok(())
    }

    /// Mirrors `diff::replace`.
    fn replace(&mut self, old: Val<'a>, new: Val<'a>) -> Result<(), MalformedText> {
        if old.text != new.text {
            let change = ChangeText {
                path: self.doc_path()?,
                op: Op::Replace,
                old: Some(old.text.to_owned()),
                new: Some(new.text.to_owned()),
            };
            self.changes.push(change);
        }
        Ok(())
    }

    /// Mirrors `diff::diff_elements`: false when the arrays cannot be diffed element by
    /// element (keys not unique, or not in canonical order).
    fn diff_elements(
        &mut self,
        old: Val<'a>,
        new: Val<'a>,
        mode: &ArrayMode<'r>,
    ) -> Result<bool, MalformedText> {
        let new_items = new.elements().collect::<Result<Vec<_>, _>>()?;
        let new_texts = SortTexts::of(&new_items, mode)?;
        let new_order = new_texts.arrangement();
        if new_order == Arrangement::NotUnique {
            self.warn_not_unique(mode)?;
            return Ok(false);
        }
        let old_items = old.elements().collect::<Result<Vec<_>, _>>()?;
        let old_texts = SortTexts::of(&old_items, mode)?;
        if old_texts.arrangement() != Arrangement::InOrder || new_order != Arrangement::InOrder {
            return Ok(false);
        }
        self.shape.push(PatternSegment::AnyElement);
        let mut olds = old_items.iter().enumerate().peekable();
        let mut news = new_items.iter().enumerate().peekable();
        loop {
            let order = match (olds.peek(), news.peek()) {
                (None, None) => break,
                (Some(a), Some(b)) => old_texts.get(a.0).cmp(&new_texts.get(b.0)),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
            };
            match (order, olds.peek().copied(), news.peek().copied()) {
                (Ordering::Less, Some((_, item)), _) => {
                    let change = ChangeText {
                        path: self.doc_path()?.child(element_segment(*item, mode)?),
                        op: Op::Remove,
                        old: Some(item.text.to_owned()),
                        new: None,
                    };
                    self.changes.push(change);
                    olds.next();
                }
                (Ordering::Greater, _, Some((_, item))) => {
                    let change = ChangeText {
                        path: self.doc_path()?.child(element_segment(*item, mode)?),
                        op: Op::Add,
                        old: None,
                        new: Some(item.text.to_owned()),
                    };
                    self.changes.push(change);
                    news.next();
                }
                (Ordering::Equal, Some((_, o)), Some((_, n))) => {
                    if *mode != ArrayMode::Set && o.text != n.text {
                        self.path.push(Step::Element(*o, mode.clone()));
                        self.diff_at(*o, *n)?;
                        self.path.pop();
                    }
                    olds.next();
                    news.next();
                }
                // The order was computed from these very peeks.
                _ => break,
            }
        }
        self.shape.pop();
        Ok(true)
    }
}

/// A member with its index in text order and its decoded name.
type Named<'a, 'm> = (usize, Cow<'a, str>, &'m Member<'a>);

/// The members of an object in [`canon::Map`] order (by the bytes of their decoded
/// names), each with its index in text order and its decoded name.
fn in_map_order<'a, 'm>(members: &'m [Member<'a>]) -> Result<Vec<Named<'a, 'm>>, MalformedText> {
    let mut out = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        out.push((i, m.name()?, m));
    }
    if !out.windows(2).all(|w| w[0].1 < w[1].1) {
        out.sort_by(|a, b| a.1.cmp(&b.1));
    }
    Ok(out)
}

/// Mirrors `diff::element_segment`.
fn element_segment(elem: Val<'_>, mode: &ArrayMode<'_>) -> Result<Segment, MalformedText> {
    match mode {
        ArrayMode::Keyed(fields) => {
            let quoted = canon::quote_all(fields);
            let values = canon::key_values(elem, &quoted)?;
            let key = fields
                .iter()
                .zip(values)
                .map(|(f, v)| Ok((f.clone(), v.map_or(Ok(Value::Null), Val::parse)?)))
                .collect::<Result<_, MalformedText>>()?;
            Ok(Segment::Keyed(key))
        }
        _ => Ok(Segment::Member(elem.parse()?)),
    }
}

#[cfg(test)]
mod tests {
    use crate::canon::{self, Value};
    use crate::path::Segment;
    use proptest::prelude::*;

    /// Paths to every value of `v` down to `depth` steps, each step taken every way a path
    /// can take it (a member, a keyed element by one or two fields, a set member), and a
    /// step to nothing after each.
    fn paths(v: &Value, depth: usize) -> Vec<Vec<Segment>> {
        let mut steps: Vec<(Segment, &Value)> = Vec::new();
        match v {
            Value::Object(map) => {
                steps.extend(map.iter().map(|(k, c)| (Segment::Field(k.clone()), c)));
            }
            Value::Array(items) => {
                for e in items {
                    let field = |f: &str| e.get(f).cloned().unwrap_or(Value::Null);
                    steps.push((Segment::Member(e.clone()), e));
                    steps.push((Segment::Keyed(vec![("a".into(), field("a"))]), e));
                    let two = vec![("b".into(), field("b")), ("a".into(), field("a"))];
                    steps.push((Segment::Keyed(two), e));
                }
            }
            _ => {}
        }
        let mut out = vec![
            vec![Segment::Field("zz".into())],
            vec![Segment::Member(Value::from(12345))],
            vec![Segment::Keyed(vec![("a".into(), Value::from("none"))])],
        ];
        for (seg, child) in steps {
            out.push(vec![seg.clone()]);
            if depth > 1 {
                out.extend(paths(child, depth - 1).into_iter().map(|mut p| {
                    p.insert(0, seg.clone());
                    p
                }));
            }
        }
        out
    }

    proptest! {
        /// A value found in the text is the value found in the parsed document, and only
        /// there is nothing where the parsed document has nothing.
        #[test]
        fn get_text_finds_what_the_parsed_document_has(v in canon::tests_value()) {
            let text = canon::to_canonical_string(&v);
            let doc = canon::parse_str(&text).unwrap();
            for path in paths(&doc, 3) {
                let expected = crate::diff::get(&doc, &path).map(canon::to_canonical_string);
                let found = canon::get_text(&text, path.iter().map(Segment::selector));
                prop_assert_eq!(found, expected.as_deref(), "{:?}", path);
            }
        }
    }
}
