//! Compound TCP (`compound`, alias `ctcp`): the window is the sum of a
//! loss-based Reno window `cwnd` and a delay-based window `dwnd`, which grows
//! like HighSpeed TCP (`alpha win^k - 1` per RTT) while fewer than `gamma`
//! segments are queued and shrinks by `zeta diff` once more are.
//!
//! Sources:
//! - K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for
//!   High-speed and Long Distance Networks", IEEE INFOCOM 2006
//!   (MSR-TR-2005-86), and draft-sridharan-tcpm-ctcp (2007-2008), as
//!   summarised in `shared/reference/cc-algorithms.md` section 10 \[P\]:
//!   alpha = 1/8, beta = 1/2, k = 3/4, zeta = 1, gamma = 30 segments;
//!   `win = cwnd + dwnd`; per ACK in congestion avoidance `cwnd += 1/win`;
//!   once per RTT `diff = win (1 - baseRTT/RTT)`: `diff < gamma` ->
//!   `dwnd += max(alpha win^k - 1, 0)`, else `dwnd = max(dwnd - zeta diff, 0)`;
//!   on a loss by duplicate ACKs `cwnd = cwnd/2`,
//!   `dwnd = max(win (1 - beta) - cwnd/2, 0)` (so the window becomes
//!   `win (1 - beta)`), dwnd frozen during recovery; on an RTO `cwnd = 1`,
//!   `dwnd = 0`; slow start is Reno's on cwnd with dwnd = 0.
//! - Secondary implementations \[S\] for what the paper leaves open: the
//!   out-of-tree Linux `tcp_compound.c` (Castellani, Hemminger, Andrew
//!   2006-2008: the Vegas measurement frame, the round's minimum RTT, at
//!   least 3 samples per round, the delay part only in the Open state,
//!   baseRTT kept over idle restarts) and the ns-3 port (F. Zhou 2014: the
//!   delay part only above a 38-segment window, as HSTCP's Low_Window).
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
//! The measurement frame is [`super::delay::DelayFrame`] (baseRTT over the
//! connection, kept across idle restarts; rounds keyed on `snd_nxt`; no
//! delay-based update outside the Open state). The CTCP-TUBE gamma tuning of
//! later versions (and of the Linux port) is not implemented: gamma is fixed,
//! as the reference advises unless a reproduction uses TUBE.

use super::delay::DelayFrame;
use super::filters::CaState;
use super::reno::Reno;
use super::{AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundRtt {
    Min,
    Mean,
    Last,
    Srtt,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompoundConfig {
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub zeta: f64,
    /// Segments queued at which dwnd stops growing.
    pub gamma: f64,
    pub low_window: f64,
    pub round_rtt: RoundRtt,
    pub min_samples: u32,
}

impl Default for CompoundConfig {
    fn default() -> Self {
        CompoundConfig {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            zeta: 1.0,
            gamma: 30.0,
            low_window: 38.0,
            round_rtt: RoundRtt::Min,
            min_samples: 3,
        }
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
}

const PARAMS: &[&str] = &["alpha", "beta", "k", "zeta", "gamma", "low_window", "round_rtt", "min_samples"];

pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "compound",
        aliases: &["ctcp", "compound-tcp"],
        description: "Compound TCP: window = Reno cwnd + delay window dwnd; once per RTT dwnd += alpha win^k - 1 \
                      while fewer than gamma segments are queued, else dwnd -= zeta diff; on loss win (1 - beta).",
        params: vec![
            ParamInfo { name: "alpha", default: "0.125", description: "dwnd growth alpha win^k - 1 per RTT", source: "Tan et al. 2006; draft-sridharan-tcpm-ctcp" },
            ParamInfo { name: "beta", default: "0.5", description: "window after a loss = win (1 - beta)", source: "Tan et al. 2006" },
            ParamInfo { name: "k", default: "0.75", description: "exponent of the dwnd growth (HSTCP-like response)", source: "Tan et al. 2006 (ports: 0.75; CCP 0.8 [S])" },
            ParamInfo { name: "zeta", default: "1", description: "dwnd -= zeta diff per RTT once diff >= gamma", source: "Tan et al. 2006 (ns-3 port 0.03 [S])" },
            ParamInfo { name: "gamma", default: "30", description: "segments queued (diff) at which dwnd stops growing", source: "Tan et al. 2006" },
            ParamInfo { name: "low_window", default: "38", description: "dwnd is updated only while win >= low_window segments", source: "ns-3 port (HSTCP Low_Window) [S]; draft value unverified" },
            ParamInfo { name: "round_rtt", default: "min", description: "RTT of the round in diff = win (1 - baseRTT/RTT): min (Linux port), mean, last, srtt", source: "Linux tcp_compound.c [S]; unspecified in the paper" },
            ParamInfo { name: "min_samples", default: "3", description: "RTT samples a round needs for its dwnd update", source: "Linux tcp_compound.c cntRTT > 2 [S]" },
        ],
    }
}

/// Registry constructor.
pub fn build(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Box<dyn CongestionControl>, SpecError> {
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

impl Compound {
    pub fn new(cfg: CompoundConfig) -> Self {
        let mut frame = DelayFrame::new(false, true);
        frame.keep_base_on_restart = true;
        Compound { cfg, frame, dwnd: 0.0, srtt: 0.0, last_diff: f64::NAN, last_rtt: f64::NAN, last_win: f64::NAN, updates: 0 }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, PARAMS)?;
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
            min_samples: p.u64("min_samples", d.min_samples as u64, |x| (1..=1000).contains(&x), "a count in 1..=1000")? as u32,
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

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn on_send(&mut self, _now: f64, _bytes: u32, in_flight: u64) {
        self.frame.on_send(in_flight);
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.frame.on_ack_sample(s);
        self.srtt = s.srtt;
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
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
        self.reduce(w)
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: f64) {
        self.frame.exit_recovery();
        self.fit(w);
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        self.frame.enter_loss();
        self.dwnd = 0.0;
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend_from_slice(&[
            ("dwnd", self.dwnd),
            ("lwnd", self.last_win - self.dwnd),
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
            let cfg = Compound::from_params(serde_json::json!({"round_rtt": choice}).as_object().unwrap(), "f").unwrap().cfg;
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
}
