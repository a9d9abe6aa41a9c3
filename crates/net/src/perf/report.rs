//! Output: report objects (serde_json) and percentile helpers.

/// Reports are serde_json values; objects keep their keys in insertion order.
pub(crate) type Json = serde_json::Value;

/// An object from `(key, value)` pairs, in that order.
pub(crate) fn obj(fields: Vec<(&str, Json)>) -> Json {
    Json::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// The `q`-quantile (0..=1) of sorted values, nearest rank; NaN when empty.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Gbit/s for `bytes` over `secs`.
pub(crate) fn gbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e9
    } else {
        f64::NAN
    }
}

/// CPU seconds per gigabyte moved.
pub(crate) fn cpu_per_gb(cpu: f64, bytes: u64) -> f64 {
    if bytes > 0 {
        cpu / (bytes as f64 / 1e9)
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_order_and_nan_is_null() {
        let j = obj(vec![
            ("b", serde_json::json!(3)),
            ("a", serde_json::json!("x\"y")),
            ("c", serde_json::json!([0.5, f64::NAN])),
        ]);
        assert_eq!(j.to_string(), r#"{"b":3,"a":"x\"y","c":[0.5,null]}"#);
    }

    #[test]
    fn quantiles_use_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.0);
        assert_eq!(quantile(&v, 0.99), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
