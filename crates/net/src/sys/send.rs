//! A bounded queue of outgoing datagrams, flushed with `sendmmsg`.
//!
//! Consecutive datagrams to the same destination with the same marking and
//! coverage are coalesced into one UDP GSO super-datagram (all segments the
//! same size except a shorter last one, at most [`MAX_GSO_SEGMENTS`]). One
//! `sendmmsg` then carries up to [`SEND_BATCH`] of those messages, each with
//! its own `IP_TOS` (DSCP + ECN) and `SO_PRIORITY` control message. UDP-Lite
//! coverage is per socket, so a batch stops where the coverage changes.

use super::cmsg::{CmsgBuf, Encoder};
use super::socket::{DefaultMarking, Socket, SocketKind};
use super::{MAX_GSO_SEGMENTS, MAX_UDP_PAYLOAD};
use socket2::SockAddr;
use std::io;
use std::net::SocketAddr;

/// Messages handed to one `sendmmsg` call.
pub const SEND_BATCH: usize = 64;

/// Per-datagram IP marking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marking {
    /// The IP TOS byte: DSCP in the upper six bits, ECN in the lower two.
    pub tos: u8,
    /// `SO_PRIORITY` for the local qdisc, or `None` for the socket default.
    pub priority: Option<u32>,
}

impl Marking {
    /// Marking from a DSCP codepoint (0..=63, higher bits ignored), an ECN
    /// codepoint (0..=3) and an optional priority.
    pub fn new(dscp: u8, ecn: u8, priority: Option<u32>) -> Marking {
        Marking {
            tos: ((dscp & 0x3f) << 2) | (ecn & 0x03),
            priority,
        }
    }
}

/// Counters of a [`SendQueue`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendStats {
    /// Datagrams the kernel accepted.
    pub datagrams: u64,
    /// Payload bytes the kernel accepted.
    pub bytes: u64,
    /// `sendmmsg` calls made (including ones that would block).
    pub syscalls: u64,
    /// Messages that carried more than one GSO segment.
    pub gso_messages: u64,
    /// Times the kernel's send buffer was full.
    pub would_block: u64,
    /// Datagrams dropped because the kernel refused them with an error.
    pub errors: u64,
    /// Datagrams refused because the queue was full.
    pub queue_full: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    dst: SocketAddr,
    mark: Marking,
    cscov: u16,
    off: usize,
    len: usize,
    seg: usize,
    /// Segments of `seg` bytes (the last may be shorter): `len.div_ceil(seg)`,
    /// kept so that a commit tests its GSO merge without two divisions per
    /// datagram (issue 19).
    segs: usize,
    segs_sent: usize,
}

impl Entry {
    fn segments(&self) -> usize {
        debug_assert_eq!(self.segs, self.len.div_ceil(self.seg));
        self.segs
    }
}

/// The `sendmmsg` message headers and iovecs, kept between calls: a send
/// writes only the entries it uses, instead of zeroing `SEND_BATCH` of
/// each (~6.6 KB, a `memset` of ~1,400 instructions per call: 19 % of a
/// receiving server's instructions, one ACK per call; docs/performance.md,
/// "the runtime on the batched receive call").
struct Headers {
    hdrs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
}

// SAFETY: the raw pointers inside are rewritten by `SendQueue::send_once`
// for every entry a call uses, before the call, to point into the owning
// `SendQueue`'s buffers, and are never read anywhere else; moving the
// queue to another thread is sound.
unsafe impl Send for Headers {}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Headers({})", self.hdrs.len())
    }
}

/// Outgoing datagrams waiting for the kernel, bounded in count and bytes.
#[derive(Debug)]
pub struct SendQueue {
    /// Fixed storage, allocated once; `used` bytes of it hold queued data.
    buf: Vec<u8>,
    used: usize,
    entries: Vec<Entry>,
    head: usize,
    queued: usize,
    max_datagrams: usize,
    max_bytes: usize,
    /// Most segments coalesced into one GSO super-datagram.
    gso_segments: usize,
    addrs: Vec<SockAddr>,
    cmsgs: Vec<CmsgBuf>,
    headers: Headers,
    /// Per message of one `sendmmsg`: (entry, segments, bytes, named).
    plan: Vec<(usize, usize, usize, bool)>,
    last_error: Option<io::ErrorKind>,
    /// Counters since creation.
    pub stats: SendStats,
}

impl SendQueue {
    /// A queue holding at most `max_datagrams` datagrams and `max_bytes`
    /// payload bytes (both at least 1).
    pub fn new(max_datagrams: usize, max_bytes: usize) -> SendQueue {
        let max_bytes = max_bytes.max(1);
        SendQueue {
            buf: vec![0; max_bytes],
            used: 0,
            entries: Vec::with_capacity(max_datagrams.max(1)),
            head: 0,
            queued: 0,
            max_datagrams: max_datagrams.max(1),
            gso_segments: MAX_GSO_SEGMENTS,
            max_bytes,
            addrs: Vec::with_capacity(SEND_BATCH),
            cmsgs: vec![CmsgBuf::new(); SEND_BATCH],
            // SAFETY: all-zero mmsghdr / iovec are valid empty values.
            headers: Headers {
                hdrs: vec![unsafe { std::mem::zeroed() }; SEND_BATCH],
                iovs: vec![unsafe { std::mem::zeroed() }; SEND_BATCH],
            },
            plan: Vec::with_capacity(SEND_BATCH),
            last_error: None,
            stats: SendStats::default(),
        }
    }

    /// Caps the segments of one GSO super-datagram at `n` (1..=64). A
    /// qdisc sees a super-datagram as one packet: a full bfifo drops all its
    /// segments at once, so a small cap trades syscall savings for smaller
    /// loss bursts at a shallow bottleneck.
    pub fn with_gso_segments(mut self, n: usize) -> SendQueue {
        self.gso_segments = n.clamp(1, MAX_GSO_SEGMENTS);
        self
    }

    /// Datagrams waiting to be sent.
    pub fn len(&self) -> usize {
        self.queued
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// Whether a datagram of `len` bytes would be refused now.
    pub fn is_full_for(&self, len: usize) -> bool {
        self.queued >= self.max_datagrams || self.used + len > self.max_bytes
    }

    /// The kind of the last send error that dropped datagrams, if any.
    pub fn last_error(&self) -> Option<io::ErrorKind> {
        self.last_error
    }

    /// Queues one datagram (a copy of `bytes`). `cscov` is the raw UDP-Lite
    /// coverage (ignored on UDP sockets); `gso` allows coalescing with the
    /// previous datagram. Returns false, queuing nothing, when the queue is
    /// full or `bytes` is empty or longer than a UDP payload.
    pub fn push(
        &mut self,
        dst: SocketAddr,
        mark: Marking,
        cscov: u16,
        bytes: &[u8],
        gso: bool,
    ) -> bool {
        let l = bytes.len();
        match self.reserve(l) {
            Some(slot) => slot[..l].copy_from_slice(bytes),
            None => {
                self.stats.queue_full += 1;
                return false;
            }
        }
        self.commit(l, dst, mark, cscov, gso)
    }

    /// Room to write the next datagram in place (at most `max_len` bytes,
    /// capped at a UDP payload), or `None` when the queue is full. Follow
    /// with [`SendQueue::commit`]; writing without committing queues nothing.
    pub fn reserve(&mut self, max_len: usize) -> Option<&mut [u8]> {
        let max_len = max_len.min(MAX_UDP_PAYLOAD);
        if max_len == 0 || self.is_full_for(max_len) {
            return None;
        }
        Some(&mut self.buf[self.used..self.used + max_len])
    }

    /// Queues the `len` bytes written into the slot [`SendQueue::reserve`]
    /// returned. Returns false when `len` is 0 or does not fit.
    // Inlined into the driver's fill loop, its per-datagram caller: the
    // call's frame was ~15 instructions a datagram (issue 19); a new GSO
    // entry stays out of line (`push_entry`).
    #[inline]
    pub fn commit(
        &mut self,
        len: usize,
        dst: SocketAddr,
        mark: Marking,
        cscov: u16,
        gso: bool,
    ) -> bool {
        let l = len;
        if l == 0 || l > MAX_UDP_PAYLOAD || self.is_full_for(l) {
            self.stats.queue_full += 1;
            return false;
        }
        let off = self.used;
        self.used += l;
        self.queued += 1;
        if gso && self.entries.len() > self.head {
            if let Some(last) = self.entries.last_mut() {
                if last.dst == dst
                    && last.mark == mark
                    && last.cscov == cscov
                    && last.segs_sent == 0
                    && l <= last.seg
                    // every segment so far full (`len % seg == 0`: each
                    // merge took at most `seg` bytes after full ones)
                    && last.len == last.segs * last.seg
                    && last.segments() < self.gso_segments
                    && last.len + l <= MAX_UDP_PAYLOAD
                    && last.off + last.len == off
                {
                    last.len += l;
                    last.segs += 1;
                    return true;
                }
            }
        }
        self.push_entry(dst, mark, cscov, off, l);
        true
    }

    /// [`SendQueue::commit`]'s datagram that opens a new entry.
    #[inline(never)]
    fn push_entry(&mut self, dst: SocketAddr, mark: Marking, cscov: u16, off: usize, l: usize) {
        self.entries.push(Entry {
            dst,
            mark,
            cscov,
            off,
            len: l,
            seg: l,
            segs: 1,
            segs_sent: 0,
        });
    }

    /// Sends as much as the kernel takes. Returns the datagrams sent; stops
    /// quietly when the socket would block (check [`SendQueue::is_empty`]).
    /// Datagrams the kernel refuses with an error are dropped and counted.
    pub fn flush(&mut self, sock: &Socket) -> io::Result<usize> {
        let mut total = 0;
        let mut einval_retry = false;
        while self.head < self.entries.len() {
            match self.send_once(sock) {
                Ok(n) => {
                    total += n;
                    einval_retry = false;
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => {
                        self.stats.would_block += 1;
                        break;
                    }
                    io::ErrorKind::Interrupted => continue,
                    _ => {
                        let code = e.raw_os_error();
                        let head = self.entries[self.head];
                        let gso_msg = sock.gso_enabled() && head.segments() - head.segs_sent > 1;
                        if (code == Some(libc::EINVAL) || code == Some(libc::EPERM))
                            && head.mark.priority.is_some()
                            && sock.prio_cmsg()
                            && !einval_retry
                        {
                            // Older kernels refuse SO_PRIORITY as a cmsg.
                            sock.disable_prio_cmsg();
                            einval_retry = true;
                            continue;
                        }
                        if (code == Some(libc::EIO) || code == Some(libc::EINVAL)) && gso_msg {
                            // No GSO on this path (no checksum offload, UDP-Lite...).
                            sock.disable_gso();
                            continue;
                        }
                        // Drop the head datagram so one bad destination cannot wedge the queue.
                        self.last_error = Some(e.kind());
                        let segs = if sock.gso_enabled() {
                            head.segments() - head.segs_sent
                        } else {
                            1
                        };
                        self.stats.errors += segs as u64;
                        self.advance(self.head, segs);
                    }
                },
            }
        }
        if self.head == self.entries.len() {
            self.entries.clear();
            self.used = 0;
            self.head = 0;
            self.queued = 0;
        }
        Ok(total)
    }

    fn advance(&mut self, idx: usize, segs: usize) {
        let e = &mut self.entries[idx];
        e.segs_sent += segs;
        self.queued -= segs;
        if e.segs_sent >= e.segments() && idx == self.head {
            self.head += 1;
            while self.head < self.entries.len()
                && self.entries[self.head].segs_sent >= self.entries[self.head].segments()
            {
                self.head += 1;
            }
        }
    }

    /// One `sendmmsg` over messages from the head sharing coverage (and
    /// priority, when it cannot travel per packet).
    fn send_once(&mut self, sock: &Socket) -> io::Result<usize> {
        let gso = sock.gso_enabled();
        let prio_cmsg = sock.prio_cmsg();
        let first = self.entries[self.head];
        if sock.kind() == SocketKind::UdpLite {
            sock.set_send_cscov(first.cscov)?;
        }
        if !prio_cmsg {
            if let Some(p) = first.mark.priority {
                sock.set_priority(p)?;
            }
        }
        let Headers { hdrs, iovs } = &mut self.headers;
        self.plan.clear();
        // Datagrams to the connected peer go without an address: the
        // kernel then uses the socket's cached route.
        let connected = sock.connected_peer();
        // Marking the socket applies by itself travels without a control
        // message (an IP_TOS / SO_PRIORITY one makes the kernel look the
        // route up again even on a connected socket). The first batch sets
        // the socket's marking to its first datagram's.
        let mut defaults = sock.default_marking();
        if defaults == DefaultMarking::Unset {
            defaults = sock.set_default_marking(first.mark.tos, first.mark.priority.unwrap_or(0));
        }
        let mut n = 0;
        self.addrs.clear();
        let mut idx = self.head;
        'outer: while idx < self.entries.len() && n < SEND_BATCH {
            let e = self.entries[idx];
            if e.cscov != first.cscov && sock.kind() == SocketKind::UdpLite {
                break;
            }
            if !prio_cmsg && e.mark.priority != first.mark.priority {
                break;
            }
            let mut seg_at = e.segs_sent;
            let total = e.segments();
            while seg_at < total {
                if n == SEND_BATCH {
                    break 'outer;
                }
                let start = e.off + seg_at * e.seg;
                let (count, end) = if gso {
                    (total - seg_at, e.off + e.len)
                } else {
                    (1, (start + e.seg).min(e.off + e.len))
                };
                // IP_TOS is an IPv4 option; IPv6 carries the same byte as the traffic class.
                let (level, name) = if e.dst.is_ipv6() {
                    (libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
                } else {
                    (libc::IPPROTO_IP, libc::IP_TOS)
                };
                let mut enc = Encoder::new(&mut self.cmsgs[n]);
                let (tos_cmsg, prio_cmsg_needed) = match defaults {
                    // A datagram without a priority gets 0, the kernel's default.
                    DefaultMarking::Set { tos, priority } => (
                        e.mark.tos != tos,
                        prio_cmsg && e.mark.priority.unwrap_or(0) != priority,
                    ),
                    _ => (true, prio_cmsg && e.mark.priority.is_some()),
                };
                if tos_cmsg {
                    enc.push(level, name, libc::c_int::from(e.mark.tos));
                }
                if prio_cmsg_needed {
                    enc.push(
                        libc::SOL_SOCKET,
                        libc::SO_PRIORITY,
                        e.mark.priority.unwrap_or(0),
                    );
                }
                if count > 1 {
                    enc.push(libc::SOL_UDP, libc::UDP_SEGMENT, e.seg as u16);
                }
                // SAFETY: an all-zero mmsghdr is a valid empty value; the
                // entry is written whole, nothing of an earlier call stays.
                hdrs[n] = unsafe { std::mem::zeroed() };
                hdrs[n].msg_hdr.msg_controllen = enc.len() as _;
                let named = connected != Some(e.dst);
                if named {
                    self.addrs.push(SockAddr::from(e.dst));
                }
                iovs[n] = libc::iovec {
                    // SAFETY: start..end lies inside self.buf.
                    iov_base: unsafe { self.buf.as_ptr().add(start) } as *mut libc::c_void,
                    iov_len: end - start,
                };
                self.plan.push((idx, count, end - start, named));
                n += 1;
                seg_at += count;
            }
            idx += 1;
        }
        let mut a = 0;
        for (i, &(_, _, _, named)) in self.plan.iter().enumerate() {
            let h = &mut hdrs[i].msg_hdr;
            if named {
                h.msg_name = self.addrs[a].as_ptr() as *mut libc::c_void;
                h.msg_namelen = self.addrs[a].len();
                a += 1;
            }
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.cmsgs[i].0.as_mut_ptr().cast();
        }
        self.stats.syscalls += 1;
        // SAFETY: the first n headers, each written above, point at live
        // buffers (self.buf, self.addrs, self.cmsgs, iovs) that outlive
        // the call.
        let rc = unsafe { libc::sendmmsg(sock.fd(), hdrs.as_mut_ptr(), n as libc::c_uint, 0) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let sent = rc as usize;
        let mut datagrams = 0;
        for k in 0..sent {
            let (idx, segs, bytes, _) = self.plan[k];
            self.advance(idx, segs);
            datagrams += segs;
            self.stats.bytes += bytes as u64;
            if segs > 1 {
                self.stats.gso_messages += 1;
            }
        }
        self.stats.datagrams += datagrams as u64;
        Ok(datagrams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dst(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    impl SendQueue {
        /// (segment size, segments) of each queued message.
        fn shape(&self) -> Vec<(usize, usize)> {
            self.entries[self.head..]
                .iter()
                .map(|e| (e.seg, e.segments()))
                .collect()
        }
    }

    #[test]
    fn gso_coalesces_equal_runs_and_closes_on_a_short_tail() {
        let mut q = SendQueue::new(1000, 1 << 20);
        let m = Marking::new(8, 0, Some(1));
        for _ in 0..3 {
            assert!(q.push(dst(1), m, 0, &[0; 1000], true));
        }
        assert!(q.push(dst(1), m, 0, &[0; 400], true)); // shorter: joins, then closes
        assert!(q.push(dst(1), m, 0, &[0; 400], true)); // cannot follow a short tail
        assert_eq!(q.shape(), vec![(1000, 4), (400, 1)]);
        assert_eq!(q.len(), 5);
    }

    #[test]
    fn gso_never_mixes_destination_marking_or_coverage() {
        let mut q = SendQueue::new(1000, 1 << 20);
        let a = Marking::new(8, 0, None);
        let b = Marking::new(16, 0, None);
        q.push(dst(1), a, 0, &[0; 100], true);
        q.push(dst(2), a, 0, &[0; 100], true);
        q.push(dst(2), b, 0, &[0; 100], true);
        q.push(dst(2), b, 70, &[0; 100], true);
        q.push(dst(2), b, 70, &[0; 100], false);
        assert_eq!(q.shape(), vec![(100, 1); 5]);
    }

    #[test]
    fn gso_messages_respect_segment_and_size_caps() {
        let mut q = SendQueue::new(10_000, 1 << 22);
        for _ in 0..(MAX_GSO_SEGMENTS + 1) {
            q.push(dst(1), Marking::default(), 0, &[0; 100], true);
        }
        assert_eq!(q.shape(), vec![(100, MAX_GSO_SEGMENTS), (100, 1)]);
        let mut q = SendQueue::new(10_000, 1 << 22);
        for _ in 0..50 {
            q.push(dst(1), Marking::default(), 0, &[0; 1400], true);
        }
        // 46 x 1400 = 64 400 bytes fit one UDP datagram; 47 would not.
        assert_eq!(q.shape(), vec![(1400, 46), (1400, 4)]);
        let mut q = SendQueue::new(10_000, 1 << 22).with_gso_segments(8);
        for _ in 0..20 {
            q.push(dst(1), Marking::default(), 0, &[0; 1400], true);
        }
        assert_eq!(q.shape(), vec![(1400, 8), (1400, 8), (1400, 4)]);
    }

    #[test]
    fn gso_runs_match_the_rule_on_lengths_and_divisions() {
        // The merge test on kept segment counts against the rule it
        // replaced (every segment so far full: `len % seg == 0`, and
        // `len.div_ceil(seg)` segments), on random lengths.
        let mut x = 7u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut q = SendQueue::new(100_000, 1 << 26).with_gso_segments(16);
        let mut model: Vec<(usize, usize)> = Vec::new(); // (len, seg)
        for _ in 0..20_000 {
            let l = match next() % 8 {
                0 => 1 + (next() % 1400) as usize,
                1 => 700,
                _ => 1400,
            };
            assert!(q.push(dst(1), Marking::default(), 0, &vec![0; l], true));
            match model.last_mut() {
                Some((len, seg))
                    if l <= *seg
                        && *len % *seg == 0
                        && len.div_ceil(*seg) < 16
                        && *len + l <= MAX_UDP_PAYLOAD =>
                {
                    *len += l
                }
                _ => model.push((l, l)),
            }
        }
        let want: Vec<(usize, usize)> = model.iter().map(|&(l, s)| (s, l.div_ceil(s))).collect();
        assert_eq!(q.shape(), want);
        assert!(want.len() > 1000 && want.iter().any(|&(_, n)| n == 16));
    }

    #[test]
    fn reserve_then_commit_writes_in_place() {
        let mut q = SendQueue::new(4, 4 * 100);
        let slot = q.reserve(100).unwrap();
        slot[..3].copy_from_slice(b"abc");
        assert!(q.commit(3, dst(1), Marking::default(), 0, true));
        assert_eq!(&q.buf[..3], b"abc");
        assert!(!q.commit(0, dst(1), Marking::default(), 0, true));
        assert!(
            q.reserve(1000).is_none(),
            "a slot never exceeds the byte cap"
        );
        assert_eq!(q.reserve(397).map(|s| s.len()), Some(397));
    }
}
