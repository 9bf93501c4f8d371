//! The monotone radix heap: the event queue of runs with more than
//! [`super::TREE_MAX_LINKS`] links (held by [`super::EventQueue`]).
//!
//! It orders by the u64 picosecond time alone, in digits of `BITS` = 6
//! bits (a hierarchical timing wheel whose cascades jump straight to the
//! minimum). An entry of time `t` is kept in bucket (level, digit): level
//! is the highest digit in which `t` differs from `last`, the last popped
//! time (0 if `t == last`), and digit is `t`'s value there.
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
//! Invariants:
//!
//! - Popped times never decrease and nothing is scheduled before the last
//!   popped time (a check).
//! - Every bucket holds one range of times, buckets in index order are in
//!   time order, and a level-0 bucket holds a single time. The other
//!   buckets need no change when `last` moves: their entries keep the same
//!   highest differing digit, and value there, against the new `last`. An
//!   entry moves at most once per level.
//! - Every bucket is in insertion order, so the order is exact with no
//!   sequence number stored: a scheduled entry has a larger sequence than
//!   everything queued and is appended; a spill empties the lowest
//!   non-empty bucket into buckets that are all empty at that moment
//!   (every bucket below it is), keeping the relative order; equal times
//!   always share a bucket (the bucket is a function of the time and
//!   `last`). So the front of the level-0 bucket of time `last` is the
//!   pending entry with the smallest (time, sequence), and a bucket above
//!   level 0 is popped directly only when it holds a single entry.
//! - The bitmap (`words`, one bit per bucket) and its summary word mirror
//!   the non-empty buckets and find the lowest in two `trailing_zeros`;
//!   `best` is that lowest bucket; `mins[i]` is bucket `i`'s earliest time.
//!
//! Lanes: the arrivals of up to [`LANES`] links (the busiest: with one
//! bottleneck, its two directions) can be kept beside the buckets, one slot
//! per link (a link has at most one pending arrival). A pop compares the
//! earlier lane's time with the buckets' minimum (`mins[best]`) and takes
//! the lane's event if strictly earlier; it costs no bucket push, spill or
//! pop. The order stays exact without sequence numbers: on a tie the
//! buckets' event goes first, and every bucket event of a lane event's time
//! is older than it, because the lane event was the newest event when it
//! came, and an event later scheduled into the buckets at its time first
//! moves it into them (behind the older ones; a rare `demote`). Two lanes
//! never hold one time.

use crate::sim::time::Time;

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
pub(super) struct Radix {
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
    /// that moves it.
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
    /// Lanes (see [`super::EventQueue::set_lanes`]): the pending arrival of each
    /// lane's link, if it is held here rather than in the buckets, as its
    /// time (`Time::MAX`: none), its packed kind, and the link.
    lane_t: [Time; LANES],
    lane_w: [u64; LANES],
    pub(super) lane_l: [u32; LANES],
}

/// Links whose arrivals can bypass the radix heap's buckets (two: a
/// dumbbell's bottleneck, both ways; `push_link` tests each).
pub const LANES: usize = 2;
const _: () = assert!(LANES == 2, "push_link and first_lane are written for two lanes");

impl Radix {
    pub(super) fn new() -> Self {
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
    pub(super) fn push_link(&mut self, time: Time, kind: u64, l: u32) {
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
    pub(super) fn push(&mut self, time: Time, kind: u64) {
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
    pub(super) fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
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

    pub(super) fn peek_time(&self) -> Option<Time> {
        let t = self.first_lane().1.min(self.buckets_min());
        (t != Time::MAX || self.len() > 0).then_some(t)
    }

    pub(super) fn len(&self) -> usize {
        (self.pushed - self.pops) as usize
    }
}
