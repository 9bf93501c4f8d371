"""Paper reproductions: one module per paper of docs/papers/, each declaring
its :class:`~tcplab.experiments.paper.Paper` (items, setup, options) as
``PAPER``.

``tcplab reproduce PAPER [ITEM ...] [--quick] [--out DIR] [PAPER'S OPTIONS]``
runs them; from Python, ``tcplab.experiments.reproduce("mv-highspeed",
items=["table1"])``. Every run is stored in the campaign ``OUT/campaign/``
(docs/campaigns.md, "Reproductions are campaigns").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .paper import Paper

PAPERS = {
    "mv-highspeed": "tcplab.experiments.mv_highspeed",
    "kk-westwood": "tcplab.experiments.kk_westwood",
    "mv-buffers": "tcplab.experiments.mv_buffers",
    "jm-knn": "tcplab.experiments.jm_knn",
    "ssm-interactions": "tcplab.experiments.ssm_interactions",
    # a study beside the papers (no spec in docs/papers/): docs/experiments/bbr-coexistence.md
    "bbr-coexistence": "tcplab.experiments.bbr_coexistence",
}


def paper_of(paper: str) -> Paper:
    """The :class:`~tcplab.experiments.paper.Paper` named ``paper`` (an error with close matches if none)."""
    return _module(paper).PAPER


def _module(paper: str):
    import importlib

    if paper not in PAPERS:
        import difflib

        close = difflib.get_close_matches(paper, list(PAPERS), n=2)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f"; known: {', '.join(PAPERS)}"
        raise ValueError(f"paper: unknown paper {paper!r}{hint}")
    return importlib.import_module(PAPERS[paper])


#: The campaign of a reproduction, inside its output directory.
CAMPAIGN_DIR = "campaign"


def default_out(paper: str, quick: bool) -> str:
    return os.path.join("out", paper + ("-quick" if quick else ""))


def reproduce(paper: str, items: Sequence[str] | None = None, quick: bool = False, out: str | None = None,
              workers: int | None = None, verbose: bool = True, scheduler: Any = None, resume: bool = True,
              store_on: str | None = None, progress: bool | None = None, **options: Any) -> dict:
    """Regenerate the tables and figures of ``paper`` into ``out``; returns
    ``{item: {"tables": {...DataFrames}, "files": [...]}}``.

    Every run is stored, whole, in the campaign ``out/campaign/`` (a
    :class:`tcplab.sweep.Campaign`: atomic, kill-safe, keyed by a hash of the
    run description and the tcplab version), and the tables and figures are
    computed from the stored runs; so rerunning an interrupted reproduction
    computes only the missing runs. ``resume=False`` deletes that campaign
    first and starts over. ``scheduler``: a Dask scheduler address or
    ``distributed.Client`` to run on a cluster; ``store_on``: who writes the
    runs there, ``"client"`` (default: the workers need no shared filesystem)
    or ``"worker"``. A failed run raises
    :class:`~tcplab.experiments.runner.RunsFailed` naming it (the others stay
    stored). ``progress``: a progress bar per batch of runs on stderr (runs
    done of total, failures, time left; default: when stderr is a terminal
    and ``verbose``). ``options``: the paper's own options (its ``PAPER.options``, e.g. ``configs`` for
    ssm-interactions); an option the paper does not take is an error."""
    from .runner import execution

    p = paper_of(paper)
    p.check_options(options)
    if store_on not in (None, "client", "worker"):
        raise ValueError(f"store_on: expected 'client' or 'worker', got {store_on!r}")
    out = out or default_out(paper, quick)
    old = os.path.join(out, ".runs")
    if verbose and os.path.isdir(old):
        import sys

        print(f"note: {old}/ is the run cache of an earlier tcplab, no longer read (runs are now stored in "
              f"{os.path.join(out, CAMPAIGN_DIR)}/); delete it", file=sys.stderr)
    # the campaign is opened (or created, or, with resume=False, started over) by the first run, once the
    # paper has checked its items and options
    with execution(campaign=os.path.join(out, CAMPAIGN_DIR), scheduler=scheduler, store_on=store_on,
                   fresh=not resume, progress=progress):
        return p.reproduce(items=items, quick=quick, out=out, workers=workers, verbose=verbose, **options)


def items(paper: str) -> list[str]:
    return paper_of(paper).item_names


def options_help(width: int = 78) -> str:
    """Every paper's own options, a paper a line (wrapped between options): the end of ``tcplab reproduce
    --help``."""
    lines = []
    for key in PAPERS:
        line = f"  {key}:"
        for i, o in enumerate(paper_of(key).options):
            word = o.usage() + ("," if i < len(paper_of(key).options) - 1 else "")
            if len(line) + 1 + len(word) > width:
                lines.append(line)
                line = "     "
            line += " " + word
        lines.append(line)
    return "\n".join(lines)
