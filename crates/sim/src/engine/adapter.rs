//! The host adapter: how a sans-IO endpoint (ATP from `approxnet-proto`)
//! plugs into the simulator.
//!
//! The adapter owns one endpoint per host and translates: a job start into
//! application calls, an arriving datagram into `handle_datagram`, a timer
//! event into `handle_timeout`; it returns datagrams to put on the host's NIC
//! (with their switch queue), the next wake-up time of each host, and job
//! progress. The simulator never looks inside the endpoint.

use crate::job::{Job, JobCounters};
use approxnet_proto::time::Instant;

/// A datagram an endpoint emitted (its bytes are in [`HostIo::bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// Sending host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Length of the datagram (UDP payload), bytes.
    pub len: u32,
    /// Switch queue (0 = highest priority).
    pub queue: u8,
    /// Connection slot (becomes the packet's flow id and ECMP input).
    pub conn: u32,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

/// Progress of a job run by an adapter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JobUpdate {
    /// Messages delivered so far.
    Delivered {
        /// Job index.
        job: u32,
        /// Messages delivered so far.
        msgs: u32,
        /// Bytes delivered so far.
        bytes: u64,
    },
    /// The job met its MSR (or failed) and reports its counters.
    Finished {
        /// Job index.
        job: u32,
        /// Whether it met its MSR.
        ok: bool,
        /// Transport counters.
        counters: JobCounters,
    },
}

/// What an adapter call produced, and how much the calling host's NIC may
/// still take. The simulator reuses one value across calls (its vectors
/// keep their capacity), so an adapter call allocates nothing.
#[derive(Debug, Default)]
pub struct HostIo {
    /// Bytes the NIC queue of the host being driven can still take; the
    /// adapter stops pulling datagrams from its endpoints when this runs
    /// out (as a real driver stops when the socket would block).
    pub room: u64,
    /// The host's NIC had nothing queued when this call began.
    pub nic_idle: bool,
    /// Set by the adapter when it stopped because `room` ran out: the
    /// simulator calls [`HostAdapter::on_timer`] again once the NIC drains.
    pub blocked: bool,
    /// Datagrams to send, in order; use [`HostIo::send`].
    pub out: Vec<Datagram>,
    /// Their bytes, back to back in the order of `out`.
    pub bytes: Vec<u8>,
    /// `(host, when)`: the host's endpoint wants `on_timer` at `when`.
    pub timers: Vec<(u32, Instant)>,
    /// Job progress.
    pub updates: Vec<JobUpdate>,
}

impl HostIo {
    /// Queues datagram `d` with bytes `bytes` (`d.len` is set from them).
    pub fn send(&mut self, mut d: Datagram, bytes: &[u8]) {
        d.len = bytes.len() as u32;
        self.bytes.extend_from_slice(bytes);
        self.out.push(d);
    }

    /// Empties every list, keeping the allocations.
    pub fn clear(&mut self) {
        self.room = 0;
        self.nic_idle = false;
        self.blocked = false;
        self.out.clear();
        self.bytes.clear();
        self.timers.clear();
        self.updates.clear();
    }
}

/// Drives per-host sans-IO endpoints inside the simulator.
pub trait HostAdapter {
    /// A job of this adapter's kind arrives at its sender: the job is
    /// opened with all its `N` messages announced, and messages
    /// `[0, ready)` of `job.msgs` are handed over (every message when
    /// `job.ready_ns` is empty).
    fn start_job(&mut self, now: Instant, job: &Job, ready: u32, io: &mut HostIo);
    /// The application produced messages `[from, to)` of a job started
    /// earlier (seed 000 §7.1: messages arrive over time).
    fn produce(&mut self, now: Instant, job: &Job, from: u32, to: u32, io: &mut HostIo);
    /// A datagram from `(host, port)` `from` arrived at `host`, port `port`.
    fn on_datagram(
        &mut self,
        now: Instant,
        host: u32,
        port: u16,
        from: (u32, u16),
        bytes: &[u8],
        io: &mut HostIo,
    );
    /// Host `host`'s timer fired.
    fn on_timer(&mut self, now: Instant, host: u32, io: &mut HostIo);
    /// From now on, count the switch queues of each job class's DATA
    /// packets (for [`HostAdapter::class_queue`]).
    fn track_class_queues(&mut self) {}
    /// The switch queue that jobs of `class` used most for DATA since the
    /// previous call (else their latest one), if tracked and any was sent;
    /// each call starts a new count.
    fn class_queue(&mut self, _class: u32) -> Option<u8> {
        None
    }
    /// IP + UDP header bytes added on the wire to each datagram.
    fn header_bytes(&self) -> u32 {
        28
    }
    /// Writes adapter-specific results (e.g. a per-epoch timeline) under `dir`.
    fn write_outputs(&self, _dir: &std::path::Path) -> std::io::Result<()> {
        Ok(())
    }
}
