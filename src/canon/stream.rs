//! Streaming: the canonical text of a JSON text written while it is parsed, keyed arrays
//! and sets put in order in the same pass, no tree built. This is the ingest's hot path.
//!
//! The writer makes exactly the scanner calls [`super::parse`]'s tree builder makes, in the
//! same order, and fails at the same points with the same errors, so the two refuse the
//! same inputs at the same places. Only what they build differs: bytes appended to
//! [`Writer::out`].

use super::order::{Arrangement, ArrayMode, OrderNode, OrderTree, SortText, arrange, write_keyed};
use super::parse::{LexError, Lexer, ParseError, Token, checked_text};
use super::quoted;
use super::write::{compare_keys, utf8, write_string};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;

/// The canonical text of a JSON text, written while it is parsed, without building a
/// [`Value`](super::Value): the same result as `parse(bytes).map(|v| to_canonical_string(&v))`,
/// success or refusal (the same [`ParseError`], line, column and message), for every input.
///
/// Memory is the input, the output and, for an object whose members are not already in
/// canonical order, a copy of that object's canonical text while it is reordered; no tree
/// is built. Use it where only the canonical bytes are needed (hashing, storing).
///
/// ```
/// let text = hist::canon::canonical_text(br#"{"b": [1.0, 2e-3], "a": -0}"#).unwrap();
/// assert_eq!(text, r#"{"a":0,"b":[1,0.002]}"#);
/// assert!(hist::canon::canonical_text(br#"{"a": 1, "a": 2}"#).is_err());
/// ```
pub fn canonical_text(bytes: &[u8]) -> Result<String, ParseError> {
    ordered_text(bytes, &OrderTree::default()).map(|(text, _)| text)
}

/// [`canonical_text`] with the keyed arrays and sets of `tree` put in canonical order (see
/// [`super::order`]), in the same single pass. The flag is true when some ordered array has
/// elements with equal sort texts (keys not unique): such an array is left in the order
/// written.
///
/// ```
/// use hist::canon::{ArrayOrder, OrderTree, PatternStep};
/// let mut tree = OrderTree::default();
/// tree.insert([PatternStep::Field("tags")], ArrayOrder::Set);
/// let (text, not_unique) = hist::canon::ordered_text(br#"{"tags": ["b", "a"]}"#, &tree).unwrap();
/// assert_eq!((text.as_str(), not_unique), (r#"{"tags":["a","b"]}"#, false));
/// ```
pub fn ordered_text(bytes: &[u8], tree: &OrderTree) -> Result<(String, bool), ParseError> {
    let text = checked_text(bytes)?;
    let mut writer = Writer {
        out: Vec::with_capacity(text.len()),
        spare: Vec::new(),
        spare_elements: Vec::new(),
        scratch: Vec::new(),
        buf: ryu_js::Buffer::new(),
        tree,
        not_unique: false,
    };
    let mut lx = Lexer::new(text);
    writer
        .value(&mut lx, tree.root(), None)
        .and_then(|()| lx.end())
        .map_err(|e| e.at(text))?;
    Ok((utf8(writer.out), writer.not_unique))
}

/// Objects with more members than this check a new name against a hash set of the earlier
/// ones (once their names stop arriving in canonical order); smaller ones scan.
const LINEAR_SCAN_MEMBERS: usize = 16;

/// The output of [`ordered_text`], the member and element lists of finished objects and
/// arrays and the buffer that reorders them (kept for reuse: a feed has an object and a
/// small set per record), and the rules that order arrays.
struct Writer<'t, 'a> {
    out: Vec<u8>,
    spare: Vec<Vec<Member<'a>>>,
    spare_elements: Vec<Vec<Element>>,
    scratch: Vec<u8>,
    buf: ryu_js::Buffer,
    tree: &'t OrderTree,
    /// Some ordered array was left as written: its sort texts are not unique.
    not_unique: bool,
}

/// The key field values of the element of a keyed array being written, collected from its
/// members as they are written, and turned into its sort text once it is complete.
struct KeyCapture<'t> {
    fields: &'t [String],
    /// Where each field's canonical value text is in `found`; `None`: missing so far.
    values: Vec<Option<(usize, usize)>>,
    found: Vec<u8>,
}

impl KeyCapture<'_> {
    /// Keeps the value of member `name` if it is a key field (a key may name a field twice).
    fn offer(&mut self, name: &str, value: &[u8]) {
        let mut kept = None;
        for (field, slot) in self.fields.iter().zip(&mut self.values) {
            if field == name {
                let range = *kept.get_or_insert_with(|| {
                    let start = self.found.len();
                    self.found.extend_from_slice(value);
                    (start, self.found.len())
                });
                *slot = Some(range);
            }
        }
    }

    /// Appends the sort text of the element to `out`, and forgets the element.
    fn finish(&mut self, out: &mut Vec<u8>) {
        let found = &self.found;
        let values = self
            .values
            .iter_mut()
            .map(|v| v.take().and_then(|(start, end)| found.get(start..end)));
        write_keyed(values, out, |v, out| out.extend_from_slice(v));
        self.found.clear();
    }
}

/// An element of an ordered array: where its text is in [`Writer::out`], and where its
/// sort text is (a keyed array's in the array's own buffer, a set's is its text).
struct Element {
    text: (usize, usize),
    sort: (usize, usize),
}

/// An object member already written: its name and where its `"name":value` bytes are in
/// [`Writer::out`].
struct Member<'a> {
    name: Cow<'a, str>,
    start: usize,
    end: usize,
}

impl<'a> Writer<'_, 'a> {
    /// Writes the canonical text of the value whose start is next. `node` is where it is in
    /// the order tree (`None`: no rule applies at or below it); `keys` is set for an element
    /// of a keyed array, to collect its key field values.
    fn value(
        &mut self,
        lx: &mut Lexer<'a>,
        node: Option<OrderNode>,
        keys: Option<&mut KeyCapture<'_>>,
    ) -> Result<(), LexError> {
        match lx.value()? {
            Token::Null => self.out.extend_from_slice(b"null"),
            Token::Bool(true) => self.out.extend_from_slice(b"true"),
            Token::Bool(false) => self.out.extend_from_slice(b"false"),
            Token::Number(literal) => {
                let text = lx.number_text(literal, &mut self.buf)?;
                self.out.extend_from_slice(text.as_bytes());
            }
            Token::String(Cow::Borrowed(raw)) => {
                // Without escapes, JSON input holds no quote, backslash or control
                // character: its canonical text is itself.
                self.out.push(b'"');
                self.out.extend_from_slice(raw.as_bytes());
                self.out.push(b'"');
            }
            Token::String(Cow::Owned(s)) => write_string(&s, &mut self.out),
            Token::Array => self.array(lx, node)?,
            Token::Object => self.object(lx, node, keys)?,
        }
        Ok(())
    }

    fn array(&mut self, lx: &mut Lexer<'a>, node: Option<OrderNode>) -> Result<(), LexError> {
        let tree = self.tree;
        let (mode, node) = node.map_or((ArrayMode::Opaque, None), |n| tree.array(n));
        let ordered = mode != ArrayMode::Opaque;
        let mut keys = match mode {
            ArrayMode::Keyed(fields) => Some(KeyCapture {
                fields,
                values: vec![None; fields.len()],
                found: Vec::new(),
            }),
            _ => None,
        };
        let mut elements = self.spare_elements.pop().unwrap_or_default();
        elements.clear();
        let mut sort_texts = Vec::new();
        self.out.push(b'[');
        let base = self.out.len();
        let mut first = true;
        while lx.has_next_element(&mut first)? {
            if self.out.len() > base {
                self.out.push(b',');
            }
            let start = self.out.len();
            self.value(lx, node, keys.as_mut())?;
            if ordered {
                let text = (start, self.out.len());
                let sort = match &mut keys {
                    Some(k) => {
                        let from = sort_texts.len();
                        k.finish(&mut sort_texts);
                        (from, sort_texts.len())
                    }
                    None => text,
                };
                elements.push(Element { text, sort });
            }
        }
        lx.close();
        if elements.len() > 1 {
            let by = keys.is_some().then_some(sort_texts.as_slice());
            if !order_elements(&mut self.out, base, &elements, by, &mut self.scratch)
                .map_err(|e| lx.err(e))?
            {
                self.not_unique = true;
            }
        }
        elements.clear();
        self.spare_elements.push(elements);
        self.out.push(b']');
        Ok(())
    }

    fn object(
        &mut self,
        lx: &mut Lexer<'a>,
        node: Option<OrderNode>,
        mut keys: Option<&mut KeyCapture<'_>>,
    ) -> Result<(), LexError> {
        let mut first = true;
        if !lx.has_next_key(&mut first)? {
            lx.close();
            self.out.extend_from_slice(b"{}");
            return Ok(());
        }
        let mut members = self.spare.pop().unwrap_or_default();
        members.clear();
        self.out.push(b'{');
        let base = self.out.len();
        let name = lx.key()?;
        self.member(lx, &mut members, name, node, keys.as_deref_mut())?;
        // Names so far are in strictly increasing canonical order: the object needs no
        // sorting, and a duplicate can only equal the last name.
        let mut in_order = true;
        let mut seen: Option<HashSet<Cow<'a, str>>> = None;
        while lx.has_next_key(&mut first)? {
            let name = lx.key()?;
            let last = members.last().map_or("", |m| m.name.as_ref());
            let duplicate = match (in_order, compare_keys(last, &name)) {
                (true, Ordering::Less) => false,
                (true, Ordering::Equal) => true,
                _ => {
                    in_order = false;
                    if members.len() < LINEAR_SCAN_MEMBERS {
                        members.iter().any(|m| m.name == name)
                    } else {
                        let seen = seen.get_or_insert_with(|| {
                            members.iter().map(|m| m.name.clone()).collect()
                        });
                        !seen.insert(name.clone())
                    }
                }
            };
            if duplicate {
                return Err(lx.in_object(format!("duplicate member name {}", quoted(&name))));
            }
            self.out.push(b',');
            self.member(lx, &mut members, name, node, keys.as_deref_mut())?;
        }
        lx.close();
        if !in_order {
            sort_members(&mut self.out, base, &mut members, &mut self.scratch)
                .map_err(|e| lx.err(e))?;
        }
        self.out.push(b'}');
        members.clear();
        self.spare.push(members);
        Ok(())
    }

    /// Writes `"name":value` for the member whose name was just read, and records it;
    /// `node` is the object's place in the order tree, `keys` set when the object is an
    /// element of a keyed array.
    fn member(
        &mut self,
        lx: &mut Lexer<'a>,
        members: &mut Vec<Member<'a>>,
        name: Cow<'a, str>,
        node: Option<OrderNode>,
        keys: Option<&mut KeyCapture<'_>>,
    ) -> Result<(), LexError> {
        lx.colon()?;
        let start = self.out.len();
        write_string(&name, &mut self.out);
        self.out.push(b':');
        let value_start = self.out.len();
        let node = node.and_then(|n| self.tree.field(n, &name));
        self.value(lx, node, None)?;
        if let Some(keys) = keys {
            keys.offer(&name, self.out.get(value_start..).unwrap_or_default());
        }
        members.push(Member {
            name,
            start,
            end: self.out.len(),
        });
        Ok(())
    }
}

/// Rewrites the members of an object, written from `out[base..]` on and separated by
/// commas, in canonical order of their (distinct) names.
fn sort_members(
    out: &mut Vec<u8>,
    base: usize,
    members: &mut [Member<'_>],
    scratch: &mut Vec<u8>,
) -> Result<(), &'static str> {
    members.sort_unstable_by(|a, b| compare_keys(&a.name, &b.name));
    let ranges = members.iter().map(|m| (m.start, m.end));
    rewrite(out, base, ranges, scratch)
}

/// Rewrites the elements of an ordered array, written from `out[base..]` on and separated
/// by commas, in the order of their sort texts (in `sort_texts`, or for a set in `out`
/// itself). Returns false, leaving them as written, when two sort texts are equal.
fn order_elements(
    out: &mut Vec<u8>,
    base: usize,
    elements: &[Element],
    sort_texts: Option<&[u8]>,
    scratch: &mut Vec<u8>,
) -> Result<bool, &'static str> {
    let order = {
        let source = sort_texts.unwrap_or(out);
        if elements
            .iter()
            .any(|e| source.get(e.sort.0..e.sort.1).is_none())
        {
            return Err(OUT_OF_RANGE);
        }
        let text = |i: usize| {
            let sort = elements.get(i).map_or((0, 0), |e| e.sort);
            SortText::whole(source.get(sort.0..sort.1).unwrap_or_default())
        };
        match arrange(elements.len(), text) {
            Arrangement::InOrder => return Ok(true),
            Arrangement::NotUnique => return Ok(false),
            Arrangement::Reorder(order) => order,
        }
    };
    let ranges = order
        .iter()
        .map(|&k| elements.get(k).map_or((0, usize::MAX), |e| e.text));
    rewrite(out, base, ranges, scratch)?;
    Ok(true)
}

const OUT_OF_RANGE: &str = "internal error: a member's or element's bytes are out of range";

/// Rewrites `out[base..]` as the pieces `ranges` (positions in `out`), in that order,
/// separated by commas.
fn rewrite(
    out: &mut Vec<u8>,
    base: usize,
    ranges: impl Iterator<Item = (usize, usize)>,
    scratch: &mut Vec<u8>,
) -> Result<(), &'static str> {
    scratch.clear();
    scratch.extend_from_slice(out.get(base..).ok_or(OUT_OF_RANGE)?);
    out.truncate(base);
    for (i, (start, end)) in ranges.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let bytes = start
            .checked_sub(base)
            .zip(end.checked_sub(base))
            .and_then(|(start, end)| scratch.get(start..end))
            .ok_or(OUT_OF_RANGE)?;
        out.extend_from_slice(bytes);
    }
    Ok(())
}
