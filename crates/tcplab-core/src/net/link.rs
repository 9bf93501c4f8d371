//! A link: a drop-tail FIFO queue feeding a transmitter of fixed rate, then a
//! propagation delay line.
//!
//! Because service is FIFO at a fixed rate, a packet's whole future on the
//! link is known when it is accepted: it starts serializing when the one
//! before it has finished (`start = max(now, busy_until)`), leaves the
//! transmitter at `depart = start + size/rate` and reaches the far end at
//! `arrive = depart + delay`. The link therefore keeps one deque of accepted
//! packets in order, which is both the queue and the delay line, and only the
//! arrival of its head needs an event. Queue occupancy at time t (packets
//! waiting, i.e. accepted with `start > t`) is brought up to date lazily by
//! [`Link::advance`], when a drop decision or a sample needs it. The
//! time-averaged queue statistics need no such walk: the integral of the
//! waiting count over the window is the sum of each packet's wait within
//! the window, and a packet's wait (`start - now`) is known when it is
//! accepted.

use super::loss::LossModel;
use super::packet::{Packet, PacketKind};
use crate::sim::time::{serialization_time, Time, PS_PER_SEC};

#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct InLink {
    pkt: Packet,
    arrive: Time,
}

impl InLink {
    const EMPTY: InLink = InLink { pkt: Packet::data(0, 0, 0, false), arrive: 0 };
}

/// FIFO of the packets on a link: a ring of power-of-two capacity, so
/// indexing is a mask and pushing never moves elements (except to grow).
/// [`Ring::trim`] shrinks it when it is far emptier than its capacity, so
/// a link that once held a burst does not keep the memory for good.
#[derive(Debug)]
struct Ring {
    buf: Box<[InLink]>,
    head: u32,
    len: u32,
}

const RING_MIN: usize = 4;

impl Ring {
    fn with_capacity(n: usize) -> Self {
        Ring { buf: vec![InLink::EMPTY; n.next_power_of_two()].into_boxed_slice(), head: 0, len: 0 }
    }

    /// Shrinks to four times the current length (at least `RING_MIN`) if
    /// that halves the capacity or more: memory stays within 8x of what the
    /// link holds at trim time, and a bursty link rarely regrows (at most one
    /// reallocation per trim and link; trims are 2^20 events apart).
    fn trim(&mut self) {
        let want = (4 * self.len as usize).next_power_of_two().max(RING_MIN);
        if want * 2 <= self.buf.len() {
            self.resize(want);
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i` from the front (`i < len`).
    #[inline]
    fn get(&self, i: usize) -> &InLink {
        debug_assert!(i < self.len as usize);
        let mask = self.buf.len() - 1;
        // SAFETY: the mask keeps the index below buf.len().
        unsafe { self.buf.get_unchecked((self.head as usize + i) & mask) }
    }

    #[inline]
    fn push_back(&mut self, e: InLink) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        let i = (self.head as usize + self.len as usize) & mask;
        // SAFETY: the mask keeps the index below buf.len().
        unsafe { *self.buf.get_unchecked_mut(i) = e };
        self.len += 1;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<InLink> {
        if self.len == 0 {
            return None;
        }
        let e = *self.get(0);
        self.head = (self.head + 1) & (self.buf.len() as u32 - 1);
        self.len -= 1;
        Some(e)
    }

    #[inline]
    fn front(&self) -> Option<&InLink> {
        if self.len == 0 {
            None
        } else {
            Some(self.get(0))
        }
    }

    #[cold]
    fn grow(&mut self) {
        self.resize((self.buf.len() * 2).max(RING_MIN));
    }

    fn resize(&mut self, cap: usize) {
        assert!(cap >= self.len as usize && cap.is_power_of_two() && cap <= 1 << 31, "link queue capacity");
        let mut buf = vec![InLink::EMPTY; cap];
        for (i, slot) in buf.iter_mut().enumerate().take(self.len as usize) {
            *slot = *self.get(i);
        }
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }

    fn iter(&self) -> impl Iterator<Item = &InLink> {
        (0..self.len as usize).map(move |i| self.get(i))
    }
}

/// Counters of one link (cumulative over the run unless noted); the ones
/// every packet updates first.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct LinkStats {
    /// Packets offered to the queue.
    pub packets_in: u64,
    /// Packets that reached the far end.
    pub packets_out: u64,
    /// Transmitter busy time within the measurement window (ps).
    pub busy_in_window: u128,
    pub bytes_out: u64,
    pub data_packets_out: u64,
    /// Packets transmitted and lost on the wire (random loss model).
    pub losses: u64,
    pub drops: u64,
    pub max_queue_packets: u64,
    /// Integral of waiting packets (resp. bytes) over the measurement window (packet-ps, byte-ps).
    pub queue_packet_ps: u128,
    pub queue_byte_ps: u128,
}

pub enum Enqueued {
    Dropped,
    /// Accepted; if `Some(t)`, the link was empty and its head arrival at `t`
    /// must be scheduled.
    Accepted(Option<Time>),
}

/// Four cache lines, by when they are touched (with 40,000 links the links
/// do not fit in cache, so lines per packet matter):
///
/// 0. what an arrival touches (the ring, the waiting index, the loss
///    model) and what every enqueue reads first;
/// 1. what every enqueue updates (counters, busy time, the window);
/// 2. what only an enqueue onto a busy link (one that queues) touches;
/// 3. losses and configuration read off the common path.
///
/// So an arrival touches one line and an enqueue onto an idle link two.
/// Per-packet counters are kept on the enqueue side only: what left the
/// link is what was accepted less what was lost and what is still on it,
/// computed when [`Link::stats`] is asked (the same integers the
/// departures would have summed).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    // Line 0.
    entries: Ring,
    /// Index in `entries` of the first packet that has not started service.
    first_waiting: u32,
    /// One-entry cache of the last serialization time: a link carries one or
    /// two packet sizes (data one way, ACKs the other), so this nearly always hits.
    ser_cache_size: u32,
    ser_cache_time: Time,
    busy_until: Time,
    pub delay: Time,
    loss: Option<Box<LossModel>>,
    // Line 1.
    /// Packets offered to the queue.
    packets_in: u64,
    /// Bytes and data packets accepted.
    accepted_bytes: u64,
    accepted_data: u64,
    waiting_bytes: u64,
    busy_in_window: u128,
    window: (Time, Time),
    // Line 2.
    limit_packets: u64,
    limit_bytes: u64,
    drops: u64,
    max_queue_packets: u64,
    queue_packet_ps: u128,
    queue_byte_ps: u128,
    // Line 3.
    losses: u64,
    lost_bytes: u64,
    lost_data: u64,
    pub rate_bps: f64,
    ps_per_byte: f64,
}

const _: () = assert!(std::mem::size_of::<Link>() == 256);

#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(x as *const T as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

fn overlap(a: Time, b: Time, w: (Time, Time)) -> Time {
    let lo = a.max(w.0);
    let hi = b.min(w.1);
    hi.saturating_sub(lo)
}

impl Link {
    /// `window` is the measurement window `[start, end]` of the run.
    pub fn new(rate_bps: f64, delay: Time, limit_packets: Option<u64>, limit_bytes: Option<u64>, window: (Time, Time)) -> Self {
        Link {
            rate_bps,
            delay,
            ps_per_byte: 8.0 * PS_PER_SEC as f64 / rate_bps,
            ser_cache_time: 0,
            ser_cache_size: 0,
            limit_packets: limit_packets.unwrap_or(u64::MAX),
            limit_bytes: limit_bytes.unwrap_or(u64::MAX),
            entries: Ring::with_capacity(RING_MIN),
            first_waiting: 0,
            waiting_bytes: 0,
            busy_until: 0,
            window,
            loss: None,
            packets_in: 0,
            accepted_bytes: 0,
            accepted_data: 0,
            busy_in_window: 0,
            drops: 0,
            max_queue_packets: 0,
            queue_packet_ps: 0,
            queue_byte_ps: 0,
            losses: 0,
            lost_bytes: 0,
            lost_data: 0,
        }
    }

    /// The link's counters so far.
    pub fn stats(&self) -> LinkStats {
        let (mut bytes_on, mut data_on) = (0u64, 0u64);
        for e in self.entries.iter() {
            bytes_on += e.pkt.size as u64;
            data_on += (e.pkt.kind == PacketKind::Data) as u64;
        }
        let accepted = self.packets_in - self.drops;
        LinkStats {
            packets_in: self.packets_in,
            packets_out: accepted - self.losses - self.entries.len() as u64,
            busy_in_window: self.busy_in_window,
            bytes_out: self.accepted_bytes - self.lost_bytes - bytes_on,
            data_packets_out: self.accepted_data - self.lost_data - data_on,
            losses: self.losses,
            drops: self.drops,
            max_queue_packets: self.max_queue_packets,
            queue_packet_ps: self.queue_packet_ps,
            queue_byte_ps: self.queue_byte_ps,
        }
    }

    /// Gives the link a random loss model.
    pub fn with_loss(mut self, loss: Option<LossModel>) -> Self {
        self.loss = loss.map(Box::new);
        self
    }

    /// Packets waiting for the transmitter (excluding the one being sent), as
    /// of the last [`Link::advance`].
    #[inline]
    pub fn waiting_packets(&self) -> u64 {
        (self.entries.len() - self.first_waiting as usize) as u64
    }

    #[inline]
    pub fn waiting_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    /// Gives back queue memory the link no longer needs (called now and then
    /// by the world, not per packet).
    pub fn trim(&mut self) {
        self.entries.trim();
    }

    /// Packets on the link: waiting, serializing or propagating.
    pub fn packets_in_link(&self) -> u64 {
        self.entries.len() as u64
    }

    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.entries.iter().map(|e| &e.pkt)
    }

    /// Serialization time of a packet of `size` bytes (the cached value when
    /// it is the last size sent: the same function of the size either way).
    #[inline]
    fn ser_of(&self, size: u32) -> Time {
        if self.ser_cache_size == size {
            self.ser_cache_time
        } else {
            serialization_time(size, self.ps_per_byte)
        }
    }

    /// Brings the waiting set up to `now`: every packet whose service
    /// started at or before `now` leaves it.
    #[inline]
    pub fn advance(&mut self, now: Time) {
        while (self.first_waiting as usize) < self.entries.len() {
            let e = *self.entries.get(self.first_waiting as usize);
            // Service start, from the arrival (not stored: 32-byte entries,
            // one per half cache line): arrive = start + ser(size) + delay.
            if e.arrive - self.delay - self.ser_of(e.pkt.size) > now {
                break;
            }
            self.waiting_bytes -= e.pkt.size as u64;
            self.first_waiting += 1;
        }
    }

    /// Offers `pkt` to the queue at `now` (drop-tail).
    #[inline(always)]
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Enqueued {
        self.packets_in += 1;
        let idle = self.busy_until <= now;
        if idle {
            // Everything accepted has started service: nothing waits, and no
            // need to walk the packets to find that out.
            self.first_waiting = self.entries.len() as u32;
            self.waiting_bytes = 0;
        } else {
            self.advance(now);
        }
        if !idle
            && (self.waiting_packets() + 1 > self.limit_packets
                || self.waiting_bytes + pkt.size as u64 > self.limit_bytes)
        {
            self.drops += 1;
            return Enqueued::Dropped;
        }
        let start = if idle { now } else { self.busy_until };
        let ser = if self.ser_cache_size == pkt.size {
            self.ser_cache_time
        } else {
            let t = serialization_time(pkt.size, self.ps_per_byte);
            self.ser_cache_size = pkt.size;
            self.ser_cache_time = t;
            t
        };
        debug_assert_eq!(ser, self.ser_of(pkt.size));
        let depart = start + ser;
        self.busy_until = depart;
        self.busy_in_window += overlap(start, depart, self.window) as u128;
        self.accepted_bytes += pkt.size as u64;
        self.accepted_data += (pkt.kind == PacketKind::Data) as u64;
        let arrive = depart + self.delay;
        let was_empty = self.entries.is_empty();
        self.entries.push_back(InLink { pkt, arrive });
        if idle {
            // Starts service at once: never waits.
            self.first_waiting += 1;
        } else {
            self.waiting_bytes += pkt.size as u64;
            let w = self.waiting_packets();
            if w > self.max_queue_packets {
                self.max_queue_packets = w;
            }
            // The time-average queue is the integral of the waiting count
            // over the window, which is the sum over packets of the time
            // each waits in the window: this one waits from now to its
            // start, known now (FIFO at a fixed rate). Integer sums, so
            // exactly the piecewise integral it replaces.
            let wait = overlap(now, start, self.window) as u128;
            self.queue_packet_ps += wait;
            self.queue_byte_ps += wait * pkt.size as u128;
        }
        Enqueued::Accepted(if was_empty { Some(arrive) } else { None })
    }

    /// Removes the head packet, which reaches the far end at `now`; returns
    /// it, whether the loss model lost it on the way, and the arrival time of
    /// the next head, if any.
    #[inline(always)]
    pub fn pop_arrival(&mut self, now: Time) -> (Packet, bool, Option<Time>) {
        // The head started service before it arrived, so leaving does not
        // change the waiting set: only if the last advance predates the
        // head's start (it is still counted as waiting) must the link catch
        // up first.
        if self.first_waiting == 0 {
            self.advance(now);
        }
        let e = self.entries.pop_front().expect("link arrival event with an empty link");
        debug_assert_eq!(e.arrive, now);
        self.first_waiting -= 1;
        let next = self.entries.front().map(|h| h.arrive);
        // The entry after the new head is read at the next arrival: with
        // many links it would be a cache miss by then.
        if self.entries.len() > 1 {
            prefetch(self.entries.get(1));
        }
        if let Some(m) = self.loss.as_mut() {
            if m.lose() {
                self.losses += 1;
                self.lost_bytes += e.pkt.size as u64;
                self.lost_data += (e.pkt.kind == PacketKind::Data) as u64;
                return (e.pkt, true, next);
            }
        }
        (e.pkt, false, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet::data(0, 0, size, false)
    }

    #[test]
    fn fifo_timing_and_drop_tail() {
        // 1 Mbit/s: 1000 B take 8 ms; delay 10 ms; 1 waiting slot.
        let ms = 1_000_000_000u64;
        let mut l = Link::new(1e6, 10 * ms, Some(1), None, (0, 1000 * ms));
        assert!(matches!(l.enqueue(0, pkt(1000)), Enqueued::Accepted(Some(t)) if t == 18 * ms));
        assert!(matches!(l.enqueue(0, pkt(1000)), Enqueued::Accepted(None))); // waits
        assert!(matches!(l.enqueue(0, pkt(1000)), Enqueued::Dropped)); // queue full
        assert_eq!(l.waiting_packets(), 1);
        l.advance(8 * ms); // second starts service
        assert_eq!(l.waiting_packets(), 0);
        assert!(matches!(l.enqueue(8 * ms, pkt(1000)), Enqueued::Accepted(None)));
        let (_, lost, next) = l.pop_arrival(18 * ms);
        assert!(!lost);
        assert_eq!(next, Some(26 * ms));
        let (_, _, next) = l.pop_arrival(26 * ms);
        assert_eq!(next, Some(34 * ms));
        assert_eq!(l.stats().drops, 1);
        assert_eq!(l.stats().packets_in, 4);
        assert_eq!(l.stats().packets_out, 2);
        assert_eq!(l.stats().bytes_out, 2000);
        // Busy 24 ms in total.
        assert_eq!(l.stats().busy_in_window, 24 * ms as u128);
    }

    #[test]
    fn byte_limit_counts_waiting_bytes() {
        let mut l = Link::new(1e6, 0, None, Some(1500), (0, u64::MAX));
        assert!(matches!(l.enqueue(0, pkt(1000)), Enqueued::Accepted(_))); // in service
        assert!(matches!(l.enqueue(0, pkt(1000)), Enqueued::Accepted(_))); // waits: 1000 B
        assert!(matches!(l.enqueue(0, pkt(600)), Enqueued::Dropped)); // 1600 > 1500
        assert!(matches!(l.enqueue(0, pkt(500)), Enqueued::Accepted(_))); // 1500
    }

    #[test]
    fn queue_time_average_is_exact() {
        // Three packets at t=0 on an idle 1 Mbit/s link: waiting 2 for 8 ms, 1 for 8 ms.
        let ms = 1_000_000_000u64;
        let mut l = Link::new(1e6, 0, None, None, (0, 100 * ms));
        for _ in 0..3 {
            l.enqueue(0, pkt(1000));
        }
        l.advance(100 * ms);
        assert_eq!(l.stats().queue_packet_ps, (2 * 8 * ms + 8 * ms) as u128);
    }
}
