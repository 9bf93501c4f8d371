//! TCP Westwood+ (`westwood`, aliases `westwood+`, `westwoodplus`): Reno
//! window growth; after a loss ssthresh (and cwnd) are set to the estimated
//! bandwidth-delay product `BWE x RTT_min` instead of half the window.
//!
//! Sources:
//! - Linux `net/ipv4/tcp_westwood.c`: `tcp_reno_cong_avoid` growth,
//!   `tcp_reno_ssthresh` (`max(cwnd/2, 2)`) on entering recovery, and in
//!   `tcp_westwood_event`: at `CA_EVENT_COMPLETE_CWR` (end of fast recovery)
//!   `ssthresh = cwnd = max(bw_est * rtt_min / mss, 2)`; at `CA_EVENT_LOSS`
//!   (RTO) `ssthresh = max(bw_est * rtt_min / mss, 2)` and `reset_rtt_min`.
//!   The bandwidth estimator (one sample per `max(RTT, 50 ms)`, two cascaded
//!   7/8 filters, duplicate-ACK accounting, `rtt_min`) is [`super::bwe`].
//! - L. A. Grieco, S. Mascolo, "Performance evaluation and comparison of
//!   Westwood+, New Reno, and Vegas TCP congestion control", ACM CCR 34(2),
//!   2004; S. Mascolo et al., MobiCom 2001: "after 3 duplicate ACKs
//!   ssthresh = BWE x RTTmin / seg; if cwnd > ssthresh then cwnd = ssthresh;
//!   after a timeout ssthresh = BWE x RTTmin / seg and cwnd = 1". One sample
//!   per RTT filtered by one EWMA, `b = 0.9 b + 0.1 sample` (reference
//!   s8.3).
//! - ns-2 `tcp/tcp-westwood-nr.cc` (TCPW-NR v1.3, 2002, UCLA):
//!   `WestwoodNRTcpAgent::dupack_action` sets
//!   `ssthresh = (int)(current_bwe_ / size_ / 8 * min_rtt_estimate)`, at
//!   least 2, and `cwnd = ssthresh` if larger, on the third duplicate ACK;
//!   `bwe_computation` starts `current_bwe_` at 0 (no first-sample fill).
//!
//! Variants (parameter `variant`):
//! - `linux` (default): the BWE value is applied when fast recovery ends
//!   (`bwe_timing = recovery_exit`); during recovery the window is Reno's
//!   half (in Linux PRR heads there; here the sender sets cwnd = ssthresh
//!   (+3 for Reno/NewReno)); at the exit cwnd is *set* to BWE x RTTmin, which
//!   can raise it. After an RTO `rtt_min` is re-learned from the next sample.
//! - `paper` (seeds mv-highspeed, mv-buffers): the BWE value is the ssthresh
//!   returned on the third duplicate ACK (`bwe_timing = immediate`), so the
//!   sender's recovery works around it; when recovery ends cwnd =
//!   min(cwnd before the loss, ssthresh) (the papers' "if cwnd > ssthresh").
//!   `rtt_min` is never reset; window growth is fractional (`mode = float`,
//!   ns-2 style); the filter is the paper's single EWMA (`filter = ewma`,
//!   gain 0.1) where Linux cascades two 7/8 stages (`filter = linux`). The
//!   RTO rule is the same in both (ssthresh = BWE x RTTmin, cwnd = 1): Linux
//!   applies it at the same moment as the papers.
//!
//! The first loss: no source treats a loss in slow start differently.
//! Slow start is Reno's (Linux `tcp_reno_cong_avoid`, ns-2 `opencwnd`); the
//! estimator runs throughout and its value is used only at a loss: ns-2 on
//! the third duplicate ACK, Linux at `CA_EVENT_COMPLETE_CWR` and
//! `CA_EVENT_LOSS`, both as `max(BWE x RTTmin, 2)` (`tcp_westwood_bw_rttmin`
//! takes `max_t(u32, bw_est * rtt_min / mss_cache, 2)`). ns-2's
//! `dupack_action` computes a slow-start divisor `fr_a_` and does not use
//! it ("'a' is no longer being used"); only its timeout path
//! (`slowdown(CLOSE_FASTER)`) divides by it, not modelled here. tcplab
//! therefore models nothing extra at the first loss. Its value lags the
//! ACK rate of an exponential slow start: a per-RTT sample is the mean of a
//! rate that doubled during the RTT, and a low-pass filter of samples that
//! double each RTT settles at about g / (1 - (1 - g) / 2) of the latest one
//! (0.18 for the paper's EWMA, (2/9)^2 = 0.05 for Linux's cascade).
//! docs/algorithms/westwood.md has the measured cells.
//!
//! Units: the estimate is in segments per second, so `BWE x RTT_min` is in
//! segments directly (Linux: bytes per jiffy times jiffies divided by
//! `mss_cache`; identical for full-sized segments). The result is truncated
//! to whole segments and at least 2, as Linux's integer division. Time is the
//! exact simulated time in seconds (Linux: jiffies).
//!
//! Deviations: every ACK is counted with Linux's slow-path rule (see
//! `bwe.rs`); no undo (the sender has none); with Reno/NewReno recovery the
//! sender inflates cwnd to ssthresh + 3 during recovery, also in the paper
//! variant where ssthresh may exceed the pre-loss window.

use super::bwe::{BweConfig, BweFilter, WestwoodBwe, WESTWOOD_INIT_RTT, WESTWOOD_RTT_MIN};
use super::reno::{self, Reno};
use super::{
    variant_default, AckSample, AlgorithmInfo, Choice, CongestionControl, LossEvent, ParamInfo, Params, Window,
};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BweTiming {
    /// Linux: Reno halving on entry, ssthresh = cwnd = BWE x RTTmin at COMPLETE_CWR.
    RecoveryExit,
    /// Papers / ns-2: ssthresh = BWE x RTTmin on the third duplicate ACK.
    Immediate,
}

#[derive(Debug, Clone)]
pub struct Westwood {
    pub timing: BweTiming,
    pub reset_rtt_min_on_rto: bool,
    pub bwe: WestwoodBwe,
    /// Reno window growth (and Linux's `tcp_reno_ssthresh`).
    pub reno: Reno,
    /// cwnd when the last fast recovery began (paper variant).
    prior_cwnd: f64,
    /// ssthresh(Timeout) was just called: on_rto is Linux's CA_EVENT_LOSS.
    loss_pending: bool,
}

/// Linux `westwood_do_filter`: `(7a + b) >> 3`, the new input weighs 1/8.
pub const LINUX_FILTER_GAIN: f64 = 1.0 / 8.0;
/// Westwood+ paper (Grieco & Mascolo 2004): `b = 0.9 b + 0.1 sample`.
pub const PAPER_FILTER_GAIN: f64 = 0.1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Linux,
    Paper,
}

/// The bandwidth estimate's low-pass filter (`filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Linux,
    Ewma,
    Tustin,
}

param_choice!(Variant { Linux => "linux", Paper => "paper" });
param_choice!(BweTiming { RecoveryExit => "recovery_exit", Immediate => "immediate" });
param_choice!(Filter { Linux => "linux", Ewma => "ewma", Tustin => "tustin" });

/// Westwood's parameters; [`Config::for_variant`] is where each default is
/// written (`Default`: variant linux). The algorithms built on Westwood
/// read them with their own defaults ([`Config::read`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub variant: Variant,
    pub bwe_timing: BweTiming,
    pub reset_rtt_min_on_rto: bool,
    pub mode: reno::Mode,
    pub filter: Filter,
    /// Weight of the new sample; None: the filter's own
    /// ([`Config::filter_gain`]).
    pub filter_gain: Option<f64>,
    /// Seconds.
    pub min_interval: f64,
    /// Seconds.
    pub init_rtt: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config::for_variant(Variant::Linux)
    }
}

impl Config {
    pub fn for_variant(variant: Variant) -> Self {
        let linux = variant == Variant::Linux;
        Config {
            variant,
            bwe_timing: if linux { BweTiming::RecoveryExit } else { BweTiming::Immediate },
            reset_rtt_min_on_rto: linux,
            mode: if linux { reno::Mode::Linux } else { reno::Mode::Float },
            filter: if linux { Filter::Linux } else { Filter::Ewma },
            filter_gain: None,
            min_interval: WESTWOOD_RTT_MIN,
            init_rtt: WESTWOOD_INIT_RTT,
        }
    }

    pub fn variants() -> Vec<(&'static str, Config)> {
        [Variant::Linux, Variant::Paper].map(|v| (v.name(), Config::for_variant(v))).into()
    }

    /// The filter's gain: as set, else Linux's 1/8 for its cascade and the
    /// papers' 0.1 for the others.
    pub fn filter_gain(&self) -> f64 {
        self.filter_gain.unwrap_or(if self.filter == Filter::Linux { LINUX_FILTER_GAIN } else { PAPER_FILTER_GAIN })
    }

    /// How `filter_gain`'s default is shown.
    pub fn filter_gain_default() -> String {
        format!("{LINUX_FILTER_GAIN} (filter linux) / {PAPER_FILTER_GAIN} (ewma, tustin)")
    }

    /// Reads Westwood's parameters from `p`; `base` gives the defaults of
    /// a variant (the variant itself defaulting to `base(default_variant)`'s).
    pub fn read(p: &Params, default_variant: Variant, base: impl Fn(Variant) -> Config) -> Result<Self, SpecError> {
        let d = base(p.pick("variant", default_variant)?);
        let bwe_timing = p.pick("bwe_timing", d.bwe_timing)?;
        let reset_rtt_min_on_rto = p.bool("reset_rtt_min_on_rto", d.reset_rtt_min_on_rto)?;
        let mode = p.pick("mode", d.mode)?;
        let filter = p.pick("filter", d.filter)?;
        let gain = Config { filter, ..d }.filter_gain();
        let filter_gain = Some(p.f64("filter_gain", gain, |g| g > 0.0 && g <= 1.0, "a fraction in (0, 1]")?);
        Ok(Config {
            variant: d.variant,
            bwe_timing,
            reset_rtt_min_on_rto,
            mode,
            filter,
            filter_gain,
            min_interval: p.f64("min_interval", d.min_interval, |x| x >= 0.0, "a time >= 0 in seconds")?,
            init_rtt: p.f64("init_rtt", d.init_rtt, |x| x > 0.0, "a time > 0 in seconds")?,
        })
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        Config::read(&p, Config::default().variant, Config::for_variant)
    }

    /// The estimator these parameters give.
    pub fn bwe(&self) -> BweConfig {
        let gain = self.filter_gain();
        let filter = match self.filter {
            Filter::Ewma => BweFilter::Ewma { gain },
            Filter::Tustin => BweFilter::Tustin { a: 1.0 - gain },
            Filter::Linux => BweFilter::LinuxCascaded { gain },
        };
        BweConfig { min_interval: self.min_interval, init_rtt: self.init_rtt, filter, fixed_interval: None }
    }
}

pub fn info() -> AlgorithmInfo {
    let v = Config::variants();
    AlgorithmInfo {
        name: "westwood",
        aliases: &["westwood+", "westwoodplus"],
        description: "Westwood+: Reno growth; after loss ssthresh = max(BWE x RTTmin, 2) from a once-per-RTT, \
                      low-pass filtered bandwidth estimate (Linux tcp_westwood.c, or the papers' timing).",
        params: vec![
            ParamInfo::new("variant", Config::default().variant, "linux: BWE x RTTmin applied at recovery exit, rtt_min reset after RTO, integer cwnd, two cascaded 7/8 filters; paper: applied on the 3rd dupack, no rtt_min reset, float cwnd, one EWMA with gain 0.1 (sets the defaults of bwe_timing, reset_rtt_min_on_rto, mode, filter and filter_gain)", "Linux tcp_westwood.c; Grieco & Mascolo 2004; Mascolo et al. 2001"),
            ParamInfo::new("bwe_timing", variant_default(&v, |c| c.bwe_timing), "recovery_exit: ssthresh = Reno half on entry, ssthresh = cwnd = BWE x RTTmin at COMPLETE_CWR; immediate: ssthresh = BWE x RTTmin on entry, cwnd = min(prior cwnd, ssthresh) at exit", "Linux tcp_westwood_event; papers"),
            ParamInfo::new("reset_rtt_min_on_rto", variant_default(&v, |c| c.reset_rtt_min_on_rto), "after an RTO the next ACK sets rtt_min to the latest RTT sample", "Linux CA_EVENT_LOSS"),
            ParamInfo::new("mode", variant_default(&v, |c| c.mode), "Reno growth: linux = integer cwnd with snd_cwnd_cnt; float = cwnd += acked/cwnd", "Linux tcp_reno_cong_avoid; ns-2"),
            ParamInfo::new("filter", variant_default(&v, |c| c.filter), "linux: two cascaded EWMAs (bw_ns_est, bw_est); ewma: one EWMA b = (1-g) b + g s (paper); tustin: v = (1-g) v + g (s + s_prev)/2 (ns-3)", "Linux westwood_filter; Grieco & Mascolo 2004; ns-3"),
            ParamInfo::new("filter_gain", Config::filter_gain_default(), "weight of the new input in the filter (Linux 1/8: (7a + b) >> 3)", "Linux westwood_do_filter; paper 0.9/0.1"),
            ParamInfo::new("min_interval", variant_default(&v, |c| c.min_interval), "shortest bandwidth sampling interval, s: a sample is taken when more than max(RTT, min_interval) has elapsed", "Linux TCP_WESTWOOD_RTT_MIN = HZ/20"),
            ParamInfo::new("init_rtt", variant_default(&v, |c| c.init_rtt), "initial rtt and rtt_min, s (no sample before the first RTT sample)", "Linux TCP_WESTWOOD_INIT_RTT = 20*HZ"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Westwood::from_params(map, field)?))
}

impl Westwood {
    /// Linux defaults.
    pub fn linux() -> Self {
        Westwood::with(&Config::for_variant(Variant::Linux))
    }

    /// The papers' variant.
    pub fn paper() -> Self {
        Westwood::with(&Config::for_variant(Variant::Paper))
    }

    pub fn with(c: &Config) -> Self {
        Westwood {
            timing: c.bwe_timing,
            reset_rtt_min_on_rto: c.reset_rtt_min_on_rto,
            bwe: WestwoodBwe::new(c.bwe()),
            reno: Reno::new(c.mode),
            prior_cwnd: 0.0,
            loss_pending: false,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Westwood::with(&Config::from_params(map, field)?))
    }

    /// Linux `tcp_westwood_bw_rttmin`: `max(bw_est * rtt_min, 2)` segments, truncated.
    pub fn bw_rttmin(&self) -> f64 {
        self.bwe.bw_rttmin()
    }

    /// The loss response with a given post-loss window `target` (segments):
    /// Westwood+ passes `BWE x RTTmin`; the algorithms built on Westwood
    /// (e.g. the buffer-estimating Westwood) pass their own target and reuse
    /// the timing rules (immediate / at recovery exit) unchanged.
    pub fn ssthresh_with(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64, target: f64) -> f64 {
        match event {
            LossEvent::Timeout => {
                self.reno.cwnd_cnt = 0;
                self.loss_pending = true;
                target
            }
            LossEvent::FastRecovery => match self.timing {
                BweTiming::RecoveryExit => self.reno.ssthresh(w, event, in_flight, now),
                BweTiming::Immediate => {
                    self.reno.cwnd_cnt = 0;
                    self.prior_cwnd = w.cwnd;
                    target
                }
            },
        }
    }

    /// End of fast recovery with a given post-loss window `target`.
    pub fn recovery_exit_with(&mut self, w: &mut Window, _now: f64, target: f64) {
        match self.timing {
            BweTiming::RecoveryExit => {
                // CA_EVENT_COMPLETE_CWR: ssthresh = cwnd = max(bw_est * rtt_min, 2).
                w.ssthresh = target;
                w.cwnd = target;
            }
            BweTiming::Immediate => {
                // "if cwnd > ssthresh then cwnd = ssthresh" with the pre-loss cwnd.
                if self.prior_cwnd > 0.0 && self.prior_cwnd < w.cwnd {
                    w.cwnd = self.prior_cwnd;
                }
            }
        }
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_send(&mut self, now: f64, _bytes: u32, _in_flight: u64) {
        self.bwe.start(now);
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.bwe.on_ack(s);
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.reno.on_ack(w, s);
    }

    fn ssthresh(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64) -> f64 {
        let target = self.bw_rttmin();
        self.ssthresh_with(w, event, in_flight, now, target)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, now: f64) {
        let target = self.bw_rttmin();
        self.recovery_exit_with(w, now, target);
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        // CA_EVENT_LOSS is raised together with the ssthresh() call of
        // tcp_enter_loss; the sender has already applied our ssthresh.
        if self.loss_pending {
            self.loss_pending = false;
            if self.reset_rtt_min_on_rto {
                self.bwe.reset_rtt_min();
            }
        }
        self.reno.cwnd_cnt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: f64, snd_una: u64, rtt: Option<f64>, duplicate: bool) -> AckSample {
        AckSample {
            now,
            acked: 1,
            cum_acked: if duplicate { 0 } else { 1 },
            rtt,
            srtt: 0.05,
            min_rtt: 0.05,
            in_flight: 10,
            snd_una,
            snd_nxt: snd_una + 10,
            delivered: snd_una,
            cwnd_limited: true,
            duplicate,
        }
    }

    /// 10 Mbit/s in 1448-byte segments per second.
    const RATE: f64 = 10e6 / (1448.0 * 8.0);

    /// Sampling windows `prime` feeds: enough for the single EWMA, which
    /// starts from the connection's first (empty) window, to come within
    /// 0.9^199 < 1e-9 of the rate.
    const PRIME_WINDOWS: u64 = 200;

    /// Drives the estimator at a constant `segs` segments per `t` seconds
    /// (RTT `rtt`): one ACK per window. The first ACK only sets the counting
    /// baseline, so the first window closes with nothing counted; the
    /// cascaded filter skips that zero ("if the filter is empty fill it") and
    /// takes the rate exactly from the next sample, the single EWMA starts
    /// from 0 and approaches it. Returns the time and `snd_una` of the last ACK.
    fn prime(w: &mut Westwood, rtt: f64, segs: u64, t: f64) -> (f64, u64) {
        w.on_send(0.0, 1500, 1);
        let win = Window { cwnd: 10.0, ssthresh: 1e9 };
        w.on_ack_sample(&win, &ack(0.0, 0, Some(rtt), false));
        for k in 1..=PRIME_WINDOWS {
            w.on_ack_sample(&win, &ack(k as f64 * t, k * segs, Some(rtt), false));
        }
        (PRIME_WINDOWS as f64 * t, PRIME_WINDOWS * segs)
    }

    #[test]
    fn ssthresh_is_bwe_times_rtt_min_worked_example() {
        // Reference s15: BWE 10 Mbit/s, RTT_min 50 ms, MSS 1448 -> 43 packets
        // (1.25e6 B/s / 1448 B * 0.05 s = 43.16, truncated).
        let t = 1000.0 / RATE; // 1000 segments at 10 Mbit/s
        let mut w = Westwood::linux();
        let (end, _) = prime(&mut w, 0.05, 1000, t);
        assert!((w.bwe.bw_est() - RATE).abs() < 1e-9 * RATE, "{}", w.bwe.bw_est());
        assert_eq!(w.bwe.rtt_min(), 0.05);
        assert_eq!(w.bw_rttmin(), 43.0);

        // Linux timing: Reno half on entry, BWE x RTTmin at COMPLETE_CWR.
        let mut win = Window { cwnd: 120.0, ssthresh: 1e9 };
        assert_eq!(w.ssthresh(&win, LossEvent::FastRecovery, 120, end + 0.1), 60.0);
        win.ssthresh = 60.0;
        win.cwnd = 60.0;
        w.on_recovery_exit(&mut win, end + 0.2);
        assert_eq!((win.cwnd, win.ssthresh), (43.0, 43.0));
        // Linux raises cwnd at the exit when BWE x RTTmin exceeds the Reno half.
        let mut win = Window { cwnd: 70.0, ssthresh: 1e9 };
        win.ssthresh = w.ssthresh(&win, LossEvent::FastRecovery, 70, end + 0.3);
        win.cwnd = win.ssthresh;
        w.on_recovery_exit(&mut win, end + 0.4);
        assert_eq!((win.cwnd, win.ssthresh), (43.0, 43.0));

        // Paper timing: ssthresh = BWE x RTTmin on the third dupack; cwnd kept
        // if already below it.
        let mut p = Westwood::paper();
        let (end, _) = prime(&mut p, 0.05, 1000, t);
        assert!((p.bwe.bw_est() - RATE).abs() < 1e-9 * RATE, "{}", p.bwe.bw_est());
        let mut win = Window { cwnd: 120.0, ssthresh: 1e9 };
        assert_eq!(p.ssthresh(&win, LossEvent::FastRecovery, 120, end + 0.1), 43.0);
        win.ssthresh = 43.0;
        win.cwnd = 43.0;
        p.on_recovery_exit(&mut win, end + 0.2);
        assert_eq!(win.cwnd, 43.0);
        let mut win = Window { cwnd: 30.0, ssthresh: 1e9 };
        win.ssthresh = p.ssthresh(&win, LossEvent::FastRecovery, 30, end + 0.3);
        assert_eq!(win.ssthresh, 43.0);
        win.cwnd = win.ssthresh;
        p.on_recovery_exit(&mut win, end + 0.4);
        assert_eq!((win.cwnd, win.ssthresh), (30.0, 43.0));
    }

    #[test]
    fn timeout_sets_bwe_ssthresh_and_relearns_rtt_min() {
        let t = 1000.0 / RATE;
        let mut w = Westwood::linux();
        let (end, una) = prime(&mut w, 0.05, 1000, t);
        let mut win = Window { cwnd: 100.0, ssthresh: 1e9 };
        win.ssthresh = w.ssthresh(&win, LossEvent::Timeout, 100, end + 0.2);
        win.cwnd = 1.0;
        w.on_rto(&mut win, end + 0.2);
        assert_eq!((win.cwnd, win.ssthresh), (1.0, 43.0));
        // reset_rtt_min: the next ACK takes its RTT as rtt_min even if larger.
        w.on_ack_sample(&win, &ack(end + 0.5, una + 1, Some(0.2), false));
        assert_eq!(w.bwe.rtt_min(), 0.2);
        // The paper variant keeps the all-time minimum.
        let mut p = Westwood::paper();
        let (end, una) = prime(&mut p, 0.05, 1000, t);
        assert_eq!(p.ssthresh(&win, LossEvent::Timeout, 100, end + 0.2), 43.0);
        p.on_rto(&mut win, end + 0.2);
        p.on_ack_sample(&win, &ack(end + 0.5, una + 1, Some(0.2), false));
        assert_eq!(p.bwe.rtt_min(), 0.05);
    }

    #[test]
    fn one_sample_per_rtt_with_a_50ms_floor() {
        // westwood_update_window: filter only when now - rtt_win_sx > max(rtt, 50 ms).
        for &(rtt, bound) in &[(0.1, 0.1), (0.02, 0.05)] {
            let mut w = Westwood::linux();
            w.on_send(0.0, 1500, 1);
            let win = Window { cwnd: 10.0, ssthresh: 1e9 };
            let dt = 1.0 / 1024.0; // exact binary steps
            let mut una = 0;
            let mut k = 0;
            loop {
                let now = k as f64 * dt;
                w.on_ack_sample(&win, &ack(now, una, Some(rtt), false));
                una += 1;
                if now <= bound {
                    assert_eq!(w.bwe.samples(), 0, "rtt {rtt}: sample at {now}");
                } else {
                    assert_eq!(w.bwe.samples(), 1, "rtt {rtt}: no sample at {now}");
                    // Counted: ACKs 2..k-1 of the window (the first only set the
                    // baseline; this one is counted after the window closed),
                    // one segment each over `now` seconds.
                    let s = w.bwe.last_sample().unwrap();
                    assert_eq!(s.amount, (k - 1) as f64);
                    assert!((s.duration - now).abs() < 1e-12);
                    assert_eq!(w.bwe.bw_est(), (k - 1) as f64 / now);
                    break;
                }
                k += 1;
            }
        }
    }

    #[test]
    fn filters_converge_to_a_constant_rate() {
        // Two cascaded 7/8 EWMAs after a step from r1 to r2: with q = 7/8 the
        // output after n samples is r2 + (r1 - r2) (q^n + n/8 q^n).
        let mut w = Westwood::linux();
        w.on_send(0.0, 1500, 1);
        let win = Window { cwnd: 10.0, ssthresh: 1e9 };
        let t = 0.1; // window length, RTT 50 ms
        let mut una = 0u64;
        w.on_ack_sample(&win, &ack(0.0, una, Some(0.05), false));
        let mut now = 0.0;
        let mut feed = |w: &mut Westwood, segs: u64| {
            // One ACK per window: it closes the window (t > max(rtt, 50 ms)), then adds `segs`.
            now += t;
            una += segs;
            w.on_ack_sample(&win, &ack(now, una, Some(0.05), false));
        };
        feed(&mut w, 50); // closes a window with 0 counted: filter stays empty
        assert_eq!(w.bwe.bw_est(), 0.0);
        feed(&mut w, 50); // sample 50 / 0.1 = 500 seg/s: initialises both stages
        assert!((w.bwe.bw_est() - 500.0).abs() < 1e-9);
        assert!((w.bwe.bw_ns_est() - 500.0).abs() < 1e-9);
        feed(&mut w, 200); // still 500 (the 50 counted before this ACK)
        let q: f64 = 7.0 / 8.0;
        for n in 1..=100 {
            feed(&mut w, 200); // samples of 2000 seg/s
            let expect = 2000.0 + (500.0 - 2000.0) * (q.powi(n) + n as f64 / 8.0 * q.powi(n));
            assert!((w.bwe.bw_est() - expect).abs() < 1e-6, "n={n}: {} vs {expect}", w.bwe.bw_est());
        }
        assert!((w.bwe.bw_est() - 2000.0).abs() < 0.1); // 1500 (1 + 100/8) (7/8)^100 = 0.03
    }

    #[test]
    fn paper_variant_filters_with_one_ewma() {
        // Grieco & Mascolo 2004 (reference s8.3): b = 0.9 b + 0.1 sample, one
        // stage, from b = 0 (the connection's first window closes before
        // anything is counted; ns-2's tcp-westwood-nr.cc also starts at
        // current_bwe_ = 0). Constant samples r give r (1 - 0.9^n); after a
        // step to r2 the estimate is r2 + (e0 - r2) 0.9^k. The Linux cascade
        // would skip the empty window and give r at once, then
        // r2 + (r - r2) (q^k + k q^k / 8), q = 7/8.
        let mut m = serde_json::Map::new();
        m.insert("variant".into(), serde_json::json!("paper"));
        let mut w = Westwood::from_params(&m, "cc").unwrap();
        w.on_send(0.0, 1500, 1);
        let win = Window { cwnd: 10.0, ssthresh: 1e9 };
        let t = 0.1; // window length, RTT 50 ms
        let mut una = 0u64;
        w.on_ack_sample(&win, &ack(0.0, una, Some(0.05), false));
        let mut now = 0.0;
        let mut feed = |w: &mut Westwood, segs: u64| {
            // One ACK per window: it closes the window (t > max(rtt, 50 ms)),
            // whose sample is the previous ACK's segments / t, then adds `segs`.
            now += t;
            una += segs;
            w.on_ack_sample(&win, &ack(now, una, Some(0.05), false));
        };
        feed(&mut w, 50); // closes the first window, nothing counted
        assert_eq!(w.bwe.bw_est(), 0.0);
        for n in 1..=20 {
            feed(&mut w, 50); // samples of 500 seg/s
            let expect = 500.0 * (1.0 - 0.9f64.powi(n));
            assert!((w.bwe.bw_est() - expect).abs() < 1e-9, "n={n}: {} vs {expect}", w.bwe.bw_est());
        }
        feed(&mut w, 200); // the window still held 50: one more sample of 500
        let e0 = 500.0 * (1.0 - 0.9f64.powi(21));
        assert!((w.bwe.bw_est() - e0).abs() < 1e-9);
        for k in 1..=60 {
            feed(&mut w, 200); // samples of 2000 seg/s
            let expect = 2000.0 + (e0 - 2000.0) * 0.9f64.powi(k);
            assert!((w.bwe.bw_est() - expect).abs() < 1e-6, "k={k}: {} vs {expect}", w.bwe.bw_est());
        }
        // The same from the constructor; an explicit filter still overrides.
        assert_eq!(Westwood::paper().bwe.cfg.filter, BweFilter::Ewma { gain: PAPER_FILTER_GAIN });
        m.insert("filter".into(), serde_json::json!("linux"));
        let l = Westwood::from_params(&m, "cc").unwrap();
        assert_eq!(l.bwe.cfg.filter, BweFilter::LinuxCascaded { gain: LINUX_FILTER_GAIN });
        assert_eq!(
            Westwood::from_params(&serde_json::Map::new(), "cc").unwrap().bwe.cfg.filter,
            BweFilter::LinuxCascaded { gain: LINUX_FILTER_GAIN }
        );
    }

    #[test]
    fn duplicate_acks_count_in_the_sample() {
        // A dupack counts one segment; the cumulative ACK ending recovery is
        // reduced by the segments the dupacks already counted.
        let mut w = Westwood::linux();
        w.on_send(0.0, 1500, 1);
        let win = Window { cwnd: 10.0, ssthresh: 1e9 };
        w.on_ack_sample(&win, &ack(0.0, 10, Some(0.05), false)); // baseline 10
        w.on_ack_sample(&win, &ack(0.001, 11, Some(0.05), false));
        for i in 0..3 {
            w.on_ack_sample(&win, &ack(0.002 + i as f64 * 0.001, 11, None, true));
        }
        assert_eq!(w.bwe.pending(), 4.0);
        assert_eq!(w.bwe.accounted(), 3);
        w.on_ack_sample(&win, &ack(0.01, 16, Some(0.05), false)); // 5 acked, 3 pre-counted
        assert_eq!(w.bwe.pending(), 6.0);
        assert_eq!(w.bwe.accounted(), 0);
    }

    #[test]
    fn growth_is_reno() {
        // tcp_reno_cong_avoid: +1 segment per cwnd segments acknowledged.
        let mut w = Westwood::linux();
        let mut win = Window { cwnd: 20.0, ssthresh: 10.0 };
        for i in 0..19 {
            w.on_ack(&mut win, &ack(i as f64, i, None, false));
        }
        assert_eq!(win.cwnd, 20.0);
        w.on_ack(&mut win, &ack(20.0, 20, None, false));
        assert_eq!(win.cwnd, 21.0);
    }

    #[test]
    fn params_are_validated_and_named() {
        let mut m = serde_json::Map::new();
        m.insert("bwe_timing".into(), serde_json::json!("later"));
        let e = Westwood::from_params(&m, "flows[0].cc").err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.bwe_timing");
        let mut m = serde_json::Map::new();
        m.insert("variant".into(), serde_json::json!("paper"));
        let p = Westwood::from_params(&m, "f").unwrap();
        assert_eq!(p.timing, BweTiming::Immediate);
        assert!(!p.reset_rtt_min_on_rto);
        assert_eq!(p.reno.mode, reno::Mode::Float);
    }
}
