//! TCP Vegas (`vegas`): once per RTT compare the window with what the
//! measured RTT says the path carries, and move cwnd by one segment to keep
//! between alpha and beta segments queued in the network.
//!
//! Sources:
//! - Linux `net/ipv4/tcp_vegas.c` (default semantics), per the reference
//!   section 9.2: module parameters alpha = 2, beta = 4, gamma = 1 (segments).
//!   The measurement frame (baseRTT, per-round minRTT and cntRTT keyed on
//!   `beg_snd_nxt`, enabled only in Open, re-initialised on TX_START) is
//!   [`super::delay::DelayFrame`]. `tcp_vegas_cong_avoid`:
//!   - not `doing_vegas_now` -> `tcp_reno_cong_avoid`;
//!   - on the ACK passing `beg_snd_nxt` (once per RTT): `beg_snd_nxt =
//!     snd_nxt`; if `cntRTT <= 2` a Reno step ("only 1 ACK per RTT ... almost
//!     certainly delayed ACKs"); else with `rtt = minRTT`:
//!     `target_cwnd = cwnd * baseRTT / rtt`, `diff = cwnd * (rtt - baseRTT) /
//!     baseRTT` (integers);
//!     - slow start and `diff > gamma`: `cwnd = min(cwnd, target_cwnd + 1)`,
//!       `ssthresh = min(ssthresh, cwnd)` (leave slow start);
//!     - slow start otherwise: `tcp_slow_start(acked)`;
//!     - congestion avoidance: `diff > beta` -> `cwnd -= 1`, `ssthresh =
//!       min(ssthresh, cwnd)`; `diff < alpha` -> `cwnd += 1`; else hold;
//!     - then cwnd >= 2 and `ssthresh = tcp_current_ssthresh` =
//!       `max(ssthresh, (cwnd >> 1) + (cwnd >> 2))`; the round's samples are
//!       cleared;
//!   - other ACKs: `tcp_slow_start(acked)` in slow start, nothing in
//!     congestion avoidance;
//!   - `ssthresh()` is Reno's `max(cwnd >> 1, 2)`.
//! - Linux 2.6.16-2.6.22 `net/ipv4/tcp_vegas.c` (variant `linux-2.6`, the
//!   module ns-2's TCP-Linux runs, hence ssm-interactions'). Read in
//!   ns-2.35 `tcp/linux/src/tcp_vegas.c` ("Modified Linux module source code
//!   from linux-2.6.22.6", repository hbatmit/ns2.35) and in a copy of the
//!   `rtt_sample`-era (2.6.17-2.6.21 API) file, which has the same rules; see
//!   `Vegas::per_rtt_linux26` for each rule. Changed in 2.6.23/2.6.24 (read
//!   in fulei0920/linux-2.6.24): the slow-start exit became `diff > gamma &&
//!   snd_ssthresh > 2` outside the slow-start test, so it also fires in
//!   congestion avoidance after a loss; that form is not implemented.
//! - L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a
//!   Global Internet", IEEE JSAC 13(8), 1995 (variant `paper`, reference
//!   section 9.1): alpha = 1, beta = 3, gamma = 1; `Diff = (Expected -
//!   Actual) BaseRTT` with Expected = cwnd/BaseRTT and Actual = cwnd/RTT, i.e.
//!   `cwnd (RTT - BaseRTT) / RTT` (not truncated); slow start doubles only
//!   every other RTT and ends when Diff > gamma, decreasing cwnd by 1/8;
//!   window kept after a loss 3/4 (`loss_keep`).
//!
//! Deviations: ssthresh is kept >= 2 where Linux can lower it to 1 (no
//! behavioural difference: cwnd >= 2 is in congestion avoidance either way).
//! Linux's per-round step and its Vegas slow start are not gated by
//! `tcp_is_cwnd_limited` (only its Reno fallback is); Linux's cwnd
//! validation (RFC 2861, `tcp_cwnd_application_limited`) then gives back half
//! of the unused window every RTO. The sender has no cwnd validation, so in
//! the `linux` and `paper` variants growth waits for the window to limit the
//! sender (decreases apply at once): ungated, a flow held back by a
//! 20-segment receiver window grew to 7,780 segments in 20 s. `linux-2.6`
//! keeps the ungated step of the 2.6.22 module ns-2's TCP-Linux runs. The paper's
//! fine-grained retransmission timer and its "decrease only once per window"
//! check are not modelled: the sender's recovery applies, and `loss_keep` is
//! the only part of the paper's loss response kept. The CA state and idle
//! restart are inferred (see `delay.rs`). Window growth stays integral in
//! both variants (Linux integer cwnd with `snd_cwnd_cnt` for the Reno steps).

use super::delay::{fixed_point_diff, to_us, DelayFrame, V_PARAM_SHIFT};
use super::reno::{self, Reno};
use super::{
    variant_default, AckSample, AlgorithmInfo, CaState, Choice, CongestionControl, Conn, LossEvent, ParamInfo, Params,
    Window,
};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Mainline `tcp_vegas.c` (2.6.32 on).
    Linux,
    /// `tcp_vegas.c` of Linux 2.6.16-2.6.22 (ns-2 TCP-Linux).
    Linux26,
    Paper,
}

param_choice!(Variant { Linux => "linux", Linux26 => "linux-2.6", Paper => "paper" });

/// Vegas's parameters; the variants' constructors are where each default
/// is written (`Default`: variant linux).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasConfig {
    pub variant: Variant,
    /// Increase below this many segments queued.
    pub alpha: f64,
    /// Decrease above this many segments queued.
    pub beta: f64,
    /// Leave slow start above this many segments queued.
    pub gamma: f64,
    /// Fraction of cwnd kept as ssthresh after a loss.
    pub loss_keep: f64,
    pub restart_on_idle: bool,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig::linux()
    }
}

impl VegasConfig {
    pub fn for_variant(variant: Variant) -> Self {
        match variant {
            Variant::Linux => VegasConfig::linux(),
            Variant::Linux26 => VegasConfig::linux26(),
            Variant::Paper => VegasConfig::paper(),
        }
    }

    fn variants() -> Vec<(&'static str, VegasConfig)> {
        [Variant::Linux, Variant::Linux26, Variant::Paper].map(|v| (v.name(), VegasConfig::for_variant(v))).into()
    }

    pub fn linux() -> Self {
        VegasConfig {
            variant: Variant::Linux,
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            loss_keep: 0.5,
            restart_on_idle: true,
        }
    }

    /// Linux 2.6.16-2.6.22: the same defaults as mainline, held in
    /// half-segments there (`alpha = 2<<1`, `beta = 4<<1`, `gamma = 1<<1`).
    pub fn linux26() -> Self {
        VegasConfig { variant: Variant::Linux26, ..VegasConfig::linux() }
    }

    pub fn paper() -> Self {
        VegasConfig {
            variant: Variant::Paper,
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
            loss_keep: 0.75,
            restart_on_idle: true,
        }
    }
}

/// Linux 2.6.22 `tcp_slow_start` without ABC (`sysctl_tcp_abc = 0`) or
/// limited slow start (`sysctl_tcp_max_ssthresh = 0`): `snd_cwnd_cnt +=
/// snd_cwnd`, then one segment per `snd_cwnd` of credit, i.e. +1 per ACK
/// whatever it covers. It does not look at ssthresh.
fn slow_start_2622(w: &mut Window, cwnd_cnt: &mut u64) {
    let mut cwnd = (w.cwnd as u64).max(1);
    *cwnd_cnt += cwnd;
    while *cwnd_cnt >= cwnd {
        *cwnd_cnt -= cwnd;
        cwnd += 1;
    }
    w.cwnd = cwnd as f64;
}

/// Linux 2.6.22 `tcp_reno_cong_avoid` (ABC off): nothing unless
/// window-limited; slow start while `snd_cwnd <= snd_ssthresh`; otherwise
/// `snd_cwnd_cnt` counts ACKs and cwnd grows by one once it reaches cwnd.
fn reno_2622(w: &mut Window, cwnd_cnt: &mut u64, cwnd_limited: bool) {
    if !cwnd_limited {
        return;
    }
    if w.cwnd <= w.ssthresh {
        slow_start_2622(w, cwnd_cnt);
    } else if *cwnd_cnt >= w.cwnd as u64 {
        w.cwnd = w.cwnd.floor() + 1.0;
        *cwnd_cnt = 0;
    } else {
        *cwnd_cnt += 1;
    }
}

/// What the last per-RTT step saw (for tests and traces).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasStep {
    pub rtt: f64,
    pub base_rtt: f64,
    pub target: f64,
    pub diff: f64,
}

#[derive(Debug, Clone)]
pub struct Vegas {
    pub cfg: VegasConfig,
    pub frame: DelayFrame,
    reno: Reno,
    /// Paper: slow start grows in this round (every other round).
    ss_grow: bool,
    /// linux-2.6: `beg_snd_una`, the left edge of the round being measured
    /// (the right edge of the one before). Not reset by `vegas_enable` or
    /// `tcp_vegas_init`, as in the period code; 0 at connection start.
    beg_snd_una: u64,
    /// linux-2.6: `beg_snd_cwnd`, cwnd at the last round boundary (same
    /// persistence; 0 at connection start).
    beg_snd_cwnd: u32,
    last: Option<VegasStep>,
    steps: u64,
}

pub fn info() -> AlgorithmInfo {
    let v = VegasConfig::variants();
    AlgorithmInfo {
        name: "vegas",
        aliases: &["tcp-vegas"],
        description: "TCP Vegas: once per RTT, +1 segment if fewer than alpha segments are queued \
                      (cwnd (RTT - baseRTT) / baseRTT), -1 if more than beta; Reno outside the Open state (Linux tcp_vegas.c).",
        params: vec![
            ParamInfo::new("variant", VegasConfig::default().variant, "linux: tcp_vegas.c since 2.6.32 (alpha 2, beta 4, integer diff over baseRTT, slow start every RTT, exit to target+1); linux-2.6: tcp_vegas.c of 2.6.16-2.6.22 as in ns-2 TCP-Linux (half-segment fixed point, diff from the segments sent in the previous round, exit only in slow start with ssthresh = 2, cwnd steps toward the previous round's cwnd +-1, no tcp_current_ssthresh); paper: Brakmo & Peterson 1995 (alpha 1, beta 3, Diff over RTT, slow start every other RTT, exit with cwnd -= cwnd/8, loss keeps 3/4); sets the defaults of alpha, beta, loss_keep", "Linux tcp_vegas.c (mainline; 2.6.22.6 as vendored in ns-2.35 tcp/linux); Brakmo & Peterson, JSAC 1995"),
            ParamInfo::new("alpha", variant_default(&v, |c| c.alpha), "segments queued below which cwnd grows by one per RTT (linux-2.6 compares in half-segments)", "Linux module param alpha; paper"),
            ParamInfo::new("beta", variant_default(&v, |c| c.beta), "segments queued above which cwnd shrinks by one per RTT (linux-2.6 compares in half-segments)", "Linux module param beta; paper"),
            ParamInfo::new("gamma", variant_default(&v, |c| c.gamma), "segments queued above which slow start ends", "Linux module param gamma; paper"),
            ParamInfo::new("loss_keep", variant_default(&v, |c| c.loss_keep), "ssthresh = max(loss_keep x cwnd, 2) on a loss (paper only; linux and linux-2.6 use Reno's cwnd >> 1)", "Linux tcp_reno_ssthresh; reference s0 (paper 3/4)"),
            ParamInfo::new("restart_on_idle", variant_default(&v, |c| c.restart_on_idle), "re-initialise (forget baseRTT, new round) when a segment is sent with nothing in flight (Linux CA_EVENT_TX_START); ns-2 TCP-Linux raises no TX_START: false matches it", "Linux tcp_vegas_cwnd_event; ns-2.35 tcp-linux.cc"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Vegas::from_params(map, field)?))
}

impl Vegas {
    pub fn new(cfg: VegasConfig) -> Self {
        Vegas {
            cfg,
            frame: DelayFrame::new(cfg.variant != Variant::Paper, cfg.restart_on_idle),
            reno: Reno::new(reno::Mode::Linux),
            ss_grow: true,
            beg_snd_una: 0,
            beg_snd_cwnd: 0,
            last: None,
            steps: 0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let base = VegasConfig::for_variant(p.pick("variant", VegasConfig::default().variant)?);
        let alpha = p.f64("alpha", base.alpha, |x| x >= 0.0, "a number of segments >= 0")?;
        let beta = p.f64("beta", base.beta, |x| x >= alpha, "a number of segments >= alpha")?;
        let gamma = p.f64("gamma", base.gamma, |x| x >= 0.0, "a number of segments >= 0")?;
        let loss_keep = p.f64("loss_keep", base.loss_keep, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?;
        let restart_on_idle = p.bool("restart_on_idle", base.restart_on_idle)?;
        Ok(Vegas::new(VegasConfig { alpha, beta, gamma, loss_keep, restart_on_idle, ..base }))
    }

    /// The last per-RTT Vegas step, if any.
    pub fn last_step(&self) -> Option<VegasStep> {
        self.last
    }

    /// Per-RTT Vegas steps taken (rounds with more than two samples).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Segments queued by this flow according to the variant's formula, and
    /// the window the path carries (`target_cwnd`), from `cwnd`, the round's
    /// RTT and baseRTT.
    pub fn diff_and_target(&self, cwnd: f64, rtt: f64, base: f64) -> (f64, f64) {
        match self.cfg.variant {
            // Integer arithmetic: diff = cwnd * (rtt - baseRTT) / baseRTT,
            // target_cwnd = cwnd * baseRTT / rtt, truncated.
            Variant::Linux => ((cwnd * (rtt - base) / base).floor(), (cwnd * base / rtt).floor()),
            // Half-segment fixed point (here `cwnd` stands for old_wnd).
            Variant::Linux26 => {
                let (diff, target) = fixed_point_diff(cwnd as u32, to_us(base), to_us(rtt));
                (diff as f64 / 2.0, target as f64 / 2.0)
            }
            // (Expected - Actual) * BaseRTT with Actual = cwnd / RTT.
            Variant::Paper => (cwnd * (rtt - base) / rtt, cwnd * base / rtt),
        }
    }

    fn slow_start(&mut self, w: &mut Window, acked: u32) {
        if self.cfg.variant == Variant::Paper && !self.ss_grow {
            return;
        }
        Reno::slow_start(w, acked as u64);
    }

    /// The once-per-RTT step (`tcp_vegas_cong_avoid` after `after(ack, beg_snd_nxt)`).
    fn per_rtt(&mut self, w: &mut Window, s: &AckSample) {
        let rtt = self.frame.round.min;
        let base = self.frame.base_rtt;
        let (diff, target) = self.diff_and_target(w.cwnd, rtt, base);
        self.last = Some(VegasStep { rtt, base_rtt: base, target, diff });
        self.steps += 1;
        if w.in_slow_start() {
            if diff > self.cfg.gamma {
                // Going too fast: leave slow start.
                w.cwnd = match self.cfg.variant {
                    // (linux-2.6 takes per_rtt_linux26 instead.)
                    Variant::Linux | Variant::Linux26 => w.cwnd.min(target + 1.0),
                    Variant::Paper => w.cwnd - (w.cwnd / 8.0).floor(),
                };
                w.ssthresh = w.ssthresh.min(w.cwnd);
            } else {
                self.slow_start(w, s.acked);
                self.ss_grow = !self.ss_grow;
            }
        } else if diff > self.cfg.beta {
            w.cwnd -= 1.0;
            w.ssthresh = w.ssthresh.min(w.cwnd);
        } else if diff < self.cfg.alpha {
            w.cwnd += 1.0;
        }
        if w.cwnd < 2.0 {
            w.cwnd = 2.0;
        }
        // tcp_current_ssthresh (not in a cwnd reduction: cong_avoid runs only in Open/Disorder/Loss).
        let c = w.cwnd as u64;
        w.ssthresh = w.ssthresh.max(((c >> 1) + (c >> 2)) as f64);
        // Linux can leave ssthresh at 1 here (cwnd 1 or 2 when it is lowered);
        // with cwnd >= 2 that is the same congestion avoidance as ssthresh 2.
        w.ssthresh = w.ssthresh.max(2.0);
    }
}

impl Vegas {
    /// The once-per-RTT step of Linux 2.6.16-2.6.22 `tcp_vegas_cong_avoid`,
    /// after the boundary bookkeeping (`old_wnd`, `old_snd_cwnd` are the
    /// previous round's). Source: ns-2.35 `tcp/linux/src/tcp_vegas.c` (from
    /// linux-2.6.22.6); the 2.6.17-2.6.21 file has the same rules.
    /// - `rtt = minRTT`; [`fixed_point_diff`] with `old_wnd`, the segments sent
    ///   in the previous round (`(beg_snd_nxt - beg_snd_una) / mss_cache`),
    ///   not cwnd;
    /// - slow start is `snd_cwnd <= snd_ssthresh` (equality included). There,
    ///   if `diff > gamma`: `snd_ssthresh = 2` and `snd_cwnd = min(snd_cwnd,
    ///   (target_cwnd >> V_PARAM_SHIFT) + 1)`; then, exit or not,
    ///   `tcp_slow_start` (+1). The exit is inside the slow-start test and
    ///   has no `ssthresh > 2` condition, so it never fires in congestion
    ///   avoidance (2.6.24's `diff > gamma && snd_ssthresh > 2` does);
    /// - congestion avoidance: `next = old_snd_cwnd - 1` if `diff > beta`,
    ///   `old_snd_cwnd + 1` if `diff < alpha`, else `old_snd_cwnd` (`u32`,
    ///   so 0 - 1 wraps); cwnd moves one segment toward `next`;
    /// - `snd_cwnd < 2` -> 2 (the `snd_cwnd_clamp` bound is the receiver
    ///   window, enforced by the sender). No `tcp_current_ssthresh` and no
    ///   ssthresh change in congestion avoidance.
    fn per_rtt_linux26(&mut self, w: &mut Window, old_wnd: u32, old_snd_cwnd: u32) {
        let rtt = self.frame.round.min;
        let base = self.frame.base_rtt;
        let (diff, target) = fixed_point_diff(old_wnd, to_us(base), to_us(rtt));
        self.last = Some(VegasStep { rtt, base_rtt: base, target: target as f64 / 2.0, diff: diff as f64 / 2.0 });
        self.steps += 1;
        let half = |x: f64| x * (1u32 << V_PARAM_SHIFT) as f64;
        let diff = diff as f64;
        if w.cwnd <= w.ssthresh {
            if diff > half(self.cfg.gamma) {
                // Going too fast: congestion avoidance from now on.
                w.ssthresh = 2.0;
                w.cwnd = w.cwnd.min(((target >> V_PARAM_SHIFT) + 1) as f64);
            }
            slow_start_2622(w, &mut self.reno.cwnd_cnt);
        } else {
            let next = if diff > half(self.cfg.beta) {
                old_snd_cwnd.wrapping_sub(1)
            } else if diff < half(self.cfg.alpha) {
                old_snd_cwnd.wrapping_add(1)
            } else {
                old_snd_cwnd
            };
            let cwnd = w.cwnd.floor();
            if next as f64 > cwnd {
                w.cwnd = cwnd + 1.0;
            } else if (next as f64) < cwnd {
                w.cwnd = cwnd - 1.0;
            }
        }
        if w.cwnd < 2.0 {
            w.cwnd = 2.0;
        }
    }

    /// `tcp_vegas_cong_avoid` of Linux 2.6.16-2.6.22.
    fn on_ack_linux26(&mut self, w: &mut Window, s: &AckSample) {
        if !self.frame.enabled {
            reno_2622(w, &mut self.reno.cwnd_cnt, s.cwnd_limited);
            return;
        }
        if self.frame.round.ended_by(s.snd_una) {
            // old_wnd: segments sent in the previous round. Linux's u32
            // sequence numbers never run backwards; a sender here may rewind
            // snd_nxt after a timeout, hence saturating.
            let old_wnd = self.frame.round.beg_snd_nxt.saturating_sub(self.beg_snd_una).min(u32::MAX as u64) as u32;
            let old_snd_cwnd = self.beg_snd_cwnd;
            // Save the extent of the current window for the end of the next RTT.
            self.beg_snd_una = self.frame.round.beg_snd_nxt;
            self.frame.round.beg_snd_nxt = s.snd_nxt;
            self.beg_snd_cwnd = w.cwnd.min(u32::MAX as f64) as u32;
            if self.frame.round.count <= 2 {
                reno_2622(w, &mut self.reno.cwnd_cnt, s.cwnd_limited);
            } else {
                self.per_rtt_linux26(w, old_wnd, old_snd_cwnd);
            }
            self.frame.round.clear();
        } else if w.cwnd <= w.ssthresh {
            slow_start_2622(w, &mut self.reno.cwnd_cnt);
        }
    }

    /// `tcp_vegas_cong_avoid` of current Linux (and the paper variant).
    fn on_ack_current(&mut self, w: &mut Window, s: &AckSample) {
        if !self.frame.enabled {
            self.reno.on_ack(w, s);
            return;
        }
        if self.frame.round.ended_by(s.snd_una) {
            // Save the extent of the current window for the end of the next RTT.
            self.frame.round.beg_snd_nxt = s.snd_nxt;
            if self.frame.round.count <= 2 {
                self.reno.on_ack(w, s);
            } else {
                self.per_rtt(w, s);
            }
            self.frame.round.clear();
        } else if w.in_slow_start() {
            self.slow_start(w, s.acked);
        }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_send(&mut self, _now: f64, _bytes: u32, in_flight: u64) {
        if self.frame.on_send(in_flight) {
            self.ss_grow = true;
        }
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.frame.on_ack_sample(s);
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if self.cfg.variant == Variant::Linux26 {
            self.on_ack_linux26(w, s);
            return;
        }
        let before = w.cwnd;
        self.on_ack_current(w, s);
        // Linux's per-round step and Vegas slow start do not test
        // tcp_is_cwnd_limited, but Linux's cwnd validation (RFC 2861,
        // tcp_cwnd_application_limited) gives back half of the unused window
        // every RTO. The sender has no cwnd validation, so growth waits for
        // the window to limit the sender instead: ungated, a flow held back
        // by a 20-segment receiver window grew to 7,780 segments in 20 s.
        if !s.cwnd_limited && w.cwnd > before {
            w.cwnd = before;
        }
    }

    fn ssthresh(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64) -> f64 {
        match self.cfg.variant {
            // tcp_reno_ssthresh: max(snd_cwnd >> 1, 2); snd_cwnd_cnt = 0.
            Variant::Linux | Variant::Linux26 => self.reno.ssthresh(w, event, in_flight, now),
            Variant::Paper => {
                self.reno.cwnd_cnt = 0;
                (w.cwnd * self.cfg.loss_keep).floor().max(2.0)
            }
        }
    }

    /// Linux `vegas_state`.
    fn on_state(&mut self, _w: &mut Window, new: CaState, _c: &Conn) {
        self.frame.set_state(new);
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.reno.cwnd_cnt = 0;
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        let (rtt, diff, target) = self.last.map_or((f64::NAN, f64::NAN, f64::NAN), |l| (l.rtt, l.diff, l.target));
        out.extend_from_slice(&[
            ("base_rtt", if self.frame.base_rtt.is_finite() { self.frame.base_rtt } else { f64::NAN }),
            ("round_rtt", rtt),
            ("diff", diff),
            ("target_cwnd", target),
            ("doing_vegas", self.frame.enabled as u8 as f64),
            ("open", (self.frame.state() == CaState::Open) as u8 as f64),
        ]);
    }
}

#[cfg(test)]
mod tests;
