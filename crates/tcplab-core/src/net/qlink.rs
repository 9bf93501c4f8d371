//! A link with a queue discipline: the discipline ([`Qdisc`]), a
//! transmitter of fixed rate and a delay line, the split of htsim and of
//! Linux (qdisc, NIC, wire).
//!
//! The fast drop-tail [`crate::net::Link`] decides a packet's whole future
//! when it is accepted. A discipline may drop or mark when the transmitter
//! asks for the next packet (CoDel, PIE's sojourn time, DualPI2), so here
//! nothing is decided ahead of time:
//!
//! - `enqueue`: the discipline keeps the packet, marks it or drops it (or
//!   another one); if the transmitter is idle it starts at once.
//! - The transmitter serializes one packet at a time; its completion is an
//!   event (`EventKind::LinkService`), at which the discipline is asked for
//!   the next packet (`dequeue`, which may drop on the way).
//! - A packet that starts service is put in the delay line with its arrival
//!   time `depart + delay`. The line is FIFO, so only its head's arrival is
//!   an event (`EventKind::LinkArrival`, as for the fast link), and the
//!   link's random loss model, if any, decides at arrival.
//!
//! Statistics: what the fast link counts, plus marks, drops decided by the
//! AQM apart from overflow drops, and each packet's sojourn time in the
//! queue (from enqueue to the start of its service), within the
//! measurement window, as a mean and a histogram with 1.6 % resolution for
//! percentiles.

use std::collections::VecDeque;

use super::loss::LossModel;
use super::packet::{Packet, PacketKind};
use super::qdisc::{Backlog, DropReason, Dropped, Qdisc, Queued};
use crate::sim::time::{serialization_time, Time, PS_PER_SEC};

/// Sojourn times as a log-linear histogram of nanoseconds: exact below 64
/// ns, then 64 buckets per power of two (each bucket within 1/64 = 1.6 %).
#[derive(Debug, Clone, Default)]
pub struct SojournHistogram {
    counts: Vec<u64>,
    pub n: u64,
    /// Sum of the sojourn times (ps).
    pub sum_ps: u128,
}

const SUB: u64 = 64;

impl SojournHistogram {
    fn bucket(ns: u64) -> usize {
        if ns < SUB {
            ns as usize
        } else {
            let e = 63 - ns.leading_zeros() as u64; // >= 6
            let m = (ns >> (e - 6)) - SUB; // 0..64
            (SUB + (e - 6) * SUB + m) as usize
        }
    }

    /// The lower edge of bucket `b` (ns) and its width.
    fn edges(b: usize) -> (f64, f64) {
        let b = b as u64;
        if b < SUB {
            (b as f64, 1.0)
        } else {
            let e = (b - SUB) / SUB + 6;
            let m = (b - SUB) % SUB + SUB;
            let w = (1u64 << (e - 6)) as f64;
            (m as f64 * w, w)
        }
    }

    pub fn add(&mut self, ps: Time) {
        let b = Self::bucket(ps / 1000);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.sum_ps += ps as u128;
    }

    /// Mean (seconds), NaN if empty.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum_ps as f64 / self.n as f64 / PS_PER_SEC as f64
        }
    }

    /// The `q`-quantile (0..=1, seconds), interpolated within its bucket;
    /// NaN if empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = (q.clamp(0.0, 1.0) * self.n as f64).max(0.5);
        let mut seen = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            if c > 0 && (seen + c) as f64 >= rank {
                let (lo, w) = Self::edges(b);
                let frac = ((rank - seen as f64) / c as f64).clamp(0.0, 1.0);
                return (lo + frac * w) * 1e-9;
            }
            seen += c;
        }
        let (lo, w) = Self::edges(self.counts.len() - 1);
        (lo + w) * 1e-9
    }
}

/// Counters of a link with a discipline (the fast link's, and more).
#[derive(Debug, Clone, Default)]
pub struct QdiscStats {
    pub packets_in: u64,
    /// Dropped at the queue: overflow and AQM.
    pub drops: u64,
    /// Of those, decided by the AQM (early drops), not the limit.
    pub aqm_drops: u64,
    pub losses: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub data_packets_out: u64,
    pub busy_in_window: u128,
    pub max_queue_packets: u64,
    pub queue_packet_ps: u128,
    pub queue_byte_ps: u128,
    /// Sojourn times of the packets that started service in the window.
    pub sojourn: SojournHistogram,
}

#[derive(Debug)]
pub struct QdiscLink {
    pub qdisc: Box<dyn Qdisc>,
    pub rate_bps: f64,
    ps_per_byte: f64,
    pub delay: Time,
    /// The transmitter is serializing a packet until `busy_until`.
    busy: bool,
    busy_until: Time,
    /// Packets that left the transmitter or are being serialized: (arrival
    /// at the far end, packet, route after the link).
    line: VecDeque<(Time, Packet, u32)>,
    loss: Option<LossModel>,
    /// Packets the discipline dropped in the last call.
    pub dropped: Vec<Dropped>,
    /// When the backlog integral was last brought up to date, and the
    /// backlog since then.
    last_change: Time,
    backlog: Backlog,
    pub stats: QdiscStats,
    /// Sojourn times of the packets that started service since the last
    /// sample (sum ps, count): the time series' mean sojourn.
    interval_sojourn: (u128, u64),
}

impl QdiscLink {
    pub fn new(qdisc: Box<dyn Qdisc>, rate_bps: f64, delay: Time, loss: Option<LossModel>) -> Self {
        QdiscLink {
            qdisc,
            rate_bps,
            ps_per_byte: 8.0 * PS_PER_SEC as f64 / rate_bps,
            delay,
            busy: false,
            busy_until: 0,
            line: VecDeque::new(),
            loss,
            dropped: Vec::new(),
            last_change: 0,
            backlog: Backlog::default(),
            stats: QdiscStats::default(),
            interval_sojourn: (0, 0),
        }
    }

    /// Adds the backlog held since the last change to the time integrals,
    /// within the measurement `window`.
    fn integrate(&mut self, now: Time, window: (Time, Time)) {
        let lo = self.last_change.max(window.0);
        let hi = now.min(window.1);
        if hi > lo {
            let dt = (hi - lo) as u128;
            self.stats.queue_packet_ps += dt * self.backlog.packets as u128;
            self.stats.queue_byte_ps += dt * self.backlog.bytes as u128;
        }
        self.last_change = now;
    }

    fn after_change(&mut self, now: Time, window: (Time, Time)) {
        self.backlog = self.qdisc.backlog();
        if now >= window.0 && now <= window.1 && self.backlog.packets > self.stats.max_queue_packets {
            self.stats.max_queue_packets = self.backlog.packets;
        }
    }

    fn count_drops(&mut self) {
        self.stats.drops += self.dropped.len() as u64;
        self.stats.aqm_drops += self.dropped.iter().filter(|d| d.reason == DropReason::Aqm).count() as u64;
    }

    /// Offers `p` (going to `route` after the link) at `now`. The packets
    /// the discipline dropped are in `self.dropped` afterwards; returns
    /// whether the transmitter was idle (the caller then starts it,
    /// [`QdiscLink::start_service`]).
    pub fn enqueue(&mut self, now: Time, p: Packet, route: u32, window: (Time, Time)) -> bool {
        self.stats.packets_in += 1;
        self.integrate(now, window);
        self.dropped.clear();
        self.qdisc.enqueue(now, Queued { pkt: p, route, enqueued: now }, &mut self.dropped);
        self.count_drops();
        self.after_change(now, window);
        !self.busy
    }

    /// The transmitter is free at `now`: takes the discipline's next packet
    /// (drops on the way are in `self.dropped`). Returns, if a packet
    /// started, when it leaves the transmitter (the service event) and, if
    /// the delay line was empty, its arrival time (the arrival event to
    /// schedule).
    pub fn start_service(&mut self, now: Time, window: (Time, Time)) -> Option<(Time, Option<Time>)> {
        debug_assert!(!self.busy || self.busy_until <= now);
        self.busy = false;
        self.integrate(now, window);
        self.dropped.clear();
        let next = self.qdisc.dequeue(now, &mut self.dropped);
        self.count_drops();
        self.after_change(now, window);
        let q = next?;
        let sojourn = q.sojourn(now);
        if now >= window.0 && now <= window.1 {
            self.stats.sojourn.add(sojourn);
        }
        self.interval_sojourn.0 += sojourn as u128;
        self.interval_sojourn.1 += 1;
        let depart = now + serialization_time(q.pkt.size as u32, self.ps_per_byte);
        let (lo, hi) = (now.max(window.0), depart.min(window.1));
        self.stats.busy_in_window += hi.saturating_sub(lo) as u128;
        self.busy = true;
        self.busy_until = depart;
        let arrive = depart + self.delay;
        let was_empty = self.line.is_empty();
        self.line.push_back((arrive, q.pkt, q.route));
        Some((depart, was_empty.then_some(arrive)))
    }

    /// The packet that [`QdiscLink::start_service`] started last (the tail
    /// of the delay line), for a packet capture.
    pub fn last_started(&self) -> Option<&Packet> {
        self.line.back().map(|(_, p, _)| p)
    }

    /// Removes the head of the delay line, which arrives at `now`: its
    /// route after the link, the packet, whether the loss model lost it,
    /// and the next head's arrival time.
    pub fn pop_arrival(&mut self, now: Time) -> (u32, Packet, bool, Option<Time>) {
        let (t, p, route) = self.line.pop_front().expect("link arrival event with an empty delay line");
        debug_assert_eq!(t, now);
        let next = self.line.front().map(|&(t, _, _)| t);
        let lost = self.loss.as_mut().is_some_and(|m| m.lose());
        if lost {
            self.stats.losses += 1;
        } else {
            self.stats.packets_out += 1;
            self.stats.bytes_out += p.size as u64;
            self.stats.data_packets_out += (p.kind == PacketKind::Data) as u64;
        }
        (route, p, lost, next)
    }

    /// The counters in the fast link's form.
    pub fn link_stats(&self) -> super::LinkStats {
        let st = &self.stats;
        super::LinkStats {
            packets_in: st.packets_in,
            packets_out: st.packets_out,
            busy_in_window: st.busy_in_window,
            bytes_out: st.bytes_out,
            data_packets_out: st.data_packets_out,
            losses: st.losses,
            drops: st.drops,
            max_queue_packets: st.max_queue_packets,
            queue_packet_ps: st.queue_packet_ps,
            queue_byte_ps: st.queue_byte_ps,
            marks: self.qdisc.marks(),
            aqm_drops: st.aqm_drops,
        }
    }

    /// Packets waiting in the discipline (the one being sent excluded).
    pub fn waiting_packets(&self) -> u64 {
        self.backlog.packets
    }

    pub fn waiting_bytes(&self) -> u64 {
        self.backlog.bytes
    }

    /// Packets on the link: waiting, serializing or propagating.
    pub fn packets_in_link(&self) -> u64 {
        self.backlog.packets + self.line.len() as u64
    }

    /// Every packet on the link, those the discipline holds included (for
    /// the end-of-run accounting).
    pub fn packets(&self) -> Vec<Packet> {
        let mut v: Vec<Packet> = self.line.iter().map(|&(_, p, _)| p).collect();
        self.qdisc.for_each(&mut |q| v.push(q.pkt));
        v
    }

    /// Brings the integrals up to `now` (the end of the run).
    pub fn finish(&mut self, now: Time, window: (Time, Time)) {
        self.integrate(now, window);
    }

    /// Mean sojourn time (seconds) of the packets that started service
    /// since the last call (NaN if none), for the time series.
    pub fn take_interval_sojourn(&mut self) -> f64 {
        let (sum, n) = std::mem::take(&mut self.interval_sojourn);
        if n == 0 {
            f64::NAN
        } else {
            sum as f64 / n as f64 / PS_PER_SEC as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::qdisc::droptail::DropTail;

    const MS: Time = 1_000_000_000;

    #[test]
    fn histogram_quantiles_within_a_bucket() {
        let mut h = SojournHistogram::default();
        for i in 1..=1000u64 {
            h.add(i * MS / 100); // 0.01 .. 10 ms
        }
        assert!((h.mean() - 5.005e-3).abs() < 1e-9);
        for q in [0.5, 0.9, 0.99] {
            let want = q * 10e-3;
            assert!((h.quantile(q) - want).abs() / want < 0.016, "q {q}: {} vs {want}", h.quantile(q));
        }
        assert!(SojournHistogram::default().quantile(0.5).is_nan());
    }

    #[test]
    fn transmitter_serializes_one_packet_at_a_time_and_the_line_delays() {
        // 1 Mbit/s: 1000 B take 8 ms; delay 10 ms.
        let w = (0, 1000 * MS);
        let mut l = QdiscLink::new(Box::new(DropTail::new(1, u64::MAX)), 1e6, 10 * MS, None);
        let p = Packet::data(0, 1000, false);
        assert!(l.enqueue(0, p, 7, w));
        assert_eq!(l.start_service(0, w), Some((8 * MS, Some(18 * MS))));
        assert!(!l.enqueue(MS, p, 7, w)); // busy: waits
        assert!(!l.enqueue(MS, p, 7, w)); // over the 1-packet limit
        assert_eq!(l.dropped.len(), 1);
        assert_eq!(l.waiting_packets(), 1);
        // Service done at 8 ms: the waiting packet starts (line not empty).
        assert_eq!(l.start_service(8 * MS, w), Some((16 * MS, None)));
        assert_eq!(l.stats.sojourn.n, 2);
        assert!((l.stats.sojourn.mean() - 3.5e-3).abs() < 1e-12); // (0 + 7 ms) / 2
        let (route, _, lost, next) = l.pop_arrival(18 * MS);
        assert!(!lost && route == 7);
        assert_eq!(next, Some(26 * MS));
        assert_eq!(l.start_service(16 * MS, w), None);
        l.finish(30 * MS, w);
        // One packet waited from 1 ms to 8 ms.
        assert_eq!(l.stats.queue_packet_ps, 7 * MS as u128);
        assert_eq!(l.stats.busy_in_window, 16 * MS as u128);
        assert_eq!((l.stats.packets_in, l.stats.drops, l.stats.aqm_drops), (3, 1, 0));
    }
}
