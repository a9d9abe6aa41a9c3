//! Opening UDP / UDP-Lite sockets and setting their options.

use super::{getsockopt_int, setsockopt_int};
use super::{IPPROTO_UDPLITE, SOL_UDPLITE, UDPLITE_RECV_CSCOV, UDPLITE_SEND_CSCOV, UDP_HEADER_LEN};
use socket2::{Domain, Protocol, SockAddr, Type};
use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

/// Which datagram protocol a socket speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketKind {
    /// Plain UDP: full checksum coverage, GSO / GRO where the kernel has them.
    Udp,
    /// UDP-Lite (RFC 3828): checksum coverage set per datagram with
    /// `UDPLITE_SEND_CSCOV`; no GSO (the kernel refuses it with `EIO`).
    UdpLite,
}

/// How to open a [`Socket`].
#[derive(Clone, Debug)]
pub struct SocketOptions {
    /// UDP or UDP-Lite.
    pub kind: SocketKind,
    /// Receive buffer in bytes (`SO_RCVBUFFORCE` when allowed, else `SO_RCVBUF`).
    pub recv_buffer: usize,
    /// Send buffer in bytes (`SO_SNDBUFFORCE` when allowed, else `SO_SNDBUF`).
    pub send_buffer: usize,
    /// Use UDP GSO on send where the kernel supports it (UDP only).
    pub gso: bool,
    /// Ask for UDP GRO on receive where the kernel supports it.
    pub gro: bool,
    /// Receive the IP TOS byte of each datagram (`IP_RECVTOS`), for ECN
    /// (an endpoint asks for it only with ECN marking on).
    pub recv_tos: bool,
    /// UDP-Lite only: the least checksum coverage accepted from peers, in
    /// bytes of UDP payload (the UDP-Lite header is added). The kernel drops
    /// datagrams that cover less. `None` leaves the kernel default (any).
    pub min_recv_coverage: Option<usize>,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions {
            kind: SocketKind::Udp,
            recv_buffer: DEFAULT_RECV_BUFFER,
            send_buffer: 4 << 20,
            gso: true,
            gro: true,
            recv_tos: true,
            min_recv_coverage: None,
        }
    }
}

/// The default receive buffer, 16 MiB. The receiver is a user-space
/// process: while it is descheduled, arrivals queue here, and at 40 Gbit/s
/// 4 MiB (the old default) lasts 0.8 ms. On the 2-core veth bench at load
/// 6-7 the 4 MiB buffer overflowed in every run (loss 0.04-0.26 %, each
/// drop a whole GSO super-datagram, each cutting the sender's rate); 16 MiB
/// removed it (0-0.03 %) at the same CPU per GB (docs/performance.md,
/// "Receive buffer"). It bounds, not reserves, kernel memory; without
/// `CAP_NET_ADMIN` the kernel caps it at `net.core.rmem_max`.
pub const DEFAULT_RECV_BUFFER: usize = 16 << 20;

/// The smallest socket buffer a [`crate::RuntimeConfig`] accepts (64 KiB:
/// one GRO / GSO super-datagram).
pub const MIN_SOCKET_BUFFER: usize = 64 << 10;

/// The largest socket buffer a [`crate::RuntimeConfig`] accepts (1 GiB).
pub const MAX_SOCKET_BUFFER: usize = 1 << 30;

/// A non-blocking UDP or UDP-Lite socket with the options approxnet uses.
///
/// Option state that changes per datagram (UDP-Lite send coverage, the
/// per-socket priority fallback) is cached so that a batch of datagrams with
/// the same values costs one `setsockopt`, not one per datagram.
#[derive(Debug)]
pub struct Socket {
    inner: socket2::Socket,
    kind: SocketKind,
    local: SocketAddr,
    gso: Cell<bool>,
    gro: bool,
    send_cscov: Cell<Option<u16>>,
    prio_cmsg: Cell<bool>,
    socket_prio: Cell<Option<u32>>,
    connected: Cell<Option<SocketAddr>>,
    /// Bound to an explicit port: `disconnect` keeps it.
    port_fixed: bool,
    default_marking: Cell<DefaultMarking>,
}

/// The marking the socket applies to datagrams that carry no `IP_TOS` /
/// `SO_PRIORITY` control message (see [`Socket::set_default_marking`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultMarking {
    /// Not set yet: every datagram carries its marking.
    Unset,
    /// TOS byte and priority set on the socket.
    Set {
        /// The IP TOS byte.
        tos: u8,
        /// `SO_PRIORITY`.
        priority: u32,
    },
    /// The kernel refused them (or an IPv6 socket): every datagram
    /// carries its marking.
    Unavailable,
}

impl Socket {
    /// Opens, configures and binds a non-blocking socket.
    pub fn bind(addr: SocketAddr, opts: &SocketOptions) -> io::Result<Socket> {
        let proto = match opts.kind {
            SocketKind::Udp => Protocol::UDP,
            SocketKind::UdpLite => Protocol::from(IPPROTO_UDPLITE),
        };
        let inner = socket2::Socket::new(Domain::for_address(addr), Type::DGRAM, Some(proto))?;
        inner.set_nonblocking(true)?;
        let fd = inner.as_raw_fd();
        if setsockopt_int(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            clamp(opts.recv_buffer),
        )
        .is_err()
        {
            inner.set_recv_buffer_size(opts.recv_buffer)?;
        }
        if setsockopt_int(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUFFORCE,
            clamp(opts.send_buffer),
        )
        .is_err()
        {
            inner.set_send_buffer_size(opts.send_buffer)?;
        }
        if opts.recv_tos && addr.is_ipv4() {
            inner.set_recv_tos(true)?;
        }
        inner.bind(&SockAddr::from(addr))?;
        let local = inner
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::other("bound address is not IP"))?;
        let gso = opts.gso
            && opts.kind == SocketKind::Udp
            && setsockopt_int(fd, libc::SOL_UDP, libc::UDP_SEGMENT, 0).is_ok();
        let gro = opts.gro
            && opts.kind == SocketKind::Udp
            && setsockopt_int(fd, libc::SOL_UDP, libc::UDP_GRO, 1).is_ok();
        let sock = Socket {
            inner,
            kind: opts.kind,
            local,
            gso: Cell::new(gso),
            gro,
            send_cscov: Cell::new(None),
            prio_cmsg: Cell::new(true),
            socket_prio: Cell::new(None),
            connected: Cell::new(None),
            port_fixed: addr.port() != 0,
            default_marking: Cell::new(if local.is_ipv4() {
                DefaultMarking::Unset
            } else {
                DefaultMarking::Unavailable
            }),
        };
        if let (SocketKind::UdpLite, Some(min)) = (opts.kind, opts.min_recv_coverage) {
            let cscov = u16::try_from(UDP_HEADER_LEN + min).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "coverage over 65535 bytes")
            })?;
            sock.set_recv_cscov(cscov)?;
        }
        Ok(sock)
    }

    /// UDP or UDP-Lite.
    pub fn kind(&self) -> SocketKind {
        self.kind
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Whether sends use UDP GSO (probed at open; turned off for good if the
    /// kernel refuses a GSO send at run time).
    pub fn gso_enabled(&self) -> bool {
        self.gso.get()
    }

    pub(crate) fn disable_gso(&self) {
        self.gso.set(false);
    }

    /// Whether the kernel may hand us GRO-merged datagrams.
    pub fn gro_enabled(&self) -> bool {
        self.gro
    }

    /// Sets `UDPLITE_SEND_CSCOV` (raw kernel value: bytes counted from the
    /// start of the UDP-Lite header; 0 = whole datagram). Skips the syscall
    /// when the value is already set. An error on a UDP socket.
    pub fn set_send_cscov(&self, cscov: u16) -> io::Result<()> {
        if self.send_cscov.get() == Some(cscov) {
            return Ok(());
        }
        self.require_lite()?;
        setsockopt_int(self.fd(), SOL_UDPLITE, UDPLITE_SEND_CSCOV, cscov.into())?;
        self.send_cscov.set(Some(cscov));
        Ok(())
    }

    /// Reads `UDPLITE_SEND_CSCOV` back from the kernel.
    pub fn send_cscov(&self) -> io::Result<u16> {
        self.require_lite()?;
        let v = getsockopt_int(self.fd(), SOL_UDPLITE, UDPLITE_SEND_CSCOV)?;
        Ok(v.clamp(0, u16::MAX.into()) as u16)
    }

    /// Sets `UDPLITE_RECV_CSCOV`: the least coverage (raw kernel value) a
    /// received datagram must have; the kernel drops those covering less.
    pub fn set_recv_cscov(&self, cscov: u16) -> io::Result<()> {
        self.require_lite()?;
        setsockopt_int(self.fd(), SOL_UDPLITE, UDPLITE_RECV_CSCOV, cscov.into())
    }

    /// Reads `UDPLITE_RECV_CSCOV` back from the kernel.
    pub fn recv_cscov(&self) -> io::Result<u16> {
        self.require_lite()?;
        let v = getsockopt_int(self.fd(), SOL_UDPLITE, UDPLITE_RECV_CSCOV)?;
        Ok(v.clamp(0, u16::MAX.into()) as u16)
    }

    /// Sets `SO_PRIORITY` for the whole socket (skipped when unchanged).
    pub fn set_priority(&self, prio: u32) -> io::Result<()> {
        if self.socket_prio.get() == Some(prio) {
            return Ok(());
        }
        setsockopt_int(
            self.fd(),
            libc::SOL_SOCKET,
            libc::SO_PRIORITY,
            prio as libc::c_int,
        )?;
        self.socket_prio.set(Some(prio));
        Ok(())
    }

    /// Reads `SO_PRIORITY` back.
    pub fn priority(&self) -> io::Result<u32> {
        Ok(getsockopt_int(self.fd(), libc::SOL_SOCKET, libc::SO_PRIORITY)? as u32)
    }

    /// Sets the socket's default IP TOS byte (DSCP << 2 | ECN). The kernel
    /// also resets `SO_PRIORITY` from it.
    pub fn set_tos(&self, tos: u8) -> io::Result<()> {
        self.inner.set_tos(tos.into())?;
        self.socket_prio.set(None);
        if self.default_marking.get() != DefaultMarking::Unavailable {
            self.default_marking.set(DefaultMarking::Unset);
        }
        Ok(())
    }

    /// Makes `tos` and `priority` the socket's own marking (IPv4 only), so
    /// that datagrams marked so need no `IP_TOS` / `SO_PRIORITY` control
    /// message: the kernel takes a connected socket's cached route only for
    /// sends without one. On any error (e.g. a priority above 6 without
    /// `CAP_NET_ADMIN`) it gives up for good: datagrams then carry their
    /// marking as before.
    pub fn set_default_marking(&self, tos: u8, priority: u32) -> DefaultMarking {
        if self.default_marking.get() == DefaultMarking::Unavailable {
            return DefaultMarking::Unavailable;
        }
        // IP_TOS first: the kernel derives SO_PRIORITY from it.
        let r = self.set_tos(tos).and_then(|()| self.set_priority(priority));
        let m = match r {
            Ok(()) => DefaultMarking::Set { tos, priority },
            Err(_) => DefaultMarking::Unavailable,
        };
        self.default_marking.set(m);
        m
    }

    /// The marking the socket applies by itself.
    pub fn default_marking(&self) -> DefaultMarking {
        self.default_marking.get()
    }

    /// Whether `SO_PRIORITY` travels as a per-packet control message (true
    /// until the kernel refuses one; then it is set per socket, per batch).
    pub fn priority_per_packet(&self) -> bool {
        self.prio_cmsg.get()
    }

    pub(crate) fn prio_cmsg(&self) -> bool {
        self.prio_cmsg.get()
    }

    pub(crate) fn disable_prio_cmsg(&self) {
        self.prio_cmsg.set(false);
    }

    /// Connects the socket to `peer` (`connect(2)`): the kernel keeps the
    /// route, datagrams to `peer` go without an address (see
    /// [`crate::sys::SendQueue`]), incoming ones find the socket by early
    /// demux — and datagrams from any other address are dropped. (There is
    /// no way back: dissolving the association of a socket bound to port 0
    /// also releases its port.)
    pub fn connect_to(&self, peer: SocketAddr) -> io::Result<()> {
        self.inner.connect(&SockAddr::from(peer))?;
        self.connected.set(Some(peer));
        Ok(())
    }

    /// Dissolves the association made by [`Socket::connect_to`]
    /// (`connect(2)` with `AF_UNSPEC`): datagrams from any address arrive
    /// again. Only for a socket bound to an explicit port (the kernel keeps
    /// that port; one bound to port 0 would lose it): otherwise an
    /// `InvalidInput` error and the socket stays connected.
    pub fn disconnect(&self) -> io::Result<()> {
        if self.connected.get().is_none() {
            return Ok(());
        }
        if !self.port_fixed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "disconnect: the socket was bound to port 0 and would lose its port",
            ));
        }
        // SAFETY: an all-zero sockaddr with family AF_UNSPEC, its true size.
        let rc = unsafe {
            let mut sa: libc::sockaddr = std::mem::zeroed();
            sa.sa_family = libc::AF_UNSPEC as libc::sa_family_t;
            libc::connect(
                self.inner.as_raw_fd(),
                &sa,
                std::mem::size_of::<libc::sockaddr>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        self.connected.set(None);
        Ok(())
    }

    /// Whether the socket was bound to an explicit port (not port 0).
    pub fn port_fixed(&self) -> bool {
        self.port_fixed
    }

    /// The peer the socket is connected to, if any.
    pub fn connected_peer(&self) -> Option<SocketAddr> {
        self.connected.get()
    }

    /// The pending socket error (`SO_ERROR`), e.g. an ICMP port unreachable.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Blocks in `poll(2)` until the socket is readable (or, with
    /// `want_write`, writable) or `timeout` passes (`None`: no limit).
    /// Returns `(readable, writable)`; both false on timeout.
    pub fn wait(
        &self,
        want_write: bool,
        timeout: Option<std::time::Duration>,
    ) -> io::Result<(bool, bool)> {
        let mut events = libc::POLLIN;
        if want_write {
            events |= libc::POLLOUT;
        }
        let mut pfd = libc::pollfd {
            fd: self.fd(),
            events,
            revents: 0,
        };
        // ppoll takes a nanosecond timespec (an hrtimer): poll(2)'s
        // millisecond timeout would wake paced senders up to 1 ms late.
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        loop {
            // SAFETY: one valid pollfd; ts_ptr is null or points at `ts`.
            let rc = unsafe { libc::ppoll(&mut pfd, 1, ts_ptr, std::ptr::null()) };
            if rc >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let r = pfd.revents;
        Ok((
            r & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0,
            r & libc::POLLOUT != 0,
        ))
    }

    fn require_lite(&self) -> io::Result<()> {
        match self.kind {
            SocketKind::UdpLite => Ok(()),
            SocketKind::Udp => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "checksum coverage needs a UDP-Lite socket",
            )),
        }
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

/// The UDP-Lite `cscov` that covers the first `covered` bytes of a datagram
/// of `len` payload bytes: 0 (whole datagram) when that is everything, else
/// the UDP-Lite header plus `covered`.
pub fn cscov_for(covered: usize, len: usize) -> u16 {
    if covered >= len {
        0
    } else {
        // covered < len <= MAX_UDP_PAYLOAD, so this fits.
        u16::try_from(UDP_HEADER_LEN + covered).unwrap_or(0)
    }
}

fn clamp(bytes: usize) -> libc::c_int {
    bytes.min(i32::MAX as usize / 2) as libc::c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cscov_is_header_plus_prefix_or_full() {
        assert_eq!(cscov_for(48, 1400), 56);
        assert_eq!(cscov_for(1400, 1400), 0);
        assert_eq!(cscov_for(2000, 1400), 0);
        assert_eq!(cscov_for(0, 10), 8);
    }
}
