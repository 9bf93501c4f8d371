//! The event loops (one for each kind of event queue) and the handlers
//! they dispatch to: packets over links and queue disciplines, timers,
//! sampling.

use std::time::Instant;

use super::{World, FLOW_MASK, NO_QDISC, PATH_ACK, PATH_END};
use crate::net::qdisc::DropReason;
use crate::net::qlink::QdiscLink;
use crate::net::{Enqueued, Link, LinkShared, Packet, PacketKind};
use crate::sim::time::{to_secs, Time};
use crate::sim::EventKind;
use crate::tcp::{Receiver, Sender};
use crate::trace::DropCause;

impl World {
    // Unchecked access on the per-packet path. Link indices come from
    // resolved paths and flow indices from packets the flows made, both
    // validated when the world is built; debug builds check them anyway.
    #[inline(always)]
    fn link_mut(&mut self, l: u32) -> (&mut Link, &mut LinkShared) {
        debug_assert!((l as usize) < self.links.len());
        // SAFETY: see above.
        (unsafe { self.links.get_unchecked_mut(l as usize) }, &mut self.link_shared)
    }

    #[inline(always)]
    fn path_link(&self, i: u32) -> u32 {
        debug_assert!((i as usize) < self.path_links.len());
        // SAFETY: path starts, and positions up to a path's end marker, lie
        // inside path_links.
        unsafe { *self.path_links.get_unchecked(i as usize) }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Runs to the end of the simulated duration.
    pub fn run(&mut self) {
        self.run_with_progress(|_| {});
    }

    /// Processes every event up to and including `t` (or the end of the run),
    /// so a test or a driver can look at the endpoints as the run unfolds.
    /// Memory is trimmed every 2^20 events, as in [`World::run`]; the time
    /// taken is not added to the run's `wall_s`.
    pub fn run_until(&mut self, t: Time) {
        let t = t.min(self.end);
        if self.events.is_radix() {
            self.radix_loop(t, Some(&mut |_| true));
        } else {
            let mut next_trim = self.events.popped() + (1 << 20);
            while let Some(ev) = self.events.take_tree_until(t) {
                self.now = ev.time;
                self.dispatch::<false>(ev.kind);
                if self.events.popped() >= next_trim {
                    next_trim += 1 << 20;
                    self.trim();
                }
            }
        }
        self.now = t;
    }

    /// Events handled so far.
    pub fn events_done(&self) -> u64 {
        self.events.popped()
    }

    /// Each link's counters so far, in the spec's order of links.
    pub fn link_stats(&self) -> impl Iterator<Item = crate::net::LinkStats> + '_ {
        self.links.iter().enumerate().map(|(i, l)| self.qdisc_link(i).map_or_else(|| l.stats(), |q| q.link_stats()))
    }

    /// Link `i`'s discipline link, if it has a discipline.
    pub fn qdisc_link(&self, i: usize) -> Option<&QdiscLink> {
        match self.qlink_of[i] {
            NO_QDISC => None,
            q => Some(&self.qlinks[q as usize]),
        }
    }

    /// The event loop with the radix heap (`run_until` and
    /// `run_with_progress` have the tree's inline; see
    /// `EventQueue::is_radix`), up to `limit`; with `progress`, reports and
    /// trims every 2^20 events as `run_with_progress` does (`run_until`
    /// passes one that ignores the reports). Returns false, right after a
    /// report, if `progress` returned false (asked to stop).
    #[inline(never)]
    fn radix_loop(&mut self, limit: Time, mut progress: Option<&mut dyn FnMut(f64) -> bool>) -> bool {
        let mut next_report = self.events.popped() + (1 << 20);
        while let Some((time, k)) = self.events.take_radix_word_until(limit) {
            self.now = time;
            if k & 7 == 0 {
                self.link_arrival::<true>((k >> 3) as u32 & crate::sim::event::LINK_MASK as u32, (k >> 32) as u32);
            } else {
                let kind = self.events.unpack(k);
                self.dispatch::<true>(kind);
            }
            if self.events.popped() >= next_report {
                next_report += 1 << 20;
                if let Some(p) = progress.as_mut() {
                    let go_on = p(self.now as f64 / self.end as f64);
                    self.trim();
                    if !go_on {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Gives back the memory of send windows that shrank a lot since the
    /// last call, and the link blocks no link needed since then, so memory
    /// follows the current occupancy rather than the largest burst ever
    /// (with 10,000 flows that is the difference between megabytes and
    /// gigabytes). Called every 2^20 events: O(flows), negligible against a
    /// million events.
    fn trim(&mut self) {
        self.link_shared.pool.trim();
        for fl in &mut self.flows {
            fl.sender.trim();
        }
    }

    /// The sender of flow `f`.
    pub fn sender(&self, f: usize) -> &Sender {
        &self.flows[f].sender
    }

    /// The receiver of flow `f`.
    pub fn receiver(&self, f: usize) -> &Receiver {
        &self.flows[f].receiver
    }

    /// Runs to the end, calling `progress(fraction of simulated time done)`
    /// now and then (about every million events).
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(f64)) {
        self.run_or_stop(|f| {
            progress(f);
            true
        });
    }

    /// Runs to the end as [`World::run_with_progress`] does, unless
    /// `progress` returns false: then it stops there (within 2^20 events,
    /// a few tens of milliseconds of wall time) and returns false, and the
    /// run is left unfinished (its results are not to be used). This is how
    /// a caller polls for an interrupt (Ctrl-C) at no cost per event: the
    /// loops already count events for the reports.
    pub fn run_or_stop(&mut self, mut progress: impl FnMut(f64) -> bool) -> bool {
        let t0 = Instant::now();
        let mut next_report = self.events.popped() + (1 << 20);
        let completed = if self.events.is_radix() {
            self.radix_loop(self.end, Some(&mut progress))
        } else {
            // the tree's loop inline, as before (see `radix_loop`)
            let mut go_on = true;
            while let Some(ev) = self.events.take_tree_until(self.end) {
                self.now = ev.time;
                self.dispatch::<false>(ev.kind);
                if self.events.popped() >= next_report {
                    next_report += 1 << 20;
                    go_on = progress(self.now as f64 / self.end as f64);
                    self.trim();
                    if !go_on {
                        break;
                    }
                }
            }
            go_on
        };
        if !completed {
            self.wall_s += t0.elapsed().as_secs_f64();
            return false;
        }
        self.now = self.end;
        for l in &mut self.links {
            l.advance(self.end);
        }
        let window = self.link_shared.window;
        for q in &mut self.qlinks {
            q.finish(self.end, window);
        }
        self.finished = true;
        self.wall_s += t0.elapsed().as_secs_f64();
        progress(1.0);
        true
    }

    /// Handles one event. `R`: the queue is the radix heap. Each event loop
    /// has its own copy of the handlers, so the radix heap's push is
    /// inlined into its loop (7 % fewer instructions at 10,000 flows) while
    /// the tree's loop compiles as before.
    #[inline(always)]
    fn dispatch<const R: bool>(&mut self, kind: EventKind) {
        match kind {
            EventKind::LinkArrival(l) => {
                debug_assert!(!R, "the radix loop takes link arrivals with their route");
                self.link_arrival::<R>(l, 0)
            }
            EventKind::Rto(f) => self.rto_event::<R>(f),
            EventKind::DelayedAck(f) => self.delack_event::<R>(f),
            EventKind::Pace(f) => {
                let fl = &mut self.flows[f as usize];
                fl.sender.pace_event = None;
                fl.sender.transmit(self.now, &fl.map, &mut self.scratch);
                self.flush::<R>(f);
            }
            EventKind::FlowStart(f) if self.flows[f as usize].source.is_some() => {
                let t = self.flows[f as usize].source.as_mut().unwrap().start(self.now);
                self.events.schedule_in::<R>(t, EventKind::SourceSend(f));
            }
            EventKind::SourceSend(f) => {
                let fl = &mut self.flows[f as usize];
                let (p, next) = fl.source.as_mut().unwrap().send(self.now);
                fl.sender.stats.data_sent += 1;
                self.scratch.push(p);
                self.flush::<R>(f);
                if next < self.end {
                    self.events.schedule_in::<R>(next, EventKind::SourceSend(f));
                }
            }
            EventKind::FlowStart(f) => {
                let fl = &mut self.flows[f as usize];
                fl.sender.started = true;
                if fl.map.files.is_none() {
                    fl.sender.app_limit = u64::MAX;
                }
                fl.sender.transmit(self.now, &fl.map, &mut self.scratch);
                self.flush::<R>(f);
            }
            EventKind::FileStart(f, k) => {
                let fl = &mut self.flows[f as usize];
                let end = fl.map.files.as_ref().unwrap()[k as usize].end;
                fl.sender.app_limit = fl.sender.app_limit.max(end);
                fl.sender.transmit(self.now, &fl.map, &mut self.scratch);
                self.flush::<R>(f);
            }
            EventKind::Sample => self.sample(),
            EventKind::MeasureStart => {
                for fl in &mut self.flows {
                    fl.delivered_at_measure_start = fl.receiver.delivered_bytes;
                }
            }
            EventKind::LinkService(l) => self.start_service::<R>(l),
            EventKind::QdiscArrival(l) => self.qdisc_arrival::<R>(l),
            EventKind::QdiscTimer(l) => {
                let q = &mut self.qlinks[self.qlink_of[l as usize] as usize];
                q.qdisc.on_timer(self.now);
                let dt = q.qdisc.update_interval().expect("a timer of a discipline with an update interval");
                self.events.schedule_in::<R>(self.now + dt, EventKind::QdiscTimer(l));
            }
        }
    }

    /// Puts the packets a flow's endpoint produced on the first link of their
    /// path and brings the flow's timers up to date.
    fn flush<const R: bool>(&mut self, f: u32) {
        for i in 0..self.scratch.len() {
            let p = self.scratch[i];
            if self.scripted_loss && p.kind == PacketKind::Data && !p.retransmit() {
                let fl = &mut self.flows[f as usize];
                if fl.drop_segments.binary_search(&p.seq).is_ok() {
                    fl.data_lost += 1;
                    if self.drop_trace.is_some() {
                        let link = fl.sender.first_hop.link;
                        let queue = self.queue_now(link);
                        self.trace_drop(&p, f, link, DropCause::Scripted, queue);
                    }
                    continue;
                }
            }
            debug_assert!((f as usize) < self.flows.len());
            // SAFETY: flow indices come from the flows themselves.
            let fl = unsafe { self.flows.get_unchecked(f as usize) };
            let hop = if p.kind == PacketKind::Ack { fl.receiver.first_hop } else { fl.sender.first_hop };
            debug_assert_eq!(hop.route, self.path_link(hop.pos + 1));
            let mut p = p;
            p.pos = hop.pos;
            self.enqueue_routed::<R>(hop.link, p, hop.route);
        }
        self.scratch.clear();
        let now = self.now;
        debug_assert!((f as usize) < self.flows.len());
        // SAFETY: flow indices come from the flows themselves.
        let fl = unsafe { self.flows.get_unchecked_mut(f as usize) };
        if let Some(files) = &fl.map.files {
            // Transfer-time bookkeeping: files occupy consecutive segment
            // ranges, so one cursor each suffices.
            let s = &fl.sender;
            while fl.file_send_cursor < files.len() && s.high_data > files[fl.file_send_cursor].first {
                fl.file_first_sent[fl.file_send_cursor] = Some(now);
                fl.file_send_cursor += 1;
            }
            while fl.file_ack_cursor < files.len() && s.snd_una >= files[fl.file_ack_cursor].end {
                fl.file_acked[fl.file_ack_cursor] = Some(now);
                fl.file_ack_cursor += 1;
            }
        }
        let s = &mut fl.sender;
        if let Some(d) = s.rto_deadline {
            if s.rto_event.is_none_or(|e| d < e) {
                s.rto_event = Some(d);
                self.events.schedule_in::<R>(d, EventKind::Rto(f));
            }
        }
        if let Some(t) = s.pace_wanted.take() {
            if s.pace_event.is_none() {
                s.pace_event = Some(t.max(now));
                self.events.schedule_in::<R>(t.max(now), EventKind::Pace(f));
            }
        }
        let r = &mut fl.receiver;
        if let Some(d) = r.delack_deadline {
            if r.delack_event.is_none_or(|e| d < e) {
                r.delack_event = Some(d);
                self.events.schedule_in::<R>(d, EventKind::DelayedAck(f));
            }
        }
    }

    /// The flow whose path has position `pos`: the one its end entry names.
    /// Off the per-hop path (drops, losses, results), so a walk is fine.
    pub(super) fn flow_of(&self, mut pos: u32) -> u32 {
        loop {
            let e = self.path_link(pos);
            if e & PATH_END != 0 {
                return e & FLOW_MASK;
            }
            pos += 1;
        }
    }

    /// Offers `p` (its `pos` on `link`) to `link`. The packet's route after
    /// the link goes with it, for the event of its arrival.
    #[inline(always)]
    fn enqueue<const R: bool>(&mut self, link: u32, p: Packet) {
        let route = self.path_link(p.pos + 1);
        self.enqueue_routed::<R>(link, p, route)
    }

    /// [`World::enqueue`] with the packet's route after `link` known.
    #[inline(always)]
    fn enqueue_routed<const R: bool>(&mut self, link: u32, p: Packet, route: u32) {
        if self.any_detour && self.detour[link as usize] {
            return self.detour_enqueue::<R>(link, p, route);
        }
        let now = self.now;
        let (l, shared) = self.link_mut(link);
        match l.enqueue(now, p, route, shared) {
            Enqueued::Accepted(Some(t)) => self.schedule_arrival::<R>(t, link, route),
            Enqueued::Accepted(None) => {}
            Enqueued::Dropped => {
                let queue = l.waiting_packets();
                self.count_gone(&p, link, DropCause::Queue, queue)
            }
        }
    }

    /// [`World::enqueue_routed`] onto a link with a queue discipline or a
    /// captured fast link: a captured packet is recorded as it starts onto
    /// the wire, here when the FIFO accepts it (its start of service is
    /// known then), at [`World::start_service`] behind a discipline.
    #[inline(never)]
    fn detour_enqueue<const R: bool>(&mut self, link: u32, p: Packet, route: u32) {
        if self.qlink_of[link as usize] != NO_QDISC {
            return self.qdisc_enqueue::<R>(link, p, route);
        }
        // The fast path's enqueue, repeated here so that the capture stays
        // out of the copy in `enqueue_routed` that every packet-hop runs.
        let now = self.now;
        let (l, shared) = self.link_mut(link);
        match l.enqueue(now, p, route, shared) {
            Enqueued::Accepted(arrival) => {
                let start = l.last_start();
                if let Some(t) = arrival {
                    self.schedule_arrival::<R>(t, link, route);
                }
                self.capture_packet(link, &p, start);
            }
            Enqueued::Dropped => {
                let queue = l.waiting_packets();
                self.count_gone(&p, link, DropCause::Queue, queue)
            }
        }
    }

    /// Records the packet that discipline link `l` just started serving, if
    /// `l` is captured. Out of line, so that `start_service`, which the
    /// event loop inlines, stays as small as in a run without captures.
    #[cold]
    #[inline(never)]
    fn capture_started(&mut self, l: u32) {
        if self.captured[l as usize] {
            let p = *self.qlinks[self.qlink_of[l as usize] as usize].last_started().expect("the packet just started");
            self.capture_packet(l, &p, self.now);
        }
    }

    /// Records packet `p` starting onto captured link `link`'s wire at `t`
    /// (up to the run's `pcap_limit`; past it, counts it).
    #[cold]
    #[inline(never)]
    fn capture_packet(&mut self, link: u32, p: &Packet, t: Time) {
        let f = self.flow_of(p.pos);
        let sack = self.sacks.peek(p.sack);
        let map = &self.flows[f as usize].map;
        let Some(c) = self.capture.as_deref_mut() else { return };
        if c.len() as u64 >= c.limit {
            c.overflow += 1;
            return;
        }
        let ack = p.kind == PacketKind::Ack;
        c.time.push(t);
        c.link.push(link);
        c.flow.push(f);
        c.ack.push(ack);
        c.seq.push(p.seq);
        c.byte_seq.push(map.bytes_before(p.seq));
        c.payload.push(if ack { 0 } else { map.app_bytes(p.seq) });
        c.size.push(p.size as u32);
        c.retransmit.push(!ack && p.retransmit());
        c.ecn.push(p.ecn() as u8);
        c.tcp_flags.push(p.tcp_flags());
        c.sack_count.push(sack.n);
        for (s, e) in sack.ranges(p.seq) {
            c.sack_left.push(map.bytes_before(s));
            c.sack_right.push(map.bytes_before(e));
        }
    }

    /// [`World::enqueue_routed`] onto a link with a queue discipline.
    #[inline(never)]
    fn qdisc_enqueue<const R: bool>(&mut self, link: u32, p: Packet, route: u32) {
        let window = self.link_shared.window;
        let q = &mut self.qlinks[self.qlink_of[link as usize] as usize];
        let idle = q.enqueue(self.now, p, route, window);
        self.qdisc_drops(link);
        if idle {
            self.start_service::<R>(link);
        }
    }

    /// Accounts the packets link `link`'s discipline just dropped.
    fn qdisc_drops(&mut self, link: u32) {
        let qi = self.qlink_of[link as usize] as usize;
        if self.qlinks[qi].dropped.is_empty() {
            return;
        }
        let dropped = std::mem::take(&mut self.qlinks[qi].dropped);
        let queue = self.qlinks[qi].waiting_packets();
        for d in &dropped {
            let cause = if d.reason == DropReason::Aqm { DropCause::Aqm } else { DropCause::Queue };
            self.count_gone(&d.q.pkt, link, cause, queue);
        }
        self.qlinks[qi].dropped = dropped;
    }

    /// The transmitter of link `l` (with a discipline) is free: the next
    /// packet starts, its completion and (if the delay line was empty) its
    /// arrival are scheduled.
    fn start_service<const R: bool>(&mut self, l: u32) {
        let window = self.link_shared.window;
        let q = &mut self.qlinks[self.qlink_of[l as usize] as usize];
        let started = q.start_service(self.now, window);
        if self.capture.is_some() && started.is_some() {
            self.capture_started(l);
        }
        self.qdisc_drops(l);
        if let Some((depart, arrival)) = started {
            self.events.schedule_in::<R>(depart, EventKind::LinkService(l));
            if let Some(t) = arrival {
                self.events.schedule_in::<R>(t, EventKind::QdiscArrival(l));
            }
        }
    }

    /// The head packet of link `l` reaches the link's far end. Where it goes
    /// next (`route`, the entry of its path after `l`) was read when the
    /// link accepted it, and came with its arrival time (from the entry of
    /// the packet before it, or from the enqueue if the link was empty):
    /// the radix heap's events carry it (`ev_route`), the tree's loop finds
    /// it in the link's first line. Whether the packet goes on or is
    /// delivered, and where, is then known before the packet is read, which
    /// with thousands of links is a cache miss: the mispredicted branch
    /// resolves early and the next link's or flow's lines load alongside
    /// the packet (10,000 flows: 5-7 % less time). The next head's arrival
    /// and route come the same way, from the head's entry, so the next
    /// entry is not read here (another 5 %).
    #[inline(always)]
    fn link_arrival<const R: bool>(&mut self, l: u32, ev_route: u32) {
        let now = self.now;
        let (link, shared) = self.link_mut(l);
        let route = if R { ev_route } else { link.route };
        let (p, lost, next) = link.pop_arrival(now, shared);
        if let Some((t, r)) = next {
            self.schedule_arrival::<R>(t, l, r);
        }
        self.arrived::<R>(l, route, p, lost);
    }

    /// The head of link `l`'s delay line (a link with a discipline) reaches
    /// the far end: a heap event of its own (`QdiscArrival`), so the fast
    /// links' arrivals need no check for a discipline.
    fn qdisc_arrival<const R: bool>(&mut self, l: u32) {
        let q = &mut self.qlinks[self.qlink_of[l as usize] as usize];
        let (route, p, lost, next) = q.pop_arrival(self.now);
        if let Some(t) = next {
            self.events.schedule_in::<R>(t, EventKind::QdiscArrival(l));
        }
        self.arrived::<R>(l, route, p, lost);
    }

    /// Packet `p` came off link `l`, its route after it `route`: on to the
    /// next link, to its endpoint, or counted lost on the wire.
    #[inline(always)]
    fn arrived<const R: bool>(&mut self, l: u32, route: u32, mut p: Packet, lost: bool) {
        debug_assert_eq!(route, self.path_link(p.pos + 1));
        if lost {
            let queue = if self.drop_trace.is_some() { self.queue_now(l) } else { 0 };
            self.count_gone(&p, l, DropCause::Wire, queue);
        } else if route & PATH_END == 0 {
            p.pos += 1;
            self.enqueue::<R>(route, p);
        } else {
            self.deliver::<R>(route, p);
        }
    }

    /// Schedules the arrival at `t` of link `l`'s head packet, whose route
    /// (path entry after `l`) is `route`.
    #[inline(always)]
    fn schedule_arrival<const R: bool>(&mut self, t: Time, l: u32, route: u32) {
        if !R {
            self.link_mut(l).0.route = route;
        }
        self.events.schedule_link_routed::<R>(t, l, route);
    }

    /// Accounts a packet that will not arrive: dropped by `link`'s full queue
    /// or lost on its wire by the link's loss model, `queue` packets waiting
    /// there.
    #[inline(always)]
    fn count_gone(&mut self, p: &Packet, link: u32, cause: DropCause, queue: u64) {
        self.sacks.release(p.sack);
        let f = self.flow_of(p.pos);
        self.trace_drop(p, f, link, cause, queue);
        let dropped = matches!(cause, DropCause::Queue | DropCause::Aqm);
        let fl = &mut self.flows[f as usize];
        *match (p.kind, dropped) {
            (PacketKind::Data, true) => &mut fl.data_dropped,
            (PacketKind::Ack, true) => &mut fl.acks_dropped,
            (PacketKind::Data, false) => &mut fl.data_lost,
            (PacketKind::Ack, false) => &mut fl.acks_lost,
        } += 1;
    }

    /// Adds a row to the drop trace, if the run keeps one. The out-of-line
    /// push gets the trace, not `self` (docs/performance.md, "0.2.0's loss
    /// recovery").
    #[inline(always)]
    fn trace_drop(&mut self, p: &Packet, flow: u32, link: u32, cause: DropCause, queue: u64) {
        if let Some(t) = self.drop_trace.as_mut() {
            t.push(to_secs(self.now), link, flow, p, cause, queue);
        }
    }

    /// Packets waiting in link `l`'s queue now (the one in service excluded).
    #[inline(always)]
    fn queue_now(&mut self, l: u32) -> u64 {
        if self.any_qdisc && self.qlink_of[l as usize] != NO_QDISC {
            return self.qlinks[self.qlink_of[l as usize] as usize].waiting_packets();
        }
        let now = self.now;
        self.link_mut(l).0.waiting_packets_at(now)
    }

    /// Hands packet `p` to the endpoint that `end` (a path's end entry)
    /// names: a data packet to its flow's receiver, an ACK to its sender.
    #[inline(always)]
    fn deliver<const R: bool>(&mut self, end: u32, p: Packet) {
        let f = end & FLOW_MASK;
        debug_assert_eq!(f, self.flow_of(p.pos));
        debug_assert_eq!(end & PATH_ACK != 0, p.kind == PacketKind::Ack);
        debug_assert!((f as usize) < self.flows.len());
        // SAFETY: path end entries name flows of the run.
        let fl = unsafe { self.flows.get_unchecked_mut(f as usize) };
        if end & PATH_ACK == 0 && fl.source.is_some() {
            fl.receiver.stats.data_received += 1;
            fl.receiver.stats.ce_received += (p.ecn() == crate::net::Ecn::Ce) as u64;
            fl.receiver.delivered_bytes += fl.map.full as u64;
        } else if end & PATH_ACK == 0 {
            fl.receiver.on_segment(self.now, &p, &fl.sender.ecn, &fl.map, &mut self.sacks, &mut self.scratch);
        } else {
            let sack = self.sacks.take(p.sack);
            fl.sender.on_ack(self.now, &p, &sack, &fl.map, &mut self.scratch)
        }
        self.flush::<R>(f);
    }

    fn rto_event<const R: bool>(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.sender.rto_event != Some(now) {
            return; // superseded by an earlier deadline
        }
        fl.sender.rto_event = None;
        match fl.sender.rto_deadline {
            Some(d) if d <= now => fl.sender.on_timeout(now, &fl.map, &mut self.scratch),
            _ => {}
        }
        self.flush::<R>(f);
    }

    fn delack_event<const R: bool>(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.receiver.delack_event != Some(now) {
            return;
        }
        fl.receiver.delack_event = None;
        if let Some(ack) = fl.receiver.on_delack_timer(now, &mut self.sacks) {
            self.scratch.push(ack);
        }
        self.flush::<R>(f);
    }

    fn sample(&mut self) {
        let t = to_secs(self.now);
        for (i, fl) in self.flows.iter().enumerate() {
            let s = &fl.sender;
            self.flow_ts.time.push(t);
            self.flow_ts.flow.push(i as u32);
            self.flow_ts.cwnd.push(s.w.cwnd);
            self.flow_ts.ssthresh.push(s.w.ssthresh);
            self.flow_ts.srtt.push(if s.rtt.samples > 0 { s.rtt.srtt } else { f64::NAN });
            self.flow_ts.in_flight.push(s.in_flight());
            self.flow_ts.delivered_bytes.push(fl.receiver.delivered_bytes);
            self.cc_vars.clear();
            s.cc.trace_vars(&mut self.cc_vars);
            for &(name, v) in &self.cc_vars {
                let var = self.cc_ts.intern(name);
                self.cc_ts.time.push(t);
                self.cc_ts.flow.push(i as u32);
                self.cc_ts.variable.push(var);
                self.cc_ts.value.push(v);
            }
        }
        for &l in &self.traced_links {
            let (packets, bytes) = match self.qlink_of[l as usize] {
                NO_QDISC => {
                    let link = &mut self.links[l as usize];
                    link.advance(self.now);
                    (link.waiting_packets(), link.waiting_bytes())
                }
                qi => {
                    let q = &mut self.qlinks[qi as usize];
                    self.qdisc_ts.push(t, l, "sojourn_s", q.take_interval_sojourn());
                    self.cc_vars.clear();
                    q.qdisc.trace_vars(&mut self.cc_vars);
                    for &(name, v) in &self.cc_vars {
                        self.qdisc_ts.push(t, l, name, v);
                    }
                    (q.waiting_packets(), q.waiting_bytes())
                }
            };
            self.queue_ts.time.push(t);
            self.queue_ts.link.push(l);
            self.queue_ts.packets.push(packets);
            self.queue_ts.bytes.push(bytes);
        }
        let next = self.now + self.sample_interval;
        if next <= self.end {
            self.events.schedule(next, EventKind::Sample);
        }
    }
}
