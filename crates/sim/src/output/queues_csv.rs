//! queues.csv rows, written byte by byte: a run with queue sampling writes
//! one row per sampled port per sample (170,017 for the ns-3 dumbbell as
//! shipped, 17 ports every 10 us for 100 ms), and `writeln!` with six
//! arguments cost ~1,300 instructions a row, as much as the simulation
//! itself there. Integers are written digit by digit and the node names
//! copied, so every byte is what the `writeln!` it replaces wrote (see the
//! test).

use super::jobs_csv::push_u64;
use crate::engine::QueueSample;

/// Appends sample `s`'s row of queues.csv (`node`, `peer`: the names of
/// the port's two ends), newline included.
pub(super) fn push_row(out: &mut Vec<u8>, s: &QueueSample, node: &str, peer: &str) {
    push_u64(out, s.t_ns);
    out.push(b',');
    push_u64(out, s.port as u64);
    out.push(b',');
    out.extend_from_slice(node.as_bytes());
    out.push(b',');
    out.extend_from_slice(peer.as_bytes());
    out.push(b',');
    push_u64(out, s.bytes as u64);
    out.push(b',');
    push_u64(out, s.pkts as u64);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of extreme and ordinary values, names with digits and
    /// punctuation: the bytes `writeln!` wrote.
    #[test]
    fn rows_equal_what_writeln_wrote() {
        let values = [0u64, 1, 9, 10, 99, 100, 65_535, 1 << 32, u64::MAX];
        let names = [("sw0", "h16"), ("", "x"), ("core-3.1", "agg_12")];
        let mut out = Vec::new();
        for (i, &t) in values.iter().enumerate() {
            for &small in &[0u32, 7, 1_000_000, u32::MAX] {
                let s = QueueSample {
                    t_ns: t,
                    port: small.wrapping_add(i as u32),
                    bytes: small,
                    pkts: small / 3,
                };
                let (node, peer) = names[i % names.len()];
                out.clear();
                push_row(&mut out, &s, node, peer);
                let want = format!(
                    "{},{},{},{},{},{}\n",
                    s.t_ns, s.port, node, peer, s.bytes, s.pkts
                );
                assert_eq!(String::from_utf8(out.clone()).unwrap(), want);
            }
        }
    }
}
