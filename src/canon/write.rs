//! Writing: the canonical text of a [`Value`], and the pretty form for people.

use super::scan::string_end;
use super::value::{Map, Value};
use std::cmp::Ordering;

/// Canonical text of a value (see the [module documentation](super)).
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    utf8(out)
}

/// Bytes this module wrote: string contents and ASCII, so always UTF-8.
pub(crate) fn utf8(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Appends the canonical bytes of a value to `out`.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
        Value::String(s) => write_string(s, out),
        Value::Array(values) => {
            out.push(b'[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, v)) in InCanonicalOrder::of(members).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
    }
}

/// [`to_pretty_string`] of the value whose canonical text is `canonical`, laid out straight
/// from the text (no tree is built). The text must be canonical, as stored documents are;
/// any other text is laid out as it stands, without panicking.
///
/// ```
/// let v = hist::canon::parse_str(r#"{"b":[1,{}],"a":"x,y"}"#).unwrap();
/// let text = hist::canon::to_canonical_string(&v);
/// assert_eq!(hist::canon::pretty_text(&text), hist::canon::to_pretty_string(&v));
/// ```
pub fn pretty_text(canonical: &str) -> String {
    let mut out = Vec::with_capacity(canonical.len() * 2);
    // Writing to a Vec cannot fail.
    let _ = write_pretty_text(canonical, &mut out);
    utf8(out)
}

/// [`pretty_text`], written to `out` a piece at a time: a large document is laid out
/// without ever holding its pretty form (twice its size) in memory.
pub fn write_pretty_text<W: std::io::Write + ?Sized>(
    canonical: &str,
    out: &mut W,
) -> std::io::Result<()> {
    const PIECE: usize = 64 * 1024;
    let b = canonical.as_bytes();
    let mut buf = Vec::with_capacity(PIECE.min(b.len() * 2) + 256);
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if buf.len() >= PIECE {
            out.write_all(&buf)?;
            buf.clear();
        }
        match c {
            b'"' => {
                // A string, escapes included, is copied as it stands.
                let end = string_end(b, i).unwrap_or(b.len());
                buf.extend_from_slice(b.get(i..end).unwrap_or_default());
                i = end;
                continue;
            }
            b'[' | b'{' => {
                let close = if c == b'[' { b']' } else { b'}' };
                if b.get(i + 1) == Some(&close) {
                    buf.extend_from_slice(&[c, close]);
                    i += 2;
                    continue;
                }
                buf.push(c);
                depth += 1;
                newline(depth, &mut buf);
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                newline(depth, &mut buf);
                buf.push(c);
            }
            b',' => {
                buf.push(b',');
                newline(depth, &mut buf);
            }
            b':' => buf.extend_from_slice(b": "),
            _ => {
                // A number or a literal, copied up to the byte that ends it.
                let rest = b.get(i..).unwrap_or_default();
                let len = rest
                    .iter()
                    .position(|&x| matches!(x, b'"' | b'[' | b'{' | b']' | b'}' | b',' | b':'))
                    .unwrap_or(rest.len())
                    .max(1);
                buf.extend_from_slice(rest.get(..len).unwrap_or_default());
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out.write_all(&buf)
}

/// Pretty text for people: the canonical form (member order, numbers, escaping) laid out
/// like `serde_json::to_string_pretty`, with 2-space indentation (`{\n  "a": 1\n}`, `[]`,
/// `{}`). No final newline.
pub fn to_pretty_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_pretty(value, 0, &mut out);
    utf8(out)
}

/// A line break and the indentation of `depth`, in the pretty form.
fn newline(depth: usize, out: &mut Vec<u8>) {
    const SPACES: [u8; 64] = [b' '; 64];
    out.push(b'\n');
    let mut n = 2 * depth;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.extend_from_slice(SPACES.get(..k).unwrap_or_default());
        n -= k;
    }
}

fn write_pretty(value: &Value, depth: usize, out: &mut Vec<u8>) {
    match value {
        Value::Array(values) if !values.is_empty() => {
            out.push(b'[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(depth + 1, out);
                write_pretty(v, depth + 1, out);
            }
            newline(depth, out);
            out.push(b']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push(b'{');
            for (i, (k, v)) in InCanonicalOrder::of(members).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(depth + 1, out);
                write_string(k, out);
                out.extend_from_slice(b": ");
                write_pretty(v, depth + 1, out);
            }
            newline(depth, out);
            out.push(b'}');
        }
        _ => write_canonical(value, out),
    }
}

/// An object's members in canonical order: straight from the map when it is already in
/// that order (the usual case: a `BTreeMap` orders by code points, which differs from
/// UTF-16 order only for rare names), else sorted references.
enum InCanonicalOrder<'a> {
    InOrder(std::collections::btree_map::Iter<'a, String, Value>),
    Sorted(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> InCanonicalOrder<'a> {
    fn of(members: &'a Map) -> Self {
        let in_order = members
            .keys()
            .zip(members.keys().skip(1))
            .all(|(a, b)| compare_keys(a, b) == Ordering::Less);
        if in_order {
            Self::InOrder(members.iter())
        } else {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| compare_keys(a.0, b.0));
            Self::Sorted(sorted.into_iter())
        }
    }
}

impl<'a> Iterator for InCanonicalOrder<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::InOrder(it) => it.next(),
            Self::Sorted(it) => it.next(),
        }
    }
}

/// How each byte is written inside a string: 0 as itself, `u` as `\u00xx`, else `\` and
/// that byte.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes a string with minimal escaping (see the [module documentation](super)).
pub(crate) fn write_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(b)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        if escape == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A string as canonical text, with its quotes (`"a\n"`): for messages, and wherever a
/// name is spliced into canonical text.
pub fn quoted(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_string(s, &mut out);
    utf8(out)
}

/// The canonical text of an object whose members' values are already canonical text:
/// members ordered by [`compare_keys`], each value spliced in as it is (a name given twice
/// is written twice: the caller gives distinct names).
///
/// ```
/// let text = hist::canon::object_text(vec![("b", "[1]"), ("a", "\"x\"")]);
/// assert_eq!(text, r#"{"a":"x","b":[1]}"#);
/// ```
pub fn object_text(mut members: Vec<(&str, &str)>) -> String {
    members.sort_by(|a, b| compare_keys(a.0, b.0));
    let len = members
        .iter()
        .map(|(k, v)| k.len() + v.len() + 4)
        .sum::<usize>();
    let mut out = Vec::with_capacity(len + 2);
    out.push(b'{');
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(name, &mut out);
        out.push(b':');
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
    utf8(out)
}

/// Orders member names by UTF-16 code units, as RFC 8785 does (not by bytes or code
/// points: `"\u{e000}"` sorts after `"\u{1f600}"`). Allocation-free.
pub fn compare_keys(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let Some(i) = ab.iter().zip(bb).position(|(x, y)| x != y) else {
        return ab.len().cmp(&bb.len());
    };
    // Both strings agree up to `i`, so they share the char boundary at or before it.
    let mut start = i;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let ca = a[start..].chars().next().map_or(0, u32::from);
    let cb = b[start..].chars().next().map_or(0, u32::from);
    utf16_key(ca).cmp(&utf16_key(cb))
}

/// A code point's UTF-16 code units, as a comparable pair.
fn utf16_key(c: u32) -> (u32, u32) {
    if c < 0x1_0000 {
        (c, 0)
    } else {
        let v = c - 0x1_0000;
        (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
    }
}
