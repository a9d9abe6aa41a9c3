//! Bounded-loss tensor transfer (seed 001 §3.2).
//!
//! A tensor is a vector of floats cut into chunks of whole elements (a
//! packet never splits a float); each chunk is one message of the job and
//! carries its element range `[start, end)`. The receiver may use the
//! tensor once a fraction `p` of the elements arrived and learns exactly
//! which ranges are missing; the application fills them with zeros or with
//! its previous values.
//!
//! With a protection level (seed 004 §4.1: the number of most significant
//! bits of every element that must arrive exactly, its "bit rank") each
//! chunk travels in `approxnet_phy`'s byte-plane layout: the protected bits
//! of all its elements first, as the message's precise prefix (covered by
//! the checksum), the rest after it as approximate bytes. The receiver puts
//! the elements back in memory order, so a bit error can only touch an
//! unprotected bit.

use crate::job_error::JobError;
use crate::wire::Dtype;

/// A tensor to send.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// Element type.
    pub dtype: Dtype,
    /// Little-endian element bytes; length must be a multiple of the element size.
    pub data: Vec<u8>,
    /// Fraction `p` of elements that must arrive, in `[0, 1]`.
    pub deliver_fraction: f64,
    /// Most significant bits of every element sent precisely (0: the
    /// whole chunk is approximate, as before; the element's bit count:
    /// fully precise).
    pub protect_bits: u8,
}

impl TensorSpec {
    /// Builds a tensor spec from `f32` values.
    pub fn from_f32(values: &[f32], deliver_fraction: f64) -> TensorSpec {
        TensorSpec {
            dtype: Dtype::F32,
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            deliver_fraction,
            protect_bits: 0,
        }
    }

    /// The same tensor with the top `bits` of every element protected.
    pub fn protect(mut self, bits: u8) -> TensorSpec {
        self.protect_bits = bits;
        self
    }

    /// Elements in the tensor.
    pub fn elems(&self) -> usize {
        self.data.len() / self.dtype.size()
    }

    /// Checks element alignment, size and `p`.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.data.is_empty() {
            return Err(JobError::BadTensor("no elements"));
        }
        if !self.data.len().is_multiple_of(self.dtype.size()) {
            return Err(JobError::BadTensor(
                "byte length is not a whole number of elements",
            ));
        }
        if self.elems() > u32::MAX as usize {
            return Err(JobError::BadTensor("more than 2^32 - 1 elements"));
        }
        let p = self.deliver_fraction;
        if p.is_nan() || !(0.0..=1.0).contains(&p) {
            return Err(JobError::BadMsr(p));
        }
        if usize::from(self.protect_bits) > self.dtype.size() * 8 {
            return Err(JobError::BadTensor(
                "protect_bits above the element's bit count",
            ));
        }
        Ok(())
    }
}

/// The byte-plane layout of `dtype` at protection level `bits` (`None`:
/// level 0, chunks travel as they are).
pub fn plane_layout(dtype: Dtype, bits: u8) -> Option<approxnet_phy::approx_types::PlaneLayout> {
    use approxnet_phy::approx_types::{DType, PlaneLayout};
    if bits == 0 {
        return None;
    }
    let d = match dtype {
        Dtype::F16 => DType::F16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
    };
    // bits <= the element's bit count is checked by `TensorSpec::validate`
    // and by the JOB parser, the only two ways a level gets here
    PlaneLayout::new(d, u32::from(bits)).ok()
}

/// Elements per chunk so that a chunk fills, but never exceeds, `max_payload` bytes.
pub fn elems_per_chunk(dtype: Dtype, max_payload: usize) -> u32 {
    (max_payload / dtype.size()).max(1) as u32
}

/// Chunks needed so that at least `p * total` elements arrive whatever
/// chunks are lost: all chunks are `per` elements except a possibly shorter
/// last one, so the worst case keeps the short one.
pub fn chunks_needed(total: u32, per: u32, p: f64) -> u32 {
    let chunks = total.div_ceil(per);
    let need_elems = (p * total as f64 - 1e-9).ceil().max(0.0) as u64;
    if need_elems == 0 {
        return 0;
    }
    let last = total as u64 - (chunks as u64 - 1) * per as u64;
    if need_elems <= last {
        return 1;
    }
    let k = 1 + (need_elems - last).div_ceil(per as u64);
    (k as u32).min(chunks)
}

/// The element range of chunk `i`.
pub fn chunk_range(total: u32, per: u32, i: u32) -> (u32, u32) {
    let start = i.saturating_mul(per).min(total);
    (start, start.saturating_add(per).min(total))
}

/// Writes previous values into the missing ranges ("keep previous").
/// `dst` and `prev` hold the same dtype and length.
pub fn fill_from_previous(dtype: Dtype, dst: &mut [u8], prev: &[u8], missing: &[(u32, u32)]) {
    let s = dtype.size();
    for &(a, b) in missing {
        let (a, b) = (a as usize * s, b as usize * s);
        if b <= dst.len() && b <= prev.len() {
            dst[a..b].copy_from_slice(&prev[a..b]);
        }
    }
}

/// Receiver-side reassembly of one tensor.
#[derive(Debug, Clone)]
pub struct TensorAssembly {
    dtype: Dtype,
    layout: Option<approxnet_phy::approx_types::PlaneLayout>,
    total: u32,
    per: u32,
    data: Vec<u8>,
    have: Vec<bool>,
    elems_have: u64,
}

impl TensorAssembly {
    /// A zero-filled buffer for `total` elements in chunks of `per`.
    pub fn new(dtype: Dtype, total: u32, per: u32) -> TensorAssembly {
        Self::protected(dtype, total, per, 0)
    }

    /// As [`TensorAssembly::new`] for chunks sent in the byte-plane layout
    /// of protection level `bits` (restored to memory order on `put`).
    pub fn protected(dtype: Dtype, total: u32, per: u32, bits: u8) -> TensorAssembly {
        let chunks = total.div_ceil(per) as usize;
        TensorAssembly {
            dtype,
            layout: plane_layout(dtype, bits),
            total,
            per,
            data: vec![0; total as usize * dtype.size()],
            have: vec![false; chunks],
            elems_have: 0,
        }
    }

    /// Element type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// Bytes the assembly holds.
    pub fn byte_len(&self) -> usize {
        self.data.len()
    }

    /// Whether `[start, end)` is exactly chunk `i` of this layout.
    pub fn range_ok(&self, i: u32, start: u32, end: u32) -> bool {
        (i as usize) < self.have.len() && chunk_range(self.total, self.per, i) == (start, end)
    }

    /// Stores chunk `i`; `bytes` must be its exact element bytes.
    pub fn put(&mut self, i: u32, bytes: &[u8]) -> bool {
        let (a, b) = chunk_range(self.total, self.per, i);
        let s = self.dtype.size();
        if (i as usize) >= self.have.len() || bytes.len() != (b - a) as usize * s {
            return false;
        }
        if !self.have[i as usize] {
            let dst = &mut self.data[a as usize * s..b as usize * s];
            match &self.layout {
                Some(l) => {
                    if l.from_planes(bytes, dst).is_err() {
                        return false;
                    }
                }
                None => dst.copy_from_slice(bytes),
            }
            self.have[i as usize] = true;
            self.elems_have += (b - a) as u64;
        }
        true
    }

    /// Fraction of elements received.
    pub fn fraction(&self) -> f64 {
        self.elems_have as f64 / self.total as f64
    }

    /// Missing element ranges, merged, ascending.
    pub fn missing(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (i, &h) in self.have.iter().enumerate() {
            if h {
                continue;
            }
            let (a, b) = chunk_range(self.total, self.per, i as u32);
            match out.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => out.push((a, b)),
            }
        }
        out
    }

    /// The buffer (missing ranges zero-filled).
    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_chunk_count() {
        // 1000 elems, 350 per chunk: chunks of 350, 350, 300.
        assert_eq!(chunks_needed(1000, 350, 0.3), 1); // 300 >= 300
        assert_eq!(chunks_needed(1000, 350, 0.31), 2); // 310 > 300 -> 300 + 350
        assert_eq!(chunks_needed(1000, 350, 0.65), 2); // 650 = 300 + 350
        assert_eq!(chunks_needed(1000, 350, 0.66), 3);
        assert_eq!(chunks_needed(1000, 350, 0.0), 0);
        assert_eq!(chunks_needed(1000, 350, 1.0), 3);
        assert_eq!(chunks_needed(700, 350, 0.5), 1);
    }

    #[test]
    fn assembly_reports_missing_ranges() {
        let mut a = TensorAssembly::new(Dtype::F32, 10, 3); // chunks [0,3) [3,6) [6,9) [9,10)
        assert!(a.range_ok(3, 9, 10));
        assert!(!a.range_ok(3, 9, 11));
        assert!(a.put(1, &[1u8; 12]));
        assert!(!a.put(3, &[1u8; 8]));
        assert!(a.put(3, &[2u8; 4]));
        assert_eq!(a.missing(), vec![(0, 3), (6, 9)]);
        assert!((a.fraction() - 0.4).abs() < 1e-12);
        let mut dst = a.data().to_vec();
        let prev = vec![7u8; 40];
        fill_from_previous(Dtype::F32, &mut dst, &prev, &a.missing());
        assert_eq!(&dst[..12], &[7u8; 12]);
        assert_eq!(&dst[12..24], &[1u8; 12]);
    }
}
