//! The description of one run: the contract between the Python front end
//! (or any other caller) and the Rust core.
//!
//! Everything is plain data in SI units (seconds, bits per second, bytes) so it
//! serializes to JSON unchanged. [`RunSpec::validate`] checks it and reports
//! the first problem with the path of the offending field
//! (`links[2].rate_bps: must be positive, got 0`).

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

use crate::error::SpecError;

/// One simulation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Master seed; every component derives its own random stream from it.
    #[serde(default)]
    pub seed: u64,
    /// Simulated duration in seconds.
    pub duration: f64,
    /// Start of the measurement window (seconds); goodput and utilization are
    /// computed over `[measure_start, duration]`.
    #[serde(default)]
    pub measure_start: f64,
    /// Interval of the sampled time series in seconds; 0 disables them.
    #[serde(default)]
    pub sample_interval: f64,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Explicit static routes. Where a (node, destination) pair has none,
    /// the shortest path by propagation delay is used (ties broken by link
    /// order, so routing is deterministic).
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
    pub flows: Vec<FlowSpec>,
    /// Links whose queue length is sampled into the time series. `None`:
    /// every link with a finite queue limit (the ones that can drop).
    #[serde(default)]
    pub trace_links: Option<Vec<String>>,
    /// Record every drop, loss and retransmission (the `drop_trace` and
    /// `retransmit_trace` results). Off by default: a long lossy run makes
    /// millions of rows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loss_trace: bool,
    /// Links whose packets are captured (the `packet_trace` result, which
    /// the front end writes as pcap files): every packet as it starts onto
    /// the link's wire, after its queue (docs/pcap.md). Empty: none, and
    /// the run pays one predictable branch per packet-hop, shared with the
    /// queue disciplines'. Omitted from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Most packets the capture records over all its links
    /// (`None`: [`limits::DEFAULT_PCAP_LIMIT`]); the packets past it are
    /// counted, not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_limit: Option<u64>,
    /// Most bytes the run may allocate by the estimate of
    /// [`crate::estimate::estimate`] (`None`: [`limits::DEFAULT_MEMORY_LIMIT`]).
    /// A run estimated above it is refused before anything is allocated,
    /// naming the field that drives the cost. Omitted from the JSON when
    /// not given, so existing specs serialize (and hash) as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
}

/// The bounds of the inputs, derived from the representation of simulated
/// time (integer picoseconds in a u64, of which a sender keeps 61 bits) and
/// from the memory budget. docs/limits.md lists them with their reasons.
pub mod limits {
    use crate::net::packet::MAX_PACKET_SIZE;
    use crate::sim::time::PS_PER_SEC;

    /// Longest span of simulated time any input may name, in picoseconds:
    /// 2^61 - 1 ps (about 26.7 days), the send times a sender keeps
    /// ([`crate::sim::time::MAX_TIME`]). Every time a run computes is a time at
    /// most the end of the run (< 2^61 ps) plus a few such spans, so it
    /// stays far below 2^64 ps and never wraps.
    pub const MAX_SPAN_PS: u64 = crate::sim::time::MAX_TIME;
    /// [`MAX_SPAN_PS`] in seconds.
    pub const MAX_SPAN_S: f64 = MAX_SPAN_PS as f64 / PS_PER_SEC as f64;
    /// The time resolution: a positive time shorter than this rounds to 0.
    pub const MIN_TIME_S: f64 = 1.0 / PS_PER_SEC as f64;
    /// Slowest rate (bit/s) of a link or a source: the largest packet
    /// (65,535 B) still serializes within [`MAX_SPAN_PS`] (about 0.23 bit/s).
    pub const MIN_RATE_BPS: f64 = MAX_PACKET_SIZE as f64 * 8.0 * PS_PER_SEC as f64 / MAX_SPAN_PS as f64;
    /// Fastest rate (bit/s) of a link or a source: one byte per picosecond,
    /// 8 Tbit/s. Faster, a 1-byte packet would serialize in less than the
    /// smallest representable increment (1 ps) and be rounded up to it.
    pub const MAX_RATE_BPS: f64 = 8.0 * PS_PER_SEC as f64;
    /// Default of `RunSpec::memory_limit`: 4 GiB, what a run may take on
    /// a machine that runs a few at once.
    pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;
    /// Default of `RunSpec::pcap_limit`: 5 million packets (some 250 MB of
    /// records with their copy in Python).
    pub const DEFAULT_PCAP_LIMIT: u64 = 5_000_000;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A unidirectional link: a FIFO queue at `src` feeding a transmitter of
/// `rate_bps`, then a propagation delay of `delay` seconds to `dst`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub rate_bps: f64,
    pub delay: f64,
    #[serde(default)]
    pub queue: QueueSpec,
    /// Random loss on the wire (packets that were transmitted and never
    /// arrive), drawn from the link's own random stream. Counted as `losses`,
    /// apart from queue `drops`. Links are one-way, so each direction has its own.
    #[serde(default)]
    pub loss: Option<LossSpec>,
}

fn d_one() -> f64 {
    1.0
}

/// A random loss model of a link.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert-Elliott two-state Markov chain, stepped once per packet:
    /// Good -> Bad with probability `p_gb`, Bad -> Good with `p_bg`; a packet is
    /// lost with probability `loss_good` (default 0) in Good and `loss_bad`
    /// (default 1) in Bad. Stationary loss rate
    /// `(p_bg * loss_good + p_gb * loss_bad) / (p_gb + p_bg)`; with the
    /// defaults the mean loss burst is `1 / p_bg` packets.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "d_one")]
        loss_bad: f64,
    },
}

/// Drop-tail queue limit. The packet being serialized is not counted (as a
/// Linux qdisc), so a queue of B packets holds B waiting packets plus the one
/// on the wire. ns-2's DropTail counts that one: its `limit_` L holds L - 1
/// waiting packets (`queue/drop-tail.cc` drops when `length + 1 >= qlim_`),
/// so tcplab's B is ns-2's `limit_` B + 1. `None` in both fields means
/// unlimited.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Queue discipline (`droptail`, `red`, `codel`, `fq_codel`, `pie`,
    /// `dualpi2`; see `crate::net::qdisc`). `None`: the fast drop-tail FIFO
    /// of `crate::net::Link` (no sojourn statistics, no marks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<String>,
    /// The discipline's parameters (times in seconds), by name.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub node: String,
    pub dst: String,
    pub link: String,
}

/// Loss recovery used by a flow's sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// RFC 5681 fast retransmit / fast recovery: leaves recovery on the first
    /// ACK of new data.
    Reno,
    /// RFC 6582: stays in recovery until `recover` is acknowledged,
    /// retransmitting on each partial ACK.
    NewReno,
    /// RFC 6675 conservative SACK-based loss recovery.
    Sack,
}

/// When duplicate ACKs that do not cover more than `recover` may still start
/// a fast retransmit (RFC 6582 section 4, "Handling Duplicate
/// Acknowledgments after a Timeout"), for Reno and NewReno senders. SACK
/// senders count only ACKs that SACK new data as duplicates (RFC 6675 section
/// 2), so the duplicates a timeout provokes cannot start a recovery there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DupAckGuard {
    /// RFC 6582 3.2 step 1, ns-2's `bugFix_` (default), Linux's
    /// `tcp_is_non_sack_preventing_reopen`: never. A fast retransmit needs a
    /// cumulative ACK above the highest segment sent when the last recovery
    /// or timeout began.
    Careful,
    /// ns-2's `lessCareful_` (RFC 2582's "less careful" variant): also when
    /// the ACK covers exactly `recover`, which is what go-back-N's needless
    /// resends produce; kept to reproduce that behaviour.
    LessCareful,
    /// RFC 6582 4.1, the ACK heuristic (ns-2's `bugFix_ack_`): also when cwnd
    /// is above one segment and the last cumulative advance was at most four
    /// segments (a loss among retransmissions, not go-back-N's duplicates).
    AckHeuristic,
}

/// How the retransmission timeout is computed from SRTT and RTTVAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoMode {
    /// Linux: the variance term is floored at the minimum,
    /// `RTO = SRTT + max(4*RTTVAR, min_rto)` (tcp_set_rto with rttvar >= rto_min).
    Linux,
    /// RFC 6298 2.4: `RTO = max(min_rto, SRTT + max(G, 4*RTTVAR))`.
    Rfc6298,
}

/// When the receiver sends its ACKs (see docs/tcp.md "Receiver").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckPolicy {
    /// RFC 5681 4.2 / RFC 1122: every segment, or with `delayed_ack` every
    /// second full segment or after `delack_timeout`; out-of-order data,
    /// duplicates and hole fills at once.
    #[default]
    Rfc,
    /// Linux 6.x (tcp_input.c `__tcp_ack_snd_check`, `tcp_event_data_recv`,
    /// quick-ACK mode, the adaptive delayed-ACK timeout `ato`), always with
    /// delayed ACKs; parameters `delack_min`, `delack_max`, `quickacks`.
    Linux,
}

/// How bytes are counted as goodput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accounting {
    /// Goodput counts payload bytes only (packet_size - header_size).
    Payload,
    /// ns-2 accounting used by the papers: a "1500-byte packet" counts its
    /// whole 1500 bytes as goodput.
    Ns2,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcSpec {
    pub algorithm: String,
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Size in bytes (application bytes, counted as the flow's accounting says).
    pub size: u64,
    /// Time at which the application hands the file to TCP (seconds).
    pub start: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppSpec {
    /// Unlimited data from the flow's start time.
    Bulk,
    /// Files sent one after the other on the same connection; a file whose
    /// start time has not come waits, a file that arrives while another is
    /// being sent is queued behind it.
    Files { files: Vec<FileSpec> },
    /// An unresponsive constant-bit-rate source (UDP-like: no ACKs, no
    /// congestion control; `crate::source`): full packets at `rate_bps`
    /// from the flow's start, with ECN codepoint `ecn`.
    Cbr {
        rate_bps: f64,
        #[serde(default)]
        ecn: SourceEcn,
    },
    /// An unresponsive on/off source: CBR at `rate_bps` during on periods
    /// of mean `on` seconds, silent during off periods of mean `off`;
    /// periods exponential (default) or fixed. Tagged `on_off`, the name
    /// the results give the flow's algorithm (`rename_all` would say `onoff`).
    #[serde(rename = "on_off")]
    OnOff {
        rate_bps: f64,
        on: f64,
        off: f64,
        #[serde(default = "d_true")]
        exponential: bool,
        #[serde(default)]
        ecn: SourceEcn,
    },
}

/// The ECN codepoint of an unresponsive source's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceEcn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec::Bulk
    }
}

fn d_packet_size() -> u32 {
    1500
}
fn d_header() -> u32 {
    40
}
fn d_ack() -> u32 {
    40
}
fn d_iw() -> f64 {
    10.0
}
fn d_min_rto() -> f64 {
    0.2
}
fn d_max_rto() -> f64 {
    60.0
}
fn d_init_rto() -> f64 {
    1.0
}
fn d_delack() -> f64 {
    0.04
}
fn d_delack_min() -> f64 {
    0.04
}
fn is_d_delack_min(v: &f64) -> bool {
    *v == d_delack_min()
}
fn d_delack_max() -> f64 {
    0.2
}
fn is_d_delack_max(v: &f64) -> bool {
    *v == d_delack_max()
}
fn d_quickacks() -> u32 {
    16
}
fn is_d_quickacks(v: &u32) -> bool {
    *v == d_quickacks()
}
fn is_rfc(p: &AckPolicy) -> bool {
    *p == AckPolicy::Rfc
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn d_sack_blocks() -> u8 {
    3
}
fn d_dupthresh() -> u32 {
    3
}
fn d_true() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub cc: CcSpec,
    pub recovery: Recovery,
    /// Connection start time (seconds). Bulk flows start sending then.
    #[serde(default)]
    pub start: f64,
    /// Wire size of a full data packet (bytes; more than `header_size`, at most 65,535).
    #[serde(default = "d_packet_size")]
    pub packet_size: u32,
    /// TCP/IP header bytes inside `packet_size`.
    #[serde(default = "d_header")]
    pub header_size: u32,
    /// Wire size of a pure ACK (bytes, 1 to 65,535).
    #[serde(default = "d_ack")]
    pub ack_size: u32,
    #[serde(default = "d_accounting")]
    pub accounting: Accounting,
    /// Initial congestion window (segments).
    #[serde(default = "d_iw")]
    pub init_cwnd: f64,
    /// Initial ssthresh (segments); `None` = "arbitrarily high" (RFC 5681).
    #[serde(default)]
    pub init_ssthresh: Option<f64>,
    /// Receiver window in segments; `None` = unlimited.
    #[serde(default)]
    pub rwnd_packets: Option<u64>,
    #[serde(default = "d_min_rto")]
    pub min_rto: f64,
    #[serde(default = "d_max_rto")]
    pub max_rto: f64,
    #[serde(default = "d_rto_mode")]
    pub rto_mode: RtoMode,
    #[serde(default = "d_init_rto")]
    pub init_rto: f64,
    /// Duplicate-ACK threshold (RFC 5681: 3).
    #[serde(default = "d_dupthresh")]
    pub dupthresh: u32,
    /// Reno/NewReno: when duplicate ACKs below `recover` may start a fast
    /// retransmit (omitted from the JSON when careful, the default).
    #[serde(default = "d_dupack_guard", skip_serializing_if = "is_careful")]
    pub dupack_guard: DupAckGuard,
    /// Limited transmit (RFC 3042) on the first two duplicate ACKs.
    #[serde(default)]
    pub limited_transmit: bool,
    /// Delayed ACKs at the receiver (RFC 5681/1122): ACK every second full
    /// segment or when the timer fires; out-of-order data is ACKed at once.
    #[serde(default)]
    pub delayed_ack: bool,
    #[serde(default = "d_delack")]
    pub delack_timeout: f64,
    /// SACK blocks carried per ACK (RFC 2018: at most 4, 3 with timestamps).
    #[serde(default = "d_sack_blocks")]
    pub sack_blocks: u8,
    /// When the receiver ACKs: "rfc" (the default, `delayed_ack` and
    /// `delack_timeout` above) or "linux" (Linux 6.x's quick-ACK mode and
    /// adaptive delayed-ACK timer; always delays, ignores `delayed_ack` and
    /// `delack_timeout`). The new fields are left out of the JSON at their
    /// defaults, so existing specs serialize (and hash) as before.
    #[serde(default, skip_serializing_if = "is_rfc")]
    pub ack_policy: AckPolicy,
    /// "linux" only: TCP_ATO_MIN = TCP_DELACK_MIN (s), the smallest and the
    /// initial delayed-ACK timeout `ato`.
    #[serde(default = "d_delack_min", skip_serializing_if = "is_d_delack_min")]
    pub delack_min: f64,
    /// "linux" only: TCP_DELACK_MAX (s), the largest delayed-ACK timeout.
    #[serde(default = "d_delack_max", skip_serializing_if = "is_d_delack_max")]
    pub delack_max: f64,
    /// "linux" only: TCP_MAX_QUICKACKS, the most quick-ACK credits
    /// `tcp_incr_quickack` grants (0: never quick-ACK).
    #[serde(default = "d_quickacks", skip_serializing_if = "is_d_quickacks")]
    pub quickacks: u32,
    /// D-SACK (RFC 2883, Linux `tcp_dsack_set`): an ACK answering a duplicate
    /// segment reports it in its first SACK block. Only with `recovery =
    /// "sack"` (ignored otherwise, as Linux ignores it without SACK).
    #[serde(default, skip_serializing_if = "is_false")]
    pub dsack: bool,
    /// RFC 5681 section 4.1: after an idle period longer than the RTO,
    /// restart from min(cwnd, initial window).
    #[serde(default = "d_true")]
    pub restart_after_idle: bool,
    #[serde(default)]
    pub app: AppSpec,
    /// Scripted loss: the first transmission of each listed data segment is
    /// lost as it leaves the sender (like ns-3's ReceiveListErrorModel), for
    /// loss-recovery experiments. Counted as `data_packets_lost`, apart from
    /// queue drops.
    #[serde(default)]
    pub drop_segments: Vec<u64>,
    /// A loss classifier consulted on every loss event (three duplicate ACKs or
    /// a timeout): when it answers "not congestion" the lost segment is
    /// retransmitted but the congestion control is not told, so neither cwnd
    /// nor ssthresh is reduced. Works with any algorithm.
    #[serde(default)]
    pub loss_classifier: Option<LossClassifierSpec>,
    /// Linux's sender mechanisms, each on its own switch (SACK recovery
    /// only; the Python `profile = "linux"` turns them all on). Omitted
    /// from the JSON when off, so classic flows keep their store keys.
    /// PRR (RFC 6937, Linux `tcp_cwnd_reduction`) sets the window in fast
    /// recovery.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prr: bool,
    /// RACK (RFC 8985, Linux `tcp_recovery.c`) marks losses by time
    /// instead of RFC 6675's DupThresh rule, lost retransmissions included.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rack: bool,
    /// The tail loss probe (RFC 8985 section 7, Linux `tcp_send_loss_probe`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub tlp: bool,
    /// F-RTO (RFC 5682 section 3's SACK variant, Linux `tcp_process_loss`):
    /// after a timeout, new data decides whether it was spurious.
    #[serde(default, skip_serializing_if = "is_false")]
    pub frto: bool,
    /// Undo (Linux `tcp_undo_cwnd_reduction`): a window reduction whose
    /// every retransmission came back D-SACKed, or an RTO F-RTO found
    /// spurious, is reverted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub undo: bool,
    /// Linux's internal pacing for algorithms that do not pace themselves
    /// (`tcp_update_pacing_rate`, on when fq or SO_MAX_PACING_RATE asks for
    /// it): cwnd x MSS / SRTT times `pacing_ss_ratio` % in slow start
    /// (cwnd < ssthresh / 2), `pacing_ca_ratio` % after. Window-controlling
    /// algorithms (BBR) always pace at their own rate.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pacing: bool,
    /// `net.ipv4.tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, percent.
    #[serde(default = "d_pacing_ss_ratio", skip_serializing_if = "is_default_ss_ratio")]
    pub pacing_ss_ratio: f64,
    #[serde(default = "d_pacing_ca_ratio", skip_serializing_if = "is_default_ca_ratio")]
    pub pacing_ca_ratio: f64,
    /// ECN feedback: "off", "classic" (RFC 3168's ECE/CWR) or "accecn"
    /// (Accurate ECN's ACE counter). Omitted: what the algorithm needs
    /// (`cc::CongestionControl::ecn`: accecn for dctcp and prague, bbr3's
    /// own `ecn` parameter, off for the others); an algorithm that needs
    /// ECN is refused with less. Omitted from the JSON when not given, so
    /// existing specs serialize (and hash) as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<crate::cc::EcnMode>,
}

fn d_pacing_ss_ratio() -> f64 {
    200.0
}
fn d_pacing_ca_ratio() -> f64 {
    120.0
}
fn is_default_ss_ratio(x: &f64) -> bool {
    *x == d_pacing_ss_ratio()
}
fn is_default_ca_ratio(x: &f64) -> bool {
    *x == d_pacing_ca_ratio()
}

/// A loss classifier and its parameters (see `cc::knn` for `knn`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossClassifierSpec {
    pub kind: String,
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

fn d_dupack_guard() -> DupAckGuard {
    DupAckGuard::Careful
}
fn is_careful(g: &DupAckGuard) -> bool {
    *g == DupAckGuard::Careful
}
fn d_rto_mode() -> RtoMode {
    RtoMode::Linux
}

fn d_accounting() -> Accounting {
    Accounting::Payload
}

impl FlowSpec {
    /// Payload bytes carried by a full segment.
    pub fn mss(&self) -> u32 {
        self.packet_size - self.header_size
    }
    /// Goodput bytes credited for a segment carrying `payload` bytes.
    pub fn goodput_bytes(&self, payload: u32) -> u64 {
        match self.accounting {
            Accounting::Payload => payload as u64,
            Accounting::Ns2 => (payload + self.header_size) as u64,
        }
    }
    /// Application bytes per full segment under the flow's accounting.
    pub fn app_bytes_per_segment(&self) -> u32 {
        match self.accounting {
            Accounting::Payload => self.mss(),
            Accounting::Ns2 => self.packet_size,
        }
    }
}

fn positive(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && v > 0.0) {
        return Err(SpecError::new(path, format!("must be a positive number, got {v}")));
    }
    Ok(())
}

fn non_negative(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(SpecError::new(path, format!("must be a non-negative number, got {v}")));
    }
    Ok(())
}

/// `v` for a message: in exponent form when very large or very small
/// (`1e300`, not 301 digits).
fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-5..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A time in seconds that may be 0 (a start time, a delay): 0 to
/// [`limits::MAX_SPAN_S`], the longest span simulated time can represent.
/// Longer than the run is fine (nothing happens in the run), longer than
/// that is not representable.
fn time_or_zero(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (0.0..=limits::MAX_SPAN_S).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a time from 0 to {:.6e} s (2^61 ps, simulated time's limit), got {}",
                limits::MAX_SPAN_S,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// A positive time in seconds (a timer, a period): 1 ps (the resolution;
/// less rounds to 0) to [`limits::MAX_SPAN_S`].
fn positive_time(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (limits::MIN_TIME_S..=limits::MAX_SPAN_S).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a time from 1e-12 s (1 ps, the resolution) to {:.6e} s (2^61 ps, simulated time's limit), got {}",
                limits::MAX_SPAN_S,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// A rate in bit/s of a link or a source, within
/// [`limits::MIN_RATE_BPS`, `limits::MAX_RATE_BPS`].
fn rate(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (limits::MIN_RATE_BPS..=limits::MAX_RATE_BPS).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a rate from {:.4} bit/s (a 65,535-byte packet serializes within 2^61 ps) to {:.0e} bit/s (a byte per ps, the resolution), got {}",
                limits::MIN_RATE_BPS,
                limits::MAX_RATE_BPS,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// The field path of a deserialization error: where the parser was, plus
/// the field a "missing field" message names (serde reports it at the
/// enclosing object; an unknown field is in the path already). The whole
/// document is `spec`.
fn error_path(path: &serde_path_to_error::Path, message: &str) -> String {
    let mut p = path.to_string();
    if p == "." || p == "?" {
        p.clear();
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        if let Some(name) = rest.split('`').next() {
            p = if p.is_empty() { name.to_string() } else { format!("{p}.{name}") };
        }
    }
    if p.is_empty() {
        "spec".into()
    } else {
        p
    }
}

impl RunSpec {
    pub fn from_json(s: &str) -> Result<Self, SpecError> {
        let de = &mut serde_json::Deserializer::from_str(s);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let message = e.inner().to_string();
            SpecError::new(error_path(e.path(), &message), format!("invalid run description: {message}"))
        })
    }

    /// Checks the description; the error names the field and the problem.
    /// Routing and algorithm names are checked when the simulation is built.
    pub fn validate(&self) -> Result<(), SpecError> {
        positive("duration".into(), self.duration)?;
        non_negative("measure_start".into(), self.measure_start)?;
        if self.measure_start >= self.duration {
            return Err(SpecError::new(
                "measure_start".into(),
                format!("must be before the end of the run ({} s), got {}", self.duration, self.measure_start),
            ));
        }
        // Both are rounded to picoseconds: a window that rounds to nothing
        // would divide 0 by 0 in every rate.
        use crate::sim::time::from_secs;
        if from_secs(self.measure_start) >= from_secs(self.duration) {
            return Err(SpecError::new(
                "measure_start".into(),
                format!(
                    "must be at least 1 ps (the resolution) before the end of the run ({} s), got {}",
                    show(self.duration),
                    show(self.measure_start)
                ),
            ));
        }
        if self.sample_interval != 0.0 {
            positive_time("sample_interval".into(), self.sample_interval)?;
        }
        // Senders keep a segment's send time and flags in one word: times
        // up to 2^61 ps.
        let max = crate::sim::time::MAX_TIME as f64 / 1e12;
        if self.duration >= max {
            return Err(SpecError::new(
                "duration".into(),
                format!(
                    "too long: simulated time is limited to 2^61 ps ({max:.4e} s, about 26 days), got {} s",
                    self.duration
                ),
            ));
        }
        let mut names = HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.name.is_empty() {
                return Err(SpecError::new(format!("nodes[{i}].name"), "must not be empty".into()));
            }
            if !names.insert(n.name.as_str()) {
                return Err(SpecError::new(format!("nodes[{i}].name"), format!("duplicate node name {:?}", n.name)));
            }
        }
        let mut link_names = HashSet::new();
        for (i, l) in self.links.iter().enumerate() {
            if !link_names.insert(l.name.as_str()) {
                return Err(SpecError::new(format!("links[{i}].name"), format!("duplicate link name {:?}", l.name)));
            }
            for (f, n) in [("src", &l.src), ("dst", &l.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("links[{i}].{f}"), format!("unknown node {n:?}")));
                }
            }
            if l.src == l.dst {
                return Err(SpecError::new(format!("links[{i}].dst"), "a link must join two different nodes".into()));
            }
            rate(format!("links[{i}].rate_bps"), l.rate_bps)?;
            time_or_zero(format!("links[{i}].delay"), l.delay)?;
            if l.queue.limit_packets == Some(0) {
                return Err(SpecError::new(
                    format!("links[{i}].queue.limit_packets"),
                    "must be at least 1 packet, got 0".into(),
                ));
            }
            if let Some(loss) = &l.loss {
                let prob = |name: &str, v: f64| -> Result<(), SpecError> {
                    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                        return Err(SpecError::new(
                            format!("links[{i}].loss.{name}"),
                            format!("must be a probability in [0, 1], got {v}"),
                        ));
                    }
                    Ok(())
                };
                match *loss {
                    LossSpec::Bernoulli { p } => prob("p", p)?,
                    LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                        prob("p_gb", p_gb)?;
                        prob("p_bg", p_bg)?;
                        prob("loss_good", loss_good)?;
                        prob("loss_bad", loss_bad)?;
                        if p_gb + p_bg == 0.0 {
                            return Err(SpecError::new(
                                format!("links[{i}].loss.p_bg"),
                                "p_gb and p_bg cannot both be 0".into(),
                            ));
                        }
                    }
                }
            }
            if l.queue.limit_bytes == Some(0) {
                return Err(SpecError::new(
                    format!("links[{i}].queue.limit_bytes"),
                    "must be at least 1 byte, got 0".into(),
                ));
            }
        }
        for (i, r) in self.routes.iter().enumerate() {
            for (f, n) in [("node", &r.node), ("dst", &r.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("routes[{i}].{f}"), format!("unknown node {n:?}")));
                }
            }
            if !link_names.contains(r.link.as_str()) {
                return Err(SpecError::new(format!("routes[{i}].link"), format!("unknown link {:?}", r.link)));
            }
        }
        if let Some(tl) = &self.trace_links {
            for (i, n) in tl.iter().enumerate() {
                if !link_names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("trace_links[{i}]"), format!("unknown link {n:?}")));
                }
            }
        }
        let mut captured = HashSet::new();
        for (i, n) in self.pcap.iter().enumerate() {
            if !link_names.contains(n.as_str()) {
                return Err(SpecError::new(format!("pcap[{i}]"), format!("unknown link {n:?}")));
            }
            if !captured.insert(n.as_str()) {
                return Err(SpecError::new(format!("pcap[{i}]"), format!("link {n:?} is listed twice")));
            }
        }
        let hosts: HashSet<&str> =
            self.nodes.iter().filter(|n| n.kind == NodeKind::Host).map(|n| n.name.as_str()).collect();
        let mut flow_names = HashSet::new();
        for (i, f) in self.flows.iter().enumerate() {
            let p = |s: &str| format!("flows[{i}].{s}");
            if !flow_names.insert(f.name.as_str()) {
                return Err(SpecError::new(p("name"), format!("duplicate flow name {:?}", f.name)));
            }
            for (field, n) in [("src", &f.src), ("dst", &f.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(p(field), format!("unknown node {n:?}")));
                }
                if !hosts.contains(n.as_str()) {
                    return Err(SpecError::new(p(field), format!("{n:?} is a router; flows start and end at hosts")));
                }
            }
            if f.src == f.dst {
                return Err(SpecError::new(p("dst"), "must differ from src".into()));
            }
            time_or_zero(p("start"), f.start)?;
            if f.header_size >= f.packet_size {
                return Err(SpecError::new(
                    p("packet_size"),
                    format!("must exceed header_size ({} B), got {} B", f.header_size, f.packet_size),
                ));
            }
            if f.ack_size == 0 {
                return Err(SpecError::new(p("ack_size"), "must be at least 1 byte".into()));
            }
            for (name, v) in [("packet_size", f.packet_size), ("ack_size", f.ack_size)] {
                if v > crate::net::packet::MAX_PACKET_SIZE {
                    return Err(SpecError::new(
                        p(name),
                        format!(
                            "must be at most {} B (IP's largest packet), got {v} B",
                            crate::net::packet::MAX_PACKET_SIZE
                        ),
                    ));
                }
            }
            if !(f.init_cwnd.is_finite() && f.init_cwnd >= 1.0) {
                return Err(SpecError::new(p("init_cwnd"), format!("must be at least 1 segment, got {}", f.init_cwnd)));
            }
            if let Some(s) = f.init_ssthresh {
                if !(s.is_finite() && s >= 2.0) {
                    return Err(SpecError::new(p("init_ssthresh"), format!("must be at least 2 segments, got {s}")));
                }
            }
            if f.rwnd_packets == Some(0) {
                return Err(SpecError::new(p("rwnd_packets"), "must be at least 1 segment".into()));
            }
            positive_time(p("min_rto"), f.min_rto)?;
            positive_time(p("init_rto"), f.init_rto)?;
            positive_time(p("max_rto"), f.max_rto)?;
            if f.max_rto < f.min_rto {
                return Err(SpecError::new(p("max_rto"), format!("must be at least min_rto ({} s)", f.min_rto)));
            }
            if f.dupthresh == 0 {
                return Err(SpecError::new(p("dupthresh"), "must be at least 1".into()));
            }
            positive_time(p("delack_timeout"), f.delack_timeout)?;
            if f.sack_blocks == 0 || f.sack_blocks > 4 {
                return Err(SpecError::new(
                    p("sack_blocks"),
                    format!("must be 1 to 4 (RFC 2018), got {}", f.sack_blocks),
                ));
            }
            for (name, on) in [("prr", f.prr), ("rack", f.rack), ("tlp", f.tlp), ("frto", f.frto), ("undo", f.undo)] {
                if on && f.recovery != Recovery::Sack {
                    return Err(SpecError::new(
                        p(name),
                        format!(
                            "needs recovery = \"sack\" (Linux runs it on the SACK scoreboard), got {}",
                            serde_json::to_string(&f.recovery).unwrap_or_default()
                        ),
                    ));
                }
            }
            if f.tlp && !f.rack {
                return Err(SpecError::new(
                    p("tlp"),
                    "needs rack = true (the probe's loss is detected by RACK, RFC 8985 7.4)".into(),
                ));
            }
            for (name, v) in [("pacing_ss_ratio", f.pacing_ss_ratio), ("pacing_ca_ratio", f.pacing_ca_ratio)] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(SpecError::new(p(name), format!("must be a positive percentage, got {v}")));
                }
            }
            // An algorithm that needs ECN refuses less (built here for its
            // needs only; an unknown name is reported when the run is built).
            if let Ok(cc) = crate::cc::build(&f.cc, &p("cc")) {
                cc.ecn().resolve(&f.cc.algorithm, f.ecn).map_err(|m| SpecError::new(p("ecn"), m))?;
            }
            if f.frto && !f.undo {
                return Err(SpecError::new(
                    p("frto"),
                    "needs undo = true (F-RTO's verdict \"spurious\" is acted on by undo)".into(),
                ));
            }
            positive_time(p("delack_min"), f.delack_min)?;
            positive_time(p("delack_max"), f.delack_max)?;
            if f.delack_max < f.delack_min {
                return Err(SpecError::new(
                    p("delack_max"),
                    format!("must be at least delack_min ({} s), got {} s", f.delack_min, f.delack_max),
                ));
            }
            if f.ack_policy == AckPolicy::Rfc {
                // Parameters of the linux policy given to an rfc receiver
                // would be silently ignored: say so instead.
                for (name, default) in [
                    ("delack_min", is_d_delack_min(&f.delack_min)),
                    ("delack_max", is_d_delack_max(&f.delack_max)),
                    ("quickacks", is_d_quickacks(&f.quickacks)),
                ] {
                    if !default {
                        return Err(SpecError::new(
                            p(name),
                            "applies only with ack_policy = \"linux\" (the rfc policy uses delayed_ack and delack_timeout)".into(),
                        ));
                    }
                }
            }
            if let AppSpec::Files { files } = &f.app {
                for (j, file) in files.iter().enumerate() {
                    if file.size == 0 {
                        return Err(SpecError::new(
                            format!("flows[{i}].app.files[{j}].size"),
                            "must be at least 1 byte".into(),
                        ));
                    }
                    time_or_zero(format!("flows[{i}].app.files[{j}].start"), file.start)?;
                }
            }
            match &f.app {
                AppSpec::Cbr { rate_bps, .. } => rate(format!("flows[{i}].app.rate_bps"), *rate_bps)?,
                AppSpec::OnOff { rate_bps, on, off, .. } => {
                    rate(format!("flows[{i}].app.rate_bps"), *rate_bps)?;
                    positive_time(format!("flows[{i}].app.on"), *on)?;
                    time_or_zero(format!("flows[{i}].app.off"), *off)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}
