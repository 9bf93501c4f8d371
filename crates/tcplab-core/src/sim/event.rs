//! The single event queue of a run.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! picosecond run in the order they were scheduled, so a run is a pure
//! function of its description and seed. The queue holds O(links + timers)
//! entries, never one per packet in flight: a link schedules only the arrival
//! of its head packet, and timers keep their deadline in the flow (a stale
//! entry is skipped when popped rather than searched for and removed).

use super::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
}

#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub time: Time,
    pub seq: u64,
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest event.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event { time, seq, kind });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop();
        if e.is_some() {
            self.popped += 1;
        }
        e
    }

    /// Pops the earliest event if it is at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<Event> {
        match self.heap.peek_mut() {
            Some(top) if top.time <= limit => {
                self.popped += 1;
                Some(std::collections::binary_heap::PeekMut::pop(top))
            }
            _ => None,
        }
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, EventKind::Sample);
        q.schedule(5, EventKind::Rto(7));
        q.schedule(10, EventKind::Rto(1));
        q.schedule(10, EventKind::Rto(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::Rto(7)),
                (10, EventKind::Sample),
                (10, EventKind::Rto(1)),
                (10, EventKind::Rto(2))
            ]
        );
    }
}
