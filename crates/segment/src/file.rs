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
//! it without decompressing them ([`read_touching`]). The table is not part of the
//! segment's bytes (its name does not cover it): its own hash catches damage, and [`check`]
//! compares it with the frames and the blocks.

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

/// The table of a segment's frames (borrowing the block path sets from the file's bytes).
struct Table<'a> {
    header: Header,
    /// The header frame's size.
    header_frame: usize,
    /// Each block's frame's size.
    frames: Vec<usize>,
    /// Each block's set of paths, encoded (empty: not listed).
    paths: Vec<&'a [u8]>,
    /// The skippable frame's size: where the header frame starts.
    len: usize,
}

impl<'a> Table<'a> {
    /// The size of the table the file starting with `head` begins with (`None`: it has
    /// none).
    fn len(head: &[u8]) -> Option<usize> {
        let magic = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
        let size = u32::from_le_bytes(head.get(4..8)?.try_into().ok()?);
        (magic == SKIPPABLE && head.get(8..12) == Some(TABLE))
            .then(|| 8 + usize::try_from(size).unwrap_or(usize::MAX))
    }

    fn read(frame: &'a [u8]) -> Result<Self, Error> {
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
            paths.push(r.take(len)?);
        }
        if blocks.iter().try_fold(0usize, |a, &b| a.checked_add(b)) != Some(rows) {
            return Err(error("its blocks do not add up to its rows"));
        }
        Ok(Table {
            header: Header {
                rows,
                first_seq,
                blocks,
                len: 0,
            },
            header_frame,
            frames,
            paths,
            len: frame.len(),
        })
    }
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
        // The frames of the blocks holding the range: (offset from `from`, size, rows, row).
        let mut wanted = Vec::new();
        let mut offset = table.len + table.header_frame;
        let (mut from, mut row) = (None, 0);
        for (&rows, &size) in table.header.blocks.iter().zip(&table.frames) {
            if row >= end {
                break;
            }
            if row + rows > start {
                let first = *from.get_or_insert(offset);
                wanted.push((offset - first, size, rows, row));
            }
            offset += size;
            row += rows;
        }
        let mut seg = Segment::holding(&table.header, start, end);
        let Some(from) = from else {
            return Ok(seg);
        };
        let frames: Cow<'_, [u8]> = match head.get(from..offset) {
            Some(frames) => Cow::Borrowed(frames),
            None => {
                // Sized by the table, so read in steps: a damaged table cannot make it
                // allocate more than the file holds.
                let mut frames = Vec::new();
                file.seek(SeekFrom::Start(from as u64)).map_err(io)?;
                let want = (offset - from) as u64;
                file.take(want).read_to_end(&mut frames).map_err(io)?;
                if frames.len() as u64 != want {
                    return Err(error("it ends before the frames its table names"));
                }
                Cow::Owned(frames)
            }
        };
        // The blocks, decompressed one after the other into `input`.
        let mut input = Vec::new();
        let mut blocks = Vec::with_capacity(wanted.len());
        for (at, size, rows, row) in wanted {
            let frame = frames
                .get(at..at + size)
                .ok_or_else(|| error("its table names frames it does not hold"))?;
            let block = objects::decompress(frame).map_err(|e| error(e.to_string()))?;
            blocks.push((input.len(), rows, row));
            if input.is_empty() {
                input = block;
            } else {
                input.extend_from_slice(&block);
            }
        }
        for (at, rows, row) in blocks {
            seg.decode_block(&input, at, rows, start.saturating_sub(row), end - row)?;
        }
        seg.input = input;
        Ok(seg)
    }

    /// [`Segment::read_range_from`] on the file's bytes.
    pub fn read_range(file: &[u8], after: i64, upto: i64) -> Result<Self, Error> {
        Self::read_range_from(&mut std::io::Cursor::new(file), after, upto)
    }
}

/// The blocks of the segment in `file` that hold versions `after < seq <= upto` and touch
/// any of `wanted` (sorted path numbers), each decoded for that range as a segment of its
/// own: one field's history decompresses only the blocks that touch it. A file whose table
/// lists no block's paths (a segment of one block, or no table) is read for the range.
pub fn read_touching(
    file: &[u8],
    wanted: &[u64],
    after: i64,
    upto: i64,
) -> Result<Vec<Segment>, Error> {
    let table = match Table::len(file) {
        Some(len) => Table::read(
            file.get(..len)
                .ok_or_else(|| error("it ends in its table"))?,
        )?,
        None => return Ok(vec![Segment::read_range(file, after, upto)?]),
    };
    if table.paths.iter().all(|set| set.is_empty()) {
        return Ok(vec![Segment::read_range(file, after, upto)?]);
    }
    let (start, end) = table.header.range(after, upto);
    let mut out = Vec::new();
    let (mut offset, mut row) = (table.len + table.header_frame, 0);
    let blocks = table
        .header
        .blocks
        .iter()
        .zip(&table.frames)
        .zip(&table.paths);
    for ((&rows, &size), paths) in blocks {
        if row >= end {
            break;
        }
        let next = offset
            .checked_add(size)
            .ok_or_else(|| error("its table names frames it does not hold"))?;
        if row + rows > start && (paths.is_empty() || pathset::intersects(paths, wanted)?) {
            let frame = file
                .get(offset..next)
                .ok_or_else(|| error("its table names frames it does not hold"))?;
            let input = objects::decompress(frame).map_err(|e| error(e.to_string()))?;
            let block = Header {
                rows,
                first_seq: table
                    .header
                    .first_seq
                    .saturating_add(i64::try_from(row).unwrap_or(i64::MAX)),
                blocks: vec![rows],
                len: 0,
            };
            let (from, to) = (start.saturating_sub(row), (end - row).min(rows));
            let mut seg = Segment::holding(&block, from, to);
            seg.decode_block(&input, 0, rows, from, to)?;
            seg.input = input;
            out.push(seg);
        }
        offset = next;
        row += rows;
    }
    Ok(out)
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
            if !listed.is_empty()
                && *listed != pathset::encode(&crate::block_paths(&bytes, at, rows)?)
            {
                return Err(error(
                    "its table lists other paths for a block than it holds",
                ));
            }
        }
    }
    Segment::decode(bytes)
}
