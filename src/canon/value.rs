//! hist's JSON value: [`Value`], with exact [`Number`]s.
//!
//! The API is the part of `serde_json::Value`'s that hist uses (`as_object`, `get`, indexing
//! that gives `Null` for what is missing, `From` conversions, …), so code written against
//! one reads the same against the other. What differs is numbers: a [`Number`] holds its
//! canonical text (see the [module documentation](super)), whatever its size, so an integer
//! beyond 2^64 stays digit for digit, and two numbers are equal exactly when they are the
//! same number (`1.0` and `1` are). That also makes [`Value`] `Eq` and `Hash`.
//!
//! There is deliberately no `serde::Serialize`: a value goes out as its canonical text
//! ([`Display`](fmt::Display), [`super::to_canonical_string`]), which no serializer could
//! write without rounding big numbers. It does implement `serde::Deserialize`, so that
//! TOML and YAML readers can read into it, and converts from a `serde_json::Value` exactly.

use super::number::{NumberError, canonical_number_text, scan_literal};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The members of a JSON object, in Rust string order (by bytes), as `serde_json::Map` keeps
/// them without its `preserve_order` feature. Canonical text orders them differently (by
/// UTF-16 code units); the writers take care of that.
pub type Map = BTreeMap<String, Value>;

/// A JSON value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, held as its canonical text.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object.
    Object(Map),
}

/// A JSON number, held as its canonical text: an integer literal digit for digit (`-0` as
/// `0`), anything else as the ECMAScript form of the nearest double (`1.50` → `1.5`,
/// `1E30` → `1e+30`). Every `Number` is finite: there is no way to make one that is not.
///
/// ```
/// use hist::canon::Number;
/// let n: Number = "12345678901234567890123".parse().unwrap();
/// assert_eq!(n.as_str(), "12345678901234567890123");
/// assert_eq!("1.0".parse::<Number>().unwrap(), Number::from(1));
/// assert!("1e400".parse::<Number>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number(Repr);

/// Texts up to this long are kept inline (most numbers: no allocation).
const INLINE: usize = 22;

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// `len` bytes of ASCII text.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Longer text.
    Heap(Box<str>),
}

impl Number {
    /// A number from its canonical text (the caller made it canonical).
    pub(crate) fn from_canonical(text: &str) -> Self {
        let b = text.as_bytes();
        match u8::try_from(b.len()) {
            Ok(len) if b.len() <= INLINE => {
                let mut bytes = [0u8; INLINE];
                bytes[..b.len()].copy_from_slice(b);
                Self(Repr::Inline { len, bytes })
            }
            _ => Self(Repr::Heap(text.into())),
        }
    }

    /// The canonical number for a double (ECMAScript form: `1e+30`, `0.002`, `-0` → `0`),
    /// or `None` when it is not finite.
    pub fn from_f64(f: f64) -> Option<Self> {
        f.is_finite()
            .then(|| Self::from_canonical(ryu_js::Buffer::new().format_finite(f)))
    }

    /// The canonical text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only ever built from a `&str`.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(bytes.get(..usize::from(*len)).unwrap_or_default())
                    .unwrap_or_default()
            }
            Repr::Heap(text) => text,
        }
    }

    /// True when the text is an integer (no `.` and no exponent).
    fn is_integer(&self) -> bool {
        !self.as_str().bytes().any(|b| matches!(b, b'.' | b'e'))
    }

    /// The number as an `i64`, when it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_str().parse().ok()
    }

    /// The number as a `u64`, when it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_str().parse().ok()
    }

    /// The number as an `i128`, when it is an integer in range.
    pub fn as_i128(&self) -> Option<i128> {
        self.as_str().parse().ok()
    }

    /// The nearest double; `None` only for an integer beyond the doubles' range (over 308
    /// digits).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_str().parse().ok().filter(|f: &f64| f.is_finite())
    }

    /// True when [`Number::as_i64`] gives a value.
    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// True when [`Number::as_u64`] gives a value.
    pub fn is_u64(&self) -> bool {
        self.as_u64().is_some()
    }

    /// True when the number is not an integer literal (its text has a fraction or an
    /// exponent), as `serde_json::Number::is_f64` says.
    pub fn is_f64(&self) -> bool {
        !self.is_integer()
    }
}

impl FromStr for Number {
    type Err = NumberError;

    /// Reads a JSON number literal (the whole text, no whitespace) into its canonical
    /// form; refuses other text and numbers that are not finite as a double.
    fn from_str(text: &str) -> Result<Self, NumberError> {
        if scan_literal(text.as_bytes(), 0) != Ok(text.len()) {
            return Err(NumberError::NotANumber(text.to_owned()));
        }
        let mut buf = ryu_js::Buffer::new();
        canonical_number_text(text, &mut buf)
            .map(Self::from_canonical)
            .ok_or_else(|| NumberError::OutOfRange(text.to_owned()))
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({})", self.as_str())
    }
}

macro_rules! number_from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Self {
                Self::from_canonical(itoa(n).as_str())
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Self {
                Value::Number(n.into())
            }
        }
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                matches!(self, Value::Number(n) if n.as_str() == itoa(*other).as_str())
            }
        }
    )*};
}

/// An integer's decimal text (which is its canonical text).
fn itoa(n: impl fmt::Display) -> String {
    n.to_string()
}

number_from_integer!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);

impl Value {
    /// The value's JSON type, for messages: `null`, `a boolean`, `a number`, `a string`,
    /// `an array`, `an object`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// True for `true` and `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }
    /// True for a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }
    /// True for a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
    /// True for an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }
    /// True for an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
    /// True for a number that fits an `i64`.
    pub fn is_i64(&self) -> bool {
        self.as_number().is_some_and(Number::is_i64)
    }
    /// True for a number that fits a `u64`.
    pub fn is_u64(&self) -> bool {
        self.as_number().is_some_and(Number::is_u64)
    }
    /// True for a number that is not an integer literal.
    pub fn is_f64(&self) -> bool {
        self.as_number().is_some_and(Number::is_f64)
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    /// The number as an `i64`, if this is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }
    /// The number as a `u64`, if this is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }
    /// The number as the nearest double, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
    /// The elements, if this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }
    /// The members, if this is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }
    /// The member `index` of an object (`&str`) or the element `index` of an array
    /// (`usize`); `None` when there is none.
    pub fn get<I: ValueIndex>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }
    /// [`Value::get`], mutably.
    pub fn get_mut<I: ValueIndex>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }
    /// Takes the value out, leaving `null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
    /// The value a JSON Pointer (RFC 6901: `/a/0/b~1c`) names, if any. `""` is the value
    /// itself; array elements are named by their index in decimal, without leading zeros.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Value::Object(members) => members.get(token.as_ref()),
            Value::Array(items) => items.get(array_index(&token)?),
            _ => None,
        })
    }
    /// [`Value::pointer`], mutably.
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Value::Object(members) => members.get_mut(token.as_ref()),
            Value::Array(items) => items.get_mut(array_index(&token)?),
            _ => None,
        })
    }
}

/// The reference tokens of a JSON Pointer, unescaped (`~1` is `/`, `~0` is `~`), or `None`
/// when it is not one (it must be empty or start with `/`; `~` must be followed by 0 or 1).
pub(crate) fn pointer_tokens(
    pointer: &str,
) -> Option<impl Iterator<Item = Cow<'_, str>> + use<'_>> {
    let rest = match pointer {
        "" => None,
        p => Some(p.strip_prefix('/')?),
    };
    let valid = rest.is_none_or(|r| {
        let mut tildes = r.match_indices('~');
        tildes.all(|(i, _)| matches!(r.as_bytes().get(i + 1), Some(b'0' | b'1')))
    });
    valid.then(|| {
        rest.into_iter().flat_map(|r| r.split('/')).map(|t| {
            if t.contains('~') {
                Cow::Owned(t.replace("~1", "/").replace("~0", "~"))
            } else {
                Cow::Borrowed(t)
            }
        })
    })
}

/// An array index as a JSON Pointer writes it: decimal digits, no leading zero (but `0`).
pub(crate) fn array_index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    if !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

/// What [`Value::get`] and indexing take: `&str` and `String` for object members, `usize`
/// for array elements.
pub trait ValueIndex: private::Sealed {
    /// The value this index names inside `v`, if any.
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    /// [`ValueIndex::index_into`], mutably.
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// The place this index names inside `v`, made when it is a missing member of an
    /// object (or of `null`, which becomes an empty object first).
    ///
    /// # Panics
    ///
    /// When `v` cannot hold such a place: a member of something other than an object or
    /// `null`, an element of something other than an array, or past an array's end.
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

mod private {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl ValueIndex for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut()?.get_mut(*self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        let found = v.type_name();
        match v {
            Value::Array(items) => {
                let len = items.len();
                items
                    .get_mut(*self)
                    .unwrap_or_else(|| panic!("cannot index an array of length {len} with {self}"))
            }
            _ => panic!("cannot index {found} with the number {self}"),
        }
    }
}

impl ValueIndex for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut()?.get_mut(self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        let found = v.type_name();
        match v {
            Value::Object(members) => members.entry(self.to_owned()).or_insert(Value::Null),
            _ => panic!("cannot index {found} with the string {self:?}"),
        }
    }
}

impl ValueIndex for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl<T: ValueIndex + ?Sized> ValueIndex for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

static NULL: Value = Value::Null;

impl<I: ValueIndex> std::ops::Index<I> for Value {
    type Output = Value;

    /// The member or element `index` names, or `null` when there is none (never panics).
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

impl<I: ValueIndex> std::ops::IndexMut<I> for Value {
    /// The member or element `index` names; a missing member of an object (or of `null`,
    /// which becomes an object) is added as `null` first.
    ///
    /// # Panics
    ///
    /// As [`ValueIndex::index_or_insert`]: on a value that cannot hold the place.
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

impl fmt::Display for Value {
    /// The canonical text; with `{:#}`, the pretty form ([`super::to_pretty_string`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&super::to_pretty_string(self))
        } else {
            f.write_str(&super::to_canonical_string(self))
        }
    }
}

impl FromStr for Value {
    type Err = super::ParseError;

    /// [`super::parse_str`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        super::parse_str(text)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Value::Number(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    /// The number, or `null` for a double that is not finite (as `serde_json` does).
    fn from(f: f64) -> Self {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    /// The number of the double equal to `f`, or `null` when it is not finite.
    fn from(f: f32) -> Self {
        Value::from(f64::from(f))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::String(s.clone())
    }
}

impl From<Cow<'_, str>> for Value {
    fn from(s: Cow<'_, str>) -> Self {
        Value::String(s.into_owned())
    }
}

impl From<Map> for Value {
    fn from(members: Map) -> Self {
        Value::Object(members)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Self {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(items: &[T]) -> Self {
        Value::Array(items.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// The value, or `null` for `None`.
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<()> for Value {
    fn from((): ()) -> Self {
        Value::Null
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    /// An array.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Value {
    /// An object (a name given twice keeps its last value).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(members: I) -> Self {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        Number::from_f64(*other).is_some_and(|n| self.as_number() == Some(&n))
    }
}

impl From<serde_json::Value> for Value {
    /// The same value. Exact for whatever `serde_json` holds: its numbers are converted
    /// from their text, which is their exact digits with `arbitrary_precision` and the
    /// shortest text that reads back as the same double without it.
    fn from(v: serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => n
                .to_string()
                .parse::<Number>()
                .ok()
                .or_else(|| n.as_f64().and_then(Number::from_f64))
                .map_or(Value::Null, Value::Number),
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(items) => {
                Value::Array(items.into_iter().map(Value::from).collect())
            }
            serde_json::Value::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    /// Any self-describing format's value: numbers from `u64`, `i64`, `u128`, `i128` (exact)
    /// and `f64` (its canonical form; a double that is not finite is an error), maps with
    /// string keys (a key given twice is an error, as in [`super::parse`]). A number is as
    /// exact as the format hands it over: `serde_json` gives a double for an integer beyond
    /// 64 bits, so read JSON text with [`super::parse`], which keeps every digit.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("number {v} is not finite")))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            match members.entry(name) {
                std::collections::btree_map::Entry::Occupied(o) => {
                    return Err(serde::de::Error::custom(format!(
                        "duplicate member name {}",
                        super::quoted(o.key())
                    )));
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(map.next_value()?);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::parse_str;

    #[test]
    fn reads_like_serde_json_value() {
        let mut v = parse_str(r#"{"a":[1,{"b":"x"}],"n":null,"t":true,"f":-2.5}"#).unwrap();
        assert_eq!(v["a"][1]["b"], "x");
        assert_eq!(v["missing"]["deeper"][3], Value::Null);
        assert_eq!(v.get("a").and_then(|a| a.get(0)), Some(&Value::from(1)));
        assert_eq!(v.pointer("/a/1/b"), Some(&Value::from("x")));
        assert_eq!(v.pointer("/a/01"), None);
        assert_eq!(v.pointer("a"), None);
        assert_eq!(v.pointer(""), Some(&v.clone()));
        assert!(v["n"].is_null() && v["t"] == true && v["f"] == -2.5);
        assert_eq!(v["f"].as_f64(), Some(-2.5));
        assert_eq!(v["f"].as_i64(), None);
        v["new"]["inner"] = Value::from(3);
        *v.pointer_mut("/a/0").unwrap() = "y".into();
        assert_eq!(
            v.to_string(),
            r#"{"a":["y",{"b":"x"}],"f":-2.5,"n":null,"new":{"inner":3},"t":true}"#
        );
        assert_eq!(v.get_mut("t").map(Value::take), Some(Value::Bool(true)));
        assert_eq!(v["t"], Value::Null);
        assert_eq!(format!("{:#}", parse_str("[1]").unwrap()), "[\n  1\n]");
        assert_eq!("[1, 2]".parse::<Value>().unwrap(), Value::from(vec![1, 2]));
        assert_eq!(
            [("b", 1), ("a", 2)]
                .into_iter()
                .collect::<Value>()
                .to_string(),
            r#"{"a":2,"b":1}"#
        );
    }

    #[test]
    fn converts_from_serde_json_exactly() {
        let v = serde_json::json!({"u": u64::MAX, "i": i64::MIN, "f": 1e30, "g": 0.1, "s": "é"});
        assert_eq!(
            Value::from(v).to_string(),
            r#"{"f":1e+30,"g":0.1,"i":-9223372036854775808,"s":"é","u":18446744073709551615}"#
        );
    }

    #[test]
    fn deserializes_from_self_describing_formats() {
        let v: Value = serde_json::from_str(r#"{"a":[1,-2,1.50,"x",null,true]}"#).unwrap();
        assert_eq!(v, parse_str(r#"{"a":[1,-2,1.5,"x",null,true]}"#).unwrap());
        let e = serde_json::from_str::<Value>(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(
            e.to_string().starts_with("duplicate member name \"a\""),
            "{e}"
        );
        let t: Value = toml::from_str("big = 9007199254740993\nf = 0.5").unwrap();
        assert_eq!(t.to_string(), r#"{"big":9007199254740993,"f":0.5}"#);
    }

    #[test]
    fn small_and_large_numbers_hold_their_text() {
        for text in [
            "0",
            "-1",
            "1e+30",
            "1234567890123456789012",
            "12345678901234567890123",
        ] {
            let n: Number = text.parse().unwrap();
            assert_eq!(n.as_str(), text);
            assert_eq!(n, Number::from_canonical(text));
        }
        assert_eq!(format!("{:?}", Number::from(7)), "Number(7)");
    }
}
