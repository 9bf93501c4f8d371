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
use super::filters::CaState;
use super::reno::{self, Reno};
use super::{AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Mainline `tcp_vegas.c` (2.6.32 on).
    Linux,
    /// `tcp_vegas.c` of Linux 2.6.16-2.6.22 (ns-2 TCP-Linux).
    Linux26,
    Paper,
}

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

impl VegasConfig {
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

const PARAMS: &[&str] = &["variant", "alpha", "beta", "gamma", "loss_keep", "restart_on_idle"];

pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "vegas",
        aliases: &["tcp-vegas"],
        description: "TCP Vegas: once per RTT, +1 segment if fewer than alpha segments are queued \
                      (cwnd (RTT - baseRTT) / baseRTT), -1 if more than beta; Reno outside the Open state (Linux tcp_vegas.c).",
        params: vec![
            ParamInfo { name: "variant", default: "linux", description: "linux: tcp_vegas.c since 2.6.32 (alpha 2, beta 4, integer diff over baseRTT, slow start every RTT, exit to target+1); linux-2.6: tcp_vegas.c of 2.6.16-2.6.22 as in ns-2 TCP-Linux (half-segment fixed point, diff from the segments sent in the previous round, exit only in slow start with ssthresh = 2, cwnd steps toward the previous round's cwnd +-1, no tcp_current_ssthresh); paper: Brakmo & Peterson 1995 (alpha 1, beta 3, Diff over RTT, slow start every other RTT, exit with cwnd -= cwnd/8, loss keeps 3/4); sets the defaults of alpha, beta, loss_keep", source: "Linux tcp_vegas.c (mainline; 2.6.22.6 as vendored in ns-2.35 tcp/linux); Brakmo & Peterson, JSAC 1995" },
            ParamInfo { name: "alpha", default: "2 (linux, linux-2.6) / 1 (paper)", description: "segments queued below which cwnd grows by one per RTT (linux-2.6 compares in half-segments)", source: "Linux module param alpha; paper" },
            ParamInfo { name: "beta", default: "4 (linux, linux-2.6) / 3 (paper)", description: "segments queued above which cwnd shrinks by one per RTT (linux-2.6 compares in half-segments)", source: "Linux module param beta; paper" },
            ParamInfo { name: "gamma", default: "1", description: "segments queued above which slow start ends", source: "Linux module param gamma; paper" },
            ParamInfo { name: "loss_keep", default: "0.5 (linux, linux-2.6) / 0.75 (paper)", description: "ssthresh = max(loss_keep x cwnd, 2) on a loss (paper only; linux and linux-2.6 use Reno's cwnd >> 1)", source: "Linux tcp_reno_ssthresh; reference s0 (paper 3/4)" },
            ParamInfo { name: "restart_on_idle", default: "true", description: "re-initialise (forget baseRTT, new round) when a segment is sent with nothing in flight (Linux CA_EVENT_TX_START); ns-2 TCP-Linux raises no TX_START: false matches it", source: "Linux tcp_vegas_cwnd_event; ns-2.35 tcp-linux.cc" },
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
        let p = Params::new(map, field, PARAMS)?;
        let base = match p.choice("variant", "linux", &["linux", "linux-2.6", "paper"])? {
            "paper" => VegasConfig::paper(),
            "linux-2.6" => VegasConfig::linux26(),
            _ => VegasConfig::linux(),
        };
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
        if event == LossEvent::FastRecovery {
            self.frame.enter_recovery();
        }
        match self.cfg.variant {
            // tcp_reno_ssthresh: max(snd_cwnd >> 1, 2); snd_cwnd_cnt = 0.
            Variant::Linux | Variant::Linux26 => self.reno.ssthresh(w, event, in_flight, now),
            Variant::Paper => {
                self.reno.cwnd_cnt = 0;
                (w.cwnd * self.cfg.loss_keep).floor().max(2.0)
            }
        }
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: f64) {
        self.frame.exit_recovery();
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.frame.enter_loss();
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
mod tests {
    use super::*;

    /// An ACK of new data up to `snd_una` with `snd_nxt` sent and RTT `rtt`.
    fn ack(snd_una: u64, snd_nxt: u64, rtt: f64) -> AckSample {
        AckSample { rtt: Some(rtt), snd_una, snd_nxt, ..AckSample::test(0.0, 1) }
    }

    /// Feeds `n` ACKs of one round with the given RTT, without crossing its
    /// end: the round was started at `beg`; ACKs cover beg-n+1 .. beg.
    fn samples(v: &mut Vegas, w: &mut Window, beg: u64, n: u64, rtt: f64) {
        for i in 0..n {
            let s = ack(beg - n + 1 + i, beg + 10, rtt);
            v.on_ack_sample(w, &s);
            v.on_ack(w, &s);
        }
    }

    /// A Vegas whose base RTT is `base`, in congestion avoidance at `cwnd`,
    /// with a round ending after segment 100.
    fn in_ca(cfg: VegasConfig, cwnd: f64, base: f64) -> (Vegas, Window) {
        let mut v = Vegas::new(cfg);
        let mut w = Window { cwnd, ssthresh: 1.0 };
        v.on_ack_sample(&w, &ack(1, 100, base));
        v.frame.round.beg_snd_nxt = 100;
        v.frame.round.clear();
        w.ssthresh = cwnd; // congestion avoidance
        (v, w)
    }

    /// Ends the round with the ACK that passes beg_snd_nxt (RTT `rtt`).
    fn end_round(v: &mut Vegas, w: &mut Window, rtt: f64) {
        let s = ack(v.frame.round.beg_snd_nxt + 1, v.frame.round.beg_snd_nxt + 50, rtt);
        v.on_ack_sample(w, &s);
        v.on_ack(w, &s);
    }

    /// An RTT at which Linux's diff = cwnd (rtt - base)/base equals `d` + 0.5.
    fn rtt_for_diff(cwnd: f64, base: f64, d: f64) -> f64 {
        base * (1.0 + (d + 0.5) / cwnd)
    }

    #[test]
    fn congestion_avoidance_moves_one_segment_per_rtt_by_alpha_and_beta() {
        // diff < alpha -> +1; diff > beta -> -1; alpha <= diff <= beta -> hold.
        // Linux diff is truncated: 1.5 -> 1 (< 2), 2.5 -> 2, 4.5 -> 4 (hold), 5.5 -> 5 (> 4).
        for (d, change) in [(0.0, 1.0), (1.0, 1.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0), (5.0, -1.0), (9.0, -1.0)] {
            let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
            let rtt = rtt_for_diff(50.0, 0.1, d);
            samples(&mut v, &mut w, 100, 5, rtt);
            assert_eq!(w.cwnd, 50.0, "nothing happens inside the round");
            end_round(&mut v, &mut w, rtt);
            assert_eq!(w.cwnd, 50.0 + change, "diff {d}");
            assert_eq!(v.last_step().unwrap().diff, d);
        }
    }

    #[test]
    fn thresholds_follow_the_parameters() {
        // With alpha 6 and beta 10 a diff of 4 now grows the window and 8 holds it.
        let cfg = VegasConfig { alpha: 6.0, beta: 10.0, ..VegasConfig::linux() };
        for (d, change) in [(4.0, 1.0), (8.0, 0.0), (11.0, -1.0)] {
            let (mut v, mut w) = in_ca(cfg, 50.0, 0.1);
            let rtt = rtt_for_diff(50.0, 0.1, d);
            samples(&mut v, &mut w, 100, 5, rtt);
            end_round(&mut v, &mut w, rtt);
            assert_eq!(w.cwnd, 50.0 + change, "diff {d}");
        }
    }

    #[test]
    fn the_step_happens_once_per_rtt_with_the_rounds_minimum_rtt() {
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
        // The round's samples: one low RTT among high ones. minRTT is used, so
        // diff = floor(50 * 0.002/0.100001) = 0 -> +1 (the mean, 0.184, would give 41 -> -1).
        samples(&mut v, &mut w, 100, 4, 0.2);
        let low = ack(100, 110, 0.102);
        v.on_ack_sample(&w, &low);
        v.on_ack(&mut w, &low);
        end_round(&mut v, &mut w, 0.2);
        assert_eq!(w.cwnd, 51.0);
        assert_eq!(v.last_step().unwrap().rtt, crate::cc::delay::linux_vrtt(0.102));
        // The next round started at the snd_nxt of the ACK that ended this one;
        // ACKs below it do nothing, even with many samples.
        let beg = v.frame.round.beg_snd_nxt;
        assert_eq!(beg, 150);
        samples(&mut v, &mut w, beg, 20, 0.1);
        assert_eq!(w.cwnd, 51.0);
        assert_eq!(v.steps(), 1);
        end_round(&mut v, &mut w, 0.1);
        assert_eq!((w.cwnd, v.steps()), (52.0, 2));
    }

    #[test]
    fn two_samples_per_rtt_fall_back_to_reno() {
        // cntRTT <= 2: "almost certainly delayed ACKs": tcp_reno_cong_avoid.
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 10.0, 0.1);
        let rtt = rtt_for_diff(10.0, 0.1, 9.0); // would decrease if Vegas ran
        samples(&mut v, &mut w, 100, 1, rtt);
        end_round(&mut v, &mut w, rtt); // second sample of the round
        assert_eq!(v.steps(), 0);
        assert_eq!(w.cwnd, 10.0, "one Reno credit of ten");
        assert_eq!(v.reno.cwnd_cnt, 1);
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        // Slow start and diff > gamma: cwnd = min(cwnd, target_cwnd + 1),
        // ssthresh = min(ssthresh, cwnd), then max(ssthresh, 3/4 cwnd).
        let mut v = Vegas::new(VegasConfig::linux());
        let mut w = Window { cwnd: 40.0, ssthresh: 2_147_483_647.0 };
        v.on_ack_sample(&w, &ack(1, 100, 0.1));
        v.frame.round.beg_snd_nxt = 100;
        v.frame.round.clear();
        samples(&mut v, &mut w, 100, 5, 0.11);
        assert_eq!(w.cwnd, 45.0, "slow start between the round's ends: +1 per segment");
        // RTT 0.11 (vrtt 0.110001, base 0.100001): diff = floor(45 * 0.01/0.100001) = 4 > 1;
        // target = floor(45 * 0.100001/0.110001) = 40.
        end_round(&mut v, &mut w, 0.11);
        let step = v.last_step().unwrap();
        assert_eq!((step.diff, step.target), (4.0, 40.0));
        assert_eq!((w.cwnd, w.ssthresh), (41.0, 41.0));
        assert!(!w.in_slow_start());
    }

    #[test]
    fn slow_start_continues_while_diff_is_at_most_gamma() {
        let mut v = Vegas::new(VegasConfig::linux());
        let mut w = Window { cwnd: 40.0, ssthresh: 2_147_483_647.0 };
        v.on_ack_sample(&w, &ack(1, 100, 0.1));
        v.frame.round.beg_snd_nxt = 100;
        v.frame.round.clear();
        // diff = floor(40 * 0.001 / 0.1) = 0 <= 1: the boundary ACK is a slow-start step.
        samples(&mut v, &mut w, 100, 3, 0.1011);
        end_round(&mut v, &mut w, 0.1011);
        assert_eq!(w.cwnd, 44.0);
        assert!(w.in_slow_start());
    }

    #[test]
    fn ssthresh_is_raised_to_three_quarters_of_cwnd_after_each_step() {
        // tcp_current_ssthresh: max(ssthresh, (cwnd >> 1) + (cwnd >> 2)).
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 100.0, 0.1);
        w.ssthresh = 10.0;
        let rtt = rtt_for_diff(100.0, 0.1, 3.0);
        samples(&mut v, &mut w, 100, 5, rtt);
        end_round(&mut v, &mut w, rtt);
        assert_eq!((w.cwnd, w.ssthresh), (100.0, 75.0));
    }

    #[test]
    fn reno_outside_the_open_state() {
        // tcp_vegas_state: any state but Open disables Vegas (pure Reno).
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 10.0, 0.1);
        let dup = AckSample { duplicate: true, ..ack(1, 100, 0.1) };
        v.on_ack_sample(&w, &dup);
        assert!(!v.frame.enabled);
        // Loss state after an RTO: Reno slow start and congestion avoidance, no rounds.
        v.ssthresh(&w, LossEvent::Timeout, 10, 0.0);
        w = Window { cwnd: 1.0, ssthresh: 5.0 };
        v.on_rto(&mut w, 0.0);
        assert_eq!(v.frame.state(), CaState::Loss);
        for una in 2..6 {
            let s = ack(una, 100, 0.3);
            v.on_ack_sample(&w, &s);
            v.on_ack(&mut w, &s);
        }
        assert_eq!(w.cwnd, 5.0);
        assert_eq!(v.steps(), 0);
        // The ACK covering everything sent before the RTO returns to Open.
        let s = ack(101, 120, 0.3);
        v.on_ack_sample(&w, &s);
        assert!(v.frame.enabled);
        assert_eq!(v.frame.round.beg_snd_nxt, 120);
    }

    #[test]
    fn loss_halves_linux_and_keeps_three_quarters_in_the_paper() {
        let mut v = Vegas::new(VegasConfig::linux());
        let w = Window { cwnd: 41.0, ssthresh: 100.0 };
        assert_eq!(v.ssthresh(&w, LossEvent::FastRecovery, 41, 0.0), 20.0);
        assert!(!v.frame.enabled);
        let mut p = Vegas::new(VegasConfig::paper());
        assert_eq!(p.ssthresh(&w, LossEvent::FastRecovery, 41, 0.0), 30.0);
    }

    #[test]
    fn paper_diff_is_over_rtt_and_slow_start_grows_every_other_round() {
        // Diff = (cwnd/BaseRTT - cwnd/RTT) BaseRTT = cwnd (RTT - BaseRTT)/RTT.
        let p = Vegas::new(VegasConfig::paper());
        let (d, t) = p.diff_and_target(40.0, 0.125, 0.1);
        assert!((d - 8.0).abs() < 1e-12 && (t - 32.0).abs() < 1e-12);
        let mut v = Vegas::new(VegasConfig::paper());
        let mut w = Window { cwnd: 8.0, ssthresh: 2_147_483_647.0 };
        v.on_ack_sample(&w, &ack(1, 100, 0.1));
        v.frame.round.beg_snd_nxt = 100;
        v.frame.round.clear();
        samples(&mut v, &mut w, 100, 4, 0.1);
        assert_eq!(w.cwnd, 12.0, "growing round");
        end_round(&mut v, &mut w, 0.1); // boundary step grows, then the next round holds
        assert_eq!(w.cwnd, 13.0);
        let beg = v.frame.round.beg_snd_nxt;
        samples(&mut v, &mut w, beg, 4, 0.1);
        assert_eq!(w.cwnd, 13.0, "holding round");
        end_round(&mut v, &mut w, 0.1);
        assert_eq!(w.cwnd, 13.0);
        let beg = v.frame.round.beg_snd_nxt;
        samples(&mut v, &mut w, beg, 4, 0.1);
        assert_eq!(w.cwnd, 17.0, "growing again");
        // The round's minimum is still 0.1: one more growing step, then a holding round
        // whose samples are all 0.12: Diff = 18 (0.12 - 0.1)/0.12 = 3 > 1 -> cwnd -= floor(18/8).
        end_round(&mut v, &mut w, 0.12);
        assert_eq!(w.cwnd, 18.0);
        let beg = v.frame.round.beg_snd_nxt;
        samples(&mut v, &mut w, beg, 4, 0.12);
        assert_eq!(w.cwnd, 18.0);
        end_round(&mut v, &mut w, 0.12);
        assert_eq!((w.cwnd, w.ssthresh), (16.0, 16.0));
    }

    #[test]
    fn idle_restart_forgets_the_base_rtt() {
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 50.0, 0.1);
        v.on_send(1.0, 1500, 1);
        assert_eq!(v.frame.base_rtt, f64::INFINITY);
        // The next round measures a new base: with RTT 0.2 throughout, diff = 0 -> +1.
        samples(&mut v, &mut w, 100, 5, 0.2);
        end_round(&mut v, &mut w, 0.2);
        assert_eq!(w.cwnd, 51.0);
        let off = serde_json::json!({"restart_on_idle": false});
        let mut v = Vegas::from_params(off.as_object().unwrap(), "f").unwrap();
        v.on_ack_sample(&w, &ack(1, 100, 0.1));
        v.on_send(1.0, 1500, 1);
        assert_eq!(v.frame.base_rtt, crate::cc::delay::linux_vrtt(0.1));
    }

    #[test]
    fn parameters_are_validated() {
        let bad = serde_json::json!({"alpha": 5, "beta": 3});
        let e = Vegas::from_params(bad.as_object().unwrap(), "flows[0].cc").err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.beta");
        let p = Vegas::from_params(serde_json::json!({"variant": "paper"}).as_object().unwrap(), "f").unwrap();
        assert_eq!((p.cfg.alpha, p.cfg.beta, p.cfg.gamma, p.cfg.loss_keep), (1.0, 3.0, 1.0, 0.75));
    }

    // ---- linux-2.6: tcp_vegas.c of Linux 2.6.16-2.6.22 (ns-2 TCP-Linux) ----

    /// A sample time whose Linux vrtt (whole microseconds + 1) is `us`.
    fn secs(us: u32) -> f64 {
        (us as f64 - 0.5) / 1e6
    }

    /// An RTT (as vrtt microseconds) at which [`fixed_point_diff`] gives
    /// `diff_half` half-segments for `old_wnd` and baseRTT `base_us`.
    fn rtt_us_for(old_wnd: u32, base_us: u32, diff_half: u32) -> u32 {
        let t = 2 * old_wnd - diff_half; // target_cwnd in half segments
        let r = ((2 * old_wnd as u64 * base_us as u64) as f64 / (t as f64 + 0.5)).floor() as u32;
        assert_eq!(fixed_point_diff(old_wnd, base_us, r).0, diff_half);
        r
    }

    const BASE_US: u32 = 100_001;

    /// linux-2.6 Vegas at `cwnd`/`ssthresh` with baseRTT 100001 us. The
    /// previous round sent `old_wnd` segments (`beg_snd_una = 100 -
    /// old_wnd`) with cwnd `old_cwnd` at its start; the current round ends
    /// after segment 100.
    fn linux26(cwnd: f64, ssthresh: f64, old_wnd: u64, old_cwnd: u32) -> (Vegas, Window) {
        let mut v = Vegas::new(VegasConfig::linux26());
        let w = Window { cwnd, ssthresh };
        v.on_ack_sample(&w, &ack(1, 100, secs(BASE_US)));
        v.frame.round.beg_snd_nxt = 100;
        v.frame.round.clear();
        v.beg_snd_una = 100 - old_wnd;
        v.beg_snd_cwnd = old_cwnd;
        (v, w)
    }

    /// Three RTT samples of `rtt_us` in the round (pkts_acked only, no
    /// cong_avoid), then the ACK that ends it.
    fn linux26_round(v: &mut Vegas, w: &mut Window, rtt_us: u32) {
        for i in 0..3 {
            v.on_ack_sample(w, &ack(97 + i, 110, secs(rtt_us)));
        }
        end_round(v, w, secs(rtt_us));
    }

    #[test]
    fn fixed_point_diff_is_in_half_segments_and_wraps_like_u32() {
        // target = ((old_wnd * baseRTT) << 1) / rtt, diff = (old_wnd << 1) - target.
        // 50 segments, RTT 1.09 baseRTT: 100 - floor(100 / 1.09) = 9 halves = 4.5 segments.
        assert_eq!(fixed_point_diff(50, 100_000, 109_000), (9, 91));
        assert_eq!(fixed_point_diff(10_000, 200_001, 200_001), (0, 20_000));
        // 20000 x 200001 x 2 = 8.00004e9 > 2^32: the kernel's u32 product wraps,
        // target collapses and diff is large although nothing is queued.
        let wrapped = ((2 * 20_000u64 * 200_001) % (1u64 << 32)) / 200_001;
        assert_eq!(fixed_point_diff(20_000, 200_001, 200_001), (40_000 - wrapped as u32, wrapped as u32));
        assert!(fixed_point_diff(20_000, 200_001, 200_001).0 > 8);
    }

    #[test]
    fn fixed_point_diff_uses_the_segments_sent_in_the_previous_round() {
        // old_wnd = 20 (beg_snd_nxt - beg_snd_una) while cwnd is 50. diff with
        // old_wnd is 3 halves (< alpha 4: increase); with cwnd it would be 7 (hold).
        let r = rtt_us_for(20, BASE_US, 3);
        assert_eq!(fixed_point_diff(50, BASE_US, r).0, 7);
        let (mut v, mut w) = linux26(50.0, 10.0, 20, 50);
        linux26_round(&mut v, &mut w, r);
        assert_eq!(v.last_step().unwrap().diff, 1.5);
        assert_eq!(w.cwnd, 51.0);
    }

    #[test]
    fn linux26_thresholds_compare_half_segments() {
        // Congestion avoidance, old_snd_cwnd = cwnd = 50, old_wnd = 50:
        // diff (halves) 3 < 4 -> +1; 4..=8 hold; 9 > 8 -> -1. Mainline's
        // floor(4.5) = 4 would hold where the half-segment form decreases.
        for (half, change) in [(0, 1.0), (3, 1.0), (4, 0.0), (8, 0.0), (9, -1.0), (20, -1.0)] {
            let (mut v, mut w) = linux26(50.0, 10.0, 50, 50);
            linux26_round(&mut v, &mut w, rtt_us_for(50, BASE_US, half));
            assert_eq!(w.cwnd, 50.0 + change, "diff {half} half-segments");
            assert_eq!(v.last_step().unwrap().diff, half as f64 / 2.0);
        }
        // Other alpha/beta (segments, compared doubled): alpha 6, beta 10 -> 12 and 20 halves.
        let cfg = VegasConfig { alpha: 6.0, beta: 10.0, ..VegasConfig::linux26() };
        for (half, change) in [(11, 1.0), (12, 0.0), (20, 0.0), (21, -1.0)] {
            let (mut v, mut w) = linux26(50.0, 10.0, 50, 50);
            v.cfg = cfg;
            linux26_round(&mut v, &mut w, rtt_us_for(50, BASE_US, half));
            assert_eq!(w.cwnd, 50.0 + change, "alpha 6 beta 10, diff {half} half-segments");
        }
    }

    #[test]
    fn linux26_moves_toward_the_previous_rounds_cwnd_plus_minus_one() {
        // next = beg_snd_cwnd +- 1 (or = in the band); cwnd takes one step toward it.
        let hold = rtt_us_for(50, BASE_US, 6);
        let grow = rtt_us_for(50, BASE_US, 2);
        let shrink = rtt_us_for(50, BASE_US, 12);
        // cwnd went 50 -> 51 last round: a hold round takes it back to 50 ...
        let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
        linux26_round(&mut v, &mut w, hold);
        assert_eq!(w.cwnd, 50.0);
        // ... a grow round leaves it (next = 51 = cwnd) ...
        let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
        linux26_round(&mut v, &mut w, grow);
        assert_eq!(w.cwnd, 51.0);
        // ... and a shrink round takes one step down.
        let (mut v, mut w) = linux26(51.0, 10.0, 50, 50);
        linux26_round(&mut v, &mut w, shrink);
        assert_eq!(w.cwnd, 50.0);
        // The boundary saves the cwnd it saw (before the step) for the next
        // round, and the segments sent so far as the next left edge.
        assert_eq!((v.beg_snd_cwnd, v.beg_snd_una, v.frame.round.beg_snd_nxt), (51, 100, 150));
    }

    #[test]
    fn linux26_slow_start_exit_sets_ssthresh_2_and_cwnd_to_target_plus_one_then_grows() {
        // snd_cwnd <= snd_ssthresh and diff > gamma (2 halves): ssthresh = 2,
        // cwnd = min(cwnd, (target >> 1) + 1), then tcp_slow_start (+1).
        // old_wnd 20 (the previous, half-size round), diff 3 halves: target 37 -> 18 + 1.
        let r = rtt_us_for(20, BASE_US, 3);
        let (mut v, mut w) = linux26(40.0, 2_147_483_647.0, 20, 20);
        linux26_round(&mut v, &mut w, r);
        assert_eq!((w.cwnd, w.ssthresh), (20.0, 2.0));
        // diff = gamma (2 halves) is not above it: a slow-start step.
        let (mut v, mut w) = linux26(40.0, 2_147_483_647.0, 20, 20);
        linux26_round(&mut v, &mut w, rtt_us_for(20, BASE_US, 2));
        assert_eq!((w.cwnd, w.ssthresh), (41.0, 2_147_483_647.0));
        // cwnd == ssthresh is slow start in 2.6.22 (snd_cwnd <= snd_ssthresh).
        let (mut v, mut w) = linux26(40.0, 40.0, 20, 20);
        linux26_round(&mut v, &mut w, r);
        assert_eq!((w.cwnd, w.ssthresh), (20.0, 2.0));
    }

    #[test]
    fn linux26_exit_does_not_fire_in_congestion_avoidance_after_a_loss() {
        // 2.6.22 tests diff > gamma only inside snd_cwnd <= snd_ssthresh. With
        // ssthresh 20 after a loss and cwnd 30, a large diff is a -1 step
        // (2.6.24's `diff > gamma && snd_ssthresh > 2` would cut to target + 1).
        let (mut v, mut w) = linux26(30.0, 20.0, 30, 30);
        linux26_round(&mut v, &mut w, rtt_us_for(30, BASE_US, 30));
        assert_eq!((w.cwnd, w.ssthresh), (29.0, 20.0));
    }

    #[test]
    fn linux26_has_no_tcp_current_ssthresh() {
        // Mainline raises ssthresh to 3/4 cwnd after each step; 2.6.22 leaves it.
        let (mut v, mut w) = linux26(100.0, 10.0, 100, 100);
        linux26_round(&mut v, &mut w, rtt_us_for(100, BASE_US, 6));
        assert_eq!((w.cwnd, w.ssthresh), (100.0, 10.0));
    }

    #[test]
    fn linux26_slow_start_adds_one_segment_per_ack() {
        // tcp_slow_start of 2.6.22 without ABC: +1 per ACK, however many it covers.
        let (mut v, mut w) = linux26(10.0, 100.0, 10, 10);
        let s = AckSample { acked: 3, ..ack(50, 110, secs(BASE_US)) };
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 11.0);
        // Mid-round ACKs in congestion avoidance change nothing.
        let (mut v, mut w) = linux26(10.0, 5.0, 10, 10);
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 10.0);
    }

    #[test]
    fn linux26_two_samples_fall_back_to_the_period_reno() {
        // cntRTT <= 2: tcp_reno_cong_avoid of 2.6.22: one credit per ACK (not per segment).
        let (mut v, mut w) = linux26(10.0, 5.0, 10, 10);
        v.on_ack_sample(&w, &ack(99, 110, secs(200_000)));
        let s = AckSample { acked: 4, ..ack(101, 150, secs(200_000)) };
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
        assert_eq!((v.steps(), w.cwnd, v.reno.cwnd_cnt), (0, 10.0, 1));
        // The boundary bookkeeping still moved.
        assert_eq!((v.beg_snd_una, v.frame.round.beg_snd_nxt, v.beg_snd_cwnd), (100, 150, 10));
    }

    #[test]
    fn linux26_keeps_the_pre_loss_round_edges_across_recovery() {
        // vegas_enable resets beg_snd_nxt only: beg_snd_una and beg_snd_cwnd
        // keep the last boundary's values, so the first round after a fast
        // recovery steps toward the pre-loss cwnd +- 1, i.e. up.
        let (mut v, mut w) = linux26(40.0, 10.0, 40, 40);
        linux26_round(&mut v, &mut w, rtt_us_for(40, BASE_US, 6));
        assert_eq!((w.cwnd, v.beg_snd_cwnd), (40.0, 40));
        let ss = v.ssthresh(&w, LossEvent::FastRecovery, 40, 0.0);
        assert_eq!(ss, 20.0);
        w = Window { cwnd: 20.0, ssthresh: 20.0 };
        v.on_recovery_exit(&mut w, 0.0);
        assert!(v.frame.enabled);
        let beg = v.frame.round.beg_snd_nxt;
        // First ACK of the new round: cwnd == ssthresh is slow start (+1).
        let s = ack(beg - 2, beg + 5, secs(150_000));
        v.on_ack_sample(&w, &s);
        v.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 21.0);
        for i in 0..2 {
            let s = ack(beg - 1 + i, beg + 5, secs(150_000));
            v.on_ack_sample(&w, &s);
            v.on_ack(&mut w, &s);
        }
        assert_eq!(w.cwnd, 21.0);
        // A queue far above beta: next = 40 - 1 = 39 > 21, so cwnd grows.
        end_round(&mut v, &mut w, secs(150_000));
        assert!(v.last_step().unwrap().diff > 4.0);
        assert_eq!(w.cwnd, 22.0);
    }

    #[test]
    fn linux26_runs_the_period_reno_outside_open() {
        let (mut v, mut w) = linux26(10.0, 10.0, 10, 10);
        let dup = AckSample { duplicate: true, ..ack(1, 100, secs(BASE_US)) };
        v.on_ack_sample(&w, &dup);
        assert!(!v.frame.enabled);
        // Disorder: tcp_reno_cong_avoid, slow start while cwnd <= ssthresh (+1 per ACK).
        let s = AckSample { acked: 2, ..ack(1, 100, secs(BASE_US)) };
        v.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 11.0);
        let s = AckSample { cwnd_limited: false, ..s };
        v.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 11.0, "not window-limited: no growth");
    }

    #[test]
    fn linux26_is_a_variant_with_mainline_defaults() {
        let p = Vegas::from_params(serde_json::json!({"variant": "linux-2.6"}).as_object().unwrap(), "f").unwrap();
        assert_eq!(p.cfg.variant, Variant::Linux26);
        assert_eq!((p.cfg.alpha, p.cfg.beta, p.cfg.gamma), (2.0, 4.0, 1.0));
        assert!(p.frame.linux_rtt);
    }

    /// The current-Linux and paper variants grow only a window that limits
    /// the sender (a stand-in for Linux's cwnd validation, see the module
    /// doc).
    #[test]
    fn the_per_round_step_grows_only_a_window_that_limits_the_sender() {
        for cfg in [VegasConfig::linux(), VegasConfig::paper()] {
            let (mut v, mut w) = in_ca(cfg, 20.0, 0.1);
            samples(&mut v, &mut w, 100, 5, 0.1); // no queueing: diff < alpha
            let end = AckSample { cwnd_limited: false, ..ack(101, 130, 0.1) };
            v.on_ack_sample(&w, &end);
            v.on_ack(&mut w, &end);
            assert_eq!(w.cwnd, 20.0, "{:?}", cfg.variant);
        }
        // Window-limited, the step grows in every variant.
        let (mut v, mut w) = in_ca(VegasConfig::linux(), 20.0, 0.1);
        samples(&mut v, &mut w, 100, 5, 0.1);
        let end = ack(101, 130, 0.1);
        v.on_ack_sample(&w, &end);
        v.on_ack(&mut w, &end);
        assert_eq!(w.cwnd, 21.0);
    }
}
