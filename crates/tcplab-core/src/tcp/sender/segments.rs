//! The per-segment record of the segments in flight: send time and flags
//! in one word per segment, in a ring indexed by sequence number.

use crate::sim::time::{Time, MAX_TIME};

pub(super) const RETX: u8 = 1;
pub(super) const SACKED: u8 = 2;
/// A retransmission of this segment is counted in `retrans_out`.
pub(super) const RETX_OUT: u8 = 4;

/// Per-segment state of the segments outstanding, `[snd_una, high_data)`:
/// send time and flags in one word (the flags in the top [`FLAG_BITS`]
/// bits, the time below: simulated time is limited to 2^61 ps, about 26
/// days, by the spec's validation), in a ring indexed by sequence number
/// modulo a power of two. One word, not two arrays (a `Vec<Time>` and a
/// `Vec<u8>`): an ACK reads a segment's flags and send time, and with
/// thousands of flows each array was a cache miss of its own. The ring
/// grows with the window and [`SegMetas::trim`] shrinks it again when the
/// window is far smaller, so memory follows the current window, not the
/// largest ever.
#[derive(Debug)]
pub(super) struct SegMetas {
    e: Vec<u64>,
    mask: u64,
}

const META_MIN: usize = 64;
/// Bits of a segment's word holding its flags (`RETX`, `SACKED`, `RETX_OUT`).
const FLAG_BITS: u32 = 3;
const TIME_BITS: u32 = 64 - FLAG_BITS;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
// The time field holds every time a run may reach.
const _: () = assert!(TIME_MASK == MAX_TIME);
const _: () = assert!((RETX | SACKED | RETX_OUT) as u64 >> FLAG_BITS == 0);

impl SegMetas {
    pub(super) fn new() -> Self {
        SegMetas { e: vec![0; META_MIN], mask: META_MIN as u64 - 1 }
    }

    // SAFETY (the accessors): the vector has length mask + 1, so a masked
    // index is in bounds.
    #[inline(always)]
    pub(super) fn word(&self, q: u64) -> u64 {
        unsafe { *self.e.get_unchecked((q & self.mask) as usize) }
    }

    #[inline(always)]
    pub(super) fn word_mut(&mut self, q: u64) -> &mut u64 {
        unsafe { self.e.get_unchecked_mut((q & self.mask) as usize) }
    }

    #[inline(always)]
    pub(super) fn flags(&self, q: u64) -> u8 {
        (self.word(q) >> TIME_BITS) as u8
    }

    #[inline(always)]
    pub(super) fn set_flags(&mut self, q: u64, f: u8) {
        let w = self.word_mut(q);
        *w = (*w & TIME_MASK) | (f as u64) << TIME_BITS;
    }

    #[inline(always)]
    pub(super) fn sent(&self, q: u64) -> Time {
        self.word(q) & TIME_MASK
    }

    /// A new segment sent at `t`, no flags: the word is written, not read
    /// and modified (what it held is a segment one lap of the ring ago, with
    /// thousands of flows a cache miss that a read would wait for).
    #[inline(always)]
    pub(super) fn set_new(&mut self, q: u64, t: Time) {
        debug_assert!(t <= MAX_TIME);
        *self.word_mut(q) = t;
    }

    #[inline(always)]
    pub(super) fn set_sent(&mut self, q: u64, t: Time) {
        debug_assert!(t <= MAX_TIME);
        let w = self.word_mut(q);
        *w = (*w & !TIME_MASK) | t;
    }

    /// Room for segments `[una, high)`, keeping their state.
    #[inline]
    pub(super) fn ensure(&mut self, una: u64, high: u64) {
        let need = high - una;
        if need as usize > self.e.len() {
            self.resize(una, high, (need as usize).next_power_of_two().max(self.e.len() * 2));
        }
    }

    #[cold]
    pub(super) fn resize(&mut self, una: u64, high: u64, cap: usize) {
        let mut e = vec![0; cap];
        let mask = cap as u64 - 1;
        for s in una..high {
            e[(s & mask) as usize] = self.word(s);
        }
        self.e = e;
        self.mask = mask;
    }

    /// Shrinks the rings to four times the segments outstanding if that
    /// halves them or more.
    pub(super) fn trim(&mut self, una: u64, high: u64) {
        let want = ((4 * (high - una)) as usize).next_power_of_two().max(META_MIN);
        if want * 2 <= self.e.len() {
            self.resize(una, high, want);
        }
    }
}
