//! BBRv3's ProbeBW cycle (google/bbr v3 `bbr_update_cycle_phase` and its
//! helpers): when to probe, refill, go up, down and cruise, and the
//! upper bound's adaptation that ends a probe.

use super::*;

impl Bbr3 {
    pub(super) fn is_reno_coexistence_probe_time(&self) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight());
        self.rounds_since_probe >= rounds
    }

    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.random_below(BW_PROBE_RAND_ROUNDS as u64) as u32;
        self.probe_wait_us = self.bw_probe_base_us + self.random_below(self.bw_probe_rand_us);
    }

    pub(super) fn set_cycle_idx(&mut self, idx: Phase) {
        self.cycle_idx = idx;
        self.try_fast_path = false;
    }

    pub(super) fn start_bw_probe_refill(&mut self, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds.min(31);
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = self.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    pub(super) fn start_bw_probe_up(&mut self, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = self.delivered;
        self.cycle_mstamp = self.now_us;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope();
    }

    pub(super) fn start_bw_probe_down(&mut self) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = NONE;
        self.pick_probe_wait();
        self.cycle_mstamp = self.now_us;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = self.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != NONE {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    pub(super) fn handle_inflight_too_high(&mut self, is_app_limited: bool, tx_in_flight: u64) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !is_app_limited {
            let cut = ((self.target_inflight() as u64 * (BBR_UNIT - self.beta) as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = (tx_in_flight.min(NONE as u64) as u32).max(cut);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down();
        }
    }

    pub(super) fn adapt_upper_bounds(&mut self, rs: &RateSample, cwnd_limited: bool) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs.tx_in_flight, rs.lost, rs.delivered, rs.delivered_ce) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(rs.is_app_limited, rs.tx_in_flight);
            }
        } else {
            if self.inflight_hi == NONE {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi as u64 {
                self.inflight_hi = rs.tx_in_flight.min(NONE as u64 - 1) as u32;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(rs, cwnd_limited);
            }
        }
        false
    }

    pub(super) fn check_time_to_probe_bw(&mut self, state: CaState) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && state == CaState::Open {
            let x = (self.inflight_hi as u64 * ECN_REPROBE_GAIN as u64) >> BBR_SCALE;
            let n = if x == 0 { 0 } else { 63 - x.leading_zeros() };
            self.start_bw_probe_refill(n);
            return true;
        }
        if self.has_elapsed_in_phase(self.probe_wait_us) || self.is_reno_coexistence_probe_time() {
            self.start_bw_probe_refill(0);
            return true;
        }
        false
    }

    pub(super) fn check_time_to_cruise(&self, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(bw, BBR_UNIT)
    }

    pub(super) fn update_cycle_phase(&mut self, rs: &RateSample, c: &Conn, sample_bw: u32) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(rs, c.cwnd_limited) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight.min(u32::MAX as u64) as u32);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(c.state);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(sample_bw);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if c.cwnd_limited && self.cwnd >= self.inflight_hi {
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down();
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(c.state) {
                    return;
                }
                if self.check_time_to_cruise(inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}
