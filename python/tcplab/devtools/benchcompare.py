"""``tcplab bench --compare BEFORE.json AFTER.json``: two benchmark reports side by side.

The reports are those of ``tcplab bench --json`` (any mode: the standard
scenarios, the scaling curves, the memory runs). Rows are matched by
section and scenario name, and each row's figure is compared:

- standard scenarios: ns per packet-hop of the whole run (``wall_s``, as
  the suite reports them) and peak memory;
- scaling points: ns per packet-hop of the event loop (``core_wall_s``, as
  the curves report them), and each curve's largest / smallest ratio;
- memory runs: peak memory.

A change is ``after / before - 1`` (negative: faster or smaller). The
summary per section is the geometric mean of the after / before ratios of
the rows both reports have. Rows found in only one report are listed, not
compared. The reports' machines, commits and modes are printed, with a
warning when they are not comparable: another CPU or core count, or a
``--quick`` report against a full one (quick runs measure that the suite
runs, not its speed).

Speed on a shared machine moves by several per cent from one hour to the
next (docs/performance.md): compare reports taken close together, or
interleaved (``--rounds``), before reading a few per cent as a change.
"""

from __future__ import annotations

import json
import math
from typing import Any


class CompareError(ValueError):
    """A report that cannot be read or compared; the message names the file."""


def load(path: str, option: str = "--compare") -> dict:
    """A ``tcplab bench --json`` report, or a CompareError naming `path`."""
    try:
        with open(path) as f:
            rep = json.load(f)
    except OSError as e:
        raise CompareError(f"{option}: cannot read {path!r}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise CompareError(f"{option}: {path!r} is not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(rep, dict) or rep.get("tool") != "tcplab bench":
        what = "a list (cargo bench's JSON?)" if isinstance(rep, list) else "not one"
        raise CompareError(f"{option}: {path!r} is not a `tcplab bench --json` report ({what}); "
                           f"the campaign and --ns3 reports are not compared either")
    try:
        _rows(rep)
        for cur in rep.get("scaling", {}).values():
            float(cur["flatness"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise CompareError(f"{option}: {path!r} is a `tcplab bench` report without the field {e} (an older or "
                           f"edited report?)") from None
    return rep


def _rows(rep: dict) -> dict[tuple[str, str], tuple[float, float]]:
    """(section, scenario) -> (ns per packet-hop or nan, peak MB)."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for r in rep.get("scenarios", []):
        out[("scenarios", r["scenario"])] = (float(r["ns_per_packet_hop"]), float(r["peak_rss_mb"]))
    for axis, cur in rep.get("scaling", {}).items():
        for r in cur["points"]:
            out[(f"scaling: {axis}", r["scenario"])] = (float(r["core_ns_per_packet_hop"]), float(r["peak_rss_mb"]))
    for r in rep.get("memory", {}).get("runs", []):
        out[("memory", r["scenario"])] = (math.nan, float(r["peak_rss_mb"]))
    return out


def _change(a: float, b: float) -> float:
    return b / a - 1.0 if a > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def _geomean(ratios: list[float]) -> float:
    ok = [x for x in ratios if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in ok) / len(ok)) if ok else math.nan


def _by_section(keys: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sec, name in keys:
        out.setdefault(sec, []).append(name)
    return out


def compare(before: dict, after: dict) -> dict:
    """The comparison of two reports (see the module notes)."""
    a, b = _rows(before), _rows(after)
    rows: list[dict[str, Any]] = []
    for key in [k for k in a if k in b]:
        (ta, ma), (tb, mb) = a[key], b[key]
        rows.append({"section": key[0], "scenario": key[1], "ns_before": ta, "ns_after": tb,
                     "ns_change": _change(ta, tb), "mb_before": ma, "mb_after": mb, "mb_change": _change(ma, mb)})
    sections: dict[str, Any] = {}
    for r in rows:
        s = sections.setdefault(r["section"], {"ns_ratios": [], "mb_ratios": []})
        s["ns_ratios"].append(r["ns_change"] + 1.0)
        s["mb_ratios"].append(r["mb_change"] + 1.0)
    summary = {}
    for name, s in sections.items():
        summary[name] = {"ns_geomean_change": _geomean(s["ns_ratios"]) - 1.0,
                         "mb_geomean_change": _geomean(s["mb_ratios"]) - 1.0, "rows": len(s["ns_ratios"])}
        if name.startswith("scaling: "):
            axis = name[len("scaling: "):]
            summary[name]["flatness_before"] = before["scaling"][axis]["flatness"]
            summary[name]["flatness_after"] = after["scaling"][axis]["flatness"]
    warnings = []
    ma, mb = before.get("machine", {}), after.get("machine", {})
    if (ma.get("cpu"), ma.get("cores")) != (mb.get("cpu"), mb.get("cores")):
        warnings.append(f"different machines: {ma.get('cpu')} ({ma.get('cores')} cores) against {mb.get('cpu')} "
                        f"({mb.get('cores')} cores); the figures are not comparable")
    # Reports from before the build was recorded are plain release builds.
    ba, bb = before.get("build", "release"), after.get("build", "release")
    if ba != bb:
        warnings.append(f"different builds: {ba} against {bb}; a change is partly the compiler's "
                        f"(scripts/pgo.sh)")
    if bool(before.get("quick")) != bool(after.get("quick")):
        warnings.append("one report is --quick and the other is not: quick runs are shortened, their figures are "
                        "not comparable")
    elif before.get("quick"):
        warnings.append("both reports are --quick: they show that the suite runs, not how fast")
    # Rows measured differently: the flows curve gained a warm-up (reports
    # before it have no warmup_s) and its points other durations.
    def how(rep: dict) -> dict[tuple[str, str], tuple[float, Any]]:
        return {(f"scaling: {axis}", r["scenario"]): (float(r.get("warmup_s") or 0.0), r.get("simulated_s"))
                for axis, cur in rep.get("scaling", {}).items() for r in cur["points"]}
    ha, hb = how(before), how(after)
    differ = [k for k in ha if k in hb and ha[k] != hb[k]]
    if differ:
        names = ", ".join(name for _, name in differ)
        warnings.append(f"measured differently (warm-up or simulated seconds): {names}; a change there is partly "
                        f"the measurement's")
    return {
        "before": {k: before.get(k) for k in ("commit", "date", "machine", "build", "quick")},
        "after": {k: after.get(k) for k in ("commit", "date", "machine", "build", "quick")},
        "rows": rows,
        "only_before": _by_section([k for k in a if k not in b]),
        "only_after": _by_section([k for k in b if k not in a]),
        "summary": summary,
        "warnings": warnings,
    }


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{100 * x:+.1f} %"


def _num(x: float, digits: int = 1) -> str:
    return "-" if not math.isfinite(x) else f"{x:.{digits}f}"


def print_table(res: dict) -> None:
    for side in ("before", "after"):
        m = res[side]
        mach = m.get("machine") or {}
        print(f"{side:<6}: commit {m.get('commit') or 'unknown'}, {m.get('date') or 'no date'}, "
              f"{mach.get('cpu', '?')} ({mach.get('cores', '?')} cores), {m.get('build') or 'release'} build"
              + ("  [QUICK]" if m.get("quick") else ""))
    for w in res["warnings"]:
        print(f"warning: {w}")
    section: str | None = None
    width = max([16] + [len(r["scenario"]) for r in res["rows"]])
    for r in res["rows"]:
        if r["section"] != section:
            section = r["section"]
            what = "ns/pkt-hop (event loop)" if section.startswith("scaling") else "ns/pkt-hop"
            print(f"\n{section}")
            hdr = f"{'scenario':<{width}} {what:>24} {'change':>9} {'peak MB':>17} {'change':>9}"
            print(hdr)
            print("-" * len(hdr))
        ns = f"{_num(r['ns_before'])} -> {_num(r['ns_after'])}" if math.isfinite(r["ns_before"]) else "-"
        mb = f"{_num(r['mb_before'])} -> {_num(r['mb_after'])}"
        print(f"{r['scenario']:<{width}} {ns:>24} {_pct(r['ns_change']):>9} {mb:>17} {_pct(r['mb_change']):>9}")
    print()
    for name, s in res["summary"].items():
        line = f"{name}: {s['rows']} rows, geometric mean change "
        line += (f"{_pct(s['ns_geomean_change'])} in ns per packet-hop, " if math.isfinite(s["ns_geomean_change"])
                 else "")
        line += f"{_pct(s['mb_geomean_change'])} in peak memory"
        if "flatness_before" in s:
            line += f"; largest / smallest {s['flatness_before']:.2f} -> {s['flatness_after']:.2f}"
        print(line)
    for key, what in (("only_before", "only in the first report"), ("only_after", "only in the second report")):
        for sec, names in res[key].items():
            print(f"{what}: {sec} ({len(names)}): {', '.join(names)}")
