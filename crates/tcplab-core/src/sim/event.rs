//! The single event queue of a run.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! picosecond run in the order they were scheduled, so a run is a pure
//! function of its description and seed. The queue holds O(links + timers)
//! entries, never one per packet in flight: a link schedules only the arrival
//! of its head packet, and timers keep their deadline in the flow (a stale
//! entry is skipped when popped rather than searched for and removed).
//!
//! Implementation (the queue is on every event's path): a binary min-heap of
//! 24-byte entries (time, sequence, kind packed in a word).
//! [`EventQueue::take_until`] hands out the earliest event but leaves its
//! slot in place until the handler is done: the handler's first
//! [`EventQueue::schedule`] reuses the slot (one sift instead of a pop and
//! a push), which is most events, since handling a packet usually schedules
//! the next one. The order of events is exactly that of a plain heap: it is
//! a total order on (time, sequence).

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
}

#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub time: Time,
    pub seq: u64,
    pub kind: EventKind,
}

/// A heap entry: the kind packed as `payload << 3 | tag`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    kind: u64,
}

impl Entry {
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    /// (flow, file) of `FileStart` events, indexed by their packed payload.
    files: Vec<(u32, u32)>,
    next_seq: u64,
    popped: u64,
    /// The root was handed out by `take_until` and is dead: the next
    /// `schedule` overwrites it, or `finish` removes it.
    root_taken: bool,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

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
            EventKind::Sample => (6, 0),
            EventKind::MeasureStart => (7, 0),
        };
        payload << 3 | tag
    }

    #[inline]
    fn unpack(&self, k: u64) -> EventKind {
        let p = k >> 3;
        match k & 7 {
            0 => EventKind::LinkArrival(p as u32),
            1 => EventKind::Rto(p as u32),
            2 => EventKind::DelayedAck(p as u32),
            3 => EventKind::Pace(p as u32),
            4 => EventKind::FlowStart(p as u32),
            5 => {
                let (f, i) = self.files[p as usize];
                EventKind::FileStart(f, i)
            }
            6 => EventKind::Sample,
            _ => EventKind::MeasureStart,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { time, seq, kind: self.pack(kind) };
        if self.root_taken {
            self.root_taken = false;
            self.sift_down(0, e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    #[inline]
    fn key_at(&self, i: usize) -> u128 {
        debug_assert!(i < self.heap.len());
        // SAFETY: callers pass indices below the heap's length.
        unsafe { self.heap.get_unchecked(i) }.key()
    }

    #[inline]
    fn sift_up(&mut self, mut pos: usize, e: Entry) {
        let key = e.key();
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.heap[parent];
            if p.key() <= key {
                break;
            }
            self.heap[pos] = p;
            pos = parent;
        }
        self.heap[pos] = e;
    }

    /// Places `e` at `pos` (a hole) and moves it down to its place.
    #[inline]
    fn sift_down(&mut self, mut pos: usize, e: Entry) {
        let key = e.key();
        let n = self.heap.len();
        loop {
            let mut child = 2 * pos + 1;
            if child >= n {
                break;
            }
            let mut ck = self.key_at(child);
            if child + 1 < n {
                let k2 = self.key_at(child + 1);
                if k2 < ck {
                    child += 1;
                    ck = k2;
                }
            }
            if ck >= key {
                break;
            }
            self.heap[pos] = self.heap[child];
            pos = child;
        }
        self.heap[pos] = e;
    }

    /// Removes a taken root that no `schedule` reused.
    #[inline]
    fn drop_taken_root(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            let last = self.heap.pop().expect("a taken root");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    /// Pops the earliest event, if any.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.pop_until(Time::MAX)
    }

    /// Pops the earliest event if it is at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<Event> {
        let e = self.take_until(limit);
        self.drop_taken_root();
        e
    }

    /// Hands out the earliest event if it is at or before `limit`, leaving
    /// its slot for the handler's first `schedule` (see the module notes).
    /// Any earlier taken slot is released first.
    #[inline]
    pub fn take_until(&mut self, limit: Time) -> Option<Event> {
        self.drop_taken_root();
        let top = *self.heap.first()?;
        if top.time > limit {
            return None;
        }
        self.root_taken = true;
        self.popped += 1;
        Some(Event { time: top.time, seq: top.seq, kind: self.unpack(top.kind) })
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.drop_taken_root();
        self.heap.first().map(|e| e.time)
    }

    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len() - self.root_taken as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    #[test]
    fn kinds_round_trip() {
        let kinds = [
            EventKind::LinkArrival(u32::MAX),
            EventKind::Rto(3),
            EventKind::DelayedAck(4),
            EventKind::Pace(5),
            EventKind::FlowStart(6),
            EventKind::FileStart(u32::MAX, 9),
            EventKind::Sample,
            EventKind::MeasureStart,
        ];
        let mut q = EventQueue::new();
        for (i, k) in kinds.iter().enumerate() {
            q.schedule(i as Time, *k);
        }
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(got, kinds);
    }

    /// Taking an event and scheduling from its handler gives the order of a
    /// reference priority queue (BinaryHeap of (time, seq)) under a random
    /// mix of operations.
    #[test]
    fn take_and_schedule_match_a_reference_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut x: u64 = 0x1234_5678;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut q = EventQueue::new();
        let mut r: BinaryHeap<Reverse<(Time, u64, u32)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0;
        for i in 0..20_000u32 {
            let n = rnd(3);
            for _ in 0..n {
                let t = now + rnd(50);
                q.schedule(t, EventKind::LinkArrival(i));
                r.push(Reverse((t, seq, i)));
                seq += 1;
            }
            let limit = now + rnd(40);
            match q.take_until(limit) {
                Some(e) => {
                    let Reverse((t, s, k)) = r.pop().unwrap();
                    assert_eq!((e.time, e.seq, e.kind), (t, s, EventKind::LinkArrival(k)));
                    now = t;
                }
                None => assert!(r.peek().map_or(true, |Reverse((t, _, _))| *t > limit)),
            }
            assert_eq!(q.len(), r.len());
        }
    }
}
