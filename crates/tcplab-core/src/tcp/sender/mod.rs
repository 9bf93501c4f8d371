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
//!
//! Where the code is: this file holds the sender's state, configuration and
//! shared helpers; `send.rs` the send path and pacing; `ack.rs` ACK
//! processing and the SACK scoreboard; `recovery.rs` fast recovery, PRR,
//! undo and F-RTO; `timers.rs` the single timer (RACK, tail loss probe,
//! RTO); `ecn.rs` ECN marking, feedback and CWR; `segments.rs` the
//! per-segment send times and flags.

use std::collections::VecDeque;

use crate::cc::knn::LossClassifier;
use crate::cc::{CongestionControl, Conn, EcnMode, Window};
use crate::sim::time::{to_secs, Time};
use crate::spec::{DupAckGuard, Recovery};
use crate::tcp::app::SegmentMap;
use crate::tcp::rate::RateSampler;
use crate::tcp::receiver::EcnConfig;
use crate::tcp::rtt::RttEstimator;
use crate::trace::RetransmitCause;

/// Linux's TCP_INFINITE_SSTHRESH: "arbitrarily high" initial ssthresh.
pub const INFINITE_SSTHRESH: f64 = 2_147_483_647.0;

mod segments;
use segments::{SegMetas, RETX, RETX_OUT, SACKED};

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
    /// Open, Recovery or Loss (never Disorder or Cwr: those are `disorder`
    /// and `cwr` within Open, see [`Sender::ca_state`]).
    pub state: CaState,
    /// Open and the last ACK was a duplicate (the Disorder the algorithm hears).
    disorder: bool,
    /// The state the algorithm was last told ([`Sender::report_state`]).
    reported: CaState,
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
            disorder: false,
            reported: CaState::Open,
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

    /// Linux `tcp_set_ca_state`: the state changes, and the algorithm hears
    /// of it (`set_state`).
    fn set_state(&mut self, now: Time, new: CaState) {
        if new == self.state {
            return;
        }
        self.state = new;
        self.disorder = false;
        self.report_state(now, false);
    }

    /// The CA state as the algorithm sees it: the sender's own, with
    /// Disorder and CWR within Open for the algorithms that grow the window
    /// (a window-controlling one hears of CWR through `on_cwr`).
    pub(crate) fn ca_state(&self) -> CaState {
        match self.state {
            CaState::Open if !self.cc_controls_window() && self.cwr => CaState::Cwr,
            CaState::Open if !self.cc_controls_window() && self.disorder => CaState::Disorder,
            s => s,
        }
    }

    /// Tells the algorithm the state ([`CongestionControl::on_state`]) when
    /// it changed since it was last told, or always (`again`: a timeout,
    /// which Linux reports even in Loss).
    pub(super) fn report_state(&mut self, now: Time, again: bool) {
        let s = self.ca_state();
        if s != self.reported || again {
            self.reported = s;
            let c = self.conn(now);
            self.cc.on_state(&mut self.w, s, &c);
        }
    }

    /// Tells the algorithm of a state the sender passes through without
    /// holding it (the CWR of a tail loss probe's repair); `report_state`
    /// then tells the state it is in.
    pub(super) fn report_passing_state(&mut self, now: Time, s: CaState) {
        self.reported = s;
        let c = self.conn(now);
        self.cc.on_state(&mut self.w, s, &c);
    }

    /// After the algorithm has seen an ACK ([`CongestionControl::on_ack_sample`]):
    /// in Open, a duplicate ACK enters Disorder, an ACK of new data leaves it.
    pub(super) fn note_duplicate(&mut self, now: Time, duplicate: bool) {
        if self.state == CaState::Open && !self.cwr && duplicate != self.disorder {
            self.disorder = duplicate;
            self.report_state(now, false);
        }
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
}

mod ack;
mod ecn;
mod recovery;
mod send;
mod timers;

#[cfg(test)]
mod tests;
