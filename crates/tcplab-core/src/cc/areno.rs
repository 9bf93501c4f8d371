//! TCP-AdaptiveReno (`areno`, aliases `adaptive-reno`, `tcp-areno`): a
//! Westwood descendant that reads a congestion level `c` in [0, 1] from the
//! RTT, probes for bandwidth hard while `c` is low and gently as `c`
//! reaches 1 (2 segments per RTT at `c = 1`: Reno's 1 plus `W_inc(1) = 1`), and on a loss keeps `W / (1 + c)` (Reno's half at `c = 1`,
//! almost nothing lost at `c = 0`, i.e. a loss taken as random).
//!
//! Sources: `docs/reference/cc-algorithms.md` section 14.1 and
//! `docs/papers/ssm-interactions.md`. The AReno paper (H. Shimonishi,
//! T. Hama, T. Murase, PFLDnet 2006) was not available; the reference
//! reconstructs it from secondary implementations \[S\]. Both formulations:
//!
//! - Common: `c = (RTT - RTT_min) / (RTT_cong - RTT_min)` clamped to [0, 1],
//!   0 while `RTT_cong <= RTT_min` (before the first loss). `RTT_cong` is
//!   the RTT expected at a congestion loss, an EWMA over the RTTs measured
//!   just before losses: `RTT_cong = a RTT_cong + (1 - a) RTT(j)`, a = 0.85,
//!   the first loss taking `RTT(1)`. `B` = Westwood+'s bandwidth estimate
//!   ([`super::bwe::WestwoodBwe`]). Loss by duplicate ACKs:
//!   `W <- W / (1 + c)`, `ssthresh = max(W / (1 + c), 2)`. RTO: generic
//!   (Reno's `ssthresh = max(W/2, 2)`, cwnd 1).
//! - `variant = "areno"` (default; reference Variant B, the AReno paper as
//!   implemented in the secondary ports): `W = W_base + W_probe`; per ACK in
//!   congestion avoidance `W_base += 1/W` and
//!   `W_probe = max(W_probe + W_inc(c)/W, 0)` with
//!   `W_inc(c) = W_inc_max e^(-alpha c) + beta c + gamma`, alpha = 10,
//!   `beta = 2 W_inc_max (1/alpha - (1/alpha + 1) e^-alpha)`,
//!   `gamma = 1 - 2 W_inc_max (1/alpha - (1/alpha + 1/2) e^-alpha)`,
//!   `W_inc_max = B / M`, M = 10 Mbit/s. So `W_inc(1) = 1` and the integral of
//!   `W_inc` over [0, 1] is 1. Loss: `W_base = W/(1 + c)`, `W_probe = 0`.
//!   Slow start: Reno's.
//! - `variant = "paper"` (alias `"seed"`: the seed paper ssm-interactions'
//!   *modified* AReno, reference Variant A, the AReno of all that paper's
//!   figures): per ACK in congestion avoidance
//!   `W += (alpha (B/R) RTT e^c - beta W c) / W` with `R = W / RTT` and RTT
//!   a time in seconds, and in parallel `W_reno += 1/W`,
//!   `W = max(W, W_reno)`; on a loss both are divided by `(1 + c)`. The
//!   paper gives neither alpha nor beta.
//!
//! The paper form, per unit time. ACKs return at `W / RTT` per second, so
//! `dW/dt = (W/RTT) (alpha (B/R) RTT e^(s c) - beta W c)/W
//!        = alpha (B/R) e^(s c) - beta c R`:
//! no RTT is left, only the rate R. This is the paper's reason 1 ("not
//! proportional to the number of round trip times but proportional to time
//! elapsed"), and it holds only with RTT as a time: with RTT/RTT_min
//! (`rtt_unit = rtt_min`) the first term becomes
//! `alpha (B/R) e^(s c) / RTT_min`, 10 times larger for a 30 ms flow than
//! for a 300 ms one. The steady state `dW/dt = 0` is
//! `R^2 = alpha B e^(s c) / (beta c)`, the same for every RTT at a shared
//! bottleneck (its queue gives every flow the same c). The paper states
//! `R = sqrt(B alpha e^c / (beta c))`, so `s = +1`, as the formula is
//! printed. Reason 2 (decrease to W_reno as the queue builds) holds with it:
//! the decrease over the increase is `(beta R^2 / (alpha B)) c e^(-c)`,
//! which grows on [0, 1], and at c = 1 every flow faster than
//! `R1 = sqrt(e alpha B / beta)` shrinks towards W_reno. Reason 2 alone does
//! not fix the sign (`c e^c` grows too); the stated equilibrium does.
//!
//! Choices (parameters; the reasoning is in docs/algorithms/areno.md):
//! - default `variant = "areno"`: the 2006 algorithm, the only fully
//!   specified form (its units close: `W_inc_max = B/M` is segments per
//!   RTT, 10 at 100 Mbit/s); reproductions of ssm-interactions select
//!   `"paper"`;
//! - `B`: the Westwood+ estimator of `bwe.rs` with the Tustin filter, a =
//!   0.9 (the AReno ports \[S\]), one sample per RTT (at least 50 ms), in
//!   segments/s; in bit/s for `B/M` using the size of the data packets sent.
//!   `b_bps > 0` fixes B instead (e.g. a known capacity, which is what the
//!   seed text calls B);
//! - `RTT` in `c`, in `R = W/RTT` and in the paper form's `alpha (B/R) RTT`:
//!   the latest RTT sample (`rtt_sample`, or `srtt`); `RTT_min` the minimum
//!   sample;
//! - `RTT_cong` is updated at each loss detected by duplicate ACKs (an RTO's
//!   last sample is stale) before `c` is computed for that loss (so the
//!   first loss has `c = 1`, Reno's halving, when its RTT is above RTT_min,
//!   and `c = 0` when it is not); the trait has no hook for a loss ignored
//!   by the sender. Random losses feed RTT_cong too: on a lossy path with
//!   little queue it settles less than a millisecond above RTT_min, so `c`
//!   reads 1 at such a queue (docs/algorithms/areno.md);
//! - paper form defaults: `rtt_unit = seconds`, `exponent = +1` (above);
//!   `beta = 0.5`, so at c = 1 the delay term sheds half the window per RTT,
//!   as fast as Reno's response to a loss; `alpha = beta M / (e P)`
//!   segments per second (M = `m_bps` = 10 Mbit/s, P the packet size in
//!   bits: 153.3 for 1500-byte packets), which puts the equilibrium at
//!   c = 1 at `R1 = e alpha / beta = M` when B is Westwood's estimate of the
//!   flow's own rate (B = R): a flow keeps at least M (AReno's own
//!   reference rate) when Reno flows fill the queue, and gives way above it.
//!   This default assumes `rtt_unit = seconds` and `exponent = +1`: with
//!   `rtt_unit = rtt_min` the same number is segments per RTT, and with
//!   `exponent = -1` the equilibrium at c = 1 is `M / e^2`; give `alpha`
//!   explicitly with those;
//!
//! Deviations: the per-ACK increments are per ACK, not per segment
//! delivered (as the ns-2 style float Reno); `W_inc` is not capped at
//! `W_inc_max` unless `cap_w_inc` (the ns-2 adaptation's cap \[S\]). During
//! fast recovery the sender's recovery applies and nothing grows.
//!
//! Per-ACK bound (both forms; not in either printed formula): no ACK grows
//! the window by more than slow start would, the segments it acknowledges
//! (RFC 5681 s3.1 bounds slow start's growth per ACK, and no
//! congestion-avoidance rule may grow faster than slow start). Where an ACK
//! crosses ssthresh, what slow start did not use of it is the bound, or
//! Reno's `1/W` if that is larger. Only the probing term is cut. The bound
//! binds only where a formula asks the window to more than double in one
//! round trip. The paper form's probe per ACK is
//! `alpha (B/R) RTT e^c / W = alpha B RTT^2 e^c / W^2`, unbounded as W gets
//! small while B does not: after a timeout, a loss early in the next slow
//! start leaves W = ssthresh = 2 while Westwood's B still holds the
//! pre-timeout rate: at B = 7611 segments/s, RTT 110 ms and c = 0 one ACK
//! takes the window from 2 to about 3,500 (a fixed `b_bps` far above the
//! path does the like at every window). The 2006 form's probe, `W_inc/W`
//! per ACK with `W_inc(0) = 0.8 B/M + 1` per RTT, exceeds one segment per
//! ACK whenever `W < W_inc`: at the same B one ACK takes the window from 2
//! to about 6.65.

use super::bwe::{BweConfig, BweFilter, WestwoodBwe, WESTWOOD_INIT_RTT, WESTWOOD_RTT_MIN};
use super::reno::Reno;
use super::westwood;
use super::{AckSample, AlgorithmInfo, Choice, CongestionControl, LossEvent, ParamInfo, ParamValue, Params, Window};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Reference Variant B: W_base + W_probe (the AReno paper as implemented).
    AReno,
    /// Reference Variant A: ssm-interactions' modified AReno, its per-ACK
    /// formula with a Reno floor (`variant = "paper"`, alias `"seed"`).
    Paper,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttSample {
    Latest,
    Srtt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttUnit {
    /// RTT / RTT_min: alpha in segments per RTT.
    RttMin,
    /// RTT in seconds: alpha in segments per second.
    Seconds,
}

param_choice!(RttSample { Latest => "latest", Srtt => "srtt" });
param_choice!(RttUnit { Seconds => "seconds", RttMin => "rtt_min" });

impl Form {
    /// The spec's spelling (`paper` also accepts `seed`).
    pub fn name(self) -> &'static str {
        match self {
            Form::AReno => "areno",
            Form::Paper => "paper",
        }
    }
}

impl ParamValue for Form {
    fn shown(&self) -> String {
        self.name().to_string()
    }
}

/// AReno's parameters: the window rule's ([`ArenoConfig`]) and its
/// bandwidth estimator's; `Default` is where each default is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub areno: ArenoConfig,
    pub filter: westwood::Filter,
    /// None: the filter's own (0.125 for linux, else 0.1).
    pub filter_gain: Option<f64>,
    /// Seconds.
    pub min_interval: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            areno: ArenoConfig::default(),
            filter: westwood::Filter::Tustin,
            filter_gain: None,
            min_interval: WESTWOOD_RTT_MIN,
        }
    }
}

impl Config {
    fn filter_gain(&self) -> f64 {
        self.filter_gain.unwrap_or(if self.filter == westwood::Filter::Linux { 0.125 } else { 0.1 })
    }

    /// The estimator these parameters give.
    pub fn bwe(&self) -> BweConfig {
        let gain = self.filter_gain();
        let filter = match self.filter {
            westwood::Filter::Ewma => BweFilter::Ewma { gain },
            westwood::Filter::Linux => BweFilter::LinuxCascaded { gain },
            westwood::Filter::Tustin => BweFilter::Tustin { a: 1.0 - gain },
        };
        BweConfig { min_interval: self.min_interval, filter, ..AReno::default_bwe() }
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let p = Params::new(map, field, &info().param_names())?;
        let dc = Config::default();
        let d = dc.areno;
        let variant = p.choice("variant", d.form.name(), &["areno", "paper", "seed"]).map_err(|e| {
            let got = map.get("variant").map(|v| v.to_string()).unwrap_or_default();
            SpecError::new(e.field, format!("must be one of areno, paper (alias seed), got {got}"))
        })?;
        let form = match variant {
            // "seed": the seed paper's (ssm-interactions) form, the same algorithm.
            "paper" | "seed" => Form::Paper,
            _ => Form::AReno,
        };
        let rtt_sample = p.pick("rtt_sample", d.rtt_sample)?;
        let rtt_unit = p.pick("rtt_unit", d.rtt_unit)?;
        let areno = ArenoConfig {
            form,
            rtt_cong_weight: p.f64(
                "rtt_cong_weight",
                d.rtt_cong_weight,
                |x| (0.0..1.0).contains(&x),
                "a weight in [0, 1)",
            )?,
            rtt_sample,
            b_bps: p.f64("b_bps", d.b_bps, |x| x >= 0.0, "a rate >= 0 in bit/s")?,
            decay: p.f64("decay", d.decay, |x| x > 0.0, "a number > 0")?,
            m_bps: p.f64("m_bps", d.m_bps, |x| x > 0.0, "a rate > 0 in bit/s")?,
            cap_w_inc: p.bool("cap_w_inc", d.cap_w_inc)?,
            alpha: match map.get("alpha") {
                None => d.alpha,
                Some(_) => Some(p.f64("alpha", 0.0, |x| x >= 0.0, "a number >= 0 (segments per second)")?),
            },
            beta: p.f64("beta", d.beta, |x| x >= 0.0, "a number >= 0")?,
            rtt_unit,
            exponent: p.f64("exponent", d.exponent, |x| x == 1.0 || x == -1.0, "1 or -1")?,
        };
        // Listed in AReno's own order (tustin first) in the error message.
        let kind = p.choice("filter", dc.filter.name(), &["tustin", "ewma", "linux"])?;
        let filter = westwood::Filter::from_name(kind).unwrap_or(dc.filter);
        let gain = Config { filter, ..dc }.filter_gain();
        let filter_gain = Some(p.f64("filter_gain", gain, |g| g > 0.0 && g <= 1.0, "a fraction in (0, 1]")?);
        let min_interval = p.f64("min_interval", dc.min_interval, |x| x >= 0.0, "a time >= 0 in seconds")?;
        Ok(Config { areno, filter, filter_gain, min_interval })
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArenoConfig {
    pub form: Form,
    /// History weight `a` of the RTT_cong EWMA.
    pub rtt_cong_weight: f64,
    pub rtt_sample: RttSample,
    /// Fixed B in bit/s (0: Westwood+ estimate).
    pub b_bps: f64,
    /// AReno: alpha of `e^(-alpha c)`.
    pub decay: f64,
    /// AReno: M, bit/s.
    pub m_bps: f64,
    pub cap_w_inc: bool,
    /// Paper form: alpha in segments per second (None: `beta M / (e P)`,
    /// M = `m_bps`, P the packet size in bits), beta, RTT unit, sign of the
    /// exponent.
    pub alpha: Option<f64>,
    pub beta: f64,
    pub rtt_unit: RttUnit,
    pub exponent: f64,
}

impl Default for ArenoConfig {
    fn default() -> Self {
        ArenoConfig {
            form: Form::AReno,
            rtt_cong_weight: 0.85,
            rtt_sample: RttSample::Latest,
            b_bps: 0.0,
            decay: 10.0,
            m_bps: 10e6,
            cap_w_inc: false,
            alpha: None,
            beta: 0.5,
            rtt_unit: RttUnit::Seconds,
            exponent: 1.0,
        }
    }
}

/// `c = (RTT - RTT_min) / (RTT_cong - RTT_min)` in [0, 1]; 0 without a
/// usable RTT_cong (none yet, or not above RTT_min).
pub fn congestion_level(rtt: f64, rtt_min: f64, rtt_cong: Option<f64>) -> f64 {
    match rtt_cong {
        Some(rc) if rc > rtt_min => ((rtt - rtt_min) / (rc - rtt_min)).clamp(0.0, 1.0),
        _ => 0.0,
    }
}

/// AReno's probing increment per RTT, `W_inc(c) = W_max e^(-a c) + beta c + gamma`
/// with `beta = 2 W_max (1/a - (1/a + 1) e^-a)` and
/// `gamma = 1 - 2 W_max (1/a - (1/a + 1/2) e^-a)`, `a` the decay (10).
pub fn w_inc(c: f64, w_max: f64, a: f64) -> f64 {
    let e = (-a).exp();
    let beta = 2.0 * w_max * (1.0 / a - (1.0 / a + 1.0) * e);
    let gamma = 1.0 - 2.0 * w_max * (1.0 / a - (1.0 / a + 0.5) * e);
    w_max * (-a * c).exp() + beta * c + gamma
}

#[derive(Debug, Clone)]
pub struct AReno {
    pub cfg: ArenoConfig,
    pub bwe: WestwoodBwe,
    rtt_cong: Option<f64>,
    srtt: f64,
    /// Bits per data packet: the largest sent so far (`on_send`).
    packet_bits: Option<f64>,
    /// AReno: the probing window.
    w_probe: f64,
    /// Paper form: the Reno floor (NaN until congestion avoidance starts).
    w_reno: f64,
    last_c_loss: f64,
    last_w_inc: f64,
    losses: u64,
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "areno",
        aliases: &["adaptive-reno", "tcp-areno"],
        description: "TCP-AdaptiveReno: congestion level c = (RTT - RTTmin)/(RTTcong - RTTmin) in [0, 1]; Reno growth plus a \
                      bandwidth-scaled probe that fades as c rises; on loss W / (1 + c). Westwood+ bandwidth estimate.",
        params: vec![
            ParamInfo::new("variant", d.areno.form, "areno: the 2006 AReno, W = W_base + W_probe, W_probe += W_inc(c)/W with W_inc(c) = (B/M) e^(-10c) + beta c + gamma (the AReno paper as implemented, fully specified); paper (alias seed): ssm-interactions' modified AReno, W += (alpha (B/R) RTT e^c - beta W c)/W with RTT in seconds and a Reno floor W >= W_reno, steady state R = sqrt(alpha B e^c/(beta c)) for every RTT. In both, no ACK grows the window by more than the segments it acknowledges (slow start's bound; not in the printed formulas)", "reference s14.1 Variants B and A; ssm-interactions section II"),
            ParamInfo::new("rtt_cong_weight", d.areno.rtt_cong_weight, "history weight a of RTT_cong = a RTT_cong + (1 - a) RTT at each loss", "AReno ports [S]"),
            ParamInfo::new("rtt_sample", d.areno.rtt_sample, "RTT in c and at a loss: latest sample or srtt", "implementations use the latest [S]; unspecified"),
            ParamInfo::new("b_bps", d.areno.b_bps, "B in bit/s; 0 = the Westwood+ estimate (an achieved rate), > 0 = a fixed value (e.g. the bottleneck capacity)", "reference s14.1 (B unspecified)"),
            ParamInfo::new("decay", d.areno.decay, "areno: alpha in W_inc's e^(-alpha c)", "AReno paper via ports [S]"),
            ParamInfo::new("m_bps", d.areno.m_bps, "M, bit/s: areno: W_inc_max = B/M; paper: the default alpha = beta M/(e x packet bits), which makes M the equilibrium rate at c = 1 when B is the flow's own rate", "AReno paper via ports [S] (10 Mbit/s)"),
            ParamInfo::new("cap_w_inc", d.areno.cap_w_inc, "areno: cap W_inc at W_inc_max", "ns-2 adaptation [S]"),
            ParamInfo::new("alpha", format!("beta m_bps/(e x packet bits) ({:.1} at 1500 B)", d.areno.beta * d.areno.m_bps / (std::f64::consts::E * 12000.0)), "paper: probing gain, window growth in segments per second at c = 0 and B = R; the default puts the c = 1 equilibrium at m_bps with rtt_unit = seconds and exponent = 1 only (with rtt_unit = rtt_min it is segments per RTT; with exponent = -1 the equilibrium is m_bps/e^2): set it explicitly with those", "unspecified in the paper; equilibrium at c = 1 at M"),
            ParamInfo::new("beta", d.areno.beta, "paper: delay-based decrease, beta W c segments per RTT (half the window per RTT at c = 1, as a Reno loss)", "unspecified in the paper; choice"),
            ParamInfo::new("rtt_unit", d.areno.rtt_unit, "paper: RTT in alpha (B/R) RTT as a time in seconds (growth proportional to time, the paper's RTT-fairness) or rtt_min (RTT/RTT_min, alpha per RTT; not the paper's)", "ssm-interactions reason 1"),
            ParamInfo::new("exponent", d.areno.exponent, "paper: sign s of e^(s c): 1 as printed and as the paper's steady state R = sqrt(B alpha e^c/(beta c)) requires; -1 for comparison", "ssm-interactions (formula and steady state)"),
            ParamInfo::new("filter", d.filter, "bandwidth filter: tustin (a = 1 - filter_gain), ewma, linux", "AReno ports use Westwood+ with Tustin 0.9/0.1 [S]"),
            ParamInfo::new("filter_gain", format!("{} (filter linux) / {} (ewma, tustin)", Config { filter: westwood::Filter::Linux, ..d }.filter_gain(), d.filter_gain()), "weight of the new bandwidth sample", "Grieco & Mascolo 2004; ns-3"),
            ParamInfo::new("min_interval", d.min_interval, "shortest bandwidth sampling interval, s", "Linux TCP_WESTWOOD_RTT_MIN"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(AReno::from_params(map, field)?))
}

impl AReno {
    pub fn new(cfg: ArenoConfig, bwe: BweConfig) -> Self {
        AReno {
            cfg,
            bwe: WestwoodBwe::new(bwe),
            rtt_cong: None,
            srtt: 0.0,
            packet_bits: None,
            w_probe: 0.0,
            w_reno: f64::NAN,
            last_c_loss: f64::NAN,
            last_w_inc: f64::NAN,
            losses: 0,
        }
    }

    /// The default Westwood+ estimator configuration for AReno.
    pub fn default_bwe() -> BweConfig {
        BweConfig {
            min_interval: WESTWOOD_RTT_MIN,
            init_rtt: WESTWOOD_INIT_RTT,
            filter: BweFilter::Tustin { a: 0.9 },
            fixed_interval: None,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let c = Config::from_params(map, field)?;
        Ok(AReno::new(c.areno, c.bwe()))
    }

    /// The RTT used in `c` and recorded at a loss, seconds.
    pub fn rtt(&self) -> f64 {
        match self.cfg.rtt_sample {
            RttSample::Latest => self.bwe.rtt(),
            RttSample::Srtt if self.srtt > 0.0 => self.srtt,
            RttSample::Srtt => self.bwe.rtt(),
        }
    }

    pub fn rtt_min(&self) -> f64 {
        self.bwe.rtt_min()
    }

    pub fn rtt_cong(&self) -> Option<f64> {
        self.rtt_cong
    }

    /// The congestion level now.
    pub fn c(&self) -> f64 {
        congestion_level(self.rtt(), self.rtt_min(), self.rtt_cong)
    }

    /// Bits per data packet: the largest sent so far, 1500 bytes before any.
    pub fn packet_bits(&self) -> f64 {
        self.packet_bits.unwrap_or(1500.0 * 8.0)
    }

    /// B in segments per second.
    pub fn b_segments(&self) -> f64 {
        if self.cfg.b_bps > 0.0 {
            self.cfg.b_bps / self.packet_bits()
        } else {
            self.bwe.bw_est()
        }
    }

    /// B in bit/s.
    pub fn b_bps(&self) -> f64 {
        self.b_segments() * self.packet_bits()
    }

    /// The paper form's alpha, segments per second: as given, or
    /// `beta M / (e P)` (P = packet bits), which makes the equilibrium rate
    /// at c = 1 with B = R, `e alpha / beta`, equal to M.
    pub fn alpha(&self) -> f64 {
        self.cfg.alpha.unwrap_or_else(|| self.cfg.beta * self.cfg.m_bps / (std::f64::consts::E * self.packet_bits()))
    }

    /// AReno's `W_inc_max = B / M`, segments per RTT.
    pub fn w_inc_max(&self) -> f64 {
        self.b_bps() / self.cfg.m_bps
    }

    /// Keeps the components inside the window the sender enforces.
    fn fit(&mut self, w: &Window) {
        self.w_probe = self.w_probe.min((w.cwnd - 1.0).max(0.0));
        if self.w_reno.is_finite() {
            self.w_reno = self.w_reno.min(w.cwnd);
        }
    }

    /// One congestion-avoidance ACK that leaves `credit` segments of its
    /// acknowledged segments to congestion avoidance (all of them, or what
    /// slow start did not use when this ACK crossed ssthresh).
    ///
    /// No ACK grows the window by more than slow start would: the step is at
    /// most `credit` segments, or Reno's own `1/W` if that is larger (module
    /// notes, "Per-ACK bound"). Only the probing term is cut; Reno's `1/W`
    /// and the decrease are not.
    fn avoid(&mut self, w: &mut Window, credit: f64) {
        let win = w.cwnd;
        let c = self.c();
        let most = win + credit.max(1.0 / win);
        match self.cfg.form {
            Form::AReno => {
                let w_max = self.w_inc_max();
                let mut inc = w_inc(c, w_max, self.cfg.decay);
                if self.cfg.cap_w_inc {
                    inc = inc.min(w_max.max(1.0));
                }
                self.last_w_inc = inc;
                let base = win - self.w_probe + 1.0 / win;
                self.w_probe = (self.w_probe + inc / win).max(0.0).min(most - base);
                w.cwnd = base + self.w_probe;
            }
            Form::Paper => {
                let rtt = self.rtt();
                let rate = win / rtt; // R = W / RTT, segments/s
                let rtt_term = match self.cfg.rtt_unit {
                    RttUnit::RttMin => rtt / self.rtt_min(),
                    RttUnit::Seconds => rtt,
                };
                let probe = self.alpha() * (self.b_segments() / rate) * rtt_term * (self.cfg.exponent * c).exp();
                let inc = probe - self.cfg.beta * win * c;
                self.last_w_inc = inc;
                let reno = if self.w_reno.is_finite() { self.w_reno } else { win };
                self.w_reno = reno + 1.0 / win;
                w.cwnd = (win + inc / win).min(most).max(self.w_reno).max(1.0);
            }
        }
    }
}

impl CongestionControl for AReno {
    fn name(&self) -> &'static str {
        "areno"
    }

    fn on_send(&mut self, now: f64, bytes: u32, _in_flight: u64) {
        self.bwe.start(now);
        if bytes > 0 {
            let b = bytes as f64 * 8.0;
            self.packet_bits = Some(self.packet_bits.map_or(b, |p| p.max(b)));
        }
    }

    fn on_ack_sample(&mut self, _w: &Window, s: &AckSample) {
        self.bwe.on_ack(s);
        if s.srtt > 0.0 {
            self.srtt = s.srtt;
        }
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.fit(w);
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        let mut credit = s.acked as f64;
        if w.in_slow_start() {
            credit = Reno::slow_start_float(w, credit);
            // Reno's slow start: the probing window stays 0, the Reno floor follows.
            self.w_probe = 0.0;
            self.w_reno = w.cwnd;
            if credit <= 0.0 {
                return;
            }
        }
        self.avoid(w, credit);
    }

    fn ssthresh(&mut self, w: &Window, event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.fit(w);
        match event {
            LossEvent::FastRecovery => {
                // RTT_cong learns this loss's RTT first, then c is read with it.
                let rtt = self.rtt();
                let a = self.cfg.rtt_cong_weight;
                self.rtt_cong = Some(match self.rtt_cong {
                    None => rtt,
                    Some(rc) => a * rc + (1.0 - a) * rtt,
                });
                self.losses += 1;
                let c = self.c();
                self.last_c_loss = c;
                let keep = 1.0 / (1.0 + c);
                self.w_probe = 0.0;
                if self.w_reno.is_finite() {
                    self.w_reno *= keep;
                }
                (w.cwnd * keep).max(2.0)
            }
            // Generic: Reno's half; cwnd = 1 by the sender.
            LossEvent::Timeout => (w.cwnd / 2.0).max(2.0),
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: f64) {
        self.fit(w);
    }

    fn on_rto(&mut self, w: &mut Window, _now: f64) {
        self.w_probe = 0.0;
        self.w_reno = w.cwnd;
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend_from_slice(&[
            ("c", self.c()),
            ("c_at_loss", self.last_c_loss),
            ("rtt", self.rtt()),
            ("rtt_min", self.rtt_min()),
            ("rtt_cong", self.rtt_cong.unwrap_or(f64::NAN)),
            ("b_bps", self.b_bps()),
            ("w_inc", self.last_w_inc),
        ]);
        match self.cfg.form {
            Form::AReno => out.push(("w_probe", self.w_probe)),
            Form::Paper => out.push(("w_reno", self.w_reno)),
        }
    }
}

#[cfg(test)]
mod tests;
