"""Workloads: for each flow, a pre-generated list of files (size, start time).

File-size laws (:class:`SizeLaw`, all sizes in bytes, at least 1):

- ``Pareto(mean, shape)``: classical Pareto, P(X > x) = (x_m / x)^shape for
  x >= x_m, with the scale x_m = mean (shape - 1) / shape so that the mean
  is ``mean`` (shape > 1). ssm-interactions uses Pareto sizes with a 1 MB
  mean and does not give the shape; the default 1.5 is our choice (finite
  mean, infinite variance: the heavy tail the paper wants without the
  near-divergent sample means of shapes close to 1).
- ``InternetSizes()``: the SURGE web file-size model (P. Barford and
  M. Crovella, "Generating Representative Web Workloads for Network and
  Server Performance Evaluation", SIGMETRICS 1998): a lognormal body
  (mu = 9.357, sigma = 1.318 on ln bytes) spliced to a Pareto tail
  (k = 133 KB, alpha = 1.1) at k: a draw from the body above k is replaced
  by a draw from the tail, so the tail carries the body's probability mass
  above k (about 3.2 %). The splicing rule is ours; the four parameters are
  the paper's. ``max_size`` truncates (default 4.7 GB): alpha = 1.1 has no
  variance and occasionally draws absurd sizes.
- ``Fixed(size)``: every file the same (e.g. the paper's 4.7 GB long-lived
  files).

Arrival processes: files of a flow arrive with exponential inter-arrival
times of mean ``interarrival`` (a Poisson process), the first one an
exponential time after ``start``. A file that arrives while earlier files of
the flow are still being sent waits behind them (one TCP connection per
flow; see ``AppSpec::Files`` in the core).

Long-lived flows: either ``LongLived(size=None)``, unlimited data from the
flow's start (a bulk sender), or ``LongLived(size, interarrival)``: large
files (4.7 GB in the paper) with their own inter-arrival times. A schedule
``active=[(t0, t1), ...]`` restricts when a long-lived flow receives files,
so the number of concurrently active long-lived flows can vary over time
(:func:`staggered_schedule` builds the common "n(t) flows" pattern).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from .errors import ScenarioError
from .units import Quantity, parse_size, parse_time


class SizeLaw:
    """A file-size distribution."""

    kind = "size"

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def mean(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


def _pos_number(v: Any, name: str, minimum: float = 0.0, strict: bool = True) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise ScenarioError(name, f"expected a number, got {v!r}")
    if (v <= minimum) if strict else (v < minimum):
        raise ScenarioError(name, f"must be {'>' if strict else '>='} {minimum:g}, got {v!r}")
    return float(v)


@dataclass
class Pareto(SizeLaw):
    """Pareto file sizes with the given mean (bytes) and shape (> 1)."""

    mean_size: Quantity = "1MB"
    shape: float = 1.5
    kind = "pareto"

    def __post_init__(self) -> None:
        self._mean = float(parse_size(self.mean_size, "mean_size"))
        if self._mean < 1:
            raise ScenarioError("mean_size", f"must be at least 1 byte, got {self.mean_size!r}")
        _pos_number(self.shape, "shape", 1.0)

    @property
    def scale(self) -> float:
        """x_m = mean (shape - 1) / shape."""
        return self._mean * (self.shape - 1.0) / self.shape

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = rng.uniform(size=n)
        # Inverse CDF on 1 - u in (0, 1]: never divides by zero.
        x = self.scale / np.power(1.0 - u, 1.0 / self.shape)
        return np.maximum(1, np.rint(x)).astype(np.int64)

    def mean(self) -> float:
        return self._mean

    def to_dict(self) -> dict:
        return {"kind": "pareto", "mean_size": self.mean_size, "shape": self.shape}


@dataclass
class InternetSizes(SizeLaw):
    """SURGE web file sizes: lognormal body, Pareto tail (see module doc)."""

    mu: float = 9.357
    sigma: float = 1.318
    tail_k: Quantity = 133000
    tail_alpha: float = 1.1
    max_size: Quantity | None = "4.7GB"
    kind = "internet"

    def __post_init__(self) -> None:
        _pos_number(self.sigma, "sigma")
        _pos_number(self.tail_alpha, "tail_alpha")
        self._k = float(parse_size(self.tail_k, "tail_k"))
        self._max = float(parse_size(self.max_size, "max_size")) if self.max_size is not None else math.inf
        if self._max < self._k:
            raise ScenarioError("max_size", "must be at least tail_k")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        body = rng.lognormal(self.mu, self.sigma, size=n)
        u = rng.uniform(size=n)
        tail = self._k / np.power(1.0 - u, 1.0 / self.tail_alpha)
        x = np.where(body > self._k, tail, body)
        x = np.minimum(x, self._max)
        return np.maximum(1, np.rint(x)).astype(np.int64)

    def tail_probability(self) -> float:
        """P(size > k) = P(body > k)."""
        z = (math.log(self._k) - self.mu) / self.sigma
        return 0.5 * math.erfc(z / math.sqrt(2.0))

    def mean(self) -> float:
        """Mean of the spliced law (untruncated tail if max_size is None)."""
        k, mu, s, a = self._k, self.mu, self.sigma, self.tail_alpha
        z = (math.log(k) - mu - s * s) / s
        body_part = math.exp(mu + s * s / 2) * 0.5 * math.erfc(-z / math.sqrt(2.0))  # E[X; X <= k]
        p = self.tail_probability()
        if math.isinf(self._max):
            tail_mean = a * k / (a - 1) if a > 1 else math.inf
        else:  # E[min(T, M)] for Pareto(k, a)
            m = self._max
            tail_mean = (a * k / (a - 1)) * (1 - (k / m) ** (a - 1)) + m * (k / m) ** a if a != 1 else \
                k * (1 + math.log(m / k))
        return body_part + p * tail_mean

    def to_dict(self) -> dict:
        return {"kind": "internet", "mu": self.mu, "sigma": self.sigma, "tail_k": self.tail_k,
                "tail_alpha": self.tail_alpha, "max_size": self.max_size}


@dataclass
class Fixed(SizeLaw):
    size: Quantity = "4.7GB"
    kind = "fixed"

    def __post_init__(self) -> None:
        self._size = int(parse_size(self.size, "size"))
        if self._size < 1:
            raise ScenarioError("size", "must be at least 1 byte")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self._size, dtype=np.int64)

    def mean(self) -> float:
        return float(self._size)

    def to_dict(self) -> dict:
        return {"kind": "fixed", "size": self.size}


SIZE_LAWS = {"pareto": Pareto, "internet": InternetSizes, "fixed": Fixed}


def size_law(v: Any, field_: str = "sizes") -> SizeLaw:
    """A size law from an object or a table ``{kind = "pareto", ...}``."""
    if isinstance(v, SizeLaw):
        return v
    if not isinstance(v, dict) or v.get("kind") not in SIZE_LAWS:
        raise ScenarioError(f"{field_}.kind", f"expected one of {', '.join(SIZE_LAWS)}, got {v!r}")
    args = {k: x for k, x in v.items() if k != "kind"}
    try:
        return SIZE_LAWS[v["kind"]](**args)
    except TypeError as e:
        raise ScenarioError(field_, str(e)) from None
    except ScenarioError as e:
        raise ScenarioError(f"{field_}.{e.field}", e.problem) from None


def poisson_arrivals(rng: np.random.Generator, mean_gap: float, start: float, end: float,
                     first_at_start: bool = False) -> np.ndarray:
    """Arrival times in [start, end) of a Poisson process with mean gap
    ``mean_gap`` (seconds); the first at ``start`` if ``first_at_start``,
    else one exponential gap after it."""
    if mean_gap <= 0:
        raise ScenarioError("interarrival", f"must be > 0, got {mean_gap!r}")
    out = []
    t = start if first_at_start else start + rng.exponential(mean_gap)
    while t < end:
        out.append(t)
        t += rng.exponential(mean_gap)
    return np.asarray(out, dtype=float)


@dataclass
class ShortLived:
    """Files drawn from ``sizes`` arriving as a Poisson process (mean gap
    ``interarrival``) from ``start`` to the end of the run."""

    sizes: Any = field(default_factory=Pareto)
    interarrival: Quantity = "1s"
    kind = "short"

    def files(self, rng: np.random.Generator, start: float, end: float) -> list[tuple[int, float]]:
        law = size_law(self.sizes)
        times = poisson_arrivals(rng, parse_time(self.interarrival, "interarrival"), start, end)
        sizes = law.sample(rng, len(times))
        return [(int(s), float(t)) for s, t in zip(sizes, times, strict=True)]

    def to_dict(self) -> dict:
        return {"kind": "short", "sizes": size_law(self.sizes).to_dict(), "interarrival": self.interarrival}


@dataclass
class LongLived:
    """Unlimited data (``size=None``) or large files of ``size`` bytes
    arriving with mean gap ``interarrival``, the first at the flow's start
    (``first_at_start``, default) or one gap later. ``active``: optional
    list of ``(t0, t1)`` windows outside which no file arrives."""

    size: Quantity | None = "4.7GB"
    interarrival: Quantity | None = "120s"
    first_at_start: bool = True
    active: Sequence[tuple] | None = None
    kind = "long"

    def files(self, rng: np.random.Generator, start: float, end: float) -> list[tuple[int, float]] | None:
        if self.size is None:
            return None
        size = int(parse_size(self.size, "size"))
        windows = [(start, end)] if self.active is None else \
            [(max(start, parse_time(a, "active")), min(end, parse_time(b, "active"))) for a, b in self.active]
        out: list[tuple[int, float]] = []
        for a, b in windows:
            if b <= a:
                continue
            if self.interarrival is None:
                out.append((size, a))
                continue
            times = poisson_arrivals(rng, parse_time(self.interarrival, "interarrival"), a, b, self.first_at_start)
            out.extend((size, float(t)) for t in times)
        return out

    def to_dict(self) -> dict:
        return {"kind": "long", "size": self.size, "interarrival": self.interarrival,
                "first_at_start": self.first_at_start,
                "active": [list(w) for w in self.active] if self.active else None}


def staggered_schedule(
    n_flows: int, levels: Sequence[tuple[float, int]], end: float
) -> list[list[tuple[float, float]]]:
    """Active windows making the number of long-lived flows follow
    ``levels``: a list of ``(time, n)`` steps (n flows active from that time
    until the next step). Flow i is active while i < n(t). Returns one
    window list per flow (for ``LongLived(active=...)``)."""
    if not levels:
        raise ScenarioError("levels", "empty schedule")
    out: list[list[tuple[float, float]]] = [[] for _ in range(n_flows)]
    steps = sorted((float(t), int(n)) for t, n in levels) + [(float(end), 0)]
    for (t0, n), (t1, _) in pairwise(steps):
        if n < 0 or n > n_flows:
            raise ScenarioError("levels", f"number of flows {n} outside [0, {n_flows}]")
        for i in range(n):
            if out[i] and abs(out[i][-1][1] - t0) < 1e-12:
                out[i][-1] = (out[i][-1][0], t1)
            else:
                out[i].append((t0, t1))
    return out


def workload_from_dict(v: Any, field_: str = "workload") -> Any:
    if isinstance(v, (ShortLived, LongLived)):
        return v
    if not isinstance(v, dict) or v.get("kind") not in ("short", "long"):
        raise ScenarioError(f"{field_}.kind", f"expected 'short' or 'long', got {v!r}")
    args = {k: x for k, x in v.items() if k != "kind"}
    try:
        if v["kind"] == "short":
            if "sizes" in args:
                args["sizes"] = size_law(args["sizes"], f"{field_}.sizes")
            return ShortLived(**args)
        if args.get("active"):
            args["active"] = [tuple(w) for w in args["active"]]
        return LongLived(**args)
    except TypeError as e:
        raise ScenarioError(field_, str(e)) from None
