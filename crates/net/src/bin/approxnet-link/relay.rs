//! One direction of the link: read a frame from one TUN device, send it
//! over the channel under the link mode, hold it for its air time, write
//! what arrived to the other device.

use crate::airtime::Airtime;
use crate::arq::{send_frame, LinkMode};
use crate::channel::{ip_header_len, Channel};
use crate::stats::LinkStats;
use crate::tun::Tun;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Largest frame read (a TUN device's MTU can be raised to 65535).
const MAX_FRAME: usize = 65_536;
/// How often a blocked reader looks at the stop flag.
const POLL_MS: i32 = 100;
/// A frame due less than this far ahead is written at once: sleeping costs
/// tens of microseconds on a busy host, and the medium's books carry the
/// debt to the next frame.
const SLEEP_SLACK: Duration = Duration::from_micros(50);

/// The settings of one direction.
pub(crate) struct Direction<'a> {
    pub(crate) from: &'a Tun,
    pub(crate) to: &'a Tun,
    pub(crate) mode: LinkMode,
    pub(crate) retry_limit: u32,
    pub(crate) channel: Channel,
    /// The channel never damages anything.
    pub(crate) clean: bool,
    pub(crate) air: Airtime,
    pub(crate) stats: &'a LinkStats,
}

/// Runs until `stop` is set; returns an error only when a device fails.
pub(crate) fn run(mut d: Direction<'_>, stop: &AtomicBool) -> Result<(), String> {
    let mut buf = vec![0u8; MAX_FRAME];
    let mut out = Vec::with_capacity(MAX_FRAME);
    let s = d.stats;
    while !stop.load(Ordering::Relaxed) {
        // Non-blocking reads while frames wait; poll only when none does.
        let len = match d.from.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                readable(d.from, POLL_MS)?;
                continue;
            }
            Err(e) => return Err(format!("reading a frame: {e}")),
        };
        let frame = &buf[..len];
        LinkStats::add(&s.frames, 1);
        LinkStats::add(&s.bytes, len as u64);
        let fate = send_frame(
            d.mode,
            d.retry_limit,
            &mut d.channel,
            d.clean,
            frame,
            &mut out,
        );
        LinkStats::add(&s.tries, u64::from(fate.tries));
        LinkStats::add(&s.retried, u64::from(fate.tries > 1));
        let cost = d.air.cost(len, fate.tries);
        LinkStats::add(&s.airtime_ns, cost.as_nanos() as u64);
        let now = Instant::now();
        let leave = d.air.book(now, cost);
        let Some(damage) = fate.delivered else {
            if fate.header_hit {
                LinkStats::add(&s.dropped_header, 1);
            } else {
                LinkStats::add(&s.dropped_retries, 1);
            }
            continue;
        };
        if leave > now + SLEEP_SLACK {
            std::thread::sleep(leave - now);
        }
        if d.to.send(&out).is_err() {
            LinkStats::add(&s.dropped_write, 1);
            continue;
        }
        let payload = (len - ip_header_len(frame)) as u64 * 8;
        LinkStats::add(&s.payload_bits, payload);
        LinkStats::add(&s.flipped_bits, damage.flips);
        if damage.flips > 0 {
            LinkStats::add(&s.damaged, 1);
        } else {
            LinkStats::add(&s.intact, 1);
        }
    }
    Ok(())
}

/// Waits up to `ms` for a frame on `tun`.
fn readable(tun: &Tun, ms: i32) -> Result<bool, String> {
    let mut p = libc::pollfd {
        fd: tun.fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(format!("poll: {e}"));
    }
    Ok(n > 0 && p.revents & libc::POLLIN != 0)
}
