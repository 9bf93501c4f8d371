//! BBR's parameters ([`Config`], whose `Default` is where each default is
//! written), their listing in the catalog and the construction of the
//! algorithm's state from them.

use super::{Bbr, Mode, WinMinmax, BBR_UNIT, HZ, NO_RTT, TCP_INIT_CWND};
use crate::cc::{AlgorithmInfo, CaState, CongestionControl, ParamInfo, Params};
use crate::error::SpecError;

/// BBR's parameters as the spec gives them (gains as factors, times in
/// their units); [`Bbr::with`] turns them into Linux's fixed point.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub high_gain: f64,
    pub cwnd_gain: f64,
    pub probe_rtt_ms: u64,
    pub min_rtt_win_s: f64,
    pub bw_rtts: u64,
    pub full_bw_thresh: f64,
    pub full_bw_cnt: u64,
    pub extra_acked_gain: f64,
    pub lt_bw: bool,
    pub min_rtt_refresh_on_equal: bool,
    pub seed: u64,
}

impl Default for Config {
    /// Linux tcp_bbr.c's constants (`bbr_high_gain` = 2/ln 2, `bbr_cwnd_gain`,
    /// `bbr_probe_rtt_mode_ms`, `bbr_min_rtt_win_sec`, `bbr_bw_rtts` =
    /// CYCLE_LEN + 2, `bbr_full_bw_thresh`, `bbr_full_bw_cnt`,
    /// `bbr_extra_acked_gain`).
    fn default() -> Self {
        Config {
            high_gain: 2.885,
            cwnd_gain: 2.0,
            probe_rtt_ms: 200,
            min_rtt_win_s: 10.0,
            bw_rtts: 10,
            full_bw_thresh: 1.25,
            full_bw_cnt: 3,
            extra_acked_gain: 1.0,
            lt_bw: true,
            min_rtt_refresh_on_equal: false,
            seed: 1,
        }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        Ok(Config {
            seed: p.u64("seed", d.seed, |_| true, "a non-negative integer")?,
            high_gain: p.f64("high_gain", d.high_gain, |x| x > 1.0 && x <= 10.0, "a gain in (1, 10]")?,
            cwnd_gain: p.f64("cwnd_gain", d.cwnd_gain, |x| (1.0..=10.0).contains(&x), "a gain in [1, 10]")?,
            probe_rtt_ms: p.u64(
                "probe_rtt_ms",
                d.probe_rtt_ms,
                |x| x <= 60_000,
                "an integer number of ms in [0, 60000]",
            )?,
            min_rtt_win_s: p.f64(
                "min_rtt_win_s",
                d.min_rtt_win_s,
                |x| (0.001..=3600.0).contains(&x),
                "a number of seconds in [0.001, 3600]",
            )?,
            bw_rtts: p.u64(
                "bw_rtts",
                d.bw_rtts,
                |x| (1..=1000).contains(&x),
                "an integer number of rounds in [1, 1000]",
            )?,
            full_bw_thresh: p.f64(
                "full_bw_thresh",
                d.full_bw_thresh,
                |x| (1.0..=10.0).contains(&x),
                "a factor in [1, 10]",
            )?,
            full_bw_cnt: p.u64(
                "full_bw_cnt",
                d.full_bw_cnt,
                |x| (1..=100).contains(&x),
                "an integer number of rounds in [1, 100]",
            )?,
            extra_acked_gain: p.f64(
                "extra_acked_gain",
                d.extra_acked_gain,
                |x| (0.0..=10.0).contains(&x),
                "a gain in [0, 10]",
            )?,
            lt_bw: p.bool("lt_bw", d.lt_bw)?,
            min_rtt_refresh_on_equal: p.bool("min_rtt_refresh_on_equal", d.min_rtt_refresh_on_equal)?,
        })
    }
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "bbr",
        aliases: &["bbr1", "bbrv1"],
        description: "BBR v1: model-based; paces at gain x windowed-max delivery rate and caps inflight at \
                      cwnd_gain x BDP; Startup, Drain, ProbeBW gain cycling, ProbeRTT, long-term (policer) \
                      bandwidth, ACK-aggregation allowance. Linux tcp_bbr.c (6.x) in its fixed-point arithmetic.",
        params: vec![
            ParamInfo::new("high_gain", d.high_gain, "Startup pacing and cwnd gain (2/ln 2); Drain paces at 1/high_gain; used as ceil(256 x)/256 (739/256)", "Linux bbr_high_gain = 256 * 2885 / 1000 + 1; draft-cardwell-iccrg-bbr-congestion-control-00 BBRHighGain"),
            ParamInfo::new("cwnd_gain", d.cwnd_gain, "ProbeBW cwnd gain: cwnd target = cwnd_gain x BDP + quantization budget", "Linux bbr_cwnd_gain"),
            ParamInfo::new("probe_rtt_ms", d.probe_rtt_ms, "minimum time at cwnd 4 in ProbeRTT, ms (and at least one round); 0 disables ProbeRTT", "Linux bbr_probe_rtt_mode_ms"),
            ParamInfo::new("min_rtt_win_s", d.min_rtt_win_s, "min-RTT filter window, seconds; ProbeRTT starts when the min RTT is this old", "Linux bbr_min_rtt_win_sec"),
            ParamInfo::new("bw_rtts", d.bw_rtts, "max-bandwidth filter window, round trips", "Linux bbr_bw_rtts = CYCLE_LEN + 2"),
            ParamInfo::new("full_bw_thresh", d.full_bw_thresh, "Startup ends after full_bw_cnt rounds without bandwidth growth by this factor; used as round(256 x)/256", "Linux bbr_full_bw_thresh"),
            ParamInfo::new("full_bw_cnt", d.full_bw_cnt, "rounds without growth that end Startup", "Linux bbr_full_bw_cnt"),
            ParamInfo::new("extra_acked_gain", d.extra_acked_gain, "gain on the ACK-aggregation estimate added to the cwnd target (capped at 100 ms of bw); 0 disables", "Linux bbr_extra_acked_gain"),
            ParamInfo::new("lt_bw", d.lt_bw, "long-term bandwidth (token-bucket policer) detection and use", "Linux bbr_lt_bw_sampling"),
            ParamInfo::new("min_rtt_refresh_on_equal", d.min_rtt_refresh_on_equal, "refresh the min-RTT filter's timestamp on a sample equal to the minimum (mainline's <=), not only on a lower one (google/bbr v2/v3); with true, a jitter-free path postpones ProbeRTT indefinitely", "Linux bbr_update_min_rtt; google/bbr v3 bbr_update_min_rtt"),
            ParamInfo::new("seed", d.seed, "seed of the generator choosing the random start phase of the ProbeBW gain cycle", "tcplab (Linux get_random_u32_below(bbr_cycle_rand))"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Bbr::from_params(map, field)?))
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr::new(1)
    }
}

impl Bbr {
    pub fn new(seed: u64) -> Self {
        Bbr::with(&Config { seed, ..Config::default() })
    }

    /// Linux `bbr_init`'s state with these parameters, in Linux's fixed point
    /// (module docs: high_gain `ceil(256 x)`, drain gain `floor(256 / high_gain)`,
    /// the others `round(256 x)`).
    pub fn with(c: &Config) -> Self {
        let high_gain = (c.high_gain * BBR_UNIT as f64 - 1e-9).ceil() as u64;
        Bbr {
            high_gain,
            drain_gain: (BBR_UNIT as f64 / c.high_gain + 1e-9).floor() as u64,
            cwnd_gain_param: (c.cwnd_gain * BBR_UNIT as f64).round() as u64,
            probe_rtt_ms: c.probe_rtt_ms,
            min_rtt_win: (c.min_rtt_win_s * HZ as f64).round() as u64,
            bw_rtts: c.bw_rtts as u32,
            full_bw_thresh: (c.full_bw_thresh * BBR_UNIT as f64).round() as u64,
            full_bw_cnt_target: c.full_bw_cnt as u32,
            extra_acked_gain: (c.extra_acked_gain * BBR_UNIT as f64).round() as u64,
            lt_bw_enabled: c.lt_bw,
            min_rtt_refresh_on_equal: c.min_rtt_refresh_on_equal,
            seed: c.seed,
            rng: c.seed,
            min_rtt_us: NO_RTT,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: WinMinmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: high_gain,
            cwnd_gain: high_gain,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0, 0],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: None,
            mss: 1448,
            last_delivered: 0,
            last_delivered_us: 0,
            last_lost: 0,
            last_cwnd: TCP_INIT_CWND,
        }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Bbr::with(&Config::from_params(map, field)?))
    }
}
