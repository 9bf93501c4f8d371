//! Sampled time series, in preallocated columns.
//!
//! Sampling happens on one timer for the whole run (every
//! `sample_interval`), so tracing costs nothing per packet: when it is off no
//! sample event is ever scheduled.

use crate::net::{Packet, PacketKind};

/// Per-flow samples, one row per (time, flow).
#[derive(Debug, Default, Clone)]
pub struct FlowSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<f64>,
    pub ssthresh: Vec<f64>,
    pub srtt: Vec<f64>,
    pub in_flight: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
}

/// Per-queue samples, one row per (time, link).
#[derive(Debug, Default, Clone)]
pub struct QueueSeries {
    pub time: Vec<f64>,
    pub link: Vec<u32>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl FlowSeries {
    pub fn with_capacity(n: usize) -> Self {
        FlowSeries {
            time: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            cwnd: Vec::with_capacity(n),
            ssthresh: Vec::with_capacity(n),
            srtt: Vec::with_capacity(n),
            in_flight: Vec::with_capacity(n),
            delivered_bytes: Vec::with_capacity(n),
        }
    }
}

/// An empty vector with room for `n`, or `None` when the allocator
/// refuses (instead of aborting the process).
fn try_vec<T>(n: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    Some(v)
}

impl FlowSeries {
    /// [`FlowSeries::with_capacity`], or `None` when memory runs out.
    pub fn try_with_capacity(n: usize) -> Option<Self> {
        Some(FlowSeries {
            time: try_vec(n)?,
            flow: try_vec(n)?,
            cwnd: try_vec(n)?,
            ssthresh: try_vec(n)?,
            srtt: try_vec(n)?,
            in_flight: try_vec(n)?,
            delivered_bytes: try_vec(n)?,
        })
    }
}

impl QueueSeries {
    /// [`QueueSeries::with_capacity`], or `None` when memory runs out.
    pub fn try_with_capacity(n: usize) -> Option<Self> {
        Some(QueueSeries { time: try_vec(n)?, link: try_vec(n)?, packets: try_vec(n)?, bytes: try_vec(n)? })
    }

    pub fn with_capacity(n: usize) -> Self {
        QueueSeries {
            time: Vec::with_capacity(n),
            link: Vec::with_capacity(n),
            packets: Vec::with_capacity(n),
            bytes: Vec::with_capacity(n),
        }
    }
}

/// Sampled internal variables of the congestion controls (long format: one
/// row per (time, flow, variable)); `names[variable]` is the variable's name.
#[derive(Debug, Default, Clone)]
pub struct CcSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub variable: Vec<u16>,
    pub value: Vec<f64>,
    pub names: Vec<&'static str>,
}

/// Index of `name` in `names`, adding it on first use (the variable codes
/// of [`CcSeries`] and [`QdiscSeries`]).
fn intern(names: &mut Vec<&'static str>, name: &'static str) -> u16 {
    match names.iter().position(|n| *n == name) {
        Some(i) => i as u16,
        None => {
            names.push(name);
            (names.len() - 1) as u16
        }
    }
}

impl CcSeries {
    /// Index of `name` in `names`, adding it on first use.
    pub fn intern(&mut self, name: &'static str) -> u16 {
        intern(&mut self.names, name)
    }
}

/// Sampled state of the links with a queue discipline (long format: one
/// row per (time, link, variable)): `sojourn_s`, the mean sojourn time of
/// the packets that started service since the last sample (NaN if none),
/// and the discipline's own variables (`Qdisc::trace_vars`).
#[derive(Debug, Default, Clone)]
pub struct QdiscSeries {
    pub time: Vec<f64>,
    pub link: Vec<u32>,
    pub variable: Vec<u16>,
    pub value: Vec<f64>,
    pub names: Vec<&'static str>,
}

impl QdiscSeries {
    pub fn push(&mut self, time: f64, link: u32, name: &'static str, value: f64) {
        let v = intern(&mut self.names, name);
        self.time.push(time);
        self.link.push(link);
        self.variable.push(v);
        self.value.push(value);
    }
}

/// Why a segment was sent again (a row of [`RetransmitTrace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RetransmitCause {
    /// The fast retransmit that opens fast recovery (duplicate ACKs, or the
    /// SACK scoreboard's first lost segment).
    FastRetransmit = 0,
    /// NewReno: a partial ACK during fast recovery (RFC 6582 3.2 step 4).
    PartialAck = 1,
    /// SACK recovery: NextSeg() picked a segment the scoreboard marks lost
    /// (RFC 6675 rule 1).
    Sack = 2,
    /// The retransmission timer's own resend of the first unacknowledged segment.
    Rto = 3,
    /// After a timeout: go-back-N (Reno, NewReno) or the segments the
    /// timeout marked lost (SACK), sent as the window reopens.
    AfterRto = 4,
    /// The tail loss probe's resend of the last segment sent (RFC 8985 7.3).
    Tlp = 5,
}

impl RetransmitCause {
    /// Names of the causes, indexed by their codes.
    pub const NAMES: [&'static str; 6] = ["fast_retransmit", "partial_ack", "sack", "rto", "after_rto", "tlp"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Why a packet never arrived (a row of [`DropTrace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum DropCause {
    /// A full drop-tail queue refused it.
    Queue = 0,
    /// The link's random loss model lost it on the wire.
    Wire = 1,
    /// Scripted loss (`drop_segments`), as it left the sender.
    Scripted = 2,
    /// A queue discipline's active queue management dropped it (RED, CoDel,
    /// PIE, DualPI2), not its limit.
    Aqm = 3,
}

impl DropCause {
    /// Names of the causes, indexed by their codes.
    pub const NAMES: [&'static str; 4] = ["queue", "wire", "scripted", "aqm"];
}

/// Every data packet or ACK that was dropped or lost, in the order it
/// happened (with `RunSpec::loss_trace`). `seq` is the data segment's
/// number, or for an ACK the cumulative ACK it carried (next segment
/// expected). `queue_packets` is the link's queue (packets waiting, the one
/// in service excluded) when the packet was refused or lost; `link` is the
/// flow's first link for scripted losses.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DropTrace {
    pub time: Vec<f64>,
    pub link: Vec<u32>,
    pub flow: Vec<u32>,
    pub seq: Vec<u64>,
    /// The packet was an ACK (else a data segment).
    pub ack: Vec<bool>,
    /// The packet was a retransmission.
    pub retransmit: Vec<bool>,
    /// [`DropCause`] code.
    pub cause: Vec<u8>,
    pub queue_packets: Vec<u64>,
}

impl DropTrace {
    /// Adds a row: packet `p` of `flow` refused or lost at `link` at `time`
    /// (s), `queue` packets waiting there.
    #[cold]
    #[inline(never)]
    pub fn push(&mut self, time: f64, link: u32, flow: u32, p: &Packet, cause: DropCause, queue: u64) {
        self.time.push(time);
        self.link.push(link);
        self.flow.push(flow);
        self.seq.push(p.seq);
        self.ack.push(p.kind == PacketKind::Ack);
        self.retransmit.push(p.retransmit());
        self.cause.push(cause as u8);
        self.queue_packets.push(queue);
    }
}

/// Every retransmission, in time order (ties by flow), with its cause (with
/// `RunSpec::loss_trace`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RetransmitTrace {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub seq: Vec<u64>,
    /// [`RetransmitCause`] code.
    pub cause: Vec<u8>,
    /// Segments sent and not cumulatively acknowledged then (`high_data -
    /// snd_una`): at a timeout, the most that go-back-N can resend.
    pub outstanding: Vec<u64>,
}

impl RetransmitTrace {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

impl DropTrace {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// The packets captured on the links a run names in `RunSpec::pcap`, one
/// row per packet in the order they start onto their link's wire (after
/// the queue), with what a synthetic TCP/IP header needs (docs/pcap.md).
/// Sequence numbers are given both as tcplab counts them (segments) and in
/// bytes: `byte_seq` is the application bytes before the segment (data) or
/// before the next segment expected (an ACK), so the first data byte of a
/// flow is byte 0. SACK blocks are byte ranges, out of line: row `i` has
/// `sack_count[i]` of them, the next ones in `sack_left`/`sack_right`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PacketTrace {
    /// Picoseconds (the simulation's own clock, exact).
    pub time: Vec<u64>,
    pub link: Vec<u32>,
    pub flow: Vec<u32>,
    /// The packet is an ACK (else data).
    pub ack: Vec<bool>,
    /// Data: segment number; ACK: cumulative acknowledgement (segments).
    pub seq: Vec<u64>,
    pub byte_seq: Vec<u64>,
    /// Application bytes the data segment carries (0 for an ACK).
    pub payload: Vec<u32>,
    /// Bytes on the wire, as the link charged them.
    pub size: Vec<u32>,
    /// Data: a retransmission.
    pub retransmit: Vec<bool>,
    /// The IP header's ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: Vec<u8>,
    /// [`crate::net::packet::tcp_flags`]: ECE, CWR and AccECN's ACE.
    pub tcp_flags: Vec<u8>,
    pub sack_count: Vec<u8>,
    pub sack_left: Vec<u64>,
    pub sack_right: Vec<u64>,
    /// Packets past `RunSpec::pcap_limit`, not recorded.
    pub overflow: u64,
    /// The limit the run had.
    pub limit: u64,
}

impl PacketTrace {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Drops the rows from `t` on (packets that a link accepted but that
    /// would start onto its wire only after the end of the run).
    pub fn cut_at(&mut self, t: u64) {
        // Each link's rows are in time order, the table as a whole is not.
        if self.time.iter().all(|&x| x < t) {
            return;
        }
        let mut out = PacketTrace { overflow: self.overflow, limit: self.limit, ..Default::default() };
        let mut s = 0usize;
        for i in 0..self.len() {
            let n = self.sack_count[i] as usize;
            if self.time[i] < t {
                out.time.push(self.time[i]);
                out.link.push(self.link[i]);
                out.flow.push(self.flow[i]);
                out.ack.push(self.ack[i]);
                out.seq.push(self.seq[i]);
                out.byte_seq.push(self.byte_seq[i]);
                out.payload.push(self.payload[i]);
                out.size.push(self.size[i]);
                out.retransmit.push(self.retransmit[i]);
                out.ecn.push(self.ecn[i]);
                out.tcp_flags.push(self.tcp_flags[i]);
                out.sack_count.push(self.sack_count[i]);
                out.sack_left.extend_from_slice(&self.sack_left[s..s + n]);
                out.sack_right.extend_from_slice(&self.sack_right[s..s + n]);
            }
            s += n;
        }
        *self = out;
    }
}
