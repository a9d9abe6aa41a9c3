//! ACK body: cumulative and selective acknowledgement of transmission
//! sequence numbers, plus the ECN / receive counters the rate controller uses.
//!
//! ```text
//! +-----------------------------------+
//! |  cumulative (32)                  |  0
//! |  CE-marked DATA seen (32)         |  4
//! |  DATA packets received (32)       |  8
//! +--------+--------------------------+
//! | nrange | aflags |  reserved (16)  | 12
//! +--------+--------------------------+
//! | range 0 start (32) | end (32)     | 16   up to MAX_ACK_RANGES,
//! | ...                               |      [start, end), newest first
//! +-----------------------------------+
//! ```
//! Sequence numbers compare in serial order (RFC 1982: they wrap
//! around 2^32 and start at a random value). The cumulative point says that
//! every number from the peer's first one (announced in its JOB header) up
//! to it arrived. A range is `[start, end)` modulo 2^32: `end` may wrap past
//! zero, and `end - start` (wrapping) must lie in 1..2^31.
//! The header of an ACK echoes the DATA packet it answers: its `seq`,
//! `job_id`, `group`, `msg_id`, `pkt_index`, `epoch`, and ECE if it carried CE.
//!
//! ACK flags (`aflags`): 0x01 SATISFIED — the job named in the header has
//! every group at its `ceil(MSR * N)` (seed 000 §3.3.2): the sender stops
//! sending it. Unknown ACK flag bits are ignored.

use super::{get_u32, put_u32, WireError};
use crate::seq;
use std::ops::RangeInclusive;

/// At most this many selective ranges ride in one ACK.
pub const MAX_ACK_RANGES: usize = 8;
const FIXED: usize = 16;

/// A half-open range of transmission sequence numbers `[start, end)`,
/// modulo 2^32: `end` may wrap past zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqRange {
    /// First sequence number in the range.
    pub start: u32,
    /// One past the last (wrapping).
    pub end: u32,
}

impl SeqRange {
    /// How many sequence numbers it spans: `end - start`, wrapping.
    pub fn len(&self) -> u32 {
        self.end.wrapping_sub(self.start)
    }

    /// Whether it spans no sequence number.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether the wire accepts it: it spans 1 to 2^31 - 1 numbers.
    pub fn is_well_formed(&self) -> bool {
        seq::before(self.start, self.end)
    }

    /// Whether `seq` lies in the range.
    pub fn contains(&self, seq: u32) -> bool {
        seq::offset(self.start, seq).is_some_and(|d| d < self.len())
    }

    /// The range as runs of plain u32 order, inclusive: one, or two when it
    /// wraps past `u32::MAX`; none when it is not well formed.
    pub(crate) fn runs(&self) -> impl Iterator<Item = RangeInclusive<u32>> {
        let last = self.end.wrapping_sub(1);
        let (first, second) = match (self.is_well_formed(), self.start <= last) {
            (false, _) => (None, None),
            (true, true) => (Some(self.start..=last), None),
            (true, false) => (Some(self.start..=u32::MAX), Some(0..=last)),
        };
        first.into_iter().chain(second)
    }
}

/// An ACK body as plain values.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckRepr {
    /// Every sequence number from the peer's first up to (before) this
    /// one was received.
    pub cumulative: u32,
    /// DATA packets with CE seen so far on the connection.
    pub ce_count: u32,
    /// DATA packets received so far on the connection.
    pub recv_count: u32,
    /// The job named in the ACK's header holds `ceil(MSR * N)` messages of
    /// every group at the receiver (wire flag 0x01 SATISFIED).
    pub satisfied: bool,
    ranges: [SeqRange; MAX_ACK_RANGES],
    n_ranges: u8,
}

/// Equal when the wire would say the same: the range slots past the range
/// count are not part of the value ([`AckRepr::reset`] leaves them as
/// they were).
impl PartialEq for AckRepr {
    fn eq(&self, o: &AckRepr) -> bool {
        self.cumulative == o.cumulative
            && self.ce_count == o.ce_count
            && self.recv_count == o.recv_count
            && self.satisfied == o.satisfied
            && self.ranges() == o.ranges()
    }
}

impl Eq for AckRepr {}

/// ACK flag: the header's job is satisfied.
const ACK_SATISFIED: u8 = 0x01;

impl AckRepr {
    /// An ACK with no selective ranges.
    pub fn new(cumulative: u32, ce_count: u32, recv_count: u32) -> AckRepr {
        AckRepr {
            cumulative,
            ce_count,
            recv_count,
            ..Default::default()
        }
    }

    /// Makes this `AckRepr::new(cumulative, ce_count, recv_count)` in
    /// place: counters set, no range, not satisfied. The slots past the
    /// (now zero) range count keep old values, which nothing reads, so an
    /// ACK built in a reused slot is not written in full.
    #[inline]
    pub(crate) fn reset(&mut self, cumulative: u32, ce_count: u32, recv_count: u32) {
        self.cumulative = cumulative;
        self.ce_count = ce_count;
        self.recv_count = recv_count;
        self.satisfied = false;
        self.n_ranges = 0;
    }

    /// Adds a selective range; returns `false` (and ignores it) when full
    /// or when the range is not well formed ([`SeqRange::is_well_formed`]).
    pub fn push_range(&mut self, r: SeqRange) -> bool {
        if (self.n_ranges as usize) >= MAX_ACK_RANGES || !r.is_well_formed() {
            return false;
        }
        self.ranges[self.n_ranges as usize] = r;
        self.n_ranges += 1;
        true
    }

    /// The selective ranges.
    pub fn ranges(&self) -> &[SeqRange] {
        &self.ranges[..self.n_ranges as usize]
    }

    /// Whether this ACK says `seq` arrived: it comes before the cumulative
    /// point (serial order) or lies in a range.
    pub fn acks(&self, seq: u32) -> bool {
        seq::before(seq, self.cumulative) || self.ranges().iter().any(|r| r.contains(seq))
    }

    /// Body bytes this ACK needs.
    pub fn buffer_len(&self) -> usize {
        FIXED + 8 * self.n_ranges as usize
    }

    /// Parses an ACK body; never panics.
    pub fn parse(body: &[u8]) -> Result<AckRepr, WireError> {
        let mut a = AckRepr::default();
        AckRepr::parse_into(body, &mut a)?;
        Ok(a)
    }

    /// [`AckRepr::parse`] into `out`, which must be `AckRepr::default()`
    /// (left in an unspecified state on an error): the connection parses
    /// into its own value, where a returned `Result` cost a copy of the
    /// 84-byte body per ACK.
    // An ACK without ranges (in-order arrival, most ACKs) inline; the rest
    // out of line (the whole was a call of ~25 instructions per ACK).
    #[inline(always)]
    pub(crate) fn parse_into(body: &[u8], out: &mut AckRepr) -> Result<(), WireError> {
        if let Some(b) = <&[u8; FIXED]>::try_from(body).ok().filter(|b| b[12] == 0) {
            out.cumulative = get_u32(b, 0);
            out.ce_count = get_u32(b, 4);
            out.recv_count = get_u32(b, 8);
            out.satisfied = b[13] & ACK_SATISFIED != 0;
            return Ok(());
        }
        Self::parse_into_slow(body, out)
    }

    /// [`AckRepr::parse_into`] of any body.
    #[inline(never)]
    fn parse_into_slow(body: &[u8], out: &mut AckRepr) -> Result<(), WireError> {
        if body.len() < FIXED {
            return Err(WireError::Truncated {
                have: body.len(),
                need: FIXED,
            });
        }
        let n = body[12] as usize;
        if n > MAX_ACK_RANGES {
            return Err(WireError::Malformed("too many ACK ranges"));
        }
        if body.len() != FIXED + 8 * n {
            return Err(WireError::LengthMismatch {
                claimed: FIXED + 8 * n,
                actual: body.len(),
            });
        }
        let a = out;
        a.cumulative = get_u32(body, 0);
        a.ce_count = get_u32(body, 4);
        a.recv_count = get_u32(body, 8);
        a.satisfied = body[13] & ACK_SATISFIED != 0;
        for i in 0..n {
            let at = FIXED + 8 * i;
            let r = SeqRange {
                start: get_u32(body, at),
                end: get_u32(body, at + 4),
            };
            if !r.is_well_formed() {
                return Err(WireError::Malformed("empty or over-long ACK range"));
            }
            a.push_range(r);
        }
        Ok(())
    }

    /// Writes the body into `buf[..buffer_len()]`.
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) {
        put_u32(buf, 0, self.cumulative);
        put_u32(buf, 4, self.ce_count);
        put_u32(buf, 8, self.recv_count);
        buf[12] = self.n_ranges;
        buf[13] = if self.satisfied { ACK_SATISFIED } else { 0 };
        buf[14..16].fill(0);
        for (i, r) in self.ranges().iter().enumerate() {
            put_u32(buf, FIXED + 8 * i, r.start);
            put_u32(buf, FIXED + 8 * i + 4, r.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bytes() {
        let mut a = AckRepr::new(5, 1, 9);
        assert!(a.push_range(SeqRange { start: 7, end: 9 }));
        let mut buf = vec![0u8; a.buffer_len()];
        a.emit(&mut buf);
        assert_eq!(&buf[..4], &[0, 0, 0, 5]);
        assert_eq!(buf[12], 1);
        assert_eq!(&buf[16..24], &[0, 0, 0, 7, 0, 0, 0, 9]);
        let b = AckRepr::parse(&buf).unwrap();
        assert_eq!(a, b);
        assert!(b.acks(4) && !b.acks(5) && b.acks(8) && !b.acks(9));
        assert_eq!(buf[13], 0);
        let mut c = b;
        c.satisfied = true;
        c.emit(&mut buf);
        assert_eq!(buf[13], 0x01);
        assert_eq!(AckRepr::parse(&buf).unwrap(), c);
        buf[13] = 0xfe; // unknown ACK flags are ignored
        assert!(!AckRepr::parse(&buf).unwrap().satisfied);
    }

    /// A range may wrap past `u32::MAX`; it then covers both ends of the
    /// number space, and `u32::MAX` itself fits a range.
    #[test]
    fn ranges_wrap_around() {
        let mut a = AckRepr::new(u32::MAX - 2, 0, 0);
        let wrap = SeqRange {
            start: u32::MAX - 1,
            end: 2,
        };
        assert_eq!(wrap.len(), 4);
        assert!(a.push_range(wrap));
        let mut buf = vec![0u8; a.buffer_len()];
        a.emit(&mut buf);
        assert_eq!(&buf[16..24], &[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 2]);
        let b = AckRepr::parse(&buf).unwrap();
        assert_eq!(a, b);
        for s in [u32::MAX - 1, u32::MAX, 0, 1] {
            assert!(b.acks(s), "{s}");
        }
        assert!(!b.acks(2) && !b.acks(u32::MAX - 2));
        assert!(b.acks(u32::MAX - 3), "before the cumulative point");
        let runs: Vec<_> = wrap.runs().collect();
        assert_eq!(runs, vec![u32::MAX - 1..=u32::MAX, 0..=1]);
        let to_zero = SeqRange {
            start: u32::MAX,
            end: 0,
        };
        assert_eq!(
            to_zero.runs().collect::<Vec<_>>(),
            vec![u32::MAX..=u32::MAX]
        );
        assert!(to_zero.contains(u32::MAX) && !to_zero.contains(0));
    }

    /// Empty ranges and ranges of 2^31 or more numbers (which serial order
    /// cannot tell from inverted ones) are refused on parse and on push.
    #[test]
    fn refuses_empty_and_over_long_ranges() {
        for (start, end) in [(7, 7), (0, 1 << 31), (5, 4), (10, 10 + (1 << 31))] {
            let r = SeqRange { start, end };
            assert!(!r.is_well_formed(), "[{start}, {end})");
            assert_eq!(r.runs().count(), 0);
            assert!(!AckRepr::default().push_range(r));
            let mut buf = [0u8; 24];
            buf[12] = 1;
            buf[16..20].copy_from_slice(&start.to_be_bytes());
            buf[20..24].copy_from_slice(&end.to_be_bytes());
            assert!(AckRepr::parse(&buf).is_err(), "[{start}, {end})");
        }
        let longest = SeqRange {
            start: 10,
            end: 10 + (1 << 31) - 1,
        };
        assert!(longest.is_well_formed());
    }

    /// The inline path (16 bytes, no range) parses as the general one,
    /// whatever the other bytes hold; other lengths and counts take the
    /// general path.
    #[test]
    fn rangeless_acks_parse_as_the_general_path_does() {
        let mut rng = crate::rng::Rng::new(19);
        for _ in 0..2000 {
            let len = [16, 16, 16, 15, 17, 24][rng.below(6) as usize];
            let mut body: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            if len >= 13 && rng.below(4) != 0 {
                body[12] = 0;
            }
            let (mut fast, mut slow) = (AckRepr::default(), AckRepr::default());
            let r = AckRepr::parse_into(&body, &mut fast);
            let rs = AckRepr::parse_into_slow(&body, &mut slow);
            assert_eq!(r, rs, "{body:?}");
            if r.is_ok() {
                assert_eq!(fast, slow, "{body:?}");
            }
        }
    }

    #[test]
    fn refuses_bad_counts() {
        let mut buf = [0u8; 16];
        buf[12] = 9;
        assert!(AckRepr::parse(&buf).is_err());
        buf[12] = 1;
        assert!(AckRepr::parse(&buf).is_err());
    }
}
