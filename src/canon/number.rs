//! Numbers: the grammar of a JSON number literal and its canonical text.

use super::value::Number;

/// A number that has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NumberError {
    /// A JSON number that is not finite as a double (`1e400`).
    #[error("number {0} is out of range (not a finite double)")]
    OutOfRange(String),
    /// Text that is not a JSON number literal.
    #[error("{0:?} is not a JSON number")]
    NotANumber(String),
}

/// The canonical [`Number`] for a double (ECMAScript form: `1e+30`, `0.002`, `-0` → `0`),
/// or `None` when it is not finite. The same as [`Number::from_f64`].
pub fn number_from_f64(f: f64) -> Option<Number> {
    Number::from_f64(f)
}

/// Whether a number's text is an integer literal: no `.`, `e` or `E`.
fn is_integer_literal(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// The canonical text of a JSON number literal, written into `buf` when it must be
/// computed; `None` when it is not finite as a double.
pub(crate) fn canonical_number_text<'a>(
    text: &'a str,
    buf: &'a mut ryu_js::Buffer,
) -> Option<&'a str> {
    if is_integer_literal(text) {
        return Some(if text == "-0" { "0" } else { text });
    }
    let f = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    Some(buf.format_finite(f))
}

/// A literal as `serde_json` spells it in its messages (its exponent as `e+`, `e-`), so
/// that the out-of-range message reads as it always has: `1E400` is `1e+400`.
pub(crate) fn spelled(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len() + 1);
    let mut rest = literal.chars().peekable();
    while let Some(c) = rest.next() {
        if matches!(c, 'e' | 'E') {
            out.push('e');
            if !matches!(rest.peek(), Some('+' | '-')) {
                out.push('+');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Why a number literal does not scan, and where: `at` is one past the byte at fault (the
/// end of the text for an early end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LiteralError {
    pub(crate) at: usize,
    pub(crate) message: &'static str,
}

const EOF: &str = "EOF while parsing a value";
const INVALID: &str = "invalid number";

/// The end of the JSON number literal starting at `i` (at its `-` or first digit): RFC 8259's
/// grammar, read byte by byte as `serde_json` reads it, so that a literal refused here is
/// refused at the same place with the same message.
pub(crate) fn scan_literal(b: &[u8], i: usize) -> Result<usize, LiteralError> {
    let at_byte = |at: usize, message| LiteralError { at, message };
    // A byte looked at but not taken: `serde_json` reports the position after it.
    let peeked = |j: usize, message| LiteralError {
        at: (j + 1).min(b.len()),
        message,
    };
    let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    match b.get(j) {
        None => return Err(at_byte(j, EOF)),
        Some(b'0') => {
            j += 1;
            if digit(j) {
                return Err(peeked(j, INVALID));
            }
        }
        Some(b'1'..=b'9') => {
            j += 1;
            while digit(j) {
                j += 1;
            }
        }
        Some(_) => return Err(at_byte(j + 1, INVALID)),
    }
    if b.get(j) == Some(&b'.') {
        j += 1;
        if !digit(j) {
            let message = if j < b.len() { INVALID } else { EOF };
            return Err(peeked(j, message));
        }
        while digit(j) {
            j += 1;
        }
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        match b.get(j) {
            None => return Err(at_byte(j, EOF)),
            Some(c) if c.is_ascii_digit() => {}
            Some(_) => return Err(at_byte(j + 1, INVALID)),
        }
        while digit(j) {
            j += 1;
        }
    }
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_end_where_json_says() {
        for (text, end) in [("0", 1), ("-12.5e+3,", 8), ("1E5]", 3), ("0.0", 3)] {
            assert_eq!(scan_literal(text.as_bytes(), 0), Ok(end), "{text}");
        }
        for (text, at, message) in [
            ("-", 1, EOF),
            ("01", 2, INVALID),
            ("1.", 2, EOF),
            ("1.x", 3, INVALID),
            ("1e", 2, EOF),
            ("1e+x", 4, INVALID),
            ("-x", 2, INVALID),
        ] {
            assert_eq!(
                scan_literal(text.as_bytes(), 0),
                Err(LiteralError { at, message }),
                "{text}"
            );
        }
        assert_eq!(spelled("1E400"), "1e+400");
        assert_eq!(spelled("0.4e006"), "0.4e+006");
        assert_eq!(spelled("-1e-5"), "-1e-5");
    }
}
