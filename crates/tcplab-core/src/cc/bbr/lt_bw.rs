//! BBR's long-term bandwidth sampling (Linux `bbr_lt_bw_sampling` and its
//! helpers): detects a token-bucket policer from intervals of high loss
//! with a steady delivery rate, and then paces at that rate.

use super::{us, Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::cc::Conn;

const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
/// bytes/s (4 kbit/s).
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr {
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, delivered_us: u64, delivered: u64, lost: u64) {
        self.lt_last_stamp = delivered_us / 1000;
        self.lt_last_delivered = delivered;
        self.lt_last_lost = lost;
        self.lt_rtt_cnt = 0;
    }

    pub(super) fn reset_lt_bw_sampling(&mut self, delivered_us: u64, delivered: u64, lost: u64) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(delivered_us, delivered, lost);
    }

    /// `bbr_lt_bw_interval_done`.
    pub(super) fn lt_bw_interval_done(&mut self, bw: u64, delivered_us: u64, delivered: u64, lost: u64) {
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
    pub(super) fn lt_bw_sampling(&mut self, losses: u64, is_app_limited: bool, c: &Conn) {
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
}
