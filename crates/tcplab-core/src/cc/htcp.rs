//! H-TCP (`htcp`): the additive increase grows with the time since the last
//! congestion event; the backoff adapts to RTTmin/RTTmax.
//!
//! Sources:
//! - R. N. Shorten, D. J. Leith, "H-TCP: TCP for high-speed and long-distance
//!   networks", PFLDnet 2004; draft-leith-tcp-htcp: Delta = time since the
//!   last congestion event, alpha(Delta) = 1 for Delta <= Delta_L (1 s), else
//!   1 + 10 (Delta - Delta_L) + ((Delta - Delta_L)/2)^2; alpha <- 2 (1 - beta)
//!   alpha(Delta); beta = RTTmin/RTTmax; beta = 0.5 for an event after the
//!   throughput changed by more than 20%; optional RTT scaling
//!   alpha * RTTmin/RTT_ref (RTT_ref = 100 ms). cwnd += alpha/cwnd per ACK,
//!   cwnd <- beta cwnd on loss.
//! - Linux `net/ipv4/tcp_htcp.c` (default): alpha and beta in fixed point x128,
//!   BETA_MIN = 64 (0.5), BETA_MAX = 102 (0.797); `use_rtt_scaling = 1`,
//!   `use_bandwidth_switch = 1`; times in jiffies. `measure_rtt`: minRTT =
//!   all-time minimum; in Open only maxRTT = max(maxRTT, minRTT) and raised to
//!   a sample at most 20 ms above it. `measure_achieved_throughput`:
//!   packets/s once `packetcount >= cwnd - max(alpha>>7, 1)` and a minRTT
//!   elapsed (Open/Disorder only), `Bi = (3 Bi + cur)/4`, reset within 3
//!   minRTTs of a congestion event. `htcp_beta_update`: bandwidth switch
//!   (`5 maxB` outside `[4, 6] old_maxB` -> beta = 0.5), else beta =
//!   minRTT/maxRTT clamped once `modeswitch` is set (the first event after
//!   start or a switch uses 0.5) and minRTT > 10 ms. `htcp_alpha_update`:
//!   integer factor 1 + (10 d + (d/2)^2/HZ)/HZ, RTT scaling `scale =
//!   8 HZ/(10 minRTT)` clamped to [4, 80], factor = max(8 factor/scale, 1),
//!   alpha = 2 factor (128 - beta). `htcp_param_update` at each congestion
//!   event also fades maxRTT: minRTT + 0.95 (maxRTT - minRTT). ssthresh =
//!   max(cwnd beta >> 7, 2). `htcp_cong_avoid`: Reno slow start (leftover
//!   discarded); in CA, if `(snd_cwnd_cnt alpha) >> 7 >= cwnd` then cwnd += 1,
//!   counter = 0 and alpha is recomputed, else the counter grows by the last
//!   `pkts_acked` (cumulatively acknowledged packets, Open state only; 1
//!   otherwise). `htcp_state`: entering Recovery/Loss sets last_cong = now,
//!   and so does returning to Open afterwards (Delta counts from the end of
//!   the event).
//!
//! Parameters: `variant = linux` (default) is the above with integer
//! arithmetic (`arith = linux`, jiffies at `hz` = 1000). `variant = paper` is
//! H-TCP as the seed paper mv-highspeed prints it: `a = 1 + 10 (Delta -
//! Delta_th) + ((Delta - Delta_th)/2)^2` after Delta_th = 1 s (read as the
//! increase per RTT; the paper does not say), backoff
//! `b = 1 - RTTmin/RTTmax`, and nothing else. So it uses exact real
//! arithmetic in seconds (`arith = float`: alpha recomputed on every ACK,
//! cwnd += alpha acked/cwnd, ssthresh = beta cwnd), alpha = alpha(Delta)
//! itself (`beta_scaled_alpha = false`: no 2(1 - beta) factor, which at
//! beta = 0.93 would make the increase 7 times slower than the paper's
//! formula), beta = RTTmin/RTTmax without bounds (beta_min 0, beta_max 1),
//! no bandwidth switch, no RTT scaling and no first-event 0.5 backoff
//! (`modeswitch = false`). Every constant can be set individually, and an
//! explicit value overrides the variant's default (e.g. `variant = paper`
//! with `beta_scaled_alpha = true`, `beta_min = 0.5`, `beta_max = 0.8` is
//! Leith and Shorten's form, which the H-TCP code of the paper's ns-2.28
//! era implements and its figures probably used; the variant follows the
//! printed formula). Unbounded, beta = 1 (no backoff) when RTTmax = RTTmin.
//!
//! Deviations:
//! - The CA state is the sender's (`on_state`, Linux `htcp_state`), whose
//!   Disorder is simpler than Linux's: entered on a duplicate ACK, left on the
//!   next ACK of new data (Linux stays while SACKed data remains).
//! - No undo (`htcp_cwnd_undo`): the sender never undoes a reduction.
//! - Linux starts the throughput interval at `lasttime = 0` (jiffies since
//!   boot); here at connection start (first packet sent), which also sets
//!   last_cong (`htcp_init`).
//! - In `float` arithmetic RTT scaling multiplies alpha by RTTmin/RTT_ref
//!   clamped to [0.1, 2] (Linux's bounds) without Linux's integer floor of 1;
//!   maxRTT is tracked as in Linux in both arithmetics (the paper does not say
//!   how RTTmax is measured).

use super::reno::Reno;
use super::{
    variant_default, AckSample, AlgorithmInfo, CaState, CongestionControl, Conn, LossEvent, ParamInfo, Params, Window,
};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// Linux: jiffies, alpha/beta x128, integer cwnd with `snd_cwnd_cnt`.
    Linux,
    /// Real numbers in seconds, fractional cwnd.
    Float,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HtcpConfig {
    pub arith: Arith,
    /// Jiffies per second (Linux arithmetic).
    pub hz: u64,
    /// Delta_L, seconds.
    pub delta_l: f64,
    pub beta_min: f64,
    pub beta_max: f64,
    pub use_rtt_scaling: bool,
    /// RTT_ref, seconds.
    pub rtt_ref: f64,
    pub use_bandwidth_switch: bool,
    /// Relative throughput change that triggers the switch (0.2).
    pub bw_switch_threshold: f64,
    /// Linux `modeswitch`: the first event (and the first after a switch) uses beta = 0.5.
    pub modeswitch: bool,
    /// alpha <- 2 (1 - beta) alpha(Delta) (Linux, Leith & Shorten); false:
    /// alpha = alpha(Delta) (the seed paper's formula).
    pub beta_scaled_alpha: bool,
}

param_choice!(Arith { Linux => "linux", Float => "float" });

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig::linux()
    }
}

impl HtcpConfig {
    /// The variants, the default first; their constructors are where each
    /// default is written.
    fn variants() -> Vec<(&'static str, HtcpConfig)> {
        vec![("linux", HtcpConfig::linux()), ("paper", HtcpConfig::paper())]
    }

    pub fn linux() -> Self {
        HtcpConfig {
            arith: Arith::Linux,
            hz: 1000,
            delta_l: 1.0,
            beta_min: 0.5,
            beta_max: 0.8,
            use_rtt_scaling: true,
            rtt_ref: 0.1,
            use_bandwidth_switch: true,
            bw_switch_threshold: 0.2,
            modeswitch: true,
            beta_scaled_alpha: true,
        }
    }

    pub fn paper() -> Self {
        HtcpConfig {
            arith: Arith::Float,
            beta_min: 0.0,
            beta_max: 1.0,
            use_rtt_scaling: false,
            use_bandwidth_switch: false,
            modeswitch: false,
            beta_scaled_alpha: false,
            ..Self::linux()
        }
    }
}

/// alpha(Delta) of the paper: 1 for Delta <= Delta_L, else
/// 1 + 10 (Delta - Delta_L) + ((Delta - Delta_L)/2)^2 (seconds).
pub fn alpha_of_delta(delta: f64, delta_l: f64) -> f64 {
    if delta <= delta_l {
        1.0
    } else {
        let d = delta - delta_l;
        1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
    }
}

/// Linux `htcp_alpha_update`'s integer factor for `diff` jiffies since the
/// last congestion event: `1 + (10 d + (d/2)^2/HZ)/HZ` with d = diff - Delta_L.
pub fn alpha_factor_linux(diff: u64, hz: u64, delta_l_jiffies: u64) -> u64 {
    if diff > delta_l_jiffies {
        let d = diff - delta_l_jiffies;
        1 + (10 * d + (d / 2) * (d / 2) / hz) / hz
    } else {
        1
    }
}

/// Linux RTT scaling of the factor: `scale = 8 RTT_ref/minRTT` (Linux
/// `(HZ << 3)/(10 minRTT)`), clamped to [4, 80]; `max(8 factor/scale, 1)`.
pub fn rtt_scaled_factor_linux(factor: u64, min_rtt_jiffies: u64, hz: u64, rtt_ref: f64) -> u64 {
    let num = (8.0 * hz as f64 * rtt_ref).round() as u64;
    let scale = (num / min_rtt_jiffies).clamp(4, 80);
    ((factor << 3) / scale).max(1)
}

/// Float RTT scaling ratio: RTTmin/RTT_ref clamped to Linux's [0.1, 2].
pub fn rtt_scale_float(min_rtt: f64, rtt_ref: f64) -> f64 {
    (min_rtt / rtt_ref).clamp(0.1, 2.0)
}

#[derive(Debug, Clone)]
pub struct Htcp {
    pub cfg: HtcpConfig,
    /// Additive increase per RTT (real value; x128 exact in Linux arithmetic).
    pub alpha: f64,
    /// Fraction of the window kept after a loss.
    pub beta: f64,
    modeswitch: bool,
    /// Linux `ca->pkts_acked`: credit for the next CA ACK.
    pkts_acked: u64,
    packetcount: u64,
    // Times in ticks: jiffies (Linux arithmetic) or seconds (float); 0 = unset.
    min_rtt: f64,
    max_rtt: f64,
    last_cong: f64,
    /// Linux `undo_last_cong != 0`: set last_cong again on return to Open.
    reset_on_open: bool,
    min_b: f64,
    max_b: f64,
    old_max_b: f64,
    bi: f64,
    lasttime: f64,
    /// Linux `snd_cwnd_cnt`.
    cwnd_cnt: u64,
    /// The sender's CA state, as last told (`on_state`).
    state: CaState,
    started: bool,
}

pub fn info() -> AlgorithmInfo {
    let v = HtcpConfig::variants();
    AlgorithmInfo {
        name: "htcp",
        aliases: &["h-tcp"],
        description: "H-TCP: increase alpha(Delta) = 1 + 10(Delta-1) + ((Delta-1)/2)^2 per RTT after 1 s without loss \
                      (Linux scales it by 2(1-beta), the paper variant does not); adaptive backoff beta = RTTmin/RTTmax \
                      (Linux tcp_htcp.c or the paper).",
        params: vec![
            ParamInfo::new("variant", v[0].0, "linux: tcp_htcp.c defaults; paper: the seed paper's formulas: float arithmetic, alpha = alpha(Delta) without the 2(1 - beta) factor, beta = RTTmin/RTTmax unbounded, no bandwidth switch, no RTT scaling, no first-event 0.5 (sets the defaults of the parameters below; an explicit value overrides)", "Linux tcp_htcp.c; Leith & Shorten PFLDnet 2004; mv-highspeed"),
            ParamInfo::new("arith", variant_default(&v, |c| c.arith), "linux: jiffies, alpha/beta x128, integer cwnd with snd_cwnd_cnt; float: seconds, real alpha recomputed per ACK, cwnd += alpha*acked/cwnd", "Linux tcp_htcp.c"),
            ParamInfo::new("hz", variant_default(&v, |c| c.hz), "jiffies per second in linux arithmetic", "Linux CONFIG_HZ"),
            ParamInfo::new("delta_l", variant_default(&v, |c| c.delta_l), "Delta_L, s: alpha = 1 until this long after a congestion event", "paper; Linux (HZ)"),
            ParamInfo::new("beta_min", variant_default(&v, |c| c.beta_min), "lower bound of beta = RTTmin/RTTmax", "Linux BETA_MIN = 64/128"),
            ParamInfo::new("beta_max", variant_default(&v, |c| c.beta_max), "upper bound of beta (linux arithmetic rounds to /128: 102)", "Linux BETA_MAX = 102/128"),
            ParamInfo::new("use_rtt_scaling", variant_default(&v, |c| c.use_rtt_scaling), "alpha *= RTTmin/RTT_ref, ratio clamped to [0.1, 2]", "Linux use_rtt_scaling; paper (optional)"),
            ParamInfo::new("rtt_ref", variant_default(&v, |c| c.rtt_ref), "RTT_ref, s", "Linux (HZ/10); paper"),
            ParamInfo::new("use_bandwidth_switch", variant_default(&v, |c| c.use_bandwidth_switch), "beta = 0.5 when the max throughput changed by more than bw_switch_threshold since the last event", "Linux use_bandwidth_switch; paper"),
            ParamInfo::new("bw_switch_threshold", variant_default(&v, |c| c.bw_switch_threshold), "relative throughput change for the bandwidth switch", "Linux (5 maxB within [4, 6] old_maxB)"),
            ParamInfo::new("modeswitch", variant_default(&v, |c| c.modeswitch), "the first congestion event (and the first after a bandwidth switch) backs off with beta = 0.5", "Linux htcp_beta_update"),
            ParamInfo::new("beta_scaled_alpha", variant_default(&v, |c| c.beta_scaled_alpha), "true: alpha = 2 (1 - beta) alpha(Delta) (Linux alpha = 2 factor (128 - beta)); false: alpha = alpha(Delta), the seed paper's formula", "Linux htcp_alpha_update; Leith & Shorten 2004; mv-highspeed (no factor)"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Htcp::from_params(map, field)?))
}

impl Htcp {
    pub fn new(cfg: HtcpConfig) -> Self {
        Htcp {
            cfg,
            alpha: 1.0,
            beta: 0.5,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0.0,
            max_rtt: 0.0,
            last_cong: 0.0,
            reset_on_open: false,
            min_b: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
            bi: 0.0,
            lasttime: 0.0,
            cwnd_cnt: 0,
            state: CaState::Open,
            started: false,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let variants = HtcpConfig::variants();
        let names: Vec<&'static str> = variants.iter().map(|(n, _)| *n).collect();
        let variant = p.choice("variant", names[0], &names)?;
        let d = variants.into_iter().find(|(n, _)| *n == variant).map(|(_, c)| c).unwrap_or_default();
        let arith = p.pick("arith", d.arith)?;
        let cfg = HtcpConfig {
            arith,
            hz: p.u64("hz", d.hz, |h| (1..=1_000_000).contains(&h), "an integer in 1..=1000000")?,
            delta_l: p.f64("delta_l", d.delta_l, |x| x >= 0.0, "a time >= 0 in seconds")?,
            beta_min: p.f64("beta_min", d.beta_min, |x| (0.0..1.0).contains(&x), "a fraction in [0, 1)")?,
            beta_max: p.f64("beta_max", d.beta_max, |x| x > 0.0 && x <= 1.0, "a fraction in (0, 1]")?,
            use_rtt_scaling: p.bool("use_rtt_scaling", d.use_rtt_scaling)?,
            rtt_ref: p.f64("rtt_ref", d.rtt_ref, |x| x > 0.0, "a time > 0 in seconds")?,
            use_bandwidth_switch: p.bool("use_bandwidth_switch", d.use_bandwidth_switch)?,
            bw_switch_threshold: p.f64(
                "bw_switch_threshold",
                d.bw_switch_threshold,
                |x| x >= 0.0,
                "a fraction >= 0",
            )?,
            modeswitch: p.bool("modeswitch", d.modeswitch)?,
            beta_scaled_alpha: p.bool("beta_scaled_alpha", d.beta_scaled_alpha)?,
        };
        if cfg.beta_min > cfg.beta_max {
            return Err(SpecError::new(
                format!("{field}.params.beta_min"),
                format!("must not exceed beta_max ({})", cfg.beta_max),
            ));
        }
        Ok(Htcp::new(cfg))
    }

    fn linux(&self) -> bool {
        self.cfg.arith == Arith::Linux
    }

    fn hz(&self) -> f64 {
        self.cfg.hz as f64
    }

    /// Ticks per second: HZ (Linux) or 1 (seconds).
    fn tps(&self) -> f64 {
        if self.linux() {
            self.hz()
        } else {
            1.0
        }
    }

    /// Current time in ticks (Linux `jiffies`).
    fn ticks(&self, now: f64) -> f64 {
        if self.linux() {
            (now * self.hz() + 1e-6).floor()
        } else {
            now
        }
    }

    /// An RTT in ticks (Linux `usecs_to_jiffies(rtt_us)`, rounding up).
    fn rtt_ticks(&self, rtt: f64) -> f64 {
        if self.linux() {
            let us = (rtt * 1e6 + 1e-6).floor() as u64;
            ((us * self.cfg.hz).div_ceil(1_000_000)) as f64
        } else {
            rtt
        }
    }

    /// Linux `msecs_to_jiffies(ms)` (rounding up), or seconds.
    fn ms_ticks(&self, ms: u64) -> f64 {
        if self.linux() {
            (ms * self.cfg.hz).div_ceil(1000) as f64
        } else {
            ms as f64 / 1000.0
        }
    }

    fn init(&mut self, now: f64) {
        if !self.started {
            self.started = true;
            let t = self.ticks(now);
            self.last_cong = t;
            self.lasttime = t;
        }
    }

    /// Minimum RTT, seconds (0 before the first sample).
    pub fn min_rtt(&self) -> f64 {
        self.min_rtt / self.tps()
    }

    /// Maximum RTT, seconds.
    pub fn max_rtt(&self) -> f64 {
        self.max_rtt / self.tps()
    }

    /// Linux `measure_rtt`.
    fn measure_rtt(&mut self, r: f64, open: bool) {
        if self.min_rtt == 0.0 || self.min_rtt > r {
            self.min_rtt = r;
        }
        if open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < r && r <= self.max_rtt + self.ms_ticks(20) {
                self.max_rtt = r;
            }
        }
    }

    /// Linux `measure_achieved_throughput`, the bandwidth part.
    fn measure_throughput(&mut self, now: f64, pkts_acked: u64, cwnd: f64, state: CaState) {
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if !matches!(state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += pkts_acked;
        let a = (self.alpha.floor() as u64).max(1);
        let cwnd = cwnd as u64;
        // Linux: u32 `cwnd - a` wraps when a > cwnd, making the test false.
        let enough = cwnd >= a && self.packetcount >= cwnd - a;
        if enough && self.min_rtt > 0.0 && now - self.lasttime >= self.min_rtt {
            let elapsed = now - self.lasttime;
            let (cur, ccount) = if self.linux() {
                (
                    (self.packetcount as f64 * self.hz() / elapsed).floor(),
                    ((now - self.last_cong) / self.min_rtt).floor(),
                )
            } else {
                (self.packetcount as f64 / elapsed, ((now - self.last_cong) / self.min_rtt).floor())
            };
            if ccount <= 3.0 {
                // Just after a backoff.
                self.min_b = cur;
                self.max_b = cur;
                self.bi = cur;
            } else {
                self.bi = (3.0 * self.bi + cur) / 4.0;
                if self.linux() {
                    self.bi = self.bi.floor();
                }
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    /// Linux `htcp_beta_update`.
    fn beta_update(&mut self) {
        if self.cfg.use_bandwidth_switch {
            let (max_b, old) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            // Linux: between(5 maxB, 4 old_maxB, 6 old_maxB) for a 20% threshold.
            let within = (max_b - old).abs() <= self.cfg.bw_switch_threshold * old * (1.0 + 1e-12);
            if !within {
                self.beta = 0.5;
                self.modeswitch = false;
                return;
            }
        }
        let guard = if self.linux() { self.ms_ticks(10) } else { 0.0 };
        if (self.modeswitch || !self.cfg.modeswitch) && self.min_rtt > guard && self.max_rtt > 0.0 {
            self.beta = self.adaptive_beta(self.min_rtt, self.max_rtt);
        } else {
            self.beta = 0.5;
            self.modeswitch = true;
        }
    }

    /// beta = RTTmin/RTTmax within [beta_min, beta_max] (x128 and truncated in Linux arithmetic).
    pub fn adaptive_beta(&self, min_rtt: f64, max_rtt: f64) -> f64 {
        if self.linux() {
            let lo = (self.cfg.beta_min * 128.0).round();
            let hi = (self.cfg.beta_max * 128.0).round();
            (min_rtt * 128.0 / max_rtt).floor().clamp(lo, hi) / 128.0
        } else {
            (min_rtt / max_rtt).clamp(self.cfg.beta_min, self.cfg.beta_max)
        }
    }

    /// alpha for the current beta and `now` (ticks): Linux `htcp_alpha_update`
    /// or its real-valued form.
    pub fn compute_alpha(&self, now: f64) -> f64 {
        let diff = (now - self.last_cong).max(0.0);
        let alpha = if self.linux() {
            let hz = self.cfg.hz;
            let dl = (self.cfg.delta_l * self.hz()).round() as u64;
            let mut factor = alpha_factor_linux(diff as u64, hz, dl);
            if self.cfg.use_rtt_scaling && self.min_rtt > 0.0 {
                factor = rtt_scaled_factor_linux(factor, self.min_rtt as u64, hz, self.cfg.rtt_ref);
            }
            let beta_fp = (self.beta * 128.0).round() as u64;
            let a = if self.cfg.beta_scaled_alpha { 2 * factor * (128 - beta_fp) } else { factor * 128 };
            a as f64 / 128.0
        } else {
            let mut factor = alpha_of_delta(diff, self.cfg.delta_l);
            if self.cfg.use_rtt_scaling && self.min_rtt > 0.0 {
                factor *= rtt_scale_float(self.min_rtt, self.cfg.rtt_ref);
            }
            if self.cfg.beta_scaled_alpha {
                2.0 * (1.0 - self.beta) * factor
            } else {
                factor
            }
        };
        // Linux: "if (!ca->alpha) ca->alpha = ALPHA_BASE".
        if alpha == 0.0 {
            1.0
        } else {
            alpha
        }
    }

    /// Linux `htcp_param_update`.
    fn param_update(&mut self, now: f64) {
        self.beta_update();
        self.alpha = self.compute_alpha(now);
        let (min, max) = (self.min_rtt, self.max_rtt);
        if min > 0.0 && max > min {
            let faded = (max - min) * 95.0 / 100.0;
            self.max_rtt = min + if self.linux() { faded.floor() } else { faded };
        }
    }

    /// Linux `htcp_reset` (entering CWR/Recovery/Loss).
    fn enter_reduction(&mut self, now: f64) {
        self.reset_on_open = true;
        self.last_cong = now;
    }

    /// Linux `htcp_state(TCP_CA_Open)`.
    fn back_to_open(&mut self, now: f64) {
        if self.reset_on_open {
            self.last_cong = now;
            self.reset_on_open = false;
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn on_send(&mut self, now: f64, _bytes: u32, _in_flight: u64) {
        self.init(now);
    }

    fn on_ack_sample(&mut self, w: &Window, s: &AckSample) {
        self.init(s.now);
        let now = self.ticks(s.now);
        let state = self.state;
        let open = state == CaState::Open;
        if open {
            self.pkts_acked = s.cum_acked as u64;
        }
        if let Some(r) = s.rtt {
            if r > 0.0 {
                let r = self.rtt_ticks(r);
                self.measure_rtt(r, open);
            }
        }
        self.measure_throughput(now, s.cum_acked as u64, w.cwnd, state);
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        match self.cfg.arith {
            Arith::Linux => {
                if w.in_slow_start() {
                    // tcp_slow_start; H-TCP discards the leftover credit.
                    Reno::slow_start(w, s.acked as u64);
                } else {
                    if (self.cwnd_cnt as f64 * self.alpha).floor() >= w.cwnd {
                        w.cwnd += 1.0;
                        self.cwnd_cnt = 0;
                        self.alpha = self.compute_alpha(self.ticks(s.now));
                    } else {
                        self.cwnd_cnt += self.pkts_acked;
                    }
                    self.pkts_acked = 1;
                }
            }
            Arith::Float => {
                let acked = Reno::slow_start_float(w, s.acked as f64);
                if acked > 0.0 {
                    self.alpha = self.compute_alpha(s.now);
                    w.cwnd += self.alpha * acked / w.cwnd;
                }
            }
        }
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, now: f64) -> f64 {
        self.init(now);
        let t = self.ticks(now);
        self.param_update(t);
        self.cwnd_cnt = 0;
        match self.cfg.arith {
            Arith::Linux => (w.cwnd * self.beta).floor().max(2.0),
            Arith::Float => (w.cwnd * self.beta).max(2.0),
        }
    }

    fn on_rto(&mut self, _w: &mut Window, now: f64) {
        self.init(now);
        self.cwnd_cnt = 0;
    }

    /// Linux `htcp_state`: a reduction (CWR, Recovery, or Loss: the sender
    /// reports every timeout, with or without a new ssthresh) resets the
    /// congestion epoch (`htcp_reset`); back in Open, the epoch starts now.
    fn on_state(&mut self, _w: &mut Window, new: CaState, c: &Conn) {
        let t = self.ticks(c.now);
        match new {
            CaState::Open => self.back_to_open(t),
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.enter_reduction(t),
            CaState::Disorder => {}
        }
        self.state = new;
    }
}

#[cfg(test)]
mod tests;
