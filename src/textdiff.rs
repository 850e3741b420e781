//! [`diff::diff`](crate::diff::diff) computed on canonical JSON text, without building a
//! tree of the whole document. (Its partner on the way in, ordering keyed arrays and sets
//! while the input is parsed, is [`diff::canonical_text`](crate::diff::canonical_text).)
//!
//! Canonical text ([`crate::canon`]) is unique per value, so two values are equal exactly
//! when their canonical texts are byte-equal. The functions here walk the texts with a small
//! scanner (end of a value, members of an object, elements of an array), compare slices
//! byte for byte, and parse a slice into a [`Value`] only where a path needs it (the key
//! values of a keyed element, a set element). A change's old and new values are the slices
//! themselves ([`ChangeText`]): the store keeps canonical text, so they are never parsed.
//!
//! They give exactly what the [`Value`] functions give on the parsed texts: the same changes
//! in the same order, the same warnings in the same order. In particular object members are
//! visited in the order of a `serde_json::Map` (Rust string order, by bytes), not in the
//! text's order (UTF-16 code units), which differs for names with characters in
//! U+E000..=U+FFFF and above U+FFFF.
//!
//! Every text is checked first, in one pass that never recurses: it must be canonical JSON
//! as [`canon`] writes it (no whitespace, members strictly increasing by
//! [`canon::compare_keys`], minimal string escapes, canonical numbers, no member named
//! `$serde_json::private::Number`, nesting at most [`canon::MAX_DEPTH`]). Anything else is
//! a [`MalformedText`], never a panic. That pass also records where each non-empty array
//! and object ends (8 bytes per container), so that walking a container does not scan it
//! again. Besides the texts, memory is that table, the per-array lists of element slices
//! and sort texts, and the values the changes carry.

use crate::canon;
use crate::diff::{Diff, not_unique_warning};
use crate::model::{ChangeText, Op};
use crate::path::{DocPath, PatternSegment, Segment};
use crate::rules::{ArrayMode, KeyRules};
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;

/// Canonical text that stored (or otherwise canonical) text must be but is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed canonical JSON at byte {offset}: {message}")]
pub struct MalformedText {
    /// Byte offset in the text where the problem is.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

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
        Some(text) if old_is_own => index(text),
        Some(text) => validate(text).map_err(in_text("old"))?,
        None => Vec::new(),
    };
    let new_ends = match new {
        Some(text) if new_is_own => index(text),
        Some(text) => validate(text).map_err(in_text("new"))?,
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
                    if !all_unique(&sort_texts(&items, &mode)?) {
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
        let new_texts = sort_texts(&new_items, mode)?;
        if !all_unique(&new_texts) {
            self.warn_not_unique(mode)?;
            return Ok(false);
        }
        let old_items = old.elements().collect::<Result<Vec<_>, _>>()?;
        let old_texts = sort_texts(&old_items, mode)?;
        if !all_unique(&old_texts) || !old_texts.is_sorted() || !new_texts.is_sorted() {
            return Ok(false);
        }
        self.shape.push(PatternSegment::AnyElement);
        let mut olds = old_items.iter().zip(&old_texts).peekable();
        let mut news = new_items.iter().zip(&new_texts).peekable();
        loop {
            let order = match (olds.peek(), news.peek()) {
                (None, None) => break,
                (Some(a), Some(b)) => a.1.cmp(b.1),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
            };
            match (order, olds.peek().copied(), news.peek().copied()) {
                (Ordering::Less, Some((item, _)), _) => {
                    let change = ChangeText {
                        path: self.doc_path()?.child(element_segment(*item, mode)?),
                        op: Op::Remove,
                        old: Some(item.text.to_owned()),
                        new: None,
                    };
                    self.changes.push(change);
                    olds.next();
                }
                (Ordering::Greater, _, Some((item, _))) => {
                    let change = ChangeText {
                        path: self.doc_path()?.child(element_segment(*item, mode)?),
                        op: Op::Add,
                        old: None,
                        new: Some(item.text.to_owned()),
                    };
                    self.changes.push(change);
                    news.next();
                }
                (Ordering::Equal, Some((o, _)), Some((n, _))) => {
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

/// The members of an object in `serde_json::Map` order (by the bytes of their decoded
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
            let quoted = quote_all(fields);
            let values = key_values(elem, &quoted)?;
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

/// Each field name as canonical JSON string text (with its quotes), as it appears in
/// canonical text.
pub(crate) fn quote_all(fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .map(|f| {
            let mut out = Vec::with_capacity(f.len() + 2);
            canon::write_string(f, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        })
        .collect()
}

/// The text of the value at `segs` inside the canonical text `text`: the value
/// [`crate::diff::get`] finds in the parsed document, found without parsing it. `None`:
/// nothing there, or the text is not canonical JSON (the parsed document has the last word
/// then).
pub fn get_text<'a>(text: &'a str, segs: &[Segment]) -> Option<&'a str> {
    /// The first entry that `hit` says is the one (`Some(true)`); `None` as soon as an entry
    /// or `hit` finds the text malformed.
    fn first<'a, T>(
        entries: impl Iterator<Item = Result<T, MalformedText>>,
        hit: impl Fn(&T) -> Option<bool>,
        value: impl Fn(T) -> Val<'a>,
    ) -> Option<Val<'a>> {
        for entry in entries {
            let entry = entry.ok()?;
            if hit(&entry)? {
                return Some(value(entry));
            }
        }
        None
    }
    let ends = index(text);
    let mut val = Val::whole(text, &ends);
    for seg in segs {
        val = match seg {
            Segment::Field(name) => first(
                val.members(),
                |m| m.name().ok().map(|n| n == name.as_str()),
                |m| m.value,
            )?,
            Segment::Keyed(key) => {
                let fields: Vec<String> = key.iter().map(|(f, _)| f.clone()).collect();
                let quoted = quote_all(&fields);
                // A missing field (or an element that is not an object) matches null.
                let hit = |elem: &Val<'_>| -> Option<bool> {
                    let mut all = true;
                    for ((_, v), f) in key.iter().zip(key_values(*elem, &quoted).ok()?) {
                        all &= match f {
                            Some(f) => f.parse().ok()? == *v,
                            None => v.is_null(),
                        };
                    }
                    Some(all)
                };
                first(val.elements(), hit, |e| e)?
            }
            Segment::Member(m) => first(val.elements(), |e| Some(e.parse().ok()? == *m), |e| e)?,
        };
    }
    text.get(val.at..val.at + val.text.len())
}

/// The values of the `quoted` fields of a keyed element (`None`: missing, or the element
/// is not an object).
pub(crate) fn key_values<'a>(
    elem: Val<'a>,
    quoted: &[String],
) -> Result<Vec<Option<Val<'a>>>, MalformedText> {
    let mut found: Vec<Option<Val<'a>>> = vec![None; quoted.len()];
    if elem.first() != b'{' {
        return Ok(found);
    }
    let mut missing = quoted.len();
    for member in elem.members() {
        let member = member?;
        for (q, slot) in quoted.iter().zip(found.iter_mut()) {
            if slot.is_none() && q == member.quoted {
                *slot = Some(member.value);
                missing -= 1;
            }
        }
        if missing == 0 {
            break;
        }
    }
    Ok(found)
}

/// The canonical text an element sorts by (`diff::keyed_sort_text`, or a set element's own
/// text), ordered as that text is, without building it when it is a slice of the element.
#[derive(Clone, Debug, PartialEq, Eq)]
enum SortText<'a> {
    /// The text itself: a set element.
    Whole(&'a str),
    /// The value of a one-field key: the text is `[value]`.
    Single(&'a str),
    /// A key of several fields: `[v1,v2,…]`.
    Built(String),
}

impl Ord for SortText<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Whole(a), Self::Whole(b)) => a.cmp(b),
            // `[a]` against `[b]`: as `a]` against `b]`.
            (Self::Single(a), Self::Single(b)) => {
                let (a, b) = (a.as_bytes(), b.as_bytes());
                let n = a.len().min(b.len());
                a[..n].cmp(&b[..n]).then_with(|| {
                    let next = |t: &[u8]| t.get(n).copied().unwrap_or(b']');
                    next(a).cmp(&next(b))
                })
            }
            (Self::Built(a), Self::Built(b)) => a.cmp(b),
            // One array's elements all sort by one kind of text.
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortText<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl SortText<'_> {
    fn rank(&self) -> u8 {
        match self {
            Self::Whole(_) => 0,
            Self::Single(_) => 1,
            Self::Built(_) => 2,
        }
    }
}

/// Mirrors `diff::keyed_sort_text` and the set case of `unique_sort_texts`: what each
/// element sorts by.
fn sort_texts<'a>(
    items: &[Val<'a>],
    mode: &ArrayMode<'_>,
) -> Result<Vec<SortText<'a>>, MalformedText> {
    match mode {
        ArrayMode::Keyed(fields) => {
            let quoted = quote_all(fields);
            items
                .iter()
                .map(|item| {
                    let values = key_values(*item, &quoted)?;
                    if let [value] = values.as_slice() {
                        return Ok(SortText::Single(value.map_or("null", |v| v.text)));
                    }
                    let len = values
                        .iter()
                        .map(|v| v.map_or(4, |v| v.text.len()) + 1)
                        .sum::<usize>();
                    let mut text = String::with_capacity(len + 1);
                    text.push('[');
                    for (i, v) in values.iter().enumerate() {
                        if i > 0 {
                            text.push(',');
                        }
                        text.push_str(v.map_or("null", |v| v.text));
                    }
                    text.push(']');
                    Ok(SortText::Built(text))
                })
                .collect()
        }
        _ => Ok(items
            .iter()
            .map(|item| SortText::Whole(item.text))
            .collect()),
    }
}

/// True when no two texts are equal.
fn all_unique(texts: &[SortText<'_>]) -> bool {
    if texts.is_sorted() {
        return texts.windows(2).all(|w| w[0] != w[1]);
    }
    let mut sorted: Vec<&SortText<'_>> = texts.iter().collect();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

// ---------------------------------------------------------------------------------------
// Scanning checked canonical text
// ---------------------------------------------------------------------------------------

/// A value's text inside a document, its byte offset there, and the ends of the containers
/// that start inside it ([`validate`]; its own first, when it is a non-empty container).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Val<'a> {
    at: usize,
    pub(crate) text: &'a str,
    ends: &'a [(u32, u32)],
}

/// An object member: its name as written (with quotes), the name and colon as written,
/// and its value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member<'a> {
    pub(crate) quoted: &'a str,
    pub(crate) head: &'a str,
    pub(crate) value: Val<'a>,
}

impl<'a> Member<'a> {
    /// The decoded name.
    pub(crate) fn name(&self) -> Result<Cow<'a, str>, MalformedText> {
        let inner = self
            .quoted
            .get(1..self.quoted.len().saturating_sub(1))
            .unwrap_or("");
        decode(inner).map_err(|message| MalformedText {
            offset: self.value.at.saturating_sub(self.head.len()),
            message: message.to_owned(),
        })
    }
}

impl<'a> Val<'a> {
    pub(crate) fn whole(text: &'a str, ends: &'a [(u32, u32)]) -> Self {
        Self { at: 0, text, ends }
    }

    /// Where the entries of the containers inside this one begin in `ends` (after its own).
    fn inner_entries(&self) -> usize {
        usize::from(self.ends.first().is_some_and(|e| e.0 as usize == self.at))
    }

    /// The value that starts at `local`, a child of this container, whose entries in `ends`
    /// begin at `*k` or later; moves `*k` past them. A container's end is looked up (the
    /// validation pass recorded it), anything else is scanned. Children are asked for in
    /// order, so the entries are walked once, never searched.
    fn child(&self, local: usize, k: &mut usize) -> Result<Val<'a>, MalformedText> {
        let b = self.text.as_bytes();
        let start = self.at + local;
        while self.ends.get(*k).is_some_and(|e| (e.0 as usize) < start) {
            *k += 1;
        }
        let recorded = match (b.get(local), self.ends.get(*k)) {
            (Some(b'{' | b'['), Some(&(s, e))) if s as usize == start => (e as usize)
                .checked_sub(self.at)
                .filter(|&end| end > local && end <= b.len()),
            _ => None,
        };
        let Some(end) = recorded else {
            let end = value_end(b, local).map_err(|(at, m)| self.error(at, m))?;
            return self.sub(local, end, &[]);
        };
        let first = *k;
        *k = skip_inside(self.ends, first + 1, self.at + end);
        self.sub(local, end, self.ends.get(first..*k).unwrap_or_default())
    }

    pub(crate) fn first(&self) -> u8 {
        self.text.as_bytes().first().copied().unwrap_or(0)
    }

    fn error(&self, local: usize, message: &str) -> MalformedText {
        MalformedText {
            offset: self.at + local,
            message: message.to_owned(),
        }
    }

    /// The part `from..to` of this value, as a value whose containers have the entries
    /// `ends`.
    fn sub(
        &self,
        from: usize,
        to: usize,
        ends: &'a [(u32, u32)],
    ) -> Result<Val<'a>, MalformedText> {
        match self.text.get(from..to) {
            Some(text) => Ok(Val {
                at: self.at + from,
                text,
                ends,
            }),
            None => Err(self.error(from, "a value ends inside a character")),
        }
    }

    /// The value itself, parsed.
    fn parse(self) -> Result<Value, MalformedText> {
        serde_json::from_str(self.text).map_err(|e| self.error(0, &format!("{e}")))
    }

    pub(crate) fn members(self) -> Members<'a> {
        Members {
            obj: self,
            k: self.inner_entries(),
            pos: 1,
            done: self.first() != b'{' || self.text.as_bytes().get(1) == Some(&b'}'),
        }
    }

    pub(crate) fn elements(self) -> Elements<'a> {
        Elements {
            arr: self,
            k: self.inner_entries(),
            pos: 1,
            done: self.first() != b'[' || self.text.as_bytes().get(1) == Some(&b']'),
        }
    }
}

/// The members of an object, in text order.
pub(crate) struct Members<'a> {
    obj: Val<'a>,
    /// The entry in `obj.ends` where the next member's containers begin.
    k: usize,
    pos: usize,
    done: bool,
}

impl<'a> Members<'a> {
    fn step(&mut self) -> Result<Member<'a>, MalformedText> {
        let b = self.obj.text.as_bytes();
        let start = self.pos;
        if b.get(start) != Some(&b'"') {
            return Err(self.obj.error(start, "expected a member name"));
        }
        let name_end =
            canon::string_end(b, start).map_err(|at| self.obj.error(at, "unterminated string"))?;
        if b.get(name_end) != Some(&b':') {
            return Err(self.obj.error(name_end, "expected ':'"));
        }
        let value = self.obj.child(name_end + 1, &mut self.k)?;
        let value_end = value.at - self.obj.at + value.text.len();
        match b.get(value_end) {
            Some(b',') => self.pos = value_end + 1,
            Some(b'}') => self.done = true,
            _ => return Err(self.obj.error(value_end, "expected ',' or '}'")),
        }
        Ok(Member {
            quoted: self.obj.sub(start, name_end, &[])?.text,
            head: self.obj.sub(start, name_end + 1, &[])?.text,
            value,
        })
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = Result<Member<'a>, MalformedText>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step();
        if item.is_err() {
            self.done = true;
        }
        Some(item)
    }
}

/// The elements of an array, in text order.
pub(crate) struct Elements<'a> {
    arr: Val<'a>,
    /// The entry in `arr.ends` where the next element's containers begin.
    k: usize,
    pos: usize,
    done: bool,
}

impl<'a> Elements<'a> {
    fn step(&mut self) -> Result<Val<'a>, MalformedText> {
        let b = self.arr.text.as_bytes();
        let item = self.arr.child(self.pos, &mut self.k)?;
        let end = item.at - self.arr.at + item.text.len();
        match b.get(end) {
            Some(b',') => self.pos = end + 1,
            Some(b']') => self.done = true,
            _ => return Err(self.arr.error(end, "expected ',' or ']'")),
        }
        Ok(item)
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Val<'a>, MalformedText>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step();
        if item.is_err() {
            self.done = true;
        }
        Some(item)
    }
}

/// The first index at or after `from` whose entry starts at or after `end`: the entries
/// from `from` on that start before `end` are those of the containers inside a container
/// that ends there. Searched from `from` in growing steps, so skipping a few entries costs
/// a few comparisons whatever the size of the table.
fn skip_inside(ends: &[(u32, u32)], from: usize, end: usize) -> usize {
    let inside = |i: usize| ends.get(i).is_some_and(|e| (e.0 as usize) < end);
    let (mut lo, mut step) = (from, 1);
    while inside(lo + step - 1) {
        lo += step;
        step *= 2;
    }
    // Entries `from..lo` are inside; the first outside is in `lo..lo + step`.
    let tail = ends
        .get(lo..(lo + step).min(ends.len()))
        .unwrap_or_default();
    lo + tail.partition_point(|e| (e.0 as usize) < end)
}

/// The end of the value starting at `i` (a fast skip of text already checked; it does not
/// check the text again, but never panics or loops on any input).
fn value_end(b: &[u8], mut i: usize) -> Result<usize, (usize, &'static str)> {
    let mut depth = 0usize;
    loop {
        let Some(&c) = b.get(i) else {
            return Err((i, "unexpected end of text"));
        };
        match c {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or((i, "unexpected closing bracket"))?;
            }
            b',' | b':' if depth > 0 => {}
            b'"' => {
                i = canon::string_end(b, i).map_err(|at| (at, "unterminated string"))?;
                if depth == 0 {
                    return Ok(i);
                }
                continue;
            }
            b'-' | b'0'..=b'9' | b'a'..=b'z' => {
                i += b
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .position(
                        |c| !matches!(c, b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E'),
                    )
                    .unwrap_or(b.len() - i);
                if depth == 0 {
                    return Ok(i);
                }
                continue;
            }
            _ => return Err((i, "unexpected character")),
        }
        i += 1;
        if depth == 0 {
            return Ok(i);
        }
    }
}

/// The decoded text of a string's contents (between the quotes), as canonical text
/// escapes it.
fn decode(raw: &str) -> Result<Cow<'_, str>, &'static str> {
    if !raw.contains('\\') {
        return Ok(Cow::Borrowed(raw));
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or("bad \\u escape")?
            }
            _ => return Err("bad escape"),
        });
    }
    Ok(Cow::Owned(out))
}

// ---------------------------------------------------------------------------------------
// Checking that a text is canonical
// ---------------------------------------------------------------------------------------

/// The member name `serde_json` uses to pass a number's text through a map; canonical text
/// never holds it (see [`canon`]).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// An open container while checking: an array, or an object and the name (contents
/// without quotes) of its last member.
enum Open<'a> {
    Array,
    Object(&'a str),
}

/// The table [`validate`] returns, for text known to be canonical: the same scan without
/// the checks (strings skipped, containers matched).
pub(crate) fn index(text: &str) -> Vec<(u32, u32)> {
    /// The bytes that start or end a string or a container.
    const STRUCTURE: [bool; 256] = {
        let mut t = [false; 256];
        let mut k = 0;
        while k < 5 {
            t[b"\"{}[]"[k] as usize] = true;
            k += 1;
        }
        t
    };
    let b = text.as_bytes();
    let mut ends: Vec<(u32, u32)> = Vec::new();
    if u32::try_from(b.len()).is_err() {
        return ends;
    }
    let offset = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if !STRUCTURE[usize::from(c)] {
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                i = canon::string_end(b, i).unwrap_or(b.len());
                continue;
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                if b.get(i + 1) == Some(&close) {
                    i += 2;
                    continue;
                }
                open.push(ends.len());
                ends.push((offset(i), 0));
            }
            b'}' | b']' => {
                if let Some(entry) = open.pop().and_then(|k| ends.get_mut(k)) {
                    entry.1 = offset(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    ends
}

/// Checks that `text` is canonical JSON (see the module doc), in one pass without
/// recursion. Returns where each non-empty container ends, as `(start, end)` byte offsets
/// in the order of their starts (empty when the text is too long for `u32` offsets): the
/// walks look these up instead of scanning a container again.
pub(crate) fn validate(text: &str) -> Result<Vec<(u32, u32)>, MalformedText> {
    let b = text.as_bytes();
    let record = u32::try_from(text.len()).is_ok();
    let offset = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    let mut ends: Vec<(u32, u32)> = Vec::new();
    // For each open container, the index of its entry in `ends`.
    let mut entries: Vec<usize> = Vec::new();
    let fail = |offset: usize, message: &str| MalformedText {
        offset,
        message: message.to_owned(),
    };
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut i = 0;
    'value: loop {
        // A value starts at `i`.
        match b.get(i) {
            Some(b'{' | b'[') if stack.len() >= canon::MAX_DEPTH => {
                return Err(fail(
                    i,
                    &format!(
                        "nesting deeper than {} arrays and objects",
                        canon::MAX_DEPTH
                    ),
                ));
            }
            Some(b'{') => {
                if b.get(i + 1) == Some(&b'}') {
                    i += 2;
                } else {
                    let (name, next) = member_name(text, i + 1, None)?;
                    stack.push(Open::Object(name));
                    entries.push(ends.len());
                    if record {
                        ends.push((offset(i), 0));
                    }
                    i = next;
                    continue 'value;
                }
            }
            Some(b'[') => {
                if b.get(i + 1) == Some(&b']') {
                    i += 2;
                } else {
                    stack.push(Open::Array);
                    entries.push(ends.len());
                    if record {
                        ends.push((offset(i), 0));
                    }
                    i += 1;
                    continue 'value;
                }
            }
            Some(b'"') => i = check_string(b, i)?,
            Some(b't') if b.get(i..i + 4) == Some(b"true") => i += 4,
            Some(b'f') if b.get(i..i + 5) == Some(b"false") => i += 5,
            Some(b'n') if b.get(i..i + 4) == Some(b"null") => i += 4,
            Some(b'-' | b'0'..=b'9') => i = check_number(text, i)?,
            Some(_) => {
                return Err(fail(
                    i,
                    "expected a JSON value (canonical text has no whitespace)",
                ));
            }
            None => return Err(fail(i, "unexpected end of text, expected a value")),
        }
        // A value ended at `i`: close containers until one continues.
        loop {
            match (stack.last_mut(), b.get(i)) {
                (None, None) => return Ok(ends),
                (None, Some(_)) => return Err(fail(i, "unexpected text after the value")),
                (Some(Open::Array), Some(b',')) => {
                    i += 1;
                    continue 'value;
                }
                (Some(Open::Object(last)), Some(b',')) => {
                    let (name, next) = member_name(text, i + 1, Some(*last))?;
                    *last = name;
                    i = next;
                    continue 'value;
                }
                (Some(Open::Array), Some(b']')) | (Some(Open::Object(_)), Some(b'}')) => {
                    stack.pop();
                    i += 1;
                    if let Some(entry) = entries.pop().and_then(|k| ends.get_mut(k)) {
                        entry.1 = offset(i);
                    }
                }
                (Some(Open::Array), _) => return Err(fail(i, "expected ',' or ']'")),
                (Some(Open::Object(_)), _) => return Err(fail(i, "expected ',' or '}'")),
            }
        }
    }
}

/// Checks a member name and its colon at `i`, and that it comes after `last` (the name
/// before it in the same object); returns its contents and where its value starts.
fn member_name<'t>(
    text: &'t str,
    i: usize,
    last: Option<&str>,
) -> Result<(&'t str, usize), MalformedText> {
    let b = text.as_bytes();
    let fail = |offset: usize, message: &str| MalformedText {
        offset,
        message: message.to_owned(),
    };
    if b.get(i) != Some(&b'"') {
        return Err(fail(i, "expected a member name"));
    }
    let end = check_string(b, i)?;
    let raw = text
        .get(i + 1..end - 1)
        .ok_or_else(|| fail(i, "bad member name"))?;
    if b.get(end) != Some(&b':') {
        return Err(fail(end, "expected ':' after a member name"));
    }
    let name = decode(raw).map_err(|m| fail(i, m))?;
    if name == NUMBER_TOKEN {
        return Err(fail(
            i,
            "the member name \"$serde_json::private::Number\" is reserved",
        ));
    }
    if let Some(last) = last {
        // Names without escapes and without characters from U+E000 up (lead bytes 0xEE
        // and above) compare the same by bytes as by UTF-16 code units.
        let plain = |n: &str| n.bytes().all(|c| c != b'\\' && c < 0xEE);
        let order = if plain(last) && plain(raw) {
            last.as_bytes().cmp(raw.as_bytes())
        } else {
            canon::compare_keys(&decode(last).map_err(|m| fail(i, m))?, &name)
        };
        if order != Ordering::Less {
            return Err(fail(
                i,
                "member names are not in canonical order (or repeat)",
            ));
        }
    }
    Ok((raw, end + 1))
}

/// Checks the string at `i` (minimal escapes only) and returns its end.
fn check_string(b: &[u8], i: usize) -> Result<usize, MalformedText> {
    let fail = |offset: usize, message: &str| MalformedText {
        offset,
        message: message.to_owned(),
    };
    let mut j = i + 1;
    loop {
        match b.get(j) {
            None => return Err(fail(j, "unterminated string")),
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => match b.get(j + 1) {
                Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                Some(b'u') => {
                    let code = b.get(j + 2..j + 6).and_then(|hex| match hex {
                        [b'0', b'0', h, l] => Some((hex_digit(*h)? << 4) | hex_digit(*l)?),
                        _ => None,
                    });
                    match code {
                        Some(c) if c < 0x20 && !matches!(c, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D) => {
                            j += 6;
                        }
                        _ => return Err(fail(j, "escape is not the canonical one")),
                    }
                }
                _ => return Err(fail(j, "escape is not the canonical one")),
            },
            Some(c) if *c < 0x20 => {
                return Err(fail(j, "control character in a string must be escaped"));
            }
            Some(_) => j += 1,
        }
    }
}

/// A lowercase hex digit's value.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// Checks the number at `i` (JSON grammar, then canonical form) and returns its end.
fn check_number(text: &str, i: usize) -> Result<usize, MalformedText> {
    let b = text.as_bytes();
    let fail = |offset: usize| MalformedText {
        offset,
        message: "not a number in canonical form".to_owned(),
    };
    let digits = |from: usize| {
        from + b
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    match b.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => j = digits(j),
        _ => return Err(fail(j)),
    }
    if b.get(j) == Some(&b'.') {
        let end = digits(j + 1);
        if end == j + 1 {
            return Err(fail(end));
        }
        j = end;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let end = digits(j);
        if end == j {
            return Err(fail(end));
        }
        j = end;
    }
    let number = text.get(i..j).ok_or_else(|| fail(i))?;
    let mut buf = ryu_js::Buffer::new();
    if canon::canonical_number_text(number, &mut buf) != Some(number) {
        return Err(fail(i));
    }
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::{get_text, index, skip_inside, validate};
    use crate::path::Segment;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i32>().prop_map(|n| serde_json::json!(n)),
            "[a\"\\\\{}\\[\\],:é\u{1}]{0,40}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-c{\\[\"]{0,3}", inner, 0..6)
                    .prop_map(|m| { serde_json::Value::Object(m.into_iter().collect()) }),
            ]
        })
    }

    /// Paths to every value of `v` down to `depth` steps, each step taken every way a path
    /// can take it (a member, a keyed element by one or two fields, a set member), and a
    /// step to nothing after each.
    fn paths(v: &serde_json::Value, depth: usize) -> Vec<Vec<Segment>> {
        use serde_json::Value;
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
        fn get_text_finds_what_the_parsed_document_has(v in value()) {
            let text = crate::canon::to_canonical_string(&v);
            let doc = crate::canon::parse_str(&text).unwrap();
            for path in paths(&doc, 3) {
                let expected = crate::diff::get(&doc, &path).map(crate::canon::to_canonical_string);
                prop_assert_eq!(get_text(&text, &path), expected.as_deref(), "{:?}", path);
            }
        }

        /// The unchecked index of canonical text is the table the checking pass builds.
        #[test]
        fn index_equals_the_checked_table(v in value()) {
            let text = crate::canon::to_canonical_string(&v);
            prop_assert_eq!(index(&text), validate(&text).unwrap());
        }

        /// Skipping the entries inside a container finds what a linear scan finds.
        #[test]
        fn skip_inside_equals_a_scan(
            mut starts in prop::collection::vec(0u32..500, 0..80),
            from in 0usize..90,
            end in 0usize..520,
        ) {
            starts.sort_unstable();
            let ends: Vec<(u32, u32)> = starts.iter().map(|&s| (s, s + 1)).collect();
            let from = from.min(ends.len());
            let scan = (from..ends.len())
                .find(|&i| ends[i].0 as usize >= end)
                .unwrap_or(ends.len());
            prop_assert_eq!(skip_inside(&ends, from, end), scan);
        }
    }
}
