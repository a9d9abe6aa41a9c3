//! The byte-plane layout: the protected bits of every word first.
//!
//! A buffer of `n` scalar words of `w` bytes becomes `w` planes of `n`
//! bytes, plane `k` holding byte `k` (0 = most significant) of every word.
//! With protection level `L = 8q + r`, planes `0..q` are protected whole;
//! if `r > 0`, plane `q` is bit-packed: first the top `r` bits of every
//! word's byte `q`, then their low `8 - r` bits (MSB first in each byte).
//! Plane `q` still spans exactly `n` bytes, so every later plane stays
//! byte aligned and the output is as long as the input. The protected bits
//! are then exactly the first `n L` bits: the precise prefix is
//! `ceil(n L / 8)` bytes (its last byte may also carry up to 7 unprotected
//! bits, which are then sent precisely too). The layout is a permutation
//! of bits; [`PlaneLayout::from_planes`] inverts it.

use super::mask::check_level;
use super::{ApproxTypeError, DType};

/// The byte-plane layout of a data type at a protection level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneLayout {
    dtype: DType,
    level: u32,
}

impl PlaneLayout {
    /// The layout for `dtype` protecting its top `level` bits per word.
    pub fn new(dtype: DType, level: u32) -> Result<PlaneLayout, ApproxTypeError> {
        Ok(PlaneLayout {
            dtype,
            level: check_level(dtype, level)?,
        })
    }

    /// The data type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The protection level (bits per word).
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Whether protection needs no reordering: nothing or everything is
    /// protected, so the precise prefix of the untouched buffer (empty or
    /// all of it) already holds exactly the protected bits.
    pub fn is_identity(&self) -> bool {
        self.level == 0 || self.level == self.dtype.word_bits()
    }

    /// Scalar words in a buffer of `len` bytes (an error unless `len` is a
    /// whole number of elements).
    pub fn words(&self, len: usize) -> Result<usize, ApproxTypeError> {
        let e = self.dtype.element_bytes();
        if !len.is_multiple_of(e) {
            return Err(ApproxTypeError::Length {
                len,
                element: e,
                dtype: self.dtype.name(),
            });
        }
        Ok(len / self.dtype.word_bytes())
    }

    /// Length of the precise prefix of a laid-out buffer of `len` bytes:
    /// `ceil(words * level / 8)`.
    pub fn prefix_len(&self, len: usize) -> Result<usize, ApproxTypeError> {
        let n = self.words(len)? as u128;
        Ok((n * u128::from(self.level)).div_ceil(8) as usize)
    }

    /// Offset in a word of its byte of significance `k` (0 = most significant).
    fn byte_of(&self, k: usize) -> usize {
        if cfg!(target_endian = "little") {
            self.dtype.word_bytes() - 1 - k
        } else {
            k
        }
    }

    fn check_out(src: &[u8], dst: &[u8]) -> Result<(), ApproxTypeError> {
        if src.len() != dst.len() {
            return Err(ApproxTypeError::OutputLength {
                expected: src.len(),
                got: dst.len(),
            });
        }
        Ok(())
    }

    /// Writes the planes of `src` (elements in memory order) into `dst` (as
    /// long as `src`); returns the precise prefix length.
    pub fn to_planes(&self, src: &[u8], dst: &mut [u8]) -> Result<usize, ApproxTypeError> {
        let n = self.words(src.len())?;
        Self::check_out(src, dst)?;
        match self.dtype.word_bytes() {
            1 => scatter::<1>(src, dst, self.order()),
            2 => scatter::<2>(src, dst, self.order()),
            4 => scatter::<4>(src, dst, self.order()),
            _ => scatter::<8>(src, dst, self.order()),
        }
        let (q, r) = ((self.level / 8) as usize, self.level % 8);
        if r > 0 {
            // plane q was copied whole above; bit-pack it over the copy
            let w = self.dtype.word_bytes();
            let column = src.iter().skip(self.byte_of(q)).step_by(w);
            pack_split(column, n, r, &mut dst[q * n..(q + 1) * n]);
        }
        self.prefix_len(src.len())
    }

    /// Inverts [`PlaneLayout::to_planes`]: reads planes from `src` and
    /// writes the elements to `dst` (as long as `src`).
    pub fn from_planes(&self, src: &[u8], dst: &mut [u8]) -> Result<(), ApproxTypeError> {
        let n = self.words(src.len())?;
        Self::check_out(src, dst)?;
        match self.dtype.word_bytes() {
            1 => gather::<1>(src, dst, self.order()),
            2 => gather::<2>(src, dst, self.order()),
            4 => gather::<4>(src, dst, self.order()),
            _ => gather::<8>(src, dst, self.order()),
        }
        let (q, r) = ((self.level / 8) as usize, self.level % 8);
        if r > 0 {
            let w = self.dtype.word_bytes();
            let column = dst.iter_mut().skip(self.byte_of(q)).step_by(w);
            unpack_split(&src[q * n..(q + 1) * n], r, column);
        }
        Ok(())
    }

    /// `order[k]`: the offset in a word of its byte of significance `k`.
    fn order<const W: usize>(&self) -> [usize; W] {
        std::array::from_fn(|k| self.byte_of(k))
    }
}

/// Byte `order[k]` of every `W`-byte word of `src` to plane `k` of `dst`
/// (one pass over `src`, `W` sequential output streams).
fn scatter<const W: usize>(src: &[u8], dst: &mut [u8], order: [usize; W]) {
    let n = src.len() / W;
    if n == 0 {
        return;
    }
    let planes: [&mut [u8]; W] = {
        let mut it = dst.chunks_exact_mut(n);
        std::array::from_fn(|_| it.next().unwrap_or_default())
    };
    for (i, word) in src.chunks_exact(W).enumerate() {
        for k in 0..W {
            planes[k][i] = word[order[k]];
        }
    }
}

/// Inverts [`scatter`].
fn gather<const W: usize>(src: &[u8], dst: &mut [u8], order: [usize; W]) {
    let n = src.len() / W;
    if n == 0 {
        return;
    }
    let planes: [&[u8]; W] = {
        let mut it = src.chunks_exact(n);
        std::array::from_fn(|_| it.next().unwrap_or_default())
    };
    for (i, word) in dst.chunks_exact_mut(W).enumerate() {
        for k in 0..W {
            word[order[k]] = planes[k][i];
        }
    }
}

/// Packs `n` bytes into `out` (n bytes): their top `r` bits, then their low
/// `8 - r` bits, as one MSB-first bit stream.
fn pack_split<'a>(bytes: impl Iterator<Item = &'a u8> + Clone, n: usize, r: u32, out: &mut [u8]) {
    let mut w = BitWriter::new(out);
    for b in bytes.clone().take(n) {
        w.push(u32::from(*b >> (8 - r)), r);
    }
    let low = (1u32 << (8 - r)) - 1;
    for b in bytes.take(n) {
        w.push(u32::from(*b) & low, 8 - r);
    }
}

/// Inverts [`pack_split`] into the bytes of `dst`.
fn unpack_split<'a>(plane: &[u8], r: u32, dst: impl Iterator<Item = &'a mut u8>) {
    let mut hi = BitReader::new(plane, 0);
    let n = plane.len();
    let mut lo = BitReader::new(plane, n as u64 * u64::from(r));
    for d in dst {
        *d = ((hi.take(r) << (8 - r)) | lo.take(8 - r)) as u8;
    }
}

/// MSB-first bit writer over a byte slice that the caller sized exactly.
struct BitWriter<'a> {
    out: &'a mut [u8],
    at: usize,
    acc: u32,
    bits: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut [u8]) -> Self {
        BitWriter {
            out,
            at: 0,
            acc: 0,
            bits: 0,
        }
    }

    /// Appends the low `width` (<= 8) bits of `v`.
    fn push(&mut self, v: u32, width: u32) {
        self.acc = (self.acc << width) | v;
        self.bits += width;
        if self.bits >= 8 {
            self.bits -= 8;
            self.out[self.at] = (self.acc >> self.bits) as u8;
            self.at += 1;
            self.acc &= (1 << self.bits) - 1;
        }
    }
}

/// MSB-first bit reader from a bit offset.
struct BitReader<'a> {
    src: &'a [u8],
    pos: u64,
}

impl<'a> BitReader<'a> {
    fn new(src: &'a [u8], pos: u64) -> Self {
        BitReader { src, pos }
    }

    /// The next `width` (<= 8) bits.
    fn take(&mut self, width: u32) -> u32 {
        let byte = (self.pos / 8) as usize;
        let shift = (self.pos % 8) as u32;
        let hi = u32::from(self.src[byte]);
        let lo = self.src.get(byte + 1).map_or(0, |b| u32::from(*b));
        let window = (hi << 8) | lo; // 16 bits from `byte`
        self.pos += u64::from(width);
        (window >> (16 - shift - width)) & ((1 << width) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_level_12_puts_sign_and_exponent_first() {
        let xs = [1.0f64, -2.0, 3.5, -0.0, 1e300];
        let src: Vec<u8> = xs.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let l = PlaneLayout::new(DType::F64, 12).unwrap();
        let mut planes = vec![0u8; src.len()];
        let prefix = l.to_planes(&src, &mut planes).unwrap();
        assert_eq!(prefix, (5 * 12usize).div_ceil(8)); // 8 bytes
                                                       // the first 5 * 12 bits are the top 12 bits of each double in order
        let mut r = BitReader::new(&planes, 0);
        for x in xs {
            let top8 = r.take(8);
            assert_eq!(top8 as u64, x.to_bits() >> 56);
        }
        for x in xs {
            assert_eq!(r.take(4) as u64, (x.to_bits() >> 52) & 0xf);
        }
        let mut back = vec![0u8; src.len()];
        l.from_planes(&planes, &mut back).unwrap();
        assert_eq!(back, src);
    }

    #[test]
    fn bad_lengths_and_levels() {
        let l = PlaneLayout::new(DType::Complex64, 8).unwrap();
        assert!(matches!(l.words(12), Err(ApproxTypeError::Length { .. })));
        let mut out = vec![0u8; 8];
        assert!(matches!(
            l.to_planes(&[0u8; 16], &mut out),
            Err(ApproxTypeError::OutputLength { .. })
        ));
        assert!(PlaneLayout::new(DType::I8, 9).is_err());
        assert!(PlaneLayout::new(DType::F16, 16).unwrap().is_identity());
        assert_eq!(l.prefix_len(0).unwrap(), 0);
    }
}
