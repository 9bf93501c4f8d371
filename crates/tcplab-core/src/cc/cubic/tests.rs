use super::*;

fn sample(now: f64, acked: u32, rtt: f64) -> AckSample {
    AckSample { rtt: Some(rtt), srtt: rtt, min_rtt: rtt, ..AckSample::test(now, acked) }
}

/// Drives congestion avoidance with one ACK per segment, `cwnd` ACKs per
/// `rtt`, from `t0` to `t1`; returns (time, cwnd) after every ACK.
fn drive(c: &mut Cubic, w: &mut Window, t0: f64, t1: f64, rtt: f64) -> Vec<(f64, f64)> {
    let mut t = t0;
    let mut out = Vec::new();
    while t < t1 {
        let s = sample(t, 1, rtt);
        c.on_ack_sample(w, &s);
        c.on_ack(w, &s);
        out.push((t, w.cwnd));
        t += rtt / w.cwnd;
    }
    out
}

#[test]
fn k_matches_reference_vectors() {
    // Reference section 15: W_max 100, beta 0.7 -> K = cbrt(30 / 0.4) = 4.2172 s;
    // Linux cube_factor = 2^40 / 410 = 2681735677, K = cbrt(cube_factor * 30)
    // = 4317 (1/1024 s); W_max 1000 -> K = cbrt(750) = 9.0856 s, Linux 9301.
    let c = Cubic::new(Variant::Linux);
    assert_eq!(c.cube_rtt_scale, 410);
    assert_eq!(c.cube_factor, 2681735677);
    assert_eq!(cube_root_rounded(c.cube_factor * 30), 4317);
    assert_eq!(cube_root_rounded(c.cube_factor * 300), 9301);
    assert!(((30.0f64 / 0.4).cbrt() - 4.2172).abs() < 5e-5);
    assert!(((300.0f64 / 0.4).cbrt() - 9.0856).abs() < 5e-5);
    // The engine computes it at the first CA ACK after the loss (epoch
    // start), not at the loss.
    let mut c = Cubic::new(Variant::Linux);
    c.hystart = false;
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    let ss = c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0);
    assert_eq!(ss, 70.0); // floor(100 * 717 / 1024)
    assert!(c.epoch_start.is_none());
    w.cwnd = 70.0;
    w.ssthresh = 70.0;
    c.on_ack(&mut w, &sample(2.5, 1, 0.1));
    assert_eq!(c.epoch_start, Some(2500));
    assert_eq!(c.bic_k, 4317);
    assert_eq!(c.origin_point, 100);
}

/// W(t) = C (t - K)^3 + W_max with RFC constants.
fn w_of(t: f64, c: f64, wmax: f64, beta: f64) -> f64 {
    let k = (wmax * (1.0 - beta) / c).cbrt();
    c * (t - k).powi(3) + wmax
}

/// Cwnd at the last ACK at or before `t`.
fn at(trace: &[(f64, f64)], t: f64) -> f64 {
    trace.iter().take_while(|(x, _)| *x <= t + 1e-12).last().unwrap().1
}

#[test]
fn linux_window_follows_the_cubic_over_an_epoch() {
    // After a loss at W_max = 100 (cwnd -> 70), cwnd(t) tracks
    // W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C) = 4.2172 s:
    // concave up to W_max at t = K, plateau, then convex. Linux aims at
    // W(t + delay_min) and gets there within an RTT, on an integer cwnd.
    let mut c = Cubic::new(Variant::Linux);
    c.hystart = false;
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    c.on_ack_sample(&w, &sample(0.0, 1, 0.1)); // delay_min = 100 ms
    let ss = c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0);
    w.cwnd = ss;
    w.ssthresh = ss;
    let trace = drive(&mut c, &mut w, 10.0, 19.0, 0.1);
    for t in [0.5, 1.0, 2.0, 3.0, 4.0, 4.2172, 5.0, 6.0, 7.0, 8.0] {
        let want = w_of(t, 0.4, 100.0, 0.7);
        let got = at(&trace, 10.0 + t);
        assert!((got - want).abs() <= 2.0, "t = {t}: cwnd {got}, W(t) {want}");
    }
    // Never above W_max before K, and the plateau is flat: within one
    // segment of W_max for t in [K - 1 s, K + 1 s].
    assert!(at(&trace, 10.0 + 4.0) <= 100.0);
    for t in [3.3, 4.2, 5.1] {
        assert!((at(&trace, 10.0 + t) - 100.0).abs() <= 1.0, "t = {t}");
    }
}

#[test]
fn rfc9438_window_follows_the_cubic_over_an_epoch() {
    // RFC 9438 4.2: W_cubic(t) = C (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C),
    // target = W_cubic(t + RTT), cwnd += (target - cwnd) / cwnd; ssthresh =
    // FlightSize * beta. Reno-friendly region off to see the curve alone.
    let mut c = Cubic::new(Variant::Rfc9438);
    c.tcp_friendliness = false;
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    let ss = c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0);
    assert!((ss - 70.0).abs() < 1e-9);
    w.cwnd = ss;
    w.ssthresh = ss;
    let trace = drive(&mut c, &mut w, 10.0, 19.0, 0.1);
    assert!((c.k - 4.2172).abs() < 5e-5);
    for t in [0.5, 1.0, 2.0, 3.0, 4.2172, 5.0, 6.0, 7.0, 8.0] {
        let want = w_of(t, 0.4, 100.0, 0.7);
        let got = at(&trace, 10.0 + t);
        assert!((got - want).abs() <= 0.2, "t = {t}: cwnd {got}, W(t) {want}");
    }
}

#[test]
fn rfc9438_reno_friendly_alpha_becomes_one_at_cwnd_prior() {
    // RFC 9438 4.3: W_est += alpha * acked / cwnd, alpha = 3 (1 - beta) / (1 + beta)
    // = 0.5294 until W_est >= cwnd_prior (100), then 1; cwnd = W_est when
    // W_cubic(t) < W_est. From 70: W_est reaches 100 at t1 = 30 / 0.5294 RTTs
    // = 5.667 s, then W_est(8 s) = 100 + (8 - t1) / 0.1 = 123.3 > W_cubic(8) = 121.65.
    let mut c = Cubic::new(Variant::Rfc9438);
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    let ss = c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0);
    w.cwnd = ss;
    w.ssthresh = ss;
    let trace = drive(&mut c, &mut w, 10.0, 18.0, 0.1);
    let alpha = 3.0 * 0.3 / 1.7;
    let t1 = 30.0 / alpha * 0.1;
    let want = 100.0 + (8.0 - t1) / 0.1;
    assert!(want > w_of(8.0, 0.4, 100.0, 0.7));
    let got = at(&trace, 18.0);
    assert!((got - want).abs() <= 0.3, "cwnd {got} vs W_est {want}");
    // Before t1 the cubic dominates (W_est < W_cubic).
    assert!((at(&trace, 14.0) - w_of(4.0, 0.4, 100.0, 0.7)).abs() <= 0.2);
}

#[test]
fn tcp_friendly_region_takes_over_at_small_windows_and_short_rtts() {
    // W_max = 20, RTT 10 ms: K = cbrt(6 / 0.4) = 2.466 s, so after 1 s
    // W_cubic(1) = 20 - 0.4 (K - 1)^3 = 18.74, while the Reno estimate
    // tcp_cwnd grew by one per floor(cwnd * 15 / 8) + 1 ACKs ("ack_cnt > d"),
    // i.e. 8 / (15 + 8 / 14) .. 8 / 15 = 0.514 .. 0.533 segment per RTT over
    // 100 RTTs: 65.4 .. 67.3. cwnd trails tcp_cwnd by at most the HZ/32
    // (31 ms = 3.1 RTT) update throttle's worth, 1.7, plus one segment.
    let run = |friendly: bool| {
        let mut c = Cubic::new(Variant::Linux);
        c.hystart = false;
        c.tcp_friendliness = friendly;
        let mut w = Window { cwnd: 20.0, ssthresh: 1e9 };
        c.on_ack_sample(&w, &sample(0.0, 1, 0.01));
        let ss = c.ssthresh(&w, LossEvent::FastRecovery, 20, 0.0);
        assert_eq!(ss, 14.0); // floor(20 * 717 / 1024)
        w.cwnd = ss;
        w.ssthresh = ss;
        let trace = drive(&mut c, &mut w, 5.0, 6.0, 0.01);
        at(&trace, 6.0)
    };
    let reno = run(true);
    assert!((62.7..=67.4).contains(&reno), "Reno-friendly cwnd {reno}");
    let cubic_only = run(false);
    let want = 20.0 - 0.4 * ((6.0f64 / 0.4).cbrt() - 1.0).powi(3);
    assert!((cubic_only - want).abs() <= 1.5, "cubic-only cwnd {cubic_only} vs {want}");
}

#[test]
fn growth_is_at_most_one_segment_per_two_acked() {
    // cnt = max(cnt, 2): far below the curve cwnd grows by 1.5x per window acked.
    let mut c = Cubic::new(Variant::Linux);
    c.hystart = false;
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0); // W_max = 100
    w.ssthresh = 70.0; // cwnd 100 >= W_max: K = 0, origin = cwnd
    c.on_ack(&mut w, &sample(0.0, 1, 0.1)); // epoch start, cnt = 100 cwnd
    assert_eq!(c.bic_k, 0);
    assert_eq!(w.cwnd, 100.0);
    // 10 s later the target is 100 + 0.4 * 10^3 = 500: cnt = 100 / 400 -> 2.
    for _ in 0..100 {
        c.on_ack(&mut w, &sample(10.0, 1, 0.1));
    }
    assert_eq!(c.cnt, 2);
    assert_eq!(w.cwnd, 150.0); // (1 leftover + 100) / 2 = 50 increments
}

#[test]
fn no_loss_yet_means_at_least_five_percent_per_rtt() {
    // last_max_cwnd == 0 && cnt > 20 -> cnt = 20.
    let mut c = Cubic::new(Variant::Linux);
    c.update(200, 1, 0.0);
    assert_eq!(c.cnt, 20);
}

#[test]
fn hystart_exits_slow_start_on_a_delay_increase() {
    // hystart_update: per round, curr_rtt = min RTT; from the 9th sample on
    // (HYSTART_MIN_SAMPLES = 8), exit if curr_rtt > delay_min +
    // clamp(delay_min / 8, 4 ms, 16 ms). delay_min = 100 ms -> 112.5 ms.
    let run = |rtt2: f64| {
        let mut c = Cubic::new(Variant::Linux);
        let mut w = Window { cwnd: 20.0, ssthresh: 2_147_483_647.0 };
        let mut t = 0.0;
        // Round 1 (end_seq = 21): RTT 100 ms; ACKs 5 ms apart (no ACK train).
        for una in 1..=20 {
            let mut s = sample(t, 0, 0.1);
            s.snd_una = una;
            s.snd_nxt = 21;
            c.on_ack_sample(&w, &s);
            t += 0.005;
        }
        assert!(!c.found);
        // Round 2: RTT rtt2.
        let mut found_at = None;
        for (i, una) in (22..40).enumerate() {
            let mut s = sample(t, 0, rtt2);
            s.snd_una = una;
            s.snd_nxt = 60;
            c.on_ack_sample(&w, &s);
            if c.found && found_at.is_none() {
                found_at = Some(i + 1);
            }
            t += 0.005;
        }
        let s = sample(t, 1, rtt2);
        c.on_ack(&mut w, &s);
        (found_at, w)
    };
    let (found_at, w) = run(0.113);
    assert_eq!(found_at, Some(9));
    assert_eq!(w.ssthresh, 20.0); // ssthresh = cwnd at detection
    assert!(!w.in_slow_start());
    let (found_at, w) = run(0.112);
    assert_eq!(found_at, None);
    assert!(w.in_slow_start());
}

#[test]
fn hystart_exits_on_an_ack_train_of_half_the_min_rtt() {
    // ACKs within hystart_ack_delta (2 ms) extend the train; exit when it spans
    // more than (delay_min + 1 ms cushion) / 2 = 20.5 ms with delay_min 40 ms.
    let mut c = Cubic::new(Variant::Linux);
    let w = Window { cwnd: 32.0, ssthresh: 2_147_483_647.0 };
    for i in 0..=30u64 {
        let mut s = sample(1.0 + i as f64 * 0.001, 1, 0.04);
        s.snd_una = 1 + i;
        s.snd_nxt = 100;
        c.on_ack_sample(&w, &s);
        assert_eq!(c.found, i >= 21, "ACK {i} ({i} ms into the round)");
        if c.found {
            break;
        }
    }
    // Below hystart_low_window (16) nothing is detected.
    let mut c = Cubic::new(Variant::Linux);
    let w = Window { cwnd: 15.0, ssthresh: 2_147_483_647.0 };
    for i in 0..=30u64 {
        let mut s = sample(1.0 + i as f64 * 0.001, 1, 0.04);
        s.snd_una = 1 + i;
        s.snd_nxt = 100;
        c.on_ack_sample(&w, &s);
    }
    assert!(!c.found);
}

#[test]
fn rto_forgets_wmax_and_delay_min() {
    // cubictcp_state(TCP_CA_Loss) -> bictcp_reset.
    let mut c = Cubic::new(Variant::Linux);
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    c.on_ack_sample(&w, &sample(0.0, 1, 0.1));
    c.ssthresh(&w, LossEvent::Timeout, 100, 1.0);
    assert_eq!(c.last_max_cwnd, 100);
    w.cwnd = 1.0;
    c.on_rto(&mut w, 1.0);
    assert_eq!(c.last_max_cwnd, 0);
    assert_eq!(c.delay_min_us, 0);
    assert!(c.epoch_start.is_none());
}

#[test]
fn variant_2005_constants_and_k() {
    // 2005 paper / Linux v2.0: beta 819/1024 (b = 0.2), C = 0.4, no HyStart,
    // initial_ssthresh 100. K = cbrt(W_max b / C) = cbrt(500) = 7.937 s for
    // W_max = 1000 (the integer cwnd after the loss, floor(1000 * 819 / 1024)
    // = 799, makes W_max - cwnd = 201 instead of 200: +0.013 s).
    let mut map = serde_json::Map::new();
    map.insert("variant".into(), serde_json::json!("2005"));
    let mut c = Cubic::from_params(&map, "f").unwrap();
    assert_eq!(c.beta_1024, 819);
    assert_eq!(c.beta_scale, 23); // 8 (1024 + 819) / 3 / (1024 - 819)
    assert!(!c.hystart);
    let mut w = Window { cwnd: 10.0, ssthresh: 1e9 };
    c.on_ack(&mut w, &sample(0.0, 1, 0.1));
    assert_eq!(w.ssthresh, 100.0);
    let mut w = Window { cwnd: 1000.0, ssthresh: 1e9 };
    let ss = c.ssthresh(&w, LossEvent::FastRecovery, 1000, 1.0);
    assert_eq!(ss, 799.0);
    w.cwnd = ss;
    w.ssthresh = ss;
    c.on_ack(&mut w, &sample(2.0, 1, 0.1));
    let k = c.bic_k as f64 / 1024.0;
    assert!((k - (1000.0f64 * 0.2 / 0.4).cbrt()).abs() < 0.02, "K = {k}");
}

#[test]
fn variant_2005_caps_growth_at_max_increment_per_100ms() {
    // v2.0: min_cnt = cwnd / (max_increment * delay_min / 100 ms): with
    // delay_min = 100 ms at most 16 segments per RTT. At t = 5 s the cubic
    // alone would give cnt = 1000 / 53 = 18.
    let mut c = Cubic::new(Variant::V2005);
    c.delay_min_us = 100_000;
    c.last_max_cwnd = 1000;
    c.update(1000, 1, 10.0);
    c.update(1000, 1, 15.0);
    assert_eq!(c.cnt, 1000 / 16);
    c.max_increment = 0;
    c.last_cwnd = 0;
    c.update(1000, 1, 15.001);
    assert_eq!(c.cnt, 1000 / 53);
}

#[test]
fn parameters_are_validated() {
    let mut map = serde_json::Map::new();
    map.insert("variant".into(), serde_json::json!("rfc9438"));
    map.insert("hz".into(), serde_json::json!(250));
    let err = Cubic::from_params(&map, "flows[0].cc").err().unwrap();
    assert_eq!(err.field, "flows[0].cc.params.hz");
    let mut map = serde_json::Map::new();
    map.insert("beta".into(), serde_json::json!(0.0));
    let err = Cubic::from_params(&map, "flows[0].cc").err().unwrap();
    assert_eq!(err.field, "flows[0].cc.params.beta");
    let mut map = serde_json::Map::new();
    map.insert("hystart_detect".into(), serde_json::json!(4));
    let err = Cubic::from_params(&map, "flows[0].cc").err().unwrap();
    assert_eq!(err.field, "flows[0].cc.params.hystart_detect");
}

#[test]
fn linux_ssthresh_and_fast_convergence() {
    // ssthresh = max(cwnd * 717 / 1024, 2); W_max = cwnd, or
    // cwnd * (1024 + 717) / 2048 if cwnd < previous W_max (fast convergence).
    let mut c = Cubic::new(Variant::Linux);
    let ss = c.ssthresh(&Window { cwnd: 1000.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 1000, 0.0);
    assert_eq!(ss, (1000 * 717 / 1024) as f64);
    assert_eq!(c.last_max_cwnd, 1000);
    c.ssthresh(&Window { cwnd: 80.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 80, 1.0);
    assert_eq!(c.last_max_cwnd, 80 * 1741 / 2048);
    assert_eq!(c.last_max_cwnd, 68); // ~ 80 (1 + 0.7) / 2 = 68
    c.fast_convergence = false;
    c.ssthresh(&Window { cwnd: 50.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 50, 2.0);
    assert_eq!(c.last_max_cwnd, 50);
    let ss = c.ssthresh(&Window { cwnd: 2.0, ssthresh: 1e9 }, LossEvent::Timeout, 2, 3.0);
    assert_eq!(ss, 2.0);
}
