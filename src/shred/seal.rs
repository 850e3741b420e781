//! Sealing one value with a subject's data key, and the walks that seal and unseal the
//! personal values of a document.
//!
//! A sealed value is the JSON string `"$hist:sealed:S:B"` where `S` is the subject id (32
//! hex digits) and `B` is base64 (standard alphabet, no padding) of `nonce ‖ ciphertext`:
//! XChaCha20-Poly1305 under a key derived from the subject's data key, over the canonical
//! JSON text of the value, with the subject id as associated data. The 24-byte nonce is the
//! keyed blake3 hash of that text under a second key derived from the data key (a
//! synthetic IV, as in SIV): equal values of one subject seal to equal bytes, so an
//! unchanged snapshot is still "unchanged" and an unchanged field produces no change, and
//! the "unchanged" hash is keyed per subject (never a plain hash of personal data).
//!
//! A string rather than an object, so that the structural diff treats a sealed value as one
//! scalar: a changed personal value is one `replace` at its path, never a change inside it.

use super::ShredError;
use super::keys::Secret;
use crate::canon;
use crate::canon::{Map, Value};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

/// The prefix of a sealed value.
pub const SEALED: &str = "$hist:sealed:";
/// The member of the marker that reads show in place of a forgotten value.
pub const FORGOTTEN: &str = "$hist:forgotten";

const NONCE_LEN: usize = 24;

/// What reads show in place of a value whose subject was forgotten:
/// `{"$hist:forgotten": true}`.
pub fn forgotten_marker() -> Value {
    let mut map = Map::new();
    map.insert(FORGOTTEN.to_owned(), Value::Bool(true));
    Value::Object(map)
}

const SID_LEN: usize = 32;

/// The parts of a sealed value: `(sealed bytes in base64, subject id)`.
pub(crate) fn as_sealed(value: &Value) -> Option<(&str, &str)> {
    let rest = value.as_str()?.strip_prefix(SEALED)?;
    let (sid, blob) = rest.split_at_checked(SID_LEN)?;
    let blob = blob.strip_prefix(':')?;
    sid.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some((blob, sid))
}

fn derived(data_key: &Secret) -> (Secret, Secret) {
    (
        blake3::derive_key("hist 2026-12 personal value key", data_key),
        blake3::derive_key("hist 2026-12 personal value nonce", data_key),
    )
}

/// `nonce ‖ ciphertext` of `plain` for subject `sid`, with the synthetic nonce.
fn encrypt(plain: &[u8], sid: &str, data_key: &Secret) -> Result<Vec<u8>, ShredError> {
    let (key, nonce_key) = derived(data_key);
    let siv = blake3::keyed_hash(&nonce_key, plain);
    let nonce = XNonce::from_slice(&siv.as_bytes()[..NONCE_LEN]);
    let sealed = XChaCha20Poly1305::new(&key.into())
        .encrypt(
            nonce,
            Payload {
                msg: plain,
                aad: sid.as_bytes(),
            },
        )
        .map_err(|_| ShredError::Crypto("a personal value could not be encrypted".into()))?;
    let mut blob = Vec::with_capacity(NONCE_LEN + sealed.len());
    blob.extend_from_slice(nonce);
    blob.extend_from_slice(&sealed);
    Ok(blob)
}

/// The plaintext of `nonce ‖ ciphertext`; `None` when it does not decrypt with this key.
fn decrypt(blob: &[u8], sid: &str, data_key: &Secret) -> Option<Vec<u8>> {
    if blob.len() < NONCE_LEN {
        return None;
    }
    let (nonce, sealed) = blob.split_at(NONCE_LEN);
    let (key, _) = derived(data_key);
    XChaCha20Poly1305::new(&key.into())
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: sid.as_bytes(),
            },
        )
        .ok()
}

/// Seals `value` for subject `sid`.
pub(crate) fn seal(value: &Value, sid: &str, data_key: &Secret) -> Result<Value, ShredError> {
    let plain = canon::to_canonical_string(value);
    let blob = encrypt(plain.as_bytes(), sid, data_key)?;
    Ok(Value::String(format!(
        "{SEALED}{sid}:{}",
        STANDARD_NO_PAD.encode(&blob)
    )))
}

/// Opens a sealed value; `None` when it does not decrypt with this key.
pub(crate) fn open(blob: &str, sid: &str, data_key: &Secret) -> Option<Value> {
    let bytes = STANDARD_NO_PAD.decode(blob).ok()?;
    canon::parse(&decrypt(&bytes, sid, data_key)?).ok()
}

/// The first bytes of sealed raw bytes (a tracked file's bytes): `RAW_MAGIC ‖ subject id ‖
/// nonce ‖ ciphertext`.
pub const RAW_MAGIC: &[u8] = b"\0hist:sealed:";

/// Seals raw bytes for subject `sid` (deterministic, as values are).
pub(crate) fn seal_bytes(
    plain: &[u8],
    sid: &str,
    data_key: &Secret,
) -> Result<Vec<u8>, ShredError> {
    let blob = encrypt(plain, sid, data_key)?;
    let mut out = Vec::with_capacity(RAW_MAGIC.len() + SID_LEN + blob.len());
    out.extend_from_slice(RAW_MAGIC);
    out.extend_from_slice(sid.as_bytes());
    out.extend_from_slice(&blob);
    Ok(out)
}

/// The parts of sealed raw bytes: `(subject id, nonce ‖ ciphertext)`.
pub(crate) fn as_sealed_bytes(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let rest = bytes.strip_prefix(RAW_MAGIC)?;
    let (sid, blob) = rest.split_at_checked(SID_LEN)?;
    let sid = std::str::from_utf8(sid).ok()?;
    sid.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some((sid, blob))
}

/// Opens sealed raw bytes; `None` when they do not decrypt with this key.
pub(crate) fn open_bytes(blob: &[u8], sid: &str, data_key: &Secret) -> Option<Vec<u8>> {
    decrypt(blob, sid, data_key)
}

/// Visits every sealed value in `value` (outermost first; sealed values are not entered).
pub(crate) fn for_each_sealed(
    value: &mut Value,
    f: &mut impl FnMut(&mut Value) -> Result<(), crate::Error>,
) -> Result<(), crate::Error> {
    if as_sealed(value).is_some() {
        return f(value);
    }
    match value {
        Value::Object(map) => map.values_mut().try_for_each(|v| for_each_sealed(v, f)),
        Value::Array(items) => items.iter_mut().try_for_each(|v| for_each_sealed(v, f)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_is_deterministic_per_key_and_opens() {
        let k1 = [7u8; 32];
        let k2 = [8u8; 32];
        let v = json!("alice@example.com");
        let s1 = "0123456789abcdef0123456789abcdef";
        let s2 = "1123456789abcdef0123456789abcdef";
        let a = seal(&v, s1, &k1).unwrap();
        assert_eq!(a, seal(&v, s1, &k1).unwrap());
        assert_ne!(a, seal(&v, s1, &k2).unwrap());
        assert_ne!(a, seal(&json!("bob@example.com"), s1, &k1).unwrap());
        let (blob, sid) = as_sealed(&a).unwrap();
        assert_eq!(sid, s1);
        assert_eq!(open(blob, sid, &k1), Some(v));
        assert_eq!(open(blob, sid, &k2), None);
        // The subject id is bound to the ciphertext.
        assert_eq!(open(blob, s2, &k1), None);
        assert!(!a.to_string().contains("alice"));
        let raw = seal_bytes(b"name: Alice\n", s1, &k1).unwrap();
        assert_eq!(raw, seal_bytes(b"name: Alice\n", s1, &k1).unwrap());
        let (sid, blob) = as_sealed_bytes(&raw).unwrap();
        assert_eq!(sid, s1);
        assert_eq!(open_bytes(blob, sid, &k1).unwrap(), b"name: Alice\n");
        assert_eq!(open_bytes(blob, sid, &k2), None);
        assert!(as_sealed_bytes(b"name: Alice\n").is_none());
    }

    #[test]
    fn marker_shape() {
        let sid = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            as_sealed(&json!(format!("$hist:sealed:{sid}:QUJD"))),
            Some(("QUJD", sid))
        );
        assert!(as_sealed(&json!(format!("$hist:sealed:{sid}QUJD"))).is_none());
        assert!(as_sealed(&json!("$hist:sealed:0123:QUJD")).is_none());
        assert!(as_sealed(&json!({"$hist:sealed": "x"})).is_none());
        assert_eq!(
            forgotten_marker().to_string(),
            r#"{"$hist:forgotten":true}"#
        );
    }
}
