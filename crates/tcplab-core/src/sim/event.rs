//! The single event queue of a run.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! picosecond run in the order they were scheduled, so a run is a pure
//! function of its description and seed. The queue holds O(links + timers)
//! entries, never one per packet in flight: a link schedules only the arrival
//! of its head packet, and timers keep their deadline in the flow (a stale
//! entry is skipped when popped rather than searched for and removed).
//!
//! Implementation (the queue is on every event's path). Nearly all events
//! are link arrivals, and a link has at most one pending (its head packet's),
//! so the queue is a k-way merge:
//!
//! - a tournament (winner) tree with one leaf per link holding the key
//!   (time, sequence) of its pending arrival, or none, plus leaf 0 for every
//!   other event;
//! - those other events (timers, starts, samples) in a binary min-heap of
//!   24-byte entries (kind packed in a word), whose root is leaf 0's key.
//!
//! Updating a leaf replays the matches on its path to the root: one
//! comparison per level against the sibling's winner, and none of the
//! element moves of a heap. [`EventQueue::take_until`] hands out the
//! earliest event but leaves it in place until the handler is done: the
//! handler's next arrival on the same link (or, for a heap event, its first
//! heap event) takes over the slot, so most events cost one replay.
//!
//! The order of events is that of any exact priority queue on (time,
//! sequence), a total order: the randomized test checks it against
//! `BinaryHeap`.

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

/// Order key: time in the high 64 bits, sequence in the low 64.
type Key = u128;
/// No pending event.
const NONE: Key = Key::MAX;

#[inline(always)]
fn key(time: Time, seq: u64) -> Key {
    ((time as Key) << 64) | seq as Key
}

/// One match of the tournament: if `s` (sibling winner, key `sk`) beats
/// `w` (key `wk`), it becomes the winner; returns whether it did. Without
/// a branch: which side wins is a coin toss for the branch predictor, and
/// LLVM turns a select of `u128`s into branches (masks and
/// `select_unpredictable` included), hence the conditional moves in
/// assembly on x86-64.
#[inline(always)]
fn play(s: u32, sk: Key, w: &mut u32, wk: &mut Key) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut wi, mut hi, mut lo) = (*w as u64, (*wk >> 64) as u64, *wk as u64);
        let lt: u8;
        // SAFETY: register-only arithmetic; no memory, no stack.
        unsafe {
            std::arch::asm!(
                "cmp {slo}, {lo}",
                "mov {t}, {shi}",
                "sbb {t}, {hi}",
                "cmovb {wi}, {si}",
                "cmovb {lo}, {slo}",
                "cmovb {hi}, {shi}",
                "setb {lt}",
                slo = in(reg) sk as u64,
                shi = in(reg) (sk >> 64) as u64,
                si = in(reg) s as u64,
                t = out(reg) _,
                lo = inout(reg) lo,
                hi = inout(reg) hi,
                wi = inout(reg) wi,
                lt = out(reg_byte) lt,
                options(pure, nomem, nostack),
            );
        }
        *w = wi as u32;
        *wk = ((hi as Key) << 64) | lo as Key;
        lt != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let lt = sk < *wk;
        if lt {
            *w = s;
            *wk = sk;
        }
        lt
    }
}

/// An entry of the heap of non-link events: the kind packed as `payload << 3 | tag`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    kind: u64,
}

impl Entry {
    #[inline(always)]
    fn key(&self) -> Key {
        key(self.time, self.seq)
    }
}

/// Binary min-heap of the events that are not link arrivals, with the same
/// take-and-reuse protocol as the queue.
#[derive(Debug, Default)]
struct Heap {
    v: Vec<Entry>,
    root_taken: bool,
}

impl Heap {
    #[inline]
    fn root_key(&self) -> Key {
        self.v.first().map_or(NONE, |e| e.key())
    }

    fn push(&mut self, e: Entry) {
        if self.root_taken {
            self.root_taken = false;
            self.sift_down(0, e);
        } else {
            self.v.push(e);
            self.sift_up(self.v.len() - 1, e);
        }
    }

    fn sift_up(&mut self, mut pos: usize, e: Entry) {
        let k = e.key();
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.v[parent];
            if p.key() <= k {
                break;
            }
            self.v[pos] = p;
            pos = parent;
        }
        self.v[pos] = e;
    }

    fn sift_down(&mut self, mut pos: usize, e: Entry) {
        let k = e.key();
        let n = self.v.len();
        loop {
            let mut child = 2 * pos + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.v[child + 1].key() < self.v[child].key() {
                child += 1;
            }
            if self.v[child].key() >= k {
                break;
            }
            self.v[pos] = self.v[child];
            pos = child;
        }
        self.v[pos] = e;
    }

    /// Removes a taken root that no push reused.
    fn drop_taken_root(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            let last = self.v.pop().expect("a taken root");
            if !self.v.is_empty() {
                self.sift_down(0, last);
            }
        }
    }
}

#[derive(Debug)]
pub struct EventQueue {
    /// Leaves (power of two): leaf 0 is the heap's root, leaf l + 1 link l.
    leaves: usize,
    /// Key of each leaf's pending event, or `NONE`.
    keys: Vec<Key>,
    /// Winner tree: `win[i]` is the leaf with the smallest key under node
    /// `i` (root 1, children 2i and 2i + 1, leaf j at `leaves + j`).
    win: Vec<u32>,
    /// Pending link arrivals.
    links_pending: usize,
    heap: Heap,
    /// (flow, file) of `FileStart` events, indexed by their packed payload.
    files: Vec<(u32, u32)>,
    /// Leaf handed out by `take_until` and not yet taken over.
    taken: Option<usize>,
    next_seq: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_links(0)
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A queue for links `0..n` (more are added as they are used).
    pub fn with_links(n: usize) -> Self {
        let leaves = (n + 1).next_power_of_two().max(2);
        let mut q = EventQueue {
            leaves,
            keys: vec![NONE; leaves],
            win: vec![0; 2 * leaves],
            links_pending: 0,
            heap: Heap::default(),
            files: Vec::new(),
            taken: None,
            next_seq: 0,
            popped: 0,
        };
        q.rebuild();
        q
    }

    fn rebuild(&mut self) {
        let p = self.leaves;
        for j in 0..p {
            self.win[p + j] = j as u32;
        }
        for i in (1..p).rev() {
            let (a, b) = (self.win[2 * i], self.win[2 * i + 1]);
            self.win[i] = if self.keys[b as usize] < self.keys[a as usize] { b } else { a };
        }
    }

    #[cold]
    fn grow(&mut self, leaf: usize) {
        self.leaves = (leaf + 1).next_power_of_two();
        self.keys.resize(self.leaves, NONE);
        self.win = vec![0; 2 * self.leaves];
        self.rebuild();
    }

    /// Replays the matches from `leaf` (whose key changed) to the root.
    /// `early`: stop where the leaf loses to the winner it lost to before
    /// (right when its key only decreased, e.g. from none).
    #[inline(always)]
    fn replay_from(&mut self, leaf: usize, early: bool) {
        let mut pos = self.leaves + leaf;
        let mut w = leaf as u32;
        // SAFETY: leaf < leaves, so every index below stays under 2 * leaves
        // (win) and every winner is a leaf index under leaves (keys).
        unsafe {
            let mut wk = *self.keys.get_unchecked(leaf);
            while pos > 1 {
                let s = *self.win.get_unchecked(pos ^ 1);
                let sk = *self.keys.get_unchecked(s as usize);
                let lt = play(s, sk, &mut w, &mut wk);
                pos >>= 1;
                if early && lt {
                    return;
                }
                *self.win.get_unchecked_mut(pos) = w;
            }
        }
    }

    /// Replay after any change of a leaf's key.
    #[inline]
    fn replay(&mut self, leaf: usize) {
        self.replay_from(leaf, false)
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

    /// Schedules the arrival of link `l`'s head packet at `time`. A link has
    /// at most one pending arrival.
    #[inline(always)]
    pub fn schedule_link(&mut self, time: Time, l: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let leaf = l as usize + 1;
        if leaf >= self.leaves {
            self.grow(leaf);
        }
        // SAFETY: leaf < leaves = keys.len() (grown above).
        let slot = unsafe { self.keys.get_unchecked_mut(leaf) };
        if self.taken == Some(leaf) {
            // The link's arrival being handled is replaced by its next one.
            self.taken = None;
            *slot = key(time, seq);
            self.replay(leaf);
        } else {
            assert!(*slot == NONE, "link {l} already has a pending arrival");
            *slot = key(time, seq);
            self.links_pending += 1;
            self.replay_from(leaf, true);
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, kind: EventKind) {
        if let EventKind::LinkArrival(l) = kind {
            return self.schedule_link(time, l);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { time, seq, kind: self.pack(kind) };
        if self.taken == Some(0) {
            // Takes over the slot of the heap event being handled.
            self.taken = None;
        }
        self.heap.push(e);
        self.keys[0] = self.heap.root_key();
        self.replay(0);
    }

    /// Releases the slot of the event handed out last, if nothing took it over.
    #[inline]
    fn finish_taken(&mut self) {
        match self.taken.take() {
            None => {}
            Some(0) => {
                self.heap.drop_taken_root();
                self.keys[0] = self.heap.root_key();
                self.replay(0);
            }
            Some(leaf) => {
                // SAFETY: a taken leaf came from the tree.
                unsafe { *self.keys.get_unchecked_mut(leaf) = NONE };
                self.links_pending -= 1;
                self.replay(leaf);
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
        self.finish_taken();
        e
    }

    /// Hands out the earliest event if it is at or before `limit`, leaving
    /// its slot for the handler to take over (see the module notes). The
    /// slot of the event handed out before is released first.
    #[inline(always)]
    pub fn take_until(&mut self, limit: Time) -> Option<Event> {
        self.finish_taken();
        // SAFETY: win has 2 * leaves >= 4 entries and holds leaf indices.
        let leaf = unsafe { *self.win.get_unchecked(1) } as usize;
        let k = unsafe { *self.keys.get_unchecked(leaf) };
        let time = (k >> 64) as Time;
        if k == NONE || time > limit {
            return None;
        }
        self.popped += 1;
        self.taken = Some(leaf);
        let kind = if leaf == 0 {
            self.heap.root_taken = true;
            self.unpack(self.heap.v[0].kind)
        } else {
            EventKind::LinkArrival(leaf as u32 - 1)
        };
        Some(Event { time, seq: k as u64, kind })
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.finish_taken();
        let k = self.keys[self.win[1] as usize];
        (k != NONE).then_some((k >> 64) as Time)
    }

    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Pending events (the one being handled excluded).
    pub fn len(&self) -> usize {
        self.links_pending + self.heap.v.len() - self.taken.is_some() as usize
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
        q.schedule(10, EventKind::LinkArrival(3));
        q.schedule(10, EventKind::Rto(2));
        q.schedule(10, EventKind::LinkArrival(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::Rto(7)),
                (10, EventKind::Sample),
                (10, EventKind::LinkArrival(3)),
                (10, EventKind::Rto(2)),
                (10, EventKind::LinkArrival(0)),
            ]
        );
    }

    #[test]
    fn kinds_round_trip() {
        let kinds = [
            EventKind::LinkArrival(70),
            EventKind::Rto(3),
            EventKind::DelayedAck(4),
            EventKind::Pace(5),
            EventKind::FlowStart(6),
            EventKind::FileStart(u32::MAX, 9),
            EventKind::Sample,
            EventKind::MeasureStart,
        ];
        let mut q = EventQueue::with_links(3);
        for (i, k) in kinds.iter().enumerate() {
            q.schedule(i as Time, *k);
        }
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(got, kinds);
    }

    /// Taking events and scheduling from their handlers (link arrivals, at
    /// most one pending per link, and timers) gives the order of a reference
    /// priority queue (BinaryHeap of (time, seq)).
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
        const LINKS: u32 = 37;
        let mut q = EventQueue::with_links(5); // grows as links are used
        let mut r: BinaryHeap<Reverse<(Time, u64, u32)>> = BinaryHeap::new();
        let mut busy = [false; LINKS as usize];
        let mut seq = 0u64;
        let mut now = 0;
        for _ in 0..50_000 {
            for _ in 0..rnd(3) {
                let t = now + rnd(50);
                let l = rnd(LINKS as u64 + 4) as u32;
                if l < LINKS {
                    if busy[l as usize] {
                        continue;
                    }
                    busy[l as usize] = true;
                    q.schedule(t, EventKind::LinkArrival(l));
                } else {
                    q.schedule(t, EventKind::Rto(l));
                }
                r.push(Reverse((t, seq, l)));
                seq += 1;
            }
            let limit = now + rnd(40);
            match q.take_until(limit) {
                Some(e) => {
                    let Reverse((t, s, k)) = r.pop().unwrap();
                    let want = if k < LINKS { EventKind::LinkArrival(k) } else { EventKind::Rto(k) };
                    assert_eq!((e.time, e.seq, e.kind), (t, s, want));
                    if k < LINKS {
                        busy[k as usize] = false;
                    }
                    now = t;
                }
                None => assert!(r.peek().is_none_or(|Reverse((t, _, _))| *t > limit)),
            }
            assert_eq!(q.len(), r.len());
        }
    }
}
