//! PIE, Proportional Integral controller Enhanced (RFC 8033), as Linux
//! implements it (`net/sched/sch_pie.c`, `include/net/pie.h`, Linux 6.x).
//!
//! Every `tupdate` the drop probability moves by
//! `alpha (qdelay - target) + beta (qdelay - qdelay_old)` (RFC 8033
//! section 4.2; Linux `pie_calculate_probability`), with `alpha` and `beta`
//! scaled down while the probability is small (the auto-tuning table of
//! section 4.2: / 2 below 10 %, / 8 below 1 %, ... / 2048 below 0.0001 %);
//! the increase is capped at 2 % per update once the probability is 10 %
//! or more (section 5.5, "prevent large swings"); 2 % more is added while
//! the queue delay exceeds 250 ms (Linux's non-linear drop); the
//! probability decays by 1/64 per update while the delay is 0 now and at
//! the last update (Linux; the RFC's `*= 0.98`), and stays in [0, 1].
//!
//! The queue delay is by default each dequeued packet's sojourn time
//! (Linux's default, `dq_rate_estimator` off; 0 when the dequeue empties
//! the queue); with `dq_rate_estimator` it is the backlog over the
//! departure rate measured over cycles of 16 KiB (RFC 8033 section 5.2,
//! Linux `pie_process_dequeue`, averaged with weight 1/8 as Linux does).
//!
//! At enqueue (Linux `pie_drop_early`): no early drop while the burst
//! allowance lasts, nor while the delay is below `target / 2` and the
//! probability below 20 %, nor while fewer than two `mtu`-sized packets
//! wait (RFC 8033 section 4.1's safeguards); otherwise the
//! derandomized drop of RFC 8033 section 5.4 as Linux uses it: `accu_prob`
//! accumulates the probability since the last drop; no drop while it is
//! below 0.85, a drop once it reaches 8.5, a coin with the probability in
//! between. With `ecn`, an ECN-capable packet is marked instead while the
//! probability is at most 10 % (RFC 8033 section 5.1, Linux). With
//! `bytemode` the probability is scaled by size / mtu.
//!
//! Burst allowance (RFC 8033 section 4.4): `max_burst` at start and
//! whenever the delay is below `target / 2` at two updates in a row with a
//! probability of 0 (then the measurement state is reset, Linux
//! `pie_vars_init`); it counts down by the time between dequeues (Linux;
//! the RFC subtracts `tupdate` at each update: the same while the queue is
//! served).
//!
//! Parameters (`queue.params`; defaults from Linux `pie_params_init` and
//! RFC 8033 section 4):
//! - `target` 0.015 s (QDELAY_REF);
//! - `tupdate` 0.015 s (T_UPDATE, the update interval);
//! - `alpha` 0.125 and `beta` 1.25 (per second; Linux's 2/16 and 20/16);
//! - `max_burst` 0.15 s (MAX_BURST);
//! - `ecn` false; `bytemode` false; `dq_rate_estimator` false (Linux);
//! - `mtu` 1500 bytes: the safeguard's "two MTU-sized packets" and
//!   bytemode's unit (Linux `psched_mtu`, 1514 on Ethernet with its
//!   header; the simulator's default packet is 1500 bytes on the wire);
//! - limits: `queue.limit_packets`, default 1000 (Linux, RFC's example);
//!   `queue.limit_bytes`, default none.
//!
//! Deviations: floating point instead of Linux's 2^56 fixed-point
//! probability; the probability is bounded at 1 (RFC 8033 section 4.2;
//! Linux's u64 can exceed its MAX_PROB until it would wrap); `accu_prob`
//! is reset by every early drop or mark (Linux misses the reset for a mark
//! decided by `accu_prob >= 8.5`); the first update runs `tupdate` after
//! time 0 (Linux's first timer fires 0.5 s after creation).

use std::collections::VecDeque;

use rand::Rng;

use super::{secs, Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::{to_secs, Time};

/// Probability at and above which the increase is capped at
/// [`MAX_INCREASE`] (Linux `MAX_PROB / 10`; RFC 8033 section 5.5).
pub const CAP_FROM: f64 = 0.1;
pub const MAX_INCREASE: f64 = 0.02;
/// Delay above which the probability gets 2 % more per update (Linux).
pub const HIGH_DELAY_S: f64 = 0.25;
/// Highest probability at which ECN-capable packets are marked (Linux
/// `MAX_PROB / 10`, RFC 8033 section 5.1's `mark_ecnth`).
pub const ECN_MAX_PROB: f64 = 0.1;
/// Early drops are off below `target / 2` while the probability is below
/// this (Linux `MAX_PROB / 5`, RFC 8033 section 4.1).
pub const SAFE_PROB: f64 = 0.2;
/// Derandomization bounds (RFC 8033 section 5.4, Linux).
pub const ACCU_LOW: f64 = 0.85;
pub const ACCU_HIGH: f64 = 8.5;
/// Bytes of a departure-rate measurement cycle (Linux `QUEUE_THRESHOLD`).
pub const QUEUE_THRESHOLD: u64 = 16384;

pub fn info() -> DisciplineInfo {
    let pi = |name, default, description, source| ParamInfo { name, default, description, source };
    DisciplineInfo {
        name: "pie",
        aliases: &[],
        description: "Proportional Integral controller Enhanced: drop probability updated every tupdate from the queue delay's distance to target and its trend, auto-tuned gains, burst allowance, derandomized drops, optional ECN marking",
        params: vec![
            pi("target", "0.015", "target queue delay QDELAY_REF (s)", "RFC 8033 section 4; Linux pie_params_init"),
            pi("tupdate", "0.015", "probability update interval T_UPDATE (s)", "RFC 8033 section 4; Linux pie_params_init"),
            pi("alpha", "0.125", "gain on qdelay - target (1/s), before auto-tuning", "RFC 8033 section 4.2; Linux alpha 2 (/16)"),
            pi("beta", "1.25", "gain on qdelay - qdelay_old (1/s), before auto-tuning", "RFC 8033 section 4.2; Linux beta 20 (/16)"),
            pi("max_burst", "0.15", "burst allowance MAX_BURST (s)", "RFC 8033 section 4.4; Linux pie_vars_init"),
            pi("ecn", "false", "mark ECN-capable packets CE instead of dropping while the probability is at most 10 %", "RFC 8033 section 5.1; Linux sch_pie ecn"),
            pi("bytemode", "false", "scale the drop probability by packet size / mtu", "Linux sch_pie bytemode"),
            pi("dq_rate_estimator", "false", "queue delay from backlog / measured departure rate instead of sojourn timestamps", "RFC 8033 section 5.2; Linux dq_rate_estimator"),
            pi("mtu", "1500", "MTU (bytes): no early drop below two of them waiting; bytemode's unit", "Linux psched_mtu; RFC 8033 section 4.1 (2 * MEAN_PKTSIZE)"),
        ],
        source: "RFC 8033; Linux sch_pie.c, pie.h",
    }
}

pub fn build(p: &Params, link: LinkInfo, rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    Ok(Box::new(build_pie(p, link, rng)?))
}

/// Longest time a parameter may be: simulated time's span (spec::limits).
const MAX_S: f64 = crate::spec::limits::MAX_SPAN_S;

/// [`build`], returning the discipline itself.
pub fn build_pie(p: &Params, link: LinkInfo, rng: Stream) -> Result<Pie, SpecError> {
    let cfg = PieConfig {
        target: secs(p.f64(
            "target",
            0.015,
            |x| x > 0.0 && x <= MAX_S,
            "a positive time in seconds up to 2.305843e6 s (2^61 ps)",
        )?),
        tupdate: secs(p.f64(
            "tupdate",
            0.015,
            |x| (1e-6..=MAX_S).contains(&x),
            "a time in seconds from 1 us to 2.305843e6 s (2^61 ps)",
        )?),
        alpha: p.f64("alpha", 0.125, |x| x >= 0.0, "a non-negative gain (1/s)")?,
        beta: p.f64("beta", 1.25, |x| x >= 0.0, "a non-negative gain (1/s)")?,
        max_burst: secs(p.f64(
            "max_burst",
            0.15,
            |x| (0.0..=MAX_S).contains(&x),
            "a time in seconds from 0 to 2.305843e6 s (2^61 ps)",
        )?),
        ecn: p.bool("ecn", false)?,
        bytemode: p.bool("bytemode", false)?,
        dq_rate_estimator: p.bool("dq_rate_estimator", false)?,
        mtu: p.u64("mtu", 1500, |x| (1..=65535).contains(&x), "a size in bytes (1..=65535)")?,
        limit_packets: link.limit_packets.unwrap_or(1000),
        limit_bytes: link.limit_bytes.unwrap_or(u64::MAX),
    };
    Ok(Pie::new(cfg, rng))
}

#[derive(Debug, Clone, Copy)]
pub struct PieConfig {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Time,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    pub mtu: u64,
    pub limit_packets: u64,
    pub limit_bytes: u64,
}

/// The factor on `alpha` and `beta` at drop probability `p` (RFC 8033
/// section 4.2's table; Linux `pie_calculate_probability`): 1 from 10 %,
/// 1/2 below, and / 4 more for each further decade below 1 %, down to
/// 1/2048 below 0.0001 %.
pub fn gain_scale(p: f64) -> f64 {
    if p >= CAP_FROM {
        return 1.0;
    }
    let mut s = 0.5;
    let mut power = 100.0;
    while p < 1.0 / power && power <= 1e6 {
        s /= 4.0;
        power *= 10.0;
    }
    s
}

#[derive(Debug)]
pub struct Pie {
    cfg: PieConfig,
    q: VecDeque<Queued>,
    bytes: u64,
    prob: f64,
    accu_prob: f64,
    /// The current queue delay and the one at the last update.
    qdelay: Time,
    qdelay_old: Time,
    burst_time: Time,
    /// Last dequeue (timestamp mode) or start of the rate measurement.
    dq_tstamp: Option<Time>,
    /// Bytes dequeued in the current measurement cycle.
    dq_count: Option<u64>,
    /// Departure rate (bytes/s; 0: none measured).
    avg_dq_rate: f64,
    marks: u64,
    rng: Stream,
}

impl Pie {
    pub fn new(cfg: PieConfig, rng: Stream) -> Self {
        let mut p = Pie {
            cfg,
            q: VecDeque::new(),
            bytes: 0,
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            dq_count: None,
            avg_dq_rate: 0.0,
            marks: 0,
            rng,
        };
        p.vars_init();
        p
    }

    /// Linux `pie_vars_init`: a fresh burst allowance and measurement.
    fn vars_init(&mut self) {
        self.burst_time = self.cfg.max_burst;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
        self.dq_count = None;
        self.avg_dq_rate = 0.0;
    }

    pub fn prob(&self) -> f64 {
        self.prob
    }

    pub fn qdelay(&self) -> Time {
        self.qdelay
    }

    pub fn burst_allowance(&self) -> Time {
        self.burst_time
    }

    /// Linux `pie_drop_early`: whether the arrival of `size` bytes, with
    /// `self.bytes` waiting, gets a congestion signal.
    fn drop_early(&mut self, size: u64) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < self.cfg.target / 2 && self.prob < SAFE_PROB {
            return false;
        }
        if self.bytes < 2 * self.cfg.mtu {
            return false;
        }
        let local = if self.cfg.bytemode && size <= self.cfg.mtu {
            self.prob * size as f64 / self.cfg.mtu as f64
        } else {
            self.prob
        };
        if local == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += local;
        }
        if self.accu_prob < ACCU_LOW {
            return false;
        }
        if self.accu_prob >= ACCU_HIGH {
            return true;
        }
        self.rng.gen::<f64>() < local
    }

    /// Linux `pie_process_dequeue`, after a packet that waited since
    /// `enqueued` and has `len` bytes left at `now` (`self.bytes` already
    /// without it).
    fn process_dequeue(&mut self, now: Time, enqueued: Time, len: u64) {
        let dtime;
        if !self.cfg.dq_rate_estimator {
            self.qdelay = now - enqueued;
            dtime = self.dq_tstamp.map_or(0, |t| now - t);
            self.dq_tstamp = Some(now);
            if self.bytes == 0 {
                self.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            if self.bytes >= QUEUE_THRESHOLD && self.dq_count.is_none() {
                self.dq_tstamp = Some(now);
                self.dq_count = Some(0);
            }
            let Some(count) = self.dq_count else { return };
            let count = count + len;
            self.dq_count = Some(count);
            if count < QUEUE_THRESHOLD {
                return;
            }
            dtime = now - self.dq_tstamp.unwrap_or(now);
            if dtime == 0 {
                return;
            }
            let rate = count as f64 / to_secs(dtime);
            self.avg_dq_rate = if self.avg_dq_rate == 0.0 { rate } else { self.avg_dq_rate * 7.0 / 8.0 + rate / 8.0 };
            if self.bytes < QUEUE_THRESHOLD {
                self.dq_count = None;
            } else {
                self.dq_count = Some(0);
                self.dq_tstamp = Some(now);
            }
        }
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// Linux `pie_calculate_probability`, every `tupdate`.
    fn calculate_probability(&mut self) {
        let backlog = self.bytes;
        let (qdelay, qdelay_old) = if self.cfg.dq_rate_estimator {
            let old = self.qdelay;
            self.qdelay_old = old;
            let qd = if self.avg_dq_rate > 0.0 { secs(backlog as f64 / self.avg_dq_rate) } else { 0 };
            (qd, old)
        } else {
            (self.qdelay, self.qdelay_old)
        };
        // A zero delay with a backlog: too small to tell; no decay.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let s = gain_scale(self.prob);
        let (qd, old, target) = (to_secs(qdelay), to_secs(qdelay_old), to_secs(self.cfg.target));
        let mut delta = s * self.cfg.alpha * (qd - target) + s * self.cfg.beta * (qd - old);
        if delta > MAX_INCREASE && self.prob >= CAP_FROM {
            delta = MAX_INCREASE;
        }
        if qd > HIGH_DELAY_S {
            delta += MAX_INCREASE;
        }
        let mut prob = self.prob + delta;
        if prob > 1.0 {
            prob = 1.0;
            update_prob = false;
        }
        if prob < 0.0 {
            prob = 0.0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            prob -= prob / 64.0;
        }
        self.prob = prob;
        self.qdelay = qdelay;
        let half = self.cfg.target / 2;
        if qdelay < half
            && qdelay_old < half
            && self.prob == 0.0
            && (!self.cfg.dq_rate_estimator || self.avg_dq_rate > 0.0)
        {
            self.vars_init();
        }
        if !self.cfg.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, _now: Time, mut q: Queued, drops: &mut Vec<Dropped>) {
        if self.q.len() as u64 >= self.cfg.limit_packets || self.bytes + q.size() > self.cfg.limit_bytes {
            self.accu_prob = 0.0;
            drops.push(Dropped { q, reason: DropReason::Overflow });
            return;
        }
        if self.drop_early(q.size()) {
            self.accu_prob = 0.0;
            if !(self.cfg.ecn && self.prob <= ECN_MAX_PROB && q.mark()) {
                drops.push(Dropped { q, reason: DropReason::Aqm });
                return;
            }
            self.marks += 1;
        }
        self.bytes += q.size();
        self.q.push_back(q);
    }

    fn dequeue(&mut self, now: Time, _drops: &mut Vec<Dropped>) -> Option<Queued> {
        let q = self.q.pop_front()?;
        self.bytes -= q.size();
        self.process_dequeue(now, q.enqueued, q.size());
        Some(q)
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.q.len() as u64, bytes: self.bytes }
    }

    fn marks(&self) -> u64 {
        self.marks
    }

    fn for_each(&self, f: &mut dyn FnMut(&Queued)) {
        self.q.iter().for_each(f)
    }

    fn update_interval(&self) -> Option<Time> {
        Some(self.cfg.tupdate)
    }

    fn on_timer(&mut self, _now: Time) {
        self.calculate_probability();
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("pie_drop_prob", self.prob));
        out.push(("pie_qdelay_s", to_secs(self.qdelay)));
        out.push(("pie_burst_allowance_s", to_secs(self.burst_time)));
    }
}

#[cfg(test)]
mod tests;
