use super::super::testing::{q, MS};
use super::*;
use crate::net::packet::Ecn;
use crate::sim::rng::{stream, StreamKind};

fn cfg() -> PieConfig {
    PieConfig {
        target: 15 * MS,
        tupdate: 15 * MS,
        alpha: 0.125,
        beta: 1.25,
        max_burst: 150 * MS,
        ecn: false,
        bytemode: false,
        dq_rate_estimator: false,
        mtu: 1500,
        limit_packets: 1000,
        limit_bytes: u64::MAX,
    }
}

fn pie(c: PieConfig) -> Pie {
    Pie::new(c, stream(1, StreamKind::Qdisc, 0))
}

/// One update from drop probability `p`, delay `qd` and last delay
/// `old` (ms), with `backlog` bytes waiting: the new probability.
fn update(p: f64, qd_ms: f64, old_ms: f64, backlog: u64) -> f64 {
    let mut d = pie(cfg());
    d.prob = p;
    d.qdelay = secs(qd_ms / 1000.0);
    d.qdelay_old = secs(old_ms / 1000.0);
    d.bytes = backlog;
    d.on_timer(0);
    d.prob()
}

#[test]
fn probability_moves_by_alpha_times_error_plus_beta_times_trend() {
    // p >= 10 %: unscaled. 0.125 (0.020 - 0.015) + 1.25 (0.020 - 0.018).
    let want = 0.15 + 0.125 * 0.005 + 1.25 * 0.002;
    assert!((update(0.15, 20.0, 18.0, 30_000) - want).abs() < 1e-12);
    // Below target and falling: both terms negative.
    let want = 0.15 + 0.125 * (0.010 - 0.015) + 1.25 * (0.010 - 0.012);
    assert!((update(0.15, 10.0, 12.0, 30_000) - want).abs() < 1e-12);
    // At target and steady: unchanged.
    assert!((update(0.15, 15.0, 15.0, 30_000) - 0.15).abs() < 1e-15);
    // Never below 0.
    assert_eq!(update(0.0001, 1.0, 10.0, 30_000), 0.0);
}

#[test]
fn gains_are_auto_tuned_by_the_rfc_table() {
    // RFC 8033 section 4.2: the factor on alpha and beta by drop_prob.
    let table = [
        (0.5, 1.0),
        (0.1, 1.0),
        (0.099, 1.0 / 2.0),
        (0.01, 1.0 / 2.0),
        (0.0099, 1.0 / 8.0),
        (0.001, 1.0 / 8.0),
        (0.00099, 1.0 / 32.0),
        (0.0001, 1.0 / 32.0),
        (0.000099, 1.0 / 128.0),
        (0.00001, 1.0 / 128.0),
        (0.0000099, 1.0 / 512.0),
        (0.000001, 1.0 / 512.0),
        (0.00000099, 1.0 / 2048.0),
        (1e-12, 1.0 / 2048.0),
    ];
    for (p, s) in table {
        assert_eq!(gain_scale(p), s, "p = {p}");
        // The update applies it: a 5 ms error and a 2 ms rise.
        let unscaled = 0.125 * 0.005 + 1.25 * 0.002;
        let step = update(p, 20.0, 18.0, 30_000) - p;
        assert!((step - s * unscaled).abs() < 1e-15, "p = {p}: {step} vs {}", s * unscaled);
    }
}

#[test]
fn increase_is_capped_at_two_percent_from_ten_percent_on() {
    // 200 ms after 0: unscaled 0.125 * 0.185 + 1.25 * 0.2 = 0.273.
    let raw = 0.125 * 0.185 + 1.25 * 0.2;
    assert!((update(0.2, 200.0, 0.0, 30_000) - 0.22).abs() < 1e-12);
    assert!((update(0.1, 200.0, 0.0, 30_000) - 0.12).abs() < 1e-12);
    // Below 10 %: no cap (but halved gains).
    assert!((update(0.05, 200.0, 0.0, 30_000) - (0.05 + raw / 2.0)).abs() < 1e-12);
    // Decreases are not capped.
    let down = 0.125 * (0.0 - 0.015) + 1.25 * (0.0 - 0.2);
    assert!((update(0.5, 0.0, 200.0, 0) - (0.5 + down)).abs() < 1e-12);
}

#[test]
fn delay_beyond_250_ms_adds_two_percent() {
    // 300 ms steady at 50 %: 0.125 * 0.285 = 0.0356, capped to 0.02, + 0.02.
    assert!((update(0.5, 300.0, 300.0, 30_000) - 0.54).abs() < 1e-12);
    // 250 ms itself does not.
    assert!((update(0.5, 250.0, 250.0, 30_000) - 0.52).abs() < 1e-12);
    // Bounded at 1.
    assert_eq!(update(0.99, 300.0, 300.0, 30_000), 1.0);
}

#[test]
fn probability_decays_by_a_64th_when_the_delay_was_zero_twice() {
    // Empty queue, delay 0 now and before: the proportional step, then
    // p -= p / 64.
    let after_step = 0.5 + 0.125 * (0.0 - 0.015);
    assert!((update(0.5, 0.0, 0.0, 0) - after_step * 63.0 / 64.0).abs() < 1e-12);
    // A zero delay with a backlog is not trusted: no decay.
    assert!((update(0.5, 0.0, 0.0, 3000) - after_step).abs() < 1e-12);
    // Nor when the delay was not zero at the last update.
    let s = 0.125 * (0.0 - 0.015) + 1.25 * (0.0 - 0.001);
    assert!((update(0.5, 0.0, 1.0, 0) - (0.5 + s)).abs() < 1e-12);
}

/// Arrivals of 1500-byte packets, the queue held at `level` packets
/// (one dequeue per accepted arrival, at the same instant: sojourn 0
/// is not read as the delay since `qdelay` is set by hand); returns
/// (AQM drops, marks).
fn offer(d: &mut Pie, level: usize, n: usize, ecn: Ecn) -> (usize, u64) {
    let mut drops = Vec::new();
    while d.q.len() < level {
        d.q.push_back(q(0, 1500, Ecn::NotEct, 0));
        d.bytes += 1500;
    }
    let marks0 = d.marks();
    let qdelay = d.qdelay;
    for _ in 0..n {
        let before = d.q.len();
        d.enqueue(0, q(0, 1500, ecn, 0), &mut drops);
        if d.q.len() > before {
            d.q.pop_front();
            d.bytes -= 1500;
        }
        d.qdelay = qdelay;
    }
    (drops.iter().filter(|x| x.reason == DropReason::Aqm).count(), d.marks() - marks0)
}

fn congested(p: f64, qdelay_ms: u64) -> Pie {
    let mut d = pie(cfg());
    d.burst_time = 0;
    d.prob = p;
    d.qdelay = qdelay_ms * MS;
    d
}

#[test]
fn safeguards_disable_early_drops() {
    // Reference: 30 % at 20 ms with 10 packets waiting drops.
    assert!(offer(&mut congested(0.3, 20), 10, 200, Ecn::NotEct).0 > 20);
    // Burst allowance left: nothing dropped even at probability 1.
    let mut d = congested(1.0, 200);
    d.burst_time = MS;
    assert_eq!(offer(&mut d, 10, 200, Ecn::NotEct).0, 0);
    // Delay below target / 2 with a probability below 20 %: no drops.
    assert_eq!(offer(&mut congested(0.19, 7), 10, 500, Ecn::NotEct).0, 0);
    // ... but at 20 % or with the delay at target / 2 they come back.
    assert!(offer(&mut congested(0.2, 7), 10, 500, Ecn::NotEct).0 > 0);
    let mut d = congested(0.19, 0);
    d.qdelay = d.cfg.target / 2;
    assert!(offer(&mut d, 10, 500, Ecn::NotEct).0 > 0);
    // Fewer than two MTU-sized packets waiting: no drops even at 100 %.
    assert_eq!(offer(&mut congested(1.0, 200), 1, 200, Ecn::NotEct).0, 0);
    assert_eq!(offer(&mut congested(1.0, 200), 2, 200, Ecn::NotEct).0, 200);
}

#[test]
fn derandomized_drops_come_between_0_85_and_8_5_of_accumulated_probability() {
    // At p = 1/8: never within 6 arrivals of the last drop (accu < 0.85),
    // always by the 68th (accu >= 8.5); at p = 1/64, 55..=544 (powers
    // of two, so that the sums are exact).
    for (p, lo, hi) in [(0.125, 7, 68), (1.0 / 64.0, 55, 544)] {
        let mut d = congested(p, 20);
        let mut drops = Vec::new();
        for _ in 0..10 {
            d.q.push_back(q(0, 1500, Ecn::NotEct, 0));
            d.bytes += 1500;
        }
        let (mut since, mut gaps) = (0, Vec::new());
        for _ in 0..200_000 {
            since += 1;
            let n = drops.len();
            d.enqueue(0, q(0, 1500, Ecn::NotEct, 0), &mut drops);
            if drops.len() > n {
                gaps.push(since);
                since = 0;
            } else {
                d.q.pop_front();
                d.bytes -= 1500;
            }
        }
        let (min, max) = (*gaps.iter().min().unwrap(), *gaps.iter().max().unwrap());
        assert!(min >= lo && max <= hi, "p {p}: gaps in [{min}, {max}]");
        // Gaps of exactly 0.85/p, rounded up, are frequent (the coin
        // there has probability p).
        assert!(min == lo, "p {p}: shortest gap {min}");
    }
}

#[test]
fn ecn_marks_capable_packets_only_up_to_ten_percent() {
    let ecn = PieConfig { ecn: true, ..cfg() };
    let c = |p| {
        let mut d = pie(ecn);
        d.burst_time = 0;
        d.prob = p;
        d.qdelay = 20 * MS;
        d
    };
    // 10 %: ECT packets are marked, none dropped.
    let (drops, marks) = offer(&mut c(0.1), 10, 2000, Ecn::Ect0);
    assert_eq!(drops, 0);
    assert!(marks > 50, "{marks}");
    // Above 10 %: dropped, not marked.
    let (drops, marks) = offer(&mut c(0.11), 10, 2000, Ecn::Ect0);
    assert!(drops > 50);
    assert_eq!(marks, 0);
    // Not ECN-capable: dropped at any probability.
    let (drops, marks) = offer(&mut c(0.05), 10, 2000, Ecn::NotEct);
    assert!(drops > 20);
    assert_eq!(marks, 0);
    // ECN off: ECT packets are dropped.
    let mut d = congested(0.05, 20);
    let (drops, marks) = offer(&mut d, 10, 2000, Ecn::Ect0);
    assert!(drops > 20);
    assert_eq!(marks, 0);
}

#[test]
fn burst_allowance_admits_a_burst_then_counts_down_with_service() {
    // A 150 ms burst allowance at start: with p = 1 and 200 ms of
    // delay, arrivals are all admitted while it lasts.
    let mut d = pie(cfg());
    assert_eq!(d.burst_allowance(), 150 * MS);
    d.prob = 1.0;
    d.qdelay = 200 * MS;
    let mut drops = Vec::new();
    for _ in 0..50 {
        d.enqueue(0, q(0, 1500, Ecn::NotEct, 0), &mut drops);
    }
    assert!(drops.is_empty());
    // Served one packet per ms: the allowance falls by the time since
    // the previous dequeue (the first one starts the clock), i.e. by
    // tupdate = 15 ms per 15 ms of service.
    for k in 0..=45u64 {
        d.dequeue(k * MS, &mut drops);
        d.prob = 1.0;
        if k % 15 == 0 {
            assert_eq!(d.burst_allowance(), 150 * MS - k * MS, "after {k} ms");
            d.on_timer(k * MS);
        }
    }
    // 45 ms served: 105 ms left. Then the queue is refilled and served
    // for 105 ms more: the allowance is gone and drops start.
    assert_eq!(d.burst_allowance(), 105 * MS);
    for k in 46..=150u64 {
        d.enqueue(k * MS, q(0, 1500, Ecn::NotEct, k * MS), &mut drops);
        d.dequeue(k * MS, &mut drops);
    }
    assert!(drops.is_empty());
    assert_eq!(d.burst_allowance(), 0);
    d.enqueue(151 * MS, q(0, 1500, Ecn::NotEct, 151 * MS), &mut drops);
    assert_eq!(drops.len(), 1, "p = {}, qdelay {}", d.prob(), d.qdelay());
}

#[test]
fn burst_allowance_is_restored_after_two_calm_updates_at_zero_probability() {
    let mut d = pie(cfg());
    d.burst_time = 0;
    d.prob = 0.0;
    d.qdelay = 5 * MS;
    d.qdelay_old = 20 * MS;
    d.on_timer(0);
    assert_eq!(d.burst_allowance(), 0, "the last delay was above target / 2");
    // The fall from 20 ms gave a negative step: the probability stays
    // 0. Both delays below target / 2 at the next update: restored.
    assert_eq!(d.prob(), 0.0);
    d.qdelay = 5 * MS;
    d.on_timer(0);
    assert_eq!(d.burst_allowance(), 150 * MS);
    // With a probability left, no reset.
    let mut d = pie(cfg());
    d.burst_time = 0;
    d.prob = 0.5;
    d.qdelay = 5 * MS;
    d.qdelay_old = 5 * MS;
    d.on_timer(0);
    assert_eq!(d.burst_allowance(), 0);
}

#[test]
fn timestamp_delay_is_the_dequeued_packets_sojourn_and_zero_when_empty() {
    let mut d = pie(cfg());
    let mut drops = Vec::new();
    d.enqueue(0, q(0, 1500, Ecn::NotEct, 0), &mut drops);
    d.enqueue(MS, q(0, 1500, Ecn::NotEct, MS), &mut drops);
    d.dequeue(7 * MS, &mut drops);
    assert_eq!(d.qdelay(), 7 * MS);
    d.dequeue(9 * MS, &mut drops);
    assert_eq!(d.qdelay(), 0, "the queue is empty after it");
}

#[test]
fn departure_rate_estimator_gives_backlog_over_rate() {
    // 1500-byte packets dequeued every 1.2 ms (10 Mbit/s) from a deep
    // queue: the rate is measured over 16 KiB cycles, and the delay at
    // the update is backlog / rate.
    let mut d = pie(PieConfig { dq_rate_estimator: true, ..cfg() });
    let mut drops = Vec::new();
    for _ in 0..100 {
        d.enqueue(0, q(0, 1500, Ecn::NotEct, 0), &mut drops);
    }
    let gap = secs(0.0012);
    for k in 1..=40u64 {
        d.dequeue(k * gap, &mut drops);
    }
    // A cycle ends at the 11th packet (16,500 B >= 16,384). The first
    // starts at a dequeue and counts that packet: 16,500 B in 10 gaps;
    // the next start where the last ended: 16,500 B in 11 gaps (1.25
    // MB/s). Three cycles in 40 dequeues, averaged with weight 1/8.
    let (r1, r2) = (16_500.0 / (10.0 * 0.0012), 16_500.0 / (11.0 * 0.0012));
    let avg = r1 * (7.0f64 / 8.0).powi(2) + r2 * (1.0 - (7.0f64 / 8.0).powi(2));
    assert!((d.avg_dq_rate / avg - 1.0).abs() < 1e-9, "{} vs {avg}", d.avg_dq_rate);
    d.on_timer(40 * gap);
    let want = 60.0 * 1500.0 / avg;
    assert!((to_secs(d.qdelay()) - want).abs() < 1e-9);
}

#[test]
fn bytemode_scales_the_probability_by_size_over_mtu() {
    // p = 0.5 in bytemode for 150-byte packets: 0.05 each. The
    // accumulation then allows no drop within 16 arrivals (0.85 / 0.05
    // = 17th), while full-size packets at 0.5 can drop at the 2nd.
    let mut d = pie(PieConfig { bytemode: true, ..cfg() });
    d.burst_time = 0;
    d.prob = 0.5;
    d.qdelay = 20 * MS;
    let mut drops = Vec::new();
    for _ in 0..20 {
        d.q.push_back(q(0, 1500, Ecn::NotEct, 0));
        d.bytes += 1500;
    }
    for _ in 0..16 {
        d.enqueue(0, q(0, 150, Ecn::NotEct, 0), &mut drops);
    }
    assert!(drops.is_empty());
    assert!((d.accu_prob - 16.0 * 0.05).abs() < 1e-12);
}

#[test]
fn packet_and_byte_limits_drop_arrivals_as_overflow() {
    let mut drops = Vec::new();
    let mut d = pie(PieConfig { limit_packets: 3, ..cfg() });
    for f in 0..4 {
        d.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].q.flow_key(), drops[0].reason), (3, DropReason::Overflow));
    drops.clear();
    let mut d = pie(PieConfig { limit_bytes: 2500, ..cfg() });
    for f in 0..3 {
        d.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].q.flow_key(), drops[0].reason), (2, DropReason::Overflow));
    assert_eq!(d.backlog(), Backlog { packets: 2, bytes: 2000 });
    // Defaults: Linux's 1000 packets, 15 ms, 15 ms, 150 ms.
    let map = serde_json::Map::new();
    let names: Vec<&'static str> = info().params.iter().map(|p| p.name).collect();
    let p = Params::new(&map, "links[0].queue", &names).unwrap();
    let d = build_pie(
        &p,
        LinkInfo { rate_bps: 10e6, limit_packets: None, limit_bytes: None },
        stream(1, StreamKind::Qdisc, 0),
    )
    .unwrap();
    assert_eq!((d.cfg.limit_packets, d.cfg.target, d.cfg.tupdate, d.cfg.max_burst), (1000, 15 * MS, 15 * MS, 150 * MS));
    assert_eq!(d.update_interval(), Some(15 * MS));
}

#[test]
fn constant_overload_converges_to_the_target_delay() {
    // A 10 Mbit/s link (1.2 ms per 1500-byte packet) fed `load` times
    // its rate; the timer every 15 ms. PIE must settle the sojourn time
    // at 15 ms and drop the excess 1 - 1/load; at load 2 the drop
    // probability (50 %) is beyond the 2 % cap's 10 %.
    for (load, dq) in [(1.2, false), (2.0, false), (1.2, true)] {
        let mut d = pie(PieConfig { dq_rate_estimator: dq, ..cfg() });
        let svc = secs(0.0012);
        let gap = secs(0.0012 / load);
        let tick = d.update_interval().unwrap();
        let (warm, end) = (secs(40.0), secs(80.0));
        let mut drops = Vec::new();
        let (mut next_arrival, mut next_tick, mut busy_until): (Time, Time, Option<Time>) = (0, tick, None);
        let (mut arrivals, mut dropped, mut served, mut sojourn_sum) = (0u64, 0u64, 0u64, 0.0);
        let mut worst: f64 = 0.0;
        while next_arrival < end {
            let t_busy = busy_until.unwrap_or(Time::MAX);
            if t_busy <= next_arrival && t_busy <= next_tick {
                match d.dequeue(t_busy, &mut drops) {
                    Some(p) => {
                        busy_until = Some(t_busy + svc);
                        if t_busy >= warm {
                            served += 1;
                            let s = to_secs(p.sojourn(t_busy));
                            sojourn_sum += s;
                            worst = worst.max(s);
                        }
                    }
                    None => busy_until = None,
                }
            } else if next_tick <= next_arrival {
                d.on_timer(next_tick);
                next_tick += tick;
            } else {
                let now = next_arrival;
                drops.clear();
                d.enqueue(now, q(0, 1500, Ecn::NotEct, now), &mut drops);
                if busy_until.is_none() {
                    busy_until = d.dequeue(now, &mut drops).map(|_| now + svc);
                }
                if now >= warm {
                    arrivals += 1;
                    dropped += drops.len() as u64;
                }
                next_arrival += gap;
            }
        }
        let mean = sojourn_sum / served as f64;
        assert!((mean - 0.015).abs() < 0.0015, "load {load} dq {dq}: mean sojourn {mean}");
        assert!(worst < 0.045, "load {load} dq {dq}: worst sojourn {worst}");
        let frac = dropped as f64 / arrivals as f64;
        let excess = 1.0 - 1.0 / load;
        assert!((frac / excess - 1.0).abs() < 0.01, "load {load} dq {dq}: dropped {frac} vs {excess}");
    }
}
