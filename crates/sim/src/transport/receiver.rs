//! Receivers: a cumulative-ACK receiver for the reliable transports (one
//! ACK per data packet, ECN echoed per packet, as the ns-3 anchor's
//! `DelAckCount = 1`; the timestamp echoed by RFC 7323's rules) and a
//! counting receiver for UDP.

use crate::packet::{Hdr, Kind};
use std::collections::BTreeMap;

/// Reassembles a byte stream and acknowledges it cumulatively.
#[derive(Clone, Debug, Default)]
pub struct StreamReceiver {
    total: u64,
    next: u64,
    ooo: BTreeMap<u64, u64>,
    /// RFC 7323 TS.Recent: the TSval to echo.
    ts_recent: u64,
    /// Data packets received (duplicates included).
    pub rx_pkts: u64,
    /// Data packets that carried nothing new.
    pub dup_pkts: u64,
}

impl StreamReceiver {
    /// Expects `total` bytes.
    pub fn new(total: u64) -> Self {
        StreamReceiver {
            total,
            ..Default::default()
        }
    }

    /// Every byte arrived.
    pub fn complete(&self) -> bool {
        self.next >= self.total
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.next
    }

    /// Takes a data segment `[seq, seq + len)` sent at TSval `ts` (0 =
    /// no timestamp); returns the ACK to send.
    ///
    /// The ACK echoes TS.Recent, updated only by a segment at or below the
    /// cumulative point (RFC 7323 section 4.3): an out-of-order segment's
    /// duplicate ACK echoes the last in-order one, and the ACK for a
    /// retransmission that fills a hole echoes the retransmission, so the
    /// sender's RTT samples are never too short and exist during recovery.
    pub fn on_data(&mut self, seq: u64, len: u32, ce: bool, ts: u64) -> Hdr {
        self.rx_pkts += 1;
        let end = seq + len as u64;
        if seq <= self.next && ts >= self.ts_recent {
            self.ts_recent = ts;
        }
        if end <= self.next {
            self.dup_pkts += 1;
        } else if seq <= self.next {
            self.next = end;
            while let Some((&s, &e)) = self.ooo.iter().next() {
                if s > self.next {
                    break;
                }
                self.ooo.remove(&s);
                self.next = self.next.max(e);
            }
        } else {
            let e = self.ooo.entry(seq).or_insert(end);
            *e = (*e).max(end);
        }
        Hdr {
            kind: Kind::Ack,
            seq: 0,
            len: 0,
            ack: self.next,
            ece: ce,
            ts: self.ts_recent,
        }
    }
}

/// Counts datagrams of a UDP flow, message by message (no ACKs, no
/// retransmission); a message counts once every one of its bytes arrived.
#[derive(Clone, Debug, Default)]
pub struct DatagramReceiver {
    ends: Vec<u64>,
    got: Vec<u64>,
    /// Whole messages received.
    pub messages: u32,
    /// Bytes received.
    pub bytes: u64,
    /// Packets received.
    pub rx_pkts: u64,
}

impl DatagramReceiver {
    /// Expects messages ending at the cumulative offsets `ends`.
    pub fn new(ends: Vec<u64>) -> Self {
        DatagramReceiver {
            got: vec![0; ends.len()],
            ends,
            ..Default::default()
        }
    }

    /// Takes the datagram carrying bytes `[seq, seq + len)`.
    pub fn on_data(&mut self, seq: u64, len: u32) {
        self.rx_pkts += 1;
        self.bytes += len as u64;
        let i = self.ends.partition_point(|&e| e <= seq);
        if i >= self.ends.len() {
            return;
        }
        let size = self.ends[i] - if i == 0 { 0 } else { self.ends[i - 1] };
        self.got[i] += len as u64;
        if self.got[i] == size {
            self.messages += 1;
        }
    }

    /// Every message arrived.
    pub fn complete(&self) -> bool {
        self.messages as usize == self.ends.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembles_out_of_order() {
        let mut r = StreamReceiver::new(300);
        assert_eq!(r.on_data(100, 100, false, 0).ack, 0);
        assert_eq!(r.on_data(200, 100, true, 0).ack, 0);
        let a = r.on_data(0, 100, false, 0);
        assert_eq!(a.ack, 300);
        assert!(r.complete());
        assert_eq!(r.on_data(0, 100, false, 0).ack, 300);
        assert_eq!(r.dup_pkts, 1);
    }

    /// RFC 7323 section 4.3: duplicate ACKs for out-of-order data echo the
    /// last in-order segment's TSval; the ACK for the hole's retransmission
    /// echoes the retransmission.
    #[test]
    fn echoes_timestamps_by_rfc_7323_rules() {
        let mut r = StreamReceiver::new(400);
        assert_eq!(r.on_data(0, 100, false, 10).ts, 10);
        // [100, 200) lost; later segments arrive out of order
        assert_eq!(r.on_data(200, 100, false, 30).ts, 10);
        assert_eq!(r.on_data(300, 100, false, 40).ts, 10);
        // the retransmission of the hole, sent at 90
        let a = r.on_data(100, 100, false, 90);
        assert_eq!((a.ack, a.ts), (400, 90));
    }
}
