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
//! # The segment format (version 1)
//!
//! A segment holds the changes of one key with versions `first_seq, first_seq + 1, …`, in
//! that order. Its bytes (before the object store compresses them, with zstd) are:
//!
//! ```text
//! "HSG1"  varint rows  varint first_seq  varint first_id  varint first_tx
//! then eight streams, each varint length + bytes, one entry per row in version order:
//!   ids     zigzag varint: the change row's id minus the previous row's (the first: 0)
//!   txs     zigzag varint: the transaction minus the previous row's (the first: 0)
//!   paths   zigzag varint: the path's number minus the previous row's (the first: from 0)
//!   ops     one byte: 0 add, 1 remove, 2 replace, 3 move
//!   olds    one byte: 0 absent, 1 the `new` of the last change at the same path in this
//!           segment, 2 text (in `texts`)
//!   news    one byte: 0 absent, 2 text (in `texts`), 3 a number: the last `new` at the
//!           same path plus a delta (in `numbers`)
//!   numbers zigzag varint: a numeric delta (see below)
//!   texts   varint length + UTF-8 bytes: canonical JSON text, `old` before `new`
//! ```
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

pub mod objects;
pub mod pathset;

use std::collections::HashMap;

const MAGIC: &[u8; 4] = b"HSG1";

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

fn error(what: impl Into<String>) -> Error {
    Error(what.into())
}

const TAG_ABSENT: u8 = 0;
const TAG_PREVIOUS: u8 = 1;
const TAG_TEXT: u8 = 2;
const TAG_NUMBER: u8 = 3;

/// The bytes of a segment holding `changes` (consecutive versions of one key, in order).
pub fn encode(changes: &[Change<'_>]) -> Result<Vec<u8>, Error> {
    let first = changes.first().ok_or_else(|| error("no changes to seal"))?;
    let mut s = Streams::default();
    let (mut id, mut tx, mut path) = (first.id, first.tx, 0u64);
    // The last `new` at each path: its text, and its digits when it is a plain decimal.
    let mut last: HashMap<u64, (&str, Option<Digits>)> = HashMap::new();
    for (i, c) in changes.iter().enumerate() {
        if c.seq != first.seq + i64::try_from(i).map_err(|_| error("too many changes"))? {
            return Err(error(format!(
                "version {} does not follow {}",
                c.seq,
                c.seq - 1
            )));
        }
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
                let digits = decimal(new);
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
    let mut out = Vec::with_capacity(s.len() + 64);
    out.extend_from_slice(MAGIC);
    varint(changes.len() as u64, &mut out);
    varint(zigzag(first.seq), &mut out);
    varint(zigzag(first.id), &mut out);
    varint(zigzag(first.tx), &mut out);
    for stream in s.all() {
        varint(stream.len() as u64, &mut out);
        out.extend_from_slice(stream);
    }
    Ok(out)
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
/// text that [`write_decimal`] would not give back exactly.
fn decimal(text: &str) -> Option<Digits> {
    let b = text.as_bytes();
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[..0]),
    };
    let plain = !int.is_empty()
        && int.iter().all(u8::is_ascii_digit)
        && frac.iter().all(u8::is_ascii_digit)
        && frac.len() < 19;
    if !plain {
        return None;
    }
    let mut m: i64 = 0;
    for &c in int.iter().chain(frac) {
        m = m.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    let m = if negative { m.checked_neg()? } else { m };
    let f = u8::try_from(frac.len()).ok()?;
    // Only what writes back exactly (`-0`, `0.50` and the like do not: they are kept as
    // text, though canonical JSON never has them).
    let mut buf = [0u8; DECIMAL_MAX];
    (decimal_text(m, f, &mut buf) == text).then_some((m, f))
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
    fn varint(&mut self) -> Result<u64, Error> {
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

    fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
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
    Text(Span),
    Number {
        digits: Digits,
        written: Option<Span>,
    },
}

/// A decoded segment, or the changes of a range of its versions ([`Segment::decode_range`]).
#[derive(Clone, Debug)]
pub struct Segment {
    /// The version of the first change kept.
    first_seq: i64,
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

type FastMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

impl Segment {
    /// Decodes a segment's bytes.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, Error> {
        Self::decode_range(bytes, i64::MIN, i64::MAX)
    }

    /// Decodes the changes of a segment with versions `after < seq <= upto`: what a read of
    /// that range needs. The changes before the range are read (a value may refer to an
    /// earlier one) but not kept, and those after it not read at all.
    pub fn decode_range(bytes: Vec<u8>, after: i64, upto: i64) -> Result<Self, Error> {
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
        };
        if r.take(4)? != MAGIC {
            return Err(error("not a segment of this format"));
        }
        let rows = usize::try_from(r.varint()?).map_err(|_| error("too many rows"))?;
        let first_seq = unzigzag(r.varint()?);
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
        // Rows are versions first_seq, first_seq + 1, …: the indexes of the range.
        let index = |seq: i64| -> usize {
            match seq.checked_sub(first_seq).and_then(|n| n.checked_add(1)) {
                Some(n) if n <= 0 => 0,
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(rows),
                None if seq > first_seq => rows,
                None => 0,
            }
        };
        let (start, end) = (index(after), index(upto));
        let start = start.min(end);
        let kept = end - start;
        let texts_at = texts_offset(&bytes, &texts);
        let mut seg = Segment {
            first_seq: first_seq.saturating_add(i64::try_from(start).unwrap_or(i64::MAX)),
            ids: Vec::with_capacity(kept),
            txs: Vec::with_capacity(kept),
            paths: Vec::with_capacity(kept),
            ops: Vec::with_capacity(kept),
            olds: Vec::with_capacity(kept),
            news: Vec::with_capacity(kept),
            input: Vec::new(),
            numbers: String::new(),
        };
        let mut path = 0u64;
        let mut last: FastMap<u64, Last> = FastMap::default();
        for i in 0..end {
            let keep = i >= start;
            id = id.wrapping_add(unzigzag(ids.varint()?));
            tx = tx.wrapping_add(unzigzag(txs.varint()?));
            path = path.wrapping_add(unzigzag(paths.varint()?) as u64);
            let op = Op::from_code(ops.byte()?).ok_or_else(|| error("an unknown op"))?;
            let old = match olds.byte()? {
                TAG_ABSENT => None,
                TAG_PREVIOUS => {
                    let before = last
                        .get_mut(&path)
                        .ok_or_else(|| error("an old value refers to no earlier one"))?;
                    keep.then(|| seg.text_of(before)).transpose()?
                }
                TAG_TEXT => Some(texts.span(texts_at)?),
                _ => return Err(error("an unknown value tag")),
            };
            let new = match news.byte()? {
                TAG_ABSENT => None,
                TAG_TEXT => {
                    let span = texts.span(texts_at)?;
                    let digits = decimal(input_text(&bytes, span)?);
                    last.insert(
                        path,
                        match digits {
                            Some(digits) => Last::Number {
                                digits,
                                written: Some(span),
                            },
                            None => Last::Text(span),
                        },
                    );
                    Some(span)
                }
                TAG_NUMBER => {
                    let Some(Last::Number {
                        digits: (m0, f), ..
                    }) = last.get(&path).copied()
                    else {
                        return Err(error("a number refers to no earlier one"));
                    };
                    let m = m0.wrapping_add(unzigzag(numbers.varint()?));
                    let written = keep.then(|| seg.write_number(m, f)).transpose()?;
                    last.insert(
                        path,
                        Last::Number {
                            digits: (m, f),
                            written,
                        },
                    );
                    written
                }
                _ => return Err(error("an unknown value tag")),
            };
            if keep {
                seg.ids.push(id);
                seg.txs.push(tx);
                seg.paths.push(path);
                seg.ops.push(op);
                seg.olds.push(old);
                seg.news.push(new);
            }
        }
        seg.input = bytes;
        Ok(seg)
    }

    /// The span of the text of `last` (writing a number's text the first time).
    fn text_of(&mut self, last: &mut Last) -> Result<Span, Error> {
        match last {
            Last::Text(span) => Ok(*span),
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
        self.first_seq
    }

    /// The `i`-th change decoded (in version order).
    pub fn row(&self, i: usize) -> Option<Row<'_>> {
        (i < self.len()).then(|| self.row_at(i))
    }

    /// The changes decoded, in version order.
    pub fn rows(&self) -> impl DoubleEndedIterator<Item = Row<'_>> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.row_at(i))
    }

    /// Row `i`, which is below [`Segment::len`].
    fn row_at(&self, i: usize) -> Row<'_> {
        Row {
            id: self.ids[i],
            seq: self.first_seq + i as i64,
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
        let mut ids = self.paths.clone();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// Where the texts stream starts in the segment's bytes.
fn texts_offset(bytes: &[u8], texts: &Reader<'_>) -> usize {
    (texts.bytes.as_ptr() as usize).saturating_sub(bytes.as_ptr() as usize)
}

/// The text at `span` of the segment's bytes.
fn input_text(bytes: &[u8], span: Span) -> Result<&str, Error> {
    match span {
        Span::Input(a, b) => std::str::from_utf8(&bytes[a as usize..b as usize])
            .map_err(|_| error("a value is not UTF-8")),
        Span::Number(..) => Err(error("a number where a text was expected")),
    }
}

fn offset(n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| error("a segment's values are longer than 4 GiB"))
}

impl Reader<'_> {
    /// The next text of the texts stream, as a span of the whole segment (`base`: where the
    /// stream starts in it), checked to be UTF-8.
    fn span(&mut self, base: usize) -> Result<Span, Error> {
        let n = usize::try_from(self.varint()?).map_err(|_| error("a text is too long"))?;
        let start = self.at;
        let text = self.take(n)?;
        std::str::from_utf8(text).map_err(|_| error("a value is not UTF-8"))?;
        Ok(Span::Input(
            offset(base + start)?,
            offset(base + start + n)?,
        ))
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
            assert_eq!(decimal(text), digits, "{text}");
        }
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
