//! Loss recovery on random networks, every congestion control, all three
//! recoveries and SACK with the Linux profile's mechanisms (PRR, RACK-TLP,
//! F-RTO, undo, the Linux receiver with D-SACK): what the drop and
//! retransmission trace must show.
//!
//! tcplab's paths are static FIFO routes, so nothing is reordered or
//! duplicated and every duplicate ACK or SACK block comes from a lost copy
//! or from a needless resend. The invariants (derivations in
//! docs/validation.md, "Recovery invariants"):
//!
//! 1. No needless retransmission is started by duplicate ACKs or SACK (fast
//!    retransmit, NewReno partial ACK, SACK NextSeg): each repairs a copy
//!    that was dropped or lost. The retransmission storm of issue 25 broke
//!    this: duplicate ACKs that go-back-N provoked started false fast
//!    retransmits.
//! 2. Retransmissions = repairs + needless resends of the timer (at most one
//!    per timeout) + needless go-back-N resends (at most the segments
//!    outstanding at each timeout) + needless tail loss probes (at most one
//!    per probe); repairs <= lost copies.
//! 3. Fast recoveries <= loss events + timeouts for NewReno and SACK, a
//!    loss event being the flow's losses within one round trip of the first
//!    (less the bottleneck's transit: wire losses are stamped at a link's
//!    far end, queue drops at its near end): a new recovery needs a lost
//!    segment sent after the last one began, at least a round trip after the
//!    loss that began it. Plain Reno may recover once per hole, so only <=
//!    lost copies.
//! 4. cwnd <= 2 (P + B) + IW + 3, P the flow's smallest round-trip time
//!    times the bottleneck's rate in packets, B the bottleneck buffer: slow
//!    start at most doubles what the path held before the loss is seen,
//!    congestion avoidance grows only while cwnd-limited, and after a timeout
//!    at most one segment per ACK (RFC 3465 2.3), however far go-back-N's
//!    ACKs jump. FAST, which aims at `alpha` segments queued whatever the
//!    buffer, gets 2 (P + B + alpha). Checked where access links run at least
//!    twice the bottleneck's rate: slow start sends at twice the ACK rate,
//!    and a slower unlimited access queue would grow without bound.
//!
//! The bottleneck (r1->r2) is the fast drop-tail FIFO in about half the
//! cases, otherwise a queue discipline of `qdisc::catalog()` (drawn by
//! index, so a new discipline is drawn without touching this file) with its
//! default parameters, the case's buffer as `limit_packets` and, where the
//! discipline has one, its `ecn` parameter drawn; each case draws the
//! flows' ECN feedback (off, classic, accecn; an algorithm that needs more,
//! DCTCP or Prague, gets its default, AccECN). The invariants above need no
//! change for them:
//! - an ECN echo reduces the window through CWR, counted apart
//!   (`SenderStats::ecn_reductions`), never as a fast recovery, so 3 still
//!   bounds fast recoveries by losses alone;
//! - 1 and 2 read the drop trace, where an AQM drop (cause `aqm`, at
//!   enqueue or, CoDel's, at dequeue) and FQ-CoDel's overflow drop of
//!   packets already queued in the fattest flow are rows like any other,
//!   stamped when the queue gives the packet up; each flow's queue stays
//!   FIFO, so duplicate ACKs still come only from lost copies, and a loss
//!   stamped later than its arrival only delays the dupACKs it causes, so
//!   3's event window still holds;
//! - 4's B is the discipline's packet limit: a discipline holds at most it.
//!
//! 5. Every link's counters agree with each other and with the drop trace:
//!    marks <= packets in (with default parameters a queue marks a packet
//!    at most once: CoDel's `ce_threshold` is off), AQM drops <= drops, the trace's `queue` and `aqm` rows are the link's
//!    drops and its `aqm` rows its AQM drops, its `wire` rows its losses; a
//!    link without a discipline, or whose discipline does not mark (no
//!    `ecn`, or `ecn` off), or that no ECN-capable flow crosses, marks
//!    nothing; a link without a discipline has no AQM drops and no sojourn
//!    statistics.

mod common;

use common::{assert_conservation, recovery_account};
use proptest::prelude::*;
use tcplab_core::cc::{self, EcnMode};
use tcplab_core::net::qdisc;
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::*;
use tcplab_core::trace::DropCause;

#[derive(Debug, Clone)]
struct Case {
    flows: usize,
    algorithm: usize,
    recovery: u8,
    rate: f64,
    rtt: f64,
    buffer: u64,
    access_factor: Vec<f64>,
    access_delay: Vec<f64>,
    ack_buffer: Option<u64>,
    delack: bool,
    loss: f64,
    iw: f64,
    /// The bottleneck's discipline, an index into `qdisc::catalog()`
    /// (modulo its length); `None`: the fast drop-tail FIFO.
    discipline: Option<usize>,
    /// The discipline's `ecn` parameter, where it has one.
    qdisc_ecn: bool,
    /// The flows' ECN feedback: off, classic, accecn (at least what the
    /// algorithm needs).
    ecn: u8,
}

/// Whether the algorithm sets the window itself (BBR): it runs on SACK only.
fn controls_window(name: &str) -> bool {
    let spec = CcSpec { algorithm: name.into(), params: Default::default() };
    cc::build(&spec, "cc").unwrap().controls_window()
}

/// What the algorithm needs of ECN.
fn ecn_use(name: &str) -> cc::EcnUse {
    let spec = CcSpec { algorithm: name.into(), params: Default::default() };
    cc::build(&spec, "cc").unwrap().ecn()
}

/// Whether the discipline of `q` may mark: it has an `ecn` parameter and it
/// is on (given, or by default). Other parameters keep their defaults, so
/// nothing else marks (CoDel's `ce_threshold` is off).
fn may_mark(q: &QueueSpec) -> bool {
    let Some(name) = &q.discipline else { return false };
    let info = qdisc::catalog().into_iter().find(|i| i.name == name.as_str()).unwrap();
    match info.params.iter().find(|p| p.name == "ecn") {
        // Without an `ecn` switch: drop-tail never marks, DualPI2 always
        // marks ECN-capable packets (RFC 9332: classic ECT(0) with p_C, L4S
        // with its own probability).
        None => info.name != "droptail",
        Some(p) => q.params.get("ecn").and_then(|v| v.as_bool()).unwrap_or(p.default == "true"),
    }
}

fn spec(c: &Case) -> RunSpec {
    let algos = cc::catalog();
    let mut d = Dumbbell::new(c.flows, c.rate, c.rtt, c.buffer);
    d.algorithm = algos[c.algorithm % algos.len()].name.to_string();
    // 3: SACK with every Linux mechanism; BBR draws 2 or 3.
    let mut pick = c.recovery as usize % 4;
    if controls_window(&d.algorithm) && pick < 2 {
        pick += 2;
    }
    d.recovery = [Recovery::Reno, Recovery::NewReno, Recovery::Sack, Recovery::Sack][pick];
    d.duration = 15.0;
    d.measure_start = 5.0;
    d.sample_interval = 0.01;
    d.init_cwnd = c.iw;
    let mut s = d.spec();
    s.loss_trace = true;
    for (i, l) in s.links.iter_mut().enumerate().skip(2) {
        l.rate_bps = c.rate * c.access_factor[i % c.access_factor.len()];
        l.delay = c.access_delay[i % c.access_delay.len()];
    }
    s.links[1].queue.limit_packets = c.ack_buffer;
    if c.loss > 0.0 {
        s.links[0].loss = Some(LossSpec::Bernoulli { p: c.loss });
    }
    if let Some(k) = c.discipline {
        let all = qdisc::catalog();
        let info = &all[k % all.len()];
        let q = &mut s.links[0].queue;
        q.discipline = Some(info.name.to_string());
        if info.params.iter().any(|p| p.name == "ecn") {
            q.params.insert("ecn".into(), c.qdisc_ecn.into());
        }
    }
    // An algorithm that needs more than the draw (DCTCP, Prague) keeps its
    // default (AccECN).
    let need = ecn_use(&d.algorithm).needs;
    let ecn = [EcnMode::Off, EcnMode::Classic, EcnMode::AccEcn][c.ecn as usize % 3];
    let ecn = if ecn < need { None } else { Some(ecn) };
    for (i, f) in s.flows.iter_mut().enumerate() {
        f.delayed_ack = c.delack;
        f.start = 0.05 * i as f64;
        f.ecn = ecn;
        if pick == 3 {
            (f.prr, f.rack, f.tlp, f.frto, f.undo, f.dsack) = (true, true, true, true, true, true);
            (f.ack_policy, f.delayed_ack) = (AckPolicy::Linux, false);
        }
    }
    s
}

/// Smallest round-trip time of flow `i` (0-based): propagation over the
/// bottleneck and the flow's access links both ways, plus the serialization
/// of a data packet on each forward link and of an ACK on each reverse link
/// (store and forward).
fn path_rtt(s: &RunSpec, i: usize) -> f64 {
    let f = &s.flows[i];
    let hop = |l: &LinkSpec, bytes: u32| l.delay + 8.0 * bytes as f64 / l.rate_bps;
    let mut rtt = hop(&s.links[0], f.packet_size) + hop(&s.links[1], f.ack_size);
    for l in &s.links[2..] {
        let forward = l.src == f.src || l.dst == f.dst;
        let reverse = l.dst == f.src || l.src == f.dst;
        if forward {
            rtt += hop(l, f.packet_size);
        } else if reverse {
            rtt += hop(l, f.ack_size);
        }
    }
    rtt
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let s = spec(c);
    let r = tcplab_core::run(s.clone()).unwrap();
    if std::env::var("RI_VERBOSE").is_ok() {
        let q = &s.links[0].queue;
        let qd = q
            .discipline
            .as_deref()
            .map_or("fifo".to_string(), |d| format!("{d}{}", if may_mark(q) { "+ecn" } else { "" }));
        let ecn = s.flows[0].ecn.map_or("default", |m| m.name());
        let l = &r.links[0];
        eprintln!(
            "{} flows {} {:?} ecn {ecn} C {:.1e} rtt {:.3} B {} {qd} drops {} aqm {} marks {} events {}",
            c.flows,
            s.flows[0].cc.algorithm,
            s.flows[0].recovery,
            c.rate,
            c.rtt,
            c.buffer,
            l.drops,
            l.aqm_drops,
            l.marks,
            r.meta.events
        );
    }
    assert_conservation(&r);
    // 5: the links' counters, against each other and the drop trace.
    let ect = s.flows.iter().any(|f| {
        let u = ecn_use(&f.cc.algorithm);
        f.ecn.unwrap_or(u.default_mode) != EcnMode::Off
    });
    for (k, l) in r.links.iter().enumerate() {
        let ctx = format!("{c:?}\nlink {l:?}");
        let rows = |cause: DropCause| {
            (0..r.drop_trace.len())
                .filter(|&i| r.drop_trace.link[i] == k as u32 && r.drop_trace.cause[i] == cause as u8)
                .count() as u64
        };
        let (queue, aqm, wire) = (rows(DropCause::Queue), rows(DropCause::Aqm), rows(DropCause::Wire));
        prop_assert!(l.marks <= l.packets_in, "more marks than packets in\n{}", ctx);
        prop_assert!(l.aqm_drops <= l.drops, "more AQM drops than drops\n{}", ctx);
        prop_assert_eq!(
            (queue + aqm, aqm, wire),
            (l.drops, l.aqm_drops, l.losses),
            "drop trace (queue + aqm, aqm, wire rows) and link counters disagree\n{}",
            ctx
        );
        let q = &s.links[k].queue;
        if !(ect && may_mark(q)) {
            prop_assert_eq!(l.marks, 0, "marks where nothing may be marked\n{}", ctx);
        }
        if q.discipline.is_none() {
            prop_assert_eq!(l.aqm_drops, 0, "AQM drops without a discipline\n{}", ctx);
            prop_assert!(l.sojourn_p50.is_none(), "sojourn statistics without a discipline\n{}", ctx);
        }
    }
    let buffer = c.buffer as f64;
    for (i, f) in r.flows.iter().enumerate() {
        let rtt = path_rtt(&s, i);
        // A loss event's window: one round trip, less the bottleneck's own
        // transit, as a wire loss is stamped at the link's far end and a
        // queue drop at its near end.
        let b = &s.links[0];
        let window = rtt - b.delay - 8.0 * s.flows[i].packet_size as f64 / b.rate_bps;
        let a = recovery_account(&r, i as u32, window);
        let ctx = format!("{c:?}\nflow {}: {f:?}\n{a:?}", f.name);
        prop_assert_eq!(a.needless_dupack, 0, "needless retransmissions started by duplicate ACKs or SACK\n{}", ctx);
        prop_assert!(a.needless_rto <= f.timeouts, "more needless timer resends than timeouts\n{}", ctx);
        prop_assert!(
            a.needless_after_rto <= a.go_back_n_window,
            "needless go-back-N beyond the outstanding windows\n{}",
            ctx
        );
        prop_assert_eq!(
            f.retransmits,
            a.repairs + a.needless_rto + a.needless_after_rto + a.needless_tlp,
            "trace and counter disagree\n{}",
            ctx
        );
        prop_assert!(a.repairs <= a.lost_copies, "more repairs than lost copies\n{}", ctx);
        if s.flows[i].recovery == Recovery::Reno {
            prop_assert!(f.fast_recoveries <= a.lost_copies, "\n{}", ctx);
        } else {
            prop_assert!(
                f.fast_recoveries <= a.loss_events + f.timeouts,
                "more fast recoveries than loss events plus timeouts\n{}",
                ctx
            );
        }
        // 4: the window against what the path holds.
        let pipe = c.rate * rtt / (8.0 * s.flows[i].packet_size as f64);
        // FAST aims to park `alpha` (100) segments in queues whatever the
        // buffer, so its window may reach the pipe plus alpha.
        let aim = if s.flows[i].cc.algorithm == "fast" { 100.0 } else { 0.0 };
        let mut bound = 2.0 * (pipe + buffer + aim) + c.iw + 3.0;
        if controls_window(&s.flows[i].cc.algorithm) {
            // No stall: BBR does not back off on loss (up to 3 % here), so
            // every BBR flow delivers in the 10-s measurement window. Not
            // through a queue that marks ECN-capable packets: BBR v1 does
            // not answer marks, so they never bring the queue down, and the
            // marking probability becomes a drop probability for the
            // packets sent Not-ECT (classic ECN's retransmissions, Linux
            // tcp_ecn_send): at RED's 0.4-0.6 a flow in timeout recovery
            // can lose retransmission after retransmission and back off
            // past the run's end (RI_SEED=3: three BBR flows, classic ECN,
            // RED with ecn at 1 Mbit/s; the other two flows share the link).
            if !(ect && may_mark(&s.links[0].queue)) {
                prop_assert!(f.goodput_bps > 0.0, "a BBR flow stalled\n{}", ctx);
            }
            // BBR's target: at most the startup gain 2/ln 2 x its BDP (its
            // bandwidth cannot exceed C, its min RTT the path's RTT plus the
            // buffer's drain time) + 3, plus the ACK-aggregation allowance,
            // capped at 100 ms of the bandwidth (bbr_extra_acked_max_us).
            bound = 2.89 * (pipe + buffer) + c.rate * 0.1 / (8.0 * s.flows[i].packet_size as f64) + c.iw + 3.0;
        }
        let peak = r
            .flow_ts
            .flow
            .iter()
            .zip(&r.flow_ts.cwnd)
            .filter(|(id, _)| **id == i as u32)
            .map(|(_, w)| *w)
            .fold(0.0, f64::max);
        prop_assert!(
            peak.max(f.cwnd) <= bound,
            "cwnd {} above 2 (P + B) + IW + 3 = {bound:.1} (P = {pipe:.1}, B = {buffer})\n{}",
            peak.max(f.cwnd),
            ctx
        );
    }
    Ok(())
}

fn cases() -> impl Strategy<Value = Case> {
    (
        (1usize..5, 0usize..64, 0u8..4, 1e6f64..100e6, 0.002f64..0.2, 1u64..300),
        (
            proptest::collection::vec(2.0f64..20.0, 4),
            proptest::collection::vec(0.0f64..0.01, 4),
            prop_oneof![Just(None), (2u64..200).prop_map(Some)],
            any::<bool>(),
            prop_oneof![3 => Just(0.0), 1 => 0.0f64..0.03],
            prop_oneof![Just(2.0), Just(10.0)],
        ),
        // Drawn last, so the cases above keep their networks.
        (prop_oneof![Just(None), (0usize..64).prop_map(Some)], proptest::bool::weighted(0.67), 0u8..3),
    )
        .prop_map(
            |(
                (flows, algorithm, recovery, rate, rtt, buffer),
                (access_factor, access_delay, ack_buffer, delack, loss, iw),
                (discipline, qdisc_ecn, ecn),
            )| Case {
                flows,
                algorithm,
                recovery,
                rate,
                rtt,
                buffer,
                access_factor,
                access_delay,
                ack_buffer,
                delack,
                loss,
                iw,
                discipline,
                qdisc_ecn,
                ecn,
            },
        )
}

proptest! {
    // A fixed seed keeps CI reproducible. Explore more before landing a
    // change to the sender, e.g. RI_SEED=7 PROPTEST_CASES=3000 cargo test
    // --release --test recovery_invariants (RI_DUMP=FILE writes a failing
    // run's spec as JSON).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        rng_seed: proptest::test_runner::RngSeed::Fixed(std::env::var("RI_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_2025)),
        ..ProptestConfig::default()
    })]
    #[test]
    fn random_networks_recover_without_storms(c in cases()) {
        let r = check(&c);
        if let (Err(_), Ok(path)) = (&r, std::env::var("RI_DUMP")) {
            // The failing run's spec, to replay it from Python or the CLI.
            std::fs::write(path, serde_json::to_string(&spec(&c)).unwrap()).unwrap();
        }
        r?;
    }
}

/// Linux's `tcp_is_cwnd_limited`: the window grows only while it limits
/// the sender. A flow held back by the receiver window (20 segments on a
/// path that holds about 70) must keep its window near 20, whatever the
/// algorithm: each ACK may add at most the segments it acknowledges (slow
/// start) to a window the sender has just filled.
#[test]
fn the_window_grows_only_while_it_limits_the_sender() {
    let mut bad = vec![];
    for info in cc::catalog() {
        // BBR (Linux `cong_control`) moves cwnd toward its model's target
        // whether or not the window limits the sender: at most the largest
        // gain (2/ln 2 = 2.89) x the BDP it measured (here the receiver
        // window: delivery never exceeds 20 segments a round trip) + 3,
        // plus an ACK-aggregation allowance of at most that BDP again.
        let bbr = controls_window(info.name);
        let limit = if bbr { 2.89 * 20.0 + 3.0 + 20.0 } else { 22.0 };
        for rec in [Recovery::NewReno, Recovery::Sack] {
            if bbr && rec != Recovery::Sack {
                continue;
            }
            let mut spec = common::line(10e6, 1000, rec, 20.0);
            spec.sample_interval = 0.01;
            spec.flows[0].cc.algorithm = info.name.to_string();
            spec.flows[0].rwnd_packets = Some(20);
            let r = tcplab_core::run(spec).unwrap();
            let peak = r.flow_ts.cwnd.iter().copied().fold(0.0, f64::max).max(r.flows[0].cwnd);
            if peak > limit {
                bad.push(format!("{} ({rec:?}): cwnd reached {peak}", info.name));
            }
        }
    }
    assert!(bad.is_empty(), "with a receiver window of 20:\n{}", bad.join("\n"));
}
