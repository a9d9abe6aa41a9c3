//! A TUN device (layer 3, no packet-information prefix) created inside a
//! named network namespace. The file descriptor stays with this process
//! wherever the device lives; the device disappears when it is closed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// `_IOW('T', 202, int)`: attach the descriptor to a (new) interface.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// Layer-3 device: every read and write is one IP packet.
const IFF_TUN: libc::c_short = 0x0001;
/// No 4-byte packet-information prefix before each packet.
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as far as TUNSETIFF reads it (name, flags), padded to the
/// kernel's 40 bytes.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// One open TUN device.
pub(crate) struct Tun {
    file: File,
}

impl Tun {
    /// Creates device `name` inside network namespace `netns` (a name under
    /// `/var/run/netns`), or in the caller's namespace when `netns` is None.
    /// Only the calling thread enters the namespace, and it returns to its
    /// own namespace before this returns (also on error).
    pub(crate) fn create(netns: Option<&str>, name: &str) -> Result<Tun, String> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(format!(
                "device name `{name}`: 1 to {} bytes",
                libc::IFNAMSIZ - 1
            ));
        }
        let Some(ns) = netns else {
            return open(name).map_err(|e| format!("creating TUN device {name}: {e}"));
        };
        let home = File::open("/proc/thread-self/ns/net")
            .map_err(|e| format!("reading this thread's namespace: {e}"))?;
        let target = File::open(format!("/var/run/netns/{ns}"))
            .map_err(|e| format!("network namespace `{ns}`: {e}"))?;
        enter(&target).map_err(|e| format!("entering namespace `{ns}`: {e}"))?;
        let made = open(name);
        // Returning home must succeed, or later devices land in `ns`.
        enter(&home).map_err(|e| format!("leaving namespace `{ns}`: {e}"))?;
        made.map_err(|e| format!("creating TUN device {name} in `{ns}`: {e}"))
    }

    /// The raw descriptor (for `poll`).
    pub(crate) fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Reads one packet into `buf` (non-blocking: `WouldBlock` when none
    /// waits); returns its length.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` writable bytes.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Writes one packet (the kernel takes it as received on this device).
    pub(crate) fn send(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: `packet` is valid for `packet.len()` readable bytes.
        let n = unsafe { libc::write(self.fd(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn enter(ns: &File) -> io::Result<()> {
    // SAFETY: a valid namespace descriptor; moves only the calling thread.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn open(name: &str) -> io::Result<Tun> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which `req` is
    // laid out as (40 bytes).
    if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Tun { file })
}
