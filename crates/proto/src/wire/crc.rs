//! CRC32C (Castagnoli). Headers are short, where the general-purpose crate's
//! set-up dominates; short inputs take a direct SSE4.2 loop when the CPU has
//! it, everything else goes to the `crc32c` crate.

/// CRC32C of `data` continuing from `crc` (0 to start).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if data.len() <= 256 && std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU supports SSE4.2, checked just above.
            return unsafe { short_sse42(crc, data) };
        }
    }
    crc32c::crc32c_append(crc, data)
}

/// CRC32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c_append(0, data)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn short_sse42(crc: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = !crc as u64;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        c = _mm_crc32_u64(c, u64::from_le_bytes(x));
    }
    let mut c = c as u32;
    for &b in words.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_crate() {
        let data: Vec<u8> = (0..600u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in [0, 1, 7, 8, 9, 44, 63, 255, 256, 257, 600] {
            assert_eq!(crc32c(&data[..n]), crc32c::crc32c(&data[..n]), "len {n}");
            let part = crc32c(&data[..n / 2]);
            assert_eq!(
                crc32c_append(part, &data[n / 2..n]),
                crc32c::crc32c(&data[..n])
            );
        }
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
    }
}
