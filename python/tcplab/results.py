"""Results of one run as pandas tables.

:class:`Results` wraps the dict returned by ``tcplab._core.run`` (columns as
numpy arrays or lists of strings; SI units: seconds, bit/s, bytes):

``flows``
    one row per flow: ``flow`` (id = index in the spec), ``name``, ``src``,
    ``dst``, ``algorithm``, ``recovery``, ``goodput_bps`` (over the
    measurement window ``[measure_start, duration]``), ``bytes_delivered``,
    packet and ACK counters, RTT statistics, final ``srtt``, ``cwnd``,
    ``ssthresh``.
``links``
    one row per link: ``link``, ``name``, ``src``, ``dst``, ``rate_bps``,
    ``delay``, ``utilization`` (measurement window, 0..1), packet counters,
    ``drops``, queue statistics.
``files``
    one row per file: ``flow``, ``flow_name`` (joined in), ``index``,
    ``size``, ``start`` (handed to TCP), ``finish`` (last byte at the
    receiver), ``fct`` = finish - start, ``first_sent`` (first segment first
    transmitted), ``acked`` (sender got the ACK of the last segment),
    ``transfer_time`` = acked - first_sent (NaN where unfinished).
``flow_ts``
    sampled every ``sample_interval``: ``time``, ``flow``, ``flow_name``
    (categorical, joined in), ``cwnd``, ``ssthresh`` (segments; a huge value
    such as 1e9 means "unset"), ``srtt``, ``in_flight``, ``delivered_bytes``.
``queue_ts``
    ``time``, ``link``, ``link_name`` (categorical, joined in), ``packets``,
    ``bytes``.
``cc_ts``
    internal variables of the congestion controls, sampled with the other
    series, in long format: ``time``, ``flow``, ``variable`` (categorical:
    the algorithm's names, e.g. ``bs_estimate``), ``value``. Empty for
    algorithms that trace nothing. :meth:`Results.cc_vars` pivots one flow's
    variables into columns.

pandas is imported when a Results is built, not when this module is imported.
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .scenario import Scenario

__all__ = ["Results", "TABLES"]

TABLES = ("flows", "links", "files", "flow_ts", "queue_ts")
#: Tables saved when present and loaded when found (older saves lack them).
OPTIONAL_TABLES = ("cc_ts",)


def _py(v: Any) -> Any:
    """numpy scalar -> Python scalar; NaN/inf -> None (JSON has no NaN)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _frame(cols: Mapping[str, Any]) -> "pd.DataFrame":
    import numpy as np
    import pandas as pd

    data = {}
    for k, v in cols.items():
        data[k] = v if isinstance(v, np.ndarray) else list(v)
    return pd.DataFrame(data)


def _cc_frame(raw: Mapping[str, Any]) -> "pd.DataFrame":
    """The core's cc_ts columns (variable as codes plus ``variable_names``) as
    a long DataFrame with a categorical ``variable``."""
    import numpy as np
    import pandas as pd

    names = list(raw.get("variable_names", []))
    if not len(raw.get("time", [])):
        return pd.DataFrame({"time": np.zeros(0), "flow": np.zeros(0, dtype="uint32"),
                             "variable": pd.Categorical([], categories=names), "value": np.zeros(0)})
    return pd.DataFrame({
        "time": np.asarray(raw["time"]),
        "flow": np.asarray(raw["flow"]),
        "variable": pd.Categorical.from_codes(np.asarray(raw["variable"]).astype("int64"), categories=names),
        "value": np.asarray(raw["value"]),
    })


class Results:
    """The outcome of one simulation run.

    Build it from the core's dict (``Results(raw, scenario=..., spec=...)``)
    or reload a saved run with :meth:`Results.load`. Attributes ``flows``,
    ``links``, ``files``, ``flow_ts``, ``queue_ts`` are DataFrames, ``meta``
    is a dict (``events``, ``sim_time``, ``wall_s``, ``seed``), ``spec`` the
    run description that produced it and ``scenario`` the Scenario (if any).
    """

    def __init__(
        self,
        raw: Mapping[str, Any],
        scenario: "Optional[Scenario]" = None,
        spec: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
    ) -> None:
        import pandas as pd

        self.scenario = scenario
        self.spec = dict(spec) if spec is not None else None
        self.name = name or (scenario.name if scenario is not None else "run")
        self.meta: dict = {k: _py(v) for k, v in dict(raw.get("meta", {})).items()}
        self.flows = _frame(raw.get("flows", {}))
        self.links = _frame(raw.get("links", {}))
        self.files = _frame(raw.get("files", {}))
        self.flow_ts = _frame(raw.get("flow_ts", {}))
        self.queue_ts = _frame(raw.get("queue_ts", {}))
        self.cc_ts = _cc_frame(raw.get("cc_ts", {}))
        flow_names = list(self.flows["name"]) if "name" in self.flows else []
        link_names = list(self.links["name"]) if "name" in self.links else []
        if "flow" in self.flow_ts and flow_names:
            self.flow_ts["flow_name"] = pd.Categorical.from_codes(
                self.flow_ts["flow"].to_numpy().astype("int64"), categories=flow_names)
        if "link" in self.queue_ts and link_names:
            self.queue_ts["link_name"] = pd.Categorical.from_codes(
                self.queue_ts["link"].to_numpy().astype("int64"), categories=link_names)
        if "flow" in self.files and flow_names:
            self.files.insert(1, "flow_name", [flow_names[int(i)] for i in self.files["flow"]])

    # -- measurement settings ------------------------------------------------
    @property
    def measure_start(self) -> Optional[float]:
        return None if self.spec is None else float(self.spec.get("measure_start", 0.0))

    @property
    def duration(self) -> Optional[float]:
        return None if self.spec is None else float(self.spec["duration"])

    def _flow_id(self, flow: Union[int, str]) -> int:
        if isinstance(flow, str):
            hits = self.flows.index[self.flows["name"] == flow]
            if len(hits) == 0:
                raise KeyError(f"no flow named {flow!r}; flows: {', '.join(self.flows['name'])}")
            return int(self.flows.loc[hits[0], "flow"])
        if not 0 <= int(flow) < len(self.flows):
            raise KeyError(f"no flow with id {flow}")
        return int(flow)

    def goodput(self, start: float, end: float, flow: Union[int, str, None] = None) -> Union[float, "pd.Series"]:
        """Goodput (bit/s) over ``[start, end]`` from the ``delivered_bytes`` series.

        ``delivered_bytes`` is linearly interpolated between samples (a run
        starts with 0 bytes delivered at t = 0), so the resolution is the
        sample interval; the exact goodput over the scenario's measurement
        window is ``flows["goodput_bps"]``. Returns a float for one flow (id
        or name) or a Series indexed by flow id for all flows. Times beyond
        the last sample are clamped to it.
        """
        import numpy as np
        import pandas as pd

        if not end > start or start < 0:
            raise ValueError(f"need 0 <= start < end, got start={start}, end={end}")
        ts = self.flow_ts
        if len(ts) == 0:
            raise ValueError("no time series in this run (sample_interval was 0)")
        ids = [self._flow_id(flow)] if flow is not None else [int(x) for x in self.flows["flow"]]
        out = {}
        flow_col = ts["flow"].to_numpy()
        t_all = ts["time"].to_numpy(dtype=float)
        d_all = ts["delivered_bytes"].to_numpy(dtype=float)
        for fid in ids:
            mask = flow_col == fid
            t, d = t_all[mask], d_all[mask]
            if len(t) == 0:
                out[fid] = float("nan")
                continue
            if t[0] > 0:
                t = np.concatenate([[0.0], t])
                d = np.concatenate([[0.0], d])
            d0, d1 = np.interp([start, end], t, d)
            out[fid] = (d1 - d0) * 8.0 / (end - start)
        if flow is not None:
            return out[ids[0]]
        return pd.Series(out, name="goodput_bps").rename_axis("flow")

    # -- summary -------------------------------------------------------------
    def summary(self) -> dict:
        """The CLI's JSON summary::

            {"scenario": name,
             "flows": [{"id", "name", "algorithm", "goodput_bps", "retransmits", "timeouts"}],
             "links": [{"name", "utilization", "drops"}],
             "meta": {...}}

        Goodput is over the measurement window; every link is listed.
        """
        flows = []
        for _, r in self.flows.iterrows():
            flows.append({
                "id": _py(r.get("flow")),
                "name": _py(r.get("name")),
                "algorithm": _py(r.get("algorithm")),
                "goodput_bps": _py(r.get("goodput_bps")),
                "retransmits": _py(r.get("retransmits")),
                "timeouts": _py(r.get("timeouts")),
            })
        links = [{"name": _py(r.get("name")), "utilization": _py(r.get("utilization")), "drops": _py(r.get("drops"))}
                 for _, r in self.links.iterrows()]
        meta = dict(self.meta)
        if self.spec is not None:
            meta.setdefault("duration", _py(self.spec.get("duration")))
            meta.setdefault("measure_start", _py(self.spec.get("measure_start", 0.0)))
        return {"scenario": self.name, "flows": flows, "links": links, "meta": {k: _py(v) for k, v in meta.items()}}

    def jain_index(self) -> float:
        """Jain's fairness index of the flows' measurement-window goodputs."""
        from .analysis import jain_index

        return jain_index(self.flows["goodput_bps"].to_numpy())

    # -- persistence ---------------------------------------------------------
    def cc_vars(self, flow: int = 0) -> "pd.DataFrame":
        """One flow's traced congestion-control variables as columns, indexed by time."""
        d = self.cc_ts[self.cc_ts["flow"] == flow] if len(self.cc_ts) else self.cc_ts
        if not len(d):
            import pandas as pd

            return pd.DataFrame()
        return d.pivot_table(index="time", columns="variable", values="value", observed=True)

    def save(self, directory: Union[str, os.PathLike]) -> None:
        """Write ``<table>.parquet`` for each table, ``summary.json``, and
        ``scenario.toml`` (or ``spec.json`` when there is no Scenario)."""
        os.makedirs(directory, exist_ok=True)
        for t in TABLES:
            getattr(self, t).to_parquet(os.path.join(directory, f"{t}.parquet"), index=False)
        for t in OPTIONAL_TABLES:
            df = getattr(self, t, None)
            if df is not None and len(df):
                df.to_parquet(os.path.join(directory, f"{t}.parquet"), index=False)
        with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as fh:
            json.dump(self.summary(), fh, indent=2)
            fh.write("\n")
        if self.scenario is not None:
            self.scenario.save_toml(os.path.join(directory, "scenario.toml"))
        if self.spec is not None:
            with open(os.path.join(directory, "spec.json"), "w", encoding="utf-8") as fh:
                json.dump(self.spec, fh, indent=1)
                fh.write("\n")

    @classmethod
    def load(cls, directory: Union[str, os.PathLike]) -> "Results":
        """Reload a directory written by :meth:`save`."""
        import pandas as pd

        self = cls.__new__(cls)
        for t in TABLES:
            setattr(self, t, pd.read_parquet(os.path.join(directory, f"{t}.parquet")))
        for t in OPTIONAL_TABLES:
            path = os.path.join(directory, f"{t}.parquet")
            setattr(self, t, pd.read_parquet(path) if os.path.exists(path) else _cc_frame({}))
        with open(os.path.join(directory, "summary.json"), encoding="utf-8") as fh:
            summ = json.load(fh)
        self.name = summ.get("scenario", "run")
        self.meta = {k: v for k, v in summ.get("meta", {}).items() if k not in ("duration", "measure_start")}
        self.scenario = None
        toml_path = os.path.join(directory, "scenario.toml")
        if os.path.exists(toml_path):
            from .scenario import load_scenario

            self.scenario = load_scenario(toml_path)
        spec_path = os.path.join(directory, "spec.json")
        self.spec = None
        if os.path.exists(spec_path):
            with open(spec_path, encoding="utf-8") as fh:
                self.spec = json.load(fh)
        return self

    def __repr__(self) -> str:
        return f"<Results {self.name!r}: {len(self.flows)} flows, {len(self.links)} links, meta={self.meta}>"
