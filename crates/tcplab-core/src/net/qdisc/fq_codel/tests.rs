use super::super::testing::{q, MS};
use super::*;
use crate::net::packet::Ecn;
use crate::sim::rng::{stream, StreamKind};
use crate::spec::QueueSpec;

/// Built as a run builds it: parameters by name, salt from the
/// discipline's stream of `seed`.
fn fq(params: serde_json::Value, limit_packets: Option<u64>, limit_bytes: Option<u64>, seed: u64) -> FqCodel {
    let map = params.as_object().unwrap().clone();
    let names: Vec<&'static str> = info().params.iter().map(|p| p.name).collect();
    let p = Params::new(&map, "links[0].queue", &names).unwrap();
    FqCodel::from_params(
        &p,
        LinkInfo { rate_bps: 10e6, limit_packets, limit_bytes },
        stream(seed, StreamKind::Qdisc, 0),
    )
    .unwrap()
}

fn trace(c: &dyn Qdisc, name: &str) -> f64 {
    let mut v = Vec::new();
    c.trace_vars(&mut v);
    v.iter().find(|(n, _)| *n == name).map(|(_, x)| *x).unwrap()
}

fn lists(c: &FqCodel) -> (f64, f64) {
    (trace(c, "fq_new_flows"), trace(c, "fq_old_flows"))
}

/// Asserts that `keys` hash to distinct queues (a precondition of the
/// tests that need one queue per flow; a collision is possible with
/// another seed, as in Linux).
fn distinct(c: &FqCodel, keys: impl IntoIterator<Item = u32>) {
    let mut b: Vec<usize> = keys.into_iter().map(|k| c.bucket(k)).collect();
    let n = b.len();
    b.sort();
    b.dedup();
    assert_eq!(b.len(), n, "flows share a queue under this seed");
}

fn deq(c: &mut FqCodel, t: Time) -> Option<u32> {
    let mut drops = Vec::new();
    let r = c.dequeue(t, &mut drops).map(|p| p.flow_key());
    assert!(drops.is_empty());
    r
}

#[test]
fn a_sparse_flows_packet_goes_before_a_backlogged_flows() {
    let mut c = fq(serde_json::json!({}), None, None, 1);
    distinct(&c, [1, 2]);
    let mut drops = Vec::new();
    for _ in 0..20 {
        c.enqueue(0, q(1, 1500, Ecn::NotEct, 0), &mut drops);
    }
    for _ in 0..3 {
        assert_eq!(deq(&mut c, MS), Some(1));
    }
    // Flow 1 has used its quantum and is an old flow; flow 2 arrives.
    assert_eq!(lists(&c), (0.0, 1.0));
    c.enqueue(MS, q(2, 100, Ecn::NotEct, MS), &mut drops);
    assert_eq!(lists(&c), (1.0, 1.0));
    assert_eq!(deq(&mut c, MS), Some(2));
    assert_eq!(deq(&mut c, MS), Some(1));
    assert!(drops.is_empty());
}

#[test]
fn a_flow_sends_while_its_deficit_is_positive_and_gets_a_quantum_per_turn() {
    // quantum 1514, 1000-byte packets: a new flow starts with 1514 and
    // sends two packets (1514 -> 514 -> -486), then waits a turn with
    // -486 + 1514 = 1028: two more (1028 -> 28 -> -972), then one
    // (-972 + 1514 = 542 -> -458), ...
    let mut c = fq(serde_json::json!({}), None, None, 1);
    distinct(&c, [1, 2]);
    let mut drops = Vec::new();
    for _ in 0..50 {
        c.enqueue(0, q(1, 1000, Ecn::NotEct, 0), &mut drops);
        c.enqueue(0, q(2, 1000, Ecn::NotEct, 0), &mut drops);
    }
    let order: Vec<u32> = (0..10).map(|_| deq(&mut c, MS).unwrap()).collect();
    assert_eq!(order, vec![1, 1, 2, 2, 1, 1, 2, 2, 1, 2]);
    // quantum 3000: three 1000-byte packets per turn (3000 -> 0 sends
    // no more: the deficit must be > 0).
    let mut c = fq(serde_json::json!({"quantum": 3000}), None, None, 1);
    for _ in 0..50 {
        c.enqueue(0, q(1, 1000, Ecn::NotEct, 0), &mut drops);
        c.enqueue(0, q(2, 1000, Ecn::NotEct, 0), &mut drops);
    }
    let order: Vec<u32> = (0..12).map(|_| deq(&mut c, MS).unwrap()).collect();
    assert_eq!(order, vec![1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]);
}

#[test]
fn drr_gives_equal_byte_shares_to_flows_with_different_packet_sizes() {
    // Both always backlogged: after any number of dequeues the bytes
    // sent differ by less than quantum + the largest packet (DRR).
    let mut c = fq(serde_json::json!({}), None, None, 1);
    distinct(&c, [1, 2]);
    let mut drops = Vec::new();
    let mut sent = [0u64; 3];
    for i in 0..5000u64 {
        let t = i * MS / 10;
        while c.flows[c.bucket(1)].q.len() < 5 {
            c.enqueue(t, q(1, 1500, Ecn::NotEct, t), &mut drops);
        }
        while c.flows[c.bucket(2)].q.len() < 20 {
            c.enqueue(t, q(2, 64, Ecn::NotEct, t), &mut drops);
        }
        let p = c.dequeue(t, &mut drops).unwrap();
        sent[p.flow_key() as usize] += p.size();
        assert!(sent[1].abs_diff(sent[2]) < 1514 + 1500, "after {i}: {sent:?}");
    }
    assert!(sent[2] > 100_000);
}

#[test]
fn a_new_flow_that_used_its_quantum_moves_to_the_end_of_old_flows() {
    let mut c = fq(serde_json::json!({}), None, None, 1);
    let mut drops = Vec::new();
    for _ in 0..3 {
        c.enqueue(0, q(1, 1500, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(lists(&c), (1.0, 0.0));
    assert_eq!(deq(&mut c, MS), Some(1)); // deficit 14: still new
    assert_eq!(lists(&c), (1.0, 0.0));
    assert_eq!(deq(&mut c, MS), Some(1)); // -1486: moves at the next turn
    assert_eq!(lists(&c), (1.0, 0.0));
    assert_eq!(deq(&mut c, MS), Some(1));
    assert_eq!(lists(&c), (0.0, 1.0));
    // An old flow that is empty leaves the lists.
    assert_eq!(deq(&mut c, MS), None);
    assert_eq!(lists(&c), (0.0, 0.0));
}

#[test]
fn an_emptied_new_flow_goes_to_old_flows_if_any_else_is_removed() {
    let mut c = fq(serde_json::json!({}), None, None, 1);
    distinct(&c, [1, 2]);
    let mut drops = Vec::new();
    // Flow 1, 500-byte packets: four from its first quantum (1514 ->
    // -486), then old with 1028, one more: 528 left.
    for _ in 0..10 {
        c.enqueue(0, q(1, 500, Ecn::NotEct, 0), &mut drops);
    }
    for _ in 0..5 {
        assert_eq!(deq(&mut c, MS), Some(1));
    }
    assert_eq!(lists(&c), (0.0, 1.0));
    c.enqueue(MS, q(2, 100, Ecn::NotEct, MS), &mut drops);
    assert_eq!(deq(&mut c, MS), Some(2));
    // Flow 2 is empty with deficit left: at the next dequeue it goes to
    // the tail of old_flows (behind flow 1, which sends), not off the
    // lists.
    assert_eq!(deq(&mut c, MS), Some(1));
    assert_eq!(lists(&c), (0.0, 2.0));
    // When its turn in old_flows comes and it is still empty, it leaves.
    assert_eq!(deq(&mut c, MS), Some(1)); // 28 left
    assert_eq!(deq(&mut c, MS), Some(1)); // -472 left
                                          // Flow 1 to the old tail with 1042; flow 2, empty, removed; flow 1.
    assert_eq!(deq(&mut c, MS), Some(1));
    assert_eq!(lists(&c), (0.0, 1.0));
    // Alone: an emptied new flow is removed.
    let mut c = fq(serde_json::json!({}), None, None, 1);
    c.enqueue(0, q(2, 100, Ecn::NotEct, 0), &mut drops);
    assert_eq!(deq(&mut c, MS), Some(2));
    assert_eq!(lists(&c), (1.0, 0.0));
    assert_eq!(deq(&mut c, MS), None);
    assert_eq!(lists(&c), (0.0, 0.0));
    // And comes back as new with a fresh quantum.
    c.enqueue(2 * MS, q(2, 100, Ecn::NotEct, 2 * MS), &mut drops);
    assert_eq!(lists(&c), (1.0, 0.0));
    assert!(drops.is_empty());
}

#[test]
fn overflow_drops_from_the_head_of_the_fattest_flow_not_the_arrival() {
    // 100 packets allowed: flow 1 holds 90 x 1500 B, flow 2 10 x 1500 B;
    // flow 2's next packet overflows. Flow 1 loses half its bytes
    // (67,500 B: 45 packets, under the batch of 64) from its head.
    let mut c = fq(serde_json::json!({}), Some(100), None, 1);
    distinct(&c, [1, 2]);
    let mut drops = Vec::new();
    for i in 0..90 {
        let mut p = q(1, 1500, Ecn::NotEct, 0);
        p.pkt.seq = i;
        c.enqueue(0, p, &mut drops);
    }
    for _ in 0..10 {
        c.enqueue(0, q(2, 1500, Ecn::NotEct, 0), &mut drops);
    }
    assert!(drops.is_empty());
    c.enqueue(0, q(2, 1500, Ecn::NotEct, 0), &mut drops);
    assert_eq!(drops.len(), 45);
    assert!(drops.iter().all(|d| d.q.flow_key() == 1 && d.reason == DropReason::Overflow));
    assert_eq!(drops.iter().map(|d| d.q.pkt.seq).collect::<Vec<_>>(), (0..45).collect::<Vec<_>>());
    assert_eq!(c.backlog(), Backlog { packets: 56, bytes: 56 * 1500 });
    // The batch caps it: drop_batch_size 16.
    let mut c = fq(serde_json::json!({"drop_batch_size": 16}), Some(100), None, 1);
    let mut drops = Vec::new();
    for _ in 0..100 {
        c.enqueue(0, q(1, 1500, Ecn::NotEct, 0), &mut drops);
    }
    c.enqueue(0, q(2, 1500, Ecn::NotEct, 0), &mut drops);
    assert_eq!(drops.len(), 16);
    assert!(drops.iter().all(|d| d.q.flow_key() == 1));
    // memory_limit: 30,000 bytes; the 21st 1500-byte packet goes over
    // (31,500 B); half of that is 15,750 B: 11 packets.
    let mut c = fq(serde_json::json!({"memory_limit": 30000}), None, None, 1);
    let mut drops = Vec::new();
    for _ in 0..21 {
        c.enqueue(0, q(1, 1500, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 11);
    // queue.limit_bytes acts the same way.
    let mut c = fq(serde_json::json!({}), None, Some(30000), 1);
    let mut drops = Vec::new();
    for _ in 0..21 {
        c.enqueue(0, q(1, 1500, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 11);
    // Default packet limit: 10240.
    let mut c = fq(serde_json::json!({}), None, None, 1);
    let mut drops = Vec::new();
    for _ in 0..10240 {
        c.enqueue(0, q(1, 100, Ecn::NotEct, 0), &mut drops);
    }
    assert!(drops.is_empty());
    c.enqueue(0, q(1, 100, Ecn::NotEct, 0), &mut drops);
    assert_eq!(drops.len(), 64);
}

#[test]
fn the_hash_salt_moves_flows_between_seeds_and_is_fixed_for_one() {
    let map = |seed: u64| {
        let c = fq(serde_json::json!({}), None, None, seed);
        (0..256).map(|k| c.bucket(k)).collect::<Vec<_>>()
    };
    assert_eq!(map(7), map(7));
    let (a, b) = (map(7), map(8));
    let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    // Independent salts: a flow keeps its queue with probability 1/1024.
    assert!(moved > 240, "only {moved} of 256 flows moved");
    // A decent hash: 8192 consecutive keys over 1024 queues, chi-square
    // (1023 degrees of freedom, sd 45) within 5 sd of its mean.
    let c = fq(serde_json::json!({}), None, None, 7);
    let mut n = vec![0f64; 1024];
    for k in 0..8192 {
        n[c.bucket(k)] += 1.0;
    }
    let chi2: f64 = n.iter().map(|x| (x - 8.0) * (x - 8.0) / 8.0).sum();
    assert!(chi2 < 1023.0 + 5.0 * (2.0f64 * 1023.0).sqrt(), "chi-square {chi2}");
    // flows = 1: everything shares one queue.
    let c = fq(serde_json::json!({"flows": 1}), None, None, 7);
    assert!((0..100).all(|k| c.bucket(k) == 0));
}

/// What a [`link`] run saw, per source, from `from` on.
#[derive(Debug, Default, Clone)]
struct Seen {
    bytes: u64,
    sent: u64,
    sojourn_sum: Time,
    sojourn_max: Time,
    aqm_drops: u64,
    overflow_drops: u64,
    marks: u64,
}

/// Periodic sources `(size, period, phase, ecn)`, source i as flow key
/// i, through a link of `rate_bps` until `until`: the transmitter asks
/// for a packet when it finishes one, or when one arrives while idle.
fn link(c: &mut dyn Qdisc, rate_bps: f64, sources: &[(u32, Time, Time, Ecn)], until: Time, from: Time) -> Vec<Seen> {
    let mut seen = vec![Seen::default(); sources.len()];
    let mut next: Vec<Time> = sources.iter().map(|s| s.2).collect();
    let mut busy_until: Option<Time> = None;
    let mut buf = Vec::new();
    loop {
        let (ai, ta) = next.iter().copied().enumerate().min_by_key(|&(_, t)| t).unwrap();
        let t = match busy_until {
            Some(b) if b <= ta => b,
            _ => ta,
        };
        if t > until {
            break;
        }
        if busy_until == Some(t) {
            busy_until = None;
        } else {
            let (size, period, _, ecn) = sources[ai];
            c.enqueue(t, q(ai as u32, size, ecn, t), &mut buf);
            next[ai] += period;
        }
        if busy_until.is_none() {
            if let Some(p) = c.dequeue(t, &mut buf) {
                busy_until = Some(t + (p.size() as f64 * 8.0 / rate_bps * 1e12).round() as Time);
                if t >= from {
                    let s = &mut seen[p.flow_key() as usize];
                    s.bytes += p.size();
                    s.sent += 1;
                    s.sojourn_sum += p.sojourn(t);
                    s.sojourn_max = s.sojourn_max.max(p.sojourn(t));
                    s.marks += (p.pkt.ecn() == Ecn::Ce) as u64;
                }
            }
        }
        for d in buf.drain(..) {
            if t >= from {
                let s = &mut seen[d.q.flow_key() as usize];
                match d.reason {
                    DropReason::Aqm => s.aqm_drops += 1,
                    DropReason::Overflow => s.overflow_drops += 1,
                }
            }
        }
    }
    seen
}

/// Period of `size`-byte packets at `bps`.
fn period(size: u32, bps: f64) -> Time {
    (size as f64 * 8.0 / bps * 1e12).round() as Time
}

#[test]
fn per_flow_codel_drops_only_the_flow_whose_queue_stands() {
    // 10 Mbit/s: flow 0 sends 9 Mbit/s (above its 5 Mbit/s share),
    // flow 1 2.5 Mbit/s (below it): only flow 0 builds a queue, and
    // only flow 0 is dropped; flow 1's packets wait less than target.
    let mut c = fq(serde_json::json!({}), None, None, 3);
    distinct(&c, [0, 1]);
    let seen = link(
        &mut c,
        10e6,
        &[(1500, period(1500, 9e6), 0, Ecn::NotEct), (1500, period(1500, 2.5e6), 100_000, Ecn::NotEct)],
        20_000 * MS,
        0,
    );
    assert!(seen[0].aqm_drops > 100, "{seen:?}");
    assert_eq!(seen[1].aqm_drops + seen[1].overflow_drops + seen[0].overflow_drops, 0);
    assert!(seen[1].sojourn_max < 5 * MS, "{seen:?}");
    assert!(seen[0].sojourn_max > 5 * MS);
    assert!(trace(&c, "codel_dropping_flows") <= 1.0);
}

#[test]
fn ecn_capable_packets_are_marked_by_default_and_others_dropped() {
    let mut c = fq(serde_json::json!({}), None, None, 3);
    distinct(&c, [0, 1]);
    let seen = link(
        &mut c,
        10e6,
        &[(1500, period(1500, 6e6), 0, Ecn::Ect0), (1500, period(1500, 6e6), 100_000, Ecn::NotEct)],
        20_000 * MS,
        0,
    );
    assert!(seen[0].marks > 50 && seen[0].aqm_drops == 0, "{seen:?}");
    assert!(seen[1].aqm_drops > 50 && seen[1].marks == 0, "{seen:?}");
    assert_eq!(c.marks(), seen[0].marks);
    // ecn off: both are dropped.
    let mut c = fq(serde_json::json!({"ecn": false}), None, None, 3);
    let seen = link(
        &mut c,
        10e6,
        &[(1500, period(1500, 6e6), 0, Ecn::Ect0), (1500, period(1500, 6e6), 100_000, Ecn::NotEct)],
        20_000 * MS,
        0,
    );
    assert!(seen[0].aqm_drops > 50 && seen[0].marks == 0, "{seen:?}");
    assert_eq!(c.marks(), 0);
}

#[test]
fn backlogged_flows_get_equal_byte_shares() {
    // 8 flows, packet sizes 1500..64 B, each offering 1.5x its share of
    // 10 Mbit/s in bytes: Jain's index of the bytes each sends over the
    // last 15 s is above 0.99.
    let sizes = [1500, 1000, 576, 300, 1500, 1000, 576, 64];
    let rate = 10e6;
    let offered = 1.5 * rate / sizes.len() as f64;
    let sources: Vec<(u32, Time, Time, Ecn)> =
        sizes.iter().enumerate().map(|(i, &s)| (s, period(s, offered), i as Time * 77_777, Ecn::NotEct)).collect();
    let mut c = fq(serde_json::json!({}), None, None, 5);
    distinct(&c, 0..sizes.len() as u32);
    let seen = link(&mut c, rate, &sources, 30_000 * MS, 15_000 * MS);
    let x: Vec<f64> = seen.iter().map(|s| s.bytes as f64).collect();
    let jain = x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>());
    assert!(jain > 0.99, "Jain {jain}, bytes {x:?}");
    // The link was kept busy and each got about its eighth.
    let total: f64 = x.iter().sum();
    assert!(total > 0.99 * rate / 8.0 * 15.0, "{total}");
    assert!(seen.iter().all(|s| s.aqm_drops > 0));
    assert_eq!(trace(&c, "fq_active_flows"), 8.0);
}

#[test]
fn a_sparse_flow_beside_bulk_flows_sees_near_zero_sojourn() {
    // 100 Mbit/s, 4 bulk flows of 1500 B at 30 Mbit/s each (1.2x), and
    // one 200-byte packet every 50 ms: the sparse packets go out as new
    // flows, after at most the packet in transmission (0.12 ms), while
    // the bulk flows' packets wait longer than target (per-flow CoDel
    // brings an unresponsive 1.2x overload down only as its count grows).
    let rate = 100e6;
    let mut sources: Vec<(u32, Time, Time, Ecn)> =
        (0..4).map(|i| (1500, period(1500, 30e6), i * 100_000, Ecn::NotEct)).collect();
    sources.push((200, 50 * MS, 3 * MS + 12_345, Ecn::NotEct));
    let mut c = fq(serde_json::json!({}), None, None, 5);
    distinct(&c, 0..5);
    let seen = link(&mut c, rate, &sources, 20_000 * MS, 5_000 * MS);
    let sparse = &seen[4];
    assert!(sparse.sent >= 299, "{sparse:?}");
    assert!(sparse.sojourn_max < MS, "sparse max sojourn {} us", sparse.sojourn_max / 1_000_000);
    assert_eq!(sparse.aqm_drops + sparse.overflow_drops, 0);
    for s in &seen[..4] {
        let mean = s.sojourn_sum as f64 / s.sent as f64 / MS as f64;
        assert!(mean > 5.0, "bulk mean sojourn {mean} ms");
    }
}

#[test]
fn info_lists_every_parameter_and_the_registry_knows_both_names() {
    let names: Vec<&str> = info().params.iter().map(|p| p.name).collect();
    for n in [
        "target",
        "interval",
        "ecn",
        "ce_threshold",
        "mtu",
        "control_law",
        "flows",
        "quantum",
        "drop_batch_size",
        "memory_limit",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    assert_eq!(info().params.iter().find(|p| p.name == "ecn").unwrap().default, "true");
    for name in ["fq_codel", "fq-codel", "FQ_CODEL"] {
        let spec = QueueSpec { discipline: Some(name.into()), ..Default::default() };
        assert!(super::super::build(&spec, 10e6, stream(1, StreamKind::Qdisc, 0), "q").is_ok(), "{name}");
    }
    let spec = QueueSpec {
        discipline: Some("fq_codel".into()),
        params: serde_json::json!({"quantum": 100}).as_object().unwrap().clone(),
        ..Default::default()
    };
    assert!(super::super::build(&spec, 10e6, stream(1, StreamKind::Qdisc, 0), "q").is_err());
    let spec = QueueSpec {
        discipline: Some("fq_codel".into()),
        params: serde_json::json!({"flows": 0}).as_object().unwrap().clone(),
        ..Default::default()
    };
    assert!(super::super::build(&spec, 10e6, stream(1, StreamKind::Qdisc, 0), "q").is_err());
}

#[test]
fn jhash_1word_is_the_lookup3_final_mix() {
    // Reference values of Bob Jenkins' final() on (a + iv, iv, iv) with
    // iv = initval + 0xdeadbeef + 4, computed here independently.
    fn final_mix(mut a: u32, mut b: u32, mut c: u32) -> u32 {
        let rot = |x: u32, k: u32| x.rotate_left(k);
        for (x, y, k) in [(2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14), (2, 1, 24)] {
            let v = [a, b, c];
            let (mut t, s) = (v[x], v[y]);
            t ^= s;
            t = t.wrapping_sub(rot(s, k));
            match x {
                0 => a = t,
                1 => b = t,
                _ => c = t,
            }
        }
        c
    }
    for (a, iv) in [(0u32, 0u32), (1, 0), (12345, 0xdead), (u32::MAX, 7)] {
        let i = iv.wrapping_add(0xdeadbeef).wrapping_add(4);
        assert_eq!(jhash_1word(a, iv), final_mix(a.wrapping_add(i), i, i));
    }
}
