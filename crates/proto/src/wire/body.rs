//! What a DATA payload may carry besides plain message bytes
//! (docs/wire-format.md, "DATA body"):
//!
//! * a **BUNDLE** body (`Flags::BUNDLE`): records of whole one-packet
//!   messages, each `message id (u32) | length (u16) | bytes`;
//! * the **approximate-region trailer** (`Flags::APPROX_CRC`): a CRC32C of
//!   the bytes after the precise prefix, appended after them.

use super::crc::crc32c;
use super::{get_u16, get_u32, put_u16, put_u32};

/// Bytes before each message in a bundle: message id (32) and length (16).
pub const BUNDLE_RECORD_LEN: usize = 6;

/// Bytes of the approximate-region trailer (a CRC32C).
pub const APPROX_CRC_LEN: usize = 4;

/// One record of a BUNDLE body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BundleRecord<'a> {
    /// The message's id within its group.
    pub msg_id: u32,
    /// The whole message.
    pub payload: &'a [u8],
}

impl BundleRecord<'_> {
    /// Bytes the record takes in a body.
    pub fn buffer_len(&self) -> usize {
        BUNDLE_RECORD_LEN + self.payload.len()
    }
}

/// Writes one record's header (`msg_id`, `len`) at the front of `out` and
/// returns where its payload starts; the caller writes the `len` payload
/// bytes there. `out` must hold [`BUNDLE_RECORD_LEN`] bytes.
pub fn emit_bundle_record_header(out: &mut [u8], msg_id: u32, len: u16) -> usize {
    put_u32(out, 0, msg_id);
    put_u16(out, 4, len);
    BUNDLE_RECORD_LEN
}

/// The records of a BUNDLE body, in order: `Some(Ok(record))`, or one
/// `Some(Err(()))` (then nothing more) where the bytes do not parse — a
/// truncated record header or a length past the end. Never panics.
#[derive(Clone, Debug)]
pub struct BundleRecords<'a>(&'a [u8]);

impl<'a> BundleRecords<'a> {
    /// Records of `body`.
    pub fn new(body: &'a [u8]) -> Self {
        BundleRecords(body)
    }
}

impl<'a> Iterator for BundleRecords<'a> {
    type Item = Result<BundleRecord<'a>, ()>;
    fn next(&mut self) -> Option<Self::Item> {
        let b = self.0;
        if b.is_empty() {
            return None;
        }
        self.0 = &[];
        if b.len() < BUNDLE_RECORD_LEN {
            return Some(Err(()));
        }
        let msg_id = get_u32(b, 0);
        let n = usize::from(get_u16(b, 4));
        let end = BUNDLE_RECORD_LEN + n;
        if b.len() < end {
            return Some(Err(()));
        }
        self.0 = &b[end..];
        Some(Ok(BundleRecord {
            msg_id,
            payload: &b[BUNDLE_RECORD_LEN..end],
        }))
    }
}

/// Appends the trailer of `out[..len]`, whose approximate region starts at
/// `precise`: writes the CRC32C of `out[precise..len]` at `out[len..]` and
/// returns the new length. `out` must hold `len + APPROX_CRC_LEN` bytes.
pub fn emit_approx_trailer(out: &mut [u8], precise: usize, len: usize) -> usize {
    let c = crc32c(&out[precise..len]);
    put_u32(out, len, c);
    len + APPROX_CRC_LEN
}

/// Splits a body with a trailer into its data and whether the approximate
/// region (after `precise` bytes) was damaged on the way. `None` when the
/// body is too short to hold the precise prefix and the trailer.
pub fn check_approx_trailer(body: &[u8], precise: usize) -> Option<(&[u8], bool)> {
    if body.len() < precise.checked_add(APPROX_CRC_LEN)? {
        return None;
    }
    let (data, trailer) = body.split_at(body.len() - APPROX_CRC_LEN);
    let damaged = crc32c(&data[precise..]) != get_u32(trailer, 0);
    Some((data, damaged))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_records_round_trip() {
        let msgs: [(u32, &[u8]); 3] = [(7, b"abc"), (8, b""), (u32::MAX, b"xyzzy")];
        let mut out = [0u8; 64];
        let mut at = 0;
        for (id, p) in msgs {
            at += emit_bundle_record_header(&mut out[at..], id, p.len() as u16);
            out[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        let got: Vec<_> = BundleRecords::new(&out[..at]).collect();
        let want: Vec<_> = msgs
            .iter()
            .map(|&(msg_id, payload)| Ok(BundleRecord { msg_id, payload }))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            got.iter().map(|r| r.unwrap().buffer_len()).sum::<usize>(),
            at
        );
    }

    #[test]
    fn truncated_bundles_end_in_one_error() {
        let mut out = [0u8; 16];
        emit_bundle_record_header(&mut out, 1, 10);
        for cut in 1..BUNDLE_RECORD_LEN + 10 {
            let got: Vec<_> = BundleRecords::new(&out[..cut]).collect();
            assert_eq!(got, vec![Err(())], "cut at {cut}");
        }
        assert_eq!(BundleRecords::new(&[]).count(), 0);
    }

    #[test]
    fn approx_trailer_round_trips_and_sees_damage() {
        let mut out = [0u8; 32];
        out[..20].copy_from_slice(b"precise|approximate!");
        let n = emit_approx_trailer(&mut out, 8, 20);
        assert_eq!(n, 24);
        assert_eq!(
            check_approx_trailer(&out[..n], 8),
            Some((&out[..20], false))
        );
        let mut bad = out;
        bad[15] ^= 0x10;
        assert_eq!(
            check_approx_trailer(&bad[..n], 8).map(|(_, d)| d),
            Some(true)
        );
        // The precise prefix is not the trailer's business.
        let mut pre = out;
        pre[2] ^= 0x01;
        assert_eq!(
            check_approx_trailer(&pre[..n], 8).map(|(_, d)| d),
            Some(false)
        );
        assert_eq!(check_approx_trailer(&out[..11], 8), None);
        assert_eq!(check_approx_trailer(&out[..n], usize::MAX), None);
    }
}
