//! The one JSON string scanner: finds where a string ends, checks it as strictly as the
//! caller asks (RFC 8259 input, or canonical text), and decodes its escapes. The parser,
//! the streaming writer, the canonical-text reader, the pretty printer and path selectors
//! all read strings through it.

/// How much of a string is checked while it is scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Only its end is found: text this process wrote, or checked before. A `\` skips the
    /// byte after it; nothing else is looked at (escapes are still checked when the string
    /// is decoded).
    Trusted,
    /// RFC 8259: no raw control characters, only JSON's escapes, surrogate escapes paired.
    Json,
    /// [`Check::Json`], and only the escapes canonical text writes: `\"`, `\\`, `\b`,
    /// `\f`, `\n`, `\r`, `\t`, and `\u00xx` (lowercase hex) for the other control characters.
    Canonical,
}

/// What is wrong with a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The text ends inside it.
    Eof,
    /// A raw control character (U+0000..=U+001F).
    Control,
    /// An escape JSON does not have, or `\u` without four hex digits.
    Escape,
    /// A `\u` escape of a surrogate that is not the first of a pair.
    LoneSurrogate,
    /// A leading surrogate escape not followed by a `\u` escape.
    EndOfHexEscape,
    /// An escape canonical text does not write.
    NotCanonical,
}

impl Fault {
    /// The message `serde_json` gives for the fault (what [`super::parse`] reports).
    pub(crate) fn json_message(self) -> &'static str {
        match self {
            Fault::Eof => "EOF while parsing a string",
            Fault::Control => "control character (\\u0000-\\u001F) found while parsing a string",
            Fault::Escape | Fault::NotCanonical => "invalid escape",
            Fault::LoneSurrogate => "lone leading surrogate in hex escape",
            Fault::EndOfHexEscape => "unexpected end of hex escape",
        }
    }
}

/// Where a string's scan stopped: `at` is one past the byte at fault (the end of the text
/// when it ends too soon), where `serde_json`'s reader stands when it reports the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StringError {
    pub(crate) at: usize,
    pub(crate) fault: Fault,
}

/// A scanned string: the index one past its closing quote, and whether it has escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scanned {
    pub(crate) end: usize,
    pub(crate) escaped: bool,
}

/// The bytes a checked scan stops at: `"`, `\` and the control characters.
const STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The end of the string starting (with its quote) at `i`, found without checking it
/// ([`Check::Trusted`]); `Err` with the text's length when it runs off the end.
#[inline]
pub(crate) fn string_end(b: &[u8], i: usize) -> Result<usize, usize> {
    let mut j = i + 1;
    // Most strings (member names, short values) end within a few bytes: a plain loop finds
    // their end sooner than setting up a vector search does.
    let short = (j + 16).min(b.len());
    while j < short {
        match b.get(j) {
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => j += 2,
            _ => j += 1,
        }
    }
    loop {
        let rest = b.get(j..).unwrap_or_default();
        let k = memchr::memchr2(b'"', b'\\', rest).ok_or(b.len())?;
        j += k;
        if b.get(j) == Some(&b'"') {
            return Ok(j + 1);
        }
        j += 2;
    }
}

/// The first byte at or after `i` that a checked scan stops at, or the text's length.
#[inline]
fn next_stop(b: &[u8], mut i: usize) -> usize {
    let short = (i + 16).min(b.len());
    while i < short {
        if b.get(i).is_none_or(|&c| STOP[usize::from(c)]) {
            return i;
        }
        i += 1;
    }
    // Eight bytes at a time: a byte below 0x20, a quote or a backslash sets the high bit
    // of its lane (and maybe lanes above it, never below: the lowest one is exact).
    const ONES: u64 = u64::MAX / 255;
    let rest = b.get(i..).unwrap_or_default();
    let (chunks, _) = rest.as_chunks::<8>();
    for chunk in chunks {
        let x = u64::from_le_bytes(*chunk);
        let control = x.wrapping_sub(ONES * 0x20) & !x;
        let q = x ^ (ONES * u64::from(b'"'));
        let quote = q.wrapping_sub(ONES) & !q;
        let s = x ^ (ONES * u64::from(b'\\'));
        let slash = s.wrapping_sub(ONES) & !s;
        let hit = (control | quote | slash) & (ONES << 7);
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|&c| !STOP[usize::from(c)]) {
        i += 1;
    }
    i
}

fn fail<T>(at: usize, fault: Fault) -> Result<T, StringError> {
    Err(StringError { at, fault })
}

/// Scans the string whose opening quote is at `open` in `text`, checked as `check` says.
/// With `decoded`, the contents of a string that has escapes are appended there, decoded
/// (a string without escapes is its own contents: nothing is appended).
pub(crate) fn scan_string(
    text: &str,
    open: usize,
    check: Check,
    mut decoded: Option<&mut String>,
) -> Result<Scanned, StringError> {
    let b = text.as_bytes();
    if check == Check::Trusted && decoded.is_none() {
        let end = string_end(b, open).map_err(|at| StringError {
            at,
            fault: Fault::Eof,
        })?;
        let escaped = b
            .get(open + 1..end - 1)
            .is_some_and(|s| memchr::memchr(b'\\', s).is_some());
        return Ok(Scanned { end, escaped });
    }
    let mut i = open + 1;
    // The first byte not yet appended to `decoded`.
    let mut copied = i;
    let mut escaped = false;
    loop {
        i = if check == Check::Trusted {
            let rest = b.get(i..).unwrap_or_default();
            i + memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len())
        } else {
            next_stop(b, i)
        };
        match b.get(i) {
            None => return fail(b.len(), Fault::Eof),
            Some(b'"') => {
                if escaped && let Some(out) = decoded.as_deref_mut() {
                    out.push_str(text.get(copied..i).unwrap_or_default());
                }
                return Ok(Scanned {
                    end: i + 1,
                    escaped,
                });
            }
            Some(b'\\') => {
                if let Some(out) = decoded.as_deref_mut() {
                    out.push_str(text.get(copied..i).unwrap_or_default());
                }
                escaped = true;
                let (c, next) = escape(b, i + 1, check)?;
                if let Some(out) = decoded.as_deref_mut() {
                    out.push(c);
                }
                i = next;
                copied = i;
            }
            Some(_) => return fail(i + 1, Fault::Control),
        }
    }
}

/// Reads the escape whose backslash is just before `i`: the character it stands for and
/// where the string goes on. Follows `serde_json`'s reading, so a fault is found where it
/// finds it.
fn escape(b: &[u8], i: usize, check: Check) -> Result<(char, usize), StringError> {
    let Some(&c) = b.get(i) else {
        return fail(b.len(), Fault::Eof);
    };
    let short = match c {
        b'"' => '"',
        b'\\' => '\\',
        b'/' if check == Check::Canonical => return fail(i + 1, Fault::NotCanonical),
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(b, i + 1, check),
        _ => return fail(i + 1, Fault::Escape),
    };
    Ok((short, i + 1))
}

/// Reads a `\u` escape whose four hex digits start at `i` (and the second escape of a
/// surrogate pair).
fn unicode_escape(b: &[u8], i: usize, check: Check) -> Result<(char, usize), StringError> {
    let hex4 = |i: usize| -> Result<(u32, usize), StringError> {
        let Some(digits) = b.get(i..i + 4) else {
            return fail(b.len(), Fault::Eof);
        };
        let mut n = 0u32;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return fail(i + 4, Fault::Escape),
            };
            n = (n << 4) | u32::from(v);
        }
        Ok((n, i + 4))
    };
    let (n, mut j) = hex4(i)?;
    if check == Check::Canonical {
        // Only a control character without a short escape, in lowercase hex.
        let lower = b
            .get(i..i + 4)
            .is_some_and(|d| d.iter().all(|c| !c.is_ascii_uppercase()));
        if n >= 0x20 || matches!(n, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D) || !lower {
            return fail(j, Fault::NotCanonical);
        }
    }
    if (0xDC00..=0xDFFF).contains(&n) {
        return fail(j, Fault::LoneSurrogate);
    }
    let code = if (0xD800..=0xDBFF).contains(&n) {
        for expected in [b'\\', b'u'] {
            match b.get(j) {
                None => return fail(j, Fault::Eof),
                Some(&c) if c == expected => j += 1,
                Some(_) => return fail(j + 1, Fault::EndOfHexEscape),
            }
        }
        let (low, next) = hex4(j)?;
        j = next;
        if !(0xDC00..=0xDFFF).contains(&low) {
            return fail(j, Fault::LoneSurrogate);
        }
        0x1_0000 + ((n - 0xD800) << 10) + (low - 0xDC00)
    } else {
        n
    };
    match char::from_u32(code) {
        Some(c) => Ok((c, j)),
        None => fail(j, Fault::LoneSurrogate),
    }
}

/// The decoded contents of a string given between its quotes (`raw`), as [`Check::Json`]
/// reads them; `Err` with what is wrong when they are not a JSON string's contents.
pub(crate) fn decode(raw: &str) -> Result<std::borrow::Cow<'_, str>, Fault> {
    if !raw.contains('\\') {
        return Ok(std::borrow::Cow::Borrowed(raw));
    }
    let quoted = format!("\"{raw}\"");
    let mut out = String::with_capacity(raw.len());
    let scanned = scan_string(&quoted, 0, Check::Json, Some(&mut out)).map_err(|e| e.fault)?;
    if scanned.end != quoted.len() {
        // A `"` inside `raw` ended the string early.
        return Err(Fault::Escape);
    }
    Ok(std::borrow::Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scan(text: &str, check: Check) -> Result<(usize, String), StringError> {
        let mut out = String::new();
        let s = scan_string(text, 0, check, Some(&mut out))?;
        Ok((
            s.end,
            if s.escaped {
                out
            } else {
                text[1..s.end - 1].to_owned()
            },
        ))
    }

    #[test]
    fn escapes_decode_and_faults_are_placed() {
        assert_eq!(
            scan(r#""a\n\u00e9\ud83d\ude00b"x"#, Check::Json).unwrap(),
            (24, "a\né😀b".into())
        );
        // (text, check, where the scan stops, why)
        let faults = [
            ("\"ab", Check::Json, 3, Fault::Eof),
            ("\"a\u{1}\"", Check::Json, 3, Fault::Control),
            (r#""\q""#, Check::Json, 3, Fault::Escape),
            (r#""\udc00""#, Check::Json, 7, Fault::LoneSurrogate),
            (r#""\ud800x""#, Check::Json, 8, Fault::EndOfHexEscape),
            (r#""\ud800\u0041""#, Check::Json, 13, Fault::LoneSurrogate),
            (r#""\u12zz""#, Check::Json, 7, Fault::Escape),
            (r#""\u12""#, Check::Json, 6, Fault::Eof),
            (r#""\/""#, Check::Canonical, 3, Fault::NotCanonical),
            (r#""\u000A""#, Check::Canonical, 7, Fault::NotCanonical),
            (r#""\u0041""#, Check::Canonical, 7, Fault::NotCanonical),
        ];
        for (text, check, at, fault) in faults {
            assert_eq!(scan(text, check), Err(StringError { at, fault }), "{text}");
        }
        assert!(scan(r#""\u001f\n""#, Check::Canonical).is_ok());
        assert_eq!(decode(r"a\tb").unwrap(), "a\tb");
        assert!(decode(r"a\").is_err());
        assert!(decode(r#"a"b"#).is_ok(), "no escape: taken as it is");
    }

    proptest! {
        /// Every scan finds the end the trusted scan finds, in text that is a string.
        #[test]
        fn checked_and_trusted_scans_agree(s in "[a-c\"\\\\/é\u{1}\u{7f}😀]{0,40}", pad in 0usize..20) {
            let mut text = crate::canon::quoted(&s);
            text.push_str(&"x".repeat(pad));
            let trusted = string_end(text.as_bytes(), 0).unwrap();
            let (end, decoded) = scan(&text, Check::Canonical).unwrap();
            prop_assert_eq!(end, trusted);
            prop_assert_eq!(decoded, s);
        }
    }
}
