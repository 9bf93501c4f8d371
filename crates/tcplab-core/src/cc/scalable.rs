//! Scalable TCP (STCP): multiplicative increase, multiplicative decrease.
//!
//! Sources:
//! - T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//!   Networks", ACM CCR 33(2), 2003: in congestion avoidance `cwnd += a` for
//!   each ACK with a = 0.01; on a congestion event `cwnd -= b * cwnd` with
//!   b = 0.125; standard TCP rules below a "legacy window" (16 segments).
//! - Linux `net/ipv4/tcp_scalable.c` (since the March 2020 patch "tcp: fix
//!   stretch ACK bugs in Scalable", Linux 5.7): `TCP_SCALABLE_AI_CNT = 100`,
//!   `TCP_SCALABLE_MD_SCALE = 3`; slow start with `tcp_slow_start` (leftover
//!   credit goes to congestion avoidance), then
//!   `tcp_cong_avoid_ai(w = min(cwnd, 100), acked)`, i.e. +1 segment per
//!   `min(cwnd, 100)` segments delivered; `ssthresh = max(cwnd - (cwnd >> 3), 2)`.
//! - Linux before 5.7 (e.g. 4.4): `TCP_SCALABLE_AI_CNT = 50` "to account for
//!   delayed ack", one credit per ACK (`tcp_cong_avoid_ai(w, 1)`), and the
//!   slow-start leftover credit discarded (`tcp_slow_start`'s return ignored).
//! - Reference: docs/reference/cc-algorithms.md section 3; the mv-highspeed
//!   spec (STCP a = 0.01, b = 0.125, no low-window threshold).
//!
//! Variants (parameter `variant`):
//! - `linux` (default): integer cwnd with the `snd_cwnd_cnt` credit counter
//!   (Reno's `slow_start` / `cong_avoid_ai`), credits = segments delivered
//!   (`acked`, SACKed included, Linux's `acked_sacked`).
//! - `linux-pre-2020`: as above with `ai_cnt = 50`, one credit per ACK, and the
//!   slow-start leftover discarded.
//! - `paper`: fractional cwnd; above `low_window`: `cwnd += a` per ACK (or per
//!   segment delivered with `per_packet = true`), `ssthresh = max((1-b) cwnd, 2)`;
//!   at or below `low_window`: Reno (`cwnd += 1/cwnd` per ACK, halve on loss).
//!   Slow start as ns-2's `opencwnd()` and reno.rs `float`: `cwnd += 1` per
//!   ACK (per segment with `per_packet`), capped at ssthresh.
//!   `low_window = 0` removes the threshold (mv-highspeed).
//!
//! Deviations: Linux's cwnd clamp is the receiver window enforced by the
//! sender; growth is gated by `cwnd_limited` (see reno.rs); the `undo_cwnd`
//! hook is not modelled. The older form of 2.6/3.0 kernels (`cnt++; if cnt > min(cwnd, 50)`,
//! one more ACK per increment) is not modelled. Kelly's paper does not say
//! exactly how the legacy window is compared; here "Reno" means
//! `cwnd <= low_window` at the ACK or loss. No time-dependent state.

use super::reno::Reno;
use super::{
    variant_default, AckSample, AlgorithmInfo, Choice, CongestionControl, LossEvent, ParamInfo, Params, Window,
};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Linux,
    LinuxPre2020,
    Paper,
}

#[derive(Debug, Clone)]
pub struct Scalable {
    pub variant: Variant,
    /// Linux TCP_SCALABLE_AI_CNT: width cap of `tcp_cong_avoid_ai`.
    pub ai_cnt: u64,
    /// Linux TCP_SCALABLE_MD_SCALE: ssthresh = cwnd - (cwnd >> md_shift).
    pub md_shift: u32,
    /// Paper: increase per ACK above the legacy window.
    pub a: f64,
    /// Paper: fraction of the window removed on a congestion event.
    pub b: f64,
    /// Paper: legacy window (segments); Reno rules at or below it.
    pub low_window: f64,
    /// Paper: count segments delivered instead of ACKs.
    pub per_packet: bool,
    /// Linux `snd_cwnd_cnt`.
    pub cwnd_cnt: u64,
}

param_choice!(Variant { Linux => "linux", LinuxPre2020 => "linux-pre-2020", Paper => "paper" });

/// Scalable's parameters; [`Config::for_variant`] is where each default
/// is written (`Default`: variant linux).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub variant: Variant,
    pub ai_cnt: u64,
    pub a: f64,
    pub b: f64,
    pub low_window: f64,
    pub per_packet: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config::for_variant(Variant::Linux)
    }
}

impl Config {
    pub fn for_variant(variant: Variant) -> Self {
        Config {
            variant,
            ai_cnt: if variant == Variant::LinuxPre2020 { 50 } else { 100 },
            a: 0.01,
            b: 0.125,
            low_window: 16.0,
            per_packet: false,
        }
    }

    fn variants() -> Vec<(&'static str, Config)> {
        [Variant::Linux, Variant::LinuxPre2020, Variant::Paper].map(|v| (v.name(), Config::for_variant(v))).into()
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let d = Config::for_variant(p.pick("variant", Config::default().variant)?);
        Ok(Config {
            ai_cnt: p.u64("ai_cnt", d.ai_cnt, |x| x >= 1, "an integer >= 1")?,
            a: p.f64("a", d.a, |x| x > 0.0 && x <= 1.0, "a number in (0, 1]")?,
            b: p.f64("b", d.b, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?,
            low_window: p.f64("low_window", d.low_window, |x| x >= 0.0, "a number of segments >= 0")?,
            per_packet: p.bool("per_packet", d.per_packet)?,
            ..d
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let v = Config::variants();
    AlgorithmInfo {
        name: "scalable",
        aliases: &["stcp"],
        description: "Scalable TCP: +0.01 segment per segment acknowledged above a low window (about +1% per RTT), \
                      keep 7/8 of the window on loss.",
        params: vec![
            ParamInfo::new(
                "variant",
                Config::default().variant,
                "linux: cwnd += acked/min(cwnd, ai_cnt) with integer cwnd, ssthresh = max(cwnd - cwnd/8, 2); \
                              linux-pre-2020: +1/min(cwnd, 50) per ACK, slow-start leftover discarded; \
                              paper: fractional cwnd, +a per ACK above low_window, keep 1-b on loss",
                "Linux tcp_scalable.c (5.7+ and 4.x-5.6); Kelly 2003",
            ),
            ParamInfo::new(
                "ai_cnt",
                variant_default(&v, |c| c.ai_cnt),
                "TCP_SCALABLE_AI_CNT: +1 segment per min(cwnd, ai_cnt) credits (Linux variants only)",
                "Linux tcp_scalable.c",
            ),
            ParamInfo::new(
                "a",
                variant_default(&v, |c| c.a),
                "paper: cwnd increase per ACK above low_window",
                "Kelly 2003",
            ),
            ParamInfo::new(
                "b",
                variant_default(&v, |c| c.b),
                "paper: fraction of cwnd removed on loss above low_window",
                "Kelly 2003",
            ),
            ParamInfo::new(
                "low_window",
                variant_default(&v, |c| c.low_window),
                "paper: legacy window; Reno increase/decrease at or below it (0 = none, as mv-highspeed)",
                "Kelly 2003; docs/papers/mv-highspeed.md",
            ),
            ParamInfo::new(
                "per_packet",
                variant_default(&v, |c| c.per_packet),
                "paper: add a per segment delivered (acked) instead of per ACK",
                "Kelly 2003 (per ACK); reference s1.1",
            ),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Scalable::from_params(map, field)?))
}

impl Scalable {
    pub fn new(variant: Variant) -> Self {
        Scalable::with(&Config::for_variant(variant))
    }

    pub fn with(c: &Config) -> Self {
        Scalable {
            variant: c.variant,
            ai_cnt: c.ai_cnt,
            md_shift: 3,
            a: c.a,
            b: c.b,
            low_window: c.low_window,
            per_packet: c.per_packet,
            cwnd_cnt: 0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Scalable::with(&Config::from_params(map, field)?))
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        match self.variant {
            Variant::Linux => {
                let mut acked = s.acked as u64;
                if w.in_slow_start() {
                    acked = Reno::slow_start(w, acked);
                    if acked == 0 {
                        return;
                    }
                }
                let width = (w.cwnd as u64).min(self.ai_cnt);
                Reno::cong_avoid_ai(w, &mut self.cwnd_cnt, width, acked);
            }
            Variant::LinuxPre2020 => {
                if w.in_slow_start() {
                    // tcp_slow_start(tp, acked) with its leftover ignored.
                    Reno::slow_start(w, s.acked as u64);
                    return;
                }
                let width = (w.cwnd as u64).min(self.ai_cnt);
                Reno::cong_avoid_ai(w, &mut self.cwnd_cnt, width, 1);
            }
            Variant::Paper => {
                let n = if self.per_packet { s.acked as f64 } else { 1.0 };
                if w.in_slow_start() {
                    // ns-2 opencwnd(): +1 per ACK (or per segment), capped at ssthresh.
                    w.cwnd = (w.cwnd + n).min(w.ssthresh.max(w.cwnd));
                    return;
                }
                if w.cwnd > self.low_window {
                    w.cwnd += self.a * n;
                } else {
                    w.cwnd += n / w.cwnd;
                }
            }
        }
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        // Linux tcp_enter_loss zeroes snd_cwnd_cnt on every timeout.
        self.cwnd_cnt = 0;
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        // Linux tcp_init_cwnd_reduction / tcp_enter_loss reset snd_cwnd_cnt.
        self.cwnd_cnt = 0;
        match self.variant {
            Variant::Linux | Variant::LinuxPre2020 => {
                let c = w.cwnd as u64;
                (c - (c >> self.md_shift)).max(2) as f64
            }
            Variant::Paper => {
                let keep = if w.cwnd > self.low_window { 1.0 - self.b } else { 0.5 };
                (w.cwnd * keep).max(2.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(acked: u32) -> AckSample {
        AckSample::test(0.0, acked)
    }

    fn build_with(json: serde_json::Value) -> Scalable {
        Scalable::from_params(json.as_object().unwrap(), "flows[0].cc").unwrap()
    }

    /// One round trip without delayed ACKs: every segment of the window sent at
    /// the start of the round is acknowledged by its own ACK.
    fn one_rtt(s: &mut Scalable, w: &mut Window) {
        let n = w.cwnd.floor() as u64;
        for _ in 0..n {
            s.on_ack(w, &sample(1));
        }
    }

    /// Round trips until cwnd has at least doubled from `start`.
    fn rtts_to_double(s: &mut Scalable, start: f64) -> u32 {
        let mut w = Window { cwnd: start, ssthresh: 2.0 };
        let mut rtts = 0;
        while w.cwnd < 2.0 * start {
            one_rtt(s, &mut w);
            rtts += 1;
        }
        rtts
    }

    #[test]
    fn linux_adds_one_segment_per_100_acked_above_100() {
        // tcp_cong_avoid_ai(tp, min(cwnd, 100), acked): at cwnd = 1000, +1 after
        // exactly 100 segments; stretch ACKs of 2 count 2 credits (Linux 5.7+).
        let mut s = Scalable::new(Variant::Linux);
        let mut w = Window { cwnd: 1000.0, ssthresh: 10.0 };
        for _ in 0..99 {
            s.on_ack(&mut w, &sample(1));
        }
        assert_eq!(w.cwnd, 1000.0);
        s.on_ack(&mut w, &sample(1));
        assert_eq!(w.cwnd, 1001.0);
        for _ in 0..49 {
            s.on_ack(&mut w, &sample(2));
        }
        assert_eq!(w.cwnd, 1001.0);
        s.on_ack(&mut w, &sample(2));
        assert_eq!(w.cwnd, 1002.0);
    }

    #[test]
    fn linux_is_reno_below_100() {
        // min(cwnd, 100) = cwnd for cwnd <= 100: +1 per cwnd segments acked.
        let mut s = Scalable::new(Variant::Linux);
        let mut w = Window { cwnd: 40.0, ssthresh: 10.0 };
        for _ in 0..39 {
            s.on_ack(&mut w, &sample(1));
        }
        assert_eq!(w.cwnd, 40.0);
        s.on_ack(&mut w, &sample(1));
        assert_eq!(w.cwnd, 41.0);
    }

    #[test]
    fn linux_slow_start_leftover_goes_to_congestion_avoidance() {
        // tcp_slow_start returns the credit beyond ssthresh; Scalable passes it to
        // tcp_cong_avoid_ai in the same ACK (Linux 5.7+), pre-2020 discards it.
        let mut s = Scalable::new(Variant::Linux);
        let mut w = Window { cwnd: 98.0, ssthresh: 100.0 };
        s.on_ack(&mut w, &sample(5));
        assert_eq!((w.cwnd, s.cwnd_cnt), (100.0, 3));
        let mut old = Scalable::new(Variant::LinuxPre2020);
        let mut w = Window { cwnd: 98.0, ssthresh: 100.0 };
        old.on_ack(&mut w, &sample(5));
        assert_eq!((w.cwnd, old.cwnd_cnt), (100.0, 0));
    }

    #[test]
    fn linux_pre_2020_counts_acks_with_width_50() {
        // Before 5.7: tcp_cong_avoid_ai(tp, min(cwnd, 50), 1): one credit per ACK,
        // so 50 ACKs of 2 segments each give +1 at cwnd = 1000.
        let mut s = build_with(serde_json::json!({"variant": "linux-pre-2020"}));
        assert_eq!(s.ai_cnt, 50);
        let mut w = Window { cwnd: 1000.0, ssthresh: 10.0 };
        for _ in 0..49 {
            s.on_ack(&mut w, &sample(2));
        }
        assert_eq!(w.cwnd, 1000.0);
        s.on_ack(&mut w, &sample(2));
        assert_eq!(w.cwnd, 1001.0);
    }

    #[test]
    fn linux_ssthresh_keeps_seven_eighths() {
        // max(cwnd - (cwnd >> 3), 2).
        let mut s = Scalable::new(Variant::Linux);
        let ss =
            |s: &mut Scalable, c: f64| s.ssthresh(&Window { cwnd: c, ssthresh: 1e9 }, LossEvent::FastRecovery, 0, 0.0);
        assert_eq!(ss(&mut s, 1000.0), 875.0);
        assert_eq!(ss(&mut s, 1007.0), 882.0); // 1007 >> 3 = 125
        assert_eq!(ss(&mut s, 7.0), 7.0); // 7 >> 3 = 0
        assert_eq!(ss(&mut s, 1.0), 2.0);
    }

    #[test]
    fn paper_adds_a_per_ack_above_low_window_and_reno_below() {
        // Kelly 2003: cwnd += 0.01 per ACK above the legacy window (16), Reno below.
        let mut s = Scalable::new(Variant::Paper);
        let mut w = Window { cwnd: 500.0, ssthresh: 10.0 };
        s.on_ack(&mut w, &sample(1));
        assert!((w.cwnd - 500.01).abs() < 1e-12);
        s.on_ack(&mut w, &sample(3)); // per ACK, not per segment
        assert!((w.cwnd - 500.02).abs() < 1e-12);
        let mut w = Window { cwnd: 16.0, ssthresh: 10.0 };
        s.on_ack(&mut w, &sample(1));
        assert!((w.cwnd - (16.0 + 1.0 / 16.0)).abs() < 1e-12);
        // per_packet: a per segment delivered.
        let mut pp = build_with(serde_json::json!({"variant": "paper", "per_packet": true}));
        let mut w = Window { cwnd: 500.0, ssthresh: 10.0 };
        pp.on_ack(&mut w, &sample(3));
        assert!((w.cwnd - 500.03).abs() < 1e-12);
    }

    #[test]
    fn paper_slow_start_is_one_per_ack_capped_at_ssthresh() {
        // ns-2 opencwnd(): cwnd += 1 per ACK below ssthresh, whatever it covers.
        let mut s = Scalable::new(Variant::Paper);
        let mut w = Window { cwnd: 10.0, ssthresh: 10.5 };
        s.on_ack(&mut w, &sample(3));
        assert_eq!(w.cwnd, 10.5);
        let mut w = Window { cwnd: 10.0, ssthresh: 100.0 };
        s.on_ack(&mut w, &sample(3));
        assert_eq!(w.cwnd, 11.0);
    }

    #[test]
    fn rto_clears_the_credit_counter() {
        // Linux tcp_enter_loss: snd_cwnd_cnt = 0 on every timeout.
        let mut s = Scalable::new(Variant::Linux);
        let mut w = Window { cwnd: 1000.0, ssthresh: 10.0 };
        s.on_ack(&mut w, &sample(7));
        assert_eq!(s.cwnd_cnt, 7);
        w.cwnd = 1.0;
        s.on_rto(&mut w, 0.0);
        assert_eq!(s.cwnd_cnt, 0);
    }

    #[test]
    fn paper_without_low_window_is_scalable_everywhere() {
        // mv-highspeed: a = 0.01 / b = 0.125 "with no low-window threshold".
        let mut s = build_with(serde_json::json!({"variant": "paper", "low_window": 0}));
        let mut w = Window { cwnd: 4.0, ssthresh: 2.0 };
        s.on_ack(&mut w, &sample(1));
        assert!((w.cwnd - 4.01).abs() < 1e-12);
        let ss = s.ssthresh(&Window { cwnd: 8.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 0, 0.0);
        assert!((ss - 7.0).abs() < 1e-12);
    }

    #[test]
    fn paper_decrease_is_b_above_low_window_and_half_below() {
        // cwnd -= b*cwnd (b = 0.125) above lwnd; Reno halving at or below it; floor 2.
        let mut s = Scalable::new(Variant::Paper);
        let ss =
            |s: &mut Scalable, c: f64| s.ssthresh(&Window { cwnd: c, ssthresh: 1e9 }, LossEvent::FastRecovery, 0, 0.0);
        assert!((ss(&mut s, 1000.0) - 875.0).abs() < 1e-9);
        assert!((ss(&mut s, 16.0) - 8.0).abs() < 1e-12);
        assert_eq!(ss(&mut s, 3.0), 2.0);
    }

    #[test]
    fn paper_doubles_rate_in_about_70_rtts_at_any_rate() {
        // a = 0.01 per ACK, one ACK per segment: cwnd x 1.01 per RTT, so doubling
        // takes ln 2 / ln 1.01 = 69.66 RTTs, independent of the starting window.
        for start in [200.0, 2000.0, 20000.0] {
            let mut s = build_with(serde_json::json!({"variant": "paper", "low_window": 0}));
            let mut w = Window { cwnd: start, ssthresh: 2.0 };
            one_rtt(&mut s, &mut w);
            assert!((w.cwnd / start - 1.01).abs() < 1e-9, "{start}: {}", w.cwnd);
            let n = rtts_to_double(&mut s, start);
            assert!(n == 70 || (start < 1000.0 && n == 71), "start {start}: {n} RTTs");
        }
    }

    #[test]
    fn linux_doubles_rate_in_about_70_rtts_above_100() {
        // +acked/100 above cwnd = 100: the same 1% per RTT up to integer rounding
        // of the credit counter (at most one lost increment per RTT).
        for start in [1000.0, 10000.0] {
            let mut s = Scalable::new(Variant::Linux);
            let n = rtts_to_double(&mut s, start);
            assert!((70..=72).contains(&n), "start {start}: {n} RTTs");
        }
    }

    #[test]
    fn parameters_are_validated_with_their_path() {
        let bad = serde_json::json!({"variant": "paper", "b": 1.5});
        let err = Scalable::from_params(bad.as_object().unwrap(), "flows[2].cc").err().unwrap();
        assert_eq!(err.field, "flows[2].cc.params.b");
        let bad = serde_json::json!({"variant": "kelly"});
        let err = Scalable::from_params(bad.as_object().unwrap(), "flows[0].cc").err().unwrap();
        assert_eq!(err.field, "flows[0].cc.params.variant");
    }
}
