"""MkDocs hooks (mkdocs.yml `hooks:`): fill the generated sections of the docs site.

A page holds a marker line ``<!-- generated: NAME -->``; when the site is built
the marker is replaced by text made from the installed tcplab, so these pages
cannot fall behind the code:

- ``cli``: every command's ``--help`` (argparse; ``tcplab bench`` parses its own flags);
- ``algorithms``: the congestion-control algorithms and their parameters (``tcplab algorithms``);
- ``disciplines``: the queue disciplines and their parameters (``tcplab disciplines``);
- ``algorithm_keys``, ``discipline_keys``: one line per algorithm or discipline with its
  parameters' names (the scenario-file reference).

Read on GitHub, the markdown files show the marker and a sentence saying where
the text comes from; the site shows the text.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import os
import re
from collections.abc import Callable
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z_]+) -->$", re.M)
#: Width of the --help text (argparse reads COLUMNS), so the page does not depend on the terminal.
HELP_COLUMNS = "80"


def _help_text(format_help: Callable[[], str]) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        return format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _bench_help() -> str:
    """``tcplab bench --help``: bench.main builds and parses its own parser."""
    from tcplab.devtools import bench

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            bench.main(["--help"])
        except SystemExit:
            pass
    return out.getvalue()


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """The ``tcplab`` subcommands by name, in the order ``tcplab --help`` lists them."""
    from tcplab import cli

    parser = cli._parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise RuntimeError("tcplab's parser has no subcommands")


def cli_reference() -> str:
    from tcplab import cli

    parts = ["## tcplab\n", "```text\n" + _help_text(cli._parser().format_help) + "```\n"]
    for name, sub in subcommands().items():
        text = _help_text(_bench_help) if name == "bench" else _help_text(sub.format_help)
        parts += [f"## tcplab {name}\n", "```text\n" + text.rstrip("\n") + "\n```\n"]
    return "\n".join(parts)


def _cell(v: Any) -> str:
    """Catalog text as one markdown table cell, shown as written: no line breaks, and outside
    its `code spans` the characters markdown would act on escaped (``beta*cwnd`` is no emphasis)."""
    text = ("" if v is None else str(v)).replace("\n", " ")
    parts = re.split(r"(`[^`]+`)", text)  # odd items: code spans, kept as they are
    return "".join(p.replace("|", "\\|") if i % 2 else re.sub(r"([\\*_\[\]|])", r"\\\1", html.escape(p, quote=False))
                   for i, p in enumerate(parts))


def _catalog_page(entries: list[dict], what: str) -> str:
    parts = []
    for e in entries:
        parts.append(f"## {e['name']}\n")
        if e.get("aliases"):
            parts.append("Also spelled " + ", ".join(f"`{a}`" for a in e["aliases"]) + ".\n")
        parts.append(_cell(e.get("description")) + "\n")
        if e.get("source"):
            parts.append(f"Source: {_cell(e['source'])}\n")
        params = e.get("params") or []
        if not params:
            parts.append(f"This {what} has no parameters.\n")
            continue
        rows = ["| parameter | default | meaning | source |", "|---|---|---|---|"]
        rows += [f"| `{p['name']}` | {_cell(p.get('default'))} | {_cell(p.get('description'))} | "
                 f"{_cell(p.get('source'))} |" for p in params]
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def _keys_table(entries: list[dict], what: str, page: str) -> str:
    """One row per entry: its name (linked to its section of ``page``), aliases and parameter names."""
    rows = [f"| {what} | also spelled | parameters |", "|---|---|---|"]
    for e in entries:
        aliases = ", ".join(f"`{a}`" for a in e.get("aliases") or [])
        params = ", ".join(f"`{p['name']}`" for p in e.get("params") or []) or "none"
        rows.append(f"| [`{e['name']}`]({page}#{e['name']}) | {aliases} | {params} |")
    return "\n".join(rows) + "\n"


def algorithm_keys() -> str:
    from tcplab.scenario import algorithm_catalog

    return _keys_table(algorithm_catalog(), "algorithm", "algorithms.md")


def discipline_keys() -> str:
    from tcplab.scenario import discipline_catalog

    return _keys_table(discipline_catalog(), "discipline", "disciplines.md")


def algorithms_reference() -> str:
    from tcplab.scenario import algorithm_catalog

    return _catalog_page(algorithm_catalog(), "algorithm")


def disciplines_reference() -> str:
    from tcplab.scenario import discipline_catalog

    return _catalog_page(discipline_catalog(), "discipline")


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "algorithms": algorithms_reference,
    "disciplines": disciplines_reference,
    "algorithm_keys": algorithm_keys,
    "discipline_keys": discipline_keys,
}


def fill(markdown: str) -> str:
    """``markdown`` with every marker replaced by its generated text."""
    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated section {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(one, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001 (MkDocs' signature)
    return fill(markdown)
