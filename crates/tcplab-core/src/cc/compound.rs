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
use super::filters::CaState;
use super::reno::Reno;
use super::{AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;

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

const PARAMS: &[&str] =
    &["variant", "alpha", "beta", "k", "zeta", "gamma", "low_window", "round_rtt", "min_samples", "restart_on_idle"];

/// Parameters the 2006 port has no counterpart for (its constants are fixed).
const NOT_IN_PORT: &[&str] = &["alpha", "beta", "k", "zeta", "low_window", "round_rtt"];

pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "compound",
        aliases: &["ctcp", "compound-tcp"],
        description: "Compound TCP: window = Reno cwnd + delay window dwnd; once per RTT dwnd += alpha win^k - 1 \
                      while fewer than gamma segments are queued, else dwnd -= zeta diff; on loss win (1 - beta).",
        params: vec![
            ParamInfo { name: "variant", default: "paper", description: "paper: Tan et al. 2006 / draft-sridharan-tcpm-ctcp with the choices below; linux-port: the 2006 out-of-tree Linux tcp_compound.c that ns-2 TCP-Linux ships (integer dwnd growth (qroot(old_wnd^3) >> 3) - 1 and diff from the segments sent in the previous round, half-segment fixed point, dwnd also updated in slow start, Reno halving of the whole window with dwnd kept only if both parts fit, dwnd folded into cwnd on TX_START; takes only gamma, min_samples, restart_on_idle)", source: "Tan et al. 2006; Castellani & Hemminger tcp_compound.c (2006), as in ns-2.35 tcp/linux" },
            ParamInfo { name: "alpha", default: "0.125", description: "dwnd growth alpha win^k - 1 per RTT (paper variant)", source: "Tan et al. 2006; draft-sridharan-tcpm-ctcp" },
            ParamInfo { name: "beta", default: "0.5", description: "window after a loss = win (1 - beta) (paper variant)", source: "Tan et al. 2006" },
            ParamInfo { name: "k", default: "0.75", description: "exponent of the dwnd growth, HSTCP-like response (paper variant)", source: "Tan et al. 2006 (ports: 0.75; CCP 0.8 [S])" },
            ParamInfo { name: "zeta", default: "1", description: "dwnd -= zeta diff per RTT once diff >= gamma (paper variant)", source: "Tan et al. 2006 (ns-3 port 0.03 [S])" },
            ParamInfo { name: "gamma", default: "30", description: "segments queued (diff) at which dwnd stops growing (linux-port compares in half-segments)", source: "Tan et al. 2006" },
            ParamInfo { name: "low_window", default: "38", description: "dwnd is updated only while win >= low_window segments (paper variant; the 2006 port has none)", source: "ns-3 port (HSTCP Low_Window) [S]; draft value unverified" },
            ParamInfo { name: "round_rtt", default: "min", description: "RTT of the round in diff = win (1 - baseRTT/RTT): min (as the Linux port), mean, last, srtt (paper variant)", source: "Linux tcp_compound.c [S]; unspecified in the paper" },
            ParamInfo { name: "min_samples", default: "3", description: "RTT samples a round needs for its dwnd update", source: "Linux tcp_compound.c cntRTT > 2 [S]" },
            ParamInfo { name: "restart_on_idle", default: "true", description: "re-initialise when a segment is sent with nothing in flight (Linux CA_EVENT_TX_START): a fresh round; linux-port also forgets baseRTT and folds dwnd into cwnd. ns-2 TCP-Linux raises no TX_START: false matches it", source: "Linux tcp_compound_cwnd_event; ns-2.35 tcp-linux.cc" },
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
        let p = Params::new(map, field, PARAMS)?;
        let restart_on_idle = p.bool("restart_on_idle", true)?;
        if p.choice("variant", "paper", &["paper", "linux-port"])? == "linux-port" {
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
        let d = CompoundConfig::default();
        let round_rtt = match p.choice("round_rtt", "min", &["min", "mean", "last", "srtt"])? {
            "mean" => RoundRtt::Mean,
            "last" => RoundRtt::Last,
            "srtt" => RoundRtt::Srtt,
            _ => RoundRtt::Min,
        };
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

    fn ssthresh(&mut self, w: &Window, event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        if event == LossEvent::FastRecovery {
            self.frame.enter_recovery();
        }
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
        self.frame.exit_recovery();
        if self.cfg.variant == Variant::Paper {
            self.fit(w);
        }
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.frame.enter_loss();
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
mod tests {
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
        assert!(!c.frame.enabled);
        let mut w = Window { cwnd: 100.0, ssthresh: 100.0 };
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
        // A duplicate ACK (Disorder) ends the round; the next ACK of new data
        // reopens with a fresh round starting at its snd_nxt.
        let (mut c, mut w) = in_ca(CompoundConfig::default(), 1000.0, 0.0, 0.1);
        let dup = AckSample { duplicate: true, ..ack(1, 100, 0.1) };
        c.on_ack_sample(&w, &dup);
        assert!(!c.frame.enabled);
        inside_round(&mut c, &mut w, 5, 0.1);
        assert!(c.frame.enabled);
        assert_eq!(c.frame.round.beg_snd_nxt, 110);
        // In the Loss state (after an RTO) rounds pass without dwnd updates,
        // even at a large window above ssthresh.
        c.ssthresh(&w, LossEvent::Timeout, 1000, 0.0);
        c.on_rto(&mut w, 0.0);
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
        // Segments up to END + 1000 were sent before the timeout: the Loss
        // state lasts until they are acknowledged.
        c.on_ack_sample(&w, &ack(END - 5, END + 1000, secs(BASE_US)));
        c.ssthresh(&w, LossEvent::Timeout, 1000, 0.0);
        let mut w = Window { cwnd: 1.0, ssthresh: 500.0 };
        c.on_rto(&mut w, 0.0);
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
}
