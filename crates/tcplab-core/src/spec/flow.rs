//! The flows of a run: TCP settings (recovery, ACK policy, timers, ECN),
//! the congestion control and its parameters, and what the application
//! sends.

use serde::{Deserialize, Serialize};

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppSpec {
    /// Unlimited data from the flow's start time.
    #[default]
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
pub(super) fn is_d_delack_min(v: &f64) -> bool {
    *v == d_delack_min()
}
fn d_delack_max() -> f64 {
    0.2
}
pub(super) fn is_d_delack_max(v: &f64) -> bool {
    *v == d_delack_max()
}
fn d_quickacks() -> u32 {
    16
}
pub(super) fn is_d_quickacks(v: &u32) -> bool {
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
