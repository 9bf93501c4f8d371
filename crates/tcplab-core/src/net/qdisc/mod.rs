//! Queue disciplines: what a link's queue does with a packet when it comes
//! (enqueue) and when the transmitter asks for the next one (dequeue).
//!
//! A link with a discipline is a [`crate::net::QdiscLink`]: the discipline,
//! a transmitter of fixed rate (one service-completion event per packet)
//! and a delay line (one event, its head's arrival), the split of htsim and
//! of Linux (qdisc, NIC, wire). A discipline decides, per packet, pass,
//! mark (set CE on an ECN-capable packet, RFC 3168 section 5) or drop, at
//! enqueue (RED, PIE, overflow), at dequeue (CoDel, DualPI2's L queue) or
//! both. Drop-tail links without a `discipline` keep the fast FIFO of
//! [`crate::net::Link`], which never needs a dequeue decision.
//!
//! One file per discipline, each with its source at the top:
//! - `droptail.rs`: FIFO with packet and byte limits (the reference, and
//!   the way to get sojourn statistics on a drop-tail queue);
//! - `red.rs`: RED (Floyd & Jacobson 1993), gentle RED, Adaptive RED
//!   (Floyd, Gummadi, Shenker 2001);
//! - `codel.rs`: CoDel (RFC 8289);
//! - `fq_codel.rs`: FQ-CoDel (RFC 8290);
//! - `pie.rs`: PIE (RFC 8033);
//! - `dualpi2.rs`: DualPI2 (RFC 9332).
//!
//! The registry ([`build`], [`catalog`]) is one line per discipline, as the
//! congestion controls' is.

use crate::cc::Params;
use crate::error::SpecError;
use crate::net::packet::{Ecn, Packet};
use crate::sim::rng::Stream;
use crate::sim::time::Time;
use crate::spec::QueueSpec;

pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod red;

/// A packet held by a discipline.
#[derive(Debug, Clone, Copy)]
pub struct Queued {
    pub pkt: Packet,
    /// Where the packet goes after this link (the world's route): the
    /// discipline carries it and never reads it.
    pub route: u32,
    /// When the packet entered the queue: its sojourn time at dequeue is
    /// `now - enqueued` (the timestamp CoDel, PIE and DualPI2 read).
    pub enqueued: Time,
}

impl Queued {
    /// Bytes on the wire.
    #[inline]
    pub fn size(&self) -> u64 {
        self.pkt.size as u64
    }

    /// The packet's flow on this link, for flow queueing: its position in
    /// the run's path array, the same for every packet of one flow and
    /// direction on a given link, and different between flows (the
    /// simulator's exact 5-tuple).
    #[inline]
    pub fn flow_key(&self) -> u32 {
        self.pkt.pos
    }

    /// Marks the packet CE instead of dropping it, if it is ECN-capable
    /// (RFC 3168 section 5: ECT(0), ECT(1) or already CE); returns whether
    /// it was. A packet that is not ECN-capable must be dropped instead.
    #[inline]
    pub fn mark(&mut self) -> bool {
        if self.pkt.ecn().capable() {
            self.pkt.set_ecn(Ecn::Ce);
            true
        } else {
            false
        }
    }

    /// Sojourn time so far, at `now`.
    #[inline]
    pub fn sojourn(&self, now: Time) -> Time {
        now - self.enqueued
    }
}

/// Why a discipline dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue's packet or byte limit (tail drop, or FQ-CoDel's drop from
    /// the fattest flow).
    Overflow,
    /// The active queue management decided it (RED, CoDel, PIE, DualPI2).
    Aqm,
}

/// A packet a discipline dropped.
#[derive(Debug, Clone, Copy)]
pub struct Dropped {
    pub q: Queued,
    pub reason: DropReason,
}

/// The packets and bytes a discipline holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u64,
    pub bytes: u64,
}

/// What every discipline knows of its link when it is built.
#[derive(Debug, Clone, Copy)]
pub struct LinkInfo {
    /// Transmitter rate (bit/s).
    pub rate_bps: f64,
    /// The link's packet and byte limits (`queue.limit_packets`,
    /// `queue.limit_bytes`; `None`: the discipline's own default).
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
}

/// A queue discipline. Times are picoseconds ([`Time`]).
pub trait Qdisc: std::fmt::Debug + Send {
    /// Offers `q` at `now`. The discipline keeps it (possibly marked CE),
    /// or pushes it onto `drops`; it may also drop packets it held (FQ-CoDel
    /// drops from its fattest flow on overflow).
    fn enqueue(&mut self, now: Time, q: Queued, drops: &mut Vec<Dropped>);

    /// The next packet to transmit at `now`, if any; packets dropped while
    /// choosing it (CoDel's dequeue drops) go onto `drops`.
    fn dequeue(&mut self, now: Time, drops: &mut Vec<Dropped>) -> Option<Queued>;

    /// What the discipline holds now.
    fn backlog(&self) -> Backlog;

    /// Packets marked CE so far.
    fn marks(&self) -> u64;

    /// Calls `f` on every packet the discipline holds (any order): the
    /// end-of-run accounting of packets still in the network.
    fn for_each(&self, f: &mut dyn FnMut(&Queued));

    /// Period of the discipline's own timer, if it has one (PIE's and
    /// DualPI2's probability update); [`Qdisc::on_timer`] then runs at
    /// every multiple of it from time 0 (a Linux qdisc's timer starts when
    /// the qdisc is created; its first period may differ: see each file).
    fn update_interval(&self) -> Option<Time> {
        None
    }

    /// The periodic update at `now`.
    fn on_timer(&mut self, _now: Time) {}

    /// Internal variables for the time series, as (name, value) pairs
    /// (RED's average queue, PIE's drop probability, DualPI2's p', CoDel's
    /// drop state); names are stable, units in the name.
    fn trace_vars(&self, _out: &mut Vec<(&'static str, f64)>) {}
}

/// A documented parameter of a discipline (as the algorithms'
/// [`crate::cc::ParamInfo`], its default written as text).
#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub description: &'static str,
    pub source: &'static str,
}

/// A discipline as listed by `tcplab disciplines`.
#[derive(Debug, Clone)]
pub struct DisciplineInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub params: Vec<ParamInfo>,
    /// Its source (RFC or paper).
    pub source: &'static str,
}

/// Builds a discipline from the parameters of `links[i].queue.params`;
/// `rng` is the link's own random stream for the discipline (RED's and
/// PIE's coin, FQ-CoDel's hash salt).
pub type BuildFn = fn(&Params, LinkInfo, Stream) -> Result<Box<dyn Qdisc>, SpecError>;

/// One registry line: (description, constructor).
type Entry = (fn() -> DisciplineInfo, BuildFn);

/// Every discipline's allowed parameter names come from its `info()`.
const DISCIPLINES: &[Entry] = &[
    (droptail::info, droptail::build),
    (red::info, red::build),
    (codel::info, codel::build),
    (fq_codel::info, fq_codel::build),
    (pie::info, pie::build),
    (dualpi2::info, dualpi2::build),
];

/// Every discipline the core implements.
pub fn catalog() -> Vec<DisciplineInfo> {
    DISCIPLINES.iter().map(|(info, _)| info()).collect()
}

/// The registered name of discipline `name` (any case, or an alias).
pub fn canonical_name(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    catalog().into_iter().find(|i| i.name == name || i.aliases.contains(&name.as_str())).map(|i| i.name)
}

/// Builds the discipline of `spec` (which has one); `field` names the
/// link's queue (`links[3].queue`) in errors.
pub fn build(spec: &QueueSpec, rate_bps: f64, rng: Stream, field: &str) -> Result<Box<dyn Qdisc>, SpecError> {
    let name = spec.discipline.as_deref().unwrap_or("droptail").to_ascii_lowercase();
    let link = LinkInfo { rate_bps, limit_packets: spec.limit_packets, limit_bytes: spec.limit_bytes };
    for (info, build) in DISCIPLINES {
        let i = info();
        if i.name == name || i.aliases.contains(&name.as_str()) {
            let names: Vec<&'static str> = i.params.iter().map(|p| p.name).collect();
            let p = Params::new(&spec.params, field, &names)?;
            return build(&p, link, rng);
        }
    }
    let known: Vec<&str> =
        catalog().iter().flat_map(|i| std::iter::once(i.name).chain(i.aliases.iter().copied())).collect();
    Err(SpecError::new(
        format!("{field}.discipline"),
        format!("unknown discipline {:?}; known: {}", name, known.join(", ")),
    ))
}

/// Seconds to picoseconds, for parameters given in seconds.
pub fn secs(s: f64) -> Time {
    crate::sim::time::from_secs(s)
}

#[cfg(test)]
pub mod testing {
    //! Helpers for the disciplines' rule tests.
    use super::*;
    use crate::net::packet::Packet;

    /// A data packet of `size` bytes of flow `flow` (its `pos`), with ECN
    /// codepoint `ecn`, entering at `t`.
    pub fn q(flow: u32, size: u32, ecn: Ecn, t: Time) -> Queued {
        let mut p = Packet::data(0, size, false);
        p.pos = flow;
        p.set_ecn(ecn);
        Queued { pkt: p, route: 0, enqueued: t }
    }

    pub const MS: Time = 1_000_000_000;
}
