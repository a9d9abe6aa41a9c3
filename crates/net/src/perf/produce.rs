//! The production process of a job's messages (seed 000 §2.2, §7.1): when
//! each message becomes available to send.
//!
//! A job's first message is produced when the job starts (its JCT counts
//! from there); each later message follows the previous one after a gap:
//!
//! * `none` (default): every message is ready at job start;
//! * `fixed:US`: a constant gap of US microseconds;
//! * `exp:US`: exponential gaps of mean US microseconds (Poisson production);
//! * `--produce-mbps R`: the gap before a message is its size at R Mbit/s.
//!
//! Gaps are whole nanoseconds drawn from [`GapRng`] (splitmix64), seeded
//! with the gap seed alone, one draw per gap in job order, so the Python
//! baselines (`approxnet.testbed.traffic.production`, `production_offsets`) get the
//! same production times from the same seed.

use approxnet_proto::job::MessageSpec;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How messages are produced over a job's lifetime.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Production {
    /// Every message ready at job start (the all-at-once job).
    AllAtStart,
    /// A constant gap, in nanoseconds.
    Fixed(u64),
    /// Exponential gaps of this mean, in nanoseconds.
    Exp(f64),
    /// A message's gap is its size at this rate, in bits per second.
    Rate(f64),
}

/// The longest gap (mean) accepted: 10 s, far past any job's bound.
const MAX_GAP_US: f64 = 10e6;

impl Production {
    /// Parses `--gap-us` (`none`, `fixed:US`, `exp:US`) and
    /// `--produce-mbps R`; at most one of them may be given.
    pub(crate) fn parse(gap_us: Option<&str>, mbps: Option<&str>) -> Result<Production, String> {
        match (gap_us, mbps) {
            (Some(_), Some(_)) => Err("give --gap-us or --produce-mbps, not both".into()),
            (None, None) => Ok(Production::AllAtStart),
            (None, Some(r)) => {
                let v: f64 = r
                    .parse()
                    .map_err(|_| format!("--produce-mbps `{r}`: expected Mbit/s, e.g. 500"))?;
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("--produce-mbps {r}: the rate must be > 0"));
                }
                Ok(Production::Rate(v * 1e6))
            }
            (Some(spec), None) => Self::parse_gap(spec),
        }
    }

    fn parse_gap(spec: &str) -> Result<Production, String> {
        let bad = || format!("--gap-us `{spec}`: expected none, fixed:US or exp:US");
        if spec == "none" {
            return Ok(Production::AllAtStart);
        }
        let (kind, v) = spec.split_once(':').ok_or_else(bad)?;
        let us: f64 = v.parse().map_err(|_| bad())?;
        if !(us.is_finite() && us <= MAX_GAP_US) {
            return Err(format!(
                "--gap-us `{spec}`: give a gap of at most {MAX_GAP_US} us"
            ));
        }
        match kind {
            "fixed" if us >= 0.0 => Ok(Production::Fixed((us * 1000.0).round() as u64)),
            "exp" if us > 0.0 => Ok(Production::Exp(us * 1000.0)),
            "fixed" | "exp" => Err(format!(
                "--gap-us `{spec}`: the gap must be >= 0 (fixed) or > 0 (exp)"
            )),
            _ => Err(bad()),
        }
    }

    /// Whether messages arrive over time (the job is opened as a streaming job).
    pub(crate) fn streams(&self) -> bool {
        *self != Production::AllAtStart
    }

    /// The setting as `--gap-us` / `--produce-mbps` would write it (reports).
    pub(crate) fn describe(&self) -> String {
        match self {
            Production::AllAtStart => "none".into(),
            Production::Fixed(ns) => format!("fixed:{}", *ns as f64 / 1e3),
            Production::Exp(ns) => format!("exp:{}", ns / 1e3),
            Production::Rate(bps) => format!("rate:{}mbps", bps / 1e6),
        }
    }

    /// Production time of each message of a job, in ns after job start:
    /// the first is 0, each later one adds a gap (`sizes` in bytes).
    pub(crate) fn offsets(&self, rng: &mut GapRng, sizes: &[usize]) -> Vec<u64> {
        let mut at = 0u64;
        let mut out = Vec::with_capacity(sizes.len());
        for (i, &size) in sizes.iter().enumerate() {
            if i > 0 {
                at = at.saturating_add(self.gap(rng, size));
            }
            out.push(at);
        }
        out
    }

    fn gap(&self, rng: &mut GapRng, size: usize) -> u64 {
        match self {
            Production::AllAtStart => 0,
            Production::Fixed(ns) => *ns,
            Production::Exp(mean) => round_ns(-mean * (1.0 - rng.unit()).ln()),
            Production::Rate(bps) => round_ns(size as f64 * 8.0 / bps * 1e9),
        }
    }
}

/// A streaming job's messages not yet handed over, each with its
/// production time (a monotonic deadline: a late loop catches up, it never
/// shifts the later ones).
pub(crate) struct Feed {
    start: Instant,
    /// (ns after start, message), in production order.
    pending: VecDeque<(u64, MessageSpec)>,
    /// Bytes produced after the job met its MSR (never sent).
    dropped: u64,
}

impl Feed {
    /// Messages with their production offsets (from [`Production::offsets`]).
    pub(crate) fn new(start: Instant, offsets: Vec<u64>, msgs: Vec<MessageSpec>) -> Feed {
        Feed {
            start,
            pending: offsets.into_iter().zip(msgs).collect(),
            dropped: 0,
        }
    }

    /// Takes every message produced at or before `now`.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<MessageSpec> {
        let el = now.saturating_duration_since(self.start).as_nanos();
        let mut out = Vec::new();
        while self
            .pending
            .front()
            .is_some_and(|(at, _)| u128::from(*at) <= el)
        {
            if let Some((_, m)) = self.pending.pop_front() {
                out.push(m);
            }
        }
        out
    }

    /// When the next message is produced; `None` once all were handed over.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.pending
            .front()
            .map(|(at, _)| self.start + Duration::from_nanos(*at))
    }

    /// The job refused `bytes` taken from this feed (it had met its MSR):
    /// they and everything still to come are dropped.
    pub(crate) fn discard(&mut self, bytes: u64) {
        self.dropped += bytes + self.pending_bytes();
        self.pending.clear();
    }

    fn pending_bytes(&self) -> u64 {
        self.pending
            .iter()
            .map(|(_, m)| m.payload.len() as u64)
            .sum()
    }

    /// The job ended: bytes it never got, handed over too late or never
    /// produced.
    pub(crate) fn finish(self) -> u64 {
        self.dropped + self.pending_bytes()
    }
}

/// Round half up to whole nanoseconds (the Python side does the same).
fn round_ns(x: f64) -> u64 {
    (x + 0.5).floor() as u64
}

/// splitmix64: a tiny generator that Python reproduces bit for bit.
pub(crate) struct GapRng(u64);

impl GapRng {
    pub(crate) fn new(seed: u64) -> GapRng {
        GapRng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(g: &str) -> Result<Production, String> {
        Production::parse(Some(g), None)
    }

    #[test]
    fn gap_specs_parse() {
        assert_eq!(Production::parse(None, None), Ok(Production::AllAtStart));
        assert_eq!(p("none"), Ok(Production::AllAtStart));
        assert_eq!(p("fixed:200"), Ok(Production::Fixed(200_000)));
        assert_eq!(p("fixed:0.5"), Ok(Production::Fixed(500)));
        assert_eq!(p("fixed:0"), Ok(Production::Fixed(0)));
        assert_eq!(p("exp:200"), Ok(Production::Exp(200_000.0)));
        assert_eq!(
            Production::parse(None, Some("500")),
            Ok(Production::Rate(500e6))
        );
        assert_eq!(p("exp:1.5").unwrap().describe(), "exp:1.5");
    }

    #[test]
    fn bad_gap_specs_are_errors() {
        for bad in [
            "",
            "fixed",
            "fixed:",
            "exp:0",
            "exp:-1",
            "fixed:-1",
            "exp:nan",
            "exp:inf",
            "fixed:1e9",
            "pareto:3",
            "200",
            "fixed:abc",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
        for bad in ["0", "-5", "nan", "x"] {
            assert!(Production::parse(None, Some(bad)).is_err(), "{bad}");
        }
        assert!(Production::parse(Some("fixed:1"), Some("100")).is_err());
    }

    #[test]
    fn offsets_start_at_zero_and_follow_the_gaps() {
        let mut rng = GapRng::new(1);
        let f = Production::Fixed(200_000).offsets(&mut rng, &[10; 4]);
        assert_eq!(f, vec![0, 200_000, 400_000, 600_000]);
        let r = Production::Rate(1e9).offsets(&mut rng, &[1000, 125, 250]);
        assert_eq!(r, vec![0, 1_000, 3_000]);
        assert_eq!(
            Production::AllAtStart.offsets(&mut rng, &[1; 3]),
            vec![0; 3]
        );
    }

    #[test]
    fn exp_gaps_are_seeded_and_have_the_mean() {
        let e = Production::Exp(1000.0);
        let a = e.offsets(&mut GapRng::new(7), &[1; 20_001]);
        let b = e.offsets(&mut GapRng::new(7), &[1; 20_001]);
        assert_eq!(a, b);
        let mean = a[20_000] as f64 / 20_000.0;
        assert!((mean - 1000.0).abs() < 30.0, "{mean}");
        // The values the Python port (tools.production_offsets) must match.
        let first = e.offsets(&mut GapRng::new(1), &[1; 4]);
        assert_eq!(first, vec![0, 836, 2_206, 5_747]);
    }
}
