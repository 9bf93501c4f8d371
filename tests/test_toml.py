"""Scenario files: the TOML schema, round trips, the shipped examples, and
errors that name the offending key."""

import os
import textwrap

import pytest

from tcplab import Dumbbell, Flow, Scenario, load_scenario
from tcplab.errors import ScenarioError
from tcplab.scenario import File, scenario_from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def write(tmp_path, text, name="sc.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def roundtrip(sc, tmp_path):
    p = tmp_path / "rt.toml"
    sc.save_toml(p)
    back = load_scenario(p)
    assert back.to_spec() == sc.to_spec()
    assert type(back) is type(sc)
    return back


def test_dumbbell_round_trip(tmp_path):
    sc = Dumbbell(3, "200Mbps", "100ms", "0.3BDP", algorithm=["newreno", "reno", "newreno"],
                  recovery="sack", access_delay="uniform", seed=42, duration="50s", measure_window="20s",
                  sample_interval="10ms", flow_options={"delayed_ack": True, "min_rto": "1s"},
                  start=[0, "0.5s", 1.0], name="three")
    back = roundtrip(sc, tmp_path)
    assert back.name == "three"


def test_dumbbell_round_trip_numbers_and_defaults(tmp_path):
    sc = Dumbbell(1, 2e8, 0.1, 1667, duration=100.0)
    back = roundtrip(sc, tmp_path)
    assert back.to_spec()["measure_start"] == 50.0


def test_generic_round_trip(tmp_path):
    sc = Scenario(duration="30s", measure_start="5s", sample_interval=0, seed=9, name="gen",
                  bottleneck=["r-h2"], trace_links=["r-h2"])
    sc.add_node("h1")
    sc.add_node("r", "router")
    sc.add_node("h2")
    sc.add_duplex_link("h1", "r", "1Gbps", "1ms")
    sc.add_duplex_link("r", "h2", "10Mbps", "20ms", buffer="50p")
    sc.add_route("h1", "h2", "h1-r")
    sc.add_flow(Flow("h1", "h2", algorithm="reno", recovery="sack", accounting="ns2", rwnd=100,
                     files=[File("1MB", "0s"), ("2KB", 3)]))
    sc.add_flow(Flow("h2", "h1", name="rev", init_ssthresh=64, limited_transmit=True))
    back = roundtrip(sc, tmp_path)
    assert back.bottleneck == ["r-h2"] and back.name == "gen"


@pytest.mark.parametrize("fname, limit", [("dumbbell-newreno-bdp.toml", 1667),
                                          ("dumbbell-newreno-0.1bdp.toml", 167)])
def test_examples(fname, limit, tmp_path):
    sc = load_scenario(os.path.join(EXAMPLES, fname))
    assert sc.dumbbell is not None
    spec = sc.to_spec()
    links = {ln["name"]: ln for ln in spec["links"]}
    assert links["r1-r2"]["queue"]["limit_packets"] == limit
    assert links["r1-r2"]["rate_bps"] == 200e6 and links["r1-r2"]["delay"] == pytest.approx(0.05)
    assert links["s1-r1"]["delay"] == pytest.approx(2.5e-3) and links["r2-d1"]["delay"] == pytest.approx(2.5e-3)
    assert spec["duration"] == 2000.0 and spec["measure_start"] == 1000.0
    assert spec["sample_interval"] == pytest.approx(0.01)
    (flow,) = spec["flows"]
    assert flow["cc"]["algorithm"] == "newreno" and flow["recovery"] == "newreno"
    assert flow["packet_size"] == 1500 and flow["accounting"] == "ns2"
    assert sc.name == fname[:-5]
    roundtrip(sc, tmp_path)


GENERIC = """
    name = "two-hop"
    bottleneck = ["r-h2"]
    [run]
    duration = "60s"
    measure_start = "10s"
    [[nodes]]
    name = "h1"
    [[nodes]]
    name = "r"
    kind = "router"
    [[nodes]]
    name = "h2"
    [[links]]
    name = "h1-r"
    src = "h1"
    dst = "r"
    rate = "100Mbps"
    delay = "10ms"
    [[links]]
    name = "r-h2"
    src = "r"
    dst = "h2"
    rate = "10Mbps"
    delay = "10ms"
    buffer = 100
    [[links]]
    name = "h2-r"
    src = "h2"
    dst = "r"
    rate = "10Mbps"
    delay = "10ms"
    [[links]]
    name = "r-h1"
    src = "r"
    dst = "h1"
    rate = "100Mbps"
    delay = "10ms"
    [[flows]]
    src = "h1"
    dst = "h2"
    algorithm = "newreno"
    recovery = "sack"
    files = [{ size = "10MB", start = "1s" }]
"""


def test_generic_file(tmp_path):
    sc = load_scenario(write(tmp_path, GENERIC))
    spec = sc.to_spec()
    assert sc.name == "two-hop" and sc.bottleneck_links() == ["r-h2"]
    assert [n["kind"] for n in spec["nodes"]] == ["host", "router", "host"]
    assert spec["flows"][0]["app"] == {"kind": "files", "files": [{"size": 10_000_000, "start": 1.0}]}
    assert spec["links"][1]["queue"] == {"limit_packets": 100, "limit_bytes": None}
    assert spec["measure_start"] == 10.0


@pytest.mark.parametrize(
    "text, field, msg",
    [
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\nbufer = 10\n",
         "dumbbell.bufer", "did you mean 'buffer'"),
        ("[dumbell]\nn_flows = 1\n", "dumbell", "did you mean 'dumbbell'"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\nbuffer = 10\n[run]\nduraton = '5s'\n",
         "run.duraton", "did you mean 'duration'"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbsp'\nrtt = '20ms'\nbuffer = 10\n",
         "dumbbell.bottleneck_rate", "cannot parse '10Mbsp' as a rate"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\n", "dumbbell.buffer", "missing"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\nbuffer = 10\nalgorithm = 'newrneo'\n",
         "dumbbell.algorithm", "did you mean 'newreno'"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\nbuffer = 10\n[run]\nduration = '5s'\n"
         "measure_window = '6s'\n", "run.measure_window", "must not exceed"),
        ("[dumbbell]\nn_flows = 1\nbottleneck_rate = '10Mbps'\nrtt = '20ms'\nbuffer = 10\n"
         "[dumbbell.flow_options]\nmin_rot = '1s'\n", "dumbbell.flow_options.min_rot", "did you mean 'min_rto'"),
        (GENERIC.replace('rate = "10Mbps"\n    delay = "10ms"\n    buffer = 100',
                         'rat = "10Mbps"\n    delay = "10ms"\n    buffer = 100'),
         "links[1].rat", "did you mean 'rate'"),
        (GENERIC.replace('algorithm = "newreno"', 'algorithm = "newreno"\n    pakcet_size = 1000'),
         "flows[0].pakcet_size", "did you mean 'packet_size'"),
        (GENERIC.replace('dst = "h2"\n    algorithm', 'dst = "h3"\n    algorithm'),
         "flows[0].dst", 'unknown node "h3" (did you mean "h2" or "h1"?)'),
        (GENERIC.replace('duration = "60s"', 'duration = "60s"\n    seed = -4'), "run.seed", "non-negative"),
        (GENERIC.replace('duration = "60s"\n', ''), "run.duration", "missing"),
        (GENERIC + "[dumbbell]\nn_flows = 1\n", "nodes", "not both"),
        (GENERIC.replace('bottleneck = ["r-h2"]', 'bottleneck = ["r-h3"]'), "bottleneck", "unknown link"),
        ("", "", "needs a [dumbbell] table"),
    ],
)
def test_bad_files_name_the_field(tmp_path, text, field, msg):
    with pytest.raises(ScenarioError) as e:
        load_scenario(write(tmp_path, text))
    assert e.value.field == field, str(e.value)
    assert msg in e.value.problem, str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "nope.toml")


def test_toml_syntax_error(tmp_path):
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError):
        load_scenario(write(tmp_path, "[dumbbell\nn_flows = 1\n"))


def test_scenario_from_dict_name_default():
    sc = scenario_from_dict({"dumbbell": {"n_flows": 1, "bottleneck_rate": "1Mbps", "rtt": "10ms", "buffer": 5},
                             "run": {"duration": "1s"}}, name="stem")
    assert sc.name == "stem"
