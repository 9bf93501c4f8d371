"""Generated scenarios (topologies, flows, workloads), frozen and replayed.

What must hold (issue: multi-bottleneck networks): replaying a frozen
scenario with the same mix and seed reproduces every flow's and file's
results exactly; changing the mix changes nothing but the algorithms;
generated workloads match their distributions."""

import heapq
import json
import math

import numpy as np
import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.generate import (
    Mix,
    TrafficClass,
    generate,
    join_files,
    join_flows,
    load_frozen,
    parking_lot_scenario,
    spec_differences,
)
from tcplab.topology import (
    dumbbell,
    internet_like,
    make_topology,
    parking_lot,
    random_graph,
    rng_for,
    transit_stub,
    tree,
)
from tcplab.workload import Fixed, InternetSizes, LongLived, Pareto, ShortLived, poisson_arrivals, staggered_schedule


def small(n_long=3, seed=1, duration="20s"):
    return parking_lot_scenario(n_long, seed=seed, duration=duration, n_short=8, rate="50Mbps", buffer="100KB")


@pytest.fixture(scope="module")
def frozen():
    return small()


@pytest.fixture(scope="module")
def reno_run(frozen):
    return frozen.run(Mix.all("reno"))


# ------------------------------------------------------------------ replay

def test_replay_same_mix_and_seed_is_bit_identical(frozen, reno_run, tmp_path):
    path = tmp_path / "s.json"
    frozen.save(path)
    again = load_frozen(path)
    assert again.spec(Mix.all("reno")) == frozen.spec(Mix.all("reno"))
    r2 = again.run(Mix.all("reno"))
    for table in ("flows", "links", "files"):
        a, b = getattr(reno_run, table), getattr(r2, table)
        assert a.equals(b), table
    assert len(reno_run.files) > 20


def test_changing_the_mix_changes_only_the_algorithms(frozen):
    a = frozen.spec(Mix.all("reno"))
    b = frozen.spec(Mix.half("cubic"))
    c = frozen.spec(Mix.all({"algorithm": "htcp", "recovery": "newreno"}))
    for other in (b, c):
        diffs = spec_differences(a, other)
        assert diffs, "the mixes must differ somewhere"
        for d in diffs:
            assert d.startswith("flows[") and (".cc." in d or d.endswith(".recovery")), d
    # Half: exactly group B changed algorithm.
    changed = {int(d.split("[")[1].split("]")[0]) for d in spec_differences(a, b)}
    assert changed == {i for i, f in enumerate(frozen.flows) if f["group"] == "B"}
    # Inputs of every flow (files, start, endpoints) identical across mixes.
    for fa, fb in zip(a["flows"], b["flows"], strict=True):
        assert fa["app"] == fb["app"] and fa["start"] == fb["start"] and fa["src"] == fb["src"]


def test_per_flow_and_per_file_join_across_runs(frozen, reno_run):
    half = frozen.run(Mix.half("cubic"))
    fl = join_flows(frozen, {"all-reno": reno_run, "reno+cubic": half})
    assert len(fl) == 2 * len(frozen.flows)
    w = fl.pivot(index="name", columns="run", values="algorithm")
    groups = {f["name"]: f["group"] for f in frozen.flows}
    for name, row in w.iterrows():
        assert row["all-reno"] == "newreno"
        assert row["reno+cubic"] == ("cubic" if groups[name] == "B" else "newreno")
    files = join_files(frozen, {"all-reno": reno_run, "reno+cubic": half})
    # Same files (flow, index, size, start) in both runs.
    key = ["flow", "index", "size", "start"]
    a = files[files.run == "all-reno"][key].reset_index(drop=True)
    b = files[files.run == "reno+cubic"][key].reset_index(drop=True)
    assert a.equals(b)


def test_group_split_is_balanced_within_each_class():
    fz = parking_lot_scenario(7, seed=3, duration="5s", n_short=9)
    for cls, n in (("short", 9), ("long", 7)):
        g = [f["group"] for f in fz.flows if f["cls"] == cls]
        assert len(g) == n and abs(g.count("A") - g.count("B")) <= 1


def test_load_rejects_foreign_and_future_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ScenarioError, match="not a frozen scenario"):
        load_frozen(p)
    p.write_text("{not json")
    with pytest.raises(ScenarioError, match="invalid JSON"):
        load_frozen(p)
    doc = small(duration="2s").to_dict()
    doc["version"] = 99
    p.write_text(json.dumps(doc))
    with pytest.raises(ScenarioError, match="version"):
        load_frozen(p)


def test_mix_errors_name_the_group(frozen):
    with pytest.raises(ScenarioError, match="group"):
        frozen.spec({"A": "reno"})
    with pytest.raises(ScenarioError, match=r"mix\.B\.algorithm"):
        frozen.spec({"A": "reno", "B": "cubci"})
    with pytest.raises(ScenarioError, match=r"mix\.C"):
        frozen.spec({"A": "reno", "B": "reno", "C": "reno"})


# ------------------------------------------------------------------ physics of generated runs

def test_generated_run_conserves_packets_and_bounds_utilization(frozen, reno_run):
    fl = reno_run.flows
    sent_firsts = fl.data_packets_sent
    accounted = fl.data_packets_received + fl.data_packets_dropped + fl.data_packets_lost + fl.data_packets_in_network
    assert (sent_firsts == accounted).all()
    links = reno_run.links
    assert (links.utilization <= 1.0 + 1e-9).all() and (links.utilization >= 0).all()
    assert (links.packets_in == links.drops + links.losses + links.packets_out + links.packets_in_link).all()


def test_file_transfer_times_are_physical(frozen, reno_run):
    f = reno_run.files
    done = f[f.transfer_time.notna()]
    assert len(done) > 10
    # Sent no earlier than handed to TCP; the last ACK comes after the last byte arrived.
    assert (done.first_sent >= done.start - 1e-12).all()
    assert (done.acked >= done.finish).all()
    assert (done.transfer_time <= done.acked - done.start + 1e-12).all()
    # At least one round trip per file: the sender hears the ACK of the last segment.
    rtt = frozen.flow_frame().set_index("name").base_rtt
    names = reno_run.flows.name
    base = np.array([rtt[names[int(i)]] for i in done.flow])
    assert (done.transfer_time.to_numpy() >= base * (1 - 1e-9)).all()


def test_queued_file_waits_but_its_transfer_time_excludes_the_wait():
    sc = tcplab.Scenario(duration="5s", sample_interval=0)
    sc.add_node("a"), sc.add_node("b")
    sc.add_duplex_link("a", "b", "10Mbps", "10ms", buffer=1000)
    sc.add_flow(src="a", dst="b", files=[("1MB", 0.0), ("10KB", 0.01)])
    r = tcplab.run(sc)
    f = r.files.sort_values("index").reset_index(drop=True)
    # The second file is handed over at 10 ms but its first segment leaves
    # only after the last of the first file's 690 segments (slow start from
    # 10 segments over a 20 ms RTT: more than 0.2 s).
    assert f.loc[1, "first_sent"] > f.loc[1, "start"] + 0.2
    assert f.loc[0, "first_sent"] == 0.0
    # fct counts from the hand-over to the last byte, the transfer time from
    # the first send to the last ACK: they differ by exactly those gaps.
    for k in (0, 1):
        gap = (f.loc[k, "first_sent"] - f.loc[k, "start"]) - (f.loc[k, "acked"] - f.loc[k, "finish"])
        assert f.loc[k, "fct"] - f.loc[k, "transfer_time"] == pytest.approx(gap, abs=1e-9)
    assert f.loc[1, "transfer_time"] < f.loc[1, "fct"] - 0.2


# ------------------------------------------------------------------ topologies

def test_parking_lot_structure_and_delay_law():
    t = parking_lot(seed=5)
    assert t.routers == [f"r{i}" for i in range(5)]
    assert len(t.backbone) == 8 and len(t.links) == 8
    # Exponential per-link delays: the mean over many seeds is the law's mean
    # (std of the mean of 4000 draws of an exponential: 15 ms / sqrt(4000) = 0.24 ms).
    delays = [ln.delay for s in range(1000) for ln in parking_lot(seed=s).links[::2]]
    assert abs(np.mean(delays) - 0.015) < 4 * 0.015 / math.sqrt(len(delays))
    # Duplex links are symmetric.
    for a, b in zip(t.links[::2], t.links[1::2], strict=True):
        assert a.delay == b.delay and a.src == b.dst


def test_random_graphs_are_connected_and_deterministic():
    for s in range(30):
        for model in ("waxman", "gnp"):
            t = random_graph(12, model=model, p=0.05, seed=s)
            assert t.is_connected()
    a, b = random_graph(10, seed=7), random_graph(10, seed=7)
    assert [(ln.name, ln.delay) for ln in a.links] == [(ln.name, ln.delay) for ln in b.links]


def test_tree_transit_stub_and_internet_like_shapes():
    t = tree(depth=3, fanout=2)
    assert len(t.edge) == 8 and len(t.routers) == 15 and len(t.links) == 2 * 14
    ts = transit_stub(transit_domains=2, transit_routers=4, stubs_per_transit=2, stub_routers=3)
    assert len(ts.edge) == 2 * 4 * 2 * 3 and ts.is_connected()
    il = internet_like(40, m=2, seed=2)
    assert len(il.links) == 2 * (3 + (40 - 3) * 2) and il.is_connected()
    deg = {r: 0 for r in il.routers}
    for ln in il.links[::2]:
        deg[ln.src] += 1
        deg[ln.dst] += 1
    assert max(deg.values()) >= 3 * 2  # preferential attachment grows hubs
    with pytest.raises(ScenarioError, match="topology.kind"):
        make_topology("parkinglot")


def _dijkstra(spec, src, dst):
    """Reference shortest path by delay (+1 ps per hop, lower link index on ties)."""
    links = spec["links"]
    best = {src: (0, [])}
    heap = [(0, [], src)]
    while heap:
        d, path, u = heapq.heappop(heap)
        if u == dst:
            return d
        if d > best[u][0]:
            continue
        for i, ln in enumerate(links):
            if ln["src"] == u:
                nd = d + round(ln["delay"] * 1e12) + 1
                if ln["dst"] not in best or nd < best[ln["dst"]][0]:
                    best[ln["dst"]] = (nd, path + [i])
                    heapq.heappush(heap, (nd, path + [i], ln["dst"]))
    return None


def test_core_routes_generated_graphs_on_shortest_delay_paths():
    topo = random_graph(9, model="gnp", p=0.4, seed=4, delay={"dist": "uniform", "low": "1ms", "high": "30ms"})
    fz = generate(topo, [TrafficClass("long", 10, LongLived(size=None))], duration="1s", seed=4)
    delay = {ln["name"]: ln["delay"] for ln in fz.spec_base["links"]}
    for f, fs in zip(fz.flows, fz.spec_base["flows"], strict=True):
        got = sum(round(delay[x] * 1e12) + 1 for x in f["path"])
        assert got == _dijkstra(fz.spec_base, fs["src"], fs["dst"])


def test_client_server_and_p2p_attachment():
    topo = random_graph(8, seed=1)
    fz = generate(topo, [TrafficClass("short", 30, ShortLived(Pareto("100KB"), "1s"))], duration="3s", seed=2,
                  mode="client-server", n_servers=2)
    servers = {f["src_router"] for f in fz.flows}
    assert len(servers) <= 2
    assert not servers & {f["dst_router"] for f in fz.flows}
    fz2 = generate(random_graph(8, seed=1), [TrafficClass("short", 30, ShortLived())], duration="3s", seed=2)
    assert all(f["src_router"] != f["dst_router"] for f in fz2.flows)
    with pytest.raises(ScenarioError, match="n_servers"):
        generate(random_graph(4, seed=1), [TrafficClass("s", 1, ShortLived())], duration="1s", mode="client-server",
                 n_servers=4)
    with pytest.raises(ScenarioError, match="mode"):
        generate(random_graph(4, seed=1), [TrafficClass("s", 1, ShortLived())], duration="1s", mode="mesh")


def test_lossy_links_get_the_loss_model():
    t = parking_lot(seed=1)
    lossy = t.apply_loss("backbone", 0.5, {"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3}, seed=1)
    assert len(lossy) == 4
    assert all(t.link(n).loss["kind"] == "gilbert_elliott" for n in lossy)
    with pytest.raises(ScenarioError, match="lossy_fraction"):
        t.apply_loss("backbone", 1.5, 0.01, seed=1)


def test_generators_name_bad_fields():
    with pytest.raises(ScenarioError, match="n_routers"):
        parking_lot(n_routers=1)
    with pytest.raises(ScenarioError, match=r"delay\.dist"):
        parking_lot(delay={"dist": "gauss", "mean": "1ms"})
    with pytest.raises(ScenarioError, match="rate"):
        dumbbell(rate="fast")


# ------------------------------------------------------------------ workloads

def test_pareto_sizes_match_mean_and_tail():
    rng = rng_for(11, 0)
    # Finite variance (shape 2.5): sample mean within 5 standard errors.
    law = Pareto("1MB", 2.5)
    x = law.sample(rng, 400_000).astype(float)
    var = law.scale ** 2 * 2.5 / ((2.5 - 1) ** 2 * (2.5 - 2))
    assert abs(x.mean() - 1e6) < 5 * math.sqrt(var / len(x))
    # Tail of the default law (shape 1.5): P(X > c x_m) = c^-1.5, binomial tolerance.
    law = Pareto("1MB")
    x = law.sample(rng, 400_000).astype(float)
    assert abs(x.min() - law.scale) < 1.0
    for c in (2.0, 10.0, 100.0):
        p = c ** -1.5
        emp = (x > c * law.scale).mean()
        assert abs(emp - p) < 5 * math.sqrt(p * (1 - p) / len(x)), (c, emp, p)


def test_internet_sizes_follow_lognormal_body_and_pareto_tail():
    law = InternetSizes(max_size=None)
    x = law.sample(rng_for(3, 0), 400_000).astype(float)
    p_tail = law.tail_probability()
    assert abs(p_tail - 0.032) < 0.002  # Phi(-(ln 133000 - 9.357) / 1.318)
    assert abs((x > 133000).mean() - p_tail) < 5 * math.sqrt(p_tail / len(x))
    # Tail: P(X > 10k | X > k) = 10^-1.1.
    tail = x[x > 133000]
    emp = (tail > 1.33e6).mean()
    p = 10 ** -1.1
    assert abs(emp - p) < 5 * math.sqrt(p * (1 - p) / len(tail))
    # Body median = exp(mu).
    assert abs(np.median(x) / math.exp(9.357) - 1) < 0.02


def test_exponential_interarrivals():
    rng = rng_for(5, 0)
    t = poisson_arrivals(rng, 2.0, 0.0, 200_000.0)
    gaps = np.diff(t)
    n = len(gaps)
    assert abs(gaps.mean() - 2.0) < 5 * 2.0 / math.sqrt(n)
    # Memoryless: P(gap > m) = e^-1 and P(gap > 3m) = e^-3.
    for c in (1.0, 3.0):
        p = math.exp(-c)
        assert abs((gaps > 2.0 * c).mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_long_lived_schedule_varies_the_number_of_active_flows():
    windows = staggered_schedule(4, [(0, 1), (10, 4), (20, 2)], end=30)

    def active(t):
        return sum(any(a <= t < b for a, b in w) for w in windows)

    assert [active(5), active(15), active(25)] == [1, 4, 2]
    rng = rng_for(1, 0)
    files = LongLived("1GB", "5s", active=windows[3]).files(rng, 0.0, 30.0)
    assert files and all(10 <= t < 20 for _, t in files)
    assert LongLived(size=None).files(rng, 0, 10) is None
    assert Fixed("4.7GB").sample(rng, 3).tolist() == [4_700_000_000] * 3


# ------------------------------------------------------------------ command line

def test_cli_generate_then_replay(tmp_path):
    from tcplab.cli import main

    spec = tmp_path / "g.toml"
    spec.write_text("""
duration = "4s"
seed = 2
[topology]
kind = "tree"
depth = 2
fanout = 2
rate = "20Mbps"
buffer = "50KB"
[[traffic]]
name = "short"
count = 6
workload = { kind = "short", interarrival = "0.5s", sizes = { kind = "internet" } }
[[traffic]]
name = "long"
count = 2
workload = { kind = "long", size = "100MB", interarrival = "10s" }
""")
    frozen = tmp_path / "f.json"
    assert main(["generate", str(spec), "-o", str(frozen)]) == 0
    fz = load_frozen(frozen)
    assert len(fz.flows) == 8 and fz.topology["kind"] == "tree"
    assert main(["replay", str(frozen), "--mix", "reno+htcp", "-o", str(tmp_path / "r")]) == 0
    import pandas as pd

    flows = pd.read_parquet(tmp_path / "r" / "flows.parquet")
    expect = ["htcp" if f["group"] == "B" else "newreno" for f in fz.flows]
    assert list(flows.algorithm) == expect
    # Bad input names the field.
    spec.write_text('duration = "4s"\n[topology]\nkind = "tree"\nfanout = 0\n[[traffic]]\nname="s"\ncount=1\n'
                    'workload = { kind = "short" }\n')
    assert main(["generate", str(spec), "-o", str(frozen)]) == 2
    assert main(["replay", str(frozen), "--mix", "cubic"]) == 2


def test_cli_generate_creates_the_output_directory(tmp_path):
    """`tcplab generate -o out/pl.json` in a fresh directory makes out/, as `tcplab run -o` does."""
    from tcplab.cli import main

    spec = tmp_path / "g.toml"
    spec.write_text('duration = "2s"\n[topology]\nkind = "dumbbell"\nrate = "10Mbps"\ndelay = "5ms"\n'
                    'buffer = 50\n[[traffic]]\nname = "s"\ncount = 2\nworkload = { kind = "short" }\n')
    frozen = tmp_path / "out" / "deeper" / "pl.json"
    assert main(["generate", str(spec), "-o", str(frozen)]) == 0
    assert len(load_frozen(frozen).flows) == 2


def test_chosen_routers_pin_a_class_endpoints():
    topo = parking_lot(seed=1)
    cls = [TrafficClass("cross", 4, LongLived(size=None), src_routers=["r0"], dst_routers=["r4"]),
           TrafficClass("other", 6, ShortLived(), dst_routers=["r2", "r3"])]
    fz = generate(topo, cls, duration="2s", seed=1)
    cross = [f for f in fz.flows if f["cls"] == "cross"]
    assert all(f["src_router"] == "r0" and f["dst_router"] == "r4" and f["hops"] == 4 for f in cross)
    assert all(f["dst_router"] in ("r2", "r3") for f in fz.flows if f["cls"] == "other")
    with pytest.raises(ScenarioError, match="dst_routers"):
        generate(parking_lot(seed=1), [TrafficClass("x", 1, ShortLived(), src_routers=["r1"], dst_routers=["r9"])],
                 duration="1s")


# ------------------------------------------------------------------ metrics

def test_metrics_on_known_data(frozen, reno_run):
    import pandas as pd

    from tcplab import interactions

    # Backbone utilization is the plain mean over the named links; unknown names are an error.
    links = reno_run.links
    expect = links[links.name.isin(frozen.backbone)].utilization.mean()
    assert interactions.backbone_utilization(links, frozen.backbone) == pytest.approx(expect)
    with pytest.raises(KeyError):
        interactions.backbone_utilization(links, ["no-such-link"])
    # Binned transfer times: every file counted once, means lie inside the bin's own values.
    files = join_files(frozen, {"r": reno_run})
    t = interactions.transfer_time_by_size(files)
    assert t.files.sum() == files.transfer_time.notna().sum()
    assert t.unfinished.sum() == files.transfer_time.isna().sum()
    for _, row in t[t.files > 0].iterrows():
        inside = files[(files["size"] >= row.size_lo) & (files["size"] < row.size_hi)].transfer_time.dropna()
        assert inside.min() <= row.mean_transfer_time <= inside.max()
    # RTT ratio recovers the exponent of T = c RTT^-k.
    rtt = np.linspace(0.02, 0.4, 30)
    r = interactions.rtt_ratio(pd.DataFrame({"base_rtt": rtt, "throughput_bps": 5e6 * rtt ** -1.5}))
    assert r["k"] == pytest.approx(1.5) and r["ratio"] == pytest.approx(10 ** 1.5)
    assert math.isnan(interactions.rtt_ratio(pd.DataFrame({"base_rtt": [0.1], "throughput_bps": [1.0]}))["k"])
