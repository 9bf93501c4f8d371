"""Scenarios: what to simulate, in friendly units, turned into the core's run description.

A :class:`Scenario` holds nodes, links, routes and flows plus the run settings
(duration, measurement window, sampling interval, seed). ``to_spec()`` checks
everything, naming the offending field in a :class:`~tcplab.errors.ScenarioError`,
and returns the exact ``RunSpec`` JSON object of ``crates/tcplab-core/src/spec.rs``
(SI units: seconds, bit/s, bytes; no extra keys). :class:`Dumbbell` builds the
single-bottleneck network of the mv-highspeed and mv-buffers papers.

Scenario files (TOML)
=====================

The complete reference, every key with its default and unit, is
docs/reference/scenario-file.md (the documentation site's "Scenario files").
Quantities may be written with units as strings (``"200Mbps"``, ``"100ms"``,
``"1500B"``, ``"0.1BDP"``, see :mod:`tcplab.units`) or as plain numbers in SI
base units. Unknown keys are errors that name the key and suggest close
matches. A file has optional top-level ``name`` and ``description`` strings,
a ``[run]`` table, and *either* a ``[dumbbell]`` table *or* the generic
``[[nodes]]``/``[[links]]``/``[[routes]]``/``[[flows]]`` arrays.

``[run]``
    ``duration`` (required for the generic form; dumbbell default ``"2000s"``),
    ``measure_window`` (length of the measurement window at the end of the
    run) *or* ``measure_start`` (its start), ``sample_interval`` (time-series
    sampling; ``0`` disables), ``seed`` (integer), ``trace_links`` (links
    whose queue length is sampled; default: every link with a finite queue
    limit, i.e. the dumbbell's bottleneck), ``loss_trace`` (``true`` records
    every drop, loss and retransmission: the results' ``drop_trace`` and
    ``retransmit_trace``; default ``false``), ``pcap`` (links whose packets
    are captured, for pcap files: link names, or ``"bottleneck"`` for the
    bottleneck both ways; docs/pcap.md), ``pcap_limit`` (most packets
    captured; default 5,000,000), ``memory_limit`` (a size such as
    ``"16GiB"``: the memory a run may be estimated to need before the core
    refuses it; default 4 GiB, docs/limits.md). Defaults: generic form
    measures over the whole run; the dumbbell measures over the last half
    (the papers' "2000 s, goodput over the last 1000 s"); sample interval
    ``"100ms"``; seed ``0``.

``[dumbbell]`` (keys of :class:`Dumbbell`)
    ``n_flows``, ``bottleneck_rate``, ``rtt``, ``buffer`` (required);
    ``algorithm`` (name, or a list with one per flow; default ``"newreno"``),
    ``params`` (table, or list of tables per flow), ``recovery``
    (``"reno"|"newreno"|"sack"`` or list; default ``"newreno"``),
    ``start`` (flow start time or list; default 0), ``access_rate`` (default
    10 x ``bottleneck_rate``), ``access_delay`` (``"spread"`` (default),
    ``"uniform"``, one time for all, or a list of times, one per flow),
    ``access_jitter`` (a time, default 0: each sender's access delay gets an
    offset drawn uniform in [0, jitter) from the seed),
    ``packet_size`` (``"1500B"``), ``header_size`` (``40``), ``ack_size``
    (``40``), ``accounting`` (``"ns2"``), ``loss`` / ``reverse_loss``,
    ``queue`` / ``reverse_queue`` (the bottleneck's queue discipline, e.g.
    ``queue = { discipline = "codel", target = "5ms" }``, see ``[[links]]``;
    ``buffer`` is its limit), ``source`` (an unresponsive source table for
    every flow, or a list with one per flow, ``"tcp"`` for a TCP flow; see
    ``[[flows]]``), and a sub-table ``[dumbbell.flow_options]`` with any
    other :class:`Flow` keyword applied to every flow (e.g.
    ``delayed_ack = true``, ``min_rto = "200ms"``).

``[[nodes]]``
    ``name``, ``kind`` (``"host"`` (default) or ``"router"``).

``[[links]]`` (unidirectional)
    ``name``, ``src``, ``dst``, ``rate``, ``delay``, ``buffer`` (optional;
    packets, or a size in bytes; absent = unlimited; BDP fractions are only
    meaningful in the dumbbell), ``loss``, ``queue`` (optional: the queue
    discipline, ``{ discipline = "fq_codel", target = "5ms", ... }``; the
    other keys are the discipline's parameters as ``tcplab disciplines``
    lists them, a value with a unit converted (times to seconds, sizes to
    bytes, rates to bit/s), or ``limit_packets`` / ``limit_bytes`` when
    ``buffer`` is absent; absent = the fast drop-tail FIFO).

``[[routes]]`` (optional static routes; otherwise shortest propagation delay)
    ``node``, ``dst``, ``link``.

``[[flows]]`` (keys of :class:`Flow`)
    ``src``, ``dst`` (required), ``name`` (default ``flow<i+1>``),
    ``algorithm``, ``params``, ``recovery``, ``start``, ``packet_size``,
    ``header_size``, ``ack_size``, ``accounting``, ``init_cwnd``,
    ``init_ssthresh``, ``rwnd`` (packets), ``min_rto``, ``max_rto``, ``rto_mode``,
    ``init_rto``, ``dupthresh``, ``dupack_guard``, ``limited_transmit``, ``delayed_ack``,
    ``delack_timeout``, ``sack_blocks``, ``ack_policy`` (``"rfc"``|``"linux"``),
    ``delack_min``, ``delack_max``, ``quickacks``, ``dsack``, ``restart_after_idle``, ``files``
    (array of ``{size = "1MB", start = "0s"}``; absent = bulk, unlimited data),
    ``source`` (instead of TCP, an unresponsive source:
    ``{ kind = "cbr", rate = "10Mbps", ecn = "ect1" }`` or
    ``{ kind = "on_off", rate = "10Mbps", on = "1s", off = "2s", exponential = true }``;
    not with ``files``).

A generic file may also give ``bottleneck = ["link-name", ...]``, the links
reports and plots should highlight.

Example::

    name = "dumbbell-newreno-bdp"
    [dumbbell]
    n_flows = 1
    bottleneck_rate = "200Mbps"
    rtt = "100ms"
    buffer = "1BDP"
    algorithm = "newreno"
    [run]
    duration = "2000s"
    measure_window = "1000s"
    sample_interval = "10ms"
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from .errors import ScenarioError, UnitError, shown
from .units import (
    Buffer,
    Quantity,
    bdp_packets,
    check_text,
    parse_buffer,
    parse_count,
    parse_number,
    parse_param,
    parse_rate,
    parse_size,
    parse_time,
    python_scalar,
)

__all__ = [
    "Dumbbell",
    "File",
    "Flow",
    "Link",
    "Node",
    "Route",
    "Scenario",
    "algorithm_catalog",
    "discipline_catalog",
    "load_scenario",
    "scenario_from_dict",
]

RECOVERIES = ("reno", "newreno", "sack")
ACCOUNTINGS = ("payload", "ns2")
#: RTO computation: Linux (variance term floored at min_rto) or RFC 6298.
RTO_MODES = ("linux", "rfc6298")
#: Reno/NewReno guard against false fast retransmits (RFC 6582 section 4).
DUPACK_GUARDS = ("careful", "less_careful", "ack_heuristic")
#: TCP profiles: "rfc" is the classic RFC sender the paper reproductions use;
#: "linux" models Linux 6.x (docs/tcp.md "The Linux profile").
PROFILES = ("rfc", "linux")
#: What a profile sets for the Flow options left at None.
PROFILE_DEFAULTS: dict[str, dict[str, Any]] = {
    "rfc": {"recovery": "newreno", "header_size": 40, "ack_size": 40,
            "prr": False, "rack": False, "tlp": False, "frto": False, "undo": False, "delayed_ack": False,
            "ack_policy": "rfc", "dsack": False},
    # Linux 6.x: SACK on, 20 B IP + 20 B TCP + 12 B timestamp option (so a
    # 1500 B packet carries MSS 1448), PRR, RACK-TLP, F-RTO, undo, the Linux receiver
    # (its own delayed ACKs, quick ACKs, D-SACK).
    "linux": {"recovery": "sack", "header_size": 52, "ack_size": 52,
              "prr": True, "rack": True, "tlp": True, "frto": True, "undo": True, "delayed_ack": False,
              "ack_policy": "linux", "dsack": True},
}
#: Receiver ACK policies: RFC 5681 (today's receiver) or Linux 6.x's.
ACK_POLICIES = ("rfc", "linux")
#: Defaults of the linux ACK policy's parameters (Linux's TCP_ATO_MIN =
#: TCP_DELACK_MIN, TCP_DELACK_MAX, TCP_MAX_QUICKACKS).
LINUX_DELACK_MIN = 0.04
LINUX_DELACK_MAX = 0.2
LINUX_QUICKACKS = 16
#: Algorithms that set the window themselves from delivery-rate samples
#: (Linux ``cong_control``); they need SACK recovery, which is their
#: default under either profile.
WINDOW_CONTROLLING = ("bbr", "bbr3", "prague")
#: Linux's net.ipv4.tcp_pacing_ss_ratio and tcp_pacing_ca_ratio (percent).
PACING_SS_RATIO = 200.0
PACING_CA_RATIO = 120.0
NODE_KINDS = ("host", "router")
#: Algorithms assumed to exist when the core extension is not importable.
BUILTIN_ALGORITHMS = ["reno", "newreno"]
#: Queue disciplines assumed to exist when the core extension is not importable.
BUILTIN_DISCIPLINES = ["droptail"]
#: Keys of a ``queue`` table that are not the discipline's parameters: its
#: name and the limit (also given as the link's ``buffer``).
QUEUE_LIMIT_KEYS = ("limit_packets", "limit_bytes")
#: Keys of a ``queue`` table besides the discipline's parameters.
QUEUE_KEYS = ("discipline", *QUEUE_LIMIT_KEYS)
#: Unresponsive sources (``Flow.source``): their kinds and keys.
ECN_MODES = ("off", "classic", "accecn")
SOURCE_KINDS = {"cbr": ("rate", "ecn"), "on_off": ("rate", "on", "off", "exponential", "ecn")}
#: ECN codepoints of a source's packets.
SOURCE_ECN = ("not_ect", "ect0", "ect1")
#: Default time-series sampling interval (seconds) of scenarios built here.
DEFAULT_SAMPLE_INTERVAL = 0.1
#: Access-link rate of a Dumbbell when none is given, as a multiple of C.
ACCESS_RATE_FACTOR = 10.0
#: The core's fastest link (a byte per picosecond, docs/limits.md): the default access rate stops there,
#: so a bottleneck above 800 Gbit/s is not refused for an access rate the user never set.
MAX_RATE_BPS = 8e12
#: Range of the "uniform" access-delay rule of mv-buffers (seconds).
UNIFORM_ACCESS_DELAY_MAX = 10e-3
#: The second word of the seed of a dumbbell's ``access_jitter`` draws,
#: ``numpy.random.default_rng([seed, ACCESS_JITTER_STREAM])``: a stream apart from
#: ``access_delay = "uniform"``'s ``default_rng(seed)``, so the two never draw the same numbers.
ACCESS_JITTER_STREAM = 1

UNLIMITED_QUEUE = {"limit_packets": None, "limit_bytes": None}


# --------------------------------------------------------------------------
# helpers


def _close(word: str, candidates: Iterable[str]) -> list[str]:
    # short names ("h1" vs "hl") need a lower cutoff to be matched at all
    return difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.5 if len(word) <= 4 else 0.6)


def _suggest(word: str, candidates: Iterable[str]) -> str:
    m = _close(word, candidates)
    if not m:
        return ""
    return " (did you mean " + " or ".join(repr(x) for x in m) + "?)"


def _check_keys(table: Mapping[str, Any], allowed: Sequence[str], prefix: str) -> None:
    if not isinstance(table, Mapping):
        raise ScenarioError(prefix, f"expected a table, got {type(table).__name__}")
    for k in table:
        if k not in allowed:
            path = f"{prefix}.{k}" if prefix else k
            raise ScenarioError(path, f"unknown key{_suggest(k, allowed)}; allowed: {', '.join(allowed)}")


def _nonneg_time(v: Quantity, f: str) -> float:
    t = parse_time(v, f)
    if not math.isfinite(t) or t < 0:
        raise ScenarioError(f, f"must not be negative, got {shown(v)}")
    return t


def _pos_time(v: Quantity, f: str) -> float:
    t = parse_time(v, f)
    if not math.isfinite(t) or t <= 0:
        raise ScenarioError(f, f"must be positive, got {shown(v)}")
    return t


def _pos_rate(v: Quantity, f: str) -> float:
    r = parse_rate(v, f)
    if not math.isfinite(r) or r <= 0:
        raise ScenarioError(f, f"must be a positive rate, got {shown(v)}")
    return r


def _bool(v: Any, f: str) -> bool:
    v = python_scalar(v)  # numpy.bool_ is a boolean too (a numpy integer is not)
    if isinstance(v, bool):
        return v
    raise ScenarioError(f, f"expected true or false, got {shown(v)}")


def _str(v: Any, f: str) -> str:
    if isinstance(v, str) and v:
        return check_text(v, f)
    raise ScenarioError(f, f"expected a non-empty string, got {shown(v)}")


def _choice(v: Any, choices: Sequence[str], f: str, what: str) -> str:
    if isinstance(v, str) and v.lower() in choices:
        return v.lower()
    s = _suggest(v, choices) if isinstance(v, str) else ""
    raise ScenarioError(f, f"unknown {what} {shown(v)}{s}; expected one of {', '.join(choices)}")


def _core():
    try:
        from . import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _core


@functools.lru_cache(maxsize=1)
def _catalog_cached() -> tuple[tuple[dict, ...], bool]:
    core = _core()
    if core is None:
        return tuple({"name": n, "aliases": [], "description": "", "params": None} for n in BUILTIN_ALGORITHMS), False
    return tuple(core.algorithms()), True


def algorithm_catalog() -> list[dict]:
    """The algorithms the core offers (``_core.algorithms()``), or a built-in
    fallback (``reno``, ``newreno``, parameters unknown) without the core."""
    return [dict(a) for a in _catalog_cached()[0]]


@functools.lru_cache(maxsize=1)
def _spellings() -> dict[str, tuple[str, dict]]:
    """Every name and alias of the catalog, lower-cased -> (name as spelled, entry)."""
    spelled: dict[str, tuple[str, dict]] = {}
    for entry in _catalog_cached()[0]:
        for n in [entry["name"], *entry.get("aliases", [])]:
            spelled.setdefault(n.lower(), (n, entry))
    return spelled


def resolve_algorithm(name: Any, field_path: str) -> tuple[str, dict | None]:
    """Check an algorithm name (case-insensitive, aliases allowed).

    Returns the name as the catalog spells it and the catalog entry
    (``None`` when parameters are unknown). Unknown names raise a
    ScenarioError listing close matches among names and aliases.
    """
    from_core = _catalog_cached()[1]
    if not isinstance(name, str) or not name:
        raise ScenarioError(field_path, f"expected an algorithm name, got {shown(name)}")
    spelled = _spellings()
    hit = spelled.get(name.lower())
    if hit is None:
        names = [v[0] for v in spelled.values()]
        matches = _close(name.lower(), list(spelled))
        hint = ""
        if matches:
            hint = " (did you mean " + " or ".join(repr(spelled[m][0]) for m in matches) + "?)"
        raise ScenarioError(field_path, f"unknown algorithm {shown(name)}{hint}; known: {', '.join(sorted(names))}")
    return hit[0], (hit[1] if from_core else None)


def _check_params(params: Any, entry: dict | None, algorithm: str, field_path: str) -> dict:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ScenarioError(field_path, f"expected a table of algorithm parameters, got {shown(params)}")
    out = {}
    known = None if entry is None or entry.get("params") is None else [p["name"] for p in entry["params"]]
    for k, v in params.items():
        if known is not None and k not in known:
            listing = ", ".join(known) if known else "none"
            raise ScenarioError(
                f"{field_path}.{k}",
                f"unknown parameter for {shown(algorithm)}{_suggest(k, known)}; its parameters: {listing}",
            )
        out[k] = _param_value(v, f"{field_path}.{k}")
    return out


def _param_value(v: Any, path: str) -> bool | int | float | str:
    """A parameter value the core can read: a finite number (an integer of
    at most 64 bits), a boolean or valid text; numpy scalars as Python's."""
    v = python_scalar(v)
    if isinstance(v, str):
        return check_text(v, path)
    if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**64:
        raise ScenarioError(path, f"an integer of {v.bit_length()} bits is beyond the core's 64-bit numbers")
    if not isinstance(v, (bool, int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        raise ScenarioError(path, f"expected a finite number, boolean or string, got {shown(v)}")
    return v


@functools.lru_cache(maxsize=1)
def _discipline_catalog_cached() -> tuple[tuple[dict, ...], bool]:
    core = _core()
    if core is None or not hasattr(core, "disciplines"):
        return tuple({"name": n, "aliases": [], "description": "", "params": None, "source": ""}
                     for n in BUILTIN_DISCIPLINES), False
    return tuple(core.disciplines()), True


def discipline_catalog() -> list[dict]:
    """The queue disciplines the core offers (``_core.disciplines()``: ``name``,
    ``aliases``, ``description``, ``source``, ``params``), or a built-in
    fallback (``droptail``, parameters unknown) without the core."""
    return [dict(d) for d in _discipline_catalog_cached()[0]]


def resolve_discipline(name: Any, field_path: str) -> tuple[str, dict | None]:
    """Check a discipline name (case-insensitive, aliases allowed): the
    catalog's name for it and its entry (``None`` when parameters are
    unknown). Unknown names raise a ScenarioError with close matches."""
    catalog, from_core = _discipline_catalog_cached()
    if not isinstance(name, str) or not name:
        raise ScenarioError(field_path, f"expected a queue discipline name, got {shown(name)}")
    spelled: dict[str, dict] = {}
    for entry in catalog:
        for n in [entry["name"], *entry.get("aliases", [])]:
            spelled.setdefault(n.lower(), entry)
    entry = spelled.get(name.lower())
    if entry is None:
        names = sorted({n for e in catalog for n in [e["name"], *e.get("aliases", [])]})
        raise ScenarioError(field_path, f"unknown queue discipline {shown(name)}{_suggest(name.lower(), list(spelled))}; "
                                        f"known: {', '.join(names)}")
    return entry["name"], (entry if from_core else None)


def _queue_spec(queue: Any, limit: Mapping[str, Any], path: str, limit_from: str | None) -> dict:
    """The core's ``QueueSpec``: ``limit`` (``limit_packets``/``limit_bytes``
    from the buffer) and, when ``queue`` is a table, its ``discipline`` and
    ``params`` (every other key, each checked against the discipline's
    parameters and converted by :func:`~tcplab.units.parse_param`: ``"5ms"``
    becomes 0.005 s). ``queue`` may also give ``limit_packets`` or
    ``limit_bytes`` itself, unless ``limit_from`` (the key that set the
    limit, e.g. ``"buffer"``) already did. A string is a discipline with its
    defaults (``"codel"``, handy in a sweep). Errors name ``path.<key>``."""
    out = dict(limit)
    if queue is None:
        return out
    if isinstance(queue, str):  # "codel": the discipline with its defaults
        out["discipline"] = resolve_discipline(queue, path)[0]
        out["params"] = {}
        return out
    if not isinstance(queue, Mapping):
        raise ScenarioError(path, f"expected a table such as {{discipline = 'codel', target = '5ms'}}, got {shown(queue)}")
    if "discipline" not in queue:
        raise ScenarioError(f"{path}.discipline", "missing (required): the queue discipline, e.g. 'droptail'; "
                            "known: " + ", ".join(d["name"] for d in discipline_catalog()))
    name, entry = resolve_discipline(queue["discipline"], f"{path}.discipline")
    known = None if entry is None or entry.get("params") is None else [p["name"] for p in entry["params"]]
    params: dict = {}
    for k, v in queue.items():
        if not isinstance(k, str):
            raise ScenarioError(path, f"keys must be strings, got {shown(k)}")
        if k == "discipline":
            continue
        fp = f"{path}.{k}"
        if k in QUEUE_LIMIT_KEYS:
            if limit_from is not None and any(out.get(x) is not None for x in QUEUE_LIMIT_KEYS):
                raise ScenarioError(fp, f"the limit is already set by {limit_from}; give it in one place")
            n = parse_count(v, fp) if k == "limit_packets" else parse_size(v, fp)
            if n < 1:
                raise ScenarioError(fp, f"must be at least 1, got {shown(v)}")
            out[k] = n
            continue
        if known is not None and k not in known:
            listing = ", ".join(known) if known else "none"
            raise ScenarioError(fp, f"unknown parameter for discipline {shown(name)}{_suggest(k, [*known, *QUEUE_KEYS])}; "
                                    f"its parameters: {listing} (and the limit: {', '.join(QUEUE_LIMIT_KEYS)})")
        params[k] = parse_param(v, fp)
    out["discipline"] = name
    out["params"] = params
    return out


def _queue_table(q: Mapping[str, Any]) -> dict | None:
    """A spec's ``QueueSpec`` back as a ``queue`` table (None without a discipline)."""
    if not q.get("discipline"):
        return None
    return {"discipline": q["discipline"], **dict(q.get("params") or {})}


def _source_spec(source: Any, path: str) -> dict | None:
    """A flow's unresponsive source as the core's ``app``: ``{"kind": "cbr",
    "rate": "10Mbps", "ecn": "ect1"}`` or ``{"kind": "on_off", "rate": ...,
    "on": "1s", "off": "2s", "exponential": True}``; None for a TCP flow."""
    if source is None:
        return None
    if not isinstance(source, Mapping):
        raise ScenarioError(path, f"expected a table such as {{kind = 'cbr', rate = '10Mbps'}}, got {shown(source)}")
    kind = source.get("kind")
    if kind is None:
        raise ScenarioError(f"{path}.kind", f"missing (required): one of {', '.join(SOURCE_KINDS)}")
    kind = _choice(kind, list(SOURCE_KINDS), f"{path}.kind", "source kind")
    _check_keys(source, ["kind", *SOURCE_KINDS[kind]], path)
    if "rate" not in source:
        raise ScenarioError(f"{path}.rate", "missing (required): the sending rate, e.g. '10Mbps'")
    app: dict = {"kind": kind, "rate_bps": _pos_rate(source["rate"], f"{path}.rate")}
    if kind == "on_off":
        for k in ("on", "off"):
            if k not in source:
                raise ScenarioError(f"{path}.{k}", f"missing (required): the mean {k} period, e.g. '1s'")
        app["on"] = _pos_time(source["on"], f"{path}.on")
        app["off"] = _nonneg_time(source["off"], f"{path}.off")
        app["exponential"] = _bool(source.get("exponential", True), f"{path}.exponential")
    app["ecn"] = _choice(source.get("ecn", "not_ect"), SOURCE_ECN, f"{path}.ecn", "ECN codepoint")
    return app


def _source_table(app: Mapping[str, Any]) -> dict | None:
    """A spec's ``app`` back as a ``source`` table (None for bulk or files)."""
    kind = app.get("kind")
    if kind not in SOURCE_KINDS:
        return None
    out = {"kind": kind, "rate": app["rate_bps"]}
    if kind == "on_off":
        out.update(on=app["on"], off=app["off"], exponential=app.get("exponential", True))
    if app.get("ecn", "not_ect") != "not_ect":
        out["ecn"] = app["ecn"]
    return out


# --------------------------------------------------------------------------
# building blocks


#: Largest packet on the wire (bytes), IP's; the core holds sizes in 16 bits.
MAX_PACKET_SIZE = 65535

#: Longest run (seconds): the core counts time in picoseconds and keeps a
#: segment's send time below three flag bits, so times stay under 2^61 ps.
MAX_DURATION = (2**61 - 1) / 1e12

#: Most flows of a Dumbbell: the core numbers links in 29 bits (at most
#: 2^29 links) and a dumbbell of N flows has 4N + 2 links.
MAX_DUMBBELL_FLOWS = (2**29 - 2) // 4

#: Memory one dumbbell flow takes while its run description is built:
#: its FlowSpec dict, four access-link dicts, two hosts, the lists of
#: per-flow values and its share of the JSON text handed to the core.
#: Measured with tracemalloc at the peak of building 20,000 bulk flows
#: (7.3 KB per flow), rounded up. Used to refuse, before allocating, a
#: flow count the process could not hold (:func:`_memory_budget`).
DUMBBELL_BYTES_PER_FLOW = 8_000


def _memory_budget() -> tuple[int | None, str]:
    """The bytes this process could ever allocate, and what sets it: the
    smaller of the machine's physical memory and the address-space limit
    (``ulimit -v``, RLIMIT_AS); (None, "") where neither is known."""
    budget: int | None = None
    what = ""
    try:
        budget = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        what = "this machine's physical memory"
    except (ValueError, OSError, AttributeError):  # not POSIX
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and (budget is None or soft < budget):
            budget, what = soft, "the process's address-space limit (ulimit -v)"
    except (ImportError, ValueError, OSError):
        pass
    return budget, what


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def _out_of_memory(field: str, count: int, what: str) -> ScenarioError:
    """The error for a scenario too large to build in this process."""
    return ScenarioError(field, f"{count:,} {what}: out of memory while building the run description "
                                f"(about {_gb(count * DUMBBELL_BYTES_PER_FLOW)} at {DUMBBELL_BYTES_PER_FLOW:,} B "
                                f"per flow); use fewer")


@dataclass
class Node:
    """A host (flows start and end there) or a router."""

    name: str
    kind: str = "host"

    def to_spec(self, path: str) -> dict:
        return {"name": _str(self.name, f"{path}.name"), "kind": _choice(self.kind, NODE_KINDS, f"{path}.kind", "node kind")}


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
            "rate_bps": _pos_rate(self.rate, f"{path}.rate"),
            "delay": _nonneg_time(self.delay, f"{path}.delay"),
            "queue": _queue_spec(self.queue, buf.resolve(field=f"{path}.buffer"), f"{path}.queue",
                                 None if self.buffer is None else f"{path}.buffer"),
            "loss": _loss_spec(self.loss, f"{path}.loss"),
        }


#: Random-loss models of a link's ``loss`` table: kind -> (required keys, optional keys).
LOSS_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bernoulli": (("p",), ()),
    "gilbert_elliott": (("p_gb", "p_bg"), ("loss_good", "loss_bad")),
}
LOSS_KINDS = tuple(LOSS_KEYS)


def _loss_spec(v: Any, path: str) -> dict | None:
    """A link's random loss: ``None`` (none), a probability ``p`` (Bernoulli),
    or a table ``{kind = "bernoulli", p = ...}`` /
    ``{kind = "gilbert_elliott", p_gb = ..., p_bg = ..., loss_good = 0, loss_bad = 1}``."""
    if v is None:
        return None
    v = python_scalar(v)
    if isinstance(v, bool):
        raise ScenarioError(path, f"expected a probability or a loss table, got {shown(v)}")
    if isinstance(v, (int, float)):
        v = {"kind": "bernoulli", "p": v}
    if not isinstance(v, Mapping):
        raise ScenarioError(path, f"expected a probability or a loss table, got {shown(v)}")
    kind = v.get("kind", "bernoulli")
    if kind not in LOSS_KINDS:
        raise ScenarioError(f"{path}.kind", f"must be one of {', '.join(LOSS_KINDS)}, got {shown(kind)}")
    required, optional = LOSS_KEYS[kind]
    _check_keys(v, ["kind", *required, *optional], path)
    out: dict = {"kind": kind}
    for k in required + optional:
        if k not in v:
            if k in required:
                raise ScenarioError(f"{path}.{k}", "missing (required)")
            continue
        x = python_scalar(v[k])
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not (0.0 <= x <= 1.0):
            raise ScenarioError(f"{path}.{k}", f"must be a probability in [0, 1], got {shown(x)}")
        out[k] = float(x)
    return out


@dataclass
class Route:
    """A static route: at ``node``, packets for ``dst`` leave on ``link``."""

    node: str
    dst: str
    link: str

    def to_spec(self, path: str) -> dict:
        return {"node": _str(self.node, f"{path}.node"), "dst": _str(self.dst, f"{path}.dst"), "link": _str(self.link, f"{path}.link")}


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
    as the papers do; :class:`Dumbbell` defaults to that), initial window 10,
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
            s = parse_size(size, f"{fp}.size")
            if s < 1:
                raise ScenarioError(f"{fp}.size", f"must be at least 1 byte, got {shown(size)}")
            out.append({"size": s, "start": _nonneg_time(start, f"{fp}.start")})
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
        packet_size = parse_size(self.packet_size, p("packet_size"))
        header_size = parse_size(self._resolved("header_size", path), p("header_size"))
        if header_size < 0:
            raise ScenarioError(p("header_size"), f"must not be negative, got {shown(header_size)}")
        if packet_size <= header_size:
            raise ScenarioError(p("packet_size"), f"must exceed header_size ({header_size} B), got {packet_size} B")
        ack_size = parse_size(self._resolved("ack_size", path), p("ack_size"))
        if ack_size < 1:
            raise ScenarioError(p("ack_size"), f"must be at least 1 byte, got {shown(ack_size)}")
        for name, v in (("packet_size", packet_size), ("ack_size", ack_size)):
            if v > MAX_PACKET_SIZE:
                raise ScenarioError(p(name), f"must be at most {MAX_PACKET_SIZE} B (IP's largest packet), got {v} B")
        init_cwnd = parse_number(self.init_cwnd, p("init_cwnd"))
        if not (math.isfinite(init_cwnd) and init_cwnd >= 1):
            raise ScenarioError(p("init_cwnd"), f"must be at least 1 segment, got {shown(self.init_cwnd)}")
        init_ssthresh = None
        if self.init_ssthresh is not None:
            init_ssthresh = parse_number(self.init_ssthresh, p("init_ssthresh"))
            if not (math.isfinite(init_ssthresh) and init_ssthresh >= 2):
                raise ScenarioError(p("init_ssthresh"), f"must be at least 2 segments, got {shown(self.init_ssthresh)}")
        rwnd = None
        if self.rwnd is not None:
            rwnd = parse_count(self.rwnd, p("rwnd"))
            if rwnd < 1:
                raise ScenarioError(p("rwnd"), f"must be at least 1 packet, got {shown(self.rwnd)}")
        dupthresh = parse_count(self.dupthresh, p("dupthresh"))
        if not 1 <= dupthresh <= 2**32 - 1:
            raise ScenarioError(p("dupthresh"), f"must be 1 to 4294967295 (the core holds it in 32 bits), "
                                                f"got {shown(self.dupthresh)}")
        sack_blocks = parse_count(self.sack_blocks, p("sack_blocks"))
        if not 1 <= sack_blocks <= 4:
            raise ScenarioError(p("sack_blocks"), f"must be 1 to 4 (RFC 2018), got {shown(self.sack_blocks)}")
        min_rto = _pos_time(self.min_rto, p("min_rto"))
        max_rto = _pos_time(self.max_rto, p("max_rto"))
        if max_rto < min_rto:
            raise ScenarioError(p("max_rto"), f"must be at least min_rto ({min_rto} s), got {max_rto} s")
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
            "start": _nonneg_time(self.start, p("start")),
            "packet_size": packet_size,
            "header_size": header_size,
            "ack_size": ack_size,
            "accounting": _choice(self.accounting, ACCOUNTINGS, p("accounting"), "accounting"),
            "init_cwnd": init_cwnd,
            "init_ssthresh": init_ssthresh,
            "rwnd_packets": rwnd,
            "min_rto": min_rto,
            "max_rto": max_rto,
            "rto_mode": _choice(self.rto_mode, RTO_MODES, p("rto_mode"), "rto_mode"),
            "init_rto": _pos_time(self.init_rto, p("init_rto")),
            "dupthresh": dupthresh,
            "dupack_guard": _choice(self.dupack_guard, DUPACK_GUARDS, p("dupack_guard"), "dupack_guard"),
            "limited_transmit": _bool(self.limited_transmit, p("limited_transmit")),
            "delayed_ack": _bool(self._resolved("delayed_ack", path), p("delayed_ack")),
            "delack_timeout": _pos_time(self.delack_timeout, p("delack_timeout")),
            "sack_blocks": sack_blocks,
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
            v = parse_number(getattr(self, name), p(name))
            if not (math.isfinite(v) and v > 0):
                raise ScenarioError(p(name), f"must be a positive percentage, got {shown(getattr(self, name))}")
            ratios[name] = v
        if _bool(self.pacing, p("pacing")):
            out["pacing"] = True
            out.update({k: v for k, v in ratios.items()})
        elif ratios != {"pacing_ss_ratio": PACING_SS_RATIO, "pacing_ca_ratio": PACING_CA_RATIO}:
            bad = next(k for k, v in ratios.items() if v != {"pacing_ss_ratio": PACING_SS_RATIO, "pacing_ca_ratio": PACING_CA_RATIO}[k])
            raise ScenarioError(p(bad), "applies only with pacing=True")
        return out

    def _ack_policy_spec(self, path: str) -> dict:
        """The receiver's ACK-policy keys, only where they differ from the
        defaults: specs of rfc flows (and their run keys) stay as before."""
        p = lambda s: f"{path}.{s}"  # noqa: E731
        policy = _choice(self._resolved("ack_policy", path), ACK_POLICIES, p("ack_policy"), "ack_policy")
        delack_min = _pos_time(self.delack_min, p("delack_min"))
        delack_max = _pos_time(self.delack_max, p("delack_max"))
        if delack_max < delack_min:
            raise ScenarioError(p("delack_max"), f"must be at least delack_min ({delack_min} s), got {delack_max} s")
        quickacks = parse_count(self.quickacks, p("quickacks"))
        if not 0 <= quickacks <= 2**32 - 1:
            raise ScenarioError(p("quickacks"), f"must be 0 to 4294967295, got {shown(self.quickacks)}")
        out: dict = {}
        if policy == "linux":
            out.update(ack_policy="linux", delack_min=delack_min, delack_max=delack_max, quickacks=quickacks)
        else:
            for name, v, d in (("delack_min", delack_min, LINUX_DELACK_MIN), ("delack_max", delack_max, LINUX_DELACK_MAX),
                               ("quickacks", quickacks, LINUX_QUICKACKS)):
                if v != d:
                    raise ScenarioError(p(name), "applies only with ack_policy='linux' "
                                        "(the rfc policy uses delayed_ack and delack_timeout)")
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
            raise ScenarioError(f"{path}.loss_classifier.kind", f"must name a classifier (e.g. 'knn'), got {shown(kind)}")
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
            raise ScenarioError(f"{path}.drop_segments", f"expected a list of segment numbers, got {shown(self.drop_segments)}")
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


# --------------------------------------------------------------------------
# scenarios


def _pcap_ip_length(flow: Mapping[str, Any]) -> int:
    """The IPv4 total length of a full data segment of ``flow`` (its spec)
    in a pcap file (tcplab.pcap): 40 header bytes, NOP padding up to the
    flow's ``header_size`` where that is 40 + a multiple of 4 up to 80, and
    the payload (ns2 accounting: the whole ``packet_size``)."""
    size, header = int(flow["packet_size"]), int(flow["header_size"])
    if flow["accounting"] == "ns2":
        return 40 + size
    pad = header - 40
    return 40 + (pad if 0 < pad <= 40 and pad % 4 == 0 else 0) + size - header


class Scenario:
    """A generic network scenario.

    ``nodes``, ``links``, ``routes`` and ``flows`` are lists of :class:`Node`,
    :class:`Link`, :class:`Route` and :class:`Flow` (dicts with the same keys
    are accepted). Run settings: ``duration``; ``measure_start`` *or*
    ``measure_window`` (a window at the end of the run; default: the whole
    run); ``sample_interval`` (default 0.1 s; 0 disables the time series);
    ``seed``. ``bottleneck`` optionally names the links reports and plots
    should highlight. ``trace_links`` names the links whose queue length is
    sampled (default ``None``: the core samples every link with a finite
    queue limit). ``loss_trace=True`` records every drop, loss and
    retransmission (the results' ``drop_trace`` and ``retransmit_trace``).
    ``pcap`` names links whose packets are captured (the results'
    ``packet_trace``, :meth:`Results.write_pcap`; ``"bottleneck"`` stands
    for the ``bottleneck`` links and their reverse direction), up to
    ``pcap_limit`` packets (default 5,000,000; docs/pcap.md).
    ``memory_limit`` (a size, e.g. ``"16GiB"``; default the core's 4 GiB)
    is the memory a run may be estimated to need before the core refuses it
    (docs/limits.md).
    Nothing is checked until :meth:`validate` or :meth:`to_spec`.
    """

    kind = "generic"

    def __init__(
        self,
        nodes: Sequence[Node | Mapping] = (),
        links: Sequence[Link | Mapping] = (),
        flows: Sequence[Flow | Mapping] = (),
        routes: Sequence[Route | Mapping] = (),
        *,
        duration: Quantity | None = None,
        measure_start: Quantity | None = None,
        measure_window: Quantity | None = None,
        sample_interval: Quantity = DEFAULT_SAMPLE_INTERVAL,
        seed: int = 0,
        name: str = "scenario",
        description: str | None = None,
        bottleneck: Sequence[str] | None = None,
        trace_links: Sequence[str] | None = None,
        loss_trace: bool = False,
        memory_limit: Quantity | None = None,
        pcap: Sequence[str] | None = None,
        pcap_limit: int | None = None,
    ) -> None:
        # (lists copied; anything else is kept as given for to_spec() to name)
        self.trace_links = list(trace_links) if isinstance(trace_links, (list, tuple)) else trace_links
        self.loss_trace = loss_trace
        self.pcap = list(pcap) if isinstance(pcap, (list, tuple)) else pcap
        self.pcap_limit = pcap_limit
        self.memory_limit = memory_limit
        self.nodes: list = list(nodes)
        self.links: list = list(links)
        self.flows: list = list(flows)
        self.routes: list = list(routes)
        self.duration = duration
        self.measure_start = measure_start
        self.measure_window = measure_window
        self.sample_interval = sample_interval
        self.seed = seed
        self.name = name
        self.description = description
        self.bottleneck = list(bottleneck) if isinstance(bottleneck, (list, tuple)) else bottleneck

    # -- building helpers ---------------------------------------------------
    def add_node(self, name: str, kind: str = "host") -> Node:
        n = Node(name, kind)
        self.nodes.append(n)
        return n

    def add_link(self, name: str, src: str, dst: str, rate: Quantity, delay: Quantity,
                 buffer: Quantity | Buffer | None = None, queue: Mapping[str, Any] | None = None) -> Link:
        ln = Link(name, src, dst, rate, delay, buffer, queue=queue)
        self.links.append(ln)
        return ln

    def add_duplex_link(self, a: str, b: str, rate: Quantity, delay: Quantity,
                        buffer: Quantity | Buffer | None = None,
                        reverse_buffer: Quantity | Buffer | None = None,
                        queue: Mapping[str, Any] | None = None,
                        reverse_queue: Mapping[str, Any] | None = None) -> tuple[Link, Link]:
        """Two links ``a-b`` and ``b-a`` with the same rate and delay."""
        return (self.add_link(f"{a}-{b}", a, b, rate, delay, buffer, queue),
                self.add_link(f"{b}-{a}", b, a, rate, delay, reverse_buffer, reverse_queue))

    def add_route(self, node: str, dst: str, link: str) -> Route:
        r = Route(node, dst, link)
        self.routes.append(r)
        return r

    def add_flow(self, flow: Flow | None = None, **kwargs: Any) -> Flow:
        f = flow if flow is not None else Flow(**kwargs)
        self.flows.append(f)
        return f

    # -- run settings -------------------------------------------------------
    def _default_measure_start(self, duration: float) -> float:
        return 0.0

    def _run_settings(self) -> dict:
        self._check_labels()
        if self.duration is None:
            raise ScenarioError("duration", "missing: how long to simulate (e.g. '100s')")
        duration = _pos_time(self.duration, "duration")
        if duration >= MAX_DURATION:
            raise ScenarioError(
                "duration", f"too long: simulated time is limited to 2^61 ps ({MAX_DURATION:.4e} s, about 26 days), got {duration:g} s"
            )
        if self.measure_start is not None and self.measure_window is not None:
            raise ScenarioError("measure_start", "give either measure_start or measure_window, not both")
        if self.measure_window is not None:
            w = _pos_time(self.measure_window, "measure_window")
            if w > duration * (1 + 1e-12):
                raise ScenarioError("measure_window", f"must not exceed the run duration ({duration:g} s), got {w:g} s")
            ms = max(0.0, duration - w)
        elif self.measure_start is not None:
            ms = _nonneg_time(self.measure_start, "measure_start")
            if ms >= duration:
                raise ScenarioError("measure_start", f"must be before the end of the run ({duration:g} s), got {ms:g} s")
        else:
            ms = self._default_measure_start(duration)
        si = _nonneg_time(self.sample_interval, "sample_interval")
        out = {"seed": self._seed(), "duration": duration, "measure_start": ms, "sample_interval": si}
        if _bool(self.loss_trace, "loss_trace"):  # absent when off, so the run's identity is as before
            out["loss_trace"] = True
        if self.memory_limit is not None:  # absent by default, so the run's identity is as before
            limit = parse_size(self.memory_limit, "memory_limit")
            if limit < 1:
                raise ScenarioError("memory_limit", f"must be a positive size, e.g. '16GiB', got {shown(self.memory_limit)}")
            out["memory_limit"] = limit
        return out

    def _check_labels(self) -> None:
        """``name`` and ``description`` are not part of the run, but they are
        saved with its results (scenario.toml): text, checked here rather
        than failing once the run is over."""
        _str(self.name, "name")
        if self.description is not None and not isinstance(self.description, str):
            raise ScenarioError("description", f"expected a string, got {shown(self.description)}")

    def _trace_links(self, links: list[dict]) -> list[str] | None:
        if self.trace_links is None:
            return None
        if isinstance(self.trace_links, str) or not isinstance(self.trace_links, Iterable):
            raise ScenarioError("trace_links", f"expected a list of link names, got {shown(self.trace_links)}")
        names = [ln["name"] for ln in links]
        out = []
        for i, t in enumerate(self.trace_links):
            if not isinstance(t, str) or t not in names:
                raise ScenarioError(f"trace_links[{i}]", f"unknown link {shown(t)}{_suggest(t, names) if isinstance(t, str) else ''}")
            out.append(t)
        return out

    def _pcap_groups(self, links: list[dict]) -> dict[str, list[str]]:
        """The pcap files and the links each holds: a link name itself,
        ``"bottleneck"`` each bottleneck link with its reverse direction. With
        several bottleneck links (in series, a packet crosses each), one file
        per link, ``bottleneck-<link>``, so no file holds a packet twice."""
        if self.pcap is None:
            return {}
        if isinstance(self.pcap, str) or not isinstance(self.pcap, Iterable):
            raise ScenarioError("pcap", f"expected a list of link names, got {shown(self.pcap)}")
        names = [ln["name"] for ln in links]
        ends = {(ln["src"], ln["dst"]): ln["name"] for ln in links}
        out: dict[str, list[str]] = {}
        for i, n in enumerate(self.pcap):
            if n == "bottleneck" and "bottleneck" not in names:
                if not self.bottleneck_links():
                    raise ScenarioError(f"pcap[{i}]", "\"bottleneck\": this scenario names no bottleneck links")
                per_link: dict[str, list[str]] = {}
                for b in dict.fromkeys(self.bottleneck_links()):
                    if any(b in g for g in per_link.values()):
                        continue  # the reverse of an earlier bottleneck link: already in its file
                    ln = links[names.index(b)]
                    per_link[b] = [b] + ([ends[(ln["dst"], ln["src"])]] if (ln["dst"], ln["src"]) in ends else [])
                if len(per_link) == 1:
                    out[n] = next(iter(per_link.values()))
                else:
                    out.update({f"bottleneck-{b}": g for b, g in per_link.items()})
            elif isinstance(n, str) and n in names:
                out[n] = [n]
            else:
                raise ScenarioError(f"pcap[{i}]", f"unknown link {shown(n)}{_suggest(n, names) if isinstance(n, str) else ''}; "
                                    "give link names or \"bottleneck\"")
        return out

    def pcap_groups(self) -> dict[str, list[str]]:
        """The pcap files ``tcplab run`` writes and the links each holds, in
        order: one per entry of ``pcap``, except that ``"bottleneck"`` with
        several bottleneck links gives one file per link
        (``bottleneck-r1-r2``: that link and its reverse), so that no file
        holds the same packet twice (docs/pcap.md)."""
        return self._pcap_groups(self.to_spec()["links"])

    def _capture(self, links: list[dict], flows: list[dict]) -> dict:
        """The run description's ``pcap`` (every captured link once) and
        ``pcap_limit``; empty when nothing is captured."""
        groups = self._pcap_groups(links)
        if not groups:
            if self.pcap_limit is not None:
                raise ScenarioError("pcap_limit", "given without pcap (the links to capture)")
            return {}
        for i, f in enumerate(flows):
            n = _pcap_ip_length(f)
            if n > 65535:
                raise ScenarioError("pcap", f"flow {f['name']!r} (flows[{i}]): its {f['packet_size']:,}-byte packets "
                                    f"are {n:,}-byte IPv4 packets in the capture (accounting = {f['accounting']!r}); "
                                    f"IPv4 carries at most 65,535 bytes: make packet_size at most "
                                    f"{f['packet_size'] - (n - 65535):,} or capture no link")
        spec: dict = {"pcap": list(dict.fromkeys(n for g in groups.values() for n in g))}
        if self.pcap_limit is not None:
            lim = python_scalar(self.pcap_limit)
            if isinstance(lim, bool) or not isinstance(lim, int) or lim < 1:
                raise ScenarioError("pcap_limit", f"expected a positive whole number of packets, got {shown(self.pcap_limit)}")
            spec["pcap_limit"] = lim
        return spec

    def _seed(self) -> int:
        seed = python_scalar(self.seed)
        if isinstance(seed, bool) or not isinstance(seed, int):
            try:
                seed = parse_count(seed, "seed")
            except ScenarioError:
                raise ScenarioError("seed", f"expected a non-negative integer, got {shown(self.seed)}") from None
        if not 0 <= seed < 2**64:
            raise ScenarioError("seed", f"expected a non-negative 64-bit integer, got {shown(self.seed)}")
        return int(seed)

    # -- topology -----------------------------------------------------------
    def _parts(self) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
        nodes = [_coerce(n, Node, f"nodes[{i}]").to_spec(f"nodes[{i}]") for i, n in enumerate(self.nodes)]
        links = [_coerce(ln, Link, f"links[{i}]").to_spec(f"links[{i}]") for i, ln in enumerate(self.links)]
        routes = [_coerce(r, Route, f"routes[{i}]").to_spec(f"routes[{i}]") for i, r in enumerate(self.routes)]
        flows = [_coerce(f, Flow, f"flows[{i}]").to_spec(f"flows[{i}]", f"flow{i + 1}") for i, f in enumerate(self.flows)]
        return nodes, links, routes, flows

    @staticmethod
    def _check_references(nodes: list[dict], links: list[dict], routes: list[dict], flows: list[dict]) -> None:
        kinds: dict[str, str] = {}
        for i, n in enumerate(nodes):
            if n["name"] in kinds:
                raise ScenarioError(f"nodes[{i}].name", f"duplicate node name {shown(n['name'])}")
            kinds[n["name"]] = n["kind"]

        def node_ref(name: str, path: str) -> None:
            if name not in kinds:
                raise ScenarioError(path, f"unknown node {shown(name)}{_suggest(name, kinds)}")

        seen: set[str] = set()
        for i, ln in enumerate(links):
            if ln["name"] in seen:
                raise ScenarioError(f"links[{i}].name", f"duplicate link name {shown(ln['name'])}")
            seen.add(ln["name"])
            node_ref(ln["src"], f"links[{i}].src")
            node_ref(ln["dst"], f"links[{i}].dst")
            if ln["src"] == ln["dst"]:
                raise ScenarioError(f"links[{i}].dst", "a link must join two different nodes")
        for i, r in enumerate(routes):
            node_ref(r["node"], f"routes[{i}].node")
            node_ref(r["dst"], f"routes[{i}].dst")
            if r["link"] not in seen:
                raise ScenarioError(f"routes[{i}].link", f"unknown link {shown(r['link'])}{_suggest(r['link'], seen)}")
        names: set[str] = set()
        if not flows:
            raise ScenarioError("flows", "no flows: nothing to simulate")
        for i, f in enumerate(flows):
            if f["name"] in names:
                raise ScenarioError(f"flows[{i}].name", f"duplicate flow name {shown(f['name'])}")
            names.add(f["name"])
            for end in ("src", "dst"):
                node_ref(f[end], f"flows[{i}].{end}")
                if kinds[f[end]] != "host":
                    raise ScenarioError(f"flows[{i}].{end}", f"{shown(f[end])} is a router; flows start and end at hosts")
            if f["src"] == f["dst"]:
                raise ScenarioError(f"flows[{i}].dst", "must differ from src")

    def to_spec(self) -> dict:
        """Validate and return the core's ``RunSpec`` as a JSON-ready dict."""
        run = self._run_settings()
        try:
            nodes, links, routes, flows = self._parts()
            self._check_references(nodes, links, routes, flows)
            trace = self._trace_links(links)
        except MemoryError:
            raise _out_of_memory("flows", len(self.flows), "flows") from None
        return {**run, "nodes": nodes, "links": links, "routes": routes, "flows": flows, "trace_links": trace,
                **self._capture(links, flows)}

    def validate(self) -> None:
        """Check the scenario; raises :class:`ScenarioError` naming the field."""
        self.to_spec()

    def _first_spec(self) -> dict:
        """``to_spec()``, or the spec built when the scenario was constructed, handed out once (for code
        that builds a scenario and takes its spec at once: it is not stale, nothing ran in between)."""
        spec = self.__dict__.pop("_fresh_spec", None)
        return spec if spec is not None else self.to_spec()

    def to_json(self, indent: int | None = None) -> str:
        import json

        return json.dumps(self.to_spec(), indent=indent)

    def bottleneck_links(self) -> list[str]:
        """Link names to highlight in reports (``bottleneck`` or empty)."""
        return list(self.bottleneck or [])

    # -- TOML ---------------------------------------------------------------
    def _run_table(self) -> dict:
        run: dict = {}
        if self.duration is not None:
            run["duration"] = self.duration
        if self.measure_start is not None:
            run["measure_start"] = self.measure_start
        if self.measure_window is not None:
            run["measure_window"] = self.measure_window
        run["sample_interval"] = self.sample_interval
        run["seed"] = self.seed
        if self.trace_links is not None:
            run["trace_links"] = list(self.trace_links)
        if self.loss_trace:
            run["loss_trace"] = True
        if self.memory_limit is not None:
            run["memory_limit"] = self.memory_limit
        if self.pcap:
            run["pcap"] = list(self.pcap)
        if self.pcap_limit is not None:
            run["pcap_limit"] = self.pcap_limit
        return run

    def to_toml_dict(self) -> dict:
        """The scenario as the dict a scenario file holds (see module doc)."""
        doc: dict = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        if self.bottleneck:
            doc["bottleneck"] = list(self.bottleneck)
        doc["run"] = self._run_table()
        doc["nodes"] = [_dataclass_table(_coerce(n, Node, f"nodes[{i}]")) for i, n in enumerate(self.nodes)]
        doc["links"] = [_dataclass_table(_coerce(x, Link, f"links[{i}]")) for i, x in enumerate(self.links)]
        if self.routes:
            doc["routes"] = [_dataclass_table(_coerce(x, Route, f"routes[{i}]")) for i, x in enumerate(self.routes)]
        doc["flows"] = [_dataclass_table(_coerce(x, Flow, f"flows[{i}]"), skip_defaults=True)
                        for i, x in enumerate(self.flows)]
        for f in doc["flows"]:
            if f.get("files") is not None:
                f["files"] = [{"size": x[0], "start": x[1]} if isinstance(x, (tuple, list)) and len(x) == 2 else x
                              for x in f["files"]]
        return _tomlable(doc)

    def to_toml(self) -> str:
        """The scenario as TOML text; :func:`load_scenario` reads it back."""
        import tomli_w

        return tomli_w.dumps(self.to_toml_dict())

    def save_toml(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_toml())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {shown(self.name)}>"


def _dataclass_table(obj: Any, skip_defaults: bool = False) -> dict:
    out = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        if v is None:
            continue
        if skip_defaults and f.name not in ("src", "dst", "name"):
            if f.default is not MISSING and v == f.default and type(v) is type(f.default):
                continue
            if f.default_factory is not MISSING and v == f.default_factory():
                continue
        out[f.name] = v
    return out


def _buffer_text(b: Buffer) -> str:
    if b.bdp is not None:
        return f"{b.bdp:.12g}BDP"
    if b.packets is not None:
        return f"{b.packets}p"
    if b.bytes is not None:
        return f"{b.bytes}B"
    return "unlimited"


def _tomlable(v: Any) -> Any:
    """Make a value writable by tomli_w: drop None, numpy scalars -> Python."""
    if isinstance(v, Buffer):
        return _buffer_text(v)
    if isinstance(v, File):
        return {"size": _tomlable(v.size), "start": _tomlable(v.start)}
    if isinstance(v, Mapping):
        return {str(k): _tomlable(x) for k, x in v.items() if x is not None}
    if isinstance(v, (list, tuple)):
        return [_tomlable(x) for x in v]
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if hasattr(v, "item") and not isinstance(v, (str, bytes, bool, int, float)):
        return v.item()
    return v


# --------------------------------------------------------------------------
# the dumbbell


_DUMBBELL_DEFAULTS: dict[str, Any] = {
    "loss": None,
    "reverse_loss": None,
    "algorithm": "newreno",
    "params": None,
    "recovery": None,
    "start": 0.0,
    "access_rate": None,
    "access_delay": "spread",
    "access_jitter": 0.0,
    "packet_size": 1500,
    "header_size": None,
    "ack_size": None,
    "accounting": "ns2",
    "flow_options": None,
    "queue": None,
    "reverse_queue": None,
    "source": None,
}
DUMBBELL_KEYS = ["n_flows", "bottleneck_rate", "rtt", "buffer", *_DUMBBELL_DEFAULTS]
#: Flow keywords that ``flow_options`` may set (the rest are Dumbbell keys).
FLOW_OPTION_KEYS = [k for k in FLOW_KEYS if k not in
                    ("src", "dst", "name", "algorithm", "params", "recovery", "start",
                     "packet_size", "header_size", "ack_size", "accounting", "source")]
RUN_KEYS = ["duration", "measure_window", "measure_start", "sample_interval", "seed", "trace_links", "loss_trace",
            "memory_limit", "pcap", "pcap_limit"]


class Dumbbell(Scenario):
    """The single-bottleneck dumbbell of mv-highspeed (Fig. 1) and mv-buffers.

    Topology (node names in brackets)::

        s1 ─┐                                   ┌─ d1
        s2 ─┤── [r1] ══ bottleneck C ══ [r2] ───┤─ d2
        sN ─┘                                   └─ dN

    * Senders ``s1..sN`` each have their own access link to router ``r1``
      (links ``s<i>-r1`` and ``r1-s<i>``); receivers ``d1..dN`` each have
      their own to ``r2`` (``r2-d<i>``, ``d<i>-r2``). Access links run at
      ``access_rate``, default 10 x ``bottleneck_rate``, at most the core's 8 Tbit/s (faster than C, so C is
      the only bottleneck).
    * ``loss`` / ``reverse_loss``: random loss on the bottleneck's data
      (``r1-r2``) and ACK (``r2-r1``) directions: a probability (Bernoulli)
      or a table ``{kind = "gilbert_elliott", p_gb, p_bg, loss_good, loss_bad}``;
      counted as link ``losses`` and flow ``data_packets_lost`` /
      ``acks_lost``, apart from queue drops.
    * The bottleneck is the pair ``r1-r2`` (data) and ``r2-r1`` (ACKs), both of
      capacity C with one-way propagation delay ``rtt / 2``: ``rtt`` is the
      bottleneck's round-trip propagation delay, as in the papers.
    * Access-link one-way delays (``access_delay``):

      - ``"spread"`` (mv-highspeed): sender i's and receiver i's access links
        both have ``2.5 * i / N`` ms, i = 1..N. With one flow both are 2.5 ms
        and the end-to-end round-trip propagation delay is ``rtt`` + 10 ms.
      - ``"uniform"`` (mv-buffers): every access link's delay is drawn
        independently, uniform in (0, 10 ms), from
        ``numpy.random.default_rng(seed).uniform(0, 0.01, size=(2, N))``:
        row 0 for senders s1..sN, row 1 for receivers d1..dN. The same seed
        gives the same delays.
      - one time (e.g. ``"2.5ms"``) for every access link, or a list of N
        times, entry i used for both sender i and receiver i.

    * ``access_jitter`` (a time, default 0: none): sender i's access links
      (``s<i>-r1`` and ``r1-s<i>``) get ``access_delay``'s delay plus an
      offset drawn uniform in [0, ``access_jitter``) from
      ``numpy.random.default_rng([seed, 1]).uniform(0, access_jitter, size=N)``
      (a stream apart from ``"uniform"``'s). It breaks the phase lock of a
      deterministic dumbbell (:mod:`tcplab.phaselock`): an offset of a
      fraction of a packet's transmission time on the bottleneck already
      moves the flows' relative phase, so each seed shows another phase,
      while each round-trip time grows by less than 2 x ``access_jitter``.
      The paper reproductions use 0.25 ms in their multi-flow runs
      (docs/experiments/mv-highspeed.md, "Seeds and phase effects", has the
      measurement). With 0 (the default) the delays are exactly
      ``access_delay``'s.

    * Drop-tail buffer ``buffer`` at r1 on ``r1-r2``: packets (``100``,
      ``"100p"``), bytes (``"150KB"``) or a fraction of the BDP (``"0.1BDP"``)
      where BDP = C x ``rtt`` / (8 x ``packet_size``) packets, rounded to
      nearest, at least 1 (200 Mbit/s x 100 ms / 12000 bit = 1667). Every other
      queue (``r2-r1`` and all access links) is unlimited, so it never drops.
    * Flow i (``flow<i>``) runs from ``s<i>`` to ``d<i>``, long-lived (bulk),
      starting at ``start`` (one time or a list). ``algorithm``, ``params``
      and ``recovery`` take one value for all flows or a list with one per
      flow. Other :class:`Flow` options go in ``flow_options``.
    * Paper conventions by default: 1500-byte packets with 40-byte headers,
      40-byte ACKs, ``ns2`` accounting (a 1500-byte packet counts 1500 bytes of
      goodput), NewReno loss recovery, 2000 s runs measured over the last half.
      ``flow_options={"profile": "linux"}`` models Linux 6.x instead (SACK,
      52-byte headers and ACKs, PRR, RACK-TLP, delayed ACKs) for the options
      left unset (``recovery``, ``header_size``, ``ack_size`` included).
    * ``loss_trace=True`` records every drop, loss and retransmission (the
      results' ``drop_trace`` and ``retransmit_trace``), for diagnosing
      loss recovery.
    * ``pcap=["bottleneck"]`` captures the packets on ``r1-r2`` and
      ``r2-r1`` (or name links: ``pcap=["r1-r2"]``) for
      :meth:`Results.write_pcap`, a file Wireshark opens (docs/pcap.md).
    * ``queue`` / ``reverse_queue``: the queue discipline of ``r1-r2`` /
      ``r2-r1``, a table ``{"discipline": "codel", "target": "5ms"}`` as
      :class:`Link`'s ``queue``. ``buffer`` stays the bottleneck's limit
      (``buffer=None``: the discipline's own default, or ``limit_packets``
      in the table); ``r2-r1`` has no limit unless ``reverse_queue`` gives
      one. Default: the fast drop-tail FIFO on both.
    * ``source``: unresponsive sources instead of TCP (:class:`Flow`'s
      ``source``): one table for every flow, or a list with one entry per
      flow, ``"tcp"`` (or None) for a TCP flow: ``source=[None, {"kind":
      "cbr", "rate": "5Mbps"}]`` runs a TCP flow against a CBR one.
    """

    kind = "dumbbell"

    def __init__(
        self,
        n_flows: int,
        bottleneck_rate: Quantity,
        rtt: Quantity,
        buffer: Quantity | Buffer | None,
        algorithm: str | Sequence[str] = "newreno",
        params: Mapping | Sequence[Mapping] | None = None,
        recovery: str | Sequence[str] | None = None,
        *,
        duration: Quantity = "2000s",
        measure_window: Quantity | None = None,
        measure_start: Quantity | None = None,
        start: Quantity | Sequence[Quantity] = 0.0,
        access_rate: Quantity | None = None,
        access_delay: str | Quantity | Sequence[Quantity] = "spread",
        access_jitter: Quantity = 0.0,
        packet_size: Quantity = 1500,
        header_size: Quantity | None = None,
        ack_size: Quantity | None = None,
        accounting: str = "ns2",
        flow_options: Mapping[str, Any] | None = None,
        seed: int = 0,
        sample_interval: Quantity = DEFAULT_SAMPLE_INTERVAL,
        trace_links: Sequence[str] | None = None,
        loss_trace: bool = False,
        memory_limit: Quantity | None = None,
        pcap: Sequence[str] | None = None,
        pcap_limit: int | None = None,
        loss: Any = None,
        reverse_loss: Any = None,
        queue: Mapping[str, Any] | None = None,
        reverse_queue: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | Sequence[Mapping[str, Any] | str | None] | None = None,
        name: str = "dumbbell",
        description: str | None = None,
    ) -> None:
        super().__init__(duration=duration, measure_start=measure_start, measure_window=measure_window,
                         sample_interval=sample_interval, seed=seed, name=name, description=description,
                         trace_links=trace_links, loss_trace=loss_trace, memory_limit=memory_limit,
                         pcap=pcap, pcap_limit=pcap_limit)
        self.n_flows = n_flows
        self.bottleneck_rate = bottleneck_rate
        self.rtt = rtt
        self.buffer = buffer
        self.algorithm = algorithm
        self.params = params
        self.recovery = recovery
        self.start = start
        self.access_rate = access_rate
        self.access_delay = access_delay
        self.access_jitter = access_jitter
        self.packet_size = packet_size
        self.header_size = header_size
        self.ack_size = ack_size
        self.accounting = accounting
        self.flow_options = dict(flow_options) if isinstance(flow_options, Mapping) else flow_options
        self.loss = loss
        self.reverse_loss = reverse_loss
        self.queue = dict(queue) if isinstance(queue, Mapping) else queue
        self.reverse_queue = dict(reverse_queue) if isinstance(reverse_queue, Mapping) else reverse_queue
        self.source = source
        # Fail fast: a Dumbbell is complete once constructed. (The spec built to check it is kept for
        # one taker, _first_spec(): a sweep expanding its points builds each scenario once, not twice.)
        self._fresh_spec: dict | None = self.to_spec()

    # Generic lists are derived from the builder parameters (read-only views).
    nodes = property(lambda self: [Node(**n) for n in self._build()[0]])  # type: ignore[assignment]
    links = property(lambda self: [Link(l["name"], l["src"], l["dst"], l["rate_bps"], l["delay"],  # type: ignore[assignment]
                                        _queue_buffer(l["queue"]), l.get("loss"), _queue_table(l["queue"]))
                                   for l in self._build()[1]])
    routes = property(lambda self: [])  # type: ignore[assignment]

    @nodes.setter  # type: ignore[no-redef]
    def nodes(self, v: Any) -> None:
        if list(v):
            raise AttributeError("a Dumbbell's nodes are derived from its parameters; use to_generic()")

    @links.setter  # type: ignore[no-redef]
    def links(self, v: Any) -> None:
        if list(v):
            raise AttributeError("a Dumbbell's links are derived from its parameters; use to_generic()")

    @routes.setter  # type: ignore[no-redef]
    def routes(self, v: Any) -> None:
        if list(v):
            raise AttributeError("a Dumbbell has no explicit routes")

    @property  # type: ignore[no-redef]
    def flows(self) -> list:  # type: ignore[override]
        return self._flows_built()

    @flows.setter
    def flows(self, v: Any) -> None:
        if list(v):
            raise AttributeError("a Dumbbell's flows are derived from its parameters; use to_generic()")

    def _default_measure_start(self, duration: float) -> float:
        return duration / 2.0

    # -- parameter resolution ------------------------------------------------
    def _n(self) -> int:
        n = python_scalar(self.n_flows)  # numpy.int64(2) is 2
        if isinstance(n, bool) or not isinstance(n, (int, float, str)):
            raise ScenarioError("n_flows", f"expected a positive integer, got {shown(n)}")
        n = parse_count(n, "n_flows")
        if n < 1:
            raise ScenarioError("n_flows", f"must be at least 1, got {shown(self.n_flows)}")
        if n > MAX_DUMBBELL_FLOWS:
            raise ScenarioError("n_flows", f"at most {MAX_DUMBBELL_FLOWS:,} flows: the core numbers links in 29 bits "
                                           f"and a dumbbell of N flows has 4N + 2 links; got {n:,}")
        return n

    def _per_flow(self, value: Any, key: str) -> list:
        n = self._n()
        if isinstance(value, (list, tuple)):
            if len(value) != n:
                raise ScenarioError(key, f"expected one value for all flows or a list of {n} (one per flow), got {len(value)}")
            return list(value)
        return [value] * n

    @property
    def capacity_bps(self) -> float:
        """Bottleneck capacity C in bit/s."""
        return _pos_rate(self.bottleneck_rate, "bottleneck_rate")

    @property
    def rtt_s(self) -> float:
        """Bottleneck round-trip propagation delay in seconds."""
        return _pos_time(self.rtt, "rtt")

    @property
    def packet_bytes(self) -> int:
        """``packet_size`` in bytes: 1 to 65535 (IP's largest packet); the
        BDP buffer is counted in packets of this size."""
        size = parse_size(self.packet_size, "packet_size")
        if size < 1:
            raise ScenarioError("packet_size", f"must be at least 1 byte (a BDP buffer is counted in packets "
                                               f"of this size), got {shown(self.packet_size)}")
        if size > MAX_PACKET_SIZE:
            raise ScenarioError("packet_size", f"must be at most {MAX_PACKET_SIZE} B (IP's largest packet), "
                                               f"got {size} B")
        return size

    @property
    def bdp_packets(self) -> int:
        """C x RTT in packets of ``packet_size`` (rounded to nearest, >= 1)."""
        return bdp_packets(self.capacity_bps, self.rtt_s, self.packet_bytes)

    @property
    def buffer_limit(self) -> dict:
        """The bottleneck's QueueSpec dict (``limit_packets``/``limit_bytes``)."""
        return parse_buffer(self.buffer, "buffer").resolve(self.capacity_bps, self.rtt_s, self.packet_bytes, "buffer")

    @property
    def buffer_packets(self) -> float | None:
        """The bottleneck buffer in packets (bytes / packet_size for a byte limit); None if unlimited."""
        return parse_buffer(self.buffer, "buffer").packets_for(self.capacity_bps, self.rtt_s, self.packet_bytes)

    @property
    def access_rate_bps(self) -> float:
        if self.access_rate is None:
            return max(self.capacity_bps, min(ACCESS_RATE_FACTOR * self.capacity_bps, MAX_RATE_BPS))
        return _pos_rate(self.access_rate, "access_rate")

    @property
    def access_jitter_s(self) -> float:
        """``access_jitter`` in seconds (0: none)."""
        return _nonneg_time(self.access_jitter, "access_jitter")

    def access_jitters(self) -> list[float]:
        """Per flow i (0-based): the offset added to sender i's access delay, seconds, drawn uniform
        in [0, ``access_jitter``) from ``default_rng([seed, ACCESS_JITTER_STREAM])``; all 0 without jitter."""
        n = self._n()
        jitter = self.access_jitter_s
        if jitter == 0:
            return [0.0] * n
        import numpy as np

        d = np.random.default_rng([self._seed(), ACCESS_JITTER_STREAM]).uniform(0.0, jitter, size=n)
        return [float(x) for x in d]

    @property
    def access_delays(self) -> list[tuple[float, float]]:
        """Per flow i (0-based): (sender access delay, receiver access delay), seconds; the sender's
        includes its ``access_jitter`` offset."""
        base = self._base_access_delays()
        if self.access_jitter_s == 0:
            return base
        return [(s + j, r) for (s, r), j in zip(base, self.access_jitters())]

    def _base_access_delays(self) -> list[tuple[float, float]]:
        """``access_delay``'s delays, before the jitter."""
        n = self._n()
        ad = self.access_delay
        if isinstance(ad, str) and ad.strip().lower() == "spread":
            return [(2.5e-3 * i / n, 2.5e-3 * i / n) for i in range(1, n + 1)]
        if isinstance(ad, str) and ad.strip().lower() == "uniform":
            import numpy as np

            seed = self._seed()
            d = np.random.default_rng(seed).uniform(0.0, UNIFORM_ACCESS_DELAY_MAX, size=(2, n))
            return [(float(d[0, i]), float(d[1, i])) for i in range(n)]
        if isinstance(ad, (list, tuple)):
            vals = self._per_flow(ad, "access_delay")
            out = [_nonneg_time(v, f"access_delay[{i}]") for i, v in enumerate(vals)]
            return [(v, v) for v in out]
        try:
            v = _nonneg_time(ad, "access_delay")
        except UnitError:
            raise UnitError("access_delay", f"expected 'spread', 'uniform', a time such as '2.5ms' "
                                            f"or a list of {n} times, got {shown(ad)}") from None
        return [(v, v)] * n

    def path_rtt(self, i: int) -> float:
        """Round-trip propagation delay of flow i (0-based): rtt + 2 x both access delays."""
        a, b = self.access_delays[i]
        return self.rtt_s + 2 * (a + b)

    def bottleneck_links(self) -> list[str]:
        return ["r1-r2"]

    def key_of(self, core_field: str, spec: Mapping[str, Any]) -> str | None:
        """The dumbbell key behind a field of its run description, as the core names it in an error
        (``links[0].rate_bps`` -> ``bottleneck_rate``, ``flows[2].cc.params.beta`` -> ``params.beta``,
        ``flows[0].dupthresh`` -> ``flow_options.dupthresh``); None if there is none."""
        m = re.match(r"^(links|flows)\[(\d+)\]\.?([A-Za-z_]*)(.*)$", core_field)
        if not m:
            return None
        kind, i, head, rest = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        items = spec.get(kind) or []
        if i >= len(items):
            return None
        if kind == "flows":
            if head == "cc":  # cc.params.X -> params.X; cc.algorithm -> algorithm
                return rest.lstrip(".") or "algorithm"
            if head == "app":  # files are a flow option; cbr and on_off come from `source`
                kind = (items[i].get("app") or {}).get("kind")
                return f"flow_options{rest}" if kind == "files" and rest.startswith(".files") else "source"
            if head in ("recovery", "start", "packet_size", "header_size", "ack_size"):
                return head
            head = {"rwnd_packets": "rwnd"}.get(head, head)  # (the one option whose core name differs)
            return f"flow_options.{head}{rest}" if head else None
        name = items[i].get("name", "")
        side = {"r1-r2": "", "r2-r1": "reverse_"}.get(name)
        if side is None:  # an access link
            return {"rate_bps": "access_rate", "delay": "access_delay"}.get(head)
        if head == "queue":
            limit = rest.lstrip(".") in ("limit_packets", "limit_bytes")
            return "buffer" if limit and not side else f"{side}queue{'' if limit else rest.replace('.params', '', 1)}"
        return {"rate_bps": "bottleneck_rate", "delay": "rtt", "loss": f"{side}loss"}.get(head)

    def _flow(self, i: int) -> Flow:
        """Flow i (0-based). For all flows use :meth:`_flows_built`, which
        resolves the per-flow lists once (this resolves them for one flow)."""
        return self._flows_built(only=i)[0]

    def _flow_options(self) -> Mapping[str, Any]:
        """``flow_options``, checked: only Flow keys the dumbbell leaves to it."""
        opts = self.flow_options or {}
        if not isinstance(opts, Mapping):
            raise ScenarioError("flow_options", f"expected a table of Flow options, got {shown(opts)}")
        for k in opts:
            if k not in FLOW_OPTION_KEYS:
                if k in FLOW_KEYS:
                    raise ScenarioError(f"flow_options.{k}", "set by the dumbbell itself" + (
                        f"; use the dumbbell key {shown(k)}" if k in DUMBBELL_KEYS else ""))
                raise ScenarioError(f"flow_options.{k}", f"unknown Flow option{_suggest(k, FLOW_OPTION_KEYS)}")
        return opts

    def _flows_built(self, only: int | None = None) -> list[Flow]:
        """Every flow (or flow ``only``) as a :class:`Flow`.

        The per-flow lists (algorithm, recovery, start, params, source) are
        resolved once here, not once per flow: building N flows is O(N)
        (it was O(N^2) when each flow re-expanded every list, 18 s for
        20,000 flows)."""
        n = self._n()
        algos = self._per_flow(self.algorithm, "algorithm")
        recs = self._per_flow(self.recovery, "recovery")
        starts = self._per_flow(self.start, "start")
        if self.params is None or isinstance(self.params, Mapping):
            params = [dict(self.params or {})] * n
        else:
            params = self._per_flow(self.params, "params")
        sources = [None if x is None or (isinstance(x, str) and x.lower() == "tcp") else x
                   for x in self._per_flow(self.source, "source")]
        opts = self._flow_options()
        indices = range(n) if only is None else [only]
        return [Flow(src=f"s{i + 1}", dst=f"d{i + 1}", name=f"flow{i + 1}",
                     algorithm=algos[i], params=params[i] if params[i] is not None else {}, recovery=recs[i],
                     start=starts[i], packet_size=self.packet_size, header_size=self.header_size,
                     ack_size=self.ack_size, accounting=self.accounting, source=sources[i], **opts)
                for i in indices]

    def _check_memory(self, n: int) -> None:
        """Refuse, before allocating anything, a flow count whose run
        description cannot fit in this process's memory."""
        need = n * DUMBBELL_BYTES_PER_FLOW
        budget, what = _memory_budget()
        if budget is not None and need > budget:
            raise ScenarioError("n_flows", f"{n:,} flows need about {_gb(need)} to build the run description "
                                           f"({DUMBBELL_BYTES_PER_FLOW:,} B per flow), more than {what} "
                                           f"({_gb(budget)}); use fewer flows")

    def _build(self) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
        n = self._n()
        self._check_memory(n)
        c = self.capacity_bps
        rtt = self.rtt_s
        queue = _queue_spec(self.queue, self.buffer_limit, "queue", "buffer")
        reverse_queue = _queue_spec(self.reverse_queue, UNLIMITED_QUEUE, "reverse_queue", None)
        acc = self.access_rate_bps
        delays = self.access_delays
        nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
        nodes += [{"name": f"s{i}", "kind": "host"} for i in range(1, n + 1)]
        nodes += [{"name": f"d{i}", "kind": "host"} for i in range(1, n + 1)]

        def link(name: str, src: str, dst: str, rate: float, delay: float, q: dict, loss: dict | None = None) -> dict:
            return {"name": name, "src": src, "dst": dst, "rate_bps": rate, "delay": delay, "queue": dict(q),
                    "loss": loss}

        links = [link("r1-r2", "r1", "r2", c, rtt / 2, queue, _loss_spec(self.loss, "loss")),
                 link("r2-r1", "r2", "r1", c, rtt / 2, reverse_queue, _loss_spec(self.reverse_loss, "reverse_loss"))]
        for i in range(1, n + 1):
            ds, dr = delays[i - 1]
            links += [
                link(f"s{i}-r1", f"s{i}", "r1", acc, ds, UNLIMITED_QUEUE),
                link(f"r1-s{i}", "r1", f"s{i}", acc, ds, UNLIMITED_QUEUE),
                link(f"r2-d{i}", "r2", f"d{i}", acc, dr, UNLIMITED_QUEUE),
                link(f"d{i}-r2", f"d{i}", "r2", acc, dr, UNLIMITED_QUEUE),
            ]
        flows = []
        for i, flow in enumerate(self._flows_built()):
            try:
                flows.append(flow.to_spec(f"flows[{i}]", f"flow{i + 1}"))
            except ScenarioError as e:
                raise self._field_for(e, i) from None
        return nodes, links, [], flows

    def _field_for(self, e: ScenarioError, i: int) -> ScenarioError:
        """Map an error about ``flows[i].<key>`` to the dumbbell key that set it."""
        prefix = f"flows[{i}]."
        if not e.field.startswith(prefix):
            return e
        rest = e.field[len(prefix):]
        key = rest.split(".")[0].split("[")[0]  # "drop_segments[0]" is about drop_segments
        if key in FLOW_OPTION_KEYS:
            return type(e)(f"flow_options.{rest}", e.problem)
        if key in DUMBBELL_KEYS:
            if key in _PER_FLOW_KEYS and isinstance(getattr(self, key), (list, tuple)):
                return type(e)(f"{key}[{i}]{rest[len(key):]}", e.problem)
            return type(e)(rest, e.problem)
        return e

    def to_spec(self) -> dict:
        run = self._run_settings()
        try:
            nodes, links, routes, flows = self._build()
            self._check_references(nodes, links, routes, flows)
            trace = self._trace_links(links)
        except MemoryError:
            # (the lists built so far are garbage now: there is room for the message)
            raise _out_of_memory("n_flows", self._n(), "flows") from None
        return {**run, "nodes": nodes, "links": links, "routes": routes, "flows": flows, "trace_links": trace,
                **self._capture(links, flows)}

    def to_generic(self) -> Scenario:
        """An equivalent generic :class:`Scenario` whose lists can be edited."""
        return Scenario(self.nodes, self.links, self.flows, [],
                        duration=self.duration, measure_start=self._run_settings()["measure_start"],
                        sample_interval=self.sample_interval, seed=self.seed, name=self.name,
                        description=self.description, bottleneck=["r1-r2"], trace_links=self.trace_links,
                        loss_trace=self.loss_trace, memory_limit=self.memory_limit, pcap=self.pcap,
                        pcap_limit=self.pcap_limit)

    def builder_params(self, skip_defaults: bool = True) -> dict:
        """The ``[dumbbell]`` table: the builder's parameters as given."""
        # (buffer None, which TOML cannot hold, is "unlimited": a discipline's own default limit)
        out = {"n_flows": self.n_flows, "bottleneck_rate": self.bottleneck_rate, "rtt": self.rtt,
               "buffer": self.buffer if self.buffer is not None else "unlimited"}
        for k, d in _DUMBBELL_DEFAULTS.items():
            v = getattr(self, k)
            if v is None or (skip_defaults and v == d and type(v) is type(d)):
                continue
            if isinstance(v, (list, tuple)) and any(x is None for x in v):
                v = self._per_flow_nulls_for_toml(k, v)  # (TOML has no null)
            out[k] = v
        return out

    def _per_flow_nulls_for_toml(self, key: str, values: Sequence[Any]) -> list:
        """A per-flow list's ``None`` entries ("this flow's default") as the
        value TOML can hold that builds the same flow."""
        if key == "source":
            return ["tcp" if x is None else x for x in values]
        if key == "params":
            return [{} if x is None else x for x in values]
        if key == "recovery":  # the default depends on the profile and the algorithm: take what was built
            used = [f["recovery"] for f in self._build()[3]]
            return [used[i] if x is None else x for i, x in enumerate(values)]
        return list(values)

    def to_toml_dict(self) -> dict:
        doc: dict = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        doc["dumbbell"] = self.builder_params()
        doc["run"] = self._run_table()
        return _tomlable(doc)


def _queue_buffer(q: dict) -> Buffer | None:
    if q.get("limit_packets") is not None:
        return Buffer(packets=q["limit_packets"])
    if q.get("limit_bytes") is not None:
        return Buffer(bytes=q["limit_bytes"])
    return None


_PER_FLOW_KEYS = {"algorithm", "params", "recovery", "start", "source"}




# --------------------------------------------------------------------------
# loading scenario files

TOP_KEYS = ["name", "description", "bottleneck", "run", "dumbbell", "nodes", "links", "routes", "flows"]


def scenario_from_dict(doc: Mapping[str, Any], name: str | None = None) -> Scenario:
    """Build a Scenario from the dict of a scenario file (see module doc).

    Errors name the field with its table path (``dumbbell.buffer``,
    ``run.duration``, ``links[1].rate``).
    """
    _check_keys(doc, TOP_KEYS, "")
    sname = doc.get("name", name or "scenario")
    if not isinstance(sname, str):
        raise ScenarioError("name", f"expected a string, got {shown(sname)}")
    desc = doc.get("description")
    run = doc.get("run", {})
    _check_keys(run, RUN_KEYS, "run")
    generic = [k for k in ("nodes", "links", "routes", "flows") if k in doc]
    if "dumbbell" in doc:
        if generic:
            raise ScenarioError(generic[0], "a scenario has either a [dumbbell] table or nodes/links/flows, not both")
        if "bottleneck" in doc:
            raise ScenarioError("bottleneck", "only for the generic form (the dumbbell's bottleneck is r1-r2)")
        db = doc["dumbbell"]
        _check_keys(db, DUMBBELL_KEYS, "dumbbell")
        for k in ("n_flows", "bottleneck_rate", "rtt", "buffer"):
            if k not in db:
                raise ScenarioError(f"dumbbell.{k}", "missing (required)")
        fo = db.get("flow_options")
        if fo is not None:
            _check_keys(fo, FLOW_OPTION_KEYS, "dumbbell.flow_options")
        kwargs = dict(db)
        kwargs.update({k: v for k, v in run.items()})
        try:
            return Dumbbell(**kwargs, name=sname, description=desc)
        except ScenarioError as e:
            raise e.with_prefix("run" if e.field.split(".")[0].split("[")[0] in RUN_KEYS else "dumbbell") from None
    if not generic:
        raise ScenarioError("", "a scenario file needs a [dumbbell] table or [[nodes]], [[links]] and [[flows]]")
    if "duration" not in run:
        raise ScenarioError("run.duration", "missing (required): how long to simulate, e.g. '100s'")
    lists = {}
    for key, cls in (("nodes", Node), ("links", Link), ("routes", Route), ("flows", Flow)):
        items = doc.get(key, [])
        if not isinstance(items, list):
            raise ScenarioError(key, f"expected an array of tables ([[{key}]]), got {type(items).__name__}")
        lists[key] = [_coerce(x, cls, f"{key}[{i}]") for i, x in enumerate(items)]
    bottleneck = doc.get("bottleneck")
    if bottleneck is not None and (not isinstance(bottleneck, list) or not all(isinstance(b, str) for b in bottleneck)):
        raise ScenarioError("bottleneck", "expected a list of link names")
    sc = Scenario(lists["nodes"], lists["links"], lists["flows"], lists["routes"], name=sname, description=desc,
                  bottleneck=bottleneck, **run)
    try:
        sc.validate()
    except ScenarioError as e:
        if e.field.split(".")[0].split("[")[0] in RUN_KEYS:
            raise e.with_prefix("run") from None
        raise
    if bottleneck:
        names = {ln.name for ln in lists["links"]}
        for b in bottleneck:
            if b not in names:
                raise ScenarioError("bottleneck", f"unknown link {shown(b)}{_suggest(b, names)}")
    return sc


def load_scenario(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Scenario:
    """Read a scenario file (TOML; every key in docs/reference/scenario-file.md).

    ``overrides``: ``"KEY=VALUE"`` strings applied to the file's values first, as
    ``tcplab run --set`` does (:mod:`tcplab.overrides`: ``"dumbbell.buffer=0.5BDP"``).
    The scenario's name defaults to the file's stem. Raises
    ``FileNotFoundError``, ``tomllib.TOMLDecodeError`` for syntax errors and
    :class:`ScenarioError` naming the field for everything else.
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    if overrides:
        from .overrides import apply_overrides

        apply_overrides(doc, overrides)
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return scenario_from_dict(doc, name=stem)
