//! A bounded set of receive slots, filled with one `recvmmsg`.
//!
//! With UDP GRO the kernel may hand one slot several datagrams of equal
//! size (the last may be shorter) plus their segment size; [`RecvQueue::iter`]
//! splits them again. Truncated datagrams (larger than a slot) are counted
//! and skipped, never passed on.

use super::cmsg::{decode, CmsgBuf};
use super::socket::Socket;
use socket2::SockAddr;
use std::io;
use std::net::SocketAddr;

/// Counters of a [`RecvQueue`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvStats {
    /// Datagrams received (after GRO splitting).
    pub datagrams: u64,
    /// Payload bytes received.
    pub bytes: u64,
    /// `recvmmsg` calls that returned data.
    pub syscalls: u64,
    /// `recvmmsg` calls that found nothing waiting (`EAGAIN`).
    pub empty: u64,
    /// Slots that carried more than one GRO segment.
    pub gro_messages: u64,
    /// Datagrams larger than a slot: dropped.
    pub truncated: u64,
    /// Datagrams whose source address was not IP: dropped.
    pub bad_source: u64,
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    src: Option<SocketAddr>,
    len: usize,
    seg: usize,
    tos: Option<u8>,
    truncated: bool,
}

/// One received datagram, borrowed from a [`RecvQueue`].
#[derive(Debug)]
pub struct Received<'a> {
    /// Who sent it.
    pub src: SocketAddr,
    /// Its payload.
    pub data: &'a [u8],
    /// The IP TOS byte it arrived with, when `IP_RECVTOS` is on.
    pub tos: Option<u8>,
}

/// One received datagram, mutably borrowed from a [`RecvQueue`]: the
/// driver marks congestion in its header in place
/// ([`RecvQueue::iter_mut`]).
#[derive(Debug)]
pub struct ReceivedMut<'a> {
    /// Who sent it.
    pub src: SocketAddr,
    /// Its payload.
    pub data: &'a mut [u8],
    /// The IP TOS byte it arrived with, when `IP_RECVTOS` is on.
    pub tos: Option<u8>,
}

/// The `recvmmsg` message headers and their iovecs, kept between calls so
/// that a receive (or a busy-poll attempt) allocates nothing. Their
/// pointers are written once, in [`RecvQueue::new`]: they point into the
/// heap buffers of the owning queue's `Vec`s, which are never resized, so
/// they stay valid when the queue moves. A call resets only the fields
/// the kernel wrote back (lengths, flags) of the entries it filled last
/// time (`dirty`), not every slot's header: an empty call (`EAGAIN`, half
/// of a receiving server's calls) writes nothing.
struct Headers {
    hdrs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    /// Leading entries whose written-back fields need a reset.
    dirty: usize,
}

// SAFETY: the raw pointers inside point into the owning `RecvQueue`'s heap
// buffers (never reallocated), which move with it, and are read only by
// `RecvQueue::recv`'s syscall, so moving the queue to another thread is
// sound.
unsafe impl Send for Headers {}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Headers({})", self.hdrs.len())
    }
}

/// Receive slots for one `recvmmsg`, bounded: `slots x slot_len` bytes.
#[derive(Debug)]
pub struct RecvQueue {
    buf: Vec<u8>,
    slot_len: usize,
    slots: usize,
    meta: Vec<Meta>,
    addrs: Vec<libc::sockaddr_storage>,
    cmsgs: Vec<CmsgBuf>,
    headers: Headers,
    filled: usize,
    /// Counters since creation.
    pub stats: RecvStats,
}

impl RecvQueue {
    /// `slots` slots of `slot_len` bytes each (use 65535 with GRO, else the
    /// largest datagram expected; both at least 1).
    pub fn new(slots: usize, slot_len: usize) -> RecvQueue {
        let slots = slots.clamp(1, 1024);
        let slot_len = slot_len.clamp(1, 65_535);
        let mut q = RecvQueue {
            buf: vec![0; slots * slot_len],
            slot_len,
            slots,
            meta: Vec::with_capacity(slots),
            // SAFETY: sockaddr_storage is plain data; all-zero is valid.
            addrs: vec![unsafe { std::mem::zeroed() }; slots],
            cmsgs: vec![CmsgBuf::new(); slots],
            // SAFETY: all-zero mmsghdr / iovec are valid empty values.
            headers: Headers {
                hdrs: vec![unsafe { std::mem::zeroed() }; slots],
                iovs: vec![unsafe { std::mem::zeroed() }; slots],
                dirty: 0,
            },
            filled: 0,
            stats: RecvStats::default(),
        };
        let Headers { hdrs, iovs, .. } = &mut q.headers;
        for i in 0..slots {
            iovs[i] = libc::iovec {
                // SAFETY: slot i lies inside q.buf.
                iov_base: unsafe { q.buf.as_mut_ptr().add(i * slot_len) }.cast(),
                iov_len: slot_len,
            };
            let h = &mut hdrs[i].msg_hdr;
            h.msg_name = (&mut q.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = q.cmsgs[i].0.as_mut_ptr().cast();
        }
        q.headers.dirty = slots; // the lengths below are set by the first reset
        q
    }

    /// Messages one [`RecvQueue::recv`] can return at most. A call that
    /// fills fewer found the socket's queue empty after them.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Bytes of receive memory this queue holds.
    pub fn capacity_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Receives up to `slots` messages without blocking. Returns the number
    /// of slots filled; `Err(WouldBlock)` when nothing is waiting.
    pub fn recv(&mut self, sock: &Socket) -> io::Result<usize> {
        self.meta.clear();
        self.filled = 0;
        let Headers { hdrs, dirty, .. } = &mut self.headers;
        // The kernel wrote lengths and flags back into the entries it
        // filled last time: reset those (the pointers stand; see `Headers`).
        for (h, c) in hdrs[..*dirty].iter_mut().zip(&self.cmsgs) {
            h.msg_len = 0;
            h.msg_hdr.msg_flags = 0;
            h.msg_hdr.msg_namelen =
                std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_hdr.msg_controllen = c.0.len() as _;
        }
        // An error may come after the kernel wrote into some entries.
        *dirty = self.slots;
        let rc = loop {
            // SAFETY: every header points at live buffers owned by self,
            // sized as declared (set in `new`, lengths reset above).
            let rc = unsafe {
                libc::recvmmsg(
                    sock.fd(),
                    hdrs.as_mut_ptr(),
                    self.slots as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if rc >= 0 {
                break rc as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::WouldBlock {
                self.stats.empty += 1;
                *dirty = 0; // EAGAIN before any datagram: nothing written back
            }
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        self.stats.syscalls += 1;
        self.headers.dirty = rc;
        for (i, h) in self.headers.hdrs.iter().enumerate().take(rc) {
            let len = (h.msg_len as usize).min(self.slot_len);
            let truncated = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            // SAFETY: the kernel wrote a sockaddr of msg_namelen bytes.
            let src = unsafe { SockAddr::new(self.addrs[i], h.msg_hdr.msg_namelen) }.as_socket();
            let mut seg = len;
            let mut tos = None;
            for c in decode(&self.cmsgs[i], h.msg_hdr.msg_controllen) {
                match (c.level, c.ty) {
                    (libc::SOL_UDP, libc::UDP_GRO) if c.data.len() >= 4 => {
                        let s = i32::from_ne_bytes([c.data[0], c.data[1], c.data[2], c.data[3]]);
                        if s > 0 {
                            seg = s as usize;
                        }
                    }
                    (libc::IPPROTO_IP, libc::IP_TOS) if !c.data.is_empty() => tos = Some(c.data[0]),
                    (libc::IPPROTO_IPV6, libc::IPV6_TCLASS) if c.data.len() >= 4 => {
                        tos = Some(c.data[0])
                    }
                    _ => {}
                }
            }
            let m = Meta {
                src,
                len,
                seg: seg.clamp(1, len.max(1)),
                tos,
                truncated,
            };
            if truncated {
                self.stats.truncated += 1;
            } else if src.is_none() {
                self.stats.bad_source += 1;
            } else {
                let n = if len == 0 { 1 } else { len.div_ceil(m.seg) };
                self.stats.datagrams += n as u64;
                self.stats.bytes += len as u64;
                if n > 1 {
                    self.stats.gro_messages += 1;
                }
            }
            self.meta.push(m);
        }
        self.filled = rc;
        Ok(rc)
    }

    /// The datagrams of the last [`RecvQueue::recv`], GRO batches split.
    pub fn iter(&self) -> impl Iterator<Item = Received<'_>> + '_ {
        self.meta[..self.filled]
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.truncated)
            .filter_map(|(i, m)| m.src.map(|src| (i, m, src)))
            .flat_map(move |(i, m, src)| {
                let slot = &self.buf[i * self.slot_len..i * self.slot_len + m.len];
                // An empty datagram is one item; `chunks` of it would be none.
                // (No boxed iterator: that was an allocation per batch.)
                let empty = std::iter::once(slot).filter(|s| s.is_empty());
                empty.chain(slot.chunks(m.seg)).map(move |data| Received {
                    src,
                    data,
                    tos: m.tos,
                })
            })
    }

    /// [`RecvQueue::iter`] with each datagram writable in place: the same
    /// datagrams in the same order. The next [`RecvQueue::recv`] rewrites
    /// the slots, so changes last until then.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = ReceivedMut<'_>> + '_ {
        let slot_len = self.slot_len;
        self.buf
            .chunks_mut(slot_len)
            .zip(&self.meta[..self.filled])
            .filter(|(_, m)| !m.truncated)
            .filter_map(|(slot, m)| m.src.map(|src| (slot, m, src)))
            .flat_map(move |(slot, m, src)| {
                let slot = &mut slot[..m.len];
                // As in `iter`: an empty datagram is one item.
                let empty: &mut [u8] = &mut [];
                let empty = std::iter::once(empty).filter(|_| m.len == 0);
                empty
                    .chain(slot.chunks_mut(m.seg))
                    .map(move |data| ReceivedMut {
                        src,
                        data,
                        tos: m.tos,
                    })
            })
    }

    /// Puts `data` into the next slot as if one `recvmmsg` had filled it
    /// (GRO segment size `seg`, TOS `tos`), for tests of what reads the
    /// queue; `clear` first empties it.
    #[cfg(test)]
    pub(crate) fn put(
        &mut self,
        clear: bool,
        src: SocketAddr,
        data: &[u8],
        seg: usize,
        tos: Option<u8>,
    ) {
        if clear {
            self.meta.clear();
            self.filled = 0;
        }
        let i = self.filled;
        assert!(
            i < self.slots && data.len() <= self.slot_len,
            "test batch too big"
        );
        self.buf[i * self.slot_len..][..data.len()].copy_from_slice(data);
        self.meta.push(Meta {
            src: Some(src),
            len: data.len(),
            seg: seg.clamp(1, data.len().max(1)),
            tos,
            truncated: false,
        });
        self.filled += 1;
    }
}
