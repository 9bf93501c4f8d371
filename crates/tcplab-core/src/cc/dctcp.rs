//! DCTCP, Data Center TCP: a window cut in proportion to the fraction of
//! CE-marked segments.
//!
//! Sources:
//! - RFC 8257 section 3.3 (the sender): per window of data, `M` = marked /
//!   delivered, `DCTCP.Alpha = DCTCP.Alpha * (1 - g) + g * M` with
//!   `g = 1/16`; on an ECN echo, at most once per window (RFC 3168's CWR),
//!   `cwnd = cwnd * (1 - DCTCP.Alpha / 2)`; section 3.4: on loss it
//!   reacts as a conventional TCP (halving); section 3.2, the receiver's
//!   precise echo (here `tcp::receiver`, with [`EcnUse::precise_echo`]).
//! - Linux `net/ipv4/tcp_dctcp.c` (6.x): `dctcp_update_alpha` (in
//!   `in_ack_event`; once `snd_una` passes `next_seq`, the `snd_nxt` of the
//!   last update: `alpha -= min_not_zero(alpha, alpha >> dctcp_shift_g)`,
//!   plus `(delivered_ce << (10 - dctcp_shift_g)) / delivered` if any CE,
//!   clamped to DCTCP_MAX_ALPHA = 1024; packets, from `tp->delivered` and
//!   `tp->delivered_ce`), `dctcp_ssthresh` (`max(cwnd - ((cwnd * alpha) >>
//!   11), 2)`, used for the CWR of an ECN echo), `dctcp_react_to_loss`
//!   (`max(cwnd >> 1, 2)` on entering Recovery and on CA_EVENT_LOSS, Linux
//!   5.1+), `dctcp_cwnd_undo` (`max(cwnd, loss_cwnd)`), growth
//!   `tcp_reno_cong_avoid` (reno.rs `linux`), flags TCP_CONG_NEEDS_ECN.
//! - Linux 3.18-5.0 `dctcp_clamp_alpha_on_loss` (module parameter, default
//!   0): on entering Loss (an RTO) alpha is set to its maximum.
//!
//! Arithmetic: Linux's, alpha in 1/1024 units (u32), integer cwnd.
//!
//! Parameters (defaults Linux's): `shift_g` 4 (g = 1/2^4, 0..10 as Linux's
//! `dctcp_shift_g`), `alpha_on_init` 1.0 (`dctcp_alpha_on_init` 1024/1024,
//! truncated to 1/1024), `clamp_alpha_on_loss` false.
//!
//! ECN: DCTCP needs ECN (Linux TCP_CONG_NEEDS_ECN: the spec refuses `ecn =
//! "off"`), sends ECT(0) (retransmissions included) and defaults to
//! Accurate ECN, whose ACE counter gives `delivered_ce` exactly. With `ecn
//! = "classic"` the receiver echoes each segment's CE state (Linux
//! `dctcp_ece_ack_update`) and every segment an ECE ACK delivers counts as
//! CE (`tcp_count_delivered`), as Linux DCTCP over RFC 3168 negotiation.
//! Upstream DCTCP negotiates AccECN only with `net.ipv4.tcp_ecn = 3`; the
//! default here is the accurate one.
//!
//! Deviations: no fallback to Reno without ECN (refused instead); no PLB
//! (`tcp_plb_update_state`). The first update comes at the first ACK (the
//! state starts at segment 0, Linux's at the handshake).

use super::reno::{Mode, Reno};
use super::{AckSample, AlgorithmInfo, CongestionControl, EcnMode, EcnUse, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;
use crate::net::Ecn;

/// Linux DCTCP_MAX_ALPHA: alpha = 1.
pub const MAX_ALPHA: u32 = 1024;

#[derive(Debug, Clone)]
pub struct Dctcp {
    /// Window growth: Linux `tcp_reno_cong_avoid`.
    reno: Reno,
    shift_g: u32,
    clamp_alpha_on_loss: bool,
    /// `dctcp_alpha`, 1/1024 units.
    pub alpha: u32,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u64,
    loss_cwnd: f64,
    /// `tp->delivered_ce`, from `on_ecn`.
    delivered_ce: u64,
    /// Marked fraction of the last completed window (for tracing).
    last_fraction: f64,
}

/// DCTCP's parameters; `Default` is where each default is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// EWMA gain g = 1/2^shift_g.
    pub shift_g: u64,
    /// Initial alpha, a fraction (held in 1/1024).
    pub alpha_on_init: f64,
    pub clamp_alpha_on_loss: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { shift_g: 4, alpha_on_init: 1.0, clamp_alpha_on_loss: false }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        Ok(Config {
            shift_g: p.u64("shift_g", d.shift_g, |g| g <= 10, "an integer from 0 to 10")?,
            alpha_on_init: p.f64(
                "alpha_on_init",
                d.alpha_on_init,
                |a| (0.0..=1.0).contains(&a),
                "a fraction in [0, 1]",
            )?,
            clamp_alpha_on_loss: p.bool("clamp_alpha_on_loss", d.clamp_alpha_on_loss)?,
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "dctcp",
        aliases: &[],
        description: "DCTCP (RFC 8257): Reno growth; on ECN echoes, once per window, cwnd x (1 - alpha/2) with alpha the \
                      EWMA (g = 1/16) of the CE-marked fraction per window; halves on loss. Needs ECN (accecn by default).",
        params: vec![
            ParamInfo::new("shift_g", d.shift_g, "EWMA gain g = 1/2^shift_g, 0 to 10", "Linux tcp_dctcp.c dctcp_shift_g; RFC 8257 s3.3 (g = 1/16)"),
            ParamInfo::new("alpha_on_init", d.alpha_on_init, "initial alpha, in [0, 1] (truncated to 1/1024)", "Linux dctcp_alpha_on_init (1024); RFC 8257 s3.3"),
            ParamInfo::new("clamp_alpha_on_loss", d.clamp_alpha_on_loss, "set alpha to 1 on a retransmission timeout", "Linux 3.18-5.0 dctcp_clamp_alpha_on_loss"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Dctcp::from_params(map, field)?))
}

impl Dctcp {
    pub fn new() -> Self {
        Dctcp::with(&Config::default())
    }

    pub fn with(c: &Config) -> Self {
        Dctcp {
            reno: Reno::new(Mode::Linux),
            shift_g: c.shift_g as u32,
            clamp_alpha_on_loss: c.clamp_alpha_on_loss,
            alpha: ((c.alpha_on_init * MAX_ALPHA as f64) as u32).min(MAX_ALPHA),
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            loss_cwnd: 0.0,
            delivered_ce: 0,
            last_fraction: 0.0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Dctcp::with(&Config::from_params(map, field)?))
    }

    /// `dctcp_update_alpha`: once a window of data (sent since the last
    /// update) is acknowledged, fold its CE fraction into alpha.
    fn update_alpha(&mut self, snd_una: u64, snd_nxt: u64, delivered: u64) {
        if snd_una < self.next_seq {
            return;
        }
        let mut delivered_ce = self.delivered_ce - self.old_delivered_ce;
        let total = delivered - self.old_delivered;
        self.last_fraction = if total > 0 { delivered_ce as f64 / total as f64 } else { 0.0 };
        let mut alpha = self.alpha;
        // min_not_zero(alpha, alpha >> g): a small alpha decays to 0.
        let dec = alpha >> self.shift_g;
        alpha -= if dec == 0 { alpha } else { dec.min(alpha) };
        if delivered_ce > 0 {
            delivered_ce <<= 10 - self.shift_g;
            delivered_ce /= total.max(1);
            alpha = (alpha as u64 + delivered_ce).min(MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        // dctcp_reset
        self.next_seq = snd_nxt;
        self.old_delivered = delivered;
        self.old_delivered_ce = self.delivered_ce;
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Self::new()
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ecn(&mut self, delivered_ce: u64, _ece: bool) {
        self.delivered_ce = delivered_ce;
    }

    /// `in_ack_event`, every ACK (after `on_ecn`).
    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.update_alpha(s.snd_una, s.snd_nxt, s.delivered);
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.reno.on_ack(w, s);
    }

    /// Loss (Recovery or an RTO): `dctcp_react_to_loss` overrides
    /// `dctcp_ssthresh`: `max(cwnd >> 1, 2)`.
    fn ssthresh(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64) -> f64 {
        self.loss_cwnd = w.cwnd;
        self.reno.ssthresh(w, event, in_flight, now)
    }

    /// `dctcp_ssthresh`: `max(cwnd - ((cwnd * alpha) >> 11), 2)`.
    fn ecn_ssthresh(&mut self, w: &Window, _in_flight: u64, _now: f64) -> f64 {
        self.reno.cwnd_cnt = 0; // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0
        self.loss_cwnd = w.cwnd;
        let cwnd = w.cwnd.max(0.0) as u64;
        (cwnd - ((cwnd * self.alpha as u64) >> 11)).max(2) as f64
    }

    fn on_rto(&mut self, w: &mut Window, now: f64) {
        self.reno.on_rto(w, now);
        if self.clamp_alpha_on_loss {
            self.alpha = MAX_ALPHA;
        }
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: f64) -> f64 {
        w.cwnd.max(self.loss_cwnd)
    }

    fn ecn(&self) -> EcnUse {
        EcnUse { default_mode: EcnMode::AccEcn, needs: EcnMode::Classic, ect: Ecn::Ect0, precise_echo: true }
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("dctcp_alpha", self.alpha as f64 / MAX_ALPHA as f64));
        out.push(("dctcp_ce_fraction", self.last_fraction));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(snd_una: u64, snd_nxt: u64, delivered: u64) -> AckSample {
        AckSample { snd_una, snd_nxt, delivered, ..AckSample::test(0.0, 1) }
    }

    /// RFC 8257 s3.3 / `dctcp_update_alpha`: after a window in which F of
    /// the delivered segments were marked, alpha <- (1 - g) alpha + g F,
    /// in Linux's 1/1024 fixed point (truncating each term); and not before
    /// snd_una has passed the snd_nxt of the last update.
    #[test]
    fn alpha_follows_the_ewma_of_the_marked_fraction_once_per_window() {
        let mut d = Dctcp::new();
        let w = Window { cwnd: 40.0, ssthresh: 20.0 };
        // The first ACK closes the empty initial window: alpha decays by g.
        d.on_ack_sample(&w, &ack(1, 40, 1));
        assert_eq!(d.alpha, 1024 - 1024 / 16);
        let mut alpha = d.alpha as f64 / 1024.0;
        let mut delivered = 1;
        for (marked, total) in [(10u64, 40u64), (0, 40), (40, 40), (3, 37)] {
            // Within the window: no update, however many marks.
            d.on_ecn(d.delivered_ce + marked, marked > 0);
            let before = d.alpha;
            d.on_ack_sample(&w, &ack(d.next_seq - 1, d.next_seq + 5, delivered + total - 1));
            assert_eq!(d.alpha, before, "no update before snd_una reaches next_seq");
            delivered += total;
            let next = d.next_seq;
            d.on_ack_sample(&w, &ack(next, next + total, delivered));
            let g = 1.0 / 16.0;
            alpha = (1.0 - g) * alpha + g * marked as f64 / total as f64;
            let got = d.alpha as f64 / 1024.0;
            // Two truncations of 1/1024 at most.
            assert!((got - alpha).abs() <= 2.0 / 1024.0, "{marked}/{total}: alpha {got}, EWMA {alpha}");
            assert_eq!(d.last_fraction, marked as f64 / total as f64);
            alpha = got;
        }
    }

    /// `min_not_zero(alpha, alpha >> g)`: with no marks a small alpha
    /// reaches 0 instead of sticking at 2^g - 1.
    #[test]
    fn a_small_alpha_decays_to_zero_without_marks() {
        let mut d = Dctcp::new();
        d.alpha = 15;
        d.on_ack_sample(&Window { cwnd: 10.0, ssthresh: 5.0 }, &ack(0, 10, 0));
        assert_eq!(d.alpha, 0);
    }

    /// RFC 8257 s3.3 / `dctcp_ssthresh`: an ECN echo cuts cwnd x (1 -
    /// alpha/2), at least 2; RFC 8257 s3.4 / `dctcp_react_to_loss`: a loss
    /// halves, whatever alpha.
    #[test]
    fn an_echo_cuts_by_half_alpha_and_a_loss_halves() {
        let mut d = Dctcp::new();
        let w = Window { cwnd: 100.0, ssthresh: 1e9 };
        for alpha in [0u32, 64, 512, 1024] {
            d.alpha = alpha;
            let want = 100.0 * (1.0 - alpha as f64 / 1024.0 / 2.0);
            assert_eq!(d.ecn_ssthresh(&w, 100, 0.0), want.ceil(), "alpha {alpha}");
            assert_eq!(d.ssthresh(&w, LossEvent::FastRecovery, 100, 0.0), 50.0);
            assert_eq!(d.ssthresh(&w, LossEvent::Timeout, 100, 0.0), 50.0);
        }
        d.alpha = 1024;
        assert_eq!(d.ecn_ssthresh(&Window { cwnd: 3.0, ssthresh: 1e9 }, 3, 0.0), 2.0);
        // Undo restores the window before the last cut.
        assert_eq!(d.undo_cwnd(&Window { cwnd: 2.0, ssthresh: 2.0 }, 0.0), 3.0);
    }

    #[test]
    fn needs_ecn_and_sends_ect0_with_a_precise_echo() {
        let d = Dctcp::new();
        let e = d.ecn();
        assert_eq!(
            (e.default_mode, e.needs, e.ect, e.precise_echo),
            (EcnMode::AccEcn, EcnMode::Classic, Ecn::Ect0, true)
        );
        assert!(e.resolve("dctcp", Some(EcnMode::Off)).is_err());
        assert_eq!(e.resolve("dctcp", Some(EcnMode::Classic)), Ok(EcnMode::Classic));
        assert_eq!(e.resolve("dctcp", None), Ok(EcnMode::AccEcn));
    }

    /// Linux TCP_CONG_NEEDS_ECN (and Prague's TCP_CONG_NEEDS_ACCECN): the
    /// spec refuses a flow that turns ECN off (prague: or asks for less
    /// than AccECN), naming `flows[i].ecn`; without `ecn` they get AccECN.
    #[test]
    fn a_flow_that_turns_ecn_off_is_refused() {
        let mut spec = crate::scenarios::Dumbbell::new(2, 10e6, 0.02, 20).spec();
        spec.flows[1].cc.algorithm = "dctcp".into();
        spec.flows[1].ecn = Some(EcnMode::Off);
        let err = spec.validate().unwrap_err();
        assert_eq!(err.field, "flows[1].ecn");
        assert!(err.message.contains("needs classic"), "{}", err.message);
        spec.flows[1].ecn = Some(EcnMode::Classic);
        assert!(spec.validate().is_ok());
        spec.flows[1].cc.algorithm = "prague".into();
        assert_eq!(spec.validate().unwrap_err().field, "flows[1].ecn");
        spec.flows[1].ecn = None;
        assert!(spec.validate().is_ok());
        // The field is left out of the JSON when not given (specs hash as before).
        assert!(!serde_json::to_string(&spec.flows[1]).unwrap().contains("ecn"));
        let f: crate::spec::FlowSpec = serde_json::from_value(serde_json::json!({
            "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": "cubic"}, "recovery": "sack", "ecn": "accecn"
        }))
        .unwrap();
        assert_eq!(f.ecn, Some(EcnMode::AccEcn));
    }

    /// End to end over a drop-tail dumbbell (no marking queue, so no CE):
    /// DCTCP is exactly Reno (Linux `tcp_reno_cong_avoid`, halving on
    /// loss), and Prague fills the link.
    #[test]
    fn without_marks_dctcp_is_reno_and_prague_fills_the_link() {
        let run = |algo: &str| {
            let mut d = crate::scenarios::Dumbbell::new(2, 20e6, 0.02, 30);
            d.algorithm = algo.into();
            d.recovery = crate::spec::Recovery::Sack;
            d.duration = 5.0;
            d.measure_start = 1.0;
            crate::run(d.spec()).unwrap().flows.iter().map(|f| (f.goodput_bps, f.retransmits)).collect::<Vec<_>>()
        };
        assert_eq!(run("dctcp"), run("newreno"));
        let p = run("prague");
        let total: f64 = p.iter().map(|f| f.0).sum();
        assert!(total > 0.9 * 20e6 * (1500.0 - 40.0) / 1500.0, "{p:?}");
    }

    #[test]
    fn clamp_alpha_on_loss_sets_alpha_to_one_on_a_timeout() {
        let mut m = serde_json::Map::new();
        m.insert("clamp_alpha_on_loss".into(), serde_json::json!(true));
        m.insert("alpha_on_init".into(), serde_json::json!(0.0));
        let mut d = Dctcp::from_params(&m, "f").unwrap();
        assert_eq!(d.alpha, 0);
        let mut w = Window { cwnd: 1.0, ssthresh: 5.0 };
        d.on_rto(&mut w, 0.0);
        assert_eq!(d.alpha, MAX_ALPHA);
        assert!(
            Dctcp::from_params(&[("shift_g".to_string(), serde_json::json!(11))].into_iter().collect(), "f").is_err()
        );
    }
}
