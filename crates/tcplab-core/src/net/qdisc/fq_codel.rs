//! FQ-CoDel (Flow Queue CoDel): packets are hashed by flow into `flows`
//! queues, each under its own CoDel (`codel.rs`), served by deficit round
//! robin with a byte `quantum`, queues that have just become active (new
//! flows) ahead of the backlogged ones (old flows).
//!
//! Sources:
//! - RFC 8290 (FQ-CoDel): section 4.1 (enqueue, classification, overflow
//!   drop from the largest queue), 4.2 (the new and old lists, DRR), and
//!   its parameter defaults (interval 100 ms, target 5 ms, limit 10240
//!   packets, quantum 1514 bytes, 1024 flows, ECN on).
//! - Linux `net/sched/sch_fq_codel.c`: `fq_codel_init` (defaults,
//!   `memory_limit = 32 << 20`, `drop_batch_size = 64`, `cparams.ecn =
//!   true`, `quantum = cparams.mtu = psched_mtu(dev)`), `fq_codel_hash`
//!   (`reciprocal_scale(hash, flows_cnt)`), `fq_codel_enqueue`,
//!   `fq_codel_drop`, `fq_codel_dequeue`, `dequeue_func`; `fq_codel_change`
//!   (quantum at least 256, flows 1..=65536); `include/linux/jhash.h`
//!   (`jhash_1word`).
//!
//! The rules, as Linux has them:
//! - Enqueue: the packet joins its flow's queue (tail); a flow on no list
//!   goes to the tail of new_flows with `deficit = quantum`. Then, if the
//!   qdisc holds more than `limit` packets or more than `memory_limit`
//!   bytes, `fq_codel_drop` takes the flow with the largest byte backlog
//!   (the first such index on ties) and drops from its head until
//!   `drop_batch_size` packets are gone or at least half its backlog (in
//!   bytes) is, at least one packet: the fattest flow pays, not (unless it
//!   is the fattest) the arriving packet's.
//! - Dequeue: the head of new_flows, else of old_flows; a flow whose deficit
//!   is <= 0 gets `quantum` more and moves to the tail of old_flows (so a
//!   new flow that used its quantum becomes old); otherwise CoDel dequeues
//!   from it (`codel_dequeue`, its own vars; the MTU floor compares the
//!   whole qdisc's backlog, as Linux passes `sch->qstats.backlog`), and the
//!   packet's size is taken from the deficit. A flow whose CoDel returns
//!   nothing (empty, or emptied by drops) leaves its list; a new flow goes
//!   to the tail of old_flows instead if old_flows is non-empty (the
//!   anti-starvation rule: a flow that keeps re-entering as new cannot lock
//!   out the old ones).
//! - Hashing: Linux hashes the 5-tuple (`skb_get_hash`, with a per-boot
//!   random seed); here `jhash_1word(flow_key, salt)` with a 32-bit salt
//!   drawn from the discipline's random stream at build (a per-run
//!   perturbation, as the older `jhash_3words(.., q->perturbation)`), then
//!   `reciprocal_scale(hash, flows) = (hash * flows) >> 32`. Distinct flows
//!   can share a queue, as in Linux, with probability about 1/flows a pair.
//!
//! Parameters (`queue.params`, times in seconds), defaults from Linux:
//! - `target` 0.005, `interval` 0.1, `ce_threshold` off, `mtu` 1514,
//!   `control_law` newton: as `codel` (see `codel.rs`);
//! - `ecn` = true (Linux `fq_codel_init`; RFC 8290 parameter defaults);
//! - `flows` = 1024 (RFC 8290 parameter defaults; Linux `flows_cnt`);
//! - `quantum` = 1514 bytes (RFC 8290 parameter defaults; Linux `psched_mtu(dev)`), at
//!   least 256 (Linux clamps; here a smaller value is refused);
//! - `drop_batch_size` = 64 (Linux);
//! - `memory_limit` = 33554432 bytes (32 MiB, Linux `32 << 20`).
//!
//! Limits: `queue.limit_packets` (default 10240, Linux `sch->limit =
//! 10*1024`, RFC 8290 parameter defaults) and `queue.limit_bytes` (default none), both
//! enforced by the fattest-flow drop, the byte limit with `memory_limit`.
//!
//! Deviations: the memory accounting counts packet bytes, not Linux's
//! `skb->truesize` (buffer overhead included, typically about twice a
//! 1500-byte packet's size); the flow key is the simulator's exact flow
//! identity (`Queued::flow_key`), hashed with jhash rather than Linux's
//! flow dissector hash; no external classifiers (`tc filter`) or
//! `skb->priority` steering; times as in `codel.rs`.

use std::collections::VecDeque;

use rand::RngCore;

use super::codel::{codel_dequeue, CodelParams, CodelQueue, CodelStats, CodelVars};
use super::{Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::Time;

/// Linux `fq_codel_init`: `sch->limit = 10*1024` (RFC 8290 parameter defaults).
pub const DEFAULT_LIMIT: u64 = 10 * 1024;
/// Linux `fq_codel_init`: `memory_limit = 32 << 20`.
pub const DEFAULT_MEMORY_LIMIT: u64 = 32 << 20;
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_QUANTUM: u64 = 1514;
pub const DEFAULT_DROP_BATCH: u32 = 64;

pub fn info() -> DisciplineInfo {
    let mut params = CodelParams::infos(true);
    params.extend([
        ParamInfo { name: "flows", default: "1024", description: "number of flow queues packets are hashed into (1..65536)", source: "RFC 8290 parameter defaults; Linux fq_codel_init flows_cnt" },
        ParamInfo { name: "quantum", default: "1514", description: "bytes a queue may send per round-robin turn (DRR quantum, >= 256)", source: "RFC 8290 parameter defaults; Linux fq_codel_init quantum = psched_mtu(dev)" },
        ParamInfo { name: "drop_batch_size", default: "64", description: "on overflow, most packets dropped from the fattest flow at once (also stops at half its bytes)", source: "Linux fq_codel_init, fq_codel_drop" },
        ParamInfo { name: "memory_limit", default: "33554432", description: "bytes queued beyond which an arrival triggers the fattest-flow drop (Linux counts skb truesize; here packet bytes)", source: "Linux fq_codel_init (32 << 20)" },
    ]);
    DisciplineInfo {
        name: "fq_codel",
        aliases: &["fq-codel"],
        description: "FQ-CoDel: flows hashed into queues served by deficit round robin, new flows first, CoDel on each queue, overflow drops from the fattest flow; queue.limit_packets default 10240 (Linux), queue.limit_bytes default none",
        params,
        source: "RFC 8290; Linux net/sched/sch_fq_codel.c",
    }
}

pub fn build(p: &Params, link: LinkInfo, rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    Ok(Box::new(FqCodel::from_params(p, link, rng)?))
}

impl FqCodel {
    /// Builds from `queue.params`, drawing the hash salt from `rng`.
    pub fn from_params(p: &Params, link: LinkInfo, mut rng: Stream) -> Result<Self, SpecError> {
        let codel = CodelParams::from_params(p, true)?;
        let flows =
            p.u64("flows", DEFAULT_FLOWS as u64, |x| (1..=65536).contains(&x), "an integer in 1..=65536")? as u32;
        let quantum = p.u64(
            "quantum",
            DEFAULT_QUANTUM,
            |x| (256..=1 << 31).contains(&x),
            "a number of bytes >= 256 (Linux's minimum)",
        )?;
        let drop_batch =
            p.u64("drop_batch_size", DEFAULT_DROP_BATCH as u64, |x| (1..=1 << 31).contains(&x), "an integer >= 1")?
                as u32;
        let memory_limit = p.u64(
            "memory_limit",
            DEFAULT_MEMORY_LIMIT,
            |x| (1..=1 << 31).contains(&x),
            "a number of bytes in 1..=2^31 (Linux's maximum)",
        )?;
        let salt = rng.next_u32();
        let limit_packets = link.limit_packets.unwrap_or(DEFAULT_LIMIT);
        let limit_bytes = link.limit_bytes.unwrap_or(u64::MAX);
        Ok(FqCodel::new(codel, FqParams { flows, quantum, drop_batch, memory_limit, limit_packets, limit_bytes }, salt))
    }
}

/// FQ-CoDel's own parameters.
#[derive(Debug, Clone, Copy)]
pub struct FqParams {
    pub flows: u32,
    pub quantum: u64,
    pub drop_batch: u32,
    pub memory_limit: u64,
    pub limit_packets: u64,
    pub limit_bytes: u64,
}

impl Default for FqParams {
    fn default() -> Self {
        FqParams {
            flows: DEFAULT_FLOWS,
            quantum: DEFAULT_QUANTUM,
            drop_batch: DEFAULT_DROP_BATCH,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            limit_packets: DEFAULT_LIMIT,
            limit_bytes: u64::MAX,
        }
    }
}

/// Which round-robin list a flow is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue (Linux `struct fq_codel_flow` and its `backlogs[]` entry).
#[derive(Debug)]
struct Flow {
    q: VecDeque<Queued>,
    /// Bytes queued.
    backlog: u64,
    deficit: i64,
    cvars: CodelVars,
    list: List,
}

/// Bob Jenkins' lookup3 final mix as Linux `jhash_1word(a, initval)`
/// (`include/linux/jhash.h`: `__jhash_nwords(a, 0, 0, initval +
/// JHASH_INITVAL + (1 << 2))`).
pub fn jhash_1word(a: u32, initval: u32) -> u32 {
    let init = initval.wrapping_add(0xdead_beef).wrapping_add(1 << 2);
    let (mut a, mut b, mut c) = (a.wrapping_add(init), init, init);
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

#[derive(Debug)]
pub struct FqCodel {
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    codel: CodelParams,
    fq: FqParams,
    stats: CodelStats,
    salt: u32,
    /// Packets and bytes queued over all flows (Linux `sch->q.qlen`,
    /// `sch->qstats.backlog`; the bytes stand for `memory_usage` too).
    qlen: u64,
    bytes: u64,
    /// Packets dropped by `fq_codel_drop` (Linux `drop_overlimit`).
    drop_overlimit: u64,
    /// Flows that entered new_flows (Linux `new_flow_count`).
    new_flow_count: u64,
}

/// One flow's queue as CoDel sees it: popping updates the flow's and the
/// qdisc's counts (Linux `dequeue_func`); the MTU floor reads the qdisc's.
struct FlowQueue<'a> {
    q: &'a mut VecDeque<Queued>,
    flow_backlog: &'a mut u64,
    qlen: &'a mut u64,
    bytes: &'a mut u64,
}

impl CodelQueue for FlowQueue<'_> {
    fn pop(&mut self) -> Option<Queued> {
        let p = self.q.pop_front()?;
        *self.flow_backlog -= p.size();
        *self.qlen -= 1;
        *self.bytes -= p.size();
        Some(p)
    }

    fn backlog_bytes(&self) -> u64 {
        *self.bytes
    }
}

impl FqCodel {
    pub fn new(codel: CodelParams, fq: FqParams, salt: u32) -> Self {
        let flows = (0..fq.flows)
            .map(|_| Flow { q: VecDeque::new(), backlog: 0, deficit: 0, cvars: CodelVars::default(), list: List::None })
            .collect();
        FqCodel {
            flows,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            codel,
            fq,
            stats: CodelStats::default(),
            salt,
            qlen: 0,
            bytes: 0,
            drop_overlimit: 0,
            new_flow_count: 0,
        }
    }

    /// The queue a flow key hashes to (Linux `fq_codel_hash`).
    pub fn bucket(&self, key: u32) -> usize {
        ((jhash_1word(key, self.salt) as u64 * self.fq.flows as u64) >> 32) as usize
    }

    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }

    /// Linux `fq_codel_drop`: drops from the head of the flow with the
    /// largest byte backlog, up to `drop_batch` packets or until half its
    /// backlog is gone (at least one packet).
    fn drop_fattest(&mut self, drops: &mut Vec<Dropped>) {
        let (mut idx, mut max) = (0, 0);
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max {
                max = f.backlog;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let flow = &mut self.flows[idx];
        let (mut len, mut n) = (0, 0);
        while let Some(p) = flow.q.pop_front() {
            len += p.size();
            n += 1;
            drops.push(Dropped { q: p, reason: DropReason::Overflow });
            if n >= self.fq.drop_batch || len >= threshold {
                break;
            }
        }
        flow.backlog -= len;
        self.bytes -= len;
        self.qlen -= n as u64;
        self.drop_overlimit += n as u64;
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, now: Time, mut q: Queued, drops: &mut Vec<Dropped>) {
        let idx = self.bucket(q.flow_key());
        q.enqueued = now; // codel_set_enqueue_time
        let size = q.size();
        let flow = &mut self.flows[idx];
        flow.q.push_back(q);
        flow.backlog += size;
        self.bytes += size;
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = self.fq.quantum as i64;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        self.qlen += 1;
        let memory_limited = self.bytes > self.fq.memory_limit || self.bytes > self.fq.limit_bytes;
        if self.qlen <= self.fq.limit_packets && !memory_limited {
            return;
        }
        self.drop_fattest(drops);
    }

    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Queued> {
        loop {
            let (from_new, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.fq.quantum as i64;
                flow.list = List::Old;
                if from_new {
                    self.new_flows.pop_front()
                } else {
                    self.old_flows.pop_front()
                };
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut fq = FlowQueue {
                q: &mut flow.q,
                flow_backlog: &mut flow.backlog,
                qlen: &mut self.qlen,
                bytes: &mut self.bytes,
            };
            match codel_dequeue(&mut flow.cvars, &self.codel, &mut self.stats, now, &mut fq, drops) {
                Some(p) => {
                    flow.deficit -= p.size() as i64;
                    return Some(p);
                }
                None => {
                    // Force a pass through old_flows to prevent starvation.
                    if from_new {
                        self.new_flows.pop_front()
                    } else {
                        self.old_flows.pop_front()
                    };
                    if from_new && !self.old_flows.is_empty() {
                        flow.list = List::Old;
                        self.old_flows.push_back(idx as u32);
                    } else {
                        flow.list = List::None;
                    }
                }
            }
        }
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.qlen, bytes: self.bytes }
    }

    fn marks(&self) -> u64 {
        self.stats.ecn_mark + self.stats.ce_mark
    }

    fn for_each(&self, f: &mut dyn FnMut(&Queued)) {
        self.flows.iter().flat_map(|fl| fl.q.iter()).for_each(f)
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        let listed = || self.new_flows.iter().chain(self.old_flows.iter()).map(|&i| &self.flows[i as usize]);
        out.push(("fq_new_flows", self.new_flows.len() as f64));
        out.push(("fq_old_flows", self.old_flows.len() as f64));
        out.push(("fq_active_flows", listed().filter(|f| !f.q.is_empty()).count() as f64));
        out.push(("codel_dropping_flows", listed().filter(|f| f.cvars.dropping).count() as f64));
    }
}

#[cfg(test)]
mod tests;
