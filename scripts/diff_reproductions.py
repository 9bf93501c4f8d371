#!/usr/bin/env python3
"""Every cell that differs between two outputs of the same reproduction.

    python scripts/diff_reproductions.py OLD_DIR NEW_DIR            # per table: changed cells and rows
    python scripts/diff_reproductions.py OLD_DIR NEW_DIR --cells    # and every changed cell, old→new

OLD_DIR and NEW_DIR are `tcplab reproduce PAPER -o DIR` outputs (for example of two tcplab versions).
Tables are the CSV files found in both; rows are matched by their leading parameter columns when those
name each row once in both tables (so a reordered table compares row with row), otherwise by position,
and named by those columns. Columns only one version has are listed, not compared; a column renamed for
its unit (``x_mbps`` -> ``x_kbps``) is compared in the new unit. Wall-clock columns are ignored. Exit
status: 0 when nothing differs, 1 when something does, 2 on bad input.

With --cells, each changed row follows its table as one line, `  - ROW: column old→new; ...`, numbers
to 5 significant digits (docs/changes-0.2.0-cells.md is this output for each paper).
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
import pandas as pd

#: Columns that measure the machine, not the model.
WALL_CLOCK = {"wall_s", "sim_s", "runs_wall_s", "task_s"}  # sim_s: the old name of wall_s


def same(x, y, rel: float = 1e-9) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if x == y:
        return True
    try:
        fx, fy = float(x), float(y)
    except (TypeError, ValueError):
        return False
    return abs(fx - fy) <= rel * max(abs(fx), abs(fy))


def row_name(old: pd.DataFrame, new: pd.DataFrame) -> list:
    """The columns that name a row: the leading parameter columns (at most 6). A parameter column is not
    changed in any row and is not a float column whose values are all different (a measurement)."""
    names = []
    for c in old.columns[:6]:
        measured = pd.api.types.is_float_dtype(old[c]) and old[c].nunique() == len(old)
        if c in WALL_CLOCK or measured or not all(same(x, y) for x, y in zip(old[c], new[c], strict=True)):
            break
        names.append(c)
    return names


def short(v) -> str:
    """A cell as listed: integers as such, other numbers to 5 significant digits."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.5g}"


#: Unit suffixes a column may change between versions, with the factor from old to new.
UNIT_RENAMES = {("_mbps", "_kbps"): 1e3, ("_kbps", "_mbps"): 1e-3}


def align_columns(old: pd.DataFrame, new: pd.DataFrame) -> tuple:
    """``(old, new, notes)``: both tables on the columns they share (old's order), an old column whose
    unit suffix changed converted and renamed to the new one, and a note per column only one side has."""
    old = old.copy()
    for c in list(old.columns):
        if c in new.columns:
            continue
        for (a, b), factor in UNIT_RENAMES.items():
            if c.endswith(a) and c[: -len(a)] + b in new.columns and c[: -len(a)] + b not in old.columns:
                old[c] = pd.to_numeric(old[c], errors="coerce") * factor
                old = old.rename(columns={c: c[: -len(a)] + b})
                break
    notes = []
    gone = [c for c in old.columns if c not in new.columns]
    added = [c for c in new.columns if c not in old.columns]
    if gone:
        notes.append("columns only in the old table: " + ", ".join(gone))
    if added:
        notes.append("columns only in the new table: " + ", ".join(added))
    common = [c for c in old.columns if c in new.columns]
    return old[common], new[common], notes


def match_rows(old: pd.DataFrame, new: pd.DataFrame) -> tuple:
    """``(new, keys)``: ``new`` in ``old``'s row order, matched on ``keys``, the shortest run of leading
    columns (at most 6) whose values name each row once and name the same rows in both; otherwise
    ``(new, [])``, rows matched by position."""
    lead = []
    for c in old.columns[:6]:
        if c in WALL_CLOCK:
            break
        lead.append(c)
    for n in range(1, len(lead) + 1):
        ko, kn = old[lead[:n]].astype(str), new[lead[:n]].astype(str)
        if ko.duplicated().any() or kn.duplicated().any():
            continue
        to, tn = list(map(tuple, ko.values)), list(map(tuple, kn.values))
        if sorted(to) == sorted(tn):
            where = {t: i for i, t in enumerate(tn)}
            return new.iloc[[where[t] for t in to]].reset_index(drop=True), lead[:n]
    return new, []


def diff_table(old: pd.DataFrame, new: pd.DataFrame) -> tuple:
    """``(label columns, [(row index, row label, column, old, new)], notes)`` for every changed cell of
    the columns both tables have."""
    if len(old) != len(new):
        raise ValueError(f"the tables differ in rows: {len(old)} against {len(new)}")
    old, new, notes = align_columns(old, new)
    new, matched = match_rows(old, new)
    keys = max(row_name(old, new), matched, key=len)
    out = []
    for i in range(len(old)):
        label = ", ".join(f"{k}={old.at[i, k]}" for k in keys)
        for c in old.columns:
            if c in WALL_CLOCK or c in keys:
                continue
            if not same(old.at[i, c], new.at[i, c]):
                out.append((i, label, c, old.at[i, c], new.at[i, c]))
    return keys, out, notes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--cells", action="store_true", help="list every changed cell")
    a = ap.parse_args(argv)
    for d in (a.old, a.new):
        if not os.path.isdir(d):
            print(f"not a directory: {d}", file=sys.stderr)
            return 2
    tables = sorted(f for f in os.listdir(a.old) if f.endswith(".csv"))
    if not tables:
        print(f"no CSV tables in {a.old}", file=sys.stderr)
        return 2
    changed = False
    for name in tables:
        path = os.path.join(a.new, name)
        if not os.path.exists(path):
            print(f"{name}: missing in {a.new}")
            changed = True
            continue
        old, new = pd.read_csv(os.path.join(a.old, name)), pd.read_csv(path)
        try:
            keys, cells, notes = diff_table(old, new)
        except ValueError as e:
            print(f"{name}: {e}")
            changed = True
            continue
        shared = [c for c in align_columns(old, new)[0].columns if c not in WALL_CLOCK and c not in keys]
        total = len(old) * len(shared)
        rows = len({i for i, *_ in cells})
        print(f"{name}: {len(cells)} of {total} cells changed, in {rows} of {len(old)} rows"
              + "".join(f"; {n}" for n in notes))
        changed = changed or bool(notes)
        if a.cells:
            by_row: dict = {}
            for i, label, c, x, y in cells:
                by_row.setdefault((i, label), []).append(f"{c} {short(x)}→{short(y)}")
            for (_, label), changes in by_row.items():
                print(f"  - {label}: " + "; ".join(changes))
        changed = changed or bool(cells)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
