//! Property tests of the byte-plane layout (seed 004 bit protection): the
//! layout is a bijection, and bits flipped outside the precise prefix never
//! reach a protected bit of any element.

use approxnet_phy::approx_types::{word_mask, DType, PlaneLayout};
use proptest::prelude::*;

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

/// A data type, a level valid for it, and a buffer of whole elements.
fn case() -> impl Strategy<Value = (DType, u32, Vec<u8>)> {
    dtype().prop_flat_map(|d| {
        (
            Just(d),
            0..=d.word_bits(),
            (0usize..40)
                .prop_flat_map(move |n| prop::collection::vec(any::<u8>(), n * d.element_bytes())),
        )
    })
}

/// The protected bits of word `i` of `buf`.
fn protected(d: DType, level: u32, buf: &[u8], i: usize) -> u64 {
    let w = d.word_bytes();
    let mut word = [0u8; 8];
    if cfg!(target_endian = "little") {
        word[..w].copy_from_slice(&buf[i * w..(i + 1) * w]);
        u64::from_le_bytes(word) & word_mask(d, level).unwrap()
    } else {
        word[8 - w..].copy_from_slice(&buf[i * w..(i + 1) * w]);
        u64::from_be_bytes(word) & word_mask(d, level).unwrap()
    }
}

proptest! {
    #[test]
    fn layout_then_inverse_is_identity((d, level, src) in case()) {
        let l = PlaneLayout::new(d, level).unwrap();
        let mut planes = vec![0u8; src.len()];
        let prefix = l.to_planes(&src, &mut planes).unwrap();
        prop_assert!(prefix <= src.len());
        let mut back = vec![0u8; src.len()];
        l.from_planes(&planes, &mut back).unwrap();
        prop_assert_eq!(back, src);
    }

    #[test]
    fn flips_past_the_protected_bits_spare_every_protected_bit(
        (d, level, src) in case(),
        flips in prop::collection::vec(any::<u64>(), 0..64),
        byte_aligned in any::<bool>(),
    ) {
        let l = PlaneLayout::new(d, level).unwrap();
        let mut planes = vec![0u8; src.len()];
        let prefix = l.to_planes(&src, &mut planes).unwrap();
        let words = l.words(src.len()).unwrap();
        // the unprotected region: past the byte prefix, or (stronger) past
        // the exact protected bit count
        let first = if byte_aligned { prefix as u64 * 8 } else { words as u64 * u64::from(level) };
        let total = src.len() as u64 * 8;
        if first < total {
            for f in flips {
                let bit = first + f % (total - first);
                planes[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
            }
        }
        let mut back = vec![0u8; src.len()];
        l.from_planes(&planes, &mut back).unwrap();
        for i in 0..words {
            prop_assert_eq!(protected(d, level, &back, i), protected(d, level, &src, i));
        }
    }

    #[test]
    fn flips_inside_the_prefix_reach_protected_bits((d, level, src) in case(), f in any::<u64>()) {
        // the converse: the prefix holds protected bits only (a flip in its
        // first words * level bits always changes a protected bit)
        let l = PlaneLayout::new(d, level).unwrap();
        let words = l.words(src.len()).unwrap() as u64;
        let protected_bits = words * u64::from(level);
        prop_assume!(protected_bits > 0);
        let mut planes = vec![0u8; src.len()];
        l.to_planes(&src, &mut planes).unwrap();
        let bit = f % protected_bits;
        planes[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
        let mut back = vec![0u8; src.len()];
        l.from_planes(&planes, &mut back).unwrap();
        let changed = (0..words as usize)
            .filter(|&i| protected(d, level, &back, i) != protected(d, level, &src, i))
            .count();
        prop_assert_eq!(changed, 1);
    }
}
