//! Drop-tail: a FIFO that drops an arriving packet when it would exceed the
//! packet or byte limit. The same rule as the fast [`crate::net::Link`]
//! (the packet being transmitted is not counted, as in a Linux qdisc), as a
//! discipline: `queue = { discipline = "droptail" }` gives a drop-tail queue
//! sojourn-time statistics and time series like the AQMs'.
//!
//! Source: Linux `net/sched/sch_fifo.c` (`pfifo`, `bfifo`).

use std::collections::VecDeque;

use super::{Backlog, DisciplineInfo, DropReason, Dropped, LinkInfo, ParamInfo, Qdisc, Queued};
use crate::cc::Params;
use crate::error::SpecError;
use crate::sim::rng::Stream;
use crate::sim::time::Time;

pub fn info() -> DisciplineInfo {
    DisciplineInfo {
        name: "droptail",
        aliases: &["fifo", "pfifo", "bfifo"],
        description: "FIFO dropping arrivals beyond queue.limit_packets / queue.limit_bytes (unlimited if unset)",
        params: Vec::<ParamInfo>::new(),
        source: "Linux sch_fifo.c",
    }
}

pub fn build(_p: &Params, link: LinkInfo, _rng: Stream) -> Result<Box<dyn Qdisc>, SpecError> {
    Ok(Box::new(DropTail::new(link.limit_packets.unwrap_or(u64::MAX), link.limit_bytes.unwrap_or(u64::MAX))))
}

#[derive(Debug)]
pub struct DropTail {
    q: VecDeque<Queued>,
    bytes: u64,
    limit_packets: u64,
    limit_bytes: u64,
}

impl DropTail {
    pub fn new(limit_packets: u64, limit_bytes: u64) -> Self {
        DropTail { q: VecDeque::new(), bytes: 0, limit_packets, limit_bytes }
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, _now: Time, q: Queued, drops: &mut Vec<Dropped>) {
        if self.q.len() as u64 + 1 > self.limit_packets || self.bytes + q.size() > self.limit_bytes {
            drops.push(Dropped { q, reason: DropReason::Overflow });
        } else {
            self.bytes += q.size();
            self.q.push_back(q);
        }
    }

    fn dequeue(&mut self, _now: Time, _drops: &mut Vec<Dropped>) -> Option<Queued> {
        let q = self.q.pop_front()?;
        self.bytes -= q.size();
        Some(q)
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.q.len() as u64, bytes: self.bytes }
    }

    fn marks(&self) -> u64 {
        0
    }

    fn for_each(&self, f: &mut dyn FnMut(&Queued)) {
        self.q.iter().for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{q, MS};
    use super::*;
    use crate::net::packet::Ecn;

    #[test]
    fn drops_arrivals_beyond_the_packet_limit_and_keeps_order() {
        let mut d = DropTail::new(2, u64::MAX);
        let mut drops = Vec::new();
        for f in 0..3 {
            d.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
        }
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].q.flow_key(), 2);
        assert_eq!(d.backlog(), Backlog { packets: 2, bytes: 2000 });
        assert_eq!(d.dequeue(MS, &mut drops).map(|x| x.flow_key()), Some(0));
        assert_eq!(d.dequeue(MS, &mut drops).map(|x| x.flow_key()), Some(1));
        assert!(d.dequeue(MS, &mut drops).is_none());
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut d = DropTail::new(u64::MAX, 2500);
        let mut drops = Vec::new();
        for f in 0..3 {
            d.enqueue(0, q(f, 1000, Ecn::NotEct, 0), &mut drops);
        }
        assert_eq!(drops.len(), 1);
        assert_eq!(d.backlog().bytes, 2000);
    }
}
