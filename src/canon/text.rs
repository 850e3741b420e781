//! Reading canonical text without parsing it: a value's text inside a document, an
//! object's members and an array's elements as slices of the text, the value at a path
//! ([`get_text`]), and a check that text is canonical ([`validate`]).
//!
//! Canonical text is unique per value, so two values are equal exactly when their texts
//! are byte-equal: whoever holds canonical text can compare, diff and splice slices of it
//! instead of trees. The text diff (`hist::textdiff`) and the replay of changes onto stored
//! text are built on this.
//!
//! Text that is checked ([`validate`]) must be canonical JSON as [`super`] writes it (no
//! whitespace, members strictly increasing by [`compare_keys`], minimal string escapes,
//! canonical numbers, nesting at most [`MAX_DEPTH`]); anything else is a [`MalformedText`],
//! never a panic. The check also records where each non-empty array and object ends (8 bytes
//! per container), so that walking a container does not scan it again. Text this process
//! wrote itself is only indexed ([`index`]), not checked again.

use super::number::{canonical_number_text, scan_literal};
use super::order::{ArrayMode, SortText, write_keyed};
use super::scan::{Check, Fault, decode as decode_raw, scan_string, string_end};
use super::value::Value;
use super::{MAX_DEPTH, compare_keys, quoted};
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

/// One step of a path into a document, as [`get_text`] takes it (a `hist::path::Segment`
/// gives its own with `Segment::selector`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector<'a> {
    /// The member of an object with this name.
    Field(&'a str),
    /// The element of an array whose fields have these values (a missing field, or an
    /// element that is not an object, matches `null`).
    Keyed(&'a [(String, Value)]),
    /// The element of an array equal to this value.
    Member(&'a Value),
}

/// Each field name as canonical JSON string text (with its quotes), as it appears in
/// canonical text.
pub(crate) fn quote_all(fields: &[String]) -> Vec<String> {
    fields.iter().map(|f| quoted(f)).collect()
}

/// The text of the value at a path inside the canonical text `text`: the value the path
/// names in the parsed document (`hist::diff::get`), found without parsing it. `None`:
/// nothing there, or the text is not canonical JSON (parse it to know which).
///
/// ```
/// use hist::canon::{Selector, Value, get_text};
/// let text = r#"{"items":[{"id":1,"p":2},{"id":7,"p":5}],"tags":["a"]}"#;
/// let id = [("id".to_owned(), Value::from(7))];
/// let path = [Selector::Field("items"), Selector::Keyed(&id), Selector::Field("p")];
/// assert_eq!(get_text(text, path), Some("5"));
/// assert_eq!(get_text(text, [Selector::Field("tags"), Selector::Member(&Value::from("b"))]), None);
/// ```
pub fn get_text<'a, 's>(
    text: &'a str,
    path: impl IntoIterator<Item = Selector<'s>>,
) -> Option<&'a str> {
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
    for step in path {
        val = match step {
            Selector::Field(name) => first(
                val.members(),
                |m| m.name().ok().map(|n| n == name),
                |m| m.value,
            )?,
            Selector::Keyed(key) => {
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
            Selector::Member(m) => first(val.elements(), |e| Some(e.parse().ok()? == *m), |e| e)?,
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

/// The sort texts of the elements of an ordered array (see [`super::order`]): slices of the
/// elements' texts, built only for keys of several fields.
pub(crate) struct SortTexts<'a> {
    pieces: Vec<Piece<'a>>,
    built: Vec<u8>,
}

enum Piece<'a> {
    Slice(SortText<'a>),
    /// `built[start..end]`.
    Built(usize, usize),
}

impl<'a> SortTexts<'a> {
    /// The sort texts of `items`, elements of an array of mode `mode` (keyed or a set).
    pub(crate) fn of(items: &[Val<'a>], mode: &ArrayMode<'_>) -> Result<Self, MalformedText> {
        let mut built = Vec::new();
        let pieces = match mode {
            ArrayMode::Keyed(fields) => {
                let quoted = quote_all(fields);
                let mut pieces = Vec::with_capacity(items.len());
                for item in items {
                    let values = key_values(*item, &quoted)?;
                    pieces.push(if let [value] = values.as_slice() {
                        let text = value.map_or("null", |v| v.text);
                        Piece::Slice(SortText::single_key(text.as_bytes()))
                    } else {
                        let start = built.len();
                        let texts = values.iter().map(|v| v.map(|v| v.text.as_bytes()));
                        write_keyed(texts, &mut built, |t, out| out.extend_from_slice(t));
                        Piece::Built(start, built.len())
                    });
                }
                pieces
            }
            _ => items
                .iter()
                .map(|item| Piece::Slice(SortText::whole(item.text.as_bytes())))
                .collect(),
        };
        Ok(Self { pieces, built })
    }

    pub(crate) fn len(&self) -> usize {
        self.pieces.len()
    }

    /// The sort text of element `i` (empty past the end).
    pub(crate) fn get(&self, i: usize) -> SortText<'_> {
        match self.pieces.get(i) {
            Some(Piece::Slice(t)) => *t,
            Some(Piece::Built(start, end)) => {
                SortText::whole(self.built.get(*start..*end).unwrap_or_default())
            }
            None => SortText::whole(b""),
        }
    }

    /// The canonical order of the elements.
    pub(crate) fn arrangement(&self) -> super::Arrangement {
        super::arrange(self.len(), |i| self.get(i))
    }
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

    /// Where this value starts in the whole text.
    pub(crate) fn offset(&self) -> usize {
        self.at
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
    pub(crate) fn parse(self) -> Result<Value, MalformedText> {
        super::parse_str(self.text).map_err(|e| self.error(0, &e.to_string()))
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
            string_end(b, start).map_err(|at| self.obj.error(at, "unterminated string"))?;
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
        let item = (!self.done).then(|| self.step())?;
        self.done |= item.is_err();
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
        let item = (!self.done).then(|| self.step())?;
        self.done |= item.is_err();
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
                i = string_end(b, i).map_err(|at| (at, "unterminated string"))?;
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

/// The decoded text of a string's contents (between the quotes).
fn decode(raw: &str) -> Result<Cow<'_, str>, &'static str> {
    decode_raw(raw).map_err(|_| "bad escape in a string")
}

// ---------------------------------------------------------------------------------------
// Checking that a text is canonical
// ---------------------------------------------------------------------------------------

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
                i = string_end(b, i).unwrap_or(b.len());
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
            Some(b'{' | b'[') if stack.len() >= MAX_DEPTH => {
                return Err(fail(
                    i,
                    &format!("nesting deeper than {MAX_DEPTH} arrays and objects"),
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
            Some(b'"') => i = check_string(text, i)?,
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
    let end = check_string(text, i)?;
    let raw = text
        .get(i + 1..end - 1)
        .ok_or_else(|| fail(i, "bad member name"))?;
    if b.get(end) != Some(&b':') {
        return Err(fail(end, "expected ':' after a member name"));
    }
    let name = decode(raw).map_err(|m| fail(i, m))?;
    if let Some(last) = last {
        // Names without escapes and without characters from U+E000 up (lead bytes 0xEE
        // and above) compare the same by bytes as by UTF-16 code units.
        let plain = |n: &str| n.bytes().all(|c| c != b'\\' && c < 0xEE);
        let order = if plain(last) && plain(raw) {
            last.as_bytes().cmp(raw.as_bytes())
        } else {
            compare_keys(&decode(last).map_err(|m| fail(i, m))?, &name)
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
fn check_string(text: &str, i: usize) -> Result<usize, MalformedText> {
    scan_string(text, i, Check::Canonical, None)
        .map(|s| s.end)
        .map_err(|e| MalformedText {
            offset: e.at.saturating_sub(1),
            message: match e.fault {
                Fault::Eof => "unterminated string",
                Fault::Control => "control character in a string must be escaped",
                _ => "escape is not the canonical one",
            }
            .to_owned(),
        })
}

/// Checks the number at `i` (JSON grammar, then canonical form) and returns its end.
fn check_number(text: &str, i: usize) -> Result<usize, MalformedText> {
    let fail = |offset: usize| MalformedText {
        offset,
        message: "not a number in canonical form".to_owned(),
    };
    let end = scan_literal(text.as_bytes(), i).map_err(|e| fail(e.at.saturating_sub(1)))?;
    let number = text.get(i..end).ok_or_else(|| fail(i))?;
    let mut buf = ryu_js::Buffer::new();
    if canonical_number_text(number, &mut buf) != Some(number) {
        return Err(fail(i));
    }
    Ok(end)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{index, skip_inside, validate};
    use crate::canon::{Map, Value, to_canonical_string};
    use proptest::prelude::*;

    pub(crate) fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            "[a\"\\\\{}\\[\\],:é\u{1}]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-c{\\[\"]{0,3}", inner, 0..6)
                    .prop_map(|m: Map| Value::Object(m)),
            ]
        })
    }

    proptest! {
        /// The unchecked index of canonical text is the table the checking pass builds.
        #[test]
        fn index_equals_the_checked_table(v in value()) {
            let text = to_canonical_string(&v);
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
