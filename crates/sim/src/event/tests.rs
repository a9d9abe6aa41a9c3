//! Tests of the event list: order against a binary heap with sequence
//! numbers, crowded slots, the bitmap, packing.

use super::*;
use approxnet_proto::rng::Rng;

#[test]
fn events_pack_into_64_bits_and_chunks_into_cache_lines() {
    assert_eq!(std::mem::size_of::<Chunk>(), 64);
    let all = [
        Ev::TxDone { port: u32::MAX },
        Ev::Arrive {
            node: MAX_NODE,
            pkt: u32::MAX,
        },
        Ev::Arrive { node: 7, pkt: 0 },
        Ev::FlowTimer {
            flow: 3,
            gen: MAX_NODE,
        },
        Ev::EndpointTimer { host: 1 << 31 },
        Ev::JobStart { job: 12 },
        Ev::Produce { job: u32::MAX - 1 },
        Ev::Credit { host: 5 },
        Ev::Sample,
        Ev::TrainingCompute { id: 9 },
        Ev::QueueShift {
            follow: u32::MAX,
            up: true,
        },
        Ev::QueueShift {
            follow: 0,
            up: false,
        },
    ];
    for ev in all {
        assert_eq!(Ev::unpack(ev.pack()), ev);
        // what the loop decodes from the packed form without unpacking
        let p = Packed(ev.pack());
        assert_eq!(p.ev(), ev);
        match ev {
            Ev::TxDone { port } => assert_eq!((p.tag(), p.a()), (Packed::TX_DONE, port)),
            Ev::Arrive { node, pkt } => {
                assert_eq!((p.tag(), p.a(), p.b()), (Packed::ARRIVE, pkt, node));
            }
            _ => assert!(p.tag() != Packed::TX_DONE && p.tag() != Packed::ARRIVE),
        }
    }
}

#[test]
fn packed_pops_and_peeks_give_the_same_events() {
    let mut el = EventList::new();
    let evs = [
        (5, Ev::Arrive { node: 3, pkt: 8 }),
        (5, Ev::TxDone { port: 2 }),
        (9, Ev::Sample),
        (WHEEL_NS + 7, Ev::Arrive { node: 1, pkt: 4 }),
    ];
    for (t, ev) in evs {
        el.schedule(Instant::from_nanos(t), ev);
    }
    let up = el.upcoming_packed::<3>();
    assert_eq!(up.map(|p| p.map(Packed::ev)), el.upcoming::<3>());
    assert_eq!(up[0].map(Packed::ev), Some(evs[0].1));
    // after each pop, the next event if it is due at the same nanosecond
    let ready = [Some(evs[1].1), None, None, None];
    for ((t, ev), next) in evs.into_iter().zip(ready) {
        let (at, p) = el.pop_packed_until(Instant::FAR_FUTURE).expect("an event");
        assert_eq!((at.as_nanos(), p.ev()), (t, ev));
        assert_eq!(el.peek_ready_packed().map(Packed::ev), next);
        assert_eq!(el.peek_popped().map(Packed::ev), next);
        assert_eq!(el.peek_ready(), next);
    }
    assert_eq!(el.pop_packed_until(Instant::FAR_FUTURE), None);
}

#[test]
fn ties_break_by_schedule_order() {
    let mut el = EventList::new();
    let t = Instant::from_nanos(5);
    el.schedule(t, Ev::FlowTimer { flow: 1, gen: 0 });
    el.schedule(Instant::from_nanos(3), Ev::Sample);
    el.schedule(t, Ev::FlowTimer { flow: 2, gen: 0 });
    el.schedule(t, Ev::FlowTimer { flow: 3, gen: 0 });
    let order: Vec<Ev> = std::iter::from_fn(|| el.pop().map(|x| x.1)).collect();
    assert_eq!(
        order,
        vec![
            Ev::Sample,
            Ev::FlowTimer { flow: 1, gen: 0 },
            Ev::FlowTimer { flow: 2, gen: 0 },
            Ev::FlowTimer { flow: 3, gen: 0 }
        ]
    );
    assert_eq!(el.now(), t);
    assert_eq!(el.executed(), 4);
}

/// Pops `el` and a binary heap with sequence numbers side by side under
/// interleaved pushes (`dt` draws each event's distance from now) and
/// pops; they must agree event by event.
fn check_against_binary_heap(seed: u64, rounds: u32, dt: impl Fn(&mut Rng) -> u64) {
    let mut rng = Rng::new(seed);
    let mut el = EventList::new();
    let mut reference = BinaryHeap::new();
    let mut seq = 0u64;
    let mut now = 0u64;
    for round in 0..rounds {
        for _ in 0..rng.below(3) {
            let t = now + dt(&mut rng);
            el.schedule(
                Instant::from_nanos(t),
                Ev::FlowTimer {
                    flow: round,
                    gen: 0,
                },
            );
            reference.push(Reverse((t, seq, round)));
            seq += 1;
        }
        if rng.below(2) == 0 {
            match (el.pop(), reference.pop()) {
                (Some((t, Ev::FlowTimer { flow, .. })), Some(Reverse((rt, _, rf)))) => {
                    assert_eq!((t.as_nanos(), flow), (rt, rf));
                    now = rt;
                    // the pop's own answer to "more at this nanosecond?"
                    let next = reference.peek().filter(|Reverse((nt, ..))| *nt == rt);
                    let want = next.map(|Reverse((_, _, nf))| Ev::FlowTimer { flow: *nf, gen: 0 });
                    assert_eq!(el.peek_popped().map(Packed::ev), want);
                    assert_eq!(el.peek_ready(), want);
                }
                (None, None) => {}
                other => panic!("{other:?}"),
            }
        }
    }
    while let Some(Reverse((rt, _, rf))) = reference.pop() {
        let (t, ev) = el.pop().unwrap();
        assert_eq!((t.as_nanos(), ev), (rt, Ev::FlowTimer { flow: rf, gen: 0 }));
    }
    assert!(el.pop().is_none());
    assert!(el.is_empty());
}

/// Checks that the bitmap marks exactly the slots that hold events
/// (the scans trust the bits, pushes and pops the slots' `head`), that
/// the summary marks exactly the non-zero words, and that the slots
/// hold `near` events in all.
fn check_bits(el: &EventList) {
    let mut events = 0;
    for s in 0..SLOTS {
        let slot = el.slots[s];
        let full = slot.head != EMPTY_SLOT;
        assert_eq!(el.bits[s / 64] >> (s % 64) & 1 == 1, full, "slot {s}");
        if !full {
            continue;
        }
        events += 1;
        let mut c = slot.head;
        let mut from = if c == ONLY_FIRST {
            0
        } else {
            el.chunks[c as usize].read
        };
        while c != ONLY_FIRST {
            let chunk = &el.chunks[c as usize];
            events += usize::from(chunk.written - from);
            c = if c == slot.tail {
                ONLY_FIRST
            } else {
                chunk.next
            };
            from = 0;
        }
    }
    for w in 0..WORDS {
        assert_eq!(
            el.summary[w / 64] >> (w % 64) & 1 == 1,
            el.bits[w] != 0,
            "word {w}"
        );
    }
    assert_eq!(events, el.near);
}

/// The bitmap and the slots agree after every kind of push (into an
/// empty slot, behind a slot's first event, into a chunk, a new
/// chunk), pop (a slot's last event, one that empties a chunk) and
/// far event moved in, the clock going round the wheel many times.
#[test]
fn the_bitmap_marks_the_slots_that_hold_events() {
    let mut rng = Rng::new(17);
    let mut el = EventList::new();
    for round in 0..30_000u32 {
        let now = el.now().as_nanos();
        for _ in 0..rng.below(4) {
            let dt = match rng.below(4) {
                0 => rng.below(3),
                1 => rng.below(WHEEL_NS),
                2 => WHEEL_NS + rng.below(WHEEL_NS),
                _ => 200 + rng.below(50),
            };
            let ev = Ev::FlowTimer {
                flow: round,
                gen: 0,
            };
            el.schedule(Instant::from_nanos(now + dt), ev);
        }
        for _ in 0..rng.below(5) {
            el.pop();
        }
        if round % 499 == 0 {
            check_bits(&el);
        }
    }
    while el.pop().is_some() {}
    check_bits(&el);
    assert!(el.bits.iter().all(|&w| w == 0));
}

/// Times at the end of the clock's range neither overflow nor reorder.
#[test]
fn events_at_the_end_of_time() {
    let mut el = EventList::new();
    let end = u64::MAX;
    el.schedule(Instant::from_nanos(end), Ev::FlowTimer { flow: 1, gen: 0 });
    el.schedule(
        Instant::from_nanos(end - 1),
        Ev::FlowTimer { flow: 2, gen: 0 },
    );
    el.schedule(Instant::from_nanos(end), Ev::FlowTimer { flow: 3, gen: 0 });
    el.schedule(Instant::from_nanos(5), Ev::FlowTimer { flow: 4, gen: 0 });
    let order: Vec<(u64, Ev)> =
        std::iter::from_fn(|| el.pop().map(|(t, e)| (t.as_nanos(), e))).collect();
    assert_eq!(
        order,
        vec![
            (5, Ev::FlowTimer { flow: 4, gen: 0 }),
            (end - 1, Ev::FlowTimer { flow: 2, gen: 0 }),
            (end, Ev::FlowTimer { flow: 1, gen: 0 }),
            (end, Ev::FlowTimer { flow: 3, gen: 0 }),
        ]
    );
    // an event due now, at the end of time, still comes out
    el.schedule(Instant::from_nanos(end), Ev::Sample);
    assert_eq!(el.pop(), Some((Instant::from_nanos(end), Ev::Sample)));
    assert!(el.is_empty());
}

#[test]
fn upcoming_are_the_next_two_pops() {
    let mut el = EventList::new();
    let mut rng = Rng::new(5);
    for i in 0..2_000u32 {
        let t = rng.below(3 * WHEEL_NS / 2);
        el.schedule(Instant::from_nanos(t), Ev::FlowTimer { flow: i, gen: 0 });
    }
    loop {
        let [a, b] = el.upcoming::<2>();
        let two = el.upcoming_two();
        assert_eq!((two.0.map(Packed::ev), two.1.map(Packed::ev)), (a, b));
        let x = el.pop().map(|e| e.1);
        // the far heap's events are not shown: None is allowed there
        if a.is_some() {
            assert_eq!(a, x);
        }
        if x.is_none() {
            break;
        }
        if b.is_some() {
            assert_eq!(b, el.upcoming::<1>()[0]);
        }
    }
}

/// Slots of many events (several chunks each), scheduled while their
/// slot is being popped, and `upcoming` across chunk and slot ends.
#[test]
fn crowded_slots_keep_their_order() {
    let mut el = EventList::new();
    let mut reference = std::collections::VecDeque::new();
    let mut rng = Rng::new(11);
    let mut id = 0u32;
    for round in 0..3_000u32 {
        let now = el.now().as_nanos();
        for _ in 0..rng.below(40) {
            // 0..3 ns ahead: a few crowded slots
            let t = now + rng.below(3);
            el.schedule(Instant::from_nanos(t), Ev::FlowTimer { flow: id, gen: 0 });
            reference.push_back((t, id));
            id += 1;
        }
        reference.make_contiguous().sort_by_key(|&(t, i)| (t, i));
        let pops = rng.below(40) + u64::from(round % 7 == 0) * 100;
        for _ in 0..pops {
            let [a, b, c] = el.upcoming::<3>();
            let two = el.upcoming_two();
            assert_eq!((two.0.map(Packed::ev), two.1.map(Packed::ev)), (a, b));
            let want: Vec<Option<Ev>> = (0..3)
                .map(|k| {
                    reference
                        .get(k)
                        .map(|&(_, f)| Ev::FlowTimer { flow: f, gen: 0 })
                })
                .collect();
            assert_eq!(vec![a, b, c], want);
            match (el.pop(), reference.pop_front()) {
                (Some((t, ev)), Some((rt, rf))) => {
                    assert_eq!((t.as_nanos(), ev), (rt, Ev::FlowTimer { flow: rf, gen: 0 }));
                    assert_eq!(el.len(), reference.len());
                }
                (None, None) => break,
                other => panic!("{other:?}"),
            }
        }
    }
}

/// A slot's inline first event and its chunks: every count around a
/// chunk's end, pops that empty a chunk while the slot keeps events,
/// pushes into the slot being popped (its first taken, its chunks
/// partly read), and `upcoming` across `first` and the chunks.
#[test]
fn one_slot_across_its_first_and_its_chunks() {
    for n in 1..=3 * PER_CHUNK as u32 + 2 {
        for popped in 0..=n {
            let mut el = EventList::new();
            let t = Instant::from_nanos(40);
            let ev = |flow| Ev::FlowTimer { flow, gen: 0 };
            for f in 0..n {
                el.schedule(t, ev(f));
            }
            el.schedule(Instant::from_nanos(41), ev(1000));
            for f in 0..popped {
                assert_eq!(el.pop(), Some((t, ev(f))));
            }
            // two more at the slot's time, behind what it still holds
            el.schedule(t, ev(n));
            el.schedule(t, ev(n + 1));
            let want: Vec<Ev> = (popped..n + 2).map(ev).chain([ev(1000)]).collect();
            let up = el.upcoming::<4>();
            let two = el.upcoming_two();
            assert_eq!(
                (two.0.map(Packed::ev), two.1.map(Packed::ev)),
                (up[0], up[1])
            );
            for (k, u) in up.iter().enumerate() {
                assert_eq!(*u, want.get(k).copied(), "n {n} popped {popped}");
            }
            let got: Vec<Ev> = std::iter::from_fn(|| el.pop().map(|x| x.1)).collect();
            assert_eq!(got, want, "n {n} popped {popped}");
            assert!(el.is_empty());
            // the slot is empty and reusable a turn later
            el.schedule(Instant::from_nanos(40 + WHEEL_NS), ev(7));
            assert_eq!(el.pop(), Some((Instant::from_nanos(40 + WHEEL_NS), ev(7))));
        }
    }
}

/// Many exact ties, times on both sides of the wheel's edge, some
/// far-future events.
#[test]
fn same_order_as_a_binary_heap_with_sequence_numbers() {
    check_against_binary_heap(9, 20_000, |rng| match rng.below(6) {
        0 => 0,
        1 => rng.below(8),
        2 => rng.below(10_000),
        3 => WHEEL_NS - 4 + rng.below(8),
        4 => rng.below(4 * WHEEL_NS),
        _ => rng.below(1 << 40),
    });
}

/// A packet network's traffic: mostly within the wheel, the clock going
/// round it many times, events a turn ahead of a slot in use.
#[test]
fn same_order_as_a_binary_heap_when_the_wheel_wraps() {
    check_against_binary_heap(3, 200_000, |rng| match rng.below(8) {
        0 => 0,
        1 => WHEEL_NS + rng.below(3),
        2 => WHEEL_NS - 1 - rng.below(3),
        3 => rng.below(3 * WHEEL_NS),
        _ => 300 + rng.below(2_000),
    });
}

/// `far_due` follows `far_min` through far pushes, migrations and the
/// last far event's removal, up to the end of the clock's range (where
/// `advance`'s test saturates; in debug builds `advance` also checks it
/// against the sum it replaced).
#[test]
fn far_due_is_far_min_less_the_window() {
    let mut el = EventList::new();
    let check = |el: &EventList| {
        assert_eq!(el.far_due, el.far_min.saturating_sub(WHEEL_NS - 1));
    };
    check(&el);
    let times = [
        3 * WHEEL_NS,
        WHEEL_NS + 5,
        7 * WHEEL_NS,
        u64::MAX - WHEEL_NS,
        u64::MAX - 2,
    ];
    for t in times {
        el.schedule(Instant::from_nanos(t), Ev::Sample);
        check(&el);
    }
    let mut popped = Vec::new();
    while let Some((t, _)) = el.pop() {
        popped.push(t.as_nanos());
        check(&el);
    }
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    assert_eq!(popped, sorted);
    assert_eq!(el.far_min, u64::MAX);
}

/// `schedule_ahead` files an event not in the past where `schedule`
/// does: two lists, one scheduling each way, pop the same events at the
/// same times, near and far, at now and across the wheel's wrap.
#[test]
fn scheduling_ahead_equals_scheduling() {
    let mut rng = Rng::new(7);
    let (mut a, mut b) = (EventList::new(), EventList::new());
    for round in 0..20_000u32 {
        for _ in 0..rng.below(3) {
            let dt = match rng.below(4) {
                0 => 0,
                1 => rng.below(64),
                2 => rng.below(WHEEL_NS),
                _ => WHEEL_NS - 2 + rng.below(4 * WHEEL_NS),
            };
            let at = Instant::from_nanos(a.now().as_nanos() + dt);
            let ev = Ev::TxDone { port: round };
            a.schedule(at, ev);
            b.schedule_ahead(at, ev);
        }
        if rng.below(2) == 0 {
            assert_eq!(a.pop(), b.pop());
        }
    }
    while let Some(x) = a.pop() {
        assert_eq!(Some(x), b.pop());
    }
    assert_eq!(b.pop(), None);
}
