//! Outgoing datagrams: paced DATA packets and control packets, written
//! into the driver's buffer.

use super::{Connection, Control, Out, State};
use crate::config::Config;
use crate::endpoint::SendHold;
use crate::time::{Duration, Instant};
use crate::timer::Timer;
use crate::wire::header::PacketTypeField;
use crate::wire::{AckRepr, Flags, HeaderRepr, HelloRepr, PacketType, HEADER_LEN};

impl Connection {
    /// Whether a packet could be emitted now.
    #[inline(always)]
    pub(crate) fn wants_to_send(&self, now: Instant) -> bool {
        !self.control.is_empty()
            || (self.state == State::Established
                && self.send.has_data()
                && self.next_send <= now
                && self.window_open(now))
    }

    /// Whether fewer packets are in flight than the in-flight cap
    /// (`Config::window_gain`) allows, counting every one.
    pub(super) fn below_cap(&self) -> bool {
        self.window_gain
            .is_none_or(|g| self.send.in_flight < self.window.cap(g))
    }

    /// Whether the in-flight cap lets one more DATA packet leave at `now`:
    /// packets unacknowledged past [`Self::cap_age`] no longer count.
    pub(super) fn window_open(&self, now: Instant) -> bool {
        if self.below_cap() {
            return true;
        }
        let (Some(g), Some(age)) = (self.window_gain, self.cap_age()) else {
            return false;
        };
        let deadline = Instant::from_nanos(now.as_nanos().saturating_sub(age.as_nanos()));
        let young = self.send.sent_after(deadline).0;
        young.min(self.send.in_flight) < self.window.cap(g)
    }

    /// How long a packet counts toward the in-flight cap: one tail-probe
    /// timeout (RFC 8985 section 7.2: two RTTs plus the peer's ACK delay)
    /// where the RTT is the longer of the smoothed RTT and the RTT a full
    /// cap may see by its own queue (`DeliveryWindow::full_cap_rtt`; early
    /// on the smoothed RTT has not seen that queue, and a shorter age let
    /// extra packets into a full bottleneck queue). Past it a packet is
    /// presumed lost *for the cap* only: loss detection, retransmission of
    /// precise data and the rate control still wait for an ACK or the loss
    /// timer. Without it a path that loses half its ACKs filled the cap
    /// with packets whose ACK never came, and only the loss timer (an RTO,
    /// backed off after spurious timer losses) freed it: a SAP sender fell
    /// mute and was dropped as silent (docs/sap.md). The age is at least
    /// twice the time the cap takes to drain at the delivery rate, so
    /// slots freed by age alone (a dead path) let out at most half that
    /// rate, until the idle timeout ends the connection. `None` before
    /// the RTT and a delivery rate are measured (the loss timer alone
    /// frees the cap then).
    pub(super) fn cap_age(&self) -> Option<Duration> {
        let full = self.window.full_cap_rtt(self.window_gain?)?;
        Some(self.srtt?.max(full).saturating_mul(2) + self.window_ack_delay)
    }

    /// When the in-flight cap next frees a slot by age, while it is full
    /// at `now`: the oldest packet counted reaches [`Self::cap_age`].
    pub(super) fn window_frees_at(&self, now: Instant) -> Option<Instant> {
        if self.window_open(now) {
            return None;
        }
        let age = self.cap_age()?;
        let deadline = Instant::from_nanos(now.as_nanos().saturating_sub(age.as_nanos()));
        Some(self.send.sent_after(deadline).1? + age)
    }

    /// This connection's [`SendHold`] at `now` (`Endpoint::send_hold`).
    pub(crate) fn send_hold(&self, now: Instant) -> SendHold {
        if !self.control.is_empty() {
            return SendHold::Ready;
        }
        if self.state == State::Established && self.send.has_data() {
            if !self.window_open(now) {
                return SendHold::Window;
            }
            if self.next_send > now {
                return SendHold::Pacer;
            }
            return SendHold::Ready;
        }
        if self.send.busy() || self.send.has_open_jobs() {
            SendHold::Peer
        } else {
            SendHold::Application
        }
    }

    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        cfg: &Config,
    ) -> Option<Out> {
        if let Some(c) = self.control.pop_front() {
            if !matches!(c, Control::Ack) {
                return Some(self.emit_control(c, buf));
            }
            // `flush_ack` queues an ACK behind every marker, and `shutdown`
            // drops both: the ACK is there (were it not, nothing is sent
            // for the marker).
            let sent = self.emit_ack(buf);
            debug_assert!(sent.is_some(), "an ACK marker without its ACK");
            if sent.is_some() {
                return sent;
            }
        }
        if self.state != State::Established || now < self.next_send || !self.window_open(now) {
            return None;
        }
        if buf.len() < cfg.mtu {
            return None;
        }
        let mut np = crate::sender::NextPacket::default();
        if !self
            .send
            .next_packet_into(&self.pol, cfg.bundle_bytes, &mut np)
        {
            return None;
        }
        let (body_len, precise, approx, elems) = self.send.write_body(&np, &mut buf[HEADER_LEN..]);
        let bundle = self.send.bundling();
        // Extra data (send more) goes to the lowest-priority queue.
        let (queue, extra) = {
            let j = self.send.np_job_ref(&np);
            if j.extra {
                (cfg.queues - 1, true)
            } else {
                (j.groups[np.group_idx as usize].queue, false)
            }
        };
        let seq = self.send.on_sent(now, &np, queue);
        self.last_sent = now;
        self.epoch_sent = true;
        // The bits ORed in one expression: four `Flags::set` calls (each a
        // branch on its bit) cost ~12 instructions a packet (issue 19).
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        let flags = Flags(
            bit(approx, Flags::APPROX_CRC)
                | bit(elems.is_some(), Flags::TENSOR)
                | bit(bundle, Flags::BUNDLE)
                | bit(
                    cfg.transport_checksums && precise > 0,
                    Flags::PREFIX_BY_TRANSPORT,
                ),
        );
        let (es, ee) = elems.unwrap_or((0, 0));
        let h = HeaderRepr {
            ty: PacketTypeField(PacketType::Data),
            flags,
            conn_id: self.conn_id,
            job_id: np.job,
            group: np.group_id,
            epoch: self.wire_epoch,
            msg_id: np.msg_id,
            seq,
            pkt_index: np.pkt,
            pkt_count: np.pkt_count,
            elem_start: es,
            elem_end: ee,
            precise_len: precise as u16,
            body_len: body_len as u16,
        };
        h.emit(buf);
        let len = HEADER_LEN + body_len;
        crate::wire::Packet::new_unchecked(&mut buf[..len]).fill_checksum();
        // Pacing: the next packet may leave one serialisation time later;
        // a sender woken late may catch up by at most `pacing_burst`.
        let gap = self.gap_memo.time_for(self.rate, len);
        let floor = Instant::from_nanos(now.as_nanos().saturating_sub(cfg.pacing_burst.as_nanos()));
        self.next_send = self.next_send.max(floor) + gap;
        if !self.send.has_needed_data() {
            self.arm_or_defer_loss(cfg); // a tail begins: the probe too
        } else {
            self.settle_loss(cfg);
            if self.timers.get(Timer::Loss).is_none() {
                self.timers
                    .set(Timer::Loss, now + self.loss_rto_data_waiting(cfg));
            }
        }
        Some(Out {
            len,
            queue,
            precise_len: precise,
            extra,
            control: false,
        })
    }

    /// Writes the oldest queued ACK (see `AckQueue`) from where it was
    /// built: header and body by reference, no copy of the value.
    #[inline]
    fn emit_ack(&mut self, buf: &mut [u8]) -> Option<Out> {
        let q = self.acks.front()?;
        let n = q.ack.buffer_len();
        q.ack.emit(&mut buf[HEADER_LEN..HEADER_LEN + n]);
        q.h.emit_sized(buf, n as u16);
        self.acks.pop_front();
        let len = HEADER_LEN + n;
        crate::wire::Packet::new_unchecked(&mut buf[..len]).fill_checksum();
        Some(Out {
            len,
            queue: 0,
            precise_len: n,
            extra: false,
            control: true,
        })
    }

    /// Writes a control packet. Bodies are written in place after the
    /// header (an ACK went through a zeroed stack buffer and a copy, and a
    /// JOB through a `Vec`: ~100 instructions per ACK).
    fn emit_control(&mut self, c: Control, buf: &mut [u8]) -> Out {
        let mut h = HeaderRepr {
            conn_id: self.conn_id,
            ..HeaderRepr::default()
        };
        let body = &mut buf[HEADER_LEN..];
        let n = match c {
            Control::Hello(nonce) => {
                h.ty = PacketTypeField(PacketType::Hello);
                h.conn_id = 0;
                HelloRepr { nonce }.emit(&mut body[..HelloRepr::LEN]);
                HelloRepr::LEN
            }
            // written by `emit_ack`; a marker without its ACK sends nothing
            Control::Ack => 0,
            Control::JobAck(job, announced) => {
                h.ty = PacketTypeField(PacketType::Ack);
                h.job_id = job;
                h.flags = Flags(Flags::JOB_KNOWN);
                // a JOB_KNOWN ACK's cumulative field carries the messages
                // the receiver now holds announced (docs/wire-format.md)
                let a = AckRepr::new(announced, 0, 0);
                let n = a.buffer_len();
                a.emit(&mut body[..n]);
                n
            }
            Control::Job(job) => {
                h.ty = PacketTypeField(PacketType::Job);
                h.job_id = job;
                h.seq = self.send.first_seq();
                match self.send.job_mut(job) {
                    Some(j) => {
                        let n = j.repr.buffer_len();
                        j.repr.emit(&mut body[..n]);
                        n
                    }
                    None => 0,
                }
            }
            Control::Fin { job } => {
                h.ty = PacketTypeField(PacketType::Fin);
                h.job_id = job;
                0
            }
            Control::FinAck { job, close } => {
                h.ty = PacketTypeField(PacketType::FinAck);
                h.job_id = job;
                h.flags.set(Flags::CLOSE, close);
                0
            }
            Control::Close => {
                h.ty = PacketTypeField(PacketType::Fin);
                h.flags = Flags(Flags::CLOSE);
                0
            }
            Control::RefuseJob(job) => {
                h.ty = PacketTypeField(PacketType::Reset);
                h.job_id = job;
                body[0] = crate::wire::ResetReason::JobRefused.code();
                1
            }
        };
        h.body_len = n as u16;
        h.precise_len = n as u16;
        h.emit(buf);
        let len = HEADER_LEN + n;
        crate::wire::Packet::new_unchecked(&mut buf[..len]).fill_checksum();
        Out {
            len,
            queue: 0,
            precise_len: n,
            extra: false,
            control: true,
        }
    }
}
