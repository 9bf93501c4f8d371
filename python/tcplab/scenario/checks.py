"""Field checks shared by every part of a scenario: the names the core accepts (recoveries, profiles,
algorithm and queue-discipline catalogs), the core's limits, small checkers that name the offending
field in a :class:`~tcplab.errors.ScenarioError`, and the tables shared by links and flows (``queue``,
``loss``, ``source``) turned into the core's JSON.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ScenarioError, shown
from ..units import (
    Quantity,
    check_text,
    parse_count,
    parse_param,
    parse_rate,
    parse_size,
    parse_time,
    python_scalar,
)

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
#: Range of the "uniform" access-delay rule of mv-buffers (seconds).
UNIFORM_ACCESS_DELAY_MAX = 10e-3
#: The second word of the seed of a dumbbell's ``access_jitter`` draws,
#: ``numpy.random.default_rng([seed, ACCESS_JITTER_STREAM])``: a stream apart from
#: ``access_delay = "uniform"``'s ``default_rng(seed)``, so the two never draw the same numbers.
ACCESS_JITTER_STREAM = 1

UNLIMITED_QUEUE = {"limit_packets": None, "limit_bytes": None}


# --------------------------------------------------------------------------
# field checks and catalogs


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
        from .. import _core
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
    found = spelled.get(name.lower())
    if found is None:
        names = sorted({n for e in catalog for n in [e["name"], *e.get("aliases", [])]})
        raise ScenarioError(field_path, f"unknown queue discipline {shown(name)}"
                                        f"{_suggest(name.lower(), list(spelled))}; known: {', '.join(names)}")
    return found["name"], (found if from_core else None)


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
        raise ScenarioError(path, "expected a table such as {discipline = 'codel', target = '5ms'}, "
                                  f"got {shown(queue)}")
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
            out[k] = parse_count(v, fp) if k == "limit_packets" else parse_size(v, fp)
            continue
        if known is not None and k not in known:
            listing = ", ".join(known) if known else "none"
            raise ScenarioError(fp, f"unknown parameter for discipline {shown(name)}"
                                    f"{_suggest(k, [*known, *QUEUE_KEYS])}; its parameters: {listing} "
                                    f"(and the limit: {', '.join(QUEUE_LIMIT_KEYS)})")
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
    app: dict = {"kind": kind, "rate_bps": parse_rate(source["rate"], f"{path}.rate")}
    if kind == "on_off":
        for k in ("on", "off"):
            if k not in source:
                raise ScenarioError(f"{path}.{k}", f"missing (required): the mean {k} period, e.g. '1s'")
        app["on"] = parse_time(source["on"], f"{path}.on")
        app["off"] = parse_time(source["off"], f"{path}.off")
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
        if isinstance(x, bool) or not isinstance(x, (int, float)):  # (its range is the core's to check)
            raise ScenarioError(f"{path}.{k}", f"must be a probability in [0, 1], got {shown(x)}")
        out[k] = float(x)
    return out

# --------------------------------------------------------------------------
# the core's limits


# The core owns them (spec::limits in crates/tcplab-core/src/spec.rs) and the
# bindings export them; they are read here, never written. Without the compiled
# core (a source tree not built yet) nothing can run, so nothing is refused for
# them: each is infinite.


def _core_limit(name: str) -> Any:
    core = _core()
    return math.inf if core is None else getattr(core, name)


#: Largest packet on the wire (bytes), IP's; the core holds sizes in 16 bits.
MAX_PACKET_SIZE = _core_limit("MAX_PACKET_SIZE")

#: The core's fastest link (a byte per picosecond, docs/limits.md): the default access rate stops there,
#: so a bottleneck above 800 Gbit/s is not refused for an access rate the user never set.
MAX_RATE_BPS = _core_limit("MAX_RATE_BPS")

#: Most flows of a Dumbbell: the core numbers links in 29 bits (at most
#: 2^29 links) and a dumbbell of N flows has 4N + 2 links.
MAX_DUMBBELL_FLOWS = math.inf if _core() is None else (_core_limit("MAX_LINKS") - 2) // 4

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
