//! A segment's object file, and reading a range of versions from it.
//!
//! ```text
//! a zstd skippable frame (which decompression skips) holding the table of frames:
//!   "HSGT"  varint rows  zigzag first_seq  varint header frame's size  varint blocks
//!   then for each block: varint rows  varint frame's size  varint length + the set of
//!     paths it touches ([`crate::pathset`]; empty for a segment of one block, whose set
//!     the store's index holds)
//!   then the first 8 bytes of the blake3 hash of all the above
//! the segment's header as a zstd frame, then each block as a zstd frame of its own
//! ```
//!
//! The frames decompress, one after the other, to the segment's bytes, so the object is
//! named and checked as any other. The table says where each block's frame is, so that a
//! read of a few versions reads and decompresses one block's frame and nothing else: an
//! as-of read replays a few dozen changes from a checkpoint, whatever the segment's size.
//! The blocks' path sets let a read of one field's history skip the blocks that never touch
//! it without decompressing them ([`read_touching`]); a file kept in memory as a
//! [`SegmentFile`] has its table read and checked once, and an index of the blocks that
//! touch each path. The table is not part of the segment's bytes (its name does not cover
//! it): its own hash catches damage, and [`check`] compares it with the frames and the
//! blocks.

use crate::{
    Error, Header, MAGIC_V1, Reader, Segment, error, objects, pathset, unzigzag, varint, zigzag,
};
use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};

/// The magic number of the skippable frame holding the table (the first of the sixteen
/// that zstd reserves for skippable frames).
const SKIPPABLE: u32 = 0x184D_2A50;
const TABLE: &[u8; 4] = b"HSGT";
/// How many bytes a read takes first: the table, and often the frames it wants.
const HEAD: usize = 4096;

/// The table of a segment's frames.
#[derive(Debug)]
struct Table {
    header: Header,
    /// The header frame's size.
    header_frame: usize,
    /// Each block's frame's size.
    frames: Vec<usize>,
    /// Where each block's set of paths is in the file, encoded (empty: not listed).
    paths: Vec<std::ops::Range<usize>>,
    /// Where each block's frame starts in the file, and its first row's number.
    starts: Vec<(usize, usize)>,
}

impl Table {
    /// The size of the table the file starting with `head` begins with (`None`: it has
    /// none).
    fn len(head: &[u8]) -> Option<usize> {
        let magic = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
        let size = u32::from_le_bytes(head.get(4..8)?.try_into().ok()?);
        (magic == SKIPPABLE && head.get(8..12) == Some(TABLE))
            .then(|| 8 + usize::try_from(size).unwrap_or(usize::MAX))
    }

    /// Reads and checks the table the file starting with `frame` (the table's frame, at
    /// least) begins with.
    fn read(frame: &[u8]) -> Result<Self, Error> {
        let body = frame.get(8..).unwrap_or_default();
        let (table, sum) = body
            .split_at_checked(body.len().saturating_sub(8))
            .ok_or_else(|| error("its table of frames is cut short"))?;
        if &blake3::hash(table).as_bytes()[..8] != sum {
            return Err(error("its table of frames is damaged"));
        }
        let mut r = Reader {
            bytes: table,
            at: TABLE.len(),
        };
        let count = |n: u64| usize::try_from(n).map_err(|_| error("a count is too large"));
        let rows = count(r.varint()?)?;
        let first_seq = unzigzag(r.varint()?);
        let header_frame = count(r.varint()?)?;
        let n = count(r.varint()?)?;
        if n > table.len() {
            return Err(error("more blocks than bytes"));
        }
        let (mut blocks, mut frames) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut paths = Vec::with_capacity(n);
        for _ in 0..n {
            blocks.push(count(r.varint()?)?);
            frames.push(count(r.varint()?)?);
            let len = count(r.varint()?)?;
            let at = 8 + r.at;
            r.take(len)?;
            paths.push(at..at + len);
        }
        if blocks.iter().try_fold(0usize, |a, &b| a.checked_add(b)) != Some(rows) {
            return Err(error("its blocks do not add up to its rows"));
        }
        let (mut at, mut row) = (frame.len().saturating_add(header_frame), 0);
        let mut starts = Vec::with_capacity(n);
        for (&rows, &size) in blocks.iter().zip(&frames) {
            starts.push((at, row));
            at = at.saturating_add(size);
            row += rows;
        }
        Ok(Table {
            starts,
            header: Header {
                rows,
                first_seq,
                blocks,
                len: 0,
            },
            header_frame,
            frames,
            paths,
        })
    }

    /// Reads the table at the start of `file`, when it has one.
    fn of(file: &[u8]) -> Result<Option<Self>, Error> {
        let Some(len) = Table::len(file) else {
            return Ok(None);
        };
        let frame = file
            .get(..len)
            .ok_or_else(|| error("it ends in its table"))?;
        Table::read(frame).map(Some)
    }

    /// Block `index`, which exists.
    fn block(&self, index: usize) -> Block {
        let (at, row) = self.starts[index];
        Block {
            at,
            size: self.frames[index],
            rows: self.header.blocks[index],
            row,
        }
    }

    /// The blocks holding rows `start..end`, in order.
    fn blocks_holding(&self, start: usize, end: usize) -> Vec<Block> {
        let first = self.starts.partition_point(|&(_, row)| row <= start);
        (first.saturating_sub(1)..self.starts.len())
            .map(|i| self.block(i))
            .skip_while(|b| b.row + b.rows <= start)
            .take_while(|b| b.row < end)
            .collect()
    }

    /// Decodes rows `start..end` from the frames of `blocks` ([`Table::blocks_holding`]),
    /// found in `frames`, the bytes of the file from offset `from`.
    fn decode(
        &self,
        frames: &[u8],
        from: usize,
        blocks: &[Block],
        (start, end): (usize, usize),
    ) -> Result<Segment, Error> {
        let mut seg = Segment::holding(&self.header, start, end);
        // The blocks, decompressed one after the other into `input`.
        let mut input = Vec::new();
        let mut starts = Vec::with_capacity(blocks.len());
        for block in blocks {
            let frame = block.frame(frames, from)?;
            let bytes = objects::decompress(frame).map_err(|e| error(e.to_string()))?;
            starts.push(input.len());
            if input.is_empty() {
                input = bytes;
            } else {
                input.extend_from_slice(&bytes);
            }
        }
        for (block, at) in blocks.iter().zip(starts) {
            let range = (start.saturating_sub(block.row), end - block.row);
            seg.decode_block(&input, at, block.rows, range, None)?;
        }
        seg.input = input;
        Ok(seg)
    }

    /// Block `block` of `file` decoded for rows `start..end` as a segment of its own,
    /// holding the changes at `wanted`.
    fn decode_touching(
        &self,
        file: &[u8],
        block: Block,
        wanted: &[u64],
        (start, end): (usize, usize),
    ) -> Result<Segment, Error> {
        let input = objects::decompress(block.frame(file, 0)?).map_err(|e| error(e.to_string()))?;
        let header = Header {
            rows: block.rows,
            first_seq: self
                .header
                .first_seq
                .saturating_add(i64::try_from(block.row).unwrap_or(i64::MAX)),
            blocks: vec![block.rows],
            len: 0,
        };
        let (from, to) = (
            start.saturating_sub(block.row),
            (end - block.row).min(block.rows),
        );
        // Nothing reserved (`from..from`): of the block's rows, few are kept.
        let mut seg = Segment::holding(&header, from, from);
        seg.decode_block(&input, 0, block.rows, (from, to), Some(wanted))?;
        seg.input = input;
        Ok(seg)
    }
}

/// Where one block is, as its table says.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Where its frame starts in the file, and its size.
    at: usize,
    size: usize,
    /// How many rows it holds, and the first one's number in the segment.
    rows: usize,
    row: usize,
}

impl Block {
    /// Its frame, in `bytes`: the file's bytes from offset `from`.
    fn frame<'b>(&self, bytes: &'b [u8], from: usize) -> Result<&'b [u8], Error> {
        self.at
            .checked_sub(from)
            .and_then(|at| bytes.get(at..at.checked_add(self.size)?))
            .ok_or_else(|| error("its table names frames it does not hold"))
    }
}

/// A segment's object file held in memory, its table of frames read and checked once: what
/// a store keeps to read the same segment again and again.
#[derive(Debug)]
pub struct SegmentFile {
    bytes: Vec<u8>,
    table: Option<Table>,
    /// The blocks that touch each path, from the table's path sets (empty when it lists
    /// none): a field's history goes straight to its blocks…
    blocks_by_path: crate::FastMap<u64, Vec<usize>>,
    /// … and those whose paths it does not list, which any read of paths reads.
    unlisted: Vec<usize>,
}

impl SegmentFile {
    /// The object file `bytes`; an error when its table of frames is damaged.
    pub fn new(bytes: Vec<u8>) -> Result<Self, Error> {
        let table = Table::of(&bytes)?;
        let mut blocks_by_path = crate::FastMap::<u64, Vec<usize>>::default();
        let mut unlisted = Vec::new();
        for (block, range) in table.iter().flat_map(|t| t.paths.iter().enumerate()) {
            if range.is_empty() {
                unlisted.push(block);
            }
            let set = bytes.get(range.clone()).unwrap_or_default();
            for path in pathset::decode(set)? {
                blocks_by_path.entry(path).or_default().push(block);
            }
        }
        Ok(SegmentFile {
            bytes,
            table,
            blocks_by_path,
            unlisted,
        })
    }

    /// True when its table lists the paths each block touches (a segment of more than one
    /// block): [`SegmentFile::read_touching`] then reads only the blocks that touch them.
    pub fn lists_paths(&self) -> bool {
        !self.blocks_by_path.is_empty()
    }

    /// Its size as stored.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for an empty file (which holds no segment).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// [`Segment::read_range`], without reading the table again.
    pub fn read_range(&self, after: i64, upto: i64) -> Result<Segment, Error> {
        range_in(&self.bytes, self.table.as_ref(), after, upto)
    }

    /// [`read_touching`], without reading the table again.
    pub fn read_touching(
        &self,
        wanted: &[u64],
        after: i64,
        upto: i64,
    ) -> Result<Vec<Segment>, Error> {
        let file = &self.bytes;
        let Some(table) = self
            .table
            .as_ref()
            .filter(|_| !self.blocks_by_path.is_empty())
        else {
            return Ok(vec![range_in(file, self.table.as_ref(), after, upto)?]);
        };
        let (start, end) = table.header.range(after, upto);
        // The blocks touching the paths (and any whose paths are not listed), in order.
        let mut blocks: Vec<usize> = wanted
            .iter()
            .filter_map(|path| self.blocks_by_path.get(path))
            .flatten()
            .chain(&self.unlisted)
            .copied()
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        let mut out = Vec::new();
        for block in blocks.into_iter().map(|i| table.block(i)) {
            if block.row < end && block.row + block.rows > start {
                out.push(table.decode_touching(file, block, wanted, (start, end))?);
            }
        }
        Ok(out)
    }
}

/// The versions `after < seq <= upto` of the segment in `file`, whose table is `table`.
fn range_in(file: &[u8], table: Option<&Table>, after: i64, upto: i64) -> Result<Segment, Error> {
    let Some(table) = table else {
        let bytes = objects::decompress(file).map_err(|e| error(e.to_string()))?;
        return Segment::decode_range(bytes, after, upto);
    };
    let (start, end) = table.header.range(after, upto);
    let blocks = table.blocks_holding(start, end);
    table.decode(file, 0, &blocks, (start, end))
}

/// A segment's object file ([`crate::encode`]'s bytes): the table, the header and each
/// block compressed as a zstd frame of its own at `level`. A segment of the first format is
/// one frame.
pub fn compress(bytes: &[u8], level: i32) -> Result<Vec<u8>, Error> {
    let header = Header::read(bytes)?;
    let compress =
        |part: &[u8]| zstd::bulk::compress(part, level).map_err(|e| error(e.to_string()));
    if bytes.starts_with(MAGIC_V1) {
        return compress(bytes);
    }
    let head = compress(&bytes[..header.len])?;
    let mut frames = Vec::with_capacity(header.blocks.len());
    let mut paths = Vec::with_capacity(header.blocks.len());
    let mut r = Reader {
        bytes,
        at: header.len,
    };
    for &rows in &header.blocks {
        let at = r.at;
        r.skip_block()?;
        frames.push(compress(&bytes[at..r.at])?);
        paths.push(match header.blocks.len() {
            1 => Vec::new(),
            _ => pathset::encode(&crate::block_paths(bytes, at, rows)?),
        });
    }
    if r.at != bytes.len() {
        return Err(error("bytes after its last block"));
    }
    let mut table = TABLE.to_vec();
    varint(header.rows as u64, &mut table);
    varint(zigzag(header.first_seq), &mut table);
    varint(head.len() as u64, &mut table);
    varint(frames.len() as u64, &mut table);
    for ((rows, frame), paths) in header.blocks.iter().zip(&frames).zip(&paths) {
        varint(*rows as u64, &mut table);
        varint(frame.len() as u64, &mut table);
        varint(paths.len() as u64, &mut table);
        table.extend_from_slice(paths);
    }
    table.extend_from_slice(&blake3::hash(&table).as_bytes()[..8]);
    let size = u32::try_from(table.len()).map_err(|_| error("too many blocks"))?;
    let total = 8 + table.len() + head.len() + frames.iter().map(Vec::len).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&SKIPPABLE.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&table);
    out.extend_from_slice(&head);
    for frame in frames {
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

impl Segment {
    /// [`Segment::decode_range`] on the segment's object file: with a table of frames
    /// ([`compress`]), only the frames of the blocks holding the range are read and
    /// decompressed; a file without one is read and decompressed whole.
    pub fn read_range_from(
        file: &mut (impl Read + Seek),
        after: i64,
        upto: i64,
    ) -> Result<Self, Error> {
        let io = |e: std::io::Error| error(format!("reading it: {e}"));
        // One read (`read_to_end` would probe with small reads first).
        let mut head = vec![0; HEAD];
        let n = read_full(file, &mut head).map_err(io)?;
        head.truncate(n);
        let Some(len) = Table::len(&head) else {
            file.read_to_end(&mut head).map_err(io)?;
            let bytes = objects::decompress(&head).map_err(|e| error(e.to_string()))?;
            return Self::decode_range(bytes, after, upto);
        };
        if head.len() < len {
            let more = u64::try_from(len - head.len()).unwrap_or(u64::MAX);
            file.by_ref()
                .take(more)
                .read_to_end(&mut head)
                .map_err(io)?;
        }
        let table = Table::read(
            head.get(..len)
                .ok_or_else(|| error("it ends in its table"))?,
        )?;
        let (start, end) = table.header.range(after, upto);
        let blocks = table.blocks_holding(start, end);
        let (Some(first), Some(last)) = (blocks.first(), blocks.last()) else {
            return Ok(Segment::holding(&table.header, start, end));
        };
        // The frames of the blocks holding the range, from the first one's to the end of
        // the last one's.
        let (from, to) = (first.at, last.at.saturating_add(last.size));
        let frames: Cow<'_, [u8]> = match head.get(from..to) {
            Some(frames) => Cow::Borrowed(frames),
            None => {
                // Sized by the table, so read in steps: a damaged table cannot make it
                // allocate more than the file holds.
                let mut frames = Vec::new();
                file.seek(SeekFrom::Start(from as u64)).map_err(io)?;
                let want = (to - from) as u64;
                file.take(want).read_to_end(&mut frames).map_err(io)?;
                if frames.len() as u64 != want {
                    return Err(error("it ends before the frames its table names"));
                }
                Cow::Owned(frames)
            }
        };
        table.decode(&frames, from, &blocks, (start, end))
    }

    /// [`Segment::read_range_from`] on the file's bytes.
    pub fn read_range(file: &[u8], after: i64, upto: i64) -> Result<Self, Error> {
        range_in(file, Table::of(file)?.as_ref(), after, upto)
    }
}

/// The blocks of the segment in `file` that hold versions `after < seq <= upto` and touch
/// any of `wanted` (sorted path numbers), each decoded for that range as a segment of its
/// own holding the changes at those paths: one field's history decompresses only the
/// blocks that touch it, and lays out only its own values. A file whose table lists no
/// block's paths (a segment of one block, or no table) is read whole for the range, so a
/// caller still picks the paths it wants ([`Segment::rows_where`]).
pub fn read_touching(
    file: &[u8],
    wanted: &[u64],
    after: i64,
    upto: i64,
) -> Result<Vec<Segment>, Error> {
    SegmentFile::new(file.to_vec())?.read_touching(wanted, after, upto)
}

/// Reads into `buf` until it is full or the file ends; returns how many bytes it read.
fn read_full(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The segment in an object file, decoded whole, after checking that its table of frames
/// (when it has one) says where its frames are and what they hold.
pub fn check(file: &[u8]) -> Result<Segment, Error> {
    let bytes = objects::decompress(file).map_err(|e| error(e.to_string()))?;
    if let Some(len) = Table::len(file) {
        let table = Table::read(
            file.get(..len)
                .ok_or_else(|| error("it ends in its table"))?,
        )?;
        let header = Header::read(&bytes)?;
        let mut sizes = Vec::with_capacity(table.frames.len() + 1);
        let mut rest = &file[len..];
        while !rest.is_empty() {
            let size = crate::frame_size(rest)?;
            sizes.push(size);
            rest = &rest[size..];
        }
        let listed = std::iter::once(table.header_frame).chain(table.frames.iter().copied());
        if (header.rows, header.first_seq, &header.blocks)
            != (
                table.header.rows,
                table.header.first_seq,
                &table.header.blocks,
            )
            || !listed.eq(sizes)
        {
            return Err(error("its table of frames does not match its frames"));
        }
        let mut r = Reader {
            bytes: &bytes,
            at: header.len,
        };
        for (&rows, listed) in header.blocks.iter().zip(&table.paths) {
            let at = r.at;
            r.skip_block()?;
            let listed = file.get(listed.clone()).unwrap_or_default();
            if !listed.is_empty()
                && listed != pathset::encode(&crate::block_paths(&bytes, at, rows)?)
            {
                return Err(error(
                    "its table lists other paths for a block than it holds",
                ));
            }
        }
    }
    Segment::decode(bytes)
}
