//! The order of keyed arrays and sets: part of the canonical form.
//!
//! Rules (see `hist::rules`) say which arrays are keyed by which fields and which are sets;
//! here is what that means for their order, the one implementation of it that every reader
//! and writer of canonical text calls:
//!
//! - The **sort text** of an element of a keyed array is the canonical text of the JSON
//!   array of its key field values, in the rule's field order, a missing field (or an
//!   element that is not an object) counting as `null`: `[88]`, `["3.5.140.0/22","EC2"]`.
//!   The sort text of a set element is its own canonical text.
//! - Elements are ordered by their sort texts compared as bytes.
//! - When two elements have the same sort text (keys, or set elements, not unique), the
//!   array keeps the order it was written in, and the caller warns: the array is stored as
//!   one opaque value that time. Nothing is lost.
//!
//! [`OrderTree`] holds the rules of one document as a tree over document shapes, for walks
//! from the top; [`arrange`] decides an array's order from its elements' [`SortText`]s.

use super::value::Value;
use super::write::write_canonical;
use std::cmp::Ordering;

/// How an array at some place in a document is ordered (and diffed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayMode<'a> {
    /// One value: written as it is, and any change replaces it whole.
    Opaque,
    /// Elements keyed by these fields, ordered by their key.
    Keyed(&'a [String]),
    /// Elements are a set, ordered by their own text.
    Set,
}

/// What a rule says about the arrays at its pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayOrder {
    /// Elements are keyed by these fields (at least one).
    Keyed(Vec<String>),
    /// Elements are a set.
    Set,
}

impl ArrayOrder {
    /// The mode this gives an array.
    pub fn mode(&self) -> ArrayMode<'_> {
        match self {
            ArrayOrder::Keyed(fields) => ArrayMode::Keyed(fields),
            ArrayOrder::Set => ArrayMode::Set,
        }
    }
}

/// One step of a rule's pattern: an object member, or any element of an array (`[*]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternStep<'a> {
    /// The member of that name.
    Field(&'a str),
    /// Any element of an array.
    AnyElement,
}

/// The array rules of one document as a tree: one node per prefix of a rule's pattern, so
/// that a walk down a document finds the mode of each array, and whether any rule lies
/// below, in one step per level. A subtree without a node has no rule at or below it.
#[derive(Clone, Debug)]
pub struct OrderTree {
    /// Node 0 is the document's root.
    nodes: Vec<Node>,
}

impl Default for OrderTree {
    fn default() -> Self {
        Self {
            nodes: vec![Node::default()],
        }
    }
}

/// A node of an [`OrderTree`]: the shape of one pattern prefix.
#[derive(Clone, Debug, Default)]
struct Node {
    fields: Vec<(String, usize)>,
    element: Option<usize>,
    /// The rule whose pattern ends here (the last one inserted wins).
    order: Option<ArrayOrder>,
}

/// A place in an [`OrderTree`].
pub(crate) type OrderNode = usize;

impl OrderTree {
    /// Adds a rule: arrays at `pattern` are ordered as `order` says. A later rule for the
    /// same pattern replaces an earlier one.
    pub fn insert<'s>(
        &mut self,
        pattern: impl IntoIterator<Item = PatternStep<'s>>,
        order: ArrayOrder,
    ) {
        let mut at = 0;
        for step in pattern {
            at = match self.child(at, step) {
                Some(next) => next,
                None => {
                    let next = self.nodes.len();
                    self.nodes.push(Node::default());
                    if let Some(node) = self.nodes.get_mut(at) {
                        match step {
                            PatternStep::Field(name) => node.fields.push((name.to_owned(), next)),
                            PatternStep::AnyElement => node.element = Some(next),
                        }
                    }
                    next
                }
            };
        }
        if let Some(node) = self.nodes.get_mut(at) {
            node.order = Some(order);
        }
    }

    /// The node one step below `at`, if any.
    fn child(&self, at: OrderNode, step: PatternStep<'_>) -> Option<OrderNode> {
        let node = self.nodes.get(at)?;
        match step {
            PatternStep::Field(name) => self.field(at, name),
            PatternStep::AnyElement => node.element,
        }
    }

    /// The node of a pattern (the shape of a path), if some rule lies at or below it.
    fn find<'s>(&self, pattern: impl IntoIterator<Item = PatternStep<'s>>) -> Option<OrderNode> {
        pattern
            .into_iter()
            .try_fold(0, |at, step| self.child(at, step))
    }

    /// The mode of the arrays at `pattern` (the shape of their path: every element
    /// written `[*]`).
    pub fn mode<'s>(&self, pattern: impl IntoIterator<Item = PatternStep<'s>>) -> ArrayMode<'_> {
        self.find(pattern)
            .and_then(|n| self.nodes.get(n)?.order.as_ref())
            .map_or(ArrayMode::Opaque, ArrayOrder::mode)
    }

    /// True when some rule applies strictly below `pattern`.
    pub fn any_below<'s>(&self, pattern: impl IntoIterator<Item = PatternStep<'s>>) -> bool {
        self.find(pattern)
            .and_then(|n| self.nodes.get(n))
            .is_some_and(|n| n.element.is_some() || !n.fields.is_empty())
    }

    /// The root, unless no rule applies at all.
    pub(crate) fn root(&self) -> Option<OrderNode> {
        self.nodes
            .first()
            .filter(|n| n.order.is_some() || n.element.is_some() || !n.fields.is_empty())
            .map(|_| 0)
    }

    /// The member `name` of an object at `node`, if some rule lies at or below it.
    pub(crate) fn field(&self, node: OrderNode, name: &str) -> Option<OrderNode> {
        let fields = &self.nodes.get(node)?.fields;
        fields.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    /// How the array at `node` is ordered, and the node of its elements (`None` for an
    /// opaque array: nothing inside it is ordered either).
    pub(crate) fn array(&self, node: OrderNode) -> (ArrayMode<'_>, Option<OrderNode>) {
        match self.nodes.get(node) {
            Some(Node {
                order: Some(order),
                element,
                ..
            }) => (order.mode(), *element),
            _ => (ArrayMode::Opaque, None),
        }
    }
}

/// Writes the sort text of a keyed element, `[v1,v2,…]`, from its key field values in the
/// rule's order (`None`: missing, written `null`); `write` writes a value's canonical text.
pub(crate) fn write_keyed<T>(
    values: impl IntoIterator<Item = Option<T>>,
    out: &mut Vec<u8>,
    mut write: impl FnMut(T, &mut Vec<u8>),
) {
    out.push(b'[');
    for (i, v) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match v {
            Some(v) => write(v, out),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b']');
}

/// Writes the sort text of a keyed element given its key values.
pub(crate) fn write_key_values<'v>(values: impl IntoIterator<Item = &'v Value>, out: &mut Vec<u8>) {
    write_keyed(values.into_iter().map(Some), out, write_canonical);
}

/// Writes the sort text of `elem`, an element of an array of mode `mode` (keyed or a set)
/// into `out` (cleared first).
pub fn write_sort_text(elem: &Value, mode: &ArrayMode<'_>, out: &mut Vec<u8>) {
    out.clear();
    match mode {
        ArrayMode::Keyed(fields) => {
            write_keyed(fields.iter().map(|f| elem.get(f)), out, write_canonical);
        }
        _ => write_canonical(elem, out),
    }
}

/// The text an element of an ordered array sorts by, borrowed from where it is: compared as
/// the bytes of the whole text. A one-field key's text `[value]` need not be built: it is
/// given as the value's text ([`SortText::single_key`]).
#[derive(Clone, Copy, Debug)]
pub struct SortText<'a> {
    text: &'a [u8],
    /// The sort text is `[` `text` `]`.
    bracketed: bool,
}

impl<'a> SortText<'a> {
    /// The whole sort text: a set element's canonical text, or a keyed element's built
    /// with [`write_sort_text`].
    pub fn whole(text: &'a [u8]) -> Self {
        Self {
            text,
            bracketed: false,
        }
    }

    /// The sort text `[value]` of an element keyed by one field, from the canonical text of
    /// that field's value (`null` when it is missing).
    pub fn single_key(value: &'a [u8]) -> Self {
        Self {
            text: value,
            bracketed: true,
        }
    }

    /// The bytes of the whole sort text.
    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let (open, close): (&[u8], &[u8]) = if self.bracketed {
            (b"[", b"]")
        } else {
            (b"", b"")
        };
        open.iter().chain(self.text).chain(close).copied()
    }

    /// The first 8 bytes of the whole text as a number (zeros past its end): comparing
    /// these settles most comparisons. Canonical text has no zero byte, so the padding
    /// sorts before any byte of a longer text, as a shorter text does.
    fn prefix(&self) -> u64 {
        let mut head = [0u8; 8];
        for (slot, b) in head.iter_mut().zip(self.bytes()) {
            *slot = b;
        }
        u64::from_be_bytes(head)
    }
}

impl Ord for SortText<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.bracketed, other.bracketed) {
            (false, false) => self.text.cmp(other.text),
            // `[a]` against `[b]`: as `a]` against `b]`.
            (true, true) => {
                let (a, b) = (self.text, other.text);
                let n = a.len().min(b.len());
                a[..n].cmp(&b[..n]).then_with(|| {
                    let next = |t: &[u8]| t.get(n).copied().unwrap_or(b']');
                    next(a).cmp(&next(b)).then_with(|| a.len().cmp(&b.len()))
                })
            }
            _ => self.bytes().cmp(other.bytes()),
        }
    }
}

impl PartialOrd for SortText<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortText<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for SortText<'_> {}

/// The canonical order of an array, from its elements' sort texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// The elements are already in canonical order (their sort texts strictly increase).
    InOrder,
    /// The canonical order: the indexes of the elements, in the order they go in.
    Reorder(Vec<usize>),
    /// Two elements have the same sort text: the array keeps the order it was written in.
    NotUnique,
}

/// The canonical order of `n` elements whose sort texts `text` gives (see the
/// [module documentation](self)).
///
/// ```
/// use hist::canon::{Arrangement, SortText, arrange};
/// let texts: [&[u8]; 3] = [b"\"b\"", b"\"c\"", b"\"a\""];
/// assert_eq!(arrange(3, |i| SortText::whole(texts[i])), Arrangement::Reorder(vec![2, 0, 1]));
/// assert_eq!(arrange(2, |i| SortText::whole(texts[i])), Arrangement::InOrder);
/// assert_eq!(arrange(2, |_| SortText::whole(b"1")), Arrangement::NotUnique);
/// ```
pub fn arrange<'t>(n: usize, text: impl Fn(usize) -> SortText<'t>) -> Arrangement {
    if (1..n).all(|i| text(i - 1) < text(i)) {
        return Arrangement::InOrder;
    }
    // Most comparisons are settled by the first 8 bytes, compared as one number.
    let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (text(i).prefix(), i)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| text(a.1).cmp(&text(b.1))));
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    if order.windows(2).any(|w| text(w[0]) == text(w[1])) {
        return Arrangement::NotUnique;
    }
    Arrangement::Reorder(order)
}
