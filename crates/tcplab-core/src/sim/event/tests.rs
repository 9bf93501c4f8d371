use super::*;

/// A queue of each kind: the tree (growing as links are used), the
/// radix heap, and the radix heap with lanes for links 3 and 0.
fn queues() -> [EventQueue; 3] {
    let mut q = [
        EventQueue::with_links(3),
        EventQueue::with_links(TREE_MAX_LINKS + 1),
        EventQueue::with_links(TREE_MAX_LINKS + 1),
    ];
    q[2].set_lanes([3, 0]);
    assert!(q[0].radix.is_none() && q[1].radix.is_some() && q[2].radix.as_ref().unwrap().lane_l == [3, 0]);
    q
}

#[test]
fn ties_break_in_insertion_order() {
    for mut q in queues() {
        q.schedule(10, EventKind::Sample);
        q.schedule(5, EventKind::Rto(7));
        q.schedule(10, EventKind::LinkArrival(3));
        q.schedule(10, EventKind::Rto(2));
        q.schedule(10, EventKind::LinkArrival(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::Rto(7)),
                (10, EventKind::Sample),
                (10, EventKind::LinkArrival(3)),
                (10, EventKind::Rto(2)),
                (10, EventKind::LinkArrival(0)),
            ]
        );
    }
}

/// Equal times scheduled at different moments (against different `last`
/// values) and moved down the levels by several spills still come out
/// in insertion order, and events scheduled at the current time after
/// a spill come after those already there.
#[test]
fn equal_times_stay_fifo_across_spills() {
    for mut q in queues() {
        let t = 0x1234_5678_9abc; // several levels above 0
        let mut want = Vec::new();
        let mut id = 0;
        let mut add = |q: &mut EventQueue, time: Time, want: &mut Vec<(Time, u32)>| {
            q.schedule(time, EventKind::Rto(id));
            want.push((time, id));
            id += 1;
        };
        // Interleave the equal times with earlier and later ones, so their
        // bucket is spilled several times before they are popped.
        for k in 0..20u64 {
            add(&mut q, t, &mut want);
            add(&mut q, t - 1 - k * 977_777, &mut want);
            add(&mut q, t + 1 + k * 3, &mut want);
            add(&mut q, t + (1 << 30), &mut want);
        }
        let mut got = Vec::new();
        // Pop up to the first event at t, then schedule more at t.
        while let Some(e) = q.pop() {
            let EventKind::Rto(i) = e.kind else { unreachable!() };
            got.push((e.time, i));
            if e.time == t && got.iter().filter(|g| g.0 == t).count() == 1 {
                for _ in 0..5 {
                    add(&mut q, t, &mut want);
                    add(&mut q, t + 2, &mut want);
                }
            }
        }
        // The reference: a stable sort by time of the insertion order.
        want.sort_by_key(|w| w.0);
        assert_eq!(got, want);
        assert!(q.is_empty());
    }
}

#[test]
fn kinds_round_trip() {
    let kinds = [
        EventKind::LinkArrival(70),
        EventKind::Rto(3),
        EventKind::DelayedAck(4),
        EventKind::Pace(5),
        EventKind::FlowStart(6),
        EventKind::FileStart(u32::MAX, 9),
        EventKind::Sample,
        EventKind::MeasureStart,
        EventKind::LinkArrival(100_000),
        EventKind::LinkService(0),
        EventKind::QdiscTimer(0),
        EventKind::LinkService(u32::MAX),
        EventKind::QdiscTimer(12_345),
        EventKind::SourceSend(u32::MAX),
        EventKind::SourceSend(0),
        EventKind::QdiscArrival(7),
        EventKind::QdiscArrival(u32::MAX),
    ];
    for mut q in queues() {
        for (i, k) in kinds.iter().enumerate() {
            q.schedule(i as Time, *k);
        }
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(got, kinds);
    }
}

#[test]
fn limits_and_peek() {
    for mut q in queues() {
        assert_eq!((q.peek_time(), q.pop()), (None, None));
        q.schedule(1000, EventKind::Rto(1));
        q.schedule(1000, EventKind::Rto(2));
        q.schedule(5000, EventKind::Rto(3));
        assert_eq!(q.peek_time(), Some(1000));
        assert_eq!(q.pop_until(999), None);
        // A refused pop changes nothing: an event before the refused one
        // may still be scheduled.
        q.schedule(999, EventKind::Rto(0));
        assert_eq!(q.pop_until(999).map(|e| e.kind), Some(EventKind::Rto(0)));
        assert_eq!(q.pop_until(1000).map(|e| e.kind), Some(EventKind::Rto(1)));
        assert_eq!(q.peek_time(), Some(1000));
        assert_eq!(q.pop_until(1000).map(|e| e.kind), Some(EventKind::Rto(2)));
        assert_eq!(q.pop_until(4999), None);
        assert_eq!((q.len(), q.popped()), (1, 3));
        q.schedule(Time::MAX, EventKind::Sample);
        assert_eq!(q.pop().map(|e| e.time), Some(5000));
        assert_eq!(q.pop_until(Time::MAX - 1), None);
        assert_eq!(q.pop(), Some(Event { time: Time::MAX, kind: EventKind::Sample }));
        assert!(q.is_empty());
    }
}

#[test]
#[should_panic(expected = "before the current time")]
fn scheduling_in_the_past_is_refused() {
    let [_, mut q, _] = queues();
    q.schedule(10, EventKind::Sample);
    q.pop();
    q.schedule(9, EventKind::Sample);
}

/// The same after an event popped from a lane (which leaves the
/// buckets' own `last` behind), for the lane's link and for the
/// buckets: the check is against the last pop of either.
#[test]
fn scheduling_in_the_past_is_refused_with_lanes() {
    for kind in [EventKind::LinkArrival(3), EventKind::Rto(1)] {
        let r = std::panic::catch_unwind(move || {
            let [_, _, mut q] = queues();
            q.schedule(10, EventKind::LinkArrival(3));
            assert_eq!(q.pop().map(|e| e.time), Some(10));
            q.schedule(9, kind);
        });
        let msg = *r.expect_err("an event before the current time was accepted").downcast::<String>().unwrap();
        assert!(msg.contains("before the current time"), "{kind:?}: {msg}");
    }
}

/// A lane's link scheduled again while its arrival is pending (the
/// simulator never does; the radix heap's API allows it, the tree's
/// refuses it): the second arrival goes into the buckets, moving the
/// first there if they tie, and the order is still insertion order.
#[test]
fn a_lane_link_scheduled_twice_keeps_the_order() {
    let [_, _, mut q] = queues();
    let s = [
        (10, EventKind::LinkArrival(3)),
        (10, EventKind::LinkArrival(3)),
        (10, EventKind::Rto(1)),
        (5, EventKind::LinkArrival(3)),
        (10, EventKind::LinkArrival(0)),
        (7, EventKind::LinkArrival(0)),
    ];
    for (t, k) in s {
        q.schedule(t, k);
    }
    let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
    // By time, then insertion: 5 L3, 7 L0, then the four at 10 as scheduled.
    let mut want: Vec<_> = s.iter().enumerate().map(|(i, &(t, k))| (t, i, k)).collect();
    want.sort_by_key(|&(t, i, _)| (t, i));
    assert_eq!(order, want.into_iter().map(|(t, _, k)| (t, k)).collect::<Vec<_>>());
}

/// Popping events and scheduling from their handlers (link arrivals, at
/// most one pending per link, and timers, some far in the future) gives
/// the order of a reference priority queue (BinaryHeap of (time, seq)),
/// with many equal times, from time 0 and near the end of the u64 range.
#[test]
fn pop_and_schedule_match_a_reference_heap() {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    // (start, spread of link delays, of timer delays, steps, links)
    let cases: [(Time, u64, u64, usize, u32); 8] = [
        (0, 50, 50, 50_000, 37),                               // dense: many ties
        (0, 3, 1 << 20, 30_000, 37),                           // mostly ties, far timers
        (0, 1 << 17, 1 << 40, 50_000, 37),                     // picosecond-like spreads
        (12_345, 1, 1 << 62, 20_000, 37),                      // ties and huge jumps
        (Time::MAX - (1 << 24), 1 << 12, 1 << 22, 30_000, 37), // near u64::MAX
        (Time::MAX - 100, 5, 5, 5_000, 37),                    // up to u64::MAX itself
        // Few links, so the lane links (0 and 3 in queues()) carry most
        // arrivals, tied with each other and with the buckets' events.
        (0, 4, 4, 50_000, 4),
        (1 << 40, 6, 1 << 30, 50_000, 5),
    ];
    for (case, &(start, link_spread, timer_spread, steps, links)) in cases.iter().enumerate() {
        let mut x: u64 = 0x1234_5678 + case as u64;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m.max(1)
        };
        #[allow(non_snake_case)]
        let LINKS = links;
        for mut q in queues() {
            // Reference: (time, seq, id), ids: links < LINKS, timers above.
            let mut r: BinaryHeap<Reverse<(Time, u64, u32)>> = BinaryHeap::new();
            let mut busy = vec![false; LINKS as usize];
            let mut seq = 0u64;
            let mut now = start;
            let mut popped = 0;
            for step in 0..steps {
                // Bursts now and then: many events at once, then many pops.
                let n = if step % 1000 < 10 { rnd(40) } else { rnd(3) };
                for _ in 0..n {
                    let l = rnd(LINKS as u64 + 4) as u32;
                    let (id, spread) = if l < LINKS {
                        if busy[l as usize] {
                            continue;
                        }
                        busy[l as usize] = true;
                        (l, link_spread)
                    } else {
                        (LINKS + seq as u32, if rnd(4) == 0 { timer_spread } else { link_spread })
                    };
                    let t = now.saturating_add(rnd(spread));
                    if id < LINKS {
                        q.schedule_link(t, id);
                    } else {
                        q.schedule(t, EventKind::Rto(id));
                    }
                    r.push(Reverse((t, seq, id)));
                    seq += 1;
                }
                let limit = if rnd(10) == 0 { Time::MAX } else { now.saturating_add(rnd(link_spread)) };
                assert_eq!(q.peek_time(), r.peek().map(|Reverse((t, _, _))| *t));
                match q.take_until(limit) {
                    Some(e) => {
                        let Reverse((t, _, id)) = r.pop().unwrap();
                        let want = if id < LINKS { EventKind::LinkArrival(id) } else { EventKind::Rto(id) };
                        assert_eq!((e.time, e.kind), (t, want), "case {case}, step {step}");
                        if id < LINKS {
                            busy[id as usize] = false;
                        }
                        now = t;
                        popped += 1;
                    }
                    None => assert!(r.peek().is_none_or(|Reverse((t, _, _))| *t > limit)),
                }
                assert_eq!(q.len(), r.len());
            }
            while let Some(e) = q.pop() {
                let Reverse((t, _, id)) = r.pop().unwrap();
                assert_eq!(e.time, t);
                assert!(matches!(e.kind, EventKind::LinkArrival(i) | EventKind::Rto(i) if i == id));
                popped += 1;
            }
            assert!(r.is_empty());
            assert_eq!(q.popped(), popped);
        }
    }
}
