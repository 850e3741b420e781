//! Blame: for every leaf of a document, the change that last set it.
//!
//! # Terminology
//!
//! - **Leaf**: a place in the document that holds a value blame answers for as a whole:
//!   a scalar (string, number, boolean, null); an empty object or empty array; an opaque
//!   array (one that no rule makes keyed or a set; any change replaces it whole, so it is
//!   one leaf however many lines it prints on); an element of a set (`/tags[="red"]`: a set
//!   element is added and removed whole). Objects and the elements of keyed arrays
//!   (`/items[id=1]`) are not leaves: blame walks into them. Whether an array is keyed, a
//!   set or opaque is decided by the key's rules ([`Repo::key_rules`],
//!   [`crate::rules::ArrayMode`]); a keyed array or set whose keys are not unique is
//!   stored opaque, and so it is one leaf.
//! - **Setter**: the change that last set a leaf, as of the moment blamed: the newest
//!   change at the leaf, at one of its ancestors (an `add` or `replace` of a parent sets
//!   every leaf below it), or below it (a change inside what is now one leaf: the last
//!   element removed from a set that is now empty, the last member removed from an object
//!   that is now `{}`, a change recorded while an array that is now opaque was keyed).
//! - **Change path**: the path the setter was recorded at (the leaf, an ancestor, or a
//!   path below it). It tells a field edit (`/plan`) from a whole-object write
//!   (`/billing`, or `""` for the first snapshot).
//!
//! # Algorithm
//!
//! The document is read as of the moment blamed and its leaves put in a tree keyed by
//! path steps. The change log of the key is then read ONCE, newest first, as a stream:
//! each change attributes every still unattributed leaf at or below its path, or the leaf
//! above it. Reading stops as soon as every leaf has its setter, so a field edited
//! yesterday costs one row whatever the length of the history; [`Blame::rows_read`] says
//! how many rows were read. Values are never loaded from the log: a leaf's value is the
//! document's.
//!
//! Once the stream has read a few rows (`STREAM_ROWS`) and the leaves still open cost less
//! to look up (`LOOKUP_ROWS` rows' worth each) than the rest of the history does to read,
//! each of them is looked up in the (key, path, seq) index instead: the newest change at
//! the leaf or at one of its ancestors (or below it, for a container). A leaf that only the
//! first write of a million-change history explains costs a few lookups, not a million
//! rows.
//!
//! Renames are followed back (see `PathMap`; a key with renames reads the whole stream),
//! and a leaf whose setter lies in a span that `hist gc` compacted says so
//! (`Setter::compacted`).

use crate::canon;
use crate::canon::Value;
use crate::diff::{self, element_key};
use crate::error::{Error, Result};
use crate::model::{Op, TxInfo};
use crate::path::{DocPath, PatternSegment, Segment};
use crate::repo::Repo;
use crate::rules::{ArrayMode, KeyRules, shape_of};
use crate::store::stored_path;
use crate::time::When;
use std::collections::HashMap;

/// The answer of [`Repo::blame`]: every leaf of a document (or of a subtree) with its
/// setter.
#[derive(Clone, Debug)]
pub struct Blame {
    /// The document key.
    pub key: String,
    /// The last transaction included (`None`: now).
    pub tx: Option<i64>,
    /// True when the document existed at that moment.
    pub document: bool,
    /// The subtree blamed (the root: the whole document).
    pub path: DocPath,
    /// The value at `path` (`None`: the document, or the path, is absent then).
    pub value: Option<Value>,
    /// Every leaf at or below `path`, in document order (the order of the pretty form).
    pub leaves: Vec<BlameLeaf>,
    /// How many change rows were read from the log.
    pub rows_read: usize,
    rules: KeyRules,
}

/// One leaf and its setter.
#[derive(Clone, Debug, PartialEq)]
pub struct BlameLeaf {
    /// Where the leaf is.
    pub path: DocPath,
    /// Its value.
    pub value: Value,
    /// The change that last set it (`None` only when the log does not explain the
    /// document, which `hist fsck` reports).
    pub setter: Option<Setter>,
}

/// The change that last set a leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Setter {
    /// Its transaction (who, when, why).
    pub tx: TxInfo,
    /// The change row's id.
    pub change_id: i64,
    /// Where the change was recorded: the leaf, an ancestor of it, or a path below it.
    pub change_path: DocPath,
    /// What the change did at `change_path`.
    pub op: Op,
    /// True when `hist gc` compacted the span this change belongs to: the value is the
    /// last of several, and who set the earlier ones is no longer known.
    pub compacted: bool,
}

/// One line of the pretty-printed value, with the leaf it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlameLine {
    /// The text, laid out as [`canon::to_pretty_string`] lays it out.
    pub text: String,
    /// The index in [`Blame::leaves`] of the leaf on this line; `None` for lines that
    /// only open or close an object or an array.
    pub leaf: Option<usize>,
}

impl Repo {
    /// Blames `key` as of `when` (default: now), optionally only the subtree at `path`.
    ///
    /// When the document (or the path) is absent then, the answer has no value and no
    /// leaves. See the [module documentation](crate::blame) for terms and the algorithm.
    pub fn blame(&self, key: &str, when: Option<When>, path: Option<&DocPath>) -> Result<Blame> {
        self.blame_reading(key, when, path, BlameReads::Auto)
    }

    /// [`Repo::blame`], reading the log as `reads` says. Every way must give the same
    /// answer; tests use this to prove it.
    #[doc(hidden)]
    pub fn blame_reading(
        &self,
        key: &str,
        when: Option<When>,
        path: Option<&DocPath>,
        reads: BlameReads,
    ) -> Result<Blame> {
        self.snapshot(|| {
            let (doc, bound) = match when {
                None => (self.current(key)?, None),
                Some(when) => match self.resolve(when)? {
                    Some(tx) => (self.as_of_tx(key, tx)?.doc, Some(tx)),
                    None => (None, Some(0)),
                },
            };
            let root = path.cloned().unwrap_or_default();
            let rules = self.key_rules(key);
            let mut blame = Blame {
                key: key.to_owned(),
                tx: bound,
                document: doc.is_some(),
                path: root.clone(),
                value: doc
                    .as_ref()
                    .and_then(|d| diff::get(d, root.segments()))
                    .cloned(),
                leaves: Vec::new(),
                rows_read: 0,
                rules,
            };
            let Some(value) = &blame.value else {
                return Ok(blame);
            };
            let (mut tree, leaves) = Tree::of(value, &blame.rules, &root);
            blame.leaves = leaves;
            self.attribute(key, bound, &root, &mut tree, &mut blame, reads)?;
            Ok(blame)
        })
    }

    /// Reads the log of `key` newest first and attributes leaves until none is left, or
    /// until looking the leaves still open up one by one ([`Repo::attribute_by_lookup`])
    /// costs less than reading the rest of the history.
    fn attribute(
        &self,
        key: &str,
        bound: Option<i64>,
        root: &DocPath,
        tree: &mut Tree,
        blame: &mut Blame,
        reads: BlameReads,
    ) -> Result<()> {
        // The newest change included.
        let top = self.version_at(key, bound.unwrap_or(i64::MAX))?;
        let key_id = self.store.key_id(key)?.unwrap_or(0);
        let mut setters = Setters {
            repo: self,
            spans: self.compactions(key)?,
            txs: HashMap::new(),
        };
        let mut paths = PathMap::default();
        // Lookups by path cannot follow renames: a key that has any reads the whole stream.
        let renamed = self.renames().iter().any(|r| r.applies_to_key(key));
        let mut left = usize::try_from(top).unwrap_or(0);
        // The stream is read a page at a time, newest first: the first page as long as
        // the stream goes before lookups are considered, then longer ones.
        let (mut unread, mut page_len) = (top, i64::try_from(STREAM_ROWS).unwrap_or(64));
        let mut page = Vec::new().into_iter();
        while tree.open() > 0 {
            let look_up = match reads {
                BlameReads::Auto => {
                    blame.rows_read >= STREAM_ROWS && left > LOOKUP_ROWS * tree.open()
                }
                BlameReads::StreamOnly => false,
                BlameReads::LookupAfter(n) => blame.rows_read >= n,
            };
            if look_up && !renamed {
                return self.attribute_by_lookup(key_id, top, tree, blame, &mut setters);
            }
            let Some(row) = page.next() else {
                if unread <= 0 {
                    break;
                }
                let from = (unread - page_len).max(0);
                page = self.store.change_heads(key_id, from, unread)?.into_iter();
                (unread, page_len) = (from, (page_len * 2).min(PAGE_ROWS));
                continue;
            };
            blame.rows_read += 1;
            left = usize::try_from(row.seq - 1).unwrap_or(0);
            let recorded = stored_path(&row.path)?;
            let Some(change_path) =
                paths.map(&recorded, row.op, row.tx, row.moved_from.as_deref())?
            else {
                continue;
            };
            let targets = if root.starts_with(&change_path) {
                tree.open_leaves_below(0)
            } else if let Some(rest) = change_path.strip_prefix(root) {
                tree.targets(rest)
            } else {
                Vec::new()
            };
            if targets.is_empty() {
                continue;
            }
            let setter = setters.of(row.id, row.tx, recorded, row.op)?;
            for node in targets {
                let leaf = tree.close(node);
                blame.leaves[leaf].setter = Some(setter.clone());
            }
        }
        Ok(())
    }

    /// Attributes every leaf still open by index lookups in the (key, path, seq) index:
    /// its setter is the newest change up to version `top` at the leaf or one of its
    /// ancestors, or below it. (A scalar is never below a newer change: whatever made the
    /// place a scalar was recorded at it or above it, and nothing is recorded inside a
    /// scalar, so only containers and opaque arrays look below.) This is the stream's
    /// answer, leaf by leaf, at a cost that depends on the document and not on the history.
    fn attribute_by_lookup(
        &self,
        key_id: i64,
        top: i64,
        tree: &mut Tree,
        blame: &mut Blame,
        setters: &mut Setters<'_>,
    ) -> Result<()> {
        let mut at: HashMap<String, Option<i64>> = HashMap::new();
        let mut newest_at = |text: &str| -> Result<Option<i64>> {
            if let Some(&seq) = at.get(text) {
                return Ok(seq);
            }
            let seq = self.store.newest_seq_at(key_id, text, top)?;
            at.insert(text.to_owned(), seq);
            Ok(seq)
        };
        let mut by_seq: HashMap<i64, Setter> = HashMap::new();
        for node in tree.open_leaves_below(0) {
            let leaf = tree.close(node);
            let mut newest = newest_at("")?;
            let mut text = String::new();
            for seg in blame.leaves[leaf].path.segments() {
                use std::fmt::Write as _;
                let _ = write!(text, "{seg}");
                newest = newest.max(newest_at(&text)?);
            }
            if matches!(blame.leaves[leaf].value, Value::Object(_) | Value::Array(_)) {
                newest = newest.max(self.store.newest_seq_below(key_id, &text, top)?);
            }
            let Some(seq) = newest else { continue };
            let setter = match by_seq.get(&seq) {
                Some(setter) => setter.clone(),
                None => {
                    let head = self.store.change_head(key_id, seq)?;
                    blame.rows_read += 1;
                    let setter = setters.of(head.id, head.tx, stored_path(&head.path)?, head.op)?;
                    by_seq.insert(seq, setter.clone());
                    setter
                }
            };
            blame.leaves[leaf].setter = Some(setter);
        }
        Ok(())
    }
}

/// Rows the newest-first stream of [`Repo::blame`] reads before it considers looking the
/// leaves still open up one by one: a recent history explains most leaves in a few rows,
/// and the rest (set by the first write of a long history, say) cost lookups, not a read
/// of every row.
const STREAM_ROWS: usize = 64;

/// What looking up one leaf costs, in rows of the stream (a few index lookups, each a
/// descent of the B-tree; measured on the scale benchmark and a 60,000-leaf feed).
const LOOKUP_ROWS: usize = 8;

/// The longest page of the stream read at once.
const PAGE_ROWS: i64 = 4096;

/// How [`Repo::blame_reading`] reads the log.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum BlameReads {
    /// The stream, then lookups once they cost less than the rest of the stream.
    Auto,
    /// The stream only.
    StreamOnly,
    /// Lookups after this many rows of the stream.
    LookupAfter(usize),
}

/// Builds [`Setter`]s, loading each transaction once.
struct Setters<'r> {
    repo: &'r Repo,
    spans: Vec<crate::retention::Compaction>,
    txs: HashMap<i64, TxInfo>,
}

impl Setters<'_> {
    fn of(&mut self, id: i64, tx: i64, recorded: DocPath, op: Op) -> Result<Setter> {
        let info = match self.txs.get(&tx) {
            Some(info) => info.clone(),
            None => {
                let info = self.repo.tx(tx)?.ok_or_else(|| {
                    Error::Corrupt(format!("change {id} names a missing transaction {tx}"))
                })?;
                self.txs.insert(tx, info.clone());
                info
            }
        };
        let compacted = self
            .spans
            .iter()
            .any(|c| c.first_tx <= tx && tx <= c.last_tx && recorded.starts_with(&c.path));
        Ok(Setter {
            tx: info,
            change_id: id,
            change_path: recorded,
            op,
            compacted,
        })
    }
}

/// Maps a recorded change path to the path of the same value in the blamed document,
/// following renames (`hist mv`) back in time.
///
/// The log is read newest first. A `move` row from FROM to TO sets nothing itself (the
/// value only moved); it records "FROM is now TO", so every older row at or below FROM is
/// matched at the same place below TO, and a leaf's blame follows it back across the
/// rename (chains a → b → c compose). The parent objects a rename created for TO (adds at
/// ancestors of TO in the rename's own transaction) set nothing either.
#[derive(Default)]
struct PathMap {
    /// (from, to, tx of the rename), newest rename first.
    renames: Vec<(DocPath, DocPath, i64)>,
}

impl PathMap {
    /// Where `recorded` lands in the blamed document (`None`: nowhere, skip the row).
    fn map(
        &mut self,
        recorded: &DocPath,
        op: Op,
        tx: i64,
        moved_from: Option<&str>,
    ) -> Result<Option<DocPath>> {
        let mut path = recorded.clone();
        // Renames newer than this row, oldest first, carry its path forward to today.
        for (from, to, _) in self.renames.iter().rev() {
            if let Some(rest) = path.strip_prefix(from) {
                let mut segs = to.segments().to_vec();
                segs.extend_from_slice(rest);
                path = DocPath::from_segments(segs);
            }
        }
        if op == Op::Move {
            let from = moved_from
                .and_then(|t| match canon::parse_str(t) {
                    Ok(Value::String(s)) => Some(s),
                    _ => None,
                })
                .and_then(|t| DocPath::parse(&t).ok())
                .ok_or_else(|| Error::Corrupt(format!("the move at {recorded} names no source")))?;
            self.renames.push((from, recorded.clone(), tx));
            return Ok(None);
        }
        let made_for_rename = self
            .renames
            .iter()
            .any(|(_, to, rtx)| *rtx == tx && to.starts_with(recorded) && to != recorded);
        Ok((!made_for_rename).then_some(path))
    }
}

/// The leaves of the blamed value, as a tree of path steps.
#[derive(Default)]
struct Tree {
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Node {
    /// Children by the canonical text of their step.
    children: HashMap<String, usize>,
    /// Children in document order.
    order: Vec<usize>,
    /// The leaf this node is (an index in `Blame::leaves`).
    leaf: Option<usize>,
    /// Unattributed leaves at or below this node.
    open: usize,
    parent: Option<usize>,
}

/// How the walk sees one value.
enum Kind<'v> {
    /// One leaf.
    Leaf,
    /// An object to walk into, members in canonical order.
    Object(Vec<(&'v String, &'v Value)>),
    /// A keyed array (elements walked into) or a set (`leaves`: every element is a leaf).
    Elements {
        items: Vec<(Segment, &'v Value)>,
        leaves: bool,
    },
}

fn classify<'v>(value: &'v Value, rules: &KeyRules, shape: &[PatternSegment]) -> Kind<'v> {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| canon::compare_keys(a.0, b.0));
            Kind::Object(members)
        }
        Value::Array(items) if !items.is_empty() => {
            let mode = rules.mode(shape);
            // Keys that are not unique make the array opaque (as the diff stores it).
            if mode == ArrayMode::Opaque || !diff::unique_elements(items, &mode) {
                return Kind::Leaf;
            }
            let (items, leaves): (Vec<(Segment, &Value)>, bool) = match mode {
                ArrayMode::Opaque => return Kind::Leaf,
                ArrayMode::Keyed(fields) => (
                    items
                        .iter()
                        .map(|e| (Segment::Keyed(element_key(e, fields)), e))
                        .collect(),
                    false,
                ),
                ArrayMode::Set => (
                    items
                        .iter()
                        .map(|e| (Segment::Member(e.clone()), e))
                        .collect(),
                    true,
                ),
            };
            Kind::Elements { items, leaves }
        }
        _ => Kind::Leaf,
    }
}

/// Builds the [`Tree`] of a value and its leaves, in document order.
struct Builder<'r> {
    rules: &'r KeyRules,
    shape: Vec<PatternSegment>,
    path: DocPath,
    tree: Tree,
    leaves: Vec<BlameLeaf>,
}

impl Builder<'_> {
    fn build(&mut self, value: &Value, forced_leaf: bool, parent: Option<usize>) -> usize {
        let id = self.tree.nodes.len();
        self.tree.nodes.push(Node {
            parent,
            ..Node::default()
        });
        let kind = if forced_leaf {
            Kind::Leaf
        } else {
            classify(value, self.rules, &self.shape)
        };
        let children: Vec<(Segment, &Value, bool)> = match kind {
            Kind::Leaf => {
                self.tree.nodes[id].leaf = Some(self.leaves.len());
                self.leaves.push(BlameLeaf {
                    path: self.path.clone(),
                    value: value.clone(),
                    setter: None,
                });
                let mut up = Some(id);
                while let Some(n) = up {
                    self.tree.nodes[n].open += 1;
                    up = self.tree.nodes[n].parent;
                }
                return id;
            }
            Kind::Object(members) => members
                .into_iter()
                .map(|(k, v)| (Segment::Field(k.clone()), v, false))
                .collect(),
            Kind::Elements { items, leaves } => {
                items.into_iter().map(|(s, v)| (s, v, leaves)).collect()
            }
        };
        for (seg, child, leaf) in children {
            let text = seg.to_string();
            self.shape.push(match seg {
                Segment::Field(ref name) => PatternSegment::Field(name.clone()),
                _ => PatternSegment::AnyElement,
            });
            self.path.push(seg);
            let c = self.build(child, leaf, Some(id));
            self.path.pop();
            self.shape.pop();
            self.tree.nodes[id].children.insert(text, c);
            self.tree.nodes[id].order.push(c);
        }
        id
    }
}

impl Tree {
    /// The tree of the leaves of `value`, found at `root`, and the leaves in document
    /// order.
    fn of(value: &Value, rules: &KeyRules, root: &DocPath) -> (Self, Vec<BlameLeaf>) {
        let mut builder = Builder {
            rules,
            shape: shape_of(root),
            path: root.clone(),
            tree: Tree::default(),
            leaves: Vec::new(),
        };
        builder.build(value, false, None);
        (builder.tree, builder.leaves)
    }

    /// Unattributed leaves left.
    fn open(&self) -> usize {
        self.nodes.first().map_or(0, |n| n.open)
    }

    /// The unattributed leaf nodes a change at `steps` (relative to the root) sets.
    fn targets(&self, steps: &[Segment]) -> Vec<usize> {
        let mut node = 0;
        for step in steps {
            if self.nodes[node].leaf.is_some() {
                break; // A change inside a leaf sets the leaf.
            }
            if self.nodes[node].open == 0 {
                return Vec::new();
            }
            match self.nodes[node].children.get(&step.to_string()) {
                Some(&child) => node = child,
                None => return Vec::new(), // A place the document no longer has.
            }
        }
        self.open_leaves_below(node)
    }

    /// Every unattributed leaf node at or below `node`.
    fn open_leaves_below(&self, node: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(id) = stack.pop() {
            let n = &self.nodes[id];
            if n.open == 0 {
                continue;
            }
            if n.leaf.is_some() {
                out.push(id);
            }
            stack.extend(n.order.iter().rev());
        }
        out
    }

    /// Marks a leaf node attributed; returns its leaf index.
    fn close(&mut self, node: usize) -> usize {
        let mut up = Some(node);
        while let Some(n) = up {
            self.nodes[n].open = self.nodes[n].open.saturating_sub(1);
            up = self.nodes[n].parent;
        }
        self.nodes[node].leaf.unwrap_or(0)
    }
}

impl Blame {
    /// The value at [`Blame::path`] pretty-printed (the layout of
    /// [`canon::to_pretty_string`]), one entry per line, each with the leaf it shows.
    /// Empty when there is no value.
    pub fn lines(&self) -> Vec<BlameLine> {
        let Some(value) = &self.value else {
            return Vec::new();
        };
        let mut printer = Printer {
            rules: &self.rules,
            shape: shape_of(&self.path),
            next_leaf: 0,
            out: Vec::new(),
        };
        printer.render(value, false, "", String::new());
        printer.out
    }
}

/// One member or element to print inside an object or array.
struct Item<'v> {
    /// `"name": ` for an object member.
    name: Option<String>,
    value: &'v Value,
    /// A set element: one leaf, whatever it holds.
    leaf: bool,
    step: PatternSegment,
}

/// Prints a value in the pretty layout, numbering leaves in the order [`Tree::build`]
/// found them (both walk with [`classify`]).
struct Printer<'r> {
    rules: &'r KeyRules,
    shape: Vec<PatternSegment>,
    next_leaf: usize,
    out: Vec<BlameLine>,
}

impl Printer<'_> {
    /// Renders `value` after `prefix` on the current line, at indentation `indent`; the
    /// caller appends a comma to the last line when needed.
    fn render(&mut self, value: &Value, forced_leaf: bool, indent: &str, prefix: String) {
        let kind = if forced_leaf {
            Kind::Leaf
        } else {
            classify(value, self.rules, &self.shape)
        };
        let (open, close, items) = match kind {
            Kind::Leaf => {
                let leaf = Some(self.next_leaf);
                self.next_leaf += 1;
                let pretty = canon::to_pretty_string(value);
                let mut lines = pretty.lines();
                let first = lines.next().unwrap_or_default();
                self.out.push(BlameLine {
                    text: format!("{prefix}{first}"),
                    leaf,
                });
                for line in lines {
                    self.out.push(BlameLine {
                        text: format!("{indent}{line}"),
                        leaf,
                    });
                }
                return;
            }
            Kind::Object(members) => (
                "{",
                "}",
                members
                    .into_iter()
                    .map(|(k, v)| Item {
                        name: Some(canon::to_canonical_string(&Value::String(k.clone()))),
                        value: v,
                        leaf: false,
                        step: PatternSegment::Field(k.clone()),
                    })
                    .collect::<Vec<_>>(),
            ),
            Kind::Elements { items, leaves } => (
                "[",
                "]",
                items
                    .into_iter()
                    .map(|(_, v)| Item {
                        name: None,
                        value: v,
                        leaf: leaves,
                        step: PatternSegment::AnyElement,
                    })
                    .collect(),
            ),
        };
        self.out.push(BlameLine {
            text: format!("{prefix}{open}"),
            leaf: None,
        });
        let inner = format!("{indent}  ");
        let n = items.len();
        for (i, item) in items.into_iter().enumerate() {
            let prefix = match item.name {
                Some(name) => format!("{inner}{name}: "),
                None => inner.clone(),
            };
            self.shape.push(item.step);
            self.render(item.value, item.leaf, &inner, prefix);
            self.shape.pop();
            if let Some(last) = self.out.last_mut().filter(|_| i + 1 < n) {
                last.text.push(',');
            }
        }
        self.out.push(BlameLine {
            text: format!("{indent}{close}"),
            leaf: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleKind;

    fn rules() -> KeyRules {
        crate::rules::declared(&[
            ("/items", RuleKind::ArrayKey(vec!["id".into()])),
            ("/items[*]/tags", RuleKind::Set),
        ])
    }

    fn blame_of(value: Value, rules: KeyRules) -> Blame {
        let mut blame = Blame {
            key: "k".into(),
            tx: None,
            document: true,
            path: DocPath::root(),
            value: Some(value.clone()),
            leaves: Vec::new(),
            rows_read: 0,
            rules,
        };
        blame.leaves = Tree::of(&value, &blame.rules, &DocPath::root()).1;
        blame
    }

    #[test]
    fn leaves_follow_the_rules() {
        let doc = json!({
            "vendor": "acme",
            "empty": {},
            "list": [3, 1, {"a": 1}],
            "none": [],
            "items": [
                {"id": 1, "price": 2.5, "tags": ["heavy", "iron"]},
                {"id": 2, "tags": []}
            ]
        });
        let blame = blame_of(doc, rules());
        let paths: Vec<String> = blame.leaves.iter().map(|l| l.path.to_string()).collect();
        assert_eq!(
            paths,
            [
                "/empty",
                "/items[id=1]/id",
                "/items[id=1]/price",
                "/items[id=1]/tags[=\"heavy\"]",
                "/items[id=1]/tags[=\"iron\"]",
                "/items[id=2]/id",
                "/items[id=2]/tags",
                "/list",
                "/none",
                "/vendor",
            ]
        );
    }

    #[test]
    fn lines_are_the_pretty_form() {
        let docs = [
            json!({"vendor": "acme", "empty": {}, "list": [3, 1, {"a": [1, {}]}], "none": [],
                   "items": [{"id": 1, "price": 2.5, "tags": ["heavy", "iron"]},
                             {"id": 2, "tags": [], "o": {"deep": {"x": null}}}]}),
            json!("scalar"),
            json!([1, 2]),
            json!({}),
            json!({"a": {"b": {"c": [true, false]}}}),
        ];
        for doc in docs {
            let blame = blame_of(doc.clone(), rules());
            let lines = blame.lines();
            let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
            assert_eq!(text.join("\n"), canon::to_pretty_string(&doc), "{doc}");
            // Every leaf shows on at least one line, in order.
            let mut shown: Vec<usize> = lines.iter().filter_map(|l| l.leaf).collect();
            shown.dedup();
            assert_eq!(shown, (0..blame.leaves.len()).collect::<Vec<_>>(), "{doc}");
        }
    }

    #[test]
    fn duplicate_keys_make_an_opaque_leaf() {
        let doc = json!({"items": [{"id": 1}, {"id": 1}]});
        let blame = blame_of(doc, rules());
        assert_eq!(blame.leaves.len(), 1);
        assert_eq!(blame.leaves[0].path.to_string(), "/items");
    }
}
