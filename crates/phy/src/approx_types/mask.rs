//! Protection masks: the top `level` bits of every scalar word.

use super::{ApproxTypeError, DType};

/// Checks a level against the word width of `dtype`.
pub(super) fn check_level(dtype: DType, level: u32) -> Result<u32, ApproxTypeError> {
    if level <= dtype.word_bits() {
        Ok(level)
    } else {
        Err(ApproxTypeError::Level {
            level,
            bits: dtype.word_bits(),
            dtype: dtype.name(),
        })
    }
}

/// The protected bits of one scalar word of `dtype` as an integer (bit
/// `word_bits - 1` is the most significant): the top `level` bits set.
pub fn word_mask(dtype: DType, level: u32) -> Result<u64, ApproxTypeError> {
    let level = check_level(dtype, level)?;
    let bits = dtype.word_bits();
    if level == 0 {
        return Ok(0);
    }
    let ones = u64::MAX >> (64 - level);
    Ok(ones << (bits - level))
}

/// The protection mask of one element in memory (native byte order; both
/// words of a complex element).
pub fn element_mask(dtype: DType, level: u32) -> Result<Vec<u8>, ApproxTypeError> {
    let w = word_mask(dtype, level)?;
    let wb = dtype.word_bytes();
    let word: Vec<u8> = if cfg!(target_endian = "little") {
        w.to_le_bytes()[..wb].to_vec()
    } else {
        w.to_be_bytes()[8 - wb..].to_vec()
    };
    Ok(word.repeat(dtype.words_per_element()))
}

/// The fraction `t_p` of a message's bits that a level protects (seed 004
/// §5.1.2), `level / word_bits`.
pub fn protected_fraction(dtype: DType, level: u32) -> Result<f64, ApproxTypeError> {
    let level = check_level(dtype, level)?;
    Ok(f64::from(level) / f64::from(dtype.word_bits()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_cover_sign_and_exponent() {
        // f64 level 12: sign + exponent of IEEE binary64
        let m = word_mask(DType::F64, 12).unwrap();
        assert_eq!(m, 0xfff0_0000_0000_0000);
        assert_eq!(1.5f64.to_bits() & m, 1.0f64.to_bits()); // sign + exponent only
        assert_eq!(word_mask(DType::F16, 6).unwrap(), 0xfc00);
        assert_eq!(word_mask(DType::BF16, 16).unwrap(), 0xffff);
        assert_eq!(word_mask(DType::U8, 0).unwrap(), 0);
        let e = element_mask(DType::Complex64, 9).unwrap();
        assert_eq!(e.len(), 8);
        let re = u32::from_ne_bytes(e[..4].try_into().unwrap());
        assert_eq!(re, 0xff80_0000);
        assert_eq!(&e[..4], &e[4..]);
        assert!(matches!(
            word_mask(DType::F32, 33),
            Err(ApproxTypeError::Level { .. })
        ));
        assert_eq!(protected_fraction(DType::Complex128, 16).unwrap(), 0.25);
    }
}
