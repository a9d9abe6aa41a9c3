//! What the ATP adapter records beside job progress: rate-control epochs,
//! the receivers' delivered totals, the queues each class's packets took,
//! and the CSV files they are written to (`epochs.csv`,
//! `atp_delivered.csv`).

use crate::scheme::Scheme;
use approxnet_proto::Variant;
use std::io::Write;

/// One rate-control epoch of a sending connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochRecord {
    /// When it ended, ns.
    pub t_ns: u64,
    /// Sending host.
    pub host: u32,
    /// Receiving host.
    pub peer: u32,
    /// Variant.
    pub variant: Variant,
    /// TLR in force.
    pub tlr: f64,
    /// Measured loss.
    pub rho: f64,
    /// Next sending rate, bits per second.
    pub rate_bps: f64,
    /// Queue of the first active approximate group.
    pub queue: u8,
}

/// Totals of the receivers' job reports (sent at each job's FIN): with
/// send more, messages beyond `ceil(MSR N)` are the extra data delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveredTotals {
    /// Jobs reported.
    pub jobs: u64,
    /// Messages they had to deliver, `ceil(MSR N)` summed.
    pub must: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Extra datagrams dropped at their host (more than 64 KB waiting).
    pub extra_dropped: u64,
    /// Extra datagrams handed to a NIC.
    pub extra_sent: u64,
}

/// Where a class's DATA packets went.
#[derive(Clone, Debug, Default)]
pub(super) struct ClassQueues {
    /// Packets per queue since the last `take`.
    counts: Vec<u64>,
    latest: Option<u8>,
}

impl ClassQueues {
    #[inline]
    pub(super) fn sent(&mut self, q: u8) {
        if self.counts.len() <= q as usize {
            self.counts.resize(q as usize + 1, 0);
        }
        self.counts[q as usize] += 1;
        self.latest = Some(q);
    }

    /// The queue used most since the last call (ties: the higher priority),
    /// else the latest one; starts a new count.
    pub(super) fn take(&mut self) -> Option<u8> {
        let best = (0..self.counts.len())
            .filter(|&q| self.counts[q] > 0)
            .max_by_key(|&q| (self.counts[q], std::cmp::Reverse(q)))
            .map(|q| q as u8);
        self.counts.iter_mut().for_each(|c| *c = 0);
        best.or(self.latest)
    }
}

/// Writes `atp_delivered.csv` (with send more, or once a receiver reported)
/// and `epochs.csv` (when epochs were recorded) into `dir`.
pub(super) fn write_outputs(
    dir: &std::path::Path,
    send_more: bool,
    delivered: &DeliveredTotals,
    epochs: &[EpochRecord],
) -> std::io::Result<()> {
    if send_more || delivered.jobs > 0 {
        let t = delivered;
        let mut w = std::fs::File::create(dir.join("atp_delivered.csv"))?;
        writeln!(w, "jobs,must,delivered,extra_sent,extra_dropped")?;
        writeln!(
            w,
            "{},{},{},{},{}",
            t.jobs, t.must, t.delivered, t.extra_sent, t.extra_dropped
        )?;
    }
    if epochs.is_empty() {
        return Ok(());
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("epochs.csv"))?);
    writeln!(w, "t_ns,host,peer,variant,tlr,rho,rate_bps,queue")?;
    for e in epochs {
        writeln!(
            w,
            "{},{},{},{},{:.6},{:.6},{:.0},{}",
            e.t_ns,
            e.host,
            e.peer,
            Scheme::Atp(e.variant),
            e.tlr,
            e.rho,
            e.rate_bps,
            e.queue
        )?;
    }
    w.flush()
}
