//! Serial-number arithmetic on u32 transmission sequence numbers (RFC 1982).
//!
//! Sequence numbers wrap around 2^32 (and start at a random value, so they
//! do so in ordinary use): `a` comes before `b` when `b` lies less than
//! 2^31 numbers after it. Numbers exactly 2^31 apart are in neither order.
//! Every comparison of sequence numbers goes through these functions.

/// Half the sequence space: no two numbers compared are this far apart.
pub(crate) const HALF: u32 = 1 << 31;

/// How many numbers `to` lies after `from`, when it is at or after it
/// (less than [`HALF`] ahead); `None` when `to` comes before `from`.
pub(crate) fn offset(from: u32, to: u32) -> Option<u32> {
    let d = to.wrapping_sub(from);
    (d < HALF).then_some(d)
}

/// Whether `a` comes strictly before `b`.
pub(crate) fn before(a: u32, b: u32) -> bool {
    offset(a, b).is_some_and(|d| d > 0)
}

/// The later of `a` and `b` (`a` when they are in neither order).
pub(crate) fn later(a: u32, b: u32) -> u32 {
    if before(a, b) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_across_the_wrap() {
        assert!(before(u32::MAX, 0) && !before(0, u32::MAX));
        assert!(before(u32::MAX - 5, 3) && !before(3, u32::MAX - 5));
        assert!(!before(7, 7));
        assert_eq!(offset(u32::MAX - 1, 2), Some(4));
        assert_eq!(offset(2, u32::MAX - 1), None);
        assert_eq!(offset(5, 5), Some(0));
        // 2^31 apart: neither order.
        assert!(!before(0, HALF) && !before(HALF, 0));
        assert_eq!(offset(0, HALF - 1), Some(HALF - 1));
        assert_eq!(later(u32::MAX, 1), 1);
        assert_eq!(later(1, u32::MAX), 1);
    }
}
