//! A buffer of approximate elements through an error-prone channel: lay it
//! out, flip bits (the unprotected suffix at the link's BER, the precise
//! prefix at the reliable mapping's BER), lay it back.

use super::{ApproxTypeError, PlaneLayout};
use crate::inject::BitErrors;

/// What a transmission flipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransmitStats {
    /// Bytes sent precisely: the precise prefixes of all the messages.
    pub prefix_len: usize,
    /// Bits flipped in the precise prefix.
    pub protected_flips: u64,
    /// Bits flipped in the approximate suffix.
    pub unprotected_flips: u64,
}

/// Separates the prefix's random stream from the suffix's.
const PREFIX_STREAM: u64 = 0x5eed_0f00_d0f0_0d01;

/// A buffer longer than this travels as several messages of at most this
/// many bytes, each laid out with its own precise prefix (so the scratch
/// buffer stays in cache; a multiple of every element size).
pub const MESSAGE_BYTES: usize = 256 * 1024;

fn check_ber(field: &'static str, v: f64) -> Result<f64, ApproxTypeError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(ApproxTypeError::Ber { field, value: v })
    }
}

/// Sends `data` (elements of `layout`'s type, in place) through the
/// channel: bits of the precise prefix flip with probability
/// `protected_ber` (0 for a perfectly reliable mapping; seed 004's M/4
/// mapping gives ~1.5e-16), the others with probability `ber`, each from
/// its own injector seeded by `seed`. A buffer travels as messages of at
/// most [`MESSAGE_BYTES`], each laid out with its protected bits first.
/// Levels 0 and full need no layout and flip in place without a copy.
pub fn transmit(
    layout: &PlaneLayout,
    data: &mut [u8],
    ber: f64,
    protected_ber: f64,
    seed: u64,
) -> Result<TransmitStats, ApproxTypeError> {
    let ber = check_ber("ber", ber)?;
    let protected_ber = check_ber("protected_ber", protected_ber)?;
    layout.words(data.len())?;
    let mut prefix_err =
        BitErrors::new(protected_ber, seed ^ PREFIX_STREAM).ok_or(ApproxTypeError::Ber {
            field: "protected_ber",
            value: protected_ber,
        })?;
    let mut suffix_err = BitErrors::new(ber, seed).ok_or(ApproxTypeError::Ber {
        field: "ber",
        value: ber,
    })?;
    let mut stats = TransmitStats::default();
    let mut flip = |buf: &mut [u8], prefix_len: usize| {
        let (p, s) = buf.split_at_mut(prefix_len);
        stats.prefix_len += prefix_len;
        stats.protected_flips += prefix_err.apply(p, 0);
        stats.unprotected_flips += suffix_err.apply(s, 0);
    };
    if layout.is_identity() {
        let prefix_len = layout.prefix_len(data.len())?;
        flip(data, prefix_len);
        return Ok(stats);
    }
    let mut planes = vec![0u8; data.len().min(MESSAGE_BYTES)];
    for message in data.chunks_mut(MESSAGE_BYTES) {
        let planes = &mut planes[..message.len()];
        let prefix_len = layout.to_planes(message, planes)?;
        flip(planes, prefix_len);
        layout.from_planes(planes, message)?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approx_types::{word_mask, DType};

    #[test]
    fn only_unprotected_bits_change_and_rate_is_right() {
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|i| (i as f64).sin() * 1e3).collect();
        let mut buf: Vec<u8> = xs.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let l = PlaneLayout::new(DType::F64, 12).unwrap();
        let s = transmit(&l, &mut buf, 1e-3, 0.0, 9).unwrap();
        assert_eq!(s.protected_flips, 0);
        let unprotected_bits = (n * 52) as f64;
        let expect = unprotected_bits * 1e-3;
        let got = s.unprotected_flips as f64;
        assert!(
            (got - expect).abs() < 5.0 * expect.sqrt(),
            "{got} vs {expect}"
        );
        let m = word_mask(DType::F64, 12).unwrap();
        let mut changed = 0u64;
        for (i, x) in xs.iter().enumerate() {
            let y = f64::from_ne_bytes(buf[8 * i..8 * i + 8].try_into().unwrap());
            assert_eq!(y.to_bits() & m, x.to_bits() & m);
            changed += u64::from((y.to_bits() ^ x.to_bits()).count_ones());
        }
        assert_eq!(changed, s.unprotected_flips);
    }

    #[test]
    fn seeded_and_checked() {
        let l = PlaneLayout::new(DType::F32, 9).unwrap();
        let mut a = vec![7u8; 4000];
        let mut b = a.clone();
        transmit(&l, &mut a, 1e-2, 0.0, 3).unwrap();
        transmit(&l, &mut b, 1e-2, 0.0, 3).unwrap();
        assert_eq!(a, b);
        assert!(transmit(&l, &mut a, 1.5, 0.0, 3).is_err());
        assert!(transmit(&l, &mut a, 0.1, f64::NAN, 3).is_err());
        assert!(transmit(&l, &mut a[..3], 0.1, 0.0, 3).is_err());
        // full protection: the prefix is the whole buffer, in place
        let full = PlaneLayout::new(DType::F32, 32).unwrap();
        let s = transmit(&full, &mut a, 0.5, 0.0, 3).unwrap();
        assert_eq!((s.prefix_len, s.unprotected_flips), (4000, 0));
    }
}
