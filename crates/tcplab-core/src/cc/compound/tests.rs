use super::*;

fn ack(snd_una: u64, snd_nxt: u64, rtt: f64) -> AckSample {
    AckSample { rtt: Some(rtt), snd_una, snd_nxt, ..AckSample::test(0.0, 1) }
}

/// Congestion avoidance at window `win` (of which `dwnd` delay-based),
/// baseRTT `base`, a round ending after segment 100.
fn in_ca(cfg: CompoundConfig, win: f64, dwnd: f64, base: f64) -> (Compound, Window) {
    let mut c = Compound::new(cfg);
    let w = Window { cwnd: win, ssthresh: 2.0 };
    c.on_ack_sample(&w, &ack(1, 100, base));
    c.frame.round.beg_snd_nxt = 100;
    c.frame.round.clear();
    c.dwnd = dwnd;
    (c, w)
}

/// `n` ACKs inside the round with RTT `rtt`.
fn inside_round(c: &mut Compound, w: &mut Window, n: u64, rtt: f64) {
    let beg = c.frame.round.beg_snd_nxt;
    for i in 0..n {
        let s = ack(beg - n + 1 + i, beg + 10, rtt);
        c.on_ack_sample(w, &s);
        c.on_ack(w, &s);
    }
}

fn end_round(c: &mut Compound, w: &mut Window, rtt: f64) {
    let beg = c.frame.round.beg_snd_nxt;
    let s = ack(beg + 1, beg + 60, rtt);
    c.on_ack_sample(w, &s);
    c.on_ack(w, &s);
}

#[test]
fn each_ack_adds_one_over_the_whole_window_to_cwnd() {
    // cwnd += 1/win, win = cwnd + dwnd: one segment per RTT for the loss part.
    let (mut c, mut w) = in_ca(CompoundConfig::default(), 200.0, 50.0, 0.1);
    inside_round(&mut c, &mut w, 1, 0.1);
    assert!((w.cwnd - (200.0 + 1.0 / 200.0)).abs() < 1e-12);
    assert_eq!(c.dwnd(), 50.0, "dwnd only changes once per round");
}

#[test]
fn dwnd_grows_by_alpha_win_to_the_k_minus_one_once_per_rtt_below_gamma() {
    // diff = win (1 - base/RTT) < gamma -> dwnd += alpha win^0.75 - 1.
    let (mut c, mut w) = in_ca(CompoundConfig::default(), 1000.0, 0.0, 0.1);
    inside_round(&mut c, &mut w, 50, 0.101); // diff about 10 < 30
    let win = w.cwnd; // 1000 + the per-ACK increments of the round
    end_round(&mut c, &mut w, 0.101);
    let win_at_update = win + 1.0 / win;
    let grow = 0.125 * win_at_update.powf(0.75) - 1.0;
    assert!((grow - 21.23).abs() < 0.01, "alpha 1000^0.75 - 1 = 21.23, got {grow}");
    assert!((c.dwnd() - grow).abs() < 1e-9, "dwnd {}", c.dwnd());
    assert!((w.cwnd - (win_at_update + grow)).abs() < 1e-9);
    assert_eq!(c.updates(), 1);
    // Only once per round: more ACKs below the new boundary change dwnd no more.
    inside_round(&mut c, &mut w, 100, 0.101);
    assert!((c.dwnd() - grow).abs() < 1e-9);
    // Growth is never negative: at small windows alpha win^k < 1.
    let cfg = CompoundConfig::default();
    assert_eq!(dwnd_update(&cfg, 3.0, 10.0, 0.0), 3.0); // 0.125 * 10^0.75 = 0.70
}

#[test]
fn dwnd_shrinks_by_zeta_diff_at_or_above_gamma() {
    let cfg = CompoundConfig::default();
    assert_eq!(dwnd_update(&cfg, 100.0, 500.0, 30.0), 70.0);
    assert_eq!(dwnd_update(&cfg, 20.0, 500.0, 45.0), 0.0, "never below 0");
    let half = CompoundConfig { zeta: 0.5, ..cfg };
    assert_eq!(dwnd_update(&half, 100.0, 500.0, 40.0), 80.0);
    // In a round: win about 500 with RTT = 1.1 base -> diff = win/11 = 45.5 >= 30.
    let (mut c, mut w) = in_ca(cfg, 500.0, 100.0, 0.1);
    inside_round(&mut c, &mut w, 5, 0.11);
    let before = w.cwnd;
    end_round(&mut c, &mut w, 0.11);
    let win = before + 1.0 / before;
    let diff = win * (1.0 - 0.1 / 0.11);
    assert!((diff - 45.5).abs() < 0.1);
    assert!((c.dwnd() - (100.0 - diff)).abs() < 1e-9, "dwnd {}", c.dwnd());
    assert!((w.cwnd - (win - diff)).abs() < 1e-9, "the loss-based part is untouched");
}

#[test]
fn loss_leaves_win_times_one_minus_beta() {
    // cwnd = cwnd/2; dwnd = max(win (1 - beta) - cwnd/2, 0).
    let cfg = CompoundConfig::default();
    assert_eq!(on_loss(&cfg, 120.0, 80.0), (60.0, 40.0)); // win 200 -> 100
    assert_eq!(on_loss(&cfg, 100.0, 0.0), (50.0, 0.0)); // Reno: halving
    let b3 = CompoundConfig { beta: 0.3, ..cfg };
    assert_eq!(on_loss(&b3, 120.0, 80.0), (60.0, 80.0)); // 0.7 win
    let b8 = CompoundConfig { beta: 0.8, ..cfg };
    assert_eq!(on_loss(&b8, 180.0, 20.0), (90.0, 0.0)); // dwnd floored at 0: Reno's half
                                                        // Through the trait: ssthresh = the whole window after the loss; dwnd frozen in recovery.
    let (mut c, w) = in_ca(cfg, 200.0, 80.0, 0.1);
    assert_eq!(c.ssthresh(&w, LossEvent::FastRecovery, 200, 0.0), 100.0);
    assert_eq!(c.dwnd(), 40.0);
    let mut w = Window { cwnd: 100.0, ssthresh: 100.0 };
    c.on_state(&mut w, CaState::Recovery, &Conn::test(0.0));
    assert!(!c.frame.enabled);
    c.on_state(&mut w, CaState::Open, &Conn::test(0.0));
    c.on_recovery_exit(&mut w, 0.0);
    assert_eq!(c.dwnd(), 40.0);
    assert!(c.frame.enabled);
}

#[test]
fn timeout_clears_dwnd() {
    let (mut c, w) = in_ca(CompoundConfig::default(), 200.0, 80.0, 0.1);
    let ss = c.ssthresh(&w, LossEvent::Timeout, 200, 0.0);
    assert_eq!(ss, 100.0);
    let mut w = Window { cwnd: 1.0, ssthresh: ss };
    c.on_rto(&mut w, 0.0);
    c.on_state(&mut w, CaState::Loss, &Conn::test(0.0));
    assert_eq!(c.dwnd(), 0.0);
    assert_eq!(c.frame.state(), CaState::Loss);
}

#[test]
fn no_delay_window_below_the_low_window_or_with_too_few_samples() {
    let (mut c, mut w) = in_ca(CompoundConfig::default(), 30.0, 0.0, 0.1);
    inside_round(&mut c, &mut w, 5, 0.1);
    end_round(&mut c, &mut w, 0.1);
    assert_eq!((c.dwnd(), c.updates()), (0.0, 0));
    let (mut c, mut w) = in_ca(CompoundConfig { low_window: 20.0, ..CompoundConfig::default() }, 30.0, 0.0, 0.1);
    inside_round(&mut c, &mut w, 5, 0.1);
    end_round(&mut c, &mut w, 0.1);
    assert_eq!(c.updates(), 1);
    // Two samples in the round (cntRTT <= 2): no update.
    let (mut c, mut w) = in_ca(CompoundConfig::default(), 1000.0, 0.0, 0.1);
    inside_round(&mut c, &mut w, 1, 0.1);
    end_round(&mut c, &mut w, 0.1);
    assert_eq!((c.dwnd(), c.updates()), (0.0, 0));
}

#[test]
fn no_delay_window_update_outside_open() {
    // Disorder (the sender's, after a duplicate ACK) ends the round; back in
    // Open, a fresh round starts at the snd_nxt of the ACK just processed.
    let (mut c, mut w) = in_ca(CompoundConfig::default(), 1000.0, 0.0, 0.1);
    let dup = AckSample { duplicate: true, ..ack(1, 100, 0.1) };
    c.on_ack_sample(&w, &dup);
    c.on_state(&mut w, CaState::Disorder, &Conn::test(0.0));
    assert!(!c.frame.enabled);
    c.on_ack_sample(&w, &ack(2, 110, 0.1));
    c.on_state(&mut w, CaState::Open, &Conn::test(0.0));
    inside_round(&mut c, &mut w, 5, 0.1);
    assert!(c.frame.enabled);
    assert_eq!(c.frame.round.beg_snd_nxt, 110);
    // In the Loss state (after an RTO) rounds pass without dwnd updates,
    // even at a large window above ssthresh.
    c.ssthresh(&w, LossEvent::Timeout, 1000, 0.0);
    c.on_rto(&mut w, 0.0);
    c.on_state(&mut w, CaState::Loss, &Conn::test(0.0));
    w = Window { cwnd: 1000.0, ssthresh: 2.0 };
    for round in 0..3u64 {
        for i in 0..5 {
            let s = ack(20 + 10 * round + i, 30 + 10 * round, 0.1);
            c.on_ack_sample(&w, &s);
            c.on_ack(&mut w, &s);
        }
    }
    assert_eq!(c.frame.state(), CaState::Loss);
    assert_eq!((c.dwnd(), c.updates()), (0.0, 0));
}

#[test]
fn the_round_rtt_choice_changes_diff() {
    // Samples 0.1 (x4) and 0.2: min -> diff 0 (grow); mean 0.12 -> diff = 1000/6 (shrink).
    for (choice, grows) in [("min", true), ("mean", false), ("last", false)] {
        let cfg =
            Compound::from_params(serde_json::json!({"round_rtt": choice}).as_object().unwrap(), "f").unwrap().cfg;
        let (mut c, mut w) = in_ca(cfg, 1000.0, 100.0, 0.1);
        inside_round(&mut c, &mut w, 4, 0.1);
        end_round(&mut c, &mut w, 0.2);
        assert_eq!(c.dwnd() > 100.0, grows, "{choice}: dwnd {}", c.dwnd());
    }
}

#[test]
fn slow_start_is_reno_on_the_loss_window() {
    let mut c = Compound::new(CompoundConfig::default());
    let mut w = Window { cwnd: 10.0, ssthresh: 12.5 };
    let s = AckSample { acked: 2, ..ack(1, 10, 0.1) };
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 12.0);
    c.on_ack(&mut w, &s); // 0.5 to ssthresh, the rest is a congestion-avoidance ACK
    assert!((w.cwnd - (12.5 + 1.0 / 12.5)).abs() < 1e-12);
    assert_eq!(c.dwnd(), 0.0);
}

// ---- linux-port: the 2006 out-of-tree tcp_compound.c (ns-2 TCP-Linux) ----

/// A sample time whose Linux vrtt (whole microseconds + 1) is `us`.
fn secs(us: u32) -> f64 {
    (us as f64 - 0.5) / 1e6
}

const BASE_US: u32 = 100_001;

/// A vrtt (us) at which the port's diff is `diff_half` half-segments for `old_wnd`.
fn rtt_us_for(old_wnd: u32, diff_half: u32) -> u32 {
    let t = 2 * old_wnd - diff_half;
    let r = ((2 * old_wnd as u64 * BASE_US as u64) as f64 / (t as f64 + 0.5)).floor() as u32;
    assert_eq!(fixed_point_diff(old_wnd, BASE_US, r).0, diff_half);
    r
}

/// The current round of [`port`] ends after this segment.
const END: u64 = 10_000;

/// The port with loss-based part `lcwnd`, delay part `dwnd`, baseRTT
/// 100001 us; the previous round sent `old_wnd` segments and the current
/// one ends after segment [`END`].
fn port(lcwnd: u64, dwnd: u64, ssthresh: f64, old_wnd: u64) -> (Compound, Window) {
    let mut c = Compound::new(CompoundConfig::linux_port());
    let w = Window { cwnd: (lcwnd + dwnd) as f64, ssthresh };
    c.on_ack_sample(&w, &ack(1, END, secs(BASE_US)));
    assert_eq!((c.lcwnd, c.dwnd), (w.cwnd, 0.0), "tcp_compound_init: cwnd = snd_cwnd, dwnd = 0");
    c.lcwnd = lcwnd as f64;
    c.dwnd = dwnd as f64;
    c.frame.round.beg_snd_nxt = END;
    c.frame.round.clear();
    c.beg_snd_una = END - old_wnd;
    (c, w)
}

/// Three RTT samples of `rtt_us` (pkts_acked only), then the ACK ending the round.
fn port_round(c: &mut Compound, w: &mut Window, rtt_us: u32) {
    let beg = c.frame.round.beg_snd_nxt;
    for i in 0..3 {
        c.on_ack_sample(w, &ack(beg - 3 + i, beg + 10, secs(rtt_us)));
    }
    end_round(c, w, secs(rtt_us));
}

#[test]
fn port_qroot_is_within_one_of_the_quartic_root() {
    // Newton-Raphson x <- (3x + a/x^3)/4 from 1 << (fls64(a) >> 2), stopping
    // at a step of at most 1; the 64-bit divisor path (x^3 > 2^32) included.
    for w in (1u64..200).chain((200..120_000).step_by(997)) {
        let a = w * w * w;
        let q = port_qroot(a) as f64;
        let exact = (a as f64).powf(0.25);
        assert!((q - exact).abs() <= 1.0 + 1e-9, "w {w}: qroot {q}, root {exact}");
    }
    assert_eq!(port_qroot(0), 0);
}

#[test]
fn port_growth_is_the_integer_eighth_of_old_wnd_to_the_three_quarters_minus_one() {
    // x = qroot(old_wnd^3) >> 3; dwnd += x - 1 if x > 1, else 0.
    assert_eq!(port_growth(1000), 21); // paper: 0.125 x 1000^0.75 - 1 = 21.23
    for w in [0, 1, 16, 30, 39] {
        assert_eq!(port_growth(w), 0, "w {w}");
    }
    assert!(port_growth(50) >= 1);
    for w in (40u32..100_000).step_by(211) {
        let r = (w as f64).powf(0.75);
        let lo = (((r - 1.0) / 8.0).floor() - 1.0).max(0.0);
        let hi = ((r + 1.0) / 8.0).floor() - 1.0;
        let g = port_growth(w) as f64;
        assert!(g >= lo && g <= hi.max(0.0), "w {w}: growth {g}, expected in [{lo}, {hi}]");
    }
}

#[test]
fn port_round_uses_the_segments_sent_in_the_previous_round() {
    // old_wnd = 100 while the window is 1000: diff = 20 segments from
    // old_wnd (< gamma: grow by port_growth(100) = 2); the current window
    // would give a diff far above gamma and growth 21.
    let r = rtt_us_for(100, 40);
    assert!(fixed_point_diff(1000, BASE_US, r).0 >= 60);
    let (mut c, mut w) = port(1000, 0, 2.0, 100);
    port_round(&mut c, &mut w, r);
    assert_eq!(c.last_diff, 20.0);
    assert_eq!((c.dwnd(), c.lcwnd(), w.cwnd), (2.0, 1000.0, 1002.0));
    assert_eq!(c.updates(), 1);
}

#[test]
fn port_dwnd_shrinks_by_the_half_segment_diff_at_or_above_gamma() {
    // diff (halves) >= 60: dwnd = ((dwnd << 1) - diff) >> 1, or 0 when dwnd << 1 < diff.
    assert_eq!(port_decrease(100, 61), 69);
    assert_eq!(port_decrease(30, 61), 0);
    assert_eq!(port_decrease(31, 61), 0);
    for (dwnd, half, want) in [(100u64, 61u32, 69.0), (20, 61, 0.0), (100, 59, 100.0 + port_growth(500) as f64)] {
        let (mut c, mut w) = port(500, dwnd, 2.0, 500);
        port_round(&mut c, &mut w, rtt_us_for(500, half));
        assert_eq!(c.dwnd(), want, "dwnd {dwnd}, diff {half} halves");
        assert_eq!(c.lcwnd(), 500.0, "the loss-based part is untouched");
    }
    // gamma is compared doubled: gamma 10 -> a diff of 20 halves shrinks.
    let (mut c, mut w) = port(500, 100, 2.0, 500);
    c.cfg.gamma = 10.0;
    port_round(&mut c, &mut w, rtt_us_for(500, 20));
    assert_eq!(c.dwnd(), 90.0);
}

#[test]
fn port_loss_halves_the_whole_window_and_keeps_dwnd_only_if_both_parts_fit() {
    // ssthresh = tcp_reno_ssthresh(snd_cwnd) = max(win >> 1, 2); dwnd is
    // untouched until the next cong_avoid, which fits cwnd + dwnd to the
    // smaller snd_cwnd the sender set.
    let (mut c, w) = port(120, 80, 2.0, 200);
    assert_eq!(c.ssthresh(&w, LossEvent::FastRecovery, 200, 0.0), 100.0);
    assert_eq!(c.dwnd(), 80.0);
    let mut w = Window { cwnd: 100.0, ssthresh: 100.0 };
    c.on_recovery_exit(&mut w, 0.0);
    let beg = c.frame.round.beg_snd_nxt;
    let s = ack(beg, beg + 5, secs(BASE_US));
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    // cwnd 120 > 100: cwnd = 100, dwnd = 0; then +1 (cwnd <= ssthresh).
    assert_eq!((c.lcwnd(), c.dwnd(), w.cwnd), (101.0, 0.0, 101.0));
    // Both parts at most snd_cwnd (here equal halves): dwnd kept, cwnd = snd_cwnd - dwnd.
    let (mut c, w) = port(50, 50, 2.0, 100);
    assert_eq!(c.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0), 50.0);
    let mut w = Window { cwnd: 50.0, ssthresh: 50.0 };
    c.on_recovery_exit(&mut w, 0.0);
    let beg = c.frame.round.beg_snd_nxt;
    let s = ack(beg, beg + 5, secs(BASE_US));
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    assert_eq!((c.lcwnd(), c.dwnd(), w.cwnd), (1.0, 50.0, 51.0));
    // A timeout: snd_cwnd = 1 clears dwnd at the next ACK.
    let (mut c, w) = port(120, 80, 2.0, 200);
    let ss = c.ssthresh(&w, LossEvent::Timeout, 200, 0.0);
    let mut w = Window { cwnd: 1.0, ssthresh: ss };
    c.on_rto(&mut w, 0.0);
    let s = ack(END - 50, END + 10, secs(BASE_US));
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    assert_eq!((c.lcwnd(), c.dwnd(), w.cwnd), (2.0, 0.0, 2.0));
}

#[test]
fn port_tx_start_folds_dwnd_into_cwnd_and_forgets_base_rtt() {
    // TX_START -> tcp_compound_init: cwnd = snd_cwnd, dwnd = 0, baseRTT = inf.
    let (mut c, mut w) = port(100, 50, 2.0, 150);
    c.on_send(1.0, 1500, 1);
    assert_eq!(c.dwnd(), 0.0);
    assert_eq!(c.frame.base_rtt, f64::INFINITY);
    let s = ack(END + 1, END + 100, secs(200_000));
    c.on_ack_sample(&w, &s);
    assert_eq!((c.lcwnd(), c.dwnd()), (150.0, 0.0));
    assert_eq!(c.frame.base_rtt, crate::cc::delay::linux_vrtt(secs(200_000)));
    c.on_ack(&mut w, &s);
    assert_eq!(w.cwnd, 150.0);
    // Without idle restarts (ns-2 TCP-Linux raises no TX_START) nothing changes.
    let off = serde_json::json!({"variant": "linux-port", "restart_on_idle": false});
    let mut c = Compound::from_params(off.as_object().unwrap(), "f").unwrap();
    c.on_ack_sample(&w, &ack(1, END, secs(BASE_US)));
    c.dwnd = 50.0;
    c.on_send(1.0, 1500, 1);
    assert_eq!((c.dwnd(), c.frame.base_rtt), (50.0, crate::cc::delay::linux_vrtt(secs(BASE_US))));
}

#[test]
fn port_loss_based_part_slow_starts_on_its_own_size_and_grows_one_per_whole_window() {
    // cwnd (loss-based) <= ssthresh: +1 per ACK, whatever it covers, even
    // though cwnd + dwnd = 30 is above ssthresh 15.
    let (mut c, mut w) = port(10, 20, 15.0, 30);
    let s = AckSample { acked: 3, ..ack(END - 50, END + 10, secs(BASE_US)) };
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    assert_eq!((c.lcwnd(), w.cwnd), (11.0, 31.0));
    // Above ssthresh: snd_cwnd_cnt counts ACKs up to snd_cwnd (= 36, the whole window).
    let (mut c, mut w) = port(16, 20, 15.0, 36);
    for i in 0..35 {
        let s = ack(END - 40 + i, END + 10, secs(BASE_US));
        c.on_ack_sample(&w, &s);
        c.on_ack(&mut w, &s);
    }
    assert_eq!(c.lcwnd(), 16.0);
    let s = ack(END - 2, END + 10, secs(BASE_US));
    c.on_ack(&mut w, &s);
    assert_eq!((c.lcwnd(), w.cwnd), (17.0, 37.0));
}

#[test]
fn port_updates_dwnd_in_slow_start_and_in_the_loss_state() {
    // The 2006 port has no slow-start, low-window or CA-state test on the
    // dwnd update (the paper form skips slow start and non-Open states).
    let r = rtt_us_for(1000, 10);
    let (mut c, mut w) = port(1000, 0, 2_147_483_647.0, 1000);
    port_round(&mut c, &mut w, r);
    assert_eq!(c.dwnd(), 21.0);
    // In the Loss state after a timeout.
    let (mut c, w) = port(1000, 0, 2.0, 1000);
    c.on_ack_sample(&w, &ack(END - 5, END + 1000, secs(BASE_US)));
    c.ssthresh(&w, LossEvent::Timeout, 1000, 0.0);
    let mut w = Window { cwnd: 1.0, ssthresh: 500.0 };
    c.on_rto(&mut w, 0.0);
    c.on_state(&mut w, CaState::Loss, &Conn::test(0.0));
    assert_eq!(c.frame.state(), CaState::Loss);
    c.lcwnd = 1000.0; // as if it had slow-started back (snd_cwnd follows below)
    w.cwnd = 1000.0;
    port_round(&mut c, &mut w, r);
    assert_eq!(c.frame.state(), CaState::Loss);
    assert_eq!(c.dwnd(), 21.0);
}

#[test]
fn port_does_nothing_but_follow_snd_cwnd_when_not_window_limited() {
    let (mut c, mut w) = port(100, 50, 2.0, 150);
    w.cwnd = 120.0; // the sender lowered the window
    let s = AckSample { cwnd_limited: false, ..ack(END + 1, END + 200, secs(200_000)) };
    for i in 0..3 {
        c.on_ack_sample(&w, &ack(END - 3 + i, END + 10, secs(200_000)));
    }
    c.on_ack_sample(&w, &s);
    c.on_ack(&mut w, &s);
    assert_eq!((c.lcwnd(), c.dwnd(), w.cwnd), (70.0, 50.0, 120.0));
    assert_eq!((c.frame.round.beg_snd_nxt, c.updates()), (END, 0), "the round did not end");
}

#[test]
fn port_takes_only_its_own_parameters() {
    for k in ["alpha", "beta", "k", "zeta", "low_window", "round_rtt"] {
        let mut m = serde_json::Map::new();
        m.insert("variant".into(), "linux-port".into());
        m.insert(k.into(), if k == "round_rtt" { "min".into() } else { 0.5.into() });
        let e = Compound::from_params(&m, "flows[0].cc").err().unwrap();
        assert_eq!(e.field, format!("flows[0].cc.params.{k}"));
    }
    let ok = serde_json::json!({"variant": "linux-port", "gamma": 10, "min_samples": 2, "restart_on_idle": false});
    let c = Compound::from_params(ok.as_object().unwrap(), "f").unwrap();
    assert_eq!(
        (c.cfg.variant, c.cfg.gamma, c.cfg.min_samples, c.cfg.restart_on_idle),
        (Variant::LinuxPort, 10.0, 2, false)
    );
    assert!(c.frame.linux_rtt && !c.frame.keep_base_on_restart);
    let paper = Compound::from_params(&serde_json::Map::new(), "f").unwrap();
    assert_eq!(paper.cfg.variant, Variant::Paper);
    assert!(!paper.frame.linux_rtt && paper.frame.keep_base_on_restart);
}
