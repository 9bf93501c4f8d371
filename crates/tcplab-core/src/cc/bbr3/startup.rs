//! BBRv3's exits from Startup (full bandwidth reached, or too much loss
//! or ECN) and from Drain (google/bbr v3 `bbr_check_full_bw_reached`,
//! `bbr_check_loss_too_high_in_startup`, `bbr_check_drain`).

use super::*;

impl Bbr3 {
    pub(super) fn check_loss_too_high_in_startup(&mut self, rs: &RateSample, state: CaState) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs.tx_in_flight, rs.lost, rs.delivered, rs.delivered_ce)
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    pub(super) fn check_drain(&mut self, w: &mut Window, c: &Conn) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) as f64;
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(c.in_flight.min(u32::MAX as u64) as u32)
                <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down();
        }
    }
}
