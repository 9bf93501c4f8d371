"""Results of one run as pandas tables.

:class:`Results` wraps the dict returned by ``tcplab._core.run`` (columns as
numpy arrays or lists of strings; SI units: seconds, bit/s, bytes). The
columns of ``flows`` to ``qdisc_ts`` are declared once, for the bindings and
the campaign store, in crates/tcplab-store/src/columns.rs
(``tcplab._core.columns()`` lists them); what the main ones mean:

``flows``
    one row per flow: ``flow`` (id = index in the spec), ``name``, ``src``,
    ``dst``, ``algorithm``, ``recovery``, ``goodput_bps`` (over the
    measurement window ``[measure_start, duration]``), ``bytes_delivered``,
    packet and ACK counters, RTT statistics, final ``srtt``, ``cwnd``,
    ``ssthresh``; ECN: ``ecn`` (``off``, ``classic``, ``accecn``),
    ``ce_received`` (data packets that arrived CE-marked), ``ce_delivered``
    (CE marks the sender learned of from ACKs), ``ecn_reductions`` (window
    reductions caused by ECN echoes).
``links``
    one row per link: ``link``, ``name``, ``src``, ``dst``, ``rate_bps``,
    ``delay``, ``utilization`` (measurement window, 0..1), packet counters,
    ``drops``, queue statistics, then the queue discipline's:
    ``discipline`` (``droptail`` for the fast FIFO as well), ``marks``
    (packets marked CE), ``aqm_drops`` (of ``drops``, those the AQM decided,
    not the limit), ``sojourn_mean``, ``sojourn_p50``, ``sojourn_p95``,
    ``sojourn_p99`` (seconds from enqueue to start of service of the packets
    served in the window, percentiles within 1.6 %; NaN for a link without
    a ``queue`` discipline, which keeps no per-packet record, or when no
    packet passed). Runs stored before disciplines existed read as the fast
    FIFO they had: ``droptail``, 0, 0, NaN.
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
``qdisc_ts``
    the links with a queue discipline, sampled with the other series, in
    long format: ``time``, ``link``, ``link_name`` (categorical, joined
    in), ``variable`` (categorical: ``sojourn_s``, the mean sojourn time in
    seconds of the packets that started service since the previous sample,
    NaN if none; then the discipline's own, e.g. RED's average queue,
    PIE's drop probability), ``value``. Empty when no link has a
    discipline. :meth:`Results.qdisc_vars` pivots one link's variables into
    columns.
``drop_trace``
    with ``loss_trace`` on: every packet dropped or lost, in order:
    ``time``, ``link``, ``link_name``, ``flow``, ``flow_name``, ``packet``
    (``data`` or ``ack``), ``seq`` (the data segment, or the ACK's
    cumulative ACK), ``retransmit`` (the packet was a retransmission),
    ``cause`` (``queue``: the queue's limit, including FQ-CoDel's drops from
    its fattest flow; ``aqm``: the discipline's active queue management;
    ``wire``: the link's loss model; ``scripted``: ``drop_segments``),
    ``queue_packets`` (packets
    waiting in the link's queue then). Empty otherwise.
``retransmit_trace``
    with ``loss_trace`` on: every retransmission in time order: ``time``,
    ``flow``, ``flow_name``, ``seq``, ``cause`` (``fast_retransmit``,
    ``partial_ack`` (NewReno), ``sack`` (RFC 6675 NextSeg), ``rto`` (the
    timer's own resend), ``after_rto`` (go-back-N, or SACK's resends of what
    the timeout marked lost), ``tlp`` (the tail loss probe's resend of the
    last segment, Linux profile)), ``outstanding`` (segments sent and not
    cumulatively acknowledged then; at a timeout, the most go-back-N can
    resend). Empty otherwise.
``packet_trace``, ``packet_sacks``
    with ``pcap`` naming links: every packet as it starts onto a captured
    link's wire, and the SACK blocks of the ACKs among them (columns in
    :mod:`tcplab.pcap`); :meth:`Results.write_pcap` writes them as a pcap
    file (docs/pcap.md). Empty otherwise.

pandas is imported when a Results is built, not when this module is imported.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .scenario import Scenario

__all__ = ["Results", "TABLES"]

TABLES = ("flows", "links", "files", "flow_ts", "queue_ts")
#: Tables saved when present and loaded when found (older saves lack them).
OPTIONAL_TABLES = ("cc_ts", "qdisc_ts", "drop_trace", "retransmit_trace", "packet_trace", "packet_sacks")
#: Every file a run's output directory may hold (Results.save, the CLI's
#: plot, tcplab report): what saving again into that directory replaces.
RUN_OUTPUT_FILES = (*(f"{t}.parquet" for t in (*TABLES, *OPTIONAL_TABLES)), "summary.json", "scenario.toml",
                    "spec.json", "cwnd_queue.png", "report.html")


def is_run_output(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a saved run (summary.json and flows.parquet)."""
    return all(os.path.isfile(os.path.join(directory, n)) for n in ("summary.json", "flows.parquet"))


def check_output_dir(directory: str | os.PathLike) -> None:
    """Refuse (``FileExistsError`` naming it) an output directory that exists
    and is neither empty nor an earlier run's output: saving there would
    overwrite a user's own ``scenario.toml`` or ``summary.json``. The rule of
    ``tcplab run -o`` and ``tcplab replay -o``, as ``tcplab sweep`` refuses
    a non-empty directory that is not a campaign."""
    d = os.fspath(directory)
    if not os.path.exists(d):
        return
    if not os.path.isdir(d):
        raise FileExistsError(17, "exists and is not a directory; give a new or empty directory", d)
    if os.listdir(d) and not is_run_output(d):
        raise FileExistsError(17, "exists, is not empty and is not a tcplab run output (summary.json + "
                                  "flows.parquet); give a new or empty directory, or delete what is in it", d)
#: Links columns of the queue disciplines, with their value for a run stored or saved before them
#: (every link was then the fast drop-tail FIFO).
LINK_DISCIPLINE_DEFAULTS = {"discipline": "droptail", "marks": 0, "aqm_drops": 0, "sojourn_mean": float("nan"),
                            "sojourn_p50": float("nan"), "sojourn_p95": float("nan"), "sojourn_p99": float("nan")}
#: Flows columns of ECN, with their value for a run stored or saved before them (ECN was then off).
FLOW_ECN_DEFAULTS = {"ecn": "off", "ce_received": 0, "ce_delivered": 0, "ecn_reductions": 0}


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


def _frame(cols: Mapping[str, Any]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    data = {}
    for k, v in cols.items():
        data[k] = v if isinstance(v, np.ndarray) else list(v)
    return pd.DataFrame(data)


def _cc_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
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


def _qdisc_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The core's qdisc_ts columns (variable as codes plus ``variable_names``)
    as a long DataFrame with a categorical ``variable``."""
    import numpy as np
    import pandas as pd

    names = list(raw.get("variable_names", []))
    return pd.DataFrame({
        "time": np.asarray(raw.get("time", []), dtype=float),
        "link": np.asarray(raw.get("link", []), dtype="uint32"),
        "variable": pd.Categorical.from_codes(np.asarray(raw.get("variable", []), dtype="int64"), categories=names),
        "value": np.asarray(raw.get("value", []), dtype=float),
    })


def _with_link_defaults(links: pd.DataFrame, defaults: Mapping[str, Any] = LINK_DISCIPLINE_DEFAULTS) -> pd.DataFrame:
    """The links table with the discipline columns a run of an earlier tcplab lacks (or,
    with ``defaults=FLOW_ECN_DEFAULTS``, the flows table with the ECN columns)."""
    import numpy as np

    if len(links.columns) == 0:
        return links
    for col, v in defaults.items():
        if col not in links:
            dtype = object if isinstance(v, str) else (np.uint64 if isinstance(v, int) else float)
            links[col] = np.full(len(links), v, dtype=dtype) if dtype is not object else [v] * len(links)
    return links


def _coded(raw: Mapping[str, Any], col: str, names_key: str) -> pd.Categorical:
    import numpy as np
    import pandas as pd

    names = list(raw.get(names_key, []))
    codes = np.asarray(raw.get(col, []), dtype="int64")
    return pd.Categorical.from_codes(codes, categories=names)


def _drop_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The core's drop_trace columns (cause as codes plus ``cause_names``)."""
    import numpy as np
    import pandas as pd

    ack = np.asarray(raw.get("ack", []), dtype=bool)
    return pd.DataFrame({
        "time": np.asarray(raw.get("time", []), dtype=float),
        "link": np.asarray(raw.get("link", []), dtype="uint32"),
        "flow": np.asarray(raw.get("flow", []), dtype="uint32"),
        "packet": pd.Categorical.from_codes(ack.astype("int64"), categories=["data", "ack"]),
        "seq": np.asarray(raw.get("seq", []), dtype="uint64"),
        "retransmit": np.asarray(raw.get("retransmit", []), dtype=bool),
        "cause": _coded(raw, "cause", "cause_names"),
        "queue_packets": np.asarray(raw.get("queue_packets", []), dtype="uint64"),
    })


def _retransmit_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The core's retransmit_trace columns (cause as codes plus ``cause_names``)."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame({
        "time": np.asarray(raw.get("time", []), dtype=float),
        "flow": np.asarray(raw.get("flow", []), dtype="uint32"),
        "seq": np.asarray(raw.get("seq", []), dtype="uint64"),
        "cause": _coded(raw, "cause", "cause_names"),
        "outstanding": np.asarray(raw.get("outstanding", []), dtype="uint64"),
    })


#: An empty frame of each optional table, for runs and saves without it.
_EMPTY = {"cc_ts": _cc_frame, "qdisc_ts": _qdisc_frame, "drop_trace": _drop_frame,
          "retransmit_trace": _retransmit_frame,
          "packet_trace": lambda raw: _pcap().frames(raw, [], [])[0],
          "packet_sacks": lambda raw: _pcap().frames(raw, [], [])[1]}


def _pcap():
    from . import pcap

    return pcap


def _refuse_links_in_series(spec: Mapping[str, Any] | None, links: Sequence[str]) -> None:
    """Refuse to merge links a flow's packets cross one after the other
    (its data path, or its ACK path, holds two of them): a file would hold
    each such packet twice, which Wireshark reads as retransmissions."""
    if len(links) < 2 or not spec or not spec.get("links"):
        return
    from . import _core

    for i, (fwd, rev) in enumerate(_core.paths(json.dumps(spec))):
        for path, what in ((fwd, "data"), (rev, "ACK")):
            both = [n for n in path if n in links]
            if len(both) > 1:
                raise ValueError(f"link: {both[0]!r} and {both[1]!r} both carry flow {i}'s {what} packets (links in "
                                 "series): one file would hold each packet twice; write one file per link")


class Results:
    """The outcome of one simulation run.

    Build it from the core's dict (``Results(raw, scenario=..., spec=...)``)
    or reload a saved run with :meth:`Results.load`. Attributes ``flows``,
    ``links``, ``files``, ``flow_ts``, ``queue_ts``, ``cc_ts``, ``qdisc_ts``,
    ``drop_trace`` and ``retransmit_trace`` are DataFrames, ``meta``
    is a dict (``events``, ``sim_time``, ``wall_s``, ``seed``), ``spec`` the
    run description that produced it and ``scenario`` the Scenario (if any).
    """

    def __init__(
        self,
        raw: Mapping[str, Any],
        scenario: Scenario | None = None,
        spec: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        import pandas as pd

        self.scenario = scenario
        self.spec = dict(spec) if spec is not None else None
        self.name = name or (scenario.name if scenario is not None else "run")
        self.meta: dict = {k: _py(v) for k, v in dict(raw.get("meta", {})).items()}
        self.flows = _with_link_defaults(_frame(raw.get("flows", {})), FLOW_ECN_DEFAULTS)
        self.links = _with_link_defaults(_frame(raw.get("links", {})))
        self.files = _frame(raw.get("files", {}))
        self.flow_ts = _frame(raw.get("flow_ts", {}))
        self.queue_ts = _frame(raw.get("queue_ts", {}))
        self.cc_ts = _cc_frame(raw.get("cc_ts", {}))
        self.qdisc_ts = _qdisc_frame(raw.get("qdisc_ts", {}))
        self.drop_trace = _drop_frame(raw.get("drop_trace", {}))
        self.retransmit_trace = _retransmit_frame(raw.get("retransmit_trace", {}))
        flow_names = list(self.flows["name"]) if "name" in self.flows else []
        link_names = list(self.links["name"]) if "name" in self.links else []
        if flow_names:
            for tr in (self.drop_trace, self.retransmit_trace):
                tr.insert(list(tr.columns).index("flow") + 1, "flow_name", pd.Categorical.from_codes(
                    tr["flow"].to_numpy().astype("int64"), categories=flow_names))
        # The packet capture (``pcap``): tcplab/pcap.py, docs/pcap.md.
        self.packet_trace, self.packet_sacks = _pcap().frames(raw.get("packet_trace"), flow_names, link_names)
        if link_names:
            self.drop_trace.insert(2, "link_name", pd.Categorical.from_codes(
                self.drop_trace["link"].to_numpy().astype("int64"), categories=link_names))
        if "flow" in self.flow_ts and flow_names:
            self.flow_ts["flow_name"] = pd.Categorical.from_codes(
                self.flow_ts["flow"].to_numpy().astype("int64"), categories=flow_names)
        if "link" in self.queue_ts and link_names:
            self.queue_ts["link_name"] = pd.Categorical.from_codes(
                self.queue_ts["link"].to_numpy().astype("int64"), categories=link_names)
        if link_names:
            self.qdisc_ts.insert(2, "link_name", pd.Categorical.from_codes(
                self.qdisc_ts["link"].to_numpy().astype("int64"), categories=link_names))
        if "flow" in self.files and flow_names:
            self.files.insert(1, "flow_name", [flow_names[int(i)] for i in self.files["flow"]])

    # -- measurement settings ------------------------------------------------
    @property
    def measure_start(self) -> float | None:
        return None if self.spec is None else float(self.spec.get("measure_start", 0.0))

    @property
    def duration(self) -> float | None:
        return None if self.spec is None else float(self.spec["duration"])

    def _flow_id(self, flow: int | str) -> int:
        if isinstance(flow, str):
            hits = self.flows.index[self.flows["name"] == flow]
            if len(hits) == 0:
                raise KeyError(f"no flow named {flow!r}; flows: {', '.join(self.flows['name'])}")
            return int(self.flows.loc[hits[0], "flow"])
        if not 0 <= int(flow) < len(self.flows):
            raise KeyError(f"no flow with id {flow}")
        return int(flow)

    def goodput(self, start: float, end: float, flow: int | str | None = None) -> float | pd.Series:
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
             "links": [{"name", "utilization", "drops", "losses"} and, for a link with a
                       queue discipline, {"discipline", "aqm_drops", "marks",
                       "sojourn_mean", "sojourn_p99"}],
             "meta": {...}}

        Goodput is over the measurement window; every link is listed. A link's ``drops`` are its
        queue's (overflow and AQM), ``losses`` its random loss on the wire, counted apart.
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
        links = []
        for _, r in self.links.iterrows():
            link = {"name": _py(r.get("name")), "utilization": _py(r.get("utilization")), "drops": _py(r.get("drops")),
                    "losses": _py(r.get("losses", 0))}
            if r.get("discipline", "droptail") != "droptail" or _py(r.get("sojourn_mean")) is not None:
                link.update({k: _py(r.get(k))
                             for k in ("discipline", "aqm_drops", "marks", "sojourn_mean", "sojourn_p99")})
            links.append(link)
        meta = dict(self.meta)
        if self.spec is not None:
            meta.setdefault("duration", _py(self.spec.get("duration")))
            meta.setdefault("measure_start", _py(self.spec.get("measure_start", 0.0)))
        return {"scenario": self.name, "flows": flows, "links": links, "meta": {k: _py(v) for k, v in meta.items()}}

    def retransmission_accounting(self) -> pd.DataFrame:
        """Each flow's retransmissions sorted by what they repaired, from the
        loss trace (the run needs ``loss_trace=True``).

        tcplab's routes are static FIFO paths, so no packet is reordered or
        duplicated: a copy of a segment either arrives or appears in
        ``drop_trace``. A retransmission *repairs* when every earlier copy of
        its segment was dropped or lost, and is *needless* otherwise.
        Columns, one row per flow: ``lost_copies`` (data copies dropped or
        lost), ``repairs``, ``needless_dupack`` (needless resends started by
        duplicate ACKs or SACK: fast retransmit, NewReno partial ACK, SACK
        NextSeg; none without reordering), ``needless_rto`` (the timer's own
        resend of data still in flight, at most one per timeout),
        ``needless_after_rto`` (go-back-N's resends of data the receiver
        held, or SACK's of data the timeout marked lost), ``needless_tlp``
        (tail loss probes that resent data still in flight: a probe is sent
        without knowing), and ``go_back_n_window`` (the segments outstanding at each timeout,
        summed: the most go-back-N could resend).
        """
        import numpy as np
        import pandas as pd

        if self.spec is not None and not self.spec.get("loss_trace", False):
            raise ValueError("no loss trace in this run: run it with loss_trace=True")
        d, x = self.drop_trace, self.retransmit_trace
        d = d[d["packet"] == "data"]
        rows = []
        for fid in (int(f) for f in self.flows["flow"]):
            df, xf = d[d["flow"] == fid], x[x["flow"] == fid]
            # (time, order, seq, cause, outstanding): a send before a loss at the same instant.
            # strict: the columns of one frame, of one length.
            ev = sorted([(t, 1, s, "", 0) for t, s in zip(df["time"], df["seq"], strict=True)]
                        + [(t, 0, s, str(c), o) for t, s, c, o in zip(xf["time"], xf["seq"], xf["cause"],
                                                                       xf["outstanding"], strict=True)])
            sent: dict = {}
            lost: dict = {}
            acc = dict(lost_copies=0, repairs=0, needless_dupack=0, needless_rto=0, needless_after_rto=0,
                       needless_tlp=0, go_back_n_window=0)
            for _t, is_loss, seq, cause, outstanding in ev:
                if is_loss:
                    lost[seq] = lost.get(seq, 0) + 1
                    acc["lost_copies"] += 1
                    continue
                copies = sent.get(seq, 1)
                if cause == "rto":
                    acc["go_back_n_window"] += int(outstanding)
                if lost.get(seq, 0) >= copies:
                    acc["repairs"] += 1
                elif cause == "rto":
                    acc["needless_rto"] += 1
                elif cause == "after_rto":
                    acc["needless_after_rto"] += 1
                elif cause == "tlp":
                    acc["needless_tlp"] += 1
                else:
                    acc["needless_dupack"] += 1
                sent[seq] = copies + 1
            rows.append({"flow": fid, **acc})
        out = pd.DataFrame(rows)
        return out.astype({c: np.int64 for c in out.columns})

    def jain_index(self) -> float:
        """Jain's fairness index of the flows' measurement-window goodputs."""
        from .analysis import jain_index

        return jain_index(self.flows["goodput_bps"].to_numpy())

    # -- persistence ---------------------------------------------------------
    def cc_vars(self, flow: int = 0) -> pd.DataFrame:
        """One flow's traced congestion-control variables as columns, indexed by time."""
        d = self.cc_ts[self.cc_ts["flow"] == flow] if len(self.cc_ts) else self.cc_ts
        if not len(d):
            import pandas as pd

            return pd.DataFrame()
        return d.pivot_table(index="time", columns="variable", values="value", observed=True)

    def _link_id(self, link: int | str) -> int:
        if isinstance(link, str):
            hits = self.links.index[self.links["name"] == link]
            if len(hits) == 0:
                raise KeyError(f"no link named {link!r}; links: {', '.join(self.links['name'])}")
            return int(self.links.loc[hits[0], "link"])
        if not 0 <= int(link) < len(self.links):
            raise KeyError(f"no link with id {link}")
        return int(link)

    def qdisc_vars(self, link: int | str, variable: str | Sequence[str] | None = None) -> pd.DataFrame:
        """One link's queue-discipline series (link id or name) as columns
        indexed by time: ``sojourn_s`` and the discipline's own variables,
        or only ``variable`` (a name or a list of names). Empty for a link
        without a discipline; NaN where a sample had no value."""
        import pandas as pd

        lid = self._link_id(link)
        d = self.qdisc_ts[self.qdisc_ts["link"] == lid]
        names = [variable] if isinstance(variable, str) else (list(variable) if variable is not None else None)
        if names is not None:
            known = sorted(set(self.qdisc_ts["variable"].astype(str)))
            for n in names:
                if n not in known:
                    raise KeyError(f"no qdisc variable {n!r}; traced: {', '.join(known) or 'none'}")
            d = d[d["variable"].astype(str).isin(names)]
        if not len(d):
            return pd.DataFrame()
        out = d.assign(variable=d["variable"].astype(str)).pivot(index="time", columns="variable", values="value")
        out.columns.name = "variable"
        return out[names] if names is not None else out

    def write_pcap(self, path: str | os.PathLike, link: str | Sequence[str] | None = None) -> int:
        """Write the packets captured on ``link`` (a link name, a list of
        names merged in time order, or None for every captured link) as a
        pcap file that Wireshark and tshark open: synthetic IPv4/TCP headers
        with the flows' byte sequence numbers, ACKs and SACK blocks,
        timestamps in simulated time (docs/pcap.md). The run must capture
        the link (``pcap=[...]``). Links in series (one flow's packets cross
        both) are refused: the file would hold each packet twice. Returns the
        packets written."""
        captured = list((self.spec or {}).get("pcap", []))
        if not captured and not len(self.packet_trace):
            raise ValueError("no packet capture in this run: run it with pcap=['LINK'] (or tcplab run --pcap LINK)")
        names = list(self.links["name"])
        wanted = captured if link is None else [link] if isinstance(link, str) else list(link)
        for i, n in enumerate(wanted):
            field = "link" if isinstance(link, str) else f"link[{i}]"
            if n not in names:
                raise ValueError(f"{field}: unknown link {n!r}; the links are {', '.join(names)}")
            if captured and n not in captured:
                raise ValueError(f"{field}: link {n!r} was not captured in this run (pcap = {captured})")
        wanted = list(dict.fromkeys(wanted))
        _refuse_links_in_series(self.spec, wanted)
        return _pcap().write_pcap(path, self.packet_trace, self.packet_sacks, self.spec,
                                  links=[names.index(n) for n in wanted], n_flows=len(self.flows))

    def write_pcaps(self, directory: str | os.PathLike) -> list[str]:
        """Write one pcap file per entry of the scenario's ``pcap`` into
        ``directory``: ``<entry>.pcap`` (``bottleneck.pcap`` holds both
        directions of the bottleneck, merged in time order; with several
        bottleneck links, ``bottleneck-<link>.pcap`` per link:
        :meth:`Scenario.pcap_groups`). Returns the paths written."""
        if self.scenario is None:
            groups = {n: [n] for n in (self.spec or {}).get("pcap", [])}
        else:
            groups = self.scenario.pcap_groups()
        paths = []
        for entry, links in groups.items():
            safe = "".join(c if c.isalnum() or c in "-_.+" else "_" for c in entry)
            path = os.path.join(directory, f"{safe}.pcap")
            self.write_pcap(path, links)
            paths.append(path)
        return paths

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``<table>.parquet`` for each table, ``summary.json``, and
        ``scenario.toml`` (or ``spec.json`` when there is no Scenario).

        ``directory`` must be new, empty, or an earlier run's output (see
        :func:`check_output_dir`); an earlier run's files are removed first,
        so none of them (a trace table this run has not) passes for this
        run's. Other files in it are left alone."""
        check_output_dir(directory)
        os.makedirs(directory, exist_ok=True)
        for name in RUN_OUTPUT_FILES:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                os.remove(path)
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
    def load(cls, directory: str | os.PathLike) -> Results:
        """Reload a directory written by :meth:`save`."""
        import pandas as pd

        self = cls.__new__(cls)
        for t in TABLES:
            setattr(self, t, pd.read_parquet(os.path.join(directory, f"{t}.parquet")))
        self.links = _with_link_defaults(self.links)
        self.flows = _with_link_defaults(self.flows, FLOW_ECN_DEFAULTS)
        for t in OPTIONAL_TABLES:
            path = os.path.join(directory, f"{t}.parquet")
            setattr(self, t, pd.read_parquet(path) if os.path.exists(path) else _EMPTY[t]({}))
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

    # -- notebooks -------------------------------------------------------------
    def _repr_html_(self) -> str:
        """Jupyter's view: the run in one line, the per-flow table and the bottleneck's (tcplab._notebook)."""
        from ._notebook import results_html

        return results_html(self)

    def plot_cwnd(self, flows: Sequence[int | str] | None = None) -> Any:
        """Each flow's congestion window against time, as a matplotlib Figure (not shown, not closed:
        a notebook displays it; ``fig.savefig(path)`` writes it). ``flows`` by id or name (default all)."""
        from .plot import cwnd_figure

        return cwnd_figure(self, flows)

    def plot_throughput(self, flows: Sequence[int | str] | None = None,
                        interval: float | None = None) -> Any:
        """Each flow's delivery rate (Mbit/s) against time, averaged over ``interval`` seconds (default:
        the sampling interval, coarser for long runs), as a matplotlib Figure."""
        from .plot import throughput_figure

        return throughput_figure(self, flows, interval)

    def plot_queue(self, links: Sequence[int | str] | None = None) -> Any:
        """Queue length (packets) against time of ``links`` (default: the bottleneck), as a matplotlib Figure."""
        from .plot import queue_figure

        return queue_figure(self, links)
