use super::super::testing::{q, MS};
use super::*;
use crate::net::packet::Ecn;
use crate::sim::rng::{stream, StreamKind};
use crate::spec::QueueSpec;

const SIZE: u32 = 1500;

fn params(ecn: bool) -> CodelParams {
    CodelParams::linux(ecn)
}

fn codel(p: CodelParams) -> Codel {
    Codel::new(p, DEFAULT_LIMIT, u64::MAX)
}

/// Through the registry, as a run builds it.
fn built(
    params: serde_json::Value,
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
) -> Result<Box<dyn Qdisc>, SpecError> {
    let spec = QueueSpec {
        limit_packets,
        limit_bytes,
        discipline: Some("codel".into()),
        params: params.as_object().unwrap().clone(),
    };
    super::super::build(&spec, 10e6, stream(1, StreamKind::Qdisc, 0), "links[0].queue")
}

fn trace(c: &dyn Qdisc, name: &str) -> f64 {
    let mut v = Vec::new();
    c.trace_vars(&mut v);
    v.iter().find(|(n, _)| *n == name).map(|(_, x)| *x).unwrap()
}

/// What happened at one step of [`drive`].
#[derive(Debug)]
struct Step {
    t: Time,
    sent: Vec<Queued>,
    dropped: Vec<Dropped>,
}

impl Step {
    fn sojourn(&self) -> Option<Time> {
        self.sent.first().map(|p| p.sojourn(self.t))
    }
}

/// A slotted link: at step i (time `start + i dt`), `plan(i) = (k, n)`
/// tops the queue up to `k` packets (arrivals at that instant; none if
/// it holds k or more) and then asks for `n` packets. `(i + 1, 0)` for
/// i < K then `(K + 1, 1)` keeps K packets waiting behind the one sent,
/// each sent after K dt, and replaces every dropped packet.
fn drive(
    c: &mut dyn Qdisc,
    start: Time,
    dt: Time,
    steps: usize,
    ecn: Ecn,
    plan: impl Fn(usize) -> (usize, usize),
) -> Vec<Step> {
    let mut log = Vec::with_capacity(steps);
    for i in 0..steps {
        let t = start + i as Time * dt;
        let (k, n) = plan(i);
        let mut dropped = Vec::new();
        while (c.backlog().packets as usize) < k {
            c.enqueue(t, q(0, SIZE, ecn, t), &mut dropped);
        }
        let mut sent = Vec::new();
        for _ in 0..n {
            if let Some(p) = c.dequeue(t, &mut dropped) {
                sent.push(p);
            }
        }
        log.push(Step { t, sent, dropped });
    }
    log
}

/// A standing queue of `k` packets from step `k` on.
fn standing(k: usize) -> impl Fn(usize) -> (usize, usize) {
    move |i| if i < k { (i + 1, 0) } else { (k + 1, 1) }
}

fn drop_times(log: &[Step]) -> Vec<Time> {
    log.iter().flat_map(|s| s.dropped.iter().map(move |_| s.t)).collect()
}

/// 1/sqrt(count) for count = 1, 2, ..: exact, or Linux's recurrence
/// (one Newton step `y/2 (3 - count y^2)` per count, from y = 1) in f64.
fn inv_sqrt_seq(n: usize, newton: bool) -> Vec<f64> {
    let mut y = vec![1.0];
    for c in 2..=n {
        let prev = y[c - 2];
        y.push(if newton { prev / 2.0 * (3.0 - c as f64 * prev * prev) } else { 1.0 / (c as f64).sqrt() });
    }
    y
}

#[test]
fn no_drop_while_sojourn_stays_below_target_and_sojourn_equal_to_target_counts_as_above() {
    // Every packet waits 4 ms (< 5 ms) for 20 s: never a drop.
    let mut c = codel(params(false));
    let log = drive(&mut c, 0, MS, 20_000, Ecn::NotEct, standing(4));
    assert!(log.iter().skip(4).all(|s| s.sojourn() == Some(4 * MS)));
    assert!(drop_times(&log).is_empty());
    assert_eq!(trace(&c, "codel_dropping"), 0.0);
    // 5 ms exactly is not below target (Linux codel_time_before): drops.
    let mut c = codel(params(false));
    let log = drive(&mut c, 0, MS, 2_000, Ecn::NotEct, standing(5));
    assert!(!drop_times(&log).is_empty());
}

#[test]
fn first_drop_comes_at_the_first_dequeue_after_a_whole_interval_above_target() {
    // Sojourn 10 ms from the first dequeue (step 10, t = 10 ms): the
    // dequeue at exactly 10 + 100 ms is not yet past first_above_time
    // (Linux codel_time_after is strict); the next one, 111 ms, drops.
    let mut c = codel(params(false));
    let log = drive(&mut c, 0, MS, 300, Ecn::NotEct, standing(10));
    let first_above = log.iter().find(|s| s.sojourn().is_some_and(|d| d >= 5 * MS)).unwrap().t;
    assert_eq!(first_above, 10 * MS);
    let drops = drop_times(&log);
    assert_eq!(drops[0], first_above + 100 * MS + MS);
    // The head packet is the one dropped: the packet sent in its place
    // entered after it.
    let s = log.iter().find(|s| !s.dropped.is_empty()).unwrap();
    assert!(s.dropped[0].q.enqueued < s.sent[0].enqueued);
    assert_eq!(s.dropped[0].reason, DropReason::Aqm);
}

#[test]
fn a_dip_below_target_restarts_the_interval() {
    // 10 ms of standing queue, then for a while a shorter one (2 ms),
    // then 10 ms again: the first drop waits a whole interval from the
    // return above target, not from the first time above it.
    let plan = |i: usize| match i {
        0..=9 => (i + 1, 0),
        10..=70 => (11, 1),
        71..=100 => (3, 1),
        _ => (11, 1),
    };
    let mut c = codel(params(false));
    let log = drive(&mut c, 0, MS, 400, Ecn::NotEct, plan);
    let above = |s: &Step| s.sojourn().is_some_and(|d| d >= 5 * MS);
    let first_above = log.iter().find(|s| above(s)).unwrap().t;
    let dip = log.iter().find(|s| s.t > first_above && s.sojourn().is_some_and(|d| d < 5 * MS)).unwrap().t;
    assert!(dip < first_above + 100 * MS, "the dip must come inside the first interval for the test to mean anything");
    let back = log.iter().find(|s| s.t > dip && above(s)).unwrap().t;
    let drops = drop_times(&log);
    assert!(
        drops[0] > back + 100 * MS && drops[0] <= back + 101 * MS,
        "first drop {} ms, back above target at {} ms",
        drops[0] / MS,
        back / MS
    );
}

fn control_law_drop_times(newton: bool) {
    // dt = 0.1 ms, 100 packets standing (10 ms): the k-th drop is due
    // at D_k = D_1 + interval (y_1 + .. + y_{k-1}), y_j = 1/sqrt(j), and
    // happens at the first dequeue at or after it.
    let mut p = params(false);
    p.exact_inv_sqrt = !newton;
    let mut c = codel(p);
    let dt = MS / 10;
    let log = drive(&mut c, 0, dt, 30_000, Ecn::NotEct, standing(100));
    let drops = drop_times(&log);
    assert!(
        log.iter().skip(100).all(|s| s.sojourn().unwrap() >= 5 * MS),
        "the queue must stay above target throughout"
    );
    let n = 60;
    assert!(drops.len() > n);
    let y = inv_sqrt_seq(n, newton);
    let interval = 100.0 * MS as f64;
    let mut due = drops[0] as f64;
    for k in 1..n {
        due += interval * y[k - 1];
        // Q0.16 holds y to 2^-16: allow one unit per step for Linux's.
        let slack = if newton { k as f64 * interval / 65536.0 } else { k as f64 };
        let a = drops[k] as f64;
        assert!(
            a >= due - slack && a < due + dt as f64 + slack,
            "drop {}: at {} ms, due {} ms",
            k + 1,
            a / MS as f64,
            due / MS as f64
        );
    }
    assert_eq!(c.vars().count as usize, drops.len());
}

#[test]
fn drops_are_spaced_interval_over_sqrt_count_exact_law() {
    control_law_drop_times(false);
}

#[test]
fn drops_are_spaced_by_linux_newton_inverse_sqrt() {
    control_law_drop_times(true);
}

#[test]
fn newton_step_halves_at_count_two_and_converges_to_inverse_sqrt() {
    // From y = 1 (0xffff) at count 1, y/2 (3 - 2 y^2) = 0.5 at count 2;
    // then within 1 % of 1/sqrt(count) from count 7 on (and 0.1 % from 20).
    let mut v = CodelVars { count: 1, rec_inv_sqrt: 0xffff, ..Default::default() };
    for c in 2..=1000u32 {
        v.count = c;
        newton_step(&mut v);
        let y = v.rec_inv_sqrt as f64 / 65536.0;
        let exact = 1.0 / (c as f64).sqrt();
        if c == 2 {
            assert!((y - 0.5).abs() < 2.0 / 65536.0, "y(2) = {y}");
        }
        if c >= 7 {
            assert!((y / exact - 1.0).abs() < 0.01, "count {c}: {y} vs {exact}");
        }
        if c >= 20 {
            assert!((y / exact - 1.0).abs() < 0.001 + 4.0 / 65536.0 / exact, "count {c}: {y} vs {exact}");
        }
    }
    // The control law scales interval by y in Q0.32.
    let p = params(false);
    v.rec_inv_sqrt = 0x8000;
    assert_eq!(control_law(1000, &p, &v), 1000 + p.interval / 2);
}

#[test]
fn leaves_the_dropping_state_when_a_dequeued_packet_is_below_target() {
    let plan = |i: usize| match i {
        0..=9 => (i + 1, 0),
        10..=399 => (11, 1),
        _ => (3, 1),
    };
    let mut c = codel(params(false));
    let mut log = drive(&mut c, 0, MS, 400, Ecn::NotEct, plan);
    assert_eq!(trace(&c, "codel_dropping"), 1.0);
    assert!(!drop_times(&log).is_empty());
    // Continue step by step from where it stopped.
    let mut left = None;
    for i in 400..1400 {
        let t = i as Time * MS;
        let mut s = drive(&mut c, t, MS, 1, Ecn::NotEct, |_| plan(i)).remove(0);
        s.t = t;
        if left.is_none() && s.sojourn().is_some_and(|d| d < 5 * MS) {
            assert_eq!(trace(&c, "codel_dropping"), 0.0, "still dropping at {} ms", t / MS);
            left = Some(t);
        }
        log.push(s);
    }
    let left = left.expect("the sojourn went below target");
    assert!(log.iter().filter(|s| s.t >= left).all(|s| s.dropped.is_empty()));
    assert!(log.iter().filter(|s| s.t >= left).all(|s| s.sojourn().unwrap() < 5 * MS));
}

/// Drops the queue into a 10 ms standing queue for `busy` steps, a 2 ms
/// one for `calm` steps, and 10 ms again: returns the log and the count
/// and lastcount just before the second episode's first drop.
fn two_episodes(busy: usize, calm: usize) -> (Codel, Vec<Step>, usize, u32, u32) {
    let plan = move |i: usize| {
        if i < 10 {
            (i + 1, 0)
        } else if i < 10 + busy {
            (11, 1)
        } else if i < 10 + busy + calm {
            (3, 1)
        } else {
            (11, 1)
        }
    };
    let mut c = codel(params(false));
    let mut log = drive(&mut c, 0, MS, 10 + busy + calm, Ecn::NotEct, plan);
    assert_eq!(trace(&c, "codel_dropping"), 0.0);
    loop {
        let (count, last) = (c.vars().count, c.vars().lastcount);
        let i = log.len();
        let s = drive(&mut c, i as Time * MS, MS, 1, Ecn::NotEct, |_| plan(i)).remove(0);
        let dropped = !s.dropped.is_empty();
        log.push(s);
        if dropped {
            return (c, log, i, count, last);
        }
    }
}

#[test]
fn reentry_soon_after_an_episode_reuses_count_minus_lastcount() {
    // Linux (and RFC 8289 s5.5): delta = count - lastcount > 1 and
    // now - drop_next < 16 intervals => count = delta, so the next drop
    // comes interval/sqrt(delta) later, not a whole interval.
    let (c, log, entry, count, last) = two_episodes(1500, 300);
    let delta = count - last;
    assert!(delta > 10, "first episode too short: count {count}, lastcount {last}");
    assert_eq!(c.vars().count, delta);
    assert_eq!(c.vars().lastcount, delta);
    let mut c = c;
    let mut log = log;
    let plan = |_| (11, 1);
    while log.len() < entry + 200 {
        let i = log.len();
        log.push(drive(&mut c, i as Time * MS, MS, 1, Ecn::NotEct, plan).remove(0));
    }
    let drops = drop_times(&log[entry..]);
    let gap = (drops[1] - drops[0]) as f64;
    let want = 100.0 * MS as f64 / (delta as f64).sqrt();
    assert!(
        (gap - want).abs() <= MS as f64 + 0.01 * want,
        "gap {} ms, interval/sqrt({delta}) = {} ms",
        gap / MS as f64,
        want / MS as f64
    );
}

#[test]
fn reentry_long_after_an_episode_restarts_count_at_one() {
    // Below target for 2 s > 16 intervals after the last drop_next.
    let (c, log, entry, count, last) = two_episodes(1500, 2000);
    assert!(count - last > 1);
    assert_eq!(c.vars().count, 1);
    let mut c = c;
    let mut log = log;
    while log.len() < entry + 200 {
        let i = log.len();
        log.push(drive(&mut c, i as Time * MS, MS, 1, Ecn::NotEct, |_| (11, 1)).remove(0));
    }
    let drops = drop_times(&log[entry..]);
    // Count 1 -> next drop a whole interval later (y = 0xffff / 2^16).
    let gap = drops[1] - drops[0];
    assert!((100 * MS - 100 * MS / 65536 - 1..=101 * MS).contains(&gap), "gap {} us", gap / 1_000_000);
}

#[test]
fn ecn_marks_instead_of_dropping_and_marks_advance_the_control_law() {
    // Same standing queue, ECT(0): with ecn the packets that would have
    // been dropped are sent CE at the same instants, count grows alike.
    let mut dropper = codel(params(false));
    let dlog = drive(&mut dropper, 0, MS, 3_000, Ecn::Ect0, standing(10));
    let mut marker = codel(params(true));
    let mlog = drive(&mut marker, 0, MS, 3_000, Ecn::Ect0, standing(10));
    assert!(mlog.iter().all(|s| s.dropped.is_empty()));
    let mark_times: Vec<Time> =
        mlog.iter().filter(|s| s.sent.iter().any(|p| p.pkt.ecn() == Ecn::Ce)).map(|s| s.t).collect();
    assert_eq!(marker.marks() as usize, mark_times.len());
    let drops = drop_times(&dlog);
    assert!(mark_times.len() > 20);
    // The schedules agree while the queues stay alike (the dropped one
    // is refilled, so both stay at 10 packets).
    assert_eq!(&mark_times[..20], &drops[..20]);
    assert!(marker.vars().count >= 20);
    // ecn off: ECT packets are dropped, nothing marked.
    assert_eq!(dropper.marks(), 0);
    assert!(dlog.iter().all(|s| s.sent.iter().all(|p| p.pkt.ecn() == Ecn::Ect0)));
    // ecn on, not-ECT traffic: dropped, and drops are not marks.
    let mut c = codel(params(true));
    let log = drive(&mut c, 0, MS, 3_000, Ecn::NotEct, standing(10));
    assert_eq!(drop_times(&log), drops);
    assert_eq!(c.marks(), 0);
}

#[test]
fn never_drops_with_at_most_one_mtu_left_in_the_queue() {
    // One 1500-byte packet waits behind the one sent, for 20 ms each:
    // far above target, but the backlog left (1500 B) is <= mtu 1514.
    let mut c = codel(params(false));
    let log = drive(&mut c, 0, 20 * MS, 1_000, Ecn::NotEct, standing(1));
    assert!(log.iter().skip(1).all(|s| s.sojourn() == Some(20 * MS)));
    assert!(drop_times(&log).is_empty());
    // With mtu below one packet, the same queue is dropped from.
    let mut p = params(false);
    p.mtu = 1000;
    let mut c = codel(p);
    let log = drive(&mut c, 0, 20 * MS, 1_000, Ecn::NotEct, standing(1));
    assert!(!drop_times(&log).is_empty());
}

#[test]
fn ce_threshold_marks_packets_whose_sojourn_exceeds_it() {
    let mut p = params(false);
    p.ce_threshold = Some(MS);
    // 2 ms sojourn: below target, above the threshold: all CE, no drop.
    let mut c = codel(p);
    let log = drive(&mut c, 0, MS, 1_000, Ecn::Ect1, standing(2));
    let sent: Vec<&Queued> = log.iter().flat_map(|s| s.sent.iter()).collect();
    assert!(sent.iter().all(|p| p.pkt.ecn() == Ecn::Ce));
    assert_eq!(c.marks() as usize, sent.len());
    assert!(drop_times(&log).is_empty());
    // Exactly the threshold: not above it.
    let mut c = codel(p);
    let log = drive(&mut c, 0, MS, 1_000, Ecn::Ect1, standing(1));
    assert!(log.iter().flat_map(|s| s.sent.iter()).all(|p| p.pkt.ecn() == Ecn::Ect1));
    assert_eq!(c.marks(), 0);
    // Not ECN-capable: left alone.
    let mut c = codel(p);
    drive(&mut c, 0, MS, 1_000, Ecn::NotEct, standing(2));
    assert_eq!(c.marks(), 0);
}

#[test]
fn arrivals_beyond_the_packet_or_byte_limit_are_dropped() {
    // Default: Linux DEFAULT_CODEL_LIMIT = 1000 packets.
    let mut c = built(serde_json::json!({}), None, None).unwrap();
    let mut drops = Vec::new();
    for f in 0..1001 {
        c.enqueue(0, q(f, SIZE, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].q.flow_key(), drops[0].reason), (1000, DropReason::Overflow));
    assert_eq!(c.backlog(), Backlog { packets: 1000, bytes: 1000 * SIZE as u64 });
    // queue.limit_packets and queue.limit_bytes, both honoured.
    let mut c = built(serde_json::json!({}), Some(5), None).unwrap();
    let mut drops = Vec::new();
    for f in 0..7 {
        c.enqueue(0, q(f, SIZE, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.iter().map(|d| d.q.flow_key()).collect::<Vec<_>>(), vec![5, 6]);
    let mut c = built(serde_json::json!({}), None, Some(4000)).unwrap();
    let mut drops = Vec::new();
    for f in 0..3 {
        c.enqueue(0, q(f, SIZE, Ecn::NotEct, 0), &mut drops);
    }
    assert_eq!(drops.iter().map(|d| d.q.flow_key()).collect::<Vec<_>>(), vec![2]);
    // After a dequeue there is room again.
    assert!(c.dequeue(MS, &mut drops).is_some());
    c.enqueue(MS, q(9, SIZE, Ecn::NotEct, MS), &mut drops);
    assert_eq!(drops.len(), 1);
}

#[test]
fn parameters_are_read_in_seconds_and_checked() {
    let c = built(
        serde_json::json!({"target": 0.002, "interval": 0.05, "ecn": true, "ce_threshold": 0.001, "mtu": 3000, "control_law": "exact"}),
        None,
        None,
    );
    assert!(c.is_ok());
    let p = |v: serde_json::Value| {
        let map = v.as_object().unwrap().clone();
        let names: Vec<&'static str> = info().params.iter().map(|p| p.name).collect();
        let p = Params::new(&map, "q", &names).unwrap();
        CodelParams::from_params(&p, false)
    };
    let got = p(serde_json::json!({"target": 0.002, "interval": 0.05, "ce_threshold": 0.001, "control_law": "exact"}))
        .unwrap();
    assert_eq!(
        (got.target, got.interval, got.ce_threshold, got.exact_inv_sqrt, got.ecn),
        (2 * MS, 50 * MS, Some(MS), true, false)
    );
    assert_eq!(p(serde_json::json!({})).unwrap(), CodelParams::linux(false));
    assert!(p(serde_json::json!({"target": 0.0})).is_err());
    assert!(p(serde_json::json!({"control_law": "fast"})).is_err());
    assert!(built(serde_json::json!({"quantum": 1514}), None, None).is_err());
}

/// (sent: (time, sojourn), drop times, (time, dropping, count) at each dequeue).
type LinkRun = (Vec<(Time, Time)>, Vec<Time>, Vec<(Time, bool, f64)>);

/// A link of `service` per packet fed by `arrival(i)` (the i-th arrival
/// time, increasing) until `until`: the transmitter asks for a packet
/// when it finishes one, or when a packet arrives while it is idle.
fn link(c: &mut dyn Qdisc, service: Time, until: Time, arrival: impl Fn(u64) -> Time) -> LinkRun {
    let (mut sent, mut drops, mut state) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    let mut busy_until: Option<Time> = None;
    let mut buf = Vec::new();
    loop {
        let next_arrival = arrival(i);
        let t = match busy_until {
            Some(b) if b <= next_arrival => b,
            _ => next_arrival,
        };
        if t > until {
            break;
        }
        let departure = busy_until == Some(t);
        if !departure {
            c.enqueue(t, q(0, SIZE, Ecn::NotEct, t), &mut buf);
            i += 1;
        }
        if departure || busy_until.is_none() {
            busy_until = None;
            if let Some(p) = c.dequeue(t, &mut buf) {
                sent.push((t, p.sojourn(t)));
                busy_until = Some(t + service);
            }
            state.push((t, trace(c, "codel_dropping") == 1.0, trace(c, "codel_count")));
        }
        drops.extend(buf.drain(..).map(|d| {
            assert_eq!(d.reason, DropReason::Aqm);
            t
        }));
    }
    (sent, drops, state)
}

#[test]
fn fixed_overload_enters_dropping_and_the_drop_rate_grows_per_the_control_law() {
    // 10 Mbit/s, 1500 B: 1.2 ms per packet (833 pkt/s); arrivals every
    // 1 ms (1.2x). The queue cannot be held until the drop rate
    // sqrt(count)/interval reaches the excess 1000 - 833 = 167 pkt/s,
    // i.e. count >= (167 * 0.1)^2 = 278.
    let service = 1_200_000_000;
    let until = 40_000 * MS;
    let mut c = built(serde_json::json!({}), None, None).unwrap();
    let (sent, drops, state) = link(c.as_mut(), service, until, |i| i * MS);
    // First drop: the first dequeue strictly after first_above + interval.
    let first_above = sent.iter().find(|(_, d)| *d >= 5 * MS).unwrap().0;
    assert!(drops[0] > first_above + 100 * MS && drops[0] <= first_above + 100 * MS + service);
    // First episode: drop k due at D_1 + interval (y_1 + .. + y_{k-1}).
    let exit = state.iter().find(|(t, dropping, _)| *t > drops[0] && !dropping).unwrap();
    let episode: Vec<Time> = drops.iter().copied().filter(|t| *t < exit.0).collect();
    let y = inv_sqrt_seq(episode.len(), true);
    let mut due = episode[0] as f64;
    for k in 1..episode.len() {
        due += 100.0 * MS as f64 * y[k - 1];
        let slack = k as f64 * 100.0 * MS as f64 / 65536.0;
        let a = episode[k] as f64;
        assert!(
            a >= due - slack && a < due + service as f64 + slack,
            "drop {}: at {} ms, due {} ms",
            k + 1,
            a / MS as f64,
            due / MS as f64
        );
    }
    let excess = 1000.0 - 1e12 / service as f64;
    let needed = (excess * 0.1).powi(2);
    assert!(
        episode.len() as f64 >= needed,
        "first episode ended after {} drops, before the law could hold the excess",
        episode.len()
    );
    // Drop rate per second within the first episode grows.
    let per_sec: Vec<usize> = (0..(exit.0 / (1000 * MS)) as usize)
        .map(|s| episode.iter().filter(|t| **t / (1000 * MS) == s as u64).count())
        .collect();
    assert!(per_sec.windows(2).skip(1).all(|w| w[1] > w[0]), "drops per second {per_sec:?}");
    // Settled (second half): the queue is held, so drops carry the
    // whole excess, and CoDel stays in (or returns to) dropping with
    // the reused count.
    let half = until / 2;
    let late_drops = drops.iter().filter(|t| **t >= half).count() as f64;
    let rate = late_drops / (until - half) as f64 * 1e12;
    assert!((rate / excess - 1.0).abs() < 0.02, "late drop rate {rate} vs excess {excess}");
    let late: Vec<&(Time, bool, f64)> = state.iter().filter(|s| s.0 >= half).collect();
    let dropping = late.iter().filter(|s| s.1).count() as f64 / late.len() as f64;
    assert!(dropping > 0.5, "dropping at {:.0} % of late dequeues", dropping * 100.0);
}

/// A closed loop: `n` window-based AIMD sources (cwnd += 1/cwnd per ACK,
/// halved once per window on a loss, i.e. for a drop of a packet sent
/// after the last halving) through one link of `service` per packet
/// with `base_rtt` of propagation; ACKs and loss signals come back
/// `base_rtt` after the packet leaves (or is dropped). Returns, for
/// t >= `from`, the sojourns of sent packets and the link utilisation.
fn aimd(c: &mut dyn Qdisc, n: u32, service: Time, base_rtt: Time, until: Time, from: Time) -> (Vec<Time>, f64) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    const TX_DONE: u8 = 0;
    const ACK: u8 = 1;
    const LOSS: u8 = 2;
    let mut cwnd = vec![10.0f64; n as usize];
    let mut inflight = vec![0u32; n as usize];
    let mut last_halve = vec![0 as Time; n as usize];
    let mut ev: BinaryHeap<Reverse<(Time, u8, u32)>> = BinaryHeap::new();
    let mut busy = false;
    let mut buf = Vec::new();
    let (mut sojourns, mut busy_time) = (Vec::new(), 0 as Time);
    let mut start_tx =
        |c: &mut dyn Qdisc, t: Time, ev: &mut BinaryHeap<Reverse<(Time, u8, u32)>>, buf: &mut Vec<Dropped>| -> bool {
            match c.dequeue(t, buf) {
                Some(p) => {
                    if t >= from {
                        sojourns.push(p.sojourn(t));
                        busy_time += service;
                    }
                    ev.push(Reverse((t + service + base_rtt, ACK, p.flow_key())));
                    ev.push(Reverse((t + service, TX_DONE, 0)));
                    true
                }
                None => false,
            }
        };
    for f in 0..n {
        ev.push(Reverse((f as Time * MS, ACK, f)));
        inflight[f as usize] = 1; // the first event's "ACK" opens the window
    }
    while let Some(Reverse((t, kind, f))) = ev.pop() {
        if t > until {
            break;
        }
        let fi = f as usize;
        match kind {
            TX_DONE => busy = false,
            ACK => {
                inflight[fi] -= 1;
                cwnd[fi] += 1.0 / cwnd[fi];
            }
            _ => {
                inflight[fi] -= 1;
            }
        }
        if kind != TX_DONE {
            while (inflight[fi] as f64) < cwnd[fi].floor() {
                c.enqueue(t, q(f, SIZE, Ecn::NotEct, t), &mut buf);
                inflight[fi] += 1;
                if !busy {
                    busy = start_tx(c, t, &mut ev, &mut buf);
                }
            }
        } else {
            busy = start_tx(c, t, &mut ev, &mut buf);
        }
        for d in buf.drain(..) {
            let g = d.q.flow_key() as usize;
            ev.push(Reverse((t + base_rtt, LOSS, g as u32)));
            if d.q.enqueued > last_halve[g] {
                last_halve[g] = t + base_rtt;
                cwnd[g] = (cwnd[g] / 2.0).max(1.0);
            }
        }
    }
    (sojourns, busy_time as f64 / (until - from) as f64)
}

#[test]
fn aimd_sources_settle_with_the_standing_sojourn_near_target() {
    // Four AIMD sources, 100 ms of base RTT (the RTT CoDel's interval is
    // set for in RFC 8289), 10 Mbit/s (BDP 83 packets), 1000 packets
    // of buffer: over the second minute the sojourn stays within 2x of
    // target (a drop-tail queue would fill its 1000 packets, 1.2 s) and
    // the link stays busy.
    let service = 1_200_000_000; // 1500 B at 10 Mbit/s
    let mut c = built(serde_json::json!({}), None, None).unwrap();
    let (s, util) = aimd(c.as_mut(), 4, service, 100 * MS, 120_000 * MS, 60_000 * MS);
    let mean = s.iter().sum::<Time>() as f64 / s.len() as f64 / MS as f64;
    assert!((2.5..=10.0).contains(&mean), "mean sojourn {mean:.2} ms");
    assert!(util > 0.95, "utilisation {util:.3}");
    assert!(c.backlog().packets < 100);
    let mut drop_tail = crate::net::qdisc::droptail::DropTail::new(DEFAULT_LIMIT, u64::MAX);
    let (s, _) = aimd(&mut drop_tail, 4, service, 100 * MS, 120_000 * MS, 60_000 * MS);
    let mean_tail = s.iter().sum::<Time>() as f64 / s.len() as f64 / MS as f64;
    assert!(mean_tail > 10.0 * mean, "drop-tail mean sojourn {mean_tail:.1} ms");
}
