//! Moving packets: serialisation end, propagation, switching, delivery.

use super::trace::TraceEvent;
use super::Simulator;
use crate::event::Ev;
use crate::fabric::link::{any_error, flip_bits};
use crate::fabric::routing::{ecmp_pick, Ecmp};
use crate::fabric::{NodeKind, Offer};
use crate::packet::{Hdr, Hop, Kind, Packet, PktId};
use crate::transport::flow::flow_hash;
use approxnet_proto::time::Instant;

impl Simulator {
    /// Puts a packet on host `host`'s NIC.
    pub(crate) fn send_from_host(&mut self, now: Instant, host: u32, p: Packet) {
        self.slot_packet_sent(p.flow);
        let id = self.pool.alloc(p);
        let port = self.net.nic(host);
        self.enqueue(now, port, id);
    }

    /// Puts native packet `id` of flow slot `fid`, which its sender wrote
    /// into the pool (see [`crate::transport::Outbox`]), on NIC port `port`.
    #[inline(always)]
    pub(crate) fn send_native(&mut self, now: Instant, port: u32, fid: u32, id: PktId) {
        self.slot_packet_sent(fid);
        self.enqueue(now, port, id);
    }

    /// Puts a native transport packet on NIC port `port` (see
    /// [`crate::packet::PacketPool::alloc_native`]).
    #[inline(always)]
    pub(super) fn send_native_on(&mut self, now: Instant, port: u32, h: Hop, hdr: &Hdr) {
        self.slot_packet_sent(h.flow);
        let id = self.pool.alloc_native(h, hdr);
        self.enqueue(now, port, id);
    }

    fn enqueue(&mut self, now: Instant, port: u32, id: PktId) {
        let p = &self.net.ports[port as usize];
        if p.busy_until <= now.as_nanos() && p.can_pass_through() {
            // idle port, empty queues: straight to the wire
            match self.net.pass_through(port, id, &mut self.pool) {
                Some(e) => self.transmit(now, port, e),
                None => self.drop_at(now, port, id),
            }
            return;
        }
        if let Offer::Dropped(victim) = self.net.offer(port, id, &mut self.pool) {
            self.drop_at(now, port, victim);
        }
        self.kick(now, port);
    }

    /// A queue at `at` dropped packet `id`. Out of line: inlined into
    /// `enqueue`, its bookkeeping cost the hop registers.
    #[cold]
    #[inline(never)]
    fn drop_at(&mut self, now: Instant, at: u32, id: PktId) {
        self.counters.drops += 1;
        self.trace_event(now, TraceEvent::Drop, at, id);
        self.lose(now, id);
    }

    /// [`Simulator::trace_event`] out of the hop path (which tests
    /// `trace` itself): inlined there, the row's write cost the hop
    /// registers it never used.
    #[cold]
    #[inline(never)]
    fn trace_cold(&mut self, now: Instant, event: TraceEvent, at: u32, id: PktId) {
        self.trace_event(now, event, at, id);
    }

    /// Accounts a lost packet to its flow and frees it.
    fn lose(&mut self, now: Instant, id: PktId) {
        let p = self.pool.get(id);
        let lost_data = (p.hdr.kind == Kind::Data).then_some(p.flow);
        let native = (p.hdr.kind != Kind::Datagram).then_some(p.flow);
        self.pool.free(id);
        if let Some(fid) = lost_data {
            if let Some(f) = self.flows.get_mut(fid as usize) {
                f.drops += 1;
            }
            self.training_datagram_resolved(now, fid);
        }
        if let Some(fid) = native {
            self.slot_packet_gone(fid);
        }
    }

    /// Serialises the next queued packet if the wire is free; otherwise makes
    /// sure a wake-up is scheduled for when it frees. A started packet is
    /// scheduled straight to its arrival at the far end (serialisation plus
    /// propagation), so an idle port costs one event per packet, a busy one two.
    ///
    /// Inlined into its two callers (`enqueue`, `tx_done`): a call cost ~15
    /// instructions in saving and restoring registers, ~200,000 calls in
    /// the ns-3 dumbbell (inlining `enqueue` as well bloats the loop:
    /// +7 % instructions).
    #[inline(always)]
    fn kick(&mut self, now: Instant, port: u32) {
        let p = &mut self.net.ports[port as usize];
        if p.busy_until > now.as_nanos() {
            if p.wakeup_at.is_none() {
                p.wakeup_at = Some(p.busy_until);
                let t = Instant::from_nanos(p.busy_until);
                // later than now (tested above): no clamp
                self.events.schedule_ahead(t, Ev::TxDone { port });
            }
            return;
        }
        let Some(e) = self.net.start_next(port) else {
            return;
        };
        self.transmit(now, port, e);
    }

    /// Puts `e`, just taken from `port`'s queues, on the wire.
    #[inline(always)]
    fn transmit(&mut self, now: Instant, port: u32, e: crate::fabric::queue::Held) {
        // the trace, a blocked host, bit errors: one test on the hop
        if self.hop_slow {
            self.transmit_slow(now, port, e.id);
        }
        let p = &mut self.net.ports[port as usize];
        let d = p.tx_time(e.size);
        // the serialisation's end, as `now + d` (which saturates) wherever
        // the sum fits in u64 (every run: a debug build's overflow check
        // stops one that does not); the events below start from it
        let busy = now.as_nanos() + d.as_nanos();
        p.busy_until = busy;
        // `host` read here, with the port in hand, for the TSQ test below
        // (a second lookup there is a bounds check and two loads a hop;
        // the switch bitmap, `Network::is_switch`, a bounds check, a
        // shift and a test more)
        let (peer, delay, host) = (p.peer, p.delay, p.host);
        // `has_queued` first: it is in the port's first line, `wakeup_at` not
        if p.has_queued() && p.wakeup_at.is_none() {
            p.wakeup_at = Some(busy);
            self.events
                .schedule_ahead(Instant::from_nanos(busy), Ev::TxDone { port });
        }
        self.counters.hops += 1;
        self.events.schedule_ahead(
            Instant::from_nanos(busy) + delay,
            Ev::Arrive {
                node: peer,
                pkt: e.id,
            },
        );
        if self.tsq_limit != u32::MAX && host {
            // the packet's first line: its header is not read here
            let p = self.pool.get(e.id);
            if p.native_data {
                self.tsq_nic_took(now, p.flow);
            }
        }
    }

    /// What `transmit` does first when `hop_slow` says so: the trace's
    /// row, a blocked host's wake-up, the link's bit errors. The errors
    /// are drawn here, before the port's state is set and the wake-up and
    /// the arrival are scheduled (they were drawn between): neither
    /// reads the packet nor draws from the generator, so the draws, the
    /// events and their order are the same.
    #[inline(never)]
    fn transmit_slow(&mut self, now: Instant, port: u32, id: PktId) {
        if self.trace.is_some() {
            self.trace_cold(now, TraceEvent::Tx, port, id);
        }
        if self.blocked_hosts > 0 {
            self.nic_drained(now, port);
        }
        // `ber` lies in the port's second line: read only on lossy networks
        let ber = if self.lossy {
            self.net.ports[port as usize].ber
        } else {
            0.0
        };
        if ber > 0.0 {
            let pkt = self.pool.get_mut(id);
            if pkt.payload.is_empty() {
                if any_error(pkt.size as u64 * 8, ber, &mut self.rng) {
                    pkt.corrupted = true;
                }
            } else {
                flip_bits(&mut pkt.payload, ber, &mut self.rng);
            }
        }
    }

    /// Whether `transmit` takes `transmit_slow`: a trace, a blocked host
    /// or a lossy link (after every change of those).
    pub(super) fn set_hop_slow(&mut self) {
        self.hop_slow = self.trace.is_some() || self.blocked_hosts > 0 || self.lossy;
    }

    /// A host NIC that stopped its adapter has drained to half its limit:
    /// wake the host so its endpoints send again (a real driver gets a
    /// "writable" notification).
    fn nic_drained(&mut self, now: Instant, port: u32) {
        let Some(Some(h)) = self.nic_host.get(port as usize).copied() else {
            return;
        };
        if !self.nic_blocked[h as usize]
            || self.net.ports[port as usize].backlog_bytes() > self.nic_limit / 2
        {
            return;
        }
        self.nic_blocked[h as usize] = false;
        self.blocked_hosts -= 1;
        self.set_hop_slow();
        self.arm_host_timer(now, h, now);
    }

    /// Makes sure host `host`'s endpoint timer fires no later than `t`.
    fn arm_host_timer(&mut self, now: Instant, host: u32, t: Instant) {
        let t = t.max(now);
        let slot = &mut self.host_timer[host as usize];
        if !matches!(*slot, Some(armed) if armed <= t) {
            *slot = Some(t);
            self.events.schedule(t, Ev::EndpointTimer { host });
        }
    }

    pub(super) fn tx_done(&mut self, now: Instant, port: u32) {
        let p = &mut self.net.ports[port as usize];
        if p.wakeup_at != Some(now.as_nanos()) {
            return; // superseded
        }
        p.wakeup_at = None;
        self.kick(now, port);
    }

    /// The egress port switch `node` gives packet `id` when the choice
    /// needs no random draw (for prefetching; `None` otherwise).
    #[inline]
    pub(super) fn route_of(&self, node: u32, id: PktId) -> Option<u32> {
        let p = self.pool.try_get(id)?;
        let mut spray = false;
        let port = self.net.routes.pick(node, p.dst, |n| match self.net.ecmp {
            Ecmp::FlowHash => ecmp_pick(p.hash, node, n),
            Ecmp::Spray => {
                spray = true;
                0
            }
        });
        port.filter(|_| !spray)
    }

    pub(super) fn arrive(&mut self, now: Instant, node: u32, id: PktId) {
        if !self.net.is_switch(node) {
            if let NodeKind::Host(h) = self.net.nodes[node as usize].kind {
                self.deliver(now, h, id);
            }
            return;
        }
        {
            {
                if self.routed.0 == id && self.routed.1 == node {
                    // chosen when this event was prefetched (same packet,
                    // same switch: the same choice)
                    self.routed.0 = u32::MAX;
                    self.enqueue(now, self.routed.2, id);
                    return;
                }
                let p = self.pool.get(id);
                let (ecmp, rng) = (self.net.ecmp, &mut self.rng);
                let choose = |n: usize| match ecmp {
                    Ecmp::FlowHash => ecmp_pick(p.hash, node, n),
                    Ecmp::Spray => rng.below(n as u64) as usize,
                };
                let Some(port) = self.net.routes.pick(node, p.dst, choose) else {
                    // unreachable destination: count as a drop
                    self.drop_at(now, node, id);
                    return;
                };
                self.enqueue(now, port, id);
            }
        }
    }

    fn deliver(&mut self, now: Instant, host: u32, id: PktId) {
        if self.trace.is_some() {
            self.trace_cold(now, TraceEvent::Recv, host, id);
        }
        let p = self.pool.get(id);
        if p.dst != host {
            self.counters.stale += 1;
            let native = (p.hdr.kind != Kind::Datagram).then_some(p.flow);
            self.pool.free(id);
            if let Some(fid) = native {
                self.slot_packet_gone(fid);
            }
            return;
        }
        match p.hdr.kind {
            Kind::Datagram => {
                self.ready_io(host);
                let Some(mut a) = self.adapter.take() else {
                    self.pool.free(id);
                    return;
                };
                let p = self.pool.get(id);
                let (sport, dport) = ((p.hdr.seq >> 16) as u16, p.hdr.seq as u16);
                let io = &mut self.io_spare;
                a.on_datagram(now, host, dport, (p.src, sport), &p.payload, io);
                self.adapter = Some(a);
                self.pool.free(id);
                self.apply_io(now, host);
            }
            _ => {
                let (hdr, ce, corrupted, flow) = (p.hdr, p.ce, p.corrupted, p.flow);
                if corrupted {
                    self.counters.corrupted += 1;
                    self.lose(now, id);
                    return;
                }
                self.pool.free(id);
                self.flow_packet(now, flow, &hdr, ce);
            }
        }
    }

    /// Sends what an adapter call produced (in `io_spare`, see
    /// [`Simulator::ready_io`]) and arms the hosts' timers.
    pub(super) fn apply_io(&mut self, now: Instant, host: u32) {
        if self.io_spare.blocked && !self.nic_blocked[host as usize] {
            self.nic_blocked[host as usize] = true;
            self.blocked_hosts += 1;
            self.set_hop_slow();
        }
        let hb = self.adapter.as_ref().map_or(28, |a| a.header_bytes());
        let mut at = 0usize;
        // sending calls no adapter: `io_spare` is not reused meanwhile
        for i in 0..self.io_spare.out.len() {
            let d = self.io_spare.out[i];
            let hop = Hop {
                flow: d.conn,
                src: d.src,
                dst: d.dst,
                size: d.len + hb,
                hash: flow_hash(d.conn, d.src, d.dst),
                queue: d.queue,
                ect: true,
                ..Hop::default()
            };
            let hdr = Hdr {
                kind: Kind::Datagram,
                // UDP ports ride in the otherwise unused sequence field
                seq: (d.src_port as u64) << 16 | d.dst_port as u64,
                ..Hdr::default()
            };
            let bytes = &self.io_spare.bytes[at..at + d.len as usize];
            at += d.len as usize;
            let id = self.pool.alloc_datagram(hop, &hdr, bytes);
            let port = self.net.nic(d.src);
            self.enqueue(now, port, id);
        }
        for i in 0..self.io_spare.timers.len() {
            let (host, t) = self.io_spare.timers[i];
            self.arm_host_timer(now, host, t);
        }
        if self.io_spare.updates.is_empty() {
            return;
        }
        // the list is taken out first: were a job update to lead to an
        // adapter call (none does now: jobs start from events), that call
        // would ready `io_spare` afresh
        let updates = std::mem::take(&mut self.io_spare.updates);
        for &u in &updates {
            self.job_update(now, u);
        }
        if self.io_spare.updates.capacity() == 0 {
            let mut updates = updates;
            updates.clear();
            self.io_spare.updates = updates;
        }
    }
}
