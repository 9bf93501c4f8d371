//! Building a [`World`] from a [`RunSpec`]: validation, links, paths, flows
//! and the event queue.

use super::{Flow, World, FLOW_MASK, NO_QDISC, PATH_END};
use crate::cc;
use crate::error::SpecError;
use crate::net::loss::LossModel;
use crate::net::packet::SackStore;
use crate::net::qdisc::{self};
use crate::net::qlink::QdiscLink;
use crate::net::{routing, FirstHop, Link, LinkShared};
use crate::sim::event::LANES;
use crate::sim::rng::{self, StreamKind};
use crate::sim::time::from_secs;
use crate::sim::{EventKind, EventQueue};
use crate::source::Source;
use crate::spec::{AppSpec, Recovery, RunSpec, SourceEcn};
use crate::tcp::{Receiver, SegmentMap, Sender, SenderConfig};
use crate::trace::{CcSeries, DropTrace, FlowSeries, PacketTrace, QdiscSeries, QueueSeries};

/// The `LANES` links on the most paths (ties to the lower index), for the
/// radix heap's lanes (`EventQueue::set_lanes`): with one bottleneck, its
/// two directions. Any choice gives the same results; this one saves most.
pub(super) fn busiest_links<'a>(n: usize, paths: impl Iterator<Item = &'a Vec<u32>>) -> [u32; LANES] {
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
pub(super) fn check_counts(links: usize, flows: usize) -> Result<(), SpecError> {
    if links as u64 > crate::spec::limits::MAX_LINKS {
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

impl World {
    /// Everything [`World::new`] refuses but the memory estimate, found
    /// without building the world: the description itself
    /// ([`RunSpec::validate`]), the counts, routing, each algorithm, queue
    /// discipline and loss classifier with its parameters, and the rules
    /// between a flow and its path. The one owner of the semantic checks:
    /// the front end only parses units and types and calls this
    /// (`_core.validate`). The memory estimate is left out because it is
    /// about the machine, not the description. Returns the routed paths.
    pub fn check(spec: &RunSpec) -> Result<Vec<[Vec<u32>; 2]>, SpecError> {
        spec.validate()?;
        check_counts(spec.links.len(), spec.flows.len())?;
        let paths = routing::resolve_paths(spec)?;
        for (i, l) in spec.links.iter().enumerate() {
            if l.queue.discipline.is_some() {
                let stream = rng::stream(spec.seed, StreamKind::Qdisc, i as u64);
                qdisc::build(&l.queue, l.rate_bps, stream, &format!("links[{i}].queue"))?;
            }
        }
        // An algorithm is built once per distinct (name, parameters): a
        // dumbbell's thousands of flows share one or two.
        let mut built: Vec<(&crate::spec::CcSpec, bool)> = Vec::new();
        for (i, (f, path)) in spec.flows.iter().zip(&paths).enumerate() {
            let controls_window = match built.iter().find(|(cc, _)| **cc == f.cc) {
                Some(&(_, w)) => w,
                None => {
                    let w = cc::build(&f.cc, &format!("flows[{i}].cc"))?.controls_window();
                    built.push((&f.cc, w));
                    w
                }
            };
            if controls_window && f.recovery != Recovery::Sack {
                return Err(SpecError::new(
                    format!("flows[{i}].recovery"),
                    format!("{} sets the window from delivery-rate samples and needs recovery = \"sack\" (or profile = \"linux\"), got {}", f.cc.algorithm, serde_json::to_string(&f.recovery).unwrap_or_default()),
                ));
            }
            if let Some(lc) = &f.loss_classifier {
                cc::knn::build(lc, &format!("flows[{i}].loss_classifier"))?;
            }
            if let AppSpec::Cbr { rate_bps, .. } | AppSpec::OnOff { rate_bps, .. } = f.app {
                // A source faster than its first link, behind an unlimited
                // queue, would pile packets up without bound (and exhaust
                // memory): refused.
                let first = &spec.links[path[0][0] as usize];
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
        }
        Ok(paths)
    }

    /// Checks the description ([`World::check`]) and its memory estimate,
    /// then builds the world.
    pub fn new(spec: RunSpec) -> Result<Self, SpecError> {
        let paths = Self::check(&spec)?;
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
        if let Some(periods) = end.checked_div(sample_interval) {
            let n = (periods + 1) as usize;
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
}
