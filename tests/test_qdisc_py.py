"""Queue disciplines and unresponsive sources from Python: scenarios (``queue``,
``source``), the links columns and ``qdisc_ts`` of the results, TOML, sweeps,
the store, the CLI's ``disciplines``."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab import scenario as scn
from tcplab.errors import ScenarioError
from tcplab.scenario import Flow, Link, Node, Scenario, load_scenario, scenario_from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytest.importorskip("tcplab._core")

@pytest.fixture
def with_codel():
    """The core's CoDel (RFC 8289), a discipline with time, count and option parameters."""
    assert "codel" in [d["name"] for d in scn.discipline_catalog()]


def line(queue=None, buffer=20, source=None, rate="10Mbps", duration="4s", files=None):
    """h1 -> r -> h2 with the bottleneck r-h2 (links[2])."""
    nodes = [Node("h1"), Node("r", "router"), Node("h2")]
    links = [Link("h1-r", "h1", "r", "100Mbps", "5ms"), Link("r-h1", "r", "h1", "100Mbps", "5ms"),
             Link("r-h2", "r", "h2", rate, "10ms", buffer, queue=queue), Link("h2-r", "h2", "r", rate, "10ms")]
    flows = [Flow("h1", "h2", accounting="ns2", source=source, files=files)]
    return Scenario(nodes, links, flows, duration=duration, sample_interval="10ms", name="line")


# ---------------------------------------------------------------- a run with a discipline

def test_droptail_discipline_gives_sojourn_columns_and_series():
    res = tcplab.run(line(queue={"discipline": "droptail"}))
    ln = res.links.set_index("name")
    for col in ("discipline", "marks", "aqm_drops", "sojourn_mean", "sojourn_p50", "sojourn_p95", "sojourn_p99"):
        assert col in res.links.columns
    b = ln.loc["r-h2"]
    assert b["discipline"] == "droptail" and b["marks"] == 0 and b["aqm_drops"] == 0
    assert all(math.isfinite(b[c]) for c in ("sojourn_mean", "sojourn_p50", "sojourn_p95", "sojourn_p99"))
    assert 0 <= b["sojourn_p50"] <= b["sojourn_p95"] <= b["sojourn_p99"]
    # at most the full buffer's 20 x 1.2 ms (percentiles within 1.6 %)
    assert b["sojourn_p99"] <= 20 * 1500 * 8 / 10e6 * 1.02
    # links without a discipline: the fast FIFO, no per-packet record
    assert ln.loc["h1-r", "discipline"] == "droptail" and math.isnan(ln.loc["h1-r", "sojourn_mean"])
    assert res.links["marks"].dtype == np.uint64 and res.links["sojourn_p99"].dtype == np.float64
    # the series: sojourn_s of the one discipline link, every 10 ms, named
    q = res.qdisc_ts
    assert list(q.columns) == ["time", "link", "link_name", "variable", "value"]
    assert set(q["link_name"]) == {"r-h2"} and "sojourn_s" in set(q["variable"].astype(str))
    assert len(q) >= 400 and q["value"].dropna().between(0, 0.03).all()
    wide = res.qdisc_vars("r-h2")
    assert list(wide.columns) == ["sojourn_s"] and wide.index.name == "time"
    assert res.qdisc_vars(2, "sojourn_s").equals(wide)
    assert res.qdisc_vars("h1-r").empty
    with pytest.raises(KeyError, match="no qdisc variable 'avg'"):
        res.qdisc_vars("r-h2", "avg")
    with pytest.raises(KeyError, match="no link named"):
        res.qdisc_vars("nope")


def test_without_a_discipline_the_spec_and_results_are_as_before():
    sc = line()
    assert sc.to_spec()["links"][2]["queue"] == {"limit_packets": 20, "limit_bytes": None}
    res = tcplab.run(sc)
    assert res.qdisc_ts.empty and list(res.qdisc_ts.columns) == ["time", "link", "link_name", "variable", "value"]
    assert res.links["sojourn_mean"].isna().all() and (res.links["discipline"] == "droptail").all()


def test_results_save_and_load_keep_the_new_columns_and_qdisc_ts(tmp_path):
    res = tcplab.run(line(queue="droptail", duration="1s"))
    res.save(tmp_path / "r")
    back = tcplab.Results.load(tmp_path / "r")
    pd.testing.assert_frame_equal(back.links, res.links)
    pd.testing.assert_frame_equal(back.qdisc_ts, res.qdisc_ts)
    # a directory saved before disciplines: the links read as the fast FIFO they were
    old = res.links.drop(columns=list(tcplab.results.LINK_DISCIPLINE_DEFAULTS))
    old.to_parquet(tmp_path / "r" / "links.parquet", index=False)
    os.remove(tmp_path / "r" / "qdisc_ts.parquet")
    back = tcplab.Results.load(tmp_path / "r")
    assert (back.links["discipline"] == "droptail").all() and back.links["sojourn_p99"].isna().all()
    assert (back.links["marks"] == 0).all() and back.qdisc_ts.empty


# ---------------------------------------------------------------- checks that name the field

def test_unknown_discipline_suggests_and_names_the_field():
    with pytest.raises(ScenarioError) as e:
        line(queue={"discipline": "droptial"}).to_spec()
    assert e.value.field == "links[2].queue.discipline"
    assert "did you mean 'droptail'" in e.value.problem and "known:" in e.value.problem
    with pytest.raises(ScenarioError, match=r"^links\[2\]\.queue\.discipline: missing"):
        line(queue={"target": "5ms"}).to_spec()
    with pytest.raises(ScenarioError, match=r"^links\[2\]\.queue: unknown queue discipline 'nope'"):
        line(queue="nope").to_spec()
    with pytest.raises(ScenarioError, match=r"^links\[2\]\.queue: expected a table"):
        line(queue=5).to_spec()


def test_unknown_parameter_names_the_field():
    with pytest.raises(ScenarioError) as e:
        line(queue={"discipline": "droptail", "target": "5ms"}).to_spec()
    assert e.value.field == "links[2].queue.target"
    assert "unknown parameter for discipline 'droptail'" in e.value.problem


def test_parameters_are_checked_against_the_catalog_and_times_converted(with_codel):
    spec = line(queue={"discipline": "CoDel", "target": "5ms", "interval": 0.1, "ecn": True}).to_spec()
    assert spec["links"][2]["queue"] == {"limit_packets": 20, "limit_bytes": None, "discipline": "codel",
                                         "params": {"target": 0.005, "interval": 0.1, "ecn": True}}
    with pytest.raises(ScenarioError) as e:
        line(queue={"discipline": "codel", "traget": "5ms"}).to_spec()
    assert e.value.field == "links[2].queue.traget" and "did you mean 'target'" in e.value.problem
    with pytest.raises(ScenarioError) as e:
        line(queue={"discipline": "codel", "target": "5xs"}).to_spec()
    assert e.value.field == "links[2].queue.target" and "cannot parse '5xs'" in e.value.problem
    # the dumbbell's and a file's fields
    with pytest.raises(ScenarioError, match=r"^queue\.target: cannot parse"):
        tcplab.Dumbbell(1, "10Mbps", "20ms", 10, queue={"discipline": "codel", "target": "5 parsecs"})
    doc = {"dumbbell": {"n_flows": 1, "bottleneck_rate": "10Mbps", "rtt": "20ms", "buffer": 10,
                        "reverse_queue": {"discipline": "codel", "interval": "1 fortnight"}}}
    with pytest.raises(ScenarioError, match=r"^dumbbell\.reverse_queue\.interval: cannot parse"):
        scenario_from_dict(doc)


def test_the_limit_comes_from_buffer_or_the_queue_table_not_both():
    q = line(queue={"discipline": "droptail", "limit_packets": 7}, buffer=None).to_spec()["links"][2]["queue"]
    assert q == {"limit_packets": 7, "limit_bytes": None, "discipline": "droptail", "params": {}}
    with pytest.raises(ScenarioError, match=r"^links\[2\]\.queue\.limit_packets: the limit is already set by "
                                            r"links\[2\]\.buffer"):
        line(queue={"discipline": "droptail", "limit_packets": 7}, buffer=20).to_spec()
    # a dumbbell: buffer None leaves the discipline its own default limit
    d = tcplab.Dumbbell(1, "10Mbps", "20ms", None, queue={"discipline": "droptail"})
    assert d.to_spec()["links"][0]["queue"] == {"limit_packets": None, "limit_bytes": None,
                                                "discipline": "droptail", "params": {}}


# ---------------------------------------------------------------- TOML

def test_dumbbell_with_queue_and_sources_round_trips_through_toml(tmp_path, with_codel):
    d = tcplab.Dumbbell(2, "10Mbps", "20ms", "1BDP", queue={"discipline": "codel", "target": "5ms"},
                        reverse_queue="droptail", source=[None, {"kind": "cbr", "rate": "2Mbps", "ecn": "ect1"}],
                        duration="2s")
    text = d.to_toml()
    assert 'discipline = "codel"' in text and 'target = "5ms"' in text and '"tcp"' in text
    path = tmp_path / "d.toml"
    path.write_text(text)
    back = load_scenario(path)
    assert back.to_spec() == d.to_spec() and back.to_toml() == text
    spec = d.to_spec()
    assert spec["links"][0]["queue"]["params"] == {"target": 0.005}
    assert spec["links"][1]["queue"] == {"limit_packets": None, "limit_bytes": None, "discipline": "droptail",
                                         "params": {}}
    assert spec["flows"][0]["app"] == {"kind": "bulk"}
    assert spec["flows"][1]["app"] == {"kind": "cbr", "rate_bps": 2e6, "ecn": "ect1"}
    # a file with the table written inline
    doc = ('[dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\nrtt = "20ms"\nbuffer = 10\n'
           'queue = { discipline = "codel", target = "5ms" }\n')
    (tmp_path / "e.toml").write_text(doc)
    assert load_scenario(tmp_path / "e.toml").to_spec()["links"][0]["queue"]["params"] == {"target": 0.005}
    # the generic form: [[links]] queue, [[flows]] source, and the dumbbell's generic equivalent
    g = d.to_generic()
    assert g.to_spec()["links"] == spec["links"]
    text = g.to_toml()
    (tmp_path / "g.toml").write_text(text)
    gb = load_scenario(tmp_path / "g.toml")
    assert gb.to_spec()["links"] == spec["links"] and gb.to_spec()["flows"] == spec["flows"]


def test_generic_links_queue_in_a_file(tmp_path):
    sc = line(queue={"discipline": "droptail"}, source={"kind": "on_off", "rate": "5Mbps", "on": "100ms",
                                                        "off": "50ms", "exponential": False})
    (tmp_path / "l.toml").write_text(sc.to_toml())
    back = load_scenario(tmp_path / "l.toml")
    assert back.to_spec() == sc.to_spec()
    assert back.to_spec()["flows"][0]["app"] == {"kind": "on_off", "rate_bps": 5e6, "on": 0.1, "off": 0.05,
                                                  "exponential": False, "ecn": "not_ect"}


# ---------------------------------------------------------------- sources

def test_cbr_goodput_at_an_overloaded_link_is_the_link_rate():
    res = tcplab.run(line(queue="droptail", source={"kind": "cbr", "rate": "15Mbps"}, duration="5s"))
    f = res.flows.iloc[0]
    assert f["algorithm"] == "cbr" and f["acks_sent"] == 0 and f["retransmits"] == 0
    assert abs(f["goodput_bps"] / 10e6 - 1) < 0.01, f["goodput_bps"]
    b = res.links.set_index("name").loc["r-h2"]
    assert b["drops"] > 0 and b["aqm_drops"] == 0 and b["utilization"] > 0.99


def test_on_off_source_runs_and_is_named():
    res = tcplab.run(line(source={"kind": "on_off", "rate": "5Mbps", "on": "0.5s", "off": "0.5s", "ecn": "ect0"}))
    f = res.flows.iloc[0]
    assert f["algorithm"] == "on_off" and 0 < f["goodput_bps"] < 5e6


def test_source_errors_name_the_field():
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source: a flow sends either files"):
        line(source={"kind": "cbr", "rate": "1Mbps"}, files=[("1MB", 0)]).to_spec()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source\.kind: unknown source kind 'cdr' "
                                            r"\(did you mean 'cbr'"):
        line(source={"kind": "cdr", "rate": "1Mbps"}).to_spec()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source\.rate: missing"):
        line(source={"kind": "cbr"}).to_spec()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source\.off: missing"):
        line(source={"kind": "on_off", "rate": "1Mbps", "on": "1s"}).to_spec()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source\.ecn: unknown ECN codepoint 'ect2'"):
        line(source={"kind": "cbr", "rate": "1Mbps", "ecn": "ect2"}).to_spec()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.source\.on: unknown key"):
        line(source={"kind": "cbr", "rate": "1Mbps", "on": "1s"}).to_spec()
    # in a dumbbell: the per-flow list, and flow_options leaves sources to the dumbbell key
    with pytest.raises(ScenarioError, match=r"^source\[1\]\.rate: "):
        tcplab.Dumbbell(2, "10Mbps", "20ms", 10, source=["tcp", {"kind": "cbr", "rate": "fast"}])
    with pytest.raises(ScenarioError, match=r"^source: expected one value for all flows or a list of 2"):
        tcplab.Dumbbell(2, "10Mbps", "20ms", 10, source=["tcp"])
    with pytest.raises(ScenarioError, match=r"^flow_options\.source: set by the dumbbell itself; use the "
                                            r"dumbbell key 'source'"):
        tcplab.Dumbbell(1, "10Mbps", "20ms", 10, flow_options={"source": {"kind": "cbr", "rate": "1Mbps"}})


def test_tcp_against_cbr_in_a_dumbbell():
    d = tcplab.Dumbbell(2, "10Mbps", "20ms", "1BDP", source=["tcp", {"kind": "cbr", "rate": "4Mbps"}],
                        queue={"discipline": "droptail"}, duration="6s")
    res = tcplab.run(d)
    assert list(res.flows["algorithm"]) == ["newreno", "cbr"]
    cbr = res.flows.iloc[1]["goodput_bps"]
    assert abs(cbr / 4e6 - 1) < 0.05 and res.flows.iloc[0]["goodput_bps"] > 4e6


# ---------------------------------------------------------------- sweeps

def test_sweeps_vary_the_discipline_and_its_parameters(with_codel):
    from tcplab.sweep import Sweep

    base = tcplab.Dumbbell(1, "10Mbps", "20ms", 10, queue={"discipline": "droptail"}, duration="1s")
    sw = Sweep(base, grid={"queue": ["droptail", {"discipline": "codel", "target": "5ms"}]})
    qs = [sw.scenario(p).to_spec()["links"][0]["queue"] for p in sw.points()]
    assert [q["discipline"] for q in qs] == ["droptail", "codel"] and qs[1]["params"] == {"target": 0.005}
    base = tcplab.Dumbbell(1, "10Mbps", "20ms", 10, queue={"discipline": "codel"}, duration="1s")
    sw = Sweep(base, grid={"queue.target": ["5ms", "20ms"], "dumbbell.queue.interval": ["100ms"]})
    qs = [sw.scenario(p).to_spec()["links"][0]["queue"]["params"] for p in sw.points()]
    assert qs == [{"target": 0.005, "interval": 0.1}, {"target": 0.02, "interval": 0.1}]
    sw = Sweep(base, grid={"queue.target": ["5 eons"]})
    with pytest.raises(ScenarioError, match=r"queue\.target: cannot parse '5 eons'"):
        sw.jobs()


# ---------------------------------------------------------------- the store

def test_the_store_keeps_the_new_columns_and_qdisc_ts(tmp_path):
    from tcplab import _core
    from tcplab.sweep import Campaign, Sweep, run_key
    base = tcplab.Dumbbell(2, "10Mbps", "20ms", None, duration="2s", sample_interval="50ms",
                           source=["tcp", {"kind": "cbr", "rate": "3Mbps"}])
    sw = Sweep(base, grid={"queue": [{"discipline": "droptail", "limit_packets": 10},
                                     {"discipline": "fifo", "limit_bytes": "9KB"}]})
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=1, progress=False)
    assert rep.ran == 2 and not rep.failures
    for p in sw.points():
        spec = sw.scenario(p).to_spec()
        key = run_key(spec)
        core = _core.run(json.dumps(spec))
        raw = camp.load_raw(key)
        assert list(raw) == list(core)
        assert raw["qdisc_ts"]["variable_names"] == core["qdisc_ts"]["variable_names"] == ["sojourn_s"]
        for t in ("links", "qdisc_ts"):
            for col, v in core[t].items():
                if isinstance(v, np.ndarray):
                    assert raw[t][col].dtype == v.dtype and np.array_equal(raw[t][col], v, equal_nan=True), (t, col)
                else:
                    assert raw[t][col] == v, (t, col)
        direct = tcplab.Results(core, spec=spec)
        res = camp.load(key)
        pd.testing.assert_frame_equal(res.links, direct.links)
        pd.testing.assert_frame_equal(res.qdisc_ts, direct.qdisc_ts)
        assert math.isfinite(res.links["sojourn_p99"][0]) and math.isnan(res.links["sojourn_p99"][1])
        pd.testing.assert_frame_equal(camp.timeseries(key, "qdisc_ts"), direct.qdisc_ts)
    # (a table parameter is shown as its JSON in the tidy table)
    assert json.loads(camp.results(sw)["queue"].tolist()[0]) == {"discipline": "droptail", "limit_packets": 10}


def test_a_segment_of_an_earlier_tcplab_still_loads(tmp_path):
    """Segments written before qdisc_ts and the discipline columns: no qdisc_ts file, row range or names,
    a links table without the columns. Runs load, the links read as the fast FIFO they had."""
    import hashlib
    import io

    import pyarrow.parquet as pq

    from tcplab.sweep import Campaign

    camp_dir = tmp_path / "c"
    camp = Campaign(camp_dir)
    spec = tcplab.Dumbbell(1, "10Mbps", "20ms", 10, duration="1s").to_spec()
    key = camp.run([("a", spec)], workers=1, progress=False).keys[0]
    before = camp.load(key)
    camp.close()
    (seg,) = os.listdir(camp_dir / "segments")
    d = camp_dir / "segments" / seg
    t = pq.read_table(d / "links.parquet")
    t = t.drop_columns(list(tcplab.results.LINK_DISCIPLINE_DEFAULTS))
    buf = io.BytesIO()
    pq.write_table(t, buf)
    data = buf.getvalue()
    (d / "links.parquet").write_bytes(data)
    os.remove(d / "qdisc_ts.parquet")
    m = json.loads((d / "segment.json").read_text())
    m["files"]["links.parquet"] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    del m["files"]["qdisc_ts.parquet"]
    for r in m["runs"]:
        r["rows"].pop("qdisc_ts", None)
        r.pop("qdisc_variables", None)
    (d / "segment.json").write_text(json.dumps(m))
    # the manifest's checksum, as an earlier tcplab wrote it
    (d / "segment.sha256").write_text(hashlib.sha256((d / "segment.json").read_bytes()).hexdigest() + "\n")
    camp = Campaign(camp_dir)
    raw = camp.load_raw(key)
    assert "qdisc_ts" not in raw and "discipline" not in raw["links"]
    res = camp.load(key)
    pd.testing.assert_frame_equal(res.links, before.links)
    assert res.qdisc_ts.empty


# ---------------------------------------------------------------- catalog, CLI, example

def test_catalog_and_cli(capsys):
    from tcplab import _core
    from tcplab.cli import main

    cat = _core.disciplines()
    assert cat[0]["name"] == "droptail" and {"aliases", "description", "params", "source"} <= set(cat[0])
    assert [d["name"] for d in scn.discipline_catalog()] == [d["name"] for d in cat]
    assert main(["disciplines", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == cat
    assert main(["disciplines"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("droptail (aliases: fifo, pfifo, bfifo)") and "source: Linux sch_fifo.c" in out


def test_the_example_scenario_runs():
    sc = load_scenario(os.path.join(ROOT, "examples", "dumbbell-droptail-onoff.toml"))
    sc.duration, sc.measure_window = "6s", "5s"
    res = tcplab.run(sc)
    assert list(res.flows["algorithm"]) == ["newreno", "on_off"]
    assert math.isfinite(res.links.set_index("name").loc["r1-r2", "sojourn_mean"])
    assert not res.qdisc_vars("r1-r2").empty


def test_real_disciplines_mark_drop_and_trace_from_python():
    """The FQ-CoDel example: CUBIC and DCTCP with classic ECN are marked, not only
    dropped; every link conserves packets; the CLI's summary shows the discipline's columns."""
    sc = load_scenario(os.path.join(ROOT, "examples", "dumbbell-fq_codel-ecn.toml"))
    sc.duration, sc.measure_window = "8s", "6s"
    res = tcplab.run(sc)
    b = res.links.set_index("name").loc["r1-r2"]
    assert b["discipline"] == "fq_codel" and b["marks"] > 0 and b["aqm_drops"] <= b["drops"]
    assert 0 < b["sojourn_mean"] <= b["sojourn_p99"]
    assert list(res.flows["ecn"]) == ["classic"] * 5 and res.flows["algorithm"].iloc[4] == "dctcp"
    assert (res.flows["ce_received"] > 0).all() and (res.flows["ecn_reductions"] > 0).all()
    for _, ln in res.links.iterrows():
        assert ln["packets_in"] == ln["drops"] + ln["losses"] + ln["packets_out"] + ln["packets_in_link"]
    assert {"sojourn_s", "fq_active_flows"} <= set(res.qdisc_vars("r1-r2").columns)
    (link,) = [ln for ln in res.summary()["links"] if ln["name"] == "r1-r2"]
    assert link["discipline"] == "fq_codel" and link["marks"] == b["marks"]
