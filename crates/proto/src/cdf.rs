//! Empirical size distributions written as CDF text: one `size probability`
//! pair per line, `#` comments. The one parser the simulator's workloads and
//! `approxnet-perf --sizes cdf:PATH` share.

/// Parses `size probability` lines into points; `scale` converts the
/// probability unit to [0, 1] (e.g. 0.01 for percent). Sizes and
/// probabilities must be finite, non-negative and non-decreasing; an empty
/// CDF is an error. Errors name the 1-based line.
pub fn parse(text: &str, scale: f64) -> Result<Vec<(f64, f64)>, String> {
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let n = i + 1;
        let mut it = line.split_whitespace();
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            return Err(format!("line {n}: expected `size probability`"));
        };
        let s: f64 = a.parse().map_err(|_| format!("line {n}: bad size {a:?}"))?;
        let p: f64 = b
            .parse()
            .map_err(|_| format!("line {n}: bad probability {b:?}"))?;
        let p = p * scale;
        if !(s.is_finite() && p.is_finite() && s >= 0.0 && p >= 0.0) {
            return Err(format!("line {n}: negative or non-finite value"));
        }
        if pts.last().is_some_and(|&(s0, p0)| s < s0 || p < p0) {
            return Err(format!(
                "line {n}: a CDF must be non-decreasing in size and probability"
            ));
        }
        pts.push((s, p));
    }
    if pts.is_empty() {
        return Err("empty CDF".into());
    }
    Ok(pts)
}

/// The size at cumulative probability `u`, linearly interpolated between
/// points (the first point's size below it, the last's above it).
/// `points` must be non-empty (as [`parse`] returns them).
pub fn linear_at(points: &[(f64, f64)], u: f64) -> f64 {
    let u = u.min(points[points.len() - 1].1);
    let i = points.partition_point(|p| p.1 < u).min(points.len() - 1);
    if i == 0 {
        return points[0].0;
    }
    let (s0, p0) = points[i - 1];
    let (s1, p1) = points[i];
    if p1 > p0 {
        s0 + (s1 - s0) * (u - p0) / (p1 - p0)
    } else {
        s1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scales_and_interpolates() {
        let pct = parse("# sizes\n100 25\n\n200 50\n400 100\n", 0.01).unwrap();
        assert_eq!(pct, vec![(100.0, 0.25), (200.0, 0.5), (400.0, 1.0)]);
        let p = parse("100 0.1\n200 0.5\n400 1\n", 1.0).unwrap();
        assert_eq!(linear_at(&p, 0.05), 100.0);
        assert_eq!(linear_at(&p, 0.3), 150.0);
        assert_eq!(linear_at(&p, 1.0), 400.0);
        assert_eq!(linear_at(&p, 2.0), 400.0);
    }

    #[test]
    fn bad_lines_name_their_line() {
        assert_eq!(parse("", 1.0).unwrap_err(), "empty CDF");
        assert!(parse("1 0.5\nx 0.6", 1.0)
            .unwrap_err()
            .starts_with("line 2: bad size"));
        assert!(parse("1 0.5\n2", 1.0)
            .unwrap_err()
            .starts_with("line 2: expected"));
        assert!(parse("1 0.5\n2 0.4", 1.0)
            .unwrap_err()
            .contains("non-decreasing"));
        assert!(parse("2 0.5\n1 0.6", 1.0)
            .unwrap_err()
            .contains("non-decreasing"));
        assert!(parse("1 -0.5", 1.0).unwrap_err().contains("negative"));
        assert!(parse("inf 0.5", 1.0).unwrap_err().contains("non-finite"));
    }
}
