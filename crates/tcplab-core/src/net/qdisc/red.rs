//! RED, Random Early Detection (Floyd & Jacobson 1993), with gentle RED
//! (Floyd 2000) and Adaptive RED (Floyd, Gummadi & Shenker 2001).
//!
//! At each arrival the average queue `avg` is updated (section 4 of the
//! paper, Fig. 2): `avg <- (1 - w_q) avg + w_q q` with `q` the packets
//! waiting when the packet arrives, or, for the first arrival after the
//! queue went idle, `avg <- (1 - w_q)^m avg` with `m = idle time / s`, `s`
//! the transmission time of a `mean_pktsize` packet (as many packets as the
//! link could have sent while idle; Linux `red_calc_qavg_from_idle_time`
//! approximates the same with a table). The drop curve `p_b(avg)` is 0
//! below `min_th`, rises linearly to `max_p` at `max_th`; gentle RED
//! continues linearly from `max_p` to 1 between `max_th` and `2 max_th`;
//! beyond that (beyond `max_th` without gentle) every arrival is dropped
//! (a forced drop). In between, the count-based spreading of section 7:
//! `count` packets have arrived since the last drop or mark, and the
//! arrival is dropped or marked with `p_a = p_b / (1 - count p_b)` (1 once
//! `count p_b >= 1`), which makes the gap between marks uniform on
//! 1..1/p_b instead of geometric (`count` is -1 below `min_th` and 0
//! after a drop or mark, as in Fig. 2; Linux `red_action` draws one
//! uniform number per gap instead, which gives the same distribution).
//!
//! Adaptive RED (FGS 2001, Fig. 1; Linux `red_adaptative_algo`): every
//! 0.5 s, if `avg` is above the target band `[min_th + 0.4 (max_th -
//! min_th), min_th + 0.6 (max_th - min_th)]` and `max_p <= 0.5`, `max_p +=
//! min(0.01, max_p / 4)`; if below it and `max_p >= 0.01`, `max_p *= 0.9`.
//!
//! ECN (RFC 3168 section 7; Linux `red_enqueue`): with `ecn`, an early
//! drop of an ECN-capable packet becomes a CE mark; forced drops stay drops
//! (`harddrop`, as ns-2 always does and Linux with `harddrop`). The count
//! is reset by a mark as by a drop.
//!
//! Sources: S. Floyd, V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993 (sections 4, 7, Fig. 2); S.
//! Floyd, "Recommendations on using the gentle_ variant of RED", 2000; S.
//! Floyd, R. Gummadi, S. Shenker, "Adaptive RED", 2001 (Fig. 1, section 5's
//! automatic parameters); Linux `include/net/red.h` (`red_calc_qavg`,
//! `red_action`, `red_adaptative_algo`), `net/sched/sch_red.c`
//! (`red_enqueue`, `red_dequeue`: the idle period starts when a dequeue
//! finds the queue empty); ns-2 `queue/red.cc` (automatic parameters,
//! `queue_in_bytes_`).
//!
//! Parameters (`queue.params`; defaults and their sources):
//! - `min_th` (packets, 0 = automatic): `max(5, target_delay C / 2)` with
//!   `C = rate / (8 mean_pktsize)` packets per second (FGS 2001 section 5,
//!   ns-2 `thresh_ 0`);
//! - `max_th` (packets, 0 = automatic): `3 min_th` (FGS 2001, ns-2);
//! - `max_p` 0.1 (ns-2 `linterm_ 10`, FGS 2001's initial value);
//! - `w_q` (0 = automatic): `1 - exp(-1/C)` (FGS 2001 section 5, ns-2
//!   `q_weight_ 0`);
//! - `target_delay` 0.005 s (FGS 2001, ns-2 `targetdelay_`), used only by
//!   the automatic thresholds;
//! - `gentle` true (ns-2's default since 2001);
//! - `adaptive` false (ns-2, Linux);
//! - `ecn` false (ns-2 `setbit_`, Linux `ecn` flag);
//! - `harddrop` true: forced drops are drops even with `ecn` (ns-2; Linux
//!   `harddrop`, which is off by default there: set false for Linux's mark
//!   above `max_th`);
//! - `mean_pktsize` 1500 bytes: the link's typical packet (the simulator's
//!   default `packet_size`; ns-2 defaults to 500, Linux `avpkt` is given);
//! - `bytemode` false: the average and the thresholds count bytes, in
//!   units of `mean_pktsize` (ns-2 `queue_in_bytes_`, whose thresholds are
//!   `thresh_ * mean_pktsize`; Linux RED always counts bytes).
//! - Limits: `queue.limit_packets`, default `max(1000, 4 max_th)` (Linux's
//!   default device queue of 1000 packets, raised where `max_th` is large
//!   as tc-red(8) advises a limit a few times `max`); `queue.limit_bytes`,
//!   default none.
//!
//! Deviations: floating point instead of Linux's fixed point (`Wlog`,
//! `Plog`, the idle table); `m` is real, not floored as in ns-2; a drop at
//! the packet limit leaves `count` alone (Linux; ns-2 resets it); the
//! adaptive timer runs at every 0.5 s from time 0 rather than 0.5 s after
//! the qdisc was created; ns-2's `wait_` option and byte-scaled
//! probabilities (`bytes_`) are not implemented.

use std::collections::VecDeque;

use rand::Rng;

use super::{secs, Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::{to_secs, Time};

/// Adaptive RED's update interval (FGS 2001 Fig. 1; Linux `HZ / 2`).
pub const ADAPT_INTERVAL_S: f64 = 0.5;
/// Adaptive RED's range of `max_p` (FGS 2001; Linux `MAX_P_MIN`, `MAX_P_MAX`).
pub const MAX_P_MIN: f64 = 0.01;
pub const MAX_P_MAX: f64 = 0.5;
/// Adaptive RED's multiplicative decrease (FGS 2001; Linux `max_P / 10 * 9`).
pub const ADAPT_BETA: f64 = 0.9;

pub fn info() -> DisciplineInfo {
    let pi = |name, default, description, source| ParamInfo { name, default, description, source };
    DisciplineInfo {
        name: "red",
        aliases: &[],
        description: "Random Early Detection: EWMA of the queue, drop/mark probability rising from min_th to max_th (gentle: to 1 at 2 max_th), count-based spreading; optional Adaptive RED (max_p by AIMD every 0.5 s) and ECN marking",
        params: vec![
            pi("min_th", "0 (automatic: max(5, target_delay * C / 2), C packets/s)", "minimum threshold of the average queue (packets)", "Floyd & Jacobson 1993; automatic: Floyd, Gummadi & Shenker 2001, ns-2"),
            pi("max_th", "0 (automatic: 3 * min_th)", "maximum threshold of the average queue (packets)", "Floyd & Jacobson 1993; automatic: Floyd, Gummadi & Shenker 2001, ns-2"),
            pi("max_p", "0.1", "drop probability at max_th (Adaptive RED: its initial value)", "ns-2 linterm_ 10; Floyd, Gummadi & Shenker 2001"),
            pi("w_q", "0 (automatic: 1 - exp(-1/C))", "weight of the queue average", "Floyd & Jacobson 1993; automatic: Floyd, Gummadi & Shenker 2001, ns-2"),
            pi("target_delay", "0.005", "target queueing delay of the automatic thresholds (s)", "Floyd, Gummadi & Shenker 2001; ns-2 targetdelay_"),
            pi("gentle", "true", "p_b rises from max_p to 1 between max_th and 2 max_th instead of jumping to 1", "Floyd 2000; ns-2 gentle_ default"),
            pi("adaptive", "false", "Adaptive RED: max_p += min(0.01, max_p/4) / *= 0.9 every 0.5 s toward the middle of [min_th, max_th]", "Floyd, Gummadi & Shenker 2001; Linux red_adaptative_algo"),
            pi("ecn", "false", "mark ECN-capable packets CE instead of early-dropping them", "RFC 3168; Linux sch_red ecn, ns-2 setbit_"),
            pi("harddrop", "true", "forced drops (avg beyond max_th, or 2 max_th if gentle) stay drops with ecn; false marks them as Linux does by default", "ns-2; Linux sch_red harddrop"),
            pi("mean_pktsize", "1500", "typical packet size (bytes): idle-time correction, C, bytemode's unit", "Floyd & Jacobson 1993 section 4; ns-2 mean_pktsize_"),
            pi("bytemode", "false", "average and thresholds count bytes in units of mean_pktsize", "ns-2 queue_in_bytes_"),
        ],
        source: "Floyd & Jacobson 1993; Floyd 2000 (gentle); Floyd, Gummadi & Shenker 2001 (Adaptive RED); Linux red.h, sch_red.c",
    }
}

/// Packets per second of `mean_pktsize`-byte packets at `rate_bps` (the
/// `C` of Adaptive RED's automatic settings, ns-2's `ptc`).
pub fn packets_per_sec(rate_bps: f64, mean_pktsize: f64) -> f64 {
    rate_bps / (8.0 * mean_pktsize)
}

/// Adaptive RED's automatic thresholds (FGS 2001 section 5): `min_th =
/// max(5, target_delay C / 2)`, `max_th = 3 min_th`.
pub fn auto_thresholds(c: f64, target_delay: f64) -> (f64, f64) {
    let min_th = (target_delay * c / 2.0).max(5.0);
    (min_th, 3.0 * min_th)
}

/// Adaptive RED's automatic weight (FGS 2001 section 5): `1 - exp(-1/C)`,
/// a time constant of one second.
pub fn auto_w_q(c: f64) -> f64 {
    1.0 - (-1.0 / c).exp()
}

/// Floyd & Jacobson section 7: the probability of the arrival `count`
/// packets after the last mark, `p_b / (1 - count p_b)`, 1 once `count p_b
/// >= 1`.
#[inline]
pub fn p_a(p_b: f64, count: i64) -> f64 {
    let c = count as f64 * p_b;
    if c >= 1.0 {
        1.0
    } else {
        p_b / (1.0 - c)
    }
}

pub fn build(p: &Params, link: LinkInfo, rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    Ok(Box::new(build_red(p, link, rng)?))
}

/// [`build`], returning the discipline itself.
pub fn build_red(p: &Params, link: LinkInfo, rng: Stream) -> Result<Red, SpecError> {
    let mean_pktsize =
        p.u64("mean_pktsize", 1500, |x| (1..=65535).contains(&x), "a packet size in bytes (1..=65535)")? as f64;
    let c = packets_per_sec(link.rate_bps, mean_pktsize);
    let target_delay = p.f64(
        "target_delay",
        0.005,
        |x| x > 0.0 && x <= crate::spec::limits::MAX_SPAN_S,
        "a positive time in seconds up to 2.305843e6 s (2^61 ps)",
    )?;
    let (auto_min, _) = auto_thresholds(c, target_delay);
    let min_th = p.f64("min_th", 0.0, |x| x >= 0.0, "a non-negative number of packets (0: automatic)")?;
    let min_th = if min_th == 0.0 { auto_min } else { min_th };
    let max_th = p.f64(
        "max_th",
        0.0,
        |x| x == 0.0 || x > min_th,
        &format!("greater than min_th ({min_th}), or 0 for 3 min_th"),
    )?;
    let max_th = if max_th == 0.0 { 3.0 * min_th } else { max_th };
    let max_p = p.f64("max_p", 0.1, |x| x > 0.0 && x <= 1.0, "a probability in (0, 1]")?;
    let w_q = p.f64("w_q", 0.0, |x| (0.0..=1.0).contains(&x), "a weight in (0, 1], or 0 for automatic")?;
    let w_q = if w_q == 0.0 { auto_w_q(c) } else { w_q };
    let cfg = RedConfig {
        min_th,
        max_th,
        max_p,
        w_q,
        gentle: p.bool("gentle", true)?,
        adaptive: p.bool("adaptive", false)?,
        ecn: p.bool("ecn", false)?,
        harddrop: p.bool("harddrop", true)?,
        bytemode: p.bool("bytemode", false)?,
        mean_pktsize,
        rate_bps: link.rate_bps,
        limit_packets: link.limit_packets.unwrap_or_else(|| default_limit(max_th)),
        limit_bytes: link.limit_bytes.unwrap_or(u64::MAX),
    };
    Ok(Red::new(cfg, rng))
}

/// The packet limit when `queue.limit_packets` is unset: 1000 (Linux's
/// default device queue), or 4 `max_th` if larger (tc-red(8): a few times
/// `max`).
pub fn default_limit(max_th: f64) -> u64 {
    1000u64.max((4.0 * max_th).ceil() as u64)
}

#[derive(Debug, Clone, Copy)]
pub struct RedConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub adaptive: bool,
    pub ecn: bool,
    pub harddrop: bool,
    pub bytemode: bool,
    pub mean_pktsize: f64,
    pub rate_bps: f64,
    pub limit_packets: u64,
    pub limit_bytes: u64,
}

#[derive(Debug)]
pub struct Red {
    cfg: RedConfig,
    q: VecDeque<Queued>,
    bytes: u64,
    /// Average queue (packets, or bytes / mean_pktsize in bytemode).
    avg: f64,
    /// Packets since the last mark or drop (-1: below min_th).
    count: i64,
    /// The current max_p (Adaptive RED changes it).
    max_p: f64,
    /// Since when the queue is idle (a dequeue found it empty).
    idle_since: Option<Time>,
    /// Transmission time of a mean_pktsize packet (s): the `s` of `m`.
    pkt_time: f64,
    marks: u64,
    rng: Stream,
}

impl Red {
    pub fn new(cfg: RedConfig, rng: Stream) -> Self {
        Red {
            q: VecDeque::new(),
            bytes: 0,
            avg: 0.0,
            count: -1,
            max_p: cfg.max_p,
            idle_since: None,
            pkt_time: 8.0 * cfg.mean_pktsize / cfg.rate_bps,
            marks: 0,
            rng,
            cfg,
        }
    }

    /// The curve: `p_b` at average queue `avg` with the current `max_p`
    /// (1 in the forced region).
    pub fn p_b(&self, avg: f64) -> f64 {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        if avg < min {
            0.0
        } else if avg < max {
            self.max_p * (avg - min) / (max - min)
        } else if self.cfg.gentle && avg < 2.0 * max {
            self.max_p + (1.0 - self.max_p) * (avg - max) / max
        } else {
            1.0
        }
    }

    /// Where forced drops start.
    fn forced_from(&self) -> f64 {
        if self.cfg.gentle {
            2.0 * self.cfg.max_th
        } else {
            self.cfg.max_th
        }
    }

    /// The queue as the average counts it.
    fn current(&self) -> f64 {
        if self.cfg.bytemode {
            self.bytes as f64 / self.cfg.mean_pktsize
        } else {
            self.q.len() as f64
        }
    }

    /// `avg` decayed over the idle period up to `now`, `(1 - w_q)^m avg`.
    fn idle_decayed(&self, idle_since: Time, now: Time) -> f64 {
        let m = to_secs(now.saturating_sub(idle_since)) / self.pkt_time;
        self.avg * (1.0 - self.cfg.w_q).powf(m)
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// Adaptive RED's step (FGS 2001 Fig. 1) at average `avg`.
    fn adapt(&mut self, avg: f64) {
        let delta = self.cfg.max_th - self.cfg.min_th;
        let (lo, hi) = (self.cfg.min_th + 0.4 * delta, self.cfg.min_th + 0.6 * delta);
        if avg > hi && self.max_p <= MAX_P_MAX {
            self.max_p += MAX_P_MIN.min(self.max_p / 4.0);
        } else if avg < lo && self.max_p >= MAX_P_MIN {
            self.max_p *= ADAPT_BETA;
        }
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, now: Time, mut q: Queued, drops: &mut Vec<Dropped>) {
        self.avg = match self.idle_since.take() {
            Some(t0) => self.idle_decayed(t0, now),
            None => (1.0 - self.cfg.w_q) * self.avg + self.cfg.w_q * self.current(),
        };
        let mut marked = false;
        if self.avg < self.cfg.min_th {
            self.count = -1;
        } else if self.avg >= self.forced_from() {
            self.count = 0;
            if self.cfg.harddrop || !self.cfg.ecn || !q.mark() {
                drops.push(Dropped { q, reason: DropReason::Aqm });
                return;
            }
            marked = true;
        } else {
            self.count += 1;
            let pa = p_a(self.p_b(self.avg), self.count);
            if self.rng.gen::<f64>() < pa {
                self.count = 0;
                if !self.cfg.ecn || !q.mark() {
                    drops.push(Dropped { q, reason: DropReason::Aqm });
                    return;
                }
                marked = true;
            }
        }
        if self.q.len() as u64 + 1 > self.cfg.limit_packets || self.bytes + q.size() > self.cfg.limit_bytes {
            drops.push(Dropped { q, reason: DropReason::Overflow });
            return;
        }
        self.marks += marked as u64;
        self.bytes += q.size();
        self.q.push_back(q);
    }

    fn dequeue(&mut self, now: Time, _drops: &mut Vec<Dropped>) -> Option<Queued> {
        match self.q.pop_front() {
            Some(q) => {
                self.bytes -= q.size();
                Some(q)
            }
            None => {
                if self.idle_since.is_none() {
                    self.idle_since = Some(now);
                }
                None
            }
        }
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
        self.cfg.adaptive.then(|| secs(ADAPT_INTERVAL_S))
    }

    fn on_timer(&mut self, now: Time) {
        if self.cfg.adaptive {
            let avg = match self.idle_since {
                Some(t0) => self.idle_decayed(t0, now),
                None => self.avg,
            };
            self.adapt(avg);
        }
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("red_avg_packets", self.avg));
        out.push(("red_max_p", self.max_p));
        out.push(("red_p_b", self.p_b(self.avg)));
    }
}

#[cfg(test)]
mod tests;
