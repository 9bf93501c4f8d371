"""``tcplab bench --ns3 [SCENARIO]``: a one-flow dumbbell in ns-3 and in
tcplab, timed on the same machine. SCENARIO is S1 (the default) or a point
of the window or rate curve (``window=10000``, ``rate=1e9``: one CUBIC flow
with SACK, B = BDP; run for ``--seconds``, default 20, instead of the
curve's own length).

Issue 8 gives ns-3's speed on the mv-highspeed dumbbell from elsewhere; this
measures it here. ns-3 is not a dependency of tcplab: the ns-3 project's
own wheel (``pip install ns3``, ns-3.44 with Python bindings through cppyy,
built with the release profile, asserts and logging compiled in) goes into
any Python 3 environment, and ``--ns3-python PATH`` names that interpreter
(default: the current one). The ns-3 run is a child process of that
interpreter, so the two never share a process.

Both simulate the dumbbell read from tcplab's own description of the
scenario (``tcplab_core::scenarios::bench``); for S1 one bulk NewReno flow
(no SACK, an ACK per segment, initial window 10, minimum RTO 200 ms), a
200 Mbit/s bottleneck of 50 ms each way with a drop-tail queue of 0.1 BDP
(167 packets), access links at 10x the bottleneck rate with 2.5 ms each.
On the ns-3 side: point-to-point links, the bottleneck's device queue as
the only queue (the default queue disciplines are removed), TcpNewReno or
TcpCubic with TcpClassicRecovery, SACK as the flow's recovery (or forced
on), no timestamps, no limited transmit, DelAckCount 1, segments of
``packet_size - 40`` bytes (so IP packets of ``packet_size``;
point-to-point adds 2 bytes of PPP framing), MinRto as tcplab's.

What is not the same, and stays so: ns-3 opens the connection with a
handshake, and its congestion control, recovery and RTO code is its own,
so the two need not move the same number of packets in the same simulated
time. The figures compared are therefore data packets sent through the
bottleneck per wall-second, beside wall seconds per simulated second.
``--ns3-sack`` turns SACK on for the ns-3 side of S1 (ns-3's own default):
without it, ns-3's NewReno on this path falls into repeated timeouts after
the first slow start and moves a few Mbit/s, while with it ns-3 moves what
tcplab's NewReno flow does. tcplab's wall time includes building the run
and converting its results (S1 with its traces every 10 ms); ns-3's is
``Simulator::Run()`` alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from .measure import measure, with_duration

#: The ns-3 side, run by the interpreter given with --ns3-python: reads the
#: dumbbell (see ns3_config) as JSON on stdin, prints its figures as JSON.
_NS3_CHILD = r"""
import json, resource, sys, time
cfg = json.load(sys.stdin)
try:
    from ns import ns
except Exception as e:
    print(json.dumps({"error": f"cannot import ns-3 (`from ns import ns`): {type(e).__name__}: {e}"}))
    sys.exit(0)

S = ns.Config.SetDefault
S("ns3::TcpL4Protocol::SocketType", ns.StringValue(cfg["socket_type"]))
S("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
S("ns3::TcpSocket::SegmentSize", ns.UintegerValue(cfg["packet_size"] - 40))
S("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(cfg["init_cwnd"])))
S("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
S("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 30))
S("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 30))
S("ns3::TcpSocketBase::Sack", ns.BooleanValue(cfg["sack"]))
S("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
S("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
S("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(cfg["min_rto"])))

nodes = ns.NodeContainer()
nodes.Create(4)  # sender, r1, r2, receiver
p2p = ns.PointToPointHelper()
def link(a, b, rate, delay, limit):
    p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(int(rate))))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(delay)))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{limit}p")))
    return p2p.Install(nodes.Get(a), nodes.Get(b))
unlimited = 1 << 24
devs = [link(0, 1, cfg["access_rate_bps"], cfg["src_delay"], unlimited),
        link(1, 2, cfg["rate_bps"], cfg["delay"], cfg["buffer_packets"]),
        link(2, 3, cfg["access_rate_bps"], cfg["dst_delay"], unlimited)]
ns.InternetStackHelper().Install(nodes)
addr = ns.Ipv4AddressHelper()
ifs = []
for i, d in enumerate(devs):
    addr.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
    ifs.append(addr.Assign(d))
tch = ns.TrafficControlHelper()
for d in devs:
    tch.Uninstall(d)
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

port = 5000
sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                           ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()).Install(nodes.Get(3))
src = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ifs[2].GetAddress(1), port).ConvertTo())
src.SetAttribute("MaxBytes", ns.UintegerValue(0))
src.SetAttribute("SendSize", ns.UintegerValue(1 << 16))
src.Install(nodes.Get(0)).Start(ns.Seconds(0.0))
sink.Start(ns.Seconds(0.0))

ns.Simulator.Stop(ns.Seconds(cfg["duration"]))
t0 = time.perf_counter()
ns.Simulator.Run()
wall = time.perf_counter() - t0
q = ns.DynamicCast[ns.PointToPointNetDevice](devs[1].Get(0)).GetQueue()
sent = q.GetTotalReceivedPackets() - q.GetTotalDroppedPackets() - q.GetNPackets()
rx = ns.DynamicCast[ns.PacketSink](sink.Get(0)).GetTotalRx()
out = {"wall_s": wall, "bottleneck_data_packets": int(sent), "delivered_bytes": int(rx),
       "dropped": int(q.GetTotalDroppedPackets()), "events": int(ns.Simulator.GetEventCount()),
       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
       "ns3_version": getattr(__import__("ns"), "__version__", None)}
ns.Simulator.Destroy()
print(json.dumps(out))
"""


class Ns3Unavailable(RuntimeError):
    """ns-3 could not be run by the interpreter given."""


#: tcplab's algorithms the ns-3 side has, and ns-3's socket type for each.
NS3_SOCKET_TYPES = {"newreno": "ns3::TcpNewReno", "reno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic"}


def ns3_config(spec: dict) -> dict:
    """The dumbbell of a one-flow tcplab run description (S1's, or a point
    of the window or rate curve), as the ns-3 side builds it. Raises
    ValueError, naming what is missing, for a description that is not a
    one-flow dumbbell of an algorithm ns-3 has."""
    flows = spec.get("flows") or []
    if len(flows) != 1:
        raise ValueError(f"flows: the ns-3 comparison needs exactly one flow, got {len(flows)}")
    f = flows[0]
    links = {lk["name"]: lk for lk in spec.get("links", [])}

    def get(name: str) -> dict:
        if name not in links:
            raise ValueError(f"links: the ns-3 comparison needs a link named {name!r} (a dumbbell's)")
        return links[name]

    bn, up, down = get("r1->r2"), get(f"{f['src']}->r1"), get(f"r2->{f['dst']}")
    if bn["queue"].get("limit_packets") is None:
        raise ValueError("links: r1->r2 needs a queue limit in packets")
    algo = f["cc"]["algorithm"]
    if algo not in NS3_SOCKET_TYPES:
        raise ValueError(f"flows: the ns-3 side has {', '.join(sorted(NS3_SOCKET_TYPES))}; the flow has {algo}")
    return {
        "duration": float(spec["duration"]),
        "rate_bps": bn["rate_bps"], "delay": bn["delay"], "buffer_packets": int(bn["queue"]["limit_packets"]),
        "access_rate_bps": up["rate_bps"], "src_delay": up["delay"], "dst_delay": down["delay"],
        "packet_size": int(f["packet_size"]), "init_cwnd": float(f["init_cwnd"]), "min_rto": float(f["min_rto"]),
        "algorithm": algo, "socket_type": NS3_SOCKET_TYPES[algo], "sack": f.get("recovery") == "sack",
    }


def scenarios() -> dict:
    """The one-flow points of the window and rate curves that ``--ns3``
    takes besides S1, by name (``window=1000``, ``rate=1e9``): the core's
    scenario rows."""
    from .. import _core

    out = {}
    for axis in ("window", "rate"):
        for sc in _core.bench_scaling(axis, False):
            out[sc["name"]] = sc
    return out


def run_ns3(cfg: dict, python: str, timeout: float | None = None) -> dict:
    """Runs the ns-3 side with interpreter `python`; its figures."""
    try:
        proc = subprocess.run([python, "-c", _NS3_CHILD], input=json.dumps(cfg), capture_output=True, text=True,
                              timeout=timeout)
    except OSError as e:
        raise Ns3Unavailable(f"--ns3-python: cannot run {python!r}: {e}") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise Ns3Unavailable(f"--ns3-python: the ns-3 run with {python!r} failed (exit {proc.returncode}): {tail}")
    out = json.loads(lines[-1])
    if "error" in out:
        raise Ns3Unavailable(f"--ns3-python: {python!r}: {out['error']}; install the ns-3 project's wheel "
                             f"there with `{python} -m pip install ns3`")
    return out


def compare(seconds: float | None = None, python: str | None = None, log=None, ns3_sack: bool = False,
            scenario: str = "S1") -> dict:
    """`scenario` (S1, or a point of the window or rate curve, e.g.
    ``window=1000``) for `seconds` simulated seconds (default: 100 for S1,
    20 for the curves' points) in ns-3, run by `python`, with SACK on its
    side if the flow has it or `ns3_sack`, and in tcplab; returns both rows
    and the ratios."""
    from .. import _core

    points = {} if scenario == "S1" else scenarios()
    if scenario != "S1" and scenario not in points:
        raise ValueError(f"--ns3: no scenario {scenario!r}; S1 or one of {', '.join(points)}")
    if seconds is None:
        seconds = 100.0 if scenario == "S1" else 20.0
    if not seconds > 0:
        raise ValueError(f"--seconds: must be positive, got {seconds}")
    sc: Mapping[str, Any]  # a row of the core's bench suite, or one run for `seconds`
    if scenario == "S1":
        sc = next(s for s in _core.bench_suite(False, seconds) if s["name"] == "S1")
    else:
        sc = with_duration(points[scenario], seconds)
    cfg = ns3_config(json.loads(sc["spec_json"]))
    cfg["sack"] = cfg["sack"] or bool(ns3_sack)
    cfg["scenario"] = scenario
    python = python or sys.executable
    if log:
        log(f"ns-3 ({python}): {scenario}, {seconds:g} s ...")
    ns3 = run_ns3(cfg, python)
    if log:
        log(f"tcplab: {scenario}, {seconds:g} s ...")
    tl = measure(sc)
    rows = [
        {"simulator": "ns-3", "simulated_s": seconds, "wall_s": ns3["wall_s"],
         "bottleneck_data_packets": ns3["bottleneck_data_packets"],
         "packets_per_s": ns3["bottleneck_data_packets"] / ns3["wall_s"],
         "wall_s_per_simulated_s": ns3["wall_s"] / seconds, "events": ns3["events"],
         "peak_rss_mb": ns3["peak_rss_mb"], "version": ns3.get("ns3_version")},
        {"simulator": "tcplab", "simulated_s": seconds, "wall_s": tl["wall_s"],
         "bottleneck_data_packets": tl["bottleneck_data_packets"], "packets_per_s": tl["packets_per_s"],
         "wall_s_per_simulated_s": tl["wall_s"] / seconds, "events": tl["events"],
         "peak_rss_mb": tl["peak_rss_mb"], "version": _core.version()},
    ]
    return {"config": cfg, "description": sc["description"], "rows": rows, "ns3": ns3,
            "speedup_packets_per_s": rows[1]["packets_per_s"] / max(rows[0]["packets_per_s"], 1e-300),
            "speedup_wall": rows[0]["wall_s"] / max(rows[1]["wall_s"], 1e-300)}


def print_table(res: dict) -> None:
    c = res["config"]
    print(f"{c['scenario']} dumbbell: {c['rate_bps'] / 1e6:g} Mbit/s, {c['delay'] * 1e3:g} ms each way, "
          f"{c['buffer_packets']} packets of buffer, one {c['algorithm']} flow, {c['duration']:g} s simulated; "
          f"ns-3: {c['socket_type']}, SACK {'on' if c['sack'] else 'off'}")
    hdr = (f"{'simulator':<10} {'wall s':>9} {'bottleneck pkts':>16} {'pkts/wall-s':>12} {'wall s/sim s':>13} "
           f"{'peak MB':>8}")
    print(hdr)
    print("-" * len(hdr))
    for r in res["rows"]:
        print(f"{r['simulator']:<10} {r['wall_s']:>9.3f} {r['bottleneck_data_packets']:>16,} "
              f"{r['packets_per_s']:>12,.0f} {r['wall_s_per_simulated_s']:>13.5f} {r['peak_rss_mb']:>8.1f}")
    print(f"tcplab / ns-3: {res['speedup_packets_per_s']:,.0f}x the packets per wall-second, "
          f"{res['speedup_wall']:,.0f}x less wall time for the same simulated time")


def main_args(seconds: float | None, python: str | None, to_stdout: bool, json_path: str | None,
              log=None, ns3_sack: bool = False, scenario: str = "S1") -> int:
    """``tcplab bench --ns3``: runs the comparison, prints or writes it."""
    res: Any = compare(seconds, python, log, ns3_sack, scenario)
    if to_stdout:
        print(json.dumps(res, indent=2))
        return 0
    print_table(res)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(res, f, indent=2)
    return 0
