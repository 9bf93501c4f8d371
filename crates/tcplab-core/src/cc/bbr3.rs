//! BBR v3.
//!
//! Sources:
//! - google/bbr, branch v3, `net/ipv4/tcp_bbr.c` (BBR_VERSION 3; read at
//!   commit 001a430b3ddbbc6d9173061a74d8b580c757b91b): `bbr_main`, `bbr_init`,
//!   `bbr_update_model` and everything it calls, `bbr_set_cwnd`,
//!   `bbr_bound_cwnd_for_inflight_model`, `bbr_skb_marked_lost`,
//!   `bbr_undo_cwnd`, `bbr_ssthresh`, `bbr_set_state`, `bbr_cwnd_event`.
//!   Constants as there: startup pacing gain 256*277/100+1 = 710/256 (2.77),
//!   startup cwnd gain 2, drain gain 256*1000/2885 = 88/256 (0.344), cwnd
//!   gain 2 (+0.25 in PROBE_UP), PROBE_BW pacing gains UP 5/4, DOWN
//!   256*91/100 = 232/256 (0.906), CRUISE/REFILL 1; full_bw 25 % / 3 rounds;
//!   bbr_full_loss_cnt 6, bbr_full_ecn_cnt 2; loss_thresh 5/256 (2 %); beta
//!   76/256 (cut to 180/256 = 0.703); headroom 38/256 (15 %);
//!   bw_probe_max_rounds 63, rand_rounds 2, base 2 s, rand 1 s; ProbeRTT 200 ms
//!   every 5 s at 0.5 BDP; min_rtt window 10 s; extra_acked window 5 rounds in
//!   two buckets (5-10 rounds; 1 round in Startup), capped at 100 ms of bw;
//!   ECN alpha gain 1/16, alpha init 1, ecn_factor 85/256 (1/3), ecn_thresh
//!   1/2, ecn_reprobe_gain 1/2, ECN used only at min_rtt <= 5 ms.
//! - draft-ietf-ccwg-bbr-06 (July 2026), BBRv3. Where the draft and the
//!   source differ the source wins: DOWN pacing gain 0.91 (the draft says
//!   0.90), Drain gain 1/2.885, the extra_acked filter as two 5-round buckets.
//!
//! Arithmetic: Linux's fixed point throughout (BBR_SCALE 8, BBR_UNIT 256,
//! BW_SCALE 24: bandwidth in segments/us << 24, u32 like Linux), so every
//! comparison is the kernel's. Parameters given as fractions are turned into
//! 1/256 units by truncation as Linux's `BBR_UNIT * n / 100` does (0.02 -> 5,
//! 0.15 -> 38, beta 0.7 -> bbr_beta 76), except startup_pacing_gain which is
//! rounded up (2.77 -> 710, Linux's `+ 1`). Times: tcp_mstamp in us =
//! round(now * 1e6); the ProbeRTT and min_rtt stamps in jiffies of 1 ms
//! (HZ 1000). Only the `f64` window (segments, kept integral) and the
//! trace values are floating point.
//!
//! Deviations (tcplab has no such thing, or the hook lacks the value):
//! - TSO/GSO: `bbr_tso_segs_goal` is computed as Linux does (pacing rate >> 10
//!   plus 64 KB >> (min_rtt_us >> 9), capped at 65536 - 1 - 320
//!   (MAX_TCP_HEADER of x86-64), at least 2 segments) and enters the
//!   quantization budget, although the sender sends single segments.
//! - `bbr_packets_in_net_at_edt` takes the sender's next paced departure
//!   ([`Conn::edt`], Linux's `max(tcp_wstamp_ns, now)`) as it stood at the
//!   last hook with a [`Conn`].
//! - No PLB (flow-label rehash), no TLP recovery (`CA_EVENT_TLP_RECOVERY`),
//!   `rs->is_ack_delayed` and `rs->is_acking_tlp_retrans_seq` are false,
//!   snd_cwnd_clamp and sk_max_pacing_rate are unlimited.
//! - ECN: `ecn = true` stands for Linux's `TCP_ECN_OK && TCP_ECN_LOW` (the
//!   algorithm acts on ECN); the flow then defaults to `ecn = "accecn"`
//!   ([`CongestionControl::ecn`]; a flow may still choose "classic", whose
//!   receiver then echoes each segment's CE state as
//!   `bbr_precise_ece_ack` = true asks, or "off", leaving BBR no marks).
//!   The per-ACK ECE flag (classic ECE, or a non-zero AccECN delta) and
//!   tp->delivered_ce come through `on_ecn` before `cong_control`,
//!   `rs.delivered_ce` through the rate sample. The sender's CWR state
//!   calls `ssthresh` (`bbr_ssthresh`, as `tcp_init_cwnd_reduction`) but
//!   is not reported through `on_state` (tcplab's CA states have no CWR;
//!   Linux's `set_state(TCP_CA_CWR)` changes nothing in BBR but makes
//!   `icsk_ca_state == TCP_CA_Open` tests false during CWR). The 5 ms
//!   bbr_ecn_max_rtt_us gate is the parameter `ecn_max_rtt_ms` (0 = any RTT).
//! - `bbr_skb_marked_lost` is the new hook `on_packet_lost` (cc/mod.rs); a
//!   sender that does not call it leaves BBR with the per-ACK
//!   `rs.lost / rs.tx_in_flight` check and `rs.losses`, as with no hook.
//! - `get_random_u32_below(n)` is `(u32 * n) >> 32` of a splitmix64 stream
//!   seeded by `seed` (Linux rejects the small bias; runs are reproducible).
//! - Bit-field widths are kept where they saturate (rounds_since_probe 255,
//!   bw_probe_up_rounds 30, loss_events_in_round 15, extra_acked_win_rtts 31,
//!   ack_epoch_acked 2^20 - 1); extra_acked is not truncated to u16.

use super::{CaState, CongestionControl, Conn, EcnMode, EcnUse, LossEvent, RateSample, Window};

mod bounds;
mod config;
mod probe_bw;
mod startup;
mod window;
pub use config::{build, info, Config};

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;

const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW pacing gains indexed by [`Phase`] (Linux order UP, DOWN, CRUISE, REFILL).
const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
const ECN_FACTOR: u32 = BBR_UNIT / 3;
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
const FULL_LOSS_CNT: u32 = 6;
const FULL_ECN_CNT: u32 = 2;
const BW_PROBE_CWND_GAIN: u32 = 1;
const BW_PROBE_MAX_ROUNDS: u32 = 63;
const BW_PROBE_RAND_ROUNDS: u32 = 2;
const PACING_MARGIN_PERCENT: u64 = 1;
const PACING_SHIFT: u32 = 10;
const TSO_RTT_SHIFT: u32 = 9;
const GSO_LEGACY_MAX_SIZE: u64 = 65536;
const MAX_TCP_HEADER: u64 = 320;
const MIN_TSO_SEGS: u32 = 2;
/// Linux TCP_INFINITE_SSTHRESH.
const INFINITE_SSTHRESH: f64 = 2147483647.0;
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// PROBE_BW phase, Linux `bbr_pacing_gain_phase` numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

impl Phase {
    /// Number in the trace: 0 DOWN, 1 CRUISE, 2 REFILL, 3 UP (cycle order).
    fn trace(self) -> f64 {
        match self {
            Phase::Down => 0.0,
            Phase::Cruise => 1.0,
            Phase::Refill => 2.0,
            Phase::Up => 3.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

#[derive(Debug, Clone)]
pub struct Bbr3 {
    // Parameters, fixed point.
    startup_pacing_gain: u32,
    startup_cwnd_gain: u32,
    cwnd_gain_param: u32,
    /// bbr_beta: the fraction cut, 1/256.
    beta: u32,
    loss_thresh: u32,
    inflight_headroom: u32,
    probe_rtt_mode_ms: u64,
    probe_rtt_win_ms: u64,
    min_rtt_win_ms: u64,
    bw_probe_base_us: u64,
    bw_probe_rand_us: u64,
    ecn: bool,
    ecn_thresh: u32,
    ecn_max_rtt_us: u64,
    rng: u64,

    // struct bbr.
    min_rtt_us: u32,
    min_rtt_stamp: u64,
    probe_rtt_done_stamp: u64,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u64,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    pub mode: Mode,
    prev_ca_state: CaState,
    round_start: bool,
    bw_probe_up_rounds: u32,
    try_fast_path: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    full_bw_now: bool,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    bw_hi: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u64,
    ecn_eligible: bool,
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    initialized: bool,

    // tcplab glue: the tcp_sock values the hooks see.
    /// tcp_snd_cwnd, segments.
    cwnd: u32,
    /// sk_pacing_rate, bytes/s.
    pacing_rate: u64,
    mss: u32,
    now_us: u64,
    delivered: u64,
    srtt: f64,
    /// tp->delivered_ce and this ACK's ECE flag (from `on_ecn`).
    delivered_ce: u64,
    is_ece: bool,
    /// Modelled tcp_wstamp_ns (seconds).
    edt: f64,
    round_count: u64,
}

/// Fraction to 1/256, truncating as `BBR_UNIT * n / 100`.
fn fx_floor(x: f64) -> u32 {
    (x * BBR_UNIT as f64 + 1e-9).floor() as u32
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Bbr3 {
    // ---- time and randomness -------------------------------------------------

    fn jiffies(&self) -> u64 {
        self.now_us / 1000
    }

    fn random_below(&mut self, ceil: u64) -> u64 {
        if ceil == 0 {
            return 0;
        }
        let r = splitmix64(&mut self.rng) >> 32;
        (r * ceil) >> 32
    }

    // ---- rounds, samples -----------------------------------------------------

    fn update_round_start(&mut self, rs: &RateSample, interval_us: i64) {
        self.round_start = false;
        if interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.round_start = true;
            self.round_count += 1;
        }
    }

    fn calculate_bw_sample(rs: &RateSample, interval_us: i64) -> u32 {
        if interval_us > 0 && rs.delivered >= 0 {
            let num = rs.delivered as u128 * BW_UNIT as u128;
            let d = interval_us as u128;
            num.div_ceil(d).min(u32::MAX as u128) as u32
        } else {
            0
        }
    }

    fn update_ack_aggregation(&mut self, rs: &RateSample, interval_us: i64, delivered_mstamp: u64) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            let thresh = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = delivered_mstamp.saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = (self.bw() as u64 * epoch_us / BW_UNIT) as u32;
        let acked = rs.acked_sacked.min(u32::MAX as u64) as u32;
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked.saturating_add(acked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = delivered_mstamp;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked.saturating_add(acked)).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected_acked).min(self.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    fn check_probe_rtt_done(&mut self) -> bool {
        if !(self.probe_rtt_done_stamp != 0 && self.jiffies() > self.probe_rtt_done_stamp) {
            return false;
        }
        self.probe_rtt_min_stamp = self.jiffies();
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt();
        true
    }

    fn update_min_rtt(&mut self, rs: &RateSample, c: &mut Conn) {
        let probe_rtt_expired = self.jiffies() > self.probe_rtt_min_stamp + self.probe_rtt_win_ms;
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt * 1e6).round().clamp(0.0, (u32::MAX - 1) as f64) as u32;
            if rtt_us < self.probe_rtt_min_us || probe_rtt_expired {
                self.probe_rtt_min_us = rtt_us;
                self.probe_rtt_min_stamp = self.jiffies();
            }
        }
        let min_rtt_expired = self.jiffies() > self.min_rtt_stamp + self.min_rtt_win_ms;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.probe_rtt_mode_ms > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = self.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            let x = c.delivered + c.in_flight;
            c.app_limited = if x != 0 { x } else { 1 };
            if self.probe_rtt_done_stamp == 0 && c.in_flight <= self.probe_rtt_cwnd() as u64 {
                self.probe_rtt_done_stamp = self.jiffies() + self.probe_rtt_mode_ms;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done();
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = self.startup_pacing_gain;
                self.cwnd_gain = self.startup_cwnd_gain;
            }
            Mode::Drain => {
                self.pacing_gain = DRAIN_GAIN;
                self.cwnd_gain = self.startup_cwnd_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = PACING_GAIN[self.cycle_idx as usize];
                self.cwnd_gain = self.cwnd_gain_param;
                if self.cycle_idx == Phase::Up {
                    self.cwnd_gain += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn target_inflight(&self) -> u32 {
        self.inflight(self.bw(), BBR_UNIT).min(self.cwnd)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    fn has_elapsed_in_phase(&self, interval_us: u64) -> bool {
        self.now_us as i128 - (self.cycle_mstamp + interval_us) as i128 > 0
    }

    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || self.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= self.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// Updates ecn_alpha; returns ce_ratio (1/256), None if not available.
    fn update_ecn_alpha(&mut self) -> Option<u32> {
        if !self.ecn_eligible
            && self.ecn
            && (self.ecn_max_rtt_us == 0 || (self.min_rtt_us as u64) <= self.ecn_max_rtt_us)
        {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = self.delivered.wrapping_sub(self.alpha_last_delivered) as i64;
        let delivered_ce = self.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce) as i64;
        if delivered <= 0 || delivered_ce < 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce as u64) << BBR_SCALE) / delivered as u64;
        let gain = ECN_ALPHA_GAIN as u64;
        let mut alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = self.delivered;
        self.alpha_last_delivered_ce = self.delivered_ce;
        let ce_ratio = ce_ratio.min(u32::MAX as u64) as u32;
        self.check_ecn_too_high_in_startup(ce_ratio);
        Some(ce_ratio)
    }

    fn exit_probe_rtt(&mut self) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down();
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn run_fast_path(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn, sample_bw: u32) -> (bool, bool) {
        if self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let prev_mode = self.mode;
            let prev_min_rtt = self.min_rtt_us;
            self.check_drain(w, c);
            self.update_cycle_phase(rs, c, sample_bw);
            self.update_min_rtt(rs, c);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt && self.try_fast_path {
                return (true, false);
            }
            return (false, false);
        }
        (false, true)
    }

    fn sync(&mut self, w: &Window, c: &Conn) {
        self.cwnd = if w.cwnd.is_finite() { w.cwnd.max(0.0).round().min(u32::MAX as f64) as u32 } else { u32::MAX };
        self.mss = c.mss.max(1);
        self.now_us = (c.now * 1e6).round().max(0.0) as u64;
        self.delivered = c.delivered;
        self.srtt = c.srtt;
        self.edt = c.edt;
    }

    /// The ProbeBW phase; None outside ProbeBW.
    pub fn phase(&self) -> Option<Phase> {
        (self.mode == Mode::ProbeBw).then_some(self.cycle_idx)
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn controls_window(&self) -> bool {
        true
    }

    fn on_ack(&mut self, _w: &mut Window, _s: &super::AckSample) {}

    fn init(&mut self, w: &mut Window, c: &Conn) {
        self.sync(w, c);
        self.initialized = true;
        self.init_cwnd = self.cwnd.min(0x7F);
        self.prior_cwnd = 0;
        w.ssthresh = INFINITE_SSTHRESH;
        self.next_rtt_delivered = c.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        let min_rtt_us =
            if c.min_rtt.is_finite() { (c.min_rtt * 1e6).round().min((u32::MAX - 1) as f64) as u32 } else { NONE };
        self.probe_rtt_min_us = min_rtt_us;
        self.probe_rtt_min_stamp = self.jiffies();
        self.min_rtt_us = min_rtt_us;
        self.min_rtt_stamp = self.jiffies();
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt();
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup;
        self.ack_epoch_mstamp = self.now_us;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        self.try_fast_path = false;
        self.loss_round_delivered = c.delivered + 1;
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = NONE;
        self.bw_hi = [0; 2];
        self.inflight_lo = NONE;
        self.inflight_hi = NONE;
        self.reset_full_bw();
        self.bw_probe_up_cnt = NONE;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = ECN_ALPHA_INIT;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
        self.edt = 0.0;
        self.round_count = 0;
        // Linux leaves the gains 0 until the first ACK; the trace shows Startup's.
        self.update_gains();
    }

    fn cong_control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Conn) {
        self.sync(w, c);
        let interval_us = if rs.interval > 0.0 { (rs.interval * 1e6).round() as i64 } else { -1 };
        let delivered_mstamp = (c.delivered_time * 1e6).round().max(0.0) as u64;

        self.update_round_start(rs, interval_us);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha();
        }
        self.ecn_in_round |= self.ecn_eligible && self.is_ece;
        let sample_bw = Self::calculate_bw_sample(rs, interval_us);
        self.update_latest_delivery_signals(rs, interval_us, sample_bw);

        let (fast, update_model) = self.run_fast_path(w, rs, c, sample_bw);
        if !fast {
            if update_model {
                self.update_congestion_signals(rs, interval_us, sample_bw);
                self.update_ack_aggregation(rs, interval_us, delivered_mstamp);
                self.check_loss_too_high_in_startup(rs, c.state);
                self.check_full_bw_reached(rs, sample_bw);
                self.check_drain(w, c);
                self.update_cycle_phase(rs, c, sample_bw);
                self.update_min_rtt(rs, c);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(bw, self.pacing_gain);
            self.set_cwnd(rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model();
        }
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = c.state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        self.is_ece = false;
        w.cwnd = self.cwnd as f64;
    }

    fn on_packet_lost(&mut self, w: &Window, tx_in_flight: u64, lost_since_send: u64, tx_app_limited: bool, c: &Conn) {
        self.sync(w, c);
        // bbr_note_loss
        if !self.loss_in_round {
            self.loss_round_delivered = c.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
        if !self.bw_probe_samples {
            return;
        }
        if self.is_inflight_too_high(tx_in_flight, lost_since_send, 0, 0) {
            let hi = self.inflight_hi_from_lost_skb(tx_in_flight, lost_since_send);
            self.handle_inflight_too_high(tx_app_limited, hi as u64);
        }
    }

    fn on_ecn(&mut self, delivered_ce: u64, ece: bool) {
        self.delivered_ce = delivered_ce;
        self.is_ece = ece;
    }

    /// With `ecn`: Accurate ECN by default and a precise classic echo
    /// (`bbr_precise_ece_ack`); ECN is not needed.
    fn ecn(&self) -> EcnUse {
        if self.ecn {
            EcnUse { default_mode: EcnMode::AccEcn, precise_echo: true, ..EcnUse::NONE }
        } else {
            EcnUse::NONE
        }
    }

    fn on_state(&mut self, w: &mut Window, new: CaState, c: &Conn) {
        self.sync(w, c);
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == NONE {
                self.inflight_lo = self.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.try_fast_path = false;
            w.cwnd = self.cwnd as f64;
        }
    }

    fn on_tx_start(&mut self, w: &mut Window, c: &Conn) {
        if c.app_limited == 0 {
            return;
        }
        self.now_us = (c.now * 1e6).round().max(0.0) as u64;
        self.delivered = c.delivered;
        self.idle_restart = true;
        self.ack_epoch_mstamp = self.now_us;
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bw(), BBR_UNIT);
        } else if self.mode == Mode::ProbeRtt && self.check_probe_rtt_done() {
            self.cwnd = (w.cwnd.max(0.0) as u32).max(self.prior_cwnd);
            w.cwnd = self.cwnd as f64;
        }
    }

    fn undo_cwnd(&mut self, _w: &Window, _prior_cwnd: f64) -> f64 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd as f64
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, _in_flight: u64, _now: f64) -> f64 {
        self.cwnd = w.cwnd.max(0.0).round().min(u32::MAX as f64) as u32;
        self.save_cwnd();
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        w.ssthresh
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        // None before `init` set a rate: unpaced rather than stalled.
        (self.pacing_rate > 0).then_some(self.pacing_rate as f64 * 8.0)
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        let bps = |bw: u32| self.rate_bytes_per_sec(bw as u64, BBR_UNIT, 0) as f64 * 8.0;
        let opt = |v: u32| if v == NONE { -1.0 } else { v as f64 };
        out.push(("mode", self.mode as u8 as f64));
        out.push(("phase", self.phase().map_or(-1.0, Phase::trace)));
        out.push(("bw_bps", if self.bw() == 0 { 0.0 } else { bps(self.bw()) }));
        out.push(("min_rtt", if self.min_rtt_us == NONE { -1.0 } else { self.min_rtt_us as f64 / 1e6 }));
        out.push(("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64));
        out.push(("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64));
        out.push(("pacing_rate_bps", self.pacing_rate as f64 * 8.0));
        out.push(("inflight_hi", opt(self.inflight_hi)));
        out.push(("inflight_lo", opt(self.inflight_lo)));
        out.push(("bw_lo_bps", if self.bw_lo == NONE { -1.0 } else { bps(self.bw_lo) }));
        out.push(("full_bw_reached", self.full_bw_reached as u8 as f64));
        out.push(("round_count", self.round_count as f64));
        out.push(("extra_acked", self.extra_acked_max() as f64));
    }
}

#[cfg(test)]
mod tests;
