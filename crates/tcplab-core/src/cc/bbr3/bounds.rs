//! BBRv3's inflight model bounds (google/bbr v3): the upper bound
//! `inflight_hi` raised while probing and cut on excess loss or ECN, the
//! lower bounds `bw_lo`/`inflight_lo` adapted each round to the latest
//! congestion signals.

use super::*;

impl Bbr3 {
    pub(super) fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (self.cwnd / growth_this_round).max(1);
    }

    pub(super) fn probe_inflight_hi_upward(&mut self, rs: &RateSample, cwnd_limited: bool) {
        if !cwnd_limited || self.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(rs.acked_sacked.min(u32::MAX as u64) as u32);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// `bbr_is_inflight_too_high` on the sample's tx_in_flight, lost,
    /// delivered and delivered_ce.
    pub(super) fn is_inflight_too_high(&self, tx_in_flight: u64, lost: u64, delivered: i64, delivered_ce: u64) -> bool {
        if lost > 0 && tx_in_flight > 0 {
            let loss_thresh = (tx_in_flight * self.loss_thresh as u64) >> BBR_SCALE;
            if lost > loss_thresh {
                return true;
            }
        }
        if delivered_ce > 0 && delivered > 0 && self.ecn_eligible && self.ecn_thresh > 0 {
            let ecn_thresh = (delivered as u64 * self.ecn_thresh as u64) >> BBR_SCALE;
            if delivered_ce > ecn_thresh {
                return true;
            }
        }
        false
    }

    pub(super) fn inflight_hi_from_lost_skb(&self, tx_in_flight: u64, lost: u64) -> u32 {
        let pcount = 1u64;
        if tx_in_flight < pcount || lost < pcount {
            return NONE;
        }
        let inflight_prev = tx_in_flight - pcount;
        let lost_prev = lost - pcount;
        let loss_budget = (inflight_prev * self.loss_thresh as u64 + BBR_UNIT as u64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev) << BBR_SCALE) / (BBR_UNIT - self.loss_thresh) as u64
        };
        (inflight_prev + lost_prefix).min(NONE as u64) as u32
    }

    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == NONE {
            return NONE;
        }
        let headroom = (((self.inflight_hi as u64 * self.inflight_headroom as u64) >> BBR_SCALE) as u32).max(1);
        (self.inflight_hi as i64 - headroom as i64).max(CWND_MIN_TARGET as i64) as u32
    }

    pub(super) fn bound_cwnd_for_inflight_model(&mut self) {
        if !self.initialized {
            return;
        }
        let mut cap = NONE;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        self.cwnd = self.cwnd.min(cap);
    }

    pub(super) fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    pub(super) fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.bw_lo == NONE {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == NONE {
            self.inflight_lo = self.cwnd;
        }
    }

    pub(super) fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = NONE;
        if self.ecn_in_round {
            self.init_lower_bounds(false);
            ecn_inflight_lo = ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(true);
            let loss_cut = (BBR_UNIT - self.beta) as u64;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
            self.inflight_lo = self.inflight_latest.max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = NONE;
        self.inflight_lo = NONE;
    }

    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample, interval_us: i64, sample_bw: u32) {
        self.loss_round_start = false;
        if interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.clamp(0, u32::MAX as i64) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.clamp(0, u32::MAX as i64) as u32;
        }
    }

    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample, interval_us: i64, sample_bw: u32) {
        if interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds();
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }
}
