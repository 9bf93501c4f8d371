//! Congestion control: one small trait, one file per algorithm.
//!
//! The sender owns reliability (what to send, what is lost, the RTO, the
//! recovery state machine) and calls the algorithm at a few moments, in the
//! shape of Linux's `tcp_congestion_ops` and ns-3's `TcpCongestionOps`:
//!
//! | hook | when | Linux analogue |
//! |---|---|---|
//! | [`CongestionControl::on_ack_sample`] | every ACK, duplicates included, with the RTT sample if any | `pkts_acked` |
//! | [`CongestionControl::on_ack`] | an ACK of new data outside fast recovery | `cong_avoid` |
//! | [`CongestionControl::ssthresh`] | a congestion event: entering fast recovery or an RTO | `ssthresh` |
//! | [`CongestionControl::on_recovery_exit`] | fast recovery completed | `CA_EVENT_COMPLETE_CWR` |
//! | [`CongestionControl::on_rto`] | after the sender applied an RTO (cwnd = 1) | `CA_EVENT_LOSS` |
//! | [`CongestionControl::on_send`] | every data packet sent | rate-based algorithms |
//! | [`CongestionControl::on_state`] | the sender's CA state changes ([`CaState`]) | `set_state` |
//! | [`CongestionControl::pacing_rate_bps`] | queried before each send | `sk_pacing_rate` |
//! | [`CongestionControl::trace_vars`] | each sampling instant | (tracing) |
//!
//! The algorithm owns `cwnd` growth, the new ssthresh on loss and an optional
//! pacing rate. Windows are in segments as f64: algorithms with Linux's integer
//! `snd_cwnd` keep it integral themselves (with their own fractional counter).
//!
//! Model-based algorithms (BBR) take the window over entirely, as Linux's
//! `cong_control` does; they say so with [`CongestionControl::controls_window`]
//! and then get these hooks, and the sender neither grows the window nor
//! applies PRR, recovery's `cwnd = ssthresh` or the inflation of Reno:
//!
//! | hook | when | Linux analogue |
//! |---|---|---|
//! | [`CongestionControl::init`] | the flow starts sending | `init` |
//! | [`CongestionControl::cong_control`] | every ACK, after loss detection, with its [`RateSample`] | `cong_control` |
//! | [`CongestionControl::on_tx_start`] | data is sent with nothing in flight | `CA_EVENT_TX_START` |
//! | [`CongestionControl::undo_cwnd`] | a reduction is undone | `undo_cwnd` |
//! | [`CongestionControl::on_packet_lost`] | a packet is marked lost | `skb_marked_lost` (BBRv3) |
//! | [`CongestionControl::on_ecn`] | every ACK of an ECN connection, before `on_ack_sample` and `cong_control` | `tp->delivered_ce`, `rs->is_ece` |
//!
//! ECN (RFC 3168, Accurate ECN; see `tcp::sender` and `tcp::receiver`):
//!
//! | hook | when | Linux analogue |
//! |---|---|---|
//! | [`CongestionControl::ecn`] | once, when the flow is built: what the algorithm needs of ECN | `TCP_CONG_NEEDS_ECN`, `TCP_CONG_NEEDS_ACCECN`, `TCP_CONG_WANTS_ECT_1` |
//! | [`CongestionControl::ecn_ssthresh`] | entering CWR on an ECN echo (default: [`CongestionControl::ssthresh`] of a fast recovery, as Linux's one `ssthresh` hook) | `ssthresh` from `tcp_init_cwnd_reduction` in `tcp_enter_cwr` |
//! | [`CongestionControl::on_cwr`] | the sender enters or leaves the CWR state | `set_state(TCP_CA_CWR)`, back to Open |

pub mod areno;
pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod bwe;
pub mod compound;
pub mod cubic;
pub mod dctcp;
pub mod delay;
pub mod fast;
pub mod filters;
pub mod highspeed;
pub mod htcp;
pub mod knn;
pub mod prague;
pub mod rce;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod westwood;
pub mod westwood_bs;
pub mod westwood_re;

use crate::error::SpecError;
use crate::net::Ecn;
use crate::spec::CcSpec;

/// A flow's ECN feedback mode (the spec's `flows[i].ecn`): none, RFC 3168's
/// ECE/CWR ("classic"), or Accurate ECN's ACE counter
/// (draft-ietf-tcpm-accurate-ecn, Linux 6.18 `tcp_ecn.h`). Ordered: a mode
/// provides everything the ones below it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    #[default]
    Off,
    Classic,
    AccEcn,
}

impl EcnMode {
    pub fn name(self) -> &'static str {
        match self {
            EcnMode::Off => "off",
            EcnMode::Classic => "classic",
            EcnMode::AccEcn => "accecn",
        }
    }
}

/// What an algorithm needs of ECN ([`CongestionControl::ecn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcnUse {
    /// The mode a flow gets when its spec does not say.
    pub default_mode: EcnMode,
    /// The least mode it works with (Linux `TCP_CONG_NEEDS_ECN`: classic;
    /// `TCP_CONG_NEEDS_ACCECN`: accecn); a flow asking for less is refused.
    /// Off: none. Needing ECN also keeps ECT on classic retransmissions
    /// (`tcp_ecn_send`: `!tcp_ca_needs_ecn(sk)` clears it otherwise).
    pub needs: EcnMode,
    /// The codepoint of its data: ECT(0), or ECT(1) for L4S (RFC 9331;
    /// Linux `TCP_CONG_WANTS_ECT_1`).
    pub ect: Ecn,
    /// Under classic feedback its receiver echoes each data packet's CE
    /// state (ECE iff the last data packet was CE, an immediate ACK when it
    /// changes: Linux `dctcp_ece_ack_update` on CA_EVENT_ECN_IS_CE /
    /// NO_CE) instead of RFC 3168's latch until CWR. Both ends are taken to
    /// run the flow's algorithm.
    pub precise_echo: bool,
}

impl EcnUse {
    /// Algorithms that do not use ECN: off unless the spec turns it on.
    pub const NONE: EcnUse =
        EcnUse { default_mode: EcnMode::Off, needs: EcnMode::Off, ect: Ecn::Ect0, precise_echo: false };

    /// The flow's mode: `requested`, else the default; an error message if
    /// the algorithm needs more.
    pub fn resolve(&self, algorithm: &str, requested: Option<EcnMode>) -> Result<EcnMode, String> {
        let mode = requested.unwrap_or(self.default_mode);
        if mode < self.needs {
            return Err(format!(
                "{algorithm} needs {} ECN feedback (Linux {}), got {:?}",
                self.needs.name(),
                if self.needs == EcnMode::AccEcn { "TCP_CONG_NEEDS_ACCECN" } else { "TCP_CONG_NEEDS_ECN" },
                mode.name()
            ));
        }
        Ok(mode)
    }
}

/// The sender's congestion-avoidance state (Linux `icsk_ca_state`), as the
/// sender tells it through [`CongestionControl::on_state`].
///
/// The sender's own state machine has Open, Recovery and Loss; Disorder and
/// CWR are flags within Open, reported to the algorithms that grow the
/// window (window-controlling ones hear Open, Recovery and Loss only, and
/// ECN's CWR through [`CongestionControl::on_cwr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// Open, but the last ACK was a duplicate. Linux enters Disorder while
    /// SACKed or lost segments are outstanding (`tcp_try_to_open`); the
    /// sender's simpler rule: a duplicate ACK in Open enters it, the next
    /// ACK of new data leaves it.
    Disorder,
    /// An ECN window reduction (RFC 3168's CWR; Linux `TCP_CA_CWR`), until
    /// the data outstanding when it began is acknowledged.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout, until everything outstanding then is acknowledged.
    Loss,
}

/// A delivery-rate sample, one per ACK (draft-cheng-iccrg-delivery-rate-
/// estimation; Linux `struct rate_sample`, filled by net/ipv4/tcp_rate.c).
/// Counts are segments, times seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateSample {
    /// Segments delivered over `interval` (`rs->delivered`); -1 when the
    /// ACK gives no sample (no timing information yet).
    pub delivered: i64,
    /// The sample's interval, the longer of its send and ACK phases
    /// (`rs->interval_us`); negative when invalid (none, or shorter than
    /// the minimum RTT).
    pub interval: f64,
    /// `tp->delivered` when the packet that gave the sample was sent.
    pub prior_delivered: u64,
    /// The packet that gave the sample was sent while the sender was
    /// application-limited (`rs->is_app_limited`).
    pub is_app_limited: bool,
    /// ... and was a retransmission (`rs->is_retrans`).
    pub is_retrans: bool,
    /// Segments newly cumulatively ACKed or SACKed by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u64,
    /// Segments this ACK marked lost (`rs->losses`).
    pub losses: u64,
    /// This ACK's RTT sample (`rs->rtt_us`), if it gave one.
    pub rtt: Option<f64>,
    /// Segments in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u64,
    /// Segments in flight when the packet that gave the sample was sent,
    /// itself included (BBRv3's `rs->tx_in_flight`).
    pub tx_in_flight: u64,
    /// Segments marked lost since that packet was sent (BBRv3's `rs->lost`).
    pub lost: u64,
    /// Segments delivered with a CE mark over the interval (`rs->delivered_ce`).
    pub delivered_ce: u64,
}

impl RateSample {
    /// Whether the sample carries a delivery rate (`rs->delivered > 0 && rs->interval_us > 0`).
    #[inline]
    pub fn has_rate(&self) -> bool {
        self.delivered > 0 && self.interval > 0.0
    }
}

/// The connection as a window-controlling algorithm reads it: the
/// `tcp_sock` fields BBR uses.
#[derive(Debug, Clone, Copy)]
pub struct Conn {
    /// Simulated time, seconds (`tp->tcp_mstamp`).
    pub now: f64,
    /// Segments in flight now (`tcp_packets_in_flight`).
    pub in_flight: u64,
    /// Segments delivered so far (`tp->delivered`) and when the last was (`tp->delivered_mstamp`).
    pub delivered: u64,
    pub delivered_time: f64,
    /// Segments marked lost so far (`tp->lost`).
    pub lost: u64,
    /// Linux `tp->app_limited`: 0, or the `delivered` count after which the
    /// application-limited bubble is gone. An algorithm may set it (BBR on
    /// entering ProbeRTT); the sender keeps what it is set to.
    pub app_limited: u64,
    pub state: CaState,
    /// Smoothed RTT (0 before the first sample) and the smallest RTT seen (+inf before), seconds.
    pub srtt: f64,
    pub min_rtt: f64,
    /// Payload bytes of a full segment (`tp->mss_cache`).
    pub mss: u32,
    /// The window, not the application, limited the last sending opportunity.
    pub cwnd_limited: bool,
    /// Earliest departure time of the next paced packet, seconds (Linux
    /// `max(tp->tcp_wstamp_ns, now)`; `now` when nothing is held back).
    pub edt: f64,
}

/// The window the sender enforces, shared with the algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
}

impl Window {
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What an ACK tells the algorithm.
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    /// Simulated time, seconds.
    pub now: f64,
    /// Segments newly delivered by this ACK: cumulatively ACKed (and not
    /// SACKed before) plus newly SACKed (Linux's `acked_sacked`).
    pub acked: u32,
    /// Segments newly cumulatively acknowledged.
    pub cum_acked: u32,
    /// RTT measured from this ACK (seconds), if it gave a valid sample (Karn).
    pub rtt: Option<f64>,
    /// Smoothed RTT (seconds, 0 before the first sample).
    pub srtt: f64,
    /// Smallest RTT seen so far (seconds, +inf before the first sample).
    pub min_rtt: f64,
    /// Segments in flight after processing this ACK (RFC 6675 pipe / FlightSize).
    pub in_flight: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Segments delivered to the receiver so far (cumulative, SACKed included).
    pub delivered: u64,
    /// Whether the window, not the application or the receiver, limited the
    /// last sending opportunity (Linux `tcp_is_cwnd_limited`).
    pub cwnd_limited: bool,
    /// Duplicate ACK (acknowledges nothing new cumulatively).
    pub duplicate: bool,
}

#[cfg(test)]
impl AckSample {
    /// A plain ACK for the algorithms' rule tests: `acked` segments newly
    /// delivered at `now`, no RTT sample, SRTT and min RTT 100 ms, nothing in
    /// flight, window-limited. Tests override fields with struct update.
    pub(crate) fn test(now: f64, acked: u32) -> Self {
        AckSample {
            now,
            acked,
            cum_acked: acked,
            rtt: None,
            srtt: 0.1,
            min_rtt: 0.1,
            in_flight: 0,
            snd_una: 0,
            snd_nxt: 0,
            delivered: 0,
            cwnd_limited: true,
            duplicate: false,
        }
    }
}

#[cfg(test)]
impl Conn {
    /// A connection at `now` for the algorithms' rule tests (hooks that take
    /// a [`Conn`], such as [`CongestionControl::on_state`]): nothing in
    /// flight or delivered yet, no RTT sample, MSS 1448, Open.
    pub(crate) fn test(now: f64) -> Self {
        Conn {
            now,
            in_flight: 0,
            delivered: 0,
            delivered_time: 0.0,
            lost: 0,
            app_limited: 0,
            state: CaState::Open,
            srtt: 0.0,
            min_rtt: f64::INFINITY,
            mss: 1448,
            cwnd_limited: true,
            edt: now,
        }
    }
}

/// Why the sender asks for a new ssthresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossEvent {
    /// Loss detected by duplicate ACKs or SACK: entering fast recovery.
    FastRecovery,
    /// Retransmission timeout.
    Timeout,
}

pub trait CongestionControl: Send {
    /// Canonical algorithm name.
    fn name(&self) -> &'static str;
    /// Every ACK, before loss processing: RTT, delay and rate sampling.
    fn on_ack_sample(&mut self, _w: &Window, _s: &AckSample) {}
    /// ACK of new data while not in fast recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample);
    /// New ssthresh (segments) for a congestion event; the sender applies it.
    /// `in_flight` is the RFC 5681 FlightSize at the event (sent and not
    /// cumulatively acknowledged).
    fn ssthresh(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64) -> f64;
    /// Fast recovery has ended; the sender has set cwnd = ssthresh.
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: f64) {}
    /// A retransmission timeout has been applied (cwnd = 1 segment).
    fn on_rto(&mut self, _w: &mut Window, _now: f64) {}
    /// A data packet (`bytes` on the wire) is sent.
    fn on_send(&mut self, _now: f64, _bytes: u32, _in_flight: u64) {}
    /// Pacing rate in bit/s of payload, if the algorithm paces (Linux
    /// `sk_pacing_rate` x 8: the sender spaces packets by their payload
    /// bytes over this rate, as `tcp_update_skb_after_send`).
    fn pacing_rate_bps(&self) -> Option<f64> {
        None
    }
    /// Internal variables worth plotting (estimates, filters, epochs), as
    /// (name, value) pairs; the run samples them into the `cc_ts` time series
    /// at every sampling instant. Names are the algorithm's own.
    fn trace_vars(&self, _out: &mut Vec<(&'static str, f64)>) {}

    // The hooks of window-controlling algorithms (module docs).

    /// True: the algorithm sets cwnd itself in [`Self::cong_control`], and
    /// the sender keeps per-packet delivery-rate snapshots for it.
    fn controls_window(&self) -> bool {
        false
    }
    /// The flow starts: set the initial window and pacing rate.
    fn init(&mut self, _w: &mut Window, _c: &Conn) {}
    /// Every ACK, after loss detection and recovery's bookkeeping.
    fn cong_control(&mut self, _w: &mut Window, _rs: &RateSample, _c: &mut Conn) {}
    /// The sender's CA state became `_new` (Linux `set_state`, called from
    /// `tcp_set_ca_state`), after it applied its own rules: entering fast
    /// recovery after [`Self::ssthresh`], on a timeout after [`Self::on_rto`]
    /// (cwnd is already 1; told on every timeout, as Linux `tcp_enter_loss`
    /// does, even in Loss), leaving recovery before
    /// [`Self::on_recovery_exit`], and Disorder and back to Open after
    /// [`Self::on_ack_sample`] and before [`Self::on_ack`] of the same ACK
    /// (Linux's `pkts_acked` sees the state before `tcp_fastretrans_alert`
    /// changes it). Every algorithm hears it; window-controlling ones never
    /// hear Disorder or Cwr (see [`CaState`]).
    fn on_state(&mut self, _w: &mut Window, _new: CaState, _c: &Conn) {}
    /// Data is about to be sent with nothing in flight.
    fn on_tx_start(&mut self, _w: &mut Window, _c: &Conn) {}
    /// A window reduction is undone; returns the cwnd to restore (Linux's
    /// default `tcp_reno_undo_cwnd`: the larger of now and before).
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: f64) -> f64 {
        w.cwnd.max(prior_cwnd)
    }
    /// A packet was just marked lost (Linux `skb_marked_lost`, BBRv3):
    /// `tx_in_flight` is its in-flight snapshot when sent (itself included),
    /// `lost_since_send` the segments marked lost since it was sent (itself
    /// included: `tp->lost - tx.lost`), `tx_app_limited` its app-limited
    /// flag. Not called for a packet SACKed or already marked lost.
    fn on_packet_lost(
        &mut self,
        _w: &Window,
        _tx_in_flight: u64,
        _lost_since_send: u64,
        _tx_app_limited: bool,
        _c: &Conn,
    ) {
    }
    /// ECN-capable connections, every ACK before `on_ack_sample` and
    /// `cong_control`: segments delivered with a CE mark so far
    /// (`tp->delivered_ce`: classic ECN counts every segment an ECE ACK
    /// delivers, Accurate ECN the ACE deltas) and whether the ACK echoed
    /// CE (`rs->is_ece`, FLAG_ECE: classic ECE, or a non-zero AccECN delta).
    fn on_ecn(&mut self, _delivered_ce: u64, _ece: bool) {}

    // ECN (module docs).

    /// What the algorithm needs of ECN; default: nothing (off unless asked).
    fn ecn(&self) -> EcnUse {
        EcnUse::NONE
    }
    /// New ssthresh on entering CWR for an ECN echo (once per window).
    /// Linux has one `ssthresh` hook for both; the default is that of a
    /// fast recovery. DCTCP's differs (its loss response halves instead).
    fn ecn_ssthresh(&mut self, w: &Window, in_flight: u64, now: f64) -> f64 {
        self.ssthresh(w, LossEvent::FastRecovery, in_flight, now)
    }
    /// The sender entered (`true`, after `ecn_ssthresh`) or left the CWR
    /// state of an ECN reduction (Linux `set_state(TCP_CA_CWR)` and the
    /// return to Open); window-controlling algorithms (Prague) reduce here.
    fn on_cwr(&mut self, _w: &mut Window, _enter: bool, _c: &Conn) {}
}

/// A documented parameter of an algorithm. Its `default` is rendered from
/// the algorithm's `Config::default()` (or, for an algorithm with variants,
/// from each variant's config, [`variant_default`]), the one place the value
/// is written.
#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: String,
    pub description: &'static str,
    pub source: &'static str,
}

impl ParamInfo {
    pub fn new(name: &'static str, default: impl ParamValue, description: &'static str, source: &'static str) -> Self {
        ParamInfo { name, default: default.shown(), description, source }
    }
}

/// A parameter value as `tcplab algorithms` shows a default: numbers as
/// Rust's shortest round-trip decimal, choices by their spec spelling.
pub trait ParamValue {
    fn shown(&self) -> String;
}

impl ParamValue for f64 {
    /// Shortest round-trip decimal; very small or large values in
    /// exponent form (`1e-7`, `1e7`).
    fn shown(&self) -> String {
        let a = self.abs();
        if a != 0.0 && !(1e-4..1e7).contains(&a) {
            format!("{self:e}")
        } else {
            format!("{self}")
        }
    }
}

impl ParamValue for u64 {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for u32 {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for bool {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for &str {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for String {
    fn shown(&self) -> String {
        self.clone()
    }
}

/// A parameter that is one of a few names, read by [`Params::pick`].
pub trait Choice: Copy + Sized {
    /// The spellings, in the order error messages list them.
    const NAMES: &'static [&'static str];
    fn name(self) -> &'static str;
    fn from_name(s: &str) -> Option<Self>;
}

/// Implements [`Choice`] and [`ParamValue`] for an enum of parameter
/// values: `param_choice!(Mode { Linux => "linux", Float => "float" })`.
#[macro_export]
macro_rules! param_choice {
    ($ty:ty { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $crate::cc::Choice for $ty {
            const NAMES: &'static [&'static str] = &[$($s),+];
            fn name(self) -> &'static str {
                match self {
                    $(Self::$v => $s),+
                }
            }
            fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($s => Some(Self::$v),)+
                    _ => None,
                }
            }
        }
        impl $crate::cc::ParamValue for $ty {
            fn shown(&self) -> String {
                $crate::cc::Choice::name(*self).to_string()
            }
        }
    };
}

/// The default of one parameter of an algorithm with variants, from each
/// variant's config: the value when all agree, else each value with the
/// variants that have it, e.g. `2 (linux, linux-2.6) / 1 (paper)`.
pub fn variant_default<C, T: ParamValue>(variants: &[(&str, C)], get: impl Fn(&C) -> T) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, c) in variants {
        let v = get(c).shown();
        match groups.iter_mut().find(|(g, _)| *g == v) {
            Some((_, names)) => names.push(name),
            None => groups.push((v, vec![name])),
        }
    }
    if groups.len() == 1 {
        return groups.pop().map(|(v, _)| v).unwrap_or_default();
    }
    groups.iter().map(|(v, names)| format!("{v} ({})", names.join(", "))).collect::<Vec<_>>().join(" / ")
}

/// An algorithm as listed by `tcplab algorithms`.
#[derive(Debug, Clone)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub params: Vec<ParamInfo>,
}

impl AlgorithmInfo {
    /// The parameter names, as [`Params::new`] accepts them.
    pub fn param_names(&self) -> Vec<&'static str> {
        self.params.iter().map(|p| p.name).collect()
    }
}

/// Builds an algorithm from its parameters; `field` is the path used in errors
/// (e.g. `flows[0].cc`).
pub type BuildFn =
    fn(&serde_json::Map<String, serde_json::Value>, &str) -> Result<Box<dyn CongestionControl>, SpecError>;

/// One registry line: (description, constructor).
type Entry = (fn() -> AlgorithmInfo, BuildFn);

/// The registry: one line per algorithm, (description, constructor).
const ALGORITHMS: &[Entry] = &[
    (reno::info, reno::build),
    (bic::info, bic::build),
    (cubic::info, cubic::build),
    (scalable::info, scalable::build),
    (highspeed::info, highspeed::build),
    (htcp::info, htcp::build),
    (westwood::info, westwood::build),
    (westwood_re::info, westwood_re::build),
    (westwood_bs::info, westwood_bs::build),
    (vegas::info, vegas::build),
    (compound::info, compound::build),
    (fast::info, fast::build),
    (areno::info, areno::build),
    (bbr::info, bbr::build),
    (bbr3::info, bbr3::build),
    (dctcp::info, dctcp::build),
    (prague::info, prague::build),
];

/// Every algorithm the core implements.
pub fn catalog() -> Vec<AlgorithmInfo> {
    ALGORITHMS.iter().map(|(info, _)| info()).collect()
}

/// Builds the algorithm of `spec`; `field` names the spec's path in errors.
pub fn build(spec: &CcSpec, field: &str) -> Result<Box<dyn CongestionControl>, SpecError> {
    let name = spec.algorithm.to_ascii_lowercase();
    for (info, build) in ALGORITHMS {
        let i = info();
        if i.name == name || i.aliases.contains(&name.as_str()) {
            return build(&spec.params, field);
        }
    }
    let known: Vec<&str> =
        catalog().iter().flat_map(|i| std::iter::once(i.name).chain(i.aliases.iter().copied())).collect();
    let mut close: Vec<(usize, &str)> =
        known.iter().map(|k| (edit_distance(k, &name), *k)).filter(|(d, _)| *d <= 3).collect();
    close.sort();
    let hint = if close.is_empty() {
        format!("known algorithms: {}", known.join(", "))
    } else {
        format!("did you mean {}?", close.iter().map(|(_, k)| format!("{k:?}")).collect::<Vec<_>>().join(" or "))
    };
    Err(SpecError::new(format!("{field}.algorithm"), format!("unknown algorithm {:?}; {hint}", spec.algorithm)))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != *cb) as usize).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Reads algorithm parameters from the JSON map, rejecting unknown names.
pub struct Params<'a> {
    map: &'a serde_json::Map<String, serde_json::Value>,
    field: String,
    allowed: Vec<&'static str>,
}

impl<'a> Params<'a> {
    pub fn new(
        map: &'a serde_json::Map<String, serde_json::Value>,
        field: &str,
        allowed: &[&'static str],
    ) -> Result<Self, SpecError> {
        for k in map.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(SpecError::new(
                    format!("{field}.params.{k}"),
                    format!(
                        "unknown parameter; its parameters: {}",
                        if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
                    ),
                ));
            }
        }
        Ok(Params { map, field: field.to_string(), allowed: allowed.to_vec() })
    }

    pub fn f64(&self, name: &str, default: f64, valid: impl Fn(f64) -> bool, what: &str) -> Result<f64, SpecError> {
        debug_assert!(self.allowed.contains(&name));
        match self.map.get(name) {
            None => Ok(default),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && valid(x) => Ok(x),
                _ => Err(SpecError::new(format!("{}.params.{name}", self.field), format!("must be {what}, got {v}"))),
            },
        }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, SpecError> {
        match self.map.get(name) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| {
                SpecError::new(format!("{}.params.{name}", self.field), format!("must be true or false, got {v}"))
            }),
        }
    }

    pub fn u64(&self, name: &str, default: u64, valid: impl Fn(u64) -> bool, what: &str) -> Result<u64, SpecError> {
        match self.map.get(name) {
            None => Ok(default),
            Some(v) => match v.as_u64() {
                Some(x) if valid(x) => Ok(x),
                _ => Err(SpecError::new(format!("{}.params.{name}", self.field), format!("must be {what}, got {v}"))),
            },
        }
    }

    /// A choice parameter read into its enum (see [`param_choice!`]).
    pub fn pick<T: Choice>(&self, name: &str, default: T) -> Result<T, SpecError> {
        let s = self.choice(name, default.name(), T::NAMES)?;
        Ok(T::from_name(s).unwrap_or(default))
    }

    pub fn choice(
        &self,
        name: &str,
        default: &'static str,
        options: &[&'static str],
    ) -> Result<&'static str, SpecError> {
        match self.map.get(name) {
            None => Ok(default),
            Some(v) => {
                let s = v.as_str().unwrap_or("");
                options.iter().find(|o| **o == s).copied().ok_or_else(|| {
                    SpecError::new(
                        format!("{}.params.{name}", self.field),
                        format!("must be one of {}, got {v}", options.join(", ")),
                    )
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_suggests_close_names() {
        let spec = CcSpec { algorithm: "newrneo".into(), params: Default::default() };
        let err = build(&spec, "flows[0].cc").err().unwrap();
        assert_eq!(err.field, "flows[0].cc.algorithm");
        assert!(err.message.contains("\"newreno\""), "{}", err.message);
    }

    #[test]
    fn listed_parameters_are_single_unique_names() {
        // The Python front end validates parameters against this listing by
        // exact name, so one entry must be one parameter.
        for a in catalog() {
            let mut seen = std::collections::HashSet::new();
            for p in &a.params {
                assert!(
                    !p.name.is_empty() && p.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{}: parameter {:?} is not one name",
                    a.name,
                    p.name
                );
                assert!(seen.insert(p.name), "{}: parameter {:?} listed twice", a.name, p.name);
            }
        }
    }

    #[test]
    fn unknown_parameter_is_named() {
        let mut params = serde_json::Map::new();
        params.insert("bta".into(), serde_json::json!(0.5));
        let spec = CcSpec { algorithm: "reno".into(), params };
        let err = build(&spec, "flows[1].cc").err().unwrap();
        assert_eq!(err.field, "flows[1].cc.params.bta");
    }
}
