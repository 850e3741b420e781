//! Changes replayed onto a document's canonical text, without building its tree.
//!
//! An as-of read starts from a stored text (a checkpoint, or the current document) and
//! replays the changes between it and the version asked for. Replaying them one by one on a
//! [`Value`] means parsing the whole document into a tree and printing it again, which
//! costs many times what the changes themselves touch. Here the changes are first folded
//! into a tree of edits ([`Edits`]: "this member is now that text", "this element is gone",
//! "inside this element, …"), then the stored text is copied in one pass, the edits spliced
//! in where their paths lead. Untouched parts are copied as they stand.
//!
//! The result is exactly what [`diff::apply`] gives, printed canonically: canonical text
//! keeps object members in [`canon::compare_keys`] order, keyed elements in the order of
//! their key's sort text and set elements in the order of their own text, and an added
//! member or element goes where `diff::apply` puts it, at its place in that order. A change
//! that lands inside a value an earlier change of the same replay wrote is applied to that
//! value, parsed, with [`diff::apply`].
//!
//! Anything this does not handle, or that does not fit (a change to a place that is not
//! there, an array not in canonical order, a `move`, a value or a base text that is not
//! canonical JSON), gives `None`: the caller replays on values instead, which reports a log
//! that does not replay as such.

use crate::canon::{self, Val, Value};
use crate::diff;
use crate::model::{Change, Op};
use crate::path::{DocPath, Segment};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// One change to replay: where, what, and the value after (canonical text).
pub(crate) struct Step {
    /// The path's text (see [`crate::path`]), shared by the steps at that path: a replay of
    /// many versions repeats the same paths, and each one (each `Arc`) is read once.
    pub(crate) path: Arc<str>,
    pub(crate) op: Op,
    pub(crate) new: Option<String>,
}

/// [`replay_numbered`], the paths numbered and the steps folded here (as an as-of read
/// does before it lays out values).
#[cfg(test)]
pub(crate) fn replay(
    base: Option<&str>,
    base_checked: bool,
    changes: Vec<Step>,
) -> Option<Option<String>> {
    let (ids, mut paths) = tests::number(&changes);
    let (changes, ids) = tests::without_superseded(changes, ids, &mut paths);
    replay_numbered(base, base_checked, changes, ids, paths)
}

/// `base` (canonical text; `None`: absent) with `changes` applied in order, as canonical
/// text (`None` inside: absent); `ids` numbers each change's path among `paths`. The
/// caller folds each path's run of changes first ([`Paths::folded`]) when it can: the
/// answer is the same, for less work.
/// `base_checked` says that `base` is known canonical (it hashes to what the store
/// recorded for it); otherwise it is checked first. `None`: the changes could not be
/// replayed on text (see the module documentation).
pub(crate) fn replay_numbered(
    base: Option<&str>,
    base_checked: bool,
    changes: Vec<Step>,
    ids: Vec<usize>,
    mut paths: Paths,
) -> Option<Option<String>> {
    // A change at the root replaces the whole document, so while the changes start with
    // such, the value of the last one is the base (read forward from before a document
    // was put, the first change is its whole text) and no tree of edits is built on it.
    let mut changes = changes.into_iter().zip(ids).peekable();
    let (mut base, mut base_checked) = (base.map(Cow::Borrowed), base_checked);
    while let Some((step, _)) = changes.next_if(|(c, _)| c.path.is_empty() && c.op != Op::Move) {
        match (step.op, base.is_some()) {
            (Op::Add, true) | (Op::Remove | Op::Replace, false) => return None,
            _ => {}
        }
        (base, base_checked) = (step.new.map(Cow::Owned), false);
    }
    let base = base.as_deref();
    let tree = paths.tree()?;
    let mut edits = Edits {
        root: Node::Inside(BTreeMap::new()),
        base: base.is_some(),
    };
    let mut keys = Vec::new();
    for (change, id) in changes {
        tree.keys_of(id, &mut keys);
        edits.apply(change, &keys)?;
    }
    // No edit inside a base known to be canonical: it is the answer as it stands.
    if let (Node::Inside(children), Some(text), true) = (&edits.root, base, base_checked)
        && children.is_empty()
    {
        return Some(Some(text.to_owned()));
    }
    let ends = match base {
        Some(text) if base_checked => canon::index(text),
        Some(text) => canon::checked_index(text).ok()?,
        None => Vec::new(),
    };
    let base = base.map(|text| Val::whole(text, &ends));
    let mut out = String::with_capacity(base.map_or(0, |b| b.text.len() + b.text.len() / 8));
    match &edits.root {
        Node::Set(None) => return Some(None),
        Node::Inside(children) if base.is_none() => return children.is_empty().then_some(None),
        root => emit(base, root, &mut out)?,
    }
    Some(Some(out))
}

/// The distinct paths of a replay, by number, and the tree of their steps ([`Tree`]),
/// made once for the thousands of paths one version of a wide feed touches.
pub(crate) struct Paths {
    texts: Vec<Arc<str>>,
    /// Made on first use; `None` inside: a path that does not parse.
    tree: Option<Option<Tree>>,
}

impl Paths {
    /// Paths `texts`, each a different path, numbered by their place.
    pub(crate) fn new(texts: Vec<Arc<str>>) -> Self {
        Self { texts, tree: None }
    }

    /// The text of path `id`.
    pub(crate) fn text(&self, id: usize) -> &Arc<str> {
        &self.texts[id]
    }

    /// The tree of the paths (`None`: one does not parse).
    fn tree(&mut self) -> Option<&Tree> {
        self.tree
            .get_or_insert_with(|| Tree::of(&self.texts))
            .as_ref()
    }

    /// What becomes of each of a replay's steps, at paths `ids` (numbers among these
    /// paths) with ops `ops`, once the run of steps of each path that has no
    /// other path of the steps inside it or around it (so its steps meet no other) is
    /// folded into one: its value is the last step's, its op says whether the path held a
    /// value before the first and after the last (none before nor after: no step).
    /// `Some(op)`: kept, with that op; `None`: dropped. A feed whose versions replace
    /// thousands of numbers each is then replayed a step per field, not per field and
    /// version.
    ///
    /// `None` for all of them when nothing folds: a move, a path with one step each, a
    /// path that does not parse, or steps at a path that do not follow one another (an
    /// `add` where there is a value, a `remove` or `replace` where there is none), which
    /// are all kept so that the replay sees what is wrong.
    pub(crate) fn folded(&mut self, ids: &[usize], ops: &[Op]) -> Option<Vec<Option<Op>>> {
        if ops.len() < 2 || ops.contains(&Op::Move) {
            return None;
        }
        // Per path: whether it held a value before its first step and after each step so
        // far, and the index of its last step.
        let mut runs: Vec<Option<(bool, bool, usize)>> = vec![None; self.texts.len()];
        for (i, (&op, &id)) in ops.iter().zip(ids).enumerate() {
            let before = op != Op::Add;
            let after = op != Op::Remove;
            match runs.get_mut(id)? {
                run @ None => *run = Some((before, after, i)),
                Some(run) if run.1 == before => (run.1, run.2) = (after, i),
                Some(_) => return None,
            }
        }
        if self.texts.len() == ops.len() {
            return None;
        }
        // Paths with another inside them, or inside another, keep every step.
        let tree = self.tree()?;
        for (run, &nested) in runs.iter_mut().zip(&tree.nested) {
            if nested {
                *run = None;
            }
        }
        Some(
            ops.iter()
                .zip(ids)
                .enumerate()
                .map(|(i, (&op, &id))| match runs[id] {
                    Some((before, after, last)) if i == last => Op::between_presence(before, after),
                    Some(_) => None,
                    None => Some(op),
                })
                .collect(),
        )
    }
}

/// The steps of a replay's paths as a tree: a node per distinct prefix (the root, node 0,
/// is the whole document), each step's text parsed once into a key and each key ranked
/// among all of them once.
struct Tree {
    /// Per node: the node it is inside (the root: itself) and its key (the root: none).
    parent: Vec<usize>,
    key: Vec<usize>,
    /// The node of each path.
    node_of: Vec<usize>,
    /// The distinct keys and the rank of each in canonical order (equal keys, two texts of
    /// one step, share a rank).
    keys: Vec<Rc<Key>>,
    ranks: Vec<u32>,
    /// Per path: whether another path is inside it or around it.
    nested: Vec<bool>,
}

impl Tree {
    /// The tree of paths `texts`; `None` when one does not parse.
    fn of(texts: &[Arc<str>]) -> Option<Self> {
        let mut nodes: rustc_hash::FxHashMap<&str, usize> = Default::default();
        nodes.insert("", 0);
        let (mut parent, mut key) = (vec![0], vec![usize::MAX]);
        let mut by_step: rustc_hash::FxHashMap<&str, usize> = Default::default();
        let mut distinct: Vec<Key> = Vec::new();
        let mut node_of = Vec::with_capacity(texts.len());
        let mut starts = Vec::new();
        for text in texts {
            let text: &str = text;
            if let Some(&node) = nodes.get(text) {
                node_of.push(node);
                continue;
            }
            // Where each step starts; the prefixes before them are the path's ancestors.
            starts.clear();
            for step in step_texts(text) {
                starts.push(step?.as_ptr() as usize - text.as_ptr() as usize);
            }
            // The longest ancestor with a node (most often the parent), then a node for
            // each step after it.
            let (mut at, mut node) = starts
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, &start)| nodes.get(&text[..start]).map(|&n| (i, n)))?;
            while at < starts.len() {
                let end = starts.get(at + 1).copied().unwrap_or(text.len());
                let step = &text[starts[at]..end];
                let k = match by_step.get(step) {
                    Some(&k) => k,
                    None => {
                        distinct.push(Key::of_step(step)?);
                        by_step.insert(step, distinct.len() - 1);
                        distinct.len() - 1
                    }
                };
                parent.push(node);
                key.push(k);
                node = parent.len() - 1;
                nodes.insert(&text[..end], node);
                at += 1;
            }
            node_of.push(node);
        }
        let mut order: Vec<usize> = (0..distinct.len()).collect();
        order.sort_unstable_by(|&a, &b| distinct[a].cmp(&distinct[b]));
        let mut ranks = vec![0u32; distinct.len()];
        let mut rank = 0u32;
        for (i, &k) in order.iter().enumerate() {
            if i > 0 && distinct[order[i - 1]] != distinct[k] {
                rank += 1;
            }
            ranks[k] = rank;
        }
        // A node has a path strictly inside it (`below`) or strictly around it (`above`).
        // Nodes come after the node they are inside.
        let mut is_path = vec![false; parent.len()];
        for &node in &node_of {
            is_path[node] = true;
        }
        let mut below = vec![false; parent.len()];
        for &node in &node_of {
            let mut n = node;
            while n != 0 && !below[parent[n]] {
                below[parent[n]] = true;
                n = parent[n];
            }
        }
        let mut above = vec![false; parent.len()];
        for n in 1..parent.len() {
            above[n] = is_path[parent[n]] || above[parent[n]];
        }
        let nested = node_of.iter().map(|&n| below[n] || above[n]).collect();
        Some(Tree {
            parent,
            key,
            node_of,
            keys: distinct.into_iter().map(Rc::new).collect(),
            ranks,
            nested,
        })
    }

    /// The keys along path `id`, root first, in `out`.
    fn keys_of(&self, id: usize, out: &mut Vec<Ranked>) {
        out.clear();
        let mut n = self.node_of[id];
        while n != 0 {
            let k = self.key[n];
            out.push(Ranked {
                rank: self.ranks[k],
                key: self.keys[k].clone(),
            });
            n = self.parent[n];
        }
        out.reverse();
    }
}

/// The text of each step of path `text`: `/name` up to the next `/` or `[`, a selector
/// `[…]` up to its closing bracket (its JSON strings and values passed over whole). `None`
/// in place of a step that is not well formed. Each step's text is then parsed on its own
/// ([`Key::of_step`]), which checks it.
fn step_texts(text: &str) -> impl Iterator<Item = Option<&str>> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at;
        let end = match bytes.get(start)? {
            b'/' => bytes[start + 1..]
                .iter()
                .position(|&b| b == b'/' || b == b'[')
                .map_or(bytes.len(), |n| start + 1 + n),
            b'[' => match crate::path::bracketed_end(text, start) {
                Some(end) => end,
                None => {
                    at = bytes.len();
                    return Some(None);
                }
            },
            _ => {
                at = bytes.len();
                return Some(None);
            }
        };
        at = end;
        Some(Some(&text[start..end]))
    })
}

/// The edits a run of changes makes, as a tree along their paths.
struct Edits {
    root: Node,
    /// Whether the base document is there.
    base: bool,
}

enum Node {
    /// The value here is this (`None`: absent).
    Set(Option<Set>),
    /// The value of the base here, with these edits inside, by step in canonical order.
    Inside(BTreeMap<Ranked, Child>),
}

enum Set {
    /// Canonical text, as the change carried it.
    Text(String),
    /// Parsed, because a later change applied inside it.
    Tree(Value),
}

struct Child {
    node: Node,
    /// Whether the base has a value at this step (an `add` made it otherwise).
    in_base: bool,
}

/// A step inside a container, ordered as canonical text orders it.
#[derive(Clone, PartialEq, Eq)]
enum Key {
    /// An object member, by name.
    Member(Rc<str>),
    /// An array element, by the text it sorts by: its key values as a canonical JSON array
    /// (`fields`: the key fields) or, in a set (`fields` empty), its own canonical text.
    Element { sort: Rc<str>, fields: Rc<[String]> },
}

/// A step's key with its rank among the keys of one replay (see [`Tree`]): the edits
/// of a replay of thousands of changes are ordered by comparing numbers, not texts in
/// canonical order.
#[derive(Clone)]
struct Ranked {
    rank: u32,
    key: Rc<Key>,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank.cmp(&other.rank)
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Member(a), Self::Member(b)) => canon::compare_keys(a, b),
            (Self::Element { sort: a, fields: f }, Self::Element { sort: b, fields: g }) => {
                a.cmp(b).then_with(|| f.cmp(g))
            }
            (Self::Member(_), Self::Element { .. }) => Ordering::Less,
            (Self::Element { .. }, Self::Member(_)) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Key {
    /// The key of the one step `text` (`/name` or `[…]`). `None`: not one well-formed step.
    fn of_step(text: &str) -> Option<Self> {
        match DocPath::parse(text).ok()?.segments() {
            [seg] => Some(Self::of(seg)),
            _ => None,
        }
    }

    fn of(seg: &Segment) -> Self {
        match seg {
            Segment::Field(name) => Self::Member(Rc::from(name.as_str())),
            Segment::Keyed(key) => {
                let mut sort = Vec::new();
                canon::write_key_values(key.iter().map(|(_, v)| v), &mut sort);
                Self::Element {
                    sort: Rc::from(String::from_utf8_lossy(&sort)),
                    fields: key.iter().map(|(f, _)| f.clone()).collect(),
                }
            }
            Segment::Member(value) => Self::Element {
                sort: Rc::from(canon::to_canonical_string(value)),
                fields: Rc::from(Vec::new()),
            },
        }
    }
}

impl Node {
    /// Whether there is a value here now (`in_base`: whether the base has one).
    fn present(&self, in_base: bool) -> bool {
        match self {
            Self::Set(set) => set.is_some(),
            Self::Inside(_) => in_base,
        }
    }
}

impl Edits {
    /// Applies `change`, whose path has `keys`.
    fn apply(&mut self, change: Step, keys: &[Ranked]) -> Option<()> {
        if change.op == Op::Move {
            return None;
        }
        let (mut node, mut in_base) = (&mut self.root, self.base);
        for (i, key) in keys.iter().enumerate() {
            match node {
                Node::Set(None) => return None,
                Node::Set(Some(set)) => {
                    let path = DocPath::parse(&change.path).ok()?;
                    return apply_inside(set, path.segments().get(i..)?, change.op, change.new);
                }
                Node::Inside(children) => {
                    let last = i + 1 == keys.len();
                    let child = children.entry(key.clone()).or_insert_with(|| Child {
                        node: Node::Inside(BTreeMap::new()),
                        in_base: !(last && change.op == Op::Add),
                    });
                    node = &mut child.node;
                    in_base = child.in_base;
                }
            }
        }
        match (change.op, node.present(in_base)) {
            (Op::Add, true) | (Op::Remove | Op::Replace, false) => return None,
            _ => {}
        }
        // A value is spliced into the output as it stands: it must be canonical JSON.
        if let Some(text) = &change.new {
            canon::checked_index(text).ok()?;
        }
        *node = Node::Set(change.new.map(Set::Text));
        Some(())
    }
}

/// Applies a change at `segs` inside a value an earlier change set.
fn apply_inside(set: &mut Set, segs: &[Segment], op: Op, new: Option<String>) -> Option<()> {
    let tree = match std::mem::replace(set, Set::Tree(Value::Null)) {
        Set::Text(text) => canon::parse_str(&text).ok()?,
        Set::Tree(tree) => tree,
    };
    let mut doc = Some(tree);
    let change = Change {
        path: DocPath::from_segments(segs.to_vec()),
        op,
        old: None,
        new: new.map(|t| canon::parse_str(&t)).transpose().ok()?,
    };
    diff::apply(&mut doc, &change).ok()?;
    *set = Set::Tree(doc?);
    Some(())
}

/// Writes the value `node` makes of `base` (which must be present unless `node` sets it).
fn emit(base: Option<Val<'_>>, node: &Node, out: &mut String) -> Option<()> {
    match node {
        Node::Set(None) => None,
        Node::Set(Some(Set::Text(text))) => {
            out.push_str(text);
            Some(())
        }
        Node::Set(Some(Set::Tree(value))) => {
            out.push_str(&canon::to_canonical_string(value));
            Some(())
        }
        Node::Inside(children) => {
            let base = base?;
            match base.first() {
                _ if children.is_empty() => {
                    out.push_str(base.text);
                    Some(())
                }
                b'{' => emit_object(base, children, out),
                b'[' => emit_array(base, children, out),
                _ => None,
            }
        }
    }
}

/// A step the base does not have: an added value (or one added, then removed again).
fn emit_new(
    child: &Child,
    out: &mut String,
    first: &mut bool,
    head: impl FnOnce(&mut String),
) -> Option<()> {
    match &child.node {
        _ if child.in_base => None,
        Node::Set(None) => Some(()),
        node => {
            separate(out, first);
            head(out);
            emit(None, node, out)
        }
    }
}

fn separate(out: &mut String, first: &mut bool) {
    if !std::mem::take(first) {
        out.push(',');
    }
}

/// A member's name and colon, as canonical text writes them.
fn write_name(name: &str, out: &mut String) {
    out.push_str(&canon::quoted(name));
    out.push(':');
}

fn emit_object(base: Val<'_>, children: &BTreeMap<Ranked, Child>, out: &mut String) -> Option<()> {
    let mut kids = children.iter().map(|(k, c)| (&*k.key, c)).peekable();
    let mut first = true;
    out.push('{');
    for member in base.members() {
        let member = member.ok()?;
        let name = member.name().ok()?;
        while let Some((Key::Member(k), child)) = kids.peek() {
            if canon::compare_keys(k, &name) != Ordering::Less {
                break;
            }
            emit_new(child, out, &mut first, |out| write_name(k, out))?;
            kids.next();
        }
        match kids.peek() {
            Some((Key::Member(k), child)) if **k == *name => {
                if !child.in_base {
                    return None;
                }
                if !matches!(child.node, Node::Set(None)) {
                    separate(out, &mut first);
                    out.push_str(member.head);
                    emit(Some(member.value), &child.node, out)?;
                }
                kids.next();
            }
            _ => {
                separate(out, &mut first);
                out.push_str(member.head);
                out.push_str(member.value.text);
            }
        }
    }
    for (key, child) in kids {
        let Key::Member(k) = key else { return None };
        emit_new(child, out, &mut first, |out| write_name(k, out))?;
    }
    out.push('}');
    Some(())
}

fn emit_array(base: Val<'_>, children: &BTreeMap<Ranked, Child>, out: &mut String) -> Option<()> {
    // One array's steps are all of one kind: elements keyed by the same fields, or set
    // elements.
    let Some(Key::Element { fields, .. }) = children.keys().next().map(|k| &*k.key) else {
        return None;
    };
    if children
        .keys()
        .any(|k| !matches!(&*k.key, Key::Element { fields: f, .. } if f == fields))
    {
        return None;
    }
    let quoted = canon::quote_all(fields);
    let mut kids = children.iter().map(|(k, c)| (&*k.key, c)).peekable();
    let mut first = true;
    let mut sort = Vec::new();
    let mut prev = String::new();
    out.push('[');
    for (n, elem) in base.elements().enumerate() {
        let elem = elem.ok()?;
        let text: &str = if fields.is_empty() {
            elem.text
        } else {
            sort.clear();
            let values = canon::key_values(elem, &quoted).ok()?;
            let texts = values.iter().map(|v| v.map(|v| v.text.as_bytes()));
            canon::write_keyed(texts, &mut sort, |t, out| out.extend_from_slice(t));
            std::str::from_utf8(&sort).ok()?
        };
        // Only an array in canonical order can take elements at their place in it.
        if n > 0 && prev.as_str() >= text {
            return None;
        }
        while let Some((Key::Element { sort: k, .. }, child)) = kids.peek() {
            if &**k >= text {
                break;
            }
            emit_new(child, out, &mut first, |_| {})?;
            kids.next();
        }
        match kids.peek() {
            Some((Key::Element { sort: k, .. }, child)) if &**k == text => {
                if !child.in_base {
                    return None;
                }
                if !matches!(child.node, Node::Set(None)) {
                    separate(out, &mut first);
                    emit(Some(elem), &child.node, out)?;
                }
                kids.next();
            }
            _ => {
                separate(out, &mut first);
                out.push_str(elem.text);
            }
        }
        prev.clear();
        prev.push_str(text);
    }
    for (_, child) in kids {
        emit_new(child, out, &mut first, |_| {})?;
    }
    out.push(']');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(path: &str, op: Op, new: Option<&str>) -> Step {
        Step {
            path: Arc::from(path),
            op,
            new: new.map(str::to_owned),
        }
    }

    /// Each step's path as a number, in the order paths first appear.
    pub(super) fn number(steps: &[Step]) -> (Vec<usize>, Paths) {
        let mut texts: Vec<Arc<str>> = Vec::new();
        let ids = steps
            .iter()
            .map(|s| match texts.iter().position(|t| *t == s.path) {
                Some(n) => n,
                None => {
                    texts.push(s.path.clone());
                    texts.len() - 1
                }
            })
            .collect();
        (ids, Paths::new(texts))
    }

    /// `steps` (at paths `ids`) with the runs of steps folded as [`Paths::folded`] says.
    pub(super) fn without_superseded(
        steps: Vec<Step>,
        ids: Vec<usize>,
        paths: &mut Paths,
    ) -> (Vec<Step>, Vec<usize>) {
        let ops: Vec<Op> = steps.iter().map(|s| s.op).collect();
        let Some(fate) = paths.folded(&ids, &ops) else {
            return (steps, ids);
        };
        steps
            .into_iter()
            .zip(ids)
            .zip(fate)
            .filter_map(|((step, id), op)| Some((Step { op: op?, ..step }, id)))
            .unzip()
    }

    /// The steps `without_superseded` keeps.
    fn fold(steps: Vec<Step>) -> Vec<Step> {
        let (ids, mut paths) = number(&steps);
        without_superseded(steps, ids, &mut paths).0
    }

    fn run(base: Option<&str>, steps: Vec<Step>) -> Option<Option<String>> {
        replay(base, false, steps)
    }

    #[test]
    fn members_and_elements_go_to_their_place() {
        let base = r#"{"b":1,"items":[{"id":1,"x":1},{"id":3}],"tags":["a","c"]}"#;
        let got = run(
            Some(base),
            vec![
                step("/a", Op::Add, Some("0")),
                step("/items[id=2]", Op::Add, Some(r#"{"id":2}"#)),
                step("/items[id=1]/x", Op::Replace, Some("9")),
                step("/tags[=\"b\"]", Op::Add, Some(r#""b""#)),
                step("/tags[=\"a\"]", Op::Remove, None),
                step("/c", Op::Add, Some("[]")),
            ],
        );
        assert_eq!(
            got,
            Some(Some(
                r#"{"a":0,"b":1,"c":[],"items":[{"id":1,"x":9},{"id":2},{"id":3}],"tags":["b","c"]}"#
                    .to_owned()
            ))
        );
    }

    #[test]
    fn a_change_inside_an_added_value_applies_to_it() {
        let got = run(
            Some(r#"{"a":1}"#),
            vec![
                step("/o", Op::Add, Some(r#"{"x":1}"#)),
                step("/o/y", Op::Add, Some("2")),
                step("/a", Op::Remove, None),
                step("/a", Op::Add, Some("3")),
            ],
        );
        assert_eq!(got, Some(Some(r#"{"a":3,"o":{"x":1,"y":2}}"#.to_owned())));
        let whole = run(
            None,
            vec![step("", Op::Add, Some("[1]")), step("", Op::Remove, None)],
        );
        assert_eq!(whole, Some(None));
    }

    #[test]
    fn only_replaced_values_of_paths_apart_are_collapsed() {
        let base = r#"{"a":1,"b":{"c":2}}"#;
        let steps = |list: &[(&str, Op, Option<&str>)]| -> Vec<Step> {
            list.iter().map(|&(p, op, v)| step(p, op, v)).collect()
        };
        let replaced = steps(&[
            ("/a", Op::Replace, Some("2")),
            ("/b/c", Op::Replace, Some("3")),
            ("/a", Op::Replace, Some("4")),
        ]);
        assert_eq!(
            fold(steps(&[
                ("/a", Op::Replace, Some("2")),
                ("/b/c", Op::Replace, Some("3")),
                ("/a", Op::Replace, Some("4")),
            ]))
            .len(),
            2
        );
        assert_eq!(
            run(Some(base), replaced),
            Some(Some(r#"{"a":4,"b":{"c":3}}"#.to_owned()))
        );
        // A run that removes, adds and replaces is one step; one that ends where it began
        // without a value, none.
        let runs = steps(&[
            ("/a", Op::Remove, None),
            ("/z", Op::Add, Some("1")),
            ("/a", Op::Add, Some("3")),
            ("/z", Op::Remove, None),
            ("/a", Op::Replace, Some("4")),
        ]);
        let folded = fold(runs);
        assert_eq!(folded.len(), 1);
        assert_eq!(
            (folded[0].op, folded[0].new.as_deref()),
            (Op::Replace, Some("4"))
        );
        let added = steps(&[
            ("/a", Op::Remove, None),
            ("/a", Op::Add, Some("3")),
            ("/y", Op::Add, Some("0")),
        ]);
        assert_eq!(
            run(Some(base), added),
            Some(Some(r#"{"a":3,"b":{"c":2},"y":0}"#.to_owned()))
        );
        // A path inside another keeps its steps (the others are still folded); steps that
        // do not follow one another are all replayed.
        let nested = || {
            steps(&[
                ("/b/c", Op::Replace, Some("3")),
                ("/a", Op::Replace, Some("7")),
                ("/b", Op::Replace, Some(r#"{"c":5}"#)),
                ("/a", Op::Replace, Some("8")),
                ("/b/c", Op::Replace, Some("6")),
            ])
        };
        assert_eq!(fold(nested()).len(), 4);
        assert_eq!(
            run(Some(base), nested()),
            Some(Some(r#"{"a":8,"b":{"c":6}}"#.to_owned()))
        );
        let broken = || steps(&[("/a", Op::Replace, Some("3")), ("/a", Op::Add, Some("4"))]);
        assert_eq!(fold(broken()).len(), 2);
        assert_eq!(run(Some(base), broken()), None);
    }

    #[test]
    fn what_does_not_fit_falls_back() {
        // A change to a place that is not there, an add where there is a value, a move,
        // a keyed change in an array out of order, text that is not canonical.
        let base = r#"{"a":1,"l":[{"id":2},{"id":1}]}"#;
        assert_eq!(
            run(Some(base), vec![step("/z/q", Op::Replace, Some("1"))]),
            None
        );
        assert_eq!(run(Some(base), vec![step("/z", Op::Remove, None)]), None);
        assert_eq!(run(Some(base), vec![step("/a", Op::Add, Some("2"))]), None);
        assert_eq!(
            run(Some(base), vec![step("/b", Op::Move, Some(r#""/a""#))]),
            None
        );
        assert_eq!(
            run(
                Some(base),
                vec![step("/l[id=3]", Op::Add, Some(r#"{"id":3}"#))]
            ),
            None
        );
        assert_eq!(
            run(
                Some(r#"{ "a":1}"#),
                vec![step("/a", Op::Replace, Some("2"))]
            ),
            None
        );
        assert_eq!(run(None, vec![step("/a", Op::Add, Some("2"))]), None);
    }

    #[test]
    fn paths_split_into_steps_whatever_their_selectors_hold() {
        fn split(text: &str) -> Option<Vec<&str>> {
            step_texts(text).collect()
        }
        assert_eq!(split(""), Some(vec![]));
        assert_eq!(
            split(r#"/items[id="a]/[b"]/x~1y~2z[=["]",{"k":[1]}]]"#),
            Some(vec![
                "/items",
                r#"[id="a]/[b"]"#,
                "/x~1y~2z",
                r#"[=["]",{"k":[1]}]]"#
            ])
        );
        assert_eq!(split(r#"/a[id="open"#), None);
        assert_eq!(split("a/b"), None);
        // A '/' or '[' inside a selector's value starts no step: the paths around
        // `/l[k="x/y"]/v` are the root, `/l` and `/l[k="x/y"]`, never `/l[k="x`.
        let paths = |texts: &[&str]| Paths::new(texts.iter().map(|&t| Arc::from(t)).collect());
        let mut broken = paths(&[r#"/l[k="x/y"]/v"#, r#"/l[k="x"#, r#"/l[k="x/y"]"#, "/m"]);
        assert!(broken.tree().is_none(), "a path that does not parse");
        let mut paths = paths(&[r#"/l[k="x/y"]/v"#, r#"/l[k="x"]"#, "/m", r#"/l[k="x/y"]"#]);
        let tree = paths.tree().unwrap();
        assert_eq!(tree.nested, [true, false, false, true]);
        let mut keys = Vec::new();
        tree.keys_of(0, &mut keys);
        assert_eq!(keys.len(), 3);
        // Keys come from each step's text parsed alone: a malformed one stops the replay.
        assert!(Key::of_step("/a/b").is_none());
        assert!(Key::of_step(r#"[id=1]"#).is_some());
    }

    #[test]
    fn steps_at_paths_with_brackets_and_slashes_in_their_values_replay_as_values_do() {
        let base = r#"{"l":[{"k":"x","v":1},{"k":"x/y","v":2},{"k":"x[","v":3}]}"#;
        let list = [
            (r#"/l[k="x/y"]/v"#, Op::Replace, Some("20")),
            (r#"/l[k="x"]/v"#, Op::Replace, Some("10")),
            (r#"/l[k="x["]"#, Op::Remove, None),
            (r#"/l[k="x/y"]/v"#, Op::Replace, Some("21")),
            (r#"/l[k="x"]/w"#, Op::Add, Some("true")),
            (r#"/l[k="x/y"]/v"#, Op::Remove, None),
        ];
        let steps = || list.iter().map(|&(p, op, v)| step(p, op, v)).collect();
        let got = run(Some(base), steps());
        // The same changes applied one by one to the parsed document.
        let mut doc = Some(canon::parse_str(base).unwrap_or(Value::Null));
        for &(path, op, new) in &list {
            let change = Change {
                path: DocPath::parse(path).unwrap_or_default(),
                op,
                old: None,
                new: new.and_then(|t| canon::parse_str(t).ok()),
            };
            assert!(diff::apply(&mut doc, &change).is_ok(), "{path}");
        }
        let want = doc.as_ref().map(canon::to_canonical_string);
        assert_eq!(got, Some(want));
        assert_eq!(
            got,
            Some(Some(
                r#"{"l":[{"k":"x","v":10,"w":true},{"k":"x/y"}]}"#.to_owned()
            ))
        );
    }
}
