use super::super::testing::{q, MS};
use super::*;
use crate::net::packet::Ecn;
use crate::sim::rng::{stream, StreamKind};

fn cfg(min_th: f64, max_th: f64, max_p: f64, w_q: f64) -> RedConfig {
    RedConfig {
        min_th,
        max_th,
        max_p,
        w_q,
        gentle: true,
        adaptive: false,
        ecn: false,
        harddrop: true,
        bytemode: false,
        mean_pktsize: 1000.0,
        rate_bps: 10e6,
        limit_packets: u64::MAX,
        limit_bytes: u64::MAX,
    }
}

fn red(c: RedConfig) -> Red {
    Red::new(c, stream(1, StreamKind::Qdisc, 0))
}

fn built(params: serde_json::Value, rate_bps: f64) -> Red {
    let map = params.as_object().unwrap().clone();
    let names: Vec<&'static str> = info().params.iter().map(|p| p.name).collect();
    let p = Params::new(&map, "links[0].queue", &names).unwrap();
    build_red(&p, LinkInfo { rate_bps, limit_packets: None, limit_bytes: None }, stream(1, StreamKind::Qdisc, 0))
        .unwrap()
}

/// Counts of `n` arrivals of codepoint `ecn` with the queue held at
/// `level` packets before each (one dequeue per accepted arrival):
/// (AQM drops, overflow drops, new marks).
fn hold(r: &mut Red, level: u64, n: usize, ecn: Ecn) -> (usize, usize, u64) {
    let mut drops = Vec::new();
    while (r.q.len() as u64) < level {
        r.q.push_back(q(0, 1000, Ecn::NotEct, 0));
        r.bytes += 1000;
    }
    let marks0 = r.marks();
    for i in 0..n {
        let before = r.backlog().packets;
        r.enqueue(0, q(i as u32, 1000, ecn, 0), &mut drops);
        if r.backlog().packets > before {
            let p = r.dequeue(0, &mut drops).unwrap();
            assert!(p.pkt.ecn() != Ecn::Ce || ecn.capable());
        }
    }
    let aqm = drops.iter().filter(|d| d.reason == DropReason::Aqm).count();
    (aqm, drops.len() - aqm, r.marks() - marks0)
}

#[test]
fn drop_curve_is_zero_then_linear_to_max_p_then_gentle_to_one() {
    let r = red(cfg(5.0, 15.0, 0.1, 0.002));
    assert_eq!(r.p_b(0.0), 0.0);
    assert_eq!(r.p_b(4.999), 0.0);
    assert_eq!(r.p_b(5.0), 0.0);
    assert!((r.p_b(10.0) - 0.05).abs() < 1e-12);
    assert!((r.p_b(7.5) - 0.025).abs() < 1e-12);
    assert!((r.p_b(14.999) - 0.1 * 9.999 / 10.0).abs() < 1e-12);
    // Gentle: max_p at max_th, halfway to 1 at 1.5 max_th, 1 from 2 max_th.
    assert!((r.p_b(15.0) - 0.1).abs() < 1e-12);
    assert!((r.p_b(22.5) - 0.55).abs() < 1e-12);
    assert!((r.p_b(29.999) - (0.1 + 0.9 * 14.999 / 15.0)).abs() < 1e-12);
    assert_eq!(r.p_b(30.0), 1.0);
    assert_eq!(r.p_b(100.0), 1.0);
    // Without gentle: 1 from max_th on.
    let r = red(RedConfig { gentle: false, ..cfg(5.0, 15.0, 0.1, 0.002) });
    assert!((r.p_b(14.9) - 0.099).abs() < 1e-12);
    assert_eq!(r.p_b(15.0), 1.0);
    assert_eq!(r.p_b(22.5), 1.0);
}

#[test]
fn forced_region_starts_at_max_th_or_twice_max_th_if_gentle() {
    // The queue held at 20 packets with w_q = 1 (avg = 20): between
    // max_th = 15 and 2 max_th, gentle drops only some, plain RED all.
    let mut r = red(RedConfig { gentle: false, ..cfg(5.0, 15.0, 0.1, 1.0) });
    assert_eq!(hold(&mut r, 20, 200, Ecn::NotEct).0, 200);
    let mut r = red(cfg(5.0, 15.0, 0.1, 1.0));
    let (aqm, _, _) = hold(&mut r, 20, 2000, Ecn::NotEct);
    assert!(aqm > 0 && aqm < 2000, "{aqm}");
    // At 2 max_th gentle RED drops everything too.
    let mut r = red(cfg(5.0, 15.0, 0.1, 1.0));
    assert_eq!(hold(&mut r, 30, 200, Ecn::NotEct).0, 200);
}

#[test]
fn average_is_an_ewma_of_the_queue_seen_by_arrivals() {
    let w = 0.01;
    let mut r = red(cfg(1000.0, 3000.0, 0.1, w));
    let mut drops = Vec::new();
    // One step from a known state: avg <- (1 - w) avg + w q.
    r.avg = 3.0;
    for _ in 0..7 {
        r.q.push_back(q(0, 1000, Ecn::NotEct, 0));
    }
    r.enqueue(0, q(0, 1000, Ecn::NotEct, 0), &mut drops);
    assert!((r.avg() - ((1.0 - w) * 3.0 + w * 7.0)).abs() < 1e-12);
    // 8 packets now; one leaves before each arrival, which thus sees 7:
    // after n arrivals the distance to 7 has shrunk by (1 - w)^n.
    let a0 = r.avg();
    for _ in 0..300 {
        r.dequeue(0, &mut drops);
        r.enqueue(0, q(0, 1000, Ecn::NotEct, 0), &mut drops);
    }
    let want = 7.0 + (a0 - 7.0) * (1.0 - w).powi(300);
    assert!((r.avg() - want).abs() < 1e-9, "{} vs {want}", r.avg());
    assert!(drops.is_empty());
}

#[test]
fn idle_period_decays_the_average_as_m_packet_times() {
    // 10 Mbit/s, mean 1000 B: s = 0.8 ms.
    let w = 0.002;
    let mut r = red(cfg(1000.0, 3000.0, 0.1, w));
    let mut drops = Vec::new();
    r.avg = 12.0;
    r.q.push_back(q(0, 1000, Ecn::NotEct, 0));
    assert!(r.dequeue(MS, &mut drops).is_some());
    // The transmitter finds the queue empty at 2 ms: idle from then.
    assert!(r.dequeue(2 * MS, &mut drops).is_none());
    assert!(r.dequeue(3 * MS, &mut drops).is_none()); // still the same idle period
                                                      // An arrival 80 ms later: m = 80 / 0.8 = 100.
    r.enqueue(82 * MS, q(0, 1000, Ecn::NotEct, 82 * MS), &mut drops);
    let want = 12.0 * (1.0 - w).powf(100.0);
    assert!((r.avg() - want).abs() < 1e-9, "{} vs {want}", r.avg());
    // The idle period ended: the next arrival is an ordinary EWMA step
    // (queue 1), however long after.
    let a = r.avg();
    r.enqueue(500 * MS, q(0, 1000, Ecn::NotEct, 500 * MS), &mut drops);
    assert!((r.avg() - ((1.0 - w) * a + w * 1.0)).abs() < 1e-12);
    // No idle correction if the queue was merely empty (the link busy):
    // one step with q = 0.
    let mut r = red(cfg(1000.0, 3000.0, 0.1, w));
    r.avg = 12.0;
    r.enqueue(82 * MS, q(0, 1000, Ecn::NotEct, 82 * MS), &mut drops);
    assert!((r.avg() - (1.0 - w) * 12.0).abs() < 1e-12);
}

#[test]
fn count_spreads_drops_uniformly_between_one_and_one_over_p_b() {
    // w_q = 1 and the queue held at 5: avg = 5, p_b = 0.5 (5 - 4) / 8
    // = 1/16. Section 7: the gap X between drops is uniform on
    // 1..=15 (P = p_b / (1 - p_b) each), not geometric, which would
    // exceed 15 in (15/16)^15 = 38 % of the gaps.
    let mut r = red(cfg(4.0, 12.0, 0.5, 1.0));
    let mut drops = Vec::new();
    for _ in 0..5 {
        r.enqueue(0, q(0, 1000, Ecn::NotEct, 0), &mut drops);
    }
    assert!(drops.is_empty());
    let mut hist = [0u64; 17];
    let mut since = 0usize;
    let mut first = true;
    for _ in 0..300_000 {
        since += 1;
        let before = drops.len();
        r.enqueue(0, q(0, 1000, Ecn::NotEct, 0), &mut drops);
        if drops.len() > before {
            if !first {
                hist[since.min(16)] += 1;
            }
            first = false;
            since = 0;
        } else {
            r.dequeue(0, &mut drops);
        }
        assert_eq!(r.avg(), 5.0);
    }
    assert_eq!(hist[0], 0);
    assert_eq!(hist[16], 0, "a gap longer than 1/p_b - 1");
    let n: u64 = hist.iter().sum();
    let p = 1.0 / 15.0;
    let sd = (p * (1.0 - p) / n as f64).sqrt();
    for (x, &c) in hist.iter().enumerate().take(16).skip(1) {
        let f = c as f64 / n as f64;
        assert!((f - p).abs() < 5.0 * sd, "gap {x}: {f} vs {p}");
    }
    // Mean gap (N + 1) / 2 = 1 / (2 p_b) = 8: drops are 2 p_b of arrivals.
    let mean = hist.iter().enumerate().map(|(x, &c)| x as f64 * c as f64).sum::<f64>() / n as f64;
    let sd_mean = ((15.0f64 * 15.0 - 1.0) / 12.0 / n as f64).sqrt();
    assert!((mean - 8.0).abs() < 5.0 * sd_mean, "{mean}");
}

#[test]
fn adaptive_red_steps_max_p_by_aimd_toward_the_target_band() {
    // Band: [5 + 0.4 * 10, 5 + 0.6 * 10] = [9, 11].
    let mut r = red(RedConfig { adaptive: true, ..cfg(5.0, 15.0, 0.1, 0.002) });
    assert_eq!(r.update_interval(), Some(secs(0.5)));
    let step = |r: &mut Red, avg: f64, max_p: f64| {
        r.avg = avg;
        r.max_p = max_p;
        r.on_timer(0);
        r.max_p()
    };
    // Increase: alpha = min(0.01, max_p / 4).
    assert!((step(&mut r, 11.5, 0.1) - 0.11).abs() < 1e-12);
    assert!((step(&mut r, 11.5, 0.02) - 0.025).abs() < 1e-12);
    // Decrease: beta = 0.9.
    assert!((step(&mut r, 8.5, 0.1) - 0.09).abs() < 1e-12);
    // Inside the band: unchanged.
    assert_eq!(step(&mut r, 10.0, 0.1), 0.1);
    assert_eq!(step(&mut r, 9.0, 0.1), 0.1);
    assert_eq!(step(&mut r, 11.0, 0.1), 0.1);
    // Bounds: increase only while max_p <= 0.5, decrease while >= 0.01.
    assert!((step(&mut r, 20.0, 0.5) - 0.51).abs() < 1e-12);
    assert_eq!(step(&mut r, 20.0, 0.51), 0.51);
    assert!((step(&mut r, 0.0, 0.01) - 0.009).abs() < 1e-12);
    assert_eq!(step(&mut r, 0.0, 0.009), 0.009);
    // The curve follows the new max_p.
    r.max_p = 0.2;
    assert!((r.p_b(10.0) - 0.1).abs() < 1e-12);
    // Plain RED has no timer and leaves max_p alone.
    let mut r = red(cfg(5.0, 15.0, 0.1, 0.002));
    assert_eq!(r.update_interval(), None);
    r.avg = 20.0;
    r.on_timer(0);
    assert_eq!(r.max_p(), 0.1);
}

#[test]
fn adaptive_red_judges_an_idle_queue_by_its_decayed_average() {
    // avg 12 is above the band, but after an idle second (1250 packet
    // times at 10 Mbit/s, 1000 B) with w_q = 0.002 it is 12 * 0.998^1250
    // = 0.98, below it: max_p decreases.
    let mut r = red(RedConfig { adaptive: true, ..cfg(5.0, 15.0, 0.1, 0.002) });
    r.avg = 12.0;
    let mut drops = Vec::new();
    assert!(r.dequeue(0, &mut drops).is_none());
    r.on_timer(secs(1.0));
    assert!((r.max_p() - 0.09).abs() < 1e-12);
}

#[test]
fn automatic_parameters_follow_adaptive_red() {
    // 1 Gbit/s, 1000-byte packets: C = 125,000 packets/s, min_th =
    // 0.005 C / 2 = 312.5, max_th = 937.5, w_q = 1 - exp(-1/C).
    let r = built(serde_json::json!({"mean_pktsize": 1000}), 1e9);
    assert!((r.cfg.min_th - 312.5).abs() < 1e-9);
    assert!((r.cfg.max_th - 937.5).abs() < 1e-9);
    // A time constant of one second: (1 - w_q)^C = 1/e.
    assert!(((1.0 - r.cfg.w_q).powf(125_000.0) - (-1.0f64).exp()).abs() < 1e-9);
    assert_eq!(r.cfg.limit_packets, 3750); // 4 max_th > 1000
                                           // 10 Mbit/s: 0.005 C / 2 = 3.1 < 5, so min_th = 5, max_th = 15.
    let r = built(serde_json::json!({"mean_pktsize": 1000}), 10e6);
    assert_eq!((r.cfg.min_th, r.cfg.max_th), (5.0, 15.0));
    assert_eq!(r.cfg.limit_packets, 1000);
    assert_eq!((r.cfg.max_p, r.cfg.gentle, r.cfg.ecn, r.cfg.adaptive), (0.1, true, false, false));
    // Given thresholds are kept; max_th defaults to 3 min_th.
    let r = built(serde_json::json!({"min_th": 20, "w_q": 0.002}), 10e6);
    assert_eq!((r.cfg.min_th, r.cfg.max_th, r.cfg.w_q), (20.0, 60.0, 0.002));
}

#[test]
fn max_th_must_exceed_min_th() {
    let map = serde_json::json!({"min_th": 20, "max_th": 10}).as_object().unwrap().clone();
    let names: Vec<&'static str> = info().params.iter().map(|p| p.name).collect();
    let p = Params::new(&map, "links[0].queue", &names).unwrap();
    let link = LinkInfo { rate_bps: 10e6, limit_packets: None, limit_bytes: None };
    assert!(build_red(&p, link, stream(1, StreamKind::Qdisc, 0)).is_err());
}

#[test]
fn ecn_marks_capable_packets_instead_of_early_drops_and_drops_the_others() {
    // avg held at 5 in [4, 12): p_b = 1/16, a signal every 8 arrivals.
    let ecn = RedConfig { ecn: true, ..cfg(4.0, 12.0, 0.5, 1.0) };
    let (aqm, over, marks) = hold(&mut red(ecn), 5, 800, Ecn::Ect0);
    assert_eq!((aqm, over), (0, 0));
    assert!(marks > 50, "{marks}");
    let (aqm, _, marks) = hold(&mut red(ecn), 5, 800, Ecn::Ect1);
    assert_eq!(aqm, 0);
    assert!(marks > 50);
    // Not ECN-capable: dropped, never marked.
    let (aqm, _, marks) = hold(&mut red(ecn), 5, 800, Ecn::NotEct);
    assert!(aqm > 50);
    assert_eq!(marks, 0);
    // ECN off: capable packets are dropped too.
    let (aqm, _, marks) = hold(&mut red(cfg(4.0, 12.0, 0.5, 1.0)), 5, 800, Ecn::Ect0);
    assert!(aqm > 50);
    assert_eq!(marks, 0);
    // The marked packet leaves CE.
    let mut r = red(ecn);
    let mut drops = Vec::new();
    hold(&mut r, 5, 0, Ecn::NotEct);
    let mut ce = 0;
    for _ in 0..64 {
        r.enqueue(0, q(0, 1000, Ecn::Ect0, 0), &mut drops);
        ce += (r.dequeue(0, &mut drops).unwrap().pkt.ecn() == Ecn::Ce) as u64;
    }
    assert!(ce > 0);
    assert_eq!(ce, r.marks());
}

#[test]
fn gentle_region_marks_but_forced_drops_stay_drops_unless_harddrop_is_off() {
    // Gentle region (12 <= avg < 24): early marks.
    let ecn = RedConfig { ecn: true, ..cfg(4.0, 12.0, 0.5, 1.0) };
    let (aqm, _, marks) = hold(&mut red(ecn), 16, 400, Ecn::Ect0);
    assert_eq!(aqm, 0);
    assert!(marks > 100);
    // Forced region (avg >= 2 max_th; >= max_th without gentle): drops.
    let (aqm, _, marks) = hold(&mut red(ecn), 24, 100, Ecn::Ect0);
    assert_eq!((aqm, marks), (100, 0));
    let plain = RedConfig { gentle: false, ..ecn };
    let (aqm, _, marks) = hold(&mut red(plain), 12, 100, Ecn::Ect0);
    assert_eq!((aqm, marks), (100, 0));
    // Linux without harddrop: marks there.
    let (aqm, _, marks) = hold(&mut red(RedConfig { harddrop: false, ..plain }), 12, 100, Ecn::Ect0);
    assert_eq!((aqm, marks), (0, 100));
    let (aqm, _, marks) = hold(&mut red(RedConfig { harddrop: false, ..plain }), 12, 100, Ecn::NotEct);
    assert_eq!((aqm, marks), (100, 0));
}

#[test]
fn packet_and_byte_limits_drop_arrivals_as_overflow() {
    let mut drops = Vec::new();
    let mut r = red(RedConfig { limit_packets: 3, ..cfg(1000.0, 3000.0, 0.1, 0.002) });
    for f in 0..4 {
        r.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].q.flow_key(), drops[0].reason), (3, DropReason::Overflow));
    assert_eq!(r.backlog(), Backlog { packets: 3, bytes: 3000 });
    drops.clear();
    let mut r = red(RedConfig { limit_bytes: 2500, ..cfg(1000.0, 3000.0, 0.1, 0.002) });
    for f in 0..3 {
        r.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
    }
    r.enqueue(0, q(3, 500, Ecn::NotEct, 0), &mut drops);
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].q.flow_key(), drops[0].reason), (2, DropReason::Overflow));
    assert_eq!(r.backlog(), Backlog { packets: 3, bytes: 2500 });
    // FIFO order.
    let order: Vec<u32> = std::iter::from_fn(|| r.dequeue(0, &mut drops)).map(|p| p.flow_key()).collect();
    assert_eq!(order, vec![0, 1, 3]);
    // Default: 1000 packets, 4 max_th when larger.
    assert_eq!(default_limit(15.0), 1000);
    assert_eq!(default_limit(300.0), 1200);
}

#[test]
fn bytemode_averages_bytes_in_mean_packet_units() {
    // 10 packets of 500 B with mean_pktsize 1000: 5 mean-sized packets.
    let w = 0.5;
    let mut r = red(RedConfig { bytemode: true, ..cfg(1000.0, 3000.0, 0.1, w) });
    let mut drops = Vec::new();
    for _ in 0..10 {
        r.q.push_back(q(0, 500, Ecn::NotEct, 0));
    }
    r.bytes = 5000;
    r.enqueue(0, q(0, 500, Ecn::NotEct, 0), &mut drops);
    assert!((r.avg() - w * 5.0).abs() < 1e-12);
}

/// The paper's mark fraction at constant p_b: 1 / E[X], E[X] =
/// sum_n P(X > n), P(X > n) = prod_{k=1..n} (1 - p_b / (1 - k p_b)).
fn mark_fraction(p_b: f64) -> f64 {
    let (mut survive, mut mean) = (1.0, 0.0);
    let mut k = 0.0;
    while survive > 0.0 {
        mean += survive;
        k += 1.0;
        let pa = if k * p_b >= 1.0 { 1.0 } else { p_b / (1.0 - k * p_b) };
        survive *= 1.0 - pa;
    }
    1.0 / mean
}

/// The curve of the test below (min_th 5, max_th 15, max_p 0.1, gentle).
fn paper_p_b(avg: f64) -> f64 {
    if avg < 5.0 {
        0.0
    } else if avg < 15.0 {
        0.1 * (avg - 5.0) / 10.0
    } else if avg < 30.0 {
        0.1 + 0.9 * (avg - 15.0) / 15.0
    } else {
        1.0
    }
}

#[test]
fn constant_overload_settles_avg_where_the_curve_gives_the_excess_as_drops() {
    // A 10 Mbit/s link (0.8 ms per 1000-byte packet) fed a packet every
    // 0.8 ms / load; automatic parameters: min_th 5, max_th 15, w_q =
    // 1 - exp(-1/1250), gentle. The queue must shed 1 - 1/load of the
    // arrivals; RED does it with avg where its curve (with the count
    // spreading) gives that fraction: in [5, 15) at load 1.1, in the
    // gentle region on average at load 1.5.
    for (load, lo, hi) in [(1.1, 5.0, 15.0), (1.5, 15.0, 30.0)] {
        let mut r = built(serde_json::json!({"mean_pktsize": 1000}), 10e6);
        let svc = secs(0.0008);
        let gap = secs(0.0008 / load);
        let (warm, end) = (secs(20.0), secs(120.0));
        let mut drops = Vec::new();
        let (mut next_arrival, mut busy_until): (Time, Option<Time>) = (0, None);
        let (mut arrivals, mut dropped, mut avg_sum, mut curve_sum) = (0u64, 0u64, 0.0, 0.0);
        let (mut avg_min, mut avg_max) = (f64::MAX, f64::MIN);
        while next_arrival < end {
            if busy_until.is_some_and(|t| t <= next_arrival) {
                let t = busy_until.unwrap();
                busy_until = r.dequeue(t, &mut drops).map(|_| t + svc);
                continue;
            }
            let now = next_arrival;
            drops.clear();
            r.enqueue(now, q(0, 1000, Ecn::NotEct, now), &mut drops);
            if busy_until.is_none() {
                busy_until = r.dequeue(now, &mut drops).map(|_| now + svc);
            }
            if now >= warm {
                arrivals += 1;
                dropped += drops.len() as u64;
                avg_sum += r.avg();
                curve_sum += mark_fraction(paper_p_b(r.avg()));
                avg_min = avg_min.min(r.avg());
                avg_max = avg_max.max(r.avg());
                assert!(drops.iter().all(|d| d.reason == DropReason::Aqm));
            }
            next_arrival += gap;
        }
        let avg = avg_sum / arrivals as f64;
        assert!(avg >= lo && avg < hi, "load {load}: mean avg {avg}");
        assert!(avg_min >= 5.0 && avg_max < 30.0, "load {load}: avg in [{avg_min}, {avg_max}]");
        if load < 1.2 {
            assert!(avg_max < 15.0, "load {load}: avg up to {avg_max}");
        }
        let measured = dropped as f64 / arrivals as f64;
        let excess = 1.0 - 1.0 / load;
        // Conservation: the drops are the excess (within the backlog's
        // change over the window, under 1 %).
        assert!((measured / excess - 1.0).abs() < 0.01, "load {load}: dropped {measured} vs excess {excess}");
        // The curve: the paper's fraction at the average each arrival
        // saw (it moves slowly against the gaps between drops).
        let want = curve_sum / arrivals as f64;
        assert!(
            (measured / want - 1.0).abs() < 0.02,
            "load {load}: mean avg {avg}: dropped {measured} vs curve {want}"
        );
    }
}
