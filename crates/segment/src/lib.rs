//! hist's sealed change-log segments and object files, without SQLite.
//!
//! hist keeps its change log in two tiers: recent changes are rows in `hist.db`; older ones
//! are sealed into segments, each an object (a zstd-compressed file named by the blake3
//! hash of its bytes) holding many consecutive changes of one key, column by column. This
//! crate is what the store, the `changes` virtual table and the loadable SQLite extension
//! share: the segment format ([`encode`], [`Segment`]), the set of paths a segment touches
//! ([`pathset`]) and reading an object file ([`objects`]). It does not depend on SQLite, so
//! the extension (built against the SQLite that loads it) and hist (built with its own)
//! can both link it.
//!
//! # The segment format (version 2)
//!
//! A segment holds the changes of one key with versions `first_seq, first_seq + 1, …`, in
//! that order, in blocks of consecutive changes. Its bytes are:
//!
//! ```text
//! "HSG2"  varint rows  zigzag first_seq  varint blocks  varint rows of each block
//! then each block: zigzag first_id  zigzag first_tx
//! then eight streams, each varint length + bytes, one entry per row in version order:
//!   ids     zigzag varint: the change row's id minus the previous row's (the first: 0)
//!   txs     zigzag varint: the transaction minus the previous row's (the first: 0)
//!   paths   zigzag varint: the path's number minus the previous row's (the first: from 0)
//!   ops     one byte: 0 add, 1 remove, 2 replace, 3 move
//!   olds    one byte: 0 absent, 1 the `new` of the last change at the same path in this
//!           block, 2 text (in `texts`)
//!   news    one byte: 0 absent, 2 text (in `texts`), 3 a number: the last `new` at the
//!           same path in this block plus a delta (in `numbers`)
//!   numbers zigzag varint: a numeric delta (see below)
//!   texts   varint length + UTF-8 bytes: canonical JSON text, `old` before `new`
//! ```
//!
//! A block refers to nothing outside itself, and the object file ([`compress`]) holds each
//! block as a zstd frame of its own, with a table saying where: an as-of read that replays
//! a few changes from a checkpoint reads and decodes one block, not the whole segment.
//! A block takes at least 256 changes and 32 times as many as its segment touches paths,
//! so a document that changes a few fields gets small blocks, and a feed whose versions
//! touch thousands of paths keeps whole segments in one block (where its numeric deltas
//! are).
//! Version 1 (`"HSG1"  varint rows  zigzag first_seq  zigzag first_id  zigzag first_tx`,
//! then the eight streams: one block) is still read.
//!
//! Values are canonical JSON text, as the log stores them. A number whose text, and that of
//! the last `new` at its path, are both plain decimals (`-?digits(.digits)?`) with the same
//! count of fraction digits is stored as the difference of their digits read as integers
//! (`63.2` after `61.9`: 13), when that difference and the digits fit 64 bits and writing
//! the result back gives the exact text; otherwise as text. Columns of similar values and
//! deltas are what make a real feed small: on a public feed of 737 versions (1.65 M
//! changes) segments of 65,536 changes take 3.7 MB where the changes' values alone are
//! 19.6 MB.

#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod file;
pub mod leafset;
pub mod objects;
pub mod pathset;

pub use file::{SegmentFile, check, compress, read_touching};

const MAGIC: &[u8; 4] = b"HSG2";
/// Segments written before blocks: one block, whose first id and tx are in the header.
const MAGIC_V1: &[u8; 4] = b"HSG1";

/// What a change did at its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A value appeared.
    Add,
    /// A value disappeared.
    Remove,
    /// A value was replaced.
    Replace,
    /// A recorded rename: `old` is the source path (a JSON string), `new` the value moved.
    Move,
}

impl Op {
    fn code(self) -> u8 {
        match self {
            Op::Add => 0,
            Op::Remove => 1,
            Op::Replace => 2,
            Op::Move => 3,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Op::Add,
            1 => Op::Remove,
            2 => Op::Replace,
            3 => Op::Move,
            _ => return None,
        })
    }

    /// The name the log uses (`add`, `remove`, `replace`, `move`).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Remove => "remove",
            Op::Replace => "replace",
            Op::Move => "move",
        }
    }

    /// The op named `text`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "add" => Op::Add,
            "remove" => Op::Remove,
            "replace" => Op::Replace,
            "move" => Op::Move,
            _ => return None,
        })
    }
}

/// One change to seal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change<'a> {
    /// The change row's id.
    pub id: i64,
    /// The key's version after it.
    pub seq: i64,
    /// Its transaction.
    pub tx: i64,
    /// The number of its path.
    pub path: u64,
    /// What it did.
    pub op: Op,
    /// The value before (canonical JSON).
    pub old: Option<&'a str>,
    /// The value after.
    pub new: Option<&'a str>,
}

/// A segment that does not decode, or changes that cannot be sealed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("segment: {0}")]
pub struct Error(String);

#[cold]
fn error(what: impl Into<String>) -> Error {
    Error(what.into())
}

const TAG_ABSENT: u8 = 0;
const TAG_PREVIOUS: u8 = 1;
const TAG_TEXT: u8 = 2;
const TAG_NUMBER: u8 = 3;

/// A block holds at least this many changes (but the last)…
const BLOCK_MIN_ROWS: usize = 256;
/// … and at least this many times as many as the paths its segment touches: a block refers
/// to values of its own changes only, so each path's first value in a block is stored
/// whole, and a segment over few paths loses next to nothing to that.
const BLOCK_ROWS_PER_PATH: usize = 32;

/// The bytes of a segment holding `changes` (consecutive versions of one key, in order).
pub fn encode(changes: &[Change<'_>]) -> Result<Vec<u8>, Error> {
    let first = changes.first().ok_or_else(|| error("no changes to seal"))?;
    for (i, c) in changes.iter().enumerate() {
        if c.seq != first.seq + i64::try_from(i).map_err(|_| error("too many changes"))? {
            return Err(error(format!(
                "version {} does not follow {}",
                c.seq,
                c.seq - 1
            )));
        }
    }
    let mut blocks = Vec::new();
    let mut body = Vec::new();
    for block in changes.chunks(block_rows(changes)) {
        encode_block(block, &mut body);
        blocks.push(block.len());
    }
    let mut out = Vec::with_capacity(body.len() + 16 + 3 * blocks.len());
    out.extend_from_slice(MAGIC);
    varint(changes.len() as u64, &mut out);
    varint(zigzag(first.seq), &mut out);
    varint(blocks.len() as u64, &mut out);
    for rows in blocks {
        varint(rows as u64, &mut out);
    }
    out.extend_from_slice(&body);
    Ok(out)
}

/// How many changes each block of a segment holding `changes` takes (the last one fewer):
/// both bounds, for the paths of the whole segment. (Deciding block by block on the changes
/// so far cut a feed's segments after a few versions that touched few paths, and the
/// versions after lost their deltas.)
fn block_rows(changes: &[Change<'_>]) -> usize {
    let paths: rustc_hash::FxHashSet<u64> = changes.iter().map(|c| c.path).collect();
    BLOCK_MIN_ROWS.max(BLOCK_ROWS_PER_PATH.saturating_mul(paths.len()))
}

/// Appends the block holding `changes`: its first id and tx, then its eight streams.
fn encode_block(changes: &[Change<'_>], out: &mut Vec<u8>) {
    let Some(first) = changes.first() else {
        return;
    };
    let mut s = Streams::default();
    let (mut id, mut tx, mut path) = (first.id, first.tx, 0u64);
    // The last `new` at each path: its text, and its digits when it is a plain decimal.
    let mut last: FastMap<u64, (&str, Option<Digits>)> = FastMap::default();
    for c in changes {
        varint(zigzag(c.id.wrapping_sub(id)), &mut s.ids);
        varint(zigzag(c.tx.wrapping_sub(tx)), &mut s.txs);
        varint(zigzag(c.path.wrapping_sub(path) as i64), &mut s.paths);
        (id, tx, path) = (c.id, c.tx, c.path);
        s.ops.push(c.op.code());
        let before = last.get(&c.path).copied();
        match c.old {
            None => s.olds.push(TAG_ABSENT),
            Some(old) if before.is_some_and(|(text, _)| text == old) => s.olds.push(TAG_PREVIOUS),
            Some(old) => {
                s.olds.push(TAG_TEXT);
                text(old, &mut s.texts);
            }
        }
        match c.new {
            None => s.news.push(TAG_ABSENT),
            Some(new) => {
                let digits = decimal(new.as_bytes());
                match (before.and_then(|(_, d)| d), digits) {
                    (Some((m0, f0)), Some((m1, f1))) if f0 == f1 => {
                        s.news.push(TAG_NUMBER);
                        varint(zigzag(m1.wrapping_sub(m0)), &mut s.numbers);
                    }
                    _ => {
                        s.news.push(TAG_TEXT);
                        text(new, &mut s.texts);
                    }
                }
                last.insert(c.path, (new, digits));
            }
        }
    }
    out.reserve(s.len() + 20);
    varint(zigzag(first.id), out);
    varint(zigzag(first.tx), out);
    for stream in s.all() {
        varint(stream.len() as u64, out);
        out.extend_from_slice(stream);
    }
}

#[derive(Default)]
struct Streams {
    ids: Vec<u8>,
    txs: Vec<u8>,
    paths: Vec<u8>,
    ops: Vec<u8>,
    olds: Vec<u8>,
    news: Vec<u8>,
    numbers: Vec<u8>,
    texts: Vec<u8>,
}

impl Streams {
    fn all(&self) -> [&Vec<u8>; 8] {
        [
            &self.ids,
            &self.txs,
            &self.paths,
            &self.ops,
            &self.olds,
            &self.news,
            &self.numbers,
            &self.texts,
        ]
    }

    fn len(&self) -> usize {
        self.all().iter().map(|s| s.len() + 10).sum()
    }
}

fn text(value: &str, out: &mut Vec<u8>) {
    varint(value.len() as u64, out);
    out.extend_from_slice(value.as_bytes());
}

/// A plain decimal as its digits read as an integer, and how many are after the point.
type Digits = (i64, u8);

/// The digits of a plain decimal (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`) as an integer, and the
/// count of its fraction digits; `None` for any other text, or digits beyond 64 bits, or a
/// text that [`write_decimal`] would not give back exactly (`-0`, `-0.0`: the sign of a
/// zero is not in its digits). A decode reads one for every value stored as text.
fn decimal(text: &[u8]) -> Option<Digits> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[..0]),
    };
    let has_point = int.len() < digits.len();
    let plain = !int.is_empty()
        && (int.len() == 1 || int[0] != b'0')
        && int.iter().all(u8::is_ascii_digit)
        && (!has_point || !frac.is_empty())
        && frac.iter().all(u8::is_ascii_digit)
        && frac.len() < 19;
    if !plain {
        return None;
    }
    let mut m: i64 = 0;
    for &c in int.iter().chain(frac) {
        m = m.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    if negative && m == 0 {
        return None;
    }
    let m = if negative { m.checked_neg()? } else { m };
    Some((m, u8::try_from(frac.len()).ok()?))
}

/// Writes the decimal whose digits are `m` with `f` of them after the point.
fn write_decimal(m: i64, f: u8, out: &mut String) {
    let mut buf = [0u8; DECIMAL_MAX];
    out.push_str(decimal_text(m, f, &mut buf));
}

/// The longest decimal [`decimal_text`] writes: a sign, 19 digits and a point, or a sign,
/// `0.`, 18 zeros and a digit.
const DECIMAL_MAX: usize = 24;

/// The decimal whose digits are `m` with `f` (at most 18) of them after the point, written
/// in `buf` without allocating (a read writes thousands of numbers).
fn decimal_text(m: i64, f: u8, buf: &mut [u8; DECIMAL_MAX]) -> &str {
    let f = usize::from(f.min(18));
    // Digits from the end of the buffer backwards.
    let mut at = DECIMAL_MAX;
    let mut n = m.unsigned_abs();
    let mut written = 0;
    while n > 0 || written <= f {
        if written == f && f > 0 {
            at -= 1;
            buf[at] = b'.';
        }
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        written += 1;
        if n == 0 && written > f {
            break;
        }
    }
    if m < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A reader over a segment's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The next varint. Most are one byte (deltas, tags' lengths): read inline.
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, Error> {
        match self.bytes.get(self.at..self.at + 2) {
            Some(&[a, _]) if a < 0x80 => {
                self.at += 1;
                Ok(u64::from(a))
            }
            Some(&[a, b]) if b < 0x80 => {
                self.at += 2;
                Ok(u64::from(a & 0x7f) | u64::from(b) << 7)
            }
            _ => self.long_varint(),
        }
    }

    #[inline(never)]
    fn long_varint(&mut self) -> Result<u64, Error> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| error("it ends inside a number"))?;
            self.at += 1;
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(error("a number is longer than 64 bits"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| error("a stream is longer than the segment"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    /// The next byte (an op, a tag): read inline, a row reads three.
    #[inline(always)]
    fn byte(&mut self) -> Result<u8, Error> {
        match self.bytes.get(self.at) {
            Some(&byte) => {
                self.at += 1;
                Ok(byte)
            }
            None => Err(error("a stream is longer than the segment")),
        }
    }

    fn stream(&mut self) -> Result<Reader<'a>, Error> {
        let n = usize::try_from(self.varint()?).map_err(|_| error("a stream is too long"))?;
        Ok(Reader {
            bytes: self.take(n)?,
            at: 0,
        })
    }
}

/// Where a value's text is: in the segment's bytes (a text stored as such) or among the
/// numbers written while decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Span {
    Input(u32, u32),
    Number(u32, u32),
}

/// The last `new` at a path, while decoding: a text in the input, or a number's digits (its
/// text written only when a kept row needs it).
#[derive(Clone, Copy)]
enum Last {
    /// A text, and whether it was checked to be UTF-8 (a change before the range a read
    /// keeps is checked only if a kept one refers to it).
    Text(Span, bool),
    Number {
        digits: Digits,
        written: Option<Span>,
    },
}

/// The last `new` at each path while a block decodes, by path number: in a table from the
/// first number met (a segment numbers paths as they first appear, so a block's are mostly
/// close together), the others in a map. A block of the real feed looks a value up at
/// each of its 65,536 rows.
struct Lasts {
    /// The number of the path in `slots[0]`.
    base: Option<u64>,
    slots: Vec<Option<Last>>,
    /// How far the table may grow.
    limit: usize,
    others: FastMap<u64, Option<Last>>,
}

impl Lasts {
    /// For a block of `rows` changes.
    fn new(rows: usize) -> Self {
        Self {
            base: None,
            slots: Vec::new(),
            limit: rows.saturating_mul(2).clamp(4096, 1 << 20),
            others: FastMap::default(),
        }
    }

    /// The last `new` at path `path` (`None`: none yet), to read or replace: one lookup
    /// for a row's `old` and `new` both.
    #[inline(always)]
    fn at(&mut self, path: u64) -> &mut Option<Last> {
        // Numbers a little below the first one met have their slots too.
        let base = *self.base.get_or_insert(path.saturating_sub(256));
        match path
            .checked_sub(base)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < self.limit)
        {
            Some(i) => {
                if i >= self.slots.len() {
                    self.slots.resize(i + 1, None);
                }
                &mut self.slots[i]
            }
            None => self.others.entry(path).or_default(),
        }
    }
}

/// A decoded segment, or the changes of a range of its versions ([`Segment::decode_range`]).
#[derive(Clone, Debug)]
pub struct Segment {
    /// The version of the first change kept.
    first_seq: i64,
    /// The version of each change kept, when they do not follow each other from
    /// `first_seq` (a read of some paths only: [`read_touching`]).
    seqs: Option<Vec<i64>>,
    ids: Vec<i64>,
    txs: Vec<i64>,
    paths: Vec<u64>,
    ops: Vec<Op>,
    olds: Vec<Option<Span>>,
    news: Vec<Option<Span>>,
    /// The segment's bytes (texts are read in place).
    input: Vec<u8>,
    /// The text of numbers stored as deltas, one after the other.
    numbers: String,
}

/// One change of a decoded segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row<'s> {
    /// The change row's id.
    pub id: i64,
    /// The key's version after the change.
    pub seq: i64,
    /// Its transaction.
    pub tx: i64,
    /// The number of its path.
    pub path: u64,
    /// What it did.
    pub op: Op,
    /// The value before.
    pub old: Option<&'s str>,
    /// The value after.
    pub new: Option<&'s str>,
}

pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

impl Segment {
    /// Decodes a segment's bytes.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, Error> {
        Self::decode_range(bytes, i64::MIN, i64::MAX)
    }

    /// Decodes the changes of a segment with versions `after < seq <= upto`: what a read of
    /// that range needs. Only the blocks holding the range are read, and in those the
    /// changes before the range are read (a value may refer to an earlier one) but not kept.
    pub fn decode_range(bytes: Vec<u8>, after: i64, upto: i64) -> Result<Self, Error> {
        let header = Header::read(&bytes)?;
        let (start, end) = header.range(after, upto);
        let mut seg = Segment::holding(&header, start, end);
        let mut r = Reader {
            bytes: &bytes,
            at: header.len,
        };
        let mut row = 0;
        for &rows in &header.blocks {
            if row >= end {
                break;
            }
            let at = r.at;
            r.skip_block()?;
            if row + rows > start {
                seg.decode_block(
                    &bytes,
                    at,
                    rows,
                    (start.saturating_sub(row), end - row),
                    None,
                )?;
            }
            row += rows;
        }
        seg.input = bytes;
        Ok(seg)
    }

    /// An empty segment for the rows `start..end` of the one `header` describes.
    fn holding(header: &Header, start: usize, end: usize) -> Self {
        let kept = end.saturating_sub(start);
        Segment {
            first_seq: header
                .first_seq
                .saturating_add(i64::try_from(start).unwrap_or(i64::MAX)),
            seqs: None,
            ids: Vec::with_capacity(kept),
            txs: Vec::with_capacity(kept),
            paths: Vec::with_capacity(kept),
            ops: Vec::with_capacity(kept),
            olds: Vec::with_capacity(kept),
            news: Vec::with_capacity(kept),
            input: Vec::new(),
            numbers: String::new(),
        }
    }

    /// Decodes the block of `rows` changes at `at` in `bytes` (which become the segment's
    /// input: spans are offsets in them), keeping its rows `start..end`; with `only`
    /// (sorted path numbers), only those at these paths, whose versions it then records.
    /// A path's values refer only to earlier values at that path: the others are passed
    /// over, their texts neither checked nor laid out.
    fn decode_block(
        &mut self,
        bytes: &[u8],
        at: usize,
        rows: usize,
        (start, end): (usize, usize),
        only: Option<&[u64]>,
    ) -> Result<(), Error> {
        let seg = self;
        let mut r = Reader { bytes, at };
        let mut id = unzigzag(r.varint()?);
        let mut tx = unzigzag(r.varint()?);
        let mut ids = r.stream()?;
        let mut txs = r.stream()?;
        let mut paths = r.stream()?;
        let mut ops = r.stream()?;
        let mut olds = r.stream()?;
        let mut news = r.stream()?;
        let mut numbers = r.stream()?;
        let mut texts = r.stream()?;
        let texts_at = texts_offset(bytes, &texts);
        let end = end.min(rows);
        // The version of row 0 of the block.
        let base = seg
            .first_seq
            .saturating_sub(i64::try_from(start).unwrap_or(i64::MAX));
        let mut path = 0u64;
        let mut last = Lasts::new(end);
        for i in 0..end {
            id = id.wrapping_add(unzigzag(ids.varint()?));
            tx = tx.wrapping_add(unzigzag(txs.varint()?));
            path = path.wrapping_add(unzigzag(paths.varint()?) as u64);
            let op = Op::from_code(ops.byte()?).ok_or_else(|| error("an unknown op"))?;
            if let Some(only) = only
                && only.binary_search(&path).is_err()
            {
                match olds.byte()? {
                    TAG_ABSENT | TAG_PREVIOUS => {}
                    TAG_TEXT => texts.skip_text()?,
                    _ => return Err(error("an unknown value tag")),
                }
                match news.byte()? {
                    TAG_ABSENT => {}
                    TAG_TEXT => texts.skip_text()?,
                    TAG_NUMBER => _ = numbers.varint()?,
                    _ => return Err(error("an unknown value tag")),
                }
                continue;
            }
            let keep = i >= start;
            let at = last.at(path);
            let old = match olds.byte()? {
                TAG_ABSENT => None,
                TAG_PREVIOUS => {
                    let before = at
                        .as_mut()
                        .ok_or_else(|| error("an old value refers to no earlier one"))?;
                    keep.then(|| seg.text_of(before, bytes)).transpose()?
                }
                TAG_TEXT if keep => Some(texts.span(texts_at)?),
                TAG_TEXT => {
                    texts.skip_text()?;
                    None
                }
                _ => return Err(error("an unknown value tag")),
            };
            let new = match news.byte()? {
                TAG_ABSENT => None,
                TAG_TEXT => {
                    let (span, raw) = texts.span_bytes(texts_at)?;
                    // A decimal is ASCII: only other texts need checking, and those of
                    // changes not kept only when a kept one refers to them.
                    *at = Some(match decimal(raw) {
                        Some(digits) => Last::Number {
                            digits,
                            written: Some(span),
                        },
                        None if keep => {
                            utf8(raw)?;
                            Last::Text(span, true)
                        }
                        None => Last::Text(span, false),
                    });
                    Some(span)
                }
                TAG_NUMBER => {
                    let Some(Last::Number {
                        digits: (m, f),
                        written,
                    }) = at
                    else {
                        return Err(error("a number refers to no earlier one"));
                    };
                    *m = m.wrapping_add(unzigzag(numbers.varint()?));
                    *written = keep.then(|| seg.write_number(*m, *f)).transpose()?;
                    *written
                }
                _ => return Err(error("an unknown value tag")),
            };
            if keep {
                if only.is_some() {
                    let seq = base.saturating_add(i64::try_from(i).unwrap_or(i64::MAX));
                    seg.seqs.get_or_insert_default().push(seq);
                }
                seg.ids.push(id);
                seg.txs.push(tx);
                seg.paths.push(path);
                seg.ops.push(op);
                seg.olds.push(old);
                seg.news.push(new);
            }
        }
        Ok(())
    }

    /// The span of the text of `last` (writing a number's text the first time, checking
    /// a text of `bytes` the first time).
    fn text_of(&mut self, last: &mut Last, bytes: &[u8]) -> Result<Span, Error> {
        match last {
            Last::Text(span, true) => Ok(*span),
            Last::Text(span, checked) => {
                let Span::Input(a, b) = *span else {
                    return Err(error("a text refers to no input"));
                };
                utf8(bytes.get(a as usize..b as usize).unwrap_or_default())?;
                *checked = true;
                Ok(*span)
            }
            Last::Number {
                written: Some(span),
                ..
            } => Ok(*span),
            Last::Number {
                digits: (m, f),
                written,
            } => {
                let span = self.write_number(*m, *f)?;
                *written = Some(span);
                Ok(span)
            }
        }
    }

    fn write_number(&mut self, m: i64, f: u8) -> Result<Span, Error> {
        let start = self.numbers.len();
        write_decimal(m, f, &mut self.numbers);
        Ok(Span::Number(offset(start)?, offset(self.numbers.len())?))
    }

    /// How many changes were decoded.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when none was.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The version of the first change decoded.
    pub fn first_seq(&self) -> i64 {
        match &self.seqs {
            Some(seqs) => seqs.first().copied().unwrap_or(self.first_seq),
            None => self.first_seq,
        }
    }

    /// The `i`-th change decoded (in version order).
    pub fn row(&self, i: usize) -> Option<Row<'_>> {
        (i < self.len()).then(|| self.row_at(i))
    }

    /// The changes decoded, in version order.
    pub fn rows(&self) -> impl DoubleEndedIterator<Item = Row<'_>> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.row_at(i))
    }

    /// The positions ([`Segment::row`]) of the changes decoded with versions
    /// `after < seq <= upto`.
    pub fn indices_between(&self, after: i64, upto: i64) -> std::ops::Range<usize> {
        // Row i holds version seqs[i], or else first_seq + i.
        let index = |seq: i64| match &self.seqs {
            Some(seqs) => seqs.partition_point(|&s| s < seq),
            None => {
                let i = seq.saturating_sub(self.first_seq).max(0);
                usize::try_from(i).unwrap_or(usize::MAX).min(self.len())
            }
        };
        index(after.saturating_add(1))..index(upto.saturating_add(1))
    }

    /// The changes decoded with versions `after < seq <= upto`, in version order.
    pub fn rows_between(
        &self,
        after: i64,
        upto: i64,
    ) -> impl DoubleEndedIterator<Item = Row<'_>> + '_ {
        self.rows_where(after, upto, |_, _| true)
    }

    /// The changes decoded with versions `after < seq <= upto` whose path and op `wanted`
    /// accepts, in version order. The values of the others are never laid out: a read of
    /// one field in a block of thousands of changes pays for the few it keeps.
    pub fn rows_where<'a>(
        &'a self,
        after: i64,
        upto: i64,
        wanted: impl Fn(u64, Op) -> bool + 'a,
    ) -> impl DoubleEndedIterator<Item = Row<'a>> + 'a {
        self.indices_between(after, upto)
            .filter(move |&i| wanted(self.paths[i], self.ops[i]))
            .map(|i| self.row_at(i))
    }

    /// Row `i`, which is below [`Segment::len`].
    fn row_at(&self, i: usize) -> Row<'_> {
        Row {
            id: self.ids[i],
            seq: match &self.seqs {
                Some(seqs) => seqs[i],
                None => self.first_seq + i as i64,
            },
            tx: self.txs[i],
            path: self.paths[i],
            op: self.ops[i],
            old: self.olds[i].map(|s| self.text(s)),
            new: self.news[i].map(|s| self.text(s)),
        }
    }

    fn text(&self, span: Span) -> &str {
        match span {
            // Checked to be UTF-8 when it was read.
            Span::Input(a, b) => {
                std::str::from_utf8(&self.input[a as usize..b as usize]).unwrap_or_default()
            }
            Span::Number(a, b) => &self.numbers[a as usize..b as usize],
        }
    }

    /// The numbers of the paths of the changes decoded, sorted, each once.
    pub fn path_ids(&self) -> Vec<u64> {
        self.path_ids_between(i64::MIN, i64::MAX)
    }

    /// The numbers of the paths the changes with versions `after < seq <= upto` touch,
    /// sorted, each once.
    pub fn path_ids_between(&self, after: i64, upto: i64) -> Vec<u64> {
        let mut ids = self.paths[self.indices_between(after, upto)].to_vec();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// The paths the block of `rows` changes at `at` in `bytes` touches, sorted, each once.
fn block_paths(bytes: &[u8], at: usize, rows: usize) -> Result<Vec<u64>, Error> {
    let mut r = Reader { bytes, at };
    r.varint()?;
    r.varint()?;
    r.stream()?;
    r.stream()?;
    let mut paths = r.stream()?;
    let mut path = 0u64;
    let mut out = Vec::with_capacity(rows.min(bytes.len()));
    for _ in 0..rows {
        path = path.wrapping_add(unzigzag(paths.varint()?) as u64);
        out.push(path);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A segment's header: its rows, first version and blocks.
#[derive(Debug)]
struct Header {
    rows: usize,
    first_seq: i64,
    /// How many changes each block holds, in order.
    blocks: Vec<usize>,
    /// Its length in bytes: where the first block starts.
    len: usize,
}

impl Header {
    fn read(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader { bytes, at: 0 };
        let magic = r.take(4)?;
        let count = |n: u64| usize::try_from(n).map_err(|_| error("too many rows"));
        let rows = count(r.varint()?)?;
        let first_seq = unzigzag(r.varint()?);
        let blocks = if magic == MAGIC_V1 {
            vec![rows]
        } else if magic == MAGIC {
            let n = count(r.varint()?)?;
            // Every block takes a few bytes: a larger count is damage (and no allocation).
            if n > bytes.len() {
                return Err(error("more blocks than bytes"));
            }
            (0..n)
                .map(|_| count(r.varint()?))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            return Err(error("not a segment of a known format"));
        };
        if blocks.iter().try_fold(0usize, |a, &b| a.checked_add(b)) != Some(rows) {
            return Err(error("its blocks do not add up to its rows"));
        }
        Ok(Header {
            rows,
            first_seq,
            blocks,
            len: r.at,
        })
    }

    /// The indexes of the rows with versions `after < seq <= upto`.
    fn range(&self, after: i64, upto: i64) -> (usize, usize) {
        // Rows are versions first_seq, first_seq + 1, …
        let index = |seq: i64| -> usize {
            match seq
                .checked_sub(self.first_seq)
                .and_then(|n| n.checked_add(1))
            {
                Some(n) if n <= 0 => 0,
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(self.rows),
                None if seq > self.first_seq => self.rows,
                None => 0,
            }
        };
        let end = index(upto);
        (index(after).min(end), end)
    }
}

/// The compressed size of the zstd frame `bytes` start with.
fn frame_size(bytes: &[u8]) -> Result<usize, Error> {
    zstd::zstd_safe::find_frame_compressed_size(bytes)
        .map_err(|_| error("a damaged or missing compressed frame"))
}

/// Where the texts stream starts in the segment's bytes.
fn texts_offset(bytes: &[u8], texts: &Reader<'_>) -> usize {
    (texts.bytes.as_ptr() as usize).saturating_sub(bytes.as_ptr() as usize)
}

fn utf8(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|_| error("a value is not UTF-8"))
}

fn offset(n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| error("a segment's values are longer than 4 GiB"))
}

impl<'a> Reader<'a> {
    /// Moves past a block: its first id and tx, then eight streams.
    fn skip_block(&mut self) -> Result<(), Error> {
        self.varint()?;
        self.varint()?;
        for _ in 0..8 {
            self.stream()?;
        }
        Ok(())
    }

    /// The next text of the texts stream, as a span of the whole segment (`base`: where the
    /// stream starts in it), checked to be UTF-8.
    fn span(&mut self, base: usize) -> Result<Span, Error> {
        Ok(self.span_text(base)?.0)
    }

    /// [`Reader::span`], and the text.
    fn span_text(&mut self, base: usize) -> Result<(Span, &'a str), Error> {
        let (span, bytes) = self.span_bytes(base)?;
        Ok((span, utf8(bytes)?))
    }

    /// [`Reader::span_text`], not checked to be UTF-8.
    fn span_bytes(&mut self, base: usize) -> Result<(Span, &'a [u8]), Error> {
        let n = usize::try_from(self.varint()?).map_err(|_| error("a text is too long"))?;
        let start = self.at;
        let bytes = self.take(n)?;
        let span = Span::Input(offset(base + start)?, offset(base + start + n)?);
        Ok((span, bytes))
    }

    /// Moves past the next text of the texts stream.
    fn skip_text(&mut self) -> Result<(), Error> {
        let n = usize::try_from(self.varint()?).map_err(|_| error("a text is too long"))?;
        self.take(n).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        seq: i64,
        path: u64,
        old: Option<&'static str>,
        new: Option<&'static str>,
    ) -> Change<'static> {
        Change {
            id: 100 + seq * 2,
            seq,
            tx: 10 + seq / 3,
            path,
            op: match (old, new) {
                (None, _) => Op::Add,
                (_, None) => Op::Remove,
                _ => Op::Replace,
            },
            old,
            new,
        }
    }

    #[test]
    fn paths_numbered_far_apart_decode_as_close_ones() {
        // The first path met gets a table of slots; one far above it, and one below its
        // reach, are kept aside: their numbers and previous values still come back.
        let values: Vec<String> = (0..12).map(|n| format!("{}.5", n * 10)).collect();
        for paths in [
            [300u64, 5_000_000, 1],
            [1, 2, 3],
            [u64::MAX - 1, 0, 1 << 40],
        ] {
            let changes: Vec<Change<'_>> = (0..12)
                .map(|n| Change {
                    id: 100 + n as i64,
                    seq: 1 + n as i64,
                    tx: 10,
                    path: paths[n % 3],
                    op: if n < 3 { Op::Add } else { Op::Replace },
                    old: (n >= 3).then(|| values[n - 3].as_str()),
                    new: Some(values[n].as_str()),
                })
                .collect();
            let seg = Segment::decode(encode(&changes).unwrap()).unwrap();
            let back: Vec<(u64, Option<&str>, Option<&str>)> =
                seg.rows().map(|r| (r.path, r.old, r.new)).collect();
            let want: Vec<(u64, Option<&str>, Option<&str>)> =
                changes.iter().map(|c| (c.path, c.old, c.new)).collect();
            assert_eq!(back, want, "{paths:?}");
        }
    }

    #[test]
    fn changes_come_back_as_they_were_sealed() {
        let changes = vec![
            change(5, 7, None, Some(r#"{"a":1}"#)),
            change(6, 9, None, Some("63.2")),
            change(7, 9, Some("63.2"), Some("61.9")),
            change(8, 9, Some("61.9"), Some("0.5")),
            change(9, 9, Some("0.5"), Some("0.25")),
            change(10, 9, Some("0.25"), Some("-12.75")),
            change(
                11,
                3,
                Some("12345678901234567890123"),
                Some("12345678901234567890124"),
            ),
            change(12, 9, Some("-12.75"), Some("1e+21")),
            change(13, 9, Some("1e+21"), None),
            change(14, 2, Some(r#""x""#), Some(r#""y""#)),
            change(15, 2, Some(r#""stale""#), Some("9223372036854775807")),
            change(
                16,
                2,
                Some("9223372036854775807"),
                Some("-9223372036854775808"),
            ),
            change(17, 2, Some("-9223372036854775808"), Some("0")),
        ];
        let bytes = encode(&changes).unwrap();
        let seg = Segment::decode(bytes.clone()).unwrap();
        let back: Vec<Change<'_>> = seg
            .rows()
            .map(|r| Change {
                id: r.id,
                seq: r.seq,
                tx: r.tx,
                path: r.path,
                op: r.op,
                old: r.old,
                new: r.new,
            })
            .collect();
        assert_eq!(back, changes);
        assert_eq!(seg.path_ids(), vec![2, 3, 7, 9]);
        // The paths of some versions only: 6..=10 touch path 9 alone, 10..=14 paths 2, 3, 9.
        assert_eq!(seg.path_ids_between(5, 10), vec![9]);
        assert_eq!(seg.path_ids_between(9, 14), vec![2, 3, 9]);
        assert!(seg.path_ids_between(17, 99).is_empty());
        // A range: only the versions asked for, whatever they refer to before it.
        let head = Segment::decode_range(bytes.clone(), i64::MIN, 8).unwrap();
        assert_eq!(head.len(), 4);
        assert_eq!(head.row(3).and_then(|r| r.new), Some("0.5"));
        assert!(
            Segment::decode_range(bytes.clone(), 0, 4)
                .unwrap()
                .is_empty()
        );
        for (after, upto) in [(5, 9), (7, 8), (10, 17), (12, 13), (16, 99), (-3, 5)] {
            let range = Segment::decode_range(bytes.clone(), after, upto).unwrap();
            let want: Vec<Row<'_>> = seg
                .rows()
                .filter(|r| r.seq > after && r.seq <= upto)
                .collect();
            assert_eq!(range.rows().collect::<Vec<_>>(), want, "{after}..={upto}");
        }
        // Rows picked by version, path and op are those of the plain filter, from a whole
        // decode and from a range, at any bounds.
        let bounds = [i64::MIN, -3, 4, 5, 8, 9, 12, 16, 17, 99, i64::MAX];
        for decoded in [&seg, &head] {
            for after in bounds {
                for upto in bounds {
                    let wanted = |path: u64, op: Op| path == 9 || op == Op::Add;
                    let want: Vec<Row<'_>> = decoded
                        .rows()
                        .filter(|r| r.seq > after && r.seq <= upto && wanted(r.path, r.op))
                        .collect();
                    let got: Vec<Row<'_>> = decoded.rows_where(after, upto, wanted).collect();
                    assert_eq!(got, want, "{after}..={upto}");
                    let all: Vec<Row<'_>> = decoded.rows_between(after, upto).collect();
                    assert!(all.iter().all(|r| r.seq > after && r.seq <= upto));
                    let count = decoded.rows().filter(|r| r.seq > after && r.seq <= upto);
                    assert_eq!(all.len(), count.count(), "{after}..={upto}");
                }
            }
        }
    }

    /// A change as owned values: id, seq, tx, path, op, old, new.
    type Owned = (i64, i64, i64, u64, Op, Option<String>, Option<String>);

    fn owned(seg: &Segment) -> Vec<Owned> {
        seg.rows()
            .map(|r| {
                let text = |t: Option<&str>| t.map(str::to_owned);
                (r.id, r.seq, r.tx, r.path, r.op, text(r.old), text(r.new))
            })
            .collect()
    }

    #[test]
    fn a_document_of_few_paths_gets_blocks_a_read_decompresses_alone() {
        // 6,000 changes over three paths: blocks of 256, the last one shorter. Text values
        // every seventh change, so that the file is larger than what a read takes first.
        let values: Vec<String> = (0..6000)
            .map(|i| match i % 7 {
                0 => format!("\"v{}\"", i * 7919 % 100_003),
                _ => format!("{}.5", i * 3),
            })
            .collect();
        let changes: Vec<Change<'_>> = (0..6000)
            .map(|i| {
                let path = (i % 3) as u64;
                let old = (i >= 3).then(|| values[i - 3].as_str());
                Change {
                    id: 7 + 2 * i as i64,
                    seq: 40 + i as i64,
                    tx: 3 + i as i64 / 2,
                    path,
                    op: if old.is_some() { Op::Replace } else { Op::Add },
                    old,
                    new: Some(&values[i]),
                }
            })
            .collect();
        let bytes = encode(&changes).unwrap();
        let header = Header::read(&bytes).unwrap();
        assert_eq!(header.blocks.len(), 24);
        assert!(header.blocks[..23].iter().all(|&rows| rows == 256));
        assert_eq!(header.blocks[23], 6000 - 23 * 256);
        let whole = Segment::decode(bytes.clone()).unwrap();
        assert_eq!(whole.len(), 6000);
        assert!(
            whole
                .rows()
                .zip(&changes)
                .all(|(r, c)| r.new == c.new && r.old == c.old)
        );
        let framed = compress(&bytes, 3).unwrap();
        assert!(framed.len() > 6000, "{}", framed.len());
        let one_frame = zstd::bulk::compress(&bytes, 3).unwrap();
        assert_eq!(objects::decompress(&framed).unwrap(), bytes);
        assert_eq!(owned(&check(&framed).unwrap()), owned(&whole));
        // The first format: the same changes as one block.
        let mut v1 = MAGIC_V1.to_vec();
        varint(6000, &mut v1);
        varint(zigzag(40), &mut v1);
        encode_block(&changes, &mut v1);
        assert_eq!(owned(&Segment::decode(v1.clone()).unwrap()), owned(&whole));
        let v1_file = compress(&v1, 3).unwrap();
        let kept: Vec<SegmentFile> = [&framed, &one_frame, &v1_file]
            .into_iter()
            .map(|f| SegmentFile::new(f.clone()).unwrap())
            .collect();
        for (after, upto) in [
            (39, 45),
            (1100, 1101),
            (1062, 1064),
            (1063, 2200),
            (3000, 9999),
            (5800, 5900),
            (i64::MIN, 41),
            (6039, 7000),
            (0, 39),
        ] {
            let want: Vec<_> = owned(&whole)
                .into_iter()
                .filter(|r| r.1 > after && r.1 <= upto)
                .collect();
            for (name, got) in [
                ("bytes", Segment::decode_range(bytes.clone(), after, upto)),
                ("frames", Segment::read_range(&framed, after, upto)),
                (
                    "frames read from a file",
                    Segment::read_range_from(&mut std::io::Cursor::new(&framed), after, upto),
                ),
                ("one frame", Segment::read_range(&one_frame, after, upto)),
                ("version 1", Segment::read_range(&v1_file, after, upto)),
                ("kept frames", kept[0].read_range(after, upto)),
                ("kept one frame", kept[1].read_range(after, upto)),
                ("kept version 1", kept[2].read_range(after, upto)),
            ] {
                let got = got.unwrap();
                assert_eq!(owned(&got), want, "{name}: {after}..={upto}");
                if let Some(first) = want.first() {
                    assert_eq!(got.first_seq(), first.1, "{name}");
                }
            }
        }
        // Damage is an error, not a panic; in the table, it is an error even where the
        // frames would still decompress.
        for cut in [1, 9, 40, framed.len() / 2, framed.len() - 1] {
            assert!(
                Segment::read_range(&framed[..cut], 6030, 6039).is_err(),
                "{cut}"
            );
            let mut file = std::io::Cursor::new(&framed[..cut]);
            assert!(
                Segment::read_range_from(&mut file, 6030, 6039).is_err(),
                "{cut}"
            );
        }
        let mut damaged = framed.clone();
        damaged[20] ^= 1;
        assert!(Segment::read_range(&damaged, 1000, 1010).is_err());
        assert!(SegmentFile::new(damaged.clone()).is_err());
        assert!(check(&damaged).is_err());
        // A read decompresses the block it needs and no other: with the first block's
        // frame damaged, a read in the tenth still succeeds, one in the first does not.
        let len = 8 + u32::from_le_bytes(framed[4..8].try_into().unwrap()) as usize;
        let first_block = len + frame_size(&framed[len..]).unwrap();
        let mut one_block_damaged = framed.clone();
        one_block_damaged[first_block] ^= 0xff;
        assert!(Segment::read_range(&one_block_damaged, 40 + 2560, 40 + 2570).is_ok());
        assert!(Segment::read_range(&one_block_damaged, 40, 50).is_err());
        let mut file = std::io::Cursor::new(&one_block_damaged);
        assert!(Segment::read_range_from(&mut file, 40 + 2560, 40 + 2570).is_ok());
        assert!(check(&one_block_damaged).is_err());
        // A table that names frames of other sizes, with a checksum to match.
        let mut table = framed[8..len - 8].to_vec();
        let last = table.len() - 1;
        table[last] = table[last].wrapping_add(1);
        let sum = blake3::hash(&table);
        let mut forged = framed.clone();
        forged[8..len - 8].copy_from_slice(&table);
        forged[len - 8..len].copy_from_slice(&sum.as_bytes()[..8]);
        assert!(check(&forged).is_err());
    }

    #[test]
    fn a_field_s_history_reads_only_the_blocks_that_touch_it() {
        // /price (path 1) in every change, /plan (path 7) in two: 24 blocks, 2 with /plan.
        let values: Vec<String> = (0..6000).map(|i| i.to_string()).collect();
        let changes: Vec<Change<'_>> = (0..6000)
            .map(|i| Change {
                id: i as i64,
                seq: i as i64 + 1,
                tx: i as i64,
                path: if i == 1000 || i == 5000 { 7 } else { 1 },
                op: Op::Replace,
                old: None,
                new: Some(&values[i]),
            })
            .collect();
        let bytes = encode(&changes).unwrap();
        let framed = compress(&bytes, 3).unwrap();
        let whole = Segment::decode(bytes.clone()).unwrap();
        let at_plan = |segs: &[Segment]| -> Vec<Owned> {
            segs.iter().flat_map(owned).filter(|r| r.3 == 7).collect()
        };
        let want = at_plan(std::slice::from_ref(&whole));
        assert_eq!(want.len(), 2);
        let blocks = read_touching(&framed, &[7], 0, i64::MAX).unwrap();
        assert_eq!(blocks.len(), 2, "only the blocks with /plan");
        assert_eq!(at_plan(&blocks), want);
        let kept = SegmentFile::new(framed.clone()).unwrap();
        assert!(kept.lists_paths());
        let one_frame_kept = SegmentFile::new(zstd::bulk::compress(&bytes, 3).unwrap()).unwrap();
        assert!(!one_frame_kept.lists_paths());
        for (after, upto) in [(0, i64::MAX), (0, 3000), (1000, 1001), (4999, 6000)] {
            let (free, from_kept) = (
                read_touching(&framed, &[7], after, upto).unwrap(),
                kept.read_touching(&[7], after, upto).unwrap(),
            );
            assert_eq!(at_plan(&from_kept), at_plan(&free), "{after}..={upto}");
        }
        // Each block read holds the changes at the paths asked for, with their versions.
        assert_eq!(blocks[0].first_seq(), 1001);
        assert!(blocks.iter().all(|b| b.len() == 1));
        // Asked for both paths: every block, and all their changes.
        let both = read_touching(&framed, &[1, 7], 0, i64::MAX).unwrap();
        assert_eq!(both.len(), Header::read(&bytes).unwrap().blocks.len());
        assert_eq!(
            both.iter().flat_map(owned).collect::<Vec<_>>(),
            owned(&whole)
        );
        // A range inside a block, through rows_where as a history reads it.
        let inside = read_touching(&framed, &[7], 4000, 5500).unwrap();
        let seqs: Vec<i64> = inside
            .iter()
            .flat_map(|b| b.rows_where(4999, 5001, |p, _| p == 7).map(|r| r.seq))
            .collect();
        assert_eq!(seqs, [5001]);
        // A range, and a file without a table: the same changes.
        let first = read_touching(&framed, &[7], 0, 3000).unwrap();
        assert_eq!(at_plan(&first), want[..1]);
        let one_frame = zstd::bulk::compress(&bytes, 3).unwrap();
        assert_eq!(
            at_plan(&read_touching(&one_frame, &[7], 0, i64::MAX).unwrap()),
            want
        );
        assert!(
            read_touching(&framed, &[8], 0, i64::MAX)
                .unwrap()
                .is_empty()
        );
        // A table whose path sets do not match the blocks is refused by `check`.
        let len = 8 + u32::from_le_bytes(framed[4..8].try_into().unwrap()) as usize;
        let table = &framed[8..len - 8];
        // The second block's set is [1] (one byte, 1); the first block's holds it too: the
        // last `01 01` of the table is a block's path set of length 1 holding path 1.
        let at = table.windows(2).rposition(|w| w == [1, 1]).unwrap();
        let mut forged_table = table.to_vec();
        forged_table[at + 1] = 2;
        let mut forged = framed[..8].to_vec();
        forged.extend_from_slice(&forged_table);
        forged.extend_from_slice(&blake3::hash(&forged_table).as_bytes()[..8]);
        forged.extend_from_slice(&framed[len..]);
        assert!(check(&forged).is_err());
        assert!(check(&framed).is_ok());
    }

    #[test]
    fn a_feed_of_many_paths_keeps_one_block() {
        // 3,000 paths changed in each of 10 versions: a block would need 96,000 changes.
        let values: Vec<String> = (0..30_000)
            .map(|i| (i / 3000 + i % 3000).to_string())
            .collect();
        let changes: Vec<Change<'_>> = (0..30_000)
            .map(|i| Change {
                id: i as i64,
                seq: i as i64 + 1,
                tx: i as i64 / 3000,
                path: (i % 3000) as u64,
                op: Op::Replace,
                old: None,
                new: Some(&values[i]),
            })
            .collect();
        let bytes = encode(&changes).unwrap();
        assert_eq!(Header::read(&bytes).unwrap().blocks, vec![30_000]);
        let seg = Segment::read_range(&compress(&bytes, 3).unwrap(), 29_000, 29_010).unwrap();
        assert_eq!(
            seg.row(0).and_then(|r| r.new),
            Some(values[29_000].as_str())
        );
    }

    #[test]
    fn decimals_are_read_only_when_they_write_back_exactly() {
        for (text, digits) in [
            ("0", Some((0, 0))),
            ("63.2", Some((632, 1))),
            ("-0.05", Some((-5, 2))),
            ("100", Some((100, 0))),
            ("-0", None),
            ("0.50", Some((50, 2))),
            ("01", None),
            ("1.", None),
            (".5", None),
            ("1e5", None),
            ("99999999999999999999", None),
            ("", None),
            ("-", None),
        ] {
            assert_eq!(decimal(text.as_bytes()), digits, "{text}");
        }
    }

    /// `decimal` decides by the text's shape; the definition is that writing the digits
    /// back gives the text. Both agree on every text of up to five of `-0123456789.`, and
    /// on long ones at the edges of 64 bits and 18 fraction digits.
    #[test]
    fn a_decimal_is_what_writes_back_exactly() {
        let written_back = |text: &str| {
            let (m, f) = decimal(text.as_bytes())?;
            let mut buf = [0u8; DECIMAL_MAX];
            (decimal_text(m, f, &mut buf) == text).then_some((m, f))
        };
        // Accepts only what writes back: the shape check is never looser.
        let alphabet = b"-0123456789.";
        let mut texts: Vec<String> = vec![String::new()];
        let mut all = Vec::new();
        for _ in 0..5 {
            texts = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |&c| format!("{t}{}", c as char)))
                .collect();
            all.extend(texts.iter().cloned());
        }
        all.extend(
            [
                "9223372036854775807",
                "9223372036854775808",
                "-9223372036854775807",
                "-9223372036854775808",
                "922337203685477580.7",
                "0.000000000000000001",
                "0.0000000000000000001",
                "-0.000000000000000000",
                "123456789012345678.9",
            ]
            .map(String::from),
        );
        let mut accepted = 0;
        for text in &all {
            assert_eq!(decimal(text.as_bytes()), written_back(text), "{text}");
            // Never stricter: every text of sign, digits and at most one point whose
            // digits write back to it exactly is accepted.
            let plain = text.strip_prefix('-').unwrap_or(text);
            let (int, frac) = plain.split_once('.').unwrap_or((plain, ""));
            let Ok(m) = format!("{int}{frac}").parse::<i64>() else {
                continue;
            };
            if !(int.bytes().chain(frac.bytes())).all(|c| c.is_ascii_digit()) || frac.len() > 18 {
                continue;
            }
            let m = if plain.len() < text.len() { -m } else { m };
            let f = u8::try_from(frac.len()).unwrap();
            let mut buf = [0u8; DECIMAL_MAX];
            if decimal_text(m, f, &mut buf) == text {
                assert_eq!(decimal(text.as_bytes()), Some((m, f)), "{text}");
                accepted += 1;
            }
        }
        assert!(accepted > 10_000, "{accepted}");
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let changes = vec![
            change(1, 1, None, Some("1")),
            change(2, 1, Some("1"), Some("2")),
        ];
        let bytes = encode(&changes).unwrap();
        for cut in 0..bytes.len() {
            let _ = Segment::decode(bytes[..cut].to_vec());
        }
        let mut flipped = bytes.clone();
        for i in 0..flipped.len() {
            flipped[i] ^= 0xff;
            let _ = Segment::decode(flipped.clone());
            flipped[i] ^= 0xff;
        }
        assert!(encode(&[]).is_err());
        let gap = vec![
            change(1, 1, None, Some("1")),
            change(3, 1, Some("1"), Some("2")),
        ];
        assert!(encode(&gap).is_err());
    }
}
