//! CoDel (Controlled Delay): a FIFO whose dequeue drops (or CE-marks) the
//! head packet once the sojourn time has stayed at or above `target` for a
//! whole `interval`, then again at times spaced `interval / sqrt(count)`,
//! until a dequeued packet's sojourn goes below `target`.
//!
//! Sources:
//! - RFC 8289 (CoDel), sections 3 and 5 (pseudocode: `dodequeue`, `dequeue`,
//!   `control_law`, constants: TARGET 5 ms, INTERVAL 100 ms, MAXPACKET).
//! - Linux `include/net/codel.h` (`struct codel_params`, `struct codel_vars`,
//!   `REC_INV_SQRT_SHIFT`) and `include/net/codel_impl.h`
//!   (`codel_params_init`, `codel_Newton_step`, `codel_control_law`,
//!   `codel_should_drop`, `codel_dequeue`), `net/sched/sch_codel.c`
//!   (`codel_qdisc_enqueue`, `DEFAULT_CODEL_LIMIT`).
//!
//! The state machine ([`CodelVars`], [`CodelParams`], [`codel_dequeue`]
//! over a [`CodelQueue`]) is shared with FQ-CoDel (`fq_codel.rs`), which runs
//! one instance per flow queue, as Linux's `codel_impl.h` is shared by
//! `sch_codel.c` and `sch_fq_codel.c`.
//!
//! The rules, as Linux has them:
//! - `codel_should_drop`: a dequeued packet's sojourn below `target`, or a
//!   backlog (bytes left after taking it) of at most `mtu`, clears
//!   `first_above_time`; otherwise the first such packet sets
//!   `first_above_time = now + interval` and a later one dequeued strictly
//!   after that time says "ok to drop" (RFC 8289's `dodequeue` has `now >=
//!   first_above_time`; Linux `codel_time_after`, strict; Linux here).
//! - Entering the dropping state drops (or marks) the packet; `count`
//!   restarts at 1, except that when `delta = count - lastcount > 1` and
//!   `now - drop_next < 16 * interval` (the previous episode ended recently,
//!   and a `drop_next` still in the future counts as recent, as Linux's
//!   signed 32-bit comparison has it) `count = delta`, the drop rate that
//!   controlled the queue last time. RFC 8289 section 5.5 takes this same
//!   rule from Linux ("the Linux version, which is more widely deployed");
//!   earlier CoDel pseudocode and some ports reuse `count - 2` instead.
//! - In the dropping state, each dequeue at or after `drop_next` increments
//!   `count`, drops (or marks) and, if the next packet still says "ok to
//!   drop", schedules `drop_next = drop_next + interval / sqrt(count)`; a
//!   packet that does not leaves the dropping state. An ECN mark ends the
//!   loop (the marked packet is sent), a drop takes the next packet.
//! - `ce_threshold` (Linux, not in RFC 8289): a packet leaving with a
//!   sojourn strictly above it is CE-marked if ECN-capable, whatever the
//!   state (L4S-style shallow marking; DCTCP's recommended use).
//!
//! The inverse square root (parameter `control_law`): `newton` (default)
//! is Linux's: `rec_inv_sqrt` is 1/sqrt(count) in Q0.16, updated by one
//! Newton step `y = y/2 (3 - count y^2)` per count increment (and one after
//! the count reuse), and `drop_next = t + (interval * y) >> 32` in Q0.32.
//! Chosen because it is what every Linux CoDel runs and its spacing differs
//! from the exact one where it matters most, the first drops: from count 1
//! (y = 1) one step gives y = 0.5 at count 2 (exact: 0.707), so Linux's
//! second drop comes interval/2 after the first, not interval/sqrt(2); the
//! error is 2.6 % at count 3, under 1 % from count 7. `exact` is RFC 8289's
//! `interval / sqrt(count)` in floating point, for comparison.
//!
//! Parameters (`queue.params`, times in seconds), Linux defaults:
//! - `target` = 0.005, `interval` = 0.1 (RFC 8289's constants; Linux
//!   `codel_params_init`);
//! - `ecn` = false (Linux `codel_params_init`; `sch_codel` default noecn):
//!   mark ECN-capable packets instead of dropping them;
//! - `ce_threshold` = off (Linux `CODEL_DISABLED_THRESHOLD`);
//! - `mtu` = 1514 bytes: the backlog at or below which CoDel never drops
//!   (Linux `params->mtu = psched_mtu(dev)`, 1500 + 14 on Ethernet; RFC 8289
//!   `MAXPACKET`);
//! - `control_law` = `newton` (above).
//!
//! Limits: `queue.limit_packets` (default 1000, Linux `DEFAULT_CODEL_LIMIT`)
//! and `queue.limit_bytes` (default none, as `sch_codel`); an arrival that
//! would exceed either is dropped (`codel_qdisc_enqueue`: `qlen < limit`).
//! Enqueue stamps `Queued::enqueued = now` (`codel_set_enqueue_time`), so
//! the sojourn is measured from this queue's enqueue whatever the caller set.
//!
//! Deviations: times are exact picoseconds, not Linux's 32-bit 1.024 us
//! `codel_time_t` (no wrapping, no truncation of target and interval);
//! `ce_threshold` has no DSCP selector (`ce_threshold_selector`/`_mask`);
//! the per-dequeue drop cap `CODEL_MAX_DROPS_PER_DEQUEUE` of the newest
//! `codel.h` is not modelled (the drop loop ends when the queue empties or
//! `drop_next` passes `now`, as in `codel_impl.h` before it). A CE packet
//! counts as ECN-capable ([`Queued::mark`], as Linux's `INET_ECN_set_ce`).

use std::collections::VecDeque;

use super::{secs, Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::{to_secs, Time};

/// Linux `DEFAULT_CODEL_LIMIT` (packets).
pub const DEFAULT_LIMIT: u64 = 1000;
/// Linux `psched_mtu` of an Ethernet device: MTU 1500 + 14 bytes of header.
pub const DEFAULT_MTU: u64 = 1514;

/// Bits of `rec_inv_sqrt` (Linux `REC_INV_SQRT_BITS`, a u16) and the shift
/// to Q0.32 (`REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_SHIFT: u32 = 32 - 16;

/// CoDel's parameters (Linux `struct codel_params`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    /// Backlog (bytes, after the dequeued packet) at or below which CoDel
    /// never drops.
    pub mtu: u64,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// CE-mark packets whose sojourn exceeds this (None: off).
    pub ce_threshold: Option<Time>,
    /// RFC 8289's exact `interval / sqrt(count)` instead of Linux's Newton step.
    pub exact_inv_sqrt: bool,
}

impl CodelParams {
    /// Linux `codel_params_init` with `ecn` as given (false for `codel`,
    /// true for `fq_codel`).
    pub fn linux(ecn: bool) -> Self {
        CodelParams {
            target: secs(0.005),
            interval: secs(0.1),
            mtu: DEFAULT_MTU,
            ecn,
            ce_threshold: None,
            exact_inv_sqrt: false,
        }
    }

    /// Reads the CoDel parameters common to `codel` and `fq_codel`.
    pub fn from_params(p: &Params, ecn_default: bool) -> Result<Self, SpecError> {
        let time = |x: f64| x > 0.0 && x <= 3600.0;
        let target = p.f64("target", 0.005, time, "a time in seconds in (0, 3600]")?;
        let interval = p.f64("interval", 0.1, time, "a time in seconds in (0, 3600]")?;
        let ecn = p.bool("ecn", ecn_default)?;
        let ce =
            p.f64("ce_threshold", f64::INFINITY, |x| (0.0..=3600.0).contains(&x), "a time in seconds in [0, 3600]")?;
        let mtu = p.u64("mtu", DEFAULT_MTU, |x| x >= 1, "a number of bytes >= 1")?;
        let law = p.choice("control_law", "newton", &["newton", "exact"])?;
        Ok(CodelParams {
            target: secs(target),
            interval: secs(interval),
            mtu,
            ecn,
            ce_threshold: if ce.is_finite() { Some(secs(ce)) } else { None },
            exact_inv_sqrt: law == "exact",
        })
    }

    /// The documented parameters, shared by `codel` and `fq_codel`.
    pub fn infos(ecn_default: bool) -> Vec<ParamInfo> {
        vec![
            ParamInfo { name: "target", default: "0.005", description: "sojourn time (s) CoDel tolerates as a standing queue", source: "RFC 8289 pseudocode constants; Linux codel_params_init" },
            ParamInfo { name: "interval", default: "0.1", description: "time (s) the sojourn must stay >= target before the first drop; scale of the control law interval/sqrt(count)", source: "RFC 8289 pseudocode constants; Linux codel_params_init" },
            if ecn_default {
                ParamInfo { name: "ecn", default: "true", description: "CE-mark ECN-capable packets instead of dropping them", source: "Linux fq_codel_init (cparams.ecn = true); RFC 8290 parameter defaults" }
            } else {
                ParamInfo { name: "ecn", default: "false", description: "CE-mark ECN-capable packets instead of dropping them", source: "Linux codel_params_init (tc codel default noecn)" }
            },
            ParamInfo { name: "ce_threshold", default: "off", description: "CE-mark ECN-capable packets leaving with a sojourn (s) above this, whatever CoDel's state (L4S-style shallow marking)", source: "Linux codel_dequeue (CODEL_DISABLED_THRESHOLD = off)" },
            ParamInfo { name: "mtu", default: "1514", description: "backlog (bytes) at or below which CoDel never drops", source: "Linux codel_params.mtu = psched_mtu(dev); RFC 8289 MAXPACKET" },
            ParamInfo { name: "control_law", default: "newton", description: "1/sqrt(count): newton = Linux's Q0.16 reciprocal with one Newton step per count change (2nd drop after interval/2); exact = RFC 8289's interval/sqrt(count)", source: "Linux codel_Newton_step, codel_control_law; RFC 8289 s5.5" },
        ]
    }
}

/// One CoDel queue's state (Linux `struct codel_vars`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Drops (and marks) since entering the dropping state, or the reused
    /// count.
    pub count: u32,
    /// `count` at the last entry to the dropping state.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/sqrt(count) in Q0.16 (Linux `rec_inv_sqrt`).
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for an interval (None:
    /// below target; Linux's 0).
    pub first_above_time: Option<Time>,
    /// When to drop next, or when the last drop was due.
    pub drop_next: Time,
    /// Sojourn time of the last packet dequeued (Linux `ldelay`).
    pub ldelay: Time,
}

/// Counters (Linux `struct codel_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Largest packet seen (bytes).
    pub maxpacket: u64,
    /// Packets CoDel dropped.
    pub drop_count: u64,
    /// Packets CoDel CE-marked instead of dropping (`ecn`).
    pub ecn_mark: u64,
    /// Packets CE-marked for a sojourn above `ce_threshold`.
    pub ce_mark: u64,
}

/// The queue a CoDel instance takes packets from (Linux's `dequeue_func`
/// and the `backlog` pointer handed to `codel_dequeue`).
pub trait CodelQueue {
    /// Removes the head packet, updating the backlog.
    fn pop(&mut self) -> Option<Queued>;
    /// The backlog (bytes) compared with `mtu`, after the last `pop`: the
    /// queue's own for `codel`, the whole qdisc's for `fq_codel` (Linux
    /// passes `&sch->qstats.backlog` in both).
    fn backlog_bytes(&self) -> u64;
}

/// One Newton-Raphson step of `rec_inv_sqrt` towards 1/sqrt(count), in
/// Linux's fixed point (`codel_Newton_step`): `y' = y/2 (3 - count y^2)`.
pub fn newton_step(vars: &mut CodelVars) {
    let invsqrt = (vars.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = (invsqrt as u64 * invsqrt as u64) >> 32;
    let mut val = (3u64 << 32).wrapping_sub((vars.count as u64).wrapping_mul(invsqrt2));
    val >>= 2; // avoids overflow in the multiply below
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    vars.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
}

/// `t + interval / sqrt(count)` (Linux `codel_control_law`:
/// `reciprocal_scale(interval, rec_inv_sqrt << 16)`, or exact).
pub fn control_law(t: Time, params: &CodelParams, vars: &CodelVars) -> Time {
    if params.exact_inv_sqrt {
        t + (params.interval as f64 / (vars.count.max(1) as f64).sqrt()).round() as Time
    } else {
        t + ((params.interval as u128 * ((vars.rec_inv_sqrt as u128) << REC_INV_SQRT_SHIFT)) >> 32) as Time
    }
}

/// Linux `codel_should_drop`: has the sojourn been at or above target (with
/// more than an MTU queued) for longer than an interval?
fn should_drop(
    skb: Option<&Queued>,
    vars: &mut CodelVars,
    params: &CodelParams,
    stats: &mut CodelStats,
    backlog: u64,
    now: Time,
) -> bool {
    let Some(skb) = skb else {
        vars.first_above_time = None;
        return false;
    };
    vars.ldelay = skb.sojourn(now);
    stats.maxpacket = stats.maxpacket.max(skb.size());
    if vars.ldelay < params.target || backlog <= params.mtu {
        // went below: stay below for at least an interval
        vars.first_above_time = None;
        return false;
    }
    match vars.first_above_time {
        None => {
            vars.first_above_time = Some(now + params.interval);
            false
        }
        Some(t) => now > t,
    }
}

/// Linux `codel_dequeue` (RFC 8289 section 5.5 `dequeue`): takes packets
/// from `queue` until one may be sent, dropping (onto `drops`) or marking
/// as the state machine says.
pub fn codel_dequeue<Q: CodelQueue>(
    vars: &mut CodelVars,
    params: &CodelParams,
    stats: &mut CodelStats,
    now: Time,
    queue: &mut Q,
    drops: &mut Vec<Dropped>,
) -> Option<Queued> {
    let Some(first) = queue.pop() else {
        vars.dropping = false;
        return None;
    };
    let drop = should_drop(Some(&first), vars, params, stats, queue.backlog_bytes(), now);
    let mut skb = Some(first);
    if vars.dropping {
        if !drop {
            // sojourn below target: leave the dropping state
            vars.dropping = false;
        } else if now >= vars.drop_next {
            // Time for the next drop; a large backlog may need several now.
            while vars.dropping && now >= vars.drop_next {
                vars.count = vars.count.wrapping_add(1);
                newton_step(vars);
                let mut p = skb.take().expect("dropping with a packet in hand");
                if params.ecn && p.mark() {
                    stats.ecn_mark += 1;
                    vars.drop_next = control_law(vars.drop_next, params, vars);
                    skb = Some(p);
                    break;
                }
                stats.drop_count += 1;
                drops.push(Dropped { q: p, reason: DropReason::Aqm });
                skb = queue.pop();
                if !should_drop(skb.as_ref(), vars, params, stats, queue.backlog_bytes(), now) {
                    vars.dropping = false;
                } else {
                    vars.drop_next = control_law(vars.drop_next, params, vars);
                }
            }
        }
    } else if drop {
        let mut p = skb.take().expect("packet in hand");
        if params.ecn && p.mark() {
            stats.ecn_mark += 1;
            skb = Some(p);
        } else {
            stats.drop_count += 1;
            drops.push(Dropped { q: p, reason: DropReason::Aqm });
            skb = queue.pop();
            should_drop(skb.as_ref(), vars, params, stats, queue.backlog_bytes(), now);
        }
        vars.dropping = true;
        // If the sojourn went above target soon after it last went below,
        // the drop rate that controlled the queue then is a good start.
        let delta = vars.count.wrapping_sub(vars.lastcount);
        if delta > 1 && (now as i128 - vars.drop_next as i128) < 16 * params.interval as i128 {
            vars.count = delta;
            newton_step(vars);
        } else {
            vars.count = 1;
            vars.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
        }
        vars.lastcount = vars.count;
        vars.drop_next = control_law(now, params, vars);
    }
    if let (Some(p), Some(th)) = (skb.as_mut(), params.ce_threshold) {
        if vars.ldelay > th && p.mark() {
            stats.ce_mark += 1;
        }
    }
    skb
}

pub fn info() -> DisciplineInfo {
    DisciplineInfo {
        name: "codel",
        aliases: &[],
        description: "CoDel: drops (or CE-marks) at dequeue once the sojourn has stayed >= target for an interval, then at interval/sqrt(count) spacing until it goes below target; queue.limit_packets default 1000 (Linux DEFAULT_CODEL_LIMIT), queue.limit_bytes default none",
        params: CodelParams::infos(false),
        source: "RFC 8289; Linux include/net/codel_impl.h, net/sched/sch_codel.c",
    }
}

pub fn build(p: &Params, link: LinkInfo, _rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    let params = CodelParams::from_params(p, false)?;
    Ok(Box::new(Codel::new(params, link.limit_packets.unwrap_or(DEFAULT_LIMIT), link.limit_bytes.unwrap_or(u64::MAX))))
}

/// A single FIFO under CoDel (Linux `sch_codel`).
#[derive(Debug)]
pub struct Codel {
    q: VecDeque<Queued>,
    bytes: u64,
    limit_packets: u64,
    limit_bytes: u64,
    params: CodelParams,
    vars: CodelVars,
    stats: CodelStats,
    /// Arrivals dropped for the packet or byte limit.
    drop_overlimit: u64,
}

/// The FIFO and its byte count as a [`CodelQueue`].
struct Fifo<'a> {
    q: &'a mut VecDeque<Queued>,
    bytes: &'a mut u64,
}

impl CodelQueue for Fifo<'_> {
    fn pop(&mut self) -> Option<Queued> {
        let p = self.q.pop_front()?;
        *self.bytes -= p.size();
        Some(p)
    }

    fn backlog_bytes(&self) -> u64 {
        *self.bytes
    }
}

impl Codel {
    pub fn new(params: CodelParams, limit_packets: u64, limit_bytes: u64) -> Self {
        Codel {
            q: VecDeque::new(),
            bytes: 0,
            limit_packets,
            limit_bytes,
            params,
            vars: CodelVars::default(),
            stats: CodelStats::default(),
            drop_overlimit: 0,
        }
    }

    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }

    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, now: Time, mut q: Queued, drops: &mut Vec<Dropped>) {
        if (self.q.len() as u64) < self.limit_packets && self.bytes + q.size() <= self.limit_bytes {
            q.enqueued = now; // codel_set_enqueue_time
            self.bytes += q.size();
            self.q.push_back(q);
        } else {
            self.drop_overlimit += 1;
            drops.push(Dropped { q, reason: DropReason::Overflow });
        }
    }

    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Queued> {
        let mut fifo = Fifo { q: &mut self.q, bytes: &mut self.bytes };
        codel_dequeue(&mut self.vars, &self.params, &mut self.stats, now, &mut fifo, drops)
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.q.len() as u64, bytes: self.bytes }
    }

    fn marks(&self) -> u64 {
        self.stats.ecn_mark + self.stats.ce_mark
    }

    fn for_each(&self, f: &mut dyn FnMut(&Queued)) {
        self.q.iter().for_each(f)
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("codel_dropping", self.vars.dropping as u8 as f64));
        out.push(("codel_count", self.vars.count as f64));
        out.push(("codel_sojourn_s", to_secs(self.vars.ldelay)));
        out.push(("codel_drop_next_s", to_secs(self.vars.drop_next)));
    }
}

#[cfg(test)]
mod tests;
