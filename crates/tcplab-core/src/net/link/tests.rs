use super::*;

fn pkt(size: u32) -> Packet {
    Packet::data(0, size, false)
}

#[test]
fn fifo_timing_and_drop_tail() {
    // 1 Mbit/s: 1000 B take 8 ms; delay 10 ms; 1 waiting slot.
    let ms = 1_000_000_000u64;
    let mut sh = LinkShared { window: (0, 1000 * ms), ..Default::default() };
    let mut l = Link::new(1e6, 10 * ms, Some(1), None);
    assert!(matches!(l.enqueue(0, pkt(1000), 0, &mut sh), Enqueued::Accepted(Some(t)) if t == 18 * ms));
    assert!(matches!(l.enqueue(0, pkt(1000), 0, &mut sh), Enqueued::Accepted(None))); // waits
    assert!(matches!(l.enqueue(0, pkt(1000), 0, &mut sh), Enqueued::Dropped)); // queue full
    assert_eq!(l.waiting_packets(), 1);
    l.advance(8 * ms); // second starts service
    assert_eq!(l.waiting_packets(), 0);
    assert!(matches!(l.enqueue(8 * ms, pkt(1000), 0, &mut sh), Enqueued::Accepted(None)));
    let (_, lost, next) = l.pop_arrival(18 * ms, &mut sh);
    assert!(!lost);
    assert_eq!(next.map(|n| n.0), Some(26 * ms));
    let (_, _, next) = l.pop_arrival(26 * ms, &mut sh);
    assert_eq!(next.map(|n| n.0), Some(34 * ms));
    assert_eq!(l.stats().drops, 1);
    assert_eq!(l.stats().packets_in, 4);
    assert_eq!(l.stats().packets_out, 2);
    assert_eq!(l.stats().bytes_out, 2000);
    // Busy 24 ms in total.
    assert_eq!(l.stats().busy_in_window, 24 * ms as u128);
}

/// The block FIFO against a deque, with the waiting cursor, across
/// block boundaries, bursts and empty links; blocks go back to the pool.
#[test]
fn block_fifo_matches_a_deque() {
    use std::collections::VecDeque;
    let mut pool = BlockPool::default();
    let mut r = Ring::new();
    let mut model: VecDeque<u64> = VecDeque::new();
    let mut waiting = 0usize;
    let mut peak = 0usize;
    let (mut x, mut id) = (12345u64, 0u64);
    for step in 0..200_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let op = (x >> 33) % 100;
        // Bursts of pushes, then drains, so rings span many blocks.
        let push_bias = if (step / 5000) % 2 == 0 { 60 } else { 35 };
        let e = |id: u64| InLink::new(Packet::data(id, 1, false));
        // Arrival times and tags are functions of the id.
        let arrive = |id: u64| id * 7 + 3;
        let tag = |id: u64| (id * 13 + 1) as u32;
        if op < push_bias / 2 {
            // Onto an idle link: everything has started, and so does this.
            r.all_started();
            waiting = model.len();
            r.push_back(e(id), arrive(id), tag(id), &mut pool, false);
            r.waiting += 1;
            waiting += 1;
            model.push_back(id);
            id += 1;
        } else if op < push_bias {
            let first = waiting == model.len();
            r.push_back(e(id), arrive(id), tag(id), &mut pool, first);
            model.push_back(id);
            id += 1;
        } else if op < push_bias + 15 {
            if waiting < model.len() {
                assert_eq!(r.first_waiting().seq, model[waiting]);
                r.started();
                waiting += 1;
            }
        } else if !model.is_empty() {
            if waiting == 0 {
                assert_eq!(r.first_waiting().seq, model[0]);
                r.started();
                waiting += 1;
            }
            let h = r.pop_front(&mut pool);
            assert_eq!(h.seq, model.pop_front().unwrap());
            // The popped entry knows the next one's arrival and tag.
            if let Some(&n) = model.front() {
                assert_eq!((h.next_arrive, h.next_tag), (arrive(n), tag(n)));
            }
            waiting -= 1;
        }
        assert_eq!((r.len(), r.waiting as usize), (model.len(), waiting));
        peak = peak.max(model.len());
        assert_eq!(r.front().map(|e| e.seq), model.front().copied());
        if step % 997 == 0 {
            assert!(r.iter().map(|e| e.seq).eq(model.iter().copied()));
            pool.trim();
        }
    }
    // Every block is in the ring or free (none lost), and the pool holds
    // no more than twice the most the ring ever used, plus the first chunk.
    let block = std::mem::size_of::<Block>();
    let mut in_ring = 0;
    let mut b = r.head_blk;
    while !b.is_null() {
        in_ring += 1;
        // SAFETY: the ring's blocks from head to tail are live.
        b = if b == r.tail_blk { std::ptr::null_mut() } else { unsafe { (*b).next } };
    }
    assert_eq!(pool.bytes() / block, pool.len() + in_ring);
    // A chunk is added only when every block held is in use, and is at
    // most twice their size.
    assert!(pool.bytes() <= 3 * (peak / BLOCK + 2) * block + MIN_CHUNK, "{} B held, peak {peak} entries", pool.bytes());
}

/// Chunks double up to 2 MiB; they are freed only when every block of
/// theirs stayed free for a whole trim period, and never with a block
/// in use.
#[test]
fn trim_frees_whole_idle_chunks_only() {
    let block = std::mem::size_of::<Block>();
    let mut pool = BlockPool::default();
    // 64 + 64 + 128 + 256 KiB.
    let n = (512 << 10) / block;
    let taken: Vec<*mut Block> = (0..n).map(|_| pool.take()).collect();
    assert_eq!((pool.chunks(), pool.len(), pool.bytes()), (4, 0, 512 << 10));
    // Distinct blocks, 64-byte aligned.
    let mut sorted = taken.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), taken.len());
    assert!(taken.iter().all(|&b| (b as usize).is_multiple_of(64)));
    // Keep the first block taken (of the first chunk); give the rest back.
    let kept = taken[0];
    for &b in &taken[1..] {
        unsafe { pool.give(b) };
    }
    // The pool ran dry during this period: nothing was idle all along.
    pool.trim();
    assert_eq!(pool.chunks(), 4);
    // A whole period without takes: the three entirely free chunks go.
    pool.trim();
    assert_eq!((pool.chunks(), pool.bytes()), (1, 64 << 10));
    assert_eq!(pool.len(), (64 << 10) / block - 1);
    assert_eq!(BlockPool::chunk_of(&pool.chunks, kept), 0);
    // Blocks left are the kept chunk's, and usable.
    let b = pool.take();
    unsafe {
        (*b).next = kept;
        assert_eq!((*b).next, kept);
    }
    assert_eq!(BlockPool::chunk_of(&pool.chunks, b), 0);
    // Takes during a period keep the chunks they may need.
    unsafe { pool.give(b) };
    unsafe { pool.give(kept) };
    let again: Vec<*mut Block> = (0..10).map(|_| pool.take()).collect();
    for b in again {
        unsafe { pool.give(b) };
    }
    pool.trim(); // 10 of the chunk's blocks were needed
    assert_eq!(pool.chunks(), 1);
    // Growth doubles the pool, then goes on in 2 MiB chunks.
    let big: Vec<*mut Block> = (0..(8 << 20) / block).map(|_| pool.take()).collect();
    assert_eq!(pool.bytes(), 8 << 20);
    // 64 K (held before), 64 K, 128 K, 256 K, 512 K, 1 M, then 2 M three times.
    assert_eq!(pool.chunks(), 9);
    for b in big {
        unsafe { pool.give(b) };
    }
}

/// The next arrival an arrival reports is the next packet's, through
/// bursts, drops, idle spells and block boundaries; and every packet
/// arrives when a FIFO link at a fixed rate says.
#[test]
fn arrivals_report_the_next_packets_arrival() {
    use std::collections::VecDeque;
    let ms = 1_000_000_000u64;
    let mut sh = LinkShared { window: (0, u64::MAX), ..Default::default() };
    // 1 Mbit/s (1000 B take 8 ms), delay 30 ms, waiting places for
    // more than two blocks.
    let limit = 2 * BLOCK + 5;
    let mut l = Link::new(1e6, 30 * ms, Some(limit as u64), None);
    let ppb = l.ps_per_byte;
    let ser = |size: u32| serialization_time(size, ppb);
    // (arrival, service start, tag) of each packet on the link.
    let mut model: VecDeque<(Time, Time, u32)> = VecDeque::new();
    let (mut now, mut busy, mut x) = (0u64, 0u64, 99u64);
    let (mut pops, mut drops, mut longest) = (0, 0, 0);
    for step in 0..200_000u32 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Bursts (phases where three gaps in four are 0), and spells long
        // enough to empty the link.
        let burst = (step / 300) % 2 == 0 && x >> 62 != 0;
        let gap = if burst { 0 } else { (x >> 20) % (if x & 64 == 0 { 12 * ms } else { 60 * ms }) };
        match model.front() {
            Some(&(head, _, _)) if head <= now + gap => {
                now = head;
                let (_, lost, next) = l.pop_arrival(now, &mut sh);
                assert!(!lost);
                model.pop_front();
                assert_eq!(next, model.front().map(|m| (m.0, m.2)));
                pops += 1;
            }
            _ => {
                now += gap;
                let size = if x & 2 == 0 { 1000 } else { 40 };
                let waiting = model.iter().filter(|m| m.1 > now).count();
                let r = l.enqueue(now, pkt(size), step, &mut sh);
                if busy > now && waiting + 1 > limit {
                    assert!(matches!(r, Enqueued::Dropped));
                    drops += 1;
                    continue;
                }
                let start = busy.max(now);
                busy = start + ser(size);
                let arrive = busy + 30 * ms;
                let first = model.is_empty();
                model.push_back((arrive, start, step));
                longest = longest.max(model.len());
                match r {
                    Enqueued::Accepted(t) => assert_eq!(t, first.then_some(arrive)),
                    Enqueued::Dropped => panic!("dropped with {waiting} waiting"),
                }
            }
        }
    }
    // The run exercised what it is meant to.
    assert!(pops > 50_000 && drops > 1000 && longest > 2 * BLOCK, "{pops} pops, {drops} drops, {longest} at most");
}

#[test]
fn byte_limit_counts_waiting_bytes() {
    let mut sh = LinkShared { window: (0, u64::MAX), ..Default::default() };
    let mut l = Link::new(1e6, 0, None, Some(1500));
    assert!(matches!(l.enqueue(0, pkt(1000), 0, &mut sh), Enqueued::Accepted(_))); // in service
    assert!(matches!(l.enqueue(0, pkt(1000), 0, &mut sh), Enqueued::Accepted(_))); // waits: 1000 B
    assert!(matches!(l.enqueue(0, pkt(600), 0, &mut sh), Enqueued::Dropped)); // 1600 > 1500
    assert!(matches!(l.enqueue(0, pkt(500), 0, &mut sh), Enqueued::Accepted(_)));
    // 1500
}

#[test]
fn queue_time_average_is_exact() {
    // Three packets at t=0 on an idle 1 Mbit/s link: waiting 2 for 8 ms, 1 for 8 ms.
    let ms = 1_000_000_000u64;
    let mut sh = LinkShared { window: (0, 100 * ms), ..Default::default() };
    let mut l = Link::new(1e6, 0, None, None);
    for _ in 0..3 {
        l.enqueue(0, pkt(1000), 0, &mut sh);
    }
    l.advance(100 * ms);
    assert_eq!(l.stats().queue_packet_ps, (2 * 8 * ms + 8 * ms) as u128);
}
