//! Canonical JSON: hist's JSON value, strict parsing, the canonical byte form, the order of
//! keyed arrays and sets, reading canonical text without parsing it, and content ids.
//!
//! Canonical bytes are what `hist` hashes (blake3) and stores in objects, so this module
//! doc is the specification of the format. A change to any rule below changes hashes: it is
//! a format break and needs a changelog note. Golden tests (`tests/api/canon.rs`) pin the
//! bytes and digests.
//!
//! This module depends on nothing else in the crate: paths, rules, diffs and the store are
//! built on it. Its parts:
//!
//! - [`Value`] (`value.rs`): the JSON value, with exact [`Number`]s;
//! - [`parse`] (`parse.rs`): the strict scanner every input goes through;
//! - [`to_canonical_string`], [`to_pretty_string`] (`write.rs`): the writers;
//! - [`canonical_text`], [`ordered_text`] (`stream.rs`): canonical text written while the
//!   input is parsed, without a tree: the ingest's path;
//! - [`OrderTree`], [`arrange`] (`order.rs`): the order of keyed arrays and sets;
//! - [`get_text`], [`validate`] (`text.rs`): reading canonical text as it stands;
//! - `scan.rs`: the one JSON string scanner all of them use; `number.rs`: number literals.
//!
//! # The canonical form
//!
//! The canonical form is RFC 8785 (JSON Canonicalization Scheme, "JCS") with one deliberate
//! exception for integers:
//!
//! - **No whitespace** anywhere outside strings.
//! - **Object members** are sorted by their names compared as sequences of UTF-16 code
//!   units ([`compare_keys`]), not by code points, bytes or locale. The two orders differ
//!   only when a name holds a character in U+E000..=U+FFFF and another a character above
//!   U+FFFF: `"\u{e000}"` sorts *after* `"\u{1f600}"` (whose first code unit is 0xD83D).
//!   Member names are never normalized (no Unicode normalization).
//! - **Strings** use minimal escaping: only `"` (as `\"`), `\` (as `\\`) and the control
//!   characters U+0000..=U+001F are escaped; `\b`, `\f`, `\n`, `\r`, `\t` use their short
//!   forms, the other controls are `\u00xx` with lowercase hex. `/`, U+007F and every
//!   non-ASCII character are written as themselves (UTF-8).
//! - **Numbers**:
//!   - an *integer literal* (its text has no `.`, `e` or `E`) is kept exactly, digit for
//!     digit, whatever its size: `12345678901234567890123` stays as written and is never
//!     rounded through a double. This is the exception to RFC 8785, which would print
//!     `1.2345678901234568e+22`. `-0` is written `0`.
//!   - any other literal is read as an IEEE-754 double (round to nearest) and written as
//!     ECMAScript's `Number.prototype.toString` writes it: `1E30` → `1e+30`, `4.50` →
//!     `4.5`, `1.0` → `1`, `2e-3` → `0.002`, `-0.0` → `0`, `1e-400` → `0`. So `1.0` and
//!     `1` are the same value, while `1.0e25` and `10000000000000000000000000` are not
//!     (`1e+25` versus the 26 digits).
//!   - a literal that is not finite as a double (`1e400`) has no canonical form: [`parse`]
//!     refuses it, and no [`Number`] holds it.
//! - **Arrays** keep their order, except keyed arrays and sets, which are ordered as
//!   [`order`] says when rules declare them ([`ordered_text`]).
//!
//! [`write_canonical`] and [`to_canonical_string`] produce this form for any [`Value`].
//! [`to_pretty_string`] is the same form laid out with 2-space indentation, for people.
//!
//! # Numbers in memory
//!
//! A [`Number`] is its canonical text, so two numbers are equal exactly when they are the
//! same number: `parse("1.0") == parse("1")`, and `Value::from(1.5)` equals the parsed
//! `1.50`. Every way of making one ([`parse`], `From` an integer, [`Number::from_f64`],
//! `str::parse`) gives the canonical text, and there is no way to make one that is not
//! finite. Nothing here goes through `serde_json`'s numbers: hist needs none of its
//! features (`arbitrary_precision` in particular), so linking hist changes nothing in how
//! the rest of a program reads and writes JSON.
//!
//! # What [`parse`] refuses, and why
//!
//! [`parse`] accepts exactly RFC 8259 JSON, minus:
//!
//! - **bytes that are not UTF-8**: JSON exchanged between systems must be UTF-8
//!   (RFC 8259 §8.1); guessing another encoding would make the stored form depend on a guess.
//! - **a UTF-8 byte-order mark** at the start: RFC 8259 forbids adding one and lets parsers
//!   ignore it; we refuse it so that a file's bytes and its parsed content never disagree
//!   silently. Strip it and retry.
//! - **duplicate member names** in an object (at any depth): RFC 8259 leaves their meaning
//!   to the implementation; keeping either value would silently drop data. The error names
//!   the member, e.g. `duplicate member name "a"`.
//! - **numbers that are not finite as a double** (`1e400`, `-1e999`).
//! - **nesting deeper than [`MAX_DEPTH`]** arrays and objects. Parsing recurses once per
//!   level, so this keeps it (and dropping the result) far from a stack overflow, whatever
//!   the input (100,000 `[` is a clean error).
//! - lone surrogate escapes such as `"\ud800"` (not a Unicode scalar value), control
//!   characters inside strings, and the rest of RFC 8259's rules.
//!
//! Every member name is an ordinary name, `$serde_json::private::Number` included (hist
//! once had to refuse it, when its numbers went through `serde_json`'s).
//!
//! The messages and positions are those `serde_json` gives for the same input (`EOF while
//! parsing a value`, `trailing comma`, `expected ident`, …), so they read as they always
//! have. Error positions are 1-based: `line` counts `\n`, `column` counts characters
//! (Unicode scalar values) from the start of the line. Where a check fires after a token
//! has been read (a duplicate name, a non-finite number), the column is the token's last
//! character.
//!
//! Of the 35 JSONTestSuite files a parser may accept or refuse (`i_*`; each outcome is
//! pinned in `tests/api/canon.rs`), 5 are accepted and 30 refused:
//! - accepted: integers beyond 64 bits, kept digit for digit (`i_number_too_big_pos_int`,
//!   `i_number_too_big_neg_int`, `i_number_very_big_negative_int`), and doubles that
//!   underflow to `0` (`i_number_real_underflow`, `i_number_double_huge_neg_exp`);
//! - refused: the 5 numbers that overflow a double (`i_number_huge_exp`, ...), the 10 lone,
//!   truncated or inverted surrogate escapes, the 13 files that are not UTF-8 (among them
//!   an encoded surrogate U+D800, overlong forms and the 3 UTF-16 files), the UTF-8 BOM
//!   (`i_structure_UTF-8_BOM_empty_object`) and 500 nested arrays (over [`MAX_DEPTH`]).
//!
//! Values that do not come from [`parse`] are not depth-checked: the writers recurse, so a
//! value nested many thousands of levels deep (which [`parse`] never returns) could exhaust
//! the stack.

mod number;
pub mod order;
mod parse;
mod scan;
mod stream;
mod text;
mod value;
mod write;

pub use number::{NumberError, number_from_f64};
pub use order::{
    Arrangement, ArrayMode, ArrayOrder, OrderTree, PatternStep, SortText, arrange, write_sort_text,
};
pub use parse::{ParseError, object_members, parse, parse_str};
pub use stream::{canonical_text, ordered_text};
pub use text::{MalformedText, Selector, get_text};
pub use value::{Map, Number, Value, ValueIndex};
pub use write::{
    compare_keys, object_text, pretty_text, quoted, to_canonical_string, to_pretty_string,
    write_canonical, write_pretty_text,
};

pub(crate) use order::{write_key_values, write_keyed};
pub(crate) use scan::string_end;
pub(crate) use text::{
    Member, SortTexts, Val, index, key_values, quote_all, validate as checked_index,
};
pub(crate) use value::{array_index, pointer_tokens};

#[cfg(test)]
pub(crate) use text::tests::value as tests_value;

use std::fmt;

/// Deepest nesting of arrays and objects accepted on input: 127 levels parse, 128 are
/// refused (so that no input can overflow the stack).
pub const MAX_DEPTH: usize = 127;

/// Checks that `text` is canonical JSON, as [`to_canonical_string`] writes it (no
/// whitespace, members in canonical order, minimal escapes, canonical numbers, nesting at
/// most [`MAX_DEPTH`]), without parsing it into a tree.
///
/// ```
/// assert!(hist::canon::validate(r#"{"a":[1,"x"]}"#).is_ok());
/// assert!(hist::canon::validate(r#"{"a": 1}"#).is_err());
/// assert!(hist::canon::validate("1.0").is_err());
/// ```
pub fn validate(text: &str) -> Result<(), MalformedText> {
    text::validate(text).map(drop)
}

// ---------------------------------------------------------------------------------------
// Content ids
// ---------------------------------------------------------------------------------------

/// A blake3 digest naming content (an object's bytes, a document's canonical bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    /// The id of some bytes: their blake3 digest.
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }
    /// Parses 64 hex digits (as [`ObjectId::to_hex`] writes them), or `None`.
    pub fn from_hex(text: &str) -> Option<Self> {
        blake3::Hash::from_hex(text)
            .ok()
            .map(|h| Self(*h.as_bytes()))
    }
    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", self.to_hex())
    }
}

/// The id of a value's canonical bytes ([`write_canonical`]).
pub fn hash(value: &Value) -> ObjectId {
    let mut bytes = Vec::new();
    write_canonical(value, &mut bytes);
    ObjectId::of(&bytes)
}
