//! A link: a drop-tail FIFO queue feeding a transmitter of fixed rate, then a
//! propagation delay line.
//!
//! Because service is FIFO at a fixed rate, a packet's whole future on the
//! link is known when it is accepted: it starts serializing when the one
//! before it has finished (`start = max(now, busy_until)`), leaves the
//! transmitter at `depart = start + size/rate` and reaches the far end at
//! `arrive = depart + delay`. The link therefore keeps one deque of accepted
//! packets in order, which is both the queue and the delay line, and only the
//! arrival of its head needs an event. Each entry also holds the arrival time
//! of the entry after it (see [`InLink`]), so the head's arrival schedules the
//! next one without reading the next entry. Queue occupancy at time t (packets
//! waiting, i.e. accepted with `start > t`) is brought up to date lazily by
//! [`Link::advance`], when a drop decision or a sample needs it. The
//! time-averaged queue statistics need no such walk: the integral of the
//! waiting count over the window is the sum of each packet's wait within
//! the window, and a packet's wait (`start - now`) is known when it is
//! accepted.

use super::loss::LossModel;
use super::packet::{Packet, PacketKind};
use crate::sim::time::{serialization_time, Time, PS_PER_SEC};

/// A packet on a link, and what comes after it: the arrival time and the
/// tag (for the world, the route) of the next packet on the link, written
/// into this entry when that one is accepted. So an arrival reads one entry,
/// its own, and learns when the link's next arrival is and where that
/// packet goes without reading the next entry: with thousands of links
/// that entry was written a link's delay ago and is a cache miss, which the
/// next event's scheduling (and everything after it) waited for. A
/// packet's own arrival time is the event's; the waiting cursor keeps the
/// service start of the packet it is on ([`Link`]'s `wait_start`).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct InLink {
    seq: u64,
    /// Arrival of the next entry (0 until one is pushed).
    next_arrive: Time,
    sack: u32,
    pos: u32,
    /// Tag of the next entry (0 until one is pushed).
    next_tag: u32,
    size: u16,
    kind: PacketKind,
    /// The packet's retransmit bit, ECN codepoint and TCP flags, packed
    /// in one byte as in [`Packet`].
    bits: u8,
}

const _: () = assert!(std::mem::size_of::<InLink>() == 32);
const _: () = assert!(crate::net::packet::tcp_flags::ALL < 32);

impl InLink {
    #[inline(always)]
    fn new(p: Packet) -> Self {
        InLink {
            seq: p.seq,
            next_arrive: 0,
            sack: p.sack,
            pos: p.pos,
            next_tag: 0,
            size: p.size,
            kind: p.kind,
            bits: p.bits,
        }
    }

    #[inline(always)]
    fn packet(&self) -> Packet {
        Packet { seq: self.seq, sack: self.sack, pos: self.pos, size: self.size, kind: self.kind, bits: self.bits }
    }
}

/// Entries per block: 31 of 32 bytes and the pointer to the next block
/// make 1 KiB. Crossing into the next block is a branch the predictor
/// misses (which link's FIFO crosses next is random with many links), so
/// larger blocks cross less: 512-byte blocks (15 entries) cost 7 % more
/// mispredicted branches and 4-6 % more time at 10,000 flows, 2 % on S1,
/// for no less memory (links hold one or two blocks either way).
const BLOCK: usize = 31;

/// A piece of a link's FIFO.
#[repr(C, align(64))]
pub struct Block {
    e: [InLink; BLOCK],
    next: *mut Block,
}

// SAFETY: a block is owned by one ring or one pool at a time; `next` only
// ever points to another block of the same ring.
unsafe impl Send for Block {}

/// The blocks of a run, shared by its links: a link takes one when its
/// last block fills and gives one back when its first empties, so a link's
/// memory follows the packets on it (at most two partly used blocks), and
/// the block a link takes is the one given back last, usually still in
/// cache. Nothing is allocated, filled or copied in steady state: link
/// FIFOs used to be rings per link, regrown (allocated, zero-filled,
/// copied) when a burst arrived and shrunk every 2^20 events; with 10,000
/// flows, tens of MB per 2^20 events.
///
/// Blocks are cut from chunks the pool owns. A new chunk is the power of
/// two at or above what the pool holds (64 KiB first, so the pool doubles),
/// at most 2 MiB, and chunks of
/// 2 MiB are backed by huge pages where the system allows
/// ([`crate::mem`]): with thousands of flows the packets in flight are the
/// largest state a run reads at random (26 MB with 10,000 flows), and with
/// 4 KiB pages nearly every read of one also missed the TLB, while a small
/// run (S1 needs about 60 blocks) is not made to clear a 2 MiB page. Chunks
/// are freed with the pool, or by [`BlockPool::trim`] when none of their
/// blocks was needed for a whole trim period, so a burst does not keep its
/// memory for good.
#[derive(Default)]
pub struct BlockPool {
    /// Free blocks; the last one given back is taken first.
    free: Vec<*mut Block>,
    /// Fewest free blocks since the last trim.
    low: usize,
    /// The chunks (address, bytes), by address.
    chunks: Vec<(*mut u8, usize)>,
    /// Bytes in chunks.
    held: usize,
}

// SAFETY: the pool owns its chunks; the blocks in them are owned by the pool
// (free) or by one ring of the same run.
unsafe impl Send for BlockPool {}

/// The first chunk's size.
const MIN_CHUNK: usize = 64 << 10;

impl BlockPool {
    #[inline]
    fn take(&mut self) -> *mut Block {
        if self.free.is_empty() {
            self.grow();
        }
        // SAFETY: not empty (grow adds a chunk's blocks).
        let b = unsafe { self.free.pop().unwrap_unchecked() };
        self.low = self.low.min(self.free.len());
        b
    }

    /// A new chunk's blocks, the lowest address on top.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let bytes = self.held.next_power_of_two().clamp(MIN_CHUNK, crate::mem::HUGE_PAGE);
        let c = crate::mem::alloc_chunk(bytes);
        let at = self.chunks.partition_point(|&(x, _)| x < c);
        self.chunks.insert(at, (c, bytes));
        self.held += bytes;
        let first = c as *mut Block;
        // SAFETY: the chunk holds `bytes / size_of::<Block>()` blocks (it is
        // aligned to its power-of-two size, at least 64 KiB). They are left
        // uninitialised: a ring writes an entry before it reads it, and a
        // block's `next` before it follows it.
        self.free.extend((0..bytes / std::mem::size_of::<Block>()).rev().map(|i| unsafe { first.add(i) }));
    }

    /// # Safety
    /// `b` came from this pool's [`BlockPool::take`] and is no longer used.
    #[inline]
    unsafe fn give(&mut self, b: *mut Block) {
        self.free.push(b);
    }

    /// Index in `chunks` of the chunk holding `b`.
    fn chunk_of(chunks: &[(*mut u8, usize)], b: *mut Block) -> usize {
        let i = chunks.partition_point(|&(x, _)| x as usize <= b as usize) - 1;
        debug_assert!((b as usize) < chunks[i].0 as usize + chunks[i].1, "a block of another pool");
        i
    }

    /// Frees the chunks none of whose blocks a link needed since the last
    /// trim (called now and then by the world, not per packet): at most as
    /// many blocks as stayed free all along, in whole chunks that are
    /// entirely free.
    pub fn trim(&mut self) {
        let spare = self.low.min(self.free.len());
        if spare >= MIN_CHUNK / std::mem::size_of::<Block>() {
            let mut count = vec![0usize; self.chunks.len()];
            for &b in &self.free {
                count[Self::chunk_of(&self.chunks, b)] += 1;
            }
            let mut budget = spare;
            let release: Vec<bool> = count
                .iter()
                .zip(&self.chunks)
                .map(|(&n, &(_, bytes))| {
                    let blocks = bytes / std::mem::size_of::<Block>();
                    let r = n == blocks && blocks <= budget;
                    budget -= if r { blocks } else { 0 };
                    r
                })
                .collect();
            if release.contains(&true) {
                let chunks = &self.chunks;
                self.free.retain(|&b| !release[Self::chunk_of(chunks, b)]);
                let mut i = 0;
                let held = &mut self.held;
                self.chunks.retain(|&(c, bytes)| {
                    let r = release[i];
                    i += 1;
                    if r {
                        *held -= bytes;
                        // SAFETY: every block of the chunk is free, so no ring uses it.
                        unsafe { crate::mem::free_chunk(c, bytes) };
                    }
                    !r
                });
            }
        }
        self.low = self.free.len();
    }

    /// Free blocks held.
    pub fn len(&self) -> usize {
        self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.free.is_empty()
    }

    /// Chunks held (free blocks and blocks in use).
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Bytes held in chunks.
    pub fn bytes(&self) -> usize {
        self.held
    }
}

impl Drop for BlockPool {
    fn drop(&mut self) {
        for &(c, bytes) in &self.chunks {
            // SAFETY: the pool outlives the rings of its run (they are
            // dropped first or never used again), so nothing uses the chunk.
            unsafe { crate::mem::free_chunk(c, bytes) };
        }
    }
}

/// FIFO of the packets on a link: a chain of blocks from the run's
/// [`BlockPool`], with a cursor on the first packet that has not started
/// service. Positions are a block and an index in it; `BLOCK` means past
/// the block's end, i.e. the start of the next. The head is normalized
/// (index below `BLOCK`) when not empty; the tail is where the next entry
/// goes. Empty, the ring holds no block.
#[derive(Debug)]
struct Ring {
    head_blk: *mut Block,
    tail_blk: *mut Block,
    /// Block of entry `waiting` (valid while `waiting < len`).
    wait_blk: *mut Block,
    len: u32,
    /// Index from the front of the first packet that has not started
    /// service (`len` if none).
    waiting: u32,
    head_off: u16,
    tail_off: u16,
    wait_off: u16,
}

// SAFETY: a ring owns its blocks; nothing else points into them. Their
// memory belongs to the run's [`BlockPool`], which frees it: a ring needs no
// drop, and must not be used after its pool is gone.
unsafe impl Send for Ring {}

impl Ring {
    fn new() -> Self {
        let null = std::ptr::null_mut();
        Ring {
            head_blk: null,
            tail_blk: null,
            wait_blk: null,
            len: 0,
            waiting: 0,
            head_off: 0,
            tail_off: 0,
            wait_off: 0,
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

    /// Appends `e`, which arrives at `arrive` with tag `tag` (both written
    /// into the entry before it); if `cursor`, the waiting cursor is set
    /// on it.
    #[inline(always)]
    fn push_back(&mut self, e: InLink, arrive: Time, tag: u32, pool: &mut BlockPool, cursor: bool) {
        if self.len > 0 {
            // SAFETY: not empty, so the last entry is at tail_off - 1 (>= 0)
            // of the live tail block.
            unsafe {
                let prev = (*self.tail_blk).e.get_unchecked_mut(self.tail_off as usize - 1);
                prev.next_arrive = arrive;
                prev.next_tag = tag;
            }
        }
        if self.tail_off as usize == BLOCK || self.tail_blk.is_null() {
            self.new_tail(pool);
        }
        // SAFETY: the tail block is live and tail_off < BLOCK. Written through
        // a raw pointer: a fresh block is uninitialised, so no reference to
        // its entries is made before they are written.
        unsafe { std::ptr::addr_of_mut!((*self.tail_blk).e).cast::<InLink>().add(self.tail_off as usize).write(e) };
        if cursor {
            self.wait_blk = self.tail_blk;
            self.wait_off = self.tail_off;
        }
        self.tail_off += 1;
        self.len += 1;
    }

    #[inline(never)]
    fn new_tail(&mut self, pool: &mut BlockPool) {
        let b = pool.take();
        if self.tail_blk.is_null() {
            self.head_blk = b;
            self.head_off = 0;
        } else {
            // SAFETY: the tail block is live.
            unsafe { (*self.tail_blk).next = b };
        }
        self.tail_blk = b;
        self.tail_off = 0;
    }

    /// Removes the first entry (the ring is not empty, and the waiting
    /// cursor is not on it).
    #[inline(always)]
    fn pop_front(&mut self, pool: &mut BlockPool) -> InLink {
        assert!(self.len > 0, "link arrival event with an empty link");
        debug_assert!(self.waiting > 0);
        // SAFETY: not empty, so the head is a live, normalized position; a
        // block is given back once no entry of it remains (the cursor, past
        // the head, is not in it).
        unsafe {
            let e = *(*self.head_blk).e.get_unchecked(self.head_off as usize);
            self.len -= 1;
            self.waiting -= 1;
            self.head_off += 1;
            if self.len == 0 {
                pool.give(self.head_blk);
                self.head_blk = std::ptr::null_mut();
                self.tail_blk = std::ptr::null_mut();
            } else if self.head_off as usize == BLOCK {
                let b = self.head_blk;
                self.head_blk = (*b).next;
                self.head_off = 0;
                if self.wait_blk == b {
                    // The cursor was past the end of this block.
                    self.wait_blk = self.head_blk;
                    self.wait_off = 0;
                }
                pool.give(b);
            }
            e
        }
    }

    #[inline]
    fn front(&self) -> Option<&InLink> {
        // SAFETY: not empty, so the head is live and normalized.
        (self.len > 0).then(|| unsafe { (*self.head_blk).e.get_unchecked(self.head_off as usize) })
    }

    /// The first entry that has not started service (`waiting < len`).
    #[inline(always)]
    fn first_waiting(&mut self) -> &InLink {
        debug_assert!(self.waiting < self.len);
        // SAFETY: entry `waiting` exists, so the block after a full one does.
        unsafe {
            if self.wait_off as usize == BLOCK {
                self.wait_blk = (*self.wait_blk).next;
                self.wait_off = 0;
            }
            (*self.wait_blk).e.get_unchecked(self.wait_off as usize)
        }
    }

    /// Moves the waiting cursor to the next entry.
    #[inline(always)]
    fn started(&mut self) {
        self.waiting += 1;
        self.wait_off += 1;
    }

    /// Every entry has started service (the cursor is set again by the
    /// next push that waits).
    #[inline(always)]
    fn all_started(&mut self) {
        self.waiting = self.len;
    }

    fn iter(&self) -> impl Iterator<Item = &InLink> {
        let (mut b, mut off) = (self.head_blk, self.head_off as usize);
        (0..self.len).map(move |_| {
            // SAFETY: len entries from the head are live.
            unsafe {
                if off == BLOCK {
                    b = (*b).next;
                    off = 0;
                }
                let e = (*b).e.get_unchecked(off);
                off += 1;
                e
            }
        })
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
    /// Packets marked CE by the queue discipline (0 without one).
    pub marks: u64,
    /// Of `drops`, those the discipline's AQM decided (not its limit).
    pub aqm_drops: u64,
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
/// 0. what an arrival touches (the FIFO, the loss model) and what every
///    enqueue reads first;
/// 1. what every enqueue updates (counters, busy time);
/// 2. what only an enqueue onto a busy link (one that queues) touches;
/// 3. losses and configuration read off the common path.
///
/// So an arrival touches one line and an enqueue onto an idle link two
/// (the measurement window, the same for every link, comes with
/// [`LinkShared`]). Per-packet counters are kept on the enqueue side only:
/// what left the link is what was accepted less what was lost and what is
/// still on it, computed when [`Link::stats`] is asked (the same integers
/// the departures would have summed).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    // Line 0.
    entries: Ring,
    /// One-entry cache of the last serialization time: a link carries one or
    /// two packet sizes (data one way, ACKs the other), so this nearly always hits.
    ser_cache_size: u32,
    /// Where the head packet goes after this link, for the tournament
    /// tree's event loop (the radix heap's events carry it; see
    /// `World::link_arrival`): set by the world when it schedules the
    /// head's arrival. In what was padding.
    pub(crate) route: u32,
    busy_until: Time,
    loss: Option<Box<LossModel>>,
    // Line 1.
    pub delay: Time,
    /// Service start of the first waiting packet (valid while one waits).
    wait_start: Time,
    ser_cache_time: Time,
    /// Packets offered to the queue.
    packets_in: u64,
    /// Bytes and data packets accepted.
    accepted_bytes: u64,
    accepted_data: u64,
    waiting_bytes: u64,
    /// At most the run's duration, under 2^61 ps.
    busy_in_window: u64,
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

/// What every link of a run uses: the free blocks and the measurement
/// window `[start, end]`.
#[derive(Default)]
pub struct LinkShared {
    pub pool: BlockPool,
    pub window: (Time, Time),
}

const _: () = assert!(std::mem::size_of::<Link>() == 256);
const _: () = assert!(std::mem::offset_of!(Link, loss) < 64 && std::mem::offset_of!(Link, delay) == 64);

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
    pub fn new(rate_bps: f64, delay: Time, limit_packets: Option<u64>, limit_bytes: Option<u64>) -> Self {
        Link {
            rate_bps,
            delay,
            ps_per_byte: 8.0 * PS_PER_SEC as f64 / rate_bps,
            ser_cache_time: 0,
            wait_start: 0,
            ser_cache_size: 0,
            route: 0,
            limit_packets: limit_packets.unwrap_or(u64::MAX),
            limit_bytes: limit_bytes.unwrap_or(u64::MAX),
            entries: Ring::new(),
            waiting_bytes: 0,
            busy_until: 0,
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
            bytes_on += e.size as u64;
            data_on += (e.kind == PacketKind::Data) as u64;
        }
        let accepted = self.packets_in - self.drops;
        LinkStats {
            packets_in: self.packets_in,
            packets_out: accepted - self.losses - self.entries.len() as u64,
            busy_in_window: self.busy_in_window as u128,
            bytes_out: self.accepted_bytes - self.lost_bytes - bytes_on,
            data_packets_out: self.accepted_data - self.lost_data - data_on,
            losses: self.losses,
            drops: self.drops,
            max_queue_packets: self.max_queue_packets,
            queue_packet_ps: self.queue_packet_ps,
            queue_byte_ps: self.queue_byte_ps,
            marks: 0,
            aqm_drops: 0,
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
        (self.entries.len - self.entries.waiting) as u64
    }

    /// Packets waiting at `now`, the one in service excluded (for the drop
    /// trace; kept out of line, as the trace is).
    #[inline(never)]
    pub fn waiting_packets_at(&mut self, now: Time) -> u64 {
        self.advance(now);
        self.waiting_packets()
    }

    #[inline]
    pub fn waiting_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    /// Packets on the link: waiting, serializing or propagating.
    pub fn packets_in_link(&self) -> u64 {
        self.entries.len() as u64
    }

    pub fn packets(&self) -> impl Iterator<Item = Packet> + '_ {
        self.entries.iter().map(|e| e.packet())
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
        // The check needs no entry: the first waiting packet's start is
        // kept. A packet that waited starts when the one before it leaves
        // the transmitter, so the next start is this one's plus its
        // serialization, and every packet from the cursor on waited (one
        // that did not was counted as started when it was accepted).
        while self.entries.waiting < self.entries.len && self.wait_start <= now {
            let size = self.entries.first_waiting().size;
            self.waiting_bytes -= size as u64;
            // Saturating: see `enqueue`.
            self.wait_start = self.wait_start.saturating_add(self.ser_of(size as u32));
            self.entries.started();
        }
    }

    /// When the packet accepted last starts onto the wire (its service
    /// start: it departs one serialization time later). For a packet
    /// capture, right after [`Link::enqueue`] accepted it.
    pub(crate) fn last_start(&self) -> Time {
        self.busy_until.saturating_sub(self.ser_cache_time)
    }

    /// Offers `pkt` to the queue at `now` (drop-tail); `tag` comes back
    /// with its arrival time, from the arrival before it (see [`InLink`]).
    ///
    /// Crate-only, as [`Link::pop_arrival`]: a link's FIFO lives in blocks
    /// of the pool in `shared`, so every call for a link must pass the same
    /// `LinkShared`, and the link must not be used once that is dropped.
    /// `World` holds one per run, beside its links.
    #[inline(always)]
    pub(crate) fn enqueue(&mut self, now: Time, pkt: Packet, tag: u32, shared: &mut LinkShared) -> Enqueued {
        self.packets_in += 1;
        let idle = self.busy_until <= now;
        if idle {
            // Everything accepted has started service: nothing waits, and no
            // need to walk the packets to find that out.
            self.entries.all_started();
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
        let ser = if self.ser_cache_size == pkt.size as u32 {
            self.ser_cache_time
        } else {
            let t = serialization_time(pkt.size as u32, self.ps_per_byte);
            self.ser_cache_size = pkt.size as u32;
            self.ser_cache_time = t;
            t
        };
        debug_assert_eq!(ser, self.ser_of(pkt.size as u32));
        // Behind an unlimited queue, `busy_until` adds up the serialization
        // of every packet waiting, which can pass 2^64 ps on a slow link.
        // Saturating is exact: every time past 2^62 ps is after the end of
        // any run (spec::limits::MAX_SPAN_PS), so such a packet never leaves
        // within it either way, and every statistic below is clipped to the
        // measurement window, which ends before then.
        let depart = start.saturating_add(ser);
        self.busy_until = depart;
        let window = shared.window;
        self.busy_in_window += overlap(start, depart, window);
        self.accepted_bytes += pkt.size as u64;
        self.accepted_data += (pkt.kind == PacketKind::Data) as u64;
        let arrive = depart.saturating_add(self.delay);
        let was_empty = self.entries.is_empty();
        // A packet that waits gets the cursor if it is the first to.
        let first_to_wait = !idle && self.entries.waiting == self.entries.len;
        self.entries.push_back(InLink::new(pkt), arrive, tag, &mut shared.pool, first_to_wait);
        if first_to_wait {
            self.wait_start = start;
        }
        if idle {
            // Starts service at once: never waits.
            self.entries.waiting += 1;
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
            let wait = overlap(now, start, window) as u128;
            self.queue_packet_ps += wait;
            self.queue_byte_ps += wait * pkt.size as u128;
        }
        Enqueued::Accepted(if was_empty { Some(arrive) } else { None })
    }

    /// Removes the head packet, which reaches the far end at `now`; returns
    /// it, whether the loss model lost it on the way, and the arrival time and
    /// tag of the next head, if any (from the head's entry: the next one is
    /// not read).
    #[inline(always)]
    pub(crate) fn pop_arrival(&mut self, now: Time, shared: &mut LinkShared) -> (Packet, bool, Option<(Time, u32)>) {
        // The head started service before it arrived, so leaving does not
        // change the waiting set: only if the last advance predates the
        // head's start (it is still counted as waiting) must the link catch
        // up first.
        if self.entries.waiting == 0 {
            self.advance(now);
        }
        let e = self.entries.pop_front(&mut shared.pool);
        let next = self.entries.front().map(|h| {
            // The new head is read at its arrival: on a busy link soon,
            // when this hint has brought it in.
            prefetch(h);
            (e.next_arrive, e.next_tag)
        });
        if let Some(m) = self.loss.as_mut() {
            if m.lose() {
                self.losses += 1;
                self.lost_bytes += e.size as u64;
                self.lost_data += (e.kind == PacketKind::Data) as u64;
                return (e.packet(), true, next);
            }
        }
        (e.packet(), false, next)
    }
}

#[cfg(test)]
mod tests;
