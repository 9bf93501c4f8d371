//! Results of one run: per-flow, per-link and per-file rows, sampled time
//! series and run metadata. Units: seconds, bit/s, bytes, segments.

use crate::trace::{CcSeries, DropTrace, FlowSeries, PacketTrace, QdiscSeries, QueueSeries, RetransmitTrace};

#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    pub id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub algorithm: String,
    pub recovery: String,
    /// Goodput over the measurement window (bit/s, under the flow's accounting).
    pub goodput_bps: f64,
    /// Goodput bytes delivered in order over the whole run.
    pub bytes_delivered: u64,
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Loss events judged by the flow's loss classifier (0 without one).
    pub loss_events: u64,
    /// Of those, judged not congestion (repaired without a window reduction).
    pub loss_events_ignored: u64,
    pub data_packets_received: u64,
    pub data_packets_dropped: u64,
    /// Lost on the wire (link loss models) or to scripted loss; not queue drops.
    pub data_packets_lost: u64,
    pub data_packets_in_network: u64,
    pub acks_sent: u64,
    pub acks_received: u64,
    pub acks_dropped: u64,
    /// ACKs lost on the wire (link loss models).
    pub acks_lost: u64,
    pub acks_in_network: u64,
    pub rtt_samples: u64,
    pub rtt_min: f64,
    pub rtt_mean: f64,
    pub rtt_max: f64,
    pub srtt: f64,
    pub cwnd: f64,
    pub ssthresh: f64,
    /// ECN mode: `off`, `classic` (RFC 3168) or `accecn` (Accurate ECN).
    pub ecn: String,
    /// Data packets that reached the receiver marked CE.
    pub ce_received: u64,
    /// CE-marked packets the sender learned of from the ACKs' feedback.
    pub ce_delivered: u64,
    /// Window reductions caused by ECN echoes (not losses).
    pub ecn_reductions: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinkResult {
    pub id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub rate_bps: f64,
    pub delay: f64,
    /// Fraction of the measurement window the transmitter was busy.
    pub utilization: f64,
    pub packets_in: u64,
    pub packets_out: u64,
    /// Packets the queue dropped: its limit's drops and, with a discipline,
    /// the AQM's (`aqm_drops`).
    pub drops: u64,
    /// Packets transmitted and lost on the wire (the link's loss model).
    pub losses: u64,
    /// Packets still queued, serializing or propagating at the end.
    pub packets_in_link: u64,
    pub bytes_out: u64,
    pub data_packets_out: u64,
    /// Time-averaged packets (bytes) waiting over the measurement window.
    pub queue_mean_packets: f64,
    pub queue_max_packets: u64,
    pub queue_mean_bytes: f64,
    /// The queue discipline (`droptail` for the fast FIFO as well).
    pub discipline: String,
    /// Packets marked CE by the discipline.
    pub marks: u64,
    /// Of `drops`, those the discipline's AQM decided (not its limit).
    pub aqm_drops: u64,
    /// Sojourn time in the queue (enqueue to start of service) of the
    /// packets that started service in the window: mean and percentiles
    /// (seconds; within 1.6 %). `None` for a link without a `discipline`
    /// (the fast FIFO keeps no per-packet record) or when no packet passed.
    pub sojourn_mean: Option<f64>,
    pub sojourn_p50: Option<f64>,
    pub sojourn_p95: Option<f64>,
    pub sojourn_p99: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileResult {
    pub flow: u32,
    pub index: u32,
    pub size: u64,
    pub start: f64,
    /// NaN if the file did not finish within the run.
    pub finish: f64,
    pub fct: f64,
    /// When the file's first segment was first transmitted (NaN if never).
    pub first_sent: f64,
    /// When the sender received the cumulative ACK of the file's last
    /// segment (NaN if not within the run).
    pub acked: f64,
    /// `acked - first_sent`: the transfer time as ssm-interactions defines it
    /// ("from the first packet sent to the ACK of the last"), excluding the
    /// time the file waited behind earlier files of the same connection.
    pub transfer_time: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    pub events: u64,
    pub sim_time: f64,
    pub wall_s: f64,
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub struct RunResults {
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub files: Vec<FileResult>,
    pub flow_ts: FlowSeries,
    pub queue_ts: QueueSeries,
    /// Congestion-control internal variables (see `CongestionControl::trace_vars`).
    pub cc_ts: CcSeries,
    /// Links with a queue discipline: sojourn time and the discipline's state.
    pub qdisc_ts: QdiscSeries,
    /// Every drop and loss (empty unless the run traced them: `RunSpec::loss_trace`).
    pub drop_trace: DropTrace,
    /// Every retransmission with its cause (empty unless traced).
    pub retransmit_trace: RetransmitTrace,
    /// The packets of the captured links (`RunSpec::pcap`; `None` when the
    /// run captures none).
    pub packet_trace: Option<PacketTrace>,
    pub meta: RunMeta,
}
