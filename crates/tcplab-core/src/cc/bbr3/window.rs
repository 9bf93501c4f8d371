//! BBRv3's outputs from its model: the pacing rate, the BDP with its
//! quantization and ACK-aggregation budgets, and the congestion window
//! (google/bbr v3 `bbr_set_pacing_rate`, `bbr_bdp`, `bbr_set_cwnd`).

use super::*;

impl Bbr3 {
    pub(super) fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    pub(super) fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    pub(super) fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    pub(super) fn rate_bytes_per_sec(&self, rate: u64, gain: u32, margin: u64) -> u64 {
        let mut r = rate as u128 * self.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - margin)) as u128;
        r >>= BW_SCALE;
        (r as u64).max(1)
    }

    pub(super) fn bw_to_pacing_rate(&self, bw: u32, gain: u32) -> u64 {
        self.rate_bytes_per_sec(bw as u64, gain, PACING_MARGIN_PERCENT)
    }

    pub(super) fn init_pacing_rate_from_rtt(&mut self) {
        let rtt_us = if self.srtt > 0.0 {
            self.has_seen_rtt = true;
            ((self.srtt * 1e6).round() as u64).max(1)
        } else {
            1000
        };
        let bw = self.cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(bw, self.startup_pacing_gain, PACING_MARGIN_PERCENT);
    }

    pub(super) fn set_pacing_rate(&mut self, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(bw, gain);
        if !self.has_seen_rtt && self.srtt > 0.0 {
            self.init_pacing_rate_from_rtt();
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    pub(super) fn tso_segs_goal(&self) -> u32 {
        let mut bytes = self.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        bytes = bytes.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
        ((bytes / self.mss.max(1) as u64) as u32).max(MIN_TSO_SEGS)
    }

    pub(super) fn save_cwnd(&mut self) {
        if self.prev_ca_state == CaState::Open && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    pub(super) fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == NONE {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128) as u32
    }

    pub(super) fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal()).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    pub(super) fn inflight(&self, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    pub(super) fn packets_in_net_at_edt(&self, inflight_now: u32) -> u32 {
        let now = self.now_us as f64 / 1e6;
        let interval_us = ((self.edt.max(now) - now) * 1e6).floor().max(0.0) as u64;
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal() as u64;
        }
        if interval_delivered >= inflight_at_edt {
            0
        } else {
            (inflight_at_edt - interval_delivered) as u32
        }
    }

    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        let max_aggr_cwnd = (self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = ((EXTRA_ACKED_GAIN as u64 * self.extra_acked_max() as u64) >> BBR_SCALE) as u32;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    pub(super) fn set_cwnd(&mut self, acked: u64, bw: u32, gain: u32) {
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target);
            self.try_fast_path = false;
            let acked = acked.min(u32::MAX as u64) as u32;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        self.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }
}
