//! Control packets of the native transports: connection setup (SYN /
//! SYN-ACK, `[transport] handshake`) and EarlySend's stop signal. All are
//! header-only packets that cross the simulated network in the flow's
//! queue, so they pay its real delay and may be lost.

use super::Simulator;
use crate::packet::{Hdr, Kind, Packet};
use crate::scheme::{Proto, Scheme};
use approxnet_proto::time::Instant;
use std::collections::hash_map::Entry;

/// Native connections between two hosts for one scheme, by (scheme,
/// sender, receiver): a set-up connection (later flows send at once, a
/// persistent connection) or one whose SYN is out, with the flows that
/// wait for its SYN-ACK.
///
/// The table keeps an entry per host pair for the whole run (a later job
/// on the pair reuses it): 10^5-10^6 entries on a large fat-tree. An entry
/// is 16 bytes, the key and a `u32` ([`OPEN`] or the index of the waiting
/// list in `waiting`, a slab whose lists are reused once their connection
/// opens), where a `Vec` inline made it 48: the table's random probes (one
/// when a flow starts, one at its SYN-ACK) stay in the caches three times
/// longer. Looked up, never iterated, so its fast integer hash changes no
/// result.
#[derive(Debug, Default)]
pub(super) struct Conns {
    map: crate::int_map::IntMap<(Scheme, u32, u32), u32>,
    waiting: Vec<Vec<u32>>,
    free: Vec<u32>,
}

/// A set-up connection in [`Conns`]'s map.
const OPEN: u32 = u32::MAX;

impl Conns {
    /// Marks the connection `key` set up; returns its waiting list's slot
    /// and the flows that waited for it (`None` if it was open already or
    /// unknown). The caller hands the list back with [`Conns::recycle`].
    fn set_open(&mut self, key: (Scheme, u32, u32)) -> Option<(u32, Vec<u32>)> {
        match self.map.insert(key, OPEN) {
            Some(i) if i != OPEN => Some((i, std::mem::take(&mut self.waiting[i as usize]))),
            _ => None,
        }
    }

    /// Frees waiting-list slot `i`, keeping `list`'s allocation for reuse.
    fn recycle(&mut self, i: u32, mut list: Vec<u32>) {
        list.clear();
        self.waiting[i as usize] = list;
        self.free.push(i);
    }
}

/// A waiting list in `waiting` (a freed slot if any) holding `fid`; returns
/// its index.
fn new_list(waiting: &mut Vec<Vec<u32>>, free: &mut Vec<u32>, fid: u32) -> u32 {
    match free.pop() {
        Some(i) => {
            waiting[i as usize].push(fid);
            i
        }
        None => {
            waiting.push(vec![fid]);
            (waiting.len() - 1) as u32
        }
    }
}

/// `seq` of the ACK that completes a handshake (`[transport]
/// handshake_ack`): it travels as a header-only `Syn` packet, sender to
/// receiver, which the receiver ignores (a SYN has `seq` 0).
const HANDSHAKE_ACK_SEQ: u64 = 1;

impl Simulator {
    /// A new flow starts sending once its host pair's connection is set up
    /// (at once when it already is, when handshakes are off, or for UDP).
    pub(super) fn connect_flow(&mut self, now: Instant, fid: u32) {
        let f = &self.flows[fid as usize];
        if !self.tp.handshake || f.proto == Proto::Udp {
            self.open_flow(now, fid);
            return;
        }
        if !self.tp.reuse_connections {
            // a connection of its own: its SYN-ACK opens this flow only
            self.flows[fid as usize].open = false;
            self.send_syn(now, fid);
            return;
        }
        let key = (self.jobs[f.job as usize].scheme, f.src, f.dst);
        // one probe of the table (it holds a connection per host pair)
        match self.conns.map.entry(key) {
            Entry::Occupied(o) => match *o.get() {
                OPEN => self.open_flow(now, fid),
                i => {
                    self.conns.waiting[i as usize].push(fid);
                    self.flows[fid as usize].open = false;
                }
            },
            Entry::Vacant(v) => {
                v.insert(new_list(&mut self.conns.waiting, &mut self.conns.free, fid));
                self.flows[fid as usize].open = false;
                self.send_syn(now, fid);
            }
        }
    }

    /// The flow may send: hand its sender everything produced so far.
    fn open_flow(&mut self, now: Instant, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.open = true;
        f.syn_deadline = None;
        let produced = f.produced;
        let data =
            super::flows::with_outbox!(self, fid, |s, out| s.produce(now, produced, &mut out));
        self.flush_flow(now, fid, data);
    }

    fn send_syn(&mut self, now: Instant, fid: u32) {
        self.send_control(now, fid, Kind::Syn, 0);
        // a lost SYN or SYN-ACK is resent after the initial RTO
        let at = now + self.tp.rto.initial;
        self.flows[fid as usize].syn_deadline = Some(at);
        self.schedule_flow_timer(at, fid);
    }

    /// The flow timer of a flow still waiting for its SYN-ACK.
    pub(super) fn syn_timer(&mut self, now: Instant, fid: u32) {
        if matches!(self.flows[fid as usize].syn_deadline, Some(d) if d <= now) {
            self.send_syn(now, fid);
        }
    }

    /// The sender's ACK of the SYN-ACK, ahead of its first data, when
    /// `[transport] handshake_ack` is on (as every real TCP sends it; ns-3's
    /// too: in an incast these 54-byte packets between the first windows
    /// shift which sender's packet finds room in a full queue).
    fn handshake_ack(&mut self, now: Instant, fid: u32) {
        if self.tp.handshake_ack {
            self.send_control(now, fid, Kind::Syn, HANDSHAKE_ACK_SEQ);
        }
    }

    /// Puts a header-only control packet of flow `fid` on the wire: a SYN
    /// from the sender, the other kinds (answers, stop, credits) from the
    /// receiver; `seq` is echoed where the kind needs it.
    pub(super) fn send_control(&mut self, now: Instant, fid: u32, kind: Kind, seq: u64) {
        let f = &self.flows[fid as usize];
        let (from, to) = match kind {
            Kind::Syn => (f.src, f.dst),
            _ => (f.dst, f.src),
        };
        let p = Packet {
            flow: fid,
            src: from,
            dst: to,
            size: self.tp.header_bytes,
            hash: f.hash,
            queue: f.queue,
            hdr: Hdr {
                kind,
                seq,
                ..Hdr::default()
            },
            ..Packet::default()
        };
        self.send_from_host(now, from, p);
    }

    /// A control packet of flow `fid` arrived at its destination.
    pub(super) fn control_packet(&mut self, now: Instant, fid: u32, hdr: &Hdr) {
        match hdr.kind {
            Kind::Syn if hdr.seq == HANDSHAKE_ACK_SEQ => {}
            Kind::Syn => self.send_control(now, fid, Kind::SynAck, 0),
            Kind::SynAck if !self.tp.reuse_connections => {
                // a resent SYN may be answered twice: open once
                if self.flows[fid as usize].open {
                    return;
                }
                self.handshake_ack(now, fid);
                self.open_flow(now, fid);
            }
            Kind::SynAck => {
                let f = &self.flows[fid as usize];
                let key = (self.jobs[f.job as usize].scheme, f.src, f.dst);
                if let Some((i, waiting)) = self.conns.set_open(key) {
                    self.handshake_ack(now, fid);
                    for &w in &waiting {
                        self.open_flow(now, w);
                    }
                    self.conns.recycle(i, waiting);
                }
            }
            Kind::Stop => {
                let f = &mut self.flows[fid as usize];
                f.cancelled = true;
                f.stopped_at = Some(now);
            }
            _ => {}
        }
    }
}
