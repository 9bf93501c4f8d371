//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time).
//!
//! Sources:
//! - Linux mainline `net/ipv4/tcp_bbr.c` (6.x; the BBR v1 module as merged in
//!   4.9 with the later ACK-aggregation, EDT and quantization changes):
//!   every rule and constant here follows it function by function
//!   (`bbr_main`, `bbr_update_model`, `bbr_update_bw`, `bbr_lt_bw_sampling`,
//!   `bbr_update_ack_aggregation`, `bbr_update_cycle_phase`,
//!   `bbr_check_full_bw_reached`, `bbr_check_drain`, `bbr_update_min_rtt`,
//!   `bbr_update_gains`, `bbr_set_pacing_rate`, `bbr_set_cwnd`,
//!   `bbr_set_cwnd_to_recover_or_restore`, `bbr_set_state`,
//!   `bbr_cwnd_event`, `bbr_undo_cwnd`, `bbr_ssthresh`, `bbr_init`).
//! - Linux `lib/win_minmax.c` (Kathleen Nichols' windowed min/max), as
//!   [`WinMinmax`].
//! - draft-cardwell-iccrg-bbr-congestion-control-00 (the prose description of
//!   the same algorithm).
//!
//! Arithmetic: Linux's fixed point is kept wherever it can change a
//! decision: gains in 1/256 (BBR_SCALE 8: high_gain 739, drain_gain 88,
//! cwnd_gain 512, the cycle 320/192/256), bandwidth in segments per
//! microsecond << 24 (BW_SCALE), times in integer microseconds
//! (`round(t * 1e6)`, as `tcp_mstamp`), the min-RTT and ProbeRTT clocks in
//! jiffies at HZ = 1000 (`floor(t * 1000)`), the long-term interval in
//! milliseconds, the BDP `ceil(bw * min_rtt * gain)` in integer segments,
//! and `sk_pacing_rate` in integer bytes per second with the 1 % margin
//! applied as Linux does (so the rate is truncated the same way). Products
//! are taken in u128 and bandwidths kept in u64 instead of Linux's u32;
//! that changes nothing below ~3 Tbit/s, where Linux's u32 would overflow.
//! Parameterised gains become fixed point as: high_gain `ceil(256 x)`
//! (Linux's `256 * 2885 / 1000 + 1` = 739 rounds 738.56 up), drain gain
//! `floor(256 / high_gain)` (Linux `256 * 1000 / 2885` = 88), the others
//! `round(256 x)`.
//!
//! Deviations from tcp_bbr.c:
//! - The min-RTT filter is refreshed by a strictly lower sample (google/bbr
//!   v2/v3 and the BBR authors' 2020 patch for v1), not by an equal one as
//!   mainline's `rs->rtt_us <= bbr->min_rtt_us`: tcplab's paths have no
//!   jitter, so an empty queue returns exactly the minimum every gain cycle
//!   and `<=` would postpone ProbeRTT for ever, where the kernel on a real
//!   path, whose samples differ by microseconds, still probes every 10-15 s
//!   (docs/validation.md). `min_rtt_refresh_on_equal = true` gives
//!   mainline's rule.
//! - `rs->is_ack_delayed` is not in [`RateSample`]: taken as false (every
//!   RTT sample may refresh an expired min-RTT filter).
//! - `bbr_undo_cwnd` resets the long-term sampling interval with the
//!   connection's counters as of the last hook that saw them (`undo_cwnd`
//!   gets no [`Conn`]); those values are never read before the next loss
//!   restarts sampling and overwrites them, so nothing changes.
//! - `sk_max_pacing_rate` and `snd_cwnd_clamp` are unlimited; the u16/20-bit
//!   widths of `extra_acked`/`ack_epoch_acked` are kept only where Linux
//!   clamps explicitly (the 0xFFFFF cap and the 2^20 epoch reset).
//! - The random start phase of the gain cycle (`get_random_u32_below(7)`)
//!   comes from a SplitMix64 generator seeded by the `seed` parameter, so runs
//!   are reproducible.
//! - Until `init` runs, `pacing_rate_bps` is None (no pacing), as
//!   `sk_pacing_rate` = ~0 before `bbr_init`.

use super::{
    AckSample, AlgorithmInfo, CaState, CongestionControl, Conn, LossEvent, ParamInfo, Params, RateSample, Window,
};
use crate::error::SpecError;

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const CYCLE_LEN: u32 = 8;
const CYCLE_RAND: u32 = 7;
const PACING_GAIN: [u64; 8] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const PACING_MARGIN_PERCENT: u64 = 1;
const CWND_MIN_TARGET: u64 = 4;
const TCP_INIT_CWND: u64 = 10;
const TCP_INFINITE_SSTHRESH: f64 = 2_147_483_647.0;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
/// bytes/s (4 kbit/s).
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `bbr_tso_segs_goal`'s constants: sk_pacing_shift (10: about 1 ms of
/// data), GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER as the byte cap,
/// bbr_min_tso_rate (1.2 Mbit/s) below which the goal is 1 segment, not 2.
const PACING_SHIFT: u32 = 10;
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;
const MIN_TSO_RATE_BYTES: u64 = 1_200_000 / 8;
/// Jiffies per second for the min-RTT / ProbeRTT clocks.
const HZ: u64 = 1000;
/// `min_rtt_us` before any RTT sample (~0U).
const NO_RTT: u64 = u32::MAX as u64;

/// One sample of a [`WinMinmax`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    pub t: u32,
    pub v: u64,
}

/// Linux `lib/win_minmax.c`: the best, 2nd and 3rd best values over a window
/// of `win` time units (here: BBR round trips), in constant space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WinMinmax {
    pub s: [MinmaxSample; 3],
}

impl WinMinmax {
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [MinmaxSample { t, v }; 3];
        v
    }

    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new best: promote 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new best: 2nd choice from the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window: 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// Linux's ordering of CA states (Open < Disorder < CWR < Recovery < Loss).
fn ca_rank(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

fn us(t: f64) -> u64 {
    crate::sim::time::round_u64(t.max(0.0) * 1e6)
}

fn jiffies(t: f64) -> u64 {
    crate::sim::time::floor_u64(t.max(0.0) * HZ as f64 + 1e-6)
}

#[derive(Debug, Clone)]
pub struct Bbr {
    // Parameters (fixed point where Linux has it).
    pub high_gain: u64,
    pub drain_gain: u64,
    pub cwnd_gain_param: u64,
    pub probe_rtt_ms: u64,
    /// min-RTT filter window, jiffies.
    pub min_rtt_win: u64,
    pub bw_rtts: u32,
    pub full_bw_thresh: u64,
    pub full_bw_cnt_target: u32,
    pub extra_acked_gain: u64,
    pub lt_bw_enabled: bool,
    /// Mainline's `<=` in the min-RTT filter (module docs).
    pub min_rtt_refresh_on_equal: bool,
    pub seed: u64,
    rng: u64,

    // struct bbr.
    pub min_rtt_us: u64,
    /// jiffies.
    pub min_rtt_stamp: u64,
    /// jiffies, 0 = not set.
    pub probe_rtt_done_stamp: u64,
    pub bw: WinMinmax,
    pub rtt_cnt: u32,
    pub next_rtt_delivered: u64,
    /// us.
    pub cycle_mstamp: u64,
    pub mode: Mode,
    pub prev_ca_state: CaState,
    pub packet_conservation: bool,
    pub round_start: bool,
    pub idle_restart: bool,
    pub probe_rtt_round_done: bool,
    pub lt_is_sampling: bool,
    pub lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u64,
    pub lt_last_delivered: u64,
    /// ms.
    pub lt_last_stamp: u64,
    pub lt_last_lost: u64,
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pub full_bw_reached: bool,
    pub full_bw_cnt: u32,
    pub cycle_idx: u32,
    pub has_seen_rtt: bool,
    pub prior_cwnd: u64,
    pub full_bw: u64,
    /// us.
    pub ack_epoch_mstamp: u64,
    pub extra_acked: [u64; 2],
    pub ack_epoch_acked: u64,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_win_idx: usize,

    /// `sk_pacing_rate`, bytes/s; None before `init`.
    pub pacing_rate: Option<u64>,
    mss: u64,
    // The tcp_sock counters as of the last hook with a Conn.
    last_delivered: u64,
    last_delivered_us: u64,
    last_lost: u64,
    /// `snd_cwnd` as of the last hook with a window.
    last_cwnd: u64,
}

const PARAMS: &[&str] = &[
    "high_gain",
    "cwnd_gain",
    "probe_rtt_ms",
    "min_rtt_win_s",
    "bw_rtts",
    "full_bw_thresh",
    "full_bw_cnt",
    "extra_acked_gain",
    "lt_bw",
    "min_rtt_refresh_on_equal",
    "seed",
];

pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "bbr",
        aliases: &["bbr1", "bbrv1"],
        description: "BBR v1: model-based; paces at gain x windowed-max delivery rate and caps inflight at \
                      cwnd_gain x BDP; Startup, Drain, ProbeBW gain cycling, ProbeRTT, long-term (policer) \
                      bandwidth, ACK-aggregation allowance. Linux tcp_bbr.c (6.x) in its fixed-point arithmetic.",
        params: vec![
            ParamInfo { name: "high_gain", default: "2.885", description: "Startup pacing and cwnd gain (2/ln 2); Drain paces at 1/high_gain; used as ceil(256 x)/256 (739/256)", source: "Linux bbr_high_gain = 256 * 2885 / 1000 + 1; draft-cardwell-iccrg-bbr-congestion-control-00 BBRHighGain" },
            ParamInfo { name: "cwnd_gain", default: "2", description: "ProbeBW cwnd gain: cwnd target = cwnd_gain x BDP + quantization budget", source: "Linux bbr_cwnd_gain" },
            ParamInfo { name: "probe_rtt_ms", default: "200", description: "minimum time at cwnd 4 in ProbeRTT, ms (and at least one round); 0 disables ProbeRTT", source: "Linux bbr_probe_rtt_mode_ms" },
            ParamInfo { name: "min_rtt_win_s", default: "10", description: "min-RTT filter window, seconds; ProbeRTT starts when the min RTT is this old", source: "Linux bbr_min_rtt_win_sec" },
            ParamInfo { name: "bw_rtts", default: "10", description: "max-bandwidth filter window, round trips", source: "Linux bbr_bw_rtts = CYCLE_LEN + 2" },
            ParamInfo { name: "full_bw_thresh", default: "1.25", description: "Startup ends after full_bw_cnt rounds without bandwidth growth by this factor; used as round(256 x)/256", source: "Linux bbr_full_bw_thresh" },
            ParamInfo { name: "full_bw_cnt", default: "3", description: "rounds without growth that end Startup", source: "Linux bbr_full_bw_cnt" },
            ParamInfo { name: "extra_acked_gain", default: "1", description: "gain on the ACK-aggregation estimate added to the cwnd target (capped at 100 ms of bw); 0 disables", source: "Linux bbr_extra_acked_gain" },
            ParamInfo { name: "lt_bw", default: "true", description: "long-term bandwidth (token-bucket policer) detection and use", source: "Linux bbr_lt_bw_sampling" },
            ParamInfo { name: "min_rtt_refresh_on_equal", default: "false", description: "refresh the min-RTT filter's timestamp on a sample equal to the minimum (mainline's <=), not only on a lower one (google/bbr v2/v3); with true, a jitter-free path postpones ProbeRTT indefinitely", source: "Linux bbr_update_min_rtt; google/bbr v3 bbr_update_min_rtt" },
            ParamInfo { name: "seed", default: "1", description: "seed of the generator choosing the random start phase of the ProbeBW gain cycle", source: "tcplab (Linux get_random_u32_below(bbr_cycle_rand))" },
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
        Bbr {
            high_gain: BBR_UNIT * 2885 / 1000 + 1,
            drain_gain: BBR_UNIT * 1000 / 2885,
            cwnd_gain_param: BBR_UNIT * 2,
            probe_rtt_ms: 200,
            min_rtt_win: 10 * HZ,
            bw_rtts: CYCLE_LEN + 2,
            full_bw_thresh: BBR_UNIT * 5 / 4,
            full_bw_cnt_target: 3,
            extra_acked_gain: BBR_UNIT,
            lt_bw_enabled: true,
            min_rtt_refresh_on_equal: false,
            seed,
            rng: seed,
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
            pacing_gain: BBR_UNIT * 2885 / 1000 + 1,
            cwnd_gain: BBR_UNIT * 2885 / 1000 + 1,
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
        let p = Params::new(map, field, PARAMS)?;
        let seed = p.u64("seed", 1, |_| true, "a non-negative integer")?;
        let mut b = Bbr::new(seed);
        if map.contains_key("high_gain") {
            let g = p.f64("high_gain", 2.885, |x| x > 1.0 && x <= 10.0, "a gain in (1, 10]")?;
            b.high_gain = (g * BBR_UNIT as f64 - 1e-9).ceil() as u64;
            b.drain_gain = (BBR_UNIT as f64 / g + 1e-9).floor() as u64;
        }
        let cg = p.f64("cwnd_gain", 2.0, |x| (1.0..=10.0).contains(&x), "a gain in [1, 10]")?;
        b.cwnd_gain_param = (cg * BBR_UNIT as f64).round() as u64;
        b.probe_rtt_ms = p.u64("probe_rtt_ms", 200, |x| x <= 60_000, "an integer number of ms in [0, 60000]")?;
        let win =
            p.f64("min_rtt_win_s", 10.0, |x| x >= 0.001 && x <= 3600.0, "a number of seconds in [0.001, 3600]")?;
        b.min_rtt_win = (win * HZ as f64).round() as u64;
        b.bw_rtts =
            p.u64("bw_rtts", 10, |x| (1..=1000).contains(&x), "an integer number of rounds in [1, 1000]")? as u32;
        let th = p.f64("full_bw_thresh", 1.25, |x| (1.0..=10.0).contains(&x), "a factor in [1, 10]")?;
        b.full_bw_thresh = (th * BBR_UNIT as f64).round() as u64;
        b.full_bw_cnt_target =
            p.u64("full_bw_cnt", 3, |x| (1..=100).contains(&x), "an integer number of rounds in [1, 100]")? as u32;
        let eg = p.f64("extra_acked_gain", 1.0, |x| (0.0..=10.0).contains(&x), "a gain in [0, 10]")?;
        b.extra_acked_gain = (eg * BBR_UNIT as f64).round() as u64;
        b.lt_bw_enabled = p.bool("lt_bw", true)?;
        b.min_rtt_refresh_on_equal = p.bool("min_rtt_refresh_on_equal", false)?;
        b.pacing_gain = b.high_gain;
        b.cwnd_gain = b.high_gain;
        Ok(b)
    }

    /// SplitMix64.
    fn next_u32(&mut self) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 32) as u32
    }

    /// Uniform in [0, ceil) (Linux `get_random_u32_below`: multiply-shift with rejection).
    fn random_below(&mut self, ceil: u32) -> u32 {
        let threshold = ceil.wrapping_neg() % ceil;
        loop {
            let m = self.next_u32() as u64 * ceil as u64;
            if (m as u32) >= threshold {
                return (m >> 32) as u32;
            }
        }
    }

    fn remember(&mut self, c: &Conn) {
        self.mss = c.mss.max(1) as u64;
        self.last_delivered = c.delivered;
        self.last_delivered_us = us(c.delivered_time);
        self.last_lost = c.lost;
    }

    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: pkts/us << 24.
    pub fn bbr_bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked_max(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`.
    fn rate_bytes_per_sec(&self, rate: u64, gain: u64) -> u64 {
        let mut r = rate as u128 * self.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, srtt: f64) {
        let rtt_us = if srtt > 0.0 {
            self.has_seen_rtt = true;
            us(srtt).max(1)
        } else {
            1000
        };
        let bw = cwnd as u128 * BW_UNIT as u128 / rtt_us as u128;
        self.pacing_rate = Some(self.rate_bytes_per_sec(bw as u64, self.high_gain));
    }

    /// `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, bw: u64, gain: u64, cwnd: u64, srtt: f64) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && srtt > 0.0 {
            self.init_pacing_rate_from_rtt(cwnd, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate.unwrap_or(0) {
            self.pacing_rate = Some(rate);
        }
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if ca_rank(self.prev_ca_state) < ca_rank(CaState::Recovery) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw * min_rtt * gain) segments.
    pub fn bdp(&self, bw: u64, gain: u64) -> u64 {
        if self.min_rtt_us == NO_RTT {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE) + BW_UNIT as u128 - 1) as u64 / BW_UNIT
    }

    /// `bbr_tso_segs_goal`: the segments Linux would put in one TSO burst
    /// at the pacing rate (about 1 ms of data, at least 2 above 1.2
    /// Mbit/s). tcplab sends one segment per packet, but the goal is a
    /// count of segments in the kernel's cwnd arithmetic whatever the
    /// device does, so it enters the cwnd target as in Linux.
    pub fn tso_segs_goal(&self) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0);
        let bytes = (rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let min = if rate < MIN_TSO_RATE_BYTES { 1 } else { 2 };
        (bytes / self.mss.max(1)).max(min).min(0x7F)
    }

    /// `bbr_quantization_budget`.
    pub fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in flight at the next paced departure,
    /// less what the bandwidth delivers until then.
    fn packets_in_net_at_edt(&self, inflight_now: u64, c: &Conn) -> u64 {
        let interval_us = us(c.edt).saturating_sub(us(c.now));
        let interval_delivered = ((self.bbr_bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight += self.tso_segs_goal();
        }
        inflight.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`.
    pub fn ack_aggregation_cwnd(&self) -> u64 {
        if self.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bbr_bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr = (self.extra_acked_gain * self.extra_acked_max()) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: (cwnd, packet conservation in use).
    fn set_cwnd_to_recover_or_restore(&mut self, rs: &RateSample, acked: u64, cwnd: u64, c: &Conn) -> (u64, bool) {
        let prev = self.prev_ca_state;
        let state = c.state;
        let mut cwnd = cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u64;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = c.in_flight + acked;
        } else if ca_rank(prev) >= ca_rank(CaState::Recovery) && ca_rank(state) < ca_rank(CaState::Recovery) {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return ((cwnd).max(c.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, c: &Conn, acked: u64, bw: u64, gain: u64) {
        let mut cwnd = w.cwnd.max(0.0) as u64;
        'done: {
            if acked == 0 {
                break 'done;
            }
            let (cw, conserving) = self.set_cwnd_to_recover_or_restore(rs, acked, cwnd, c);
            cwnd = cw;
            if conserving {
                break 'done;
            }
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || c.delivered < TCP_INIT_CWND {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd as f64;
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample, c: &Conn) -> bool {
        let is_full_length = us(c.delivered_time).saturating_sub(self.cycle_mstamp) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight, c);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, delivered_us: u64) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = delivered_us;
    }

    fn reset_probe_bw_mode(&mut self, delivered_us: u64) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND);
        self.advance_cycle_phase(delivered_us);
    }

    fn reset_mode(&mut self, delivered_us: u64) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(delivered_us);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, delivered_us: u64, delivered: u64, lost: u64) {
        self.lt_last_stamp = delivered_us / 1000;
        self.lt_last_delivered = delivered;
        self.lt_last_lost = lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, delivered_us: u64, delivered: u64, lost: u64) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(delivered_us, delivered, lost);
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_bw_interval_done(&mut self, bw: u64, delivered_us: u64, delivered: u64, lost: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF {
                // Two consistent lossy intervals: policed.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(delivered_us, delivered, lost);
    }

    /// `bbr_lt_bw_sampling`; `losses`/`app_limited` from the rate sample.
    fn lt_bw_sampling(&mut self, losses: u64, is_app_limited: bool, c: &Conn) {
        if !self.lt_bw_enabled {
            return;
        }
        let d_us = us(c.delivered_time);
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(d_us, c.delivered, c.lost);
                    self.reset_probe_bw_mode(d_us);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(d_us, c.delivered, c.lost);
            self.lt_is_sampling = true;
        }
        if is_app_limited {
            self.reset_lt_bw_sampling(d_us, c.delivered, c.lost);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(d_us, c.delivered, c.lost);
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = c.lost.wrapping_sub(self.lt_last_lost);
        let delivered = c.delivered.wrapping_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (d_us / 1000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        if t as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(d_us, c.delivered, c.lost);
            return;
        }
        let bw = (delivered as u128 * BW_UNIT as u128 / (t as u128 * 1000)) as u64;
        self.lt_bw_interval_done(bw, d_us, c.delivered, c.lost);
    }

    /// `bbr_update_bw`.
    fn update_bw(&mut self, rs: &RateSample, c: &Conn) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval <= 0.0 {
            return;
        }
        // Linux's interval is whole microseconds, at least the min RTT.
        let interval_us = us(rs.interval).max(1);
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses, rs.is_app_limited, c);
        let bw = (rs.delivered as u128 * BW_UNIT as u128 / interval_us as u128) as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(self.bw_rtts, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, w: &Window, rs: &RateSample, c: &Conn) {
        if self.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval <= 0.0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let d_us = us(c.delivered_time);
        let epoch_us = d_us.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = (self.bbr_bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = d_us;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(w.cwnd.max(0.0) as u64);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u128 * self.full_bw_thresh as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.full_bw_cnt_target;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, w: &mut Window, c: &Conn) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) as f64;
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(c.in_flight, c) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(us(c.delivered_time));
        }
    }

    /// `bbr_check_probe_rtt_done`; returns whether ProbeRTT ended (cwnd to be raised to prior_cwnd).
    fn check_probe_rtt_done(&mut self, now: f64, delivered_us: u64) -> bool {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(now) > self.probe_rtt_done_stamp) {
            return false;
        }
        self.min_rtt_stamp = jiffies(now);
        self.reset_mode(delivered_us);
        true
    }

    /// `bbr_update_min_rtt`.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn) {
        let now_j = jiffies(c.now);
        let filter_expired = now_j > self.min_rtt_stamp + self.min_rtt_win;
        if let Some(rtt) = rs.rtt {
            let rtt_us = us(rtt);
            let lower = rtt_us < self.min_rtt_us || (self.min_rtt_refresh_on_equal && rtt_us == self.min_rtt_us);
            if lower || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now_j;
            }
        }
        if self.probe_rtt_ms > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w.cwnd.max(0.0) as u64);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            c.app_limited = (c.delivered + c.in_flight).max(1);
            if self.probe_rtt_done_stamp == 0 && c.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = now_j + self.probe_rtt_ms * HZ / 1000;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && self.check_probe_rtt_done(c.now, us(c.delivered_time)) {
                    w.cwnd = w.cwnd.max(self.prior_cwnd as f64);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = self.high_gain;
                self.cwnd_gain = self.high_gain;
            }
            Mode::Drain => {
                self.pacing_gain = self.drain_gain;
                self.cwnd_gain = self.high_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] };
                self.cwnd_gain = self.cwnd_gain_param;
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn) {
        self.update_bw(rs, c);
        self.update_ack_aggregation(w, rs, c);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, c) {
            self.advance_cycle_phase(us(c.delivered_time));
        }
        self.check_full_bw_reached(rs);
        self.check_drain(w, c);
        self.update_min_rtt(w, rs, c);
        self.update_gains();
    }

    /// Bits per second of payload for a bandwidth in pkts/us << 24.
    pub fn bw_to_bps(&self, bw: u64) -> f64 {
        bw as f64 * self.mss as f64 * 8.0 * 1e6 / BW_UNIT as f64
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn controls_window(&self) -> bool {
        true
    }

    /// `bbr_init`.
    fn init(&mut self, w: &mut Window, c: &Conn) {
        self.remember(c);
        self.last_cwnd = w.cwnd.max(0.0) as u64;
        self.prior_cwnd = 0;
        w.ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = if c.min_rtt.is_finite() { us(c.min_rtt) } else { NO_RTT };
        self.min_rtt_stamp = jiffies(c.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(w.cwnd.max(0.0) as u64, c.srtt);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(us(c.delivered_time), c.delivered, c.lost);
        self.mode = Mode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
        self.ack_epoch_mstamp = us(c.now);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
    }

    /// `bbr_main`.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn) {
        self.remember(c);
        self.update_model(w, rs, c);
        let bw = self.bbr_bw();
        self.set_pacing_rate(bw, self.pacing_gain, w.cwnd.max(0.0) as u64, c.srtt);
        self.set_cwnd(w, rs, c, rs.acked_sacked, bw, self.cwnd_gain);
        self.last_cwnd = w.cwnd.max(0.0) as u64;
    }

    /// `bbr_set_state`.
    fn on_state(&mut self, _w: &mut Window, new: CaState, c: &Conn) {
        self.remember(c);
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(1, false, c);
        }
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`.
    fn on_tx_start(&mut self, w: &mut Window, c: &Conn) {
        self.remember(c);
        if c.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = us(c.now);
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => {
                self.set_pacing_rate(self.bbr_bw(), BBR_UNIT, self.last_cwnd, c.srtt);
            }
            Mode::ProbeRtt => {
                if self.check_probe_rtt_done(c.now, us(c.delivered_time)) {
                    w.cwnd = w.cwnd.max(self.prior_cwnd as f64);
                }
            }
            _ => {}
        }
    }

    /// `bbr_undo_cwnd`.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: f64) -> f64 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(self.last_delivered_us, self.last_delivered, self.last_lost);
        w.cwnd
    }

    /// `bbr_ssthresh`: save cwnd, leave ssthresh as it is.
    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.save_cwnd(w.cwnd.max(0.0) as u64);
        w.ssthresh
    }

    /// BBR grows the window in `cong_control` only.
    fn on_ack(&mut self, _w: &mut Window, _s: &AckSample) {}

    fn pacing_rate_bps(&self) -> Option<f64> {
        match self.pacing_rate {
            Some(r) if r > 0 => Some(r as f64 * 8.0),
            _ => None,
        }
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend_from_slice(&[
            ("mode", self.mode as u8 as f64),
            ("bw_bps", self.bw_to_bps(self.max_bw())),
            ("min_rtt", if self.min_rtt_us == NO_RTT { f64::NAN } else { self.min_rtt_us as f64 / 1e6 }),
            ("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64),
            ("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64),
            ("pacing_rate_bps", self.pacing_rate.map_or(f64::NAN, |r| r as f64 * 8.0)),
            ("full_bw_reached", self.full_bw_reached as u8 as f64),
            ("cycle_idx", self.cycle_idx as f64),
            ("lt_use_bw", self.lt_use_bw as u8 as f64),
            ("extra_acked", self.extra_acked_max() as f64),
            ("round_count", self.rtt_cnt as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    struct Sim {
        b: Bbr,
        w: Window,
        c: Conn,
    }

    fn conn() -> Conn {
        Conn {
            now: 0.0,
            in_flight: 0,
            delivered: 0,
            delivered_time: 0.0,
            lost: 0,
            app_limited: 0,
            state: CaState::Open,
            srtt: 0.0,
            min_rtt: f64::INFINITY,
            mss: MSS,
            cwnd_limited: true,
            edt: 0.0,
        }
    }

    /// Fixed-point bandwidth of a sample of 10 segments at `pps`.
    fn bw_fixed(pps: f64) -> u64 {
        10 * BW_UNIT / us(10.0 / pps)
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    impl Sim {
        fn with(mut b: Bbr) -> Sim {
            let mut w = Window { cwnd: 10.0, ssthresh: 1e9 };
            let c = conn();
            b.init(&mut w, &c);
            Sim { b, w, c }
        }

        fn new() -> Sim {
            Sim::with(Bbr::new(1))
        }

        /// One ACK `dt` after the previous one: `acked` segments delivered
        /// and `losses` newly marked lost, a delivery-rate sample of `pps`
        /// segments/s, an RTT sample `rtt`; `new_round`: the acknowledged
        /// packet was sent after the current round began.
        #[allow(clippy::too_many_arguments)]
        fn ack_full(
            &mut self,
            dt: f64,
            acked: u64,
            pps: f64,
            rtt: f64,
            new_round: bool,
            losses: u64,
            prior_in_flight: Option<u64>,
        ) {
            self.c.now += dt;
            self.c.delivered += acked;
            self.c.delivered_time = self.c.now;
            self.c.lost += losses;
            self.c.srtt = rtt;
            self.c.min_rtt = self.c.min_rtt.min(rtt);
            let prior_delivered =
                if new_round { self.b.next_rtt_delivered } else { self.b.next_rtt_delivered.saturating_sub(1) };
            let rs = RateSample {
                delivered: 10,
                interval: 10.0 / pps,
                prior_delivered,
                acked_sacked: acked,
                losses,
                rtt: Some(rtt),
                prior_in_flight: prior_in_flight.unwrap_or(self.c.in_flight + acked),
                ..Default::default()
            };
            self.b.cong_control(&mut self.w, &rs, &mut self.c);
        }

        fn ack(&mut self, dt: f64, pps: f64, rtt: f64, new_round: bool) {
            self.ack_full(dt, 1, pps, rtt, new_round, 0, None);
        }

        /// One round trip of `acks` evenly spaced ACKs.
        fn round(&mut self, pps: f64, rtt: f64, acks: usize) {
            for i in 0..acks {
                self.ack(rtt / acks as f64, pps, rtt, i == 0);
            }
        }

        /// Starts the gain-cycle phase `idx` now.
        fn set_phase(&mut self, idx: u32) {
            self.b.cycle_idx = idx;
            self.b.cycle_mstamp = us(self.c.delivered_time);
        }
    }

    /// A flow past Startup and Drain on a constant `pps` x `rtt` path.
    fn probe_bw(b: Bbr, pps: f64, rtt: f64) -> Sim {
        let mut s = Sim::with(b);
        for _ in 0..20 {
            if s.b.mode == Mode::ProbeBw {
                break;
            }
            s.round(pps, rtt, 10);
        }
        assert_eq!(s.b.mode, Mode::ProbeBw);
        s.c.in_flight = 100;
        s
    }

    #[test]
    fn startup_gains_and_initial_pacing_rate() {
        let mut s = Sim::new();
        assert_eq!((s.b.high_gain, s.b.drain_gain), (739, 88));
        assert_eq!((s.b.mode, s.b.pacing_gain, s.b.cwnd_gain), (Mode::Startup, 739, 739));
        // No RTT yet: 10 segments per the nominal 1 ms, x 739/256 x 99 %.
        let want = 10.0 * MSS as f64 * 8.0 / 1e-3 * 739.0 / 256.0 * 0.99;
        assert!(rel(s.b.pacing_rate_bps().unwrap(), want) < 1e-4, "{:?} vs {want}", s.b.pacing_rate_bps());
        // The first ACK with an RTT re-initialises from srtt (10 segments per
        // 100 ms x high gain) and slow-starts cwnd by the segments acked.
        s.ack(0.1, 10.0, 0.1, true);
        let from_srtt = 10.0 * MSS as f64 * 8.0 / 0.1 * 739.0 / 256.0 * 0.99;
        // (1677 in pkts/us << 24 for 1677.7: Linux's truncation, -0.04 %.)
        assert!(rel(s.b.pacing_rate_bps().unwrap(), from_srtt) < 1e-3, "{:?} vs {from_srtt}", s.b.pacing_rate_bps());
        assert_eq!(s.w.cwnd, 11.0);
        // A faster sample raises the rate to bw x high_gain x 99 % ...
        s.ack(0.001, 1000.0, 0.1, false);
        let high = 1000.0 * MSS as f64 * 8.0 * 739.0 / 256.0 * 0.99;
        assert!(rel(s.b.pacing_rate_bps().unwrap(), high) < 1e-4);
        // ... and before full bandwidth the rate never falls.
        s.b.bw.reset(s.b.rtt_cnt, bw_fixed(100.0));
        s.ack(0.001, 100.0, 0.1, false);
        assert!(rel(s.b.pacing_rate_bps().unwrap(), high) < 1e-4);
    }

    #[test]
    fn full_bandwidth_is_reached_after_exactly_three_rounds_without_25_percent_growth() {
        let mut s = Sim::new();
        s.c.in_flight = 10_000; // keep Drain from ending at once
        for pps in [1000.0, 2000.0, 4000.0] {
            s.round(pps, 0.1, 10);
            assert_eq!(s.b.full_bw_cnt, 0);
        }
        // 4900 is 22.5 % above 4000: not growth.
        s.round(4900.0, 0.1, 10);
        s.round(4900.0, 0.1, 10);
        assert_eq!(s.b.full_bw_cnt, 2);
        assert!(!s.b.full_bw_reached);
        assert_eq!(s.b.mode, Mode::Startup);
        // ACKs within a round do not count.
        s.ack(0.001, 4900.0, 0.1, false);
        assert_eq!(s.b.mode, Mode::Startup);
        // ssthresh at Drain entry: bbr_inflight at gain 1 with the TSO goal
        // of Startup's pacing rate (set by the ACK before).
        let at_entry = s.b.inflight(s.b.max_bw(), BBR_UNIT);
        s.round(4900.0, 0.1, 10);
        assert!(s.b.full_bw_reached);
        assert_eq!(s.b.mode, Mode::Drain);
        assert_eq!((s.b.pacing_gain, s.b.cwnd_gain), (88, 739));
        assert_eq!(s.w.ssthresh, at_entry as f64);

        // 25 % growth resets the count.
        let mut s = Sim::new();
        s.round(1000.0, 0.1, 10);
        s.round(1100.0, 0.1, 10);
        s.round(1200.0, 0.1, 10);
        assert_eq!(s.b.full_bw_cnt, 2);
        s.round(1250.0, 0.1, 10);
        assert_eq!(s.b.full_bw_cnt, 0);
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate
    /// (`sk_pacing_rate >> 10` bytes), at least 2 segments above 1.2
    /// Mbit/s and 1 below, at most 127.
    #[test]
    fn tso_goal_is_a_millisecond_of_data() {
        let mut b = Bbr::new(1);
        b.mss = 1448;
        for (rate_bps, goal) in [(1e6, 1), (20e6, 2), (100e6, 8), (1e9, 45), (100e9, 45)] {
            b.pacing_rate = Some((rate_bps / 8.0) as u64);
            assert_eq!(b.tso_segs_goal(), goal, "{rate_bps} bit/s");
        }
    }

    /// The min-RTT filter: a lower sample renews it; an equal one only with
    /// `min_rtt_refresh_on_equal` (mainline's `<=`), so by default ProbeRTT
    /// comes 10 s after the minimum was last lowered.
    #[test]
    fn an_equal_rtt_renews_the_min_rtt_filter_only_when_asked() {
        for (equal, probe_at_10s) in [(false, true), (true, false)] {
            let mut m = serde_json::Map::new();
            m.insert("min_rtt_refresh_on_equal".into(), serde_json::json!(equal));
            let mut s = probe_bw(Bbr::from_params(&m, "cc").unwrap(), 1000.0, 0.1);
            let start = s.c.now;
            let mut probed = false;
            while s.c.now < start + 10.5 {
                s.ack_full(0.05, 1, 1000.0, 0.1, false, 0, Some(100));
                probed |= s.b.mode == Mode::ProbeRtt;
            }
            assert_eq!(probed, probe_at_10s, "equal = {equal}");
        }
    }

    #[test]
    fn drain_ends_when_inflight_is_at_most_the_bdp() {
        let mut s = Sim::new();
        s.c.in_flight = 10_000;
        for _ in 0..4 {
            s.round(4900.0, 0.1, 10);
        }
        assert_eq!(s.b.mode, Mode::Drain);
        // BDP = ceil(4900 x 0.1) = 490 (fixed point), + 3 TSO goals, rounded
        // up to even; Drain's pacing rate (4900 x 1448 B x 88/256 = 2.4 MB/s)
        // puts 2.4 kB in 1 ms: 1 segment, so the goal is the minimum, 2.
        assert_eq!(s.b.tso_segs_goal(), 2);
        let target = s.b.inflight(s.b.max_bw(), BBR_UNIT);
        assert_eq!(target, 496);
        s.c.in_flight = target + 1;
        s.ack(0.001, 4900.0, 0.1, false);
        assert_eq!(s.b.mode, Mode::Drain);
        s.c.in_flight = target;
        s.ack(0.001, 4900.0, 0.1, false);
        assert_eq!(s.b.mode, Mode::ProbeBw);
        assert_eq!(s.b.cwnd_gain, 512);
    }

    #[test]
    fn probe_bw_starts_in_a_random_phase_other_than_the_drain_phase() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let s = probe_bw(Bbr::new(seed), 1000.0, 0.1);
            assert_ne!(s.b.cycle_idx, 1, "seed {seed}");
            seen.insert(s.b.cycle_idx);
            let again = probe_bw(Bbr::new(seed), 1000.0, 0.1);
            assert_eq!(again.b.cycle_idx, s.b.cycle_idx, "seed {seed} not reproducible");
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn gain_cycle_order_and_phase_advance() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        s.set_phase(7);
        // Gain 1: the phase lasts min_rtt (100 ms) of delivery time.
        s.ack(0.05, 1000.0, 0.1, false);
        assert_eq!(s.b.cycle_idx, 7);
        s.ack(0.051, 1000.0, 0.1, false);
        assert_eq!((s.b.cycle_idx, s.b.pacing_gain), (0, 320));
        // 5/4: after min_rtt it still waits for inflight >= 1.25 BDP + budget:
        // 125 + 3 x 2 (TSO goal), even, + 2 in phase 0 = 134 ...
        assert_eq!(s.b.tso_segs_goal(), 2);
        let probe_target = s.b.inflight(s.b.max_bw(), 320);
        assert_eq!(probe_target, 134);
        for _ in 0..20 {
            s.ack_full(0.01, 1, 1000.0, 0.1, false, 0, Some(100));
        }
        assert_eq!(s.b.cycle_idx, 0);
        s.ack_full(0.01, 1, 1000.0, 0.1, false, 0, Some(probe_target));
        assert_eq!((s.b.cycle_idx, s.b.pacing_gain), (1, 192));
        // 3/4: ends early once inflight <= BDP + budget (104), before min_rtt.
        s.ack_full(0.01, 1, 1000.0, 0.1, false, 0, Some(150));
        assert_eq!(s.b.cycle_idx, 1);
        s.ack_full(0.01, 1, 1000.0, 0.1, false, 0, Some(s.b.inflight(s.b.max_bw(), BBR_UNIT)));
        assert_eq!((s.b.cycle_idx, s.b.pacing_gain), (2, 256));
        // Six phases of gain 1, each min_rtt long, whatever the inflight.
        for idx in 2..8 {
            s.ack_full(0.05, 1, 1000.0, 0.1, false, 0, Some(1000));
            assert_eq!(s.b.cycle_idx, idx);
            s.ack_full(0.051, 1, 1000.0, 0.1, false, 0, Some(1));
            assert_eq!(s.b.cycle_idx, (idx + 1) % 8);
        }
        assert_eq!(s.b.pacing_gain, 320);
        // 5/4 also ends after min_rtt on a loss, below its inflight target.
        s.ack_full(0.101, 1, 1000.0, 0.1, false, 0, Some(100));
        assert_eq!(s.b.cycle_idx, 0);
        s.ack_full(0.001, 1, 1000.0, 0.1, false, 1, Some(100));
        assert_eq!(s.b.cycle_idx, 1);
    }

    /// Drives a ProbeBW flow into ProbeRTT (min RTT 10 s old) and to the
    /// point where inflight is down to 4; returns the time that happened.
    fn into_probe_rtt(s: &mut Sim) -> f64 {
        let stamp = s.b.min_rtt_stamp;
        // RTT samples above the minimum do not refresh the filter.
        while jiffies(s.c.now + 1.0) <= stamp + 10_000 {
            s.ack(1.0, 1000.0, 0.15, false);
        }
        let rest = (stamp + 10_000) as f64 / 1000.0 - s.c.now;
        s.ack(rest, 1000.0, 0.15, false);
        assert_ne!(s.b.mode, Mode::ProbeRtt, "exactly 10 s is not expired");
        s.w.cwnd = 150.0; // the window to come back to
        s.ack(0.0015, 1000.0, 0.15, false);
        assert_eq!(s.b.mode, Mode::ProbeRtt);
        assert_eq!(s.b.prior_cwnd, 150);
        assert_eq!(s.w.cwnd, 4.0);
        assert_eq!(s.b.min_rtt_us, 150_000, "an expired filter takes the new sample");
        assert_eq!(s.c.app_limited, s.c.delivered + s.c.in_flight);
        assert_eq!((s.b.pacing_gain, s.b.cwnd_gain), (256, 256));
        // Inflight above 4: the 200 ms do not start.
        s.ack(0.3, 1000.0, 0.15, false);
        assert_eq!(s.b.probe_rtt_done_stamp, 0);
        s.c.in_flight = 4;
        s.ack(0.001, 1000.0, 0.15, false);
        assert_ne!(s.b.probe_rtt_done_stamp, 0);
        s.c.now
    }

    #[test]
    fn probe_rtt_needs_200_ms_and_a_round_at_cwnd_4_then_restores_cwnd() {
        // A round completes early: ProbeRTT still lasts 200 ms.
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        let t = into_probe_rtt(&mut s);
        s.ack(0.05, 1000.0, 0.15, true);
        assert!(s.b.probe_rtt_round_done);
        s.ack(t + 0.2 - s.c.now, 1000.0, 0.15, false);
        assert_eq!(s.b.mode, Mode::ProbeRtt);
        assert_eq!(s.w.cwnd, 4.0);
        s.ack(0.0015, 1000.0, 0.15, false);
        assert_eq!(s.b.mode, Mode::ProbeBw);
        assert_eq!(s.b.min_rtt_stamp, jiffies(s.c.now));
        // cwnd back to the saved 150, then this ACK's +1 toward the target.
        assert_eq!(s.w.cwnd, 151.0);

        // 200 ms pass without a round: ProbeRTT waits for the round.
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        let t = into_probe_rtt(&mut s);
        s.ack(0.3, 1000.0, 0.15, false);
        assert_eq!(s.b.mode, Mode::ProbeRtt);
        assert!(s.c.now > t + 0.2);
        // Not full bandwidth yet: back to Startup.
        s.b.full_bw_reached = false;
        s.b.full_bw_cnt = 0;
        s.ack(0.01, 1000.0, 0.15, true);
        assert_eq!(s.b.mode, Mode::Startup);
        assert_eq!(s.w.cwnd, 151.0);
    }

    #[test]
    fn max_bandwidth_filter_forgets_a_sample_after_ten_rounds() {
        let mut s = Sim::new();
        s.ack(0.1, 5000.0, 0.1, true);
        let t0 = s.b.rtt_cnt;
        assert_eq!(s.b.max_bw(), bw_fixed(5000.0));
        for r in 1..=10 {
            s.ack(0.1, 1000.0, 0.1, true);
            assert_eq!(s.b.rtt_cnt, t0 + r);
            assert_eq!(s.b.max_bw(), bw_fixed(5000.0), "round {r}");
        }
        s.ack(0.1, 1000.0, 0.1, true);
        assert_eq!(s.b.max_bw(), bw_fixed(1000.0));
        // A window of 3 rounds with bw_rtts.
        let mut m = serde_json::Map::new();
        m.insert("bw_rtts".into(), serde_json::json!(3));
        let mut s = Sim::with(Bbr::from_params(&m, "cc").unwrap());
        s.ack(0.1, 5000.0, 0.1, true);
        for _ in 0..3 {
            s.ack(0.1, 1000.0, 0.1, true);
        }
        assert_eq!(s.b.max_bw(), bw_fixed(5000.0));
        s.ack(0.1, 1000.0, 0.1, true);
        assert_eq!(s.b.max_bw(), bw_fixed(1000.0));
    }

    #[test]
    fn win_minmax_running_min_tracks_the_window() {
        let mut m = WinMinmax::default();
        m.reset(0, 10);
        assert_eq!(m.running_min(10, 1, 20), 10);
        assert_eq!(m.running_min(10, 5, 15), 10);
        assert_eq!(m.running_min(10, 11, 30), 15, "10 expired, 15 (2nd best) takes over");
        assert_eq!(m.running_min(10, 12, 5), 5);
    }

    #[test]
    fn pacing_rate_is_bw_times_gain_times_99_percent() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        for (idx, gain) in [(2, 1.0), (0, 1.25), (1, 0.75)] {
            s.set_phase(idx);
            s.ack_full(0.001, 1, 1000.0, 0.1, false, 0, Some(110));
            assert_eq!(s.b.cycle_idx, idx);
            let want = 1000.0 * MSS as f64 * 8.0 * gain * 0.99;
            let got = s.b.pacing_rate_bps().unwrap();
            assert!(rel(got, want) < 1e-4, "gain {gain}: {got} vs {want}");
        }
    }

    #[test]
    fn cwnd_target_is_gain_times_bdp_plus_3_tso_goals_rounded_up_to_even() {
        let mut m = serde_json::Map::new();
        m.insert("extra_acked_gain".into(), serde_json::json!(0));
        // 2 x 997.5 segments/s x 0.1 s = 199.5: ceil 200 (floor would give
        // 199), + 3 x the TSO goal (2 at 1.4 MB/s: 1 ms of data is one
        // segment, below the minimum of 2), even: 206.
        let mut s = probe_bw(Bbr::from_params(&m, "cc").unwrap(), 997.5, 0.1);
        assert_eq!(s.b.bdp(s.b.max_bw(), 512), 200);
        s.set_phase(2);
        s.w.cwnd = 1000.0;
        s.ack(0.001, 997.5, 0.1, false);
        assert_eq!(s.b.tso_segs_goal(), 2);
        assert_eq!(s.w.cwnd, 206.0, "snaps down to the target once the pipe is full");
        // Phase 0 adds 2 more.
        s.set_phase(0);
        s.ack_full(0.001, 1, 997.5, 0.1, false, 0, Some(100));
        assert_eq!(s.b.cycle_idx, 0);
        assert_eq!(s.w.cwnd, 207.0, "grows by the segments acked");
        s.ack_full(0.001, 3, 997.5, 0.1, false, 0, Some(100));
        assert_eq!(s.w.cwnd, 208.0);
        // 2 x 1005 x 0.1 = 201: + 6 = 207, rounded up to 208.
        let mut s = probe_bw(Bbr::from_params(&m, "cc").unwrap(), 1005.0, 0.1);
        s.set_phase(3);
        s.w.cwnd = 1000.0;
        s.ack(0.001, 1005.0, 0.1, false);
        assert_eq!(s.w.cwnd, 208.0);
        // Never below 4.
        s.b.bw.reset(s.b.rtt_cnt, 1);
        s.ack(0.001, 1e-3, 0.1, false);
        assert_eq!(s.w.cwnd, 4.0);
    }

    #[test]
    fn first_round_of_recovery_conserves_packets_then_restores_cwnd() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        s.set_phase(2);
        s.w.cwnd = 100.0;
        s.c.in_flight = 80;
        let ss = s.b.ssthresh(&s.w, LossEvent::FastRecovery, 80, s.c.now);
        assert_eq!(ss, s.w.ssthresh, "ssthresh is left as it is");
        assert_eq!(s.b.prior_cwnd, 100);
        s.c.state = CaState::Recovery;
        s.ack_full(0.001, 2, 1000.0, 0.1, false, 1, None);
        assert_eq!(s.w.cwnd, 82.0, "inflight + acked");
        assert!(s.b.packet_conservation);
        s.c.in_flight = 70;
        s.ack_full(0.001, 1, 1000.0, 0.1, false, 0, None);
        assert_eq!(s.w.cwnd, 82.0, "max(cwnd, inflight + acked)");
        s.c.in_flight = 90;
        s.ack_full(0.001, 1, 1000.0, 0.1, false, 3, None);
        assert_eq!(s.w.cwnd, 91.0, "losses cut cwnd but inflight + acked rules");
        // The next round: slow start toward the target (204).
        s.ack_full(0.001, 2, 1000.0, 0.1, true, 0, None);
        assert!(!s.b.packet_conservation);
        assert_eq!(s.w.cwnd, 93.0);
        // Recovery ends: back to the cwnd saved on entry.
        s.c.state = CaState::Open;
        s.ack_full(0.001, 1, 1000.0, 0.1, false, 0, None);
        assert_eq!(s.w.cwnd, 101.0);
    }

    #[test]
    fn loss_state_resets_full_bw_and_undo_resets_detection() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        s.b.on_state(&mut s.w, CaState::Loss, &s.c);
        assert_eq!(s.b.full_bw, 0);
        assert!(s.b.round_start);
        assert_eq!(s.b.prev_ca_state, CaState::Loss);
        assert!(s.b.lt_is_sampling, "an RTO counts as a loss for the long-term sampler");
        s.w.cwnd = 1.0;
        s.b.prior_cwnd = 120;
        s.c.state = CaState::Loss;
        s.ack(0.001, 1000.0, 0.1, false);
        assert_eq!(s.w.cwnd, 4.0, "slow start from the RTO's 1 segment, never below 4");
        s.c.state = CaState::Open;
        s.ack(0.001, 1000.0, 0.1, false);
        assert_eq!(s.w.cwnd, 121.0);
        s.b.full_bw = 7;
        s.b.full_bw_cnt = 2;
        assert_eq!(s.b.undo_cwnd(&s.w, 500.0), 121.0);
        assert_eq!((s.b.full_bw, s.b.full_bw_cnt, s.b.lt_is_sampling), (0, 0, false));
    }

    #[test]
    fn tx_start_after_idle_paces_at_bw_in_probe_bw() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        s.set_phase(0);
        s.ack_full(0.001, 1, 1000.0, 0.1, false, 0, Some(100));
        let probing = s.b.pacing_rate_bps().unwrap();
        s.c.app_limited = 0;
        s.b.on_tx_start(&mut s.w, &s.c);
        assert!(!s.b.idle_restart, "only after application-limited idle");
        s.c.app_limited = s.c.delivered + 1;
        s.b.on_tx_start(&mut s.w, &s.c);
        assert!(s.b.idle_restart);
        let got = s.b.pacing_rate_bps().unwrap();
        assert!(rel(got, probing / 1.25) < 1e-4);
        // idle_restart holds off ProbeRTT until data is delivered.
        s.b.min_rtt_stamp = 0;
        s.c.now += 20.0;
        let rs = RateSample { delivered: -1, interval: -1.0, ..Default::default() };
        s.b.cong_control(&mut s.w, &rs, &mut s.c);
        assert_eq!(s.b.mode, Mode::ProbeBw);
    }

    /// `rounds` rounds of 50 ACKs 2 ms apart (500 segments/s), one
    /// segment lost every `loss_every` ACKs.
    fn policed(s: &mut Sim, rounds: usize, loss_every: usize) {
        for _ in 0..rounds {
            for i in 0..50 {
                let losses = (i % loss_every == loss_every - 1) as u64;
                s.ack_full(0.002, 1, 500.0, 0.1, i == 0, losses, Some(50));
            }
        }
    }

    #[test]
    fn long_term_bandwidth_detects_a_policer() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        // 24 % loss at a steady 500 segments/s: two consistent lossy intervals.
        policed(&mut s, 4, 4);
        assert!(s.b.lt_is_sampling);
        assert!(!s.b.lt_use_bw);
        policed(&mut s, 6, 4);
        assert!(s.b.lt_use_bw);
        let want = 500.0 / 1e6 * BW_UNIT as f64;
        assert!(rel(s.b.lt_bw as f64, want) < 0.05, "lt_bw {} vs {want}", s.b.lt_bw);
        assert_eq!(s.b.bbr_bw(), s.b.lt_bw);
        assert_eq!(s.b.pacing_gain, BBR_UNIT);
        let rate = s.b.pacing_rate_bps().unwrap();
        assert!(rel(rate, 500.0 * MSS as f64 * 8.0 * 0.99) < 0.05, "{rate}");
        // It is used for 48 rounds of ProbeBW, then sampling starts over.
        let cnt = s.b.lt_rtt_cnt;
        for _ in cnt..47 {
            s.ack(0.1, 500.0, 0.1, true);
        }
        assert!(s.b.lt_use_bw);
        s.ack(0.1, 500.0, 0.1, true);
        assert!(!s.b.lt_use_bw);
        assert_eq!(s.b.lt_bw, 0);

        // 10 % loss is below the 50/256 threshold: never policed.
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        policed(&mut s, 30, 10);
        assert!(!s.b.lt_use_bw);
        // Off with lt_bw = false.
        let mut m = serde_json::Map::new();
        m.insert("lt_bw".into(), serde_json::json!(false));
        let mut s = probe_bw(Bbr::from_params(&m, "cc").unwrap(), 1000.0, 0.1);
        policed(&mut s, 20, 4);
        assert!(!s.b.lt_use_bw && !s.b.lt_is_sampling);
    }

    #[test]
    fn extra_acked_grows_with_ack_bursts_is_capped_and_expires() {
        let mut s = probe_bw(Bbr::new(1), 1000.0, 0.1);
        s.set_phase(2);
        // ACKs at the bottleneck rate: little excess.
        for _ in 0..100 {
            s.ack(0.001, 1000.0, 0.1, false);
        }
        assert!(s.b.extra_acked_max() <= 2, "{:?}", s.b.extra_acked);
        // Silence, then 30 ACKs at once: 30 segments beyond the expected.
        s.ack(0.02, 1000.0, 0.1, false);
        for _ in 0..28 {
            s.ack(0.0, 1000.0, 0.1, false);
        }
        s.w.cwnd = 1000.0; // snap to the target on the last one
        s.ack(0.0, 1000.0, 0.1, false);
        assert_eq!(s.b.extra_acked_max(), 30);
        assert_eq!(s.b.ack_aggregation_cwnd(), 30);
        assert_eq!(s.b.inflight(s.b.max_bw(), 512), 206);
        assert_eq!(s.w.cwnd, 236.0, "target 200 + 30 + 3 x 2, even");
        // Capped at 100 ms of bandwidth (99 segments in fixed point)...
        s.ack(0.05, 1000.0, 0.1, false);
        let mut worst = 0u64;
        for _ in 0..10 {
            let before = s.w.cwnd as u64;
            s.ack_full(0.0, 50, 1000.0, 0.1, false, 0, None);
            worst = worst.max(s.b.extra_acked_max());
            // ... and each sample at the cwnd before the ACK.
            assert!(s.b.extra_acked_max() <= before.max(30), "{} > cwnd {before}", s.b.extra_acked_max());
        }
        assert!(worst > 99 && worst < 500);
        assert_eq!(s.b.ack_aggregation_cwnd(), 99);
        // The two 5-round slots: the burst is remembered 9 rounds, gone at 10.
        s.b.extra_acked_win_rtts = 0;
        for r in 1..=10 {
            s.ack(0.2, 1000.0, 0.1, true);
            for _ in 0..10 {
                s.ack(0.001, 1000.0, 0.1, false);
            }
            if r < 10 {
                assert!(s.b.extra_acked_max() > 99, "round {r}");
            }
        }
        assert!(s.b.extra_acked_max() < 20, "{:?}", s.b.extra_acked);
        // No allowance before full bandwidth.
        s.b.full_bw_reached = false;
        assert_eq!(s.b.ack_aggregation_cwnd(), 0);
    }

    #[test]
    fn parameters_are_validated_and_listed() {
        for (name, bad) in [
            ("high_gain", serde_json::json!(1.0)),
            ("cwnd_gain", serde_json::json!(0.5)),
            ("probe_rtt_ms", serde_json::json!(-1)),
            ("min_rtt_win_s", serde_json::json!(0)),
            ("bw_rtts", serde_json::json!(0)),
            ("full_bw_thresh", serde_json::json!(0.9)),
            ("full_bw_cnt", serde_json::json!(0)),
            ("extra_acked_gain", serde_json::json!(-1)),
            ("lt_bw", serde_json::json!("yes")),
            ("seed", serde_json::json!(-3)),
        ] {
            let mut m = serde_json::Map::new();
            m.insert(name.into(), bad);
            let err = Bbr::from_params(&m, "flows[0].cc").err().unwrap_or_else(|| panic!("{name} accepted"));
            assert_eq!(err.field, format!("flows[0].cc.params.{name}"));
        }
        let listed: Vec<&str> = info().params.iter().map(|p| p.name).collect();
        assert_eq!(listed, PARAMS);
        let mut m = serde_json::Map::new();
        m.insert("high_gain".into(), serde_json::json!(2.885));
        m.insert("cwnd_gain".into(), serde_json::json!(2));
        m.insert("full_bw_thresh".into(), serde_json::json!(1.25));
        let b = Bbr::from_params(&m, "cc").unwrap();
        assert_eq!((b.high_gain, b.drain_gain, b.cwnd_gain_param, b.full_bw_thresh), (739, 88, 512, 320));
        for alias in ["bbr", "bbr1", "BBRv1"] {
            let spec = crate::spec::CcSpec { algorithm: alias.into(), params: Default::default() };
            assert_eq!(super::super::build(&spec, "cc").ok().unwrap().name(), "bbr");
        }
    }
}
