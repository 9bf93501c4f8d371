use super::*;

fn sample(now: f64, acked: u32, rtt: Option<f64>) -> AckSample {
    AckSample { rtt, in_flight: 10, snd_nxt: 10, ..AckSample::test(now, acked) }
}

#[test]
fn alpha_of_delta_reference_values() {
    // Reference s15: alpha(Delta) = 1 (Delta <= 1 s), 11.25 (2 s), 45 (5 s), 111.25 (10 s).
    assert_eq!(alpha_of_delta(0.5, 1.0), 1.0);
    assert_eq!(alpha_of_delta(1.0, 1.0), 1.0);
    assert_eq!(alpha_of_delta(2.0, 1.0), 11.25);
    assert_eq!(alpha_of_delta(5.0, 1.0), 45.0);
    assert_eq!(alpha_of_delta(10.0, 1.0), 111.25);
    // Linux's integer factor truncates 1 + floor(10 d + d^2/4) (d = Delta - 1 s):
    // 2 s -> 11, 5 s -> 45, 10 s -> 111.
    assert_eq!(alpha_factor_linux(1000, 1000, 1000), 1);
    assert_eq!(alpha_factor_linux(2000, 1000, 1000), 11);
    assert_eq!(alpha_factor_linux(5000, 1000, 1000), 45);
    assert_eq!(alpha_factor_linux(10000, 1000, 1000), 111);
    assert_eq!(alpha_factor_linux(5000 * 250 / 1000, 250, 250), 45);
}

#[test]
fn beta_scaled_alpha_is_two_one_minus_beta_times_alpha_of_delta() {
    // alpha = 2 (1 - beta) alpha(Delta); with beta = 0.5 the factor is 1.
    let mut h = Htcp::new(HtcpConfig { use_rtt_scaling: false, beta_scaled_alpha: true, ..HtcpConfig::paper() });
    h.init(0.0);
    h.beta = 0.5;
    assert_eq!(h.compute_alpha(5.0), 45.0);
    h.beta = 0.8;
    assert!((h.compute_alpha(5.0) - 2.0 * 0.2 * 45.0).abs() < 1e-12);
    // Linux x128: alpha = 2 factor (128 - beta); beta = 102 -> 2*45*26/128.
    let mut l = Htcp::new(HtcpConfig { use_rtt_scaling: false, ..HtcpConfig::linux() });
    l.init(0.0);
    l.beta = 102.0 / 128.0;
    assert_eq!(l.compute_alpha(5000.0), (2 * 45 * 26) as f64 / 128.0);
    l.beta = 0.5;
    assert_eq!(l.compute_alpha(2000.0), 11.0);
}

#[test]
fn rtt_scaling_factor() {
    // Linux: scale = (HZ << 3)/(10 minRTT) clamped to [4, 80]; factor = max(8 factor/scale, 1),
    // i.e. factor x minRTT/100 ms with the ratio clamped to [0.1, 2].
    assert_eq!(rtt_scaled_factor_linux(45, 100, 1000, 0.1), 45); // 100 ms: x1
    assert_eq!(rtt_scaled_factor_linux(45, 50, 1000, 0.1), 22); // 50 ms: x0.5 = 22.5, truncated
    assert_eq!(rtt_scaled_factor_linux(45, 400, 1000, 0.1), 90); // 400 ms: x4 clamped to x2
    assert_eq!(rtt_scaled_factor_linux(45, 5, 1000, 0.1), 4); // 5 ms: x0.05 clamped to x0.1 = 4.5
    assert_eq!(rtt_scaled_factor_linux(1, 50, 1000, 0.1), 1); // never below 1
    assert_eq!(rtt_scale_float(0.05, 0.1), 0.5);
    assert_eq!(rtt_scale_float(0.4, 0.1), 2.0);
    assert_eq!(rtt_scale_float(0.001, 0.1), 0.1);
    // Reference s15: at minRTT = 50 ms multiply alpha(Delta) by 0.5.
    let mut h = Htcp::new(HtcpConfig { use_rtt_scaling: true, ..HtcpConfig::paper() });
    h.init(0.0);
    h.min_rtt = 0.05;
    h.beta = 0.5;
    assert_eq!(h.compute_alpha(2.0), 11.25 * 0.5);
}

#[test]
fn beta_is_rtt_ratio_within_bounds() {
    // beta = RTTmin/RTTmax clamped to [BETA_MIN, BETA_MAX] = [64, 102]/128.
    let l = Htcp::new(HtcpConfig::linux());
    assert_eq!(l.adaptive_beta(100.0, 150.0), 85.0 / 128.0); // floor(100*128/150) = 85
    assert_eq!(l.adaptive_beta(100.0, 300.0), 0.5);
    assert_eq!(l.adaptive_beta(100.0, 105.0), 102.0 / 128.0);
    let p = Htcp::new(HtcpConfig::paper());
    assert!((p.adaptive_beta(0.1, 0.15) - 2.0 / 3.0).abs() < 1e-15);
    assert!((p.adaptive_beta(0.1, 0.3) - 1.0 / 3.0).abs() < 1e-15); // b = 1 - RTTmin/RTTmax, unbounded
    assert!((p.adaptive_beta(0.1, 0.105) - 0.1 / 0.105).abs() < 1e-15);
}

#[test]
fn linux_backoff_first_event_half_then_adaptive() {
    let mut h = Htcp::new(HtcpConfig { use_bandwidth_switch: false, ..HtcpConfig::linux() });
    h.on_send(0.0, 1500, 1);
    let w = Window { cwnd: 1000.0, ssthresh: 100.0 };
    // RTT samples: min 100 ms, then up to 150 ms in steps <= 20 ms (outlier rule).
    for (i, r) in [0.1, 0.12, 0.14, 0.15].iter().enumerate() {
        h.on_ack_sample(&w, &sample(0.1 * (i + 1) as f64, 1, Some(*r)));
    }
    assert_eq!((h.min_rtt(), h.max_rtt()), (0.1, 0.15));
    // A jump of more than 20 ms above maxRTT is ignored.
    h.on_ack_sample(&w, &sample(0.5, 1, Some(0.2)));
    assert_eq!(h.max_rtt(), 0.15);
    // First event: modeswitch not set -> beta = 0.5: ssthresh = 500.
    assert_eq!(h.ssthresh(&w, LossEvent::FastRecovery, 1000, 1.0), 500.0);
    assert_eq!(h.beta, 0.5);
    // maxRTT faded: 100 + floor(50 * 95 / 100) = 147 jiffies.
    assert_eq!(h.max_rtt(), 0.147);
    let mut w2 = w;
    h.on_recovery_exit(&mut w2, 1.1);
    // Second event: beta = floor(100*128/147)/128 = 87/128; ssthresh = floor(1000*87/128) = 679.
    assert_eq!(h.ssthresh(&w, LossEvent::FastRecovery, 1000, 5.0), 679.0);
    assert_eq!(h.beta, 87.0 / 128.0);
}

#[test]
fn bandwidth_switch_forces_half_backoff() {
    // |maxB - old_maxB| > 20% of old_maxB -> beta = 0.5 and modeswitch = 0.
    let mut h = Htcp::new(HtcpConfig::linux());
    h.min_rtt = 100.0;
    h.max_rtt = 150.0;
    h.modeswitch = true;
    h.old_max_b = 1000.0;
    h.max_b = 1200.0; // exactly +20%: not a switch
    h.beta_update();
    assert_eq!(h.beta, 85.0 / 128.0);
    h.max_b = 1441.0; // +20.08% over the new old_maxB = 1200
    h.beta_update();
    assert_eq!(h.beta, 0.5);
    assert!(!h.modeswitch);
    // The next event (throughput stable) still uses 0.5 and re-arms modeswitch.
    h.beta_update();
    assert_eq!(h.beta, 0.5);
    assert!(h.modeswitch);
    h.beta_update();
    assert_eq!(h.beta, 85.0 / 128.0);
}

#[test]
fn linux_increase_uses_the_counter_rule() {
    // htcp_cong_avoid: if (cnt * alpha) >> 7 >= cwnd { cwnd++; cnt = 0 } else cnt += pkts_acked.
    // beta = 0.5, Delta = 5 s, minRTT = 100 ms: alpha = 2 * 45 * 64 / 128 = 45.
    let mut h = Htcp::new(HtcpConfig { use_bandwidth_switch: false, ..HtcpConfig::linux() });
    h.on_send(0.0, 1500, 1);
    let mut w = Window { cwnd: 900.0, ssthresh: 100.0 };
    h.on_ack_sample(&w, &sample(0.0, 1, Some(0.1)));
    h.alpha = h.compute_alpha(5000.0);
    assert_eq!(h.alpha, 45.0);
    let t = 5.0;
    for i in 1..=900 {
        let s = sample(t, 1, None);
        h.on_ack_sample(&w, &s);
        h.on_ack(&mut w, &s);
        if i == 20 {
            assert_eq!(w.cwnd, 900.0); // credit 20: 20*45 = 900 >= 900 only now
        }
        if i == 21 {
            assert_eq!(w.cwnd, 901.0); // the increment costs one ACK without credit
        }
    }
    // Each later step from W needs ceil(W/45) credits plus one ACK: 22 ACKs for
    // W = 901..944, so 900 ACKs give 1 + floor((900 - 21)/22) = 40 increments:
    // the per-RTT increase is about alpha W/(W + alpha) rounded down, not 45.
    assert_eq!(w.cwnd, 940.0);
}

#[test]
fn float_increase_is_about_alpha_per_rtt() {
    // cwnd += alpha/cwnd per ACK: over one window of W ACKs the increase lies
    // between alpha W/(W + alpha) and alpha.
    let mut h = Htcp::new(HtcpConfig { beta_scaled_alpha: true, ..HtcpConfig::paper() });
    h.on_send(0.0, 1500, 1);
    h.beta = 0.6;
    let alpha = 2.0 * 0.4 * 45.0;
    let mut w = Window { cwnd: 1000.0, ssthresh: 100.0 };
    for _ in 0..1000 {
        let s = sample(5.0, 1, None);
        h.on_ack(&mut w, &s);
    }
    assert_eq!(h.alpha, alpha);
    let inc = w.cwnd - 1000.0;
    assert!(inc <= alpha && inc >= alpha * 1000.0 / (1000.0 + alpha), "{inc}");
    // Paper backoff keeps beta cwnd exactly.
    h.min_rtt = 0.1;
    h.max_rtt = 0.25;
    assert!((h.ssthresh(&w, LossEvent::FastRecovery, 0, 6.0) - 0.4 * w.cwnd).abs() < 1e-9);
}

/// An H-TCP built from `params`, after one congestion event at t = 10 s with
/// RTTmin = 100 ms and RTTmax = 107.5 ms (beta = RTTmin/RTTmax = 0.930),
/// ended at once; then one window of W = 1000 ACKs at Delta = 5 s after the
/// event. Returns (beta, the window's increase).
fn increase_per_rtt_after_event(params: serde_json::Value) -> (f64, f64) {
    let mut h = Htcp::from_params(params.as_object().unwrap(), "f").unwrap();
    h.on_send(0.0, 1500, 1);
    let mut w = Window { cwnd: 1000.0, ssthresh: 100.0 };
    for (i, r) in [0.1, 0.1075].iter().enumerate() {
        h.on_ack_sample(&w, &sample(1.0 + i as f64, 1, Some(*r)));
    }
    h.ssthresh(&w, LossEvent::FastRecovery, 1000, 10.0);
    h.on_state(&mut w, CaState::Recovery, &Conn::test(10.0));
    h.on_state(&mut w, CaState::Open, &Conn::test(10.0));
    for _ in 0..1000 {
        let s = sample(15.0, 1, None);
        h.on_ack_sample(&w, &s);
        h.on_ack(&mut w, &s);
    }
    (h.beta, w.cwnd - 1000.0)
}

#[test]
fn paper_variant_increases_by_alpha_of_delta_per_rtt_without_the_two_one_minus_beta_factor() {
    // Seed mv-highspeed: a = 1 + 10 (Delta - 1) + ((Delta - 1)/2)^2 per RTT, b = 1 - RTTmin/RTTmax.
    // At Delta = 5 s, a = 45: cwnd += 45/cwnd per ACK, so one window of 1000 ACKs
    // adds between 45 * 1000/1045 and 45 segments.
    let (beta, inc) = increase_per_rtt_after_event(serde_json::json!({"variant": "paper"}));
    assert!((beta - 0.1 / 0.1075).abs() < 1e-12, "beta {beta}");
    let a = alpha_of_delta(5.0, 1.0);
    assert_eq!(a, 45.0);
    assert!(inc <= a && inc >= a * 1000.0 / (1000.0 + a), "paper: {inc} per RTT, formula {a}");
    // Linux's rule alpha = 2 (1 - beta) alpha(Delta) (also Leith and Shorten's),
    // given explicitly, makes the same increase 2 (1 - 0.930) = 0.140 times as
    // large: 7 times slower.
    let (_, scaled) = increase_per_rtt_after_event(serde_json::json!({"variant": "paper", "beta_scaled_alpha": true}));
    let k = 2.0 * (1.0 - beta);
    assert!(scaled <= k * a && scaled >= k * a * 1000.0 / (1000.0 + k * a), "scaled: {scaled}, {}", k * a);
    assert!(inc / scaled > 6.5, "{inc} vs {scaled}");
}

#[test]
fn delta_counts_from_the_end_of_the_congestion_event() {
    // htcp_state: last_cong = now on entering Recovery and again on return to Open.
    let mut h = Htcp::new(HtcpConfig { use_rtt_scaling: false, ..HtcpConfig::paper() });
    h.on_send(0.0, 1500, 1);
    let mut w = Window { cwnd: 100.0, ssthresh: 1e9 };
    h.ssthresh(&w, LossEvent::FastRecovery, 100, 10.0);
    h.on_state(&mut w, CaState::Recovery, &Conn::test(10.0));
    h.on_state(&mut w, CaState::Open, &Conn::test(10.5));
    h.beta = 0.5;
    assert_eq!(h.compute_alpha(12.5), alpha_of_delta(2.0, 1.0));
    // A timeout resets the epoch, and so does every further timeout (Linux
    // reports each); the return to Open starts it again.
    h.on_rto(&mut w, 21.0);
    h.on_state(&mut w, CaState::Loss, &Conn::test(21.0));
    h.on_rto(&mut w, 21.4);
    h.on_state(&mut w, CaState::Loss, &Conn::test(21.4));
    assert_eq!(h.compute_alpha(23.4), alpha_of_delta(2.0, 1.0));
    h.on_state(&mut w, CaState::Open, &Conn::test(22.0));
    assert_eq!(h.compute_alpha(24.0), alpha_of_delta(2.0, 1.0));
    // Disorder and back is no congestion event.
    h.on_state(&mut w, CaState::Disorder, &Conn::test(23.0));
    h.on_state(&mut w, CaState::Open, &Conn::test(23.5));
    assert_eq!(h.compute_alpha(24.0), alpha_of_delta(2.0, 1.0));
    // An ECN reduction (CWR) is one (htcp_state resets on CA_CWR).
    h.on_state(&mut w, CaState::Cwr, &Conn::test(30.0));
    h.on_state(&mut w, CaState::Open, &Conn::test(30.5));
    assert_eq!(h.compute_alpha(32.5), alpha_of_delta(2.0, 1.0));
}

#[test]
fn params_are_validated_and_named() {
    let mut m = serde_json::Map::new();
    m.insert("beta_min".into(), serde_json::json!(0.9));
    let e = Htcp::from_params(&m, "flows[0].cc").err().unwrap();
    assert_eq!(e.field, "flows[0].cc.params.beta_min");
    let mut m = serde_json::Map::new();
    m.insert("variant".into(), serde_json::json!("paper"));
    let p = Htcp::from_params(&m, "f").unwrap();
    assert_eq!(p.cfg, HtcpConfig::paper());
    assert!(!p.cfg.beta_scaled_alpha, "the paper's alpha has no 2 (1 - beta) factor");
    // An explicit value overrides the variant's default, both ways.
    m.insert("beta_scaled_alpha".into(), serde_json::json!(true));
    assert!(Htcp::from_params(&m, "f").unwrap().cfg.beta_scaled_alpha);
    let mut l = serde_json::Map::new();
    l.insert("beta_scaled_alpha".into(), serde_json::json!(false));
    assert!(!Htcp::from_params(&l, "f").unwrap().cfg.beta_scaled_alpha);
    assert_eq!(Htcp::from_params(&serde_json::Map::new(), "f").unwrap().cfg, HtcpConfig::linux());
}
