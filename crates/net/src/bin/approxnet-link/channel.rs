//! The frame channel: which bits of one transmission of a frame arrive
//! flipped. Bits are flipped with `approxnet_phy`'s seeded injector, after
//! the sending kernel computed every checksum, so the receiving kernel's
//! UDP / UDP-Lite / TCP checksums judge the damage for real.
//!
//! The IP header is never written damaged: a transmission whose errors hit
//! the IP header is reported as `header_hit` and the caller loses the frame.
//! That is what the receiving kernel would do with it anyway (the IPv4
//! header checksum catches every single-bit error, and a damaged length or
//! address cannot be delivered sensibly), and it keeps the errors that do
//! reach a socket at exactly the configured per-bit rate.

use approxnet_phy::inject::BitErrors;
use approxnet_proto::rng::Rng;

/// The longest IPv4 header (IHL = 15).
const MAX_HEADER: usize = 60;

/// How bits are damaged.
#[derive(Clone, Debug)]
pub(crate) enum ChannelSpec {
    /// Each bit independently with probability `ber`.
    Ber(f64),
    /// Gilbert-Elliott, state changed per frame transmission: BER `good` in
    /// the good state, `bad` in the bad one; `p_gb` / `p_bg` are the
    /// per-transmission chances of leaving the good / bad state.
    GilbertElliott {
        good: f64,
        bad: f64,
        p_gb: f64,
        p_bg: f64,
    },
    /// Tests: bit 0 of byte `offset` of the IP payload in every
    /// transmission of at least `min_len` bytes (and long enough to have
    /// that byte).
    FlipAt { offset: usize, min_len: usize },
}

impl ChannelSpec {
    /// Parses `ber:1e-5`, `ge:GOOD:BAD:P_GB:P_BG` or `flip-at:N`.
    pub(crate) fn parse(s: &str) -> Result<ChannelSpec, String> {
        let prob = |field: &str, v: &str| -> Result<f64, String> {
            match v.parse::<f64>() {
                Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
                _ => Err(format!(
                    "--channel {field}: `{v}` is not a probability in [0, 1]"
                )),
            }
        };
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            ["ber", b] => Ok(ChannelSpec::Ber(prob("ber", b)?)),
            ["ge", g, b, gb, bg] => Ok(ChannelSpec::GilbertElliott {
                good: prob("good-state BER", g)?,
                bad: prob("bad-state BER", b)?,
                p_gb: prob("P(good->bad)", gb)?,
                p_bg: prob("P(bad->good)", bg)?,
            }),
            ["flip-at", n, rest @ ..] if rest.len() <= 1 => {
                let num = |v: &str, what: &str| {
                    v.parse::<usize>()
                        .map_err(|_| format!("--channel flip-at: `{v}` is not a {what}"))
                };
                Ok(ChannelSpec::FlipAt {
                    offset: num(n, "byte offset")?,
                    min_len: rest.first().map_or(Ok(0), |m| num(m, "frame length"))?,
                })
            }
            _ => Err(format!(
                "--channel `{s}`: expected ber:P, ge:GOOD:BAD:P_GB:P_BG or flip-at:N[:MIN_LEN]"
            )),
        }
    }

    /// The long-run bit error rate this channel produces (for reports).
    pub(crate) fn mean_ber(&self) -> Option<f64> {
        match *self {
            ChannelSpec::Ber(b) => Some(b),
            ChannelSpec::GilbertElliott {
                good,
                bad,
                p_gb,
                p_bg,
            } => {
                let share_bad = if p_gb + p_bg > 0.0 {
                    p_gb / (p_gb + p_bg)
                } else {
                    0.0
                };
                Some(good * (1.0 - share_bad) + bad * share_bad)
            }
            ChannelSpec::FlipAt { .. } => None,
        }
    }
}

/// What one transmission did to a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Damage {
    /// Errors fell in the IP header: the frame is lost.
    pub(crate) header_hit: bool,
    /// Bits flipped after the IP header.
    pub(crate) flips: u64,
}

impl Damage {
    /// The transmission arrived exactly as sent.
    pub(crate) fn clean(&self) -> bool {
        !self.header_hit && self.flips == 0
    }
}

/// A seeded channel instance (one per link direction).
pub(crate) struct Channel {
    kind: Kind,
}

enum Kind {
    Ber(BitErrors),
    Ge {
        good: BitErrors,
        bad: BitErrors,
        p_gb: f64,
        p_bg: f64,
        in_bad: bool,
        rng: Rng,
    },
    FlipAt {
        offset: usize,
        min_len: usize,
    },
}

impl Channel {
    /// A channel drawing its errors from `seed`.
    pub(crate) fn new(spec: &ChannelSpec, seed: u64) -> Channel {
        // The specs were validated to hold probabilities, which BitErrors takes.
        let inj = |ber: f64, s: u64| BitErrors::new(ber, s).expect("BER validated in [0, 1]");
        let kind = match *spec {
            ChannelSpec::Ber(b) => Kind::Ber(inj(b, seed)),
            ChannelSpec::GilbertElliott {
                good,
                bad,
                p_gb,
                p_bg,
            } => Kind::Ge {
                good: inj(good, seed),
                bad: inj(bad, seed ^ 0x5bd1_e995),
                p_gb,
                p_bg,
                in_bad: false,
                rng: Rng::new(seed ^ 0xa076_1d64_78bd_642f),
            },
            ChannelSpec::FlipAt { offset, min_len } => Kind::FlipAt { offset, min_len },
        };
        Channel { kind }
    }

    /// True when no transmission can ever be damaged (BER 0): the caller
    /// may then skip copying frames.
    pub(crate) fn is_clean(&self, spec: &ChannelSpec) -> bool {
        matches!(spec, ChannelSpec::Ber(b) if *b == 0.0)
    }

    /// Damages one transmission of `frame` in place.
    pub(crate) fn transmit(&mut self, frame: &mut [u8]) -> Damage {
        let header = ip_header_len(frame);
        match &mut self.kind {
            Kind::FlipAt { offset, min_len } => {
                let at = header + *offset;
                if at < frame.len() && frame.len() >= *min_len {
                    frame[at] ^= 1;
                    Damage {
                        header_hit: false,
                        flips: 1,
                    }
                } else {
                    Damage::default()
                }
            }
            Kind::Ber(inj) => apply(inj, frame, header),
            Kind::Ge {
                good,
                bad,
                p_gb,
                p_bg,
                in_bad,
                rng,
            } => {
                let leave = if *in_bad { *p_bg } else { *p_gb };
                if rng.chance(leave) {
                    *in_bad = !*in_bad;
                }
                apply(if *in_bad { bad } else { good }, frame, header)
            }
        }
    }
}

/// Flips bits over the whole frame; reports header hits and payload flips.
fn apply(inj: &mut BitErrors, frame: &mut [u8], header: usize) -> Damage {
    if header > MAX_HEADER {
        // Not an IP packet we know: any error loses it.
        let flips = inj.apply(frame, 0);
        return Damage {
            header_hit: flips > 0,
            flips: 0,
        };
    }
    let mut saved = [0u8; MAX_HEADER];
    saved[..header].copy_from_slice(&frame[..header]);
    let flips = inj.apply(frame, 0);
    if flips == 0 {
        return Damage::default();
    }
    let in_header: u32 = saved[..header]
        .iter()
        .zip(&frame[..header])
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    Damage {
        header_hit: in_header > 0,
        flips: flips - u64::from(in_header),
    }
}

/// Length of the IP header at the start of `frame`, bounded by the frame:
/// IPv4's IHL, IPv6's fixed 40 bytes; anything else counts as all header
/// (never damaged, so never delivered damaged).
pub(crate) fn ip_header_len(frame: &[u8]) -> usize {
    match frame.first().map(|b| b >> 4) {
        Some(4) => (usize::from(frame[0] & 0x0f) * 4).min(frame.len()),
        Some(6) => frame.len().min(40),
        _ => frame.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[0] = 0x45;
        f
    }

    #[test]
    fn specs_parse_and_reject_bad_fields() {
        assert!(matches!(ChannelSpec::parse("ber:1e-5"), Ok(ChannelSpec::Ber(b)) if b == 1e-5));
        assert!(ChannelSpec::parse("ge:0:0.01:0.1:0.5").is_ok());
        let e = ChannelSpec::parse("ber:1.5").unwrap_err();
        assert!(e.contains("ber"), "{e}");
        let e = ChannelSpec::parse("ge:0:2:0.1:0.5").unwrap_err();
        assert!(e.contains("bad-state BER"), "{e}");
        assert!(ChannelSpec::parse("flip-at:x").is_err());
        assert!(ChannelSpec::parse("noise").is_err());
    }

    #[test]
    fn header_hits_are_reported_and_payload_flips_counted() {
        let mut ch = Channel::new(&ChannelSpec::Ber(1.0), 1);
        let mut f = ipv4(28);
        let d = ch.transmit(&mut f);
        assert!(d.header_hit);
        assert_eq!(d.flips, 64, "the 8 bytes after the header");
        let mut ch = Channel::new(&ChannelSpec::parse("flip-at:3").unwrap(), 1);
        let mut f = ipv4(28);
        let d = ch.transmit(&mut f);
        assert_eq!(
            d,
            Damage {
                header_hit: false,
                flips: 1
            }
        );
        assert_eq!(f[23], 1);
        let mut short = ipv4(22);
        assert!(ch.transmit(&mut short).clean());
        let mut ch = Channel::new(&ChannelSpec::parse("flip-at:3:100").unwrap(), 1);
        assert!(ch.transmit(&mut ipv4(99)).clean(), "shorter than MIN_LEN");
        assert!(!ch.transmit(&mut ipv4(100)).clean());
        assert!(ChannelSpec::parse("flip-at:3:x").is_err());
        assert!(ChannelSpec::parse("flip-at:3:4:5").is_err());
    }

    #[test]
    fn same_seed_same_damage() {
        let spec = ChannelSpec::parse("ge:1e-4:1e-2:0.2:0.4").unwrap();
        let run = |seed| {
            let mut ch = Channel::new(&spec, seed);
            (0..200)
                .map(|_| {
                    let mut f = ipv4(1500);
                    ch.transmit(&mut f).flips
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
        assert!((spec.mean_ber().unwrap() - (1e-4 * 2.0 / 3.0 + 1e-2 / 3.0)).abs() < 1e-12);
    }

    #[test]
    fn odd_frames_are_all_header() {
        assert_eq!(ip_header_len(&[]), 0);
        assert_eq!(ip_header_len(&[0x4f, 0, 0]), 3);
        assert_eq!(ip_header_len(&[0x00; 10]), 10);
        assert_eq!(ip_header_len(&[0x60; 100]), 40);
    }
}
