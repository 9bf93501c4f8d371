"""Self-contained HTML reports: one page, figures embedded as base64 PNG.

:func:`write_report` recognises three kinds of directory:

- a campaign (``campaign.json``): the sweeps and their base scenarios, the
  tcplab version, seeds, counts, failures with their errors, means across
  seeds with 95 % confidence intervals, and a figure per sweep (total
  goodput and bottleneck utilization against the first swept parameter);
- a ``tcplab run`` output (``summary.json``, ``scenario.toml`` or
  ``spec.json``, Parquet tables, ``cwnd_queue.png``), including a run
  directory inside a campaign: flows and links tables, the scenario, the
  cwnd/queue figure (drawn from the tables when the PNG is absent);
- a reproduction (``index.md`` with ``*.csv`` tables and ``*.png`` figures,
  and the campaign ``campaign/`` holding its runs): the index, the tables,
  the figures, and the stored runs (experiment key, metrics, status) with
  any failures.

The page needs no server and no network: no external scripts, styles or
fonts. A small inline script records in ``<body data-images-ok>`` whether
every figure decoded (used by the headless-browser test).
"""

from __future__ import annotations

import base64
import html
import io
import numbers
import os
import re
import sys
import time
from typing import Any

from .format import format_cell, natural_key

__all__ = ["write_report", "report_html", "ReportError"]


#: A table longer than this shows its first rows and folds the rest (``<details>``).
PREVIEW_ROWS = 12


class ReportError(ValueError):
    """The directory is not something tcplab can report on."""


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;
padding:0 1em;color:#222}
h1{border-bottom:2px solid #345;padding-bottom:.2em}h2{margin-top:1.6em;color:#345}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;white-space:nowrap}
th{background:#eef2f6}td.l,th.l{text-align:left}pre{background:#f6f8fa;padding:.8em;overflow:auto;font-size:.85em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#555}
.fail{color:#a00}.meta{color:#555;font-size:.9em}.scroll{overflow-x:auto}
"""

_SCRIPT = """
window.__errors=[];window.addEventListener('error',function(e){window.__errors.push(String(e.message||e));
document.body.setAttribute('data-errors',window.__errors.join(' | '));});
window.addEventListener('load',function(){var imgs=document.images,ok=0;for(var i=0;i<imgs.length;i++){
if(imgs[i].complete&&imgs[i].naturalWidth>0)ok++;}document.body.setAttribute('data-images',String(imgs.length));
document.body.setAttribute('data-images-ok',String(ok));});
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _img(png: bytes, caption: str) -> str:
    b64 = base64.b64encode(png).decode()
    return (f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _fig_png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def _rows_html(d: Any, digits: int) -> str:
    cols = list(d.columns)
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    rows = []
    for values in d.itertuples(index=False, name=None):  # column by column: each keeps its own dtype
        cells = []
        for c, v in zip(cols, values, strict=True):
            text = _e(format_cell(c, v, digits))
            numeric = isinstance(v, numbers.Real) and not isinstance(v, bool)  # numpy's bool is no Real
            cells.append(f"<td>{text}</td>" if numeric else f"<td class=l>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class=scroll><table><tr>{head}</tr>{''.join(rows)}</table></div>"


def _table(df: Any, max_rows: int = 500, digits: int = 6, preview: int = 0, csv: str | None = None) -> str:
    """An HTML table; numbers with their column's unit (tcplab.report.format).

    ``preview``: a table longer than that shows its first ``preview`` rows and
    keeps the rest folded (``<details>``), so that a long table does not push
    what follows thousands of pixels down. ``csv``: a link to the whole table."""
    if df is None or len(df) == 0:
        return "<p class=meta>(none)</p>"
    link = f' (<a href="{_e(csv)}">{_e(os.path.basename(csv))}</a>)' if csv else ""
    more = f"<p class=meta>{len(df) - max_rows} more rows not shown{link}</p>" if len(df) > max_rows else ""
    if preview and len(df) > preview:
        return (_rows_html(df.head(preview), digits)
                + f"<details><summary>all {len(df):,} rows{link}</summary>"
                + _rows_html(df.head(max_rows), digits) + more + "</details>")
    return _rows_html(df.head(max_rows), digits) + more


def _page(title: str, body: str) -> str:
    import tcplab

    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'><style>{_CSS}</style>"
            f"<script>{_SCRIPT}</script></head><body><h1>{_e(title)}</h1>"
            f"<p class=meta>tcplab {_e(tcplab.__version__)} · report written {_e(stamp)}</p>{body}</body></html>\n")


# ---------------------------------------------------------------- campaign

def _sweep_figure(agg: Any, params: list[str], name: str) -> bytes | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = [(m, lbl) for m, lbl in (("total_goodput_bps", "total goodput (Mbit/s)"),
                                       ("utilization", "bottleneck utilization")) if f"{m}.mean" in agg]
    if not metrics or not params or len(agg) == 0:
        return None
    x = params[0]
    others = [p for p in params[1:] if p in agg and agg[p].nunique() > 1]
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 3.8), squeeze=False)
    groups = agg.groupby(others, sort=False) if others else [((), agg)]
    for ax, (m, lbl) in zip(axes[0], metrics, strict=True):
        scale = 1e-6 if m.endswith("_bps") else 1.0
        xscale, xunit = _axis_unit(x, agg[x])
        for keys, g in groups:
            if not isinstance(keys, tuple):
                keys = (keys,)
            xs = list(g[x])
            pos: np.ndarray = np.arange(len(xs))
            try:
                xv = np.asarray([float(v) for v in xs])
                pos = xv / xscale
                ticks = None
            except (TypeError, ValueError):
                ticks = [str(v) for v in xs]
            mean = g[f"{m}.mean"].to_numpy() * scale
            lo = g[f"{m}.ci_low"].to_numpy() * scale
            hi = g[f"{m}.ci_high"].to_numpy() * scale
            err = np.vstack([np.nan_to_num(mean - lo), np.nan_to_num(hi - mean)])
            label = ", ".join(f"{k}={v}" for k, v in zip(others, keys, strict=True)) or None
            ax.errorbar(pos, mean, yerr=err, marker="o", capsize=3, label=label)
            if ticks is not None:
                _category_ticks(ax, pos, ticks)
        ax.set_xlabel(f"{x} ({xunit})" if xunit else x)
        ax.set_ylabel(lbl)
        ax.grid(alpha=0.3)
    bottom = 0.0
    if others:  # one legend below the panels, where it covers no data
        handles, labels = axes[0][0].get_legend_handles_labels()
        ncol = min(3, len(labels))
        fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize="small", frameon=False)
        bottom = min(0.45, 0.06 * -(-len(labels) // ncol) + 0.02)
        fig.set_figheight(3.8 / (1 - bottom))
    fig.suptitle(f"{name}: mean across seeds, 95 % t-interval", fontsize="medium")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return _fig_png(fig)


def _axis_unit(column: str, values: Any) -> tuple[float, str]:
    """(divisor, unit) for a numeric swept parameter of known unit: rates in Mbit/s, times in ms below 10 s."""
    from .format import column_unit

    try:
        top = max(abs(float(v)) for v in values)
    except (TypeError, ValueError):
        return 1.0, ""
    unit = column_unit(column)
    if unit == ("scaled", "rate"):
        return (1e9, "Gbit/s") if top >= 1e10 else (1e6, "Mbit/s")
    if unit == ("scaled", "time"):
        return (1e-3, "ms") if top < 10 else (1.0, "s")
    return 1.0, ""


def _category_ticks(ax: Any, pos: Any, ticks: list) -> None:
    """Text tick labels that do not run together: slanted when long or many,
    and only every k-th one when there are more than 12."""
    step = max(1, -(-len(ticks) // 12))
    shown = [t if i % step == 0 else "" for i, t in enumerate(ticks)]
    slant = sum(len(t) for t in shown) > 30 or max(len(t) for t in ticks) > 6
    ax.set_xticks(pos, shown, rotation=35 if slant else 0, ha="right" if slant else "center")


def _campaign_body(path: str) -> tuple[str, str]:
    from ..sweep import Campaign
    from ..sweep.grid import sweep_from_dict
    from ..sweep.query import aggregate

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    camp = Campaign(path, create=False)
    parts = []
    allres = camp.results(include_failed=True)
    n_ok = int((allres["status"] == "ok").sum()) if len(allres) else 0
    n_fail = len(allres) - n_ok
    versions = sorted(set(allres["version"])) if len(allres) else []
    parts.append(f"<p>Campaign <code>{_e(camp.path)}</code>: {len(allres)} stored runs, {n_ok} ok, "
                 f"<span class={'fail' if n_fail else 'meta'}>{n_fail} failed</span>; runs made with tcplab "
                 f"{_e(', '.join(versions) or '-')}.</p>")
    sweeps = camp.sweeps()
    for name, text in sweeps.items():
        parts.append(f"<h2>Sweep {_e(name)}</h2>")
        try:
            sw, _ = sweep_from_dict(tomllib.loads(text), name=name)
        except Exception as e:  # a sweep file edited by hand: show it, say why it is not used
            parts.append(f"<p class=fail>cannot read this sweep description: {_e(e)}</p><pre>{_e(text)}</pre>")
            continue
        df = camp.results(sw)
        seeds = ", ".join(map(str, sw.seeds))
        parts.append(f"<p>{_e(sw.describe())}; {len(df)} stored and ok. Seeds: {_e(seeds)}.</p>")
        parts.append("<details open><summary>Sweep description (base scenario, grid, zipped groups)</summary>"
                     f"<pre>{_e(text)}</pre></details>")
        if len(df):
            agg = aggregate(df, by=sw.parameters)
            png = _sweep_figure(agg, sw.parameters, name)
            if png:
                parts.append(_img(png, f"{name}: total goodput and utilization against {sw.parameters[0]}"))
            keep = sw.parameters + ["n"] + [c for c in agg.columns if c.endswith((".mean", ".ci_low", ".ci_high"))
                                             and c.split(".")[0] in ("total_goodput_bps", "utilization",
                                                                     "jain_index", "drops")]
            parts.append("<h3>Means across seeds (95 % confidence interval, Student t)</h3>"
                         + _table(agg[keep], preview=PREVIEW_ROWS))
            cols = sw.parameters + ["seed"] + [c for c in df.columns if c in
                                               ("total_goodput_bps", "utilization", "drops", "retransmits",
                                                "timeouts", "jain_index") or c.startswith("goodput_bps.")] + ["key"]
            parts.append("<h3>Runs</h3>" + _table(df[cols], preview=PREVIEW_ROWS))
    if not sweeps and len(allres):
        parts.append("<h2>Runs</h2>" + _table(allres.drop(columns=["error"], errors="ignore"), preview=PREVIEW_ROWS))
    fails = camp.failures()
    parts.append("<h2>Failures</h2>")
    if len(fails):
        parts.append(f"<p class=fail>{len(fails)} failed run(s); rerun them with "
                     f"<code>tcplab sweep … --retry-failed</code>.</p>" + _table(fails))
    else:
        parts.append("<p>None.</p>")
    camp.close()
    return f"Campaign report: {os.path.basename(camp.path)}", "".join(parts)


# ---------------------------------------------------------------- one run

def _run_body(path: str) -> tuple[str, str]:
    from ..results import Results

    try:
        res = Results.load(path)
    except Exception as e:
        raise ReportError(f"{path}: cannot read the run's results ({type(e).__name__}: {e})") from None
    parts = []
    summ = res.summary()
    meta = summ["meta"]
    events = format_cell("events", meta["events"]) if meta.get("events") is not None else "?"
    parts.append(f"<p>Scenario <b>{_e(summ['scenario'])}</b>: {_e(meta.get('sim_time'))} s simulated, "
                 f"{_e(events)} events, seed {_e(meta.get('seed'))}, run with tcplab "
                 f"{_e(meta.get('version', '?'))}; measurement window from {_e(meta.get('measure_start'))} s.</p>")
    png_path = os.path.join(path, "cwnd_queue.png")
    if os.path.exists(png_path):
        with open(png_path, "rb") as fh:
            parts.append(_img(fh.read(), "cwnd of each flow and bottleneck queue against time"))
    else:
        import tempfile

        from ..plot import plot_cwnd_queue

        with tempfile.TemporaryDirectory() as td:
            p = os.path.join(td, "f.png")
            plot_cwnd_queue(res, p)
            with open(p, "rb") as fh:
                parts.append(_img(fh.read(), "cwnd of each flow and queue against time (drawn from the tables)"))
    cols = [c for c in ("name", "algorithm", "recovery", "goodput_bps", "bytes_delivered", "retransmits",
                        "timeouts", "fast_recoveries", "rtt_mean") if c in res.flows]
    parts.append("<h2>Flows</h2>" + _table(res.flows[cols]))
    lcols = [c for c in ("name", "rate_bps", "delay", "utilization", "drops", "queue_mean_packets",
                         "queue_max_packets") if c in res.links]
    parts.append("<h2>Links</h2>" + _table(res.links[lcols]))
    if len(res.files):
        parts.append("<h2>Files</h2>" + _table(res.files))
    for fname, label in (("scenario.toml", "Scenario"), ("run.json", "Run record"), ("spec.json", "Run description")):
        p = os.path.join(path, fname)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                text = fh.read()
            parts.append(f"<details{' open' if fname == 'scenario.toml' else ''}><summary>{label} ({fname})"
                         f"</summary><pre>{_e(text)}</pre></details>")
            if fname == "scenario.toml":
                break
    return f"Run report: {summ['scenario']}", "".join(parts)


# ---------------------------------------------------------------- reproduction

def _md_inline(s: str) -> str:
    s = _e(s)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`(.+?)`", r"<code>\1</code>", s)
    return s


def _markdown(text: str) -> str:
    """The subset of Markdown the reproductions' index.md uses: headings,
    paragraphs, bullet lists, pipe tables, bold and code (one-line ``<!-- -->`` comments are left out)."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    table: list[str] = []

    def flush() -> None:
        if para:
            out.append("<p>" + _md_inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_md_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()
        if table:
            rows = [r for r in table if not re.fullmatch(r"\|?[\s:|-]+\|?", r)]
            cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
            if cells:
                h = "".join(f"<th>{_md_inline(c)}</th>" for c in cells[0])
                b = "".join("<tr>" + "".join(f"<td>{_md_inline(c)}</td>" for c in r) + "</tr>" for r in cells[1:])
                out.append(f"<table><tr>{h}</tr>{b}</table>")
            table.clear()

    for line in text.splitlines():
        if line.startswith("<!--") and line.rstrip().endswith("-->"):
            continue  # a one-line comment: index.md's record for tcplab itself
        m = re.match(r"^(#{1,6})\s+(.*)", line)
        if m:
            flush()
            lvl = min(6, len(m.group(1)) + 1)
            out.append(f"<h{lvl}>{_md_inline(m.group(2))}</h{lvl}>")
        elif line.strip().startswith("|"):
            if para or items:
                t = list(table)
                table.clear()
                flush()
                table.extend(t)
            table.append(line)
        elif re.match(r"^\s*[-*]\s+", line):
            if para or table:
                flush()
            items.append(re.sub(r"^\s*[-*]\s+", "", line))
        elif not line.strip():
            flush()
        else:
            if items or table:
                flush()
            para.append(line.strip())
    flush()
    return "".join(out)


#: The campaign of a reproduction, inside its output directory (tcplab.experiments.CAMPAIGN_DIR).
_REPRO_CAMPAIGN = "campaign"


def _reproduction_runs(path: str) -> str:
    """The runs stored in a reproduction's campaign: counts, one row per run, failures."""
    from ..sweep import Campaign

    camp = Campaign(path, create=False)
    try:
        df = camp.results(include_failed=True)
        fails = camp.failures()
    finally:
        camp.close()
    n_ok = int((df["status"] == "ok").sum()) if len(df) else 0
    parts = [f"<h2>Runs</h2><p>Stored in the campaign <code>{_e(path)}</code>: {len(df)} runs, {n_ok} ok, "
             f"<span class={'fail' if len(df) - n_ok else 'meta'}>{len(df) - n_ok} failed</span>. Each run is "
             "stored whole (every table and time series); <code>Campaign(path).load(key)</code> reads one back."
             "</p>"]
    if len(df):
        first = [c for c in ("experiment", "job", "seed") if c in df.columns]
        metrics = [c for c in ("status", "total_goodput_bps", "utilization", "drops", "retransmits", "timeouts",
                               "events", "wall_s", "version", "key") if c in df.columns]
        parts.append(_table(df[first + metrics], max_rows=1000, preview=PREVIEW_ROWS))
    if len(fails):
        parts.append(f"<h3>Failures</h3><p class=fail>{len(fails)} failed run(s); running the reproduction again "
                     "tries them again.</p>" + _table(fails))
    return "".join(parts)


def _csv_title(path: str, csv: str) -> str:
    """The title of a reproduction table: the first heading of its Markdown twin (``fig13.md``), if any."""
    md = os.path.join(path, csv[:-4] + ".md")
    try:
        with open(md, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("# "):
                    return line[2:].strip()
    except OSError:
        pass
    return ""


def _reproduction_body(path: str, page_dir: str | None = None) -> tuple[str, str]:
    """The index, then the figures, then the tables (long ones folded, with a
    link to their CSV), then the stored runs; figures and tables in natural
    order of their names (fig2 before fig10). ``page_dir``: where the page is
    written (the links to the CSVs are relative to it; default ``path``)."""
    import pandas as pd

    camp = os.path.join(path, _REPRO_CAMPAIGN)
    has_campaign = os.path.exists(os.path.join(camp, "campaign.json"))
    # index.md (kk-westwood output from before 0.3 has setup.md instead)
    index = next((os.path.join(path, f) for f in ("index.md", "setup.md") if os.path.exists(os.path.join(path, f))),
                 None)
    if index is not None:
        with open(index, encoding="utf-8") as fh:
            md = fh.read()
    else:
        md = (f"# Reproduction: {os.path.basename(os.path.abspath(path))}\n\n**Not finished: no index.md yet.** "
              "Run the same `tcplab reproduce` command again to finish it (the stored runs are kept).\n")
    first = next((ln.lstrip("# ").strip() for ln in md.splitlines() if ln.startswith("#")), os.path.basename(path))
    parts = [_markdown(re.sub(r"^#\s+.*\n", "", md, count=1))]
    names = sorted(os.listdir(path), key=natural_key)
    pngs = [f for f in names if f.endswith(".png")]
    if pngs:
        parts.append("<h2>Figures</h2>")
        for f in pngs:
            with open(os.path.join(path, f), "rb") as fh:
                data = fh.read()
            if not data.startswith(b"\x89PNG\r\n\x1a\n"):
                parts.append(f"<p class=fail>{_e(f)}: not a PNG file; left out</p>")
                continue
            parts.append(_img(data, f))
    csvs = [f for f in names if f.endswith(".csv")]
    if csvs:
        parts.append(f"<h2>Tables</h2><p class=meta>A table longer than {PREVIEW_ROWS} rows shows its first rows; "
                     "open the rest below it, or its CSV.</p>")
        for f in csvs:
            try:
                df = pd.read_csv(os.path.join(path, f))
            except Exception as e:
                parts.append(f"<p class=fail>{_e(f)}: unreadable ({_e(e)})</p>")
                continue
            try:
                link: str | None = os.path.relpath(os.path.join(path, f), page_dir or path).replace(os.sep, "/")
            except ValueError:  # another drive (Windows): no relative link
                link = None
            title = _csv_title(path, f)
            parts.append(f"<h3>{_e(f)}{': ' + _e(title) if title else ''}</h3>"
                         + _table(df, digits=4, preview=PREVIEW_ROWS, csv=link))
    if has_campaign:
        parts.append(_reproduction_runs(camp))
    return first, "".join(parts)


# ---------------------------------------------------------------- entry points

def detect(path: str) -> str:
    """``"campaign"``, ``"run"`` or ``"reproduction"``; ReportError otherwise."""
    if not os.path.isdir(path):
        raise ReportError(f"{path}: not a directory (expected a campaign, a run output or a reproduction output)")
    if os.path.exists(os.path.join(path, "campaign.json")):
        return "campaign"
    if os.path.exists(os.path.join(path, "summary.json")) and os.path.exists(os.path.join(path, "flows.parquet")):
        return "run"
    if os.path.exists(os.path.join(path, "index.md")) or \
            os.path.exists(os.path.join(path, _REPRO_CAMPAIGN, "campaign.json")):
        return "reproduction"
    raise ReportError(f"{path}: neither a campaign (campaign.json), a run output (summary.json + Parquet tables) "
                      f"nor a reproduction output (index.md, campaign/)")


def report_html(path: str | os.PathLike, page_dir: str | os.PathLike | None = None) -> str:
    """The HTML page for a campaign, run or reproduction directory.
    ``page_dir``: the directory the page will be written to (links to a
    reproduction's CSV files are relative to it; default ``path``)."""
    path = os.fspath(path)
    kind = detect(path)
    if kind == "reproduction":
        title, body = _reproduction_body(path, os.fspath(page_dir) if page_dir is not None else None)
    else:
        title, body = {"campaign": _campaign_body, "run": _run_body}[kind](path)
    return _page(title, body)


def write_report(path: str | os.PathLike, out: str | os.PathLike | None = None) -> str:
    """Write ``report.html`` (or ``out``) for the directory ``path``; returns the file written."""
    from .._files import write_text_atomically

    out = os.fspath(out) if out is not None else os.path.join(os.fspath(path), "report.html")
    page = report_html(path, page_dir=os.path.dirname(os.path.abspath(out)))
    write_text_atomically(out, page)  # nothing left behind on failure; errors name `out`
    return out
