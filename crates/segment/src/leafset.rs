//! The leaves of a checkpoint, kept beside it in the store's index: which of its document's
//! values (numbered in document order) stand at which path (by the path's number), so
//! that a read whose changes only replace those values patches the checkpoint's text
//! without a path parsed (hist's `leaves`).
//!
//! Encoded as pairs of varints: each value's number minus the previous one's (they
//! increase), then its path's number minus the previous one's, zigzagged. A document's
//! paths are mostly numbered in the order they first appeared, which is document order:
//! most pairs are two bytes, and the whole compresses to little.

use crate::{Error, error, unzigzag, varint, zigzag};

/// The encoding of `leaves`: (value number, path number) pairs, the value numbers strictly
/// increasing.
pub fn encode(leaves: &[(u32, u64)]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(leaves.len() * 2 + 4);
    let (mut ordinal, mut path) = (None::<u32>, 0u64);
    for &(n, p) in leaves {
        let step = match ordinal {
            None => n,
            Some(prev) if n > prev => n - prev,
            Some(_) => return Err(error("leaves are not in document order")),
        };
        varint(u64::from(step), &mut out);
        varint(zigzag(p.wrapping_sub(path) as i64), &mut out);
        (ordinal, path) = (Some(n), p);
    }
    Ok(out)
}

/// The pairs of an encoded set, in document order.
pub fn decode(bytes: &[u8]) -> Result<Vec<(u32, u64)>, Error> {
    let mut r = crate::Reader { bytes, at: 0 };
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let (mut ordinal, mut path) = (0u32, 0u64);
    while r.at < bytes.len() {
        let step = u32::try_from(r.varint()?).map_err(|_| error("a leaf's number is too large"))?;
        if step == 0 && !out.is_empty() {
            return Err(error("leaves are not in document order"));
        }
        ordinal = ordinal
            .checked_add(step)
            .ok_or_else(|| error("a leaf's number is too large"))?;
        path = path.wrapping_add(unzigzag(r.varint()?) as u64);
        out.push((ordinal, path));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_round_trip() {
        for leaves in [
            vec![],
            vec![(0, 7)],
            vec![(3, 10), (4, 11), (9, 2), (10, 3), (4000, 1 << 40)],
        ] {
            assert_eq!(decode(&encode(&leaves).unwrap()).unwrap(), leaves);
        }
        // Runs of consecutive values at consecutive paths take two bytes each.
        let run: Vec<(u32, u64)> = (5..105).map(|i| (i, u64::from(i) + 100)).collect();
        assert_eq!(encode(&run).unwrap().len(), 2 * 100 + 1);
    }

    #[test]
    fn leaves_out_of_order_are_refused() {
        assert!(encode(&[(4, 1), (4, 2)]).is_err());
        assert!(encode(&[(4, 1), (3, 2)]).is_err());
        // (1, 1) then a step of 0.
        assert!(decode(&[1, 2, 0, 2]).is_err());
        // It ends inside a varint.
        assert!(decode(&[1, 0x80]).is_err());
    }
}
