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
                let mut pts = Vec::new();
                for (i, line) in text.lines().enumerate() {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let mut it = line.split_whitespace();
                    let (Some(s), Some(p)) = (it.next(), it.next()) else {
                        return Err(format!("{rest}:{}: expected `size probability`", i + 1));
                    };
                    let s: f64 = s
                        .parse()
                        .map_err(|_| format!("{rest}:{}: bad size", i + 1))?;
                    let p: f64 = p
                        .parse()
                        .map_err(|_| format!("{rest}:{}: bad probability", i + 1))?;
                    if !(s.is_finite() && p.is_finite() && s >= 0.0 && p >= 0.0) {
                        return Err(format!("{rest}:{}: negative or non-finite value", i + 1));
                    }
                    if pts.last().is_some_and(|&(_, q): &(f64, f64)| p < q) {
                        return Err(format!("{rest}:{}: probabilities must not decrease", i + 1));
                    }
                    pts.push((s, p));
                }
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
                let u = rng.next_f64();
                let i = pts
                    .iter()
                    .position(|&(_, p)| p >= u)
                    .unwrap_or(pts.len() - 1);
                if i == 0 {
                    pts[0].0 as usize
                } else {
                    let (s0, p0) = pts[i - 1];
                    let (s1, p1) = pts[i];
                    let f = if p1 > p0 { (u - p0) / (p1 - p0) } else { 1.0 };
                    (s0 + f * (s1 - s0)).round() as usize
                }
            }
        };
        s.clamp(1, max.max(1))
    }
}
