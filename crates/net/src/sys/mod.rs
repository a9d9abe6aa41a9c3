//! The syscall layer: UDP and UDP-Lite sockets with batched send and receive.
//!
//! * [`socket`]: opening a socket ([`Socket`], [`SocketKind`],
//!   [`SocketOptions`]), UDP-Lite checksum coverage, probing GSO / GRO.
//! * [`send`]: a bounded [`SendQueue`] of outgoing datagrams, coalesced into
//!   UDP GSO super-datagrams where the kernel allows, sent with `sendmmsg`,
//!   with per-packet `IP_TOS` and `SO_PRIORITY` control messages.
//! * [`recv`]: a bounded [`RecvQueue`] filled with `recvmmsg`, split back
//!   into datagrams where UDP GRO merged them.
//!
//! Everything here is plain bytes: no protocol knowledge, so it can be
//! benchmarked on its own (`benches/socket_throughput.rs`).

mod cmsg;
pub mod random;
pub mod recv;
pub mod send;
pub mod socket;

pub use recv::{Received, ReceivedMut, RecvQueue};
pub use send::{Marking, SendQueue};
pub use socket::{DefaultMarking, Socket, SocketKind, SocketOptions};

use std::io;
use std::os::fd::RawFd;

/// `IPPROTO_UDPLITE` (RFC 3828 protocol number).
pub const IPPROTO_UDPLITE: libc::c_int = 136;
/// `SOL_UDPLITE`: the socket-option level of UDP-Lite (equals the protocol number).
pub const SOL_UDPLITE: libc::c_int = 136;
/// `UDPLITE_SEND_CSCOV`: checksum coverage of datagrams we send.
pub const UDPLITE_SEND_CSCOV: libc::c_int = 10;
/// `UDPLITE_RECV_CSCOV`: minimum coverage we accept on receive.
pub const UDPLITE_RECV_CSCOV: libc::c_int = 11;
/// Bytes of the UDP / UDP-Lite header, which UDP-Lite coverage counts.
pub const UDP_HEADER_LEN: usize = 8;
/// The largest UDP payload over IPv4 (65535 - 20 - 8).
pub const MAX_UDP_PAYLOAD: usize = 65_507;
/// Most segments one UDP GSO send may carry (kernel `UDP_MAX_SEGMENTS` is
/// 64 on older kernels, 128 on newer; we stay with the portable bound).
pub const MAX_GSO_SEGMENTS: usize = 64;

pub(crate) fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` lives across the call and its size is passed exactly.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(crate) fn getsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid for writes and `len` holds its size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}
