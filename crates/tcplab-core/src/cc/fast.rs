//! FAST TCP (`fast`): a delay-based window update once per update period,
//! `w <- min(2w, (1 - gamma) w + gamma (baseRTT/avgRTT w + alpha))`, whose
//! equilibrium keeps `alpha` segments of each flow queued in the network.
//!
//! Sources:
//! - C. Jin, D. Wei, S. Low, "FAST TCP: Motivation, Architecture, Algorithms,
//!   Performance", IEEE INFOCOM 2004, and D. Wei, C. Jin, S. Low, S. Hegde,
//!   "FAST TCP: Motivation, Architecture, Algorithms, Performance", IEEE/ACM
//!   ToN 14(6), 2006, as summarised in `docs/reference/cc-algorithms.md`
//!   section 11 \[P\]: the update map with the 2w cap; gamma in (0, 1], 0.5
//!   usual; alpha in segments; equilibrium `w (1 - baseRTT/RTT) = alpha`;
//!   baseRTT the minimum RTT; avgRTT an EWMA per ACK with weight
//!   `eta = min(3/w, 1/4)` \[?\].
//! - Not in Linux (a Caltech prototype existed); the measurement frame
//!   (baseRTT, per-RTT rounds keyed on `snd_nxt`, the delay rule only in the
//!   Open state) is Linux Vegas's, [`super::delay::DelayFrame`].
//!
//! Choices where the sources are silent or marked \[?\] (all parameters):
//! - **Update period** (`update_rtts`, default 1): the map runs on the ACK
//!   that ends every `update_rtts`-th round (a round ends when the first
//!   segment sent after the previous end is acknowledged). The prototype
//!   updated every other RTT (`update_rtts = 2`); once per RTT is the common
//!   simulator choice. Between updates the window is held. The update is
//!   skipped if it would grow a window that is not limiting the sender.
//! - **alpha** (default 100 segments): the ToN/Caltech Gbit/s experiments
//!   used 100-200 \[?\]. Each flow parks alpha segments in the bottleneck
//!   queue, so N flows need a buffer above N alpha to stay delay-based
//!   rather than loss-based; 100 lets 13 flows share the 2 MB (1333-packet)
//!   buffers of the ssm-interactions parking lot, and is still 1.2 ms of
//!   queueing at 1 Gbit/s, far above the ACK-clock noise. Scale it with the
//!   path (it is in segments, not time).
//! - **avgRTT**: per RTT sample `avg <- (1 - eta) avg + eta rtt`,
//!   `eta = min(eta_scale / w, eta_max)` = min(3/w, 1/4), first sample taken
//!   as is \[?\].
//! - **Slow start** (`ss_exit`, default 1 segment): Reno's slow start (one
//!   segment per segment acknowledged) until queueing is detected: at the end
//!   of a round, `w (1 - baseRTT / minRTT) > ss_exit` with minRTT the round's
//!   minimum (Vegas's gamma test, which the per-ACK bursts of slow start do
//!   not trip); then ssthresh = cwnd and the map runs at once \[?\].
//! - **Loss** (`loss_keep`, default 0.5): Reno halving, ssthresh =
//!   max(loss_keep cwnd, 2) \[?\]; the sender's recovery follows; the map
//!   resumes in the first full round after recovery.
//! - **RTO**: the same ssthresh, cwnd = 1 (sender), slow start \[?\].
//! - Outside the Open state (Disorder, Loss) the window follows Reno
//!   (slow start, then `+acked/cwnd`), as Linux's delay-based modules do.
//! - baseRTT is kept across idle periods (`restart_on_idle = false`; Linux
//!   Vegas would forget it on TX_START).
//! - The window is set at once at the update (the prototype may spread the
//!   change over the next RTT; not modelled). cwnd >= 2.

use super::delay::DelayFrame;
use super::reno::Reno;
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, Conn, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastConfig {
    /// Segments each flow keeps queued in equilibrium.
    pub alpha: f64,
    /// Step of the update map, in (0, 1].
    pub gamma: f64,
    /// Rounds (RTTs) per update.
    pub update_rtts: u64,
    /// avgRTT weight `min(eta_scale / w, eta_max)`.
    pub eta_scale: f64,
    pub eta_max: f64,
    /// Slow start ends when the flow's backlog exceeds this many segments.
    pub ss_exit: f64,
    /// Fraction of cwnd kept as ssthresh after a loss.
    pub loss_keep: f64,
    pub restart_on_idle: bool,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig {
            alpha: 100.0,
            gamma: 0.5,
            update_rtts: 1,
            eta_scale: 3.0,
            eta_max: 0.25,
            ss_exit: 1.0,
            loss_keep: 0.5,
            restart_on_idle: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Fast {
    pub cfg: FastConfig,
    pub frame: DelayFrame,
    avg_rtt: Option<f64>,
    /// Rounds ended since the last update.
    rounds: u64,
    updates: u64,
    last_target: f64,
    /// `w (1 - baseRTT/avgRTT)` at the last update, segments.
    last_backlog: f64,
}

pub fn info() -> AlgorithmInfo {
    let d = FastConfig::default();
    AlgorithmInfo {
        name: "fast",
        aliases: &["fast-tcp", "fasttcp"],
        description: "FAST TCP: once per update period w = min(2w, (1-gamma) w + gamma (baseRTT/avgRTT w + alpha)); \
                      each flow keeps alpha segments queued; Reno slow start until queueing shows, Reno halving on loss.",
        params: vec![
            ParamInfo::new("alpha", d.alpha, "segments each flow keeps queued in equilibrium (scale with the path; N flows need a buffer above N alpha)", "Jin, Wei, Low 2004/2006 (100-200 for Gbit/s [?])"),
            ParamInfo::new("gamma", d.gamma, "step of the update map, in (0, 1]", "Jin, Wei, Low (0.5 usual)"),
            ParamInfo::new("update_rtts", d.update_rtts, "rounds (RTTs) per window update; the prototype used 2", "choice; reference s11"),
            ParamInfo::new("eta_scale", d.eta_scale, "avgRTT EWMA weight eta = min(eta_scale / w, eta_max) per RTT sample", "ToN 2006 as recalled [?]"),
            ParamInfo::new("eta_max", d.eta_max, "upper bound of the avgRTT EWMA weight", "ToN 2006 as recalled [?]"),
            ParamInfo::new("ss_exit", d.ss_exit, "slow start ends when w (1 - baseRTT / round minimum RTT) exceeds this many segments (Vegas's gamma test)", "choice [?]"),
            ParamInfo::new("loss_keep", d.loss_keep, "ssthresh = max(loss_keep x cwnd, 2) on loss and RTO", "reference s11: Reno halving [?]"),
            ParamInfo::new("restart_on_idle", d.restart_on_idle, "forget baseRTT when a segment is sent with nothing in flight (Linux Vegas's TX_START rule)", "choice"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Fast::from_params(map, field)?))
}

/// The FAST update map: `min(2w, (1 - gamma) w + gamma (base/avg w + alpha))`.
pub fn fast_map(w: f64, base: f64, avg: f64, alpha: f64, gamma: f64) -> f64 {
    (2.0 * w).min((1.0 - gamma) * w + gamma * (base / avg * w + alpha))
}

impl Fast {
    pub fn new(cfg: FastConfig) -> Self {
        Fast {
            cfg,
            frame: DelayFrame::new(false, cfg.restart_on_idle),
            avg_rtt: None,
            rounds: 0,
            updates: 0,
            last_target: f64::NAN,
            last_backlog: f64::NAN,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let d = FastConfig::default();
        Ok(Fast::new(FastConfig {
            alpha: p.f64("alpha", d.alpha, |x| x > 0.0, "a number of segments > 0")?,
            gamma: p.f64("gamma", d.gamma, |x| x > 0.0 && x <= 1.0, "a number in (0, 1]")?,
            update_rtts: p.u64("update_rtts", d.update_rtts, |x| x >= 1, "a whole number of rounds >= 1")?,
            eta_scale: p.f64("eta_scale", d.eta_scale, |x| x > 0.0, "a number > 0")?,
            eta_max: p.f64("eta_max", d.eta_max, |x| x > 0.0 && x <= 1.0, "a weight in (0, 1]")?,
            ss_exit: p.f64("ss_exit", d.ss_exit, |x| x >= 0.0, "a number of segments >= 0")?,
            loss_keep: p.f64("loss_keep", d.loss_keep, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?,
            restart_on_idle: p.bool("restart_on_idle", d.restart_on_idle)?,
        }))
    }

    /// The smoothed RTT the map uses, if any sample arrived.
    pub fn avg_rtt(&self) -> Option<f64> {
        self.avg_rtt
    }

    /// Window updates applied so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// avgRTT weight for window `w`.
    pub fn eta(&self, w: f64) -> f64 {
        (self.cfg.eta_scale / w).min(self.cfg.eta_max)
    }

    /// The flow's estimated backlog `w (1 - baseRTT/avgRTT)`, segments.
    pub fn backlog(&self, w: f64) -> f64 {
        match self.avg_rtt {
            Some(avg) if self.frame.base_rtt.is_finite() => w * (1.0 - self.frame.base_rtt / avg),
            _ => f64::NAN,
        }
    }

    /// One window update (the map), unless it would grow a window that does
    /// not limit the sender.
    fn update(&mut self, w: &mut Window, cwnd_limited: bool) {
        let (Some(avg), base) = (self.avg_rtt, self.frame.base_rtt) else { return };
        if !base.is_finite() {
            return;
        }
        let target = fast_map(w.cwnd, base, avg, self.cfg.alpha, self.cfg.gamma).max(2.0);
        self.last_target = target;
        self.last_backlog = self.backlog(w.cwnd);
        if target > w.cwnd && !cwnd_limited {
            return;
        }
        w.cwnd = target;
        w.ssthresh = w.ssthresh.min(w.cwnd).max(2.0);
        self.updates += 1;
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn on_send(&mut self, _now: f64, _bytes: u32, in_flight: u64) {
        self.frame.on_send(in_flight);
    }

    fn on_ack_sample(&mut self, w: &Window, s: &AckSample) {
        if let Some(r) = self.frame.on_ack_sample(s) {
            let eta = self.eta(w.cwnd.max(1.0));
            self.avg_rtt = Some(match self.avg_rtt {
                None => r,
                Some(a) => (1.0 - eta) * a + eta * r,
            });
        }
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let acked = s.acked as f64;
        if !self.frame.enabled {
            // Reno outside the Open state.
            if s.cwnd_limited && acked > 0.0 {
                let left = Reno::slow_start_float(w, acked);
                if left > 0.0 {
                    w.cwnd += left / w.cwnd;
                }
            }
            return;
        }
        if w.in_slow_start() && s.cwnd_limited {
            Reno::slow_start_float(w, acked);
        }
        if self.frame.round.ended_by(s.snd_una) {
            self.frame.round.beg_snd_nxt = s.snd_nxt;
            if self.frame.round.count > 0 && self.frame.base_rtt.is_finite() {
                if w.in_slow_start() {
                    let queued = w.cwnd * (1.0 - self.frame.base_rtt / self.frame.round.min);
                    if queued > self.cfg.ss_exit {
                        // Queueing detected: leave slow start and update at once.
                        w.ssthresh = w.cwnd.max(2.0);
                        self.rounds = self.cfg.update_rtts - 1;
                    }
                }
                if !w.in_slow_start() {
                    self.rounds += 1;
                    if self.rounds >= self.cfg.update_rtts {
                        self.rounds = 0;
                        self.update(w, s.cwnd_limited);
                    }
                }
            }
            self.frame.round.clear();
        }
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.rounds = 0;
        (w.cwnd * self.cfg.loss_keep).max(2.0)
    }

    /// Linux `vegas_state`.
    fn on_state(&mut self, _w: &mut Window, new: CaState, _c: &Conn) {
        self.frame.set_state(new);
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        let base = if self.frame.base_rtt.is_finite() { self.frame.base_rtt } else { f64::NAN };
        let avg = self.avg_rtt.unwrap_or(f64::NAN);
        out.extend_from_slice(&[
            ("base_rtt", base),
            ("avg_rtt", avg),
            ("qdelay", avg - base),
            ("target", self.last_target),
            ("backlog", self.last_backlog),
            ("alpha", self.cfg.alpha),
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

    /// A FAST flow in congestion avoidance at `cwnd` whose baseRTT is `base`
    /// and avgRTT `avg` (set directly), with a round ending after segment 100.
    fn in_ca(cfg: FastConfig, cwnd: f64, base: f64, avg: f64) -> (Fast, Window) {
        let mut f = Fast::new(cfg);
        let w = Window { cwnd, ssthresh: cwnd };
        f.on_ack_sample(&w, &ack(1, 100, base));
        f.avg_rtt = Some(avg);
        f.frame.round.beg_snd_nxt = 100;
        f.frame.round.clear();
        (f, w)
    }

    /// ACKs inside the round (not passing beg_snd_nxt) with RTT `rtt`; `avg`
    /// is restored afterwards so the test controls avgRTT exactly.
    fn inside_round(f: &mut Fast, w: &mut Window, n: u64, rtt: f64) {
        let avg = f.avg_rtt;
        let beg = f.frame.round.beg_snd_nxt;
        for i in 0..n {
            let s = ack(beg - n + 1 + i, beg + 10, rtt);
            f.on_ack_sample(w, &s);
            f.on_ack(w, &s);
        }
        f.avg_rtt = avg;
    }

    fn end_round(f: &mut Fast, w: &mut Window) {
        let avg = f.avg_rtt;
        let beg = f.frame.round.beg_snd_nxt;
        let s = AckSample { rtt: None, ..ack(beg + 1, beg + 60, 0.0) };
        f.on_ack_sample(w, &s);
        f.avg_rtt = avg;
        f.on_ack(w, &s);
    }

    #[test]
    fn the_map_is_the_papers_formula_capped_at_doubling() {
        // w <- min(2w, (1-gamma) w + gamma (baseRTT/avgRTT w + alpha)).
        let m = fast_map(400.0, 0.1, 0.125, 100.0, 0.5);
        assert!((m - (200.0 + 0.5 * (320.0 + 100.0))).abs() < 1e-9);
        // Empty queue and a small window: the map would give 5 + 55 = 60; capped at 2w = 20.
        assert_eq!(fast_map(10.0, 0.1, 0.1, 100.0, 0.5), 20.0);
        // gamma = 1 jumps straight to baseRTT/avgRTT w + alpha.
        assert!((fast_map(400.0, 0.1, 0.125, 100.0, 1.0) - 420.0).abs() < 1e-9);
    }

    #[test]
    fn equilibrium_keeps_alpha_segments_queued() {
        // Fixed point: w (1 - base/avg) = alpha. With base 0.1, avg 0.12: w* = 6 alpha.
        for alpha in [20.0, 100.0, 200.0] {
            let w_star = alpha / (1.0 - 0.1 / 0.12);
            assert!((fast_map(w_star, 0.1, 0.12, alpha, 0.5) - w_star).abs() < 1e-9);
            // Away from it, each update closes the gap by gamma (1 - base/avg) (avg held).
            let w0 = 0.5 * w_star;
            let w1 = fast_map(w0, 0.1, 0.12, alpha, 0.5);
            let shrink = 1.0 - 0.5 * (1.0 - 0.1 / 0.12);
            assert!(((w_star - w1) - shrink * (w_star - w0)).abs() < 1e-9);
            let mut w = 3.0 * w_star;
            for _ in 0..200 {
                w = fast_map(w, 0.1, 0.12, alpha, 0.5);
            }
            assert!((w - w_star).abs() < 1e-6 * w_star);
        }
    }

    #[test]
    fn updates_once_per_round_and_holds_in_between() {
        let cfg = FastConfig { alpha: 20.0, ..FastConfig::default() };
        let (mut f, mut w) = in_ca(cfg, 100.0, 0.1, 0.11);
        inside_round(&mut f, &mut w, 30, 0.11);
        assert_eq!(w.cwnd, 100.0, "no change inside a round");
        end_round(&mut f, &mut w);
        let expect = fast_map(100.0, 0.1, 0.11, 20.0, 0.5);
        assert!((w.cwnd - expect).abs() < 1e-9, "{} vs {expect}", w.cwnd);
        assert_eq!(f.updates(), 1);
        // Every other round with update_rtts = 2.
        let cfg = FastConfig { alpha: 20.0, update_rtts: 2, ..FastConfig::default() };
        let (mut f, mut w) = in_ca(cfg, 100.0, 0.1, 0.11);
        inside_round(&mut f, &mut w, 5, 0.11);
        end_round(&mut f, &mut w);
        assert_eq!((w.cwnd, f.updates()), (100.0, 0));
        inside_round(&mut f, &mut w, 5, 0.11);
        end_round(&mut f, &mut w);
        assert!((w.cwnd - expect).abs() < 1e-9);
        assert_eq!(f.updates(), 1);
    }

    #[test]
    fn a_decrease_keeps_the_flow_out_of_slow_start() {
        // Queue far above alpha: the map lowers w; ssthresh follows it down.
        let cfg = FastConfig { alpha: 10.0, ..FastConfig::default() };
        let (mut f, mut w) = in_ca(cfg, 200.0, 0.1, 0.2);
        inside_round(&mut f, &mut w, 5, 0.2);
        end_round(&mut f, &mut w);
        assert!((w.cwnd - (100.0 + 0.5 * (100.0 + 10.0))).abs() < 1e-9);
        assert_eq!(w.ssthresh, w.cwnd);
    }

    #[test]
    fn no_growth_when_the_window_does_not_limit() {
        let cfg = FastConfig { alpha: 20.0, ..FastConfig::default() };
        let (mut f, mut w) = in_ca(cfg, 100.0, 0.1, 0.1);
        inside_round(&mut f, &mut w, 5, 0.1);
        let beg = f.frame.round.beg_snd_nxt;
        let s = AckSample { cwnd_limited: false, rtt: None, ..ack(beg + 1, beg + 60, 0.0) };
        f.on_ack_sample(&w, &s);
        f.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 100.0);
    }

    #[test]
    fn avg_rtt_weight_is_min_of_three_over_w_and_a_quarter() {
        // avg <- (1 - eta) avg + eta rtt, eta = min(3/w, 1/4).
        let mut f = Fast::new(FastConfig::default());
        let small = Window { cwnd: 6.0, ssthresh: 1e9 };
        f.on_ack_sample(&small, &ack(1, 10, 0.1));
        assert_eq!(f.avg_rtt(), Some(0.1));
        f.on_ack_sample(&small, &ack(2, 10, 0.2));
        assert!((f.avg_rtt().unwrap() - (0.75 * 0.1 + 0.25 * 0.2)).abs() < 1e-12);
        let big = Window { cwnd: 300.0, ssthresh: 1e9 };
        let a = f.avg_rtt().unwrap();
        f.on_ack_sample(&big, &ack(3, 10, 0.3));
        assert!((f.avg_rtt().unwrap() - (0.99 * a + 0.01 * 0.3)).abs() < 1e-12);
        assert_eq!(f.eta(12.0), 0.25);
        assert_eq!(f.eta(30.0), 0.1);
    }

    #[test]
    fn slow_start_until_the_round_shows_queueing() {
        let cfg = FastConfig { alpha: 20.0, ..FastConfig::default() };
        let mut f = Fast::new(cfg);
        let mut w = Window { cwnd: 40.0, ssthresh: 2_147_483_647.0 };
        f.on_ack_sample(&w, &ack(1, 100, 0.1));
        f.frame.round.beg_snd_nxt = 100;
        f.frame.round.clear();
        // Round minimum = baseRTT: slow start goes on (+1 per segment), no update.
        inside_round(&mut f, &mut w, 10, 0.1);
        assert_eq!(w.cwnd, 50.0);
        end_round(&mut f, &mut w);
        assert_eq!(w.cwnd, 51.0);
        assert!(w.in_slow_start());
        assert_eq!(f.updates(), 0);
        // A round whose minimum RTT shows 55 (1 - 0.1/0.104) = 2.1 > 1 segment queued
        // (cwnd 54 after three more slow-start ACKs, 55 after the round's last):
        // ssthresh = cwnd, and the map runs at once.
        f.avg_rtt = Some(0.104);
        inside_round(&mut f, &mut w, 3, 0.104);
        assert_eq!(w.cwnd, 54.0);
        end_round(&mut f, &mut w);
        assert!(!w.in_slow_start());
        assert_eq!(f.updates(), 1);
        let expect = fast_map(55.0, f.frame.base_rtt, 0.104, 20.0, 0.5);
        assert!((w.cwnd - expect).abs() < 1e-9);
    }

    #[test]
    fn loss_halves_and_reno_runs_outside_open() {
        let (mut f, mut w) = in_ca(FastConfig::default(), 300.0, 0.1, 0.11);
        assert_eq!(f.ssthresh(&w, LossEvent::FastRecovery, 300, 0.0), 150.0);
        f.on_state(&mut w, CaState::Recovery, &Conn::test(0.0));
        assert!(!f.frame.enabled);
        f.on_state(&mut w, CaState::Open, &Conn::test(0.0));
        f.on_recovery_exit(&mut w, 0.0);
        assert!(f.frame.enabled);
        // RTO: the same ssthresh; Reno slow start from 1 in the Loss state.
        let ss = f.ssthresh(&w, LossEvent::Timeout, 300, 0.0);
        w = Window { cwnd: 1.0, ssthresh: ss };
        f.on_rto(&mut w, 0.0);
        f.on_state(&mut w, CaState::Loss, &Conn::test(0.0));
        assert_eq!(f.frame.state(), CaState::Loss);
        for una in 2..5 {
            let s = ack(una, 100, 0.3);
            f.on_ack_sample(&w, &s);
            f.on_ack(&mut w, &s);
        }
        assert_eq!(w.cwnd, 4.0);
        assert_eq!(f.updates(), 0);
    }

    #[test]
    fn parameters_are_validated() {
        let e = Fast::from_params(serde_json::json!({"gamma": 1.5}).as_object().unwrap(), "flows[0].cc").err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.gamma");
        let e = Fast::from_params(serde_json::json!({"update_rtts": 0}).as_object().unwrap(), "f").err().unwrap();
        assert_eq!(e.field, "f.params.update_rtts");
        let f = Fast::from_params(serde_json::json!({"alpha": 30}).as_object().unwrap(), "f").unwrap();
        assert_eq!(f.cfg.alpha, 30.0);
    }
}
