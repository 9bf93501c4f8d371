"""Aggregation across seeds: means with Student-t confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["aggregate", "t_interval", "METRICS", "ID_COLUMNS"]

#: Per-run metric columns of Campaign.results() (plus goodput_bps.<flow>).
METRICS = ["total_goodput_bps", "utilization", "drops", "queue_mean_packets", "retransmits", "timeouts",
           "jain_index"]
#: Columns of Campaign.results() that are neither parameters nor metrics (``sim_s``: the old name of
#: ``wall_s``, in tables saved from older versions).
ID_COLUMNS = ["seed", "key", "status", "version", "wall_s", "sim_s", "events", "bottleneck", "error"]


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, half-width, standard deviation, n) of the two-sided Student-t
    interval ``mean ± t_{1-a/2, n-1} s / sqrt(n)``; the half-width is NaN for n < 2."""
    from scipy import stats

    xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan, math.nan, n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1))
    return mean, t * sd / math.sqrt(n), sd, n


def aggregate(df: pd.DataFrame, by: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
              confidence: float = 0.95) -> pd.DataFrame:
    """Group the tidy results by parameters (default: every column that is
    neither a metric nor an id, i.e. all swept parameters) and give, per
    metric, ``<m>.mean``, ``<m>.ci_low``, ``<m>.ci_high``, ``<m>.std`` and
    the number of seeds ``n``."""
    import pandas as pd

    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must be in (0, 1), got {confidence}")
    if len(df) == 0:
        return pd.DataFrame()
    if metrics is None:
        metrics = [m for m in METRICS if m in df.columns] + [c for c in df.columns if c.startswith("goodput_bps.")]
    if by is None:
        by = [c for c in df.columns if c not in ID_COLUMNS and c not in METRICS and c not in metrics
              and not c.startswith("goodput_bps.")]
    for c in list(by) + list(metrics):
        if c not in df.columns:
            raise KeyError(f"no column {c!r}; columns: {', '.join(map(str, df.columns))}")
    rows = []
    groups = df.groupby(list(by), sort=False, dropna=False) if by else [((), df)]
    for keys, g in groups:
        if not isinstance(keys, tuple):
            keys = (keys,)
        row = dict(zip(by, keys, strict=True))  # one key per grouping column
        row["n"] = len(g)
        for m in metrics:
            mean, half, sd, _ = t_interval(g[m].tolist(), confidence)
            row[f"{m}.mean"] = mean
            row[f"{m}.ci_low"] = mean - half
            row[f"{m}.ci_high"] = mean + half
            row[f"{m}.std"] = sd
        rows.append(row)
    return pd.DataFrame(rows)
