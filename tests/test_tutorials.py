"""The tutorials (docs/tutorials/*.md) are executed, not just rendered.

The convention, for tutorial writers (docs/tutorials/index.md says the same):

* Each tutorial runs in a fresh, empty temporary directory, its blocks in the
  order of the page. Commands write relative paths (``out/...``) only.
* A fenced block whose info string has ``title="NAME"`` (``toml title="two.toml"``,
  ``python title="seeds.py"``) is a file: it is written to NAME and not run.
* An untitled ```` ```sh ```` block is run by ``bash -e -o pipefail``;
  ``tcplab`` and ``python`` on its PATH are this tree's (``sys.executable -m
  tcplab``, ``sys.executable``).
* An untitled ```` ```python ```` block is a complete script, run by this Python.
* A ```` ```text ```` block is the output of the closest runnable block above
  it. Each of its lines (runs of spaces collapsed) must be a line of that
  block's stdout, in order, or a line of its stderr. Lines ``...`` (an
  abridgement) are skipped; wall-clock times (``0.05 s wall``), worker counts
  and overheads may differ (``VOLATILE``).
  The temporary directory appears in the outputs as ``/tmp/tutorial``, the
  directory the tutorials suggest working in.
* A block right after the line ``<!-- tutorial: skip -->`` is neither run nor
  checked (a full-length command that takes half an hour).
* Any other block (``toml`` without a title, ``console``, ``json``) is shown only.

Where a tutorial states a fact about its results ("--seed changes nothing",
"the confidence interval of two Reno flows holds 0.5"), a check below asserts
it on the outputs of the run, so a change in tcplab that makes a tutorial
wrong fails here. The pasted outputs are compared too: when an output changes
(a new column in a summary), the failure shows the new output to paste.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"
PAGES = ["two-algorithms.md", "buffer-sweep.md", "random-loss.md", "generated-topology.md", "reproduce-paper.md"]
SKIP_MARK = "<!-- tutorial: skip -->"
RUNNABLE = ("sh", "python")
BLOCK_TIMEOUT_S = 300
SHOWN_DIR = "/tmp/tutorial"

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
TITLE = re.compile(r"""\btitle=(?P<q>["'])(?P<title>.*?)(?P=q)""")


# -- extraction --------------------------------------------------------------------------------------------------------
@dataclass
class Block:
    lang: str            # the first word of the info string ("" for none)
    title: str | None  # title="..." of the info string
    text: str            # the block's content, its fence's indentation removed
    line: int            # 1-based line of the opening fence
    skip: bool           # preceded by <!-- tutorial: skip -->

    @property
    def kind(self) -> str:
        """'file', 'run', 'output' or 'shown'."""
        if self.skip:
            return "shown"
        if self.title:
            return "file"
        if self.lang in RUNNABLE:
            return "run"
        if self.lang == "text":
            return "output"
        return "shown"


def extract_blocks(markdown: str) -> list[Block]:
    """The fenced code blocks of a Markdown page, in order (fences may be indented, as inside an
    admonition; a block closes at a fence of the same character, at least as long, with no info)."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    last_nonblank = ""
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                last_nonblank = lines[i].strip()
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        words = info.split()
        lang = words[0].lower() if words and "=" not in words[0] else ""
        t = TITLE.search(info)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            closing = c and not c.group("info").strip() and c.group("fence")[0] == fence[0]
            if closing and len(c.group("fence")) >= len(fence):
                break
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        else:
            raise AssertionError(f"line {start + 1}: fenced block never closed")
        blocks.append(Block(lang, t.group("title") if t else None, "\n".join(body) + "\n", start + 1,
                            last_nonblank == SKIP_MARK))
        last_nonblank = ""
        i += 1
    return blocks


# -- running -----------------------------------------------------------------------------------------------------------
@dataclass
class Ran:
    block: Block
    stdout: str
    stderr: str
    outputs: list[Block] = field(default_factory=list)  # the ```text blocks shown as its output


def _env(bindir: Path) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MPLBACKEND"] = "Agg"
    return env


def _shims(bindir: Path) -> None:
    """``tcplab`` and ``python`` on the blocks' PATH: this tree's, whatever is installed."""
    bindir.mkdir()
    shims = {"tcplab": f'exec "{sys.executable}" -m tcplab "$@"', "python": f'exec "{sys.executable}" "$@"',
             "python3": f'exec "{sys.executable}" "$@"'}
    for name, cmd in shims.items():
        p = bindir / name
        p.write_text(f"#!/bin/sh\n{cmd}\n")
        p.chmod(0o755)


def _as_shown(text: str, workdir: Path) -> str:
    """Output as the pages show it: the working directory (absolute paths in some messages) as
    SHOWN_DIR, the directory the tutorials suggest working in."""
    for d in {str(workdir.resolve()), str(workdir)}:
        text = text.replace(d, SHOWN_DIR)
    return text


#: What differs from machine to machine in a printed line, masked on both sides before comparing.
VOLATILE = [(re.compile(r"[\d.]+ s wall"), "<t> s wall"), (re.compile(r"on \d+ worker\(s\)"), "on <n> worker(s)"),
            (re.compile(r"tcplab overhead [\d.]+ %"), "tcplab overhead <x> %")]


def _normal(line: str) -> str:
    """A line with runs of spaces collapsed and wall-clock times, worker counts and overheads masked."""
    line = " ".join(line.split())
    for pattern, mask in VOLATILE:
        line = pattern.sub(mask, line)
    return line


def check_output(shown: Block, ran: Ran, page: str) -> None:
    """Every line of a ```text block is a line of the block's stdout (in order) or of its stderr."""
    out = [_normal(x) for x in ran.stdout.splitlines()]
    err = {_normal(x) for x in ran.stderr.splitlines()}
    pos = 0
    for want in shown.text.splitlines():
        w = _normal(want)
        if not w or w in ("...", "…"):
            continue
        try:
            pos = out.index(w, pos) + 1
        except ValueError:
            if w in err:
                continue
            raise AssertionError(
                f"{page}:{shown.line}: the output shown has the line\n    {want.strip()}\n"
                f"which the block of line {ran.block.line} did not print (in this order). It printed:\n"
                f"--- stdout\n{ran.stdout}--- stderr\n{ran.stderr}---") from None


def run_tutorial(page: str, workdir: Path) -> list[Ran]:
    """Write, run and check every block of one tutorial in ``workdir``; the runnable blocks with their output."""
    blocks = extract_blocks((TUTORIALS / page).read_text(encoding="utf-8"))
    bindir = workdir.parent / f"{workdir.name}-bin"
    _shims(bindir)
    env = _env(bindir)
    ran: list[Ran] = []
    for b in blocks:
        if b.kind == "file":
            target = (workdir / b.title).resolve()
            assert workdir.resolve() in target.parents, f"{page}:{b.line}: title {b.title!r} leaves the directory"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.text, encoding="utf-8")
        elif b.kind == "run":
            argv = ["bash", "-e", "-o", "pipefail", "-c", b.text] if b.lang == "sh" else [sys.executable, "-c", b.text]
            p = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
            assert p.returncode == 0, (f"{page}:{b.line}: the {b.lang} block exited with {p.returncode}\n{b.text}"
                                       f"--- stdout\n{p.stdout}--- stderr\n{p.stderr}")
            ran.append(Ran(b, _as_shown(p.stdout, workdir), _as_shown(p.stderr, workdir)))
        elif b.kind == "output":
            assert ran, f"{page}:{b.line}: an output block before any runnable block"
            check_output(b, ran[-1], page)
            ran[-1].outputs.append(b)
    return ran


# -- the facts each tutorial states ------------------------------------------------------------------------------------
def _goodputs(summary_path: Path) -> list[float]:
    return [f["goodput_bps"] for f in json.loads(summary_path.read_text())["flows"]]


def _block(ran: list[Ran], needle: str) -> Ran:
    """The one runnable block whose text contains ``needle``."""
    found = [r for r in ran if needle in r.block.text]
    assert len(found) == 1, f"{len(found)} blocks contain {needle!r}"
    return found[0]


def _column(text: str, pattern: str) -> list[float]:
    """The first group of ``pattern`` in every line of ``text`` it matches, as floats."""
    return [float(m) for m in re.findall(pattern, text, re.M)]


def facts_two_algorithms(d: Path, ran: list[Ran]) -> None:
    # One deterministic run: --seed changes nothing, and CUBIC takes most of the link.
    g0, g7 = _goodputs(d / "out/two/summary.json"), _goodputs(d / "out/two-seed7/summary.json")
    assert g0 == g7
    det_share = g0[0] / sum(g0)
    assert det_share > 0.8
    # Random access delays (step 3), even below one packet time for two Reno flows: the shares swing.
    for needle in ('sc.access_delay = "uniform"', "packet_time ="):
        # "seed  CUBIC  Reno  share" or "seed  share  rtt1, rtt2": the share column
        shares = _column(_block(ran, needle).stdout,
                         r"^\s*\d+\s+(?:[\d.]+\s+[\d.]+\s+)?([\d.]+)(?:\s+[\d.]+, [\d.]+)?$")
        assert len(shares) == 5 and max(shares) - min(shares) > 0.3, (needle, shares)
    # Forty seeds (step 4): two Reno flows' interval holds 0.5, CUBIC's holds 0.5 too, and the
    # deterministic answer lies outside it.
    ci = {m[0]: (float(m[1]), float(m[2]), float(m[3])) for m in re.findall(
        r"^(\S+ vs \S+): flow1 share ([\d.]+), 95 % CI \[([\d.]+), ([\d.]+)\] over 40 seeds",
        _block(ran, "t_interval(").stdout, re.M)}
    assert set(ci) == {"cubic vs reno", "reno vs reno"}
    for pair in ci:
        assert ci[pair][1] < 0.5 < ci[pair][2], (pair, ci[pair])
    assert not ci["cubic vs reno"][1] <= det_share <= ci["cubic vs reno"][2]
    # Step 5: the seed alone changes nothing, random starts stay near the locked answer, RED gives
    # runs that agree near an even split.
    ranges = {m[0].strip(): (float(m[1]), float(m[2])) for m in re.findall(
        r"^(.*?) CUBIC share over 10 seeds: ([\d.]+) to ([\d.]+)$", _block(ran, "variants =").stdout, re.M)}
    assert ranges["drop-tail"][0] == ranges["drop-tail"][1] == round(det_share, 2)
    lo, hi = ranges["drop-tail, random start"]
    assert hi - lo <= 0.1 and lo > 0.8
    lo, hi = ranges["RED"]
    assert round(hi - lo, 2) <= 0.05 and 0.45 <= lo and hi <= 0.55


def facts_buffer_sweep(d: Path, ran: list[Ran]) -> None:
    import tcplab
    from tcplab.analysis import reno_sawtooth_utilization

    sweep, _ = tcplab.load_sweep(d / "sweep.toml")
    camp = tcplab.Campaign(d / "out/buffers")
    assert len(camp) == 25                          # the second sweep ran nothing new
    agg = camp.aggregate(sweep)
    assert list(agg["n"]) == [5] * 5
    fractions = [float(b.removesuffix("BDP")) for b in agg["buffer"]]
    util = list(agg["utilization.mean"])
    assert util == sorted(util), util  # more buffer, more utilization
    for f, u in zip(fractions, util, strict=True):  # above the one-flow model from 0.25 BDP, far below it under
        model = reno_sawtooth_utilization("20Mbps", 0.060, round(f * 67))
        assert (u > model) if f >= 0.25 else (u < model - 0.2), (f, u, model)
    assert (d / "out/buffers.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Step 5: at 0.1 BDP the windows add up to less than the path's BDP; at 1 BDP to more.
    rows = re.findall(r"^(\S+BDP)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$",
                      _block(ran, "sc.loss_trace = True").stdout, re.M)
    by = {r[0]: [float(x) for x in r[1:]] for r in rows}
    assert by["0.1BDP"][1] < by["0.1BDP"][2] < by["1BDP"][1]
    assert by["0.1BDP"][4] > 0.5 * by["0.1BDP"][3]   # losses in pairs: partial ACKs as many as fast retransmits


def facts_random_loss(d: Path, ran: list[Ran]) -> None:
    import tcplab

    res = tcplab.Results.load(d / "out/lossy")
    link = res.links.set_index("name").loc["r1-r2"]
    assert link["drops"] == 0 and link["losses"] > 0
    assert res.flows["data_packets_lost"].sum() == link["losses"]
    rows = {}
    for m in re.finditer(r"^(bernoulli|gilbert)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                         r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)$", _block(ran, "def mathis_bps").stdout, re.M):
        rows[m.group(1), float(m.group(2))] = [float(x) for x in m.groups()[2:]]
    assert len(rows) == 8
    ratio, ratio_red, timeouts = 4, 7, 8             # columns after p: lost, RTT, Mbit/s, Mathis, ratio, ...
    for p in (0.001, 0.003, 0.01):
        assert 0.95 <= rows["bernoulli", p][ratio] <= 1.05, rows["bernoulli", p]     # "within a few percent"
        assert rows["gilbert", p][ratio] >= 1.3                                      # "30 to 50 % faster"
        assert 0.88 <= rows["gilbert", p][ratio_red] <= 1.12                         # "back within 12 %"
    assert rows["bernoulli", 0.03][ratio] < 0.8
    assert rows["bernoulli", 0.03][timeouts] > 3 * rows["bernoulli", 0.01][timeouts]


def facts_generated_topology(d: Path, ran: list[Ran]) -> None:
    import tcplab
    from tcplab.generate import load_frozen

    frozen = load_frozen(d / "out/pl.json")
    assert len(frozen.flows) == 16 and frozen.groups == ["A", "B"]
    base, mixed = tcplab.Results.load(d / "out/pl-all-reno"), tcplab.Results.load(d / "out/pl-reno-cubic")
    groups = frozen.flow_frame()["group"].tolist()
    assert set(base.flows["algorithm"]) == {"newreno"}
    algorithms = list(zip(mixed.flows["algorithm"], groups, strict=True))
    assert [a for a, g in algorithms if g == "B"] == ["cubic"] * groups.count("B")
    assert [a for a, g in algorithms if g == "A"] == ["newreno"] * groups.count("A")
    # Step 3: the control group moved too (a Reno flow gained), and the longest CUBIC path more than doubled.
    rel = {m[0]: (m[1], float(m[2])) for m in re.findall(r"^(long\d+)\s+([AB])\s.*\s([\d.]+)$",
                                                           _block(ran, "join_files(frozen, runs)").stdout, re.M)}
    assert len(rel) == 6
    assert any(g == "A" and r > 1.2 for g, r in rel.values()) and any(g == "B" and r > 2 for g, r in rel.values())
    # Step 4: over eight networks the CUBIC group gains on the Reno group, the interval above 0.
    m = re.search(r"CUBIC group minus Reno group: ([-\d.]+), 95 % CI \[([-\d.]+), ([-\d.]+)\] over 8 networks",
                  _block(ran, "generate_from_dict").stdout)
    assert m and float(m.group(2)) > 0, _block(ran, "generate_from_dict").stdout


def facts_reproduce_paper(d: Path, ran: list[Ran]) -> None:
    import pandas as pd

    import tcplab

    out = d / "out/mvh-quick"
    assert {p.name for p in out.iterdir()} >= {"campaign", "index.md", "table1.csv", "table1.md"}
    assert "QUICK MODE" in (out / "table1.md").read_text() and "QUICK MODE" in (out / "index.md").read_text()
    assert len(tcplab.Campaign(out / "campaign")) == 28      # the rerun stored nothing new
    t = pd.read_csv(out / "table1.csv")
    assert len(t) == 28 and set(t["duration_s"]) == {60.0}
    reno = t[t["protocol"] == "NewReno"].set_index(["rtt_ms", "buffer_bdp"])
    for rtt in (100, 300):    # full buffer: model and run agree; a tenth of a BDP: far apart
        assert reno.loc[(rtt, 1.0), "goodput_kbps"] > 0.95 * reno.loc[(rtt, 1.0), "analytic_goodput_kbps"]
        assert reno.loc[(rtt, 0.1), "goodput_kbps"] < 0.5 * reno.loc[(rtt, 0.1), "analytic_goodput_kbps"]
    epochs = [int(x) for x in re.findall(r"^\s*\d+\s+[\d.]+\s+60\s+(\d+)\s", _block(ran, "epoch_s").stdout, re.M)]
    assert len(epochs) == 4 and min(epochs) > 60                # every quick run is shorter than one epoch


FACTS: dict[str, Callable[[Path, list[Ran]], None]] = {
    "two-algorithms.md": facts_two_algorithms,
    "buffer-sweep.md": facts_buffer_sweep,
    "random-loss.md": facts_random_loss,
    "generated-topology.md": facts_generated_topology,
    "reproduce-paper.md": facts_reproduce_paper,
}


# -- the tests ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES)
def test_tutorial_runs(page, tmp_path):
    """Every command of the tutorial exits 0, its outputs are what the page shows, and its facts hold."""
    work = tmp_path / "work"
    work.mkdir()
    ran = run_tutorial(page, work)
    assert ran, f"{page}: no runnable block"
    assert any(r.outputs for r in ran), f"{page}: shows no output"
    FACTS.get(page, lambda d, r: None)(work, ran)


def test_index_lists_every_tutorial():
    index = (TUTORIALS / "index.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"({page})" in index, f"docs/tutorials/index.md does not link {page}"
    on_disk = {p.name for p in TUTORIALS.glob("*.md")} - {"index.md"}
    assert on_disk == set(PAGES), f"tutorials not run by this test: {sorted(on_disk - set(PAGES))}"


def test_extract_blocks_convention():
    page = "\n".join([
        "Intro", "", '```toml title="a.toml"', "x = 1", "```", "", "```sh", "tcplab run a.toml", "```",
        "```text", "out", "```", "", SKIP_MARK, "", "```sh", "sleep 3600", "```", "!!! note", "",
        "    ```python", "    print(1)", "    ```", "````markdown", "```sh", "nested", "```", "````",
        "```toml", "y = 2", "```",
    ])
    kinds = [(b.kind, b.lang, b.title, b.text) for b in extract_blocks(page)]
    assert kinds == [
        ("file", "toml", "a.toml", "x = 1\n"),
        ("run", "sh", None, "tcplab run a.toml\n"),
        ("output", "text", None, "out\n"),
        ("shown", "sh", None, "sleep 3600\n"),
        ("run", "python", None, "print(1)\n"),
        ("shown", "markdown", None, "```sh\nnested\n```\n"),
        ("shown", "toml", None, "y = 2\n"),
    ]


def test_check_output_reports_a_stale_line():
    b = Block("sh", None, "x\n", 1, False)
    ran = Ran(b, "a  1\n25 runs; 1.4 s wall on 2 worker(s)\nb 2\n", "warning: w\n")
    shown = "a 1\n...\n25 runs; 0.9 s wall on 8 worker(s)\nwarning: w\nb    2\n"
    check_output(Block("text", None, shown, 2, False), ran, "p.md")
    for stale in ("b 2\na 1\n", "a 1\nb 3\n", "26 runs; 1.4 s wall on 2 worker(s)\n"):
        with pytest.raises(AssertionError, match="did not print"):
            check_output(Block("text", None, stale, 2, False), ran, "p.md")
