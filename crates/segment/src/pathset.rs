//! The set of paths a segment touches, kept beside it in the store's index so that a read
//! of one path skips the segments that never touch it without decompressing them.
//!
//! Encoded as the sorted path numbers' differences, as varints: a key's paths are
//! numbered as they first appear, so a segment's set is mostly runs of consecutive
//! numbers, a byte each.

use crate::{Error, error, varint};

/// The encoding of `ids` (sorted, each once).
pub fn encode(ids: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ids.len() + 4);
    let mut prev = 0u64;
    for &id in ids {
        varint(id.wrapping_sub(prev), &mut out);
        prev = id;
    }
    out
}

/// The path numbers of an encoded set, sorted.
pub fn decode(bytes: &[u8]) -> Result<Vec<u64>, Error> {
    let mut r = crate::Reader { bytes, at: 0 };
    let mut out = Vec::new();
    let mut id = 0u64;
    while r.at < bytes.len() {
        id = id.wrapping_add(r.varint()?);
        out.push(id);
    }
    if out.windows(2).any(|w| w[0] >= w[1]) {
        return Err(error("a path set is not sorted"));
    }
    Ok(out)
}

/// True when the encoded set holds any of `wanted` (sorted).
pub fn intersects(bytes: &[u8], wanted: &[u64]) -> Result<bool, Error> {
    let have = decode(bytes)?;
    let (mut i, mut j) = (0, 0);
    while i < have.len() && j < wanted.len() {
        match have[i].cmp(&wanted[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return Ok(true),
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_round_trip_and_intersect() {
        let ids = vec![1, 2, 3, 4, 90, 1 << 40];
        let bytes = encode(&ids);
        assert_eq!(bytes.len(), 4 + 1 + 6);
        assert_eq!(decode(&bytes).unwrap(), ids);
        assert!(intersects(&bytes, &[5, 90]).unwrap());
        assert!(!intersects(&bytes, &[5, 91]).unwrap());
        assert!(decode(&[0x80]).is_err());
        assert!(decode(&[1, 0]).is_err());
    }
}
