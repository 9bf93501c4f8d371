use super::*;

/// An ACK of new data up to `snd_una` with `snd_nxt` sent and RTT `rtt`.
fn ack(snd_una: u64, snd_nxt: u64, rtt: f64) -> AckSample {
    AckSample { rtt: Some(rtt), snd_una, snd_nxt, ..AckSample::test(0.0, 1) }
}

/// Feeds `n` ACKs of one round with the given RTT, without crossing its
/// end: the round was started at `beg`; ACKs cover beg-n+1 .. beg.
fn samples(v: &mut Vegas, w: &mut Window, beg: u64, n: u64, rtt: f64) {
    for i in 0..n {
        let s = ack(beg - n + 1 + i, beg + 10, rtt);
        v.on_ack_sample(w, &s);
        v.on_ack(w, &s);
    }
}

/// A Vegas whose base RTT is `base`, in congestion avoidance at `cwnd`,
/// with a round ending after segment 100.
fn in_ca(cfg: VegasConfig, cwnd: f64, base: f64) -> (Vegas, Window) {
    let mut v = Vegas::new(cfg);
    let mut w = Window { cwnd, ssthresh: 1.0 };
    v.on_ack_sample(&w, &ack(1, 100, base));
    v.frame.round.beg_snd_nxt = 100;
    v.frame.round.clear();
    w.ssthresh = cwnd; // congestion avoidance
    (v, w)
}

/// Ends the round with the ACK that passes beg_snd_nxt (RTT `rtt`).
fn end_round(v: &mut Vegas, w: &mut Window, rtt: f64) {
    let s = ack(v.frame.round.beg_snd_nxt + 1, v.frame.round.beg_snd_nxt + 50, rtt);
    v.on_ack_sample(w, &s);
    v.on_ack(w, &s);
}

/// An RTT at which Linux's diff = cwnd (rtt - base)/base equals `d` + 0.5.
fn rtt_for_diff(cwnd: f64, base: f64, d: f64) -> f64 {
    base * (1.0 + (d + 0.5) / cwnd)
}

#[test]
fn congestion_avoidance_moves_one_segment_per_rtt_by_alpha_and_beta() {
    // diff < alpha -> +1; diff > beta -> -1; alpha <= diff <= beta -> hold.
    // Linux diff is truncated: 1.5 -> 1 (< 2), 2.5 -> 2, 4.5 -> 4 (hold), 5.5 -> 5 (> 4).
    for (d, change) in [(0.0, 1.0), (1.0, 1.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0), (5.0, -1.0), (9.0, -1.0)] {
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
        let rtt = rtt_for_diff(50.0, 0.1, d);
        samples(&mut v, &mut w, 100, 5, rtt);
        assert_eq!(w.cwnd, 50.0, "nothing happens inside the round");
        end_round(&mut v, &mut w, rtt);
        assert_eq!(w.cwnd, 50.0 + change, "diff {d}");
        assert_eq!(v.last_step().unwrap().diff, d);
    }
}

#[test]
fn thresholds_follow_the_parameters() {
    // With alpha 6 and beta 10 a diff of 4 now grows the window and 8 holds it.
    let cfg = VegasConfig { alpha: 6.0, beta: 10.0, ..VegasConfig::linux() };
    for (d, change) in [(4.0, 1.0), (8.0, 0.0), (11.0, -1.0)] {
        let (mut v, mut w) = in_ca(cfg, 50.0, 0.1);
        let rtt = rtt_for_diff(50.0, 0.1, d);
        samples(&mut v, &mut w, 100, 5, rtt);
        end_round(&mut v, &mut w, rtt);
        assert_eq!(w.cwnd, 50.0 + change, "diff {d}");
    }
}

#[test]
fn the_step_happens_once_per_rtt_with_the_rounds_minimum_rtt() {
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
    // The round's samples: one low RTT among high ones. minRTT is used, so
    // diff = floor(50 * 0.002/0.100001) = 0 -> +1 (the mean, 0.184, would give 41 -> -1).
    samples(&mut v, &mut w, 100, 4, 0.2);
    let low = ack(100, 110, 0.102);
    v.on_ack_sample(&w, &low);
    v.on_ack(&mut w, &low);
    end_round(&mut v, &mut w, 0.2);
    assert_eq!(w.cwnd, 51.0);
    assert_eq!(v.last_step().unwrap().rtt, crate::cc::delay::linux_vrtt(0.102));
    // The next round started at the snd_nxt of the ACK that ended this one;
    // ACKs below it do nothing, even with many samples.
    let beg = v.frame.round.beg_snd_nxt;
    assert_eq!(beg, 150);
    samples(&mut v, &mut w, beg, 20, 0.1);
    assert_eq!(w.cwnd, 51.0);
    assert_eq!(v.steps(), 1);
    end_round(&mut v, &mut w, 0.1);
    assert_eq!((w.cwnd, v.steps()), (52.0, 2));
}

#[test]
fn two_samples_per_rtt_fall_back_to_reno() {
    // cntRTT <= 2: "almost certainly delayed ACKs": tcp_reno_cong_avoid.
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 10.0, 0.1);
    let rtt = rtt_for_diff(10.0, 0.1, 9.0); // would decrease if Vegas ran
    samples(&mut v, &mut w, 100, 1, rtt);
    end_round(&mut v, &mut w, rtt); // second sample of the round
    assert_eq!(v.steps(), 0);
    assert_eq!(w.cwnd, 10.0, "one Reno credit of ten");
    assert_eq!(v.reno.cwnd_cnt, 1);
}

#[test]
fn slow_start_ends_when_diff_exceeds_gamma() {
    // Slow start and diff > gamma: cwnd = min(cwnd, target_cwnd + 1),
    // ssthresh = min(ssthresh, cwnd), then max(ssthresh, 3/4 cwnd).
    let mut v = Vegas::new(VegasConfig::linux());
    let mut w = Window { cwnd: 40.0, ssthresh: 2_147_483_647.0 };
    v.on_ack_sample(&w, &ack(1, 100, 0.1));
    v.frame.round.beg_snd_nxt = 100;
    v.frame.round.clear();
    samples(&mut v, &mut w, 100, 5, 0.11);
    assert_eq!(w.cwnd, 45.0, "slow start between the round's ends: +1 per segment");
    // RTT 0.11 (vrtt 0.110001, base 0.100001): diff = floor(45 * 0.01/0.100001) = 4 > 1;
    // target = floor(45 * 0.100001/0.110001) = 40.
    end_round(&mut v, &mut w, 0.11);
    let step = v.last_step().unwrap();
    assert_eq!((step.diff, step.target), (4.0, 40.0));
    assert_eq!((w.cwnd, w.ssthresh), (41.0, 41.0));
    assert!(!w.in_slow_start());
}

#[test]
fn slow_start_continues_while_diff_is_at_most_gamma() {
    let mut v = Vegas::new(VegasConfig::linux());
    let mut w = Window { cwnd: 40.0, ssthresh: 2_147_483_647.0 };
    v.on_ack_sample(&w, &ack(1, 100, 0.1));
    v.frame.round.beg_snd_nxt = 100;
    v.frame.round.clear();
    // diff = floor(40 * 0.001 / 0.1) = 0 <= 1: the boundary ACK is a slow-start step.
    samples(&mut v, &mut w, 100, 3, 0.1011);
    end_round(&mut v, &mut w, 0.1011);
    assert_eq!(w.cwnd, 44.0);
    assert!(w.in_slow_start());
}

#[test]
fn ssthresh_is_raised_to_three_quarters_of_cwnd_after_each_step() {
    // tcp_current_ssthresh: max(ssthresh, (cwnd >> 1) + (cwnd >> 2)).
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 100.0, 0.1);
    w.ssthresh = 10.0;
    let rtt = rtt_for_diff(100.0, 0.1, 3.0);
    samples(&mut v, &mut w, 100, 5, rtt);
    end_round(&mut v, &mut w, rtt);
    assert_eq!((w.cwnd, w.ssthresh), (100.0, 75.0));
}

#[test]
fn reno_outside_the_open_state() {
    // tcp_vegas_state: any state but Open disables Vegas (pure Reno).
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 10.0, 0.1);
    let dup = AckSample { duplicate: true, ..ack(1, 100, 0.1) };
    v.on_ack_sample(&w, &dup);
    v.on_state(&mut w, CaState::Disorder, &Conn::test(0.0));
    assert!(!v.frame.enabled);
    // Loss state after an RTO: Reno slow start and congestion avoidance, no rounds.
    v.ssthresh(&w, LossEvent::Timeout, 10, 0.0);
    w = Window { cwnd: 1.0, ssthresh: 5.0 };
    v.on_rto(&mut w, 0.0);
    v.on_state(&mut w, CaState::Loss, &Conn::test(0.0));
    assert_eq!(v.frame.state(), CaState::Loss);
    for una in 2..6 {
        let s = ack(una, 100, 0.3);
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
    }
    assert_eq!(w.cwnd, 5.0);
    assert_eq!(v.steps(), 0);
    // The ACK covering everything sent before the RTO returns to Open
    // (the sender says so after the algorithm saw the ACK).
    let s = ack(101, 120, 0.3);
    v.on_ack_sample(&w, &s);
    v.on_state(&mut w, CaState::Open, &Conn::test(0.3));
    assert!(v.frame.enabled);
    assert_eq!(v.frame.round.beg_snd_nxt, 120);
}

#[test]
fn loss_halves_linux_and_keeps_three_quarters_in_the_paper() {
    let mut v = Vegas::new(VegasConfig::linux());
    let mut w = Window { cwnd: 41.0, ssthresh: 100.0 };
    assert_eq!(v.ssthresh(&w, LossEvent::FastRecovery, 41, 0.0), 20.0);
    v.on_state(&mut w, CaState::Recovery, &Conn::test(0.0));
    assert!(!v.frame.enabled);
    let mut p = Vegas::new(VegasConfig::paper());
    assert_eq!(p.ssthresh(&w, LossEvent::FastRecovery, 41, 0.0), 30.0);
}

#[test]
fn paper_diff_is_over_rtt_and_slow_start_grows_every_other_round() {
    // Diff = (cwnd/BaseRTT - cwnd/RTT) BaseRTT = cwnd (RTT - BaseRTT)/RTT.
    let p = Vegas::new(VegasConfig::paper());
    let (d, t) = p.diff_and_target(40.0, 0.125, 0.1);
    assert!((d - 8.0).abs() < 1e-12 && (t - 32.0).abs() < 1e-12);
    let mut v = Vegas::new(VegasConfig::paper());
    let mut w = Window { cwnd: 8.0, ssthresh: 2_147_483_647.0 };
    v.on_ack_sample(&w, &ack(1, 100, 0.1));
    v.frame.round.beg_snd_nxt = 100;
    v.frame.round.clear();
    samples(&mut v, &mut w, 100, 4, 0.1);
    assert_eq!(w.cwnd, 12.0, "growing round");
    end_round(&mut v, &mut w, 0.1); // boundary step grows, then the next round holds
    assert_eq!(w.cwnd, 13.0);
    let beg = v.frame.round.beg_snd_nxt;
    samples(&mut v, &mut w, beg, 4, 0.1);
    assert_eq!(w.cwnd, 13.0, "holding round");
    end_round(&mut v, &mut w, 0.1);
    assert_eq!(w.cwnd, 13.0);
    let beg = v.frame.round.beg_snd_nxt;
    samples(&mut v, &mut w, beg, 4, 0.1);
    assert_eq!(w.cwnd, 17.0, "growing again");
    // The round's minimum is still 0.1: one more growing step, then a holding round
    // whose samples are all 0.12: Diff = 18 (0.12 - 0.1)/0.12 = 3 > 1 -> cwnd -= floor(18/8).
    end_round(&mut v, &mut w, 0.12);
    assert_eq!(w.cwnd, 18.0);
    let beg = v.frame.round.beg_snd_nxt;
    samples(&mut v, &mut w, beg, 4, 0.12);
    assert_eq!(w.cwnd, 18.0);
    end_round(&mut v, &mut w, 0.12);
    assert_eq!((w.cwnd, w.ssthresh), (16.0, 16.0));
}

#[test]
fn idle_restart_forgets_the_base_rtt() {
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
    v.on_send(1.0, 1500, 1);
    assert_eq!(v.frame.base_rtt, f64::INFINITY);
    // The next round measures a new base: with RTT 0.2 throughout, diff = 0 -> +1.
    samples(&mut v, &mut w, 100, 5, 0.2);
    end_round(&mut v, &mut w, 0.2);
    assert_eq!(w.cwnd, 51.0);
    let off = serde_json::json!({"restart_on_idle": false});
    let mut v = Vegas::from_params(off.as_object().unwrap(), "f").unwrap();
    v.on_ack_sample(&w, &ack(1, 100, 0.1));
    v.on_send(1.0, 1500, 1);
    assert_eq!(v.frame.base_rtt, crate::cc::delay::linux_vrtt(0.1));
}

#[test]
fn parameters_are_validated() {
    let bad = serde_json::json!({"alpha": 5, "beta": 3});
    let e = Vegas::from_params(bad.as_object().unwrap(), "flows[0].cc").err().unwrap();
    assert_eq!(e.field, "flows[0].cc.params.beta");
    let p = Vegas::from_params(serde_json::json!({"variant": "paper"}).as_object().unwrap(), "f").unwrap();
    assert_eq!((p.cfg.alpha, p.cfg.beta, p.cfg.gamma, p.cfg.loss_keep), (1.0, 3.0, 1.0, 0.75));
}

// ---- linux-2.6: tcp_vegas.c of Linux 2.6.16-2.6.22 (ns-2 TCP-Linux) ----

/// A sample time whose Linux vrtt (whole microseconds + 1) is `us`.
fn secs(us: u32) -> f64 {
    (us as f64 - 0.5) / 1e6
}

/// An RTT (as vrtt microseconds) at which [`fixed_point_diff`] gives
/// `diff_half` half-segments for `old_wnd` and baseRTT `base_us`.
fn rtt_us_for(old_wnd: u32, base_us: u32, diff_half: u32) -> u32 {
    let t = 2 * old_wnd - diff_half; // target_cwnd in half segments
    let r = ((2 * old_wnd as u64 * base_us as u64) as f64 / (t as f64 + 0.5)).floor() as u32;
    assert_eq!(fixed_point_diff(old_wnd, base_us, r).0, diff_half);
    r
}

const BASE_US: u32 = 100_001;

/// linux-2.6 Vegas at `cwnd`/`ssthresh` with baseRTT 100001 us. The
/// previous round sent `old_wnd` segments (`beg_snd_una = 100 -
/// old_wnd`) with cwnd `old_cwnd` at its start; the current round ends
/// after segment 100.
fn linux26(cwnd: f64, ssthresh: f64, old_wnd: u64, old_cwnd: u32) -> (Vegas, Window) {
    let mut v = Vegas::new(VegasConfig::linux26());
    let w = Window { cwnd, ssthresh };
    v.on_ack_sample(&w, &ack(1, 100, secs(BASE_US)));
    v.frame.round.beg_snd_nxt = 100;
    v.frame.round.clear();
    v.beg_snd_una = 100 - old_wnd;
    v.beg_snd_cwnd = old_cwnd;
    (v, w)
}

/// Three RTT samples of `rtt_us` in the round (pkts_acked only, no
/// cong_avoid), then the ACK that ends it.
fn linux26_round(v: &mut Vegas, w: &mut Window, rtt_us: u32) {
    for i in 0..3 {
        v.on_ack_sample(w, &ack(97 + i, 110, secs(rtt_us)));
    }
    end_round(v, w, secs(rtt_us));
}

#[test]
fn fixed_point_diff_is_in_half_segments_and_wraps_like_u32() {
    // target = ((old_wnd * baseRTT) << 1) / rtt, diff = (old_wnd << 1) - target.
    // 50 segments, RTT 1.09 baseRTT: 100 - floor(100 / 1.09) = 9 halves = 4.5 segments.
    assert_eq!(fixed_point_diff(50, 100_000, 109_000), (9, 91));
    assert_eq!(fixed_point_diff(10_000, 200_001, 200_001), (0, 20_000));
    // 20000 x 200001 x 2 = 8.00004e9 > 2^32: the kernel's u32 product wraps,
    // target collapses and diff is large although nothing is queued.
    let wrapped = ((2 * 20_000u64 * 200_001) % (1u64 << 32)) / 200_001;
    assert_eq!(fixed_point_diff(20_000, 200_001, 200_001), (40_000 - wrapped as u32, wrapped as u32));
    assert!(fixed_point_diff(20_000, 200_001, 200_001).0 > 8);
}

#[test]
fn fixed_point_diff_uses_the_segments_sent_in_the_previous_round() {
    // old_wnd = 20 (beg_snd_nxt - beg_snd_una) while cwnd is 50. diff with
    // old_wnd is 3 halves (< alpha 4: increase); with cwnd it would be 7 (hold).
    let r = rtt_us_for(20, BASE_US, 3);
    assert_eq!(fixed_point_diff(50, BASE_US, r).0, 7);
    let (mut v, mut w) = linux26(50.0, 10.0, 20, 50);
    linux26_round(&mut v, &mut w, r);
    assert_eq!(v.last_step().unwrap().diff, 1.5);
    assert_eq!(w.cwnd, 51.0);
}

#[test]
fn linux26_thresholds_compare_half_segments() {
    // Congestion avoidance, old_snd_cwnd = cwnd = 50, old_wnd = 50:
    // diff (halves) 3 < 4 -> +1; 4..=8 hold; 9 > 8 -> -1. Mainline's
    // floor(4.5) = 4 would hold where the half-segment form decreases.
    for (half, change) in [(0, 1.0), (3, 1.0), (4, 0.0), (8, 0.0), (9, -1.0), (20, -1.0)] {
        let (mut v, mut w) = linux26(50.0, 10.0, 50, 50);
        linux26_round(&mut v, &mut w, rtt_us_for(50, BASE_US, half));
        assert_eq!(w.cwnd, 50.0 + change, "diff {half} half-segments");
        assert_eq!(v.last_step().unwrap().diff, half as f64 / 2.0);
    }
    // Other alpha/beta (segments, compared doubled): alpha 6, beta 10 -> 12 and 20 halves.
    let cfg = VegasConfig { alpha: 6.0, beta: 10.0, ..VegasConfig::linux26() };
    for (half, change) in [(11, 1.0), (12, 0.0), (20, 0.0), (21, -1.0)] {
        let (mut v, mut w) = linux26(50.0, 10.0, 50, 50);
        v.cfg = cfg;
        linux26_round(&mut v, &mut w, rtt_us_for(50, BASE_US, half));
        assert_eq!(w.cwnd, 50.0 + change, "alpha 6 beta 10, diff {half} half-segments");
    }
}

#[test]
fn linux26_moves_toward_the_previous_rounds_cwnd_plus_minus_one() {
    // next = beg_snd_cwnd +- 1 (or = in the band); cwnd takes one step toward it.
    let hold = rtt_us_for(50, BASE_US, 6);
    let grow = rtt_us_for(50, BASE_US, 2);
    let shrink = rtt_us_for(50, BASE_US, 12);
    // cwnd went 50 -> 51 last round: a hold round takes it back to 50 ...
    let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
    linux26_round(&mut v, &mut w, hold);
    assert_eq!(w.cwnd, 50.0);
    // ... a grow round leaves it (next = 51 = cwnd) ...
    let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
    linux26_round(&mut v, &mut w, grow);
    assert_eq!(w.cwnd, 51.0);
    // ... and a shrink round takes one step down.
    let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
    linux26_round(&mut v, &mut w, shrink);
    assert_eq!(w.cwnd, 50.0);
    // The boundary saves the cwnd it saw (before the step) for the next
    // round, and the segments sent so far as the next left edge.
    assert_eq!((v.beg_snd_cwnd, v.beg_snd_una, v.frame.round.beg_snd_nxt), (51, 100, 150));
}

#[test]
fn linux26_slow_start_exit_sets_ssthresh_2_and_cwnd_to_target_plus_one_then_grows() {
    // snd_cwnd <= snd_ssthresh and diff > gamma (2 halves): ssthresh = 2,
    // cwnd = min(cwnd, (target >> 1) + 1), then tcp_slow_start (+1).
    // old_wnd 20 (the previous, half-size round), diff 3 halves: target 37 -> 18 + 1.
    let r = rtt_us_for(20, BASE_US, 3);
    let (mut v, mut w) = linux26(40.0, 2_147_483_647.0, 20, 20);
    linux26_round(&mut v, &mut w, r);
    assert_eq!((w.cwnd, w.ssthresh), (20.0, 2.0));
    // diff = gamma (2 halves) is not above it: a slow-start step.
    let (mut v, mut w) = linux26(40.0, 2_147_483_647.0, 20, 20);
    linux26_round(&mut v, &mut w, rtt_us_for(20, BASE_US, 2));
    assert_eq!((w.cwnd, w.ssthresh), (41.0, 2_147_483_647.0));
    // cwnd == ssthresh is slow start in 2.6.22 (snd_cwnd <= snd_ssthresh).
    let (mut v, mut w) = linux26(40.0, 40.0, 20, 20);
    linux26_round(&mut v, &mut w, r);
    assert_eq!((w.cwnd, w.ssthresh), (20.0, 2.0));
}

#[test]
fn linux26_exit_does_not_fire_in_congestion_avoidance_after_a_loss() {
    // 2.6.22 tests diff > gamma only inside snd_cwnd <= snd_ssthresh. With
    // ssthresh 20 after a loss and cwnd 30, a large diff is a -1 step
    // (2.6.24's `diff > gamma && snd_ssthresh > 2` would cut to target + 1).
    let (mut v, mut w) = linux26(30.0, 20.0, 30, 30);
    linux26_round(&mut v, &mut w, rtt_us_for(30, BASE_US, 30));
    assert_eq!((w.cwnd, w.ssthresh), (29.0, 20.0));
}

#[test]
fn linux26_has_no_tcp_current_ssthresh() {
    // Mainline raises ssthresh to 3/4 cwnd after each step; 2.6.22 leaves it.
    let (mut v, mut w) = linux26(100.0, 10.0, 100, 100);
    linux26_round(&mut v, &mut w, rtt_us_for(100, BASE_US, 6));
    assert_eq!((w.cwnd, w.ssthresh), (100.0, 10.0));
}

#[test]
fn linux26_slow_start_adds_one_segment_per_ack() {
    // tcp_slow_start of 2.6.22 without ABC: +1 per ACK, however many it covers.
    let (mut v, mut w) = linux26(10.0, 100.0, 10, 10);
    let s = AckSample { acked: 3, ..ack(50, 110, secs(BASE_US)) };
    v.on_ack_sample(&w, &s);
    v.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 11.0);
    // Mid-round ACKs in congestion avoidance change nothing.
    let (mut v, mut w) = linux26(10.0, 5.0, 10, 10);
    v.on_ack_sample(&w, &s);
    v.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 10.0);
}

#[test]
fn linux26_two_samples_fall_back_to_the_period_reno() {
    // cntRTT <= 2: tcp_reno_cong_avoid of 2.6.22: one credit per ACK (not per segment).
    let (mut v, mut w) = linux26(10.0, 5.0, 10, 10);
    v.on_ack_sample(&w, &ack(99, 110, secs(200_000)));
    let s = AckSample { acked: 4, ..ack(101, 150, secs(200_000)) };
    v.on_ack_sample(&w, &s);
    v.on_ack(&mut w, &s);
    assert_eq!((v.steps(), w.cwnd, v.reno.cwnd_cnt), (0, 10.0, 1));
    // The boundary bookkeeping still moved.
    assert_eq!((v.beg_snd_una, v.frame.round.beg_snd_nxt, v.beg_snd_cwnd), (100, 150, 10));
}

#[test]
fn linux26_keeps_the_pre_loss_round_edges_across_recovery() {
    // vegas_enable resets beg_snd_nxt only: beg_snd_una and beg_snd_cwnd
    // keep the last boundary's values, so the first round after a fast
    // recovery steps toward the pre-loss cwnd +- 1, i.e. up.
    let (mut v, mut w) = linux26(40.0, 10.0, 40, 40);
    linux26_round(&mut v, &mut w, rtt_us_for(40, BASE_US, 6));
    assert_eq!((w.cwnd, v.beg_snd_cwnd), (40.0, 40));
    let ss = v.ssthresh(&w, LossEvent::FastRecovery, 40, 0.0);
    assert_eq!(ss, 20.0);
    w = Window { cwnd: 20.0, ssthresh: 20.0 };
    v.on_recovery_exit(&mut w, 0.0);
    assert!(v.frame.enabled);
    let beg = v.frame.round.beg_snd_nxt;
    // First ACK of the new round: cwnd == ssthresh is slow start (+1).
    let s = ack(beg - 2, beg + 5, secs(150_000));
    v.on_ack_sample(&w, &s);
    v.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 21.0);
    for i in 0..2 {
        let s = ack(beg - 1 + i, beg + 5, secs(150_000));
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
    }
    assert_eq!(w.cwnd, 21.0);
    // A queue far above beta: next = 40 - 1 = 39 > 21, so cwnd grows.
    end_round(&mut v, &mut w, secs(150_000));
    assert!(v.last_step().unwrap().diff > 4.0);
    assert_eq!(w.cwnd, 22.0);
}

#[test]
fn linux26_runs_the_period_reno_outside_open() {
    let (mut v, mut w) = linux26(10.0, 10.0, 10, 10);
    let dup = AckSample { duplicate: true, ..ack(1, 100, secs(BASE_US)) };
    v.on_ack_sample(&w, &dup);
    v.on_state(&mut w, CaState::Disorder, &Conn::test(0.0));
    assert!(!v.frame.enabled);
    // Disorder: tcp_reno_cong_avoid, slow start while cwnd <= ssthresh (+1 per ACK).
    let s = AckSample { acked: 2, ..ack(1, 100, secs(BASE_US)) };
    v.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 11.0);
    let s = AckSample { cwnd_limited: false, ..s };
    v.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 11.0, "not window-limited: no growth");
}

#[test]
fn linux26_is_a_variant_with_mainline_defaults() {
    let p = Vegas::from_params(serde_json::json!({"variant": "linux-2.6"}).as_object().unwrap(), "f").unwrap();
    assert_eq!(p.cfg.variant, Variant::Linux26);
    assert_eq!((p.cfg.alpha, p.cfg.beta, p.cfg.gamma), (2.0, 4.0, 1.0));
    assert!(p.frame.linux_rtt);
}

/// The current-Linux and paper variants grow only a window that limits
/// the sender (a stand-in for Linux's cwnd validation, see the module
/// doc).
#[test]
fn the_per_round_step_grows_only_a_window_that_limits_the_sender() {
    for cfg in [VegasConfig::linux(), VegasConfig::paper()] {
        let (mut v, mut w) = in_ca(cfg, 20.0, 0.1);
        samples(&mut v, &mut w, 100, 5, 0.1); // no queueing: diff < alpha
        let end = AckSample { cwnd_limited: false, ..ack(101, 130, 0.1) };
        v.on_ack_sample(&w, &end);
        v.on_ack(&mut w, &end);
        assert_eq!(w.cwnd, 20.0, "{:?}", cfg.variant);
    }
    // Window-limited, the step grows in every variant.
    let (mut v, mut w) = in_ca(VegasConfig::linux(), 20.0, 0.1);
    samples(&mut v, &mut w, 100, 5, 0.1);
    let end = ack(101, 130, 0.1);
    v.on_ack_sample(&w, &end);
    v.on_ack(&mut w, &end);
    assert_eq!(w.cwnd, 21.0);
}
