//! Control-message encoding and decoding over an aligned byte buffer.

use std::mem;

/// Control-message space reserved per datagram (send: `IP_TOS` int,
/// `SO_PRIORITY` u32, `UDP_SEGMENT` u16; receive: `IP_TOS` byte, `UDP_GRO` int).
pub(crate) const CMSG_BUF_LEN: usize = 96;

/// Control-message buffer, aligned for `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct CmsgBuf(pub(crate) [u8; CMSG_BUF_LEN]);

impl std::fmt::Debug for CmsgBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CmsgBuf")
    }
}

impl CmsgBuf {
    pub(crate) const fn new() -> Self {
        CmsgBuf([0; CMSG_BUF_LEN])
    }
}

/// Appends control messages to a [`CmsgBuf`].
pub(crate) struct Encoder<'a> {
    buf: &'a mut CmsgBuf,
    len: usize,
}

impl<'a> Encoder<'a> {
    pub(crate) fn new(buf: &'a mut CmsgBuf) -> Self {
        Encoder { buf, len: 0 }
    }

    /// Appends one message; returns false (and writes nothing) when it does
    /// not fit, which the fixed [`CMSG_BUF_LEN`] rules out for our uses.
    pub(crate) fn push<T: Copy>(&mut self, level: libc::c_int, ty: libc::c_int, value: T) -> bool {
        let data_len = mem::size_of::<T>() as u32;
        // SAFETY: CMSG_SPACE / CMSG_LEN are pure arithmetic.
        let (space, cmsg_len) = unsafe {
            (
                libc::CMSG_SPACE(data_len) as usize,
                libc::CMSG_LEN(data_len) as usize,
            )
        };
        if self.len + space > CMSG_BUF_LEN {
            return false;
        }
        let hdr = libc::cmsghdr {
            cmsg_len: cmsg_len as _,
            cmsg_level: level,
            cmsg_type: ty,
        };
        // SAFETY: CMSG_LEN(0) is arithmetic.
        let data_off = unsafe { libc::CMSG_LEN(0) } as usize;
        let base = self.buf.0.as_mut_ptr();
        // SAFETY: the bounds check above keeps both writes inside the buffer;
        // unaligned writes need no alignment.
        unsafe {
            std::ptr::write_unaligned(base.add(self.len).cast::<libc::cmsghdr>(), hdr);
            std::ptr::write_unaligned(base.add(self.len + data_off).cast::<T>(), value);
        }
        self.len += space;
        true
    }

    /// Bytes used so far (the `msg_controllen` to pass).
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// One decoded control message.
pub(crate) struct Cmsg<'a> {
    pub(crate) level: libc::c_int,
    pub(crate) ty: libc::c_int,
    pub(crate) data: &'a [u8],
}

/// Iterates the control messages the kernel wrote into `buf[..len]`.
pub(crate) fn decode(buf: &CmsgBuf, len: usize) -> impl Iterator<Item = Cmsg<'_>> {
    let len = len.min(CMSG_BUF_LEN);
    let hdr_len = mem::size_of::<libc::cmsghdr>();
    // SAFETY: arithmetic only.
    let data_off = unsafe { libc::CMSG_LEN(0) } as usize;
    let mut off = 0usize;
    std::iter::from_fn(move || {
        if off + hdr_len > len {
            return None;
        }
        // SAFETY: `off + hdr_len <= len <= CMSG_BUF_LEN`.
        let hdr: libc::cmsghdr =
            unsafe { std::ptr::read_unaligned(buf.0.as_ptr().add(off).cast()) };
        let clen = hdr.cmsg_len as usize;
        if clen < data_off || off + clen > len {
            return None;
        }
        let data = &buf.0[off + data_off..off + clen];
        // SAFETY: arithmetic only.
        let step = unsafe { libc::CMSG_SPACE((clen - data_off) as u32) } as usize;
        off += step;
        Some(Cmsg {
            level: hdr.cmsg_level,
            ty: hdr.cmsg_type,
            data,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_then_decode_round_trips() {
        let mut buf = CmsgBuf::new();
        let mut enc = Encoder::new(&mut buf);
        assert!(enc.push(libc::IPPROTO_IP, libc::IP_TOS, 0xb8i32));
        assert!(enc.push(libc::SOL_UDP, libc::UDP_SEGMENT, 1400u16));
        let len = enc.len();
        let got: Vec<_> = decode(&buf, len)
            .map(|c| (c.level, c.ty, c.data.to_vec()))
            .collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, libc::IPPROTO_IP);
        assert_eq!(got[0].2, 0xb8i32.to_ne_bytes().to_vec());
        assert_eq!(got[1].1, libc::UDP_SEGMENT);
        assert_eq!(got[1].2, 1400u16.to_ne_bytes().to_vec());
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut buf = CmsgBuf::new();
            for b in buf.0.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let len = (x % (CMSG_BUF_LEN as u64 + 8)) as usize;
            for c in decode(&buf, len) {
                assert!(c.data.len() <= CMSG_BUF_LEN);
            }
        }
    }

    #[test]
    fn decode_rejects_garbage_lengths() {
        let mut buf = CmsgBuf::new();
        buf.0[..8].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(decode(&buf, CMSG_BUF_LEN).count(), 0);
        assert_eq!(decode(&buf, 3).count(), 0);
    }
}
