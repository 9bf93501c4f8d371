"""How the HTML reports write names and numbers: natural order of file
names, and table cells with units.

A cell's unit comes from its column's name (the part before the first dot,
so ``total_goodput_bps.mean`` and ``goodput_bps.flow1`` count as
``total_goodput_bps`` and ``goodput_bps``):

- ``*_bps`` and the rate keys of a scenario (``rate``, ``bottleneck_rate``,
  ``access_rate``): a rate scaled to its size, ``200 Mbit/s``;
- ``*_s`` and the time keys (``delay``, ``rtt``, ``rtt_mean``, ``srtt``,
  ...): a time, ``50 ms``, ``1,234 s``;
- ``*_bytes``, ``bytes_delivered``: a size, ``1.5 GB``;
- ``*_kbps``, ``*_mbps``, ``*_gbps``, ``*_ms``: the unit the name gives,
  ``187,634 kbit/s``, ``100 ms``;
- any other number: plain, with thousands separators (``110,947,107``).

Numbers are never written in exponent form (``2e+08``); only the cell's
text changes, never the data (the CSV beside a report keeps every digit).
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

__all__ = ["natural_key", "column_unit", "format_cell", "format_number"]

#: Scenario keys (sweep parameters, link columns) whose numbers are in bit/s or seconds.
RATE_KEYS = {"rate", "bottleneck_rate", "access_rate", "capacity"}
TIME_KEYS = {"delay", "rtt", "rtt_min", "rtt_mean", "rtt_max", "srtt", "sim_time", "measure_start",
             "measure_window", "duration", "start", "sample_interval", "access_delay", "min_rto", "max_rto"}
SIZE_KEYS = {"bytes_delivered", "bytes"}
#: Suffixes naming a fixed unit: the cell keeps it (goodput_kbps: 187,634 kbit/s).
_FIXED = [("_kbps", "kbit/s"), ("_mbps", "Mbit/s"), ("_gbps", "Gbit/s"), ("_ms", "ms"), ("_us", "µs")]
#: Suffixes naming a base unit (bit/s, s, bytes): the cell picks the scale (2e8 -> 200 Mbit/s).
_SCALED = [("_bps", "rate"), ("_s", "time"), ("_bytes", "size")]


def natural_key(name: str) -> list:
    """Sort key that orders the numbers inside names by value: fig2 < fig10,
    figs2-8 < figs9-10 < figs11-12."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in re.split(r"(\d+)", name)
            if part != ""]


def column_unit(column: Any) -> tuple[str, str] | None:
    """How a column's numbers are written: ``("fixed", "kbit/s")`` (the unit its name gives),
    ``("scaled", "rate" | "time" | "size")`` (a base unit, scaled per value), or None (plain)."""
    key = str(column).split(".")[0].lower()
    if key in RATE_KEYS:
        return "scaled", "rate"
    if key in TIME_KEYS:
        return "scaled", "time"
    if key in SIZE_KEYS:
        return "scaled", "size"
    for suffix, unit in _FIXED:
        if key.endswith(suffix):
            return "fixed", unit
    for suffix, kind in _SCALED:
        if key.endswith(suffix):
            return "scaled", kind
    return None


def _group(text: str) -> str:
    """Thousands separators in the integer part of a positional number."""
    sign = "-" if text.startswith("-") else ""
    body = text.lstrip("-")
    whole, _, frac = body.partition(".")
    return sign + f"{int(whole):,}" + ("." + frac if frac else "")


def format_number(v: float | numbers.Real, digits: int = 4) -> str:
    """``digits`` significant digits, positional, with thousands separators:
    123456789.0 -> 123,456,789; 0.000123456 -> 0.0001235."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    x = float(v)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if x.is_integer() or abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    import numpy as np

    text = np.format_float_positional(x, precision=digits, unique=False, fractional=False, trim="-")
    return _group(text)


_SCALES = {
    "rate": [(1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s")],
    "size": [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")],
    "time": [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")],
}


def _with_unit(x: float, kind: str, digits: int) -> str:
    scales = _SCALES[kind]
    a = abs(x)
    if a == 0:
        return f"0 {scales[0][1] if kind == 'time' else scales[-1][1]}"
    for scale, unit in scales:
        if a >= scale:
            return f"{format_number(x / scale, digits)} {unit}"
    scale, unit = scales[-1]
    return f"{format_number(x / scale, digits)} {unit}"


def format_cell(column: Any, v: Any, digits: int = 4) -> str:
    """The text of one table cell: numbers with their column's unit when it is
    known, else plain with thousands separators; anything else as it is."""
    if v is None:
        return "–"
    try:
        import numpy as np

        if isinstance(v, np.generic):
            v = v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return str(v)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return format_number(v, digits)
    unit = column_unit(column)
    if unit is None:
        return format_number(v, digits)
    how, what = unit
    if how == "fixed":
        return f"{format_number(v, digits)} {what}"
    return _with_unit(float(v), what, digits)
