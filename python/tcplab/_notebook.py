"""How :class:`~tcplab.results.Results` shows itself in a Jupyter notebook: a line on the run, the
per-flow table and the bottleneck (and any link that dropped or lost packets), as compact HTML
tables (``Results._repr_html_``). A terminal keeps ``repr``'s one line."""

from __future__ import annotations

import html
from typing import Any

#: Rows shown of the flow table; a longer one is cut in the middle (pandas' max_rows).
MAX_ROWS = 20


def _num(v: Any, spec: str) -> str:
    try:
        return "-" if v is None or v != v else format(v, spec)
    except (TypeError, ValueError):
        return str(v)


def results_html(res: Any) -> str:
    import pandas as pd

    meta, spec = res.meta, res.spec or {}
    head = (f"<b>{html.escape(str(res.name))}</b>: {_num(meta.get('sim_time'), 'g')} s simulated, "
            f"{_num(meta.get('events'), ',')} events, {_num(meta.get('wall_s'), '.2f')} s wall, seed "
            f"{html.escape(str(meta.get('seed')))}")
    if spec.get("duration") is not None:
        head += f"; goodput over [{_num(spec.get('measure_start', 0.0), 'g')}, {_num(spec['duration'], 'g')}] s"
    fl = res.flows
    flows = pd.DataFrame({
        "flow": fl.get("name", pd.Series(dtype=str)),
        "algorithm": fl.get("algorithm", pd.Series(dtype=str)),
        "goodput (Mbit/s)": fl.get("goodput_bps", pd.Series(dtype=float)) / 1e6,
        "retransmits": fl.get("retransmits", pd.Series(dtype=int)),
        "timeouts": fl.get("timeouts", pd.Series(dtype=int)),
    })
    lk = res.links
    shown = set(res.scenario.bottleneck_links()) if res.scenario is not None else set()
    if not shown and len(lk):
        shown = {lk["name"].iloc[int(lk["utilization"].to_numpy().argmax())]}
    if len(lk):
        keep = lk["name"].isin(shown) | (lk["drops"] > 0) | (lk.get("losses", 0) > 0)
        links = pd.DataFrame({"link": lk["name"], "utilization": lk["utilization"], "drops (queue)": lk["drops"],
                              "losses (wire)": lk.get("losses", 0)})[keep.to_numpy()]
    else:
        links = pd.DataFrame()
    style = 'style="display:inline-block; vertical-align:top; margin-right:2em"'
    parts = [f'<div class="tcplab-results"><p>{head}</p>',
             f"<div {style}>" + flows.to_html(index=False, border=0, max_rows=MAX_ROWS,
                                              float_format=lambda v: f"{v:.3f}") + "</div>"]
    if len(links):
        parts.append(f"<div {style}>" + links.to_html(index=False, border=0, max_rows=MAX_ROWS,
                                                      float_format=lambda v: f"{v:.4f}") + "</div>")
    parts.append("</div>")
    return "\n".join(parts)
