//! One receive batch into the core: the datagrams of one `recvmmsg` (UDP
//! GRO batches split) go to [`Endpoint::handle_datagrams`] in one call,
//! so the core derives a connection's timers and ready-queue entry once
//! per run of its datagrams, not once per datagram (docs/performance.md,
//! "Sixth pass: a batched interface"; the same datagrams and events as
//! `handle_datagram` per datagram, `crates/proto/tests/batch.rs`).
//!
//! ECN: a datagram that arrived with the IP codepoint CE gets the header's
//! CE flag set in place, in the receive slot, before the core reads it —
//! the flag the core counts and echoes (seed 000: the receiver echoes
//! congestion marks in its ACKs). The CRC masks that flag, so setting it
//! breaks no checksum.

use crate::sys::RecvQueue;
use approxnet_proto::wire::Flags;
use approxnet_proto::{Endpoint, Instant};

/// Offset of the header's flags byte (the CE bit lives there).
pub(crate) const FLAGS_OFFSET: usize = 2;
/// The TOS byte's two ECN bits (RFC 3168 §5; DSCP is the upper six).
pub(crate) const ECN_MASK: u8 = 0b11;
/// ECN "congestion experienced" codepoint in the TOS byte.
pub(crate) const ECN_CE: u8 = 0b11;

/// What one [`deliver`] handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delivered {
    /// Datagrams given to the core.
    pub datagrams: usize,
    /// Of them, datagrams whose CE flag was set from the IP header.
    pub ce_marked: u64,
}

/// Hands the datagrams of the last [`RecvQueue::recv`] to `ep` in one
/// [`Endpoint::handle_datagrams`] call at `now`, with CE copied from the
/// TOS byte into the header where `ecn` is on. The caller flushes ACKs
/// (`Endpoint::flush_acks`) afterwards, as after single calls.
pub(crate) fn deliver(ep: &mut Endpoint, now: Instant, rq: &mut RecvQueue, ecn: bool) -> Delivered {
    let mut d = Delivered::default();
    let batch = rq.iter_mut().map(|r| {
        d.datagrams += 1;
        let ce = ecn && r.tos.is_some_and(|t| t & ECN_MASK == ECN_CE);
        if ce && r.data.len() > FLAGS_OFFSET {
            d.ce_marked += 1;
            r.data[FLAGS_OFFSET] |= Flags::CE;
        }
        (r.src, &*r.data)
    });
    ep.handle_datagrams(now, batch);
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use approxnet_proto::harness::direct::connected_messages;
    use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
    use approxnet_proto::{Config, Duration, Event, Rate};

    /// The receive loop as it was before `deliver`: one `handle_datagram`
    /// per datagram, CE set on a copy.
    fn deliver_one_by_one(ep: &mut Endpoint, now: Instant, rq: &RecvQueue, ecn: bool) -> Delivered {
        let mut d = Delivered::default();
        let mut scratch = vec![0u8; 65_535];
        for r in rq.iter() {
            d.datagrams += 1;
            let ce = ecn && r.tos.is_some_and(|t| t & ECN_MASK == ECN_CE);
            if ce && r.data.len() > FLAGS_OFFSET {
                d.ce_marked += 1;
                let buf = &mut scratch[..r.data.len()];
                buf.copy_from_slice(r.data);
                buf[FLAGS_OFFSET] |= Flags::CE;
                ep.handle_datagram(now, r.src, buf);
            } else {
                ep.handle_datagram(now, r.src, r.data);
            }
        }
        d
    }

    /// Fills `rq` with `burst` as `recvmmsg` with GRO would: runs of equal
    /// length merged into slots of up to 8 segments (the last may be
    /// shorter), TOS cycling through CE, ECT(0), none; then a slot with a
    /// malformed datagram and one with an empty one.
    fn fill(rq: &mut RecvQueue, burst: &[Vec<u8>], round: usize) {
        let tos = |k: usize| match (k + round) % 3 {
            0 => Some(ECN_CE),
            1 => Some(0b10),
            _ => None,
        };
        let mut first = true;
        let mut k = 0;
        let mut i = 0;
        while i < burst.len() {
            let seg = burst[i].len();
            let mut slot = Vec::new();
            let mut j = i;
            while j < burst.len() && j - i < 8 && burst[j].len() <= seg {
                slot.extend_from_slice(&burst[j]);
                j += 1;
                if slot.len() % seg != 0 {
                    break; // a shorter one ends a GRO batch
                }
            }
            rq.put(first, CLIENT_ADDR, &slot, seg, tos(k));
            first = false;
            k += 1;
            i = j;
        }
        rq.put(first, CLIENT_ADDR, &[0x5a; 40], 40, Some(ECN_CE));
        rq.put(false, CLIENT_ADDR, &[], 0, Some(ECN_CE));
    }

    /// Everything `ep` sends at `now`.
    fn drain(ep: &mut Endpoint, now: Instant) -> Vec<Vec<u8>> {
        let mut buf = vec![0u8; 2048];
        let mut out = Vec::new();
        while let Some(t) = ep.poll_transmit(now, &mut buf) {
            out.push(buf[..t.len].to_vec());
        }
        out
    }

    /// A 46-packet-message job from `a` to two identical receivers, one
    /// fed by `deliver`, one by single calls, in GRO batches with CE
    /// marks: both answer with the same datagrams, byte for byte, and end
    /// in the same state.
    fn same_wire(ecn: bool, ack_every: u32) {
        let cfg = Config {
            line_rate: Rate::gbps(10.0),
            keep_payloads: false,
            idle_timeout: Duration::from_secs(60),
            ack_every,
            ..Config::default()
        };
        let (mut a, mut batched, mut now) = connected_messages(cfg, 1.0, 920, 46);
        let (_, mut single, _) = connected_messages(cfg, 1.0, 920, 46);
        let mut rq_b = RecvQueue::new(64, 65_535);
        let mut rq_s = RecvQueue::new(64, 65_535);
        let (mut datagrams, mut marked, mut replies) = (0, 0, 0);
        let mut finished = false;
        let tick = Duration::from_micros(10);
        for round in 0..100_000 {
            for ep in [&mut a, &mut batched, &mut single] {
                if ep.poll_timeout().is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
            let burst: Vec<Vec<u8>> = drain(&mut a, now).into_iter().take(48).collect();
            if !burst.is_empty() {
                fill(&mut rq_b, &burst, round);
                fill(&mut rq_s, &burst, round);
                let db = deliver(&mut batched, now, &mut rq_b, ecn);
                let ds = deliver_one_by_one(&mut single, now, &rq_s, ecn);
                assert_eq!(db, ds, "round {round}");
                datagrams += db.datagrams;
                marked += db.ce_marked;
                batched.flush_acks(now);
                single.flush_acks(now);
            }
            let (out_b, out_s) = (drain(&mut batched, now), drain(&mut single, now));
            assert_eq!(out_b, out_s, "round {round}: the replies differ");
            replies += out_b.len();
            for d in &out_b {
                a.handle_datagram(now, SERVER_ADDR, d);
            }
            let events =
                |ep: &mut Endpoint| std::iter::from_fn(|| ep.poll_event()).collect::<Vec<_>>();
            assert_eq!(
                format!("{:?}", events(&mut batched)),
                format!("{:?}", events(&mut single))
            );
            let done = std::iter::from_fn(|| a.poll_event())
                .any(|(_, e)| matches!(e, Event::JobComplete { .. }));
            assert_eq!(batched.poll_timeout(), single.poll_timeout());
            let next = [a.poll_timeout(), batched.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                // a wake-up grid, as the runtime's
                Some(t) => {
                    now = Instant::from_nanos(t.as_nanos().max(now.as_nanos() + tick.as_nanos()))
                }
                None => break,
            }
            if done {
                finished = true;
                break;
            }
        }
        assert_eq!(
            format!("{:?}", batched.stats()),
            format!("{:?}", single.stats())
        );
        assert!(finished, "the job completed");
        assert!(datagrams > 900, "the job ran: {datagrams} datagrams");
        assert!(replies > 0);
        if ecn {
            assert!(marked > 200, "CE marks reached the core: {marked}");
        } else {
            assert_eq!(marked, 0);
        }
    }

    #[test]
    fn batched_receive_puts_the_same_datagrams_on_the_wire_as_single_calls() {
        for ack_every in [1, 16] {
            same_wire(true, ack_every);
            same_wire(false, ack_every);
        }
    }
}
