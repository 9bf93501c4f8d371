//! The tournament tree: the event queue of runs with up to
//! [`TREE_MAX_LINKS`] links.
//!
//! Nearly all events are link arrivals and a link has at most one pending
//! (its head packet's), so the queue is a k-way merge: a winner tree with
//! one leaf per link holding the key (time, sequence) of its pending
//! arrival, plus leaf 0 for the other events (timers, starts, samples),
//! kept in a binary min-heap of 24-byte entries (kind packed in a word)
//! whose root is leaf 0's key. Updating a leaf replays the matches on its
//! path to the root: one branch-free comparison per level against the
//! sibling's winner. [`EventQueue::take_until`] hands out the earliest
//! event but leaves it in place until the handler is done: the handler's
//! next arrival on the same link (or, for a heap event, its first heap
//! event) takes over the slot, so most events cost one replay of
//! log2(links) levels.
//!
//! Invariants:
//!
//! - Keys are unique: the sequence number grows with every schedule, so
//!   the order is (time, insertion order) with no tie left.
//! - `keys[l + 1]` is link `l`'s pending arrival or `NONE` (at most one per
//!   link, asserted); `keys[0]` is the heap's root key (`NONE` if empty).
//! - `win[i]` is the leaf with the smallest key under node `i`; every key
//!   change is followed by a replay from its leaf, which restores this.
//! - `taken` is the leaf handed out and not yet released: its key stays in
//!   place (and counts as pending) until a schedule takes the slot over or
//!   the next take releases it (`finish_taken`).
//! - With the radix heap (above `TREE_MAX_LINKS` links) the tree has no
//!   leaves and nothing pending, and every call is passed to [`Radix`].

use super::radix::{Radix, LANES};
use super::{Event, EventKind, LINK_MASK, TREE_MAX_LINKS};
use crate::sim::time::Time;

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
/// assembly on x86-64. What they are worth, measured against the portable
/// branch below on x86-64 (bench scenarios, `--quick` length, cachegrind
/// and wall time on a loaded 2-core machine): S3 (10 flows, 42 links)
/// 2.3 M mispredicted branches instead of 8.3 M and 0.37 s instead of
/// 0.45 s; S4 (200 flows) 6.3 M instead of 10.6 M, 0.45 s instead of 0.61 s.
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
    pub(super) files: Vec<(u32, u32)>,
    /// Leaf handed out by `take_until` and not yet taken over.
    taken: Option<usize>,
    next_seq: u64,
    popped: u64,
    /// The radix heap, above `TREE_MAX_LINKS` links. The tree then has no
    /// leaves and no pending event, so its own checks (a link beyond its
    /// leaves, nothing pending) lead to the radix heap, and the tree's path
    /// has no extra test (a dispatch on the kind of queue at every call
    /// cost more: docs/performance.md, "Decisions").
    pub(super) radix: Option<Box<Radix>>,
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
        if n > TREE_MAX_LINKS {
            let mut q = Self::with_links(0);
            q.leaves = 0;
            q.radix = Some(Box::new(Radix::new()));
            return q;
        }
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
            radix: None,
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

    /// Schedules the arrival of link `l`'s head packet at `time`. A link has
    /// at most one pending arrival.
    #[inline(always)]
    pub fn schedule_link(&mut self, time: Time, l: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let leaf = l as usize + 1;
        if leaf >= self.leaves && self.beyond_leaves(time, l) {
            return;
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

    /// [`EventQueue::schedule_link`] for a queue known, where the caller
    /// is compiled, to be the radix heap (`R`) or the tree (the event loop
    /// of each has its own copy of the handlers, so the radix heap's push
    /// is inlined into its loop without weighing on the tree's), with the
    /// route of the head packet (what comes after link `l` on its path, see
    /// `World`). The radix heap stores the route in the event's word beside
    /// the link, so the event loop knows where the packet goes as soon as
    /// the event is popped, before the packet itself is read; the tree has
    /// no room for it and ignores it.
    #[inline(always)]
    pub fn schedule_link_routed<const R: bool>(&mut self, time: Time, l: u32, route: u32) {
        if R {
            debug_assert!((l as u64) <= LINK_MASK);
            // The radix loop runs only when the queue has a radix heap: a
            // check the predictor always gets right.
            self.radix.as_deref_mut().expect("the radix loop with a radix heap").push_link(
                time,
                (route as u64) << 32 | (l as u64) << 3,
                l,
            );
        } else {
            self.schedule_link(time, l);
        }
    }

    /// [`EventQueue::schedule`] of a timer, start or sample event, as
    /// [`EventQueue::schedule_link_routed`] (link arrivals go through that,
    /// with their route).
    #[inline(always)]
    pub fn schedule_in<const R: bool>(&mut self, time: Time, kind: EventKind) {
        debug_assert!(
            !matches!(kind, EventKind::LinkArrival(_)),
            "a link arrival needs its route: schedule_link_routed"
        );
        if R {
            self.schedule_radix(time, kind);
        } else {
            self.schedule(time, kind);
        }
    }

    /// Link `l` has no leaf: schedules its arrival in the radix heap
    /// (returns true) or grows the tree. Out of line: in the tree's loop it
    /// is never called after the first events, and the radix heap's loop
    /// pushes through [`EventQueue::schedule_link_routed`] instead.
    #[inline(never)]
    fn beyond_leaves(&mut self, time: Time, l: u32) -> bool {
        match &mut self.radix {
            Some(r) => {
                r.push_link(time, (l as u64) << 3, l);
                true
            }
            None => {
                self.grow(l as usize + 1);
                false
            }
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, kind: EventKind) {
        if let EventKind::LinkArrival(l) = kind {
            return self.schedule_link(time, l);
        }
        if self.radix.is_some() {
            return self.schedule_radix(time, kind);
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

    /// A timer, start or sample event into the radix heap (out of line: the
    /// tree's loop never calls it).
    #[cold]
    #[inline(never)]
    fn schedule_radix(&mut self, time: Time, kind: EventKind) {
        let k = self.pack(kind);
        self.radix.as_mut().expect("a radix heap").push(time, k);
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
        if self.radix.is_some() {
            return self.take_radix_until(limit);
        }
        self.take_tree_until(limit)
    }

    /// Whether the queue is the radix heap (else the tree): the event loop
    /// calls [`Self::take_tree_until`] or [`Self::take_radix_until`], one
    /// loop for each, as [`Self::take_until`] does for one event. With a
    /// single loop, the two ways an event comes out meet before the
    /// dispatch on its kind, and the loop compiled to more instructions,
    /// the tree's link arrivals no longer going straight to their handler
    /// (docs/performance.md, "Decisions").
    #[inline]
    pub fn is_radix(&self) -> bool {
        self.radix.is_some()
    }

    /// [`Self::take_until`] when the queue is the tree.
    #[inline(always)]
    pub fn take_tree_until(&mut self, limit: Time) -> Option<Event> {
        debug_assert!(self.radix.is_none());
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
        Some(Event { time, kind })
    }

    /// [`Self::take_until`] when the queue is the radix heap.
    #[inline]
    pub fn take_radix_until(&mut self, limit: Time) -> Option<Event> {
        let (time, k) = self.radix.as_mut().expect("a radix heap").pop_until(limit)?;
        self.popped += 1;
        Some(Event { time, kind: self.unpack(k) })
    }

    /// [`Self::take_radix_until`] with the event as its packed word: a link
    /// arrival is tag 0, its link in bits 3..32 and its route (see
    /// [`Self::schedule_link_routed`]) in bits 32..64; other kinds
    /// through [`Self::unpack`].
    #[inline(always)]
    pub fn take_radix_word_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        let e = self.radix.as_mut().expect("a radix heap").pop_until(limit)?;
        self.popped += 1;
        Some(e)
    }

    /// Gives links `l` a lane each in the radix heap (nothing with the
    /// tree): their arrivals are kept apart from the buckets, so they cost
    /// no bucket push, no spill and no bucket pop, only a comparison at
    /// each pop. Meant for the busiest links (a dumbbell's two bottleneck
    /// directions carry a third of the packet-hops with 10,000 flows). The
    /// order of events is unchanged (see `Radix::push_link`). Call before
    /// scheduling any event.
    pub fn set_lanes(&mut self, l: [u32; LANES]) {
        if let Some(r) = self.radix.as_deref_mut() {
            assert!(r.len() == 0, "lanes are set before any event is scheduled");
            r.lane_l = l;
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        if let Some(r) = &self.radix {
            return r.peek_time();
        }
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
        self.radix.as_ref().map_or(0, |r| r.len()) + self.links_pending + self.heap.v.len()
            - self.taken.is_some() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
