//! Message-size distributions: empirical CDFs (embedded from
//! `data/workloads/`, see its README for provenance) and the FBKV
//! generalized-Pareto tail.

use approxnet_proto::rng::Rng;

const FBKV_HEAD: &str = include_str!("../../../../data/workloads/fb_keyvalue_head.cdf");
const FBHD_HOMA: &str = include_str!("../../../../data/workloads/fb_hadoop_homa.cdf");
const FBHD_HPCC: &str = include_str!("../../../../data/workloads/fb_hadoop_hpcc.cdf");
const WEB_SEARCH: &str = include_str!("../../../../data/workloads/web_search.cdf");

/// FBKV tail (Atikoglu et al. 2012, via data/workloads/README.md):
/// generalized Pareto, location 15 B, scale 214.476, shape 0.348238.
const GPD_LOC: f64 = 15.0;
const GPD_SCALE: f64 = 214.476;
const GPD_SHAPE: f64 = 0.348238;
const GPD_CAP: f64 = 1_000_000.0;

/// Names accepted by [`SizeDist::parse`] (`cdf:PATH`: a user's file).
pub const NAMES: &[&str] = &[
    "fbkv",
    "fbhd",
    "fbhd_hpcc",
    "web_search",
    "fixed:<bytes>",
    "cdf:<path>",
];

/// How points of a CDF are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    /// Only the listed sizes occur.
    Step,
    /// Sizes between points are linearly interpolated.
    Linear,
}

/// A message-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Every message has this size.
    Fixed(u64),
    /// An empirical CDF: `(size, cumulative probability in [0, 1])`.
    Empirical {
        /// The points, sizes ascending.
        points: Vec<(f64, f64)>,
        /// How points are joined.
        interp: Interp,
        /// With `Some(p)`, above the CDF's last probability `p` the FBKV
        /// generalized-Pareto tail takes over.
        gpd_tail: bool,
    },
}

/// Reads a user's CDF file (`value probability` lines, probabilities in
/// [0, 1] ending at 1); errors name the file and the line.
pub fn read_cdf(path: &str, what: &str) -> Result<Vec<(f64, f64)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let points = parse_cdf(&text, 1.0).map_err(|e| format!("{path}: {e}"))?;
    let last = points[points.len() - 1].1;
    if (last - 1.0).abs() > 1e-9 {
        return Err(format!(
            "{path}: the last probability is {last}, a CDF of {what}s must end at 1"
        ));
    }
    Ok(points)
}

/// Parses `size prob` lines; `scale` converts the probability unit to
/// [0, 1] (the shared parser, `approxnet_proto::cdf::parse`).
pub fn parse_cdf(text: &str, scale: f64) -> Result<Vec<(f64, f64)>, String> {
    approxnet_proto::cdf::parse(text, scale)
}

impl SizeDist {
    /// A named distribution: `fbkv`, `fbhd`, `fbhd_hpcc`, `web_search` or
    /// `fixed:<bytes>`.
    pub fn by_name(name: &str) -> Option<SizeDist> {
        let emp = |text: &str, scale: f64, interp, gpd_tail| SizeDist::Empirical {
            points: parse_cdf(text, scale).expect("embedded CDF parses"),
            interp,
            gpd_tail,
        };
        Some(match name {
            "fbkv" => emp(FBKV_HEAD, 1.0, Interp::Step, true),
            "fbhd" => emp(FBHD_HOMA, 1.0, Interp::Step, false),
            "fbhd_hpcc" => emp(FBHD_HPCC, 0.01, Interp::Linear, false),
            "web_search" => emp(WEB_SEARCH, 0.01, Interp::Linear, false),
            _ => {
                let b: u64 = name.strip_prefix("fixed:")?.parse().ok()?;
                if b == 0 {
                    return None;
                }
                SizeDist::Fixed(b)
            }
        })
    }

    /// A named distribution ([`SizeDist::by_name`]) or `cdf:PATH`: a file of
    /// `size_bytes cumulative_probability` lines (probabilities in [0, 1],
    /// the last 1; `#` comments), sizes linearly interpolated between points.
    /// A relative path is read from the current directory.
    pub fn parse(spec: &str) -> Result<SizeDist, String> {
        if let Some(path) = spec.strip_prefix("cdf:") {
            let points = read_cdf(path, "size")?;
            return Ok(SizeDist::Empirical {
                points,
                interp: Interp::Linear,
                gpd_tail: false,
            });
        }
        SizeDist::by_name(spec).ok_or_else(|| format!("unknown {spec:?}"))
    }

    /// Draws one size in bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Empirical {
                points,
                interp,
                gpd_tail,
            } => {
                let u = rng.next_f64();
                let last = points[points.len() - 1].1;
                if *gpd_tail && u >= last {
                    let v = rng.next_f64();
                    let x = GPD_LOC + GPD_SCALE * ((1.0 - v).powf(-GPD_SHAPE) - 1.0) / GPD_SHAPE;
                    return (x.min(GPD_CAP).round() as u64).max(1);
                }
                let u = u.min(last);
                let s = match interp {
                    Interp::Step => {
                        points[points.partition_point(|p| p.1 < u).min(points.len() - 1)].0
                    }
                    Interp::Linear => approxnet_proto::cdf::linear_at(points, u),
                };
                (s.round() as u64).max(1)
            }
        }
    }

    /// Draws from `rng` exactly what [`SizeDist::sample`] draws, without
    /// computing the size (the first pass of `workload::Arrivals`).
    #[inline]
    pub fn skip(&self, rng: &mut Rng) {
        if let SizeDist::Empirical {
            points, gpd_tail, ..
        } = self
        {
            let u = rng.next_f64();
            if *gpd_tail && u >= points[points.len() - 1].1 {
                rng.next_f64();
            }
        }
    }

    /// Mean size in bytes (exact for the CDF part; the GPD tail uses its
    /// uncapped mean, the cap changes it by far less than a byte).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => *b as f64,
            SizeDist::Empirical {
                points,
                interp,
                gpd_tail,
            } => {
                let mut m = 0.0;
                let mut prev_p = 0.0;
                let mut prev_s = points[0].0;
                for &(s, p) in points {
                    let dp = p - prev_p;
                    m += dp
                        * match interp {
                            Interp::Step => s,
                            Interp::Linear => (s + prev_s) / 2.0,
                        };
                    prev_p = p;
                    prev_s = s;
                }
                let max_s = points[points.len() - 1].0.max(1.0);
                if *gpd_tail {
                    m += (1.0 - prev_p) * (GPD_LOC + GPD_SCALE / (1.0 - GPD_SHAPE));
                } else {
                    m += (1.0 - prev_p) * max_s;
                }
                m.max(1.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fbkv_mean_is_about_185_bytes() {
        let d = SizeDist::by_name("fbkv").unwrap();
        let m = d.mean();
        assert!((175.0..195.0).contains(&m), "{m}");
        let mut rng = Rng::new(3);
        let n = 200_000;
        let s: u64 = (0..n).map(|_| d.sample(&mut rng)).sum();
        let emp = s as f64 / n as f64;
        assert!((emp - m).abs() / m < 0.08, "{emp} vs {m}");
    }

    #[test]
    fn fbhd_mean_matches_homa() {
        let m = SizeDist::by_name("fbhd").unwrap().mean();
        assert!((m - 194_330.9).abs() / 194_330.9 < 0.02, "{m}");
    }

    #[test]
    fn names_and_fixed() {
        assert_eq!(SizeDist::by_name("fixed:1000"), Some(SizeDist::Fixed(1000)));
        assert!(SizeDist::by_name("fixed:0").is_none());
        assert!(SizeDist::by_name("nope").is_none());
        assert!(SizeDist::by_name("web_search").unwrap().mean() > 1e6);
    }
}
