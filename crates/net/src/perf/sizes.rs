//! Message-size distributions: fixed, uniform, or an empirical CDF file.

use approxnet_proto::rng::Rng;

/// Where message sizes come from.
pub(crate) enum Sizes {
    Fixed(usize),
    Uniform(usize, usize),
    /// (size, cumulative probability) points, probabilities normalised to 1.
    Cdf(Vec<(f64, f64)>),
}

impl Sizes {
    /// `fixed:N`, `uniform:A:B` or `cdf:PATH` (lines `size cumulative_prob`).
    pub(crate) fn parse(spec: &str) -> Result<Sizes, String> {
        let bad = || format!("--sizes `{spec}`: expected fixed:N, uniform:A:B or cdf:PATH");
        let mut parts = spec.splitn(2, ':');
        let kind = parts.next().ok_or_else(bad)?;
        let rest = parts.next().ok_or_else(bad)?;
        match kind {
            "fixed" => {
                let n: usize = rest.parse().map_err(|_| bad())?;
                if n == 0 {
                    return Err("--sizes: messages need at least 1 byte".into());
                }
                Ok(Sizes::Fixed(n))
            }
            "uniform" => {
                let (a, b) = rest.split_once(':').ok_or_else(bad)?;
                let a: usize = a.parse().map_err(|_| bad())?;
                let b: usize = b.parse().map_err(|_| bad())?;
                if a == 0 || b < a {
                    return Err("--sizes uniform:A:B needs 1 <= A <= B".into());
                }
                Ok(Sizes::Uniform(a, b))
            }
            "cdf" => {
                let text = std::fs::read_to_string(rest).map_err(|e| format!("{rest}: {e}"))?;
                let pts =
                    approxnet_proto::cdf::parse(&text, 1.0).map_err(|e| format!("{rest}: {e}"))?;
                let top = pts.last().map(|&(_, p)| p).unwrap_or(0.0);
                if top <= 0.0 {
                    return Err(format!("{rest}: empty CDF"));
                }
                Ok(Sizes::Cdf(
                    pts.into_iter().map(|(s, p)| (s, p / top)).collect(),
                ))
            }
            _ => Err(bad()),
        }
    }

    /// One size, at least 1 byte and at most `max`.
    pub(crate) fn sample(&self, rng: &mut Rng, max: usize) -> usize {
        let s = match self {
            Sizes::Fixed(n) => *n,
            Sizes::Uniform(a, b) => a + rng.below((b - a + 1) as u64) as usize,
            Sizes::Cdf(pts) => {
                approxnet_proto::cdf::linear_at(pts, rng.next_f64()).round() as usize
            }
        };
        s.clamp(1, max.max(1))
    }
}
