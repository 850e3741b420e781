//! Strict parsing: the scanner every JSON input goes through ([`Lexer`]), and [`parse`],
//! which builds a [`Value`] with it.
//!
//! The scanner reads as `serde_json` reads (it is what hist parsed with before it had its
//! own): byte for byte the same acceptance, the same messages, and errors reported at the
//! same places, so that nothing a user sees changed when it was replaced.

use super::number::{LiteralError, NumberError, canonical_number_text, scan_literal, spelled};
use super::scan::{Check, scan_string};
use super::value::{Map, Number, Value};
use super::{MAX_DEPTH, quoted};
use std::borrow::Cow;
use std::collections::btree_map::Entry;

/// Where and why a JSON text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line (lines end at `\n`).
    pub line: usize,
    /// 1-based column, in characters from the start of the line.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses JSON strictly: UTF-8 without a byte-order mark, no duplicate member names,
/// nesting at most [`MAX_DEPTH`], finite numbers only. Every number of the result holds its
/// canonical text (see the [module documentation](super)), so `1.0` and `1` parse to equal
/// values.
///
/// ```
/// let v = hist::canon::parse(br#"{"b": 1.0, "a": -0}"#).unwrap();
/// assert_eq!(hist::canon::to_canonical_string(&v), r#"{"a":0,"b":1}"#);
/// assert!(hist::canon::parse(br#"{"a": 1, "a": 2}"#).is_err());
/// ```
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    let text = checked_text(bytes)?;
    let mut lx = Lexer::new(text);
    let mut buf = ryu_js::Buffer::new();
    tree(&mut lx, &mut buf)
        .and_then(|v| lx.end().map(|()| v))
        .map_err(|e| e.at(text))
}

/// [`parse`] for text.
pub fn parse_str(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes())
}

/// The members of a JSON object, each value as the text it is written as (without the
/// whitespace around it), in the order written: for reading an envelope around a document
/// that is then given on as text (as `hist import` reads its records), without building
/// the document's tree.
///
/// The text is checked as [`parse`] checks it, but only the object's own members are
/// looked at as members: a name given twice among them is refused, while inside their
/// values only the JSON syntax and nesting are checked (parse a value to check the rest).
///
/// ```
/// let members = hist::canon::object_members(r#"{"key": "a", "doc": {"x": [1, 2]}}"#).unwrap();
/// assert_eq!(members, vec![("key".to_owned(), r#""a""#), ("doc".to_owned(), r#"{"x": [1, 2]}"#)]);
/// assert!(hist::canon::object_members("[1]").is_err());
/// ```
pub fn object_members(text: &str) -> Result<Vec<(String, &str)>, ParseError> {
    fn read<'a>(lx: &mut Lexer<'a>, members: &mut Vec<(String, &'a str)>) -> Result<(), LexError> {
        match lx.skip_ws() {
            Some(b'{') => {}
            Some(_) => return Err(lx.peek_err("expected a JSON object")),
            None => return Err(lx.peek_err("EOF while parsing a value")),
        }
        lx.enter()?;
        let mut first = true;
        while lx.has_next_key(&mut first)? {
            let name = lx.key()?;
            if members.iter().any(|(n, _)| *n == name) {
                return Err(lx.in_object(format!("duplicate member name {}", quoted(&name))));
            }
            lx.colon()?;
            lx.skip_ws();
            let start = lx.pos;
            skip(lx)?;
            let value = lx.text.get(start..lx.pos).unwrap_or_default();
            members.push((name.into_owned(), value));
        }
        lx.close();
        lx.end()
    }
    let text = checked_text(text.as_bytes())?;
    let mut lx = Lexer::new(text);
    let mut members = Vec::new();
    read(&mut lx, &mut members).map_err(|e| e.at(text))?;
    Ok(members)
}

/// The input as text: refuses a byte-order mark and bytes that are not UTF-8.
pub(super) fn checked_text(bytes: &[u8]) -> Result<&str, ParseError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "a UTF-8 byte-order mark is not allowed at the start of JSON text \
                      (remove the first 3 bytes)"
                .to_owned(),
        });
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let (line, column) = position_of_byte(bytes, at);
        let end = bytes.len().min(at + e.error_len().unwrap_or(1));
        let bad = bytes.get(at..end).unwrap_or_default();
        let hex: Vec<String> = bad.iter().map(|b| format!("{b:02x}")).collect();
        ParseError {
            line,
            column,
            message: format!(
                "invalid UTF-8 at byte offset {at} (bytes {}); JSON text must be UTF-8",
                hex.join(" ")
            ),
        }
    })
}

/// 1-based line and character column of the byte at `at` (which may be past the end).
fn position_of_byte(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = 1 + before[line_start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count();
    (line, column)
}

// ---------------------------------------------------------------------------------------
// The scanner
// ---------------------------------------------------------------------------------------

/// Why the text was refused: the message, and where the scanner stood, one past the byte at
/// fault (at a byte it only looked at, one past that byte).
#[derive(Debug)]
pub(super) struct LexError {
    index: usize,
    message: Cow<'static, str>,
}

impl LexError {
    /// The error with its line and column in `text`: those of the byte at fault.
    pub(super) fn at(self, text: &str) -> ParseError {
        let mut at = self.index.saturating_sub(1).min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let (line, column) = position_of_byte(text.as_bytes(), at);
        ParseError {
            line,
            column,
            message: self.message.into_owned(),
        }
    }
}

/// The start of a value, as the scanner reads it.
pub(super) enum Token<'a> {
    Null,
    Bool(bool),
    /// A number literal, as written (its grammar checked, not its range).
    Number(&'a str),
    /// A string's contents, decoded.
    String(Cow<'a, str>),
    /// `[`: read the elements with [`Lexer::has_next_element`], then [`Lexer::close`].
    Array,
    /// `{`: read the members with [`Lexer::has_next_key`], [`Lexer::key`] and
    /// [`Lexer::colon`], then [`Lexer::close`].
    Object,
}

/// A strict JSON scanner over text, one token at a time. Its drivers ([`parse`]'s tree
/// builder, [`super::canonical_text`]'s writer) make the calls in the order a reader of
/// JSON must, and get the same errors at the same places.
pub(super) struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    /// The next byte to read.
    pub(super) pos: usize,
    /// Containers that may still open: nesting deeper than [`MAX_DEPTH`] is refused.
    depth_left: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            b: text.as_bytes(),
            pos: 0,
            depth_left: MAX_DEPTH,
        }
    }

    /// An error at the byte just read.
    pub(super) fn err(&self, message: impl Into<Cow<'static, str>>) -> LexError {
        LexError {
            index: self.pos,
            message: message.into(),
        }
    }

    /// An error at the byte about to be read (the last byte at the end of the text).
    pub(super) fn peek_err(&self, message: impl Into<Cow<'static, str>>) -> LexError {
        LexError {
            index: (self.pos + 1).min(self.b.len()),
            message: message.into(),
        }
    }

    /// An error found by the reader of an object just after it read something in it:
    /// reported where the scanner stands once it has looked for the object's end (past
    /// whitespace and a `}`), as `serde_json` reports it.
    pub(super) fn in_object(&mut self, message: String) -> LexError {
        if self.skip_ws() == Some(b'}') {
            self.pos += 1;
        }
        self.err(message)
    }

    /// Skips whitespace; the next byte.
    #[inline]
    pub(super) fn skip_ws(&mut self) -> Option<u8> {
        loop {
            match self.b.get(self.pos) {
                Some(b' ' | b'\n' | b'\t' | b'\r') => self.pos += 1,
                other => return other.copied(),
            }
        }
    }

    /// Reads the start of a value.
    #[inline]
    pub(super) fn value(&mut self) -> Result<Token<'a>, LexError> {
        let Some(c) = self.skip_ws() else {
            return Err(self.peek_err("EOF while parsing a value"));
        };
        Ok(match c {
            b'"' => {
                self.pos += 1;
                Token::String(self.string()?)
            }
            b'-' | b'0'..=b'9' => Token::Number(self.number()?),
            b'{' => {
                self.enter()?;
                Token::Object
            }
            b'[' => {
                self.enter()?;
                Token::Array
            }
            b'n' => {
                self.ident(b"null")?;
                Token::Null
            }
            b't' => {
                self.ident(b"true")?;
                Token::Bool(true)
            }
            b'f' => {
                self.ident(b"false")?;
                Token::Bool(false)
            }
            _ => return Err(self.peek_err("expected value")),
        })
    }

    /// Reads `word`, whose first byte is next.
    fn ident(&mut self, word: &[u8]) -> Result<(), LexError> {
        for &expected in word {
            let next = self.b.get(self.pos).copied();
            let Some(c) = next else {
                return Err(self.err("EOF while parsing a value"));
            };
            self.pos += 1;
            if c != expected {
                return Err(self.err("expected ident"));
            }
        }
        Ok(())
    }

    /// Opens an array or object (its bracket is next).
    fn enter(&mut self) -> Result<(), LexError> {
        if self.depth_left == 0 {
            return Err(self.peek_err(format!(
                "nesting deeper than {MAX_DEPTH} arrays and objects"
            )));
        }
        self.depth_left -= 1;
        self.pos += 1;
        Ok(())
    }

    /// Closes the array or object whose end was just found.
    pub(super) fn close(&mut self) {
        self.depth_left += 1;
        self.pos += 1;
    }

    /// Reads a number literal (its first byte is next).
    fn number(&mut self) -> Result<&'a str, LexError> {
        let start = self.pos;
        let end = scan_literal(self.b, start).map_err(|LiteralError { at, message }| {
            self.pos = at;
            self.err(message)
        })?;
        self.pos = end;
        Ok(self.text.get(start..end).unwrap_or_default())
    }

    /// The canonical text of the number literal just read, or its error (not finite).
    pub(super) fn number_text<'b>(
        &self,
        literal: &'b str,
        buf: &'b mut ryu_js::Buffer,
    ) -> Result<&'b str, LexError> {
        canonical_number_text(literal, buf)
            .ok_or_else(|| self.err(NumberError::OutOfRange(spelled(literal)).to_string()))
    }

    /// Reads a string's contents (its opening quote was just read).
    fn string(&mut self) -> Result<Cow<'a, str>, LexError> {
        let open = self.pos - 1;
        let mut decoded = String::new();
        let scanned =
            scan_string(self.text, open, Check::Json, Some(&mut decoded)).map_err(|e| {
                self.pos = e.at;
                self.err(e.fault.json_message())
            })?;
        self.pos = scanned.end;
        Ok(if scanned.escaped {
            Cow::Owned(decoded)
        } else {
            Cow::Borrowed(self.text.get(open + 1..scanned.end - 1).unwrap_or_default())
        })
    }

    /// Whether the array being read has another element (`first`: none read yet); false at
    /// its `]`, which [`Lexer::close`] then takes.
    #[inline]
    pub(super) fn has_next_element(&mut self, first: &mut bool) -> Result<bool, LexError> {
        match self.skip_ws() {
            None => Err(self.peek_err("EOF while parsing a list")),
            Some(b']') => Ok(false),
            Some(_) if *first => {
                *first = false;
                Ok(true)
            }
            Some(b',') => {
                self.pos += 1;
                match self.skip_ws() {
                    Some(b']') => Err(self.peek_err("trailing comma")),
                    Some(_) => Ok(true),
                    None => Err(self.peek_err("EOF while parsing a value")),
                }
            }
            Some(_) => Err(self.peek_err("expected `,` or `]`")),
        }
    }

    /// Whether the object being read has another member (`first`: none read yet); false at
    /// its `}`, which [`Lexer::close`] then takes. When true, a name is next.
    #[inline]
    pub(super) fn has_next_key(&mut self, first: &mut bool) -> Result<bool, LexError> {
        match self.skip_ws() {
            None => Err(self.peek_err("EOF while parsing an object")),
            Some(b'}') => Ok(false),
            Some(c) if *first => {
                *first = false;
                if c == b'"' {
                    Ok(true)
                } else {
                    Err(self.peek_err("key must be a string"))
                }
            }
            Some(b',') => {
                self.pos += 1;
                match self.skip_ws() {
                    Some(b'"') => Ok(true),
                    Some(b'}') => Err(self.peek_err("trailing comma")),
                    Some(_) => Err(self.peek_err("key must be a string")),
                    None => Err(self.peek_err("EOF while parsing a value")),
                }
            }
            Some(_) => Err(self.peek_err("expected `,` or `}`")),
        }
    }

    /// Reads a member name (after [`Lexer::has_next_key`] said there is one).
    #[inline]
    pub(super) fn key(&mut self) -> Result<Cow<'a, str>, LexError> {
        self.pos += 1;
        self.string()
    }

    /// Reads the `:` after a member name.
    #[inline]
    pub(super) fn colon(&mut self) -> Result<(), LexError> {
        match self.skip_ws() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.peek_err("expected `:`")),
            None => Err(self.peek_err("EOF while parsing an object")),
        }
    }

    /// Checks that only whitespace is left.
    pub(super) fn end(&mut self) -> Result<(), LexError> {
        match self.skip_ws() {
            Some(_) => Err(self.peek_err("trailing characters")),
            None => Ok(()),
        }
    }
}

/// Builds the value whose start is next.
fn tree(lx: &mut Lexer<'_>, buf: &mut ryu_js::Buffer) -> Result<Value, LexError> {
    Ok(match lx.value()? {
        Token::Null => Value::Null,
        Token::Bool(b) => Value::Bool(b),
        Token::Number(literal) => {
            Value::Number(Number::from_canonical(lx.number_text(literal, buf)?))
        }
        Token::String(s) => Value::String(s.into_owned()),
        Token::Array => {
            let mut items = Vec::new();
            let mut first = true;
            while lx.has_next_element(&mut first)? {
                items.push(tree(lx, buf)?);
            }
            lx.close();
            Value::Array(items)
        }
        Token::Object => {
            let mut members = Map::new();
            let mut first = true;
            while lx.has_next_key(&mut first)? {
                match members.entry(lx.key()?.into_owned()) {
                    Entry::Occupied(o) => {
                        let message = format!("duplicate member name {}", quoted(o.key()));
                        return Err(lx.in_object(message));
                    }
                    Entry::Vacant(v) => {
                        lx.colon()?;
                        v.insert(tree(lx, buf)?);
                    }
                }
            }
            lx.close();
            Value::Object(members)
        }
    })
}

/// Reads past the value whose start is next, checking its syntax and nesting only.
fn skip(lx: &mut Lexer<'_>) -> Result<(), LexError> {
    match lx.value()? {
        Token::Array => {
            let mut first = true;
            while lx.has_next_element(&mut first)? {
                skip(lx)?;
            }
            lx.close();
        }
        Token::Object => {
            let mut first = true;
            while lx.has_next_key(&mut first)? {
                lx.key()?;
                lx.colon()?;
                skip(lx)?;
            }
            lx.close();
        }
        _ => {}
    }
    Ok(())
}
