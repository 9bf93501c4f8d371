//! CUBIC.
//!
//! Sources:
//! - Linux `net/ipv4/tcp_cubic.c` v2.3 (mainline, checked in a 6.17-rc tree):
//!   `bictcp_update`, `cubictcp_cong_avoid`, `cubictcp_recalc_ssthresh`,
//!   `cubictcp_state`, `cubictcp_acked`, `hystart_update`; module defaults
//!   beta = 717/1024, bic_scale = 41 (cube_rtt_scale = 410, C = 0.4004),
//!   fast_convergence = 1, tcp_friendliness = 1, initial_ssthresh = 0,
//!   hystart = 1, hystart_detect = 3 (ACK train + delay), hystart_low_window
//!   = 16, hystart_ack_delta_us = 2000, HYSTART_MIN_SAMPLES = 8, delay
//!   threshold clamp(delay_min / 8, 4 ms, 16 ms).
//! - RFC 9438 (CUBIC for fast and long-distance networks), section 4.
//! - S. Ha, I. Rhee, L. Xu, "CUBIC: A New TCP-Friendly High-Speed TCP
//!   Variant", PFLDnet 2005 / ACM SIGOPS OSR 2008, and Linux CUBIC v2.0 (the
//!   2.6.16-era module): beta 819/1024 (decrease b = 0.2), C = 0.4, TCP
//!   friendliness, no HyStart, initial_ssthresh = 100, growth capped at
//!   max_increment = 16 segments per 100 ms of delay_min.
//! - Reference: cc-algorithms.md section 7; mv-highspeed selects `2005`.
//!
//! Variants (parameter `variant`; every constant is also a parameter):
//! - `linux` (default): Linux v2.3 exactly as above: integer cwnd with
//!   `snd_cwnd_cnt` (`Reno::cong_avoid_ai(cnt, acked)`), per-packet `acked`
//!   counting, epoch starting on the first congestion-avoidance ACK after a
//!   reduction, `t = now - epoch_start + delay_min`, K and the target in
//!   1/1024 s, `cnt = cwnd / (target - cwnd)` or `100 cwnd`, the 5 %/RTT floor
//!   while W_max = 0, the Reno estimate with `beta_scale = 8(1024 + beta) /
//!   3 / (1024 - beta)` (alpha = 8/15), `cnt >= 2` (at most +1 segment per 2
//!   acked, 1.5x per RTT), the HZ/32 and once-per-jiffy update throttles,
//!   `ssthresh = max(cwnd beta / 1024, 2)`, W_max = cwnd (1024 + beta) / 2048
//!   under fast convergence, full reset on RTO, delay samples ignored for 1 s
//!   after the epoch start, HyStart.
//! - `2005` (alias `v2.0`): the same engine with the 2005 paper / Linux v2.0
//!   constants: beta 0.8 (819/1024), C 0.4, hystart off, initial_ssthresh
//!   100, max_increment 16 (v2.0's `min_cnt = cwnd / (16 delay_min / 100 ms)`,
//!   applied in both regions as v2.0 did). The Reno-friendly region is kept:
//!   the 2005/2008 papers and v2.0 have it (`tcp_friendliness = false` drops it).
//! - `rfc9438`: fractional cwnd per RFC 9438: W_cubic(t) = C (t - K)^3 + W_max,
//!   K = cbrt((W_max - cwnd_epoch) / C), target = W_cubic(t + SRTT) clamped to
//!   [cwnd, 1.5 cwnd], `cwnd += (target - cwnd) / cwnd`, W_est with
//!   alpha = 3(1 - beta)/(1 + beta) switching to 1 once W_est >= cwnd_prior,
//!   ssthresh = max(FlightSize beta, 2), K = 0 and W_max = cwnd at the start
//!   of the first CA stage after an RTO or without any loss; no HyStart by
//!   default (HyStart++ is not implemented; `hystart = true` uses Linux's).
//!
//! Time: Linux's epoch, throttles and the 1 s sample filter run on jiffies:
//! `jiffies = floor(now * hz)`, `hz` parameter (default 1000); delay_min and
//! HyStart use microseconds (`round(rtt * 1e6)`), as `tcp_mstamp`.
//!
//! Deviations:
//! - K is the correctly rounded cube root of `cube_factor (W_max - cwnd)`;
//!   Linux's `cubic_root` (table + one Newton step, average error 0.195 %)
//!   can differ by a unit in the last place (1/1024 s).
//! - HyStart sets `ssthresh = cwnd` from `pkts_acked`; `on_ack_sample` only
//!   sees the window read-only, so the new ssthresh is applied at the start of
//!   the next `on_ack` (the same ACK when it acknowledges new data outside
//!   recovery, as in Linux), and dropped if a loss sets ssthresh first.
//! - HyStart's ACK-train threshold is (delay_min + cushion) / 2 (the sender
//!   does not pace CUBIC: SK_PACING_NONE). Linux's cushion is min(1 ms,
//!   4 x 64 KB / sk_pacing_rate), which is 1 ms below ~2 Gbit/s of pacing
//!   rate; here it is the parameter `hystart_ack_delay_us` (default 1000).
//! - On RTO Linux resets the HyStart round with end_seq = snd_nxt; here the
//!   highest snd_nxt seen in ACK samples before the timeout.
//! - `initial_ssthresh` (set in Linux's `init`, only with hystart off) is
//!   applied on the first `on_ack`.
//! - No idle restart shift of epoch_start (CA_EVENT_TX_START is not a hook);
//!   growth is gated on the sender's `cwnd_limited`.
//! - 2005 variant: v2.3 machinery (per-packet counting without v2.0's
//!   packets-per-ACK ratio, the 5 %/RTT floor instead of v2.0's fixed cnt = 50
//!   before the first loss, the consistent C = 410/1024 instead of v2.0's
//!   inconsistent cube_rtt_scale = 32).
//! - rfc9438: the per-ACK increment is applied per segment acked
//!   (`acked (target - cwnd) / cwnd`, the RFC words it per ACK) so that cwnd
//!   reaches the target in one RTT with delayed ACKs too; with no loss yet
//!   cwnd_prior is 0, so alpha = 1.

use super::reno::Reno;
use super::{
    variant_default, AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, ParamValue, Params, Window,
};
use crate::error::SpecError;

/// Linux BICTCP_BETA_SCALE.
const BETA_SCALE: u64 = 1024;
/// Linux BICTCP_HZ: time in 1/1024 s.
const BICTCP_HZ: u32 = 10;
const HYSTART_ACK_TRAIN: u64 = 1;
const HYSTART_DELAY: u64 = 2;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN_US: u64 = 4000;
const HYSTART_DELAY_MAX_US: u64 = 16000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Linux,
    V2005,
    Rfc9438,
}

#[derive(Debug, Clone)]
pub struct Cubic {
    pub variant: Variant,
    /// Fraction of the window kept after a loss.
    pub beta: f64,
    /// `beta` in 1/1024 (Linux engine).
    pub beta_1024: u64,
    /// C, segments / s^3.
    pub c: f64,
    /// Linux `cube_rtt_scale` = bic_scale * 10 = round(1024 C).
    pub cube_rtt_scale: u64,
    /// Linux `cube_factor` = 2^40 / cube_rtt_scale.
    pub cube_factor: u64,
    /// Linux `beta_scale`: ACKs per Reno +1 are cwnd * beta_scale / 8.
    pub beta_scale: u64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u64,
    pub hystart_low_window: u64,
    pub hystart_ack_delta_us: u64,
    pub hystart_ack_delay_us: u64,
    pub initial_ssthresh: u64,
    /// v2.0 cap: at most `max_increment` segments per 100 ms of delay_min (0 = off).
    pub max_increment: u64,
    pub hz: f64,

    // Linux engine state (struct bictcp).
    pub cnt: u64,
    pub last_max_cwnd: u64,
    pub last_cwnd: u64,
    pub last_time: u64,
    pub origin_point: u64,
    /// K in 1/1024 s.
    pub bic_k: u64,
    pub delay_min_us: u64,
    pub epoch_start: Option<u64>,
    pub ack_cnt: u64,
    pub tcp_cwnd: u64,
    /// Linux `snd_cwnd_cnt`.
    pub cwnd_cnt: u64,
    // HyStart.
    pub found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    sample_cnt: u32,
    pending_ssthresh: Option<f64>,

    // RFC 9438 state.
    pub w_max: Option<f64>,
    pub k: f64,
    pub t_epoch: Option<f64>,
    pub cwnd_epoch: f64,
    pub w_est: f64,
    pub cwnd_prior: f64,

    max_snd_nxt: u64,
    initialized: bool,
}

impl Variant {
    /// The spec's spelling (`2005` also accepts `v2.0`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Linux => "linux",
            Variant::V2005 => "2005",
            Variant::Rfc9438 => "rfc9438",
        }
    }
}

impl ParamValue for Variant {
    fn shown(&self) -> String {
        self.name().to_string()
    }
}

/// CUBIC's parameters; [`Config::for_variant`] is where each default is
/// written (`Default`: variant linux).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub variant: Variant,
    /// Fraction of the window kept after a loss (the Linux engine: in 1/1024).
    pub beta: f64,
    /// C, segments/s^3.
    pub c: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u64,
    pub hystart_low_window: u64,
    pub hystart_ack_delta_us: u64,
    pub hystart_ack_delay_us: u64,
    pub initial_ssthresh: u64,
    pub max_increment: u64,
    pub hz: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config::for_variant(Variant::Linux)
    }
}

impl Config {
    pub fn for_variant(variant: Variant) -> Self {
        let (beta, hystart, initial_ssthresh, max_increment) = match variant {
            Variant::Linux => (717.0 / 1024.0, true, 0, 0),
            Variant::V2005 => (0.8, false, 100, 16),
            Variant::Rfc9438 => (0.7, false, 0, 0),
        };
        Config {
            variant,
            beta,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            hystart_ack_delay_us: 1000,
            initial_ssthresh,
            max_increment,
            hz: 1000.0,
        }
    }

    fn variants() -> Vec<(&'static str, Config)> {
        [Variant::Linux, Variant::V2005, Variant::Rfc9438].map(|v| (v.name(), Config::for_variant(v))).into()
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let variant =
            match p.choice("variant", Config::default().variant.name(), &["linux", "2005", "v2.0", "rfc9438"])? {
                "linux" => Variant::Linux,
                "rfc9438" => Variant::Rfc9438,
                _ => Variant::V2005,
            };
        let d = Config::for_variant(variant);
        let err = |name: &str, msg: &str| SpecError::new(format!("{field}.params.{name}"), msg.to_string());
        let beta = p.f64("beta", d.beta, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?;
        let c = p.f64("c", d.c, |x| x > 0.0 && x <= 1000.0, "a positive number up to 1000")?;
        if variant != Variant::Rfc9438 {
            let b = (beta * BETA_SCALE as f64).round() as u64;
            if !(1..BETA_SCALE).contains(&b) {
                return Err(err("beta", "must round to 1..1023 in 1/1024"));
            }
            if (c * BETA_SCALE as f64).round() < 1.0 {
                return Err(err("c", "must be at least 1/1024"));
            }
        } else {
            for name in ["max_increment", "hz"] {
                if map.contains_key(name) {
                    return Err(err(name, "only used by variants linux and 2005"));
                }
            }
        }
        Ok(Config {
            variant,
            beta,
            c,
            fast_convergence: p.bool("fast_convergence", d.fast_convergence)?,
            tcp_friendliness: p.bool("tcp_friendliness", d.tcp_friendliness)?,
            hystart: p.bool("hystart", d.hystart)?,
            hystart_detect: p.u64("hystart_detect", d.hystart_detect, |x| (1..=3).contains(&x), "1, 2 or 3")?,
            hystart_low_window: p.u64(
                "hystart_low_window",
                d.hystart_low_window,
                |_| true,
                "a non-negative integer",
            )?,
            hystart_ack_delta_us: p.u64(
                "hystart_ack_delta_us",
                d.hystart_ack_delta_us,
                |_| true,
                "a non-negative integer",
            )?,
            hystart_ack_delay_us: p.u64(
                "hystart_ack_delay_us",
                d.hystart_ack_delay_us,
                |_| true,
                "a non-negative integer",
            )?,
            initial_ssthresh: p.u64(
                "initial_ssthresh",
                d.initial_ssthresh,
                |x| x == 0 || x >= 2,
                "0 or an integer >= 2",
            )?,
            max_increment: p.u64("max_increment", d.max_increment, |_| true, "a non-negative integer")?,
            hz: p.f64("hz", d.hz, |x| x >= 32.0, "at least 32")?,
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let v = Config::variants();
    AlgorithmInfo {
        name: "cubic",
        aliases: &["cubictcp"],
        description: "CUBIC: W(t) = C (t - K)^3 + W_max since the last loss, Reno-friendly region, HyStart. \
                      Linux tcp_cubic.c v2.3 by default; variant=2005 for the 2005 paper / Linux v2.0 constants \
                      (beta 0.8, no HyStart), variant=rfc9438 for the RFC's fractional form.",
        params: vec![
            ParamInfo::new("variant", Config::default().variant, "linux: tcp_cubic.c v2.3; 2005 (alias v2.0): same engine with the 2005 paper / Linux v2.0 constants; rfc9438: RFC 9438 with fractional cwnd", "Linux tcp_cubic.c; Ha, Rhee, Xu 2005/2008; RFC 9438"),
            ParamInfo::new("beta", variant_default(&v, |c| c.beta), "fraction of the window kept after a loss (decrease b = 1 - beta); the Linux engine rounds it to 1/1024", "Linux beta = 717 (v2.0: 819); RFC 9438 beta_cubic = 0.7; mv-highspeed b = 0.2"),
            ParamInfo::new("c", variant_default(&v, |c| c.c), "cubic scaling constant C, segments/s^3; the Linux engine uses cube_rtt_scale = round(1024 C) = 410 (bic_scale 41)", "Linux bic_scale = 41; RFC 9438 C = 0.4"),
            ParamInfo::new("fast_convergence", variant_default(&v, |c| c.fast_convergence), "a loss below the previous W_max sets W_max = cwnd (1 + beta) / 2", "Linux tcp_cubic.c; RFC 9438 4.7"),
            ParamInfo::new("tcp_friendliness", variant_default(&v, |c| c.tcp_friendliness), "Reno-friendly region: follow the estimated Reno window when it is larger", "Linux tcp_friendliness; RFC 9438 4.3"),
            ParamInfo::new("hystart", variant_default(&v, |c| c.hystart), "HyStart: leave slow start on an ACK train spanning delay_min/2 or an RTT increase", "Linux tcp_cubic.c hystart"),
            ParamInfo::new("hystart_detect", variant_default(&v, |c| c.hystart_detect), "1: ACK train, 2: delay increase, 3: both", "Linux hystart_detect"),
            ParamInfo::new("hystart_low_window", variant_default(&v, |c| c.hystart_low_window), "HyStart acts only at cwnd >= this", "Linux hystart_low_window"),
            ParamInfo::new("hystart_ack_delta_us", variant_default(&v, |c| c.hystart_ack_delta_us), "ACKs closer than this (us) extend the ACK train", "Linux hystart_ack_delta_us"),
            ParamInfo::new("hystart_ack_delay_us", variant_default(&v, |c| c.hystart_ack_delay_us), "TSO/GRO cushion added to delay_min in the ACK-train threshold (Linux min(1 ms, 4 x 64 KB / pacing rate))", "Linux hystart_ack_delay()"),
            ParamInfo::new("initial_ssthresh", variant_default(&v, |c| c.initial_ssthresh), "initial ssthresh in segments, 0 = keep the sender's; applied only with hystart off, as Linux", "Linux initial_ssthresh (v2.0: 100)"),
            ParamInfo::new("max_increment", variant_default(&v, |c| c.max_increment), "Linux engine: at most this many segments per 100 ms of delay_min (v2.0 min_cnt), 0 = off", "Linux CUBIC v2.0 max_increment"),
            ParamInfo::new("hz", variant_default(&v, |c| c.hz), "Linux engine: jiffies per second (epoch time, throttles)", "Linux CONFIG_HZ"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Cubic::from_params(map, field)?))
}

/// Correctly rounded integer cube root (Linux `cubic_root` approximates it).
pub fn cube_root_rounded(a: u64) -> u64 {
    let mut x = (a as f64).cbrt().round() as u64;
    // Fix up floating error so that x = round(cbrt(a)) exactly:
    // (x - 1/2)^3 <= a < (x + 1/2)^3  <=>  (2x - 1)^3 <= 8a < (2x + 1)^3.
    let a8 = 8 * a as u128;
    let c = |v: u64| (v as u128).pow(3);
    while x > 0 && c(2 * x - 1) > a8 {
        x -= 1;
    }
    while c(2 * x + 1) <= a8 {
        x += 1;
    }
    x
}

impl Cubic {
    pub fn new(variant: Variant) -> Self {
        Cubic::with(&Config::for_variant(variant))
    }

    pub fn with(cfg: &Config) -> Self {
        let mut c = Cubic {
            variant: cfg.variant,
            beta: cfg.beta,
            beta_1024: 0,
            c: cfg.c,
            cube_rtt_scale: 0,
            cube_factor: 0,
            beta_scale: 0,
            fast_convergence: cfg.fast_convergence,
            tcp_friendliness: cfg.tcp_friendliness,
            hystart: cfg.hystart,
            hystart_detect: cfg.hystart_detect,
            hystart_low_window: cfg.hystart_low_window,
            hystart_ack_delta_us: cfg.hystart_ack_delta_us,
            hystart_ack_delay_us: cfg.hystart_ack_delay_us,
            initial_ssthresh: cfg.initial_ssthresh,
            max_increment: cfg.max_increment,
            hz: cfg.hz,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u64::MAX,
            sample_cnt: 0,
            pending_ssthresh: None,
            w_max: None,
            k: 0.0,
            t_epoch: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
            max_snd_nxt: 0,
            initialized: false,
        };
        c.precompute();
        c
    }

    /// Linux `cubictcp_register`: the scale factors.
    fn precompute(&mut self) {
        self.beta_1024 = (self.beta * BETA_SCALE as f64).round() as u64;
        self.beta_scale = 8 * (BETA_SCALE + self.beta_1024) / 3 / (BETA_SCALE - self.beta_1024);
        self.cube_rtt_scale = (self.c * BETA_SCALE as f64).round() as u64;
        self.cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / self.cube_rtt_scale;
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Cubic::with(&Config::from_params(map, field)?))
    }

    fn jiffies(&self, now: f64) -> u64 {
        crate::sim::time::floor_u64(now * self.hz + 1e-6)
    }

    fn usecs_to_jiffies(&self, us: u64) -> u64 {
        let hz = self.hz as u64;
        (us * hz).div_ceil(1_000_000)
    }

    /// Linux `bictcp_update(ca, cwnd, acked)`: sets `cnt`.
    pub fn update(&mut self, cwnd: u64, acked: u64, now: f64) {
        self.ack_cnt += acked;
        let j = self.jiffies(now);
        if self.last_cwnd == cwnd && j.saturating_sub(self.last_time) <= (self.hz as u64) / 32 {
            return;
        }
        // At most once per jiffy; reductions reset epoch_start and force it.
        if !(self.epoch_start.is_some() && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            if self.epoch_start.is_none() {
                self.epoch_start = Some(j);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.origin_point = cwnd;
                } else {
                    self.bic_k = cube_root_rounded(self.cube_factor * (self.last_max_cwnd - cwnd));
                    self.origin_point = self.last_max_cwnd;
                }
            }
            // t = now - epoch_start + delay_min, in 1/1024 s.
            let mut t = j - self.epoch_start.unwrap() + self.usecs_to_jiffies(self.delay_min_us);
            t = ((t as u128) << BICTCP_HZ) as u64 / self.hz as u64;
            let offs = t.abs_diff(self.bic_k) as u128;
            let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
                .min(u64::MAX as u128) as u64;
            let target = if t < self.bic_k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            if self.max_increment > 0 && self.delay_min_us > 0 {
                // v2.0: "max increment = Smax * rtt / 0.1".
                let min_cnt = cwnd * 100_000 / (self.max_increment * self.delay_min_us);
                self.cnt = self.cnt.max(min_cnt);
            }
            // Bandwidth still unknown: at least +5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.tcp_friendliness {
            let d = ((cwnd * self.beta_scale) >> 3).max(1);
            while self.ack_cnt > d {
                self.ack_cnt -= d;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // At most one segment per two acked: 1.5x per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// RFC 9438 W_cubic(t).
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.c * (t - self.k).powi(3) + self.w_max.unwrap_or(0.0)
    }

    fn init_once(&mut self, w: &mut Window) {
        if !self.initialized {
            self.initialized = true;
            if !self.hystart && self.initial_ssthresh > 0 {
                w.ssthresh = self.initial_ssthresh as f64;
            }
        }
    }

    fn hystart_reset(&mut self, now_us: u64, snd_nxt: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `hystart_update(sk, delay)`.
    fn hystart_update(&mut self, w: &Window, s: &AckSample, delay: u64) {
        let now_us = crate::sim::time::round_u64(s.now * 1e6);
        if s.snd_una > self.end_seq {
            self.hystart_reset(now_us, s.snd_nxt);
        }
        if (w.cwnd as u64) < self.hystart_low_window {
            return;
        }
        if self.hystart_detect & HYSTART_ACK_TRAIN != 0
            && now_us.saturating_sub(self.last_ack_us) <= self.hystart_ack_delta_us
        {
            self.last_ack_us = now_us;
            // Not paced (SK_PACING_NONE): half of delay_min plus the cushion.
            let threshold = (self.delay_min_us + self.hystart_ack_delay_us) >> 1;
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                self.pending_ssthresh = Some(w.cwnd.floor());
            }
        }
        if self.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt_us = self.curr_rtt_us.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + thresh {
                    self.found = true;
                    self.pending_ssthresh = Some(w.cwnd.floor());
                }
            }
        }
    }

    fn on_ack_linux(&mut self, w: &mut Window, s: &AckSample) {
        let mut acked = s.acked as u64;
        if w.in_slow_start() {
            acked = Reno::slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = w.cwnd as u64;
        self.update(cwnd, acked, s.now);
        Reno::cong_avoid_ai(w, &mut self.cwnd_cnt, self.cnt, acked);
    }

    fn on_ack_rfc(&mut self, w: &mut Window, s: &AckSample) {
        let was_slow_start = w.in_slow_start();
        let acked = Reno::slow_start_float(w, s.acked as f64);
        if was_slow_start && acked <= 0.0 {
            return;
        }
        if self.t_epoch.is_none() {
            // Start of a congestion-avoidance stage.
            self.t_epoch = Some(s.now);
            self.cwnd_epoch = w.cwnd;
            self.w_est = w.cwnd;
            let w_max = *self.w_max.get_or_insert(w.cwnd);
            self.k = ((w_max - self.cwnd_epoch) / self.c).cbrt();
        }
        let t = s.now - self.t_epoch.unwrap();
        let rtt = if s.srtt > 0.0 {
            s.srtt
        } else if s.min_rtt.is_finite() {
            s.min_rtt
        } else {
            0.0
        };
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { 3.0 * (1.0 - self.beta) / (1.0 + self.beta) };
        self.w_est += alpha * acked / w.cwnd;
        if self.tcp_friendliness && self.w_cubic(t) < self.w_est {
            // Reno-friendly region.
            w.cwnd = self.w_est;
        } else {
            let target = self.w_cubic(t + rtt).clamp(w.cwnd, 1.5 * w.cwnd);
            w.cwnd += acked * (target - w.cwnd) / w.cwnd;
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack_sample(&mut self, w: &Window, s: &AckSample) {
        self.max_snd_nxt = self.max_snd_nxt.max(s.snd_nxt);
        // Linux cubictcp_acked.
        let Some(rtt) = s.rtt else { return };
        if let Some(e) = self.epoch_start {
            // Discard delay samples right after fast recovery.
            if self.variant != Variant::Rfc9438 && self.jiffies(s.now).saturating_sub(e) < self.hz as u64 {
                return;
            }
        }
        let delay = crate::sim::time::round_u64(rtt * 1e6).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        let ss = match self.pending_ssthresh {
            Some(p) => w.cwnd < p,
            None => w.in_slow_start(),
        };
        if !self.found && ss && self.hystart {
            self.hystart_update(w, s, delay);
        }
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.init_once(w);
        if let Some(ss) = self.pending_ssthresh.take() {
            w.ssthresh = ss;
        }
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        match self.variant {
            Variant::Linux | Variant::V2005 => self.on_ack_linux(w, s),
            Variant::Rfc9438 => self.on_ack_rfc(w, s),
        }
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, in_flight: u64, _now: f64) -> f64 {
        self.pending_ssthresh = None;
        self.cwnd_cnt = 0;
        match self.variant {
            Variant::Linux | Variant::V2005 => {
                self.epoch_start = None;
                let cwnd = w.cwnd as u64;
                self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                    cwnd * (BETA_SCALE + self.beta_1024) / (2 * BETA_SCALE)
                } else {
                    cwnd
                };
                (cwnd * self.beta_1024 / BETA_SCALE).max(2) as f64
            }
            Variant::Rfc9438 => {
                self.t_epoch = None;
                let cwnd = w.cwnd;
                self.cwnd_prior = cwnd;
                self.w_max = Some(match self.w_max {
                    Some(prev) if cwnd < prev && self.fast_convergence => cwnd * (1.0 + self.beta) / 2.0,
                    _ => cwnd,
                });
                let flight = if in_flight > 0 { in_flight as f64 } else { cwnd };
                (flight * self.beta).max(2.0)
            }
        }
    }

    fn on_rto(&mut self, _w: &mut Window, now: f64) {
        self.pending_ssthresh = None;
        self.cwnd_cnt = 0;
        match self.variant {
            Variant::Linux | Variant::V2005 => {
                // cubictcp_state(TCP_CA_Loss): bictcp_reset + hystart reset.
                self.cnt = 0;
                self.last_max_cwnd = 0;
                self.last_cwnd = 0;
                self.last_time = 0;
                self.origin_point = 0;
                self.bic_k = 0;
                self.delay_min_us = 0;
                self.epoch_start = None;
                self.ack_cnt = 0;
                self.tcp_cwnd = 0;
                self.found = false;
            }
            Variant::Rfc9438 => {
                // First CA stage after an RTO: K = 0, W_max = cwnd at its start.
                self.t_epoch = None;
                self.w_max = None;
                self.found = false;
            }
        }
        let now_us = crate::sim::time::round_u64(now * 1e6);
        self.hystart_reset(now_us, self.max_snd_nxt);
    }
}

#[cfg(test)]
mod tests;
