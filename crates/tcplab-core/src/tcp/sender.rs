//! TCP sender: reliability and loss recovery; window growth is delegated to a
//! [`CongestionControl`].
//!
//! Read first: RFC 5681 (slow start, congestion avoidance, fast
//! retransmit/fast recovery), RFC 6582 (NewReno), RFC 6675 (SACK-based loss
//! recovery), RFC 6298 (RTO), RFC 3042 (limited transmit).
//!
//! Recovery variants, chosen per flow:
//! - **Reno** (RFC 5681 3.2): on the third duplicate ACK, `ssthresh` from the
//!   algorithm, retransmit the first unacknowledged segment, `cwnd = ssthresh
//!   + 3`; each further duplicate ACK inflates the window by one; "when the
//!   next ACK arrives that acknowledges previously unacknowledged data, a TCP
//!   MUST set cwnd to ssthresh" and recovery ends, even if more segments of the
//!   window were lost (those need more duplicate ACKs or the RTO). After a
//!   timeout a new fast retransmit waits for an ACK above `recover` (ns-2's
//!   `bugFix_`; see [`Sender::may_fast_retransmit`]).
//! - **NewReno** (RFC 6582 3.2): `recover` = highest sequence sent at entry; a
//!   partial ACK retransmits the first unacknowledged segment and deflates the
//!   window by the amount acknowledged minus one segment; the timer is reset
//!   on the first partial ACK only (the "Impatient" variant); a full ACK ends
//!   recovery with `cwnd = ssthresh` (RFC 6582's option 2, as ns-2 and Linux).
//!   A new fast retransmit needs a cumulative ACK that "covers more than
//!   recover", also after an RTO (RFC 6582 3.2 step 1 and section 4).
//!
//! Reno and NewReno keep the window inflation apart from `cwnd`
//! ([`Sender::inflation`], ns-2's `dupwnd_`), so no inflation can outlive a
//! recovery or reach the congestion control.
//! - **SACK** (RFC 6675): a scoreboard of SACKed ranges; a segment is lost when
//!   `DupThresh` SACKed segments lie above it (`IsLost`); recovery starts on
//!   `DupThresh` duplicate ACKs or when the first unacknowledged segment is
//!   lost, with `cwnd = ssthresh`; while `cwnd - pipe >= 1` the sender sends
//!   `NextSeg()`: the first lost segment not yet retransmitted, else new data.
//!   `pipe` is computed as Linux does, `packets_out - sacked_out - lost_out +
//!   retrans_out`, in O(1) from counters.
//!
//! Retransmission timeout (RFC 6298 + RFC 5681 3.1): `ssthresh` from the
//! algorithm (held if the same data already timed out, RFC 5681: "the value of
//! ssthresh is held constant"; not reduced again inside fast recovery, as
//! Linux), `cwnd = 1`, exponential backoff. Non-SACK senders then go back N
//! (resend from the first unacknowledged segment, as ns-2 and BSD); SACK
//! senders mark every un-SACKed segment lost and retransmit them through
//! `NextSeg()` (as Linux's Loss state).
//!
//! Per-ACK cost is O(1) amortized: each segment is marked SACKed, acknowledged
//! and retransmitted a bounded number of times; the scoreboard is a sorted
//! deque of SACKed ranges (ranges leave from the front as the cumulative ACK
//! advances and usually arrive at the back; a range inserted in the middle
//! costs O(log n) to find and a shift of the shorter side), and `pipe` and the
//! lost boundary come from counters and the top of that deque.
//!
//! Linux mechanisms, each behind its own switch (the Linux profile turns
//! them on; docs/tcp.md "The Linux profile"): PRR (RFC 6937,
//! [`Sender::prr_reduce`]), RACK loss detection with the tail loss probe
//! (RFC 8985, [`Sender::rack_detect_loss`], [`Sender::send_loss_probe`]),
//! F-RTO (RFC 5682) and undo ([`Sender::loss_undo_or_frto`],
//! [`Sender::undo_reduction`]). The sender has one timer, as Linux's
//! `icsk_pending`: its kind ([`Timer`]) says whether it is the RTO, RACK's
//! reordering timer or the probe timer.
//!
//! ECN, per flow ([`Sender::ecn`]: off, classic or Accurate ECN; the
//! default is the algorithm's, [`crate::cc::CongestionControl::ecn`]):
//! - Marking (Linux `tcp_ecn_send`): classic (RFC 3168 6.1.5), new data is
//!   ECT(0) and retransmissions Not-ECT, unless the algorithm needs ECN
//!   (DCTCP keeps ECT on them); AccECN, every data segment carries the
//!   algorithm's ECT (Prague's ECT(1)). Classic sends CWR on the first new
//!   segment after a reduction: a CWR state, a fast recovery or an RTO
//!   (`tcp_ecn_queue_cwr` in `tcp_init_cwnd_reduction` and `tcp_enter_loss`).
//! - Feedback (`Sender::ecn_feedback`, Linux `tcp_ecn_rcv_ecn_echo`,
//!   `tcp_count_delivered`, `__tcp_accecn_process`): classic, ECE on any
//!   ACK not below `snd_una` is an echo, and every segment it newly
//!   delivers (cumulatively or by SACK) counts as CE-marked; AccECN, an ACK
//!   of forward progress gives the CE delta (ACE - 5 - delivered_ce) mod 8,
//!   or for more than 7 segments Linux's safe delta `delivered - ((delivered
//!   - delta) mod 8)` (the most marks the field allows); a non-zero delta
//!   is an echo. The algorithm hears `on_ecn(delivered_ce, echo)` on every
//!   ACK, before `on_ack_sample`; rate samples carry `delivered_ce`.
//! - Response, for every algorithm (Linux `tcp_try_to_open` ->
//!   `tcp_enter_cwr`, RFC 3168 6.1.2): an echo in Open enters CWR, once per
//!   window: ssthresh from the algorithm (`ecn_ssthresh`, by default its
//!   loss `ssthresh`, as Linux's single hook), no undo, held until an ACK
//!   covers more than the highest segment sent when it began (Linux
//!   `high_seq`; the next echo then starts the next CWR). With PRR (the
//!   Linux profile) the window follows `tcp_cwnd_reduction`, as a recovery
//!   without retransmissions; without PRR cwnd = ssthresh at once, as RFC
//!   3168's "halves cwnd". No growth during CWR; at its end cwnd = ssthresh
//!   and `on_recovery_exit` (CA_EVENT_COMPLETE_CWR). Loss recovery takes
//!   precedence: no CWR in Recovery or Loss; a fast recovery entered during
//!   CWR keeps CWR's ssthresh and PRR counters (`tcp_in_cwnd_reduction`),
//!   an RTO during CWR's window does not cut ssthresh again (`tcp_enter_loss`),
//!   and neither can be undone to before the echo. Window-controlling
//!   algorithms keep their window and hear `on_cwr` (Prague cuts there).
//!   DCTCP and Prague cut by alpha/2 through these same hooks.
//! - ECN deviations: no handshake (the mode is given, both ends agree; no
//!   fallback or codepoint validation), no AccECN TCP option; on entering
//!   recovery from CWR `recover` is set as usual (Linux keeps CWR's
//!   `high_seq`); the CWR state is not a [`CaState`] (a flag within Open).
//!
//! Deviations (documented in docs/tcp.md): no rescue retransmission (RFC
//! 6675 NextSeg rule 4) and no rule 3. RTT samples (no timestamps): one per
//! ACK, from the newest newly acknowledged segment; none from a cumulative ACK whose range includes a
//! retransmitted segment (Karn's rule, as Linux's FLAG_RETRANS_DATA_ACKED),
//! while newly SACKed never-retransmitted segments still give one.

use std::collections::VecDeque;

use crate::cc::knn::{LossClassifier, LossVerdict};
use crate::cc::{AckSample, CongestionControl, Conn, EcnMode, LossEvent, Window};
use crate::net::packet::{tcp_flags, SackBlocks};
use crate::net::Packet;
use crate::sim::time::{from_secs, to_secs, Time};
use crate::spec::{DupAckGuard, Recovery};
use crate::tcp::app::SegmentMap;
use crate::tcp::rate::RateSampler;
use crate::tcp::receiver::{EcnConfig, ACE_INIT};
use crate::tcp::rtt::RttEstimator;
use crate::trace::RetransmitCause;

/// Linux's TCP_INFINITE_SSTHRESH: "arbitrarily high" initial ssthresh.
pub const INFINITE_SSTHRESH: f64 = 2_147_483_647.0;

const RETX: u8 = 1;
const SACKED: u8 = 2;
/// A retransmission of this segment is counted in `retrans_out`.
const RETX_OUT: u8 = 4;

/// Per-segment state of the segments outstanding, `[snd_una, high_data)`:
/// send time and flags in one word (the flags in the top [`FLAG_BITS`]
/// bits, the time below: simulated time is limited to 2^61 ps, about 26
/// days, by the spec's validation), in a ring indexed by sequence number
/// modulo a power of two. One word, not two arrays (a `Vec<Time>` and a
/// `Vec<u8>`): an ACK reads a segment's flags and send time, and with
/// thousands of flows each array was a cache miss of its own. The ring
/// grows with the window and [`SegMetas::trim`] shrinks it again when the
/// window is far smaller, so memory follows the current window, not the
/// largest ever.
#[derive(Debug)]
struct SegMetas {
    e: Vec<u64>,
    mask: u64,
}

const META_MIN: usize = 64;
/// Bits of a segment's word holding its flags (`RETX`, `SACKED`, `RETX_OUT`).
const FLAG_BITS: u32 = 3;
const TIME_BITS: u32 = 64 - FLAG_BITS;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
/// Latest simulated time a run may reach (ps).
pub const MAX_TIME: Time = TIME_MASK;
const _: () = assert!((RETX | SACKED | RETX_OUT) as u64 >> FLAG_BITS == 0);

impl SegMetas {
    fn new() -> Self {
        SegMetas { e: vec![0; META_MIN], mask: META_MIN as u64 - 1 }
    }

    // SAFETY (the accessors): the vector has length mask + 1, so a masked
    // index is in bounds.
    #[inline(always)]
    fn word(&self, q: u64) -> u64 {
        unsafe { *self.e.get_unchecked((q & self.mask) as usize) }
    }

    #[inline(always)]
    fn word_mut(&mut self, q: u64) -> &mut u64 {
        unsafe { self.e.get_unchecked_mut((q & self.mask) as usize) }
    }

    #[inline(always)]
    fn flags(&self, q: u64) -> u8 {
        (self.word(q) >> TIME_BITS) as u8
    }

    #[inline(always)]
    fn set_flags(&mut self, q: u64, f: u8) {
        let w = self.word_mut(q);
        *w = (*w & TIME_MASK) | (f as u64) << TIME_BITS;
    }

    #[inline(always)]
    fn sent(&self, q: u64) -> Time {
        self.word(q) & TIME_MASK
    }

    /// A new segment sent at `t`, no flags: the word is written, not read
    /// and modified (what it held is a segment one lap of the ring ago, with
    /// thousands of flows a cache miss that a read would wait for).
    #[inline(always)]
    fn set_new(&mut self, q: u64, t: Time) {
        debug_assert!(t <= MAX_TIME);
        *self.word_mut(q) = t;
    }

    #[inline(always)]
    fn set_sent(&mut self, q: u64, t: Time) {
        debug_assert!(t <= MAX_TIME);
        let w = self.word_mut(q);
        *w = (*w & !TIME_MASK) | t;
    }

    /// Room for segments `[una, high)`, keeping their state.
    #[inline]
    fn ensure(&mut self, una: u64, high: u64) {
        let need = high - una;
        if need as usize > self.e.len() {
            self.resize(una, high, (need as usize).next_power_of_two().max(self.e.len() * 2));
        }
    }

    #[cold]
    fn resize(&mut self, una: u64, high: u64, cap: usize) {
        let mut e = vec![0; cap];
        let mask = cap as u64 - 1;
        for s in una..high {
            e[(s & mask) as usize] = self.word(s);
        }
        self.e = e;
        self.mask = mask;
    }

    /// Shrinks the rings to four times the segments outstanding if that
    /// halves them or more.
    fn trim(&mut self, una: u64, high: u64) {
        let want = ((4 * (high - una)) as usize).next_power_of_two().max(META_MIN);
        if want * 2 <= self.e.len() {
            self.resize(una, high, want);
        }
    }
}

pub use crate::cc::CaState;

#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    /// Data packets sent, retransmissions included.
    pub data_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub acks_received: u64,
    /// Tail loss probes sent, and the probes that repaired a loss (Linux
    /// TCPLossProbes, TCPLossProbeRecovery).
    pub tlp_probes: u64,
    pub tlp_recoveries: u64,
    /// Window reductions undone (Linux TCPDSACKUndo + TCPFullUndo +
    /// TCPLossUndo), and of those the timeouts F-RTO found spurious
    /// (TCPSpuriousRTOs).
    pub undos: u64,
    pub spurious_rtos: u64,
    /// Loss events judged by the loss classifier, and those it judged not congestion.
    pub loss_events: u64,
    pub loss_events_ignored: u64,
    /// Segments the receiver reported received twice in D-SACK blocks
    /// (RFC 2883; Linux `tp->dsack_dups`), for undo logic.
    pub dsacks: u64,
    /// Window reductions caused by ECN: CWR states entered (Linux
    /// `tcp_enter_cwr` from Open).
    pub ecn_reductions: u64,
    /// Segments the feedback reported CE-marked (Linux `tp->delivered_ce`):
    /// classic, every segment an ECE ACK delivered; AccECN, the sum of the
    /// ACE deltas.
    pub ce_delivered: u64,
}

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub flow: u32,
    pub recovery: Recovery,
    pub dupthresh: u32,
    pub dupack_guard: DupAckGuard,
    pub init_cwnd: f64,
    pub init_ssthresh: f64,
    pub rwnd: u64,
    pub limited_transmit: bool,
    pub restart_after_idle: bool,
    pub header_size: u32,
    /// Wire size = app bytes + header (payload accounting) or app bytes (ns-2).
    pub ns2_accounting: bool,
    pub init_rto: f64,
    pub min_rto: f64,
    pub max_rto: f64,
    pub rto_mode: crate::spec::RtoMode,
    /// Linux mechanisms (SACK senders; see `FlowSpec::prr`, `rack`, `tlp`).
    pub prr: bool,
    pub rack: bool,
    pub tlp: bool,
    pub frto: bool,
    pub undo: bool,
    /// Payload bytes of a full segment (for pacing rates).
    pub mss: u32,
    /// Linux's internal pacing for algorithms that do not pace (FlowSpec::pacing).
    pub pacing: bool,
    pub pacing_ss_ratio: f64,
    pub pacing_ca_ratio: f64,
    /// The spec's ECN mode (None: the algorithm's default).
    pub ecn: Option<EcnMode>,
}

impl SenderConfig {
    /// Flow `i`'s sender settings from its spec.
    pub fn from_flow(i: u32, f: &crate::spec::FlowSpec) -> Self {
        SenderConfig {
            flow: i,
            recovery: f.recovery,
            dupthresh: f.dupthresh,
            dupack_guard: f.dupack_guard,
            init_cwnd: f.init_cwnd,
            init_ssthresh: f.init_ssthresh.unwrap_or(INFINITE_SSTHRESH),
            rwnd: f.rwnd_packets.unwrap_or(u64::MAX),
            limited_transmit: f.limited_transmit,
            restart_after_idle: f.restart_after_idle,
            header_size: f.header_size,
            ns2_accounting: f.accounting == crate::spec::Accounting::Ns2,
            init_rto: f.init_rto,
            min_rto: f.min_rto,
            max_rto: f.max_rto,
            rto_mode: f.rto_mode,
            prr: f.prr,
            rack: f.rack,
            tlp: f.tlp,
            frto: f.frto,
            undo: f.undo,
            mss: f.mss(),
            pacing: f.pacing,
            pacing_ss_ratio: f.pacing_ss_ratio,
            pacing_ca_ratio: f.pacing_ca_ratio,
            ecn: f.ecn,
        }
    }
}

pub struct Sender {
    /// Where its data packets enter the network (set by the world).
    pub first_hop: crate::net::FirstHop,
    pub cfg: SenderConfig,
    pub cc: Box<dyn CongestionControl>,
    /// Optional loss classifier (e.g. k-NN): a loss it judges not congestion
    /// is repaired without reducing the window and without telling `cc`.
    pub classifier: Option<Box<dyn LossClassifier>>,
    /// During a recovery whose loss was judged not congestion: the window to
    /// hold (the cwnd at the loss) instead of ssthresh.
    hold: Option<f64>,
    pub w: Window,
    /// Reno/NewReno fast recovery's window inflation (RFC 5681 3.2 steps 3
    /// and 4: `dupthresh` segments at entry, one per further duplicate
    /// ACK), kept apart from `w.cwnd` as ns-2's `dupwnd_`: the sender may
    /// have `cwnd + inflation` in flight, the congestion control and the
    /// traces see `cwnd` only, and the inflation is gone when recovery ends
    /// (full ACK, Reno's first new ACK, or a timeout).
    pub inflation: f64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// One past the highest segment ever sent.
    pub high_data: u64,
    meta: SegMetas,
    // SACK scoreboard.
    sacked: VecDeque<(u64, u64)>,
    sacked_out: u64,
    /// Un-SACKed segments below this are lost (RFC 6675 IsLost).
    lost_high: u64,
    /// Next candidate for retransmission (RFC 6675 HighRxt + 1).
    rtx_next: u64,
    retrans_out: u64,
    pub state: CaState,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint, as one past the highest
    /// segment outstanding when recovery (or the RTO) began.
    recover: u64,
    /// `snd_una` before its last advance (RFC 6582 4.1's prev_highest_ack).
    prev_una: u64,
    /// The last window reduction was a timeout (ns-2's `last_cwnd_action_
    /// == CWND_ACTION_TIMEOUT`): a Reno sender then needs a cumulative ACK
    /// above `recover` before another fast retransmit.
    last_cut_by_rto: bool,
    dupacks: u32,
    partial_ack_seen: bool,
    /// NewReno "Impatient": a later partial ACK does not restart the timer.
    hold_timer: bool,
    /// Timeouts since `snd_una` last advanced (Linux `icsk_retransmits`):
    /// non-zero means the next timeout is of data already retransmitted by the timer.
    rto_retransmits: u32,
    /// Segments the application has made available: `[0, app_limit)`.
    pub app_limit: u64,
    pub started: bool,
    pub rtt: RttEstimator,
    pub rto_deadline: Option<Time>,
    pub rto_event: Option<Time>,
    pace_next: Time,
    pub pace_event: Option<Time>,
    /// Set when pacing held a packet back: the world schedules a Pace event.
    pub pace_wanted: Option<Time>,
    delivered: u64,
    cwnd_limited: bool,
    last_send: Time,
    /// The timer has fired and its own retransmission is not sent yet.
    rto_resend_pending: bool,
    pub stats: SenderStats,
    /// Every retransmission (time, segment, cause, segments outstanding),
    /// when the run traces them.
    pub rtx_trace: Option<Vec<(Time, u64, RetransmitCause, u64)>>,
    /// PRR (RFC 6937) state of the current fast recovery, Linux's names.
    prr: Prr,
    /// RACK (RFC 8985) state, Linux's `tp->rack`.
    rack: Rack,
    /// Segments whose retransmission is in flight, in the order they were
    /// resent (the retransmissions' part of Linux's time-sorted list): RACK
    /// checks the oldest first for lost retransmissions.
    rtx_order: VecDeque<u64>,
    /// What the one retransmission timer (`rto_deadline`) stands for now,
    /// as Linux's `icsk_pending`.
    pub timer: Timer,
    /// One past the highest segment sent when the outstanding tail loss
    /// probe went out (Linux `tlp_high_seq`), and whether it was a resend.
    tlp_high: Option<u64>,
    tlp_retrans: bool,
    /// What undo needs to revert the last reduction.
    undo: Undo,
    /// F-RTO is judging the last timeout (Linux `tp->frto`).
    frto: bool,
    /// This ACK delivered a never-retransmitted segment below `recover`
    /// (Linux FLAG_ORIG_SACK_ACKED).
    orig_acked: bool,
    /// F-RTO step 2.b: this ACK's sending opportunity sends new data, not
    /// the segments the timeout marked lost (Linux `REXMIT_NEW`).
    frto_new_data: bool,
    /// Delivery-rate sampling, for algorithms that control the window.
    rate: Option<RateSampler>,
    /// Segments marked lost so far, lost retransmissions included (Linux `tp->lost`).
    lost_total: u64,
    /// Linux's internal pacing rate for algorithms that do not pace
    /// (`tcp_update_pacing_rate`), bit/s of payload; None before an RTT sample.
    linux_pacing_bps: Option<f64>,
    /// The algorithm's `init` has run.
    cc_initialized: bool,
    /// The flow's ECN configuration (the receiver gets it with each segment).
    pub ecn: EcnConfig,
    /// The CWR state of an ECN reduction (Linux TCP_CA_CWR, here a part of
    /// Open): held until `snd_una` passes `cwr_high` (Linux `high_seq`).
    cwr: bool,
    cwr_high: u64,
    /// Linux TCP_ECN_QUEUE_CWR: the next new data segment carries CWR.
    cwr_pending: bool,
    /// The ACK being processed echoed congestion (Linux FLAG_ECE).
    ack_ece: bool,
}

/// Linux's undo state: `undo_marker` (snd_una when the reduction began;
/// None: nothing to undo), `undo_retrans` (retransmissions since then not
/// yet D-SACKed; -1 when there were none), and the window before it
/// (`prior_ssthresh`, `prior_cwnd`).
#[derive(Debug, Clone, Copy, Default)]
struct Undo {
    marker: Option<u64>,
    retrans: i64,
    prior_ssthresh: f64,
    prior_cwnd: f64,
}

/// The kinds of the sender's single timer (Linux `ICSK_TIME_RETRANS`,
/// `ICSK_TIME_REO_TIMEOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timer {
    #[default]
    Rto,
    /// RACK's reordering timer: a segment becomes lost when it fires.
    Reo,
    /// The tail loss probe's timer (`ICSK_TIME_LOSS_PROBE`).
    Tlp,
}

/// Linux's TCP_RTO_MIN: the delayed-ACK allowance of a probe timeout with
/// one segment in flight (a constant, whatever the flow's min_rto).
const TLP_DELACK_ALLOWANCE: f64 = 0.2;
/// Linux's TCP_TIMEOUT_MIN (2 jiffies; 2 ms at HZ = 1000) added otherwise.
const TLP_SLACK: f64 = 0.002;

/// RACK's record of the most recently sent segment known delivered.
#[derive(Debug, Clone, Copy, Default)]
struct Rack {
    valid: bool,
    /// Its (last) send time and segment number (`rack.mstamp`, `end_seq`).
    xmit: Time,
    seq: u64,
    /// The RTT of the last segment RACK took a sample from (`rack.rtt_us`).
    rtt: Time,
    /// Set when an ACK delivered something: loss detection must run.
    advanced: bool,
}

/// Linux `tcp_skb_sent_after` turned around: segment 1 was sent before
/// segment 2 (ties broken by sequence, as the kernel's end_seq test).
#[inline]
fn sent_before(t1: Time, q1: u64, t2: Time, q2: u64) -> bool {
    t1 < t2 || (t1 == t2 && q1 < q2)
}

/// Linux's TCP_TIMEOUT_MIN_US: slack added to RACK's reordering timer.
const RACK_TIMER_SLACK: f64 = 0.002;

/// Proportional Rate Reduction's counters (RFC 6937; Linux `prior_cwnd`,
/// `prr_delivered`, `prr_out`, set by `tcp_init_cwnd_reduction`).
#[derive(Debug, Clone, Copy, Default)]
struct Prr {
    /// cwnd when recovery began (RFC 6937 RecoverFS as Linux takes it).
    prior_cwnd: f64,
    /// Segments delivered (cumulatively ACKed or SACKed) since then.
    delivered: u64,
    /// Segments sent since then, retransmissions included.
    out: u64,
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Box<dyn CongestionControl>) -> Self {
        let w = Window { cwnd: cfg.init_cwnd, ssthresh: cfg.init_ssthresh };
        let rtt = RttEstimator::new(cfg.init_rto, cfg.min_rto, cfg.max_rto, cfg.rto_mode);
        let rate = cc.controls_window().then(RateSampler::new);
        let u = cc.ecn();
        // The spec refuses a mode below the algorithm's needs (`EcnUse::resolve`).
        let ecn = EcnConfig {
            mode: cfg.ecn.unwrap_or(u.default_mode),
            ect: u.ect,
            precise_echo: u.precise_echo,
            needs_ecn: u.needs != EcnMode::Off,
        };
        let mut s = Sender {
            first_hop: Default::default(),
            cfg,
            cc,
            classifier: None,
            hold: None,
            w,
            inflation: 0.0,
            snd_una: 0,
            snd_nxt: 0,
            high_data: 0,
            meta: SegMetas::new(),
            sacked: VecDeque::new(),
            sacked_out: 0,
            lost_high: 0,
            rtx_next: 0,
            retrans_out: 0,
            state: CaState::Open,
            recover: 0,
            prev_una: 0,
            last_cut_by_rto: false,
            dupacks: 0,
            partial_ack_seen: false,
            hold_timer: false,
            rto_retransmits: 0,
            app_limit: 0,
            started: false,
            rtt,
            rto_deadline: None,
            rto_event: None,
            pace_next: 0,
            pace_event: None,
            pace_wanted: None,
            delivered: 0,
            cwnd_limited: false,
            last_send: 0,
            rto_resend_pending: false,
            stats: SenderStats::default(),
            rtx_trace: None,
            prr: Prr::default(),
            rack: Rack::default(),
            rtx_order: VecDeque::new(),
            timer: Timer::Rto,
            tlp_high: None,
            tlp_retrans: false,
            undo: Undo::default(),
            frto: false,
            orig_acked: false,
            frto_new_data: false,
            rate: None,
            lost_total: 0,
            linux_pacing_bps: None,
            cc_initialized: false,
            ecn,
            cwr: false,
            cwr_high: 0,
            cwr_pending: false,
            ack_ece: false,
        };
        s.rate = rate;
        s
    }

    /// Whether the congestion control sets the window itself (BBR).
    #[inline]
    fn cc_controls_window(&self) -> bool {
        self.rate.is_some()
    }

    /// The connection as a window-controlling algorithm sees it.
    fn conn(&self, now: Time) -> Conn {
        let r = self.rate.as_ref();
        Conn {
            now: to_secs(now),
            in_flight: self.in_flight(),
            delivered: self.delivered,
            delivered_time: to_secs(r.map_or(0, |r| r.delivered_time)),
            lost: self.lost_total,
            app_limited: r.map_or(0, |r| r.app_limited),
            state: self.state,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            mss: self.cfg.mss,
            cwnd_limited: self.cwnd_limited,
            edt: to_secs(self.pace_next.max(now)),
        }
    }

    /// Linux `tcp_set_ca_state`: the state changes, and a window-controlling
    /// algorithm hears of it (`set_state`).
    fn set_state(&mut self, now: Time, new: CaState) {
        if new == self.state {
            return;
        }
        self.state = new;
        if self.cc_controls_window() {
            let c = self.conn(now);
            self.cc.on_state(&mut self.w, new, &c);
        }
    }

    /// The pacing rate (bit/s of payload): the algorithm's, else Linux's
    /// internal one when the flow asks for pacing.
    #[inline]
    fn pacing_rate(&self) -> Option<f64> {
        self.cc.pacing_rate_bps().or(if self.cfg.pacing { self.linux_pacing_bps } else { None })
    }

    /// Linux `tcp_update_pacing_rate`: cwnd (or what is outstanding, if
    /// more) x MSS / SRTT, at `pacing_ss_ratio` % while cwnd is below half
    /// of ssthresh, else `pacing_ca_ratio` %.
    fn update_linux_pacing(&mut self) {
        if !self.cfg.pacing || self.rtt.srtt <= 0.0 {
            return;
        }
        let ratio =
            if self.w.cwnd < self.w.ssthresh / 2.0 { self.cfg.pacing_ss_ratio } else { self.cfg.pacing_ca_ratio };
        let segs = self.w.cwnd.max((self.high_data - self.snd_una) as f64);
        self.linux_pacing_bps = Some(self.cfg.mss as f64 * 8.0 * segs * ratio / 100.0 / self.rtt.srtt);
    }

    /// Counts segments newly marked lost when the lost boundary moves up
    /// from `before` (the un-SACKed segments passed); returns how many.
    /// A window-controlling algorithm hears of each (Linux `tcp_mark_skb_lost`).
    fn count_lost_since(&mut self, now: Time, before: u64) -> u64 {
        let upto = self.lost_high.max(self.snd_una);
        if upto <= before {
            return 0;
        }
        if !self.cc_controls_window() {
            let n = upto - before - (self.sacked_at_or_above(before) - self.sacked_at_or_above(upto));
            self.lost_total += n;
            return n;
        }
        let mut n = 0;
        for q in before..upto {
            if self.meta.flags(q) & SACKED == 0 {
                self.packet_lost(now, q);
                n += 1;
            }
        }
        n
    }

    /// Segment `q` is marked lost: `tp->lost` grows and the algorithm gets
    /// the packet's send-time snapshot (BBRv3's `skb_marked_lost`).
    fn packet_lost(&mut self, now: Time, q: u64) {
        self.lost_total += 1;
        if let Some((tx_in_flight, tx_lost, app_limited)) = self.rate.as_ref().map(|r| r.snapshot(q)) {
            let c = self.conn(now);
            self.cc.on_packet_lost(&self.w, tx_in_flight, self.lost_total - tx_lost, app_limited, &c);
        }
    }

    #[inline]
    fn sack(&self) -> bool {
        self.cfg.recovery == Recovery::Sack
    }

    /// Gives back segment-state memory the window no longer needs (called
    /// now and then by the world, not per packet).
    pub fn trim(&mut self) {
        self.meta.trim(self.snd_una, self.high_data);
    }

    /// SACKed segments at or above `x`.
    fn sacked_at_or_above(&self, x: u64) -> u64 {
        let mut n = 0;
        for &(s, e) in self.sacked.iter().rev() {
            if e <= x {
                break;
            }
            n += e - s.max(x);
        }
        n
    }

    /// Segments in flight: FlightSize for non-SACK senders (RFC 5681), the
    /// RFC 6675 pipe for SACK senders.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        if self.sack() {
            let lh = self.lost_high.max(self.snd_una);
            (self.snd_nxt - lh) - self.sacked_at_or_above(lh) + self.retrans_out
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    /// RFC 5681 FlightSize: data sent and not cumulatively acknowledged
    /// (what `ssthresh()` receives; segments sent by limited transmit included).
    #[inline]
    pub fn flight_size(&self) -> u64 {
        self.high_data - self.snd_una
    }

    /// RFC 6675 IsLost boundary: the DupThresh-th SACKed segment from the top.
    fn update_lost_high(&mut self) {
        let k = self.cfg.dupthresh as u64;
        let mut count = 0u64;
        for &(s, e) in self.sacked.iter().rev() {
            if count + (e - s) >= k {
                let t = e - (k - count);
                if t > self.lost_high {
                    self.lost_high = t;
                }
                return;
            }
            count += e - s;
        }
    }

    fn wire_size(&self, seq: u64, map: &SegmentMap) -> u32 {
        let app = map.app_bytes(seq);
        if self.cfg.ns2_accounting {
            app
        } else {
            app + self.cfg.header_size
        }
    }

    /// Sends segment `seq`: new data, or a retransmission for `cause`.
    fn emit(&mut self, now: Time, seq: u64, cause: Option<RetransmitCause>, map: &SegmentMap, out: &mut Vec<Packet>) {
        let rate = self.pacing_rate();
        self.emit_paced(now, seq, cause, rate, map, out)
    }

    fn emit_paced(
        &mut self,
        now: Time,
        seq: u64,
        cause: Option<RetransmitCause>,
        mut pacing: Option<f64>,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) {
        let packets_out = self.high_data - self.snd_una;
        // New data was already counted in flight (snd_nxt moved past it).
        let counted = (cause.is_none() && seq < self.snd_nxt) as u64;
        if self.cc_controls_window() && self.in_flight() == counted {
            // Linux `tcp_event_data_sent`: CA_EVENT_TX_START, before this
            // packet's departure is paced.
            let c = self.conn(now);
            self.cc.on_tx_start(&mut self.w, &c);
            pacing = self.pacing_rate();
        }
        if seq >= self.high_data {
            // The segment just past high_data is new: room for it, no flags.
            self.meta.ensure(self.snd_una, seq + 1);
            self.high_data = seq + 1;
            self.meta.set_new(seq, now);
        } else {
            self.meta.set_sent(seq, now);
        }
        let sack = self.sack();
        let retransmit = cause.is_some();
        if let Some(cause) = cause {
            if let Some(t) = self.rtx_trace.as_mut() {
                t.push((now, seq, cause, self.high_data - self.snd_una));
            }
            self.rto_resend_pending = false;
            if self.undo.marker.is_some() {
                // Linux `tcp_retransmit_skb`: one more resend to be D-SACKed back.
                self.undo.retrans = self.undo.retrans.max(0) + 1;
            }
            let mut f = self.meta.flags(seq) | RETX;
            if sack && f & RETX_OUT == 0 {
                f |= RETX_OUT;
                self.retrans_out += 1;
                if self.cfg.rack {
                    self.rtx_order.push_back(seq);
                }
            }
            self.meta.set_flags(seq, f);
            self.stats.retransmits += 1;
        }
        let size = self.wire_size(seq, map);
        if self.cfg.prr && (self.state == CaState::Recovery || self.cwr) {
            self.prr.out += 1;
        }
        self.stats.data_sent += 1;
        self.last_send = now;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
            self.timer = Timer::Rto;
        }
        let inf = self.in_flight();
        self.cc.on_send(to_secs(now), size, inf);
        if let Some(r) = self.rate.as_mut() {
            r.on_send_ce(
                seq,
                now,
                packets_out,
                self.snd_una,
                self.high_data,
                self.delivered,
                self.lost_total,
                inf,
                self.stats.ce_delivered,
            );
        }
        if let Some(rate) = pacing {
            // Linux `tcp_update_skb_after_send`: the next departure is this
            // one's payload at the pacing rate later, less up to half of it
            // for the time this one left late (the kernel's allowance for
            // OS jitter); the first 10 packets are not paced (as sch_fq).
            let stamp = self.pace_next.max(now);
            let late = stamp - self.pace_next;
            let mut len = from_secs(map.app_bytes(seq) as f64 * 8.0 / rate);
            if self.stats.data_sent >= 10 {
                len -= late.min(len / 2);
            } else {
                len = 0;
            }
            // A pacing rate near 0 makes `len` saturate at u64::MAX: the
            // next departure is after the end of the run, which saturating
            // keeps (a wrapping add would send at once).
            self.pace_next = stamp.saturating_add(len);
        }
        let mut p = Packet::data(seq, size, retransmit);
        if self.ecn.mode != EcnMode::Off {
            self.mark_ecn(&mut p);
        }
        out.push(p);
    }

    /// Linux `tcp_ecn_send` for a data segment: under AccECN every segment
    /// is ECN-capable; under classic ECN (RFC 3168 6.1.5) only new data,
    /// unless the algorithm needs ECN (`tcp_ca_needs_ecn`: DCTCP's
    /// retransmissions keep ECT), and the first new segment after a
    /// reduction carries CWR (`TCP_ECN_QUEUE_CWR`).
    fn mark_ecn(&mut self, p: &mut Packet) {
        match self.ecn.mode {
            EcnMode::Off => {}
            EcnMode::AccEcn => p.set_ecn(self.ecn.ect),
            EcnMode::Classic => {
                if !p.retransmit() {
                    p.set_ecn(self.ecn.ect);
                    if std::mem::take(&mut self.cwr_pending) {
                        p.set_tcp_flags(p.tcp_flags() | tcp_flags::CWR);
                    }
                } else if self.ecn.needs_ecn {
                    p.set_ecn(self.ecn.ect);
                }
            }
        }
    }

    /// The ECN feedback of an ACK (`a`, after `old_una`; `acked` segments
    /// newly delivered, `sacked_new` of them SACKed): counts
    /// `tp->delivered_ce` and returns whether it echoes congestion (Linux
    /// FLAG_ECE).
    fn ecn_feedback(&mut self, ack: &Packet, a: u64, old_una: u64, acked: u64, sacked_new: u64) -> bool {
        match self.ecn.mode {
            EcnMode::Off => false,
            EcnMode::Classic => {
                // tcp_ecn_rcv_ecn_echo on any ACK but an old one; the
                // segments it delivers count as CE (tcp_count_delivered).
                let ece = ack.tcp_flags() & tcp_flags::ECE != 0 && a >= old_una;
                if ece {
                    self.stats.ce_delivered += acked;
                }
                ece
            }
            EcnMode::AccEcn => {
                // __tcp_accecn_process: only an ACK of forward progress
                // (FLAG_ACKED or FLAG_DATA_SACKED) is read; the delta is
                // the ACE field (less its initial 5) minus delivered_ce,
                // modulo 8. An ACK of more than 7 segments may hide whole
                // laps of the counter: Linux's safe delta takes the most
                // CE marks consistent with the field, `delivered -
                // ((delivered - delta) mod 8)`.
                if a <= old_una && sacked_new == 0 {
                    return false;
                }
                let ace = ((ack.tcp_flags() & tcp_flags::ACE_MASK) >> tcp_flags::ACE_SHIFT) as u64;
                let delta = ace.wrapping_sub(ACE_INIT).wrapping_sub(self.stats.ce_delivered) & 7;
                let delta = if acked <= 7 { delta } else { acked - ((acked - delta) & 7) };
                self.stats.ce_delivered += delta;
                delta > 0
            }
        }
    }

    /// The ECN response after the recovery state machine has seen the ACK
    /// (Linux `tcp_try_to_open` and `tcp_cong_control`): an echo in Open
    /// starts CWR; in CWR, PRR reduces the window toward ssthresh and the
    /// window does not grow. Returns whether it may grow (`grow` before).
    fn ecn_response(&mut self, now: Time, grow: bool, delivered: u64, newly_lost: u64, una_advanced: bool) -> bool {
        if self.ack_ece && self.state == CaState::Open && !self.cwr {
            self.enter_cwr(now);
        }
        if !self.cwr {
            return grow;
        }
        if self.cfg.prr && !self.cc_controls_window() {
            self.prr_reduce(delivered, newly_lost, una_advanced);
        }
        false
    }

    /// Linux `tcp_enter_cwr` (RFC 3168 6.1.2, reacting at most once per
    /// window): no undo of it, `tcp_init_cwnd_reduction` (high_seq, PRR's
    /// counters, ssthresh from the algorithm, CWR queued for the next new
    /// segment under classic ECN), the CWR state. With PRR the window then
    /// follows `tcp_cwnd_reduction` on each ACK, as in a recovery without
    /// retransmissions; without PRR (the RFC senders) cwnd = ssthresh at
    /// once (RFC 3168: "halves the congestion window") and holds until CWR
    /// ends. A window-controlling algorithm keeps its window and hears
    /// `on_cwr` (Linux calls no PRR for `cong_control` algorithms).
    fn enter_cwr(&mut self, now: Time) {
        self.undo.marker = None;
        self.cwr = true;
        self.cwr_high = self.high_data;
        self.tlp_high = None;
        self.prr = Prr { prior_cwnd: self.w.cwnd, delivered: 0, out: 0 };
        let flight = self.flight_size();
        self.w.ssthresh = self.cc.ecn_ssthresh(&self.w, flight, to_secs(now));
        if self.ecn.mode == EcnMode::Classic {
            self.cwr_pending = true;
        }
        self.stats.ecn_reductions += 1;
        if !self.cc_controls_window() && !self.cfg.prr && self.w.ssthresh < INFINITE_SSTHRESH {
            self.w.cwnd = self.w.ssthresh;
        }
        let c = self.conn(now);
        self.cc.on_cwr(&mut self.w, true, &c);
    }

    /// CWR ends (Linux `tcp_fastretrans_alert`: once something above
    /// high_seq is ACKed; `tcp_end_cwnd_reduction`: cwnd = ssthresh and
    /// CA_EVENT_COMPLETE_CWR, for algorithms that do not set the window).
    fn end_cwr(&mut self, now: Time) {
        self.cwr = false;
        if !self.cc_controls_window() {
            if self.w.ssthresh < INFINITE_SSTHRESH {
                self.w.cwnd = self.w.ssthresh;
            }
            self.cc.on_recovery_exit(&mut self.w, to_secs(now));
        }
        let c = self.conn(now);
        self.cc.on_cwr(&mut self.w, false, &c);
    }

    /// The next segment `NextSeg()` would send, and whether it is a retransmission.
    fn next_segment(&mut self) -> Option<(u64, bool)> {
        if self.sack() {
            if self.rtx_next < self.snd_una {
                self.rtx_next = self.snd_una;
            }
            // Skip SACKed ranges and segments whose retransmission is in flight.
            while self.rtx_next < self.lost_high {
                let i = self.sacked.partition_point(|r| r.1 <= self.rtx_next);
                if i < self.sacked.len() && self.sacked[i].0 <= self.rtx_next {
                    self.rtx_next = self.sacked[i].1;
                } else if self.meta.flags(self.rtx_next) & RETX_OUT != 0 {
                    self.rtx_next += 1;
                } else {
                    break;
                }
            }
            let new_ok = self.may_send_new();
            // F-RTO's step 2.b sends new data before the marked segments.
            if self.rtx_next < self.lost_high && !(self.frto_new_data && new_ok) {
                return Some((self.rtx_next, true));
            }
            new_ok.then_some((self.snd_nxt, false))
        } else if self.snd_nxt < self.high_data {
            Some((self.snd_nxt, true)) // going back N after a timeout
        } else if self.may_send_new() {
            Some((self.snd_nxt, false))
        } else {
            None
        }
    }

    /// Whether new data may go out as far as the application and the
    /// receiver window are concerned (the congestion window aside).
    #[inline]
    fn may_send_new(&self) -> bool {
        self.snd_nxt < self.app_limit && self.snd_nxt - self.snd_una < self.cfg.rwnd
    }

    /// Sends whatever the window, the receiver window, pacing and the
    /// application allow.
    pub fn transmit(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if !self.started {
            return;
        }
        if !self.cc_initialized {
            self.cc_initialized = true;
            if self.cc_controls_window() {
                let c = self.conn(now);
                self.cc.init(&mut self.w, &c);
            }
        }
        if self.frto_new_data {
            // F-RTO's new data goes out on this opportunity only (Linux
            // `tcp_xmit_recovery` with REXMIT_NEW); if none could, the
            // timeout's losses are repaired as usual.
            let before = self.snd_nxt;
            self.send_loop(now, map, out);
            self.frto_new_data = false;
            if self.snd_nxt > before {
                return;
            }
            self.frto = false;
        }
        self.send_loop(now, map, out);
    }

    fn send_loop(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.cfg.restart_after_idle
            && !self.cc_controls_window()
            && self.snd_una == self.high_data
            && self.stats.data_sent > 0
            && now.saturating_sub(self.last_send) > from_secs(self.rtt.rto())
            && self.snd_nxt < self.app_limit
        {
            // RFC 5681 4.1: restart window after an idle period longer than the RTO.
            self.w.cwnd = self.w.cwnd.min(self.cfg.init_cwnd);
        }
        // The pacing rate is read once per sending opportunity, not per packet.
        let pacing = self.pacing_rate();
        // So is the window: sending changes neither it nor the recovery state.
        // RFC 3042 for FlightSize senders; a SACK sender's pipe already drops
        // by one per duplicate ACK (RFC 6675 step 3).
        let extra = if self.cfg.limited_transmit && !self.sack() && self.state == CaState::Open {
            self.dupacks.min(2) as f64
        } else {
            0.0
        };
        let window = self.w.cwnd + self.inflation + extra;
        loop {
            if (self.in_flight() + 1) as f64 > window {
                self.cwnd_limited = true;
                return;
            }
            let Some((seq, retx)) = self.next_segment() else {
                self.cwnd_limited = false;
                if self.rate.is_some() && self.snd_nxt >= self.app_limit {
                    // Linux `tcp_rate_check_app_limited`: the application
                    // has nothing to send, the window is open and every
                    // lost segment has been resent.
                    let (d, f) = (self.delivered, self.in_flight());
                    if let Some(r) = self.rate.as_mut() {
                        r.mark_app_limited(d, f);
                    }
                }
                return;
            };
            if pacing.is_some() && now < self.pace_next {
                self.pace_wanted = Some(self.pace_next);
                // Linux `tcp_write_xmit`: is_cwnd_limited |= in_flight >= cwnd.
                self.cwnd_limited = self.in_flight() as f64 >= window;
                return;
            }
            if seq == self.snd_nxt {
                self.snd_nxt += 1;
                if self.cfg.tlp {
                    // Linux `tcp_write_xmit`: new data (re)schedules the probe.
                    self.schedule_loss_probe(now, false);
                }
            } else {
                self.rtx_next = seq + 1;
            }
            let cause = retx.then(|| self.resend_cause());
            self.emit_paced(now, seq, cause, pacing, map, out);
        }
    }

    /// Why the sending loop resends a segment: the timer's own resend, the
    /// window after a timeout, or SACK recovery's NextSeg().
    fn resend_cause(&mut self) -> RetransmitCause {
        if std::mem::take(&mut self.rto_resend_pending) {
            RetransmitCause::Rto
        } else if self.state == CaState::Loss || !self.sack() {
            RetransmitCause::AfterRto
        } else {
            RetransmitCause::Sack
        }
    }

    /// Asks the loss classifier, if any, whether a loss event is congestion
    /// (true: reduce as usual).
    fn is_congestion(&mut self, now: Time, timeout: bool) -> bool {
        let Some(c) = self.classifier.as_mut() else {
            return true;
        };
        self.stats.loss_events += 1;
        match c.on_loss(to_secs(now), self.w.cwnd, timeout) {
            LossVerdict::Congestion => true,
            LossVerdict::NotCongestion => {
                self.stats.loss_events_ignored += 1;
                false
            }
        }
    }

    /// The window fast recovery works towards: ssthresh, or the held window
    /// when the classifier judged the loss not congestion.
    #[inline]
    fn recovery_target(&self) -> f64 {
        self.hold.unwrap_or(self.w.ssthresh)
    }

    fn enter_fast_recovery(&mut self, now: Time) {
        // Linux `tcp_enter_recovery` from CWR (`tcp_in_cwnd_reduction`):
        // the window is already being reduced for this window of data: no
        // new ssthresh, PRR goes on; and nothing to undo to after an ECN
        // echo (prior_ssthresh = 0). (`recover` is set as usual; Linux
        // keeps CWR's high_seq.)
        let from_cwr = std::mem::take(&mut self.cwr);
        if self.cfg.undo {
            // Linux `tcp_enter_recovery`: prior_ssthresh, then `tcp_init_undo`.
            let prior = if from_cwr || self.ack_ece { 0.0 } else { self.current_ssthresh() };
            self.undo_init(prior);
        }
        if from_cwr {
            self.hold = None;
        } else if self.is_congestion(now, false) {
            let flight = self.flight_size();
            let ss = self.cc.ssthresh(&self.w, LossEvent::FastRecovery, flight, to_secs(now));
            self.w.ssthresh = ss;
            self.hold = None;
        } else {
            self.hold = Some(self.w.cwnd.max(2.0));
        }
        self.recover = self.high_data;
        self.last_cut_by_rto = false;
        self.set_state(now, CaState::Recovery);
        if !from_cwr {
            self.prr = Prr { prior_cwnd: self.w.cwnd, delivered: 0, out: 0 };
            if self.ecn.mode == EcnMode::Classic {
                self.cwr_pending = true; // `tcp_ecn_queue_cwr`
            }
        }
        self.tlp_high = None; // Linux `tcp_init_cwnd_reduction`
        self.partial_ack_seen = false;
        self.stats.fast_recoveries += 1;
        // The fast retransmit restarts the retransmission timer, as ns-2
        // (`reset_rtx_timer` in its dupack actions) and Linux (re-armed when
        // the head of the retransmission queue is resent) do: its ACK needs
        // a round trip through the full queue that caused the loss.
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
    }

    fn exit_recovery(&mut self, now: Time) {
        if self.cc_controls_window() {
            // Linux `tcp_end_cwnd_reduction` leaves such a window alone.
            self.set_state(now, CaState::Open);
            return;
        }
        self.w.cwnd = self.recovery_target();
        self.inflation = 0.0;
        self.state = CaState::Open;
        if self.hold.take().is_none() {
            self.cc.on_recovery_exit(&mut self.w, to_secs(now));
        }
    }

    /// Marks `[s, e)` SACKed; returns (newly SACKed, newest newly SACKed
    /// never-retransmitted segment).
    fn sack_range(&mut self, now: Time, s: u64, e: u64) -> (u64, Option<u64>) {
        let s = s.max(self.snd_una);
        let e = e.min(self.high_data);
        if s >= e {
            return (0, None);
        }
        let mut i = self.sacked.partition_point(|r| r.1 < s);
        let mut cur = s;
        let (mut lo, mut hi) = (s, e);
        let mut newly = 0;
        let mut newest = None;
        let first = i;
        let mut mark = |this: &mut Self, a: u64, b: u64| {
            for q in a..b {
                if this.cfg.rack {
                    this.rack_advance(now, q, this.meta.flags(q));
                }
                if this.cfg.frto && this.meta.flags(q) & RETX == 0 && q < this.recover {
                    this.orig_acked = true;
                }
                if let Some(r) = this.rate.as_mut() {
                    r.on_delivered(q, this.meta.sent(q), this.meta.flags(q) & RETX != 0);
                }
                let mut f = this.meta.flags(q) | SACKED;
                if f & RETX_OUT != 0 {
                    f &= !RETX_OUT;
                    this.retrans_out -= 1;
                }
                this.meta.set_flags(q, f);
                if f & RETX == 0 {
                    newest = Some(q);
                }
            }
            newly += b - a;
        };
        while i < self.sacked.len() && self.sacked[i].0 <= e {
            let (rs, re) = self.sacked[i];
            if cur < rs {
                mark(self, cur, rs);
            }
            cur = cur.max(re);
            lo = lo.min(rs);
            hi = hi.max(re);
            i += 1;
        }
        if cur < e {
            mark(self, cur, e);
        }
        self.sacked.drain(first..i);
        self.sacked.insert(first, (lo, hi));
        self.sacked_out += newly;
        (newly, newest)
    }

    /// An ACK arrives at `now`, with its SACK blocks (if any).
    pub fn on_ack(&mut self, now: Time, ack: &Packet, sack: &SackBlocks, map: &SegmentMap, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        let a = ack.seq;
        if a > self.high_data {
            return; // acknowledges data never sent: ignore (RFC 9293)
        }
        let old_una = self.snd_una;
        let after_timeout = self.state == CaState::Loss;
        self.orig_acked = false;
        let prior_packets = self.high_data - old_una;
        let (lost_total_before, prior_in_flight) = match self.rate.as_mut() {
            Some(r) => {
                r.begin_ack();
                (self.lost_total, self.in_flight())
            }
            None => (0, 0),
        };
        let mut acked = 0u64;
        let mut cum_acked = 0u64;
        let mut sample_seq: Option<u64> = None;
        if a > old_una {
            let mut karn = false;
            let mut newest_unsacked = None;
            let mut sacked_below = 0;
            for q in old_una..a {
                let f = self.meta.flags(q);
                if f & SACKED != 0 {
                    sacked_below += 1;
                } else {
                    if self.cfg.rack {
                        self.rack_advance(now, q, f);
                    }
                    if self.cfg.frto && f & RETX == 0 && q < self.recover {
                        self.orig_acked = true;
                    }
                    if let Some(r) = self.rate.as_mut() {
                        r.on_delivered(q, self.meta.sent(q), f & RETX != 0);
                    }
                    acked += 1;
                    newest_unsacked = Some(q);
                }
                if f & RETX != 0 {
                    karn = true;
                }
                if f & RETX_OUT != 0 {
                    self.retrans_out -= 1;
                }
                self.meta.set_flags(q, 0);
            }
            cum_acked = a - old_una;
            if !karn {
                sample_seq = newest_unsacked;
            }
            self.sacked_out -= sacked_below;
            if !self.sacked.is_empty() {
                let k = self.sacked.partition_point(|r| r.1 <= a);
                self.sacked.drain(..k);
                if let Some(r) = self.sacked.front_mut() {
                    if r.0 < a {
                        r.0 = a;
                    }
                }
            }
            self.prev_una = old_una;
            self.snd_una = a;
            self.rto_retransmits = 0;
            if self.snd_nxt < a {
                self.snd_nxt = a;
            }
            self.dupacks = 0;
        } else if a == old_una && self.high_data > old_una && !self.sack() {
            self.dupacks += 1;
        }
        let duplicate = a <= old_una;
        let lost_before = self.lost_high.max(self.snd_una);
        let mut sacked_new = 0;
        if self.sack() && sack.n > 0 {
            let mut newly_sacked = 0;
            // A D-SACK block reports a duplicate, not new data: count it and
            // keep it off the scoreboard.
            let dsack = is_dsack(sack, a);
            if dsack {
                self.stats.dsacks += sack.blocks[0].len as u64;
                if self.undo.marker.is_some() {
                    let (s0, e0) = sack.ranges(a).next().unwrap_or((0, 0));
                    self.undo_dsack(s0, e0, old_una);
                }
            }
            for (s, e) in sack.ranges(a).skip(dsack as usize) {
                let (n, newest) = self.sack_range(now, s, e);
                newly_sacked += n;
                acked += n;
                if let Some(q) = newest {
                    if sample_seq.map_or(true, |p| q > p) {
                        sample_seq = Some(q);
                    }
                }
            }
            if !self.cfg.rack {
                // RFC 6675 IsLost; a RACK sender marks losses by time alone
                // (Linux 6.x runs `tcp_update_scoreboard` only without RACK).
                self.update_lost_high();
            }
            // RFC 6675 section 2: with SACK, a duplicate ACK is one that
            // SACKs data not SACKed before (an ACK answering a duplicate
            // segment is none).
            if a == old_una && newly_sacked > 0 {
                self.dupacks += 1;
            }
            sacked_new = newly_sacked;
        }
        // Linux counts deliveries (sacktag, clean_rtx_queue) before it marks losses.
        self.delivered += acked;
        if self.ecn.mode != EcnMode::Off {
            self.ack_ece = self.ecn_feedback(ack, a, old_una, acked, sacked_new);
            self.cc.on_ecn(self.stats.ce_delivered, self.ack_ece);
        }
        if self.lost_high < self.snd_una {
            self.lost_high = self.snd_una;
        }
        // RACK (Linux `tcp_rack_mark_lost`): runs when this ACK delivered
        // something; a segment not yet overdue arms the reordering timer in
        // place of the RTO.
        let mut reo_armed = false;
        if self.cfg.rack && std::mem::take(&mut self.rack.advanced) {
            if let Some(wait) = self.rack_detect_loss(now) {
                self.rto_deadline = Some(now + wait + from_secs(RACK_TIMER_SLACK));
                self.timer = Timer::Reo;
                reo_armed = true;
            }
        }
        if self.tlp_high.is_some() {
            self.process_tlp_ack(now, a, a > old_una || sacked_new > 0);
        }
        // Segments this ACK marked lost by moving the lost boundary, for
        // PRR (lost retransmissions are counted in `lost_total` only).
        let newly_lost = self.count_lost_since(now, lost_before);
        if a > old_una {
            if let Some(c) = self.classifier.as_mut() {
                c.on_ack(to_secs(now), self.w.cwnd);
            }
        }
        let rtt = sample_seq.map(|q| {
            let r = to_secs(now - self.meta.sent(q));
            self.rtt.on_sample(r);
            r
        });
        let mut sample = AckSample {
            now: to_secs(now),
            acked: acked as u32,
            cum_acked: cum_acked as u32,
            rtt,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            in_flight: self.in_flight(),
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            delivered: self.delivered,
            cwnd_limited: self.cwnd_limited,
            duplicate,
        };
        self.cc.on_ack_sample(&self.w, &sample);

        // Linux `tcp_fastretrans_alert` step D: "CWR is to be held
        // something *above* high_seq is ACKed for CWR bit to reach receiver".
        if self.cwr && self.snd_una > self.cwr_high {
            self.end_cwr(now);
        }
        let mut grow = if self.sack() {
            self.sack_recovery(now, a > old_una, acked, newly_lost, map, out)
        } else {
            self.dupack_recovery(now, a > old_una, cum_acked, map, out)
        };
        if self.ecn.mode != EcnMode::Off {
            grow = self.ecn_response(now, grow, acked, newly_lost, a > old_una);
        }
        // Linux `tcp_rate_gen` then `cong_control` (BBR's `bbr_main`); an
        // ACK below snd_una (`old_ack`) or with nothing outstanding before
        // it (`no_queue`) reaches neither.
        let rate_ack = a >= old_una && prior_packets > 0;
        if let (true, Some(r)) = (rate_ack, self.rate.as_mut()) {
            let losses = self.lost_total - lost_total_before;
            let rs = r.generate_ce(
                now,
                self.delivered,
                self.lost_total,
                acked,
                losses,
                self.rtt.min_rtt,
                rtt,
                prior_in_flight,
                self.stats.ce_delivered,
            );
            let mut c = self.conn(now);
            self.cc.cong_control(&mut self.w, &rs, &mut c);
            if let Some(r) = self.rate.as_mut() {
                r.app_limited = c.app_limited;
            }
        } else if grow && a > old_una && !self.cc_controls_window() {
            sample.in_flight = self.in_flight();
            if after_timeout && !self.sack() {
                // RFC 3465 2.3: after a timeout, at most one segment of
                // growth per ACK ("L=1*SMSS"). Go-back-N's ACKs jump over
                // data the receiver held before the timeout; "these big ACKs
                // are not an indication that the network has handled a large
                // amount of data". A SACK sender counted that data when it
                // was SACKed, so its `acked` already leaves it out.
                sample.acked = sample.acked.min(1);
                sample.cum_acked = sample.cum_acked.min(1);
            }
            self.cc.on_ack(&mut self.w, &sample);
        }

        // RFC 6298 5.2/5.3: stop the timer when all is acknowledged, restart it on new data.
        if self.snd_una >= self.high_data {
            self.rto_deadline = None;
        } else if a > old_una && !self.hold_timer && !reo_armed {
            // Linux `tcp_set_xmit_timer`: the probe timer if one may be
            // scheduled, else the RTO.
            if !(self.cfg.tlp && self.schedule_loss_probe(now, true)) {
                self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
                self.timer = Timer::Rto;
            }
        }
        self.hold_timer = false;
        self.ack_ece = false;
        self.update_linux_pacing();
        self.transmit(now, map, out);
    }

    /// Whether the `dupthresh`-th duplicate ACK may start a fast retransmit
    /// (Reno, NewReno). RFC 6582 3.2 step 1: only if "the Cumulative
    /// Acknowledgment field covers more than recover", the highest segment
    /// sent when the last recovery or timeout began: `snd_una > recover` in
    /// our one-past counting. An ACK of exactly `recover` is what a receiver
    /// that already holds everything up to it answers to the needless
    /// resends of go-back-N after a timeout (section 4); taking those for a
    /// new loss was the retransmission storm of issue 25. Linux holds its
    /// Loss/Recovery state "until something *above* high_seq is ACKed"
    /// (`tcp_is_non_sack_preventing_reopen`), ns-2 tests `highest_ack_ >
    /// recover_`. Before any recovery (`recover == 0`, the RFC's ISS) the
    /// first segment's loss may be fast-retransmitted (ns-2's `bugfix_ss_`).
    /// Reno, as ns-2's `RenoTcpAgent`, checks `recover` only after a
    /// timeout: after a fast retransmit a second one in the same window is
    /// plain Reno.
    pub(crate) fn may_fast_retransmit(&self) -> bool {
        if self.snd_una > self.recover || self.recover == 0 {
            return true;
        }
        if self.cfg.recovery == Recovery::Reno && !self.last_cut_by_rto {
            return true;
        }
        match self.cfg.dupack_guard {
            DupAckGuard::Careful => false,
            DupAckGuard::LessCareful => self.snd_una == self.recover,
            // RFC 6582 4.1: "the congestion window is greater than SMSS
            // bytes and the difference between highest_ack and
            // prev_highest_ack is at most 4*SMSS bytes".
            DupAckGuard::AckHeuristic => self.w.cwnd > 1.0 && self.snd_una - self.prev_una <= 4,
        }
    }

    /// Reno / NewReno recovery driven by duplicate ACKs. Returns whether the
    /// congestion control may grow the window on this ACK.
    fn dupack_recovery(
        &mut self,
        now: Time,
        new_data: bool,
        cum_acked: u64,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) -> bool {
        let newreno = self.cfg.recovery == Recovery::NewReno;
        if new_data {
            match self.state {
                CaState::Recovery => {
                    if !newreno || self.snd_una >= self.recover {
                        self.exit_recovery(now);
                    } else {
                        // NewReno partial ACK: retransmit the next hole, deflate.
                        let una = self.snd_una;
                        self.emit(now, una, Some(RetransmitCause::PartialAck), map, out);
                        // RFC 6582 3.2 step 5: deflate the window by the
                        // amount acknowledged, then add one segment back.
                        // The inflation goes first (ns-2's partialnewack).
                        let deflate = cum_acked as f64 - 1.0;
                        if self.inflation >= deflate {
                            self.inflation -= deflate;
                        } else {
                            self.w.cwnd = (self.w.cwnd - (deflate - self.inflation)).max(1.0);
                            self.inflation = 0.0;
                        }
                        // Impatient variant: only the first partial ACK restarts the timer.
                        self.hold_timer = self.partial_ack_seen;
                        self.partial_ack_seen = true;
                    }
                    false
                }
                CaState::Loss => {
                    if self.snd_una >= self.recover {
                        self.set_state(now, CaState::Open);
                    }
                    true
                }
                CaState::Open => true,
            }
        } else {
            if self.state == CaState::Recovery {
                self.inflation += 1.0;
            } else if self.dupacks == self.cfg.dupthresh && self.may_fast_retransmit() {
                self.enter_fast_recovery(now);
                let una = self.snd_una;
                self.emit(now, una, Some(RetransmitCause::FastRetransmit), map, out);
                self.w.cwnd = self.recovery_target();
                self.inflation = self.cfg.dupthresh as f64;
            }
            false
        }
    }

    /// RFC 6675 recovery. Returns whether the window may grow on this ACK.
    /// `delivered`: segments this ACK newly acknowledged or SACKed;
    /// `newly_lost`: segments it marked lost (both for PRR).
    fn sack_recovery(
        &mut self,
        now: Time,
        new_data: bool,
        delivered: u64,
        newly_lost: u64,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) -> bool {
        match self.state {
            CaState::Open => {
                let lost = self.lost_high > self.snd_una;
                // With RACK only a segment marked lost starts recovery
                // (Linux `tcp_time_to_recover`: "the loss is proven").
                let dupthresh = !self.cfg.rack && self.dupacks >= self.cfg.dupthresh;
                if (dupthresh || lost) && self.snd_una >= self.recover && self.high_data > self.snd_una {
                    self.enter_fast_recovery(now);
                    // The first unacknowledged segment is presumed lost (RFC 6675 4.2).
                    if self.lost_high <= self.snd_una {
                        let before = self.snd_una;
                        self.lost_high = self.snd_una + 1;
                        self.count_lost_since(now, before);
                    }
                    if self.cc_controls_window() {
                        // The algorithm sets the window (Linux `cong_control`
                        // replaces PRR); NextSeg() resends the lost segment.
                        return false;
                    }
                    if self.cfg.prr && self.hold.is_none() {
                        // PRR lets at least one segment out on the ACK that
                        // starts recovery: the sending loop's NextSeg() is
                        // the fast retransmit of the first lost segment.
                        self.prr_reduce(delivered, newly_lost, new_data);
                        return false;
                    }
                    self.w.cwnd = self.recovery_target();
                    // RFC 6675 (4.3): "Retransmit the first data segment presumed
                    // dropped", before and regardless of cwnd - pipe (4.4-4.5).
                    let una = self.snd_una;
                    let pending = self.meta.flags(una) & RETX_OUT != 0;
                    if !pending {
                        self.emit(now, una, Some(RetransmitCause::FastRetransmit), map, out);
                    }
                    self.rtx_next = una + 1;
                    false
                } else {
                    new_data
                }
            }
            CaState::Recovery => {
                if self.may_undo() {
                    // Every resend came back D-SACKed: at the end of recovery
                    // Linux `tcp_try_undo_recovery`, before it
                    // `tcp_try_undo_dsack` then `tcp_try_to_open` (which
                    // moves high_seq to snd_nxt). Either way Open again.
                    let ended = self.snd_una >= self.recover;
                    self.undo_reduction(false);
                    self.set_state(now, CaState::Open);
                    if !ended {
                        self.recover = self.high_data;
                    }
                    return ended && new_data;
                }
                if self.snd_una >= self.recover {
                    self.exit_recovery(now);
                    // Linux leaves Recovery in `tcp_fastretrans_alert` before
                    // `tcp_cong_control` runs, so the ACK that ends it already
                    // grows the window (`tcp_may_raise_cwnd`).
                    return self.cfg.prr && new_data;
                }
                if self.cfg.prr && self.hold.is_none() && !self.cc_controls_window() {
                    self.prr_reduce(delivered, newly_lost, new_data);
                }
                false
            }
            CaState::Loss => {
                if self.cfg.undo && self.loss_undo_or_frto(now, new_data, delivered > 0 && !new_data) {
                    return new_data;
                }
                if self.snd_una >= self.recover {
                    self.set_state(now, CaState::Open);
                }
                new_data
            }
        }
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh an undo would go back to.
    fn current_ssthresh(&self) -> f64 {
        if self.state == CaState::Recovery {
            self.w.ssthresh
        } else {
            let c = self.w.cwnd.floor() as u64;
            self.w.ssthresh.max(((c >> 1) + (c >> 2)) as f64)
        }
    }

    /// Linux `tcp_init_undo` (with the window it may go back to).
    fn undo_init(&mut self, prior_ssthresh: f64) {
        let mut retrans = self.retrans_out as i64;
        if self.tlp_high.is_some() && self.tlp_retrans {
            retrans += 1;
        }
        self.undo = Undo {
            marker: Some(self.snd_una),
            retrans: if retrans == 0 { -1 } else { retrans },
            prior_ssthresh,
            prior_cwnd: self.w.cwnd,
        };
    }

    /// A D-SACK block `[s, e)` arrived (Linux `tcp_sacktag_write_queue`,
    /// `tcp_sacktag_one`): a resend since the reduction began was needless.
    fn undo_dsack(&mut self, s: u64, e: u64, prior_una: u64) {
        let Some(marker) = self.undo.marker else { return };
        if self.undo.retrans <= 0 || e <= marker {
            return;
        }
        if e <= prior_una {
            self.undo.retrans -= 1;
        } else {
            let resent =
                (s.max(self.snd_una)..e.min(self.high_data)).filter(|&q| self.meta.flags(q) & RETX != 0).count() as i64;
            self.undo.retrans = (self.undo.retrans - resent).max(0);
        }
    }

    /// Linux `tcp_may_undo` without timestamps: every resend since the
    /// reduction began was D-SACKed.
    fn may_undo(&self) -> bool {
        self.cfg.undo && self.undo.marker.is_some() && self.undo.retrans == 0
    }

    /// Linux `tcp_undo_cwnd_reduction`: cwnd back to at least what it was
    /// (`tcp_reno_undo_cwnd`, which CUBIC uses too), ssthresh back to the
    /// prior one; `unmark_loss` forgets the timeout's loss marks.
    fn undo_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.lost_high = self.snd_una;
            self.rtx_next = self.snd_una;
        }
        if self.undo.prior_ssthresh > 0.0 {
            self.w.cwnd = self.cc.undo_cwnd(&self.w, self.undo.prior_cwnd);
            if self.undo.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.undo.prior_ssthresh;
                self.cwr_pending = false; // `tcp_ecn_withdraw_cwr`
            }
        }
        self.undo.marker = None;
        self.rack.advanced = true; // RACK re-examines losses
        self.stats.undos += 1;
    }

    /// The Loss state's undo and F-RTO (Linux `tcp_process_loss`, RFC 5682
    /// section 3 with SACK). Returns true when the ACK is fully handled.
    /// `dupack`: the ACK delivered SACKed data without advancing `snd_una`.
    fn loss_undo_or_frto(&mut self, now: Time, una_advanced: bool, dupack: bool) -> bool {
        let recovered = self.snd_una >= self.recover;
        if una_advanced && self.may_undo() {
            self.undo_loss(now, false);
            return true;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was delivered: the timeout was spurious.
            if self.orig_acked {
                self.undo_loss(now, true);
                return true;
            }
            if self.snd_nxt > self.recover {
                if dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if una_advanced && !recovered {
                // Step 2.b: send new data next, if there is any.
                self.recover = self.snd_nxt;
                if self.may_send_new() {
                    self.frto_new_data = true;
                    return false;
                }
                self.frto = false;
            }
        }
        false
    }

    /// Linux `tcp_try_undo_loss`: back to Open with the prior window.
    fn undo_loss(&mut self, now: Time, frto: bool) {
        self.undo_reduction(true);
        if frto {
            self.stats.spurious_rtos += 1;
        }
        self.rto_retransmits = 0;
        self.frto = false;
        self.set_state(now, CaState::Open);
        self.last_cut_by_rto = false;
    }

    /// RACK's per-segment update (RFC 8985 6.2 step 2, Linux
    /// `tcp_rack_advance`) for a segment newly acknowledged or SACKed, with
    /// its flags before this ACK. A retransmitted segment delivered sooner
    /// than min_rtt after its resend may be the original's delivery and
    /// is skipped.
    fn rack_advance(&mut self, now: Time, q: u64, flags: u8) {
        let xmit = self.meta.sent(q);
        let rtt = now - xmit;
        if flags & RETX != 0 && to_secs(rtt) < self.rtt.min_rtt {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if !self.rack.valid || sent_before(self.rack.xmit, self.rack.seq, xmit, q) {
            self.rack.valid = true;
            self.rack.xmit = xmit;
            self.rack.seq = q;
        }
    }

    /// RACK's reordering window (Linux `tcp_rack_reo_wnd`). tcplab's paths
    /// are FIFO, so no reordering is ever seen (`reord_seen = 0`): zero in
    /// recovery or once DupThresh segments are SACKed, else min_rtt / 4
    /// (at most srtt).
    fn rack_reo_wnd(&self) -> Time {
        if self.state != CaState::Open || self.sacked_out >= self.cfg.dupthresh as u64 || !self.rtt.min_rtt.is_finite()
        {
            return 0;
        }
        from_secs((self.rtt.min_rtt / 4.0).min(self.rtt.srtt))
    }

    /// RACK loss detection (RFC 8985 6.2 step 5, Linux
    /// `tcp_rack_detect_loss`): a segment sent before the most recently
    /// sent delivered one is lost once RACK.rtt + reo_wnd has passed since
    /// its (last) transmission; this includes retransmissions, whose loss
    /// no other rule detects. Returns how long until the last segment
    /// still waiting becomes overdue (Linux arms its timer for the maximum).
    fn rack_detect_loss(&mut self, now: Time) -> Option<Time> {
        if !self.rack.valid {
            return None;
        }
        let limit = self.rack.rtt + self.rack_reo_wnd();
        let (rx, rq) = (self.rack.xmit, self.rack.seq);
        let mut wait: Option<Time> = None;
        // Retransmissions in flight, oldest first.
        while let Some(&q) = self.rtx_order.front() {
            let f = if q >= self.snd_una { self.meta.flags(q) } else { 0 };
            if f & RETX_OUT == 0 {
                self.rtx_order.pop_front(); // delivered, or already judged lost
                continue;
            }
            let t = self.meta.sent(q);
            if !sent_before(t, q, rx, rq) {
                break;
            }
            let age = now - t;
            if age < limit {
                wait = Some(limit - age);
                break;
            }
            self.meta.set_flags(q, f & !RETX_OUT);
            self.retrans_out -= 1;
            self.packet_lost(now, q); // a lost retransmission (Linux `tcp_mark_skb_lost`)
            self.rtx_next = self.rtx_next.min(q);
            self.rtx_order.pop_front();
        }
        // First transmissions above the lost boundary: sent in sequence
        // order, so those overdue form a prefix.
        let mut q = self.lost_high.max(self.snd_una);
        while q < self.high_data {
            let i = self.sacked.partition_point(|r| r.1 <= q);
            if i < self.sacked.len() && self.sacked[i].0 <= q {
                q = self.sacked[i].1;
                continue;
            }
            let t = self.meta.sent(q);
            if !sent_before(t, q, rx, rq) {
                break;
            }
            let age = now - t;
            if age < limit {
                // The latest segment still waiting: the one just below the
                // SACKed range (or segment) RACK's record belongs to.
                let j = self.sacked.partition_point(|r| r.1 <= rq);
                let start = if j < self.sacked.len() && self.sacked[j].0 <= rq { self.sacked[j].0 } else { rq };
                let last = start.saturating_sub(1);
                let tl = self.meta.sent(last);
                let rem = if last > q && last < self.high_data && sent_before(tl, last, rx, rq) && now - tl < limit {
                    limit - (now - tl)
                } else {
                    limit - age
                };
                wait = Some(wait.map_or(rem, |w| w.max(rem)));
                break;
            }
            let f = self.meta.flags(q);
            if f & RETX_OUT != 0 {
                self.meta.set_flags(q, f & !RETX_OUT);
                self.retrans_out -= 1;
            }
            q += 1;
            self.lost_high = q;
        }
        wait
    }

    /// RACK's reordering timer fired (Linux `tcp_rack_reo_timeout`): mark
    /// what is now overdue; losses found in the Open state start fast
    /// recovery (PRR counts the timer as one delivery, as the kernel's
    /// `tcp_cwnd_reduction(sk, 1, 0, 0)`); then the RTO is re-armed.
    fn rack_reo_timeout(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        let prior = self.in_flight();
        let lost_before = self.lost_high.max(self.snd_una);
        self.rack_detect_loss(now);
        self.count_lost_since(now, lost_before);
        if self.in_flight() != prior && self.state == CaState::Open && self.lost_high > self.snd_una {
            self.enter_fast_recovery(now);
            if self.cc_controls_window() {
                // `cong_control` sets the window on the next ACK.
            } else if self.cfg.prr && self.hold.is_none() {
                self.prr_reduce(1, 0, false);
            } else {
                self.w.cwnd = self.recovery_target();
            }
        }
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
        self.transmit(now, map, out);
    }

    /// Arms the tail loss probe's timer (RFC 8985 7.2, Linux
    /// `tcp_schedule_loss_probe`) in the Open state with data outstanding:
    /// PTO = 2 SRTT plus 200 ms with one segment in flight (a delayed ACK)
    /// or 2 ms otherwise, 1 s without an RTT sample, and never later than
    /// the RTO would fire (a full RTO from now when `advancing_rto`, the
    /// ACK having just restarted it). Returns whether it was armed.
    fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        let packets_out = self.high_data - self.snd_una;
        // Not in CWR either (Linux: `icsk_ca_state != TCP_CA_Open`).
        if packets_out == 0 || self.state != CaState::Open || self.cwr {
            return false;
        }
        let mut pto = if self.rtt.srtt > 0.0 {
            2.0 * self.rtt.srtt + if packets_out == 1 { TLP_DELACK_ALLOWANCE } else { TLP_SLACK }
        } else {
            1.0
        };
        let rto_left = if advancing_rto || self.timer != Timer::Rto {
            Some(self.rtt.rto())
        } else {
            self.rto_deadline.map(|d| to_secs(d.saturating_sub(now)))
        };
        if let Some(r) = rto_left.filter(|&r| r > 0.0) {
            pto = pto.min(r);
        }
        self.rto_deadline = Some(now + from_secs(pto));
        self.timer = Timer::Tlp;
        true
    }

    /// The probe timer fired (Linux `tcp_send_loss_probe`): with no probe
    /// outstanding, send one new segment whatever cwnd says, or else resend
    /// the highest segment sent; remember `snd_nxt` to judge the probe by.
    /// Then the RTO is armed from now.
    fn send_loss_probe(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.tlp_high.is_none() {
            self.tlp_retrans = false;
            let new_data = self.snd_nxt == self.high_data && self.may_send_new();
            let probe = if new_data {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                Some((seq, None))
            } else if self.high_data > self.snd_una {
                self.tlp_retrans = true;
                Some((self.high_data - 1, Some(RetransmitCause::Tlp)))
            } else {
                None
            };
            if let Some((seq, cause)) = probe {
                self.emit(now, seq, cause, map, out);
                self.tlp_high = Some(self.snd_nxt);
                self.stats.tlp_probes += 1;
            }
        }
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
    }

    /// An ACK at or above the probe's `tlp_high` (Linux
    /// `tcp_process_tlp_ack`): a probe of new data, or a resend answered by
    /// a pure duplicate ACK (both copies arrived), found no loss; a resend
    /// followed by an ACK beyond `tlp_high` repaired one: the window is
    /// reduced at once (CWR entered and completed: cwnd = ssthresh).
    /// `progress`: the ACK advanced `snd_una` or SACKed new data.
    fn process_tlp_ack(&mut self, now: Time, ack: u64, progress: bool) {
        let Some(high) = self.tlp_high else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            if self.state == CaState::Open {
                let flight = self.flight_size();
                self.w.ssthresh = self.cc.ssthresh(&self.w, LossEvent::FastRecovery, flight, to_secs(now));
                if self.ecn.mode == EcnMode::Classic {
                    self.cwr_pending = true; // `tcp_init_cwnd_reduction`
                }
                // `tcp_end_cwnd_reduction` leaves a `cong_control` window alone.
                if !self.cc_controls_window() {
                    if self.w.ssthresh < INFINITE_SSTHRESH {
                        self.w.cwnd = self.w.ssthresh;
                    }
                    self.cc.on_recovery_exit(&mut self.w, to_secs(now));
                }
                self.stats.tlp_recoveries += 1;
            }
        } else if !progress {
            self.tlp_high = None;
        }
    }

    /// Proportional Rate Reduction (RFC 6937's PRR-SSRB) as Linux 6.x's
    /// `tcp_cwnd_reduction`: sets cwnd to the segments in flight after this
    /// ACK plus what may be sent now. While more than ssthresh is in flight,
    /// sending follows delivery in the proportion ssthresh / prior_cwnd;
    /// below it, up to one more than was delivered (slow start back to
    /// ssthresh) when `snd_una` advanced and nothing new was lost, else
    /// packet conservation. The first ACK of a recovery always lets one
    /// segment out (the fast retransmit).
    fn prr_reduce(&mut self, newly_acked_sacked: u64, newly_lost: u64, una_advanced: bool) {
        if newly_acked_sacked == 0 {
            return;
        }
        self.prr.delivered += newly_acked_sacked;
        let ssthresh = self.w.ssthresh;
        let in_flight = self.in_flight() as f64;
        let delta = ssthresh - in_flight;
        let mut sndcnt = if delta < 0.0 {
            // ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out
            (ssthresh * self.prr.delivered as f64 / self.prr.prior_cwnd).ceil() - self.prr.out as f64
        } else {
            let mut n = (self.prr.delivered as f64 - self.prr.out as f64).max(newly_acked_sacked as f64);
            if una_advanced && newly_lost == 0 {
                n += 1.0;
            }
            n.min(delta)
        };
        // "Force a fast retransmit upon entering fast recovery"; never negative.
        sndcnt = sndcnt.max(if self.prr.out == 0 { 1.0 } else { 0.0 });
        // in_flight + sndcnt >= 1 always (in_flight = 0 makes delta = ssthresh >= 2).
        self.w.cwnd = (in_flight + sndcnt).max(1.0);
    }

    /// Linux `tcp_timeout_mark_lost` for a SACK sender: every segment not
    /// SACKed is lost, retransmissions still in flight included (lost
    /// again: counted, as `tcp_mark_skb_lost` does).
    fn timeout_mark_lost(&mut self, now: Time) {
        let before = self.lost_high.max(self.snd_una);
        for q in self.snd_una..self.high_data {
            let f = self.meta.flags(q);
            if f & RETX_OUT != 0 {
                self.meta.set_flags(q, f & !RETX_OUT);
                if q < before {
                    self.packet_lost(now, q);
                }
            }
        }
        self.retrans_out = 0;
        self.rtx_order.clear();
        self.lost_high = self.high_data;
        self.count_lost_since(now, before);
        self.rtx_next = self.snd_una;
    }

    /// The retransmission timer fired and its deadline has passed.
    pub fn on_timeout(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.snd_una >= self.high_data {
            self.rto_deadline = None;
            return;
        }
        match std::mem::take(&mut self.timer) {
            Timer::Reo => return self.rack_reo_timeout(now, map, out),
            Timer::Tlp => return self.send_loss_probe(now, map, out),
            Timer::Rto => {}
        }
        self.stats.timeouts += 1;
        // Linux `tcp_enter_loss` marks the losses first, so a window-
        // controlling algorithm hears of each before `ssthresh` and
        // `set_state`; the other senders keep the RFC order (marks last).
        let mark_first = self.sack() && self.cc_controls_window();
        if mark_first {
            self.timeout_mark_lost(now);
        }
        // RFC 5681: "when ... the given segment has already been retransmitted
        // by way of the retransmission timer at least once, the value of
        // ssthresh is held constant"; inside fast recovery it is already reduced.
        // F-RTO judges a timeout from Open or a repeated one (Linux `tcp_enter_loss`).
        self.frto = self.cfg.frto && (self.state == CaState::Open || self.rto_retransmits > 0);
        // Linux `tcp_enter_loss` from a CWR whose window is not yet
        // acknowledged (`after(high_seq, snd_una)`): no new ssthresh, no undo.
        let in_cwr = std::mem::take(&mut self.cwr) && self.cwr_high > self.snd_una;
        if self.cfg.undo
            && ((self.state == CaState::Open && !in_cwr) || (self.state == CaState::Loss && self.rto_retransmits == 0))
        {
            self.undo_init(self.current_ssthresh());
        }
        if self.ecn.mode == EcnMode::Classic {
            self.cwr_pending = true; // `tcp_enter_loss`: `tcp_ecn_queue_cwr`
        }
        if self.is_congestion(now, true) {
            if self.rto_retransmits == 0 && self.state != CaState::Recovery && !in_cwr {
                let flight = self.flight_size();
                self.w.ssthresh = self.cc.ssthresh(&self.w, LossEvent::Timeout, flight, to_secs(now));
            }
            self.w.cwnd = 1.0;
            self.cc.on_rto(&mut self.w, to_secs(now));
        } else if let Some(h) = self.hold {
            // Judged not congestion: keep the window (the held one if this
            // timeout interrupts an ignored recovery) and tell cc nothing.
            self.w.cwnd = h;
        }
        self.hold = None;
        self.inflation = 0.0;
        self.rto_retransmits += 1;
        self.tlp_high = None; // Linux `tcp_retransmit_timer`
        self.state = CaState::Loss;
        if self.cc_controls_window() {
            // Linux `tcp_enter_loss` calls `set_state` on every timeout.
            let c = self.conn(now);
            self.cc.on_state(&mut self.w, CaState::Loss, &c);
        }
        self.recover = self.high_data;
        self.last_cut_by_rto = true;
        self.dupacks = 0;
        if !self.sack() {
            self.snd_nxt = self.snd_una;
        } else if !mark_first {
            self.timeout_mark_lost(now);
        }
        self.rtt.on_timeout();
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.rto_resend_pending = true;
        self.transmit(now, map, out);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        }
    }
}

/// RFC 2883 section 4 (Linux `tcp_check_dsack`): the first SACK block of an
/// ACK is a D-SACK block when it lies below the ACK's cumulative
/// acknowledgement `ack`, or within the second block.
fn is_dsack(sack: &SackBlocks, ack: u64) -> bool {
    let mut r = sack.ranges(ack);
    match r.next() {
        Some((s0, e0)) => s0 < ack || r.next().is_some_and(|(s1, e1)| s1 <= s0 && e0 <= e1),
        None => false,
    }
}

#[cfg(test)]
mod tests;
