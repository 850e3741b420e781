//! How a change's values are stored: canonical JSON text in the row, or, when larger than
//! [`LARGE_VALUE`], an object named in the row.

use super::objects::Objects;
use super::{LARGE_VALUE, Store, corrupt};
use crate::canon::ObjectId;
use crate::canon::Value;
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::sync::Arc;

/// How many delta bases a store keeps decompressed, and how many bytes at most.
const CACHED_BASES: usize = 8;
const CACHED_BASES_TOTAL: usize = 4 << 20;

/// A stored value, not loaded yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// No value (`old` of an add, `new` of a remove).
    Absent,
    /// Canonical JSON text, inline.
    Text(String),
    /// A large value: an object holding its canonical text.
    Object(ObjectId),
}

impl Stored {
    /// The value of a pair of columns: `text` (inline) or `obj` (an object id).
    pub(crate) fn from_columns(text: Option<String>, obj: Option<String>) -> Result<Self> {
        Ok(match (text, obj) {
            (_, Some(hex)) => Self::Object(
                ObjectId::from_hex(&hex)
                    .ok_or_else(|| corrupt(format!("bad object id {hex:?}")))?,
            ),
            (Some(text), None) => Self::Text(text),
            (None, None) => Self::Absent,
        })
    }
}

/// Parses JSON text written by hist itself.
pub(crate) fn parse_stored(text: &str) -> Result<Value> {
    crate::canon::parse_str(text)
        .map_err(|e| Error::Corrupt(format!("stored JSON does not parse: {e}")))
}

impl Store {
    /// A stored value, parsed.
    pub(crate) fn value(&self, stored: Stored) -> Result<Option<Value>> {
        match stored {
            Stored::Absent => Ok(None),
            Stored::Text(text) => parse_stored(&text).map(Some),
            Stored::Object(id) => self.load_object(&id).map(Some),
        }
    }

    /// A stored value's canonical text (an object's text is not checked to be JSON).
    pub(crate) fn value_text(&self, stored: Stored) -> Result<Option<String>> {
        match stored {
            Stored::Absent => Ok(None),
            Stored::Text(text) => Ok(Some(text)),
            Stored::Object(id) => self.object_text(&id).map(Some),
        }
    }

    /// Reads and parses a stored object.
    pub(crate) fn load_object(&self, id: &ObjectId) -> Result<Value> {
        let bytes = self.object_bytes(id)?;
        crate::canon::parse(&bytes)
            .map_err(|e| Error::Corrupt(format!("object {id} does not parse: {e}")))
    }

    /// A stored object's bytes as text (not checked to be JSON).
    pub(crate) fn object_text(&self, id: &ObjectId) -> Result<String> {
        String::from_utf8(self.object_bytes(id)?)
            .map_err(|_| Error::Corrupt(format!("object {id} is not UTF-8 text")))
    }

    /// A stored object's bytes (decompressed, not checked against the name).
    ///
    /// A delta's base is kept once decompressed, as git keeps delta bases: a key's
    /// checkpoints are deltas against a few bases, which a long-lived handle would
    /// otherwise read and decompress for every checkpoint it reads.
    pub(crate) fn object_bytes(&self, id: &ObjectId) -> Result<Vec<u8>> {
        let path = self.objects.path_of(id);
        let file = std::fs::read(&path).map_err(Error::io(&path))?;
        let Some((base, frame)) = hist_segment::objects::delta_base(&file) else {
            return hist_segment::objects::decompress(&file).map_err(Error::io(&path));
        };
        let base = self.delta_base(&ObjectId(*base))?;
        hist_segment::objects::decompress_with(frame, &base).map_err(Error::io(&path))
    }

    /// The decompressed base `id` of a delta object, from the cache when it is there.
    pub(super) fn delta_base(&self, id: &ObjectId) -> Result<Arc<[u8]>> {
        if let Some(bytes) = self.caches.borrow_mut().bases.get(id) {
            return Ok(bytes);
        }
        let bytes: Arc<[u8]> = self
            .objects
            .get(id)
            .map_err(Error::io(self.objects.path_of(id)))?
            .into();
        self.caches.borrow_mut().bases.put(
            *id,
            bytes.clone(),
            bytes.len(),
            (CACHED_BASES, CACHED_BASES_TOTAL),
        );
        Ok(bytes)
    }

    /// Stores bytes as an object; returns their id.
    pub(crate) fn put_object(&self, bytes: &[u8]) -> Result<ObjectId> {
        self.objects
            .put(bytes)
            .map_err(Error::io(self.objects.dir()))
    }

    /// Stores a segment's bytes as a frame per block ([`hist_segment::compress`]).
    pub(crate) fn put_segment(&self, bytes: &[u8], level: i32) -> Result<ObjectId> {
        let id = ObjectId::of(bytes);
        let file = hist_segment::compress(bytes, level).map_err(super::corrupt)?;
        self.objects
            .put_compressed(&id, &file)
            .map_err(Error::io(self.objects.dir()))?;
        Ok(id)
    }
}

/// A value as a row stores it: inline canonical text, or an object id for large values.
pub(crate) struct Encoded<'t> {
    pub(crate) text: Option<Cow<'t, str>>,
    pub(crate) obj: Option<String>,
    /// The length of the canonical text (0 when absent).
    pub(crate) len: usize,
}

/// Encodes a value already in canonical text, storing it as an object when it is large.
pub(crate) fn encode_text<'t>(
    objects: &Objects,
    text: Option<Cow<'t, str>>,
) -> Result<Encoded<'t>> {
    let Some(text) = text else {
        return Ok(Encoded {
            text: None,
            obj: None,
            len: 0,
        });
    };
    let len = text.len();
    if len > LARGE_VALUE {
        let id = objects
            .put(text.as_bytes())
            .map_err(Error::io(objects.dir()))?;
        Ok(Encoded {
            text: None,
            obj: Some(id.to_hex()),
            len,
        })
    } else {
        Ok(Encoded {
            text: Some(text),
            obj: None,
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delta's base is read from its file once; the delta itself every time.
    #[test]
    fn a_delta_base_is_read_once_per_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), true).unwrap();
        let base = br#"{"name":"base","items":[1,2,3,4,5,6,7,8,9]}"#.repeat(50);
        let text = br#"{"name":"next","items":[1,2,3,4,5,6,7,8,9]}"#.repeat(50);
        let base_id = store.put_object(&base).unwrap();
        let frame = zstd::bulk::Compressor::with_dictionary(3, &base)
            .and_then(|mut c| c.compress(&text))
            .unwrap();
        let id = ObjectId::of(&text);
        store.objects.put_delta(&id, &base_id, &frame).unwrap();
        assert_eq!(store.object_bytes(&id).unwrap(), text);

        std::fs::remove_file(store.objects.path_of(&base_id)).unwrap();
        assert_eq!(
            store.object_bytes(&id).unwrap(),
            text,
            "the base from the cache"
        );
        store.clear_caches();
        let err = store.object_bytes(&id).unwrap_err().to_string();
        assert!(err.contains(&base_id.to_hex()[2..]), "{err}");
    }
}
