"""The parts of a generic scenario: :class:`Node`, :class:`Link`, :class:`Route`, :class:`File` and
:class:`Flow`, each a dataclass in friendly units whose ``to_spec(path)`` checks it and returns the
core's JSON for it (``crates/tcplab-core/src/spec.rs``), errors naming the field under ``path``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from ..errors import ScenarioError, shown
from ..units import (
    Buffer,
    Quantity,
    check_text,
    parse_buffer,
    parse_count,
    parse_number,
    parse_rate,
    parse_size,
    parse_time,
    python_scalar,
)
from .checks import (
    ACCOUNTINGS,
    ACK_POLICIES,
    DUPACK_GUARDS,
    ECN_MODES,
    LINUX_DELACK_MAX,
    LINUX_DELACK_MIN,
    LINUX_QUICKACKS,
    NODE_KINDS,
    PACING_CA_RATIO,
    PACING_SS_RATIO,
    PROFILE_DEFAULTS,
    PROFILES,
    RECOVERIES,
    RTO_MODES,
    WINDOW_CONTROLLING,
    _bool,
    _check_keys,
    _check_params,
    _choice,
    _loss_spec,
    _param_value,
    _queue_spec,
    _source_spec,
    _str,
    resolve_algorithm,
)


@dataclass
class Node:
    """A host (flows start and end there) or a router."""

    name: str
    kind: str = "host"

    def to_spec(self, path: str) -> dict:
        return {"name": _str(self.name, f"{path}.name"),
                "kind": _choice(self.kind, NODE_KINDS, f"{path}.kind", "node kind")}


@dataclass
class Link:
    """A unidirectional link from ``src`` to ``dst``: a queue at ``src``
    (``buffer``: packets, a size in bytes, or ``None`` = unlimited), a
    transmitter of ``rate`` and a propagation ``delay``. ``loss``: random
    loss on the wire, a probability (Bernoulli) or a table
    ``{"kind": "gilbert_elliott", "p_gb": ..., "p_bg": ...}``
    (docs/reference/scenario-file.md, "Random loss"), drawn from the link's
    own seeded stream and counted apart from queue drops.

    ``queue``: the queue discipline, a table ``{"discipline": "codel",
    "target": "5ms", ...}`` (or only its name, ``"codel"``) whose other
    keys are the discipline's parameters (``tcplab disciplines`` lists
    them; a value with a unit is converted: times to seconds, sizes to
    bytes, rates to bit/s). ``buffer`` stays the
    limit (``None``: the discipline's own default), or the table gives
    ``limit_packets`` / ``limit_bytes`` instead. ``None`` (the default) is
    the fast drop-tail FIFO, which keeps no sojourn-time statistics;
    ``{"discipline": "droptail"}`` is the same queue with them."""

    name: str
    src: str
    dst: str
    rate: Quantity
    delay: Quantity
    buffer: Quantity | Buffer | None = None
    loss: Any = None
    queue: Mapping[str, Any] | None = None

    def to_spec(self, path: str) -> dict:
        buf = parse_buffer(self.buffer, f"{path}.buffer")
        return {
            "name": _str(self.name, f"{path}.name"),
            "src": _str(self.src, f"{path}.src"),
            "dst": _str(self.dst, f"{path}.dst"),
            "rate_bps": parse_rate(self.rate, f"{path}.rate"),
            "delay": parse_time(self.delay, f"{path}.delay"),
            "queue": _queue_spec(self.queue, buf.resolve(field=f"{path}.buffer"), f"{path}.queue",
                                 None if self.buffer is None else f"{path}.buffer"),
            "loss": _loss_spec(self.loss, f"{path}.loss"),
        }



@dataclass
class Route:
    """A static route: at ``node``, packets for ``dst`` leave on ``link``."""

    node: str
    dst: str
    link: str

    def to_spec(self, path: str) -> dict:
        return {"node": _str(self.node, f"{path}.node"), "dst": _str(self.dst, f"{path}.dst"),
                "link": _str(self.link, f"{path}.link")}


#: Keys of a flow's ``loss_classifier`` table.
LOSS_CLASSIFIER_KEYS = ("kind", "params")


@dataclass
class File:
    """One file of a flow: ``size`` bytes handed to TCP at time ``start``."""

    size: Quantity
    start: Quantity = 0.0


@dataclass
class Flow:
    """One TCP connection from host ``src`` to host ``dst``.

    ``profile`` picks the TCP the flow models: ``"rfc"`` (the default, the
    classic RFC sender of the paper reproductions) or ``"linux"`` (Linux
    6.x). The options left at ``None`` take the profile's values
    (``PROFILE_DEFAULTS``): for ``"rfc"`` NewReno recovery, 40-byte headers
    and ACKs, no PRR/RACK/TLP, no delayed ACKs; for ``"linux"`` SACK
    recovery, 52-byte headers and ACKs (MSS 1448 in 1500 bytes), PRR, RACK,
    the tail loss probe and delayed ACKs. Each can be set on its own.

    Other defaults mirror the core's (``spec.rs``): ``algorithm="newreno"``,
    1500-byte packets, ``payload``
    accounting (use ``accounting="ns2"`` to count whole packets as goodput,
    as the papers do; :func:`dumbbell` defaults to that), initial window 10,
    RTO min/max/initial 0.2/60/1 s, ``rto_mode="linux"``
    (``RTO = SRTT + max(4 RTTVAR, min_rto)``; ``"rfc6298"`` for
    ``max(min_rto, SRTT + 4 RTTVAR)``). ``rwnd`` is the receiver window in
    packets (``None`` = unlimited). ``files=None`` is a bulk sender
    (unlimited data from ``start``); otherwise a list of :class:`File`,
    ``(size, start)`` pairs or ``{"size", "start"}`` dicts sent in order.
    """

    src: str
    dst: str
    name: str | None = None
    algorithm: str = "newreno"
    params: dict = field(default_factory=dict)
    recovery: str | None = None
    start: Quantity = 0.0
    packet_size: Quantity = 1500
    header_size: Quantity | None = None
    ack_size: Quantity | None = None
    accounting: str = "payload"
    init_cwnd: float = 10.0
    init_ssthresh: float | None = None
    rwnd: int | None = None
    min_rto: Quantity = 0.2
    max_rto: Quantity = 60.0
    rto_mode: str = "linux"
    init_rto: Quantity = 1.0
    dupthresh: int = 3
    #: Reno/NewReno: when duplicate ACKs that do not cover more than
    #: ``recover`` may still start a fast retransmit (RFC 6582 section 4):
    #: ``"careful"`` never (RFC 6582, ns-2's default, Linux),
    #: ``"less_careful"`` also when they cover exactly ``recover`` (ns-2's
    #: ``lessCareful_``), ``"ack_heuristic"`` RFC 6582 4.1's ACK heuristic.
    dupack_guard: str = "careful"
    limited_transmit: bool = False
    delayed_ack: bool | None = None
    delack_timeout: Quantity = 0.04
    sack_blocks: int = 3
    #: When the receiver ACKs: ``"rfc"`` (RFC 5681 4.2, with ``delayed_ack``
    #: and ``delack_timeout``; the default) or ``"linux"`` (Linux 6.x:
    #: quick-ACK mode at the start and after duplicates, an ACK every second
    #: full segment, an adaptive delayed-ACK timeout; always delays, so
    #: ``delayed_ack`` and ``delack_timeout`` are not used). docs/tcp.md.
    #: None: the profile's (rfc: ``"rfc"``, linux: ``"linux"``).
    ack_policy: str | None = None
    #: ``ack_policy="linux"`` only: TCP_ATO_MIN = TCP_DELACK_MIN, the initial
    #: and smallest delayed-ACK timeout.
    delack_min: Quantity = LINUX_DELACK_MIN
    #: ``ack_policy="linux"`` only: TCP_DELACK_MAX, the largest delayed-ACK timeout.
    delack_max: Quantity = LINUX_DELACK_MAX
    #: ``ack_policy="linux"`` only: TCP_MAX_QUICKACKS, the most quick-ACK
    #: credits (at most half the receive window in packets; 0 turns quick ACKs off).
    quickacks: int = LINUX_QUICKACKS
    #: D-SACK (RFC 2883): the ACK answering a duplicate segment reports it in
    #: its first SACK block. Only for ``recovery="sack"`` (ignored otherwise,
    #: as Linux does without SACK). None: the profile's (on for linux).
    dsack: bool | None = None
    restart_after_idle: bool = True
    files: list | None = None
    #: An unresponsive source instead of TCP (no ACKs, no congestion
    #: control): ``{"kind": "cbr", "rate": "10Mbps", "ecn": "ect1"}`` or
    #: ``{"kind": "on_off", "rate": "10Mbps", "on": "1s", "off": "2s",
    #: "exponential": True}`` (``ecn``: ``"not_ect"`` (default), ``"ect0"``,
    #: ``"ect1"``; on/off periods exponential with those means, or fixed).
    #: Full packets of ``packet_size`` from ``start``; the results' algorithm
    #: is ``"cbr"`` / ``"on_off"``. Not with ``files``.
    source: Mapping | None = None
    #: ECN (docs/queues.md): ``"off"``, ``"classic"`` (RFC 3168: ECT(0),
    #: the receiver echoes ECE until CWR, one window reduction per round
    #: trip) or ``"accecn"`` (Accurate ECN: the receiver counts CE marks in
    #: the ACE field). None: the algorithm's need (``accecn`` for dctcp and
    #: prague, and for bbr3 with ``ecn = true``; ``off`` otherwise).
    ecn: str | None = None
    #: Scripted loss: the first transmission of these data segments is lost.
    drop_segments: list | None = None
    #: Loss classifier, e.g. ``{"kind": "knn", "params": {"max_size": 1000}}``:
    #: on a loss it judges "not congestion", the segment is retransmitted
    #: without reducing the window (any algorithm). Checked by the core.
    loss_classifier: Mapping | None = None
    #: ``"rfc"`` or ``"linux"``: the defaults of the options left at None.
    profile: str = "rfc"
    #: Proportional Rate Reduction in fast recovery (RFC 6937, Linux
    #: ``tcp_cwnd_reduction``); SACK recovery only.
    prr: bool | None = None
    #: RACK time-based loss detection (RFC 8985, Linux ``tcp_recovery.c``)
    #: instead of RFC 6675's DupThresh rule; SACK recovery only.
    rack: bool | None = None
    #: Tail loss probe (RFC 8985 section 7); needs ``rack``.
    tlp: bool | None = None
    #: F-RTO (RFC 5682 section 3, SACK variant; Linux ``tcp_process_loss``):
    #: new data after a timeout tells a spurious one; needs ``undo``.
    frto: bool | None = None
    #: Undo (Linux ``tcp_undo_cwnd_reduction``): revert a reduction whose
    #: every resend came back D-SACKed, or an RTO F-RTO found spurious.
    undo: bool | None = None
    #: Linux's internal pacing for an algorithm that does not pace itself
    #: (``tcp_update_pacing_rate``, what fq or SO_MAX_PACING_RATE turn on):
    #: cwnd x MSS / SRTT times ``pacing_ss_ratio`` % while cwnd is below
    #: ssthresh / 2, else ``pacing_ca_ratio`` %. BBR always paces.
    pacing: bool = False
    pacing_ss_ratio: float = PACING_SS_RATIO
    pacing_ca_ratio: float = PACING_CA_RATIO

    def _resolved(self, name: str, path: str) -> Any:
        """An option's value, or the profile's when it is None."""
        v = getattr(self, name)
        if v is not None:
            return v
        profile = _choice(self.profile, PROFILES, f"{path}.profile", "profile")
        return PROFILE_DEFAULTS[profile][name]

    def _files_spec(self, path: str) -> dict:
        if self.files is None:
            return {"kind": "bulk"}
        if isinstance(self.files, (str, bytes)) or not isinstance(self.files, Iterable):
            raise ScenarioError(f"{path}.files", f"expected a list of files, got {shown(self.files)}")
        out = []
        for j, f in enumerate(self.files):
            fp = f"{path}.files[{j}]"
            if isinstance(f, File):
                size, start = f.size, f.start
            elif isinstance(f, Mapping):
                _check_keys(f, FILE_KEYS, fp)
                if "size" not in f:
                    raise ScenarioError(f"{fp}.size", "missing")
                size, start = f["size"], f.get("start", 0.0)
            elif isinstance(f, (tuple, list)) and len(f) == 2:
                size, start = f
            else:
                raise ScenarioError(fp, f"expected {{size, start}} or (size, start), got {shown(f)}")
            out.append({"size": parse_size(size, f"{fp}.size"), "start": parse_time(start, f"{fp}.start")})
        return {"kind": "files", "files": out}

    def _app_spec(self, path: str) -> dict:
        app = _source_spec(self.source, f"{path}.source")
        if app is None:
            return self._files_spec(path)
        if self.files is not None:
            raise ScenarioError(f"{path}.source", "a flow sends either files (TCP) or an unresponsive source, not both")
        return app

    def to_spec(self, path: str, default_name: str) -> dict:
        """The core's ``FlowSpec`` dict; errors name fields under ``path``."""
        p = lambda s: f"{path}.{s}"  # noqa: E731
        algo, entry = resolve_algorithm(self.algorithm, p("algorithm"))
        params = _check_params(self.params, entry, algo, p("params"))
        # Units and types are parsed here; every range and rule between fields is the core's
        # (corecheck.py), which names the same fields.
        init_ssthresh = None if self.init_ssthresh is None else parse_number(self.init_ssthresh, p("init_ssthresh"))
        rwnd = None if self.rwnd is None else parse_count(self.rwnd, p("rwnd"))
        linux = {k: _bool(self._resolved(k, path), p(k)) for k in ("prr", "rack", "tlp", "frto", "undo")}
        recovery = self._resolved("recovery", path)
        if self.recovery is None and (entry or {}).get("name", algo) in WINDOW_CONTROLLING:
            recovery = "sack"
        spec = {
            "name": _str(self.name if self.name is not None else default_name, p("name")),
            "src": _str(self.src, p("src")),
            "dst": _str(self.dst, p("dst")),
            "cc": {"algorithm": algo, "params": params},
            "recovery": _choice(recovery, RECOVERIES, p("recovery"), "recovery"),
            "start": parse_time(self.start, p("start")),
            "packet_size": parse_size(self.packet_size, p("packet_size")),
            "header_size": parse_size(self._resolved("header_size", path), p("header_size")),
            "ack_size": parse_size(self._resolved("ack_size", path), p("ack_size")),
            "accounting": _choice(self.accounting, ACCOUNTINGS, p("accounting"), "accounting"),
            "init_cwnd": parse_number(self.init_cwnd, p("init_cwnd")),
            "init_ssthresh": init_ssthresh,
            "rwnd_packets": rwnd,
            "min_rto": parse_time(self.min_rto, p("min_rto")),
            "max_rto": parse_time(self.max_rto, p("max_rto")),
            "rto_mode": _choice(self.rto_mode, RTO_MODES, p("rto_mode"), "rto_mode"),
            "init_rto": parse_time(self.init_rto, p("init_rto")),
            "dupthresh": parse_count(self.dupthresh, p("dupthresh")),
            "dupack_guard": _choice(self.dupack_guard, DUPACK_GUARDS, p("dupack_guard"), "dupack_guard"),
            "limited_transmit": _bool(self.limited_transmit, p("limited_transmit")),
            "delayed_ack": _bool(self._resolved("delayed_ack", path), p("delayed_ack")),
            "delack_timeout": parse_time(self.delack_timeout, p("delack_timeout")),
            "sack_blocks": parse_count(self.sack_blocks, p("sack_blocks")),
            "restart_after_idle": _bool(self.restart_after_idle, p("restart_after_idle")),
            "app": self._app_spec(path),
            "drop_segments": self._drop_segments(path),
            "loss_classifier": self._loss_classifier(path),
        }
        # Only the mechanisms switched on go to the core: a classic flow's
        # spec (and so its store key) is what it was before they existed.
        spec.update({k: True for k, on in linux.items() if on})
        spec.update(self._ack_policy_spec(path))
        spec.update(self._pacing_spec(path))
        if self.ecn is not None:
            spec["ecn"] = _choice(self.ecn, ECN_MODES, p("ecn"), "ECN mode")
        return spec

    def _pacing_spec(self, path: str) -> dict:
        """The pacing keys, only when pacing is on (other specs unchanged)."""
        p = lambda s: f"{path}.{s}"  # noqa: E731
        out: dict = {}
        ratios = {}
        for name in ("pacing_ss_ratio", "pacing_ca_ratio"):
            ratios[name] = parse_number(getattr(self, name), p(name))
        defaults = {"pacing_ss_ratio": PACING_SS_RATIO, "pacing_ca_ratio": PACING_CA_RATIO}
        if _bool(self.pacing, p("pacing")):
            out["pacing"] = True
            out.update({k: v for k, v in ratios.items()})
        elif ratios != defaults:
            bad = next(k for k, v in ratios.items() if v != defaults[k])
            raise ScenarioError(p(bad), "applies only with pacing=True")
        return out

    def _ack_policy_spec(self, path: str) -> dict:
        """The receiver's ACK-policy keys, only where they differ from the
        defaults: specs of rfc flows (and their run keys) stay as before."""
        p = lambda s: f"{path}.{s}"  # noqa: E731
        policy = _choice(self._resolved("ack_policy", path), ACK_POLICIES, p("ack_policy"), "ack_policy")
        linux = {"delack_min": parse_time(self.delack_min, p("delack_min")),
                 "delack_max": parse_time(self.delack_max, p("delack_max")),
                 "quickacks": parse_count(self.quickacks, p("quickacks"))}
        out: dict = {}
        if policy == "linux":
            out.update(ack_policy="linux", **linux)
        else:  # (the core refuses them, as they would not be used; at their defaults they are left out)
            defaults = {"delack_min": LINUX_DELACK_MIN, "delack_max": LINUX_DELACK_MAX, "quickacks": LINUX_QUICKACKS}
            out.update({k: v for k, v in linux.items() if v != defaults[k]})
        if _bool(self._resolved("dsack", path), p("dsack")):
            out["dsack"] = True
        return out

    def _loss_classifier(self, path: str) -> dict | None:
        lc = self.loss_classifier
        if lc is None:
            return None
        if not isinstance(lc, Mapping):
            raise ScenarioError(f"{path}.loss_classifier", f"expected a table with kind and params, got {shown(lc)}")
        _check_keys(lc, LOSS_CLASSIFIER_KEYS, f"{path}.loss_classifier")
        kind = lc.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ScenarioError(f"{path}.loss_classifier.kind",
                                f"must name a classifier (e.g. 'knn'), got {shown(kind)}")
        check_text(kind, f"{path}.loss_classifier.kind")
        params = lc.get("params", {})
        if not isinstance(params, Mapping):
            raise ScenarioError(f"{path}.loss_classifier.params", f"expected a table, got {shown(params)}")
        out = {}
        for k, v in params.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{path}.loss_classifier.params", f"keys must be strings, got {shown(k)}")
            fp = f"{path}.loss_classifier.params.{check_text(k, f'{path}.loss_classifier.params')}"
            out[k] = _param_value(v, fp)
        return {"kind": kind, "params": out}

    def _drop_segments(self, path: str) -> list:
        if self.drop_segments is None:
            return []
        if isinstance(self.drop_segments, (str, bytes)) or not isinstance(self.drop_segments, Iterable):
            raise ScenarioError(f"{path}.drop_segments",
                                f"expected a list of segment numbers, got {shown(self.drop_segments)}")
        out = []
        for j, x in enumerate(self.drop_segments):
            x = python_scalar(x)
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 2**64:
                raise ScenarioError(f"{path}.drop_segments[{j}]", f"must be a non-negative integer, got {shown(x)}")
            out.append(int(x))
        return out


FLOW_KEYS = [f.name for f in fields(Flow)]
#: Keys of one entry of a flow's ``files``.
FILE_KEYS = [f.name for f in fields(File)]


def _coerce(obj: Any, cls: type, path: str) -> Any:
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, Mapping):
        allowed = [f.name for f in fields(cls)]
        _check_keys(obj, allowed, path)
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        for r in required:
            if r not in obj:
                raise ScenarioError(f"{path}.{r}", "missing (required)")
        return cls(**obj)
    raise ScenarioError(path, f"expected a {cls.__name__} or a table, got {shown(obj)}")

