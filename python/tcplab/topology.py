"""Topology generators: dumbbell, parking lot, random graphs, trees,
transit-stub and Internet-like (preferential attachment) router networks.

A generator returns a :class:`Topology`: routers joined by duplex links
(two unidirectional :class:`~tcplab.scenario.Link` objects with the same
rate and delay, each with its own drop-tail buffer at its source), the list
of *edge* routers where end hosts may attach, and the names of the backbone
(router-to-router) links. Hosts are added with :meth:`Topology.attach_host`
(normally by :func:`tcplab.generate.generate`). Routing is the core's:
shortest path by propagation delay, ties broken by the lower link index
(``crates/tcplab-core/src/net/routing.rs``), so a topology routes the same
way every time.

Link delays are given as a *delay law*, drawn once per duplex link from the
topology's own random stream:

- a quantity (``"10ms"``, ``0.01``): every link has that one-way delay;
- ``{"dist": "exponential", "mean": "15ms"}``;
- ``{"dist": "uniform", "low": "1ms", "high": "20ms"}``.

Delays are *one-way* propagation delays; a duplex link's round-trip
contribution is twice its delay. Generators take a ``seed`` and draw from a
stream of their own (``numpy`` PCG64 seeded with ``[seed, stream]``), so a
topology does not change when, say, the workload's parameters change.

"Lossy" ("wireless") links: ``lossy_fraction`` of the links of a chosen
class (``lossy_links="access"`` or ``"backbone"``) get the loss model
``loss`` (a probability for Bernoulli loss or a Gilbert-Elliott table, as
:class:`~tcplab.scenario.Link` accepts), on both directions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from .errors import ScenarioError
from .scenario import Link, Node, _loss_spec
from .units import Quantity, parse_buffer, parse_rate, parse_time

#: Random streams (second element of the numpy seed sequence).
STREAM_TOPOLOGY = 1
STREAM_ATTACH = 2
STREAM_WORKLOAD = 3

DelayLaw = Quantity | Mapping[str, Any]


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """The generator of one named stream of a seed (independent streams)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ScenarioError("seed", f"expected a non-negative integer, got {seed!r}")
    return np.random.default_rng([int(seed), int(stream)])


#: A delay law table's distributions and their keys (besides ``dist``).
DELAY_LAW_KEYS = {"exponential": ("mean",), "uniform": ("low", "high")}


def check_delay_law(law: DelayLaw, field_: str) -> DelayLaw:
    """Validates a delay law (see the module docstring); returns it."""
    if isinstance(law, Mapping):
        dist = law.get("dist")
        keys = DELAY_LAW_KEYS
        if dist not in keys:
            raise ScenarioError(f"{field_}.dist", f"must be 'exponential' or 'uniform', got {dist!r}")
        for k in law:
            if k != "dist" and k not in keys[dist]:
                raise ScenarioError(f"{field_}.{k}",
                                    f"unknown key for a {dist} delay law (expected {', '.join(keys[dist])})")
        for k in keys[dist]:
            if k not in law:
                raise ScenarioError(f"{field_}.{k}", "missing (required)")
            v = parse_time(law[k], f"{field_}.{k}")
            if v < 0:
                raise ScenarioError(f"{field_}.{k}", f"must be >= 0, got {law[k]!r}")
        if dist == "exponential" and parse_time(law["mean"], f"{field_}.mean") <= 0:
            raise ScenarioError(f"{field_}.mean", "must be > 0")
        if dist == "uniform" and parse_time(law["low"], f"{field_}.low") > parse_time(law["high"], f"{field_}.high"):
            raise ScenarioError(f"{field_}.high", "must be >= low")
        return law
    v = parse_time(law, field_)
    if v < 0:
        raise ScenarioError(field_, f"must be >= 0, got {law!r}")
    return law


def draw_delay(law: DelayLaw, rng: np.random.Generator, field_: str = "delay") -> float:
    """One draw (seconds) from a delay law. Fixed delays consume no draw."""
    check_delay_law(law, field_)
    if isinstance(law, Mapping):
        if law["dist"] == "exponential":
            return float(rng.exponential(parse_time(law["mean"], f"{field_}.mean")))
        lo, hi = parse_time(law["low"], f"{field_}.low"), parse_time(law["high"], f"{field_}.high")
        return float(rng.uniform(lo, hi))
    return float(parse_time(law, field_))


def delay_law_mean(law: DelayLaw) -> float:
    if isinstance(law, Mapping):
        if law["dist"] == "exponential":
            return parse_time(law["mean"], "mean")
        return 0.5 * (parse_time(law["low"], "low") + parse_time(law["high"], "high"))
    return parse_time(law, "delay")


@dataclass
class Topology:
    """Routers, hosts and duplex links, plus what generators know about them.

    ``edge``: routers where hosts may attach; ``servers``: routers reserved
    for server-side hosts in client-server workloads (a subset of ``edge``,
    may be empty); ``backbone``: names of router-to-router links;
    ``access``: names of host links. ``params`` records the generator and
    its arguments (provenance, saved with frozen scenarios).
    """

    kind: str
    nodes: list = field(default_factory=list)
    links: list = field(default_factory=list)
    routers: list = field(default_factory=list)
    edge: list = field(default_factory=list)
    backbone: list = field(default_factory=list)
    access: list = field(default_factory=list)
    params: dict = field(default_factory=dict)

    # -- building -----------------------------------------------------------
    def add_router(self, name: str) -> None:
        if any(n.name == name for n in self.nodes):
            raise ScenarioError("nodes", f"duplicate node name {name!r}")
        self.nodes.append(Node(name, "router"))
        self.routers.append(name)

    def add_duplex(self, a: str, b: str, rate: Quantity, delay: float, buffer: Any,
                   loss: Any = None, backbone: bool = True) -> tuple[str, str]:
        """Links ``a-b`` and ``b-a`` (same rate, delay, buffer and loss law)."""
        names = (f"{a}-{b}", f"{b}-{a}")
        self.links.append(Link(names[0], a, b, rate, delay, buffer, loss))
        self.links.append(Link(names[1], b, a, rate, delay, buffer, loss))
        (self.backbone if backbone else self.access).extend(names)
        return names

    def attach_host(self, host: str, router: str, rate: Quantity, delay: float, buffer: Any,
                    loss: Any = None) -> tuple[str, str]:
        """A host joined to ``router`` by a duplex access link."""
        if router not in self.routers:
            raise ScenarioError("router", f"unknown router {router!r}")
        self.nodes.append(Node(host, "host"))
        return self.add_duplex(host, router, rate, delay, buffer, loss, backbone=False)

    def link(self, name: str) -> Link:
        for ln in self.links:
            if ln.name == name:
                return ln
        raise KeyError(name)

    # -- queries ------------------------------------------------------------
    def neighbours(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {r: [] for r in self.routers}
        for ln in self.links:
            if ln.src in out and ln.dst in out:
                out[ln.src].append(ln.dst)
        return out

    def is_connected(self) -> bool:
        nb = self.neighbours()
        if not self.routers:
            return False
        seen = {self.routers[0]}
        stack = [self.routers[0]]
        while stack:
            for m in nb[stack.pop()]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return len(seen) == len(self.routers)

    def apply_loss(self, which: str, fraction: float, loss: Any, seed: int) -> list[str]:
        """Puts the loss law on ``fraction`` of the duplex links of class
        ``which`` ("backbone" or "access"), chosen at random; returns the
        names of the links made lossy."""
        if which not in ("backbone", "access"):
            raise ScenarioError("lossy_links", f"must be 'backbone' or 'access', got {which!r}")
        if not 0.0 <= fraction <= 1.0:
            raise ScenarioError("lossy_fraction", f"must be in [0, 1], got {fraction!r}")
        _loss_spec(loss, "loss")
        names = self.backbone if which == "backbone" else self.access
        pairs = [names[i:i + 2] for i in range(0, len(names), 2)]
        k = int(round(fraction * len(pairs)))
        rng = rng_for(seed, STREAM_TOPOLOGY + 100)
        chosen = sorted(rng.choice(len(pairs), size=k, replace=False).tolist()) if k else []
        out = []
        for i in chosen:
            for name in pairs[i]:
                self.link(name).loss = loss
                out.append(name)
        return out


def _check_common(rate: Quantity, buffer: Any, delay: DelayLaw, n: int, n_field: str, n_min: int) -> None:
    parse_rate(rate, "rate")
    parse_buffer(buffer, "buffer")
    check_delay_law(delay, "delay")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < n_min:
        raise ScenarioError(n_field, f"must be an integer >= {n_min}, got {n!r}")


def dumbbell(rate: Quantity = "100Mbps", delay: DelayLaw = "20ms", buffer: Any = "100p", seed: int = 0) -> Topology:
    """Two routers ``r0``, ``r1`` and one duplex bottleneck; hosts attach to
    either side (both are edge routers)."""
    _check_common(rate, buffer, delay, 2, "n_routers", 2)
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("dumbbell", params={"rate": rate, "delay": delay, "buffer": buffer, "seed": seed})
    t.add_router("r0")
    t.add_router("r1")
    t.add_duplex("r0", "r1", rate, draw_delay(delay, rng), buffer)
    t.edge = ["r0", "r1"]
    return t


def parking_lot(n_routers: int = 5, rate: Quantity = "1Gbps", delay: DelayLaw | None = None, buffer: Any = "2MB",
                seed: int = 0) -> Topology:
    """``n_routers`` routers in a line (``r0`` ... ``r{n-1}``) joined by
    ``n_routers - 1`` duplex backbone links; every router is an edge router.
    Default delay law: exponential with mean 15 ms per link (ssm-interactions)."""
    delay = {"dist": "exponential", "mean": "15ms"} if delay is None else delay
    _check_common(rate, buffer, delay, n_routers, "n_routers", 2)
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("parking_lot", params={"n_routers": int(n_routers), "rate": rate, "delay": delay, "buffer": buffer,
                                        "seed": seed})
    for i in range(n_routers):
        t.add_router(f"r{i}")
    for i in range(n_routers - 1):
        t.add_duplex(f"r{i}", f"r{i + 1}", rate, draw_delay(delay, rng), buffer)
    t.edge = list(t.routers)
    return t


def random_graph(n_routers: int = 10, model: str = "waxman", p: float = 0.3, alpha: float = 0.4, beta: float = 0.2,
                 rate: Quantity = "1Gbps", delay: DelayLaw | None = None, buffer: Any = "1MB",
                 seed: int = 0) -> Topology:
    """A connected random router graph.

    ``model="gnp"``: Erdos-Renyi, each pair joined with probability ``p``.
    ``model="waxman"`` (default): routers placed uniformly in the unit
    square, pair (u, v) joined with probability ``beta * exp(-d / (alpha * L))``
    (Waxman 1988; d = distance, L = the largest distance); with no explicit
    delay law the link delay is proportional to the distance, 0 to 20 ms
    across the square. Components are then joined by one link each (between
    their closest routers for Waxman, lowest-numbered for G(n, p)), so the
    graph is always connected. Every router is an edge router.
    """
    if model not in ("waxman", "gnp"):
        raise ScenarioError("model", f"must be 'waxman' or 'gnp', got {model!r}")
    for name, v in (("p", p), ("alpha", alpha), ("beta", beta)):
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not number or not (0.0 <= v <= 1.0) or (name == "alpha" and v == 0):
            raise ScenarioError(name, f"must be a number in (0, 1], got {v!r}" if name == "alpha"
                                else f"must be a probability in [0, 1], got {v!r}")
    _check_common(rate, buffer, delay if delay is not None else 0.0, n_routers, "n_routers", 2)
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("random_graph", params={"n_routers": int(n_routers), "model": model, "p": p, "alpha": alpha,
                                         "beta": beta, "rate": rate, "delay": delay, "buffer": buffer, "seed": seed})
    for i in range(n_routers):
        t.add_router(f"r{i}")
    pos = rng.uniform(0.0, 1.0, size=(n_routers, 2))
    dist = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
    big = float(dist.max()) or 1.0
    edges = []
    for i in range(n_routers):
        for j in range(i + 1, n_routers):
            u = rng.uniform()
            prob = p if model == "gnp" else beta * math.exp(-dist[i, j] / (alpha * big))
            if u < prob:
                edges.append((i, j))
    # Join components deterministically.
    parent = list(range(n_routers))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        parent[find(i)] = find(j)
    while True:
        comps: dict[int, list[int]] = {}
        for i in range(n_routers):
            comps.setdefault(find(i), []).append(i)
        if len(comps) == 1:
            break
        groups = sorted(comps.values())
        a, b = groups[0], groups[1]
        if model == "waxman":
            i, j = min(((x, y) for x in a for y in b), key=lambda e: (dist[e[0], e[1]], e))
        else:
            i, j = a[0], b[0]
        edges.append((min(i, j), max(i, j)))
        parent[find(i)] = find(j)
    for i, j in sorted(edges):
        d = draw_delay(delay, rng) if delay is not None else 0.020 * dist[i, j] / math.sqrt(2.0)
        t.add_duplex(f"r{i}", f"r{j}", rate, d, buffer)
    t.edge = list(t.routers)
    return t


def tree(depth: int = 2, fanout: int = 3, rate: Quantity = "1Gbps", leaf_rate: Quantity | None = None,
         delay: DelayLaw = "5ms", buffer: Any = "1MB", seed: int = 0) -> Topology:
    """A balanced tree of routers, ``fanout`` children per router, ``depth``
    levels below the root; hosts attach at the leaves (the edge routers).
    Links into the leaves run at ``leaf_rate`` (default ``rate``)."""
    _check_common(rate, buffer, delay, depth, "depth", 1)
    if isinstance(fanout, bool) or not isinstance(fanout, (int, np.integer)) or fanout < 1:
        raise ScenarioError("fanout", f"must be an integer >= 1, got {fanout!r}")
    if leaf_rate is not None:
        parse_rate(leaf_rate, "leaf_rate")
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("tree", params={"depth": int(depth), "fanout": int(fanout), "rate": rate, "leaf_rate": leaf_rate,
                                 "delay": delay, "buffer": buffer, "seed": seed})
    t.add_router("r0")
    level = ["r0"]
    for d in range(1, depth + 1):
        nxt = []
        for parent_name in level:
            for k in range(fanout):
                name = f"{parent_name}.{k}"
                t.add_router(name)
                r = leaf_rate if (d == depth and leaf_rate is not None) else rate
                t.add_duplex(parent_name, name, r, draw_delay(delay, rng), buffer)
                nxt.append(name)
        level = nxt
    t.edge = level
    return t


def transit_stub(transit_domains: int = 2, transit_routers: int = 3, stubs_per_transit: int = 2,
                 stub_routers: int = 3, transit_rate: Quantity = "10Gbps", stub_rate: Quantity = "1Gbps",
                 transit_delay: DelayLaw | None = None, stub_delay: DelayLaw | None = None, buffer: Any = "2MB",
                 seed: int = 0) -> Topology:
    """A GT-ITM-style transit-stub network (Zegura, Calvert & Bhattacharjee
    1996). ``transit_domains`` domains of ``transit_routers`` routers each,
    every domain a ring (plus one chord when it has more than three routers);
    domains joined in a ring through their first routers. Every transit
    router has ``stubs_per_transit`` stub domains of ``stub_routers`` routers,
    each stub a chain whose head joins its transit router. Stub routers are
    the edge routers. Default delays: exponential, mean 10 ms in the transit
    core, 2 ms in the stubs."""
    transit_delay = {"dist": "exponential", "mean": "10ms"} if transit_delay is None else transit_delay
    stub_delay = {"dist": "exponential", "mean": "2ms"} if stub_delay is None else stub_delay
    _check_common(transit_rate, buffer, transit_delay, transit_domains, "transit_domains", 1)
    _check_common(stub_rate, buffer, stub_delay, transit_routers, "transit_routers", 1)
    for name, v in (("stubs_per_transit", stubs_per_transit), ("stub_routers", stub_routers)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ScenarioError(name, f"must be an integer >= 1, got {v!r}")
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("transit_stub", params={"transit_domains": transit_domains, "transit_routers": transit_routers,
                                         "stubs_per_transit": stubs_per_transit, "stub_routers": stub_routers,
                                         "transit_rate": transit_rate, "stub_rate": stub_rate,
                                         "transit_delay": transit_delay, "stub_delay": stub_delay,
                                         "buffer": buffer, "seed": seed})
    for d in range(transit_domains):
        names = [f"t{d}.{i}" for i in range(transit_routers)]
        for n in names:
            t.add_router(n)
        if transit_routers > 1:
            ring = list(pairwise(names)) + ([(names[-1], names[0])] if transit_routers > 2 else [])
            if transit_routers > 3:
                ring.append((names[0], names[transit_routers // 2]))
            for a, b in ring:
                t.add_duplex(a, b, transit_rate, draw_delay(transit_delay, rng), buffer)
    if transit_domains > 1:
        heads = [f"t{d}.0" for d in range(transit_domains)]
        pairs = list(pairwise(heads)) + ([(heads[-1], heads[0])] if transit_domains > 2 else [])
        for a, b in pairs:
            t.add_duplex(a, b, transit_rate, draw_delay(transit_delay, rng), buffer)
    for d in range(transit_domains):
        for i in range(transit_routers):
            tr = f"t{d}.{i}"
            for s in range(stubs_per_transit):
                prev = tr
                for k in range(stub_routers):
                    name = f"s{d}.{i}.{s}.{k}"
                    t.add_router(name)
                    t.add_duplex(prev, name, stub_rate, draw_delay(stub_delay, rng), buffer)
                    t.edge.append(name)
                    prev = name
    return t


def internet_like(n_routers: int = 30, m: int = 2, rate: Quantity = "1Gbps", delay: DelayLaw | None = None,
                  buffer: Any = "2MB", edge_degree: int = 0, seed: int = 0) -> Topology:
    """An Internet-like router graph by preferential attachment
    (Barabasi-Albert 1999): start from a clique of ``m + 1`` routers, each
    new router joins ``m`` distinct existing routers chosen with probability
    proportional to their degree, giving the heavy-tailed degree
    distribution of measured router graphs. Edge routers: those of degree at
    most ``edge_degree`` (default ``m``: the stub-like routers), or every
    router if none qualifies. Default delay: exponential, mean 5 ms."""
    delay = {"dist": "exponential", "mean": "5ms"} if delay is None else delay
    _check_common(rate, buffer, delay, n_routers, "n_routers", 2)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m < n_routers:
        raise ScenarioError("m", f"must be an integer in [1, n_routers), got {m!r}")
    rng = rng_for(seed, STREAM_TOPOLOGY)
    t = Topology("internet_like", params={"n_routers": n_routers, "m": m, "rate": rate, "delay": delay,
                                          "buffer": buffer, "edge_degree": edge_degree, "seed": seed})
    for i in range(n_routers):
        t.add_router(f"r{i}")
    edges = [(i, j) for i in range(m + 1) for j in range(i + 1, m + 1)]
    degree = [m] * (m + 1) + [0] * (n_routers - m - 1)
    for v in range(m + 1, n_routers):
        w = np.asarray(degree[:v], dtype=float)
        chosen = rng.choice(v, size=m, replace=False, p=w / w.sum())
        for u in sorted(int(x) for x in chosen):
            edges.append((u, v))
            degree[u] += 1
            degree[v] += 1
    for i, j in edges:
        t.add_duplex(f"r{i}", f"r{j}", rate, draw_delay(delay, rng), buffer)
    thr = edge_degree or m
    t.edge = [f"r{i}" for i in range(n_routers) if degree[i] <= thr] or list(t.routers)
    return t


GENERATORS: dict[str, Callable[..., Topology]] = {
    "dumbbell": dumbbell,
    "parking_lot": parking_lot,
    "random_graph": random_graph,
    "tree": tree,
    "transit_stub": transit_stub,
    "internet_like": internet_like,
}


def make_topology(kind: str, **params: Any) -> Topology:
    """A topology by generator name (``GENERATORS``) and its parameters."""
    if kind not in GENERATORS:
        from .scenario import _suggest

        raise ScenarioError("topology.kind", f"unknown generator {kind!r}{_suggest(kind, GENERATORS)}; "
                                             f"known: {', '.join(GENERATORS)}")
    try:
        return GENERATORS[kind](**params)
    except TypeError as e:
        raise ScenarioError("topology", f"{kind}: {e}") from None


def hops(path: Sequence[str], backbone: Sequence[str]) -> int:
    """Backbone links on a path (a list of link names)."""
    b = set(backbone)
    return sum(1 for name in path if name in b)
