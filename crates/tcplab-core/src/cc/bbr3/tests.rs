use super::*;

/// Drives the algorithm with synthetic rate samples (no sender).
struct H {
    b: Bbr3,
    w: Window,
    c: Conn,
}

impl H {
    fn new(b: Bbr3) -> Self {
        let c = Conn { mss: 1000, ..Conn::test(0.0) };
        let mut w = Window { cwnd: 10.0, ssthresh: f64::INFINITY };
        let mut b = b;
        b.init(&mut w, &c);
        H { b, w, c }
    }

    fn with(params: serde_json::Value) -> Self {
        H::new(Bbr3::from_params(params.as_object().unwrap(), "cc").unwrap())
    }

    /// One ACK `dt` after the previous one: `delivered` segments newly
    /// delivered, sample over `interval`, from a packet sent when
    /// tp->delivered was the value before this ACK (so every such ACK
    /// ends a round); `f` adjusts the sample.
    fn ack(&mut self, dt: f64, delivered: u64, interval: f64, f: impl FnOnce(&mut RateSample)) {
        let prior = self.c.delivered;
        self.c.now += dt;
        self.c.delivered += delivered;
        self.c.delivered_time = self.c.now;
        self.c.srtt = interval;
        let mut rs = RateSample {
            delivered: delivered as i64,
            interval,
            prior_delivered: prior,
            acked_sacked: delivered,
            rtt: Some(interval),
            prior_in_flight: self.c.in_flight,
            ..Default::default()
        };
        f(&mut rs);
        self.b.cong_control(&mut self.w, &rs, &mut self.c);
    }

    /// One round of `rtt` delivering `delivered` segments.
    fn round(&mut self, rtt: f64, delivered: u64) {
        self.ack(rtt, delivered, rtt, |_| {});
    }

    fn var(&self, name: &str) -> f64 {
        let mut v = Vec::new();
        self.b.trace_vars(&mut v);
        v.iter().find(|(n, _)| *n == name).unwrap().1
    }

    /// Startup with doubling delivery, then a plateau at `per_round`
    /// until Startup ends; nothing in flight, so Drain ends at once.
    fn drive_to_probe_bw(&mut self, rtt: f64, per_round: u64) {
        let mut d = per_round / 8;
        while d < per_round {
            self.round(rtt, d);
            d *= 2;
        }
        for _ in 0..10 {
            // A large prior_in_flight keeps DOWN from turning into CRUISE
            // on the ACK that ends Drain.
            self.ack(rtt, per_round, rtt, |rs| rs.prior_in_flight = 1000);
            if self.b.mode != Mode::Startup {
                break;
            }
        }
        assert_eq!(self.b.mode, Mode::ProbeBw);
        assert_eq!(self.b.cycle_idx, Phase::Down);
    }

    /// Rounds until the ProbeBW phase is `p` (at most `max` rounds).
    fn until_phase(&mut self, rtt: f64, per_round: u64, p: Phase, max: usize) -> usize {
        for i in 1..=max {
            self.round(rtt, per_round);
            if self.b.phase() == Some(p) {
                return i;
            }
        }
        panic!("phase {p:?} not reached in {max} rounds (at {:?} {:?})", self.b.mode, self.b.phase());
    }
}

fn no_probe_rtt() -> serde_json::Value {
    serde_json::json!({"probe_rtt_ms": 0})
}

#[test]
fn startup_gain_and_plateau_exit_after_three_rounds() {
    let mut h = H::new(Bbr3::new());
    assert_eq!(h.b.pacing_gain, 710, "256 * 277 / 100 + 1");
    assert!((h.var("pacing_gain") - 2.7734).abs() < 1e-3);
    assert_eq!(h.var("cwnd_gain"), 2.0);
    for d in [10, 20, 40, 80] {
        h.round(0.1, d);
        assert_eq!(h.b.mode, Mode::Startup);
    }
    // Pacing at 2.77 x 800 seg/s x 1000 B, less the 1 % margin.
    let want = 800.0 * 1000.0 * 710.0 / 256.0 * 0.99 * 8.0;
    assert!((h.var("pacing_rate_bps") - want).abs() / want < 1e-3, "{} vs {want}", h.var("pacing_rate_bps"));
    h.c.in_flight = 200; // keeps Drain from ending at once
    h.round(0.1, 80);
    h.round(0.1, 80);
    assert_eq!(h.b.mode, Mode::Startup, "two flat rounds are not a plateau");
    assert_eq!(h.var("full_bw_reached"), 0.0);
    h.round(0.1, 80);
    assert_eq!(h.b.mode, Mode::Drain, "third round under 1.25x ends Startup");
    assert_eq!(h.var("full_bw_reached"), 1.0);
    assert_eq!(h.b.pacing_gain, 88, "256 * 1000 / 2885");
    assert_eq!(h.w.ssthresh, h.b.inflight(h.b.max_bw(), BBR_UNIT) as f64);
    // Growth of 25 % resets the count: a 1.25x round is not flat.
    let mut g = H::new(Bbr3::new());
    for d in [10, 20, 40, 80, 80, 80, 100, 100, 100] {
        g.round(0.1, d);
    }
    assert_eq!(g.b.mode, Mode::Startup);
}

/// Startup, then `n` ACKs with a loss each inside one loss round, then the
/// ACK that ends the round with `lost` of `tx_in_flight`.
fn startup_losses(n: usize, lost: u64, tx_in_flight: u64) -> H {
    let mut h = H::new(Bbr3::new());
    for d in [10, 20, 40, 80] {
        h.round(0.1, d);
    }
    h.c.state = CaState::Recovery;
    h.c.in_flight = 300;
    let d0 = h.c.delivered;
    for i in 0..n {
        // Same 800 seg/s; one sample shows 120 segments delivered.
        let (d, iv) = if i == 0 { (120, 0.15) } else { (8, 0.01) };
        h.ack(0.01, 2, iv, |rs| {
            rs.rtt = Some(0.1);
            rs.delivered = d;
            rs.prior_delivered = d0 - 10;
            rs.losses = 1;
        });
    }
    h.ack(0.01, 2, 0.1, |rs| {
        rs.delivered = 80;
        rs.prior_delivered = d0;
        rs.lost = lost;
        rs.tx_in_flight = tx_in_flight;
    });
    h
}

#[test]
fn startup_exits_on_six_loss_events_and_loss_rate_above_two_percent() {
    let h = startup_losses(6, 3, 100);
    assert_eq!(h.var("full_bw_reached"), 1.0);
    assert_eq!(h.b.mode, Mode::Drain);
    // inflight_hi = max(BDP with budget (80), inflight_latest (120)).
    // BDP = ceil(800.0x seg/s x 0.1 s) = 81 (bw rounds up).
    assert_eq!(h.b.inflight(h.b.max_bw(), BBR_UNIT), 81);
    assert_eq!(h.var("inflight_hi"), 120.0);
    // Five loss events are not enough; nor is 1 lost of 100 (<= 100 * 5/256).
    assert_eq!(startup_losses(5, 3, 100).var("full_bw_reached"), 0.0);
    assert_eq!(startup_losses(6, 1, 100).var("full_bw_reached"), 0.0);
    assert_eq!(startup_losses(6, 1, 100).var("inflight_hi"), -1.0);
}

#[test]
fn drain_ends_when_inflight_is_at_most_the_bdp() {
    let mut h = H::new(Bbr3::new());
    for d in [10, 20, 40, 80, 80, 80] {
        h.round(0.1, d);
    }
    h.c.in_flight = 200;
    h.round(0.1, 80);
    assert_eq!(h.b.mode, Mode::Drain);
    assert_eq!(h.var("phase"), -1.0);
    let bdp = h.b.inflight(h.b.max_bw(), BBR_UNIT);
    assert_eq!(bdp, 81, "ceil(800.0x seg/s x 0.1 s)");
    h.c.in_flight = 82;
    h.round(0.1, 80);
    assert_eq!(h.b.mode, Mode::Drain, "82 > BDP 81");
    h.c.in_flight = 81;
    h.ack(0.1, 80, 0.1, |rs| rs.prior_in_flight = 200);
    assert_eq!(h.b.mode, Mode::ProbeBw);
    assert_eq!(h.var("phase"), 0.0, "ProbeBW starts in DOWN");
    assert_eq!(h.var("mode"), 2.0);
}

#[test]
fn probe_bw_cycles_down_cruise_refill_up_down_with_the_gains() {
    let mut h = H::with(no_probe_rtt());
    h.drive_to_probe_bw(0.1, 80);
    assert_eq!(h.b.pacing_gain, 232, "DOWN 256 * 91 / 100");
    h.c.in_flight = 100;
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Down), "inflight 100 above the BDP: keep draining");
    h.c.in_flight = 50;
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    assert_eq!((h.b.pacing_gain, h.b.cwnd_gain), (256, 512));
    h.until_phase(0.1, 80, Phase::Refill, 40);
    assert_eq!((h.b.pacing_gain, h.b.cwnd_gain), (256, 512));
    assert_eq!(h.var("phase"), 2.0);
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Up), "one round of REFILL");
    assert_eq!((h.b.pacing_gain, h.b.cwnd_gain), (320, 576), "UP 1.25, cwnd gain 2 + 0.25");
    assert_eq!(h.var("phase"), 3.0);
    // No loss, no inflight_hi: UP ends on a bw plateau (3 rounds).
    let n = h.until_phase(0.1, 80, Phase::Down, 10);
    assert_eq!(n, 3);
    assert_eq!(h.b.pacing_gain, 232);
}

#[test]
fn probe_wait_is_two_to_three_seconds_or_at_most_63_rounds() {
    let mut waits = Vec::new();
    for seed in 1..=12u64 {
        let mut h = H::with(serde_json::json!({"probe_rtt_ms": 0, "seed": seed}));
        h.drive_to_probe_bw(0.1, 80);
        let w = h.b.probe_wait_us;
        assert!((2_000_000..3_000_000).contains(&w), "{w}");
        assert!(h.b.rounds_since_probe < 2);
        let t0 = h.c.now;
        h.until_phase(0.1, 80, Phase::Refill, 40);
        let el = h.c.now - t0;
        // Probing starts on the first ACK after the wait (ACKs every 100 ms).
        assert!(el * 1e6 > w as f64 && el * 1e6 <= w as f64 + 100_001.0, "seed {seed}: {el} s for wait {w} us");
        waits.push(w);
        // Same seed, same wait.
        let mut again = H::with(serde_json::json!({"probe_rtt_ms": 0, "seed": seed}));
        again.drive_to_probe_bw(0.1, 80);
        assert_eq!(again.b.probe_wait_us, w);
    }
    waits.sort();
    waits.dedup();
    assert!(waits.len() > 6, "seeds give different waits: {waits:?}");
    // Reno coexistence: with a BDP above 63 and 1 ms rounds, the round
    // count (63 minus the random 0 or 1) fires long before the clock.
    let mut seen = std::collections::HashSet::new();
    for seed in 1..=8u64 {
        let mut h = H::with(serde_json::json!({"probe_rtt_ms": 0, "seed": seed}));
        h.drive_to_probe_bw(0.001, 200);
        let r0 = h.b.rounds_since_probe;
        let n = h.until_phase(0.001, 200, Phase::Refill, 100);
        assert_eq!(n as u32, 63 - r0);
        assert!(h.b.target_inflight() > 63);
        seen.insert(n);
    }
    assert!(seen.iter().all(|n| *n == 62 || *n == 63));
}

/// ProbeBW UP with `inflight_hi` optionally set before probing.
fn to_up(params: serde_json::Value, inflight_hi: Option<u32>) -> H {
    let mut h = H::with(params);
    h.drive_to_probe_bw(0.1, 80);
    h.c.in_flight = 50;
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    if let Some(hi) = inflight_hi {
        h.b.inflight_hi = hi;
    }
    h.until_phase(0.1, 80, Phase::Refill, 40);
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Up));
    h
}

#[test]
fn inflight_too_high_cuts_inflight_hi_to_beta_of_target_and_goes_down() {
    let mut h = to_up(no_probe_rtt(), None);
    // 1 lost of 100 sent: 1 <= 100 * 5 >> 8 = 1, not too high.
    h.ack(0.1, 80, 0.1, |rs| {
        rs.lost = 1;
        rs.tx_in_flight = 100;
    });
    assert_eq!(h.b.phase(), Some(Phase::Up));
    assert_eq!(h.var("inflight_hi"), -1.0);
    let target = h.b.inflight(h.b.bw(), BBR_UNIT).min(h.w.cwnd as u32);
    assert_eq!(target, 83, "BDP 81 + 2 in UP");
    h.ack(0.1, 80, 0.1, |rs| {
        rs.lost = 1;
        rs.tx_in_flight = 20;
    });
    assert_eq!(h.var("inflight_hi"), ((83 * 180) >> 8) as f64, "max(tx_in_flight 20, 0.7 x target 83) = 58");
    assert_eq!(h.var("inflight_hi"), 58.0);
    assert_eq!(h.b.phase(), Some(Phase::Down));
    // A larger tx_in_flight wins.
    let mut h = to_up(no_probe_rtt(), None);
    h.ack(0.1, 80, 0.1, |rs| {
        rs.lost = 5;
        rs.tx_in_flight = 90;
    });
    assert_eq!(h.var("inflight_hi"), 90.0);
    // The per-packet hook: inflight where the loss rate crossed 2 %.
    let mut h = to_up(no_probe_rtt(), None);
    let (w, c) = (h.w, h.c);
    h.b.on_packet_lost(&w, 200, 5, false, &c);
    // inflight_prev 199, lost_prev 4 >= budget ceil(199 * 5 / 256) = 4: prefix 0.
    assert_eq!(h.var("inflight_hi"), 199.0);
    assert_eq!(h.b.phase(), Some(Phase::Down));
}

#[test]
fn loss_in_a_cruise_round_cuts_bw_lo_and_inflight_lo_by_beta_and_probing_resets_them() {
    let mut h = H::with(no_probe_rtt());
    h.drive_to_probe_bw(0.1, 80);
    h.c.in_flight = 50;
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    assert_eq!((h.var("bw_lo_bps"), h.var("inflight_lo")), (-1.0, -1.0));
    let max_bw = h.b.max_bw();
    // Slow rounds (20 seg/s): bw_latest / inflight_latest are this round's.
    h.round(0.1, 2);
    let cwnd = h.w.cwnd as u32;
    // A loss inside the next slow round, then the round's end.
    let d0 = h.c.delivered;
    h.ack(0.05, 1, 0.1, |rs| {
        rs.delivered = 2;
        rs.prior_delivered = d0 - 5;
        rs.losses = 1;
    });
    h.ack(0.05, 1, 0.1, |rs| {
        rs.delivered = 2;
        rs.prior_delivered = d0;
    });
    let bw_lo = ((max_bw as u64 * 180) >> 8) as u32;
    assert_eq!(h.b.bw_lo, bw_lo);
    assert_eq!(h.b.bw(), bw_lo);
    let want_bps = 800.0 * 1000.0 * 8.0 * 180.0 / 256.0;
    assert!((h.var("bw_lo_bps") - want_bps).abs() / want_bps < 0.01, "{}", h.var("bw_lo_bps"));
    assert_eq!(h.var("inflight_lo"), ((cwnd * 180) >> 8) as f64);
    assert!(h.w.cwnd <= ((cwnd * 180) >> 8) as f64);
    // No loss in the next round: no further cut.
    h.round(0.1, 2);
    assert_eq!(h.b.bw_lo, bw_lo);
    // Probing (REFILL) resets the lower bounds.
    h.until_phase(0.1, 80, Phase::Refill, 40);
    assert_eq!((h.var("bw_lo_bps"), h.var("inflight_lo")), (-1.0, -1.0));
}

#[test]
fn inflight_hi_grows_in_up_with_doubling_steps_per_round() {
    let mut h = to_up(no_probe_rtt(), Some(100));
    assert_eq!(h.w.cwnd, 100.0, "capped at inflight_hi outside CRUISE");
    assert_eq!(h.b.bw_probe_up_cnt, 100, "first round: 1 per cwnd ACKed");
    let mut incs = Vec::new();
    for k in 1..=5u32 {
        let (hi0, cnt0, acks0) = (h.b.inflight_hi, h.b.bw_probe_up_cnt, h.b.bw_probe_up_acks);
        // One ACK per segment; the last ends the round. (cwnd follows
        // inflight_hi one ACK late, so UP sees cwnd >= inflight_hi, and
        // keeps probing, only on the ACKs that do not raise it.)
        let d_start = h.c.delivered;
        let mut cwnd0 = 0;
        for i in 0..100 {
            cwnd0 = h.w.cwnd as u32;
            h.ack(0.001, 1, 0.1, |rs| {
                rs.delivered = 100;
                rs.prior_delivered = if i == 99 { d_start } else { d_start - 1 };
            });
        }
        assert_eq!(h.b.phase(), Some(Phase::Up));
        assert_eq!(h.b.inflight_hi - hi0, (acks0 + 100) / cnt0, "round {k}: one per cnt ACKed");
        assert_eq!(h.b.bw_probe_up_cnt, (cwnd0 >> k).max(1), "round {k}: cnt = cwnd / 2^{k}");
        incs.push(h.b.inflight_hi - hi0);
        assert_eq!(
            h.w.cwnd as u32,
            h.b.inflight_hi.min(h.b.inflight(h.b.bw(), h.b.cwnd_gain) + h.b.ack_aggregation_cwnd())
        );
    }
    // 1, 2 ... per round: each round at least double the one before less rounding.
    assert_eq!(incs[0], 1);
    for i in 1..incs.len() {
        assert!(incs[i] >= 2 * incs[i - 1] - 1 && incs[i] <= 2 * incs[i - 1] + 2, "{incs:?}");
    }
    // Not cwnd-limited: no growth.
    let hi = h.b.inflight_hi;
    h.c.cwnd_limited = false;
    h.ack(0.1, 100, 0.1, |_| {});
    assert_eq!(h.b.inflight_hi, hi);
}

#[test]
fn cruise_keeps_headroom_below_inflight_hi() {
    let mut h = H::with(no_probe_rtt());
    h.drive_to_probe_bw(0.1, 80);
    h.c.in_flight = 50;
    h.round(0.1, 80);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    assert!(h.w.cwnd > 100.0, "without inflight_hi, cwnd is 2 BDP: {}", h.w.cwnd);
    h.b.inflight_hi = 100;
    h.round(0.1, 80);
    // 100 - max(100 * 38 >> 8, 1) = 86: Linux's 15 % is 38/256 = 14.8 %,
    // truncated, so the cap is 86, not 85.
    assert_eq!(h.w.cwnd, 86.0);
    assert_eq!(h.w.cwnd, 100.0 - (100.0f64 * 38.0 / 256.0).floor());
    assert!(h.w.cwnd < 100.0 * (1.0 - 0.13));
    h.until_phase(0.1, 80, Phase::Refill, 40);
    h.round(0.1, 80);
    assert_eq!(h.w.cwnd, 100.0, "REFILL/UP cap at inflight_hi itself");
}

#[test]
fn probe_rtt_every_five_seconds_at_half_bdp_for_200_ms() {
    let mut h = H::new(Bbr3::new());
    h.drive_to_probe_bw(0.1, 80);
    h.c.in_flight = 50;
    let mut t_enter = None;
    for _ in 0..100 {
        h.round(0.1, 80);
        if h.b.mode == Mode::ProbeRtt {
            t_enter = Some(h.c.now);
            break;
        }
    }
    // min RTT stamp at the first sample (t = 0.1 s): expires after 5 s.
    let t = t_enter.expect("ProbeRTT");
    assert!(t > 5.1 && t <= 5.2 + 1e-9, "{t}");
    assert_eq!(h.var("mode"), 3.0);
    let half = h.b.bdp(h.b.bw(), 128);
    assert_eq!(half, 41, "ceil(80.0x / 2)");
    assert_eq!(h.w.cwnd, 41.0, "cwnd = BDP / 2");
    assert!(h.c.app_limited > 0, "ProbeRTT marks samples app-limited");
    // Inflight reaches the target: 200 ms and a round at it.
    h.c.in_flight = 40;
    h.ack(0.01, 10, 0.1, |_| {});
    let t_low = h.c.now;
    while h.c.now < t_low + 0.2 - 1e-9 {
        h.ack(0.02, 4, 0.1, |_| {});
        assert_eq!(h.b.mode, Mode::ProbeRtt, "at {}", h.c.now - t_low);
        assert!(h.w.cwnd <= 41.0);
    }
    let mut t_exit = None;
    for _ in 0..10 {
        h.ack(0.02, 4, 0.1, |_| {});
        if h.b.mode != Mode::ProbeRtt {
            t_exit = Some(h.c.now);
            break;
        }
    }
    let t_exit = t_exit.expect("ProbeRTT ends");
    assert!(t_exit - t_low > 0.2 && t_exit - t_low < 0.25, "{}", t_exit - t_low);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    assert!(h.w.cwnd > 41.0, "cwnd restored");
    // And again 5 s later.
    for _ in 0..100 {
        h.round(0.1, 80);
        if h.b.mode == Mode::ProbeRtt {
            let gap = h.c.now - t_exit;
            assert!(gap > 5.0 && gap <= 5.1 + 1e-9, "{gap}");
            return;
        }
    }
    panic!("no second ProbeRTT");
}

#[test]
fn ecn_param_chooses_the_flows_default_ecn_mode() {
    assert_eq!(H::with(serde_json::json!({})).b.ecn().default_mode, EcnMode::Off);
    let e = H::with(serde_json::json!({"ecn": true})).b.ecn();
    assert_eq!((e.default_mode, e.needs, e.precise_echo), (EcnMode::AccEcn, EcnMode::Off, true));
}

#[test]
fn ecn_alpha_ewma_and_ecn_cut_of_inflight_lo() {
    let mut h = H::with(serde_json::json!({"ecn": true, "probe_rtt_ms": 0}));
    assert_eq!(h.b.ecn_alpha, 256);
    // First round: no min_rtt yet, so not ECN-eligible and alpha unchanged.
    h.b.on_ecn(0, false);
    h.round(0.001, 10);
    assert!(!h.b.ecn_eligible);
    assert_eq!(h.b.ecn_alpha, 256);
    // No CE -> alpha = 256 * 15/16 = 240.
    h.round(0.001, 20);
    assert!(h.b.ecn_eligible, "min_rtt 1 ms <= 5 ms");
    assert_eq!(h.b.ecn_alpha, 240);
    // Half the round CE-marked: ce_ratio 128 -> 240*240/256 + 16*128/256 = 225 + 8.
    h.b.on_ecn(20, true);
    h.round(0.001, 40);
    assert_eq!(h.b.ecn_alpha, 233);
    // Another such round: the second ECN round at >= 50 % ends Startup
    // (delivery still doubling: no plateau).
    assert_eq!(h.var("full_bw_reached"), 0.0);
    h.b.on_ecn(60, true);
    h.round(0.001, 80);
    assert_eq!(h.b.ecn_alpha, ((233 * 240) >> 8) + 8);
    assert_eq!(h.var("full_bw_reached"), 1.0, "bbr_full_ecn_cnt = 2 rounds");
    assert!(h.var("inflight_hi") > 0.0);

    // In CRUISE an ECE round cuts inflight_lo by (1 - alpha / 3).
    let mut h = H::with(serde_json::json!({"ecn": true, "probe_rtt_ms": 0}));
    h.drive_to_probe_bw(0.001, 200);
    h.c.in_flight = 50;
    h.round(0.001, 200);
    assert_eq!(h.b.phase(), Some(Phase::Cruise));
    let d0 = h.c.delivered;
    h.b.on_ecn(0, true);
    h.ack(0.0005, 100, 0.001, |rs| {
        rs.delivered = 200;
        rs.prior_delivered = d0 - 5;
    });
    let cwnd = h.w.cwnd as u32; // inflight_lo starts from cwnd at the cut
    let alpha = h.b.ecn_alpha;
    assert!(alpha > 0 && alpha < 256);
    h.ack(0.0005, 100, 0.001, |rs| {
        rs.delivered = 200;
        rs.prior_delivered = d0;
    });
    // The round's end first updates alpha (no CE counted: decay), then cuts.
    assert_eq!(h.b.ecn_alpha, (alpha * 240) >> 8);
    let alpha = h.b.ecn_alpha;
    let cut = 256 - ((alpha * 85) >> 8);
    assert_eq!(h.b.inflight_lo, ((cwnd as u64 * cut as u64) >> 8) as u32);
    assert_eq!(h.b.bw_lo, NONE, "ECN alone does not set bw_lo");

    // Without `ecn` the same signals do nothing.
    let mut h = H::with(no_probe_rtt());
    h.drive_to_probe_bw(0.001, 200);
    h.c.in_flight = 50;
    h.round(0.001, 200);
    h.b.on_ecn(0, true);
    h.round(0.001, 200);
    h.round(0.001, 200);
    assert_eq!(h.var("inflight_lo"), -1.0);
}

#[test]
fn ecn_mark_rate_above_half_is_inflight_too_high_in_up() {
    let mut h = to_up(serde_json::json!({"ecn": true, "ecn_max_rtt_ms": 0, "probe_rtt_ms": 0}), None);
    assert!(h.b.ecn_eligible, "ecn_max_rtt_ms 0: any RTT");
    h.ack(0.1, 80, 0.1, |rs| rs.delivered_ce = 40);
    assert_eq!(h.b.phase(), Some(Phase::Up), "40 of 80 is not above 50 %");
    h.ack(0.1, 80, 0.1, |rs| {
        rs.delivered_ce = 41;
        rs.tx_in_flight = 30;
    });
    assert_eq!(h.b.phase(), Some(Phase::Down));
    assert_eq!(h.var("inflight_hi"), 58.0);
    // The default 5 ms gate keeps ECN off at 100 ms.
    let h = to_up(serde_json::json!({"ecn": true, "probe_rtt_ms": 0}), None);
    assert!(!h.b.ecn_eligible);
}

#[test]
fn undo_and_ssthresh_follow_bbr_ssthresh_and_bbr_undo_cwnd() {
    let mut h = H::with(no_probe_rtt());
    h.drive_to_probe_bw(0.1, 80);
    let w = Window { cwnd: 120.0, ssthresh: 77.0 };
    assert_eq!(h.b.ssthresh(&w, LossEvent::FastRecovery, 100, h.c.now), 77.0, "ssthresh unchanged");
    assert_eq!(h.b.prior_cwnd, 120);
    h.b.inflight_hi = 50;
    assert_eq!(h.b.undo_cwnd(&h.w.clone(), 10.0), 120.0);
    assert_eq!(h.b.inflight_hi, NONE, "restored to the value saved at ssthresh");
}

#[test]
fn random_event_sequences_keep_the_window_and_rate_sane() {
    let mut rng = 7u64;
    let mut r = |n: u64| splitmix64(&mut rng) % n.max(1);
    for seed in 0..20u64 {
        let mut h = H::with(serde_json::json!({"seed": seed, "ecn": seed % 2 == 0, "ecn_max_rtt_ms": 0}));
        let mut ce = 0u64;
        for _ in 0..3000 {
            match r(20) {
                0 => {
                    let (w, c) = (h.w, h.c);
                    h.c.lost += 1;
                    h.b.on_packet_lost(&w, 1 + r(200), 1 + r(20), r(2) == 0, &c);
                }
                1 => {
                    let st = [CaState::Open, CaState::Recovery, CaState::Loss][r(3) as usize];
                    if st != CaState::Open {
                        let w = h.w;
                        h.w.ssthresh = h.b.ssthresh(&w, LossEvent::FastRecovery, h.c.in_flight, h.c.now);
                    }
                    if st == CaState::Loss {
                        h.w.cwnd = 1.0;
                    }
                    h.c.state = st;
                    let c = h.c;
                    h.b.on_state(&mut h.w, st, &c);
                }
                2 => {
                    let w = h.w;
                    h.w.cwnd = h.b.undo_cwnd(&w, w.cwnd).max(1.0);
                }
                3 => {
                    h.c.now += r(3000) as f64 / 1000.0;
                    h.c.app_limited = r(2) * (h.c.delivered + 1);
                    h.b.on_tx_start(&mut h.w, &h.c);
                }
                4 => h.b.on_send(h.c.now, 1500, h.c.in_flight),
                _ => {
                    ce += r(3);
                    h.b.on_ecn(ce, r(4) == 0);
                    h.c.in_flight = r(300);
                    h.c.cwnd_limited = r(2) == 0;
                    let (d, iv) = if r(10) == 0 { (-1i64, -1.0) } else { (r(60) as i64, (1 + r(300)) as f64 / 1000.0) };
                    let acked = r(10);
                    let dt = r(50) as f64 / 1000.0;
                    let back = r(200);
                    h.ack(dt, acked, iv.max(0.001), |rs| {
                        rs.delivered = d;
                        rs.interval = iv;
                        rs.prior_delivered = rs.prior_delivered.saturating_sub(back);
                        rs.rtt = if d < 0 { None } else { Some((1 + back) as f64 / 1000.0) };
                        rs.losses = (back % 7 == 0) as u64;
                        rs.tx_in_flight = back;
                        rs.lost = back % 5;
                        rs.delivered_ce = back % 3;
                        rs.is_app_limited = back % 4 == 0;
                    });
                }
            }
            assert!(h.w.cwnd.is_finite() && h.w.cwnd >= 1.0 && h.w.cwnd.fract() == 0.0, "{:?}", h.w);
            let rate = h.b.pacing_rate_bps().unwrap();
            assert!(rate.is_finite() && rate > 0.0);
            let mut v = Vec::new();
            h.b.trace_vars(&mut v);
            assert!(v.iter().all(|(_, x)| x.is_finite()), "{v:?}");
        }
    }
}

#[test]
fn parameters_are_listed_validated_and_named() {
    let names: Vec<&str> = info().params.iter().map(|p| p.name).collect();
    let parsed = [
        "startup_pacing_gain",
        "startup_cwnd_gain",
        "cwnd_gain",
        "beta",
        "loss_thresh",
        "inflight_headroom",
        "probe_rtt_ms",
        "probe_rtt_win_s",
        "min_rtt_win_s",
        "bw_probe_base_s",
        "bw_probe_rand_s",
        "ecn",
        "ecn_thresh",
        "ecn_max_rtt_ms",
        "seed",
    ];
    assert_eq!(names, parsed);
    let spec = crate::spec::CcSpec { algorithm: "BBRv3".into(), params: Default::default() };
    assert_eq!(super::super::build(&spec, "flows[0].cc").unwrap().name(), "bbr3");
    for (k, v) in [
        ("beta", serde_json::json!(1.5)),
        ("loss_thresh", serde_json::json!(0)),
        ("ecn", serde_json::json!(1)),
        ("seed", serde_json::json!(-1)),
        ("cwnd_gain", serde_json::json!(9)),
        ("probe_rtt_win_s", serde_json::json!(20)),
    ] {
        let mut m = serde_json::Map::new();
        m.insert(k.into(), v);
        let err = Bbr3::from_params(&m, "flows[0].cc").err().unwrap();
        assert_eq!(err.field, format!("flows[0].cc.params.{k}"), "{}", err.message);
    }
    let b = Bbr3::from_params(
        serde_json::json!({"beta": 0.5, "loss_thresh": 0.05, "startup_pacing_gain": 2.0}).as_object().unwrap(),
        "f",
    )
    .unwrap();
    assert_eq!((b.beta, b.loss_thresh, b.startup_pacing_gain), (128, 12, 512));
    let d = Bbr3::from_params(&serde_json::Map::new(), "f").unwrap();
    assert_eq!((d.beta, d.loss_thresh, d.inflight_headroom, d.ecn_thresh), (76, 5, 38, 128));
}
