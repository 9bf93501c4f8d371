"""The :class:`Scenario`: run settings plus either explicit nodes, links, routes and flows or a dumbbell
(:mod:`.dumbbell`), as a scenario file has either ``[[nodes]]``/``[[links]]``/``[[flows]]`` or a
``[dumbbell]`` table. ``to_spec()`` checks it and returns the core's ``RunSpec`` JSON; ``to_toml()``
writes the scenario file that :func:`~tcplab.scenario.load_scenario` reads back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, fields
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, shown
from ..units import Buffer, Quantity, parse_count, parse_size, parse_time, python_scalar
from .checks import (
    DEFAULT_SAMPLE_INTERVAL,
    _bool,
    _out_of_memory,
    _pos_time,
    _str,
    _suggest,
)
from .corecheck import check_in_core, generic_field
from .model import File, Flow, Link, Node, Route, _coerce

if TYPE_CHECKING:
    from .dumbbell import DumbbellParams

#: Keys of a scenario file's ``[run]`` table: the run settings of :class:`Scenario`.
RUN_KEYS = ["duration", "measure_window", "measure_start", "sample_interval", "seed", "trace_links", "loss_trace",
            "memory_limit", "pcap", "pcap_limit"]

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
    sampled (``"bottleneck"``: the ``bottleneck`` links; default ``None``: the
    core samples every link with a finite queue limit). ``loss_trace=True``
    records every drop, loss and retransmission (the results' ``drop_trace``
    and ``retransmit_trace``).
    ``pcap`` names links whose packets are captured (the results'
    ``packet_trace``, :meth:`Results.write_pcap`; ``"bottleneck"`` stands
    for the ``bottleneck`` links and their reverse direction), up to
    ``pcap_limit`` packets (default 5,000,000; docs/pcap.md).
    ``memory_limit`` (a size, e.g. ``"16GiB"``; default the core's 4 GiB)
    is the memory a run may be estimated to need before the core refuses it
    (docs/limits.md).
    Nothing is checked until :meth:`validate` or :meth:`to_spec`.

    ``dumbbell``: instead of the four lists, the :class:`~tcplab.scenario.dumbbell.DumbbellParams` the
    network and flows are built from when the run description is made (:func:`~tcplab.scenario.dumbbell`
    makes such a scenario). The lists then stay empty. For convenience (and as before the builder was a
    function), a dumbbell scenario reads and sets the dumbbell's parameters and facts as its own
    attributes: ``sc.buffer`` is ``sc.dumbbell.buffer``, ``sc.path_rtt(0)`` is
    ``sc.dumbbell.path_rtt(0, sc.seed)``.
    """

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
        dumbbell: DumbbellParams | None = None,
    ) -> None:
        self.dumbbell = dumbbell
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

    @property
    def kind(self) -> str:
        """``"dumbbell"`` for a scenario built from :attr:`dumbbell`, else ``"generic"``."""
        return "generic" if self.dumbbell is None else "dumbbell"

    # -- run settings -------------------------------------------------------
    def _default_measure_start(self, duration: float) -> float:
        """Without measure_start or measure_window: the whole run, or a dumbbell's last half (the papers'
        "2000 s, goodput over the last 1000 s")."""
        return 0.0 if self.dumbbell is None else duration / 2.0

    def _run_settings(self) -> dict:
        self._check_labels()
        if self.duration is None:
            raise ScenarioError("duration", "missing: how long to simulate (e.g. '100s')")
        duration = parse_time(self.duration, "duration")  # (its range, as every range, is the core's to check)
        if self.measure_start is not None and self.measure_window is not None:
            raise ScenarioError("measure_start", "give either measure_start or measure_window, not both")
        if self.measure_window is not None:  # (a window is the scenario's: the core sees its measure_start)
            w = _pos_time(self.measure_window, "measure_window")
            if w > duration * (1 + 1e-12) and duration > 0:
                raise ScenarioError("measure_window", f"must not exceed the run duration ({duration:g} s), got {w:g} s")
            ms = max(0.0, duration - w)
        elif self.measure_start is not None:
            ms = parse_time(self.measure_start, "measure_start")
        else:
            ms = self._default_measure_start(duration)
        si = parse_time(self.sample_interval, "sample_interval")
        out = {"seed": self._seed(), "duration": duration, "measure_start": ms, "sample_interval": si}
        if _bool(self.loss_trace, "loss_trace"):  # absent when off, so the run's identity is as before
            out["loss_trace"] = True
        if self.memory_limit is not None:  # absent by default, so the run's identity is as before
            limit = parse_size(self.memory_limit, "memory_limit")
            if limit < 1:
                raise ScenarioError("memory_limit",
                                    f"must be a positive size, e.g. '16GiB', got {shown(self.memory_limit)}")
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
        named = {ln["name"] for ln in links}
        out = []
        for i, t in enumerate(self.trace_links):
            if not isinstance(t, str):
                raise ScenarioError(f"trace_links[{i}]", f"expected a link name, got {shown(t)}")
            if t != "bottleneck" or "bottleneck" in named:
                out.append(t)
            elif self.bottleneck_links():  # (the bottleneck links, as in pcap)
                out += self.bottleneck_links()
            else:
                raise ScenarioError(f"trace_links[{i}]", "\"bottleneck\": this scenario names no bottleneck links")
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
                raise ScenarioError(f"pcap[{i}]",
                                    f"unknown link {shown(n)}{_suggest(n, names) if isinstance(n, str) else ''}; "
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
                raise ScenarioError("pcap_limit",
                                    f"expected a positive whole number of packets, got {shown(self.pcap_limit)}")
            spec["pcap_limit"] = lim
        return spec

    def _seed(self) -> int:
        seed = python_scalar(self.seed)
        if isinstance(seed, bool) or not isinstance(seed, int):
            try:
                seed = parse_count(self.seed, "seed")  # it unwraps numpy scalars itself
            except ScenarioError:
                raise ScenarioError("seed", f"expected a non-negative integer, got {shown(self.seed)}") from None
        if not 0 <= seed < 2**64:
            raise ScenarioError("seed", f"expected a non-negative 64-bit integer, got {shown(self.seed)}")
        return int(seed)

    # -- topology -----------------------------------------------------------
    def _parts(self) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
        if self.dumbbell is not None:
            given = [k for k in ("nodes", "links", "routes", "flows") if getattr(self, k)]
            if given:
                raise ScenarioError(given[0], "a scenario has either a dumbbell or nodes/links/flows, not both "
                                              "(to_generic() gives the dumbbell's as lists to edit)")
            return self.dumbbell.build(self._seed())
        nodes = [_coerce(n, Node, f"nodes[{i}]").to_spec(f"nodes[{i}]") for i, n in enumerate(self.nodes)]
        links = [_coerce(ln, Link, f"links[{i}]").to_spec(f"links[{i}]") for i, ln in enumerate(self.links)]
        routes = [_coerce(r, Route, f"routes[{i}]").to_spec(f"routes[{i}]") for i, r in enumerate(self.routes)]
        flows = [_coerce(f, Flow, f"flows[{i}]").to_spec(f"flows[{i}]", f"flow{i + 1}")
                 for i, f in enumerate(self.flows)]
        return nodes, links, routes, flows

    def to_spec(self) -> dict:
        """Validate and return the core's ``RunSpec`` as a JSON-ready dict."""
        run = self._run_settings()
        try:
            nodes, links, routes, flows = self._parts()
            spec = {**run, "nodes": nodes, "links": links, "routes": routes, "flows": flows,
                    "trace_links": self._trace_links(links), **self._capture(links, flows)}
            check_in_core(spec, self._in_scenario_words)
        except MemoryError:
            # (the lists built so far are garbage now: there is room for the message)
            if self.dumbbell is not None:
                raise _out_of_memory("n_flows", self.dumbbell.n(), "flows") from None
            raise _out_of_memory("flows", len(self.flows), "flows") from None
        return spec

    def _in_scenario_words(self, path: str, problem: str) -> tuple[str, str]:
        """The scenario's field (and the problem) for the core's refusal of a path of its run description:
        a dumbbell's keys (:meth:`DumbbellParams.in_own_words`), a generic scenario's spelling
        (``links[0].loss`` given as a bare probability is that, not ``.p``), ``measure_window`` for the
        ``measure_start`` it set."""
        if path == "measure_start" and self.measure_window is not None:
            return "measure_window", problem
        if self.dumbbell is not None:
            return self.dumbbell.in_own_words(path, problem)
        m = re.match(r"^links\[(\d+)\]\.loss\.p$", path)
        if m and int(m.group(1)) < len(self.links):
            link = self.links[int(m.group(1))]
            loss = link.get("loss") if isinstance(link, Mapping) else getattr(link, "loss", None)
            if not isinstance(loss, Mapping):  # (a bare probability)
                return f"links[{m.group(1)}].loss", problem
        return generic_field(path), problem

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
        """Link names to highlight in reports (``bottleneck`` or empty; a dumbbell's ``r1-r2``)."""
        if self.dumbbell is not None:
            return ["r1-r2"]
        return list(self.bottleneck or [])

    def to_generic(self) -> Scenario:
        """An equivalent generic :class:`Scenario` whose lists can be edited (a copy of a generic one)."""
        if self.dumbbell is None:
            nodes, links, flows, routes = list(self.nodes), list(self.links), list(self.flows), list(self.routes)
            measure_start, bottleneck = self.measure_start, self.bottleneck
        else:
            nodes, links = self.dumbbell.nodes(), self.dumbbell.links(self._seed())
            flows, routes = self.dumbbell.flows(), []
            measure_start, bottleneck = self._run_settings()["measure_start"], ["r1-r2"]
        return Scenario(nodes, links, flows, routes,
                        duration=self.duration, measure_start=measure_start,
                        measure_window=self.measure_window if self.dumbbell is None else None,
                        sample_interval=self.sample_interval, seed=self.seed, name=self.name,
                        description=self.description, bottleneck=bottleneck, trace_links=self.trace_links,
                        loss_trace=self.loss_trace, memory_limit=self.memory_limit, pcap=self.pcap,
                        pcap_limit=self.pcap_limit)

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
        if self.dumbbell is not None:
            doc["dumbbell"] = self.dumbbell.builder_params()
            doc["run"] = self._run_table()
            return _tomlable(doc)
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

    # -- a dumbbell's parameters and facts as the scenario's own attributes -------------------------
    def __getattr__(self, name: str) -> Any:
        # (only reached when ordinary lookup fails; __dict__ read directly, so unpickling and copying,
        # which look attributes up before __init__ ran, never recurse here)
        db = self.__dict__.get("dumbbell")
        if db is not None and not name.startswith("_") and db.shows(name):
            return db.shown_as(name, self._seed)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        db = self.__dict__.get("dumbbell")
        if db is not None and name in db.PARAMETERS:
            setattr(db, name, value)  # sc.access_delay = "uniform" changes the dumbbell
        else:
            object.__setattr__(self, name, value)


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

