//! Named ATP variants: each is one combination of the policy types.

use super::*;
use core::fmt;
use core::str::FromStr;

/// The ATP ablations of seed 000 §7.1.2 and §7.1.3, selectable by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Raw line-rate sending, retransmissions after all new packets.
    Base,
    /// Base + slack rate control with TLR fixed at `1 - MSR`.
    Rc,
    /// RC + MRDF scheduling.
    Mrdf,
    /// Fixed TLR, MRDF, queue from the (fixed) TLR.
    FixTlr,
    /// Dynamic TLR, but the queue stays where the initial TLR put it.
    FixPrio,
    /// Dynamic TLR and dynamic queue: the full protocol.
    #[default]
    Full,
}

/// The policy objects a variant stands for.
pub struct Policies {
    /// Rate controller.
    pub rate: Box<dyn RateController>,
    /// Packet scheduler.
    pub scheduler: Box<dyn Scheduler>,
    /// TLR source.
    pub tlr: Box<dyn TlrSource>,
    /// Queue selector.
    pub queue: Box<dyn QueueSelector>,
}

impl Variant {
    /// Every variant, in the order of the paper's ablation.
    pub const ALL: [Variant; 6] = [
        Variant::Base,
        Variant::Rc,
        Variant::Mrdf,
        Variant::FixTlr,
        Variant::FixPrio,
        Variant::Full,
    ];

    /// The variant's name as written in seed 000 (e.g. `"ATP FixTLR"` is `fixtlr`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Base => "base",
            Variant::Rc => "rc",
            Variant::Mrdf => "mrdf",
            Variant::FixTlr => "fixtlr",
            Variant::FixPrio => "fixprio",
            Variant::Full => "full",
        }
    }

    /// The variant's position in [`Variant::ALL`] (a compact key for tables).
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The variant at `i` in [`Variant::ALL`], if any.
    pub fn from_index(i: u8) -> Option<Variant> {
        Variant::ALL.get(usize::from(i)).copied()
    }

    /// The variant whose [`Variant::name`] is exactly `name` (no case or
    /// punctuation folding; [`FromStr`] is the lenient parser).
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Builds the policies; `rate` configures the slack controller where used.
    /// The dynamic queue selection follows the default [`QueueRule`].
    pub fn policies(self, rate: SlackRate) -> Policies {
        self.policies_with(rate, QueueRule::default())
    }

    /// As [`Variant::policies`], with `rule` choosing how the variants with
    /// a dynamic queue (FixTLR, Full) map the TLR to a queue.
    pub fn policies_with(self, rate: SlackRate, rule: QueueRule) -> Policies {
        let p = |rate: Box<dyn RateController>,
                 scheduler: Box<dyn Scheduler>,
                 tlr: Box<dyn TlrSource>,
                 queue: Box<dyn QueueSelector>| Policies {
            rate,
            scheduler,
            tlr,
            queue,
        };
        let slack = Box::new(rate);
        match self {
            Variant::Base => p(
                Box::new(LineRate),
                Box::new(NewFirst),
                Box::new(FixedTlr),
                Box::new(FixedQueue),
            ),
            Variant::Rc => p(
                slack,
                Box::new(NewFirst),
                Box::new(FixedTlr),
                Box::new(FixedQueue),
            ),
            Variant::Mrdf => p(
                slack,
                Box::new(Mrdf),
                Box::new(FixedTlr),
                Box::new(FixedQueue),
            ),
            Variant::FixTlr => p(slack, Box::new(Mrdf), Box::new(FixedTlr), rule.selector()),
            Variant::FixPrio => p(
                slack,
                Box::new(Mrdf),
                Box::new(DynamicTlr),
                Box::new(FixedQueue),
            ),
            Variant::Full => p(slack, Box::new(Mrdf), Box::new(DynamicTlr), rule.selector()),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ATP variant {0:?}; expected one of base, rc, mrdf, fixtlr, fixprio, full")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let k = s.trim().to_ascii_lowercase().replace(['-', '_', ' '], "");
        let k = k.strip_prefix("atp").unwrap_or(&k);
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == k)
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_name_round_trip() {
        for (i, v) in Variant::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(v.index()), i);
            assert_eq!(Variant::from_index(v.index()), Some(v));
            assert_eq!(Variant::from_name(v.name()), Some(v));
        }
        assert_eq!(Variant::from_index(6), None);
        assert_eq!(Variant::from_name("Full"), None);
    }

    #[test]
    fn names_parse() {
        for v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>().unwrap(), v);
        }
        assert_eq!("ATP FixTLR".parse::<Variant>().unwrap(), Variant::FixTlr);
        assert!("fast".parse::<Variant>().is_err());
    }
}
