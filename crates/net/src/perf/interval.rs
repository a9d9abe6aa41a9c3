//! Interval reports (iperf3's `-i`): what completed in each period of the
//! run, printed as it happens in text mode and kept for the JSON report.

use super::report::{gbps, obj, Json};
use serde_json::json;
use std::time::{Duration, Instant};

/// Counts of one period.
#[derive(Default)]
struct Period {
    jobs: u64,
    bytes: u64,
    jct_ms_sum: f64,
    retransmissions: u64,
}

/// Collects completions and closes a period every `every`.
pub(crate) struct Intervals {
    every: Option<Duration>,
    print: bool,
    origin: Instant,
    start: Duration,
    now: Period,
    done: Vec<Json>,
}

impl Intervals {
    /// `every`: the period (None: no interval reports); `print`: a line per
    /// period on stdout (text mode).
    pub(crate) fn new(every: Option<Duration>, print: bool, origin: Instant) -> Intervals {
        Intervals {
            every,
            print,
            origin,
            start: Duration::ZERO,
            now: Period::default(),
            done: Vec::new(),
        }
    }

    /// A job finished: `bytes` delivered, its JCT, its retransmissions.
    pub(crate) fn job(&mut self, bytes: u64, jct_ms: f64, retransmissions: u64) {
        self.now.jobs += 1;
        self.now.bytes += bytes;
        self.now.jct_ms_sum += jct_ms;
        self.now.retransmissions += retransmissions;
    }

    /// Bytes moved outside jobs (the TCP baseline).
    pub(crate) fn bytes(&mut self, bytes: u64) {
        self.now.bytes += bytes;
    }

    /// When the current period ends (None: no interval reports).
    pub(crate) fn due(&self) -> Option<Instant> {
        self.every.map(|e| self.origin + self.start + e)
    }

    /// Closes every period that has ended by now.
    pub(crate) fn tick(&mut self) {
        let Some(every) = self.every else { return };
        while self.origin.elapsed() >= self.start + every {
            let end = self.start + every;
            self.close(end);
        }
    }

    /// Closes the last, partial period at the end of the run and returns
    /// the series (empty without interval reports).
    pub(crate) fn finish(mut self) -> Json {
        if self.every.is_some() {
            let end = self.origin.elapsed();
            if end > self.start {
                self.close(end);
            }
        }
        Json::Array(self.done)
    }

    fn close(&mut self, end: Duration) {
        let p = std::mem::take(&mut self.now);
        let secs = (end - self.start).as_secs_f64();
        let mean = if p.jobs > 0 {
            p.jct_ms_sum / p.jobs as f64
        } else {
            f64::NAN
        };
        if self.print {
            println!(
                "[{:>7.2}-{:>7.2} s] {:>6} jobs {:>10.4} Gbit/s  JCT mean {:>8.3} ms  {:>6} retrans",
                self.start.as_secs_f64(),
                end.as_secs_f64(),
                p.jobs,
                gbps(p.bytes, secs),
                mean,
                p.retransmissions
            );
        }
        self.done.push(obj(vec![
            ("start_s", json!(self.start.as_secs_f64())),
            ("end_s", json!(end.as_secs_f64())),
            ("jobs_completed", json!(p.jobs)),
            ("bytes_delivered", json!(p.bytes)),
            ("goodput_gbps", json!(gbps(p.bytes, secs))),
            ("jct_ms_mean", json!(mean)),
            ("retransmissions", json!(p.retransmissions)),
        ]));
        self.start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_partition_the_run_and_sum_to_the_totals() {
        let origin = Instant::now() - Duration::from_millis(2500);
        let mut iv = Intervals::new(Some(Duration::from_secs(1)), false, origin);
        iv.job(1000, 2.0, 1);
        iv.tick(); // 2.5 s have passed: periods [0, 1) and [1, 2) close
        iv.job(500, 4.0, 0);
        let series = iv.finish();
        let v = series.as_array().unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0]["end_s"], json!(1.0));
        assert_eq!(v[1]["start_s"], json!(1.0));
        assert_eq!(v[0]["jobs_completed"], json!(1));
        assert_eq!(v[1]["jobs_completed"], json!(0));
        assert!(v[1]["jct_ms_mean"].is_null(), "no job: no mean");
        let bytes: u64 = v
            .iter()
            .map(|p| p["bytes_delivered"].as_u64().unwrap())
            .sum();
        assert_eq!(bytes, 1500);
    }

    #[test]
    fn no_interval_no_series() {
        let mut iv = Intervals::new(None, false, Instant::now());
        iv.job(1, 1.0, 0);
        iv.tick();
        assert!(iv.due().is_none());
        assert_eq!(iv.finish(), json!([]));
    }
}
