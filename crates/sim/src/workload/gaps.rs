//! When a job's messages are produced: the gap between consecutive
//! messages of one job.
//!
//! Seed 000 §7.1 draws "the size and inter-arrival times of messages in the
//! jobs" from the traces, and §2.2 turns on it: SampleSend "is as slow as
//! the speed of the entire data production process", while EarlySend (and
//! ATP) can finish once enough has arrived. A job's first message is
//! produced at the job's start; message `i > 0` one gap after message
//! `i - 1`.
//!
//! Production time does not change the offered load: a class's job arrival
//! rate stays `load * rate / 8 / job_bytes` (bytes define the load); gaps
//! only spread each job's bytes over its production time.

use approxnet_proto::rng::Rng;
use std::fmt;

/// FBKV inter-arrival model (Atikoglu et al., "Workload Analysis of a
/// Large-Scale Key-Value Store", SIGMETRICS 2012, the ETC pool; as given in
/// `data/workloads/README.md` and shipped by mutilate as `fb_ia`):
/// generalized Pareto, location 0, scale sigma = 16.0292 us.
const FBKV_SIGMA_NS: f64 = 16_029.2;
/// Its shape xi (mean sigma / (1 - xi) = 18.97 us).
const FBKV_XI: f64 = 0.154971;

/// Names accepted by [`GapDist::parse`].
pub const NAMES: &[&str] = &["none", "fbkv", "exp:<mean_us>", "fixed:<us>", "cdf:<path>"];

/// The distribution of the gap between consecutive messages of a job.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum GapDist {
    /// Every message is ready at the job's start (no production process).
    #[default]
    None,
    /// FBKV's generalized-Pareto inter-arrival model (mean ~19 us).
    Fbkv,
    /// Exponential gaps with this mean, ns (a Poisson production process).
    Exp {
        /// Mean gap, ns.
        mean_ns: f64,
    },
    /// Every gap is exactly this long, ns.
    Fixed {
        /// The gap, ns.
        ns: u64,
    },
    /// A user's empirical CDF of gaps: `(gap_ns, cumulative probability)`,
    /// linearly interpolated.
    Empirical {
        /// The points, gaps ascending, the last probability 1.
        points: Vec<(f64, f64)>,
    },
}

/// Why a gap distribution name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GapError {
    /// Not one of [`NAMES`].
    #[error("unknown gap distribution {0:?}")]
    Unknown(String),
    /// The parameter is not a number.
    #[error("{0:?}: the parameter is not a number")]
    NotANumber(String),
    /// The parameter is out of range.
    #[error("{0:?}: {1}")]
    OutOfRange(String, &'static str),
    /// A user's CDF file could not be read or is not a CDF.
    #[error("{0}")]
    File(String),
}

impl GapDist {
    /// Parses `none`, `fbkv`, `exp:<mean_us>` (mean > 0), `fixed:<us>` (>= 0)
    /// or `cdf:<path>`: a file of `gap_us cumulative_probability` lines
    /// (probabilities in [0, 1], the last 1; a relative path is read from
    /// the current directory).
    pub fn parse(s: &str) -> Result<GapDist, GapError> {
        if let Some(path) = s.strip_prefix("cdf:") {
            let points = super::cdf::read_cdf(path, "gap").map_err(GapError::File)?;
            let points = points.into_iter().map(|(us, p)| (us * 1e3, p)).collect();
            return Ok(GapDist::Empirical { points });
        }
        let num = |v: &str| -> Result<f64, GapError> {
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| GapError::NotANumber(s.to_string()))?;
            if x.is_finite() {
                Ok(x)
            } else {
                Err(GapError::OutOfRange(s.to_string(), "must be finite"))
            }
        };
        match s.split_once(':') {
            None if s == "none" => Ok(GapDist::None),
            None if s == "fbkv" => Ok(GapDist::Fbkv),
            Some(("exp", v)) => {
                let us = num(v)?;
                if us <= 0.0 {
                    return Err(GapError::OutOfRange(s.to_string(), "the mean must be > 0"));
                }
                Ok(GapDist::Exp { mean_ns: us * 1e3 })
            }
            Some(("fixed", v)) => {
                let us = num(v)?;
                if us < 0.0 {
                    return Err(GapError::OutOfRange(s.to_string(), "the gap must be >= 0"));
                }
                Ok(GapDist::Fixed {
                    ns: (us * 1e3).round() as u64,
                })
            }
            _ => Err(GapError::Unknown(s.to_string())),
        }
    }

    /// Mean gap, ns.
    pub fn mean_ns(&self) -> f64 {
        match self {
            GapDist::None => 0.0,
            GapDist::Fbkv => FBKV_SIGMA_NS / (1.0 - FBKV_XI),
            GapDist::Exp { mean_ns } => *mean_ns,
            GapDist::Fixed { ns } => *ns as f64,
            // the mean of a piecewise-linear inverse CDF: the first point's
            // mass at its value, then each segment's midpoint
            GapDist::Empirical { points } => {
                let (x0, p0) = points[0];
                x0 * p0
                    + points
                        .windows(2)
                        .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
                        .sum::<f64>()
            }
        }
    }

    /// One gap, ns (fractional; callers accumulate before rounding).
    pub fn sample_ns(&self, rng: &mut Rng) -> f64 {
        match *self {
            GapDist::Empirical { ref points } => {
                approxnet_proto::cdf::linear_at(points, rng.next_f64())
            }
            GapDist::None => 0.0,
            GapDist::Fbkv => {
                // gap = sigma * ((1 - u)^(-xi) - 1) / xi, u uniform in [0, 1)
                let u = rng.next_f64();
                FBKV_SIGMA_NS * ((1.0 - u).powf(-FBKV_XI) - 1.0) / FBKV_XI
            }
            GapDist::Exp { mean_ns } => -mean_ns * (1.0 - rng.next_f64()).ln(),
            GapDist::Fixed { ns } => ns as f64,
        }
    }

    /// Draws from `rng` exactly what [`GapDist::ready_ns`] draws, without
    /// computing the times (the first pass of `workload::Arrivals`).
    pub fn skip_ready(&self, n: u32, rng: &mut Rng) {
        let draws = match self {
            GapDist::None | GapDist::Fixed { .. } => 0,
            GapDist::Fbkv | GapDist::Exp { .. } | GapDist::Empirical { .. } => 1,
        };
        if draws > 0 {
            for _ in 1..n {
                rng.next_f64();
            }
        }
    }

    /// Production times of `n` messages, ns after the job's start
    /// (`[0, g1, g1 + g2, ...]`, non-decreasing); empty for [`GapDist::None`]
    /// (every message ready at the start, as `Job::ready_ns` reads it).
    pub fn ready_ns(&self, n: u32, rng: &mut Rng) -> Vec<u64> {
        if *self == GapDist::None || n == 0 {
            return Vec::new();
        }
        let mut t = 0.0;
        let mut v = Vec::with_capacity(n as usize);
        v.push(0);
        for _ in 1..n {
            t += self.sample_ns(rng);
            v.push(t.round() as u64);
        }
        v
    }
}

impl fmt::Display for GapDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GapDist::None => write!(f, "none"),
            GapDist::Fbkv => write!(f, "fbkv"),
            GapDist::Exp { mean_ns } => write!(f, "exp:{}", mean_ns / 1e3),
            GapDist::Empirical { ref points } => write!(f, "cdf ({} points)", points.len()),
            GapDist::Fixed { ns } => write!(f, "fixed:{}", ns as f64 / 1e3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fbkv_mean_gap_is_about_19_us() {
        assert!((GapDist::Fbkv.mean_ns() - 18_969.0).abs() < 5.0);
        let mut rng = Rng::new(7);
        let n = 400_000;
        let mean = (0..n)
            .map(|_| GapDist::Fbkv.sample_ns(&mut rng))
            .sum::<f64>()
            / n as f64;
        // heavy-ish tail (xi = 0.155): the sample mean converges slowly
        assert!((mean - 18_969.0).abs() < 400.0, "{mean}");
    }

    #[test]
    fn generation_is_deterministic_by_seed() {
        let a = GapDist::Fbkv.ready_ns(50, &mut Rng::new(1));
        assert_eq!(a, GapDist::Fbkv.ready_ns(50, &mut Rng::new(1)));
        assert_ne!(a, GapDist::Fbkv.ready_ns(50, &mut Rng::new(2)));
        assert_eq!(a[0], 0);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert!(GapDist::None.ready_ns(50, &mut Rng::new(1)).is_empty());
        let f = GapDist::Fixed { ns: 1000 }.ready_ns(3, &mut Rng::new(1));
        assert_eq!(f, vec![0, 1000, 2000]);
    }

    #[test]
    fn names_parse_and_bad_values_are_errors() {
        for s in ["none", "fbkv", "exp:5", "fixed:2.5", "fixed:0"] {
            let g = GapDist::parse(s).unwrap();
            assert_eq!(GapDist::parse(&g.to_string()).unwrap(), g);
        }
        assert_eq!(
            GapDist::parse("exp:5").unwrap(),
            GapDist::Exp { mean_ns: 5000.0 }
        );
        assert!(matches!(
            GapDist::parse("exp:0"),
            Err(GapError::OutOfRange(..))
        ));
        assert!(matches!(
            GapDist::parse("fixed:-1"),
            Err(GapError::OutOfRange(..))
        ));
        assert!(matches!(
            GapDist::parse("exp:NaN"),
            Err(GapError::OutOfRange(..))
        ));
        assert!(matches!(
            GapDist::parse("exp:x"),
            Err(GapError::NotANumber(_))
        ));
        assert!(matches!(
            GapDist::parse("pareto"),
            Err(GapError::Unknown(_))
        ));
        assert!(matches!(
            GapDist::parse("fbkv:3"),
            Err(GapError::Unknown(_))
        ));
    }

    #[test]
    fn an_empirical_cdf_has_the_mean_of_its_segments() {
        let d = GapDist::Empirical {
            points: vec![(40_000.0, 0.0), (60_000.0, 1.0)],
        };
        assert!((d.mean_ns() - 50_000.0).abs() < 1e-6);
        let mass = GapDist::Empirical {
            points: vec![(10_000.0, 0.5), (30_000.0, 1.0)],
        };
        // half the mass at 10 us, half spread over 10-30 us: 0.5 x 10 + 0.5 x 20
        assert!((mass.mean_ns() - 15_000.0).abs() < 1e-6);
        let mut rng = Rng::new(3);
        let n = 20_000;
        let avg = (0..n).map(|_| mass.sample_ns(&mut rng)).sum::<f64>() / n as f64;
        assert!((avg - 15_000.0).abs() < 300.0, "{avg}");
    }
}
