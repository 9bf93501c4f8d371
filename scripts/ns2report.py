"""The output of scripts/ns2compare.py: the side-by-side table of its cells (``render``, for a terminal
or as Markdown) and their CSV file (``write_csv``), from the rows ``ns2compare.combine`` makes."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from typing import Any


def _fmt(x: Any, spec: str = "d") -> str:
    if x is None:
        return "missing"
    return format(x, spec)


def table_rows(rows: Sequence[dict]) -> tuple[list, list]:
    head = ["protocol", "rtt ms", "B pkts", "goodput Mb/s ns2", "tcplab", "diff %", "drops ns2", "tcplab",
            "rexmit ns2", "tcplab", "RTOs ns2", "tcplab", "CPU s ns2", "tcplab", "CPU ratio"]
    def side(d: dict, key: str, spec: str = "d", scale: float = 1.0) -> str:
        # A side that failed shows "failed" (its error is printed under the table); the other side's
        # figures stay.
        if "error" in d:
            return "failed"
        v = d[key]
        if v is not None and scale != 1.0:
            v = v / scale
        return _fmt(v, spec)

    body = []
    for r in rows:
        a, b = r["ns2"], r["tcplab"]
        both = "error" not in r
        body.append([r["protocol"], _fmt(r["rtt_ms"], "g"), r["buffer_packets"], side(a, "goodput_bps", ".2f", 1e6),
                     side(b, "goodput_bps", ".2f", 1e6), _fmt(r["goodput_diff_pct"], "+.2f") if both else "",
                     side(a, "drops"), side(b, "drops"), side(a, "retransmits"), side(b, "retransmits"),
                     side(a, "timeouts"), side(b, "timeouts"), side(a, "cpu_s", ".2f"), side(b, "cpu_s", ".2f"),
                     _fmt(r["cpu_ratio"], ".2f") if both else ""])
    return head, body


def flow_rows(rows: Sequence[dict]) -> tuple[list, list]:
    head = ["cell", "flow", "protocol", "goodput Mb/s ns2", "tcplab", "diff %", "rexmit ns2", "tcplab"]
    body = []
    for r in rows:
        if "error" in r:
            continue
        for i, p in enumerate(r["protocols"]):
            a, b = r["ns2"], r["tcplab"]
            body.append([r["protocol"], i + 1, p, _fmt(a["flow_goodput_bps"][i] / 1e6, ".2f"),
                         _fmt(b["flow_goodput_bps"][i] / 1e6, ".2f"), _fmt(r["flow_goodput_diff_pct"][i], "+.2f"),
                         _fmt(a["flow_retransmits"][i]), _fmt(b["flow_retransmits"][i])])
    return head, body


def render(rows: Sequence[dict], tablefmt: str = "simple") -> str:
    """The side-by-side table (``tablefmt`` "simple" for a terminal, "github" for markdown)."""
    from tabulate import tabulate

    head, body = table_rows(rows)
    out = tabulate(body, headers=head, tablefmt=tablefmt, disable_numparse=True)
    errors = [f"error: {r['protocol']} rtt {_fmt(r['rtt_ms'], 'g')} ms B {r['buffer_packets']}: {r['error']}"
              for r in rows if "error" in r]
    if errors:
        out += "\n\n" + "\n".join(errors)
    if any(r["flows"] > 1 for r in rows):
        h2, b2 = flow_rows([r for r in rows if r["flows"] > 1])
        out += "\n\nper-flow goodput (flow i on hosts s<i>/d<i>; host A = flow 1, shorter access delay)\n\n"
        out += tabulate(b2, headers=h2, tablefmt=tablefmt, disable_numparse=True)
    return out


CSV_FIELDS = ["protocol", "rtt_ms", "buffer_bdp", "buffer_packets", "rate_bps", "flows", "duration", "window", "iw",
              "rto_mode", "goodput_diff_pct", "cpu_ratio"]
CSV_SIDE = ["goodput_bps", "drops", "retransmits", "timeouts", "cpu_s"]


def write_csv(rows: Sequence[dict], path: str) -> None:
    cols = CSV_FIELDS + [f"{s}_{k}" for k in CSV_SIDE for s in ("ns2", "tcplab")] + \
        [f"{s}_flow_goodput_bps" for s in ("ns2", "tcplab")]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            if "error" in r:
                continue
            line = [r[k] for k in CSV_FIELDS]
            line += [r[s][k] for k in CSV_SIDE for s in ("ns2", "tcplab")]
            line += [";".join(f"{g:.1f}" for g in r[s]["flow_goodput_bps"]) for s in ("ns2", "tcplab")]
            w.writerow(["" if x is None else x for x in line])
