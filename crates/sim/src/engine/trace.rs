//! The packet trace (`[output] trace_packets = N`, off by default): the
//! first N packet events of a run — a port starts sending a packet, a queue
//! drops one, a host receives one — for debugging a scenario, as ns-3's
//! ASCII traces are used. Written as `trace.csv` (see `output.rs`).

use super::Simulator;
use crate::packet::{Kind, PktId};
use approxnet_proto::time::Instant;
use std::io::{self, Write};

/// What happened to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A port started serialising it (`at` = port).
    Tx,
    /// A queue dropped it, or no route led on (`at` = port, or the switch's
    /// node for an unroutable packet).
    Drop,
    /// Its destination host took it (`at` = host).
    Recv,
}

impl TraceEvent {
    fn name(self) -> &'static str {
        match self {
            TraceEvent::Tx => "tx",
            TraceEvent::Drop => "drop",
            TraceEvent::Recv => "recv",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Row {
    t_ns: u64,
    event: TraceEvent,
    at: u32,
    src: u32,
    dst: u32,
    flow: u32,
    kind: Kind,
    seq: u64,
    bytes: u32,
    ce: bool,
}

/// The recorded events, at most `limit` of them.
#[derive(Debug)]
pub struct PacketTrace {
    rows: Vec<Row>,
    limit: usize,
    /// Events past the limit (not recorded).
    pub missed: u64,
}

impl PacketTrace {
    /// A trace that keeps the first `limit` events.
    pub fn new(limit: usize) -> PacketTrace {
        PacketTrace {
            rows: Vec::with_capacity(limit.min(1 << 16)),
            limit,
            missed: 0,
        }
    }

    /// Events recorded.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether none was recorded.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the CSV: `t_ns,event,at,src,dst,flow,kind,seq,bytes,ce`.
    pub fn write_csv(&self, w: &mut impl Write) -> io::Result<()> {
        writeln!(w, "t_ns,event,at,src,dst,flow,kind,seq,bytes,ce")?;
        for r in &self.rows {
            writeln!(
                w,
                "{},{},{},{},{},{},{:?},{},{},{}",
                r.t_ns,
                r.event.name(),
                r.at,
                r.src,
                r.dst,
                r.flow,
                r.kind,
                r.seq,
                r.bytes,
                u8::from(r.ce)
            )?;
        }
        Ok(())
    }
}

impl Simulator {
    /// Records the first `limit` packet events in [`Simulator::trace`].
    pub fn trace_packets(&mut self, limit: usize) {
        self.trace = (limit > 0).then(|| Box::new(PacketTrace::new(limit)));
    }

    /// Records one event of live packet `id` (when tracing).
    #[inline]
    pub(super) fn trace_event(&mut self, now: Instant, event: TraceEvent, at: u32, id: PktId) {
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        if t.rows.len() >= t.limit {
            t.missed += 1;
            return;
        }
        let p = self.pool.get(id);
        t.rows.push(Row {
            t_ns: now.as_nanos(),
            event,
            at,
            src: p.src,
            dst: p.dst,
            flow: p.flow,
            kind: p.hdr.kind,
            seq: p.hdr.seq,
            bytes: p.size,
            ce: p.ce,
        });
    }
}
