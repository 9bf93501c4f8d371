//! DualPI2: the DualQ Coupled AQM of RFC 9332 with the PI2 base AQM, as
//! Linux's `sch_dualpi2` (merged in Linux 6.17) implements it.
//!
//! Two FIFOs share one buffer: the L queue holds L4S traffic (ECN field
//! ECT(1) or CE, RFC 9331 section 5.1), the C queue everything else
//! (Not-ECT, ECT(0)); RFC 9332 section 2.3. Every `tupdate` a PI controller moves the base
//! probability p' toward the delay target:
//!
//! ```text
//! p' += alpha * (qdelay - target) + beta * (qdelay - qdelay_old),  p' in [0, 1]
//! ```
//!
//! where `qdelay` is the sojourn time so far of the older of the two head
//! packets (Linux `calculate_probability`: the max of both queues' head
//! delays; RFC 9332 figure 4 reads the C queue's only). alpha and beta are
//! in Hz, the time step already folded in: RFC 9332 figure 2 derives
//! `alpha = 0.1 * Tupdate / RTT_max^2` and `beta = 0.3 / RTT_max`, and
//! Linux adds `alpha * (qdelay - target)` (delay in seconds) to p' with no
//! further factor of tupdate. From p' (RFC 9332 sections 2.1 and 2.4,
//! figure 4):
//! - the C queue drops (Not-ECT) or marks (ECT(0)) with p_C = p'^2, drawn
//!   as two independent comparisons `u1 < p' && u2 < p'` (Linux
//!   `dualpi2_classic_marking`; the same as comparing p' with the larger of
//!   two random numbers), not by squaring p' first;
//! - the L queue marks with the coupled p_CL = k * p' (one comparison,
//!   Linux `dualpi2_scalable_marking`; a random draw, not the deterministic
//!   `recur()` of the RFC's pseudocode), ORed with its native AQM, a step: every L
//!   packet whose sojourn exceeds `step_thresh` (1 ms) is marked whatever p'
//!   (Linux `do_step_aqm`). Marking on either is the RFC's combining function
//!   `p_L = max(p'_L, p_CL)` for a step p'_L in {0, 1}.
//!
//! Overload (RFC 9332 section 4.2.3, appendix A.1; Linux `must_drop`): when p_CL = k p'
//! would exceed 1, i.e. p_C = p'^2 > p_Cmax = min(1 / k^2, 1) (25 % for
//! k = 2), ECN is no longer trusted: with `drop_on_overload` (the default)
//! C packets are dropped with p_C whether ECN-capable or not, and L packets
//! are dropped with p_C and marked otherwise. Without it, p' is capped at
//! 1 / k (Linux `calculate_probability`), so p_CL never exceeds 1 and the L
//! queue marks but never drops, and the buffer limit does the rest.
//! No PI decision (neither queue's) is taken while the remaining backlog of
//! both queues is below two MTUs (Linux `must_drop`); the step marks are.
//!
//! Scheduler: Linux's credit-based weighted round robin (`dequeue_packet`),
//! not the RFC's time-shifted FIFO example (RFC 9332 section 4.2.2 allows
//! either). The credit starts at
//! `mtu * (wc - wl)` with wc = `c_protection` % and wl = 100 - wc
//! (`dualpi2_calculate_c_protection`); the L queue is served while the
//! credit is <= 0 (or the C queue is empty), the C queue otherwise. Serving L
//! while C waits adds `wc * bytes`, serving C while L waits subtracts
//! `wl * bytes`; with one queue empty the credit stands still, and with both
//! empty it is reset. So L has priority, but under an L overload C still
//! gets wc % of the bytes. The credit changes only for a packet that leaves
//! (not for one the AQM drops).
//!
//! AQM decisions are taken at dequeue (`drop_early = false`, Linux's
//! default), or at enqueue with `drop_early`; the step is always at dequeue.
//!
//! Sources: RFC 9332 sections 2.1-2.4, 2.5.2.1, 4.2.2, 4.2.3 and appendix A
//! (figures 2-4); RFC 9331 section 5.1 (classification); Linux `net/sched/sch_dualpi2.c`: `dualpi2_reset_default` (defaults),
//! `dualpi2_skb_classify`, `dualpi2_enqueue_skb`, `dequeue_packet`,
//! `must_drop`, `dualpi2_classic_marking`, `dualpi2_scalable_marking`,
//! `do_step_aqm`, `__dualpi2_qdisc_dequeue`, `calculate_probability`,
//! `dualpi2_calculate_c_protection`, `get_memory_limit`.
//!
//! Parameters (`queue.params`, times in seconds), defaults from Linux
//! `dualpi2_reset_default`:
//! - `target` 0.015: PI delay target (RFC 9332 figure 2 too);
//! - `tupdate` 0.016: PI update interval (the RFC's example has
//!   min(target, RTT_max / 3) = 15 ms);
//! - `alpha` 0.16 Hz, `beta` 3.2 Hz: PI gains (Linux `41` and `819`, in
//!   1/256 Hz: "~0.16 Hz * 256", "~3.20 Hz * 256", a 10 dB stability margin
//!   at RTT_max = 100 ms);
//! - `coupling_factor` 2: k (RFC 9332 sections 2.1, 2.5.2.1; Linux);
//! - `step_thresh` 0.001 s, or `step_thresh_packets` (L queue length after
//!   the dequeue, Linux `step_in_packets`; unset by default; not both);
//! - `min_qlen_step` 0: step-mark only packets that found at least this many
//!   packets in the L queue on arrival;
//! - `drop_on_overload` true, `drop_early` false, `c_protection` 10 (%);
//! - `ecn_mask` `l4s_ect`: which ECN bits send a packet to the L queue
//!   (`l4s_ect`: ECT(1) and CE; `cla_ect`: ECT(0) and CE; `any_ect`);
//! - `mtu` 1500 bytes: Linux's `psched_mtu` (device MTU plus link header,
//!   1514 on Ethernet); the simulator's packet sizes include no link
//!   header, so its 1500-byte packet is Linux's 1514-byte frame.
//!
//! Limits: `queue.limit_packets` (default 10000, Linux `sch->limit`) and
//! `queue.limit_bytes` (default limit_packets * 2 * mtu, Linux
//! `get_memory_limit`), both queues together, checked on arrival.
//!
//! Deviations from Linux: probabilities are f64 in [0, 1] and draws are
//! uniform f64 (Linux: u32 fixed point, `get_random_u32() <= prob`, and
//! alpha, beta rounded to 41/256 and 819/256 Hz); the byte limit counts
//! packet bytes, Linux counts `skb->truesize` (its memory limit doubles the
//! MTU for that overhead); no tc filters or skb priority classification (so
//! no non-marking "LLLL" class) and no GSO splitting (`split_gso`: packets
//! are single segments); the timer runs at multiples of tupdate from time 0
//! (Linux: from qdisc creation). Trace variables: `dualpi2_p_prime` (p'),
//! `dualpi2_p_c` (p'^2), `dualpi2_p_cl` (min(k p', 1)),
//! `dualpi2_l_sojourn_s` and `dualpi2_c_sojourn_s` (the head packets'
//! sojourn times the last update read, 0 for an empty queue),
//! `dualpi2_l_packets`, `dualpi2_c_packets` (queue lengths now).

use std::collections::VecDeque;

use rand::Rng;

use super::{secs, Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::{to_secs, Time};

pub fn info() -> DisciplineInfo {
    let p = |name, default, description, source| ParamInfo { name, default, description, source };
    DisciplineInfo {
        name: "dualpi2",
        aliases: &["dualq"],
        description: "DualQ Coupled AQM: an L4S queue (ECT(1), CE) with a 1 ms step and coupled marking k p', a Classic queue with PI2 drop/mark p'^2 at a 15 ms target, WRR scheduler",
        params: vec![
            p("target", "0.015", "PI delay target (s)", "Linux dualpi2_reset_default; RFC 9332 fig. 2"),
            p("tupdate", "0.016", "PI probability update interval (s)", "Linux dualpi2_reset_default"),
            p("alpha", "0.16", "PI integral gain (Hz): p' += alpha * (qdelay - target)", "Linux dualpi2_reset_default (41/256 Hz); RFC 9332 fig. 2"),
            p("beta", "3.2", "PI proportional gain (Hz): p' += beta * (qdelay - qdelay_old)", "Linux dualpi2_reset_default (819/256 Hz); RFC 9332 fig. 2"),
            p("coupling_factor", "2", "k: L queue coupled marking p_CL = k p' (integer 1-255)", "RFC 9332 sec. 2.1, 2.5.2.1; Linux dualpi2_reset_default"),
            p("step_thresh", "0.001", "L queue step marking threshold on sojourn time (s)", "Linux dualpi2_reset_default"),
            p("step_thresh_packets", "unset", "step threshold on the L queue length instead (packets; not with step_thresh)", "Linux TCA_DUALPI2_STEP_THRESH_PKTS"),
            p("min_qlen_step", "0", "step-mark only packets that found at least this many packets in the L queue", "Linux dualpi2_reset_default"),
            p("drop_on_overload", "true", "when k p' > 1 (p_C > 1/k^2), drop with p_C in both queues instead of marking; else cap p' at 1/k", "Linux TC_DUALPI2_DROP_OVERLOAD_DROP; RFC 9332 sec. 4.2.3"),
            p("drop_early", "false", "take the PI decision at enqueue instead of dequeue", "Linux TC_DUALPI2_DROP_EARLY_DROP_DEQUEUE"),
            p("c_protection", "10", "C queue WRR weight wc in % (L gets 100 - wc)", "Linux dualpi2_calculate_c_protection"),
            p("ecn_mask", "l4s_ect", "ECN bits that send a packet to the L queue: l4s_ect (ECT(1), CE), cla_ect (ECT(0), CE), any_ect", "Linux TC_DUALPI2_ECN_MASK_L4S_ECT; RFC 9331 sec. 5.1"),
            p("mtu", "1500", "MTU in bytes for the 2-MTU no-AQM backlog, the WRR credit and the default byte limit", "Linux psched_mtu (1514 with the Ethernet header the simulator omits)"),
        ],
        source: "RFC 9332; Linux sch_dualpi2.c",
    }
}

/// Longest time a parameter may be: simulated time's span (spec::limits).
const MAX_S: f64 = crate::spec::limits::MAX_SPAN_S;

pub fn build(p: &Params, link: LinkInfo, rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    let d = Config::default();
    let step_time =
        p.f64("step_thresh", f64::NAN, |x| (0.0..=MAX_S).contains(&x), "a time from 0 to 2.305843e6 s (2^61 ps) (s)")?;
    let step_pkts = p.u64("step_thresh_packets", u64::MAX, |x| x < u64::MAX, "a packet count")?;
    let step = match (step_time.is_nan(), step_pkts == u64::MAX) {
        // Both given: Linux rejects "multiple step thresh attributes"
        // (re-reading the parameter with a test that fails names its field).
        (false, false) => {
            return Err(p.u64("step_thresh_packets", 0, |_| false, "left out when step_thresh is given").unwrap_err())
        }
        (_, false) => Step::Packets(step_pkts),
        (false, true) => Step::Time(secs(step_time)),
        (true, true) => d.step,
    };
    let cfg = Config {
        target: secs(p.f64(
            "target",
            to_secs(d.target),
            |x| (0.0..=MAX_S).contains(&x),
            "a time from 0 to 2.305843e6 s (2^61 ps) (s)",
        )?),
        tupdate: secs(p.f64(
            "tupdate",
            to_secs(d.tupdate),
            |x| (1e-6..=MAX_S).contains(&x),
            "a time from 1 us to 2.305843e6 s (2^61 ps) (s)",
        )?),
        alpha: p.f64("alpha", d.alpha, |x| x > 0.0, "a gain > 0 (Hz)")?,
        beta: p.f64("beta", d.beta, |x| x > 0.0, "a gain > 0 (Hz)")?,
        coupling_factor: p.u64(
            "coupling_factor",
            d.coupling_factor,
            |x| (1..=255).contains(&x),
            "an integer from 1 to 255",
        )?,
        step,
        min_qlen_step: p.u64("min_qlen_step", d.min_qlen_step, |_| true, "a packet count")?,
        drop_on_overload: p.bool("drop_on_overload", d.drop_on_overload)?,
        drop_early: p.bool("drop_early", d.drop_early)?,
        c_protection: p.u64("c_protection", d.c_protection, |x| x <= 100, "a percentage from 0 to 100")?,
        ecn_mask: match p.choice("ecn_mask", "l4s_ect", &["l4s_ect", "cla_ect", "any_ect"])? {
            "l4s_ect" => 1,
            "cla_ect" => 2,
            _ => 3,
        },
        mtu: p.u64("mtu", d.mtu, |x| x >= 68, "a size >= 68 (bytes)")?,
    };
    Ok(Box::new(DualPi2::new(cfg, link, rng)))
}

/// The step AQM's threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// On the packet's sojourn time (Linux default, 1 ms).
    Time(Time),
    /// On the L queue's length after the packet left (packets).
    Packets(u64),
}

/// DualPI2's parameters, Linux `dualpi2_reset_default` by default.
#[derive(Debug, Clone)]
pub struct Config {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub coupling_factor: u64,
    pub step: Step,
    pub min_qlen_step: u64,
    pub drop_on_overload: bool,
    pub drop_early: bool,
    /// wc, in percent.
    pub c_protection: u64,
    /// ECN bits that classify into the L queue (1: ECT(1) and CE).
    pub ecn_mask: u8,
    pub mtu: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            target: secs(0.015),
            tupdate: secs(0.016),
            alpha: 0.16,
            beta: 3.2,
            coupling_factor: 2,
            step: Step::Time(secs(0.001)),
            min_qlen_step: 0,
            drop_on_overload: true,
            drop_early: false,
            c_protection: 10,
            ecn_mask: 1,
            mtu: 1500,
        }
    }
}

/// A queued packet and whether the step AQM applies to it (decided on
/// arrival: Linux `skb_apply_step`).
#[derive(Debug, Clone, Copy)]
struct Entry {
    q: Queued,
    apply_step: bool,
}

/// What the PI2 decision did to a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Pass,
    Marked,
    Drop,
}

#[derive(Debug)]
pub struct DualPi2 {
    cfg: Config,
    k: f64,
    l: VecDeque<Entry>,
    c: VecDeque<Entry>,
    bytes: u64,
    limit_packets: u64,
    limit_bytes: u64,
    /// Base probability p' (Linux `pi2_prob`).
    p: f64,
    /// Queue delay at the previous update (Linux `last_qdelay`).
    last_qdelay: Time,
    /// Head sojourn times the last update read (for the trace).
    qdelay_c: Time,
    qdelay_l: Time,
    /// WRR credit (Linux `c_protection_credit`): <= 0 serves L.
    credit: i64,
    credit_init: i64,
    wc: i64,
    wl: i64,
    rng: Stream,
    marks: u64,
    step_marks: u64,
}

impl DualPi2 {
    pub fn new(cfg: Config, link: LinkInfo, rng: Stream) -> Self {
        let limit_packets = link.limit_packets.unwrap_or(10_000);
        let limit_bytes = link.limit_bytes.unwrap_or_else(|| limit_packets.saturating_mul(2 * cfg.mtu));
        let wc = cfg.c_protection as i64;
        let wl = 100 - wc;
        let credit_init = cfg.mtu as i64 * (wc - wl);
        DualPi2 {
            k: cfg.coupling_factor as f64,
            cfg,
            l: VecDeque::new(),
            c: VecDeque::new(),
            bytes: 0,
            limit_packets,
            limit_bytes,
            p: 0.0,
            last_qdelay: 0,
            qdelay_c: 0,
            qdelay_l: 0,
            credit: credit_init,
            credit_init,
            wc,
            wl,
            rng,
            marks: 0,
            step_marks: 0,
        }
    }

    /// L queue or C queue (Linux `dualpi2_skb_classify`: `ect & ecn_mask`).
    #[inline]
    fn is_l(&self, q: &Queued) -> bool {
        q.pkt.ecn() as u8 & self.cfg.ecn_mask != 0
    }

    #[inline]
    fn roll(&mut self, p: f64) -> bool {
        self.rng.gen::<f64>() < p
    }

    /// The PI2 decision for a packet of queue L (`is_l`) or C, with
    /// `backlog` bytes held besides it (Linux `must_drop`): marks it, or
    /// says drop.
    fn pi2(&mut self, q: &mut Queued, is_l: bool, backlog: u64) -> Verdict {
        if backlog < 2 * self.cfg.mtu {
            return Verdict::Pass;
        }
        let p = self.p;
        let p_cl = p * self.k;
        let overload = p_cl > 1.0;
        if !is_l {
            // dualpi2_classic_marking: p_C = p'^2 as two draws.
            if self.roll(p) && self.roll(p) {
                if overload || !q.pkt.ecn().capable() {
                    return Verdict::Drop;
                }
                q.mark();
                return Verdict::Marked;
            }
            Verdict::Pass
        } else if overload {
            // dualpi2_scalable_marking on overload: drop with p_C, else mark.
            if self.cfg.drop_on_overload && self.roll(p) && self.roll(p) {
                return Verdict::Drop;
            }
            if q.mark() {
                Verdict::Marked
            } else {
                Verdict::Drop
            }
        } else if self.roll(p_cl) {
            if q.mark() {
                Verdict::Marked
            } else {
                Verdict::Drop
            }
        } else {
            Verdict::Pass
        }
    }

    /// The step AQM on an L packet leaving at `now` (Linux `do_step_aqm`):
    /// whether it is over the threshold.
    fn over_step(&self, e: &Entry, now: Time) -> bool {
        e.apply_step
            && match self.cfg.step {
                Step::Time(th) => e.q.sojourn(now) > th,
                Step::Packets(th) => self.l.len() as u64 > th,
            }
    }

    /// Base probability p'.
    pub fn p_prime(&self) -> f64 {
        self.p
    }

    /// Classic drop/mark probability p_C = p'^2.
    pub fn p_c(&self) -> f64 {
        self.p * self.p
    }

    /// Coupled L4S marking probability p_CL = min(k p', 1).
    pub fn p_cl(&self) -> f64 {
        (self.k * self.p).min(1.0)
    }

    /// Packets marked by the step AQM so far (Linux `step_marks`).
    pub fn step_marks(&self) -> u64 {
        self.step_marks
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, _now: Time, mut q: Queued, drops: &mut Vec<Dropped>) {
        // dualpi2_enqueue_skb: qlen >= limit or memory over the limit.
        if (self.l.len() + self.c.len()) as u64 >= self.limit_packets || self.bytes + q.size() > self.limit_bytes {
            drops.push(Dropped { q, reason: DropReason::Overflow });
            return;
        }
        let is_l = self.is_l(&q);
        if self.cfg.drop_early {
            match self.pi2(&mut q, is_l, self.bytes) {
                Verdict::Drop => {
                    drops.push(Dropped { q, reason: DropReason::Aqm });
                    return;
                }
                Verdict::Marked => self.marks += 1,
                Verdict::Pass => {}
            }
        }
        self.bytes += q.size();
        if is_l {
            let apply_step = self.l.len() as u64 >= self.cfg.min_qlen_step;
            self.l.push_back(Entry { q, apply_step });
        } else {
            self.c.push_back(Entry { q, apply_step: false });
        }
    }

    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Queued> {
        loop {
            // dequeue_packet: the WRR credit picks the queue.
            let (mut e, is_l, credit_change) = if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
                let e = self.l.pop_front().unwrap();
                let change = if self.c.is_empty() { 0 } else { self.wc * e.q.size() as i64 };
                (e, true, change)
            } else if let Some(e) = self.c.pop_front() {
                let change = if self.l.is_empty() { 0 } else { -self.wl * e.q.size() as i64 };
                (e, false, change)
            } else {
                self.credit = self.credit_init;
                return None;
            };
            self.bytes -= e.q.size();
            let mut marked = false;
            if !self.cfg.drop_early {
                match self.pi2(&mut e.q, is_l, self.bytes) {
                    Verdict::Drop => {
                        drops.push(Dropped { q: e.q, reason: DropReason::Aqm });
                        continue;
                    }
                    Verdict::Marked => marked = true,
                    Verdict::Pass => {}
                }
            }
            if is_l && self.over_step(&e, now) {
                if !e.q.mark() {
                    drops.push(Dropped { q: e.q, reason: DropReason::Aqm });
                    continue;
                }
                self.step_marks += 1;
                marked = true;
            }
            if marked {
                self.marks += 1;
            }
            self.credit += credit_change;
            return Some(e.q);
        }
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: (self.l.len() + self.c.len()) as u64, bytes: self.bytes }
    }

    fn marks(&self) -> u64 {
        self.marks
    }

    fn for_each(&self, f: &mut dyn FnMut(&Queued)) {
        self.l.iter().chain(self.c.iter()).for_each(|e| f(&e.q))
    }

    fn update_interval(&self) -> Option<Time> {
        Some(self.cfg.tupdate)
    }

    /// calculate_probability: the PI update of p'.
    fn on_timer(&mut self, now: Time) {
        self.qdelay_c = self.c.front().map_or(0, |e| e.q.sojourn(now));
        self.qdelay_l = self.l.front().map_or(0, |e| e.q.sojourn(now));
        let qdelay = self.qdelay_c.max(self.qdelay_l);
        let delta = self.cfg.alpha * (to_secs(qdelay) - to_secs(self.cfg.target))
            + self.cfg.beta * (to_secs(qdelay) - to_secs(self.last_qdelay));
        self.last_qdelay = qdelay;
        self.p = (self.p + delta).clamp(0.0, 1.0);
        if !self.cfg.drop_on_overload {
            // Keep p_CL <= 1: the L queue marks, never drops.
            self.p = self.p.min(1.0 / self.k);
        }
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("dualpi2_p_prime", self.p));
        out.push(("dualpi2_p_c", self.p_c()));
        out.push(("dualpi2_p_cl", self.p_cl()));
        out.push(("dualpi2_l_sojourn_s", to_secs(self.qdelay_l)));
        out.push(("dualpi2_c_sojourn_s", to_secs(self.qdelay_c)));
        out.push(("dualpi2_l_packets", self.l.len() as f64));
        out.push(("dualpi2_c_packets", self.c.len() as f64));
    }
}

#[cfg(test)]
mod tests;
