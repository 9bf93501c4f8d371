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

use super::{AckSample, CaState, CongestionControl, Conn, LossEvent, RateSample, Window};

mod config;
mod lt_bw;
mod minmax;
pub use config::{build, info, Config};
pub use minmax::{MinmaxSample, WinMinmax};

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
        CaState::Disorder => 1,
        CaState::Cwr => 2,
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

impl Bbr {
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
        let mode = self.mode; // a copy: the ProbeRtt guard updates self
        match mode {
            Mode::ProbeBw => {
                self.set_pacing_rate(self.bbr_bw(), BBR_UNIT, self.last_cwnd, c.srtt);
            }
            Mode::ProbeRtt if self.check_probe_rtt_done(c.now, us(c.delivered_time)) => {
                w.cwnd = w.cwnd.max(self.prior_cwnd as f64);
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
mod tests;
