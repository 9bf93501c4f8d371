//! The single event queue of a run.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! picosecond run in the order they were scheduled, so a run is a pure
//! function of its description and seed. The queue holds O(links + timers)
//! entries, never one per packet in flight: a link schedules only the arrival
//! of its head packet, and timers keep their deadline in the flow (a stale
//! entry is skipped when popped rather than searched for and removed).
//!
//! Two implementations, chosen by the number of links when the queue is
//! built; both give exactly that order (the tests run both, and the radix
//! heap with lanes, against a reference heap, and the fingerprint
//! example's results are bit for bit those of the tree alone):
//!
//! - Up to [`TREE_MAX_LINKS`] links, a tournament tree. Nearly all events
//!   are link arrivals and a link has at most one pending (its head
//!   packet's), so the queue is a k-way merge: a winner tree with one leaf
//!   per link holding the key (time, sequence) of its pending arrival, plus
//!   leaf 0 for the other events (timers, starts, samples), kept in a binary
//!   min-heap of 24-byte entries (kind packed in a word) whose root is leaf
//!   0's key. Updating a leaf replays the matches on its path to the root:
//!   one branch-free comparison per level against the sibling's winner.
//!   [`EventQueue::take_until`] hands out the earliest event but leaves it
//!   in place until the handler is done: the handler's next arrival on the
//!   same link (or, for a heap event, its first heap event) takes over the
//!   slot, so most events cost one replay of log2(links) levels.
//! - Above, a monotone radix heap (below), whose cost does not grow with
//!   the number of links. At 40,000 links (10,000 flows) the tree's 16
//!   levels, the lower ones out of cache, cost about 300 instructions per
//!   event; the radix heap about one 16-byte move per event.
//!
//! Why not the radix heap everywhere: in the event loop it costs more per
//! event than the tree with few links (1 flow, 6 links: 21-22 -> 28-29 ns
//! per packet-hop; 10 flows 31 -> 34-36; 100 flows, 402 links: 30.7 ->
//! 33.5; 200 flows, 802 links: 32.6 -> 33.4), is even at 1202 links (300
//! flows) and faster above (600 flows 36.3 -> 35.6, 1000 flows 36.7 ->
//! 35.0), since its link arrivals carry their packet's route
//! ([`EventQueue::schedule_link_routed`]; before that it was 6-7 ns slower
//! up to a few thousand links and even at 12,000) and the busiest links
//! have lanes ([`EventQueue::set_lanes`]). A short tree replay is
//! a few branch-free levels over two cache lines; the radix heap's bucket
//! vectors, bitmap and spills are more memory and more branches. The event
//! loop has one copy for each ([`EventQueue::is_radix`]), so the tree's is
//! compiled as before.
//!
//! The radix heap orders by the u64 picosecond time alone, in digits of
//! `BITS` = 6 bits (a hierarchical timing wheel whose cascades jump
//! straight to the minimum). Popped times never decrease and nothing is
//! scheduled before the last popped time `last` (a check), so an entry of
//! time `t` is kept in bucket (level, digit): level is the highest digit in
//! which `t` differs from `last` (0 if `t == last`) and digit is `t`'s
//! value there. Every bucket holds one range of times, buckets in index
//! order are in time order, and a level-0 bucket holds a single time. A
//! bitmap of non-empty buckets with a summary word finds the lowest in two
//! `trailing_zeros`.
//!
//! - Schedule: compute the bucket (xor, leading zeros, shift) and append.
//! - Pop: take the front of the lowest non-empty bucket if it is at level 0
//!   (a head index makes each bucket a FIFO) or holds one entry. Otherwise
//!   scan that bucket for its minimum time `m`, set `last = m` and move its
//!   entries, in their stored order, to their buckets relative to `m`, all
//!   at lower levels ("spill"); those at `m` land in a level-0 bucket,
//!   whose front is popped. Bucket vectors keep their capacity: no
//!   allocation per event.
//!
//! The other buckets need no change when `last` moves: their entries keep
//! the same highest differing digit, and value there, against the new
//! `last`. An entry moves at most once per level, and a move skips every
//! level below that of the gap to the next event: at 40,000 links, about
//! one move per event.
//!
//! Why its order is exact with no sequence number stored: every bucket is
//! kept in insertion order. A scheduled entry has a larger sequence than
//! everything queued and is appended. A spill empties the lowest non-empty
//! bucket into buckets that are all empty at that moment (every bucket
//! below it is), keeping the relative order. Equal times always share a
//! bucket (the bucket is a function of the time and `last`). So the front
//! of the level-0 bucket of time `last` is the pending entry with the
//! smallest (time, sequence), and a bucket above level 0 is popped directly
//! only when it holds a single entry.
//!
//! Lanes: the arrivals of up to [`LANES`] links (the busiest: with one
//! bottleneck, its two directions, a third of the events with thousands
//! of flows) can be kept beside the buckets, one slot per link (a link has
//! at most one pending arrival). A pop compares the earlier lane's time
//! with the buckets' minimum (`mins[best]`) and takes the lane's event if
//! strictly earlier; it costs no bucket push, spill or pop. The order
//! stays exact without sequence numbers: on a tie the buckets' event goes
//! first, and every bucket event of a lane event's time is older than it,
//! because the lane event was the newest event when it came, and an event
//! later scheduled into the buckets at its time first moves it into them
//! (behind the older ones; a rare `demote`). Two lanes never hold one
//! time. At 10,000 flows this saves 1.5-2 % of the event loop, at 3000
//! flows 3.5 %; checking for an older bucket event of the same time when a
//! lane event is scheduled instead (a look into its bucket) cost more than
//! the lanes saved.

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
/// heap above (see the module notes for the measurements).
pub const TREE_MAX_LINKS: usize = 1023;

/// Link indices in a radix heap event word (bits 3..32; the route of a
/// link arrival is above): runs are limited to 2^29 links.
pub const LINK_MASK: u64 = (1 << 29) - 1;

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
    /// The radix heap, above `TREE_MAX_LINKS` links. The tree then has no
    /// leaves and no pending event, so its own checks (a link beyond its
    /// leaves, nothing pending) lead to the radix heap, and the tree's path
    /// has no extra test: dispatching on the kind of queue at every call
    /// cost S1 4 %.
    radix: Option<Box<Radix>>,
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
    /// dispatch on its kind, and the loop compiled to 4 % more instructions
    /// (S1), the tree's link arrivals no longer going straight to their
    /// handler.
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

// ---------------------------------------------------------------------------
// The radix heap.

/// Bits per digit of the radix heap.
const BITS: u32 = 6;
const RADIX: usize = 1 << BITS;
const LEVELS: usize = 64usize.div_ceil(BITS as usize);
const BUCKETS: usize = LEVELS * RADIX;
/// Words of the non-empty bitmap: one per 64 buckets, and a last one whose
/// top bit is always set, standing for "no event" (`EMPTY`); the summary
/// word has one bit per word, also the top one always.
const WORDS: usize = 64;
const _: () = assert!(BUCKETS <= 63 * 64);
/// `lowest()` of an empty queue.
const EMPTY: usize = 64 * 64 - 1;

/// A queued event: its time and its packed kind.
#[derive(Debug, Clone, Copy)]
struct RadixEntry {
    time: Time,
    kind: u64,
}

/// Bucket of time `t` when the last popped time is `last` (`t >= last`).
#[inline(always)]
fn bucket(t: Time, last: Time) -> usize {
    // Highest differing bit (0 when t == last: level 0 either way).
    let h = 63 - ((t ^ last) | 1).leading_zeros();
    let level = h / BITS;
    let digit = (t >> (level * BITS)) as usize & (RADIX - 1);
    (level as usize) << BITS | digit
}

/// Monotone radix heap (see the module notes). Kinds are packed.
#[derive(Debug)]
struct Radix {
    /// Time of the last popped event (0 before the first).
    last: Time,
    /// The lowest non-empty bucket, or `EMPTY`, kept up to date.
    best: usize,
    /// Bit `w`: `words[w] != 0`.
    summary: u64,
    /// Bit `i % 64` of word `i / 64`: bucket `i` is not empty.
    words: [u64; WORDS],
    /// Bucket `level << BITS | digit`, in insertion order. Vectors keep
    /// their capacity when emptied: no allocation per event.
    buckets: Box<[Vec<RadixEntry>]>,
    /// Front of each bucket (entries before it are popped; always 0 above
    /// level 0, where a bucket is popped only when it holds one entry).
    heads: Box<[u32]>,
    /// Earliest time in each bucket (`Time::MAX` when empty), kept at every
    /// push: a bucket above level 0 is spilled relative to its earliest
    /// event, which was found by a pass over the bucket before the pass
    /// that moves it (at 10,000 flows a spill moves 0.65 events per pop,
    /// nearly all from buckets of 2 to 15).
    mins: Box<[Time]>,
    /// Events scheduled and popped so far. Two counters, one per operation,
    /// not a count of pending events: LLVM fused a `len -= 1` with the next
    /// field's `+= 1` into a 16-byte load and store, a load that follows a
    /// push's 8-byte store to `len` and so cannot take its value from the
    /// store buffer (seen in the assembly; no difference measurable alone).
    pushed: u64,
    pops: u64,
    /// Time of the last event popped, from a lane or the buckets: nothing
    /// is scheduled before it (`last` is the buckets' alone).
    now: Time,
    /// Lanes (see [`EventQueue::set_lanes`]): the pending arrival of each
    /// lane's link, if it is held here rather than in the buckets, as its
    /// time (`Time::MAX`: none), its packed kind, and the link.
    lane_t: [Time; LANES],
    lane_w: [u64; LANES],
    lane_l: [u32; LANES],
}

/// Links whose arrivals can bypass the radix heap's buckets (two: a
/// dumbbell's bottleneck, both ways; `push_link` tests each).
pub const LANES: usize = 2;
const _: () = assert!(LANES == 2, "push_link and first_lane are written for two lanes");

impl Radix {
    fn new() -> Self {
        let mut words = [0; WORDS];
        words[WORDS - 1] = 1 << 63;
        Radix {
            last: 0,
            best: EMPTY,
            summary: 1 << 63,
            words,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            heads: vec![0; BUCKETS].into_boxed_slice(),
            mins: vec![Time::MAX; BUCKETS].into_boxed_slice(),
            pushed: 0,
            pops: 0,
            now: 0,
            lane_t: [Time::MAX; LANES],
            lane_w: [0; LANES],
            lane_l: [u32::MAX; LANES],
        }
    }

    /// Schedules the arrival of link `l` (packed as `kind`): in `l`'s lane
    /// if it has one, that lane is free and the other lane's event is not
    /// of the same time; else in the buckets.
    ///
    /// Why the order stays exact: on a tie between a lane and the buckets,
    /// the buckets' event goes first, so every bucket event of a lane
    /// event's time must have been scheduled before it. It was when the
    /// lane event came (it was the last one scheduled), and it stays so:
    /// an event scheduled into the buckets at a lane event's time first
    /// moves the lane event into them (`push`), behind the older ones.
    /// Two lanes never hold one time.
    #[inline(always)]
    fn push_link(&mut self, time: Time, kind: u64, l: u32) {
        let j = if l == self.lane_l[0] {
            0
        } else if l == self.lane_l[1] {
            1
        } else {
            return self.push(time, kind);
        };
        assert!(time >= self.now, "event at {time} ps scheduled before the current time {} ps", self.now);
        // A free lane reads Time::MAX: an event at that time stays out.
        if self.lane_t[j] != Time::MAX || time == Time::MAX || self.lane_t[1 - j] == time {
            return self.push(time, kind);
        }
        self.lane_t[j] = time;
        self.lane_w[j] = kind;
        self.pushed += 1;
    }

    /// The lane with the earlier event, and its time (`Time::MAX` if both
    /// are free; two lanes never hold one time).
    #[inline(always)]
    fn first_lane(&self) -> (usize, Time) {
        let j = (self.lane_t[1] < self.lane_t[0]) as usize;
        (j, self.lane_t[j])
    }

    /// Earliest time in the buckets, or `Time::MAX`.
    #[inline(always)]
    fn buckets_min(&self) -> Time {
        if self.best == EMPTY {
            Time::MAX
        } else {
            // SAFETY: best < BUCKETS when not EMPTY.
            unsafe { *self.mins.get_unchecked(self.best) }
        }
    }

    #[inline(always)]
    fn mark(&mut self, i: usize) {
        // SAFETY: i < BUCKETS, so i / 64 < WORDS.
        unsafe { *self.words.get_unchecked_mut(i >> 6) |= 1 << (i & 63) };
        self.summary |= 1 << (i >> 6);
    }

    /// Clears bucket `i`'s bit if `cond`, without a branch (whether a bucket
    /// or a word empties is data, a coin toss for the predictor).
    #[inline(always)]
    fn unmark_if(&mut self, i: usize, cond: bool) {
        // SAFETY: i < BUCKETS, so i / 64 < WORDS.
        let w = unsafe { self.words.get_unchecked_mut(i >> 6) };
        *w &= !((cond as u64) << (i & 63));
        self.summary &= !(((*w == 0) as u64) << (i >> 6));
    }

    /// Lowest non-empty bucket, or `EMPTY`.
    #[inline(always)]
    fn lowest(&self) -> usize {
        let w = self.summary.trailing_zeros() as usize;
        // SAFETY: summary is never 0 (its top bit is always set).
        let word = unsafe { *self.words.get_unchecked(w) };
        w << 6 | word.trailing_zeros() as usize
    }

    /// Schedules an event into the buckets, moving there first a lane's
    /// event of the same time (see `push_link`).
    #[inline(always)]
    fn push(&mut self, time: Time, kind: u64) {
        for j in 0..LANES {
            if time == self.lane_t[j] && time != Time::MAX {
                self.demote(j);
            }
        }
        self.push_raw(time, kind);
    }

    /// Moves lane `j`'s event into the buckets (rare: an exact tie).
    #[cold]
    #[inline(never)]
    fn demote(&mut self, j: usize) {
        let (t, w) = (self.lane_t[j], self.lane_w[j]);
        self.lane_t[j] = Time::MAX;
        self.pushed -= 1;
        self.push_raw(t, w);
    }

    #[inline(always)]
    fn push_raw(&mut self, time: Time, kind: u64) {
        assert!(time >= self.now, "event at {time} ps scheduled before the current time {} ps", self.now);
        let i = bucket(time, self.last);
        // SAFETY: bucket() < LEVELS << BITS = BUCKETS.
        unsafe { self.buckets.get_unchecked_mut(i) }.push(RadixEntry { time, kind });
        // SAFETY: as above.
        let m = unsafe { self.mins.get_unchecked_mut(i) };
        *m = (*m).min(time);
        self.mark(i);
        self.best = self.best.min(i);
        self.pushed += 1;
    }

    /// Pops the earliest event (time, packed kind) if it is at or before
    /// `limit`; if not, changes nothing.
    #[inline(always)]
    fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        // A lane's event if strictly earlier: on a tie the buckets' goes
        // first (see push_link). A free lane (Time::MAX) is never earlier.
        // `last` stays the buckets' own: their entries are placed
        // relative to it, and nothing is scheduled before it.
        let (j, lt) = self.first_lane();
        if lt < self.buckets_min() {
            if lt > limit {
                return None;
            }
            self.lane_t[j] = Time::MAX;
            self.now = lt;
            self.pops += 1;
            return Some((lt, self.lane_w[j]));
        }
        let mut i = self.best;
        if i == EMPTY {
            return None;
        }
        // SAFETY: best < BUCKETS when not EMPTY.
        let b = unsafe { self.buckets.get_unchecked(i) };
        if i >= RADIX && b.len() > 1 {
            // Above level 0 the front is the earliest only if alone.
            // SAFETY: i < BUCKETS.
            let m = unsafe { *self.mins.get_unchecked(i) };
            debug_assert_eq!(Some(m), b.iter().map(|e| e.time).min());
            if m > limit {
                return None;
            }
            self.spill(i, m);
            i = self.best;
        }
        // SAFETY: i < BUCKETS, and a marked bucket has an entry at its head.
        let h = unsafe { *self.heads.get_unchecked(i) } as usize;
        let b = unsafe { self.buckets.get_unchecked_mut(i) };
        let e = unsafe { *b.get_unchecked(h) };
        if e.time > limit {
            return None;
        }
        self.last = e.time;
        self.now = e.time;
        // Without branches: when the bucket empties, its length and head go
        // to 0 and its bit is cleared, and lowest() is then the next bucket,
        // else still this one.
        let len = b.len();
        let emptied = h + 1 == len;
        // SAFETY: 0 or the current length.
        unsafe { b.set_len(if emptied { 0 } else { len }) };
        unsafe { *self.heads.get_unchecked_mut(i) = if emptied { 0 } else { h as u32 + 1 } };
        // A bucket above level 0 is popped only when it holds one event, and
        // at level 0 all its events have one time: the minimum stays right.
        let m = unsafe { self.mins.get_unchecked_mut(i) };
        *m = if emptied { Time::MAX } else { *m };
        self.unmark_if(i, emptied);
        self.best = self.lowest();
        self.pops += 1;
        Some((e.time, e.kind))
    }

    /// Sets `last = m` (the minimum of bucket `src`, the lowest non-empty
    /// one, above level 0) and moves `src`'s entries, in order, to their
    /// buckets relative to `m`: all below `src` and empty before. The
    /// lowest non-empty bucket is then `m`'s, at level 0.
    #[inline(never)]
    fn spill(&mut self, src: usize, m: Time) {
        self.last = m;
        self.unmark_if(src, true);
        self.mins[src] = Time::MAX;
        let mut v = std::mem::take(&mut self.buckets[src]);
        for e in &v {
            let j = bucket(e.time, m);
            debug_assert!(j < src);
            // SAFETY: bucket() < BUCKETS.
            unsafe { self.buckets.get_unchecked_mut(j) }.push(*e);
            let mj = unsafe { self.mins.get_unchecked_mut(j) };
            *mj = (*mj).min(e.time);
            self.mark(j);
        }
        v.clear();
        self.buckets[src] = v;
        self.best = m as usize & (RADIX - 1);
    }

    fn peek_time(&self) -> Option<Time> {
        let t = self.first_lane().1.min(self.buckets_min());
        (t != Time::MAX || self.len() > 0).then_some(t)
    }

    fn len(&self) -> usize {
        (self.pushed - self.pops) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of each kind: the tree (growing as links are used), the
    /// radix heap, and the radix heap with lanes for links 3 and 0.
    fn queues() -> [EventQueue; 3] {
        let mut q = [
            EventQueue::with_links(3),
            EventQueue::with_links(TREE_MAX_LINKS + 1),
            EventQueue::with_links(TREE_MAX_LINKS + 1),
        ];
        q[2].set_lanes([3, 0]);
        assert!(q[0].radix.is_none() && q[1].radix.is_some() && q[2].radix.as_ref().unwrap().lane_l == [3, 0]);
        q
    }

    #[test]
    fn ties_break_in_insertion_order() {
        for mut q in queues() {
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
    }

    /// Equal times scheduled at different moments (against different `last`
    /// values) and moved down the levels by several spills still come out
    /// in insertion order, and events scheduled at the current time after
    /// a spill come after those already there.
    #[test]
    fn equal_times_stay_fifo_across_spills() {
        for mut q in queues() {
            let t = 0x1234_5678_9abc; // several levels above 0
            let mut want = Vec::new();
            let mut id = 0;
            let mut add = |q: &mut EventQueue, time: Time, want: &mut Vec<(Time, u32)>| {
                q.schedule(time, EventKind::Rto(id));
                want.push((time, id));
                id += 1;
            };
            // Interleave the equal times with earlier and later ones, so their
            // bucket is spilled several times before they are popped.
            for k in 0..20u64 {
                add(&mut q, t, &mut want);
                add(&mut q, t - 1 - k * 977_777, &mut want);
                add(&mut q, t + 1 + k * 3, &mut want);
                add(&mut q, t + (1 << 30), &mut want);
            }
            let mut got = Vec::new();
            // Pop up to the first event at t, then schedule more at t.
            while let Some(e) = q.pop() {
                let EventKind::Rto(i) = e.kind else { unreachable!() };
                got.push((e.time, i));
                if e.time == t && got.iter().filter(|g| g.0 == t).count() == 1 {
                    for _ in 0..5 {
                        add(&mut q, t, &mut want);
                        add(&mut q, t + 2, &mut want);
                    }
                }
            }
            // The reference: a stable sort by time of the insertion order.
            want.sort_by_key(|w| w.0);
            assert_eq!(got, want);
            assert!(q.is_empty());
        }
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
            EventKind::LinkArrival(100_000),
            EventKind::LinkService(0),
            EventKind::QdiscTimer(0),
            EventKind::LinkService(u32::MAX),
            EventKind::QdiscTimer(12_345),
            EventKind::SourceSend(u32::MAX),
            EventKind::SourceSend(0),
            EventKind::QdiscArrival(7),
            EventKind::QdiscArrival(u32::MAX),
        ];
        for mut q in queues() {
            for (i, k) in kinds.iter().enumerate() {
                q.schedule(i as Time, *k);
            }
            let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
            assert_eq!(got, kinds);
        }
    }

    #[test]
    fn limits_and_peek() {
        for mut q in queues() {
            assert_eq!((q.peek_time(), q.pop()), (None, None));
            q.schedule(1000, EventKind::Rto(1));
            q.schedule(1000, EventKind::Rto(2));
            q.schedule(5000, EventKind::Rto(3));
            assert_eq!(q.peek_time(), Some(1000));
            assert_eq!(q.pop_until(999), None);
            // A refused pop changes nothing: an event before the refused one
            // may still be scheduled.
            q.schedule(999, EventKind::Rto(0));
            assert_eq!(q.pop_until(999).map(|e| e.kind), Some(EventKind::Rto(0)));
            assert_eq!(q.pop_until(1000).map(|e| e.kind), Some(EventKind::Rto(1)));
            assert_eq!(q.peek_time(), Some(1000));
            assert_eq!(q.pop_until(1000).map(|e| e.kind), Some(EventKind::Rto(2)));
            assert_eq!(q.pop_until(4999), None);
            assert_eq!((q.len(), q.popped()), (1, 3));
            q.schedule(Time::MAX, EventKind::Sample);
            assert_eq!(q.pop().map(|e| e.time), Some(5000));
            assert_eq!(q.pop_until(Time::MAX - 1), None);
            assert_eq!(q.pop(), Some(Event { time: Time::MAX, kind: EventKind::Sample }));
            assert!(q.is_empty());
        }
    }

    #[test]
    #[should_panic(expected = "before the current time")]
    fn scheduling_in_the_past_is_refused() {
        let [_, mut q, _] = queues();
        q.schedule(10, EventKind::Sample);
        q.pop();
        q.schedule(9, EventKind::Sample);
    }

    /// The same after an event popped from a lane (which leaves the
    /// buckets' own `last` behind), for the lane's link and for the
    /// buckets: the check is against the last pop of either.
    #[test]
    fn scheduling_in_the_past_is_refused_with_lanes() {
        for kind in [EventKind::LinkArrival(3), EventKind::Rto(1)] {
            let r = std::panic::catch_unwind(move || {
                let [_, _, mut q] = queues();
                q.schedule(10, EventKind::LinkArrival(3));
                assert_eq!(q.pop().map(|e| e.time), Some(10));
                q.schedule(9, kind);
            });
            let msg = *r.expect_err("an event before the current time was accepted").downcast::<String>().unwrap();
            assert!(msg.contains("before the current time"), "{kind:?}: {msg}");
        }
    }

    /// A lane's link scheduled again while its arrival is pending (the
    /// simulator never does; the radix heap's API allows it, the tree's
    /// refuses it): the second arrival goes into the buckets, moving the
    /// first there if they tie, and the order is still insertion order.
    #[test]
    fn a_lane_link_scheduled_twice_keeps_the_order() {
        let [_, _, mut q] = queues();
        let s = [
            (10, EventKind::LinkArrival(3)),
            (10, EventKind::LinkArrival(3)),
            (10, EventKind::Rto(1)),
            (5, EventKind::LinkArrival(3)),
            (10, EventKind::LinkArrival(0)),
            (7, EventKind::LinkArrival(0)),
        ];
        for (t, k) in s {
            q.schedule(t, k);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        // By time, then insertion: 5 L3, 7 L0, then the four at 10 as scheduled.
        let mut want: Vec<_> = s.iter().enumerate().map(|(i, &(t, k))| (t, i, k)).collect();
        want.sort_by_key(|&(t, i, _)| (t, i));
        assert_eq!(order, want.into_iter().map(|(t, _, k)| (t, k)).collect::<Vec<_>>());
    }

    /// Popping events and scheduling from their handlers (link arrivals, at
    /// most one pending per link, and timers, some far in the future) gives
    /// the order of a reference priority queue (BinaryHeap of (time, seq)),
    /// with many equal times, from time 0 and near the end of the u64 range.
    #[test]
    fn pop_and_schedule_match_a_reference_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // (start, spread of link delays, of timer delays, steps, links)
        let cases: [(Time, u64, u64, usize, u32); 8] = [
            (0, 50, 50, 50_000, 37),                               // dense: many ties
            (0, 3, 1 << 20, 30_000, 37),                           // mostly ties, far timers
            (0, 1 << 17, 1 << 40, 50_000, 37),                     // picosecond-like spreads
            (12_345, 1, 1 << 62, 20_000, 37),                      // ties and huge jumps
            (Time::MAX - (1 << 24), 1 << 12, 1 << 22, 30_000, 37), // near u64::MAX
            (Time::MAX - 100, 5, 5, 5_000, 37),                    // up to u64::MAX itself
            // Few links, so the lane links (0 and 3 in queues()) carry most
            // arrivals, tied with each other and with the buckets' events.
            (0, 4, 4, 50_000, 4),
            (1 << 40, 6, 1 << 30, 50_000, 5),
        ];
        for (case, &(start, link_spread, timer_spread, steps, links)) in cases.iter().enumerate() {
            let mut x: u64 = 0x1234_5678 + case as u64;
            let mut rnd = |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m.max(1)
            };
            #[allow(non_snake_case)]
            let LINKS = links;
            for mut q in queues() {
                // Reference: (time, seq, id), ids: links < LINKS, timers above.
                let mut r: BinaryHeap<Reverse<(Time, u64, u32)>> = BinaryHeap::new();
                let mut busy = vec![false; LINKS as usize];
                let mut seq = 0u64;
                let mut now = start;
                let mut popped = 0;
                for step in 0..steps {
                    // Bursts now and then: many events at once, then many pops.
                    let n = if step % 1000 < 10 { rnd(40) } else { rnd(3) };
                    for _ in 0..n {
                        let l = rnd(LINKS as u64 + 4) as u32;
                        let (id, spread) = if l < LINKS {
                            if busy[l as usize] {
                                continue;
                            }
                            busy[l as usize] = true;
                            (l, link_spread)
                        } else {
                            (LINKS + seq as u32, if rnd(4) == 0 { timer_spread } else { link_spread })
                        };
                        let t = now.saturating_add(rnd(spread));
                        if id < LINKS {
                            q.schedule_link(t, id);
                        } else {
                            q.schedule(t, EventKind::Rto(id));
                        }
                        r.push(Reverse((t, seq, id)));
                        seq += 1;
                    }
                    let limit = if rnd(10) == 0 { Time::MAX } else { now.saturating_add(rnd(link_spread)) };
                    assert_eq!(q.peek_time(), r.peek().map(|Reverse((t, _, _))| *t));
                    match q.take_until(limit) {
                        Some(e) => {
                            let Reverse((t, _, id)) = r.pop().unwrap();
                            let want = if id < LINKS { EventKind::LinkArrival(id) } else { EventKind::Rto(id) };
                            assert_eq!((e.time, e.kind), (t, want), "case {case}, step {step}");
                            if id < LINKS {
                                busy[id as usize] = false;
                            }
                            now = t;
                            popped += 1;
                        }
                        None => assert!(r.peek().is_none_or(|Reverse((t, _, _))| *t > limit)),
                    }
                    assert_eq!(q.len(), r.len());
                }
                while let Some(e) = q.pop() {
                    let Reverse((t, _, id)) = r.pop().unwrap();
                    assert_eq!(e.time, t);
                    assert!(matches!(e.kind, EventKind::LinkArrival(i) | EventKind::Rto(i) if i == id));
                    popped += 1;
                }
                assert!(r.is_empty());
                assert_eq!(q.popped(), popped);
            }
        }
    }
}
