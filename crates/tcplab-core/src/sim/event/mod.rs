//! The single event queue of a run, and the events it orders.
//!
//! The contract both queues keep: events come out in (time, insertion
//! sequence) order, so two events at the same picosecond run in the order
//! they were scheduled and a run is a pure function of its description and
//! seed. Nothing is scheduled before the last event handed out. The queue
//! holds O(links + timers) entries, never one per packet in flight: a link
//! schedules only the arrival of its head packet (at most one pending per
//! link), and timers keep their deadline in the flow (a stale entry is
//! skipped when popped rather than searched for and removed).
//!
//! Two implementations behind one [`EventQueue`], chosen by the number of
//! links when the queue is built; both give exactly that order (the tests
//! run both, and the radix heap with lanes, against a reference heap, and
//! the fingerprint example's results are bit for bit those of the tree
//! alone):
//!
//! - [`tree`]: up to [`TREE_MAX_LINKS`] links, a tournament tree over the
//!   links' pending arrivals plus a binary heap for the other events. Its
//!   cost per event grows with log2(links).
//! - [`radix`]: above, a monotone radix heap whose cost does not grow with
//!   the number of links, with lanes for the two busiest links.
//!
//! Why two, and why the threshold where it is: docs/performance.md,
//! "Decisions" (the event queue). This file holds what both share: the
//! kinds of events and their packed 64-bit word.

use super::time::Time;

/// What happens when an event fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The head packet of link `0` reaches the link's far end.
    LinkArrival(u32),
    /// Retransmission timer check for flow `0`.
    Rto(u32),
    /// Delayed-ACK timer check for flow `0`'s receiver.
    DelayedAck(u32),
    /// Pacing release for flow `0`'s sender.
    Pace(u32),
    /// The connection of flow `0` opens (bulk data starts).
    FlowStart(u32),
    /// File `1` of flow `0` is handed to TCP.
    FileStart(u32, u32),
    /// Sample all time series.
    Sample,
    /// Start of the measurement window.
    MeasureStart,
    /// The transmitter of link `0` (one with a queue discipline) finishes
    /// sending a packet.
    LinkService(u32),
    /// The periodic update of link `0`'s queue discipline (PIE, DualPI2).
    QdiscTimer(u32),
    /// Flow `0`'s unresponsive source sends its next packet.
    SourceSend(u32),
    /// The head of link `0`'s delay line (a link with a queue discipline)
    /// reaches the far end.
    QdiscArrival(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: Time,
    pub kind: EventKind,
}

/// The largest number of links for which the queue is the tree; the radix
/// heap above (docs/performance.md, "Decisions", for the measurements).
pub const TREE_MAX_LINKS: usize = 1023;

/// Link indices in a radix heap event word (bits 3..32; the route of a
/// link arrival is above): runs are limited to 2^29 links.
pub const LINK_MASK: u64 = (1 << 29) - 1;

mod radix;
mod tree;

pub use radix::LANES;
pub use tree::EventQueue;

impl EventQueue {
    #[inline]
    fn pack(&mut self, kind: EventKind) -> u64 {
        let (tag, payload) = match kind {
            EventKind::LinkArrival(l) => (0, l as u64),
            EventKind::Rto(f) => (1, f as u64),
            EventKind::DelayedAck(f) => (2, f as u64),
            EventKind::Pace(f) => (3, f as u64),
            EventKind::FlowStart(f) => (4, f as u64),
            EventKind::FileStart(f, k) => {
                self.files.push((f, k));
                (5, (self.files.len() - 1) as u64)
            }
            // Tags 6 and 7 carry several kinds each, told apart by the
            // payload's low bits (the tag has three bits, kinds are twelve).
            EventKind::Sample => (6, 0),
            EventKind::MeasureStart => (6, 1),
            EventKind::LinkService(l) => (7, (l as u64) << 2),
            EventKind::QdiscTimer(l) => (7, (l as u64) << 2 | 1),
            EventKind::SourceSend(f) => (7, (f as u64) << 2 | 2),
            EventKind::QdiscArrival(l) => (7, (l as u64) << 2 | 3),
        };
        payload << 3 | tag
    }

    /// The kind of a packed word (from the heap, or the radix heap's
    /// [`Self::take_radix_word_until`]).
    #[inline]
    pub(crate) fn unpack(&self, k: u64) -> EventKind {
        let p = k >> 3;
        match k & 7 {
            0 => EventKind::LinkArrival((p & LINK_MASK) as u32),
            1 => EventKind::Rto(p as u32),
            2 => EventKind::DelayedAck(p as u32),
            3 => EventKind::Pace(p as u32),
            4 => EventKind::FlowStart(p as u32),
            5 => {
                let (f, i) = self.files[p as usize];
                EventKind::FileStart(f, i)
            }
            6 if p == 0 => EventKind::Sample,
            6 => EventKind::MeasureStart,
            _ => match p & 3 {
                0 => EventKind::LinkService((p >> 2) as u32),
                1 => EventKind::QdiscTimer((p >> 2) as u32),
                2 => EventKind::SourceSend((p >> 2) as u32),
                _ => EventKind::QdiscArrival((p >> 2) as u32),
            },
        }
    }
}

#[cfg(test)]
mod tests;
