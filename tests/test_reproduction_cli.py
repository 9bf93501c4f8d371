"""`tcplab reproduce`: each paper declares its own options (tcplab.experiments.paper), shows them in its help
and refuses the options of the others with the ones it takes. Nothing here runs a simulation."""

from __future__ import annotations

import pytest

from tcplab import experiments
from tcplab.cli import main
from tcplab.experiments.paper import Paper


@pytest.fixture
def calls(monkeypatch):
    """The reproductions the command asks for, caught instead of run: (paper, items, keyword arguments)."""
    seen = []

    def fake(paper, items=None, **kw):
        seen.append((paper, items, kw))
        return {}

    monkeypatch.setattr(experiments, "reproduce", fake)
    return seen


def test_every_paper_is_a_paper_whose_declared_choices_it_takes():
    for key in experiments.PAPERS:
        paper = experiments.paper_of(key)
        assert isinstance(paper, Paper) and paper.key == key
        assert paper.item_names == experiments.items(key) and len(set(paper.item_names)) == len(paper.items)
        for o in paper.options:
            for value in o.choices:  # a value the CLI lets through is one the paper's setup accepts
                paper.setup(True, **{o.name: value})


def test_the_papers_options_reach_the_reproduction_typed(calls):
    assert main(["reproduce", "--quick", "ssm-interactions", "fig3", "fig9", "--configs", "1", "--duration", "3",
                 "--protocols", "Reno, CUBIC", "-o", "/tmp/never", "--no-progress"]) == 0
    paper, items, kw = calls[-1]
    assert (paper, items) == ("ssm-interactions", ["fig3", "fig9"])
    assert kw["configs"] == 1 and kw["duration"] == 3.0 and kw["protocols"] == ["Reno", "CUBIC"]
    assert kw["quick"] is True and kw["out"] == "/tmp/never" and kw["progress"] is False
    assert main(["reproduce", "kk-westwood", "rce", "--buffers", "0.5,1", "--seeds=3", "--setup", "linux"]) == 0
    assert calls[-1][2]["buffers"] == [0.5, 1.0] and calls[-1][2]["seeds"] == 3 and calls[-1][2]["setup"] == "linux"
    assert calls[-1][2]["quick"] is False
    # an option not given is not passed: the paper's default holds
    assert main(["reproduce", "mv-highspeed", "table1"]) == 0
    assert not {"variants", "recovery", "seeds", "setup"} & set(calls[-1][2])


def test_an_option_of_another_paper_is_refused_with_the_papers_own(calls, capsys):
    assert main(["reproduce", "mv-highspeed", "--configs", "2"]) == 2
    err = capsys.readouterr().err
    assert "--configs: not an option of mv-highspeed" in err and "--seeds" in err and "--variants" in err
    assert main(["reproduce", "ssm-interactions", "--seeds", "2"]) == 2
    assert "its generated configurations are its seeds" in capsys.readouterr().err
    assert main(["reproduce", "jm-knn", "--recovery=sack"]) == 2
    assert "jm-knn uses SACK" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # a value the paper does not take: argparse names the choices
        main(["reproduce", "kk-westwood", "--variants", "linux"])
    assert e.value.code == 2 and "choose from 'paper'" in capsys.readouterr().err
    assert not calls
    with pytest.raises(ValueError, match="^configs: not an option of mv-highspeed"):  # the Python API too
        experiments.paper_of("mv-highspeed").reproduce(configs=2)


def test_help_shows_every_papers_options_and_a_papers_own_help_explains_them(capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "each paper's own options" in out
    for key in experiments.PAPERS:
        assert f"  {key}: " in out
    assert "--configs N" in out and "--buffers X,Y,..." in out
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "ssm-interactions", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "usage: tcplab reproduce ssm-interactions" in out
    assert "options of ssm-interactions:" in out and "number of generated configurations" in out
    assert "rtt-ratio" in out and "--seeds" not in out


def test_list_papers_and_items_and_a_missing_paper(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()] == list(experiments.PAPERS)
    assert main(["reproduce", "jm-knn", "--list"]) == 0
    assert capsys.readouterr().out.split() == ["throughput", "cost", "sensitivity"]
    assert main(["reproduce"]) == 2
    assert "give a paper" in capsys.readouterr().err
