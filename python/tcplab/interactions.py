"""Metrics of the comparative method (ssm-interactions), computed from the
long-form tables of :func:`tcplab.generate.join_flows` /
:func:`tcplab.generate.join_files` (one row per run and flow / file).

Every function takes plain DataFrames and returns DataFrames or numbers;
none runs a simulation. Definitions:

- *backbone utilization*: mean over the backbone links of the fraction of
  the measurement window each link's transmitter was busy;
- *relative throughput* of flow i: ``T_i(run) / T_i(base)``, the same flow
  in two runs of one frozen scenario (``T`` = ``throughput_bps`` of
  :func:`~tcplab.generate.join_flows`);
- *Reno throughput degradation*: the relative throughput of the flows that
  use Reno in the mixed run, against the all-Reno run;
- *throughput CDF*: empirical CDF of per-flow throughput, with the
  fractions below and above given thresholds;
- *transfer time versus size*: mean transfer time (first packet sent to ACK
  of the last) of finished files in logarithmic size bins;
- *RTT ratio*: throughput of a 30 ms-RTT flow over that of a 300 ms-RTT
  flow, from the least-squares fit of log throughput on log base RTT
  (``T ~ RTT^-k`` gives ``(300/30)^k``). Generated scenarios rarely have
  flows at exactly 30 and 300 ms; the fit uses all flows of the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def backbone_utilization(links: pd.DataFrame, backbone: Sequence[str]) -> float:
    """Mean utilization of the named links (a Results ``links`` table)."""
    sel = links[links["name"].isin(list(backbone))]
    if len(sel) != len(set(backbone)):
        missing = sorted(set(backbone) - set(sel["name"]))
        raise KeyError(f"backbone links not in the results: {missing}")
    return float(sel["utilization"].mean())


def relative_throughput(flows: pd.DataFrame, run: str, base: str, cls: str | None = None) -> pd.DataFrame:
    """Per flow: facts, ``T_run``, ``T_base`` and ``relative`` = T_run / T_base.
    Flows that delivered nothing in the base run get NaN (not inf)."""
    a = flows[flows["run"] == run].set_index("name")
    b = flows[flows["run"] == base].set_index("name")
    if a.empty or b.empty:
        raise KeyError(f"runs {run!r} and {base!r} must both be present")
    out = a[["cls", "group", "hops", "base_rtt", "algorithm"]].copy()
    out["algorithm_base"] = b["algorithm"]
    out["T_run"] = a["throughput_bps"]
    out["T_base"] = b["throughput_bps"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["relative"] = np.where(out["T_base"] > 0, out["T_run"] / out["T_base"], np.nan)
    if cls is not None:
        out = out[out["cls"] == cls]
    return out.reset_index()


def reno_degradation(flows: pd.DataFrame, mixed: str, base: str, reno_names: Sequence[str] = ("newreno", "reno"),
                     cls: str | None = None) -> pd.DataFrame:
    """Relative throughput ``T_Reno_i(mixed) / T_Reno_i(base)`` of the flows
    that use Reno in ``mixed``."""
    rel = relative_throughput(flows, mixed, base, cls)
    return rel[rel["algorithm"].isin(list(reno_names))].reset_index(drop=True)


def cdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted values, empirical CDF at each)."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def fraction_below(values: Sequence[float], threshold: float) -> float:
    v = np.asarray(values, dtype=float)
    return float((v < threshold).mean()) if len(v) else float("nan")


def fraction_above(values: Sequence[float], threshold: float) -> float:
    v = np.asarray(values, dtype=float)
    return float((v > threshold).mean()) if len(v) else float("nan")


def size_bins(lo: float = 1e3, hi: float = 1e10, per_decade: int = 2) -> np.ndarray:
    """Logarithmic bin edges (bytes)."""
    n = int(round(np.log10(hi / lo) * per_decade))
    return np.logspace(np.log10(lo), np.log10(hi), n + 1)


def transfer_time_by_size(files: pd.DataFrame, bins: np.ndarray | None = None,
                          by: Sequence[str] = ("run",)) -> pd.DataFrame:
    """Mean transfer time of finished files per size bin (and per ``by``
    columns): ``size_lo``, ``size_hi``, ``size_mid`` (geometric), ``files``,
    ``unfinished`` (files of the bin not finished within the run),
    ``mean_transfer_time``."""
    bins = size_bins() if bins is None else np.asarray(bins, dtype=float)
    df = files.copy()
    df["bin"] = pd.cut(df["size"], bins, right=False, labels=False)
    rows = []
    for keys, g in df.groupby(list(by) + ["bin"], sort=True, dropna=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        b = int(keys[-1])
        done = g["transfer_time"].notna()
        rows.append({**dict(zip(by, keys[:-1], strict=True)), "size_lo": bins[b], "size_hi": bins[b + 1],
                     "size_mid": float(np.sqrt(bins[b] * bins[b + 1])), "files": int(done.sum()),
                     "unfinished": int((~done).sum()),
                     "mean_transfer_time": float(g.loc[done, "transfer_time"].mean()) if done.any() else np.nan})
    return pd.DataFrame(rows)


def rtt_ratio(flows: pd.DataFrame, short_rtt: float = 0.030, long_rtt: float = 0.300) -> dict:
    """Throughput ratio of a ``short_rtt`` flow to a ``long_rtt`` flow from
    the fit ``log T = a - k log RTT`` over the given flows (positive
    throughput only): ``{"k", "ratio", "flows"}``. NaN with fewer than 3
    usable flows or no RTT spread."""
    d = flows[(flows["throughput_bps"] > 0) & (flows["base_rtt"] > 0)]
    if len(d) < 3 or d["base_rtt"].nunique() < 2:
        return {"k": float("nan"), "ratio": float("nan"), "flows": int(len(d))}
    slope, _ = np.polyfit(np.log(d["base_rtt"].to_numpy()), np.log(d["throughput_bps"].to_numpy()), 1)
    k = -float(slope)
    return {"k": k, "ratio": float((long_rtt / short_rtt) ** k), "flows": int(len(d))}


def by_hops(rel: pd.DataFrame, column: str = "relative") -> pd.DataFrame:
    """Mean, median and count of ``column`` per backbone hop count."""
    return rel.groupby("hops")[column].agg(["mean", "median", "count"]).reset_index()


def group_comparison(facts: pd.DataFrame, flows: pd.DataFrame, files: pd.DataFrame | None = None,
                     groups: Sequence[str] = ()) -> pd.DataFrame:
    """The end of ``tcplab replay``: one row per protocol group and traffic
    class (and one per group over all its classes, class ``all``, when it
    has several): the algorithm(s), the number of flows, their mean and
    total goodput over the measurement window (Mbit/s), Jain's index of
    their goodputs, the loss rate (data packets dropped or lost over data
    packets sent, %), retransmissions and timeouts, and files finished of
    files. ``facts``: the frozen scenario's ``flow_frame()`` (name, cls,
    group); ``flows``/``files``: a run's Results tables (same flow order);
    ``groups``: the order of the groups (the frozen scenario's ``groups``;
    others follow in the order of their first flow)."""
    from .analysis import jain_index

    if list(flows["name"]) != list(facts["name"]):
        raise ValueError("flows: the run's flows do not match the frozen scenario's")
    df = pd.DataFrame({
        "group": facts["group"].to_numpy(), "class": facts["cls"].to_numpy(),
        "algorithm": flows["algorithm"].to_numpy(), "goodput_bps": flows["goodput_bps"].to_numpy(dtype=float),
        "sent": flows["data_packets_sent"].to_numpy(dtype=float),
        "lost": (flows["data_packets_dropped"] + flows["data_packets_lost"]).to_numpy(dtype=float),
        "retransmits": flows["retransmits"].to_numpy(dtype=np.int64),
        "timeouts": flows["timeouts"].to_numpy(dtype=np.int64),
    })
    done = np.zeros(len(df), dtype=np.int64)
    total = np.zeros(len(df), dtype=np.int64)
    if files is not None and len(files):
        fl = files["flow"].to_numpy(dtype=np.int64)
        np.add.at(total, fl, 1)
        np.add.at(done, fl, np.isfinite(files["transfer_time"].to_numpy(dtype=float)).astype(np.int64))
    df["files_done"], df["files"] = done, total

    def row(group: str, cls: str, d: pd.DataFrame) -> dict:
        g = d["goodput_bps"]
        jain = jain_index(g.clip(lower=0).fillna(0)) if len(d) else float("nan")
        return {"group": group, "class": cls, "algorithm": "/".join(dict.fromkeys(d["algorithm"])),
                "flows": len(d), "goodput_mean_mbps": g.mean() / 1e6, "goodput_total_mbps": g.sum() / 1e6,
                "jain": jain, "loss_pct": 100 * d["lost"].sum() / d["sent"].sum() if d["sent"].sum() else float("nan"),
                "retransmits": int(d["retransmits"].sum()), "timeouts": int(d["timeouts"].sum()),
                "files_done": int(d["files_done"].sum()), "files": int(d["files"].sum())}

    rows = []
    order = list(groups) + [g for g in dict.fromkeys(df["group"]) if g not in groups]
    for group in order:
        gd = df[df["group"] == group]
        if not len(gd):
            continue
        classes = list(dict.fromkeys(gd["class"]))
        rows += [row(group, c, gd[gd["class"] == c]) for c in classes]
        if len(classes) > 1:
            rows.append(row(group, "all", gd))
    return pd.DataFrame(rows)
