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

/// True when the encoded set holds any of `wanted` (sorted). Read in place, and to its end:
/// a set that is not sorted is an error here too, wherever the match is.
pub fn intersects(bytes: &[u8], wanted: &[u64]) -> Result<bool, Error> {
    let mut r = crate::Reader { bytes, at: 0 };
    let (mut id, mut found, mut j) = (0u64, false, 0);
    while r.at < bytes.len() {
        let first = r.at == 0;
        let step = r.varint()?;
        if step == 0 && !first {
            return Err(error("a path set is not sorted"));
        }
        id = id
            .checked_add(step)
            .ok_or_else(|| error("a path set is not sorted"))?;
        while j < wanted.len() && wanted[j] < id {
            j += 1;
        }
        found |= wanted.get(j) == Some(&id);
    }
    Ok(found)
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
        // Read in place: the same answers as on the decoded set, the same refusals.
        for wanted in [
            &[][..],
            &[0],
            &[1],
            &[4, 5],
            &[5, 89],
            &[1 << 40],
            &[2, 1 << 41],
        ] {
            let have = decode(&bytes).unwrap();
            let want = wanted.iter().any(|w| have.contains(w));
            assert_eq!(intersects(&bytes, wanted).unwrap(), want, "{wanted:?}");
        }
        assert!(intersects(&[0x80], &[1]).is_err());
        assert!(intersects(&[1, 0], &[1]).is_err());
        let mut wraps = Vec::new();
        varint(1 << 63, &mut wraps);
        varint(1 << 63, &mut wraps);
        assert!(decode(&wraps).is_err());
        assert!(intersects(&wraps, &[1 << 63]).is_err());
    }
}
