"""The efficiency/friendliness trade-off graph, for any base and new protocol.

Definitions (Kaneko & Katto 2005, after Shimonishi et al.; docs/papers/kk-westwood.md):

* Run 1: N flows of the **base** protocol. ``t1`` = mean throughput of the
  base flows, ``U1`` = utilization of the bottleneck.
* Run 2: the same scenario with a fraction (half) of the flows replaced by the
  **new** protocol. ``t2`` = mean throughput of the base flows that remain,
  ``U2`` = utilization of the bottleneck.
* ``L = t2 / t1`` (friendliness: how much the base flows keep) and
  ``G = U2 / U1`` (efficiency gain). Regions of the (L, G) plane:

  ========  ========  =====================
  L         G         region
  ========  ========  =====================
  < 1       < 1       negative impact
  > 1       > 1       unlikely
  < 1       > 1       probable trade-off
  > 1       < 1       improbable trade-off
  ========  ========  =====================

  The target is L = 1 with G as large as possible.

Choices (parameters): which flows are replaced (``pattern``: ``"alternate"``
replaces flows 2, 4, ... so both protocols see the same spread of paths;
``"last"`` replaces the last half); what "utilization" is (``utilization``:
``"link"`` = the core's busy fraction of the bottleneck over the
measurement window, or ``"goodput"`` = the sum of goodputs / capacity);
throughput = each flow's goodput over the measurement window.

Typical use::

    from tcplab import tradeoff
    make = tradeoff.dumbbell_maker("20Mbps", "80ms", 67, duration="300s")
    df = tradeoff.run_tradeoff(make, base="newreno", new="westwood-re", ns=[2, 4, 8])
    tradeoff.plot_tradeoff(df, path="tradeoff.png")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Protocol", "TradeoffPoint", "region", "replaced_indices", "lg_point", "point_from_summaries",
           "point_from_results", "dumbbell_maker", "tradeoff_jobs", "run_tradeoff", "plot_tradeoff", "REGIONS"]

REGIONS = {
    (False, False): "negative impact",
    (True, True): "unlikely",
    (False, True): "probable trade-off",
    (True, False): "improbable trade-off",
}


@dataclass(frozen=True)
class Protocol:
    """A flow's congestion control: core algorithm name, its parameters and loss recovery."""

    algorithm: str
    params: Mapping[str, Any] = field(default_factory=dict)
    recovery: str = "newreno"
    label: str | None = None

    @property
    def name(self) -> str:
        return self.label or self.algorithm

    @classmethod
    def of(cls, p: Protocol | str | Mapping | tuple) -> Protocol:
        if isinstance(p, Protocol):
            return p
        if isinstance(p, str):
            return cls(p)
        if isinstance(p, Mapping):
            return cls(**p)
        return cls(*p)


@dataclass
class TradeoffPoint:
    label: str
    n: int
    t1: float
    u1: float
    t2: float
    u2: float
    new_mean: float
    L: float
    G: float
    region: str
    replaced: list

    def as_dict(self) -> dict:
        return asdict(self)


def region(L: float, G: float, tol: float = 0.0) -> str:
    """Name of the (L, G) region; on an axis (|L-1| or |G-1| <= tol) says so."""
    if abs(L - 1.0) <= tol or abs(G - 1.0) <= tol:
        return "boundary"
    return REGIONS[(L > 1.0, G > 1.0)]


def replaced_indices(n: int, fraction: float = 0.5, pattern: str = "alternate") -> list[int]:
    """0-based indices of the flows the new protocol takes over in run 2:
    ``round(n x fraction)`` of them (at least 1, at most n - 1)."""
    if n < 2:
        raise ValueError(f"a trade-off needs at least 2 flows, got {n}")
    k = min(n - 1, max(1, int(math.floor(n * fraction + 0.5))))
    if pattern == "alternate":
        idx = list(range(1, n, 2))
        idx += [i for i in range(0, n, 2)][: max(0, k - len(idx))]
        return sorted(idx[:k])
    if pattern == "last":
        return list(range(n - k, n))
    raise ValueError(f"pattern must be 'alternate' or 'last', got {pattern!r}")


def lg_point(base_tput_run1: Sequence[float], util1: float, base_tput_run2: Sequence[float], util2: float
             ) -> tuple[float, float]:
    """``(L, G) = (mean(run 2 base) / mean(run 1 base), U2 / U1)``."""
    t1 = sum(base_tput_run1) / len(base_tput_run1)
    t2 = sum(base_tput_run2) / len(base_tput_run2)
    return t2 / t1, util2 / util1


def _util(goodputs: Sequence[float], link_util: float, capacity_bps: float | None, how: str) -> float:
    if how == "link":
        return float(link_util)
    if how == "goodput":
        if not capacity_bps:
            raise ValueError("utilization='goodput' needs capacity_bps")
        return float(sum(goodputs)) / capacity_bps
    raise ValueError(f"utilization must be 'link' or 'goodput', got {how!r}")


def point_from_summaries(s1: Mapping, s2: Mapping, replaced: Sequence[int], label: str = "",
                         utilization: str = "link", capacity_bps: float | None = None,
                         tol: float = 0.0) -> TradeoffPoint:
    """A point from two run summaries with ``goodput_bps`` (per flow) and
    ``utilization`` (bottleneck), e.g. ``experiments.runner.extract_summary``."""
    g1 = [float(x) for x in s1["goodput_bps"]]
    g2 = [float(x) for x in s2["goodput_bps"]]
    n = len(g1)
    if len(g2) != n:
        raise ValueError(f"runs have {n} and {len(g2)} flows")
    rep = set(replaced)
    base2 = [g2[i] for i in range(n) if i not in rep]
    new2 = [g2[i] for i in range(n) if i in rep]
    u1 = _util(g1, s1["utilization"], capacity_bps, utilization)
    u2 = _util(g2, s2["utilization"], capacity_bps, utilization)
    L, G = lg_point(g1, u1, base2, u2)
    return TradeoffPoint(label=label, n=n, t1=sum(g1) / n, u1=u1, t2=sum(base2) / len(base2), u2=u2,
                         new_mean=sum(new2) / len(new2), L=L, G=G, region=region(L, G, tol), replaced=sorted(rep))


def point_from_results(r1, r2, replaced: Sequence[int], bottleneck: str, label: str = "",
                       utilization: str = "link", capacity_bps: float | None = None) -> TradeoffPoint:
    """A point from two :class:`tcplab.Results` (e.g. reloaded with ``Results.load``)."""

    def summ(r) -> dict:
        links = r.links.set_index("name")
        return {"goodput_bps": list(r.flows["goodput_bps"]), "utilization": float(links.loc[bottleneck, "utilization"])}

    return point_from_summaries(summ(r1), summ(r2), replaced, label, utilization, capacity_bps)


def dumbbell_maker(bottleneck_rate, rtt, buffer, **dumbbell_kwargs) -> Callable[[Sequence[Protocol]], Any]:
    """A scenario factory for :func:`run_tradeoff`: a :func:`tcplab.Dumbbell`
    with one flow per protocol in the list; other Dumbbell arguments pass through."""

    def make(protos: Sequence[Protocol]):
        from tcplab import Dumbbell

        return Dumbbell(n_flows=len(protos), bottleneck_rate=bottleneck_rate, rtt=rtt, buffer=buffer,
                        algorithm=[p.algorithm for p in protos], params=[dict(p.params) for p in protos],
                        recovery=[p.recovery for p in protos], **dumbbell_kwargs)

    return make


def tradeoff_jobs(make: Callable[[Sequence[Protocol]], Any], base, new, n: int, key: str = "",
                  fraction: float = 0.5, pattern: str = "alternate") -> tuple[list, list[int]]:
    """The two runner jobs ``(key|base, key|mixed)`` of one point and the replaced indices."""
    b, w = Protocol.of(base), Protocol.of(new)
    rep = replaced_indices(n, fraction, pattern)
    sc1 = make([b] * n)
    sc2 = make([w if i in rep else b for i in range(n)])
    jobs = []
    for tag, sc in (("base", sc1), ("mixed", sc2)):
        jobs.append((f"{key}|{tag}", sc.to_spec(), "summary", {"bottleneck": sc.bottleneck_links()[0]}))
    return jobs, rep


def run_tradeoff(make: Callable[[Sequence[Protocol]], Any], base, new, ns: Sequence[int], workers: int | None = None,
                 fraction: float = 0.5, pattern: str = "alternate", utilization: str = "link",
                 capacity_bps: float | None = None, label: str | None = None, verbose: bool = False):
    """Runs both runs for every N in ``ns`` (in parallel) and returns a DataFrame of points."""
    import pandas as pd

    from tcplab.experiments.runner import run_all

    b, w = Protocol.of(base), Protocol.of(new)
    jobs, reps = [], {}
    for n in ns:
        j, rep = tradeoff_jobs(make, b, w, n, key=f"N={n}", fraction=fraction, pattern=pattern)
        jobs += j
        reps[n] = rep
    res = run_all(jobs, workers=workers, label=f"trade-off {b.name} -> {w.name}", verbose=verbose)
    pts = [point_from_summaries(res[f"N={n}|base"], res[f"N={n}|mixed"], reps[n], label or w.name, utilization,
                                capacity_bps).as_dict() for n in ns]
    return pd.DataFrame(pts)


def plot_tradeoff(points, ax=None, path: str | None = None, title: str = "", annotate: str = "n",
                  label_col: str = "label"):
    """Plots (L, G) points on the trade-off graph with its four labelled
    regions and the L = 1 target line. ``points``: a DataFrame (or list of
    dicts) with columns L, G, ``label_col`` and ``annotate`` (text next to
    each point; None for none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.DataFrame(points)
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6, 5))
    lo_l = min(0.0, float(df["L"].min()) * 0.9) if len(df) else 0.0
    hi_l = max(2.0, float(df["L"].max()) * 1.1) if len(df) else 2.0
    lo_g = min(0.8, float(df["G"].min()) - 0.05) if len(df) else 0.8
    hi_g = max(1.2, float(df["G"].max()) + 0.05) if len(df) else 1.2
    ax.set_xlim(lo_l, hi_l)
    ax.set_ylim(lo_g, hi_g)
    shade = {"negative impact": "#f4cccc", "unlikely": "#eeeeee", "probable trade-off": "#d9ead3",
             "improbable trade-off": "#fff2cc"}
    for (lx, gx), name in REGIONS.items():
        x0, x1 = (1.0, hi_l) if lx else (lo_l, 1.0)
        y0, y1 = (1.0, hi_g) if gx else (lo_g, 1.0)
        ax.fill_between([x0, x1], y0, y1, color=shade[name], zorder=0)
        ax.text((x0 + x1) / 2, y1 - (y1 - y0) * 0.06, name, ha="center", va="top", fontsize=9, color="#555555")
    ax.axvline(1.0, color="k", lw=1.2, ls="--", zorder=1, label="target L = 1")
    ax.axhline(1.0, color="k", lw=0.6, zorder=1)
    markers = "osD^v<>p*"
    # Labels are placed only where they do not land on one already placed
    # (checked in axes coordinates), above the points for the first series
    # and below them for the next, so clustered points stay readable.
    to_axes = ax.transData + ax.transAxes.inverted()
    placed: list = []
    for k, (lab, g) in enumerate(df.groupby(label_col, sort=False)):
        ax.plot(g["L"], g["G"], marker=markers[k % len(markers)], ls="-", lw=0.8, label=str(lab), zorder=3)
        if annotate and annotate in g:
            dy = 4 if k % 2 == 0 else -11
            for _, r in g.iterrows():
                x, y = to_axes.transform((r["L"], r["G"]))
                y += dy / 300.0
                if any(abs(x - px) < 0.09 and abs(y - py) < 0.035 for px, py in placed):
                    continue
                placed.append((x, y))
                ax.annotate(f"{annotate}={r[annotate]}" if annotate == "n" else str(r[annotate]), (r["L"], r["G"]),
                            textcoords="offset points", xytext=(4, dy), fontsize=7)
    ax.set_xlabel("L = t2 / t1 (base-protocol throughput kept, ratio)")
    ax.set_ylabel("G = U2 / U1 (utilization gain, ratio)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    if own:
        fig.tight_layout()
        if path:
            fig.savefig(path, dpi=120)
            plt.close(fig)
    return ax
