//! Selective acknowledgements: the SACK option an ACK carries (RFC 2018)
//! and the sender's scoreboard of RFC 6675 (which bytes the receiver holds
//! above the cumulative ACK, which are deemed lost, and `pipe`, the bytes
//! still in the network).

/// Most blocks one ACK carries: 40 option bytes hold a SACK option of
/// `2 + 8 n` bytes, so 4 blocks alone and 3 beside the 10-byte timestamp
/// option (RFC 2018 section 3).
pub const MAX_BLOCKS: usize = 4;

/// Blocks that fit the option space: 3 with timestamps, 4 without.
pub fn blocks_allowed(timestamps: bool) -> usize {
    if timestamps {
        3
    } else {
        MAX_BLOCKS
    }
}

/// The SACK blocks of one ACK, first block first (RFC 2018: the block
/// holding the segment that triggered the ACK, then the most recently
/// reported others). Stored as offsets above the ACK's cumulative point so
/// that an ACK header stays small; a block more than 4 GiB above it is not
/// reported (a sender may not be told of every block, RFC 2018 section 4).
/// A block's end offset is at least 2 (its start is above the cumulative
/// point), so unused slots are `(0, 0)` and the count needs no field of its
/// own: 32 bytes, which lets a packet's whole header fit one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    off: [(u32, u32); MAX_BLOCKS],
}

impl SackBlocks {
    /// No blocks.
    pub const NONE: SackBlocks = SackBlocks {
        off: [(0, 0); MAX_BLOCKS],
    };

    /// Appends block `[start, end)` of an ACK whose cumulative point is
    /// `ack`; returns false (and keeps nothing) when the option is full, the
    /// block is empty, not above `ack`, or too far above it.
    pub fn push(&mut self, ack: u64, start: u64, end: u64) -> bool {
        let n = self.len();
        if n >= MAX_BLOCKS || start <= ack || end <= start {
            return false;
        }
        let (Ok(s), Ok(e)) = (u32::try_from(start - ack), u32::try_from(end - ack)) else {
            return false;
        };
        self.off[n] = (s, e);
        true
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        // used slots come first and end above 0
        self.off.iter().take_while(|&&(_, e)| e != 0).count()
    }

    /// No blocks.
    pub fn is_empty(&self) -> bool {
        self.off[0].1 == 0
    }

    /// The blocks as absolute `[start, end)` ranges for cumulative point `ack`.
    pub fn iter(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.off[..self.len()]
            .iter()
            .map(move |&(s, e)| (ack + s as u64, ack + e as u64))
    }

    /// Bytes the option adds to the TCP header: kind, length and 8 bytes
    /// per block, padded with NOPs to a multiple of 4 (0 without blocks).
    pub fn option_bytes(&self) -> u32 {
        match self.len() as u32 {
            0 => 0,
            n => (2 + 8 * n).next_multiple_of(4),
        }
    }
}

/// RFC 6675's DupThresh.
pub const DUP_THRESH: u64 = 3;

/// The sender's view of what the receiver holds above `snd_una`.
///
/// `sacked` are disjoint, sorted byte ranges. A hole is *lost* (RFC 6675
/// `IsLost`) when more than `(DupThresh - 1) x MSS` bytes above it are
/// SACKed, or when a retransmission timeout marked everything then
/// outstanding (`rto_lost`). Retransmissions go in order from `high_rxt`.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    sacked: Vec<(u64, u64)>,
    sacked_bytes: u64,
    /// RFC 6675 HighRxt: every unSACKed byte below it was retransmitted.
    pub high_rxt: u64,
    /// After a timeout: every unSACKed byte below this is lost.
    pub rto_lost: u64,
    /// Retransmissions of this recovery still unacknowledged: `(seq, end,
    /// snd_nxt when sent)`.
    rtx: Vec<(u64, u64, u64)>,
    /// Retransmissions found lost, to resend first.
    relost: Vec<(u64, u64)>,
}

impl Scoreboard {
    /// An empty scoreboard (usable in a `static`).
    pub const EMPTY: Scoreboard = Scoreboard {
        sacked: Vec::new(),
        sacked_bytes: 0,
        high_rxt: 0,
        rto_lost: 0,
        rtx: Vec::new(),
        relost: Vec::new(),
    };

    /// An empty scoreboard.
    pub fn new() -> Self {
        Self::default()
    }

    /// SACKed bytes above the cumulative ACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// The SACKed ranges, lowest first.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.sacked
    }

    /// End of the highest SACKed byte (0 if none).
    pub fn high_sacked(&self) -> u64 {
        self.sacked.last().map_or(0, |r| r.1)
    }

    /// The cumulative ACK moved to `una`: forget what is below it.
    pub fn advance(&mut self, una: u64) {
        let cut = self.sacked.partition_point(|r| r.1 <= una);
        for r in self.sacked.drain(..cut) {
            self.sacked_bytes -= r.1 - r.0;
        }
        if let Some(r) = self.sacked.first_mut() {
            if r.0 < una {
                self.sacked_bytes -= una - r.0;
                r.0 = una;
            }
        }
        self.high_rxt = self.high_rxt.max(una);
        self.rtx.retain(|r| r.1 > una);
        self.relost.retain(|r| r.1 > una);
    }

    /// `[seq, end)` was retransmitted while `snd_nxt` was `nxt`.
    pub fn retransmitted(&mut self, seq: u64, end: u64, nxt: u64) {
        self.rtx.push((seq, end, nxt));
    }

    /// Lost retransmission detection (Linux `tcp_mark_lost_retrans`, the
    /// idea RACK, RFC 8985, generalises): a retransmission still missing
    /// after data sent later than it was SACKed was lost again. RFC 6675
    /// alone leaves it to the timeout. Returns how many were found.
    pub fn detect_lost_retransmissions(&mut self) -> usize {
        let high = self.high_sacked();
        let mut found = 0;
        let mut i = 0;
        while i < self.rtx.len() {
            let (s, e, nxt) = self.rtx[i];
            if high > nxt && !self.is_sacked(s) {
                self.rtx.swap_remove(i);
                self.relost.push((s, e));
                found += 1;
            } else {
                i += 1;
            }
        }
        self.relost.sort_unstable();
        found
    }

    /// The lowest retransmission found lost that is still missing.
    pub fn next_relost(&mut self, una: u64) -> Option<(u64, u64)> {
        while let Some(&(s, e)) = self.relost.first() {
            if e <= una || self.is_sacked(s) {
                self.relost.remove(0);
                continue;
            }
            return Some((s.max(una), e));
        }
        None
    }

    /// Takes `[seq, ..)` off the list of lost retransmissions (resent).
    pub fn resent(&mut self, seq: u64) {
        self.relost.retain(|r| !(r.0 <= seq && seq < r.1));
    }

    /// A recovery ended or a timeout struck: forget its retransmissions.
    pub fn clear_retransmissions(&mut self) {
        self.rtx.clear();
        self.relost.clear();
    }

    /// Records block `[start, end)`, clipped to `[una, high_data)` (a
    /// receiver's block is never trusted to stay within what was sent);
    /// returns the bytes newly SACKed.
    pub fn add(&mut self, una: u64, high_data: u64, start: u64, end: u64) -> u64 {
        let (s, e) = (start.max(una), end.min(high_data));
        if s >= e {
            return 0;
        }
        // ranges overlapping or touching [s, e) merge with it
        let lo = self.sacked.partition_point(|r| r.1 < s);
        let hi = self.sacked.partition_point(|r| r.0 <= e);
        let mut merged = (s, e);
        let mut before = 0;
        for r in &self.sacked[lo..hi] {
            merged = (merged.0.min(r.0), merged.1.max(r.1));
            before += r.1 - r.0;
        }
        self.sacked.splice(lo..hi, [merged]);
        let now = merged.1 - merged.0;
        self.sacked_bytes = self.sacked_bytes + now - before;
        now - before
    }

    /// Whether byte `seq` is SACKed.
    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.sacked.partition_point(|r| r.1 <= seq);
        self.sacked.get(i).is_some_and(|r| r.0 <= seq)
    }

    /// Every unSACKed byte below the returned point is lost (RFC 6675
    /// `IsLost`, by bytes: more than `(DupThresh - 1) x mss` SACKed above),
    /// or was outstanding at a timeout.
    pub fn lost_end(&self, mss: u64) -> u64 {
        let mut above = 0;
        let mut end = 0;
        for r in self.sacked.iter().rev() {
            above += r.1 - r.0;
            if above > (DUP_THRESH - 1) * mss {
                end = r.0;
                break;
            }
        }
        end.max(self.rto_lost)
    }

    /// Bytes in `[a, b)` that are not SACKed.
    fn unsacked(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let covered: u64 = self
            .sacked
            .iter()
            .map(|r| r.1.min(b).saturating_sub(r.0.max(a)))
            .sum();
        b - a - covered
    }

    /// RFC 6675 `SetPipe`: every unSACKed byte in `[una, high_data)` counts
    /// once if it is not lost and once more if it was retransmitted.
    pub fn pipe(&self, una: u64, high_data: u64, mss: u64) -> u64 {
        let lost = self.lost_end(mss).clamp(una, high_data);
        self.unsacked(lost, high_data) + self.unsacked(una, self.high_rxt.clamp(una, high_data))
    }

    /// RFC 6675 `NextSeg` rules 1 and 3 for a retransmission: the first
    /// unSACKed byte at or above `max(high_rxt, una)` and its extent (up to
    /// `mss`, never into a SACKed range) if it is lost, or (`rule3`) if it
    /// lies below the highest SACKed byte.
    pub fn next_retx(&self, una: u64, mss: u64, rule3: bool) -> Option<(u64, u64)> {
        let mut p = self.high_rxt.max(una);
        let mut i = self.sacked.partition_point(|r| r.1 <= p);
        if let Some(r) = self.sacked.get(i) {
            if r.0 <= p {
                p = r.1;
                i += 1;
            }
        }
        let limit = if rule3 {
            self.high_sacked()
        } else {
            self.lost_end(mss)
        };
        if p >= limit {
            return None;
        }
        let next = self.sacked.get(i).map_or(u64::MAX, |r| r.0);
        Some((p, (p + mss).min(next).min(limit)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    #[test]
    fn blocks_round_trip_and_respect_the_option_size() {
        let mut b = SackBlocks::NONE;
        assert!(b.push(5000, 6000, 7000));
        assert!(!b.push(5000, 4000, 4500), "below the cumulative ACK");
        assert!(!b.push(5000, 7000, 7000), "empty");
        assert!(!b.push(5000, 6000, 5000 + (1 << 33)), "too far above");
        for k in 1..MAX_BLOCKS as u64 {
            assert!(b.push(5000, 8000 * k, 8000 * k + 100));
        }
        assert!(!b.push(5000, 90_000, 91_000), "a fifth block");
        assert_eq!(b.len(), MAX_BLOCKS);
        assert_eq!(b.iter(5000).next(), Some((6000, 7000)));
        // 2 + 8 x 4 = 34 bytes, padded to 36: with the 12 bytes of an
        // aligned timestamp option that would exceed 40, hence 3 blocks
        assert_eq!(b.option_bytes(), 36);
        assert!(12 + (2 + 8 * blocks_allowed(true) as u32).next_multiple_of(4) <= 40);
        assert!((2 + 8 * blocks_allowed(false) as u32).next_multiple_of(4) <= 40);
        assert_eq!(SackBlocks::NONE.option_bytes(), 0);
    }

    #[test]
    fn ranges_merge_and_advance() {
        let mut s = Scoreboard::new();
        assert_eq!(s.add(0, 10 * M, 2 * M, 3 * M), M);
        assert_eq!(s.add(0, 10 * M, 4 * M, 5 * M), M);
        // touching both neighbours: one range
        assert_eq!(s.add(0, 10 * M, 3 * M, 4 * M), M);
        assert_eq!(s.ranges(), &[(2 * M, 5 * M)]);
        // a repeat adds nothing; a block past what was sent is clipped
        assert_eq!(s.add(0, 10 * M, 2 * M, 5 * M), 0);
        assert_eq!(s.add(0, 10 * M, 9 * M, 12 * M), M);
        assert_eq!(s.sacked_bytes(), 4 * M);
        assert!(s.is_sacked(2 * M) && !s.is_sacked(5 * M) && s.is_sacked(9 * M));
        s.advance(3 * M);
        assert_eq!(s.ranges(), &[(3 * M, 5 * M), (9 * M, 10 * M)]);
        assert_eq!(s.sacked_bytes(), 3 * M);
        s.advance(10 * M);
        assert!(s.ranges().is_empty());
        assert_eq!(s.sacked_bytes(), 0);
    }

    /// Segments 0 and 4 lost of 0..10, the rest SACKed: 0 is lost (more
    /// than 2 MSS SACKed above), 4 is lost too (5..10 above it), pipe
    /// counts nothing but what is retransmitted.
    #[test]
    fn is_lost_pipe_and_next_segment() {
        let mut s = Scoreboard::new();
        let high = 10 * M;
        s.add(0, high, M, 4 * M);
        assert_eq!(s.lost_end(M), M, "3 segments above 0");
        assert_eq!(s.pipe(0, 4 * M, M), 0);
        s.add(0, high, 5 * M, 6 * M);
        // only 1 segment above 4: 4 is not lost yet, 0 is
        assert_eq!(s.lost_end(M), M);
        assert_eq!(s.pipe(0, 6 * M, M), M);
        assert_eq!(s.next_retx(0, M, false), Some((0, M)));
        s.add(0, high, 6 * M, 8 * M);
        assert_eq!(s.lost_end(M), 5 * M);
        assert_eq!(s.pipe(0, 8 * M, M), 0);
        // retransmit 0: pipe counts it, next lost hole is 4
        s.high_rxt = M;
        assert_eq!(s.pipe(0, 8 * M, M), M);
        assert_eq!(s.next_retx(0, M, false), Some((4 * M, 5 * M)));
        s.high_rxt = 5 * M;
        assert_eq!(s.next_retx(0, M, false), None);
        assert_eq!(s.pipe(0, 8 * M, M), 2 * M);
        // unsent-to-the-receiver data above the highest SACK is not lost
        assert_eq!(s.pipe(0, 10 * M, M), 4 * M);
    }

    #[test]
    fn rule_three_retransmits_below_the_highest_sack() {
        let mut s = Scoreboard::new();
        // segment 0 lost, only segment 1 SACKed: not lost by IsLost
        s.add(0, 3 * M, M, 2 * M);
        assert_eq!(s.next_retx(0, M, false), None);
        assert_eq!(s.next_retx(0, M, true), Some((0, M)));
        // nothing unSACKed below the highest SACK once 0 was resent
        s.high_rxt = M;
        assert_eq!(s.next_retx(0, M, true), None);
    }

    /// A retransmission sent while `snd_nxt` was 10 is lost once data sent
    /// after it (above 10) is SACKed while it is still missing.
    #[test]
    fn lost_retransmissions_are_found_by_later_sacks() {
        let mut s = Scoreboard::new();
        s.add(0, 10 * M, M, 10 * M);
        s.retransmitted(0, M, 10 * M);
        assert_eq!(s.detect_lost_retransmissions(), 0);
        assert_eq!(s.next_relost(0), None);
        // data sent after the retransmission arrives
        s.add(0, 12 * M, 10 * M, 11 * M);
        assert_eq!(s.detect_lost_retransmissions(), 1);
        assert_eq!(s.next_relost(0), Some((0, M)));
        s.resent(0);
        assert_eq!(s.next_relost(0), None);
        // a retransmission that arrived is not reported
        s.retransmitted(0, M, 12 * M);
        s.advance(M);
        s.add(M, 14 * M, 12 * M, 13 * M);
        assert_eq!(s.detect_lost_retransmissions(), 0);
    }

    #[test]
    fn a_timeout_marks_everything_outstanding_lost() {
        let mut s = Scoreboard::new();
        s.add(0, 5 * M, 2 * M, 3 * M);
        s.rto_lost = 5 * M;
        assert_eq!(s.pipe(0, 5 * M, M), 0);
        // retransmissions skip the SACKed segment
        assert_eq!(s.next_retx(0, M, false), Some((0, M)));
        s.high_rxt = 2 * M;
        assert_eq!(s.next_retx(0, M, false), Some((3 * M, 4 * M)));
    }
}
