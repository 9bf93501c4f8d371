//! Every congestion-control algorithm, in every variant, driven through
//! random sequences of ACKs, duplicate ACKs, fast recoveries, timeouts and
//! time steps the way the sender drives it, keeps its invariants: cwnd >= 1
//! segment, ssthresh >= 2 segments, finite values, no panic.

use proptest::prelude::*;
use tcplab_core::cc::{self, AckSample, CaState, CongestionControl, Conn, LossEvent, Window};
use tcplab_core::spec::CcSpec;

/// Parameter choices beyond `variant` that change which rules run (the
/// delay-based algorithms' options and AReno's paper form's units and sign).
fn extra_configurations() -> Vec<(String, serde_json::Value)> {
    [
        ("vegas", serde_json::json!({"restart_on_idle": false})),
        ("vegas", serde_json::json!({"variant": "paper", "alpha": 0, "beta": 0})),
        (
            "vegas",
            serde_json::json!({"variant": "linux-2.6", "restart_on_idle": false, "alpha": 0, "beta": 0, "gamma": 0}),
        ),
        ("compound", serde_json::json!({"round_rtt": "mean"})),
        ("compound", serde_json::json!({"round_rtt": "last", "low_window": 0, "min_samples": 1})),
        ("compound", serde_json::json!({"round_rtt": "srtt", "beta": 0.9, "zeta": 0.03})),
        (
            "compound",
            serde_json::json!({"variant": "linux-port", "restart_on_idle": false, "gamma": 1, "min_samples": 1}),
        ),
        ("fast", serde_json::json!({"update_rtts": 2, "alpha": 5})),
        ("fast", serde_json::json!({"gamma": 1, "alpha": 1, "ss_exit": 0, "restart_on_idle": true})),
        ("areno", serde_json::json!({"b_bps": 1e9, "cap_w_inc": true})),
        ("areno", serde_json::json!({"b_bps": 1e9, "rtt_sample": "srtt", "filter": "linux"})),
        ("areno", serde_json::json!({"variant": "paper", "exponent": -1, "rtt_unit": "rtt_min", "beta": 1})),
        ("areno", serde_json::json!({"variant": "paper", "b_bps": 1e9, "alpha": 100})),
        (
            "areno",
            serde_json::json!({"variant": "seed", "rtt_unit": "rtt_min", "exponent": -1, "alpha": 10, "beta": 0.1}),
        ),
    ]
    .into_iter()
    .map(|(a, p)| (a.to_string(), p))
    .collect()
}

/// Every algorithm with default parameters, plus each value of every
/// `variant` parameter the catalog documents (its description lists the
/// choices as `name: ...` or `name|name`), plus [`extra_configurations`].
fn configurations() -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    let mut out = vec![];
    for (name, params) in extra_configurations() {
        out.push((name, params.as_object().unwrap().clone()));
    }
    for info in cc::catalog() {
        out.push((info.name.to_string(), serde_json::Map::new()));
        for p in &info.params {
            if p.name == "variant" {
                for v in variant_values(p.description) {
                    let mut m = serde_json::Map::new();
                    m.insert("variant".into(), serde_json::Value::String(v));
                    out.push((info.name.to_string(), m));
                }
            }
        }
    }
    out
}

/// The words that build successfully as a variant value are the variants.
fn variant_values(description: &str) -> Vec<String> {
    description
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_string())
        .collect()
}

#[derive(Debug, Clone)]
enum Op {
    Ack {
        acked: u32,
        rtt_ms: u32,
        dt_ms: u32,
    },
    DupAck {
        rtt_ms: u32,
        dt_ms: u32,
    },
    FastRecovery {
        rounds: u8,
    },
    Timeout,
    Idle {
        dt_ms: u32,
    },
    /// A data segment sent with `in_flight` segments out (counting it).
    Send {
        in_flight: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (1u32..8, 1u32..600, 0u32..50).prop_map(|(acked, rtt_ms, dt_ms)| Op::Ack { acked, rtt_ms, dt_ms }),
        2 => (1u32..600, 0u32..20).prop_map(|(rtt_ms, dt_ms)| Op::DupAck { rtt_ms, dt_ms }),
        1 => (0u8..4).prop_map(|rounds| Op::FastRecovery { rounds }),
        1 => Just(Op::Timeout),
        1 => (0u32..5000).prop_map(|dt_ms| Op::Idle { dt_ms }),
        3 => (1u32..40).prop_map(|in_flight| Op::Send { in_flight }),
    ]
}

fn check(name: &str, w: &Window, step: usize) {
    assert!(w.cwnd.is_finite() && w.ssthresh.is_finite(), "{name} step {step}: non-finite {w:?}");
    assert!(w.cwnd >= 1.0, "{name} step {step}: cwnd {} < 1", w.cwnd);
    assert!(w.ssthresh >= 2.0, "{name} step {step}: ssthresh {} < 2", w.ssthresh);
}

/// Drives `name` with `params` through `ops`, checking the invariants after
/// every step and `per_ack(before, after, acked)` around every ACK.
/// Tells `cc` the CA state `new` if it changed (or `again`: every timeout), as the sender does.
fn tell(cc: &mut Box<dyn CongestionControl>, w: &mut Window, state: &mut CaState, new: CaState, now: f64, again: bool) {
    if new == *state && !again {
        return;
    }
    *state = new;
    let c = Conn {
        now,
        in_flight: w.cwnd as u64,
        delivered: 0,
        delivered_time: now,
        lost: 0,
        app_limited: 0,
        state: new,
        srtt: 0.1,
        min_rtt: 0.1,
        mss: 1448,
        cwnd_limited: true,
        edt: now,
    };
    cc.on_state(w, new, &c);
}

fn drive(
    name: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    ops: &[Op],
    per_ack: &dyn Fn(&Window, &Window, u32),
) {
    let spec = CcSpec { algorithm: name.into(), params: params.clone() };
    let mut cc = cc::build(&spec, "cc").unwrap_or_else(|e| panic!("{name} {params:?}: {e}"));
    let mut w = Window { cwnd: 10.0, ssthresh: 2_147_483_647.0 };
    let (mut now, mut una, mut delivered, mut min_rtt, mut srtt) = (0.0f64, 0u64, 0u64, f64::INFINITY, 0.0f64);
    let sample = |now: f64,
                  acked: u32,
                  rtt: Option<f64>,
                  w: &Window,
                  una: &mut u64,
                  delivered: &mut u64,
                  min_rtt: &mut f64,
                  srtt: &mut f64,
                  dup: bool| {
        if let Some(r) = rtt {
            *min_rtt = min_rtt.min(r);
            *srtt = if *srtt == 0.0 { r } else { 0.875 * *srtt + 0.125 * r };
        }
        *una += acked as u64;
        *delivered += acked as u64;
        AckSample {
            now,
            acked,
            cum_acked: acked,
            rtt,
            srtt: *srtt,
            min_rtt: *min_rtt,
            in_flight: w.cwnd as u64,
            snd_una: *una,
            snd_nxt: *una + w.cwnd as u64,
            delivered: *delivered,
            cwnd_limited: true,
            duplicate: dup,
        }
    };
    // The CA state as the sender tells it (`on_state`), at the moments it does.
    let mut state = CaState::Open;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Ack { acked, rtt_ms, dt_ms } => {
                now += dt_ms as f64 / 1e3;
                let s = sample(
                    now,
                    acked,
                    Some(rtt_ms as f64 / 1e3),
                    &w,
                    &mut una,
                    &mut delivered,
                    &mut min_rtt,
                    &mut srtt,
                    false,
                );
                cc.on_ack_sample(&w, &s);
                // New data ends Disorder, and here also Loss (as if it covered the timeout's data).
                if state != CaState::Recovery {
                    tell(&mut cc, &mut w, &mut state, CaState::Open, now, false);
                }
                let before = w;
                cc.on_ack(&mut w, &s);
                per_ack(&before, &w, acked);
            }
            Op::DupAck { rtt_ms, dt_ms } => {
                now += dt_ms as f64 / 1e3;
                let s = sample(
                    now,
                    0,
                    Some(rtt_ms as f64 / 1e3),
                    &w,
                    &mut una,
                    &mut delivered,
                    &mut min_rtt,
                    &mut srtt,
                    true,
                );
                cc.on_ack_sample(&w, &s);
                if state == CaState::Open && !cc.controls_window() {
                    tell(&mut cc, &mut w, &mut state, CaState::Disorder, now, false);
                }
            }
            Op::FastRecovery { rounds } => {
                // As the sender does: ssthresh, inflate, partial ACKs, exit with cwnd = ssthresh.
                let flight = w.cwnd as u64;
                w.ssthresh = cc.ssthresh(&w, LossEvent::FastRecovery, flight, now);
                tell(&mut cc, &mut w, &mut state, CaState::Recovery, now, false);
                w.cwnd = w.ssthresh + 3.0;
                check(name, &w, i);
                for _ in 0..rounds {
                    now += 0.05;
                    let s = sample(now, 1, None, &w, &mut una, &mut delivered, &mut min_rtt, &mut srtt, false);
                    cc.on_ack_sample(&w, &s);
                }
                w.cwnd = w.ssthresh;
                tell(&mut cc, &mut w, &mut state, CaState::Open, now, false);
                cc.on_recovery_exit(&mut w, now);
            }
            Op::Timeout => {
                let flight = w.cwnd as u64;
                w.ssthresh = cc.ssthresh(&w, LossEvent::Timeout, flight, now);
                w.cwnd = 1.0;
                cc.on_rto(&mut w, now);
                tell(&mut cc, &mut w, &mut state, CaState::Loss, now, true);
            }
            Op::Idle { dt_ms } => now += dt_ms as f64 / 1e3,
            Op::Send { in_flight } => cc.on_send(now, 1500, in_flight as u64),
        }
        check(name, &w, i);
        if let Some(rate) = cc.pacing_rate_bps() {
            assert!(rate.is_finite() && rate > 0.0, "{name}: pacing rate {rate}");
        }
    }
}

/// The configurations that build: defaults and every real variant value.
fn buildable() -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    configurations()
        .into_iter()
        .filter(|(name, params)| cc::build(&CcSpec { algorithm: name.clone(), params: params.clone() }, "cc").is_ok())
        .collect()
}

#[test]
fn every_algorithm_and_each_documented_variant_is_covered() {
    let configs = buildable();
    for info in cc::catalog() {
        let n = configs.iter().filter(|(a, _)| a == info.name).count();
        let has_variant = info.params.iter().any(|p| p.name == "variant");
        // Defaults always; with a `variant` parameter, at least one more value
        // found in its description (the description must name the choices).
        assert!(n > usize::from(has_variant), "{}: only {n} configuration(s) covered", info.name);
    }
}

#[test]
fn the_extra_configurations_are_valid() {
    // buildable() drops what does not build; these must not silently vanish.
    for (name, params) in extra_configurations() {
        let spec = CcSpec { algorithm: name.clone(), params: params.as_object().unwrap().clone() };
        if let Err(e) = cc::build(&spec, "cc") {
            panic!("{name} {params}: {e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5e_ed_cc),
        ..ProptestConfig::default()
    })]
    #[test]
    fn algorithms_keep_their_invariants_under_random_event_sequences(ops in proptest::collection::vec(op(), 1..400)) {
        for (name, params) in buildable() {
            drive(&name, &params, &ops, &|_, _, _| {});
        }
    }

    #[test]
    fn areno_never_grows_the_window_faster_than_slow_start(ops in proptest::collection::vec(op(), 1..400)) {
        // Every AReno configuration: an ACK of k segments adds at most k
        // (slow start's growth, RFC 5681 s3.1), plus Reno's 1/W where an ACK
        // crossing ssthresh leaves less than that to congestion avoidance.
        for (name, params) in buildable().into_iter().filter(|(a, _)| a == "areno") {
            drive(&name, &params, &ops, &|before, after, acked| {
                let most = before.cwnd + acked as f64 + 1.0 / before.cwnd;
                assert!(after.cwnd <= most + 1e-9, "areno {params:?}: {before:?} -> {} on an ACK of {acked}", after.cwnd);
            });
        }
    }
}
