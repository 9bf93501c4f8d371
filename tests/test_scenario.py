"""Scenario building: the Dumbbell's exact topology, the generic form, the
RunSpec keys (checked against crates/tcplab-core/src/spec.rs) and validation
errors that name the field."""

import glob
import json
import os
import re

import numpy as np
import pytest

from tcplab import Dumbbell, File, Flow, Link, Node, Scenario
from tcplab.errors import ScenarioError, UnitError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC_RS = os.path.join(ROOT, "crates", "tcplab-core", "src", "spec.rs")

RUN_KEYS = {"seed", "duration", "measure_start", "sample_interval", "nodes", "links", "routes", "flows", "trace_links",
            "loss_trace", "memory_limit", "pcap", "pcap_limit"}
#: Keys Python writes only when set (``loss_trace`` when true; ``memory_limit``, the core's
#: memory budget, when given; ``pcap``/``pcap_limit`` when links are captured), so a run's identity is
#: as before otherwise.
OPTIONAL_RUN_KEYS = {"loss_trace", "memory_limit", "pcap", "pcap_limit"}
NODE_KEYS = {"name", "kind"}
LINK_KEYS = {"name", "src", "dst", "rate_bps", "delay", "queue", "loss"}
QUEUE_KEYS = {"limit_packets", "limit_bytes", "discipline", "params"}
#: Queue keys Python writes only for a link with a ``queue`` discipline (other specs as before).
OPTIONAL_QUEUE_KEYS = {"discipline", "params"}
ROUTE_KEYS = {"node", "dst", "link"}
CC_KEYS = {"algorithm", "params"}
FILE_KEYS = {"size", "start"}
CLASSIFIER_KEYS = {"kind", "params"}
FLOW_KEYS = {
    "name", "src", "dst", "cc", "recovery", "start", "packet_size", "header_size", "ack_size", "accounting",
    "init_cwnd", "init_ssthresh", "rwnd_packets", "min_rto", "max_rto", "rto_mode", "init_rto", "dupthresh",
    "dupack_guard", "limited_transmit", "delayed_ack", "delack_timeout", "sack_blocks", "restart_after_idle", "app",
    "drop_segments", "loss_classifier",
    "prr", "rack", "tlp", "frto", "undo", "ack_policy", "delack_min", "delack_max", "quickacks", "dsack",
    "pacing", "pacing_ss_ratio", "pacing_ca_ratio", "ecn",
}
#: Flow keys Python writes only when they differ from the defaults (the Linux
#: sender mechanisms, the receiver's ACK policy, pacing, ECN), so a run's identity is as before otherwise.
OPTIONAL_FLOW_KEYS = {"prr", "rack", "tlp", "frto", "undo", "ack_policy", "delack_min", "delack_max", "quickacks",
                      "dsack", "pacing", "pacing_ss_ratio", "pacing_ca_ratio", "ecn"}


def spec_rs_source():
    """The text of spec.rs and its submodules (spec/*.rs): the contract."""
    paths = [SPEC_RS] + sorted(glob.glob(os.path.join(os.path.dirname(SPEC_RS), "spec", "*.rs")))
    return "\n".join(open(p, encoding="utf-8").read() for p in paths)


def rust_struct_fields():
    """Field names of each `pub struct` in spec.rs (the contract)."""
    src = spec_rs_source()
    out = {}
    for m in re.finditer(r"pub struct (\w+) \{(.*?)\n\}", src, re.S):
        out[m.group(1)] = set(re.findall(r"^\s*pub (\w+):", m.group(2), re.M))
    return out


def test_expected_keys_match_spec_rs():
    rust = rust_struct_fields()
    assert rust["RunSpec"] == RUN_KEYS
    assert rust["NodeSpec"] == NODE_KEYS
    assert rust["LinkSpec"] == LINK_KEYS
    assert rust["QueueSpec"] == QUEUE_KEYS
    assert rust["RouteSpec"] == ROUTE_KEYS
    assert rust["FlowSpec"] == FLOW_KEYS
    assert rust["CcSpec"] == CC_KEYS
    assert rust["FileSpec"] == FILE_KEYS
    assert rust["LossClassifierSpec"] == CLASSIFIER_KEYS


def check_spec_keys(spec):
    assert RUN_KEYS - OPTIONAL_RUN_KEYS <= set(spec) <= RUN_KEYS
    for n in spec["nodes"]:
        assert set(n) == NODE_KEYS and n["kind"] in ("host", "router")
    for ln in spec["links"]:
        assert set(ln) == LINK_KEYS and QUEUE_KEYS - OPTIONAL_QUEUE_KEYS <= set(ln["queue"]) <= QUEUE_KEYS
        assert ("discipline" in ln["queue"]) == ("params" in ln["queue"])
    for r in spec["routes"]:
        assert set(r) == ROUTE_KEYS
    for f in spec["flows"]:
        assert FLOW_KEYS - OPTIONAL_FLOW_KEYS <= set(f) <= FLOW_KEYS and set(f["cc"]) == CC_KEYS
        assert f["app"]["kind"] in ("bulk", "files", "cbr", "on_off")
        if f["app"]["kind"] == "bulk":
            assert set(f["app"]) == {"kind"}
        elif f["app"]["kind"] == "cbr":
            assert set(f["app"]) == {"kind", "rate_bps", "ecn"}
        elif f["app"]["kind"] == "on_off":
            assert set(f["app"]) == {"kind", "rate_bps", "on", "off", "exponential", "ecn"}
        else:
            assert set(f["app"]) == {"kind", "files"}
            for fi in f["app"]["files"]:
                assert set(fi) == FILE_KEYS and isinstance(fi["size"], int)
        for k in ("packet_size", "header_size", "ack_size", "dupthresh", "sack_blocks"):
            assert isinstance(f[k], int) and not isinstance(f[k], bool)
    json.dumps(spec)  # JSON-serializable


def test_queue_and_source_specs_have_the_keys_of_spec_rs():
    d = Dumbbell(2, "10Mbps", "20ms", 10, queue={"discipline": "droptail"},
                 source=[{"kind": "cbr", "rate": "1Mbps"}, {"kind": "on_off", "rate": "1Mbps", "on": 1, "off": 1}])
    check_spec_keys(d.to_spec())
    # the core's tags and fields of AppSpec's source variants
    src = spec_rs_source()
    body = re.search(r"pub enum AppSpec \{(.*?)\n\}", src, re.S).group(1)
    assert re.search(r'rename = "on_off"\)\]\s*OnOff', body) and re.search(r"\bCbr \{", body)
    for variant, keys in (("Cbr", {"rate_bps", "ecn"}), ("OnOff", {"rate_bps", "on", "off", "exponential", "ecn"})):
        fields_ = re.search(variant + r" \{(.*?)\n    \}", body, re.S).group(1)
        assert set(re.findall(r"^\s*(\w+):", fields_, re.M)) == keys


def links_by_name(spec):
    return {ln["name"]: ln for ln in spec["links"]}


def test_dumbbell_single_flow_exact():
    d = Dumbbell(1, "200Mbps", "100ms", "1BDP", duration="2000s", measure_window="1000s")
    spec = d.to_spec()
    check_spec_keys(spec)
    links = links_by_name(spec)
    assert set(links) == {"r1-r2", "r2-r1", "s1-r1", "r1-s1", "r2-d1", "d1-r2"}
    assert links["r1-r2"]["delay"] == pytest.approx(0.05, rel=1e-15)
    assert links["r2-r1"]["delay"] == pytest.approx(0.05, rel=1e-15)
    assert links["r1-r2"]["rate_bps"] == 200e6 and links["r2-r1"]["rate_bps"] == 200e6
    for name in ("s1-r1", "r1-s1", "r2-d1", "d1-r2"):
        assert links[name]["delay"] == pytest.approx(2.5e-3, rel=1e-15)
        assert links[name]["rate_bps"] == pytest.approx(2e9)  # default 10 x C
        assert links[name]["queue"] == {"limit_packets": None, "limit_bytes": None}
    assert links["r1-r2"]["queue"] == {"limit_packets": 1667, "limit_bytes": None}
    assert links["r2-r1"]["queue"] == {"limit_packets": None, "limit_bytes": None}
    assert spec["measure_start"] == 1000.0 and spec["duration"] == 2000.0
    assert d.bdp_packets == 1667
    assert d.path_rtt(0) == pytest.approx(0.110)
    f = spec["flows"][0]
    assert (f["src"], f["dst"], f["name"]) == ("s1", "d1", "flow1")
    assert f["accounting"] == "ns2" and f["packet_size"] == 1500 and f["ack_size"] == 40
    assert f["recovery"] == "newreno" and f["cc"] == {"algorithm": "newreno", "params": {}}
    kinds = {n["name"]: n["kind"] for n in spec["nodes"]}
    assert kinds == {"r1": "router", "r2": "router", "s1": "host", "d1": "host"}


def test_dumbbell_spread_delays_n4():
    spec = Dumbbell(4, "200Mbps", "100ms", 100, duration="10s").to_spec()
    links = links_by_name(spec)
    for i, ms in zip(range(1, 5), (0.625, 1.25, 1.875, 2.5), strict=True):
        for name in (f"s{i}-r1", f"r1-s{i}", f"r2-d{i}", f"d{i}-r2"):
            assert links[name]["delay"] == pytest.approx(ms * 1e-3, rel=1e-12), name
    assert [f["src"] + ">" + f["dst"] for f in spec["flows"]] == ["s1>d1", "s2>d2", "s3>d3", "s4>d4"]
    assert links["r1-r2"]["queue"]["limit_packets"] == 100
    assert len(spec["links"]) == 2 + 4 * 4


@pytest.mark.parametrize("buf, limit", [("0.1BDP", {"limit_packets": 167, "limit_bytes": None}),
                                        ("0.5BDP", {"limit_packets": 833, "limit_bytes": None}),
                                        ("100p", {"limit_packets": 100, "limit_bytes": None}),
                                        ("150KB", {"limit_packets": None, "limit_bytes": 150000})])
def test_dumbbell_buffer_forms(buf, limit):
    d = Dumbbell(1, "200Mbps", "100ms", buf, duration="10s")
    assert links_by_name(d.to_spec())["r1-r2"]["queue"] == limit


def test_dumbbell_bdp_uses_bottleneck_rtt_and_packet_size():
    d = Dumbbell(1, "200Mbps", "300ms", "1BDP", packet_size="1000B", duration="10s")
    assert d.bdp_packets == 7500
    assert links_by_name(d.to_spec())["r1-r2"]["queue"]["limit_packets"] == 7500


def test_dumbbell_uniform_access_delays_seeded():
    a = Dumbbell(5, "200Mbps", "100ms", "1BDP", access_delay="uniform", seed=7, duration="10s")
    b = Dumbbell(5, "200Mbps", "100ms", "1BDP", access_delay="uniform", seed=7, duration="10s")
    c = Dumbbell(5, "200Mbps", "100ms", "1BDP", access_delay="uniform", seed=8, duration="10s")
    assert a.to_spec() == b.to_spec()
    assert a.access_delays != c.access_delays
    expect = np.random.default_rng(7).uniform(0, 0.01, size=(2, 5))
    la = links_by_name(a.to_spec())
    for i in range(5):
        assert la[f"s{i + 1}-r1"]["delay"] == expect[0, i] == la[f"r1-s{i + 1}"]["delay"]
        assert la[f"r2-d{i + 1}"]["delay"] == expect[1, i] == la[f"d{i + 1}-r2"]["delay"]
        assert 0 < expect[0, i] < 0.01
    # senders and receivers differ (independent draws)
    assert a.access_delays[0][0] != a.access_delays[0][1]


#: ``default_rng(seed).uniform(0, 0.01, size=(2, 3))`` as f64 bits, row by row: the same table as
#: crates/tcplab-core/src/sim/numpy_rng.rs's test, which pins the Rust benchmark dumbbell's "uniform"
#: draw to it. Both pass: a seed gives the same network in Python and in Rust.
UNIFORM_DRAWS = {
    0: [0x3f7a170702893dd7, 0x3f6619d66400e98a, 0x3f3ada3773fcf067, 0x3f25a9c114dd7fae, 0x3f80a7e0d669fd4e,
        0x3f82b177cc4abd73],
    42: [0x3f7fb38472bbf9c8, 0x3f71f9f9574e02e0, 0x3f8195869eea25ed, 0x3f7c906f0c7e667c, 0x3f4edc2b2560bccd,
         0x3f83fb12277b6c1b],
    2**64 - 1: [0x3f7bda98b7729ac5, 0x3f814fde3ca2d14a, 0x3f13681fbbfd8d71, 0x3f82521d03c49c55, 0x3f552131a958d700,
                0x3f6a1e8737c6ee64],
}


@pytest.mark.parametrize("seed", sorted(UNIFORM_DRAWS))
def test_uniform_access_delays_are_the_draw_the_rust_dumbbell_makes(seed):
    d = Dumbbell(3, "10Mbps", "20ms", 10, access_delay="uniform", seed=seed, duration="5s").access_delays
    got = [np.float64(d[i][row]).view(np.uint64) for row in (0, 1) for i in range(3)]
    assert got == UNIFORM_DRAWS[seed]


def test_dumbbell_per_flow_lists_and_options():
    d = Dumbbell(2, "10Mbps", "20ms", 20, algorithm=["newreno", "reno"], recovery=["sack", "newreno"],
                 start=[0, "1s"], access_delay=["1ms", "3ms"], access_rate="100Mbps",
                 flow_options={"delayed_ack": True, "min_rto": "1s"}, accounting="payload", duration="5s",
                 measure_start="1s", sample_interval="10ms", seed=3)
    spec = d.to_spec()
    f0, f1 = spec["flows"]
    assert f0["cc"]["algorithm"] == "newreno" and f1["cc"]["algorithm"] == "reno"
    assert (f0["recovery"], f1["recovery"]) == ("sack", "newreno")
    assert (f0["start"], f1["start"]) == (0.0, 1.0)
    assert f0["delayed_ack"] and f1["delayed_ack"] and f0["min_rto"] == 1.0
    assert f0["accounting"] == "payload"
    links = links_by_name(spec)
    assert links["s2-r1"]["delay"] == pytest.approx(0.003) and links["s1-r1"]["rate_bps"] == 1e8
    assert spec["measure_start"] == 1.0 and spec["sample_interval"] == 0.01 and spec["seed"] == 3


def test_dumbbell_default_measurement_is_last_half():
    assert Dumbbell(1, "10Mbps", "20ms", 10, duration="30s").to_spec()["measure_start"] == 15.0


@pytest.mark.parametrize(
    "kwargs, field, msg",
    [
        (dict(bottleneck_rate="200Mbsp"), "bottleneck_rate", "cannot parse '200Mbsp' as a rate"),
        (dict(bottleneck_rate=0), "bottleneck_rate", "must be a positive rate"),
        (dict(bottleneck_rate="-1Mbps"), "bottleneck_rate", "must be a positive rate"),
        (dict(buffer=0), "buffer", "at least 1 packet"),
        (dict(buffer=""), "buffer", "empty"),
        (dict(rtt="-10ms"), "rtt", "must be positive"),
        (dict(access_delay="-1ms"), "access_delay", "must be a time from 0 to"),
        (dict(access_delay="sometimes"), "access_delay", "expected 'spread', 'uniform'"),
        (dict(n_flows=0), "n_flows", "at least 1"),
        (dict(algorithm=["newreno"]), "algorithm", "list of 2"),
        (dict(recovery="tahoe"), "recovery", "unknown recovery 'tahoe'"),
        (dict(accounting="ns3"), "accounting", "did you mean 'ns2'"),
        (dict(measure_window="20s"), "measure_window", "must not exceed the run duration"),
        (dict(measure_start="10s"), "measure_start", "must be before the end of the run"),
        (dict(measure_start="1s", measure_window="2s"), "measure_start", "not both"),
        (dict(duration=0), "duration", "must be a positive number"),
        (dict(duration="3e6s"), "duration", "limited to 2^61 ps"),
        (dict(packet_size="40B"), "packet_size", "must exceed header_size"),
        (dict(packet_size="65536B"), "packet_size", "must be at most 65535 B"),
        (dict(flow_options={"delayed_akc": True}), "flow_options.delayed_akc", "did you mean 'delayed_ack'"),
        (dict(flow_options={"packet_size": 9000}), "flow_options.packet_size", "use the dumbbell key"),
        (dict(seed=-1), "seed", "non-negative"),
        # the core's limits, on the key the user wrote: rtt is split into two one-way delays,
        # a bare probability is the loss itself (not its table's p)
        (dict(rtt=1e9), "rtt", "got 500000000 (of each direction's delay, rtt / 2)"),
        (dict(loss=1.5), "loss", "must be a probability in [0, 1], got 1.5"),
        (dict(reverse_loss={"kind": "bernoulli", "p": 2}), "reverse_loss.p", "must be a probability"),
        (dict(buffer=2**64), "buffer", "beyond the largest queue limit (2^64 - 1 packets)"),
        (dict(trace_links=["r1-r2", "r1-r2"]), "trace_links[1]", 'link "r1-r2" is listed twice'),
    ],
)
def test_dumbbell_errors_name_the_field(kwargs, field, msg):
    base = dict(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="10s")
    base.update(kwargs)
    with pytest.raises(ScenarioError) as e:
        Dumbbell(**base)
    assert e.value.field == field, str(e.value)
    assert msg in e.value.problem
    assert str(e.value).startswith(f"{field}: ")


def test_unknown_algorithm_suggests_close_match():
    with pytest.raises(ScenarioError) as e:
        Dumbbell(1, "10Mbps", "20ms", 10, algorithm="newrneo", duration="5s")
    assert e.value.field == "algorithm"
    assert "unknown algorithm 'newrneo'" in str(e.value)
    assert "did you mean 'newreno'" in str(e.value)


def test_unknown_algorithm_in_per_flow_list_is_indexed():
    with pytest.raises(ScenarioError) as e:
        Dumbbell(2, "10Mbps", "20ms", 10, algorithm=["newreno", "renno"], duration="5s")
    assert e.value.field == "algorithm[1]"
    assert "did you mean" in str(e.value) and "'reno'" in str(e.value)


def test_algorithm_name_case_insensitive():
    spec = Dumbbell(1, "10Mbps", "20ms", 10, algorithm="NewReno", duration="5s").to_spec()
    assert spec["flows"][0]["cc"]["algorithm"] == "newreno"


def small_generic(**run):
    sc = Scenario(duration=run.pop("duration", "10s"), **run)
    sc.add_node("h1")
    sc.add_node("r", "router")
    sc.add_node("h2")
    sc.add_duplex_link("h1", "r", "100Mbps", "1ms")
    sc.add_duplex_link("r", "h2", "10Mbps", "10ms", buffer="64KB")
    return sc


def test_generic_scenario_spec():
    sc = small_generic(measure_start="2s", sample_interval=0)
    sc.add_flow(src="h1", dst="h2", algorithm="reno", recovery="sack", files=[("1MB", 0), File("2KiB", "1s"),
                                                                               {"size": 100, "start": 2}])
    sc.add_flow(Flow("h2", "h1", name="back", rwnd=64, init_ssthresh=100, accounting="ns2"))
    sc.add_route("h1", "h2", "h1-r")
    spec = sc.to_spec()
    check_spec_keys(spec)
    assert spec["measure_start"] == 2.0 and spec["sample_interval"] == 0.0 and spec["seed"] == 0
    f0, f1 = spec["flows"]
    assert f0["name"] == "flow1" and f0["app"] == {"kind": "files", "files": [
        {"size": 1_000_000, "start": 0.0}, {"size": 2048, "start": 1.0}, {"size": 100, "start": 2.0}]}
    assert f0["accounting"] == "payload"  # the core's default for generic flows
    assert f1["name"] == "back" and f1["rwnd_packets"] == 64 and f1["init_ssthresh"] == 100
    assert f1["app"] == {"kind": "bulk"}
    links = links_by_name(spec)
    assert links["r-h2"]["queue"] == {"limit_packets": None, "limit_bytes": 64000}
    assert links["h1-r"]["rate_bps"] == 1e8 and links["r-h2"]["delay"] == 0.01
    assert spec["routes"] == [{"node": "h1", "dst": "h2", "link": "h1-r"}]
    assert spec["trace_links"] is None


def test_trace_links():
    d = Dumbbell(2, "10Mbps", "20ms", 10, duration="5s", trace_links=["r1-r2", "s1-r1"])
    assert d.to_spec()["trace_links"] == ["r1-r2", "s1-r1"]
    with pytest.raises(ScenarioError) as e:
        Dumbbell(2, "10Mbps", "20ms", 10, duration="5s", trace_links=["r1-r3"])
    assert e.value.field == "trace_links[0]" and 'did you mean "r1-r2"' in e.value.problem


def test_trace_links_bottleneck_is_the_bottleneck_links_as_for_pcap():
    d = Dumbbell(2, "10Mbps", "20ms", 10, duration="5s", trace_links=["bottleneck", "s1-r1"])
    assert d.to_spec()["trace_links"] == ["r1-r2", "s1-r1"]
    sc = small_generic()
    sc.add_flow(src="h1", dst="h2")
    sc.trace_links = ["bottleneck"]
    with pytest.raises(ScenarioError, match=r'^trace_links\[0\]: "bottleneck": this scenario names no bottleneck'):
        sc.to_spec()
    sc.bottleneck = [sc.links[0].name]
    assert sc.to_spec()["trace_links"] == [sc.links[0].name]


@pytest.mark.parametrize(
    "mutate, field, msg",
    [
        (lambda s: s.add_flow(src="h1", dst="h9"), "flows[0].dst", 'unknown node "h9"'),
        (lambda s: s.add_flow(src="h11", dst="h2"), "flows[0].src", 'did you mean "h1"'),
        (lambda s: s.add_flow(src="h1", dst="r"), "flows[0].dst", "is a router"),
        (lambda s: s.add_flow(src="h1", dst="h2", algorithm="cubik"), "flows[0].algorithm", "unknown algorithm"),
        (lambda s: s.add_flow(src="h1", dst="h2", files=[("0B", 0)]), "flows[0].files[0].size", "at least 1 byte"),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_link("x", "h1", "zz", "1Mbps", 0)),
         "links[4].dst", 'unknown node "zz"'),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_link("x", "h1", "h2", 0, 0)), "links[4].rate",
         "must be a rate from 0.2274 bit/s"),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_link("x", "h1", "h2", "1Mbps", "-2ms")),
         "links[4].delay", "must be a time from 0 to"),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_link("x", "h1", "h2", "1Mbps", 0, "0.1BDP")),
         "links[4].buffer", "fraction of the BDP"),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_link("h1-r", "h1", "h2", "1Mbps", 0)),
         "links[4].name", "duplicate link name"),
        (lambda s: (s.add_flow(src="h1", dst="h2"), s.add_route("h1", "h2", "h1-x")), "routes[0].link",
         "unknown link"),
        (lambda s: None, "flows", "no flows"),
        (lambda s: (s.add_flow(src="h1", dst="h2"),
                    s.links.append({"name": "x", "src": "h1", "dst": "h2", "rate": "1Mbps", "delay": 0, "loss": 1.5})),
         "links[4].loss", "must be a probability in [0, 1], got 1.5"),
    ],
)
def test_generic_errors(mutate, field, msg):
    sc = small_generic()
    mutate(sc)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert e.value.field == field, str(e.value)
    assert msg in e.value.problem


def test_generic_needs_duration():
    sc = Scenario([Node("a"), Node("b")], [Link("a-b", "a", "b", "1Mbps", 0)], [Flow("a", "b")])
    with pytest.raises(ScenarioError, match="^duration: missing"):
        sc.to_spec()


def test_unit_error_is_scenario_error_with_field():
    sc = small_generic()
    sc.add_flow(src="h1", dst="h2", min_rto="200 parsecs")
    with pytest.raises(UnitError) as e:
        sc.to_spec()
    assert e.value.field == "flows[0].min_rto"


def test_dumbbell_to_generic_gives_same_spec():
    d = Dumbbell(3, "50Mbps", "40ms", "0.3BDP", access_delay="uniform", seed=11, duration="20s")
    g = d.to_generic()
    assert type(g) is Scenario and g.dumbbell is None and d.dumbbell is not None
    assert g.to_spec() == d.to_spec()


def test_dumbbell_is_a_plain_scenario_built_from_its_parameters():
    d = Dumbbell(1, "10Mbps", "20ms", 10, duration="5s")
    assert type(d) is Scenario and d.kind == "dumbbell" and d.links == []
    assert [n.name for n in d.dumbbell.nodes()] == ["r1", "r2", "s1", "d1"]
    assert d.dumbbell.flows()[0].src == "s1"
    # lists given beside the dumbbell: an error naming them, not a silent choice
    d.links = [Link("x", "a", "b", 1, 0)]
    with pytest.raises(ScenarioError, match=r"^links: a scenario has either a dumbbell or nodes/links/flows"):
        d.to_spec()


def test_dumbbell_parameters_read_and_set_through_the_scenario():
    d = Dumbbell(2, "10Mbps", "20ms", 10, duration="5s", seed=4)
    d.access_delay = "uniform"  # the tutorial's way: changes the dumbbell, and so the network
    assert d.dumbbell.access_delay == "uniform" and "access_delay" not in vars(d)
    assert d.access_delays == d.dumbbell.access_delays(4)
    assert d.path_rtt(1) == d.dumbbell.path_rtt(1, 4) and d.capacity_bps == 10e6
    assert d.to_spec()["links"][2]["delay"] == d.dumbbell.access_delays(4)[0][0]
    with pytest.raises(AttributeError):
        _ = Scenario().capacity_bps  # a generic scenario has no dumbbell facts


def rust_enum_variants(name, snake=False):
    """The serde names of an enum's variants: lower case (``rename_all = "lowercase"``), or snake
    case with ``snake``, unless a variant's own ``#[serde(rename = "...")]`` says otherwise."""
    src = spec_rs_source()
    m = re.search(rf"pub enum {name} \{{(.*?)\n\}}", src, re.S)
    body = re.sub(r"///.*", "", m.group(1))
    out = set()
    for rename, v in re.findall(r'^\s*(?:#\[serde\(rename = "(\w+)"\)\]\s*)?(\w+)\s*[,{]', body, re.M):
        out.add(rename or (re.sub(r"(?<!^)([A-Z])", r"_\1", v).lower() if snake else v.lower()))
    return out


def test_enum_values_match_spec_rs():
    from tcplab.scenario import ACCOUNTINGS, NODE_KINDS, RECOVERIES, RTO_MODES, SOURCE_ECN, SOURCE_KINDS

    assert rust_enum_variants("Recovery") == set(RECOVERIES)
    assert rust_enum_variants("Accounting") == set(ACCOUNTINGS)
    assert rust_enum_variants("RtoMode") == set(RTO_MODES)
    assert rust_enum_variants("NodeKind") == set(NODE_KINDS)
    assert rust_enum_variants("AppSpec") == {"bulk", "files"} | set(SOURCE_KINDS)
    assert rust_enum_variants("SourceEcn", snake=True) == set(SOURCE_ECN)
