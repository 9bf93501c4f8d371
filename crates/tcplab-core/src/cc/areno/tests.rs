use super::*;

fn ack(now: f64, snd_una: u64, rtt: f64) -> AckSample {
    AckSample { rtt: Some(rtt), snd_una, snd_nxt: snd_una + 10, ..AckSample::test(now, 1) }
}

fn build(json: serde_json::Value) -> AReno {
    AReno::from_params(json.as_object().unwrap(), "flows[0].cc").unwrap()
}

/// Feeds RTT samples: the first is the minimum, the last is current.
fn rtts(a: &mut AReno, w: &Window, samples: &[f64]) {
    for (i, &r) in samples.iter().enumerate() {
        a.on_ack_sample(w, &ack(0.001 * i as f64, i as u64 + 1, r));
    }
}

fn simpson(f: impl Fn(f64) -> f64, n: usize) -> f64 {
    let h = 1.0 / n as f64;
    (0..=n)
        .map(|i| {
            f(i as f64 * h)
                * if i == 0 || i == n {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                }
        })
        .sum::<f64>()
        * h
        / 3.0
}

#[test]
fn congestion_level_is_clamped_and_zero_without_rtt_cong() {
    // c = (RTT - RTT_min)/(RTT_cong - RTT_min) in [0, 1].
    assert!((congestion_level(0.15, 0.1, Some(0.2)) - 0.5).abs() < 1e-12);
    assert_eq!(congestion_level(0.3, 0.1, Some(0.2)), 1.0);
    assert_eq!(congestion_level(0.09, 0.1, Some(0.2)), 0.0);
    assert_eq!(congestion_level(0.15, 0.1, None), 0.0, "before the first loss");
    assert_eq!(congestion_level(0.15, 0.1, Some(0.1)), 0.0, "RTT_cong not above RTT_min");
}

#[test]
fn w_inc_is_one_at_full_congestion_and_integrates_to_one() {
    // W_inc(1) = 1 and the integral over [0, 1] is 1, for any W_inc_max;
    // W_inc(0) = 0.8 W_inc_max + 1 (to e^-10).
    for w_max in [0.0, 0.5, 1.0, 10.0, 100.0, 1000.0] {
        assert!((w_inc(1.0, w_max, 10.0) - 1.0).abs() < 1e-9 * w_max.max(1.0), "W_inc(1), W_max {w_max}");
        let integral = simpson(|c| w_inc(c, w_max, 10.0), 2000);
        assert!((integral - 1.0).abs() < 1e-7 * w_max.max(1.0), "integral {integral}, W_max {w_max}");
        assert!((w_inc(0.0, w_max, 10.0) - (0.8 * w_max + 1.0)).abs() < 1e-3 * w_max.max(1.0));
    }
    // With a large W_inc_max the probe turns negative at mid congestion.
    assert!(w_inc(0.5, 100.0, 10.0) < 0.0);
}

#[test]
fn w_inc_max_is_b_over_ten_megabit() {
    // B = 100 Mbit/s -> 10 segments per RTT, whatever the packet size.
    let mut a = build(serde_json::json!({"b_bps": 100e6}));
    assert!((a.w_inc_max() - 10.0).abs() < 1e-12);
    assert!((a.b_segments() - 100e6 / 12000.0).abs() < 1e-6, "1500-byte segments before any is sent");
    a.on_send(0.0, 1000, 1);
    assert!((a.b_segments() - 100e6 / 8000.0).abs() < 1e-6, "B in segments of the packets sent");
    assert!((a.w_inc_max() - 10.0).abs() < 1e-12);
}

#[test]
fn rtt_cong_is_an_ewma_of_the_rtt_at_each_loss_updated_before_c() {
    let mut a = build(serde_json::json!({}));
    let w = Window { cwnd: 100.0, ssthresh: 50.0 };
    rtts(&mut a, &w, &[0.1, 0.2]);
    assert_eq!(a.c(), 0.0, "c = 0 before the first loss");
    // First loss: RTT_cong = RTT(1) = 0.2, c = 1: Reno's halving.
    assert_eq!(a.ssthresh(&w, LossEvent::FastRecovery, 100, 1.0), 50.0);
    assert_eq!(a.rtt_cong(), Some(0.2));
    // Second loss at RTT 0.12: RTT_cong = 0.85 0.2 + 0.15 0.12 = 0.188,
    // c = 0.02 / 0.088, W -> W / (1 + c).
    rtts(&mut a, &w, &[0.12]);
    let ss = a.ssthresh(&w, LossEvent::FastRecovery, 100, 2.0);
    assert!((a.rtt_cong().unwrap() - 0.188).abs() < 1e-12);
    let c = 0.02 / 0.088;
    assert!((ss - 100.0 / (1.0 + c)).abs() < 1e-9, "{ss}");
    assert!(ss > 80.0, "a loss at low congestion costs little");
    // A timeout is generic (Reno's half) and does not feed RTT_cong.
    assert_eq!(a.ssthresh(&w, LossEvent::Timeout, 100, 3.0), 50.0);
    assert!((a.rtt_cong().unwrap() - 0.188).abs() < 1e-12);
}

#[test]
fn areno_grows_base_by_one_over_w_and_probe_by_w_inc_over_w() {
    // W_base += 1/W, W_probe = max(W_probe + W_inc(c)/W, 0).
    let mut a = build(serde_json::json!({"b_bps": 100e6}));
    let mut w = Window { cwnd: 100.0, ssthresh: 50.0 };
    rtts(&mut a, &w, &[0.1, 0.2]);
    a.ssthresh(&w, LossEvent::FastRecovery, 100, 1.0); // RTT_cong = 0.2
    w.cwnd = 50.0;
    rtts(&mut a, &w, &[0.1]); // c = 0
    a.on_ack(&mut w, &ack(1.0, 10, 0.1));
    let inc = w_inc(0.0, 10.0, 10.0); // about 9
    assert!((w.cwnd - (50.0 + 1.0 / 50.0 + inc / 50.0)).abs() < 1e-12);
    assert!((a.w_probe - inc / 50.0).abs() < 1e-12);
    // At c = 1 the probe adds W_inc(1) = 1 per RTT: two segments per RTT in all.
    rtts(&mut a, &w, &[0.2]);
    let before = (w.cwnd, a.w_probe);
    a.on_ack(&mut w, &ack(1.1, 11, 0.2));
    assert!((a.w_probe - (before.1 + 1.0 / before.0)).abs() < 1e-9);
    assert!((w.cwnd - (before.0 + 2.0 / before.0)).abs() < 1e-9);
}

#[test]
fn areno_probe_never_goes_below_zero() {
    // B = 1 Gbit/s: W_inc_max = 100 and W_inc(0.5) = -8.3. The probe
    // shrinks to 0, not below; the window never falls under W_base.
    let mut a = build(serde_json::json!({"b_bps": 1e9}));
    let mut w = Window { cwnd: 100.0, ssthresh: 50.0 };
    rtts(&mut a, &w, &[0.1, 0.2]);
    a.ssthresh(&w, LossEvent::FastRecovery, 100, 1.0); // RTT_cong = 0.2
    a.w_probe = 0.05;
    rtts(&mut a, &w, &[0.15]); // c = 0.5
    assert!((w_inc(0.5, 100.0, 10.0) + 8.3).abs() < 0.05);
    a.on_ack(&mut w, &ack(1.0, 10, 0.15));
    assert_eq!(a.w_probe, 0.0);
    assert!((w.cwnd - (100.0 - 0.05 + 1.0 / 100.0)).abs() < 1e-12);
}

#[test]
fn areno_loss_keeps_w_over_one_plus_c_and_drops_the_probe() {
    let mut a = build(serde_json::json!({"b_bps": 100e6}));
    let w = Window { cwnd: 100.0, ssthresh: 50.0 };
    rtts(&mut a, &w, &[0.1, 0.2]);
    a.ssthresh(&w, LossEvent::FastRecovery, 100, 1.0);
    a.w_probe = 30.0;
    rtts(&mut a, &w, &[0.2]); // RTT_cong stays 0.2, c = 1
    assert_eq!(a.ssthresh(&w, LossEvent::FastRecovery, 100, 2.0), 50.0);
    assert_eq!(a.w_probe, 0.0);
    // The sender sets cwnd = ssthresh at the end of recovery: all of it is W_base.
    let mut w = Window { cwnd: 50.0, ssthresh: 50.0 };
    a.on_recovery_exit(&mut w, 3.0);
    assert_eq!(a.w_probe, 0.0);
}

/// A paper-form AReno with RTT_min = `rtt_min`, RTT_cong = `rtt_cong` (one
/// loss at that RTT) and a current RTT `rtt`; `b_bps` fixes B.
fn paper_at(params: serde_json::Value, rtt_min: f64, rtt_cong: f64, rtt: f64) -> AReno {
    let mut a = build(params);
    let w = Window { cwnd: 100.0, ssthresh: 50.0 };
    rtts(&mut a, &w, &[rtt_min, rtt_cong]);
    a.ssthresh(&w, LossEvent::FastRecovery, 100, 1.0);
    assert_eq!(a.rtt_cong(), Some(rtt_cong));
    rtts(&mut a, &w, &[rtt]);
    a
}

#[test]
fn paper_growth_per_unit_time_is_the_same_for_every_rtt() {
    // ssm-interactions: W += (alpha (B/R) RTT e^c - beta W c)/W per ACK, RTT a
    // time. ACKs return at W/RTT per second, so dW/dt = alpha (B/R) e^c - beta c R:
    // two flows at the same rate R, c and B/R grow their windows equally per
    // second whatever their RTT (the paper's RTT-fairness, reason 1).
    // R = 1000 segments/s, B = 2000 segments/s (24 Mbit/s in 1500-byte segments), c = 0.5.
    let (r, b) = (1000.0, 2000.0);
    let params = serde_json::json!({"variant": "paper", "b_bps": b * 12000.0});
    let mut per_second = Vec::new();
    for (rtt_min, rtt_cong) in [(0.030, 0.050), (0.300, 0.320)] {
        let rtt = (rtt_min + rtt_cong) / 2.0;
        let mut a = paper_at(params.clone(), rtt_min, rtt_cong, rtt);
        assert!((a.c() - 0.5).abs() < 1e-9);
        let w0 = r * rtt; // R = W / RTT
        let mut w = Window { cwnd: w0, ssthresh: 1.0 };
        a.on_ack(&mut w, &ack(2.0, 100, rtt));
        let (alpha, beta) = (a.alpha(), 0.5);
        let per_ack = (alpha * (b / r) * rtt * 0.5f64.exp() - beta * w0 * 0.5) / w0;
        assert!((w.cwnd - w0 - per_ack).abs() < 1e-9, "per ACK: {} vs {per_ack}", w.cwnd - w0);
        per_second.push((w.cwnd - w0) * w0 / rtt);
    }
    let formula = 153.3 * 2.0 * 0.5f64.exp() - 0.5 * 0.5 * r;
    for g in &per_second {
        assert!((g - formula).abs() < 0.1, "dW/dt {g} vs alpha (B/R) e^c - beta c R = {formula}");
    }
    assert!((per_second[0] - per_second[1]).abs() < 1e-9, "{per_second:?}");
    // With RTT in units of RTT_min (not the paper's) the 30 ms flow would grow
    // faster by the ratio of the probes, RTT_min 300 ms / 30 ms = 10. Read
    // from the formula's increment (`last_w_inc`): at 30 ms its probe, 17
    // segments per ACK, is beyond the per-ACK bound, which would cut it.
    let mut growth = Vec::new();
    for (rtt_min, rtt_cong) in [(0.030, 0.050), (0.300, 0.320)] {
        let rtt = (rtt_min + rtt_cong) / 2.0;
        let mut p = params.clone();
        p["rtt_unit"] = "rtt_min".into();
        let mut a = paper_at(p, rtt_min, rtt_cong, rtt);
        let w0 = r * rtt;
        let mut w = Window { cwnd: w0, ssthresh: 1.0 };
        a.on_ack(&mut w, &ack(2.0, 100, rtt));
        growth.push(a.last_w_inc / rtt + 0.5 * 0.5 * r); // the probe's share per second
    }
    assert!((growth[0] / growth[1] - 10.0).abs() < 1e-6, "{growth:?}");
}

#[test]
fn paper_steady_state_is_the_papers_and_needs_the_plus_sign() {
    // dW/dt = 0 at R = sqrt(alpha B e^c / (beta c)), the paper's stated steady state;
    // with e^(-c) (exponent = -1) the same rate grows or shrinks instead.
    let (b, c, rtt_min, rtt_cong) = (5000.0, 0.5, 0.1, 0.14);
    let rtt = rtt_min + c * (rtt_cong - rtt_min);
    let params = serde_json::json!({"variant": "paper", "b_bps": b * 12000.0});
    let mut a = paper_at(params.clone(), rtt_min, rtt_cong, rtt);
    a.w_reno = 1.0; // the Reno floor far below
    let (alpha, beta) = (a.alpha(), a.cfg.beta);
    let r = (alpha * b * c.exp() / (beta * c)).sqrt();
    let w0 = r * rtt;
    let mut w = Window { cwnd: w0, ssthresh: 1.0 };
    a.on_ack(&mut w, &ack(2.0, 100, rtt));
    assert!((w.cwnd - w0).abs() < 1e-9, "at the paper's steady state W stays: {}", w.cwnd - w0);
    let mut p = params;
    p["exponent"] = (-1).into();
    let mut m = paper_at(p, rtt_min, rtt_cong, rtt);
    m.w_reno = 1.0;
    let mut w = Window { cwnd: w0, ssthresh: 1.0 };
    m.on_ack(&mut w, &ack(2.0, 100, rtt));
    assert!(w.cwnd - w0 < -0.1, "e^(-c) is not in equilibrium there: {}", w.cwnd - w0);
}

#[test]
fn paper_default_alpha_puts_the_equilibrium_at_c_one_at_m() {
    // alpha = beta M / (e P): with B = R the steady state R = alpha e^c/(beta c)
    // is M at c = 1, whatever the packet size.
    let a = build(serde_json::json!({"variant": "paper"}));
    assert!((a.alpha() - 0.5 * 10e6 / (std::f64::consts::E * 12000.0)).abs() < 1e-9);
    assert!((a.alpha() - 153.3).abs() < 0.05);
    for bytes in [1500u32, 1000] {
        let mut a = build(serde_json::json!({"variant": "paper"}));
        a.on_send(0.0, bytes, 1);
        let r1_bps = a.alpha() * std::f64::consts::E / a.cfg.beta * a.packet_bits();
        assert!((r1_bps - 10e6).abs() < 1e-3, "{r1_bps}");
    }
    let a = build(serde_json::json!({"variant": "paper", "alpha": 40, "beta": 0.2, "m_bps": 1e6}));
    assert_eq!((a.alpha(), a.cfg.beta), (40.0, 0.2), "explicit values override");
}

#[test]
fn paper_reno_floor_holds_the_window_when_the_delay_term_wins() {
    // W = max(W, W_reno), W_reno += 1/W: at c = 1 and R far above the
    // equilibrium the formula shrinks W, the floor keeps W_reno + 1/W.
    // B = 100 segments/s (1.2 Mbit/s), R = 500 segments/s.
    let mut a = paper_at(serde_json::json!({"variant": "paper", "b_bps": 1.2e6}), 0.1, 0.2, 0.2);
    assert_eq!(a.c(), 1.0);
    let mut w = Window { cwnd: 100.0, ssthresh: 50.0 };
    a.on_ack(&mut w, &ack(2.0, 10, 0.2)); // starts W_reno at W
    let (b, r) = (100.0, 100.0 / 0.2);
    let inc = a.alpha() * (b / r) * 0.2 * 1f64.exp() - 0.5 * 100.0;
    assert!(inc < 0.0, "{inc}");
    assert_eq!(w.cwnd, 100.0 + 1.0 / 100.0, "W_reno + 1/W, not W + {inc}/W");
    assert_eq!(a.w_reno, w.cwnd);
    // Uncongested (c = 0): the probe alone, above the floor.
    let mut a = paper_at(serde_json::json!({"variant": "paper", "b_bps": 12e6}), 0.1, 0.2, 0.1);
    assert_eq!(a.c(), 0.0);
    let mut w = Window { cwnd: 100.0, ssthresh: 50.0 };
    a.on_ack(&mut w, &ack(2.0, 10, 0.1));
    let inc = a.alpha() * (1000.0 / 1000.0) * 0.1;
    assert!((w.cwnd - (100.0 + inc / 100.0)).abs() < 1e-12);
    assert!(w.cwnd > a.w_reno);
}

#[test]
fn paper_loss_divides_both_windows_by_one_plus_c() {
    // On a loss W = W/(1 + c) and W_reno = W_reno/(1 + c), c read after
    // RTT_cong learns this loss's RTT.
    let mut a = paper_at(serde_json::json!({"variant": "paper", "b_bps": 12e6}), 0.1, 0.2, 0.15);
    let mut w = Window { cwnd: 300.0, ssthresh: 50.0 };
    a.on_ack(&mut w, &ack(2.0, 10, 0.15)); // starts W_reno at W
    a.w_reno = 120.0;
    let ss = a.ssthresh(&w, LossEvent::FastRecovery, 300, 3.0);
    let rtt_cong = 0.85 * 0.2 + 0.15 * 0.15;
    let c = (0.15 - 0.1) / (rtt_cong - 0.1);
    assert!((a.last_c_loss - c).abs() < 1e-12);
    assert!((ss - w.cwnd / (1.0 + c)).abs() < 1e-9, "{ss}");
    assert!((a.w_reno - 120.0 / (1.0 + c)).abs() < 1e-9, "{}", a.w_reno);
}

#[test]
fn no_ack_grows_the_window_more_than_slow_start_would() {
    // After a timeout and a loss early in the next slow start: W = ssthresh
    // = 2 in congestion avoidance while B still holds the pre-timeout rate,
    // 7611 segments/s (91 Mbit/s), RTT 110 ms, c = 0. One ACK of one
    // segment may add at most one segment (slow start's growth, RFC 5681
    // s3.1): cwnd 3, where the paper formula's step is
    // alpha B RTT^2 e^c / W^2 = 153.3 x 7611 x 0.0121 / 4, about 3500
    // segments, and the 2006 form's (1 + W_inc(0))/W about 4.7.
    let b = 7611.0;
    for (params, unbounded) in [
        (serde_json::json!({"variant": "paper", "b_bps": b * 12000.0}), 153.3 * b * 0.11 * 0.11 / 4.0),
        (serde_json::json!({"b_bps": b * 12000.0}), (1.0 + w_inc(0.0, b * 12000.0 / 10e6, 10.0)) / 2.0),
    ] {
        let mut a = paper_at(params.clone(), 0.11, 0.12, 0.11);
        assert_eq!(a.c(), 0.0);
        assert!(unbounded > 4.0, "{params}: the formula's step {unbounded}");
        let mut w = Window { cwnd: 2.0, ssthresh: 2.0 };
        a.on_ack(&mut w, &ack(2.0, 10, 0.11));
        assert_eq!(w.cwnd, 3.0, "{params}: one ACK of one segment");
        // An ACK of three segments may add three.
        let mut w = Window { cwnd: 2.0, ssthresh: 2.0 };
        a.on_ack(&mut w, &AckSample { acked: 3, ..ack(2.1, 13, 0.11) });
        assert_eq!(w.cwnd, 5.0, "{params}: one ACK of three segments");
        // An ACK crossing ssthresh: slow start takes 1 of its 3 segments
        // (1 -> 2), congestion avoidance at most the 2 left.
        let mut w = Window { cwnd: 1.0, ssthresh: 2.0 };
        a.on_ack(&mut w, &AckSample { acked: 3, ..ack(2.2, 16, 0.11) });
        assert_eq!(w.cwnd, 4.0, "{params}: slow start's 1 and at most 2 more");
    }
    // Where the formula asks for less than one segment per ACK the bound
    // does not bind: the per-ACK tests above see the formula's exact step.
    let mut a = paper_at(serde_json::json!({"variant": "paper", "b_bps": b * 12000.0}), 0.11, 0.12, 0.11);
    let w0 = 1000.0;
    let mut w = Window { cwnd: w0, ssthresh: 2.0 };
    a.on_ack(&mut w, &ack(2.0, 10, 0.11));
    let step = a.alpha() * b * 0.11 * 0.11 / (w0 * w0);
    assert!(step < 1.0 && (w.cwnd - w0 - step).abs() < 1e-9, "{} vs {step}", w.cwnd - w0);
}

#[test]
fn seed_is_the_paper_form() {
    let s = build(serde_json::json!({"variant": "seed"}));
    let p = build(serde_json::json!({"variant": "paper"}));
    assert_eq!(s.cfg, p.cfg);
    assert_eq!(
        (p.cfg.form, p.cfg.alpha, p.cfg.beta, p.cfg.rtt_unit, p.cfg.exponent),
        (Form::Paper, None, 0.5, RttUnit::Seconds, 1.0)
    );
}

#[test]
fn slow_start_is_reno_and_rto_is_generic() {
    let mut a = build(serde_json::json!({}));
    let mut w = Window { cwnd: 10.0, ssthresh: 100.0 };
    a.on_ack(&mut w, &AckSample { acked: 3, ..ack(0.0, 3, 0.1) });
    assert_eq!(w.cwnd, 13.0);
    assert_eq!(a.w_probe, 0.0);
    let ss = a.ssthresh(&Window { cwnd: 80.0, ssthresh: 100.0 }, LossEvent::Timeout, 80, 1.0);
    assert_eq!(ss, 40.0);
    let mut w = Window { cwnd: 1.0, ssthresh: ss };
    a.on_rto(&mut w, 1.0);
    assert_eq!(a.w_probe, 0.0);
    assert_eq!(a.rtt_cong(), None, "an RTO does not feed RTT_cong");
}

#[test]
fn parameters_are_validated() {
    let e = AReno::from_params(serde_json::json!({"exponent": 2}).as_object().unwrap(), "flows[0].cc").err().unwrap();
    assert_eq!(e.field, "flows[0].cc.params.exponent");
    let e = AReno::from_params(serde_json::json!({"variant": "b"}).as_object().unwrap(), "f").err().unwrap();
    assert_eq!(e.field, "f.params.variant");
    assert_eq!(e.message, "must be one of areno, paper (alias seed), got \"b\"");
    let e = AReno::from_params(serde_json::json!({"variant": "paper", "alpha": -1}).as_object().unwrap(), "f")
        .err()
        .unwrap();
    assert_eq!(e.field, "f.params.alpha");
    let e = AReno::from_params(serde_json::json!({"variant": "paper", "rtt_unit": "ms"}).as_object().unwrap(), "f")
        .err()
        .unwrap();
    assert_eq!(e.field, "f.params.rtt_unit");
    assert_eq!(build(serde_json::json!({})).cfg.form, Form::AReno, "the default is the 2006 AReno");
}
