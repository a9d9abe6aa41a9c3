//! Simulated packets and the pool that owns them.
//!
//! Packets live in a [`PacketPool`] and travel through the event list as
//! small [`PktId`] indices, so moving a packet from queue to pipe to node
//! never copies its payload.

/// Index of a packet in the [`PacketPool`].
pub type PktId = u32;

/// What a natively simulated transport packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// Payload bytes `[seq, seq + len)` of a flow.
    #[default]
    Data,
    /// Cumulative acknowledgement: every byte below `ack` arrived.
    Ack,
    /// An opaque datagram of a sans-IO endpoint (its bytes are in `payload`).
    Datagram,
    /// Connection setup, sender to receiver (header only; `[transport]
    /// handshake`).
    Syn,
    /// Connection setup answer, receiver to sender (header only).
    SynAck,
    /// EarlySend: the receiver has enough, stop sending (header only).
    Stop,
    /// Aeolus / ExpressPass: the receiver grants one MTU of data.
    Credit,
    /// Aeolus: sent after the unscheduled packets, never dropped
    /// selectively; `seq` carries the sender's transmission number.
    Probe,
    /// Aeolus: the receiver's answer to a probe (`seq` echoed).
    ProbeAck,
    /// Aeolus: the sender needs no more credits for now.
    CreditStop,
    /// Aeolus: the sender needs credits again (new data or a loss).
    CreditRequest,
}

/// The transport header of a natively simulated packet (64 bytes: one
/// cache line, the packet's second; see [`Packet`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hdr {
    /// Data, ACK or opaque datagram.
    pub kind: Kind,
    /// First payload byte (data) or message index (UDP).
    pub seq: u64,
    /// Payload bytes in this packet.
    pub len: u32,
    /// Cumulative ACK (ACK packets).
    pub ack: u64,
    /// ECN echo: the data packet this ACK answers carried CE (DCTCP).
    pub ece: bool,
    /// TCP timestamp option (RFC 7323), virtual ns: a data packet's TSval
    /// (its send time), an ACK's TSecr (the echoed TSval); 0 = none.
    pub ts: u64,
    /// SACK option (RFC 2018) of an ACK; empty on everything else.
    pub sack: crate::transport::sack::SackBlocks,
}

/// One packet in flight.
///
/// Laid out by hand (`repr(C)`, cache-line aligned, 128 bytes): what
/// every hop reads (destination, ECMP hash, size, queue, rank, flags) fills
/// the first line; the transport header, read only at the ends, is the
/// second. A large fabric's packets are far from the caches, so a hop
/// costs one line of the packet and a delivery two (before: two and three).
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct Packet {
    /// Flow (native transports) or connection slot (endpoints) it belongs to.
    pub flow: u32,
    /// Sending host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// ECMP hash of the flow's 5-tuple.
    pub hash: u32,
    /// Switch queue (0 = highest priority).
    pub queue: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Congestion experienced (set by a switch).
    pub ce: bool,
    /// Bit errors hit a packet that has no payload bytes to flip.
    pub corrupted: bool,
    /// Aeolus's unscheduled packets: a switch drops them first (selective
    /// dropping, `QueueConfig::droppable_limit_bytes`).
    pub droppable: bool,
    /// A native transport's data packet (`hdr.kind == Data`, no payload
    /// bytes): set by [`PacketPool::alloc`], so that a host NIC's TSQ
    /// accounting reads the packet's first line only, not its header.
    pub native_data: bool,
    /// pFabric rank: lower is more urgent (remaining flow bytes).
    pub rank: u64,
    /// Datagram bytes of sans-IO endpoints (empty for native transports).
    pub payload: Vec<u8>,
    /// Transport header of native transports.
    pub hdr: Hdr,
}

/// What a hop reads of a native transport packet, given to
/// [`PacketPool::alloc_native`] (the fields of [`Packet`]'s first line that
/// its sender chooses; the switches' marks start clear).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hop {
    /// [`Packet::flow`].
    pub flow: u32,
    /// [`Packet::src`].
    pub src: u32,
    /// [`Packet::dst`].
    pub dst: u32,
    /// [`Packet::size`].
    pub size: u32,
    /// [`Packet::hash`].
    pub hash: u32,
    /// [`Packet::queue`].
    pub queue: u8,
    /// [`Packet::ect`].
    pub ect: bool,
    /// [`Packet::droppable`].
    pub droppable: bool,
    /// [`Packet::rank`].
    pub rank: u64,
}

/// Owns every live packet; freed slots are reused, and freed payload
/// buffers go to a spare list that [`PacketPool::alloc_with_payload`] draws
/// from, so datagrams cost no allocation once the pool is warm.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    spare: Vec<Vec<u8>>,
    live: usize,
    peak: usize,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `p` and returns its id.
    pub fn alloc(&mut self, mut p: Packet) -> PktId {
        p.native_data = p.hdr.kind == Kind::Data && p.payload.is_empty();
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }

    /// Stores a native transport packet (no payload bytes) and returns its
    /// id: what [`PacketPool::alloc`] stores for the same fields, but the
    /// slot (reused, or a new default one) is written field by field where
    /// it lies, not built whole (128 bytes) and copied in, and its payload,
    /// left empty by [`PacketPool::free`], is not dropped and replaced.
    #[inline(always)]
    pub fn alloc_native(&mut self, h: Hop, hdr: &Hdr) -> PktId {
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.grow(),
        };
        self.live += 1;
        self.peak = self.peak.max(self.live);
        let p = &mut self.slots[id as usize];
        debug_assert!(p.payload.capacity() == 0, "a freed slot keeps no payload");
        p.payload.clear();
        p.flow = h.flow;
        p.src = h.src;
        p.dst = h.dst;
        p.size = h.size;
        p.hash = h.hash;
        p.queue = h.queue;
        p.ect = h.ect;
        p.ce = false;
        p.corrupted = false;
        p.droppable = h.droppable;
        p.native_data = hdr.kind == Kind::Data;
        p.rank = h.rank;
        p.hdr = *hdr;
        id
    }

    /// `alloc_native` when no slot is free (only while the pool warms
    /// up): a default slot is added and its id returned, for the caller to
    /// fill like a reused one (`Packet::default()` holds an empty payload,
    /// no marks). Out of line and cold, so the hot path builds no `Hop` or
    /// 128-byte `Packet` on its callers' stacks.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> PktId {
        self.slots.push(Packet::default());
        (self.slots.len() - 1) as PktId
    }

    /// Stores a sans-IO endpoint's datagram with a copy of `payload` (in a
    /// recycled buffer) and returns its id: what
    /// [`PacketPool::alloc_with_payload`] stores for the same fields, but
    /// written in place as [`PacketPool::alloc_native`] writes (the k = 12
    /// ATP run puts ~0.5 M datagrams a simulated ms on the wire).
    #[inline]
    pub fn alloc_datagram(&mut self, h: Hop, hdr: &Hdr, payload: &[u8]) -> PktId {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.extend_from_slice(payload);
        let id = self.alloc_native(h, hdr);
        let p = &mut self.slots[id as usize];
        p.native_data &= buf.is_empty();
        p.payload = buf;
        id
    }

    /// Stores `p` with a copy of `payload` (in a recycled buffer) as its
    /// payload and returns its id.
    pub fn alloc_with_payload(&mut self, mut p: Packet, payload: &[u8]) -> PktId {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.extend_from_slice(payload);
        p.payload = buf;
        self.alloc(p)
    }

    /// Returns the slot of `id` to the pool, and its payload buffer to the
    /// spare list.
    ///
    /// A native packet's slot holds no buffer: its payload is left as it is
    /// (empty, nothing allocated), where taking it wrote an empty `Vec`
    /// over it and tested the one taken (~10 instructions a packet).
    #[inline(always)]
    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        if self.slots[id as usize].payload.capacity() > 0 {
            self.spare_payload(id);
        }
        self.free.push(id);
    }

    /// Moves the payload buffer of packet `id` to the spare list.
    #[inline]
    fn spare_payload(&mut self, id: PktId) {
        let mut buf = std::mem::take(&mut self.slots[id as usize].payload);
        buf.clear();
        self.spare.push(buf);
    }

    /// Hints the CPU to start loading packet `id`'s first line (what a
    /// hop reads), and its second (the transport header) if `header`.
    #[inline]
    pub fn prefetch(&self, id: PktId, header: bool) {
        if let Some(p) = self.slots.get(id as usize) {
            prefetch(p);
            if header {
                prefetch(&p.hdr);
            }
        }
    }

    /// Shared access to packet `id`'s slot, if the pool has one.
    #[inline]
    pub fn try_get(&self, id: PktId) -> Option<&Packet> {
        self.slots.get(id as usize)
    }

    /// Shared access to a live packet.
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    /// Mutable access to a live packet.
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets alive now.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most packets alive at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

/// Asks the CPU to start loading the cache line that holds `x`. A large
/// simulation's state is far bigger than the caches, and what the next
/// event touches first is known one event ahead: starting its load early
/// overlaps the miss with the current event's work (-8 % CPU time on the
/// k = 12 ATP run, median of six alternating runs).
#[inline]
pub(crate) fn prefetch<T>(x: &T) {
    prefetch_addr((x as *const T).cast::<u8>());
}

/// [`prefetch`] for every cache line of `x` (at most four).
#[inline]
pub(crate) fn prefetch_lines<T>(x: &T) {
    let p = (x as *const T).cast::<u8>();
    let lines = std::mem::size_of::<T>().div_ceil(64).min(4);
    for i in 0..lines {
        prefetch_addr(p.wrapping_add(64 * i));
    }
}

/// Asks the CPU to start loading the cache line at address `p` (a hint:
/// any address is safe).
#[inline]
pub(crate) fn prefetch_addr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint to the cache; it never faults and its
    // result is never read, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The packet `alloc` stores for a hop's fields and a header.
    fn whole(h: Hop, d: Hdr) -> Packet {
        Packet {
            flow: h.flow,
            src: h.src,
            dst: h.dst,
            size: h.size,
            hash: h.hash,
            queue: h.queue,
            ect: h.ect,
            droppable: h.droppable,
            rank: h.rank,
            hdr: d,
            ..Packet::default()
        }
    }

    /// `alloc_native` stores what `alloc` stores for the same fields, in a
    /// fresh slot and in reused ones whatever they held before (a
    /// datagram with payload bytes, CE and corruption marks).
    #[test]
    fn alloc_native_equals_alloc_of_the_same_packet() {
        let hop = |i: u32| Hop {
            flow: i,
            src: i + 1,
            dst: i + 2,
            size: 100 + i,
            hash: i * 7,
            queue: (i % 3) as u8,
            ect: i.is_multiple_of(2),
            droppable: i % 4 == 1,
            rank: i as u64 * 11,
        };
        let hdr = |i: u32| Hdr {
            kind: [Kind::Data, Kind::Ack, Kind::Credit][i as usize % 3],
            seq: i as u64 * 1000,
            len: i,
            ack: i as u64 * 3,
            ece: i % 2 == 1,
            ts: i as u64,
            ..Hdr::default()
        };
        let (mut a, mut b) = (PacketPool::new(), PacketPool::new());
        let mut ids = Vec::new();
        for i in 0..12u32 {
            // slots first hold datagrams with payloads and marks
            let dirty = Packet {
                ce: true,
                corrupted: true,
                rank: 99,
                ..whole(hop(i + 50), hdr(i + 1))
            };
            let x = a.alloc_with_payload(dirty.clone(), &[1, 2, 3]);
            let y = b.alloc_with_payload(dirty, &[1, 2, 3]);
            assert_eq!(x, y);
            ids.push(x);
        }
        for (n, &id) in ids.iter().enumerate() {
            if n % 3 != 2 {
                a.free(id);
                b.free(id);
            }
        }
        for i in 0..20u32 {
            let x = a.alloc(whole(hop(i), hdr(i)));
            let y = b.alloc_native(hop(i), &hdr(i));
            assert_eq!(x, y, "packet {i}");
            let (p, q) = (a.get(x), b.get(y));
            assert_eq!(format!("{p:?}"), format!("{q:?}"), "packet {i}");
            assert!(q.payload.is_empty());
        }
        assert_eq!((a.live(), a.peak()), (b.live(), b.peak()));
    }

    /// `free` keeps a payload's buffer for reuse and leaves a native
    /// packet's slot (no buffer) as it is: a freed slot holds no payload
    /// either way, and only real buffers reach the spare list.
    #[test]
    fn free_spares_payload_buffers_only() {
        let mut pool = PacketPool::new();
        let d = pool.alloc_with_payload(Packet::default(), &[7; 300]);
        let n = pool.alloc_native(Hop::default(), &Hdr::default());
        assert_eq!(pool.live(), 2);
        pool.free(n);
        assert!(pool.spare.is_empty());
        assert_eq!(pool.slots[n as usize].payload.capacity(), 0);
        pool.free(d);
        assert_eq!(pool.spare.len(), 1);
        assert!(pool.spare[0].is_empty() && pool.spare[0].capacity() >= 300);
        assert_eq!(pool.slots[d as usize].payload.capacity(), 0);
        assert_eq!(pool.live(), 0);
        // both slots come back, the datagram's buffer with them
        let again = pool.alloc_datagram(Hop::default(), &Hdr::default(), &[1, 2]);
        assert!(again == d || again == n);
        assert_eq!(pool.get(again).payload, vec![1, 2]);
        assert!(pool.spare.is_empty());
    }

    /// `alloc_datagram` stores what `alloc_with_payload` stores for the
    /// same fields and bytes, in a fresh slot and in reused ones (whatever
    /// they held, payload buffers recycled), and hands out the same ids.
    #[test]
    fn alloc_datagram_equals_alloc_with_payload() {
        let hop = |i: u32| Hop {
            flow: i * 3,
            src: i,
            dst: i + 7,
            size: 60 + i,
            hash: i.wrapping_mul(2_654_435_761),
            queue: (i % 8) as u8,
            ect: !i.is_multiple_of(3),
            droppable: false,
            rank: 0,
        };
        let hdr = |i: u32| Hdr {
            kind: [Kind::Datagram, Kind::Data, Kind::Ack][i as usize % 3],
            seq: (5000 + i as u64) << 16 | (5001 + i as u64),
            ..Hdr::default()
        };
        let bytes = |i: u32| (0..(i * 37) % 200).map(|b| b as u8).collect::<Vec<u8>>();
        let (mut a, mut b) = (PacketPool::new(), PacketPool::new());
        let mut ids = Vec::new();
        for i in 0..16u32 {
            // slots first hold packets with marks, some with payloads
            let dirty = Packet {
                ce: true,
                corrupted: true,
                rank: 99,
                ..whole(hop(i + 50), hdr(i + 1))
            };
            let (x, y) = if i % 2 == 0 {
                (a.alloc(dirty.clone()), b.alloc(dirty))
            } else {
                (
                    a.alloc_with_payload(dirty.clone(), &bytes(i + 3)),
                    b.alloc_with_payload(dirty, &bytes(i + 3)),
                )
            };
            assert_eq!(x, y);
            ids.push(x);
        }
        for (n, &id) in ids.iter().enumerate() {
            if n % 4 != 3 {
                a.free(id);
                b.free(id);
            }
        }
        for i in 0..24u32 {
            let x = a.alloc_with_payload(whole(hop(i), hdr(i)), &bytes(i));
            let y = b.alloc_datagram(hop(i), &hdr(i), &bytes(i));
            assert_eq!(x, y, "packet {i}");
            let (p, q) = (a.get(x), b.get(y));
            assert_eq!(format!("{p:?}"), format!("{q:?}"), "packet {i}");
            assert_eq!(q.payload, bytes(i));
        }
        assert_eq!((a.live(), a.peak()), (b.live(), b.peak()));
    }

    /// The pool marks native data packets, whatever the caller set, and
    /// nothing else (ACKs, datagrams with payload bytes).
    #[test]
    fn alloc_marks_native_data_packets() {
        let mut pool = PacketPool::new();
        let with = |kind| Packet {
            native_data: kind != Kind::Data,
            hdr: Hdr {
                kind,
                ..Hdr::default()
            },
            ..Packet::default()
        };
        let data = pool.alloc(with(Kind::Data));
        let ack = pool.alloc(with(Kind::Ack));
        let dgram = pool.alloc_with_payload(with(Kind::Data), &[1, 2, 3]);
        assert!(pool.get(data).native_data);
        assert!(!pool.get(ack).native_data);
        assert!(!pool.get(dgram).native_data);
        // a reused slot is marked afresh
        pool.free(data);
        let again = pool.alloc(with(Kind::Credit));
        assert_eq!(again, data);
        assert!(!pool.get(again).native_data);
    }

    /// What a hop reads lies in the packet's first cache line.
    #[test]
    fn hop_fields_share_one_cache_line() {
        assert_eq!(align_of::<Packet>(), 64);
        assert!(offset_of!(Packet, rank) + 8 <= 64);
        assert!(offset_of!(Packet, droppable) < 64);
        assert!(offset_of!(Packet, native_data) < 64);
        assert!(offset_of!(Packet, payload) + size_of::<Vec<u8>>() <= 64);
        // the header, read where the packet is delivered, is the second line
        assert_eq!(size_of::<Hdr>(), 64);
        assert_eq!(size_of::<Packet>(), 128);
    }
}
