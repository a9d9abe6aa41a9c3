//! Output: report objects (serde_json) and percentile helpers.

use crate::Endpoint;
use approxnet_proto::stats::DropReason;
use serde_json::json;

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

/// The runtime's and the core's counters of an ATP run (`"runtime"`).
pub(super) fn runtime_json(ep: &Endpoint) -> Json {
    let st = ep.stats();
    let core = ep.core().stats();
    let drops = obj(DropReason::ALL
        .iter()
        .map(|r| (drop_name(*r), json!(core.dropped(*r))))
        .collect());
    obj(vec![
        ("datagrams_sent", json!(st.send.datagrams)),
        ("send_syscalls", json!(st.send.syscalls)),
        ("gso_messages", json!(st.send.gso_messages)),
        ("send_would_block", json!(st.send.would_block)),
        ("send_errors", json!(st.send.errors)),
        ("datagrams_received", json!(st.recv.datagrams)),
        ("recv_syscalls", json!(st.recv.syscalls)),
        ("recv_empty", json!(st.recv.empty)),
        ("gro_messages", json!(st.recv.gro_messages)),
        ("truncated", json!(st.recv.truncated)),
        ("wakeups", json!(st.wakeups)),
        ("sleeps", json!(st.sleeps)),
        ("busy_polls", json!(st.busy_polls)),
        ("naps", json!(st.naps)),
        ("naps_late", json!(st.naps_late)),
        ("sleeps_late", json!(st.sleeps_late)),
        ("wake_late_max_us", json!(st.wake_late_max_us)),
        ("sleep_causes", sleep_causes_json(&st.sleep_causes)),
        ("core_accepted", json!(core.accepted)),
        ("core_drops", drops),
    ])
}

/// `{"pacer": {"sleeps": n, "slept_us": t}, ...}`: what the client's or
/// server's sleeps waited for (`RuntimeStats::sleep_causes`).
fn sleep_causes_json(c: &crate::SleepCauses) -> Json {
    let tally = |t: &crate::SleepTally| {
        obj(vec![
            ("sleeps", json!(t.sleeps)),
            ("slept_us", json!(t.slept_us)),
        ])
    };
    obj(vec![
        ("send_buffer", tally(&c.send_buffer)),
        ("pacer", tally(&c.pacer)),
        ("window", tally(&c.window)),
        ("peer", tally(&c.peer)),
        ("application", tally(&c.application)),
        ("ready", tally(&c.ready)),
    ])
}

fn drop_name(r: DropReason) -> &'static str {
    match r {
        DropReason::Malformed => "malformed",
        DropReason::BadChecksum => "bad_checksum",
        DropReason::DamagedApproximate => "damaged_approximate",
        DropReason::UnknownConnection => "unknown_connection",
        DropReason::WrongPeer => "wrong_peer",
        DropReason::Unexpected => "unexpected",
        DropReason::UnknownJob => "unknown_job",
        DropReason::OutOfRange => "out_of_range",
        DropReason::Inconsistent => "inconsistent",
        DropReason::StaleEpoch => "stale_epoch",
        DropReason::CapExceeded => "cap_exceeded",
        DropReason::UnknownType => "unknown_type",
        _ => "other",
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
