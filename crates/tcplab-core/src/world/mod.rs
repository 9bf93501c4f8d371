//! One run: the network, the flows and the event loop that drives them.
//!
//! - [`build`]: [`World::new`], from a [`RunSpec`] to the links, flows,
//!   paths and the event queue, validated;
//! - [`event_loop`]: the event loops and the per-event handlers (packet
//!   forwarding, queues, timers, sampling);
//! - [`summary`]: the results of a finished run.

use crate::error::SpecError;
use crate::net::packet::SackStore;
use crate::net::qlink::QdiscLink;
use crate::net::{Link, LinkShared, Packet};
use crate::results::RunResults;
use crate::sim::time::Time;
use crate::sim::EventQueue;
use crate::source::Source;
use crate::spec::RunSpec;
use crate::tcp::{Receiver, SegmentMap, Sender};
use crate::trace::{CcSeries, DropTrace, FlowSeries, PacketTrace, QdiscSeries, QueueSeries};

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

/// Builds and runs `spec`, returning its results.
pub fn run(spec: RunSpec) -> Result<RunResults, SpecError> {
    let mut w = World::new(spec)?;
    w.run();
    Ok(w.into_results())
}

mod build;
mod event_loop;
mod summary;

#[cfg(test)]
mod tests;
