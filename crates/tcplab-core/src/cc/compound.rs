//! Compound TCP (`compound`, alias `ctcp`): the window is the sum of a
//! loss-based Reno window `cwnd` and a delay-based window `dwnd`, which grows
//! like HighSpeed TCP (`alpha win^k - 1` per RTT) while fewer than `gamma`
//! segments are queued and shrinks by `zeta diff` once more are.
//!
//! Sources:
//! - K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for
//!   High-speed and Long Distance Networks", IEEE INFOCOM 2006
//!   (MSR-TR-2005-86), and draft-sridharan-tcpm-ctcp (2007-2008), as
//!   summarised in `docs/reference/cc-algorithms.md` section 10 \[P\]:
//!   alpha = 1/8, beta = 1/2, k = 3/4, zeta = 1, gamma = 30 segments;
//!   `win = cwnd + dwnd`; per ACK in congestion avoidance `cwnd += 1/win`;
//!   once per RTT `diff = win (1 - baseRTT/RTT)`: `diff < gamma` ->
//!   `dwnd += max(alpha win^k - 1, 0)`, else `dwnd = max(dwnd - zeta diff, 0)`;
//!   on a loss by duplicate ACKs `cwnd = cwnd/2`,
//!   `dwnd = max(win (1 - beta) - cwnd/2, 0)` (so the window becomes
//!   `win (1 - beta)`), dwnd frozen during recovery; on an RTO `cwnd = 1`,
//!   `dwnd = 0`; slow start is Reno's on cwnd with dwnd = 0.
//! - Secondary implementations \[S\] for what the paper leaves open: the
//!   out-of-tree Linux `tcp_compound.c` (Castellani, Hemminger 2006; Andrew
//!   v1.3 2008: the Vegas measurement frame, the round's minimum RTT, at
//!   least 3 samples per round, a fresh round on every return to Open;
//!   v1.3 keeps baseRTT over idle restarts) and the ns-3 port (F. Zhou
//!   2014: the delay part only above a 38-segment window, as HSTCP's
//!   Low_Window).
//!
//! Choices (parameters):
//! - `round_rtt` (default `min`): the RTT of the round in `diff`: the
//!   minimum of the round's samples (Linux port and Vegas; filters
//!   delayed-ACK and burst noise), `mean`, `last` sample, or `srtt`.
//! - `low_window` (default 38): the delay part is updated only while
//!   `win >= low_window`; below it dwnd is held (normally 0 there).
//! - `min_samples` (default 3): fewer RTT samples in a round skip its
//!   dwnd update (Linux port: "cntRTT > 2").
//! - The window is fractional (`cwnd += 1/win` per ACK, as the paper); slow
//!   start adds one segment per segment acknowledged (`tcp_slow_start`).
//! - ssthresh returned at a loss is the whole window after it,
//!   `max(cwnd/2 + dwnd_new, 2)`; the sender enforces `win`, so recovery
//!   works towards it. On an RTO the same value, then dwnd = 0.
//!
//! Variant `linux-port`: the out-of-tree Linux `tcp_compound.c` of
//! A. Castellani and S. Hemminger (May 2006, "requested to go in 2.6.18"),
//! the module ns-2's TCP-Linux distribution ships (read in ns-2.35
//! `tcp/linux/src/tcp_compound.c`, repository hbatmit/ns2.35; the same rules
//! as the 2006 original read alongside it). Chosen over L. Andrew's v1.3
//! (April 2008) because ns-2 TCP-Linux, which ssm-interactions ran, carries
//! the 2006 module, and v1.3 post-dates the study (its own changelog dates
//! its ns-2 port to April 2008). See `Compound::on_ack_port` for each
//! rule; what v1.3 changed (LOW_WINDOW 38 and zeroing in slow start, paced
//! dwnd increase, TUBE gamma tuning, scaling both parts at a loss, keeping
//! baseRTT on TX_START) is not in this variant.
//!
//! The measurement frame is [`super::delay::DelayFrame`] (baseRTT over the
//! connection, kept across idle restarts in the paper variant; rounds keyed
//! on `snd_nxt`). The paper variant makes no delay-based update outside the
//! Open state (its choice: the ports update dwnd wherever Linux calls
//! `cong_avoid`, i.e. also in Disorder and Loss). The CTCP-TUBE gamma tuning
//! of later versions (and of v1.3 of the Linux port) is not implemented:
//! gamma is fixed, as the reference advises unless a reproduction uses TUBE.

use super::delay::{fixed_point_diff, to_us, DelayFrame, V_PARAM_SHIFT};
use super::reno::Reno;
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, Conn, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Tan et al. 2006 / the draft, with the choices of the parameters.
    Paper,
    /// The 2006 out-of-tree Linux `tcp_compound.c` (ns-2 TCP-Linux).
    LinuxPort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundRtt {
    Min,
    Mean,
    Last,
    Srtt,
}

param_choice!(Variant { Paper => "paper", LinuxPort => "linux-port" });
param_choice!(RoundRtt { Min => "min", Mean => "mean", Last => "last", Srtt => "srtt" });

/// Compound's parameters; `Default` (variant paper) is where each default
/// is written, [`CompoundConfig::linux_port`] the port's fixed constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompoundConfig {
    pub variant: Variant,
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub zeta: f64,
    /// Segments queued at which dwnd stops growing.
    pub gamma: f64,
    pub low_window: f64,
    pub round_rtt: RoundRtt,
    pub min_samples: u32,
    /// Re-initialise on TX_START (a segment sent with nothing in flight).
    pub restart_on_idle: bool,
}

impl Default for CompoundConfig {
    fn default() -> Self {
        CompoundConfig {
            variant: Variant::Paper,
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            zeta: 1.0,
            gamma: 30.0,
            low_window: 38.0,
            round_rtt: RoundRtt::Min,
            min_samples: 3,
            restart_on_idle: true,
        }
    }
}

impl CompoundConfig {
    /// The 2006 Linux port: alpha 1/8 (`>> 3`), k 0.75 (`qroot(w^3)`),
    /// zeta 1, gamma 30, cntRTT > 2, the round's minimum RTT; halving on loss.
    pub fn linux_port() -> Self {
        CompoundConfig { variant: Variant::LinuxPort, low_window: 0.0, ..CompoundConfig::default() }
    }
}

#[derive(Debug, Clone)]
pub struct Compound {
    pub cfg: CompoundConfig,
    pub frame: DelayFrame,
    /// Delay-based window, segments.
    dwnd: f64,
    srtt: f64,
    last_diff: f64,
    last_rtt: f64,
    last_win: f64,
    updates: u64,
    /// linux-port: the loss-based window (the port's `vegas->cwnd`), whole segments.
    lcwnd: f64,
    /// linux-port: `tcp_compound_init` is due (connection start, TX_START);
    /// it needs `snd_cwnd`, so it runs on the next ACK sample.
    init_pending: bool,
    /// linux-port: `beg_snd_una` (survives re-enabling, as in the port).
    beg_snd_una: u64,
    /// linux-port: `snd_cwnd_cnt`.
    cwnd_cnt: u64,
}

/// Parameters the 2006 port has no counterpart for (its constants are fixed).
const NOT_IN_PORT: &[&str] = &["alpha", "beta", "k", "zeta", "low_window", "round_rtt"];

pub fn info() -> AlgorithmInfo {
    let d = CompoundConfig::default();
    AlgorithmInfo {
        name: "compound",
        aliases: &["ctcp", "compound-tcp"],
        description: "Compound TCP: window = Reno cwnd + delay window dwnd; once per RTT dwnd += alpha win^k - 1 \
                      while fewer than gamma segments are queued, else dwnd -= zeta diff; on loss win (1 - beta).",
        params: vec![
            ParamInfo::new("variant", d.variant, "paper: Tan et al. 2006 / draft-sridharan-tcpm-ctcp with the choices below; linux-port: the 2006 out-of-tree Linux tcp_compound.c that ns-2 TCP-Linux ships (integer dwnd growth (qroot(old_wnd^3) >> 3) - 1 and diff from the segments sent in the previous round, half-segment fixed point, dwnd also updated in slow start, Reno halving of the whole window with dwnd kept only if both parts fit, dwnd folded into cwnd on TX_START; takes only gamma, min_samples, restart_on_idle)", "Tan et al. 2006; Castellani & Hemminger tcp_compound.c (2006), as in ns-2.35 tcp/linux"),
            ParamInfo::new("alpha", d.alpha, "dwnd growth alpha win^k - 1 per RTT (paper variant)", "Tan et al. 2006; draft-sridharan-tcpm-ctcp"),
            ParamInfo::new("beta", d.beta, "window after a loss = win (1 - beta) (paper variant)", "Tan et al. 2006"),
            ParamInfo::new("k", d.k, "exponent of the dwnd growth, HSTCP-like response (paper variant)", "Tan et al. 2006 (ports: 0.75; CCP 0.8 [S])"),
            ParamInfo::new("zeta", d.zeta, "dwnd -= zeta diff per RTT once diff >= gamma (paper variant)", "Tan et al. 2006 (ns-3 port 0.03 [S])"),
            ParamInfo::new("gamma", d.gamma, "segments queued (diff) at which dwnd stops growing (linux-port compares in half-segments)", "Tan et al. 2006"),
            ParamInfo::new("low_window", d.low_window, "dwnd is updated only while win >= low_window segments (paper variant; the 2006 port has none)", "ns-3 port (HSTCP Low_Window) [S]; draft value unverified"),
            ParamInfo::new("round_rtt", d.round_rtt, "RTT of the round in diff = win (1 - baseRTT/RTT): min (as the Linux port), mean, last, srtt (paper variant)", "Linux tcp_compound.c [S]; unspecified in the paper"),
            ParamInfo::new("min_samples", d.min_samples, "RTT samples a round needs for its dwnd update", "Linux tcp_compound.c cntRTT > 2 [S]"),
            ParamInfo::new("restart_on_idle", d.restart_on_idle, "re-initialise when a segment is sent with nothing in flight (Linux CA_EVENT_TX_START): a fresh round; linux-port also forgets baseRTT and folds dwnd into cwnd. ns-2 TCP-Linux raises no TX_START: false matches it", "Linux tcp_compound_cwnd_event; ns-2.35 tcp-linux.cc"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Compound::from_params(map, field)?))
}

/// The once-per-RTT dwnd rule: `diff < gamma` -> `dwnd + max(alpha win^k - 1, 0)`,
/// else `max(dwnd - zeta diff, 0)`.
pub fn dwnd_update(cfg: &CompoundConfig, dwnd: f64, win: f64, diff: f64) -> f64 {
    if diff < cfg.gamma {
        dwnd + (cfg.alpha * win.powf(cfg.k) - 1.0).max(0.0)
    } else {
        (dwnd - cfg.zeta * diff).max(0.0)
    }
}

/// The loss rule: `(cwnd_new, dwnd_new)` = `(cwnd/2, max(win (1 - beta) - cwnd/2, 0))`.
pub fn on_loss(cfg: &CompoundConfig, cwnd: f64, dwnd: f64) -> (f64, f64) {
    let win = cwnd + dwnd;
    let c = cwnd / 2.0;
    (c, (win * (1.0 - cfg.beta) - c).max(0.0))
}

/// `fls64`: the 1-based index of the highest set bit, 0 for 0.
fn fls64(a: u64) -> u32 {
    64 - a.leading_zeros()
}

/// The port's `div64_64`: a 64-bit divisor above 2^32 is shifted down to 32
/// bits (the dividend with it) before dividing.
fn div64_64(dividend: u64, divisor: u64) -> u64 {
    let (mut n, mut d) = (dividend, divisor);
    if divisor > 0xffff_ffff {
        let shift = fls64(divisor >> 32);
        d = divisor >> shift;
        n >>= shift;
    }
    if d == 0 {
        return u64::MAX; // not reached: the caller stops before dividing by 0
    }
    n / d
}

/// The port's `qroot(a)`: the quartic root by integer Newton-Raphson from
/// `1 << (fls64(a) >> 2)`, `x <- (3x + a / x^3) / 4` (`u32`), until two
/// iterates differ by at most 1. It is within one of `a^(1/4)`.
pub fn port_qroot(a: u64) -> u32 {
    let mut x: u32 = 1u32 << (fls64(a) >> 2);
    loop {
        let x1 = x;
        let x3 = (x as u64).wrapping_mul(x as u64).wrapping_mul(x as u64);
        if x3 == 0 {
            return x;
        }
        x = 3u32.wrapping_mul(x).wrapping_add(div64_64(a, x3) as u32) / 4;
        if (x1 as i64 - x as i64).abs() <= 1 {
            return x;
        }
    }
}

/// The port's dwnd growth per round: `x = qroot(old_wnd^3) >> 3` (alpha =
/// 1/8 as `TCP_COMPOUND_ALPHA = 3`, k = 3/4), then `x - 1` if `x > 1`, else
/// 0. Zero below about 40 segments.
pub fn port_growth(old_wnd: u32) -> u32 {
    let v = old_wnd as u64;
    let x = port_qroot(v.wrapping_mul(v).wrapping_mul(v)) >> 3;
    x.saturating_sub(1) // `if (x > 1) dwnd = x - 1; else dwnd = 0;`
}

/// The port's dwnd decrease at `diff >= gamma` (`TCP_COMPOUND_BETA = 1`,
/// the paper's zeta, half-segment fixed point): 0 if `dwnd << 1 < diff`,
/// else `((dwnd << 1) - diff) >> 1`, i.e. `dwnd - ceil(diff / 2)` in segments.
pub fn port_decrease(dwnd: u64, diff_half: u64) -> u64 {
    if (dwnd << V_PARAM_SHIFT) < diff_half {
        0
    } else {
        ((dwnd << V_PARAM_SHIFT) - diff_half) >> V_PARAM_SHIFT
    }
}

impl Compound {
    pub fn new(cfg: CompoundConfig) -> Self {
        let port = cfg.variant == Variant::LinuxPort;
        let mut frame = DelayFrame::new(port, cfg.restart_on_idle);
        // The paper form keeps baseRTT over idle restarts (as v1.3 of the
        // port: "CTCP spec keeps baseRTT"); the 2006 port's
        // tcp_compound_init forgets it.
        frame.keep_base_on_restart = !port;
        Compound {
            cfg,
            frame,
            dwnd: 0.0,
            srtt: 0.0,
            last_diff: f64::NAN,
            last_rtt: f64::NAN,
            last_win: f64::NAN,
            updates: 0,
            lcwnd: 0.0,
            init_pending: true,
            beg_snd_una: 0,
            cwnd_cnt: 0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let d = CompoundConfig::default();
        let restart_on_idle = p.bool("restart_on_idle", d.restart_on_idle)?;
        if p.pick("variant", d.variant)? == Variant::LinuxPort {
            if let Some(k) = NOT_IN_PORT.iter().find(|k| map.contains_key(**k)) {
                return Err(SpecError::new(
                    format!("{field}.params.{k}"),
                    "not a parameter of variant linux-port (its constants are fixed; it takes gamma, min_samples, restart_on_idle)".into(),
                ));
            }
            let d = CompoundConfig::linux_port();
            return Ok(Compound::new(CompoundConfig {
                gamma: p.f64("gamma", d.gamma, |x| x > 0.0, "a number of segments > 0")?,
                min_samples: p.u64(
                    "min_samples",
                    d.min_samples as u64,
                    |x| (1..=1000).contains(&x),
                    "a count in 1..=1000",
                )? as u32,
                restart_on_idle,
                ..d
            }));
        }
        let round_rtt = p.pick("round_rtt", d.round_rtt)?;
        Ok(Compound::new(CompoundConfig {
            alpha: p.f64("alpha", d.alpha, |x| x > 0.0, "a number > 0")?,
            beta: p.f64("beta", d.beta, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?,
            k: p.f64("k", d.k, |x| x > 0.0 && x < 1.0, "an exponent in (0, 1)")?,
            zeta: p.f64("zeta", d.zeta, |x| x >= 0.0, "a number >= 0")?,
            gamma: p.f64("gamma", d.gamma, |x| x > 0.0, "a number of segments > 0")?,
            low_window: p.f64("low_window", d.low_window, |x| x >= 0.0, "a window >= 0 segments")?,
            round_rtt,
            min_samples: p.u64(
                "min_samples",
                d.min_samples as u64,
                |x| (1..=1000).contains(&x),
                "a count in 1..=1000",
            )? as u32,
            restart_on_idle,
            ..d
        }))
    }

    /// The delay-based window, segments.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// dwnd updates applied (rounds with enough samples at a large enough window).
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Keeps dwnd inside the window the sender enforces (it may have lowered
    /// cwnd itself, e.g. after idle): the loss-based part keeps at least one
    /// segment.
    fn fit(&mut self, w: &Window) {
        self.dwnd = self.dwnd.min((w.cwnd - 1.0).max(0.0));
    }

    fn round_rtt(&self) -> f64 {
        let r = &self.frame.round;
        match self.cfg.round_rtt {
            RoundRtt::Min => r.min,
            RoundRtt::Mean => r.mean(),
            RoundRtt::Last => r.last,
            RoundRtt::Srtt => self.srtt,
        }
    }

    /// The loss response: sets dwnd, returns the new total window.
    fn reduce(&mut self, w: &Window) -> f64 {
        self.fit(w);
        let (c, d) = on_loss(&self.cfg, w.cwnd - self.dwnd, self.dwnd);
        self.dwnd = d;
        (c + d).max(2.0)
    }
}

impl Compound {
    /// The loss-based part (linux-port: the port's `cwnd`; paper: `win - dwnd`).
    pub fn lcwnd(&self) -> f64 {
        match self.cfg.variant {
            Variant::LinuxPort => self.lcwnd,
            Variant::Paper => self.last_win - self.dwnd,
        }
    }

    /// `tcp_compound_cong_avoid` of the 2006 port (ns-2.35
    /// `tcp/linux/src/tcp_compound.c`), called where Linux calls
    /// `cong_avoid` (ACKs of new data in Open, Disorder and Loss; the port
    /// never reads `doing_vegas_now`, so the state only restarts rounds):
    /// 1. follow external decreases of `snd_cwnd` (loss, RTO): if `cwnd +
    ///    dwnd > snd_cwnd`, then `cwnd = snd_cwnd, dwnd = 0` when either part
    ///    alone exceeds `snd_cwnd`, else `cwnd = snd_cwnd - dwnd`;
    /// 2. nothing more unless `tcp_is_cwnd_limited`;
    /// 3. loss-based part, per ACK: +1 while `cwnd <= snd_ssthresh` (the
    ///    loss-based part, not the whole window, is compared); otherwise
    ///    `snd_cwnd_cnt` counts ACKs and cwnd grows by one once it reaches
    ///    `snd_cwnd` (the whole window: 1/win per ACK);
    /// 4. on the ACK passing `beg_snd_nxt`: `old_wnd = beg_snd_nxt -
    ///    beg_snd_una` (segments sent in the previous round), the edges move
    ///    on; with `cntRTT > 2`, [`fixed_point_diff`] of `old_wnd`, baseRTT
    ///    and the round's minimum RTT; `diff < gamma << 1` -> `dwnd +=`
    ///    [`port_growth`]`(old_wnd)`, else [`port_decrease`]. No slow-start,
    ///    low-window or CA-state test;
    /// 5. `snd_cwnd = cwnd + dwnd`.
    fn on_ack_port(&mut self, w: &mut Window, s: &AckSample) {
        let snd = w.cwnd.max(0.0).floor() as u64;
        let (mut c, mut d) = (self.lcwnd as u64, self.dwnd as u64);
        if c + d > snd {
            if c > snd || d > snd {
                c = snd;
                d = 0;
            } else {
                c = snd - d;
            }
        }
        self.lcwnd = c as f64;
        self.dwnd = d as f64;
        if !s.cwnd_limited {
            return;
        }
        let mut inc = false;
        if c as f64 <= w.ssthresh {
            inc = true;
        } else if self.cwnd_cnt < snd {
            self.cwnd_cnt += 1;
        }
        if self.cwnd_cnt >= snd {
            inc = true;
            self.cwnd_cnt = 0;
        }
        if inc {
            c += 1; // snd_cwnd_clamp is the receiver window, enforced by the sender
        }
        if self.frame.round.ended_by(s.snd_una) {
            // Linux's sequence numbers never run backwards; a sender here may
            // rewind snd_nxt after a timeout, hence saturating.
            let old_wnd = self.frame.round.beg_snd_nxt.saturating_sub(self.beg_snd_una).min(u32::MAX as u64) as u32;
            self.beg_snd_una = self.frame.round.beg_snd_nxt;
            self.frame.round.beg_snd_nxt = s.snd_nxt;
            if self.frame.round.count >= self.cfg.min_samples {
                let rtt = self.frame.round.min;
                let (diff, _) = fixed_point_diff(old_wnd, to_us(self.frame.base_rtt), to_us(rtt));
                self.last_diff = diff as f64 / 2.0;
                self.last_rtt = rtt;
                if (diff as f64) < self.cfg.gamma * (1u32 << V_PARAM_SHIFT) as f64 {
                    d += port_growth(old_wnd) as u64;
                } else {
                    d = port_decrease(d, diff as u64);
                }
                self.updates += 1;
            }
            self.frame.round.clear();
        }
        self.lcwnd = c as f64;
        self.dwnd = d as f64;
        w.cwnd = (c + d) as f64;
    }
}

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn on_send(&mut self, _now: f64, _bytes: u32, in_flight: u64) {
        if self.frame.on_send(in_flight) && self.cfg.variant == Variant::LinuxPort {
            // TX_START -> tcp_compound_init: dwnd = 0, cwnd = snd_cwnd (the
            // whole window becomes loss-based; set on the next ACK sample,
            // which sees the window), baseRTT forgotten (by the frame).
            self.dwnd = 0.0;
            self.init_pending = true;
        }
    }

    fn on_ack_sample(&mut self, w: &Window, s: &AckSample) {
        self.frame.on_ack_sample(s);
        self.srtt = s.srtt;
        if self.cfg.variant == Variant::LinuxPort && self.init_pending {
            self.lcwnd = w.cwnd.max(0.0).floor();
            self.dwnd = 0.0;
            self.init_pending = false;
        }
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if self.cfg.variant == Variant::LinuxPort {
            self.on_ack_port(w, s);
            self.last_win = w.cwnd;
            return;
        }
        self.fit(w);
        self.last_win = w.cwnd;
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        let mut avoid = true;
        if w.in_slow_start() {
            avoid = Reno::slow_start_float(w, s.acked as f64) > 0.0;
        }
        if avoid {
            // The loss-based part grows by 1/win per ACK: one segment per RTT.
            w.cwnd += 1.0 / w.cwnd;
        }
        if self.frame.enabled && self.frame.round.ended_by(s.snd_una) {
            self.frame.round.beg_snd_nxt = s.snd_nxt;
            let rtt = self.round_rtt();
            let base = self.frame.base_rtt;
            if self.frame.round.count >= self.cfg.min_samples && !w.in_slow_start() && base.is_finite() && rtt > 0.0 {
                let win = w.cwnd;
                let diff = win * (1.0 - base / rtt);
                self.last_diff = diff;
                self.last_rtt = rtt;
                if win >= self.cfg.low_window {
                    let cwnd = win - self.dwnd;
                    self.dwnd = dwnd_update(&self.cfg, self.dwnd, win, diff);
                    w.cwnd = cwnd + self.dwnd;
                    self.updates += 1;
                }
            }
            self.frame.round.clear();
        }
        self.last_win = w.cwnd;
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        match self.cfg.variant {
            // tcp_reno_ssthresh on the whole window, max(snd_cwnd >> 1, 2);
            // dwnd is left to the next cong_avoid (step 1 of on_ack_port).
            Variant::LinuxPort => {
                self.cwnd_cnt = 0;
                ((w.cwnd.max(0.0).floor() as u64 >> 1).max(2)) as f64
            }
            Variant::Paper => self.reduce(w),
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: f64) {
        if self.cfg.variant == Variant::Paper {
            self.fit(w);
        }
    }

    /// Linux `vegas_state`.
    fn on_state(&mut self, _w: &mut Window, new: CaState, _c: &Conn) {
        self.frame.set_state(new);
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        match self.cfg.variant {
            // snd_cwnd = 1 and snd_cwnd_cnt = 0 (tcp_enter_loss); the next
            // cong_avoid finds cwnd + dwnd > 1 and clears dwnd.
            Variant::LinuxPort => self.cwnd_cnt = 0,
            Variant::Paper => self.dwnd = 0.0,
        }
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend_from_slice(&[
            ("dwnd", self.dwnd),
            ("lwnd", self.lcwnd()),
            ("diff", self.last_diff),
            ("round_rtt", self.last_rtt),
            ("base_rtt", if self.frame.base_rtt.is_finite() { self.frame.base_rtt } else { f64::NAN }),
            ("open", (self.frame.state() == CaState::Open) as u8 as f64),
        ]);
    }
}

#[cfg(test)]
mod tests;
