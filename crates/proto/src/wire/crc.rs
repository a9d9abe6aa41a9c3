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

/// CRC32C of a 44-byte block (a header without its CRC field): five
/// 8-byte steps and one 4-byte step, no length loop, tail or slice checks (the general
/// path cost ~150 instructions per header, four headers per DATA packet
/// and its ACK).
pub fn crc32c_44(data: &[u8; 44]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU supports SSE4.2, checked just above.
            return unsafe { sse42_44(data) };
        }
    }
    crc32c::crc32c(data)
}

/// CRC32C of a 44-byte block followed by `tail` (a header, then its
/// precise prefix or control body): one feature check and one call where
/// `crc32c_44` then `crc32c_append` made two (every ACK, emitted and
/// verified).
pub fn crc32c_44_then(data: &[u8; 44], tail: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if tail.len() <= 256 && std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU supports SSE4.2, checked just above.
            return unsafe { short_sse42(sse42_44(data), tail) };
        }
    }
    crc32c_append(crc32c_44(data), tail)
}

/// [`crc32c_44_then`] of the block with its first eight bytes (read
/// little-endian) ANDed with `keep0`, computed from the block where it lies:
/// a header's checksum masks its CE bit, and a copy of the 44 bytes to
/// mask it in cost ~12 instructions per checksum (four per DATA packet and
/// its ACK).
#[inline]
pub fn crc32c_44_masked_then(data: &[u8; 44], keep0: u64, tail: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if tail.len() <= 256 && std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU supports SSE4.2, checked just above.
            return unsafe { sse42_44_masked_then(data, keep0, tail) };
        }
    }
    let mut head = *data;
    let first = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8])) & keep0;
    head[..8].copy_from_slice(&first.to_le_bytes());
    crc32c_44_then(&head, tail)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn sse42_44(data: &[u8; 44]) -> u32 {
    sse42_44_masked(data, u64::MAX)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
#[inline]
unsafe fn sse42_44_masked(data: &[u8; 44], keep0: u64) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64};
    let word = |i: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&data[8 * i..8 * i + 8]);
        u64::from_le_bytes(x)
    };
    let mut c = u32::MAX as u64;
    c = _mm_crc32_u64(c, word(0) & keep0);
    c = _mm_crc32_u64(c, word(1));
    c = _mm_crc32_u64(c, word(2));
    c = _mm_crc32_u64(c, word(3));
    c = _mm_crc32_u64(c, word(4));
    let mut x = [0u8; 4];
    x.copy_from_slice(&data[40..44]);
    !_mm_crc32_u32(c as u32, u32::from_le_bytes(x))
}

/// [`crc32c_44_masked_then`] past its feature check: the block and the
/// tail in one call (the block's step, then the tail's, were two calls per
/// ACK emitted or verified: a target-feature function is inlined only into
/// one with the same features).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn sse42_44_masked_then(data: &[u8; 44], keep0: u64, tail: &[u8]) -> u32 {
    let head = sse42_44_masked(data, keep0);
    if tail.is_empty() {
        return head;
    }
    short_sse42(head, tail)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
#[inline]
unsafe fn short_sse42(crc: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};
    // Four 8-byte steps per 32 bytes, 8-byte steps, then at most one 4-,
    // 2- and 1-byte step (the same bytes in the same order: a wider step
    // equals its bytes one by one). The `chunks_exact` loop with a
    // byte-wise tail cost ~50 instructions on a 16-byte ACK body.
    let word = |w: &[u8; 32], i: usize| {
        u64::from_le_bytes([
            w[8 * i],
            w[8 * i + 1],
            w[8 * i + 2],
            w[8 * i + 3],
            w[8 * i + 4],
            w[8 * i + 5],
            w[8 * i + 6],
            w[8 * i + 7],
        ])
    };
    let mut c = !crc as u64;
    let mut rest = data;
    while let Some((w, r)) = rest.split_first_chunk::<32>() {
        c = _mm_crc32_u64(c, word(w, 0));
        c = _mm_crc32_u64(c, word(w, 1));
        c = _mm_crc32_u64(c, word(w, 2));
        c = _mm_crc32_u64(c, word(w, 3));
        rest = r;
    }
    while let Some((w, r)) = rest.split_first_chunk::<8>() {
        c = _mm_crc32_u64(c, u64::from_le_bytes(*w));
        rest = r;
    }
    let mut c = c as u32;
    if let Some((w, r)) = rest.split_first_chunk::<4>() {
        c = _mm_crc32_u32(c, u32::from_le_bytes(*w));
        rest = r;
    }
    if let Some((w, r)) = rest.split_first_chunk::<2>() {
        c = _mm_crc32_u16(c, u16::from_le_bytes(*w));
        rest = r;
    }
    if let Some(&b) = rest.first() {
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
        for n in [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15, 28, 44, 63, 255, 256, 257, 600,
        ] {
            assert_eq!(crc32c(&data[..n]), crc32c::crc32c(&data[..n]), "len {n}");
            let part = crc32c(&data[..n / 2]);
            assert_eq!(
                crc32c_append(part, &data[n / 2..n]),
                crc32c::crc32c(&data[..n])
            );
        }
        for start in [0, 3, 17, 40] {
            let block: [u8; 44] = data[start..start + 44].try_into().unwrap();
            assert_eq!(crc32c_44(&block), crc32c::crc32c(&block), "from {start}");
            for n in [
                0, 1, 2, 3, 4, 7, 8, 15, 16, 20, 31, 32, 33, 100, 256, 257, 500,
            ] {
                let tail = &data[start + 44..start + 44 + n];
                assert_eq!(
                    crc32c_44_then(&block, tail),
                    crc32c::crc32c(&data[start..start + 44 + n]),
                    "from {start}, tail {n}"
                );
            }
        }
        // The masked form equals the plain one on the masked copy.
        for (start, keep0) in [(0, u64::MAX), (5, !(1 << 16)), (40, 0), (77, 0x00ff_00ff)] {
            let block: [u8; 44] = data[start..start + 44].try_into().unwrap();
            let mut masked = block;
            let first = u64::from_le_bytes(block[..8].try_into().unwrap()) & keep0;
            masked[..8].copy_from_slice(&first.to_le_bytes());
            for n in [0, 1, 2, 4, 7, 8, 15, 16, 20, 31, 32, 33, 256, 257] {
                let tail = &data[200..200 + n];
                assert_eq!(
                    crc32c_44_masked_then(&block, keep0, tail),
                    crc32c_44_then(&masked, tail),
                    "from {start}, keep {keep0:#x}, tail {n}"
                );
            }
        }
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
    }
}
