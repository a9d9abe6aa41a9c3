//! ACK body: cumulative and selective acknowledgement of transmission
//! sequence numbers, plus the ECN / receive counters the rate controller uses.
//!
//! ```text
//! +-----------------------------------+
//! |  cumulative (32): all seq < it    |  0
//! |  CE-marked DATA seen (32)         |  4
//! |  DATA packets received (32)       |  8
//! +--------+--------------------------+
//! | nrange |     reserved (24)        | 12
//! +--------+--------------------------+
//! | range 0 start (32) | end (32)     | 16   up to MAX_ACK_RANGES,
//! | ...                               |      [start, end), newest first
//! +-----------------------------------+
//! ```
//! The header of an ACK echoes the DATA packet it answers: its `seq`,
//! `job_id`, `group`, `msg_id`, `pkt_index`, `epoch`, and ECE if it carried CE.

use super::{get_u32, put_u32, WireError};

/// At most this many selective ranges ride in one ACK.
pub const MAX_ACK_RANGES: usize = 8;
const FIXED: usize = 16;

/// A half-open range of transmission sequence numbers `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqRange {
    /// First sequence number in the range.
    pub start: u32,
    /// One past the last.
    pub end: u32,
}

impl SeqRange {
    /// Whether `seq` lies in the range.
    pub fn contains(&self, seq: u32) -> bool {
        self.start <= seq && seq < self.end
    }
}

/// An ACK body as plain values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckRepr {
    /// Every sequence number below this was received.
    pub cumulative: u32,
    /// DATA packets with CE seen so far on the connection.
    pub ce_count: u32,
    /// DATA packets received so far on the connection.
    pub recv_count: u32,
    ranges: [SeqRange; MAX_ACK_RANGES],
    n_ranges: u8,
}

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

    /// Adds a selective range; returns `false` (and ignores it) when full or empty.
    pub fn push_range(&mut self, r: SeqRange) -> bool {
        if (self.n_ranges as usize) >= MAX_ACK_RANGES || r.start >= r.end {
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

    /// Whether this ACK says `seq` arrived.
    pub fn acks(&self, seq: u32) -> bool {
        seq < self.cumulative || self.ranges().iter().any(|r| r.contains(seq))
    }

    /// Body bytes this ACK needs.
    pub fn buffer_len(&self) -> usize {
        FIXED + 8 * self.n_ranges as usize
    }

    /// Parses an ACK body; never panics.
    pub fn parse(body: &[u8]) -> Result<AckRepr, WireError> {
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
        let mut a = AckRepr::new(get_u32(body, 0), get_u32(body, 4), get_u32(body, 8));
        for i in 0..n {
            let at = FIXED + 8 * i;
            let r = SeqRange {
                start: get_u32(body, at),
                end: get_u32(body, at + 4),
            };
            if r.start >= r.end {
                return Err(WireError::Malformed("empty or inverted ACK range"));
            }
            a.push_range(r);
        }
        Ok(a)
    }

    /// Writes the body into `buf[..buffer_len()]`.
    pub fn emit(&self, buf: &mut [u8]) {
        put_u32(buf, 0, self.cumulative);
        put_u32(buf, 4, self.ce_count);
        put_u32(buf, 8, self.recv_count);
        buf[12] = self.n_ranges;
        buf[13..16].fill(0);
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
