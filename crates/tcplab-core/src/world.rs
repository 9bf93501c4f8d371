//! One run: the network, the flows and the event loop that drives them.

use std::time::Instant;

use crate::cc;
use crate::error::SpecError;
use crate::net::loss::LossModel;
use crate::net::packet::SackStore;
use crate::net::qdisc::{self, DropReason};
use crate::net::qlink::QdiscLink;
use crate::net::{routing, Enqueued, FirstHop, Link, LinkShared, Packet, PacketKind};
use crate::results::{FileResult, FlowResult, LinkResult, RunMeta, RunResults};
use crate::sim::event::LANES;
use crate::sim::rng::{self, StreamKind};
use crate::sim::time::{from_secs, to_secs, Time};
use crate::sim::{EventKind, EventQueue};
use crate::source::Source;
use crate::spec::{AppSpec, Recovery, RunSpec, SourceEcn};
use crate::tcp::{Receiver, SegmentMap, Sender, SenderConfig};
use crate::trace::{
    CcSeries, DropCause, DropTrace, FlowSeries, PacketTrace, QdiscSeries, QueueSeries, RetransmitTrace,
};

struct Flow {
    sender: Sender,
    /// An unresponsive source (`app` cbr or on_off) sends instead of the
    /// sender, and the receiver only counts what arrives.
    source: Option<Box<Source>>,
    receiver: Receiver,
    map: SegmentMap,
    data_dropped: u64,
    acks_dropped: u64,
    /// Sorted segments whose first transmission is lost (scripted loss).
    drop_segments: Vec<u64>,
    data_lost: u64,
    acks_lost: u64,
    delivered_at_measure_start: u64,
    /// Per file (in segment order): when its first segment was first sent
    /// and when the sender got the cumulative ACK of its last segment.
    file_first_sent: Vec<Option<Time>>,
    file_acked: Vec<Option<Time>>,
    /// Next file whose first send / last ACK is awaited.
    file_send_cursor: usize,
    file_ack_cursor: usize,
}

/// End of a path in `World::path_links`: the entry after a path's last
/// link is `PATH_END | flow`, with `PATH_ACK` set on the reverse (ACK)
/// path, so the entry after the link a packet is on says where it goes
/// next: another link, or flow `entry & FLOW_MASK`'s receiver (data) or
/// sender (ACKs). Runs are limited to 2^29 links (the radix heap's event
/// word, [`crate::sim::event::LINK_MASK`]) and 2^30 flows.
const PATH_END: u32 = 1 << 31;
const PATH_ACK: u32 = 1 << 30;
const FLOW_MASK: u32 = PATH_ACK - 1;

/// `World::qlink_of` of a link without a queue discipline.
const NO_QDISC: u32 = u32::MAX;

/// The `LANES` links on the most paths (ties to the lower index), for the
/// radix heap's lanes (`EventQueue::set_lanes`): with one bottleneck, its
/// two directions. Any choice gives the same results; this one saves most.
fn busiest_links<'a>(n: usize, paths: impl Iterator<Item = &'a Vec<u32>>) -> [u32; LANES] {
    let mut on = vec![0u64; n];
    for p in paths {
        for &l in p {
            on[l as usize] += 1;
        }
    }
    let mut by = (0..n as u32).collect::<Vec<_>>();
    by.sort_by_key(|&l| (std::cmp::Reverse(on[l as usize]), l));
    std::array::from_fn(|j| by.get(j).copied().unwrap_or(u32::MAX))
}

/// Refuses more links or flows than an event word and a path's end entry
/// can name (2^29 and 2^30).
fn check_counts(links: usize, flows: usize) -> Result<(), SpecError> {
    if links as u64 > crate::sim::event::LINK_MASK + 1 {
        return Err(SpecError::new("links".into(), format!("too many links: at most 2^29, got {links}")));
    }
    if flows as u64 > FLOW_MASK as u64 + 1 {
        return Err(SpecError::new("flows".into(), format!("too many flows: at most 2^30, got {flows}")));
    }
    Ok(())
}

/// The inputs of flow `f`'s Linux receiver ACK engine. Its RTT estimate is
/// the one a Linux receiver holds: a pure receiver sends no data, so its
/// `srtt_us` is the handshake's single sample, the round trip of a
/// header-only (`ack_size`) packet over the idle path, propagation plus
/// serialization; its RTO follows from that one sample as in
/// `tcp_rtt_estimator` + `__tcp_set_rto`: srtt + max(2 srtt, min_rto),
/// capped at max_rto.
fn linux_ack_config(spec: &RunSpec, f: &crate::spec::FlowSpec, paths: &[Vec<u32>; 2]) -> crate::tcp::LinuxAckConfig {
    let idle_rtt: f64 = paths
        .iter()
        .flatten()
        .map(|&l| {
            let l = &spec.links[l as usize];
            l.delay + f.ack_size as f64 * 8.0 / l.rate_bps
        })
        .sum();
    let rto = (idle_rtt + (2.0 * idle_rtt).max(f.min_rto)).min(f.max_rto);
    crate::tcp::LinuxAckConfig {
        ato_min: from_secs(f.delack_min),
        delack_max: from_secs(f.delack_max),
        max_quickacks: f.quickacks,
        window_quickacks: f.rwnd_packets.map_or(u32::MAX, |w| (w / 2).min(u32::MAX as u64) as u32),
        srtt: from_secs(idle_rtt),
        rto: from_secs(rto),
    }
}

/// A simulation built from a [`RunSpec`], ready to run.
pub struct World {
    spec: RunSpec,
    now: Time,
    end: Time,
    measure_start: Time,
    sample_interval: Time,
    events: EventQueue,
    links: Vec<Link>,
    /// The links' free blocks and the measurement window.
    link_shared: LinkShared,
    /// Some link has a queue discipline: only then is `qlink_of` looked
    /// at, so drop-tail runs pay one predictable branch per packet-hop.
    any_qdisc: bool,
    /// Some link has a queue discipline or is captured (`RunSpec::pcap`):
    /// only then is `detour` looked at. The fast path's one branch per
    /// packet-hop, shared by both.
    any_detour: bool,
    /// Per link: it has a discipline or is captured, so its packets take
    /// [`World::detour_enqueue`].
    detour: Vec<bool>,
    /// Per link: captured (`RunSpec::pcap`).
    captured: Vec<bool>,
    /// The packets of the captured links, when some are.
    capture: Option<Box<PacketTrace>>,
    /// Per link, the index in `qlinks` of its discipline link, or
    /// `NO_QDISC` (the fast FIFO in `links`).
    qlink_of: Vec<u32>,
    qlinks: Vec<QdiscLink>,
    flows: Vec<Flow>,
    traced_links: Vec<u32>,
    /// Some flow has scripted losses (`drop_segments`).
    scripted_loss: bool,
    /// Every flow's forward (data) and reverse (ACK) path, as link indices,
    /// one after the other, each followed by [`PATH_END`]; each endpoint
    /// keeps where its path starts ([`FirstHop`]). A packet carries its position in this array
    /// (`Packet::pos`), so forwarding it at a router reads the entry after
    /// it: one small dense array, not the flow nor its path's bounds.
    path_links: Vec<u32>,
    scratch: Vec<Packet>,
    /// SACK blocks of the ACKs on the wire.
    sacks: SackStore,
    flow_ts: FlowSeries,
    queue_ts: QueueSeries,
    cc_ts: CcSeries,
    cc_vars: Vec<(&'static str, f64)>,
    qdisc_ts: QdiscSeries,
    /// Every drop and loss, when the run traces them (`RunSpec::loss_trace`).
    drop_trace: Option<Box<DropTrace>>,
    wall_s: f64,
    finished: bool,
}

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

    /// Validates the description, resolves routes and algorithms.
    pub fn new(spec: RunSpec) -> Result<Self, SpecError> {
        spec.validate()?;
        check_counts(spec.links.len(), spec.flows.len())?;
        let paths = routing::resolve_paths(&spec)?;
        // Refuse what would exhaust memory before allocating any of it.
        crate::estimate::check_memory(&crate::estimate::estimate_with_paths(&spec, &paths))?;
        let end = from_secs(spec.duration);
        let measure_start = from_secs(spec.measure_start);
        let window = (measure_start, end);
        // Huge pages where the system gives them (crate::mem): with 10,000
        // flows, 40,000 links (10 MB) read at random.
        let mut links: Vec<Link> = crate::mem::huge_vec(spec.links.len());
        links.extend(spec.links.iter().enumerate().map(|(i, l)| {
            let loss = l.loss.clone().map(|m| LossModel::new(m, rng::stream(spec.seed, StreamKind::Link, i as u64)));
            Link::new(l.rate_bps, from_secs(l.delay), l.queue.limit_packets, l.queue.limit_bytes).with_loss(loss)
        }));
        let mut qlink_of = vec![NO_QDISC; spec.links.len()];
        let mut qlinks = Vec::new();
        for (i, l) in spec.links.iter().enumerate() {
            if l.queue.discipline.is_some() {
                let field = format!("links[{i}].queue");
                let q =
                    qdisc::build(&l.queue, l.rate_bps, rng::stream(spec.seed, StreamKind::Qdisc, i as u64), &field)?;
                let loss =
                    l.loss.clone().map(|m| LossModel::new(m, rng::stream(spec.seed, StreamKind::Link, i as u64)));
                qlink_of[i] = qlinks.len() as u32;
                qlinks.push(QdiscLink::new(q, l.rate_bps, from_secs(l.delay), loss));
            }
        }
        let mut events = EventQueue::with_links(links.len());
        for (l, &qi) in qlink_of.iter().enumerate() {
            if let Some(dt) = qlinks.get(qi as usize).and_then(|q: &QdiscLink| q.qdisc.update_interval()) {
                events.schedule(dt, EventKind::QdiscTimer(l as u32));
            }
        }
        if events.is_radix() {
            events.set_lanes(busiest_links(links.len(), paths.iter().flatten()));
        }
        // Huge pages as for the links: 912 bytes a flow, read at random.
        let mut flows = crate::mem::huge_vec(spec.flows.len());
        let mut path_links = Vec::new();
        for (i, (f, paths)) in spec.flows.iter().zip(paths).enumerate() {
            let mut hops = [FirstHop::default(); 2];
            for (dir, p) in paths.iter().enumerate() {
                let pos = path_links.len() as u32;
                debug_assert!(!p.is_empty() && p.iter().all(|&l| (l as u64) <= crate::sim::event::LINK_MASK));
                path_links.extend_from_slice(p);
                path_links.push(PATH_END | (dir as u32) << 30 | i as u32);
                if path_links.len() > u32::MAX as usize {
                    return Err(SpecError::new(
                        "flows".into(),
                        "too many flows: their paths exceed 2^32 link entries".into(),
                    ));
                }
                hops[dir] = FirstHop { pos, link: p[0], route: path_links[pos as usize + 1] };
            }
            let cc = cc::build(&f.cc, &format!("flows[{i}].cc"))?;
            let cfg = SenderConfig::from_flow(i as u32, f);
            if cc.controls_window() && f.recovery != Recovery::Sack {
                return Err(SpecError::new(
                    format!("flows[{i}].recovery"),
                    format!("{} sets the window from delivery-rate samples and needs recovery = \"sack\" (or profile = \"linux\"), got {}", f.cc.algorithm, serde_json::to_string(&f.recovery).unwrap_or_default()),
                ));
            }
            let classifier = match &f.loss_classifier {
                Some(lc) => Some(cc::knn::build(lc, &format!("flows[{i}].loss_classifier"))?),
                None => None,
            };
            let map = SegmentMap::new(f);
            let n_files = map.files.as_ref().map_or(0, |v| v.len());
            let mut receiver = Receiver::new(
                i as u32,
                f.recovery == Recovery::Sack,
                f.sack_blocks,
                f.ack_size,
                f.delayed_ack,
                from_secs(f.delack_timeout),
                n_files,
            )
            .with_dsack(f.dsack);
            if f.ack_policy == crate::spec::AckPolicy::Linux {
                receiver = receiver.with_linux_acks(linux_ack_config(&spec, f, &paths));
            }
            events.schedule(from_secs(f.start), EventKind::FlowStart(i as u32));
            if let Some(files) = &map.files {
                for (k, file) in files.iter().enumerate() {
                    events.schedule(file.start, EventKind::FileStart(i as u32, k as u32));
                }
            }
            let mut sender = Sender::new(cfg, cc);
            sender.classifier = classifier;
            if spec.loss_trace {
                sender.rtx_trace = Some(Vec::new());
            }
            (sender.first_hop, receiver.first_hop) = (hops[0], hops[1]);
            if let AppSpec::Cbr { rate_bps, .. } | AppSpec::OnOff { rate_bps, .. } = f.app {
                // A source faster than its first link, behind an unlimited
                // queue, would pile packets up without bound (and exhaust
                // memory): refused.
                let first = &spec.links[paths[0][0] as usize];
                if rate_bps > first.rate_bps && first.queue.limit_packets.is_none() && first.queue.limit_bytes.is_none()
                {
                    return Err(SpecError::new(
                        format!("flows[{i}].app.rate_bps"),
                        format!(
                            "{rate_bps} bit/s exceeds the {} bit/s of the flow's first link {:?}, whose queue is unlimited: the packets would pile up without bound; lower the rate or give that link a queue limit",
                            first.rate_bps, first.name
                        ),
                    ));
                }
            }
            let source = match f.app {
                AppSpec::Cbr { rate_bps, ecn } => Some((rate_bps, ecn, None)),
                AppSpec::OnOff { rate_bps, on, off, exponential, ecn } => {
                    Some((rate_bps, ecn, Some((on, off, exponential))))
                }
                _ => None,
            }
            .map(|(rate, ecn, on_off)| {
                let ecn = match ecn {
                    SourceEcn::NotEct => crate::net::Ecn::NotEct,
                    SourceEcn::Ect0 => crate::net::Ecn::Ect0,
                    SourceEcn::Ect1 => crate::net::Ecn::Ect1,
                };
                Box::new(Source::new(
                    rate,
                    f.packet_size,
                    ecn,
                    on_off,
                    rng::stream(spec.seed, StreamKind::Source, i as u64),
                ))
            });
            flows.push(Flow {
                sender,
                source,
                receiver,
                map,
                data_dropped: 0,
                acks_dropped: 0,
                drop_segments: {
                    let mut d = f.drop_segments.clone();
                    d.sort_unstable();
                    d.dedup();
                    d
                },
                data_lost: 0,
                acks_lost: 0,
                delivered_at_measure_start: 0,
                file_first_sent: vec![None; n_files],
                file_acked: vec![None; n_files],
                file_send_cursor: 0,
                file_ack_cursor: 0,
            });
        }
        let traced_links: Vec<u32> = match &spec.trace_links {
            Some(names) => names.iter().map(|n| spec.links.iter().position(|l| &l.name == n).unwrap() as u32).collect(),
            None => spec
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| {
                    l.queue.limit_packets.is_some() || l.queue.limit_bytes.is_some() || l.queue.discipline.is_some()
                })
                .map(|(i, _)| i as u32)
                .collect(),
        };
        let sample_interval = from_secs(spec.sample_interval);
        let (mut flow_ts, mut queue_ts) = (FlowSeries::default(), QueueSeries::default());
        if sample_interval > 0 {
            let n = (end / sample_interval + 1) as usize;
            // try_reserve: an allocation the estimate let through can still
            // fail on a machine with less memory; that is an error, not an abort.
            let no_memory = |what: &str, rows: usize| {
                SpecError::new(
                    "sample_interval".into(),
                    format!("cannot allocate the {what} time series ({rows} rows): out of memory; use a longer sample_interval"),
                )
            };
            let rows = n.saturating_mul(flows.len());
            flow_ts = FlowSeries::try_with_capacity(rows).ok_or_else(|| no_memory("flow", rows))?;
            let rows = n.saturating_mul(traced_links.len());
            queue_ts = QueueSeries::try_with_capacity(rows).ok_or_else(|| no_memory("queue", rows))?;
            events.schedule(0, EventKind::Sample);
        }
        events.schedule(measure_start, EventKind::MeasureStart);
        let scripted_loss = spec.flows.iter().any(|f| !f.drop_segments.is_empty());
        let drop_trace = spec.loss_trace.then(Box::<DropTrace>::default);
        let mut captured = vec![false; spec.links.len()];
        for n in &spec.pcap {
            captured[spec.links.iter().position(|l| &l.name == n).unwrap()] = true;
        }
        let detour: Vec<bool> = captured.iter().zip(&qlink_of).map(|(&c, &q)| c || q != NO_QDISC).collect();
        let capture = (!spec.pcap.is_empty()).then(|| {
            let limit = spec.pcap_limit.unwrap_or(crate::spec::limits::DEFAULT_PCAP_LIMIT);
            Box::new(PacketTrace { limit, ..Default::default() })
        });
        Ok(World {
            spec,
            now: 0,
            end,
            measure_start,
            sample_interval,
            events,
            links,
            link_shared: LinkShared { window, ..Default::default() },
            any_qdisc: !qlinks.is_empty(),
            any_detour: detour.iter().any(|&d| d),
            detour,
            captured,
            capture,
            qlink_of,
            qlinks,
            flows,
            traced_links,
            scripted_loss,
            path_links,
            scratch: Vec::with_capacity(64),
            sacks: SackStore::default(),
            flow_ts,
            queue_ts,
            cc_ts: CcSeries::default(),
            cc_vars: Vec::new(),
            qdisc_ts: QdiscSeries::default(),
            drop_trace,
            wall_s: 0.0,
            finished: false,
        })
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
            if s.rto_event.map_or(true, |e| d < e) {
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
            if r.delack_event.map_or(true, |e| d < e) {
                r.delack_event = Some(d);
                self.events.schedule_in::<R>(d, EventKind::DelayedAck(f));
            }
        }
    }

    /// The flow whose path has position `pos`: the one its end entry names.
    /// Off the per-hop path (drops, losses, results), so a walk is fine.
    fn flow_of(&self, mut pos: u32) -> u32 {
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

    /// Results of the run (call after [`World::run`]); copies the sampled
    /// series (see [`World::into_results`] to move them instead).
    pub fn results(&self) -> RunResults {
        let mut r = self.summary();
        r.flow_ts = self.flow_ts.clone();
        r.queue_ts = self.queue_ts.clone();
        r.cc_ts = self.cc_ts.clone();
        r.qdisc_ts = self.qdisc_ts.clone();
        r.drop_trace = self.drop_trace.as_deref().cloned().unwrap_or_default();
        r.packet_trace = self.packet_trace(self.capture.as_deref().cloned());
        r.retransmit_trace = self.retransmit_trace();
        r
    }

    /// The packet capture without the packets that would start onto their
    /// link's wire only after the end of the run (a fast link records a
    /// packet when it accepts it).
    fn packet_trace(&self, c: Option<PacketTrace>) -> Option<PacketTrace> {
        c.map(|mut c| {
            c.cut_at(self.end);
            c
        })
    }

    /// The flows' retransmissions merged into one table in time order (ties
    /// by flow).
    fn retransmit_trace(&self) -> RetransmitTrace {
        let mut rows: Vec<(Time, u32, u64, u8, u64)> = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            for &(t, seq, cause, outstanding) in fl.sender.rtx_trace.iter().flatten() {
                rows.push((t, i as u32, seq, cause as u8, outstanding));
            }
        }
        rows.sort_by_key(|&(t, f, ..)| (t, f)); // stable: a flow's own order stays
        let mut tr = RetransmitTrace::default();
        for (t, f, seq, cause, outstanding) in rows {
            tr.time.push(to_secs(t));
            tr.flow.push(f);
            tr.seq.push(seq);
            tr.cause.push(cause);
            tr.outstanding.push(outstanding);
        }
        tr
    }

    /// Results of the run, moving the sampled series out rather than copying
    /// them (a long traced run would otherwise peak at twice their size).
    pub fn into_results(mut self) -> RunResults {
        let mut r = self.summary();
        r.flow_ts = std::mem::take(&mut self.flow_ts);
        r.queue_ts = std::mem::take(&mut self.queue_ts);
        r.cc_ts = std::mem::take(&mut self.cc_ts);
        r.qdisc_ts = std::mem::take(&mut self.qdisc_ts);
        r.drop_trace = self.drop_trace.take().map(|t| *t).unwrap_or_default();
        let capture = self.capture.take().map(|c| *c);
        r.packet_trace = self.packet_trace(capture);
        r.retransmit_trace = self.retransmit_trace();
        r
    }

    /// Every result but the sampled series.
    fn summary(&self) -> RunResults {
        let window = to_secs(self.end - self.measure_start);
        let mut in_net = vec![[0u64; 2]; self.flows.len()];
        for (i, l) in self.links.iter().enumerate() {
            let packets: Vec<Packet> = match self.qlink_of[i] {
                NO_QDISC => l.packets().collect(),
                qi => self.qlinks[qi as usize].packets(),
            };
            for p in packets {
                in_net[self.flow_of(p.pos) as usize][(p.kind == PacketKind::Ack) as usize] += 1;
            }
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let fs = &self.spec.flows[i];
                let s = &fl.sender;
                let r = &fl.receiver;
                let rtt = &s.rtt;
                let nan_if_none = |x: f64| if rtt.samples > 0 { x } else { f64::NAN };
                let at_start =
                    if self.finished || self.now >= self.measure_start { fl.delivered_at_measure_start } else { 0 };
                FlowResult {
                    id: i as u32,
                    name: fs.name.clone(),
                    src: fs.src.clone(),
                    dst: fs.dst.clone(),
                    algorithm: match (&fl.source, &fs.app) {
                        (Some(_), AppSpec::Cbr { .. }) => "cbr".to_string(),
                        (Some(_), _) => "on_off".to_string(),
                        (None, _) => s.cc.name().to_string(),
                    },
                    recovery: match fs.recovery {
                        Recovery::Reno => "reno",
                        Recovery::NewReno => "newreno",
                        Recovery::Sack => "sack",
                    }
                    .to_string(),
                    goodput_bps: (r.delivered_bytes - at_start) as f64 * 8.0 / window,
                    bytes_delivered: r.delivered_bytes,
                    data_packets_sent: s.stats.data_sent,
                    retransmits: s.stats.retransmits,
                    timeouts: s.stats.timeouts,
                    fast_recoveries: s.stats.fast_recoveries,
                    loss_events: s.stats.loss_events,
                    loss_events_ignored: s.stats.loss_events_ignored,
                    data_packets_received: r.stats.data_received,
                    data_packets_dropped: fl.data_dropped,
                    data_packets_lost: fl.data_lost,
                    acks_lost: fl.acks_lost,
                    data_packets_in_network: in_net[i][0],
                    acks_sent: r.stats.acks_sent,
                    acks_received: s.stats.acks_received,
                    acks_dropped: fl.acks_dropped,
                    acks_in_network: in_net[i][1],
                    rtt_samples: rtt.samples,
                    rtt_min: nan_if_none(rtt.min_rtt),
                    rtt_mean: nan_if_none(rtt.sum / rtt.samples.max(1) as f64),
                    rtt_max: nan_if_none(rtt.max_rtt),
                    srtt: nan_if_none(rtt.srtt),
                    cwnd: s.w.cwnd,
                    ssthresh: s.w.ssthresh,
                    ecn: s.ecn.mode.name().to_string(),
                    ce_received: r.stats.ce_received,
                    ce_delivered: s.stats.ce_delivered,
                    ecn_reductions: s.stats.ecn_reductions,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let ls = &self.spec.links[i];
                let q = self.qdisc_link(i);
                let st = q.map_or_else(|| l.stats(), |q| q.link_stats());
                let wps = (self.end - self.measure_start) as f64;
                let sojourn = |x: f64| {
                    q.filter(|q| q.stats.sojourn.n > 0).map(|q| {
                        if x < 0.0 {
                            q.stats.sojourn.mean()
                        } else {
                            q.stats.sojourn.quantile(x)
                        }
                    })
                };
                LinkResult {
                    id: i as u32,
                    name: ls.name.clone(),
                    src: ls.src.clone(),
                    dst: ls.dst.clone(),
                    rate_bps: ls.rate_bps,
                    delay: ls.delay,
                    utilization: st.busy_in_window as f64 / wps,
                    packets_in: st.packets_in,
                    packets_out: st.packets_out,
                    drops: st.drops,
                    losses: st.losses,
                    packets_in_link: q.map_or_else(|| l.packets_in_link(), |q| q.packets_in_link()),
                    bytes_out: st.bytes_out,
                    data_packets_out: st.data_packets_out,
                    queue_mean_packets: st.queue_packet_ps as f64 / wps,
                    queue_max_packets: st.max_queue_packets,
                    queue_mean_bytes: st.queue_byte_ps as f64 / wps,
                    discipline: ls
                        .queue
                        .discipline
                        .as_deref()
                        .and_then(qdisc::canonical_name)
                        .unwrap_or("droptail")
                        .to_string(),
                    marks: st.marks,
                    aqm_drops: st.aqm_drops,
                    sojourn_mean: sojourn(-1.0),
                    sojourn_p50: sojourn(0.5),
                    sojourn_p95: sojourn(0.95),
                    sojourn_p99: sojourn(0.99),
                }
            })
            .collect();
        let mut files = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            if let (Some(fs), AppSpec::Files { files: spec_files }) = (&fl.map.files, &self.spec.flows[i].app) {
                let mut rows: Vec<FileResult> = fs
                    .iter()
                    .enumerate()
                    .map(|(k, f)| {
                        let start = spec_files[f.index].start.max(self.spec.flows[i].start);
                        let finish = fl.receiver.file_finish[k].map(to_secs);
                        let first_sent = fl.file_first_sent[k].map(to_secs);
                        let acked = fl.file_acked[k].map(to_secs);
                        FileResult {
                            flow: i as u32,
                            index: f.index as u32,
                            size: f.size,
                            start,
                            finish: finish.unwrap_or(f64::NAN),
                            fct: finish.map_or(f64::NAN, |t| t - start),
                            first_sent: first_sent.unwrap_or(f64::NAN),
                            acked: acked.unwrap_or(f64::NAN),
                            transfer_time: match (first_sent, acked) {
                                (Some(a), Some(b)) => b - a,
                                _ => f64::NAN,
                            },
                        }
                    })
                    .collect();
                rows.sort_by_key(|r| r.index);
                files.extend(rows);
            }
        }
        RunResults {
            flows,
            links,
            files,
            flow_ts: FlowSeries::default(),
            queue_ts: QueueSeries::default(),
            cc_ts: CcSeries::default(),
            qdisc_ts: QdiscSeries::default(),
            drop_trace: DropTrace::default(),
            retransmit_trace: RetransmitTrace::default(),
            packet_trace: None,
            meta: RunMeta {
                events: self.events.popped(),
                sim_time: to_secs(self.now),
                wall_s: self.wall_s,
                seed: self.spec.seed,
            },
        }
    }
}

/// Builds and runs `spec`, returning its results.
pub fn run(spec: RunSpec) -> Result<RunResults, SpecError> {
    let mut w = World::new(spec)?;
    w.run();
    Ok(w.into_results())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dumbbell long enough for several progress reports (2^20 events
    /// each); `flows` = 600 has more than `TREE_MAX_LINKS` links, so its
    /// queue is the radix heap, while one flow runs on the tree.
    fn long_world(flows: usize) -> World {
        let mut d = crate::scenarios::Dumbbell::new(flows, 100e6, 0.02, 200);
        d.duration = 40.0;
        d.measure_start = 0.0;
        let w = World::new(d.spec()).unwrap();
        assert_eq!(w.events.is_radix(), flows > 1, "the test must cover both event loops");
        w
    }

    /// Asked to stop at its first report, a run stops right there, on both
    /// event loops: 2^20 events done, simulated time short of the end, not
    /// finished; the progress callback is not called again.
    #[test]
    fn a_run_stops_when_progress_says_so() {
        for flows in [1, 600] {
            let mut w = long_world(flows);
            let mut calls = 0;
            let completed = w.run_or_stop(|_| {
                calls += 1;
                false
            });
            assert!(!completed, "flows = {flows}: {} events", w.events_done());
            assert_eq!(calls, 1);
            assert_eq!(w.events_done(), 1 << 20, "flows = {flows}");
            assert!(w.now() < w.end && !w.finished, "flows = {flows}");
        }
    }

    /// A run that is never asked to stop gives exactly what `run` gives.
    #[test]
    fn a_run_not_stopped_is_the_plain_run() {
        for flows in [1, 600] {
            let mut a = long_world(flows);
            a.run();
            let mut b = long_world(flows);
            let mut last = 0.0;
            assert!(b.run_or_stop(|f| {
                last = f;
                true
            }));
            assert_eq!(last, 1.0);
            assert_eq!(a.events_done(), b.events_done());
            let (ra, rb) = (a.into_results(), b.into_results());
            let goodput = |r: &RunResults| r.flows.iter().map(|f| f.goodput_bps.to_bits()).collect::<Vec<_>>();
            assert_eq!(goodput(&ra), goodput(&rb));
        }
    }

    /// Lanes go to the links on the most paths, ties to the lower index;
    /// with fewer links than lanes the rest name no link.
    #[test]
    fn lanes_go_to_the_busiest_links() {
        let paths = [vec![0, 4, 2], vec![3, 4, 1], vec![2, 4], vec![1, 2]];
        assert_eq!(busiest_links(5, paths.iter()), [2, 4]); // 3 paths each; 1 has 2
        let ties = [vec![3, 1], vec![1, 3], vec![0]];
        assert_eq!(busiest_links(4, ties.iter()), [1, 3]);
        assert_eq!(busiest_links(1, [vec![0]].iter()), [0, u32::MAX]);
    }

    /// The largest counts an event word and a path end entry hold pass;
    /// one more is refused, naming the field.
    #[test]
    fn link_and_flow_counts_are_bounded() {
        assert!(check_counts(1 << 29, 1 << 30).is_ok());
        let e = check_counts((1 << 29) + 1, 1).unwrap_err();
        assert_eq!(e.field, "links");
        assert!(e.message.contains("2^29"), "{}", e.message);
        let e = check_counts(1, (1 << 30) + 1).unwrap_err();
        assert_eq!(e.field, "flows");
        // The largest link index fits the event word's link bits, and the
        // largest flow index the end entry's flow bits.
        assert_eq!(((1u64 << 29) - 1) & crate::sim::event::LINK_MASK, (1 << 29) - 1);
        assert_eq!(PATH_END | PATH_ACK | ((1 << 30) - 1), u32::MAX);
    }
}
