"""Generated scenarios, frozen and replayed: the comparative method of
ssm-interactions as a first-class operation.

1. :func:`generate` builds one concrete scenario from a seed: a topology
   (:mod:`tcplab.topology`), flows between hosts attached to chosen or
   random routers (peer-to-peer or client-server), each flow with its
   traffic class (short- or long-lived) and its pre-generated files
   (:mod:`tcplab.workload`), and each flow in a *protocol group* ("A" or
   "B" by default, a balanced random split within every traffic class).
2. The result, a :class:`FrozenScenario`, holds the core's exact run
   description (every node, link, delay, buffer, file size and start time,
   as floats that round-trip through JSON) plus per-flow facts (class,
   group, routers, path, backbone hops, base RTT). :meth:`FrozenScenario.save`
   writes it to a JSON file; :func:`load_frozen` reads it back unchanged.
3. :meth:`FrozenScenario.spec` applies a protocol :class:`Mix` (which
   congestion control each group uses) and returns a run description that
   differs from any other mix's *only* in the flows' ``cc`` and
   ``recovery`` fields (:func:`spec_differences` checks it).
4. :func:`join_flows` and :func:`join_files` join per-flow and per-file
   results of several runs of the same frozen scenario, so every flow and
   every file can be compared with itself across mixes.

Random streams: the topology, host attachment and workload each draw from
their own stream of the seed (:func:`tcplab.topology.rng_for`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .errors import ScenarioError
from .scenario import Flow, Scenario
from .topology import STREAM_ATTACH, STREAM_WORKLOAD, DelayLaw, Topology, check_delay_law, draw_delay, rng_for
from .units import Quantity, parse_time
from .workload import LongLived, ShortLived, workload_from_dict

FORMAT = "tcplab-frozen-scenario"
FORMAT_VERSION = 1

#: Recovery used by every flow of a generated scenario unless a mix says
#: otherwise: SACK, as Linux (and ns-2's TCP/Linux, used by ssm-interactions).
DEFAULT_RECOVERY = "sack"


@dataclass
class TrafficClass:
    """``count`` flows with the same workload. ``start``: flow start times
    uniform in ``[0, start_spread]`` (short-lived flows start at 0 and their
    files arrive as a Poisson process)."""

    name: str
    count: int
    workload: Any
    start_spread: Quantity = 0.0
    #: Routers to attach this class's sources / destinations to (drawn
    #: uniformly from the list; a one-element list pins them). Default: the
    #: generator's mode decides.
    src_routers: Sequence[str] | None = None
    dst_routers: Sequence[str] | None = None

    def check(self, path: str) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ScenarioError(f"{path}.name", f"expected a non-empty name, got {self.name!r}")
        if isinstance(self.count, bool) or not isinstance(self.count, (int, np.integer)) or self.count < 0:
            raise ScenarioError(f"{path}.count", f"expected a non-negative integer, got {self.count!r}")
        self.workload = workload_from_dict(self.workload, f"{path}.workload")
        if parse_time(self.start_spread, f"{path}.start_spread") < 0:
            raise ScenarioError(f"{path}.start_spread", "must be >= 0")
        for end in ("src_routers", "dst_routers"):
            v = getattr(self, end)
            if v is not None and (isinstance(v, str) or not list(v)):
                raise ScenarioError(f"{path}.{end}", f"expected a non-empty list of router names, got {v!r}")


def ssm_traffic(n_long: int, n_short: int = 100, short_mean: Quantity = "1MB", short_shape: float = 1.5,
                short_interarrival: Quantity = "1s", long_size: Quantity = "4.7GB",
                long_interarrival: Quantity = "120s", long_start_spread: Quantity = "10s") -> list[TrafficClass]:
    """The traffic of ssm-interactions: ``n_short`` short-lived flows (Pareto
    sizes, mean 1 MB, Poisson arrivals 1 s apart on average) and ``n_long``
    long-lived flows of 4.7 GB files arriving 2 minutes apart on average,
    each flow's first file at its start, starts uniform in [0, 10 s]."""
    from .workload import Pareto

    return [
        TrafficClass("short", n_short, ShortLived(Pareto(short_mean, short_shape), short_interarrival)),
        TrafficClass("long", n_long, LongLived(long_size, long_interarrival, first_at_start=True),
                     start_spread=long_start_spread),
    ]


@dataclass
class Mix:
    """Which congestion control each protocol group uses. ``assign`` maps a
    group name to an algorithm name or ``{"algorithm", "params",
    "recovery"}``; ``name`` labels the runs (e.g. ``"reno+cubic"``)."""

    name: str
    assign: dict

    @staticmethod
    def all(algorithm: Any, groups: Sequence[str] = ("A", "B")) -> Mix:
        """Every group uses ``algorithm`` ("year 2005" with Reno, "year 2010")."""
        return Mix(f"all-{_algo_name(algorithm)}", {g: algorithm for g in groups})

    @staticmethod
    def half(algorithm: Any, base: Any = "reno", groups: Sequence[str] = ("A", "B")) -> Mix:
        """Group A keeps ``base`` (Reno), group B uses ``algorithm`` ("year 2007")."""
        if len(groups) != 2:
            raise ScenarioError("groups", "a half mix needs exactly two groups")
        return Mix(f"{_algo_name(base)}+{_algo_name(algorithm)}", {groups[0]: base, groups[1]: algorithm})


def _algo_name(a: Any) -> str:
    return a if isinstance(a, str) else str(a.get("algorithm"))


def _cc_of(a: Any, path: str) -> tuple[dict, str]:
    """(cc dict, recovery) of a mix entry."""
    from .scenario import RECOVERIES, _check_params, resolve_algorithm

    if isinstance(a, str):
        a = {"algorithm": a}
    if not isinstance(a, Mapping):
        raise ScenarioError(path, f"expected an algorithm name or table, got {a!r}")
    for k in a:
        if k not in ("algorithm", "params", "recovery"):
            raise ScenarioError(f"{path}.{k}", "unknown key (expected algorithm, params, recovery)")
    name, entry = resolve_algorithm(a.get("algorithm"), f"{path}.algorithm")
    params = _check_params(a.get("params") or {}, entry, name, f"{path}.params")
    rec = a.get("recovery", DEFAULT_RECOVERY)
    if rec not in RECOVERIES:
        raise ScenarioError(f"{path}.recovery", f"must be one of {', '.join(RECOVERIES)}, got {rec!r}")
    return {"algorithm": name, "params": params}, rec


@dataclass
class FrozenScenario:
    """A generated scenario, fixed: the core run description (without
    congestion controls) and what each flow is. See the module docstring."""

    spec_base: dict
    flows: list
    topology: dict
    meta: dict = field(default_factory=dict)

    # -- replay -------------------------------------------------------------
    @property
    def groups(self) -> list[str]:
        """Protocol groups in their declared order (``generate(groups=...)``)."""
        present = {f["group"] for f in self.flows}
        declared = [g for g in self.meta.get("groups", []) if g in present]
        return declared + sorted(present - set(declared))

    def spec(self, mix: Mix | Mapping[str, Any], seed: int | None = None,
             sample_interval: float | None = None) -> dict:
        """The run description with ``mix`` applied: a deep copy of the
        frozen description whose flows get the mix's ``cc`` and
        ``recovery``; nothing else changes. ``seed`` overrides the run's
        seed (random link loss), ``sample_interval`` the time-series
        sampling (0 = none)."""
        assign = mix.assign if isinstance(mix, Mix) else dict(mix)
        missing = [g for g in self.groups if g not in assign]
        if missing:
            raise ScenarioError(
                "mix", f"no algorithm for group(s) {', '.join(missing)} (groups: {', '.join(self.groups)})")
        for g in assign:
            if g not in self.groups:
                raise ScenarioError(f"mix.{g}", f"unknown group (groups: {', '.join(self.groups)})")
        ccs = {g: _cc_of(a, f"mix.{g}") for g, a in assign.items()}
        spec = json.loads(json.dumps(self.spec_base))
        for f, info in zip(spec["flows"], self.flows, strict=True):
            cc, rec = ccs[info["group"]]
            f["cc"] = json.loads(json.dumps(cc))
            f["recovery"] = rec
        if seed is not None:
            spec["seed"] = int(seed)
        if sample_interval is not None:
            spec["sample_interval"] = float(sample_interval)
        return spec

    def run(self, mix: Mix | Mapping[str, Any], **kw: Any):
        """Runs the scenario with ``mix``; returns :class:`tcplab.Results`."""
        import tcplab

        return tcplab.run(self.spec(mix, **kw))

    # -- facts --------------------------------------------------------------
    def flow_frame(self):
        """One row per flow: name, class, group, routers, hops, base RTT,
        number of files and bytes offered."""
        import pandas as pd

        rows = []
        for f, fs in zip(self.flows, self.spec_base["flows"], strict=True):
            files = fs["app"].get("files") if fs["app"]["kind"] == "files" else None
            rows.append({k: f[k] for k in ("name", "cls", "group", "src_router", "dst_router", "hops", "base_rtt")}
                        | {"start": fs["start"], "n_files": len(files) if files is not None else 0,
                           "bytes_offered": sum(x["size"] for x in files) if files is not None else np.nan})
        return pd.DataFrame(rows)

    @property
    def backbone(self) -> list[str]:
        return list(self.topology["backbone"])

    # -- files --------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": FORMAT_VERSION, "meta": self.meta, "topology": self.topology,
                "flows": self.flows, "spec": self.spec_base}

    def save(self, path: str | os.PathLike) -> None:
        """Writes the frozen scenario as JSON (atomically: a temporary file
        renamed into place, removed again if anything fails; a directory
        is refused with IsADirectoryError)."""
        from ._files import write_text_atomically

        write_text_atomically(path, json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")


#: The per-flow facts of a frozen file, each with the JSON type it must have.
FACT_TYPES = {"name": str, "cls": str, "group": str, "src_router": str, "dst_router": str,
              "path": list, "reverse_path": list, "hops": int, "base_rtt": float}
#: The topology summary of a frozen file: what replay reads and its type.
TOPOLOGY_TYPES = {"kind": str, "params": dict, "routers": list, "edge": list, "backbone": list, "access": list}
FROZEN_KEYS = ("format", "version", "meta", "topology", "flows", "spec")


def load_frozen(path: str | os.PathLike) -> FrozenScenario:
    """Reads a frozen scenario written by :meth:`FrozenScenario.save`.

    The whole file is checked before anything uses it: UTF-8 JSON, every
    key of its schema with its type, the run description through the core
    (``SpecError`` paths become ``spec.<path>``), and the per-flow facts
    against the description they were derived from (path, reverse path,
    routers, backbone hops and base RTT recomputed and compared). Every
    problem is a :class:`ScenarioError` whose field is ``<file>: <path>``,
    e.g. ``pl.json: flows[2].base_rtt``."""
    p = os.fspath(path)
    doc = _read_json(p)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise ScenarioError(p, f"not a frozen scenario (format {fmt!r})")
    if doc.get("version") != FORMAT_VERSION:
        raise ScenarioError(f"{p}: version", f"unsupported frozen-scenario version {doc.get('version')!r} "
                                              f"(this tcplab reads version {FORMAT_VERSION})")
    try:
        _check_frozen(doc)
    except ScenarioError as e:
        raise ScenarioError(f"{p}: {e.field}" if e.field else p, e.problem) from None
    return FrozenScenario(doc["spec"], doc["flows"], doc["topology"], doc.get("meta", {}))


def _read_json(p: str) -> Any:
    """The file's JSON; undecodable bytes, bad syntax or absurd nesting are
    a ScenarioError naming the file (not a UnicodeDecodeError or
    RecursionError from the parser)."""
    with open(p, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(p, f"not a frozen scenario (not UTF-8 text: byte 0x{raw[e.start]:02x} at offset "
                               f"{e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(p, f"not a frozen scenario (invalid JSON: {e})") from None
    except RecursionError:
        raise ScenarioError(p, "not a frozen scenario (invalid JSON: nested too deeply)") from None


def _check_frozen(doc: dict) -> None:
    """Every key of a frozen file against its schema; errors name the path."""
    for k in doc:
        if k not in FROZEN_KEYS:
            raise ScenarioError(k, f"unknown key; a frozen scenario has {', '.join(FROZEN_KEYS)}")
    for k in ("spec", "flows", "topology"):
        if k not in doc:
            raise ScenarioError(k, "missing")
    _check_finite(doc, "")
    meta = _typed(doc.get("meta", {}), dict, "meta")
    if "groups" in meta:
        _names(meta["groups"], "meta.groups")
    topo = _typed(doc["topology"], dict, "topology")
    for k, t in TOPOLOGY_TYPES.items():
        if k not in topo:
            raise ScenarioError(f"topology.{k}", "missing")
        _typed(topo[k], t, f"topology.{k}")
        if t is list:
            _names(topo[k], f"topology.{k}")
    facts = _typed(doc["flows"], list, "flows")
    for i, f in enumerate(facts):
        _check_facts(f, f"flows[{i}]")
    spec = _typed(doc["spec"], dict, "spec")
    flows = _typed(spec.get("flows"), list, "spec.flows")
    if len(facts) != len(flows):
        raise ScenarioError("flows", f"{len(facts)} flow facts but the run description (spec.flows) has "
                                     f"{len(flows)} flows")
    for i, f in enumerate(flows):
        _typed(f, dict, f"spec.flows[{i}]")
    probe = _checked_probe(spec)
    _check_topology_names(topo, spec)
    _check_derived_facts(facts, spec, probe, topo["backbone"])


def _typed(v: Any, t: type, path: str) -> Any:
    ok = isinstance(v, t) and not (t in (int, float) and isinstance(v, bool))
    if t is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not ok:
        names = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number"}
        raise ScenarioError(path, f"expected {names[t]}, got {type(v).__name__} {_short(v)}")
    return v


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _names(v: Any, path: str) -> None:
    for j, x in enumerate(_typed(v, list, path)):
        if not isinstance(x, str) or not x:
            raise ScenarioError(f"{path}[{j}]", f"expected a non-empty name, got {_short(x)}")


def _check_finite(v: Any, path: str) -> None:
    """No NaN or infinity anywhere (Python's JSON reader accepts them)."""
    if isinstance(v, float) and not np.isfinite(v):
        raise ScenarioError(path.lstrip(".") or "(top)", f"not a finite number ({v!r})")
    if isinstance(v, dict):
        for k, x in v.items():
            _check_finite(x, f"{path}.{k}")
    elif isinstance(v, list):
        for j, x in enumerate(v):
            _check_finite(x, f"{path}[{j}]")


def _check_facts(f: Any, path: str) -> None:
    """One flow's facts: exactly the keys of FACT_TYPES, each of its type."""
    _typed(f, dict, path)
    for k in f:
        if k not in FACT_TYPES:
            raise ScenarioError(f"{path}.{k}", f"unknown key; a flow's facts are {', '.join(FACT_TYPES)}")
    for k, t in FACT_TYPES.items():
        if k not in f:
            raise ScenarioError(f"{path}.{k}", "missing")
        _typed(f[k], t, f"{path}.{k}")
    for k in ("path", "reverse_path"):
        _names(f[k], f"{path}.{k}")
    for k in FACT_TYPES:
        if FACT_TYPES[k] is str and not f[k]:
            raise ScenarioError(f"{path}.{k}", "expected a non-empty name")
    if f["hops"] < 0:
        raise ScenarioError(f"{path}.hops", f"must not be negative, got {f['hops']}")


def _checked_probe(spec: dict) -> str:
    """The run description as the core sees it (a placeholder congestion
    control per flow, as replay puts the mix's), validated by the core;
    its errors become ``spec.<path>``."""
    from . import _core

    probe = dict(spec)
    probe["flows"] = [{**f, "cc": {"algorithm": "reno", "params": {}}, "recovery": DEFAULT_RECOVERY}
                      for f in spec["flows"]]
    try:
        text = json.dumps(probe)
        _core.validate(text)
    except (ValueError, OverflowError, RecursionError) as e:  # SpecError is a ValueError
        msg = str(e)
        head, sep, rest = msg.partition(": ")
        if sep and " " not in head:  # "<path>: <problem>"
            raise ScenarioError(f"spec.{head}", rest) from None
        raise ScenarioError("spec", msg) from None
    return text


def _check_topology_names(topo: dict, spec: dict) -> None:
    """The topology summary names links and routers of the run description."""
    links = {ln.get("name") for ln in spec.get("links", []) if isinstance(ln, dict)}
    nodes = {n.get("name") for n in spec.get("nodes", []) if isinstance(n, dict)}
    for k, known, what in (("backbone", links, "link"), ("access", links, "link"), ("routers", nodes, "node"),
                           ("edge", nodes, "node")):
        for j, name in enumerate(topo[k]):
            if name not in known:
                raise ScenarioError(f"topology.{k}[{j}]", f"{name!r} is not a {what} of the run description")


def _check_derived_facts(facts: list, spec: dict, probe: str, backbone: Sequence[str]) -> None:
    """Recompute what generate() derived from the run description (names,
    paths, routers, backbone hops, base RTT) and name the first fact that
    disagrees: an edited file must not replay something else than it says."""
    from . import _core

    derived: list[dict] = [{"name": f["name"]} for f in spec["flows"]]
    _add_paths(spec, derived, backbone, paths=_core.paths(probe))
    links = {ln["name"]: ln for ln in spec["links"]}
    for d in derived:
        d["src_router"] = links[d["path"][0]]["dst"] if d["path"] else None
        d["dst_router"] = links[d["path"][-1]]["src"] if d["path"] else None
    for i, (f, d) in enumerate(zip(facts, derived, strict=True)):
        for k in ("name", "path", "reverse_path", "src_router", "dst_router", "hops", "base_rtt"):
            if f[k] != d[k]:
                raise ScenarioError(f"flows[{i}].{k}", f"{_short(f[k])} in the file, but the run description "
                                                       f"gives {_short(d[k])} (edited by hand?)")


def spec_differences(a: dict, b: dict, path: str = "") -> list[str]:
    """Paths at which two run descriptions differ (empty if identical)."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}".lstrip("."))
            else:
                out.extend(spec_differences(a[k], b[k], f"{path}.{k}"))
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(path.lstrip(".") + " (length)")
        else:
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                out.extend(spec_differences(x, y, f"{path}[{i}]"))
    elif a != b or type(a) is not type(b):
        out.append(path.lstrip("."))
    return out


def generate(topology: Topology, traffic: Sequence[TrafficClass], *, duration: Quantity, seed: int = 0,
             mode: str = "p2p", n_servers: int = 1, servers: Sequence[str] | None = None,
             direction: str = "download", distinct_routers: bool = True,
             access_rate: Quantity | None = None, access_delay: DelayLaw | None = None,
             access_buffer: Any = None, groups: Sequence[str] = ("A", "B"),
             packet_size: int = 1500, flow_options: Mapping[str, Any] | None = None,
             sample_interval: Quantity = 0.0, trace_links: Sequence[str] | None = None,
             name: str = "generated") -> FrozenScenario:
    """Builds a concrete scenario on ``topology`` (which it extends with
    hosts) and freezes it.

    - Every flow gets its own source and destination host, each joined to a
      router by an access link of ``access_rate`` (default: the topology's
      rate), one-way delay drawn from ``access_delay`` (default: the
      topology's delay law, else 1 ms) and buffer ``access_buffer``
      (default: the topology's buffer).
    - ``mode="p2p"``: both routers uniform over the edge routers (distinct
      if ``distinct_routers``). ``mode="client-server"``: ``servers`` (or
      ``n_servers`` edge routers drawn at random) host the server ends, the
      other end is a client at a non-server edge router; data flows from
      server to client (``direction="download"``) or the other way.
    - Each traffic class's flows are split into ``groups`` as evenly as
      possible, in a random order.
    - ``flow_options``: extra :class:`~tcplab.scenario.Flow` fields for
      every flow (e.g. ``{"delayed_ack": True}``); the congestion control
      is left to the mix.
    """
    if mode not in ("p2p", "client-server"):
        raise ScenarioError("mode", f"must be 'p2p' or 'client-server', got {mode!r}")
    if direction not in ("download", "upload"):
        raise ScenarioError("direction", f"must be 'download' or 'upload', got {direction!r}")
    if not groups or len(set(groups)) != len(groups):
        raise ScenarioError("groups", f"expected distinct group names, got {groups!r}")
    dur = parse_time(duration, "duration")
    if dur <= 0:
        raise ScenarioError("duration", "must be > 0")
    for i, tc in enumerate(traffic):
        tc.check(f"traffic[{i}]")
    if len({tc.name for tc in traffic}) != len(traffic):
        raise ScenarioError("traffic", "traffic class names must be distinct")
    tp = topology.params
    access_rate = access_rate if access_rate is not None else tp.get("rate", tp.get("stub_rate", "1Gbps"))
    if access_delay is None:
        access_delay = tp.get("delay", tp.get("stub_delay")) or "1ms"
    check_delay_law(access_delay, "access_delay")
    access_buffer = access_buffer if access_buffer is not None else tp.get("buffer")
    edge = list(topology.edge)
    if not edge:
        raise ScenarioError("topology", "has no edge routers to attach hosts to")

    rng_attach = rng_for(seed, STREAM_ATTACH)
    rng_work = rng_for(seed, STREAM_WORKLOAD)
    server_list: list[str] = []  # (client-server mode only)
    clients: list[str] = []
    if mode == "client-server":
        if servers is None:
            if isinstance(n_servers, bool) or not isinstance(n_servers, int) or not 1 <= n_servers < len(edge):
                raise ScenarioError("n_servers", f"must be an integer in [1, {len(edge) - 1}], got {n_servers!r}")
            server_list = [edge[i] for i in sorted(rng_attach.choice(len(edge), size=n_servers, replace=False))]
        else:
            server_list = list(servers)
        for s in server_list:
            if s not in edge:
                raise ScenarioError("servers", f"{s!r} is not an edge router")
        clients = [r for r in edge if r not in server_list]
        if not clients:
            raise ScenarioError("servers", "every edge router is a server; no room for clients")
    elif distinct_routers and len(edge) < 2:
        raise ScenarioError("distinct_routers", "needs at least two edge routers")

    opts = dict(flow_options or {})
    for k in ("src", "dst", "name", "files", "algorithm", "params", "recovery", "start"):
        if k in opts:
            raise ScenarioError(f"flow_options.{k}", "set by the generator, not an option")

    flows: list[Flow] = []
    facts: list[dict] = []
    for tc in traffic:
        order = rng_attach.permutation(tc.count)
        group_of = [groups[int(np.where(order == i)[0][0]) % len(groups)] for i in range(tc.count)]
        for i in range(tc.count):
            fname = f"{tc.name}{i}"
            if tc.src_routers is not None or tc.dst_routers is not None:
                srcs = list(tc.src_routers) if tc.src_routers is not None else edge
                dsts = list(tc.dst_routers) if tc.dst_routers is not None else edge
                for end, lst in (("src_routers", srcs), ("dst_routers", dsts)):
                    for r in lst:
                        if r not in topology.routers:
                            raise ScenarioError(f"traffic.{tc.name}.{end}", f"unknown router {r!r}")
                a = srcs[int(rng_attach.integers(len(srcs)))]
                choices = [r for r in dsts if r != a] if distinct_routers else dsts
                if not choices:
                    raise ScenarioError(f"traffic.{tc.name}.dst_routers", f"no destination router other than {a!r}")
                b = choices[int(rng_attach.integers(len(choices)))]
            elif mode == "p2p":
                a = edge[int(rng_attach.integers(len(edge)))]
                choices = [r for r in edge if r != a] if distinct_routers else edge
                b = choices[int(rng_attach.integers(len(choices)))]
            else:
                srv = server_list[int(rng_attach.integers(len(server_list)))]
                cli = clients[int(rng_attach.integers(len(clients)))]
                a, b = (srv, cli) if direction == "download" else (cli, srv)
            hs, hd = f"h.{fname}.s", f"h.{fname}.d"
            topology.attach_host(hs, a, access_rate, draw_delay(access_delay, rng_attach, "access_delay"),
                                 access_buffer)
            topology.attach_host(hd, b, access_rate, draw_delay(access_delay, rng_attach, "access_delay"),
                                 access_buffer)
            spread = parse_time(tc.start_spread, "start_spread")
            start = float(rng_work.uniform(0.0, spread)) if spread > 0 else 0.0
            files = tc.workload.files(rng_work, start, dur)
            flows.append(Flow(hs, hd, name=fname, algorithm="reno", recovery=DEFAULT_RECOVERY, start=start,
                              packet_size=packet_size,
                              files=None if files is None else [{"size": s, "start": t} for s, t in files], **opts))
            facts.append({"name": fname, "cls": tc.name, "group": group_of[i], "src_router": a, "dst_router": b})
    # A flow with an empty file list (no arrival within the run) still
    # exists: it sends nothing, and stays comparable across runs.
    sc = Scenario(topology.nodes, topology.links, flows, duration=dur, sample_interval=sample_interval, seed=seed,
                  name=name, trace_links=trace_links, bottleneck=topology.backbone)
    spec = sc.to_spec()
    for f in spec["flows"]:
        f.pop("cc", None)
        f.pop("recovery", None)
    _add_paths(spec, facts, topology.backbone)
    from . import __version__

    meta = {"seed": int(seed), "name": name, "mode": mode, "direction": direction, "groups": list(groups),
            "duration": dur, "traffic": [{"name": tc.name, "count": int(tc.count), "workload": tc.workload.to_dict(),
                                          "start_spread": tc.start_spread} for tc in traffic],
            "access": {"rate": access_rate, "delay": access_delay, "buffer": access_buffer},
            "tcplab_version": __version__}
    topo = {"kind": topology.kind, "params": _jsonable(topology.params), "routers": topology.routers,
            "edge": topology.edge, "backbone": topology.backbone, "access": topology.access}
    return FrozenScenario(spec, facts, topo, _jsonable(meta))


def _add_paths(spec: dict, facts: list[dict], backbone: Sequence[str], paths: list | None = None) -> None:
    """Per flow: forward/reverse path (from the core's router, or ``paths``
    when the caller has them), backbone hops and base RTT (propagation
    only, both directions). load_frozen recomputes these to check a file."""
    from . import _core

    if paths is None:
        probe = json.loads(json.dumps(spec))
        for f in probe["flows"]:
            f["cc"] = {"algorithm": "reno", "params": {}}
            f["recovery"] = DEFAULT_RECOVERY
        paths = _core.paths(json.dumps(probe))
    delay = {ln["name"]: ln["delay"] for ln in spec["links"]}
    b = set(backbone)
    for f, (fwd, rev) in zip(facts, paths, strict=True):
        f["path"] = list(fwd)
        f["reverse_path"] = list(rev)
        f["hops"] = sum(1 for x in fwd if x in b)
        f["base_rtt"] = sum(delay[x] for x in fwd) + sum(delay[x] for x in rev)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


# -- joining results across runs -------------------------------------------
def throughput_bps(bytes_delivered: np.ndarray, start: np.ndarray, duration: float) -> np.ndarray:
    """Per-flow throughput: bits delivered over the time from the flow's
    start to the end of the run."""
    return np.asarray(bytes_delivered, dtype=float) * 8.0 / np.maximum(duration - np.asarray(start, dtype=float), 1e-9)

def _raw_tables(res: Any) -> tuple[Any, Any, dict]:
    """(flows, files, meta) DataFrames of a Results or of the core's raw dict."""
    import pandas as pd

    if hasattr(res, "flows") and hasattr(res, "files"):
        return res.flows, res.files, dict(getattr(res, "meta", {}) or {})
    return pd.DataFrame(res["flows"]), pd.DataFrame(res["files"]), dict(res.get("meta", {}))


def join_flows(frozen: FrozenScenario, runs: Mapping[str, Any]):
    """Per-flow results of several runs of ``frozen``, in long form: one row
    per (run, flow) with the flow's facts (class, group, routers, hops,
    base RTT), the algorithm it used in that run, ``bytes_delivered``,
    ``goodput_bps`` (measurement window) and ``throughput_bps`` = bits
    delivered / (run duration - flow start). ``runs`` maps a run label
    (e.g. a mix name) to :class:`~tcplab.Results` or the core's raw dict."""
    import pandas as pd

    facts = frozen.flow_frame()
    dur = frozen.spec_base["duration"]
    frames = []
    for label, res in runs.items():
        fl, _, _ = _raw_tables(res)
        if list(fl["name"]) != list(facts["name"]):
            raise ScenarioError(f"runs.{label}", "flows do not match the frozen scenario (different scenario?)")
        df = facts.copy()
        df.insert(0, "run", label)
        df["algorithm"] = list(fl["algorithm"])
        df["bytes_delivered"] = np.asarray(fl["bytes_delivered"], dtype=float)
        df["goodput_bps"] = np.asarray(fl["goodput_bps"], dtype=float)
        df["throughput_bps"] = throughput_bps(df["bytes_delivered"].to_numpy(), df["start"].to_numpy(), dur)
        df["retransmits"] = np.asarray(fl["retransmits"], dtype=float)
        df["timeouts"] = np.asarray(fl["timeouts"], dtype=float)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def join_files(frozen: FrozenScenario, runs: Mapping[str, Any]):
    """Per-file results of several runs, in long form: run, flow name,
    class, group, algorithm, file index, size, start, ``transfer_time``
    (first packet sent to ACK of the last; NaN if unfinished), ``fct``."""
    import pandas as pd

    facts = frozen.flow_frame().set_index("name")
    names = list(facts.index)
    frames = []
    for label, res in runs.items():
        fl, fi, _ = _raw_tables(res)
        if len(fi) == 0:
            continue
        algo = list(fl["algorithm"])
        df = pd.DataFrame({
            "run": label,
            "flow": [names[int(i)] for i in fi["flow"]],
            "index": np.asarray(fi["index"], dtype=int),
            "size": np.asarray(fi["size"], dtype=float),
            "start": np.asarray(fi["start"], dtype=float),
            "transfer_time": np.asarray(fi["transfer_time"], dtype=float),
            "fct": np.asarray(fi["fct"], dtype=float),
        })
        df["algorithm"] = [algo[int(i)] for i in fi["flow"]]
        df["cls"] = facts.loc[df["flow"], "cls"].to_numpy()
        df["group"] = facts.loc[df["flow"], "group"].to_numpy()
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["run", "flow", "index", "size", "start", "transfer_time", "fct", "algorithm",
                                     "cls", "group"])
    return pd.concat(frames, ignore_index=True)


def parking_lot_scenario(n_long: int, *, seed: int, duration: Quantity = "600s", rate: Quantity = "1Gbps",
                         delay: DelayLaw | None = None, buffer: Any = "2MB", n_routers: int = 5,
                         n_short: int = 100, short_mean: Quantity = "1MB", short_shape: float = 1.5,
                         short_interarrival: Quantity = "1s", long_size: Quantity = "4.7GB",
                         long_interarrival: Quantity = "120s", long_start_spread: Quantity = "10s",
                         **kw: Any) -> FrozenScenario:
    """The ssm-interactions scenario: parking lot of ``n_routers`` routers,
    per-link one-way delay exponential with mean 15 ms (access links too),
    2 MB buffers, ``n_short`` short-lived and ``n_long`` long-lived flows
    between random distinct routers. See docs/experiments/ssm-interactions.md
    for why the delays are read as one-way."""
    from .topology import parking_lot

    law = delay if delay is not None else {"dist": "exponential", "mean": "15ms"}
    topo = parking_lot(n_routers=n_routers, rate=rate, delay=law, buffer=buffer, seed=seed)
    traffic = ssm_traffic(n_long, n_short, short_mean, short_shape, short_interarrival, long_size,
                          long_interarrival, long_start_spread)
    return generate(topo, traffic, duration=duration, seed=seed, name=f"parking-lot-L{n_long}-s{seed}", **kw)


# -- generation from a TOML description ------------------------------------
GEN_KEYS = ["name", "duration", "seed", "mode", "n_servers", "servers", "direction", "distinct_routers", "groups",
            "packet_size", "sample_interval", "topology", "traffic", "access", "lossy", "flow_options"]
#: Keys of a ``[[traffic]]`` class, ``[access]`` and ``[lossy]``.
TRAFFIC_KEYS = [f.name for f in fields(TrafficClass)]
ACCESS_KEYS = ["rate", "delay", "buffer"]
LOSSY_KEYS = ["links", "fraction", "loss"]


def generate_from_dict(doc: Mapping[str, Any]) -> FrozenScenario:
    """A frozen scenario from a generation description (the TOML of
    ``tcplab generate``)::

        duration = "600s"
        seed = 3
        mode = "p2p"                      # or "client-server" (n_servers = 2)
        [topology]
        kind = "parking_lot"              # dumbbell, random_graph, tree, transit_stub, internet_like
        rate = "1Gbps"
        buffer = "2MB"
        delay = {dist = "exponential", mean = "15ms"}
        [[traffic]]
        name = "short"
        count = 100
        workload = {kind = "short", interarrival = "1s", sizes = {kind = "pareto", mean_size = "1MB", shape = 1.5}}
        [[traffic]]
        name = "long"
        count = 40
        start_spread = "10s"
        workload = {kind = "long", size = "4.7GB", interarrival = "120s"}
        [access]                          # optional: rate, delay, buffer of host links
        [lossy]                           # optional: links = "access", fraction = 0.1, loss = 0.01
    """
    from .scenario import _check_keys
    from .topology import make_topology

    _check_keys(doc, GEN_KEYS, "")
    if "duration" not in doc:
        raise ScenarioError("duration", "missing: how long to simulate (e.g. '600s')")
    topo_doc = doc.get("topology")
    if not isinstance(topo_doc, Mapping) or "kind" not in topo_doc:
        raise ScenarioError("topology.kind", "missing: the generator (e.g. 'parking_lot')")
    seed = doc.get("seed", 0)
    params = {k: v for k, v in topo_doc.items() if k != "kind"}
    if "seed" in params:
        raise ScenarioError("topology.seed", "the topology uses the top-level seed")
    try:
        topo = make_topology(topo_doc["kind"], seed=seed, **params)
    except ScenarioError as e:
        raise (e.with_prefix("topology") if not e.field.startswith("topology") else e) from None
    lossy = doc.get("lossy")
    if lossy is not None:
        if not isinstance(lossy, Mapping):
            raise ScenarioError("lossy", "expected a table {links, fraction, loss}")
        _check_keys(lossy, LOSSY_KEYS, "lossy")
        try:
            topo.apply_loss(lossy.get("links", "access"), lossy.get("fraction", 1.0), lossy.get("loss"), seed)
        except ScenarioError as e:
            raise e.with_prefix("lossy") from None
    traffic_doc = doc.get("traffic")
    if not isinstance(traffic_doc, list) or not traffic_doc:
        raise ScenarioError("traffic", "expected at least one [[traffic]] class")
    traffic = []
    for i, t in enumerate(traffic_doc):
        if not isinstance(t, Mapping):
            raise ScenarioError(f"traffic[{i}]", "expected a table")
        _check_keys(t, TRAFFIC_KEYS, f"traffic[{i}]")
        traffic.append(TrafficClass(t.get("name", ""), t.get("count", 0), t.get("workload"), t.get("start_spread", 0.0),
                                    t.get("src_routers"), t.get("dst_routers")))
    access = doc.get("access") or {}
    _check_keys(access, ACCESS_KEYS, "access")
    kw = {k: doc[k] for k in ("mode", "n_servers", "servers", "direction", "distinct_routers", "packet_size",
                              "sample_interval", "flow_options") if k in doc}
    if "groups" in doc:
        kw["groups"] = tuple(doc["groups"])
    return generate(topo, traffic, duration=doc["duration"], seed=seed, access_rate=access.get("rate"),
                    access_delay=access.get("delay"), access_buffer=access.get("buffer"),
                    name=doc.get("name", "generated"), **kw)


def parse_mix(text: str, groups: Sequence[str]) -> Mix:
    """A mix from the command line: ``all-X``, ``reno+X`` (or ``BASE+X``) or
    ``A=reno,B=cubic``."""
    text = text.strip()
    if "=" in text:
        assign = {}
        for part in text.split(","):
            g, _, a = part.partition("=")
            assign[g.strip()] = a.strip()
        return Mix(text, assign)
    if text.startswith("all-"):
        return Mix.all(text[4:], groups)
    if "+" in text:
        base, _, x = text.partition("+")
        return Mix.half(x, base, groups)
    raise ScenarioError("mix", f"expected 'all-X', 'BASE+X' or 'A=alg,B=alg', got {text!r}")
