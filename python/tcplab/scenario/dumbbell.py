"""The dumbbell: :func:`dumbbell` builds a :class:`~tcplab.scenario.Scenario` of the papers'
single-bottleneck network from a few parameters, kept on a :class:`DumbbellParams` the scenario
carries (``sc.dumbbell``) with the facts derived from them (capacity, BDP, buffer, access delays, path
RTTs) and the ``[dumbbell]`` table of its scenario file. ``Dumbbell`` is the same function under the
name it had when it was a class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

from ..errors import ScenarioError, UnitError, shown
from ..units import (
    Buffer,
    Quantity,
    bdp_packets,
    parse_buffer,
    parse_count,
    parse_rate,
    parse_size,
    parse_time,
    python_scalar,
)
from .checks import (
    ACCESS_JITTER_STREAM,
    ACCESS_RATE_FACTOR,
    DEFAULT_SAMPLE_INTERVAL,
    DUMBBELL_BYTES_PER_FLOW,
    MAX_DUMBBELL_FLOWS,
    MAX_PACKET_SIZE,
    MAX_RATE_BPS,
    UNIFORM_ACCESS_DELAY_MAX,
    UNLIMITED_QUEUE,
    _gb,
    _loss_spec,
    _memory_budget,
    _nonneg_time,
    _pos_rate,
    _pos_time,
    _queue_spec,
    _queue_table,
    _suggest,
)
from .corecheck import generic_field
from .model import FLOW_KEYS, Flow, Link, Node
from .scenario import Scenario


@dataclass
class DumbbellParams:
    """The parameters of a dumbbell (the keys of a ``[dumbbell]`` table, as
    :func:`dumbbell` documents them) and the facts derived from them.

    Nothing is checked when it is made: each fact checks the parameters it
    reads, naming the key in a :class:`~tcplab.errors.ScenarioError`. Facts
    that depend on the run's seed (the ``"uniform"`` access delays, the
    ``access_jitter`` offsets) take it as an argument.
    """

    n_flows: int
    bottleneck_rate: Quantity
    rtt: Quantity
    buffer: Quantity | Buffer | None
    loss: Any = None
    reverse_loss: Any = None
    algorithm: str | Sequence[str] = "newreno"
    params: Mapping | Sequence[Mapping] | None = None
    recovery: str | Sequence[str] | None = None
    start: Quantity | Sequence[Quantity] = 0.0
    access_rate: Quantity | None = None
    access_delay: str | Quantity | Sequence[Quantity] = "spread"
    access_jitter: Quantity = 0.0
    packet_size: Quantity = 1500
    header_size: Quantity | None = None
    ack_size: Quantity | None = None
    accounting: str = "ns2"
    flow_options: Mapping[str, Any] | None = None
    queue: Mapping[str, Any] | None = None
    reverse_queue: Mapping[str, Any] | None = None
    source: Mapping[str, Any] | Sequence[Mapping[str, Any] | str | None] | None = None
    #: The parameters above, in order: a Scenario carrying this object reads and sets them as its own.
    PARAMETERS: ClassVar[tuple[str, ...]] = ()  # (set below the class, from its fields)
    #: The facts a Scenario carrying this object reads as its own (:meth:`shown_as`).
    FACTS: ClassVar[tuple[str, ...]] = ("capacity_bps", "rtt_s", "packet_bytes", "bdp_packets", "buffer_limit",
                                        "buffer_packets", "access_rate_bps", "access_jitter_s", "field_of",
                                        "builder_params")
    #: The facts that depend on the run's seed, read through a scenario with its seed.
    SEEDED_FACTS: ClassVar[tuple[str, ...]] = ("access_delays", "access_jitters", "path_rtt")

    def __post_init__(self) -> None:
        # (tables copied, so the caller's dict can change without changing this dumbbell)
        for k in ("flow_options", "queue", "reverse_queue"):
            v = getattr(self, k)
            if isinstance(v, Mapping):
                setattr(self, k, dict(v))

    def shows(self, name: str) -> bool:
        """Whether a Scenario carrying this object shows ``name`` as its own attribute."""
        return name in self.PARAMETERS or name in self.FACTS or name in self.SEEDED_FACTS

    def shown_as(self, name: str, seed: Callable[[], int]) -> Any:
        """``name`` as a scenario carrying this object shows it: a parameter or a fact, the seeded facts with
        the scenario's seed (``seed()``): ``sc.access_delays``, ``sc.access_jitters()``, ``sc.path_rtt(i)``
        (as when the dumbbell was a Scenario subclass)."""
        if name == "access_delays":
            return self.access_delays(seed())
        if name == "access_jitters":
            return lambda: self.access_jitters(seed())
        if name == "path_rtt":
            return lambda i: self.path_rtt(i, seed())
        return getattr(self, name)

    # -- parameter resolution ------------------------------------------------
    def n(self) -> int:
        """``n_flows`` checked: 1 to MAX_DUMBBELL_FLOWS."""
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
        n = self.n()
        if isinstance(value, (list, tuple)):
            if len(value) != n:
                raise ScenarioError(key, f"expected one value for all flows or a list of {n} (one per flow), "
                                         f"got {len(value)}")
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
        return parse_rate(self.access_rate, "access_rate")  # (its range is the core's to check)

    @property
    def access_jitter_s(self) -> float:
        """``access_jitter`` in seconds (0: none)."""
        return _nonneg_time(self.access_jitter, "access_jitter")

    def access_jitters(self, seed: int) -> list[float]:
        """Per flow i (0-based): the offset added to sender i's access delay, seconds, drawn uniform
        in [0, ``access_jitter``) from ``default_rng([seed, ACCESS_JITTER_STREAM])``; all 0 without jitter."""
        n = self.n()
        jitter = self.access_jitter_s
        if jitter == 0:
            return [0.0] * n
        import numpy as np

        d = np.random.default_rng([seed, ACCESS_JITTER_STREAM]).uniform(0.0, jitter, size=n)
        return [float(x) for x in d]

    def access_delays(self, seed: int) -> list[tuple[float, float]]:
        """Per flow i (0-based): (sender access delay, receiver access delay), seconds; the sender's
        includes its ``access_jitter`` offset."""
        base = self._base_access_delays(seed)
        if self.access_jitter_s == 0:
            return base
        return [(s + j, r) for (s, r), j in zip(base, self.access_jitters(seed), strict=True)]

    def _base_access_delays(self, seed: int) -> list[tuple[float, float]]:
        """``access_delay``'s delays, before the jitter."""
        n = self.n()
        ad = self.access_delay
        if isinstance(ad, str) and ad.strip().lower() == "spread":
            return [(2.5e-3 * i / n, 2.5e-3 * i / n) for i in range(1, n + 1)]
        if isinstance(ad, str) and ad.strip().lower() == "uniform":
            import numpy as np

            d = np.random.default_rng(seed).uniform(0.0, UNIFORM_ACCESS_DELAY_MAX, size=(2, n))
            return [(float(d[0, i]), float(d[1, i])) for i in range(n)]
        if isinstance(ad, (list, tuple)):
            vals = self._per_flow(ad, "access_delay")
            out = [parse_time(v, f"access_delay[{i}]") for i, v in enumerate(vals)]
            return [(v, v) for v in out]
        bad = UnitError("access_delay", f"expected 'spread', 'uniform', a time such as '2.5ms' "
                                        f"or a list of {n} times, got {shown(ad)}")
        if not isinstance(ad, str) and isinstance(ad, Sequence):  # not a list or tuple: not one time either
            raise bad
        try:
            v = parse_time(ad, "access_delay")
        except UnitError:
            raise bad from None
        return [(v, v)] * n

    def path_rtt(self, i: int, seed: int) -> float:
        """Round-trip propagation delay of flow i (0-based): rtt + 2 x both access delays."""
        a, b = self.access_delays(seed)[i]
        return self.rtt_s + 2 * (a + b)

    def field_of(self, path: str) -> str:
        """The dumbbell key behind a path of its run description, as the core names it in an error
        (``links[0].rate_bps`` -> ``bottleneck_rate``, ``links[7].delay`` -> ``access_delay``,
        ``flows[2].cc.params.beta`` -> ``params.beta``, ``flows[0].dupthresh`` -> ``flow_options.dupthresh``;
        a per-flow list's element where the key was given as one: ``algorithm[2]``). The links are built
        in :meth:`build`'s order: the bottleneck ``r1-r2``, its reverse, then four access links a flow."""
        if path in ("flows", "links", "nodes"):
            return "n_flows"
        m = re.match(r"^links\[(\d+)\]\.?([A-Za-z_]*)(.*)$", path)
        if m:
            k, head, rest = int(m.group(1)), m.group(2), m.group(3)
            if k >= 2:  # an access link: flow (k - 2) // 4's
                key = {"rate_bps": "access_rate", "delay": "access_delay"}.get(head, path)
                return self._per_flow_key(key, (k - 2) // 4, "")
            side = "" if k == 0 else "reverse_"
            if head == "queue":
                limit = rest in (".limit_packets", ".limit_bytes")
                if k == 0 and limit and not parse_buffer(self.buffer, "buffer").unlimited:
                    return "buffer"  # (a queue table gives the limit only where the buffer is unlimited)
                return f"{side}queue{rest.replace('.params', '', 1)}"
            if head == "loss" and rest == ".p" and not isinstance(getattr(self, f"{side}loss"), Mapping):
                return f"{side}loss"  # (given as a bare probability)
            return {"rate_bps": "bottleneck_rate", "delay": "rtt", "loss": f"{side}loss{rest}"}.get(head, path)
        m = re.match(r"^(flows\[(\d+)\])\.(.*)$", generic_field(path))
        if not m:
            return path
        i, rest = int(m.group(2)), m.group(3)
        key = re.split(r"[.\[]", rest)[0]  # "drop_segments[0]" is about drop_segments
        if key in FLOW_OPTION_KEYS:
            return f"flow_options.{rest}"
        if key in DUMBBELL_KEYS:
            return self._per_flow_key(key, i, rest[len(key):])
        return path

    def in_own_words(self, path: str, problem: str) -> tuple[str, str]:
        """The core's refusal of ``path`` as the dumbbell's key (:meth:`field_of`) and problem: a limit on
        the bottleneck's delay is said to be on each direction's half of ``rtt``, as :meth:`build` splits it."""
        field = self.field_of(path)
        return field, problem + (" (of each direction's delay, rtt / 2)" if field == "rtt" else "")

    def _per_flow_key(self, key: str, i: int, rest: str) -> str:
        """``key`` (and what follows it), as ``key[i]`` where the key was given as a list, one per flow."""
        if key in (*_PER_FLOW_KEYS, "access_delay") and isinstance(getattr(self, key, None), (list, tuple)):
            return f"{key}[{i}]{rest}"
        return f"{key}{rest}"

    def flow(self, i: int) -> Flow:
        """Flow i (0-based). For all flows use :meth:`flows`, which
        resolves the per-flow lists once (this resolves them for one flow)."""
        return self.flows(only=i)[0]

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

    def flows(self, only: int | None = None) -> list[Flow]:
        """Every flow (or flow ``only``) as a :class:`Flow`.

        The per-flow lists (algorithm, recovery, start, params, source) are
        resolved once here, not once per flow: building N flows is O(N)
        (it was O(N^2) when each flow re-expanded every list, 18 s for
        20,000 flows)."""
        n = self.n()
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

    def build(self, seed: int) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
        """The core's nodes, links, routes (none) and flows of this dumbbell, its access delays drawn
        from ``seed`` (the run's); errors name the dumbbell's keys."""
        n = self.n()
        self._check_memory(n)
        c = self.capacity_bps
        rtt = self.rtt_s
        queue = _queue_spec(self.queue, self.buffer_limit, "queue", "buffer")
        reverse_queue = _queue_spec(self.reverse_queue, UNLIMITED_QUEUE, "reverse_queue", None)
        acc = self.access_rate_bps
        delays = self.access_delays(seed)
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
        return nodes, links, [], self._flow_specs()

    def _flow_specs(self) -> list[dict]:
        """The core's flows; an error about ``flows[i].<key>`` names the dumbbell key that set it."""
        flows = []
        for i, flow in enumerate(self.flows()):
            try:
                flows.append(flow.to_spec(f"flows[{i}]", f"flow{i + 1}"))
            except ScenarioError as e:
                raise type(e)(self.field_of(e.field), e.problem) from None
        return flows

    def nodes(self) -> list[Node]:
        """The dumbbell's nodes as :class:`Node` objects (``r1``, ``r2``, the senders, the receivers)."""
        return [Node(**n) for n in self.build(0)[0]]

    def links(self, seed: int) -> list[Link]:
        """The dumbbell's links as :class:`Link` objects, access delays drawn from ``seed``."""
        return [Link(ln["name"], ln["src"], ln["dst"], ln["rate_bps"], ln["delay"], _queue_buffer(ln["queue"]),
                     ln.get("loss"), _queue_table(ln["queue"]))
                for ln in self.build(seed)[1]]

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
            used = [f["recovery"] for f in self._flow_specs()]
            return [used[i] if x is None else x for i, x in enumerate(values)]
        return list(values)


DumbbellParams.PARAMETERS = tuple(f.name for f in fields(DumbbellParams))
#: The optional parameters and their defaults, in order.
_DUMBBELL_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(DumbbellParams) if f.default is not MISSING}
#: Keys of a ``[dumbbell]`` table.
DUMBBELL_KEYS = list(DumbbellParams.PARAMETERS)
#: Flow keywords that ``flow_options`` may set (the rest are dumbbell keys).
FLOW_OPTION_KEYS = [k for k in FLOW_KEYS if k not in
                    ("src", "dst", "name", "algorithm", "params", "recovery", "start",
                     "packet_size", "header_size", "ack_size", "accounting", "source")]
#: Dumbbell keys that take one value for every flow or a list with one per flow.
_PER_FLOW_KEYS = {"algorithm", "params", "recovery", "start", "source"}


def _queue_buffer(q: dict) -> Buffer | None:
    if q.get("limit_packets") is not None:
        return Buffer(packets=q["limit_packets"])
    if q.get("limit_bytes") is not None:
        return Buffer(bytes=q["limit_bytes"])
    return None


def dumbbell(
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
) -> Scenario:
    """A scenario of the single-bottleneck dumbbell of mv-highspeed (Fig. 1) and mv-buffers.

    Returns a plain :class:`Scenario` carrying the dumbbell's parameters as
    ``sc.dumbbell`` (a :class:`DumbbellParams`, with the derived facts: capacity,
    BDP, buffer, access delays, path RTTs); the network and flows are built
    from them whenever the run description is made. The run settings
    (``duration``, default ``"2000s"``; ``measure_window`` or
    ``measure_start``, default the last half; ``sample_interval``, ``seed``,
    ``trace_links``, ``loss_trace``, ``memory_limit``, ``pcap``,
    ``pcap_limit``) are :class:`Scenario`'s. The scenario is checked at once:
    a bad parameter raises :class:`~tcplab.errors.ScenarioError` naming it.

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
    params_ = DumbbellParams(
        n_flows, bottleneck_rate, rtt, buffer, loss=loss, reverse_loss=reverse_loss, algorithm=algorithm,
        params=params, recovery=recovery, start=start, access_rate=access_rate, access_delay=access_delay,
        access_jitter=access_jitter, packet_size=packet_size, header_size=header_size, ack_size=ack_size,
        accounting=accounting, flow_options=flow_options, queue=queue, reverse_queue=reverse_queue, source=source)
    sc = Scenario(duration=duration, measure_start=measure_start, measure_window=measure_window,
                  sample_interval=sample_interval, seed=seed, name=name, description=description,
                  trace_links=trace_links, loss_trace=loss_trace, memory_limit=memory_limit, pcap=pcap,
                  pcap_limit=pcap_limit, dumbbell=params_)
    # Fail fast: a dumbbell is complete once built. (The spec built to check it is kept for one taker,
    # Scenario._first_spec(): a sweep expanding its points builds each scenario once, not twice.)
    sc._fresh_spec = sc.to_spec()
    return sc


#: The name the builder had when it was a class (``tcplab.Dumbbell(...)``).
Dumbbell = dumbbell
