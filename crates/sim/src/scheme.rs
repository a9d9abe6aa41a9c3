//! Which transport (and which sender-side approximation) a job uses.
//!
//! Seed 000 section 7.1 compares ATP against two sender-side approximation
//! schemes on reliable transports: EarlySend (ES) "sends messages as early as
//! possible over a reliable transport and stops sending once MSR data have
//! been received", SampleSend (SS) "samples messages uniformly ... with a
//! sampling rate of MSR; it sends out the sampled message over a reliable
//! transport"; the reliable transports are DCTCP, pFabric and Aeolus; plain
//! UDP is the performance baseline.

pub use approxnet_proto::Variant;
use std::fmt;

/// A natively simulated transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proto {
    /// DCTCP (ECN window).
    Dctcp,
    /// NewReno-like loss-based TCP.
    Tcp,
    /// pFabric (remaining-size priority).
    PFabric,
    /// UDP at line rate.
    Udp,
    /// Aeolus on ExpressPass: the first RTT unscheduled at line rate, then
    /// receiver credits (see `transport::aeolus`).
    Aeolus,
}

/// How a reliable transport approximates a job with MSR < 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SenderApprox {
    /// Send every message, finish when all arrived.
    Exact,
    /// SampleSend: send a uniform sample of ceil(MSR * N) messages.
    SampleSend,
    /// EarlySend: send all messages, stop once ceil(MSR * N) arrived.
    EarlySend,
}

/// A job's transport scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// A native transport with a sender-side approximation.
    Native(Proto, SenderApprox),
    /// ATP from `approxnet-proto`, driven through the host adapter.
    /// One of the six ablation variants of seed 000 §7.1.2-7.1.3.
    Atp(Variant),
}

/// Scheme names accepted in scenario files.
pub const NAMES: &[&str] = &[
    "dctcp",
    "dctcp-ss",
    "dctcp-es",
    "tcp",
    "tcp-ss",
    "tcp-es",
    "pfabric",
    "pfabric-ss",
    "pfabric-es",
    "udp",
    "aeolus",
    "aeolus-ss",
    "aeolus-es",
    "atp-base",
    "atp-rc",
    "atp-mrdf",
    "atp-fixtlr",
    "atp-fixprio",
    "atp-full",
];

impl Scheme {
    /// Parses a scheme name (see [`NAMES`]).
    pub fn parse(s: &str) -> Option<Scheme> {
        use SenderApprox::*;
        let (base, approx) = match s.rsplit_once('-') {
            Some((b, "ss")) => (b, SampleSend),
            Some((b, "es")) => (b, EarlySend),
            _ => (s, Exact),
        };
        let proto = match base {
            "dctcp" => Proto::Dctcp,
            "tcp" => Proto::Tcp,
            "pfabric" => Proto::PFabric,
            "aeolus" => Proto::Aeolus,
            "udp" if approx == Exact => Proto::Udp,
            "atp" => return None,
            _ => {
                let v = match s {
                    "atp" => Variant::Full,
                    _ => Variant::from_name(s.strip_prefix("atp-")?)?,
                };
                return Some(Scheme::Atp(v));
            }
        };
        Some(Scheme::Native(proto, approx))
    }

    /// Whether this scheme runs through the sans-IO endpoint adapter.
    pub fn is_atp(&self) -> bool {
        matches!(self, Scheme::Atp(_))
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scheme::Native(p, a) => {
                let p = match p {
                    Proto::Dctcp => "dctcp",
                    Proto::Tcp => "tcp",
                    Proto::PFabric => "pfabric",
                    Proto::Udp => "udp",
                    Proto::Aeolus => "aeolus",
                };
                let a = match a {
                    SenderApprox::Exact => "",
                    SenderApprox::SampleSend => "-ss",
                    SenderApprox::EarlySend => "-es",
                };
                write!(f, "{p}{a}")
            }
            Scheme::Atp(v) => write!(f, "atp-{}", v.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for n in NAMES {
            let s = Scheme::parse(n).unwrap_or_else(|| panic!("{n}"));
            assert_eq!(&s.to_string(), n);
        }
        assert!(Scheme::parse("udp-ss").is_none());
        assert_eq!(
            Scheme::parse("aeolus-es"),
            Some(Scheme::Native(Proto::Aeolus, SenderApprox::EarlySend))
        );
        assert!(Scheme::parse("quic").is_none());
        assert_eq!(Scheme::parse("atp"), None);
    }
}
