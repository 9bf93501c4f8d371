//! TCP Prague, the L4S congestion control (RFC 9331's scalable sender):
//! DCTCP's per-RTT cut by alpha/2 on a fractional window, ECT(1),
//! Accurate ECN, pacing, and additive increase scaled for RTT independence.
//!
//! Sources:
//! - L4STeam/linux `net/ipv4/tcp_prague.c`, MODULE_VERSION 0.7 (2024,
//!   read at commit 893e1479793e4cd975adf062fab3ff44206f76b1):
//!   `prague_update_cwnd`, `prague_update_alpha`, `prague_new_round`,
//!   `prague_ai_ack_increase`, `prague_rate_scaled_ai_ack_increase`,
//!   `prague_enter_cwr`, `prague_enter_loss`, `prague_state`,
//!   `prague_cwnd_event`, `prague_cwnd_undo`, `prague_update_pacing_rate`,
//!   `prague_should_update_ewma`, `prague_is_rtt_indep`, `prague_init`;
//!   flags TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN | TCP_CONG_WANTS_ECT_1.
//! - draft-briscoe-iccrg-prague-congestion-control: the same design.
//!
//! The algorithm, as the module's `cong_control` (it sets the window itself:
//! no PRR, no `cwnd = ssthresh`, as Linux for `cong_control` algorithms):
//! - A fractional window `frac_cwnd` (segments, f64 here; the module's
//!   1/2^20 fixed point); the sender's integer cwnd steps by one segment
//!   per ACK towards `max(ceil(frac_cwnd), 2)` (MIN_CWND_RTT), a step down
//!   also setting ssthresh = cwnd.
//! - Per ACK, `acked` = segments delivered less the ACK's CE delta (AccECN):
//!   only unmarked segments grow the window; nothing grows in a loss
//!   reduction or when not cwnd-limited. Slow start as Linux's
//!   `tcp_slow_start` while cwnd < ssthresh; then `frac_cwnd += acked x
//!   ai_ack_increase / frac_cwnd x 1500 / MTU` (MTU_SYS / the flow's MTU).
//! - RTT independence (RTT_CONTROL_RATE): once `rtt_transition` (4) rounds
//!   after slow start have passed and SRTT is at most 100 ms
//!   (MAX_SCALED_RTT), `ai_ack_increase = (srtt / rtt_target)^2` when SRTT
//!   is below `rtt_target` (25 ms), else 1. Below the target the window
//!   then grows (srtt/target)^2 segments per RTT, so the *rate*
//!   (cwnd/srtt) grows by 1/target^2 segments/s per second, as a flow at
//!   the target RTT does: "flows with e2e RTT <= target RTT achieve the
//!   same throughput". Above the target, Reno's one segment per RTT.
//! - alpha: EWMA with g = 1/16 (PRAGUE_SHIFT_G 4) of the CE fraction of
//!   the segments delivered over a round (`snd_una` past the `snd_nxt` of
//!   the round's start), updated only after the first CE mark
//!   (`saw_ce`); once RTT-independent, also only once `rtt_target` has
//!   passed since the last update.
//! - CWR (entered by the sender on a CE delta, at most once per window):
//!   `frac_cwnd -= alpha x frac_cwnd / 2`; once RTT-independent, not
//!   again within `rtt_target` of the last cut. With `alpha_mode` 0 (the
//!   module's default) alpha starts at 0 and the first CE mark ever halves
//!   frac_cwnd; with 1 alpha starts at 1.
//! - Loss (entering Recovery, or an RTO's CA_EVENT_LOSS): `frac_cwnd /= 2`,
//!   no growth until the sender is Open again (`in_loss`). Undo restores
//!   the window before the cut.
//! - Pacing (`prague_update_pacing_rate`, the fractional-window branch):
//!   MTU / SRTT x max(floor(frac_cwnd), in flight), at least 12,500 B/s
//!   (MINIMUM_RATE), doubled while cwnd < ssthresh / 2. The module's rate
//!   is in bytes of MTU per second; the sender spaces packets by their
//!   payload, so the rate handed over is scaled by MSS / MTU (the same
//!   packet spacing). None before the first RTT sample (Linux then
//!   divides by no SRTT: unpaced in effect).
//!
//! Parameters (defaults the module's): `rtt_target` 0.025 s
//! (prague_rtt_target; 0 turns the scaling off), `rtt_transition` 4 rounds
//! (DEFAULT_RTT_TRANSITION), `alpha_mode` 0 (prague_alpha_mode).
//!
//! Deviations: the module's default `prague_cwnd_mode` 2 switches to a
//! rate-based window below 4 MTUs of cwnd (and then varies the pacing rate
//! by +-3 % per half RTT); only the fractional-window mode
//! (`prague_cwnd_mode` 0) is modelled. No MSS reduction at very low rates
//! (`tcp_sync_mss` from `prague_update_alpha`), no TSO burst sizing
//! (single segments), no classic-ECN-AQM detection. The undo restores
//! the saved `frac_cwnd` (the module's v0.6 `prague_cwnd_undo`; v0.7 goes
//! through its rate variable). tcp_is_cwnd_limited's slow-start allowance
//! is not modelled (see reno.rs). The MTU is the largest data packet sent
//! (MSS + 40 before the first).

use super::reno::Reno;
use super::{
    AckSample, AlgorithmInfo, CaState, CongestionControl, Conn, EcnMode, EcnUse, LossEvent, ParamInfo, Params,
    RateSample, Window,
};
use crate::error::SpecError;
use crate::net::Ecn;

/// PRAGUE_SHIFT_G: g = 1/16.
const G: f64 = 1.0 / 16.0;
/// MIN_CWND_RTT.
const MIN_CWND: f64 = 2.0;
/// MAX_SCALED_RTT, seconds.
const MAX_SCALED_RTT: f64 = 0.1;
/// MTU_SYS, bytes.
const MTU_SYS: f64 = 1500.0;
/// MINIMUM_RATE, bytes/s (100 kbit/s).
const MINIMUM_RATE: f64 = 12_500.0;
/// One unit of the module's fractional window (2^-20 segment).
const CWND_UNIT: f64 = 1.0 / (1u64 << 20) as f64;

#[derive(Debug, Clone)]
pub struct Prague {
    rtt_target: f64,
    rtt_transition: u32,
    alpha_mode: u32,
    /// alpha in [0, 1] (the module's upscaled_alpha / 16 / 2^24).
    pub alpha: f64,
    pub frac_cwnd: f64,
    ai_ack_increase: f64,
    saw_ce: bool,
    in_loss: bool,
    round: u32,
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    alpha_stamp: f64,
    cwr_stamp: f64,
    loss_cwnd: f64,
    loss_frac_cwnd: f64,
    /// Pacing rate, bytes of MTU per second (0: none yet).
    rate: f64,
    /// The connection as the last hooks saw it.
    snd_una: u64,
    snd_nxt: u64,
    delivered_ce: u64,
    ece_delta: u64,
    srtt: f64,
    mss: u32,
    mtu: Option<u32>,
    cwnd_seen: f64,
}

/// Prague's parameters; `Default` is where each default is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Seconds; 0: no RTT scaling.
    pub rtt_target: f64,
    /// Rounds.
    pub rtt_transition: u64,
    pub alpha_mode: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { rtt_target: 0.025, rtt_transition: 4, alpha_mode: 0 }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        Ok(Config {
            rtt_target: p.f64("rtt_target", d.rtt_target, |x| (0.0..=10.0).contains(&x), "seconds in [0, 10]")?,
            rtt_transition: p.u64(
                "rtt_transition",
                d.rtt_transition,
                |x| x <= u32::MAX as u64,
                "a number of rounds",
            )?,
            alpha_mode: p.u64("alpha_mode", d.alpha_mode, |x| x <= 1, "0 or 1")?,
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "prague",
        aliases: &["tcp-prague"],
        description: "TCP Prague (L4S): ECT(1) and Accurate ECN; per round cwnd x (1 - alpha/2) on CE with alpha the EWMA \
                      (g = 1/16) of the CE fraction, a fractional window, growth only from unmarked segments, RTT-independent \
                      increase below a 25 ms target, pacing; halves on loss.",
        params: vec![
            ParamInfo::new("rtt_target", d.rtt_target, "RTT below which growth is scaled to that of this RTT, seconds (0: no scaling)", "tcp_prague.c prague_rtt_target (RTT_TARGET 25 ms)"),
            ParamInfo::new("rtt_transition", d.rtt_transition, "rounds after slow start before the flow becomes RTT-independent", "tcp_prague.c prague_rtt_transition (DEFAULT_RTT_TRANSITION)"),
            ParamInfo::new("alpha_mode", d.alpha_mode, "0: alpha starts at 0 and the first CE mark halves the window; 1: alpha starts at 1", "tcp_prague.c prague_alpha_mode"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Prague::from_params(map, field)?))
}

impl Prague {
    pub fn new() -> Self {
        Prague::with(&Config::default())
    }

    pub fn with(c: &Config) -> Self {
        Prague {
            rtt_target: c.rtt_target,
            rtt_transition: c.rtt_transition as u32,
            alpha_mode: c.alpha_mode as u32,
            alpha: 0.0,
            frac_cwnd: 0.0,
            ai_ack_increase: 1.0,
            saw_ce: false,
            in_loss: false,
            round: 0,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            alpha_stamp: 0.0,
            cwr_stamp: f64::NEG_INFINITY,
            loss_cwnd: 0.0,
            loss_frac_cwnd: 0.0,
            rate: 0.0,
            snd_una: 0,
            snd_nxt: 0,
            delivered_ce: 0,
            ece_delta: 0,
            srtt: 0.0,
            mss: 1460,
            mtu: None,
            cwnd_seen: 0.0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Prague::with(&Config::from_params(map, field)?))
    }

    fn mtu(&self) -> f64 {
        self.mtu.unwrap_or(self.mss + 40) as f64
    }

    /// `prague_is_rtt_indep`.
    fn rtt_indep(&self, w: &Window) -> bool {
        !w.in_slow_start() && self.round >= self.rtt_transition
    }

    /// `prague_ai_ack_increase` with `prague_rate_scaled_ai_ack_increase`.
    fn update_ai(&mut self) {
        let rtt = self.srtt;
        self.ai_ack_increase =
            if self.round < self.rtt_transition || rtt <= 0.0 || rtt > MAX_SCALED_RTT || rtt >= self.rtt_target {
                1.0
            } else {
                (rtt / self.rtt_target) * (rtt / self.rtt_target)
            };
    }

    /// `prague_new_round`.
    fn new_round(&mut self, w: &Window, delivered: u64) {
        self.next_seq = self.snd_nxt;
        self.old_delivered_ce = self.delivered_ce;
        self.old_delivered = delivered;
        if !w.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.rtt_transition;
            }
        }
        self.update_ai();
    }

    /// `prague_update_alpha` (without the MSS reduction).
    fn update_alpha(&mut self, w: &Window, now: f64, delivered: u64) {
        if self.saw_ce {
            let ecn = self.delivered_ce - self.old_delivered_ce;
            let f = if ecn > 0 { ecn as f64 / (delivered - self.old_delivered).max(1) as f64 } else { 0.0 };
            self.alpha = (self.alpha - self.alpha * G + f * G).min(1.0);
            self.alpha_stamp = now;
        }
        self.new_round(w, delivered);
    }

    /// `prague_update_cwnd`.
    fn update_cwnd(&mut self, w: &mut Window, rs: &RateSample, c: &Conn) {
        let mut acked = rs.acked_sacked as i64;
        if self.ece_delta > 0 {
            if !self.saw_ce && self.alpha_mode == 0 {
                // "Half cwnd at 1st mark".
                self.frac_cwnd = (self.frac_cwnd + CWND_UNIT) / 2.0;
            }
            self.saw_ce = true;
            acked -= self.ece_delta as i64;
        }
        if acked > 0 && !self.in_loss && c.cwnd_limited {
            let mut acked = acked as u64;
            if w.in_slow_start() {
                acked = Reno::slow_start(w, acked);
                self.frac_cwnd = w.cwnd;
                if acked == 0 {
                    self.update_ai(); // prague_cwnd_changed
                    return;
                }
            }
            let increase = acked as f64 * self.ai_ack_increase / self.frac_cwnd * MTU_SYS / self.mtu();
            self.frac_cwnd += increase.max(acked as f64 * CWND_UNIT);
        }
        // Step-wise towards the fractional window.
        let target = self.frac_cwnd.ceil().max(MIN_CWND);
        if w.cwnd > target {
            w.cwnd -= 1.0;
            w.ssthresh = w.cwnd;
            self.update_ai();
        } else if w.cwnd < target {
            w.cwnd += 1.0;
            self.update_ai();
        }
    }

    /// `prague_update_pacing_rate`, fractional-window branch.
    fn update_pacing(&mut self, w: &Window, in_flight: u64) {
        if self.srtt <= 0.0 {
            return;
        }
        let inflight = self.frac_cwnd.floor().max(in_flight as f64);
        let mut rate = (self.mtu() / self.srtt * inflight).max(MINIMUM_RATE);
        if w.cwnd < w.ssthresh / 2.0 {
            rate *= 2.0;
        }
        self.rate = rate;
    }

    /// `prague_enter_loss`.
    fn enter_loss(&mut self, cwnd: f64) {
        self.loss_cwnd = cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd / 2.0;
        self.in_loss = true;
    }
}

impl Default for Prague {
    fn default() -> Self {
        Self::new()
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn controls_window(&self) -> bool {
        true
    }

    fn on_ack(&mut self, _w: &mut Window, _s: &AckSample) {}

    fn ecn(&self) -> EcnUse {
        EcnUse { default_mode: EcnMode::AccEcn, needs: EcnMode::AccEcn, ect: Ecn::Ect1, precise_echo: true }
    }

    /// `prague_init`.
    fn init(&mut self, w: &mut Window, c: &Conn) {
        self.mss = c.mss;
        self.srtt = c.srtt;
        self.alpha = if self.alpha_mode == 0 { 0.0 } else { 1.0 };
        self.frac_cwnd = w.cwnd;
        self.alpha_stamp = c.now;
        self.saw_ce = self.delivered_ce > 0;
        self.update_pacing(w, c.in_flight);
        self.new_round(w, c.delivered);
    }

    fn on_send(&mut self, _now: f64, bytes: u32, _in_flight: u64) {
        if self.mtu.is_none_or(|m| bytes > m) {
            self.mtu = Some(bytes);
        }
    }

    fn on_ecn(&mut self, delivered_ce: u64, _ece: bool) {
        self.ece_delta = delivered_ce - self.delivered_ce;
        self.delivered_ce = delivered_ce;
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.snd_una = s.snd_una;
        self.snd_nxt = s.snd_nxt;
    }

    /// `prague_cong_control`.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn) {
        self.srtt = c.srtt;
        self.mss = c.mss;
        self.update_cwnd(w, rs, c);
        self.ece_delta = 0;
        // prague_should_update_ewma: a round has passed, and once
        // RTT-independent, rtt_target since the last update.
        if self.snd_una >= self.next_seq && (!self.rtt_indep(w) || c.now - self.alpha_stamp >= self.rtt_target) {
            self.update_alpha(w, c.now, c.delivered);
        }
        self.update_pacing(w, c.in_flight);
        self.cwnd_seen = w.cwnd;
    }

    /// `prague_ssthresh`: unchanged (the cuts are in `frac_cwnd`).
    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.cwnd_seen = w.cwnd;
        w.ssthresh
    }

    /// `prague_enter_cwr`.
    fn on_cwr(&mut self, w: &mut Window, enter: bool, c: &Conn) {
        if !enter {
            self.in_loss = false; // prague_ca_open
            return;
        }
        if self.rtt_indep(w) && self.rtt_target > c.now - self.cwr_stamp {
            return;
        }
        self.cwr_stamp = c.now;
        self.frac_cwnd -= self.alpha * self.frac_cwnd / 2.0;
        self.update_pacing(w, c.in_flight);
    }

    /// `prague_state`: Recovery cuts, Open ends the loss reduction.
    fn on_state(&mut self, w: &mut Window, new: CaState, c: &Conn) {
        match new {
            CaState::Recovery => self.enter_loss(w.cwnd),
            CaState::Open => self.in_loss = false,
            // (never told Disorder or Cwr: it hears CWR through `on_cwr`)
            CaState::Loss | CaState::Disorder | CaState::Cwr => {}
        }
        self.update_pacing(w, c.in_flight);
    }

    /// CA_EVENT_LOSS (`prague_cwnd_event`); the sender has already set cwnd
    /// = 1, so the window before it is the one last seen.
    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.enter_loss(self.cwnd_seen);
    }

    /// `prague_cwnd_undo` (v0.6's restore of the fractional window).
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: f64) -> f64 {
        self.in_loss = false;
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        w.cwnd.max(self.loss_cwnd)
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        (self.rate > 0.0).then(|| self.rate * 8.0 * self.mss as f64 / self.mtu())
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("prague_alpha", self.alpha));
        out.push(("prague_frac_cwnd", self.frac_cwnd));
        out.push(("prague_ai_ack_increase", self.ai_ack_increase));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(now: f64, srtt: f64) -> Conn {
        Conn {
            now,
            in_flight: 0,
            delivered: 0,
            delivered_time: now,
            lost: 0,
            app_limited: 0,
            state: CaState::Open,
            srtt,
            min_rtt: srtt,
            mss: 1460,
            cwnd_limited: true,
            edt: now,
        }
    }

    /// A sender in congestion avoidance at a fixed RTT, one segment per
    /// ACK, the window's ACKs spread over each RTT; `marks(k)` says whether
    /// the k-th segment was CE-marked. Returns (prague, window) after `secs`.
    struct Drive {
        p: Prague,
        w: Window,
        now: f64,
        una: u64,
        delivered: u64,
        ce: u64,
    }

    impl Drive {
        fn new(cwnd: f64, rtt: f64) -> Self {
            let mut p = Prague::new();
            let mut w = Window { cwnd, ssthresh: cwnd / 2.0 };
            p.init(&mut w, &conn(0.0, rtt));
            p.srtt = rtt;
            Drive { p, w, now: 0.0, una: 0, delivered: 0, ce: 0 }
        }

        fn run(&mut self, rtt: f64, secs: f64, marks: impl Fn(u64) -> bool) {
            let end = self.now + secs;
            while self.now < end {
                self.now += rtt / self.w.cwnd;
                self.una += 1;
                self.delivered += 1;
                let k = self.delivered;
                if marks(k) {
                    self.ce += 1;
                }
                self.p.on_ecn(self.ce, marks(k));
                let s = AckSample {
                    snd_una: self.una,
                    snd_nxt: self.una + self.w.cwnd as u64,
                    delivered: self.delivered,
                    ..AckSample::test(self.now, 1)
                };
                self.p.on_ack_sample(&self.w, &s);
                let rs = RateSample { acked_sacked: 1, ..RateSample::default() };
                let mut c = Conn { delivered: self.delivered, in_flight: self.w.cwnd as u64, ..conn(self.now, rtt) };
                self.p.cong_control(&mut self.w, &rs, &mut c);
            }
        }
    }

    /// tcp_prague.c RTT_CONTROL_RATE: once RTT-independent, a flow below
    /// the 25 ms target grows its window by (srtt/target)^2 per RTT, so its
    /// rate frac_cwnd / srtt grows by 1/target^2 segments/s per second,
    /// the same at 5, 10 and 25 ms; above the target the growth is Reno's
    /// one segment per RTT (rate growth 1/rtt^2: a quarter at 50 ms).
    #[test]
    fn rate_growth_per_second_is_that_of_the_target_rtt_below_it() {
        let target: f64 = 0.025;
        let growth = |rtt: f64| {
            let mut d = Drive::new(100.0, rtt);
            d.run(rtt, 0.5, |_| false); // past rtt_transition rounds
            assert!(d.p.round >= 4 && d.p.rtt_indep(&d.w), "rtt {rtt}: round {}", d.p.round);
            let (t0, f0) = (d.now, d.p.frac_cwnd);
            d.run(rtt, 2.0, |_| false);
            (d.p.frac_cwnd - f0) / rtt / (d.now - t0)
        };
        let want = 1.0 / (target * target);
        for rtt in [0.005, 0.01, 0.025] {
            let g = growth(rtt);
            assert!((g / want - 1.0).abs() < 0.03, "rtt {rtt}: rate growth {g} segments/s^2, target's {want}");
        }
        let g = growth(0.05);
        assert!((g / (1.0 / (0.05 * 0.05)) - 1.0).abs() < 0.03, "50 ms: Reno-like, {g}");
    }

    /// The module's per-round EWMA (g = 1/16) of the CE fraction, and the
    /// CWR cut frac_cwnd x (1 - alpha/2). alpha_mode 0: alpha starts at 0
    /// and the first mark halves the window.
    #[test]
    fn alpha_is_the_ewma_of_the_ce_fraction_and_cwr_cuts_by_half_alpha() {
        let rtt = 0.05; // above the target: one alpha update per round
        let mut d = Drive::new(100.0, rtt);
        assert_eq!(d.p.alpha, 0.0);
        d.run(rtt, 0.3, |_| false);
        let before = d.p.frac_cwnd;
        // One marked segment: the first mark halves frac_cwnd.
        d.run(rtt, 1e-9, |_| true);
        assert!((d.p.frac_cwnd - before / 2.0).abs() < 0.05, "{} -> {}", before, d.p.frac_cwnd);
        // Every 4th segment marked for many rounds: alpha converges to 1/4.
        d.run(rtt, 20.0, |k| k % 4 == 0);
        assert!((d.p.alpha - 0.25).abs() < 0.02, "alpha {}", d.p.alpha);
        // One update by hand: F over the round, alpha <- (1 - g) alpha + g F.
        let a0 = d.p.alpha;
        let (del0, ce0) = (d.p.old_delivered, d.p.old_delivered_ce);
        d.p.delivered_ce = ce0 + 30;
        let w = d.w;
        d.p.update_alpha(&w, d.now, del0 + 60);
        assert!((d.p.alpha - ((1.0 - G) * a0 + G * 0.5)).abs() < 1e-12);
        // The CWR cut.
        d.p.alpha = 0.5;
        let f = d.p.frac_cwnd;
        let c = conn(d.now + 1.0, rtt);
        d.p.on_cwr(&mut d.w, true, &c);
        assert!((d.p.frac_cwnd - f * 0.75).abs() < 1e-9);
    }

    /// prague_enter_cwr: once RTT-independent, no second cut within the
    /// 25 ms target of the last one, even at a shorter RTT.
    #[test]
    fn cuts_at_most_once_per_target_rtt_when_rtt_independent() {
        let rtt = 0.005;
        let mut d = Drive::new(50.0, rtt);
        d.run(rtt, 0.5, |_| false);
        assert!(d.p.rtt_indep(&d.w));
        d.p.alpha = 1.0;
        let f = d.p.frac_cwnd;
        d.p.on_cwr(&mut d.w, true, &conn(d.now, rtt));
        assert!((d.p.frac_cwnd - f / 2.0).abs() < 1e-9);
        d.p.on_cwr(&mut d.w, true, &conn(d.now + 0.02, rtt));
        assert!((d.p.frac_cwnd - f / 2.0).abs() < 1e-9, "within 25 ms: no cut");
        d.p.on_cwr(&mut d.w, true, &conn(d.now + 0.026, rtt));
        assert!((d.p.frac_cwnd - f / 4.0).abs() < 1e-9);
    }

    /// Classic fallback on loss (prague_enter_loss): the fractional window
    /// halves, no growth until Open; the integer cwnd follows one segment
    /// per ACK; undo restores it.
    #[test]
    fn loss_halves_and_holds_until_open() {
        let rtt = 0.05;
        let mut d = Drive::new(40.0, rtt);
        d.run(rtt, 0.2, |_| false);
        let (f, cwnd) = (d.p.frac_cwnd, d.w.cwnd);
        let c = conn(d.now, rtt);
        d.p.on_state(&mut d.w, CaState::Recovery, &c);
        assert!((d.p.frac_cwnd - f / 2.0).abs() < 1e-9);
        d.run(rtt, 0.1, |_| false);
        assert!((d.p.frac_cwnd - f / 2.0).abs() < 1e-9, "no growth in loss recovery");
        assert!(d.w.cwnd < cwnd && d.w.cwnd >= (f / 2.0).ceil(), "steps down: {}", d.w.cwnd);
        let restored = d.p.undo_cwnd(&d.w, 0.0);
        assert_eq!((restored, d.p.frac_cwnd, d.p.in_loss), (cwnd, f, false));
    }

    #[test]
    fn needs_accecn_and_sends_ect1() {
        let e = Prague::new().ecn();
        assert_eq!((e.needs, e.ect), (EcnMode::AccEcn, Ecn::Ect1));
        assert!(e.resolve("prague", Some(EcnMode::Classic)).is_err());
        assert!(e.resolve("prague", Some(EcnMode::Off)).is_err());
    }

    /// Pacing at MTU / SRTT x the window (100 % in congestion avoidance),
    /// handed to the sender as payload bits per second.
    #[test]
    fn paces_one_window_per_srtt() {
        let mut d = Drive::new(100.0, 0.05);
        d.run(0.05, 0.2, |_| false);
        let inflight = d.p.frac_cwnd.floor().max(d.w.cwnd);
        let bps = d.p.pacing_rate_bps().unwrap();
        assert!((bps - inflight * 1460.0 * 8.0 / 0.05).abs() < 1e-6 * bps, "{bps}");
    }
}
