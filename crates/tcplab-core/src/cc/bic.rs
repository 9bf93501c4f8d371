//! BIC (Binary Increase Congestion control).
//!
//! Sources:
//! - L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control for
//!   Fast, Long Distance Networks", IEEE INFOCOM 2004: binary search between
//!   W_min and W_max with increments clamped to [S_min, S_max], "max probing"
//!   above W_max mirroring the search, multiplicative decrease by b, fast
//!   convergence `W_max = W (2 - b) / 2`, Reno below `low_window`.
//! - Linux `net/ipv4/tcp_bic.c` (current mainline): `bictcp_update`,
//!   `bictcp_cong_avoid`, `bictcp_recalc_ssthresh`, `bictcp_state`,
//!   `bictcp_acked`; constants BICTCP_B = 4, max_increment = 16,
//!   low_window = 14, beta = 819/1024, smooth_part = 20, fast_convergence = 1,
//!   initial_ssthresh = 0 (the 2006-era module used 100), ACK_RATIO_SHIFT = 4.
//! - The mv-highspeed seed paper describes BIC with decrease b = 0.2
//!   (W_min = 0.8 W_max), additive S_max, stop below S_min, mirrored max probing.
//! - Reference: docs/reference cc-algorithms.md section 6.
//!
//! Variants (parameter `variant`):
//! - `linux` (default): integer cwnd with Linux's `snd_cwnd_cnt` credit
//!   (`Reno::cong_avoid_ai`) and the per-ACK `cnt` of `bictcp_update`,
//!   including its HZ/32 update throttle, its 5 %/RTT floor before the first
//!   loss (`cnt <= 20`) and the packets-per-ACK ratio `delayed_ack` (EWMA
//!   gain 1/16 in 1/16 units, initial 2.0) dividing `cnt` while
//!   `tcp_cong_avoid_ai` also counts every packet acked (the "double
//!   compensation" of current Linux, kept on purpose).
//! - `paper`: fractional cwnd growing by a per-RTT increment `inc` fixed at the
//!   start of each round (a round = as many segments acked as the window had
//!   when it began; `cwnd += inc / cwnd_round` per segment acked): binary search
//!   `inc = clamp((W_max - cwnd) / 2, S_min, S_max)` below W_max, max probing
//!   `inc = clamp(cwnd - W_max, S_min, S_max)` at or above it (the distance to
//!   W_max doubles per RTT, a mirror of the halving search, until S_max),
//!   `inc = 1` (Reno) at or below `low_window`; loss: `cwnd * beta`
//!   (beta = 1 - b = 0.8), fast convergence `W_max = cwnd (1 + beta) / 2`.
//!
//! Time: Linux's throttle runs on jiffies; here `jiffies = floor(now * hz)`
//! with the `hz` parameter (default 1000).
//!
//! Deviations:
//! - `bictcp_acked` updates the ratio only in CA state Open; the trait has no
//!   CA state, so the algorithm tracks it: Recovery between
//!   `ssthresh(FastRecovery)` and `on_recovery_exit`, Loss from `on_rto` until
//!   `snd_una` passes the highest `snd_nxt` seen before the timeout (a lower
//!   bound of Linux's `high_seq`), Disorder after a duplicate ACK until the
//!   next non-duplicate one (Linux also stays in Disorder while SACKed data
//!   remains, which is not visible here).
//! - `initial_ssthresh` (Linux sets it in `init`) is applied on the first
//!   `on_ack`, since the trait has no init hook with the window.
//! - Growth is gated on the sender's `cwnd_limited` (see reno.rs).
//! - The paper's exact S_max/S_min table could not be re-read (reference
//!   section 16 item 2); the paper variant defaults to S_max = 16 (Linux
//!   `max_increment`) and S_min = 0.01, both parameters.

use super::reno::Reno;
use super::{
    variant_default, AckSample, AlgorithmInfo, Choice, CongestionControl, LossEvent, ParamInfo, Params, Window,
};
use crate::error::SpecError;
use crate::param_choice;

/// Linux BICTCP_BETA_SCALE.
const BETA_SCALE: u64 = 1024;
/// Linux BICTCP_B: the search goes to (max + min) / B ... in steps of dist / B.
const BICTCP_B: u64 = 4;
/// Linux ACK_RATIO_SHIFT: `delayed_ack` is packets per ACK << 4.
const ACK_RATIO_SHIFT: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Linux,
    Paper,
}

#[derive(Debug, Clone)]
pub struct Bic {
    pub variant: Variant,
    /// Fraction of the window kept after a loss (Linux 819/1024; paper 1 - b = 0.8).
    pub beta: f64,
    /// `beta` in 1/1024 (Linux integer arithmetic).
    pub beta_1024: u64,
    pub fast_convergence: bool,
    /// S_max, segments per RTT (Linux `max_increment`).
    pub max_increment: f64,
    /// S_min, segments per RTT (paper variant).
    pub s_min: f64,
    /// Reno behaviour at or below this window.
    pub low_window: u64,
    /// Linux `smooth_part`: increments near W_max are B / smooth_part per RTT.
    pub smooth_part: u64,
    pub initial_ssthresh: u64,
    pub hz: f64,

    // Linux state (struct bictcp).
    pub cnt: u64,
    /// W_max (Linux `last_max_cwnd`; fractional in the paper variant).
    pub last_max_cwnd: f64,
    pub last_cwnd: u64,
    pub last_time: u64,
    pub epoch_start: Option<u64>,
    /// Packets per ACK << 4 (initial 2 << 4).
    pub delayed_ack: u64,
    /// Linux `snd_cwnd_cnt`.
    pub cwnd_cnt: u64,

    // Paper variant: the current per-RTT round.
    round_inc: f64,
    round_cwnd: f64,
    round_left: f64,

    // CA state tracking for `bictcp_acked`.
    in_recovery: bool,
    in_loss: bool,
    loss_recover: u64,
    disorder: bool,
    max_snd_nxt: u64,
    initialized: bool,
}

param_choice!(Variant { Linux => "linux", Paper => "paper" });

/// BIC's parameters; [`Config::for_variant`] is where each default is
/// written (`Default`: variant linux).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub variant: Variant,
    /// Fraction of the window kept after a loss (linux: held in 1/1024).
    pub beta: f64,
    pub fast_convergence: bool,
    /// S_max, segments per RTT (linux: an integer).
    pub max_increment: f64,
    pub s_min: f64,
    pub low_window: u64,
    pub smooth_part: u64,
    /// Segments; 0 keeps the sender's.
    pub initial_ssthresh: u64,
    pub hz: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config::for_variant(Variant::Linux)
    }
}

impl Config {
    /// Linux: tcp_bic.c's `beta = 819`; paper: b = 0.2.
    pub fn for_variant(variant: Variant) -> Self {
        Config {
            variant,
            beta: if variant == Variant::Linux { 819.0 / 1024.0 } else { 0.8 },
            fast_convergence: true,
            max_increment: 16.0,
            s_min: 0.01,
            low_window: 14,
            smooth_part: 20,
            initial_ssthresh: 0,
            hz: 1000.0,
        }
    }

    fn variants() -> Vec<(&'static str, Config)> {
        [Variant::Linux, Variant::Paper].map(|v| (v.name(), Config::for_variant(v))).into()
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let variant = p.pick("variant", Config::default().variant)?;
        let only = |name: &str, v: Variant| -> Result<(), SpecError> {
            if map.contains_key(name) && variant != v {
                return Err(SpecError::new(
                    format!("{field}.params.{name}"),
                    format!("only used by variant {:?}", v.name()),
                ));
            }
            Ok(())
        };
        only("s_min", Variant::Paper)?;
        only("smooth_part", Variant::Linux)?;
        only("hz", Variant::Linux)?;
        let d = Config::for_variant(variant);
        let beta = p.f64("beta", d.beta, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?;
        if variant == Variant::Linux && !(1..BETA_SCALE).contains(&beta_1024(beta)) {
            return Err(SpecError::new(format!("{field}.params.beta"), "must round to 1..1023 in 1/1024".into()));
        }
        let fast_convergence = p.bool("fast_convergence", d.fast_convergence)?;
        let max_increment = match variant {
            Variant::Linux => {
                p.u64("max_increment", d.max_increment as u64, |x| (1..=1_000_000).contains(&x), "an integer >= 1")?
                    as f64
            }
            Variant::Paper => p.f64("max_increment", d.max_increment, |x| x > 0.0, "a positive number")?,
        };
        let s_min = p.f64("s_min", d.s_min, |x| x > 0.0, "a positive number")?;
        if variant == Variant::Paper && s_min > max_increment {
            return Err(SpecError::new(format!("{field}.params.s_min"), "must not exceed max_increment".into()));
        }
        Ok(Config {
            variant,
            beta,
            fast_convergence,
            max_increment,
            s_min,
            low_window: p.u64("low_window", d.low_window, |_| true, "a non-negative integer")?,
            smooth_part: p.u64("smooth_part", d.smooth_part, |x| (1..=1_000_000).contains(&x), "an integer >= 1")?,
            initial_ssthresh: p.u64(
                "initial_ssthresh",
                d.initial_ssthresh,
                |x| x == 0 || x >= 2,
                "0 or an integer >= 2",
            )?,
            hz: p.f64("hz", d.hz, |x| x >= 32.0, "at least 32")?,
        })
    }
}

/// Linux's beta in 1/1024.
fn beta_1024(beta: f64) -> u64 {
    (beta * BETA_SCALE as f64).round() as u64
}

pub fn info() -> AlgorithmInfo {
    let v = Config::variants();
    AlgorithmInfo {
        name: "bic",
        aliases: &["bictcp", "bic-tcp"],
        description: "BIC-TCP: binary search toward the window of the last loss, capped at S_max per RTT, \
                      then max probing; decrease to 0.8 cwnd. Linux tcp_bic.c by default, paper form with variant=paper.",
        params: vec![
            ParamInfo::new("variant", Config::default().variant, "linux: tcp_bic.c (integer cwnd, per-ACK cnt, B = 4); paper: INFOCOM 2004 form with fractional cwnd, midpoint search clamped to [s_min, max_increment]", "Linux tcp_bic.c; Xu et al. INFOCOM 2004; mv-highspeed"),
            ParamInfo::new("beta", variant_default(&v, |c| c.beta), "fraction of the window kept after a loss (decrease b = 1 - beta); linux rounds it to 1/1024", "Linux tcp_bic.c beta = 819; mv-highspeed b = 0.2"),
            ParamInfo::new("fast_convergence", variant_default(&v, |c| c.fast_convergence), "a loss below the previous W_max sets W_max = cwnd (1 + beta) / 2", "Linux tcp_bic.c; Xu et al. 2004"),
            ParamInfo::new("max_increment", variant_default(&v, |c| c.max_increment), "S_max: largest increase per RTT, segments", "Linux tcp_bic.c max_increment (paper value unverified)"),
            ParamInfo::new("s_min", variant_default(&v, |c| c.s_min), "S_min: smallest increase per RTT, segments (variant paper only; linux uses B/smooth_part = 0.2)", "Xu et al. 2004 (value unverified)"),
            ParamInfo::new("low_window", variant_default(&v, |c| c.low_window), "at or below this window: Reno increase and halving", "Linux tcp_bic.c low_window"),
            ParamInfo::new("smooth_part", variant_default(&v, |c| c.smooth_part), "variant linux: increase near W_max is B/smooth_part = 0.2 segment per RTT", "Linux tcp_bic.c smooth_part"),
            ParamInfo::new("initial_ssthresh", variant_default(&v, |c| c.initial_ssthresh), "initial ssthresh in segments, 0 = keep the sender's (infinite); the 2006 Linux module used 100", "Linux tcp_bic.c initial_ssthresh"),
            ParamInfo::new("hz", variant_default(&v, |c| c.hz), "variant linux: jiffies per second for the HZ/32 update throttle", "Linux CONFIG_HZ"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Bic::from_params(map, field)?))
}

impl Bic {
    /// Linux defaults (`variant = linux`).
    pub fn linux() -> Self {
        Bic::with(&Config::for_variant(Variant::Linux))
    }

    /// Paper variant with b = 0.2, S_max = 16, S_min = 0.01.
    pub fn paper() -> Self {
        Bic::with(&Config::for_variant(Variant::Paper))
    }

    pub fn with(c: &Config) -> Self {
        Bic {
            variant: c.variant,
            beta: c.beta,
            beta_1024: beta_1024(c.beta),
            fast_convergence: c.fast_convergence,
            max_increment: c.max_increment,
            s_min: c.s_min,
            low_window: c.low_window,
            smooth_part: c.smooth_part,
            initial_ssthresh: c.initial_ssthresh,
            hz: c.hz,
            cnt: 0,
            last_max_cwnd: 0.0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: None,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            cwnd_cnt: 0,
            round_inc: 0.0,
            round_cwnd: 0.0,
            round_left: 0.0,
            in_recovery: false,
            in_loss: false,
            loss_recover: 0,
            disorder: false,
            max_snd_nxt: 0,
            initialized: false,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Bic::with(&Config::from_params(map, field)?))
    }

    fn jiffies(&self, now: f64) -> u64 {
        (now * self.hz + 1e-6).floor().max(0.0) as u64
    }

    /// Linux `bictcp_update`: the number of packets acked per +1 cwnd.
    pub fn update(&mut self, cwnd: u64, now: f64) {
        let j = self.jiffies(now);
        if self.last_cwnd == cwnd && j.saturating_sub(self.last_time) <= (self.hz as u64) / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = j;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(j);
        }
        // Start off normal.
        if cwnd <= self.low_window {
            self.cnt = cwnd;
            return;
        }
        let max_inc = self.max_increment as u64;
        let wmax = self.last_max_cwnd as u64;
        self.cnt = if cwnd < wmax {
            // Binary search: a 1/B step toward W_max, at most max_increment.
            let dist = (wmax - cwnd) / BICTCP_B;
            if dist > max_inc {
                cwnd / max_inc
            } else if dist <= 1 {
                cwnd * self.smooth_part / BICTCP_B
            } else {
                cwnd / dist
            }
        } else if cwnd < wmax + BICTCP_B {
            // Max probing, just above W_max: slow.
            cwnd * self.smooth_part / BICTCP_B
        } else if cwnd < wmax + max_inc * (BICTCP_B - 1) {
            // Max probing: "slow start", (cwnd - W_max) / (B - 1) per RTT.
            cwnd * (BICTCP_B - 1) / (cwnd - wmax)
        } else {
            cwnd / max_inc
        };
        // No loss yet: at least +5 % per RTT.
        if wmax == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    /// Paper variant: the per-RTT increment for window `cwnd`.
    pub fn paper_increment(&self, cwnd: f64) -> f64 {
        if cwnd <= self.low_window as f64 {
            return 1.0;
        }
        let wmax = self.last_max_cwnd;
        let inc = if cwnd < wmax {
            // Binary search: jump to the midpoint of (cwnd, W_max).
            (wmax - cwnd) / 2.0
        } else {
            // Max probing: the mirror image, the distance from W_max doubles.
            cwnd - wmax
        };
        inc.clamp(self.s_min, self.max_increment)
    }

    fn init_once(&mut self, w: &mut Window) {
        if !self.initialized {
            self.initialized = true;
            if self.initial_ssthresh > 0 {
                w.ssthresh = self.initial_ssthresh as f64;
            }
        }
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0.0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        // Linux bictcp_acked: in CA state Open only, with the packets
        // cumulatively acknowledged (0 on a duplicate ACK).
        let open = !self.in_recovery && !self.in_loss && !self.disorder;
        if open && self.variant == Variant::Linux {
            self.delayed_ack = self.delayed_ack + s.cum_acked as u64 - (self.delayed_ack >> ACK_RATIO_SHIFT);
        }
        // State transitions caused by this ACK (seen by the next one).
        if self.in_loss && s.snd_una >= self.loss_recover {
            self.in_loss = false;
        }
        if !self.in_recovery {
            self.disorder = s.duplicate;
        }
        self.max_snd_nxt = self.max_snd_nxt.max(s.snd_nxt);
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.init_once(w);
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
                let cwnd = w.cwnd as u64;
                self.update(cwnd, s.now);
                Reno::cong_avoid_ai(w, &mut self.cwnd_cnt, self.cnt, acked);
            }
            Variant::Paper => {
                let acked = Reno::slow_start_float(w, s.acked as f64);
                if acked > 0.0 {
                    if self.round_left <= 0.0 {
                        // A new RTT round: the increment toward the midpoint
                        // (or the probing step) is fixed for the whole round.
                        self.round_inc = self.paper_increment(w.cwnd);
                        self.round_cwnd = w.cwnd;
                        self.round_left = w.cwnd;
                    }
                    w.cwnd += acked * self.round_inc / self.round_cwnd;
                    self.round_left -= acked;
                }
            }
        }
    }

    fn ssthresh(&mut self, w: &Window, event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.epoch_start = None;
        self.cwnd_cnt = 0;
        self.round_left = 0.0;
        if event == LossEvent::FastRecovery {
            self.in_recovery = true;
        }
        match self.variant {
            Variant::Linux => {
                let cwnd = w.cwnd as u64;
                let wmax = self.last_max_cwnd as u64;
                self.last_max_cwnd = if cwnd < wmax && self.fast_convergence {
                    (cwnd * (BETA_SCALE + self.beta_1024) / (2 * BETA_SCALE)) as f64
                } else {
                    cwnd as f64
                };
                let ss = if cwnd <= self.low_window { cwnd >> 1 } else { cwnd * self.beta_1024 / BETA_SCALE };
                ss.max(2) as f64
            }
            Variant::Paper => {
                let cwnd = w.cwnd;
                self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                    cwnd * (1.0 + self.beta) / 2.0
                } else {
                    cwnd
                };
                let ss = if cwnd <= self.low_window as f64 { cwnd / 2.0 } else { cwnd * self.beta };
                ss.max(2.0)
            }
        }
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: f64) {
        self.in_recovery = false;
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        // Linux bictcp_state(TCP_CA_Loss): forget everything.
        self.reset();
        self.cwnd_cnt = 0;
        self.round_left = 0.0;
        self.in_recovery = false;
        self.in_loss = true;
        self.loss_recover = self.max_snd_nxt;
        self.disorder = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(now: f64, acked: u32) -> AckSample {
        AckSample { rtt: Some(0.1), ..AckSample::test(now, acked) }
    }

    /// Linux BIC after a loss at `wmax`, ratio of packets per ACK = 1 (16).
    fn linux_at(wmax: f64) -> Bic {
        let mut b = Bic::linux();
        b.last_max_cwnd = wmax;
        b.delayed_ack = 16;
        b
    }

    #[test]
    fn linux_binary_search_increment() {
        // tcp_bic.c: dist = (W_max - cwnd) / B; dist > max_increment -> cnt =
        // cwnd / max_increment (+16 per RTT); dist <= 1 -> cnt = cwnd *
        // smooth_part / B (+0.2 per RTT); else cnt = cwnd / dist (+dist per RTT).
        let mut b = linux_at(1000.0);
        b.update(800, 0.0); // dist = 50 > 16
        assert_eq!(b.cnt, 800 / 16);
        b.update(960, 1.0); // dist = 10
        assert_eq!(b.cnt, 960 / 10);
        b.update(998, 2.0); // dist = 0
        assert_eq!(b.cnt, 998 * 20 / 4);
        b.update(992, 3.0); // dist = 2
        assert_eq!(b.cnt, 992 / 2);
    }

    #[test]
    fn linux_max_probing_mirrors_the_search() {
        // cwnd < W_max + B: cnt = cwnd * smooth_part / B; cwnd < W_max + 16 * 3:
        // cnt = cwnd * (B - 1) / (cwnd - W_max), i.e. +(cwnd - W_max) / 3 per RTT,
        // accelerating; beyond: cnt = cwnd / 16.
        let mut b = linux_at(1000.0);
        b.update(1000, 0.0);
        assert_eq!(b.cnt, 1000 * 20 / 4);
        b.update(1003, 1.0);
        assert_eq!(b.cnt, 1003 * 20 / 4);
        b.update(1004, 2.0);
        assert_eq!(b.cnt, 1004 * 3 / 4);
        b.update(1020, 3.0);
        assert_eq!(b.cnt, 1020 * 3 / 20);
        b.update(1047, 4.0);
        assert_eq!(b.cnt, 1047 * 3 / 47);
        b.update(1048, 5.0);
        assert_eq!(b.cnt, 1048 / 16);
    }

    #[test]
    fn linux_low_window_is_reno_and_first_epoch_floor() {
        // cwnd <= low_window: cnt = cwnd (+1 per RTT), no ratio scaling.
        let mut b = linux_at(0.0);
        b.update(14, 0.0);
        assert_eq!(b.cnt, 14);
        // No loss yet (W_max = 0): max probing would give cwnd / 16 = 62, but
        // cnt is capped at 20 (+5 % per RTT), then scaled by 16 / delayed_ack.
        b.update(1000, 1.0);
        assert_eq!(b.cnt, 20);
        b.delayed_ack = 32;
        b.update(1001, 2.0);
        assert_eq!(b.cnt, 10);
    }

    #[test]
    fn linux_update_throttled_for_hz_over_32() {
        // cnt is recomputed only if cwnd changed or more than HZ/32 jiffies passed.
        let mut b = linux_at(1000.0);
        b.update(800, 0.0);
        b.last_max_cwnd = 860.0;
        b.update(800, 0.031); // 31 jiffies: throttled
        assert_eq!(b.cnt, 50);
        b.update(800, 0.032); // dist = 15
        assert_eq!(b.cnt, 800 / 15);
    }

    #[test]
    fn linux_additive_increase_of_16_per_rtt_far_below_wmax() {
        // cwnd 800 .. 815 with W_max 1000: cnt = cwnd / 16 = 50, so 800
        // packets acked give exactly 16 increments (tcp_cong_avoid_ai).
        let mut b = linux_at(1000.0);
        let mut w = Window { cwnd: 800.0, ssthresh: 500.0 };
        for i in 0..800 {
            b.on_ack(&mut w, &sample(i as f64 * 1e-4, 1));
        }
        assert_eq!(w.cwnd, 816.0);
    }

    #[test]
    fn linux_ssthresh_and_fast_convergence() {
        // ssthresh = max(cwnd * 819 / 1024, 2), or max(cwnd / 2, 2) at or below
        // low_window; W_max = cwnd, or cwnd * (1024 + 819) / 2048 if the loss
        // happened below the previous W_max (fast convergence).
        let mut b = Bic::linux();
        let ss = b.ssthresh(&Window { cwnd: 1000.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 1000, 0.0);
        assert_eq!(ss, (1000 * 819 / 1024) as f64);
        assert_eq!(b.last_max_cwnd, 1000.0);
        b.ssthresh(&Window { cwnd: 900.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 900, 1.0);
        assert_eq!(b.last_max_cwnd, (900 * 1843 / 2048) as f64);
        b.fast_convergence = false;
        b.ssthresh(&Window { cwnd: 700.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 700, 2.0);
        assert_eq!(b.last_max_cwnd, 700.0);
        let ss = b.ssthresh(&Window { cwnd: 14.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 14, 3.0);
        assert_eq!(ss, 7.0);
        let ss = b.ssthresh(&Window { cwnd: 3.0, ssthresh: 1e9 }, LossEvent::Timeout, 3, 4.0);
        assert_eq!(ss, 2.0);
    }

    #[test]
    fn linux_rto_forgets_wmax() {
        // bictcp_state(TCP_CA_Loss) -> bictcp_reset: W_max = 0, ratio 2.0.
        let mut b = linux_at(1000.0);
        b.delayed_ack = 20;
        let mut w = Window { cwnd: 1.0, ssthresh: 500.0 };
        b.on_rto(&mut w, 0.0);
        assert_eq!(b.last_max_cwnd, 0.0);
        assert_eq!(b.delayed_ack, 32);
    }

    #[test]
    fn linux_delayed_ack_ratio_ewma() {
        // bictcp_acked: delayed_ack += pkts_acked - delayed_ack >> 4 in state Open.
        // With one packet per ACK it decays from 32 to 31 and stays there
        // (31 >> 4 = 1); with two per ACK it stays at 32.
        let mut b = Bic::linux();
        let w = Window { cwnd: 20.0, ssthresh: 10.0 };
        for i in 0..100 {
            b.on_ack_sample(&w, &sample(i as f64, 1));
        }
        assert_eq!(b.delayed_ack, 31);
        let mut b = Bic::linux();
        for i in 0..100 {
            b.on_ack_sample(&w, &sample(i as f64, 2));
        }
        assert_eq!(b.delayed_ack, 32);
        // Not updated in fast recovery.
        b.ssthresh(&w, LossEvent::FastRecovery, 20, 100.0);
        b.on_ack_sample(&w, &sample(101.0, 10));
        assert_eq!(b.delayed_ack, 32);
    }

    #[test]
    fn initial_ssthresh_is_applied_once() {
        let mut map = serde_json::Map::new();
        map.insert("initial_ssthresh".into(), serde_json::json!(100));
        let mut b = Bic::from_params(&map, "f").unwrap();
        let mut w = Window { cwnd: 10.0, ssthresh: 1e9 };
        b.on_ack(&mut w, &sample(0.0, 1));
        assert_eq!(w.ssthresh, 100.0);
        assert_eq!(w.cwnd, 11.0);
    }

    #[test]
    fn paper_binary_search_is_midpoint_capped_at_smax() {
        // inc = (W_max - cwnd) / 2 (midpoint of cwnd and W_max), clamped to [S_min, S_max].
        let mut b = Bic::paper();
        b.last_max_cwnd = 1000.0;
        assert_eq!(b.paper_increment(800.0), 16.0);
        assert_eq!(b.paper_increment(990.0), 5.0);
        assert_eq!(b.paper_increment(999.99), 0.01);
        // Per ACK: cwnd += inc / cwnd.
        let mut w = Window { cwnd: 990.0, ssthresh: 100.0 };
        b.on_ack(&mut w, &sample(0.0, 1));
        assert!((w.cwnd - (990.0 + 5.0 / 990.0)).abs() < 1e-12);
    }

    /// Feeds one RTT round of single-segment ACKs (as many as the window).
    fn paper_round(b: &mut Bic, w: &mut Window, t: &mut f64) {
        let n = w.cwnd.ceil() as usize;
        for _ in 0..n {
            b.on_ack(w, &sample(*t, 1));
            *t += 1e-4;
        }
    }

    #[test]
    fn paper_search_jumps_to_the_midpoint_each_rtt() {
        // Each RTT cwnd goes to the midpoint of (cwnd, W_max), by at most S_max:
        // 960 -> 976 (S_max = 16, not 20) -> 988 -> 994 -> 997.
        let mut b = Bic::paper();
        b.last_max_cwnd = 1000.0;
        let mut w = Window { cwnd: 960.0, ssthresh: 100.0 };
        let mut t = 0.0;
        for expect in [976.0, 988.0, 994.0, 997.0] {
            paper_round(&mut b, &mut w, &mut t);
            assert!((w.cwnd - expect).abs() < 1e-9, "{} != {expect}", w.cwnd);
        }
    }

    #[test]
    fn paper_max_probing_doubles_the_distance_each_rtt() {
        // Mirror of the search: from W_max the step starts at S_min and the
        // distance to W_max doubles per RTT (slow start) until steps of S_max.
        // A round of ceil(cwnd) ACKs overshoots by < 1/cwnd of a step.
        let mut b = Bic::paper();
        b.last_max_cwnd = 1000.0;
        let mut w = Window { cwnd: 1000.0, ssthresh: 100.0 };
        let mut t = 0.0;
        let mut d = 0.01;
        for _ in 0..10 {
            paper_round(&mut b, &mut w, &mut t);
            assert!(((w.cwnd - 1000.0) / d - 1.0).abs() < 0.01, "{} vs {d}", w.cwnd - 1000.0);
            d = (w.cwnd - 1000.0) * 2.0;
        }
        let before = w.cwnd;
        paper_round(&mut b, &mut w, &mut t);
        assert!(w.cwnd - 1000.0 > 10.0);
        paper_round(&mut b, &mut w, &mut t);
        let before2 = w.cwnd;
        paper_round(&mut b, &mut w, &mut t);
        assert!((w.cwnd - before2 - 16.0).abs() < 0.02, "S_max step: {}", w.cwnd - before2);
        assert!(before > 1005.0);
    }

    #[test]
    fn paper_max_probing_mirrors_the_search() {
        // At or above W_max: inc = clamp(cwnd - W_max, S_min, S_max): S_min at
        // W_max, then the distance doubles each RTT, then S_max.
        let mut b = Bic::paper();
        b.last_max_cwnd = 1000.0;
        assert_eq!(b.paper_increment(1000.0), 0.01);
        assert_eq!(b.paper_increment(1004.0), 4.0);
        assert_eq!(b.paper_increment(1100.0), 16.0);
        // Low window: Reno.
        assert_eq!(b.paper_increment(14.0), 1.0);
    }

    #[test]
    fn paper_decrease_b_02_and_fast_convergence() {
        // cwnd -> 0.8 cwnd (b = 0.2); W_max = cwnd (2 - b) / 2 below the previous W_max.
        let mut b = Bic::paper();
        let ss = b.ssthresh(&Window { cwnd: 1000.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 1000, 0.0);
        assert!((ss - 800.0).abs() < 1e-9);
        assert_eq!(b.last_max_cwnd, 1000.0);
        b.ssthresh(&Window { cwnd: 900.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 900, 1.0);
        assert!((b.last_max_cwnd - 900.0 * 1.8 / 2.0).abs() < 1e-9);
        let ss = b.ssthresh(&Window { cwnd: 12.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 12, 2.0);
        assert_eq!(ss, 6.0);
    }

    #[test]
    fn parameters_are_validated() {
        let mut map = serde_json::Map::new();
        map.insert("s_min".into(), serde_json::json!(0.1));
        let err = Bic::from_params(&map, "flows[0].cc").err().unwrap();
        assert_eq!(err.field, "flows[0].cc.params.s_min");
        map.insert("variant".into(), serde_json::json!("paper"));
        map.insert("beta".into(), serde_json::json!(1.5));
        let err = Bic::from_params(&map, "flows[0].cc").err().unwrap();
        assert_eq!(err.field, "flows[0].cc.params.beta");
    }
}
