//! BBRv3's parameters ([`Config`], whose `Default` is where each default is
//! written), their listing in the catalog and the construction of the
//! algorithm's state from them.

use super::*;
use crate::cc::{AlgorithmInfo, ParamInfo, Params};
use crate::error::SpecError;

/// BBRv3's parameters as the spec gives them (gains and fractions as real
/// numbers, times in their units); [`Bbr3::with`] turns them into Linux's
/// fixed point.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub startup_pacing_gain: f64,
    pub startup_cwnd_gain: f64,
    pub cwnd_gain: f64,
    pub beta: f64,
    pub loss_thresh: f64,
    pub inflight_headroom: f64,
    pub probe_rtt_ms: f64,
    pub probe_rtt_win_s: f64,
    pub min_rtt_win_s: f64,
    pub bw_probe_base_s: f64,
    pub bw_probe_rand_s: f64,
    pub ecn: bool,
    pub ecn_thresh: f64,
    pub ecn_max_rtt_ms: f64,
    pub seed: u64,
}

impl Default for Config {
    /// google/bbr v3's module parameters (`bbr_startup_pacing_gain` =
    /// 2.77, `bbr_beta` = 30 % cut, `bbr_loss_thresh` 2 %,
    /// `bbr_inflight_headroom` 15 %, ...).
    fn default() -> Self {
        Config {
            startup_pacing_gain: 2.77,
            startup_cwnd_gain: 2.0,
            cwnd_gain: 2.0,
            beta: 0.7,
            loss_thresh: 0.02,
            inflight_headroom: 0.15,
            probe_rtt_ms: 200.0,
            probe_rtt_win_s: 5.0,
            min_rtt_win_s: 10.0,
            bw_probe_base_s: 2.0,
            bw_probe_rand_s: 1.0,
            ecn: false,
            ecn_thresh: 0.5,
            ecn_max_rtt_ms: 5.0,
            seed: 1,
        }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        let err = |name: &str, msg: &str| SpecError::new(format!("{field}.params.{name}"), msg.to_string());
        // The gains are 10-bit fields of 1/256 in Linux (at most 1023/256).
        let startup_pacing_gain =
            p.f64("startup_pacing_gain", d.startup_pacing_gain, |x| x > 0.0 && x <= 3.99, "a gain in (0, 3.99]")?;
        let startup_cwnd_gain =
            p.f64("startup_cwnd_gain", d.startup_cwnd_gain, |x| x > 0.0 && x <= 3.99, "a gain in (0, 3.99]")?;
        let cwnd_gain =
            p.f64("cwnd_gain", d.cwnd_gain, |x| x > 0.0 && x <= 3.74, "a gain in (0, 3.74] (PROBE_UP adds 0.25)")?;
        let beta = p.f64("beta", d.beta, |x| x > 0.0 && x <= 1.0, "a fraction in (0, 1]")?;
        let loss_thresh = p.f64("loss_thresh", d.loss_thresh, |x| x > 0.0 && x < 1.0, "a fraction in (0, 1)")?;
        let inflight_headroom =
            p.f64("inflight_headroom", d.inflight_headroom, |x| (0.0..1.0).contains(&x), "a fraction in [0, 1)")?;
        let probe_rtt_ms =
            p.f64("probe_rtt_ms", d.probe_rtt_ms, |x| (0.0..=60_000.0).contains(&x), "milliseconds in [0, 60000]")?;
        let min_rtt_win_s =
            p.f64("min_rtt_win_s", d.min_rtt_win_s, |x| (0.001..=3600.0).contains(&x), "seconds in [0.001, 3600]")?;
        let probe_rtt_win_s =
            p.f64("probe_rtt_win_s", d.probe_rtt_win_s, |x| (0.001..=3600.0).contains(&x), "seconds in [0.001, 3600]")?;
        if (probe_rtt_win_s * 1000.0).round() > (min_rtt_win_s * 1000.0).round() {
            return Err(err(
                "probe_rtt_win_s",
                "must be at most min_rtt_win_s (as bbr_probe_rtt_win_ms <= bbr_min_rtt_win_sec)",
            ));
        }
        let bw_probe_base_s =
            p.f64("bw_probe_base_s", d.bw_probe_base_s, |x| (0.0..=2000.0).contains(&x), "seconds in [0, 2000]")?;
        let bw_probe_rand_s =
            p.f64("bw_probe_rand_s", d.bw_probe_rand_s, |x| (0.0..=2000.0).contains(&x), "seconds in [0, 2000]")?;
        let ecn = p.bool("ecn", d.ecn)?;
        let ecn_thresh = p.f64("ecn_thresh", d.ecn_thresh, |x| (0.0..=1.0).contains(&x), "a fraction in [0, 1]")?;
        let ecn_max_rtt_ms =
            p.f64("ecn_max_rtt_ms", d.ecn_max_rtt_ms, |x| (0.0..=60_000.0).contains(&x), "milliseconds in [0, 60000]")?;
        let seed = p.u64("seed", d.seed, |_| true, "a non-negative integer")?;
        Ok(Config {
            startup_pacing_gain,
            startup_cwnd_gain,
            cwnd_gain,
            beta,
            loss_thresh,
            inflight_headroom,
            probe_rtt_ms,
            probe_rtt_win_s,
            min_rtt_win_s,
            bw_probe_base_s,
            bw_probe_rand_s,
            ecn,
            ecn_thresh,
            ecn_max_rtt_ms,
            seed,
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "bbr3",
        aliases: &["bbrv3"],
        description: "BBR v3: model-based (bandwidth and min RTT), Startup/Drain/ProbeBW (DOWN, CRUISE, REFILL, UP)/ProbeRTT, \
                      inflight_hi/inflight_lo/bw_lo bounds from loss (2 %) and ECN, paced. google/bbr v3 tcp_bbr.c with \
                      Linux fixed point; draft-ietf-ccwg-bbr-06.",
        params: vec![
            ParamInfo::new("startup_pacing_gain", d.startup_pacing_gain, "Startup pacing gain; rounded up to 1/256 (710/256)", "google/bbr v3 bbr_startup_pacing_gain = 256*277/100+1"),
            ParamInfo::new("startup_cwnd_gain", d.startup_cwnd_gain, "cwnd gain in Startup and Drain", "bbr_startup_cwnd_gain"),
            ParamInfo::new("cwnd_gain", d.cwnd_gain, "cwnd gain in ProbeBW (+0.25 in PROBE_UP, bbr_bw_probe_cwnd_gain)", "bbr_cwnd_gain"),
            ParamInfo::new("beta", d.beta, "fraction of bw_lo/inflight_lo/inflight_hi kept on a loss cut (Linux bbr_beta = 1 - beta = 30 %, truncated to 76/256)", "bbr_beta; draft BBRBeta"),
            ParamInfo::new("loss_thresh", d.loss_thresh, "loss rate (lost / tx_in_flight) above which inflight is too high; truncated to 1/256 (5/256)", "bbr_loss_thresh; draft BBRLossThresh"),
            ParamInfo::new("inflight_headroom", d.inflight_headroom, "fraction of inflight_hi left unused when cruising; truncated to 1/256 (38/256)", "bbr_inflight_headroom; draft BBRHeadroom"),
            ParamInfo::new("probe_rtt_ms", d.probe_rtt_ms, "time in ProbeRTT at 0.5 BDP, ms (0 disables ProbeRTT)", "bbr_probe_rtt_mode_ms"),
            ParamInfo::new("probe_rtt_win_s", d.probe_rtt_win_s, "ProbeRTT when no RTT below probe_rtt_min for this long, s (<= min_rtt_win_s)", "bbr_probe_rtt_win_ms"),
            ParamInfo::new("min_rtt_win_s", d.min_rtt_win_s, "min_rtt filter window, s", "bbr_min_rtt_win_sec"),
            ParamInfo::new("bw_probe_base_s", d.bw_probe_base_s, "wall-clock wait before a bandwidth probe: base, s", "bbr_bw_probe_base_us"),
            ParamInfo::new("bw_probe_rand_s", d.bw_probe_rand_s, "wall-clock wait before a bandwidth probe: uniform random extra in [0, this), s", "bbr_bw_probe_rand_us"),
            ParamInfo::new("ecn", d.ecn, "the path gives shallow-threshold ECN marks (Linux TCP_ECN_OK && TCP_ECN_LOW): use ECN alpha, the ECN Startup exit and the ECN cuts", "bbr_can_use_ecn"),
            ParamInfo::new("ecn_thresh", d.ecn_thresh, "CE fraction of delivered above which inflight is too high; truncated to 1/256 (0 disables)", "bbr_ecn_thresh"),
            ParamInfo::new("ecn_max_rtt_ms", d.ecn_max_rtt_ms, "ECN is used only when min_rtt <= this, ms (0 = any RTT)", "bbr_ecn_max_rtt_us"),
            ParamInfo::new("seed", d.seed, "seed of the PRNG that picks the probe wait (rounds and wall clock)", "tcplab (Linux get_random_u32_below)"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Bbr3::from_params(map, field)?))
}

impl Default for Bbr3 {
    fn default() -> Self {
        Self::new()
    }
}

impl Bbr3 {
    /// The v3 defaults.
    pub fn new() -> Self {
        Bbr3::with(&Config::default())
    }

    /// The state of `bbr_init` with these parameters in Linux's fixed
    /// point: gains and fractions truncated to 1/256 (the Startup pacing
    /// gain rounded up, as `256 * 277 / 100 + 1`), times in ms or us.
    pub fn with(c: &Config) -> Self {
        Bbr3 {
            startup_pacing_gain: ((c.startup_pacing_gain * BBR_UNIT as f64 - 1e-9).ceil() as u32).max(1),
            startup_cwnd_gain: fx_floor(c.startup_cwnd_gain).max(1),
            cwnd_gain_param: fx_floor(c.cwnd_gain).max(1),
            beta: fx_floor(1.0 - c.beta),
            loss_thresh: fx_floor(c.loss_thresh),
            inflight_headroom: fx_floor(c.inflight_headroom),
            probe_rtt_mode_ms: c.probe_rtt_ms.round() as u64,
            probe_rtt_win_ms: (c.probe_rtt_win_s * 1000.0).round() as u64,
            min_rtt_win_ms: (c.min_rtt_win_s * 1000.0).round() as u64,
            bw_probe_base_us: (c.bw_probe_base_s * 1e6).round() as u64,
            bw_probe_rand_us: (c.bw_probe_rand_s * 1e6).round() as u64,
            ecn: c.ecn,
            ecn_thresh: fx_floor(c.ecn_thresh),
            ecn_max_rtt_us: (c.ecn_max_rtt_ms * 1000.0).round() as u64,
            rng: c.seed,
            min_rtt_us: NONE,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: NONE,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 10,
            pacing_gain: BBR_UNIT * 277 / 100 + 1,
            cwnd_gain: BBR_UNIT * 2,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 1,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: NONE,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: NONE,
            inflight_hi: NONE,
            bw_probe_up_cnt: NONE,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            initialized: false,
            cwnd: 10,
            pacing_rate: 0,
            mss: 1448,
            now_us: 0,
            delivered: 0,
            srtt: 0.0,
            delivered_ce: 0,
            is_ece: false,
            edt: 0.0,
            round_count: 0,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Bbr3::with(&Config::from_params(map, field)?))
    }
}
