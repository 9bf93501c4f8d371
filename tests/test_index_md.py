"""A reproduction directory's index (tcplab.experiments.index): index.md alone is enough to keep the
items made earlier when index.json is deleted, truncated or unreadable."""

import json
import os

import pytest

from tcplab.experiments.index import read_index, render, update_index

ORDER = ["fig1", "fig2", "table1"]


def _made(out, *names):
    for n in names:
        (out / n).write_text("x")
    return {"files": [str(out / n) for n in names]}


def _two_items(out):
    """fig1 (quick, 3 runs) then table1 (full, 2 runs), made by two commands; fig1's csv then deleted."""
    update_index(str(out), "T", "scen", {"fig1": _made(out, "fig1.png", "fig1.csv")}, "setup A",
                 "QUICK MODE: shortened", 3, 100, 1.5, ORDER)
    update_index(str(out), "T", "scen", {"table1": _made(out, "t1.csv")}, "setup B", None, 2, 50, 2.0, ORDER)
    os.remove(out / "fig1.csv")


@pytest.mark.parametrize("damage", ["truncated", "not utf-8", "a list", "a directory"])
def test_a_damaged_index_json_loses_no_item(tmp_path, damage, capsys):
    _two_items(tmp_path)
    before = read_index(str(tmp_path))
    j = tmp_path / "index.json"
    if damage == "truncated":
        j.write_text(j.read_text()[:40])
    elif damage == "not utf-8":
        j.write_bytes(b"\xff\xfe" + j.read_bytes())
    elif damage == "a list":
        j.write_text("[]")
    else:
        os.remove(j)
        j.mkdir()
    assert read_index(str(tmp_path)) == before  # index.md's record
    if damage != "a directory":
        update_index(str(tmp_path), "T", "scen", {"fig2": _made(tmp_path, "fig2.png")}, "setup A", None, 1, 1, 0.1,
                     ORDER)
        md = (tmp_path / "index.md").read_text()
        assert "- fig1 (QUICK): fig1.png (missing now: fig1.csv); made " in md and "(3 runs; 100 bottleneck" in md
        assert "- table1: t1.csv; made " in md and "- fig2 (QUICK)" not in md and "- fig2: fig2.png; made " in md
        assert "not made by the items above" not in md
        assert list(json.loads(j.read_text())["items"]) == ["fig1", "fig2", "table1"]  # rewritten whole


def test_with_index_json_deleted_index_md_alone_gives_the_record(tmp_path):
    _two_items(tmp_path)
    before = read_index(str(tmp_path))
    os.remove(tmp_path / "index.json")
    assert read_index(str(tmp_path)) == before


def test_the_outputs_lines_of_this_version_are_read_without_the_record_line(tmp_path):
    # an index.md of 0.2.0 (no record line), its index.json deleted: each line's item, files present and
    # missing, the QUICK mark and when it was made are read back
    _two_items(tmp_path)
    os.remove(tmp_path / "index.json")
    md = tmp_path / "index.md"
    lines = md.read_text().splitlines()
    assert lines[-1].startswith("<!-- tcplab-index {")
    md.write_text("\n".join(lines[:-1]) + "\n")
    rec = read_index(str(tmp_path))
    assert list(rec["items"]) == ["fig1", "table1"]
    fig1, t1 = rec["items"]["fig1"], rec["items"]["table1"]
    assert fig1["files"] == ["fig1.png", "fig1.csv"] and fig1["quick"] and t1["files"] == ["t1.csv"]
    assert fig1["as_listed"].startswith("made ") and "by tcplab " in fig1["as_listed"] and "3 runs" in fig1["as_listed"]
    assert not t1.get("quick")
    update_index(str(tmp_path), "T", "scen", {"fig2": _made(tmp_path, "fig2.png")}, "setup A", None, 1, 1, 0.1, ORDER)
    text = md.read_text()
    assert f"- fig1 (QUICK): fig1.png (missing now: fig1.csv); {fig1['as_listed']}\n" in text
    assert f"- table1: t1.csv; {t1['as_listed']}\n" in text
    assert "not made by the items above" not in text and "earlier tcplab" not in text


def test_the_record_line_survives_dashes_and_the_report_does_not_show_it(tmp_path):
    from tcplab.report import _markdown

    update_index(str(tmp_path), "T -->", "a --> b ---- c", {"fig1": _made(tmp_path, "fig1.png")}, "x -- y", None,
                 1, 1, 0.1, ORDER)
    text = (tmp_path / "index.md").read_text()
    last = text.splitlines()[-1]
    assert last.startswith("<!-- tcplab-index ") and last.endswith(" -->") and "--" not in last[5:-3]
    os.remove(tmp_path / "index.json")
    rec = read_index(str(tmp_path))
    assert rec["scenario"] == "a --> b ---- c" and rec["items"]["fig1"]["setup"] == "x -- y"
    html = _markdown(text)
    assert "tcplab-index" not in html and "b ---- c" in html  # the scenario shown, the record line not
    assert render(str(tmp_path), rec) == text


# ---------------------------------------------------------------- every paper's settings, one layout

def _paper_setup(paper, setup):
    """The paper's module and its quick Setup with the TCP ``setup``."""
    import importlib

    from tcplab.experiments import PAPERS

    mod = importlib.import_module(PAPERS[paper])
    return mod, (mod.Setup(True) if paper == "bbr-coexistence" else mod.Setup(True, setup=setup))


#: A protocol each paper's index.md must name (bold, as a list item).
A_PROTOCOL = {"mv-highspeed": "STCP", "kk-westwood": "Proposal", "mv-buffers": "Westwood+ (Figs. 4, 5, 8)",
              "jm-knn": "CUBIC", "ssm-interactions": "AReno", "bbr-coexistence": "bbr3"}
#: Each paper's initial window under --setup paper (ns-2's windowInit_; bbr-coexistence has only linux).
PAPER_IW = {"mv-highspeed": "2", "kk-westwood": "2", "mv-buffers": "2", "jm-knn": "2", "ssm-interactions": "2"}


@pytest.mark.parametrize("paper, setup", [(p, s) for p in A_PROTOCOL for s in ("paper", "linux")
                                          if not (p == "bbr-coexistence" and s == "paper")])  # (linux only)
def test_every_paper_writes_the_same_index_layout_with_every_setup_value_sourced(tmp_path, paper, setup):
    from tcplab.experiments.settings import INDEX_LAYOUT, index_sections

    mod, s = _paper_setup(paper, setup)
    first, second = mod.ITEMS[0], mod.ITEMS[-1]
    for item in (first, second):  # two commands into one directory: the first item stays listed
        mod.PAPER.write_index(s, str(tmp_path), [item], {item: _made(tmp_path, f"{item}.csv")}, 1.0, 3, 100)
    md = (tmp_path / "index.md").read_text()
    assert index_sections(md)[:len(INDEX_LAYOUT)] == list(INDEX_LAYOUT), index_sections(md)
    assert f"- {first}: {first}.csv; made " in md and f"- {second}: {second}.csv; made " in md
    tcp = md.split("### TCP setup", 1)[1].split("### Protocols", 1)[0]
    assert f"`--setup {setup}`" in tcp
    rows = [line.split("|")[1:-1] for line in tcp.splitlines() if line.startswith("| ") and "---" not in line]
    options = {r[0].strip() for r in rows}
    assert {"init_cwnd", "init_ssthresh"} <= options, options
    assert all(len(r) == 3 and r[2].strip() for r in rows[1:]), rows  # every value has its source
    if paper != "bbr-coexistence":
        assert {"rwnd", "init_rto", "min_rto", "max_rto", "rto_mode", "delayed_ack"} <= options, options
        iw = PAPER_IW[paper] if setup == "paper" else "10"
        assert f"| init_cwnd | {iw} | " in tcp
    protocols = md.split("### Protocols", 1)[1].split("### Other choices", 1)[0]
    assert f"- **{A_PROTOCOL[paper]}**: `" in protocols and "  - parameters: " in protocols
    assert "{" not in protocols  # parameters as readable lists, not JSON


@pytest.mark.parametrize("paper", [p for p in A_PROTOCOL if p != "bbr-coexistence"])
def test_an_unknown_setup_is_refused_naming_the_option_before_anything_is_made(tmp_path, paper):
    from tcplab.experiments import reproduce

    with pytest.raises(ValueError, match=r"^setup: must be 'paper' or 'linux', got 'ns3'"):
        reproduce(paper, quick=True, out=str(tmp_path / "o"), verbose=False, setup="ns3")
    assert not (tmp_path / "o").exists()


def test_bbr_coexistence_has_only_the_linux_setup(tmp_path):
    from tcplab.experiments import reproduce

    with pytest.raises(ValueError, match=r"^setup: bbr-coexistence is a study of today's Linux"):
        reproduce("bbr-coexistence", quick=True, out=str(tmp_path / "o"), verbose=False, setup="paper")
