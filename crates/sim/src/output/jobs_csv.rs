//! jobs.csv rows, written byte by byte: a large run writes one row per
//! job (778,230 for the k = 12 FBKV run of seed 000 section 7.1), and
//! `writeln!` with 22 arguments cost ~5,500 instructions a row (~4 G for
//! that run). Integers are written digit by digit, booleans and the two
//! common fractions (0 and 1) as literals; the rest (the MSR, a scheme's
//! name, other fractions) still goes through `Display`, so every byte is
//! what the `writeln!` it replaces wrote (see the test).

use super::Fixed6;
use crate::job::Job;
use crate::scheme::Scheme;
use std::io::Write as _;

/// Appends `x` in decimal, as `{}` writes it.
#[inline]
pub(super) fn push_u64(out: &mut Vec<u8>, mut x: u64) {
    if x < 10 {
        // one digit (queues.csv's idle ports: most of its fields), without
        // the buffer and the copy call
        out.push(b'0' + x as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `x`, then a comma.
#[inline]
fn field(out: &mut Vec<u8>, x: u64) {
    push_u64(out, x);
    out.push(b',');
}

/// Appends `x` as [`Fixed6`] writes it.
#[inline]
fn fixed6(out: &mut Vec<u8>, x: f64) {
    if x == 1.0 {
        out.extend_from_slice(b"1.000000");
    } else if x == 0.0 && x.is_sign_positive() {
        out.extend_from_slice(b"0.000000");
    } else {
        // writing to a Vec cannot fail
        let _ = write!(out, "{}", Fixed6(x));
    }
}

/// The text of the last (scheme, MSR) pair written: the jobs of a class
/// share both, and the MSR's `Display` (shortest round-trip form) cost
/// ~900 instructions a row.
#[derive(Debug, Default)]
pub(super) struct SchemeMsr {
    last: Option<(Scheme, u64)>,
    text: Vec<u8>,
}

/// Appends job `j`'s row of jobs.csv (class name `class`), newline
/// included; `memo` keeps the text of the latest scheme and MSR.
pub(super) fn push_row(out: &mut Vec<u8>, j: &Job, class: &str, memo: &mut SchemeMsr) {
    field(out, j.id as u64);
    out.extend_from_slice(class.as_bytes());
    let key = (j.scheme, j.msr.to_bits());
    if memo.last != Some(key) {
        memo.text.clear();
        // writing to a Vec cannot fail
        let _ = write!(memo.text, ",{},{},", j.scheme, j.msr);
        memo.last = Some(key);
    }
    out.extend_from_slice(&memo.text);
    out.extend_from_slice(if j.approximate { b"true," } else { b"false," });
    field(out, j.src as u64);
    field(out, j.dst as u64);
    field(out, j.start.as_nanos());
    if let Some(d) = j.done {
        push_u64(out, d.as_nanos());
    }
    out.push(b',');
    if let Some(t) = j.jct() {
        push_u64(out, t);
    }
    out.push(b',');
    field(out, j.n_msgs as u64);
    field(out, j.needed as u64);
    field(out, j.sent_msgs as u64);
    field(out, j.delivered as u64);
    field(out, j.bytes());
    field(out, j.delivered_bytes);
    fixed6(out, j.delivered_fraction());
    out.push(b',');
    field(out, j.counters.sent_pkts);
    field(out, j.counters.retx_pkts);
    field(out, j.counters.lost_pkts);
    fixed6(out, j.loss_rate());
    out.push(b',');
    push_u64(out, j.counters.timeouts);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobCounters;
    use approxnet_proto::time::Instant;
    use approxnet_proto::Variant;

    /// The row as the `writeln!` that `push_row` replaced wrote it.
    fn reference(j: &Job, class: &str) -> String {
        let opt = |x: Option<u64>| x.map_or(String::new(), |v| v.to_string());
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            j.id,
            class,
            j.scheme,
            j.msr,
            j.approximate,
            j.src,
            j.dst,
            j.start.as_nanos(),
            opt(j.done.map(|d| d.as_nanos())),
            opt(j.jct()),
            j.n_msgs,
            j.needed,
            j.sent_msgs,
            j.delivered,
            j.bytes(),
            j.delivered_bytes,
            Fixed6(j.delivered_fraction()),
            j.counters.sent_pkts,
            j.counters.retx_pkts,
            j.counters.lost_pkts,
            Fixed6(j.loss_rate()),
            j.counters.timeouts
        )
    }

    #[test]
    fn push_u64_writes_what_display_writes() {
        let mut out = Vec::new();
        for x in [0, 1, 9, 10, 99, 100, 12_345, u32::MAX as u64, u64::MAX] {
            out.clear();
            push_u64(&mut out, x);
            assert_eq!(out, x.to_string().as_bytes());
        }
    }

    /// Every field's cases: zero, one, large and extreme integers, done or
    /// not, fractions of 0, 1 and in between (and the loss rate's), all
    /// schemes' names, MSRs that print with and without decimals; the
    /// memo of the scheme and MSR hit and missed in every order.
    #[test]
    fn rows_are_what_writeln_wrote() {
        let schemes = [
            Scheme::Atp(Variant::Full),
            Scheme::Atp(Variant::FixTlr),
            Scheme::parse("dctcp").expect("a scheme"),
            Scheme::parse("tcp").expect("a scheme"),
        ];
        let mut out = Vec::new();
        let mut memo = SchemeMsr::default();
        let mut n = 0;
        // schemes inner: consecutive rows share the MSR, not the scheme
        for k in 0..24u64 {
            for (i, &scheme) in schemes.iter().enumerate() {
                let big = k % 5 == 4;
                let n_msgs = [0, 1, 50, 7][k as usize % 4];
                let j = Job {
                    id: if big { u32::MAX } else { k as u32 * 37 },
                    src: k as u32 % 3,
                    dst: 190 + i as u32,
                    start: Instant::from_nanos(if big { u64::MAX / 4 } else { k * 1_001 }),
                    n_msgs,
                    needed: n_msgs / 2,
                    msr: [0.5, 1.0, 0.1, 0.333_333_333_333_333_3][k as usize % 4],
                    msg_bytes: k * 1_500,
                    scheme,
                    approximate: k % 2 == 0,
                    sent_msgs: n_msgs,
                    delivered: [0, n_msgs, n_msgs / 3, n_msgs][k as usize % 4],
                    delivered_bytes: k * 999,
                    done: (k % 3 != 0).then(|| Instant::from_nanos(k * 1_001 + k * 77)),
                    counters: JobCounters {
                        sent_pkts: [0, 3, 1_000, u64::MAX][k as usize % 4],
                        retx_pkts: k / 2,
                        lost_pkts: [0, 1, 2, 3][k as usize % 4],
                        timeouts: k % 3,
                    },
                    class: 0,
                    msgs: Vec::new(),
                    ready_ns: Vec::new(),
                    flow: None,
                };
                for class in ["fbkv", "a-b_c"] {
                    out.clear();
                    push_row(&mut out, &j, class, &mut memo);
                    assert_eq!(
                        String::from_utf8(out.clone()).expect("ASCII"),
                        reference(&j, class)
                    );
                    n += 1;
                }
            }
        }
        assert_eq!(n, 4 * 24 * 2);
    }
}
