use super::*;
use crate::cc::{AckSample, LossEvent};
use crate::net::packet::SackBlock;
use crate::net::packet::{tcp_flags, SackBlocks};
use crate::net::Ecn;
use crate::net::Packet;
use crate::sim::time::from_secs;
use crate::spec::FlowSpec;
use crate::tcp::receiver::ACE_INIT;

fn sender(recovery: &str, guard: DupAckGuard) -> (Sender, SegmentMap) {
    let f: FlowSpec = serde_json::from_value(serde_json::json!({
        "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": "reno"}, "recovery": recovery,
    }))
    .unwrap();
    let cfg = SenderConfig {
        flow: 0,
        recovery: f.recovery,
        dupthresh: 3,
        dupack_guard: guard,
        init_cwnd: 10.0,
        init_ssthresh: INFINITE_SSTHRESH,
        rwnd: u64::MAX,
        limited_transmit: false,
        restart_after_idle: true,
        header_size: f.header_size,
        ns2_accounting: false,
        init_rto: 1.0,
        min_rto: 0.2,
        max_rto: 60.0,
        rto_mode: crate::spec::RtoMode::Linux,
        prr: f.prr,
        rack: f.rack,
        tlp: f.tlp,
        frto: f.frto,
        undo: f.undo,
        ..SenderConfig::from_flow(0, &f)
    };
    let mut s = Sender::new(cfg, crate::cc::build(&f.cc, "f").unwrap());
    s.started = true;
    s.app_limit = u64::MAX;
    (s, SegmentMap::new(&f))
}

/// RFC 6582 3.2 step 1 and section 4: which `dupthresh`-th duplicate
/// ACK may start a fast retransmit, by guard, `snd_una` against
/// `recover` (one past the highest segment sent when the last recovery
/// or timeout began) and the last cumulative advance.
#[test]
fn fast_retransmit_needs_an_ack_that_covers_more_than_recover() {
    let case = |recovery: &str, guard, una: u64, prev: u64, after_rto: bool, cwnd: f64| {
        let (mut s, _) = sender(recovery, guard);
        (s.snd_una, s.prev_una, s.recover, s.last_cut_by_rto) = (una, prev, 100, after_rto);
        s.w.cwnd = cwnd;
        s.may_fast_retransmit()
    };
    use DupAckGuard::*;
    for g in [Careful, LessCareful, AckHeuristic] {
        assert!(case("newreno", g, 101, 90, true, 10.0), "{g:?}: covers more than recover");
        assert!(!case("newreno", g, 60, 20, true, 10.0), "{g:?}: below recover after a long jump");
    }
    // Exactly `recover`: what go-back-N's needless resends produce.
    assert!(!case("newreno", Careful, 100, 40, true, 10.0));
    assert!(case("newreno", LessCareful, 100, 40, true, 10.0), "ns-2's lessCareful_");
    assert!(!case("newreno", AckHeuristic, 100, 40, true, 10.0), "advance of 60 > 4 segments");
    // RFC 6582 4.1: "the congestion window is greater than SMSS bytes and
    // the difference between highest_ack and prev_highest_ack is at most
    // 4*SMSS bytes".
    assert!(case("newreno", AckHeuristic, 60, 56, true, 2.0));
    assert!(!case("newreno", AckHeuristic, 60, 55, true, 2.0), "advance of 5");
    assert!(!case("newreno", AckHeuristic, 60, 56, true, 1.0), "cwnd of one segment");
    // Reno (ns-2's RenoTcpAgent) checks `recover` only after a timeout.
    assert!(case("reno", Careful, 60, 20, false, 10.0));
    assert!(!case("reno", Careful, 60, 20, true, 10.0));
    // Before any recovery (recover = 0) the first segment's loss may be
    // fast-retransmitted (ns-2's bugfix_ss_).
    let (s, _) = sender("newreno", Careful);
    assert!(s.recover == 0 && s.snd_una == 0 && s.may_fast_retransmit());
}

fn ack(s: &mut Sender, map: &SegmentMap, a: u64, sacked: &[(u64, u64)]) -> Vec<Packet> {
    let mut b = SackBlocks::NONE;
    for (i, &(lo, hi)) in sacked.iter().enumerate() {
        b.blocks[i] = SackBlock { start: (lo - a) as u32, len: (hi - lo) as u32 };
        b.n += 1;
    }
    let mut out = vec![];
    s.on_ack(1_000_000_000, &Packet::ack(a, 40), &b, map, &mut out);
    out
}

/// RFC 6675 section 2: with SACK, a duplicate ACK is one whose SACK
/// information covers data not SACKed before. An ACK answering a
/// duplicate segment repeats known blocks and is no loss signal.
#[test]
fn a_sack_sender_counts_only_acks_that_sack_new_data_as_duplicates() {
    let (mut s, map) = sender("sack", DupAckGuard::Careful);
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    assert_eq!(out.len(), 10);
    // Segment 0 is lost, 1 arrives: one new SACKed segment.
    ack(&mut s, &map, 0, &[(1, 2)]);
    for _ in 0..5 {
        ack(&mut s, &map, 0, &[(1, 2)]); // nothing new
    }
    assert_eq!((s.dupacks, s.state), (1, CaState::Open));
    ack(&mut s, &map, 0, &[(1, 3)]);
    ack(&mut s, &map, 0, &[(1, 4)]);
    assert_eq!((s.dupacks, s.state, s.stats.fast_recoveries), (3, CaState::Recovery, 1));
}

/// RFC 6937 section 3 (PRR-SSRB) as Linux's `tcp_cwnd_reduction`: 20
/// segments out, the first lost, one SACK per ACK. While pipe exceeds
/// ssthresh the sender may have sent, in all, CEIL(prr_delivered *
/// ssthresh / RecoverFS) segments since recovery began (RecoverFS =
/// cwnd at entry, as Linux's `prior_cwnd`): about one per two ACKs for
/// Reno's halving, the first of them the fast retransmit. When the
/// retransmission is acknowledged, recovery ends with cwnd = ssthresh.
#[test]
fn prr_sends_in_proportion_to_delivery_and_leaves_recovery_at_ssthresh() {
    let (mut s, map) = sender("sack", DupAckGuard::Careful);
    s.cfg.prr = true;
    s.w.cwnd = 20.0;
    s.w.ssthresh = 19.0;
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    assert_eq!(out.len(), 20);
    let mut sent_in_recovery = 0u64;
    let mut retransmitted_first = false;
    for k in 1..20u64 {
        let out = ack(&mut s, &map, 0, &[(1, k + 1)]);
        if k < 3 {
            assert!(
                s.state == CaState::Open && out.len() == 1,
                "limited by cwnd: one new segment per SACK before recovery"
            );
            continue;
        }
        assert_eq!(s.state, CaState::Recovery);
        if k == 3 {
            retransmitted_first = out.first().is_some_and(|p| p.seq == 0 && p.retransmit());
        }
        sent_in_recovery += out.len() as u64;
        let prr_delivered = k - 2; // the ACK that began recovery counts its own SACK
        let ssthresh = s.w.ssthresh;
        let pipe = s.in_flight() as f64;
        if pipe > ssthresh {
            let allowed = (ssthresh * prr_delivered as f64 / 20.0).ceil() as u64;
            assert_eq!(
                sent_in_recovery,
                allowed.max(1),
                "after SACK {k}: PRR-SSRB allows {allowed}, sent {sent_in_recovery}"
            );
        }
    }
    assert!(retransmitted_first, "the ACK that starts recovery sends the fast retransmit");
    let ss = s.w.ssthresh;
    assert!(ss < 20.0, "reno halves ssthresh: {ss}");
    // The retransmission arrives: everything up to the highest sent is acknowledged.
    let high = s.high_data;
    ack(&mut s, &map, high, &[]);
    assert_eq!(s.state, CaState::Open);
    // Leaving recovery sets cwnd = ssthresh, and that ACK already grows it (Linux).
    assert!(s.w.cwnd >= ss && s.w.cwnd <= ss + 1.0, "cwnd {} after recovery, ssthresh {ss}", s.w.cwnd);
}

/// A window-controlling algorithm for the tests: a fixed window and
/// pacing rate; it records the rate samples and state changes it gets.
struct Fixed {
    cwnd: f64,
    rate_bps: f64,
    log: std::sync::Arc<std::sync::Mutex<(Vec<crate::cc::RateSample>, Vec<CaState>)>>,
}

impl CongestionControl for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn on_ack(&mut self, _w: &mut Window, _s: &AckSample) {
        panic!("a window-controlling algorithm gets cong_control, not on_ack");
    }
    fn ssthresh(&mut self, w: &Window, _e: LossEvent, _f: u64, _now: f64) -> f64 {
        w.ssthresh
    }
    fn controls_window(&self) -> bool {
        true
    }
    fn init(&mut self, w: &mut Window, _c: &Conn) {
        w.cwnd = self.cwnd;
    }
    fn cong_control(&mut self, w: &mut Window, rs: &crate::cc::RateSample, _c: &mut Conn) {
        self.log.lock().unwrap().0.push(*rs);
        w.cwnd = self.cwnd;
    }
    fn on_state(&mut self, _w: &mut Window, new: CaState, _c: &Conn) {
        self.log.lock().unwrap().1.push(new);
    }
    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.rate_bps)
    }
}

type Log = std::sync::Arc<std::sync::Mutex<(Vec<crate::cc::RateSample>, Vec<CaState>)>>;

fn fixed_sender(cwnd: f64, rate_bps: f64) -> (Sender, SegmentMap, Log) {
    let (s, map) = sender("sack", DupAckGuard::Careful);
    let log = Log::default();
    let cc = Box::new(Fixed { cwnd, rate_bps, log: log.clone() });
    let mut s2 = Sender::new(s.cfg.clone(), cc);
    s2.started = true;
    s2.app_limit = u64::MAX;
    (s2, map, log)
}

/// Sends what the sender lets out from `t`, following its pacing
/// wake-ups until `until`; returns (time, segment) of each packet.
fn run_paced(s: &mut Sender, map: &SegmentMap, t: Time, until: Time) -> Vec<(Time, u64)> {
    let mut sent = vec![];
    let mut now = t;
    loop {
        let mut out = vec![];
        s.pace_wanted = None;
        s.transmit(now, map, &mut out);
        sent.extend(out.iter().map(|p| (now, p.seq)));
        match s.pace_wanted {
            Some(w) if w <= until => now = w,
            _ => return sent,
        }
    }
}

/// Linux `tcp_update_skb_after_send`: after the first 10 packets (not
/// paced, as sch_fq), each leaves its payload at the pacing rate after
/// the one before; a window-controlling algorithm is initialised with
/// `init` and never sees `on_ack`.
#[test]
fn paced_packets_leave_at_the_pacing_rate_after_the_first_ten() {
    let rate = 10e6; // bit/s of payload: 1448 B every 1.1584 ms
    let (mut s, map, _) = fixed_sender(100.0, rate);
    let sent = run_paced(&mut s, &map, 0, from_secs(0.05));
    assert_eq!(s.w.cwnd, 100.0, "init set the window");
    assert!(sent[..10].iter().all(|&(t, _)| t == 0), "{:?}", &sent[..12]);
    let gap = from_secs(map.app_bytes(0) as f64 * 8.0 / rate);
    for w in sent[10..].windows(2) {
        assert_eq!(w[1].0 - w[0].0, gap);
    }
    // data_segs_out >= 10 at the 10th packet: it is the first one paced.
    assert_eq!(sent[10].0, gap);
    assert!(sent.len() > 40, "{}", sent.len());
}

/// Linux `tcp_update_skb_after_send`'s jitter allowance: a packet that
/// leaves late shortens the next gap by up to half a gap.
#[test]
fn a_late_departure_shortens_the_next_gap_by_at_most_half() {
    let rate = 10e6;
    let (mut s, map, _) = fixed_sender(100.0, rate);
    let first = run_paced(&mut s, &map, 0, from_secs(0.02));
    assert!(first.len() > 10, "past the 10 unpaced packets");
    let gap = from_secs(map.app_bytes(0) as f64 * 8.0 / rate);
    // Late by a tenth of a gap, then by five gaps: one packet leaves,
    // and the next is due a gap later less the allowance.
    for (late, expect) in [(gap / 10, gap - gap / 10), (5 * gap, gap / 2)] {
        let t = s.pace_next + late;
        let mut out = vec![];
        s.transmit(t, &map, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(s.pace_next - t, expect, "late by {late} ps");
        let mut out2 = vec![];
        s.transmit(s.pace_next, &map, &mut out2);
        assert_eq!(out2.len(), 1);
    }
}

/// tcp_rate.c through the sender: a window (200 segments) larger than
/// the pacing rate fills in a round trip, every segment ACKed one RTT
/// after it left: after the first windows the samples measure the
/// pacing rate, the rate at which the segments were delivered.
#[test]
fn rate_samples_through_the_sender_measure_the_delivery_rate() {
    let rate = 10e6;
    let (mut s, map, log) = fixed_sender(200.0, rate);
    let rtt = from_secs(0.1);
    // Events: each packet's ACK one RTT after it left, and the pacing wake-ups.
    let mut flight: VecDeque<(Time, u64)> = VecDeque::new();
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    flight.extend(out.iter().map(|p| (0, p.seq)));
    let mut wake = s.pace_wanted.take();
    loop {
        let ack_t = flight.front().map(|&(t, _)| t + rtt);
        let now = match (ack_t, wake) {
            (Some(a), Some(w)) => a.min(w),
            (a, w) => a.or(w).unwrap(),
        };
        if now > from_secs(1.0) {
            break;
        }
        let mut out = vec![];
        if ack_t == Some(now) {
            let (_, q) = flight.pop_front().unwrap();
            s.on_ack(now, &Packet::ack(q + 1, 40), &SackBlocks::NONE, &map, &mut out);
        } else {
            s.transmit(now, &map, &mut out);
        }
        flight.extend(out.iter().map(|p| (now, p.seq)));
        wake = s.pace_wanted.take().or(wake.filter(|&w| w > now));
    }
    let log = log.lock().unwrap();
    let samples: Vec<_> = log.0.iter().filter(|r| r.has_rate()).collect();
    assert!(samples.len() > 100, "{}", samples.len());
    let payload = map.app_bytes(0) as f64 * 8.0;
    // After the first two round trips, every sample is the pacing rate within 2 %.
    let skip = samples.iter().position(|r| r.prior_delivered > 200).unwrap();
    for r in &samples[skip..] {
        let bps = r.delivered as f64 * payload / r.interval;
        assert!((bps / rate - 1.0).abs() < 0.02, "{bps} from {r:?}");
        assert!(!r.is_app_limited && r.losses == 0 && r.acked_sacked == 1);
    }
    assert!(log.1.is_empty(), "no state change without loss: {:?}", log.1);
}

fn ack_at(s: &mut Sender, map: &SegmentMap, ms: f64, a: u64, sacked: &[(u64, u64)]) -> Vec<Packet> {
    let mut b = SackBlocks::NONE;
    for (i, &(lo, hi)) in sacked.iter().enumerate() {
        b.blocks[i] = SackBlock { start: (lo - a) as u32, len: (hi - lo) as u32 };
        b.n += 1;
    }
    let mut out = vec![];
    s.on_ack(from_secs(ms / 1000.0), &Packet::ack(a, 40), &b, map, &mut out);
    out
}

fn rack_sender() -> (Sender, SegmentMap) {
    let (mut s, map) = sender("sack", DupAckGuard::Careful);
    s.cfg.rack = true;
    s.cfg.prr = true;
    (s, map)
}

/// RFC 8985 6.2 and Linux `tcp_rack_detect_loss` / `tcp_rack_reo_wnd`:
/// one SACK is no DupThresh, but the hole below it, sent before the
/// SACKed segment, becomes lost once RACK.rtt + reo_wnd has passed
/// since it was sent, reo_wnd = min_rtt / 4 while fewer than DupThresh
/// segments are SACKed and no reordering was seen. The reordering
/// timer (plus Linux's 2 ms TCP_TIMEOUT_MIN) replaces the RTO, and its
/// expiry starts fast recovery with the retransmission of the hole.
#[test]
fn rack_marks_a_hole_lost_after_rtt_plus_reordering_window() {
    let (mut s, map) = rack_sender();
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    assert_eq!(out.len(), 10);
    ack_at(&mut s, &map, 100.0, 1, &[]); // min_rtt = srtt = 100 ms
    let out = ack_at(&mut s, &map, 100.1, 1, &[(2, 3)]); // segment 1 missing
    assert_eq!(s.state, CaState::Open);
    assert!(out.iter().all(|p| !p.retransmit()));
    // Segment 1 was sent at 0 (before segment 2): overdue at RACK.rtt
    // (100.1 ms) + 25 ms after 0, i.e. in 25 ms.
    assert_eq!(s.timer, Timer::Reo);
    assert_eq!(s.rto_deadline, Some(from_secs(0.1001 + 0.025 + 0.002)));
    let mut out = vec![];
    s.on_timeout(s.rto_deadline.unwrap(), &map, &mut out);
    assert_eq!((s.state, s.stats.fast_recoveries), (CaState::Recovery, 1));
    assert_eq!(out.first().map(|p| (p.seq, p.retransmit())), Some((1, true)));
    assert_eq!(s.timer, Timer::Rto);
    // Without RACK the same ACKs leave the sender waiting for two more duplicates.
    let (mut c, map) = sender("sack", DupAckGuard::Careful);
    c.transmit(0, &map, &mut vec![]);
    ack_at(&mut c, &map, 100.0, 1, &[]);
    ack_at(&mut c, &map, 100.1, 1, &[(2, 3)]);
    assert_eq!((c.state, c.timer), (CaState::Open, Timer::Rto));
}

/// RFC 8985 6.2 (and section 9.4's lost-retransmission case), Linux
/// `tcp_rack_detect_loss` over retransmitted segments: a retransmission
/// is itself lost when a segment sent after it is SACKed and RACK.rtt
/// has passed since the resend (reo_wnd = 0 in recovery); it is taken
/// out of `retrans_out` and resent without waiting for the RTO.
#[test]
fn rack_detects_a_lost_retransmission() {
    let (mut s, map) = rack_sender();
    s.transmit(0, &map, &mut vec![]);
    ack_at(&mut s, &map, 100.0, 1, &[]);
    for k in 3..6 {
        ack_at(&mut s, &map, 100.0 + k as f64 * 0.01, 1, &[(2, k)]);
    }
    assert_eq!(s.state, CaState::Recovery);
    assert!(s.meta.flags(1) & RETX_OUT != 0, "segment 1 resent");
    let resent_at = s.meta.sent(1);
    // New data goes out after the resend (PRR lets some through); find
    // a segment first sent after it.
    let mut later = None;
    for k in 6..10 {
        let out = ack_at(&mut s, &map, 100.0 + k as f64 * 0.01, 1, &[(2, k)]);
        if let Some(p) = out.iter().find(|p| !p.retransmit()) {
            later = Some(p.seq);
            break;
        }
    }
    let later = later.expect("PRR sends new data in recovery");
    assert!(s.meta.sent(later) >= resent_at);
    // The resend of 1 is lost; `later` is SACKed 100 ms after it was sent.
    let t = to_secs(s.meta.sent(later)) * 1000.0 + 100.0;
    let rtx_before = s.stats.retransmits;
    let out = ack_at(&mut s, &map, t, 1, &[(2, 10), (later, later + 1)]);
    let resent_again = out.iter().any(|p| p.seq == 1 && p.retransmit())
        || s.meta.flags(1) & RETX_OUT == 0 && s.next_segment() == Some((1, true));
    assert!(resent_again, "RACK found the lost retransmission");
    assert_eq!(s.stats.timeouts, 0);
    assert!(s.stats.retransmits >= rtx_before);
}

/// RFC 8985 section 7 and Linux `tcp_schedule_loss_probe`,
/// `tcp_send_loss_probe`, `tcp_process_tlp_ack`: the last segment of a
/// burst is lost and no ACK will report it. With one segment out the
/// probe timer is min(2 SRTT + 200 ms, RTO); it resends the last
/// segment; the ACK that covers more than what was sent then proves
/// the probe repaired a loss, and the window is reduced at once
/// (ssthresh from the algorithm, cwnd = ssthresh), no RTO.
#[test]
fn tail_loss_probe_repairs_a_tail_loss_and_reduces_the_window() {
    let (mut s, map) = rack_sender();
    s.cfg.tlp = true;
    s.app_limit = 10;
    s.transmit(0, &map, &mut vec![]);
    assert_eq!(s.timer, Timer::Tlp, "new data schedules the probe");
    for a in 1..10u64 {
        ack_at(&mut s, &map, 100.0 + a as f64 * 0.01, a, &[]); // segment 9 lost
    }
    let now = from_secs(0.1 + 9.0 * 0.00001);
    let pto = (2.0 * s.rtt.srtt + 0.2).min(s.rtt.rto());
    assert_eq!((s.timer, s.rto_deadline), (Timer::Tlp, Some(now + from_secs(pto))));
    let mut out = vec![];
    s.on_timeout(s.rto_deadline.unwrap(), &map, &mut out);
    assert_eq!(out.iter().map(|p| (p.seq, p.retransmit())).collect::<Vec<_>>(), vec![(9, true)]);
    assert_eq!((s.stats.tlp_probes, s.stats.timeouts, s.timer), (1, 0, Timer::Rto));
    let cwnd = s.w.cwnd;
    s.app_limit = u64::MAX;
    let t = to_secs(s.rto_deadline.unwrap()) * 1000.0 - 100.0;
    let out = ack_at(&mut s, &map, t, 10, &[]); // the probe arrived
    assert_eq!(s.stats.tlp_recoveries, 0, "an ACK of exactly tlp_high proves nothing yet");
    assert!(!out.is_empty());
    ack_at(&mut s, &map, t + 50.0, 11, &[]);
    assert_eq!(s.stats.tlp_recoveries, 1);
    assert!(s.w.cwnd < cwnd && s.w.cwnd == s.w.ssthresh, "cwnd {} -> {}, ssthresh {}", cwnd, s.w.cwnd, s.w.ssthresh);
    assert_eq!((s.state, s.stats.fast_recoveries, s.stats.timeouts), (CaState::Open, 0, 0));
}

/// RACK, PRR, F-RTO and undo; no TLP, whose probe would otherwise
/// come before the RTO these tests are about.
fn linux_sender() -> (Sender, SegmentMap) {
    let (mut s, map) = rack_sender();
    s.cfg.frto = true;
    s.cfg.undo = true;
    (s, map)
}

/// RFC 5682 section 3 (SACK-enhanced F-RTO) as Linux
/// `tcp_process_loss`: after a timeout the first ACK that advances
/// snd_una lets new data out instead of the segments the timeout
/// marked lost (step 2.b); when the next ACK delivers a segment that
/// was never retransmitted, the timeout was spurious (step 3.b) and
/// `tcp_try_undo_loss` restores cwnd and ssthresh.
#[test]
fn frto_finds_a_spurious_timeout_and_undo_restores_the_window() {
    let (mut s, map) = linux_sender();
    s.transmit(0, &map, &mut vec![]);
    let (cwnd, ssthresh) = (s.w.cwnd, s.w.ssthresh);
    // No ACK within the initial RTO (1 s): the ACKs are only late.
    let mut out = vec![];
    s.on_timeout(from_secs(1.0), &map, &mut out);
    assert_eq!((s.state, s.w.cwnd), (CaState::Loss, 1.0));
    assert_eq!(out.iter().map(|p| (p.seq, p.retransmit())).collect::<Vec<_>>(), vec![(0, true)]);
    // The ACK of segment 0 (its original): new data, not segment 1, goes out.
    let out = ack_at(&mut s, &map, 1001.0, 1, &[]);
    assert!(
        !out.is_empty() && out.iter().all(|p| !p.retransmit() && p.seq >= 10),
        "F-RTO step 2.b sends new data: {out:?}"
    );
    assert_eq!(s.state, CaState::Loss);
    // Segment 1, never retransmitted, is acknowledged: spurious.
    ack_at(&mut s, &map, 1001.1, 2, &[]);
    assert_eq!((s.state, s.stats.spurious_rtos, s.stats.undos), (CaState::Open, 1, 1));
    assert!(
        s.w.cwnd >= cwnd && s.w.ssthresh == ssthresh,
        "cwnd {} (was {cwnd}), ssthresh {} (was {ssthresh})",
        s.w.cwnd,
        s.w.ssthresh
    );
    assert_eq!(s.lost_high, s.snd_una, "the timeout's loss marks are gone");
}

/// RFC 5682 step 3.a: when the ACK after F-RTO's new data only SACKs
/// that new data (a duplicate ACK), the loss was real: the window stays
/// reduced and the marked segments are retransmitted.
#[test]
fn frto_keeps_the_reduction_when_the_loss_was_real() {
    let (mut s, map) = linux_sender();
    s.transmit(0, &map, &mut vec![]);
    s.on_timeout(from_secs(1.0), &map, &mut vec![]);
    let out = ack_at(&mut s, &map, 1001.0, 1, &[]); // the resend of 0 arrives
    let new: Vec<u64> = out.iter().map(|p| p.seq).collect();
    assert!(!new.is_empty() && new.iter().all(|&q| q >= 10));
    // Segments 1-9 really were lost: the next ACK SACKs new data only.
    let out = ack_at(&mut s, &map, 1100.0, 1, &[(new[0], new[0] + 1)]);
    assert_eq!((s.state, s.stats.spurious_rtos, s.stats.undos), (CaState::Loss, 0, 0));
    assert!(!s.frto);
    assert!(out.iter().any(|p| p.retransmit() && p.seq == 1), "conventional recovery resends segment 1: {out:?}");
}

/// Linux `tcp_sacktag_write_queue` + `tcp_try_undo_dsack` (RFC 2883
/// section 5's use of D-SACK): a fast retransmit whose original was
/// only delayed comes back D-SACKed; with every resend since recovery
/// began D-SACKed, undo_retrans reaches 0 and the reduction is undone:
/// cwnd and ssthresh go back to their values before it.
#[test]
fn dsack_of_every_resend_undoes_the_fast_recovery() {
    let (mut s, map) = linux_sender();
    s.w.cwnd = 20.0;
    s.w.ssthresh = 19.0;
    s.transmit(0, &map, &mut vec![]);
    ack_at(&mut s, &map, 100.0, 1, &[]);
    let (cwnd, ssthresh) = (s.w.cwnd, s.w.ssthresh);
    for k in 3..6 {
        ack_at(&mut s, &map, 100.0 + k as f64 * 0.01, 1, &[(2, k)]);
    }
    assert_eq!(s.state, CaState::Recovery);
    assert!(s.w.ssthresh < ssthresh && s.meta.flags(1) & RETX != 0);
    // The original of segment 1 was only late: the cumulative ACK jumps.
    ack_at(&mut s, &map, 100.1, 6, &[]);
    assert_eq!(s.state, CaState::Recovery);
    // Then the resend arrives as a duplicate: its D-SACK block (below the ACK).
    ack_at(&mut s, &map, 100.2, 6, &[(1, 2)]);
    assert_eq!((s.state, s.stats.undos, s.stats.dsacks), (CaState::Open, 1, 1));
    assert!(
        s.w.cwnd >= cwnd && s.w.ssthresh >= ssthresh,
        "cwnd {} (was {cwnd}), ssthresh {} (was {ssthresh})",
        s.w.cwnd,
        s.w.ssthresh
    );
}

/// RFC 5681 3.2 steps 3-4 and RFC 6582 3.2 step 5, with the inflation
/// kept apart from cwnd (ns-2's `dupwnd_`): ssthresh + 3 at entry, one
/// more per duplicate ACK, a partial ACK deflates by the amount acked
/// less one (the inflation first), and the full ACK leaves cwnd =
/// ssthresh with no inflation. The congestion control never sees it.
#[test]
fn newreno_inflation_lives_apart_from_cwnd_and_ends_with_the_recovery() {
    let (mut s, map) = sender("newreno", DupAckGuard::Careful);
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    // Segments 0 and 4 lost; duplicate ACKs for 1, 2, 3.
    for _ in 0..3 {
        ack(&mut s, &map, 0, &[]);
    }
    assert_eq!(s.state, CaState::Recovery);
    assert_eq!((s.w.cwnd, s.w.ssthresh, s.inflation), (5.0, 5.0, 3.0));
    for _ in 0..5 {
        ack(&mut s, &map, 0, &[]); // segments 5..9
    }
    assert_eq!((s.w.cwnd, s.inflation), (5.0, 8.0));
    // Partial ACK: 0 repaired, 1-3 held: acknowledges 4, deflates by 3.
    ack(&mut s, &map, 4, &[]);
    assert_eq!((s.state, s.w.cwnd, s.inflation), (CaState::Recovery, 5.0, 5.0));
    // Full ACK of everything sent before the recovery began.
    let recover = s.recover;
    ack(&mut s, &map, recover, &[]);
    assert_eq!((s.state, s.w.cwnd, s.inflation), (CaState::Open, 5.0, 0.0));
}

fn ecn_sender(algo: &str, recovery: &str, ecn: &str) -> (Sender, SegmentMap) {
    let f: FlowSpec = serde_json::from_value(serde_json::json!({
        "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": algo}, "recovery": recovery, "ecn": ecn,
    }))
    .unwrap();
    let cfg = SenderConfig { init_cwnd: 10.0, ..SenderConfig::from_flow(0, &f) };
    let mut s = Sender::new(cfg, crate::cc::build(&f.cc, "f").unwrap());
    s.started = true;
    s.app_limit = u64::MAX;
    (s, SegmentMap::new(&f))
}

/// An ACK of `a` at `ms` with SACK blocks and TCP flags.
fn flag_ack(s: &mut Sender, map: &SegmentMap, ms: f64, a: u64, sacked: &[(u64, u64)], flags: u8) -> Vec<Packet> {
    let mut b = SackBlocks::NONE;
    for (i, &(lo, hi)) in sacked.iter().enumerate() {
        b.blocks[i] = SackBlock { start: (lo - a) as u32, len: (hi - lo) as u32 };
        b.n += 1;
    }
    let mut p = Packet::ack(a, 40);
    p.set_tcp_flags(flags);
    let mut out = vec![];
    s.on_ack(from_secs(ms / 1000.0), &p, &b, map, &mut out);
    out
}

fn ace(n: u64) -> u8 {
    (((n + ACE_INIT) & 7) as u8) << tcp_flags::ACE_SHIFT
}

/// RFC 3168 6.1.2 / Linux `tcp_enter_cwr`: ECE on every ACK of a
/// window cuts the window once (ssthresh from the algorithm; without
/// PRR cwnd = ssthresh at once) and the window does not grow; CWR is
/// held until an ACK covers more than the highest segment sent when
/// it began, and the next echo then cuts again.
#[test]
fn repeated_echoes_reduce_once_per_window() {
    let (mut s, map) = ecn_sender("reno", "sack", "classic");
    s.w.cwnd = 20.0;
    s.transmit(0, &map, &mut vec![]);
    assert_eq!(s.high_data, 20);
    flag_ack(&mut s, &map, 100.0, 1, &[], tcp_flags::ECE);
    assert_eq!((s.stats.ecn_reductions, s.w.ssthresh, s.w.cwnd), (1, 10.0, 10.0));
    for a in 2..=20u64 {
        flag_ack(&mut s, &map, 100.0 + a as f64, a, &[], tcp_flags::ECE);
        assert_eq!((s.stats.ecn_reductions, s.w.cwnd), (1, 10.0), "ACK {a}: within the window, no cut and no growth");
    }
    assert_eq!((s.state, s.stats.fast_recoveries, s.stats.retransmits), (CaState::Open, 0, 0));
    // snd_una passes 20 (the high_seq): CWR ends, and this echo starts the next.
    flag_ack(&mut s, &map, 130.0, 21, &[], tcp_flags::ECE);
    assert_eq!((s.stats.ecn_reductions, s.w.ssthresh, s.w.cwnd), (2, 5.0, 5.0));
    assert_eq!(s.stats.ce_delivered, 21, "every segment an ECE ACK delivered");
    // Without echoes the window grows again once CWR is over.
    let high = s.high_data;
    for a in 22..=high {
        flag_ack(&mut s, &map, 140.0 + a as f64, a, &[], 0);
    }
    let end = s.high_data;
    flag_ack(&mut s, &map, 200.0, end, &[], 0);
    assert!(s.w.cwnd > 5.0, "grows after CWR: {}", s.w.cwnd);
}

/// With PRR (the Linux profile) the cut follows `tcp_cwnd_reduction`
/// as a recovery without retransmissions: sending tracks delivery in
/// the proportion ssthresh / prior cwnd, and CWR ends at cwnd = ssthresh.
#[test]
fn with_prr_the_echo_reduces_gradually_to_ssthresh() {
    let (mut s, map) = ecn_sender("reno", "sack", "classic");
    s.cfg.prr = true;
    s.w.cwnd = 20.0;
    s.transmit(0, &map, &mut vec![]);
    let mut sent = 0u64;
    for a in 1..=20u64 {
        let out = flag_ack(&mut s, &map, 100.0 + a as f64, a, &[], if a == 1 { tcp_flags::ECE } else { 0 });
        assert!(out.iter().all(|p| !p.retransmit()));
        sent += out.len() as u64;
        if s.in_flight() as f64 > s.w.ssthresh {
            // CEIL(ssthresh * prr_delivered / prior_cwnd) segments in all (RFC 6937).
            assert_eq!(sent, (10.0 * a as f64 / 20.0).ceil() as u64, "after ACK {a}");
        }
    }
    assert_eq!(s.stats.ecn_reductions, 1);
    flag_ack(&mut s, &map, 130.0, 21, &[], 0);
    assert!(!s.cwr && s.w.cwnd >= 10.0 && s.w.cwnd <= 11.0, "CWR over at ssthresh (then grows): {}", s.w.cwnd);
}

/// Linux `tcp_ecn_send`: after a cut, CWR goes on exactly the next new
/// data segment (not on a retransmission, not again after).
#[test]
fn cwr_goes_on_exactly_the_next_new_segment() {
    let (mut s, map) = ecn_sender("reno", "sack", "classic");
    s.w.cwnd = 20.0;
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    assert!(out.iter().all(|p| p.tcp_flags() & tcp_flags::CWR == 0));
    let mut sent = vec![];
    for a in 1..=25u64 {
        let flags = if a == 1 { tcp_flags::ECE } else { 0 };
        sent.extend(flag_ack(&mut s, &map, 100.0 + a as f64, a, &[], flags));
    }
    assert!(!sent.is_empty());
    let cwr: Vec<u64> = sent.iter().filter(|p| p.tcp_flags() & tcp_flags::CWR != 0).map(|p| p.seq).collect();
    assert_eq!(cwr, vec![sent[0].seq], "CWR on the first new segment only");
    assert_eq!(sent[0].seq, 20);
}

/// Linux `tcp_ecn_send` / RFC 3168 6.1.5: under classic ECN new data is
/// ECT(0) and retransmissions are Not-ECT, unless the algorithm needs
/// ECN (DCTCP); under AccECN every segment is ECN-capable (Prague's
/// ECT(1)). ECN off: nothing is marked.
#[test]
fn ect_on_first_transmissions_not_on_classic_retransmissions() {
    let run = |algo: &str, ecn: &str| {
        let (mut s, map) = ecn_sender(algo, "sack", ecn);
        let mut out = vec![];
        s.transmit(0, &map, &mut out);
        // Segment 0 lost: three SACKs start recovery and its fast retransmit.
        for k in 2..5u64 {
            out.extend(flag_ack(
                &mut s,
                &map,
                100.0 + k as f64,
                0,
                &[(1, k)],
                if ecn == "accecn" { ace(0) } else { 0 },
            ));
        }
        assert_eq!(s.state, CaState::Recovery, "{algo} {ecn}");
        let first: Vec<_> = out.iter().filter(|p| !p.retransmit()).map(|p| p.ecn()).collect();
        let resent: Vec<_> = out.iter().filter(|p| p.retransmit()).map(|p| p.ecn()).collect();
        assert!(!first.is_empty() && !resent.is_empty(), "{algo} {ecn}: {out:?}");
        (first, resent)
    };
    let all = |v: &[Ecn], e: Ecn| v.iter().all(|&x| x == e);
    let (f, r) = run("reno", "classic");
    assert!(all(&f, Ecn::Ect0) && all(&r, Ecn::NotEct), "{f:?} {r:?}");
    let (f, r) = run("dctcp", "classic");
    assert!(all(&f, Ecn::Ect0) && all(&r, Ecn::Ect0), "{f:?} {r:?}");
    let (f, r) = run("reno", "accecn");
    assert!(all(&f, Ecn::Ect0) && all(&r, Ecn::Ect0), "{f:?} {r:?}");
    let (f, r) = run("reno", "off");
    assert!(all(&f, Ecn::NotEct) && all(&r, Ecn::NotEct), "{f:?} {r:?}");
    let (s, _) = ecn_sender("prague", "sack", "accecn");
    assert_eq!(s.ecn.ect, Ecn::Ect1);
}

/// Linux `tcp_try_to_open` runs in Open (and CWR) only: an echo during
/// fast recovery starts no CWR; the recovery's own cut answers it.
#[test]
fn loss_recovery_takes_precedence_over_an_echo() {
    let (mut s, map) = ecn_sender("reno", "sack", "classic");
    s.transmit(0, &map, &mut vec![]);
    for k in 2..5u64 {
        flag_ack(&mut s, &map, 100.0 + k as f64, 0, &[(1, k)], 0);
    }
    assert_eq!(s.state, CaState::Recovery);
    let ss = s.w.ssthresh;
    for k in 5..9u64 {
        flag_ack(&mut s, &map, 100.0 + k as f64, 0, &[(1, k)], tcp_flags::ECE);
    }
    assert_eq!((s.state, s.stats.ecn_reductions, s.w.ssthresh), (CaState::Recovery, 0, ss));
}

/// An echo during CWR's window followed by a loss (Linux
/// `tcp_enter_recovery` with `tcp_in_cwnd_reduction`): recovery does
/// not cut ssthresh a second time.
#[test]
fn a_loss_during_cwr_does_not_cut_again() {
    let (mut s, map) = ecn_sender("reno", "sack", "classic");
    s.w.cwnd = 20.0;
    s.transmit(0, &map, &mut vec![]);
    // Segment 0 lost; the first SACK echoes CE.
    flag_ack(&mut s, &map, 100.0, 0, &[(1, 2)], tcp_flags::ECE);
    assert_eq!((s.stats.ecn_reductions, s.w.ssthresh), (1, 10.0));
    for k in 3..5u64 {
        flag_ack(&mut s, &map, 100.0 + k as f64, 0, &[(1, k)], tcp_flags::ECE);
    }
    assert_eq!((s.state, s.stats.fast_recoveries, s.w.ssthresh), (CaState::Recovery, 1, 10.0));
}

/// Accurate ECN at the sender (Linux `__tcp_accecn_process`): the CE
/// delta of an ACK is (ACE - 5 - delivered_ce) mod 8, read only on ACKs
/// of forward progress; for an ACK of more than 7 segments the safe
/// delta `delivered - ((delivered - delta) mod 8)`. Any delta starts
/// CWR, as ECE does.
#[test]
fn accecn_delta_is_the_ace_difference_modulo_8() {
    let (mut s, map) = ecn_sender("reno", "sack", "accecn");
    s.w.cwnd = 40.0;
    s.transmit(0, &map, &mut vec![]);
    flag_ack(&mut s, &map, 100.0, 2, &[], ace(1));
    assert_eq!((s.stats.ce_delivered, s.stats.ecn_reductions), (1, 1));
    flag_ack(&mut s, &map, 101.0, 4, &[], ace(1));
    assert_eq!(s.stats.ce_delivered, 1);
    // A duplicate ACK (no progress) is not read, whatever it says.
    flag_ack(&mut s, &map, 102.0, 4, &[], ace(6));
    assert_eq!(s.stats.ce_delivered, 1);
    // 3 more, across the counter's wrap (ACE 6 -> 1).
    flag_ack(&mut s, &map, 103.0, 7, &[], ace(4));
    assert_eq!(s.stats.ce_delivered, 4);
    // 12 segments at once, the field 2 higher: 2 or 10 marks; Linux takes 10.
    flag_ack(&mut s, &map, 104.0, 19, &[], ace(6));
    assert_eq!(s.stats.ce_delivered, 14);
    // A SACK of new data is progress.
    flag_ack(&mut s, &map, 105.0, 19, &[(20, 21)], ace(7));
    assert_eq!(s.stats.ce_delivered, 15);
    assert!(s.stats.ecn_reductions >= 1 && s.cwr);
}

/// A window-controlling algorithm (BBRv3) gets `tp->delivered_ce` and
/// the echo through `on_ecn` before `cong_control`, and the rate sample
/// counts the CE deliveries since the sampled packet left.
#[test]
fn delivered_ce_reaches_the_rate_sample() {
    let (s, map) = ecn_sender("reno", "sack", "accecn");
    let log = Log::default();
    let cc = Box::new(Fixed { cwnd: 20.0, rate_bps: 1e9, log: log.clone() });
    let mut s = Sender::new(s.cfg.clone(), cc);
    s.started = true;
    s.app_limit = u64::MAX;
    s.transmit(0, &map, &mut vec![]);
    flag_ack(&mut s, &map, 100.0, 3, &[], ace(2));
    flag_ack(&mut s, &map, 101.0, 6, &[], ace(3));
    let l = log.lock().unwrap();
    let ce: Vec<u64> = l.0.iter().map(|r| r.delivered_ce).collect();
    assert_eq!(ce, vec![2, 3], "since segment 2 and 5 were sent (with none delivered)");
}

/// The flow of `ecn_sender` on a miniature path: a 100 Mb/s bottleneck
/// with an unlimited FIFO that marks CE on ECN-capable packets arriving
/// to `k` or more waiting (DCTCP's step marking, RFC 8257 section 3.1),
/// 5 ms each way, a SACK receiver with delayed ACKs. Runs `secs`, then
/// lets everything in flight arrive. Returns the sender, the receiver,
/// the largest queue after the first second and the payload bytes
/// delivered in order after it.
fn mini_path(algo: &str, ecn: &str, k: usize, secs: f64) -> (Sender, crate::tcp::receiver::Receiver, usize, u64) {
    use crate::net::packet::SackStore;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let (mut s, map) = ecn_sender(algo, "sack", ecn);
    s.cfg.prr = true;
    let mut r = crate::tcp::receiver::Receiver::new(0, true, 3, 40, true, from_secs(0.04), 0);
    let mut sacks = SackStore::default();
    let tx = from_secs(1500.0 * 8.0 / 100e6);
    let d = from_secs(0.005);
    let (end, warm) = (from_secs(secs), from_secs(1.0));
    let mut q: VecDeque<Time> = VecDeque::new();
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
    let mut pkts: Vec<Packet> = vec![];
    let (mut max_q, mut bytes_at_warm) = (0usize, None);
    let mut enqueue = |t: Time,
                       out: &mut Vec<Packet>,
                       heap: &mut BinaryHeap<Reverse<(Time, usize)>>,
                       pkts: &mut Vec<Packet>,
                       max_q: &mut usize| {
        for mut p in out.drain(..) {
            while q.front().is_some_and(|&x| x <= t) {
                q.pop_front();
            }
            if q.len() >= k && p.ecn().capable() {
                p.set_ecn(Ecn::Ce);
            }
            let depart = q.back().copied().unwrap_or(0).max(t) + tx;
            q.push_back(depart);
            if t >= warm {
                *max_q = (*max_q).max(q.len());
            }
            pkts.push(p);
            heap.push(Reverse((depart + d, pkts.len() - 1)));
        }
    };
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    enqueue(0, &mut out, &mut heap, &mut pkts, &mut max_q);
    loop {
        let t =
            [heap.peek().map(|e| e.0 .0), s.rto_deadline, r.delack_deadline, s.pace_wanted].into_iter().flatten().min();
        let Some(t) = t else { break };
        if t > end + from_secs(1.0) {
            break;
        }
        if t >= end && s.app_limit > s.snd_nxt {
            s.app_limit = s.snd_nxt; // stop sending new data; let the rest arrive
        }
        if t >= warm && bytes_at_warm.is_none() {
            bytes_at_warm = Some(r.delivered_bytes);
        }
        if s.pace_wanted == Some(t) {
            s.pace_wanted = None;
            s.transmit(t, &map, &mut out);
        } else if s.rto_deadline == Some(t) {
            s.on_timeout(t, &map, &mut out);
        } else if r.delack_deadline == Some(t) {
            if let Some(a) = r.on_delack_timer(t, &mut sacks) {
                pkts.push(a);
                heap.push(Reverse((t + d, pkts.len() - 1)));
            }
        } else {
            let Reverse((_, i)) = heap.pop().unwrap();
            let p = pkts[i];
            if p.kind == crate::net::PacketKind::Data {
                let mut acks = vec![];
                r.on_segment(t, &p, &s.ecn, &map, &mut sacks, &mut acks);
                for a in acks {
                    pkts.push(a);
                    heap.push(Reverse((t + d, pkts.len() - 1)));
                }
            } else {
                let b = sacks.take(p.sack);
                s.on_ack(t, &p, &b, &map, &mut out);
            }
        }
        enqueue(t, &mut out, &mut heap, &mut pkts, &mut max_q);
    }
    let bytes = r.delivered_bytes - bytes_at_warm.unwrap_or(0);
    (s, r, max_q, bytes)
}

/// End to end through a step-marking queue: DCTCP and Prague (AccECN,
/// and DCTCP over classic ECN with its precise echo) hold the queue
/// near the marking threshold without a loss and keep the link busy;
/// the sender's CE count equals the receiver's (an exact echo), and
/// each reduction is one CWR.
#[test]
fn scalable_senders_hold_a_step_marking_queue_near_its_threshold() {
    let secs = 4.0;
    let capacity = 100e6 / 8.0 * 1460.0 / 1500.0 * (secs - 1.0);
    for (algo, ecn) in [("dctcp", "accecn"), ("dctcp", "classic"), ("prague", "accecn")] {
        let (s, r, max_q, bytes) = mini_path(algo, ecn, 20, secs);
        let what = format!(
            "{algo}/{ecn}: queue {max_q}, {:.1} % of capacity, {} CWR, CE {} sent back {}",
            100.0 * bytes as f64 / capacity,
            s.stats.ecn_reductions,
            r.stats.ce_received,
            s.stats.ce_delivered
        );
        assert_eq!((s.stats.retransmits, s.stats.timeouts), (0, 0), "{what}");
        assert!(max_q <= 40, "{what}");
        assert!(bytes as f64 > 0.95 * capacity, "{what}");
        assert!(s.stats.ecn_reductions > 10, "{what}");
        assert!(r.stats.ce_received > 0 && s.stats.ce_delivered == r.stats.ce_received, "{what}");
        assert!(s.stats.ecn_reductions <= (secs / 0.01) as u64, "at most one per round trip: {what}");
    }
    // Reno over classic ECN halves once per window on the latched echo,
    // then regrows by one segment per round trip: from about 100
    // segments (BDP 83 + 20 queued) to 50, a cycle of about 50 round
    // trips (0.5 s).
    let (s, r, max_q, _) = mini_path("reno", "classic", 20, secs);
    assert_eq!(s.stats.retransmits, 0);
    assert!(
        max_q <= 40 && (5..=12).contains(&s.stats.ecn_reductions) && r.stats.ce_received > 0,
        "{max_q} {}",
        s.stats.ecn_reductions
    );
    assert!(s.stats.ce_delivered >= r.stats.ce_received, "the latch echoes whole windows");
}

/// A window-growing algorithm for the tests: Reno's window, and a log of
/// the hooks that mark the CA state's course.
struct StateLog {
    reno: crate::cc::reno::Reno,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl CongestionControl for StateLog {
    fn name(&self) -> &'static str {
        "statelog"
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.reno.on_ack(w, s)
    }
    fn ssthresh(&mut self, w: &Window, e: LossEvent, f: u64, now: f64) -> f64 {
        self.log.lock().unwrap().push(format!("ssthresh {e:?}"));
        self.reno.ssthresh(w, e, f, now)
    }
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: f64) {
        self.log.lock().unwrap().push("recovery_exit".into());
    }
    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.log.lock().unwrap().push("rto".into());
    }
    fn on_state(&mut self, _w: &mut Window, new: CaState, _c: &Conn) {
        self.log.lock().unwrap().push(format!("{new:?}"));
    }
}

/// The CA state an algorithm that grows the window hears (Linux
/// `set_state` through `tcp_set_ca_state`): Disorder on a duplicate ACK and
/// Open again on the next ACK of new data; Recovery after the ssthresh of
/// the fast retransmit; Open before `on_recovery_exit`; Loss after
/// `on_rto`, on every timeout; Open once everything sent before the
/// timeout is acknowledged (the sender's `recover`, exactly).
#[test]
fn a_window_growing_algorithm_hears_each_ca_state_change() {
    let (s0, map) = sender("newreno", DupAckGuard::Careful);
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let reno = crate::cc::reno::Reno::new(crate::cc::reno::Mode::Linux);
    let mut s = Sender::new(s0.cfg.clone(), Box::new(StateLog { reno, log: log.clone() }));
    s.started = true;
    s.app_limit = u64::MAX;
    let take =
        |log: &std::sync::Arc<std::sync::Mutex<Vec<String>>>| std::mem::take(&mut *log.lock().unwrap()).join(", ");
    let mut out = vec![];
    s.transmit(0, &map, &mut out);
    assert_eq!(out.len(), 10);
    ack(&mut s, &map, 1, &[]);
    ack(&mut s, &map, 1, &[]);
    assert_eq!(take(&log), "Disorder");
    ack(&mut s, &map, 2, &[]);
    assert_eq!(take(&log), "Open");
    for _ in 0..3 {
        ack(&mut s, &map, 2, &[]);
    }
    assert_eq!(take(&log), "Disorder, ssthresh FastRecovery, Recovery");
    let high = s.high_data;
    ack(&mut s, &map, high, &[]);
    assert_eq!(take(&log), "Open, recovery_exit");
    // Two timeouts: both reported, Loss each time.
    let mut out = vec![];
    s.transmit(1_000_000_000, &map, &mut out);
    assert!(s.high_data > high, "new data went out");
    let high = s.high_data;
    s.on_timeout(2_000_000_000, &map, &mut vec![]);
    s.on_timeout(4_000_000_000, &map, &mut vec![]);
    assert_eq!(take(&log), "ssthresh Timeout, rto, Loss, rto, Loss");
    // Loss lasts until everything sent before the timeout is acknowledged.
    ack(&mut s, &map, high - 1, &[]);
    assert_eq!(take(&log), "");
    assert_eq!(s.state, CaState::Loss);
    ack(&mut s, &map, high, &[]);
    assert_eq!(take(&log), "Open");
}
