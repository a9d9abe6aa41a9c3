//! The link's two modes and what one frame's fate is under each.
//!
//! * **Integrity** (802.11 as shipped): a transmission that arrives damaged
//!   fails the frame check sequence, is not acknowledged and is sent again,
//!   up to `retry_limit` retries (802.11's dot11ShortRetryLimit defaults
//!   to 7); every try costs airtime; after the last one the frame is
//!   dropped. What is delivered is always intact.
//! * **Approximate** (seed 002 §3.1: the sender's retry limit is zero for
//!   approximate data and the receiver's driver passes frames that fail the
//!   FCS up): one try; the frame is delivered as received, damaged or not.
//!   A frame whose IP header was hit is lost (see `channel.rs`).
//! * **Per frame** (`sap`, seed 002 §3.1 as the paper's driver does it):
//!   approximate for a frame whose UDP-Lite checksum covers less than the
//!   datagram (it carries approximate bytes), integrity for every other
//!   frame (TCP, UDP, precise UDP-Lite, SAP's ACKs and control packets).

use crate::channel::{Channel, Damage};

/// How the link treats a damaged frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkMode {
    /// Retransmit damaged frames up to the retry limit, then drop.
    Integrity,
    /// Deliver frames as received.
    Approximate,
    /// Approximate for partially covered UDP-Lite frames, else integrity.
    PerFrame,
}

/// IP protocol number of UDP-Lite (RFC 3828).
const IPPROTO_UDPLITE: u8 = 136;

/// Whether `frame` (an IPv4 packet) is UDP-Lite whose checksum coverage
/// stops before its end (RFC 3828 §3.1: coverage 0 means the whole
/// datagram). Anything unreadable counts as fully covered.
pub(crate) fn partially_covered(frame: &[u8]) -> bool {
    if frame.len() < 20 || frame[0] >> 4 != 4 || frame[9] != IPPROTO_UDPLITE {
        return false;
    }
    let ihl = usize::from(frame[0] & 0x0f) * 4;
    let Some(udp) = frame.get(ihl..ihl + 8) else {
        return false;
    };
    let coverage = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    coverage != 0 && coverage < frame.len() - ihl
}

impl LinkMode {
    /// Parses `integrity` or `approximate`.
    pub(crate) fn parse(s: &str) -> Result<LinkMode, String> {
        match s {
            "integrity" => Ok(LinkMode::Integrity),
            "approximate" => Ok(LinkMode::Approximate),
            "sap" => Ok(LinkMode::PerFrame),
            _ => Err(format!(
                "--mode `{s}`: expected integrity, approximate or sap"
            )),
        }
    }
}

/// The fate of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fate {
    /// Transmissions spent on the air (1 + retries).
    pub(crate) tries: u32,
    /// What the delivered copy carries; `None` when the frame is dropped.
    pub(crate) delivered: Option<Damage>,
    /// Dropped because a try hit the IP header (approximate mode), rather
    /// than because the retries ran out.
    pub(crate) header_hit: bool,
}

/// Sends `frame` over `channel` under `mode`; on return `out` holds the
/// delivered bytes when `Fate::delivered` is `Some`. `clean` says the
/// channel never damages (no copy is made then).
pub(crate) fn send_frame(
    mode: LinkMode,
    retry_limit: u32,
    channel: &mut Channel,
    clean: bool,
    frame: &[u8],
    out: &mut Vec<u8>,
) -> Fate {
    let mode = match mode {
        LinkMode::PerFrame if partially_covered(frame) => LinkMode::Approximate,
        LinkMode::PerFrame => LinkMode::Integrity,
        m => m,
    };
    out.clear();
    out.extend_from_slice(frame);
    if clean {
        return Fate {
            tries: 1,
            delivered: Some(Damage::default()),
            header_hit: false,
        };
    }
    let tries_allowed = match mode {
        LinkMode::Integrity | LinkMode::PerFrame => retry_limit.saturating_add(1),
        LinkMode::Approximate => 1,
    };
    let mut last = Damage::default();
    for tries in 1..=tries_allowed {
        if tries > 1 {
            out.clear();
            out.extend_from_slice(frame);
        }
        last = channel.transmit(out);
        if last.clean() {
            return Fate {
                tries,
                delivered: Some(last),
                header_hit: false,
            };
        }
    }
    match mode {
        LinkMode::Approximate if !last.header_hit => Fate {
            tries: 1,
            delivered: Some(last),
            header_hit: false,
        },
        LinkMode::Approximate => Fate {
            tries: 1,
            delivered: None,
            header_hit: true,
        },
        LinkMode::Integrity | LinkMode::PerFrame => Fate {
            tries: tries_allowed,
            delivered: None,
            header_hit: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::ChannelSpec;

    fn frame() -> Vec<u8> {
        let mut f = vec![0u8; 1500];
        f[0] = 0x45;
        f
    }

    #[test]
    fn integrity_retries_then_drops_and_never_delivers_damage() {
        let mut ch = Channel::new(&ChannelSpec::parse("flip-at:10").unwrap(), 1);
        let mut out = Vec::new();
        let fate = send_frame(LinkMode::Integrity, 7, &mut ch, false, &frame(), &mut out);
        assert_eq!(fate.tries, 8);
        assert_eq!(fate.delivered, None);
        let mut ch = Channel::new(&ChannelSpec::Ber(1e-4), 3);
        let (mut delivered, mut tries) = (0, 0);
        for _ in 0..2000 {
            let fate = send_frame(LinkMode::Integrity, 7, &mut ch, false, &frame(), &mut out);
            tries += fate.tries;
            if let Some(d) = fate.delivered {
                assert!(d.clean());
                assert_eq!(out, frame());
                delivered += 1;
            }
        }
        // P(frame damaged) = 1 - (1 - 1e-4)^12000 ~ 0.70: ~3.3 tries each,
        // and ~6 % of frames fail all eight tries.
        assert!((1700..1970).contains(&delivered), "{delivered}");
        assert!(tries > 5000, "{tries}");
    }

    #[test]
    fn approximate_delivers_damage_once() {
        let mut ch = Channel::new(&ChannelSpec::parse("flip-at:10").unwrap(), 1);
        let mut out = Vec::new();
        let fate = send_frame(LinkMode::Approximate, 7, &mut ch, false, &frame(), &mut out);
        assert_eq!(fate.tries, 1);
        assert_eq!(fate.delivered.unwrap().flips, 1);
        assert_eq!(out[30], 1);
        assert!(LinkMode::parse("lossy").is_err());
    }

    /// A 1,000-byte IPv4 UDP-Lite packet whose checksum covers `coverage`.
    fn udplite(coverage: u16) -> Vec<u8> {
        let mut f = frame();
        f.truncate(1000);
        f[9] = IPPROTO_UDPLITE;
        f[24..26].copy_from_slice(&coverage.to_be_bytes());
        f
    }

    #[test]
    fn per_frame_mode_retries_all_but_partially_covered_udplite() {
        assert!(partially_covered(&udplite(64)));
        assert!(!partially_covered(&udplite(0)), "0: the whole datagram");
        assert!(!partially_covered(&udplite(980)), "980 = all of it");
        assert!(!partially_covered(&frame()), "not UDP-Lite");
        assert!(!partially_covered(&udplite(64)[..22]), "truncated");
        let mut out = Vec::new();
        let flip = ChannelSpec::parse("flip-at:40").unwrap();
        let m = LinkMode::parse("sap").unwrap();
        let mut ch = Channel::new(&flip, 1);
        let fate = send_frame(m, 7, &mut ch, false, &udplite(64), &mut out);
        assert_eq!((fate.tries, fate.delivered.map(|d| d.flips)), (1, Some(1)));
        for f in [udplite(0), frame()] {
            let mut ch = Channel::new(&flip, 1);
            let fate = send_frame(m, 7, &mut ch, false, &f, &mut out);
            assert_eq!(
                (fate.tries, fate.delivered),
                (8, None),
                "retried, then dropped"
            );
        }
    }
}
