"""The index of a reproduction's output directory: ``index.md`` (for reading)
and ``index.json`` (the same record, for scripts and for the next run).

One output directory holds the items of one paper, made by one or several
``tcplab reproduce`` commands (``reproduce mv-highspeed table1`` today,
``... fig13`` tomorrow). The index lists **every item present**: a command
adds the items it made and replaces the entries of items it made again;
items made earlier stay listed as long as one of their files is still there.
Each entry says when and by which tcplab version the item was made, with
which settings (quick or full, the paper's setup text), and the size and
wall time of the command that made it. Files in the directory that no item
made are listed apart, so nothing in it goes undescribed.

index.md carries the whole record on its last line (an HTML comment, not shown), so
either file alone is enough: a deleted or damaged index.json loses nothing. An
index.md without that line (an earlier tcplab's) is read once: its "## Outputs"
lines become entries, with what they said of when each item was made.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

#: index.json's layout; a file of another format is read as if absent (and rewritten).
FORMAT = 1

#: What else a reproduction directory holds, and what it is.
KNOWN_EXTRAS = {
    "campaign": "every run, stored whole (a rerun computes only the runs missing there; `tcplab report` lists them)",
    "report.html": "the HTML report (`tcplab report DIR`); it shows the files as they were when it was written",
    "scenario-L*-c*.json": "the generated scenarios, frozen, that every ssm-interactions item replays",
}


def _known(name: str) -> str | None:
    """What KNOWN_EXTRAS says of ``name`` (its keys may be glob patterns), or None."""
    import fnmatch

    return next((text for pat, text in KNOWN_EXTRAS.items() if fnmatch.fnmatchcase(name, pat)), None)


def update_index(out: str, title: str, scenario: str, made: dict, setup: str, quick_text: str | None,
                 runs: int | None, packets: int | None, wall: float,
                 order: Sequence[str] = ()) -> dict:
    """Merge the items of ``made`` (``{item: {"files": [...]}}``, made now by
    one command with ``setup``, ``quick_text``, ``runs``, ``packets`` and
    ``wall``) into ``out``'s index and rewrite index.md and index.json;
    returns the merged record. ``order``: the paper's item order (items are
    listed in it; unknown ones after, by name)."""
    import tcplab

    from .._files import write_text_atomically

    record = read_index(out)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    batch = [it for it in made]
    for it in batch:
        record["items"][it] = {
            "files": [os.path.basename(p) for p in made[it]["files"]],
            "made": now,
            "version": tcplab.__version__,
            "quick": quick_text,
            "setup": setup,
            "with": [o for o in batch if o != it],
            "runs": runs,
            "bottleneck_packets": packets,
            "wall_s": round(float(wall), 1),
        }
        if made[it].get("phase"):
            record["items"][it]["phase"] = made[it]["phase"]
    record["title"] = title
    record["scenario"] = scenario
    rank = {it: i for i, it in enumerate(order)}
    record["items"] = dict(sorted(record["items"].items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    # items whose files are all gone are no longer present
    record["items"] = {it: e for it, e in record["items"].items()
                       if any(os.path.exists(os.path.join(out, f)) for f in e["files"])}
    write_text_atomically(os.path.join(out, "index.json"), json.dumps(record, indent=1) + "\n")
    write_text_atomically(os.path.join(out, "index.md"), render(out, record))
    return record


#: index.md carries the record itself on its last line, so that it is enough alone (index.json
#: deleted, truncated or unreadable): ``<!-- tcplab-index {...} -->``, one line of JSON.
_EMBED = "<!-- tcplab-index "


def _embedded(record: dict) -> str:
    """The record as index.md's last line: JSON without line breaks, and no ``--`` in it (a ``-->``
    inside a string would end the comment): the second dash is written as the escape \\u002d."""
    text = json.dumps(record, ensure_ascii=True, separators=(",", ":")).replace("--", "-\\u002d")
    return f"{_EMBED}{text} -->"


def _valid(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("format") == FORMAT and isinstance(rec.get("items"), dict)


def read_index(out: str) -> dict:
    """``out``'s index record: the one index.md carries, else index.json, else the Outputs lines of
    an index.md without one (an earlier tcplab's, or one whose last line was cut off), else an
    empty record. A damaged index.json loses nothing index.md still lists."""
    md = os.path.join(out, "index.md")
    try:
        with open(md, encoding="utf-8") as fh:
            text: str | None = fh.read()
    except (OSError, UnicodeDecodeError):
        text = None
    for line in reversed((text or "").splitlines()):
        if line.startswith(_EMBED) and line.rstrip().endswith("-->"):
            try:
                rec = json.loads(line.rstrip()[len(_EMBED):-3])
            except ValueError:
                break
            if _valid(rec):
                return rec
            break
    path = os.path.join(out, "index.json")
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as fh:
                rec = json.load(fh)
            if _valid(rec):
                return rec
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        kept = " (the items index.md lists are kept)" if text else ""
        print(f"note: {path} is not an index this tcplab reads; it is rewritten{kept}", file=sys.stderr)
    return _from_outputs(text or "")


#: An Outputs line of index.md: ``- fig2 (QUICK): fig2.png (missing now: fig2.csv); made ...`` (this
#: version's) or ``- table1: t1.csv, t2.csv`` (before 0.2); the item's name has no spaces or colons.
_OUTPUT_LINE = re.compile(r"^- ([^:\s]+)( \(QUICK\))?: (.*)$")


def _from_outputs(text: str) -> dict:
    """A record from index.md's "## Outputs" lines alone: each item with its files (those present
    and those listed as missing) and, when the line says it, when and by which version it was made."""
    rec: dict[str, Any] = {"format": FORMAT, "title": "", "scenario": "", "items": {}}
    parts = text.split("\n## Outputs\n", 1)
    if len(parts) < 2:
        return rec
    for line in parts[1].split("\n## ", 1)[0].splitlines():
        m = _OUTPUT_LINE.match(line)
        if not m:
            continue
        files_text, _, when = m.group(3).partition("; ")
        missing = re.search(r" \(missing now: ([^)]*)\)$", files_text)
        if missing:
            files_text = files_text[:missing.start()]
        files = [f.strip() for f in files_text.split(",") if f.strip()]
        files += [f.strip() for f in missing.group(1).split(",") if f.strip()] if missing else []
        entry: dict[str, Any] = {"files": files, "made": None}
        if when.startswith("made ") and not when.startswith("made by an earlier tcplab"):
            entry["as_listed"] = when  # "made <when> by tcplab <version> ...", shown again as it was
        if m.group(2):
            entry["quick"] = "QUICK"
        rec["items"][m.group(1)] = entry
    return rec


def _when(e: dict) -> str:
    if not e.get("made"):
        # read back from index.md's lines alone: what they said, else that nothing was recorded
        return e.get("as_listed") or "made by an earlier tcplab; its settings were not recorded"
    size = []
    if e.get("runs") is not None:
        size.append(f"{e['runs']} runs")
    if e.get("bottleneck_packets") is not None:
        size.append(f"{e['bottleneck_packets']:,} bottleneck data packets")
    size.append(f"{e['wall_s']:.1f} s wall")
    together = f" together with {', '.join(e['with'])}" if e.get("with") else ""
    return f"made {e['made']} by tcplab {e['version']}{together} ({'; '.join(size)})"


def _demoted(text: str) -> str:
    """Markdown ``text`` with every heading one level lower (``### Runs`` -> ``#### Runs``)."""
    return "\n".join("#" + line if re.match(r"#+ ", line) else line for line in text.split("\n"))


def render(out: str, record: dict) -> str:
    """index.md for ``record`` (the subset of Markdown `tcplab report` renders)."""
    items = record["items"]
    lines = [f"# {record['title']}", ""]
    quick = {it: e.get("quick") for it, e in items.items()}
    if items and all(quick.values()) and len(set(quick.values())) == 1:
        lines += [f"**{next(iter(quick.values()))}**", ""]
    elif any(quick.values()):
        lines += ["**Some items below are QUICK MODE (shortened runs, marked QUICK): not the paper's results.**", ""]
    lines += ["Every item made into this directory is listed here: running more items adds them, running an "
              "item again replaces its entry (`index.json` holds the same record for scripts).", ""]
    if record.get("scenario"):
        lines += ["## Scenario", "", record["scenario"], ""]
    setups: dict[str, list[str]] = {}
    for it, e in items.items():
        if e.get("setup"):
            setups.setdefault(e["setup"], []).append(it)
    if len(setups) == 1:
        lines += ["## Settings", "", next(iter(setups)), ""]
    elif setups:
        lines += ["## Settings", "", "The items were made with different settings:", ""]
        for text, its in setups.items():
            # each group's own headings one level down, under the group's
            lines += [f"### {', '.join(its)}", "", _demoted(text), ""]
    lines += ["## Outputs", ""]
    claimed = set()
    for it, e in items.items():
        present = [f for f in e["files"] if os.path.exists(os.path.join(out, f))]
        gone = [f for f in e["files"] if f not in present]
        claimed.update(e["files"])
        mark = " (QUICK)" if e.get("quick") and not all(quick.values()) else ""
        lines.append(f"- {it}{mark}: {', '.join(present)}"
                     + (f" (missing now: {', '.join(gone)})" if gone else "") + f"; {_when(e)}")
    lines.append("")
    phase = [(it, e["phase"]) for it, e in items.items() if e.get("phase")]
    if phase:  # what the seeds say of each item's outcome (computed from its runs)
        lines += ["## Seeds and phase effects", ""] + [f"- {it}: {text}" for it, text in phase] + [""]
    try:
        names = sorted(os.listdir(out))
    except OSError:
        names = []
    extras = [n for n in names if n not in claimed and n not in ("index.md", "index.json")
              and not n.startswith(".") and ".tmp" not in n]
    described: dict[str, list[str]] = {}
    for n in extras:
        if _known(n):
            described.setdefault(_known(n) or "", []).append(n + ("/" if os.path.isdir(os.path.join(out, n)) else ""))
    other = [n for n in extras if not _known(n)]
    if described or other:
        lines += ["## Other files", ""]
        lines += [f"- {', '.join(ns)}: {text}" for text, ns in described.items()]
        if other:
            lines.append(f"- not made by the items above (an earlier tcplab, or another program): {', '.join(other)}")
        lines.append("")
    lines.append(_embedded(record))  # (read_index reads it back; `tcplab report` does not show it)
    return "\n".join(lines) + "\n"
