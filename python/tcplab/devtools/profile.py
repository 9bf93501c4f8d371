"""``tcplab bench --profile SCENARIO``: where a run's time goes, as a flamegraph.

Runs one benchmark scenario (S1-S6, or a scaling point such as
``flows=10000``, ``window=1000``, ``algorithm=vegas``) in a child process
under Linux ``perf`` (sampling the CPU clock, call stacks unwound from DWARF
debug information: the release build keeps line tables, so functions inlined
into the event loop appear as their own frames), then:

- folds the stacks (``a;b;c count``, root first, the format of Brendan
  Gregg's ``flamegraph.pl`` and of ``inferno``), starting each at the first
  frame in tcplab's extension (``_core::__pyfunction_run``): the
  interpreter's frames below it are cut, Rust's and PyO3's pass-through
  frames are left out, a stack ends at its first frame outside tcplab (the C
  library, the kernel: ``malloc [libc.so.6]``), samples with no tcplab frame
  (the interpreter starting, imports) count as ``[outside tcplab]``, and a
  stack that perf cut before it reached the interpreter (8 KiB copied per
  sample) starts with ``[truncated]``;
- writes the flamegraph as a self-contained SVG (the width of a frame is its
  share of the samples; hovering shows the function, its samples and share);
- prints the functions with the most samples on their own (self: the
  deepest tcplab function of each sample, so library code inlined into it
  and the C library or kernel code it calls count as its) and with their
  callees (total), and the run's figures.

Where the paper trail is silent, the choices are: the CPU clock at 499 Hz
(``--frequency``; a prime, so sampling does not beat with periodic work),
8 KiB of stack per sample (enough for the core's frames; the interpreter's
deepest frames may be cut, and they are dropped anyway). Profiling slows the
run by a few per cent (the stacks are copied, and unwound afterwards by
``perf script``); the figures printed are the profiled run's. A point of
the flows curve run at its own length has a warm-up (see
:mod:`tcplab.devtools.bench`): its event-loop figure is over the part after it, as
in the curve, while perf samples the whole run; ``--seconds`` runs a point
from the start, for that many seconds.

``perf`` must be installed (``linux-perf`` or ``linux-tools``) and allowed to
sample the user's own processes: ``/proc/sys/kernel/perf_event_paranoid`` at
2 or lower (the kernel's default; some distributions set 3 or 4: then
``sudo sysctl kernel.perf_event_paranoid=2``, or run as root). ``--perf
PATH`` names another binary. The output files are written only once the
profile is done, and a path that cannot be written is refused before the
run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from .measure import AXES, CHILD, s5_scenario, with_duration

OUTSIDE = "[outside tcplab]"
TRUNCATED = "[truncated]"
#: tcplab's own functions (the core, the store, the extension's).
_TCPLAB_FN = re.compile(r"(^|[<&(\s])(tcplab_\w+|_core)::")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
#: Frames that only pass control on (Rust's panic guards and closures,
#: PyO3's trampolines): left out of the stacks.
_GLUE = re.compile(r"^(std::panicking::|std::panic::|core::ops::function::|<core::panic::unwind_safe::|"
                   r"pyo3::impl_::trampoline|pyo3::marker::Python::allow_threads|_core::<impl )|\{\{closure\}\}$")


class ProfileError(RuntimeError):
    """Bad input or a profiler that cannot run; the message names the option."""


def _ext_library() -> str:
    """File name of tcplab's compiled extension (``_core.abi3.so``)."""
    from .. import _core

    return os.path.basename(getattr(_core, "__file__", "") or "_core.abi3.so")


def _is_tcplab(func: str, dso: str | None, ext: str) -> bool:
    """A frame of tcplab: one of its functions, or in its extension's library
    (matched by file name, not path: a path may say "tcplab" anywhere)."""
    return bool(_TCPLAB_FN.search(func)) or (dso is not None and os.path.basename(dso) == ext)


def scenario_row(name: str, quick: bool = False, seconds: float | None = None) -> Mapping[str, Any]:
    """The benchmark row (``spec_json``, ``description``, ...) of `name`: a
    standard scenario or a scaling point, optionally for `seconds` simulated
    seconds (measured from the middle, as the scaling points)."""
    from .. import _core

    if not name:
        raise ProfileError("--profile: give a scenario name (S1-S6 or a scaling point such as flows=10000)")
    rows = {r["name"]: r for r in _core.bench_suite(quick, seconds)}
    if name == "S5":
        return s5_scenario(quick, seconds)
    if name in rows and rows[name]["spec_json"]:
        return rows[name]
    for axis in AXES:
        for r in _core.bench_scaling(axis, quick):
            if r["name"] == name:
                return r if seconds is None else with_duration(r, seconds)
    points = [r["name"] for axis in AXES for r in _core.bench_scaling(axis, quick)]
    if quick and any(r["name"] == name for axis in AXES for r in _core.bench_scaling(axis, False)):
        raise ProfileError(f"--profile: {name!r} is not a point of the curves with --quick (their largest points "
                           f"are left out); drop --quick, or choose one of {', '.join(points)}")
    raise ProfileError(f"--profile: unknown scenario {name!r}; choose one of {', '.join(list(rows) + points)}")


def find_perf(perf: str | None = None) -> str:
    """The perf binary to use, or a ProfileError saying how to get one."""
    exe = shutil.which(perf or "perf")
    if exe is None:
        where = f"{perf!r} was not found" if perf else "`perf` was not found on PATH"
        raise ProfileError(f"--perf: the profile needs Linux perf and {where}; install it (Debian: "
                           f"`apt-get install linux-perf`, Ubuntu: `apt-get install linux-tools-generic`) "
                           f"or name the binary with --perf PATH")
    return exe


def record(spec_json: str, perf: str, workdir: str, frequency: int = 499, stack_bytes: int = 8192,
           warmup: float = 0.0) -> tuple[str, dict]:
    """Runs `spec_json` in a benchmark child under ``perf record``; returns
    the perf data file and the child's figures (the event loop's after
    `warmup` simulated seconds; perf samples the whole run)."""
    data = os.path.join(workdir, "perf.data")
    cmd = [perf, "record", "-q", "-e", "cpu-clock", "-F", str(frequency), "--call-graph", f"dwarf,{stack_bytes}",
           "-o", data, "--", sys.executable, "-c", CHILD, repr(float(warmup))]
    proc = subprocess.run(cmd, input=spec_json, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if "Traceback (most recent call last)" in proc.stderr:
        # perf ran, the benchmark child did not: say so, not "perf failed".
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProfileError(f"--profile: the benchmark run failed: {tail}")
    if proc.returncode != 0 or not lines or not os.path.exists(data):
        err = proc.stderr.strip().splitlines()
        tail = " / ".join(err[-3:]) if err else "no output"
        hint = (" (perf may not be allowed to sample: see /proc/sys/kernel/perf_event_paranoid, 2 or lower is "
                "needed)" if "paranoid" in proc.stderr or "ermission" in proc.stderr else "")
        raise ProfileError(f"--perf: `perf record` failed (exit {proc.returncode}): {tail}{hint}")
    return data, json.loads(lines[-1])


def script(perf: str, data: str) -> str:
    """``perf script`` of `data`: the samples with their call stacks."""
    proc = subprocess.run([perf, "script", "-i", data], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProfileError(f"--perf: `perf script` failed (exit {proc.returncode}): {tail}")
    return proc.stdout


def _frame(line: str) -> str:
    """The function of one ``perf script`` stack line (``addr sym+off (dso)``)."""
    rest = line.strip().split(None, 1)
    if len(rest) < 2:
        return "[unknown]"
    body = rest[1]
    sym = body.rsplit(" (", 1)[0] if body.endswith(")") and " (" in body else body
    return _OFFSET.sub("", sym) or "[unknown]"


def _dso(line: str) -> str | None:
    """The library of a stack line, or None for an inlined frame (its
    library is that of the frame it was inlined into, printed after it)."""
    body = line.strip()
    if not body.endswith(")") or " (" not in body:
        return ""
    dso = body.rsplit(" (", 1)[1][:-1]
    return None if dso == "inlined" else dso


def fold(text: str, ext: str | None = None) -> Counter:
    """Folded stacks of ``perf script`` output: ``root;...;leaf`` -> samples,
    each starting at its first tcplab frame (``[outside tcplab]`` if none);
    `ext` is the file name of tcplab's extension (default: this one's)."""
    ext = ext or _ext_library()
    out: Counter = Counter()
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines or lines[0][:1].isspace():
            continue
        raw = [ln for ln in lines[1:] if ln[:1].isspace()]
        if not raw:
            continue
        lines = list(reversed(raw))  # root first
        frames = [_frame(ln) for ln in lines]
        # Each frame's library: an inlined frame comes after the frame it
        # was inlined into (root first) and belongs to its library.
        dsos, cur = [], None
        for ln in lines:
            d = _dso(ln)
            cur = cur if d is None else d
            dsos.append(cur)
        # From the first frame in tcplab's extension (its Python entry point:
        # building the run, the event loop and converting the results are
        # then siblings) or of a tcplab function.
        start = next((i for i, (f, d) in enumerate(zip(frames, dsos, strict=True)) if _is_tcplab(f, d, ext)), None)
        if start is None:
            out[OUTSIDE] += 1
            continue
        # A complete stack has the interpreter below tcplab's entry point;
        # one that starts inside tcplab was cut short by perf's stack copy.
        head = [TRUNCATED] if start == 0 or frames[start - 1] == "[unknown]" else []
        kept: list[str] = []
        glue = None
        for f, d in zip(frames[start:], dsos[start:], strict=True):
            if d is None or _is_tcplab(f, d, ext):
                if _GLUE.search(f):
                    glue = f
                else:
                    kept.append(f)
                continue
            if not kept:
                kept.append(glue or frames[start])  # never an empty stack: the last pass-through frame
            # The first frame outside tcplab (the C library, the kernel, the
            # interpreter called back) ends the stack, named with its library:
            # what it does below is not tcplab's.
            lib = d if d.startswith("[") else f"[{os.path.basename(d)}]"  # [kernel.kallsyms] as it is
            kept.append(f"{f} {lib}")
            break
        if not kept:
            kept.append(glue or frames[start])
        kept = head + [f.replace(";", ":") for f in kept]
        out[";".join(kept)] += 1
    return out


def tops(folded: Counter, n: int = 15) -> dict:
    """The functions with the most samples on their own (``self``: the
    deepest tcplab frame of each sample, so library code inlined into a
    tcplab function counts as its) and with their callees (``total``, once
    per sample; tcplab's functions only), with shares. Code outside tcplab
    that a tcplab function calls (the C library, the kernel) counts as that
    function's own too."""
    total = sum(folded.values())
    self_c: Counter = Counter()
    incl: Counter = Counter()
    for stack, c in folded.items():
        frames = stack.split(";")
        # Library code inlined into a tcplab function (a vector's push, a
        # pointer write) is that function's: the deepest tcplab frame.
        own = next((f for f in reversed(frames) if _TCPLAB_FN.search(f)), frames[-1])
        self_c[own] += c
        for f in set(frames):
            if _TCPLAB_FN.search(f):
                incl[f] += c

    def rows(c: Counter) -> list[dict]:
        return [{"function": f, "samples": k, "share": k / total} for f, k in c.most_common(n)]

    return {"samples": total, "self": rows(self_c), "total": rows(incl)}


def _color(name: str) -> str:
    """A warm colour from the function's name (stable across runs)."""
    h = hashlib.md5(name.encode()).digest()
    if name == OUTSIDE:
        return "rgb(190,190,190)"
    return f"rgb({205 + h[0] % 50},{80 + h[1] % 130},{h[2] % 55})"


def _short(name: str) -> str:
    """A frame's label: its last two path segments (``World::run``) when the
    name has no generic arguments; the tooltip keeps the full name."""
    if "<" in name or "::" not in name:
        return name
    return "::".join(name.split("::")[-2:])


def svg(folded: Counter, title: str, width: int = 1200, row: int = 16) -> str:
    """A flamegraph of `folded` (root at the bottom), as a self-contained SVG."""
    tree: dict = {"n": 0, "kids": {}}
    for stack, c in folded.items():
        node = tree
        node["n"] += c
        for f in stack.split(";"):
            node = node["kids"].setdefault(f, {"n": 0, "kids": {}})
            node["n"] += c

    total = max(tree["n"], 1)
    pad = 10
    scale = (width - 2 * pad) / total
    # Frames narrower than a tenth of a pixel are left out (as flamegraph.pl's
    # --minwidth), with their callees: one deep, rare stack would otherwise
    # make the picture tall and empty.
    min_n = 0.1 / scale

    def depth(node: dict) -> int:
        return 1 + max((depth(k) for k in node["kids"].values() if k["n"] >= min_n), default=0)

    levels = depth(tree) - 1
    top = 2 * row + 8
    height = top + levels * row + pad
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="rgb(250,250,245)"/>',
           f'<text x="{width / 2}" y="{row + 2}" text-anchor="middle" font-size="14">{escape(title)}</text>',
           f'<text x="{pad}" y="{2 * row + 2}">{total} samples; width = share of samples, hover for details</text>']

    def draw(node: dict, x: float, level: int) -> None:
        for name in sorted(node["kids"]):
            kid = node["kids"][name]
            w = kid["n"] * scale
            if kid["n"] < min_n:
                x += w
                continue
            y = height - pad - (level + 1) * row
            label = f"{name} ({kid['n']} samples, {100.0 * kid['n'] / total:.2f} %)"
            out.append(f'<g><title>{escape(label)}</title><rect x="{x:.2f}" y="{y}" width="{w:.2f}" '
                       f'height="{row - 1}" fill="{_color(name)}" rx="2"/>')
            chars = int((w - 6) / 6.6)
            if chars >= 3:
                text = _short(name)
                text = text if len(text) <= chars else text[:chars - 2] + ".."
                out.append(f'<text x="{x + 3:.2f}" y="{y + row - 4}">{escape(text)}</text>')
            out.append("</g>")
            draw(kid, x, level + 1)
            x += w

    draw(tree, pad, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def profile(name: str, quick: bool = False, seconds: float | None = None, perf: str | None = None,
            frequency: int = 499, svg_path: str | None = None, folded_path: str | None = None,
            log=None) -> dict:
    """Profiles scenario `name`; writes the SVG (and the folded stacks if
    asked) and returns the figures, the top functions and the paths."""
    if frequency < 1:
        raise ProfileError(f"--frequency: must be a positive number of samples per second, got {frequency}")
    limit = max_frequency()
    if limit is not None and frequency > limit:
        raise ProfileError(f"--frequency: {frequency} Hz is above this machine's limit for perf, {limit} Hz "
                           f"(/proc/sys/kernel/perf_event_max_sample_rate)")
    if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
        raise ProfileError(f"--seconds: must be a positive number of seconds, got {seconds}")
    row = scenario_row(name, quick, seconds)
    exe = find_perf(perf)
    svg_path = svg_path or f"profile-{re.sub(r'[^A-Za-z0-9.+-]', '_', name)}.svg"
    check_writable("--svg", svg_path)
    if folded_path:
        check_writable("--folded", folded_path)
    spec = json.loads(row["spec_json"])
    with tempfile.TemporaryDirectory(prefix="tcplab-profile-") as tmp:
        if log:
            log(f"profiling {name}: {row['description']} (perf at {frequency} Hz) ...")
        warmup = float(row.get("warmup") or 0.0)
        data, run = record(row["spec_json"], exe, tmp, frequency, warmup=warmup)
        if log:
            log("unwinding the stacks (perf script) ...")
        folded = fold(script(exe, data))
    if not folded:
        raise ProfileError("--profile: perf recorded no samples; give a longer run (--seconds) or a higher "
                           "--frequency")
    title = f"tcplab {name}: {spec['duration']:g} s simulated, {run['wall_s']:.2f} s wall"
    outputs = [("--svg", svg_path, svg(folded, title))]
    if folded_path:
        outputs.append(("--folded", folded_path, "".join(f"{st} {c}\n" for st, c in sorted(folded.items()))))
    write_all(outputs)
    hops = max(1, run["packets_out_total"])
    measured = max(1, run["packets_out_total"] - run["warmup_packets_out_total"])
    return {"scenario": name, "description": row["description"], "simulated_s": spec["duration"],
            "warmup_s": warmup, "wall_s": run["wall_s"], "core_wall_s": run["core_wall_s"], "events": run["events"],
            "packet_hops": run["packets_out_total"], "ns_per_packet_hop": run["wall_s"] * 1e9 / hops,
            "core_ns_per_packet_hop": run["core_wall_s"] * 1e9 / measured,
            "frequency": frequency, "svg": os.path.abspath(svg_path),
            "folded": os.path.abspath(folded_path) if folded_path else None, **tops(folded)}


def max_frequency() -> int | None:
    """perf's sampling limit on this machine, if the kernel says."""
    try:
        with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def check_writable(option: str, path: str) -> None:
    """Refuses, before anything runs, an output path that cannot be written."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ProfileError(f"{option}: {path!r} is a directory; give a file name")
    if not os.path.isdir(d):
        raise ProfileError(f"{option}: the directory of {path!r} does not exist")
    if not os.access(d, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ProfileError(f"{option}: {path!r} cannot be written")


def write_all(outputs: list[tuple[str, str, str]]) -> None:
    """Writes each (option, path, text) through a temporary file beside it,
    renamed into place only when every one is written: all or none."""
    tmps = []
    try:
        for option, path, text in outputs:
            tmp = f"{path}.tmp-{os.getpid()}"
            try:
                with open(tmp, "w") as f:
                    f.write(text)
            except OSError as e:
                raise ProfileError(f"{option}: cannot write {path!r}: {e.strerror}") from None
            tmps.append((tmp, path))
        for tmp, path in tmps:
            os.replace(tmp, path)
        tmps = []
    finally:
        for tmp, _ in tmps:
            try:
                os.remove(tmp)
            except OSError:
                pass


def print_report(res: dict) -> None:
    print(f"profile of {res['scenario']}: {res['description']}")
    after = f" after the {res['warmup_s']:g} s warm-up" if res.get("warmup_s") else ""
    print(f"  {res['simulated_s']:g} s simulated in {res['wall_s']:.2f} s wall (event loop{after} "
          f"{res['core_wall_s']:.2f} s), {res['events']} events; ns per packet-hop {res['ns_per_packet_hop']:.1f} "
          f"(wall), {res['core_ns_per_packet_hop']:.1f} (event loop{after}, as the scaling curves); "
          f"{res['samples']} samples")
    if res.get("warmup_s"):
        print("  the samples cover the whole run, warm-up included")
    for key, what in (("self", "on their own"), ("total", "with their callees")):
        print(f"\nfunctions with the most samples {what}:")
        for r in res[key]:
            print(f"  {100 * r['share']:6.2f} %  {r['samples']:>7}  {r['function']}")
    print(f"\nflamegraph: {res['svg']}" + (f"\nfolded stacks: {res['folded']}" if res["folded"] else ""))
