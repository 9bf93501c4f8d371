"""BBR v1 and v3 end to end: physics, the invariants that catch pathologies,
the ProbeRTT cadence each source fixes, determinism and bad input.

The rule tests of each state transition and gain are in the algorithms'
own files (crates/tcplab-core/src/cc/bbr.rs, bbr3.rs); the delivery-rate
sampler and pacing are tested in tcp/rate.rs and tcp/sender.rs; the random
networks of tests/recovery_invariants.rs cover both BBRs. Here: whole runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import tcplab

C = 20e6
RTT = 0.05


def _run(algorithm: str, buffer: str = "1BDP", duration: str = "40s", n_flows: int = 1, **kw):
    sc = tcplab.Dumbbell(n_flows=n_flows, algorithm=algorithm, bottleneck_rate="20Mbps", rtt="50ms",
                         buffer=buffer, duration=duration, flow_options={"profile": "linux"}, **kw)
    return sc, tcplab.run(sc)


def _ceiling(res) -> float:
    """The bottleneck's goodput ceiling: C under the dumbbell's default ns-2
    accounting (a packet's whole size is its wire size and its goodput),
    C x payload / packet size under payload accounting."""
    spec = res.spec["flows"][0]
    if spec["accounting"] == "ns2":
        return C
    return C * (spec["packet_size"] - spec["header_size"]) / spec["packet_size"]


def _probe_rtt_starts(res, flow: int = 0) -> list[float]:
    cc = res.cc_vars(flow)
    mode = cc["mode"]
    entered = (mode == 3) & (mode.shift(1) != 3)
    return list(cc.index[entered])


@pytest.mark.parametrize("algorithm", ["bbr", "bbr3"])
@pytest.mark.parametrize("buffer", ["0.1BDP", "1BDP", "8BDP"])
def test_physics_and_recovery_invariants(algorithm, buffer):
    sc, res = _run(algorithm, buffer)
    f = res.flows.iloc[0]
    pkt = res.spec["flows"][0]["packet_size"]
    # Goodput cannot exceed the bottleneck's rate; a BBR flow alone on the
    # path keeps it busy (ProbeRTT's 200 ms of cwnd 4 every 5-10 s and the
    # start-up cost at most a few per cent).
    ceiling = _ceiling(res)
    assert f.goodput_bps <= ceiling * 1.0001, (f.goodput_bps, ceiling)
    assert f.goodput_bps >= 0.85 * ceiling, f.goodput_bps
    # Every retransmission repairs a drop, or is one of few needless resends
    # (no loss on the wire here): a retransmission storm would break it.
    assert f.retransmits <= f.data_packets_dropped + f.timeouts + 10
    assert f.timeouts == 0
    # cwnd against what the path holds: BBR's target is at most 2/ln 2 x BDP
    # + 3 in Startup and cwnd_gain 2 x BDP + the ACK-aggregation allowance later.
    bdp = C * (f.rtt_min) / (8 * pkt)
    cwnd = res.flow_ts[res.flow_ts["flow"] == 0]["cwnd"]
    assert cwnd.max() <= 2.89 * bdp + 3 + C * 0.1 / (8 * pkt), (cwnd.max(), bdp)
    # The queue never holds more than the buffer, and a deep buffer is not
    # filled by a BBR flow (its cwnd caps in-flight at ~2 BDP).
    q = res.queue_ts
    limit = res.spec["links"][0]["queue"]["limit_packets"]
    assert q["packets"].max() <= limit
    if buffer == "8BDP":
        assert q[q["time"] > 5]["packets"].max() <= 1.5 * bdp


def test_probe_rtt_cadence_follows_each_source():
    # v1 (tcp_bbr.c): min_rtt expires after 10 s, ProbeRTT >= 200 ms and a
    # round at cwnd 4; v3 (google/bbr v3): every 5 s (bbr_probe_rtt_win_ms).
    _, r1 = _run("bbr", duration="45s")
    s1 = _probe_rtt_starts(r1)
    assert len(s1) >= 3, s1
    iv = np.diff(s1)
    assert np.all((iv >= 10.0) & (iv <= 10.0 + 0.2 + 3 * 0.07)), iv
    ft = r1.flow_ts[r1.flow_ts["flow"] == 0].set_index("time")["cwnd"]
    inside = [ft[(ft.index >= t + 0.099) & (ft.index <= t + 0.201)] for t in s1]
    assert all(len(x) and x.max() <= 4 for x in inside), inside

    _, r3 = _run("bbr3", duration="45s")
    s3 = _probe_rtt_starts(r3)
    assert len(s3) >= 6, s3
    iv = np.diff(s3)
    assert np.all((iv >= 5.0) & (iv <= 5.0 + 0.2 + 3 * 0.07)), iv


def test_bbr_v1_leaves_startup_and_drains():
    _, res = _run("bbr", buffer="8BDP", duration="10s")
    cc = res.cc_vars(0)
    # Startup (0) exits to Drain (1), then ProbeBW (2). The delivery rate
    # doubles a round from IW 10 towards the BDP (~100 segments): 4 rounds,
    # one more for the rate sample to see it, 3 without 25 % growth
    # (bbr_full_bw_cnt), Drain about one: ProbeBW by round 12 (2 rounds of
    # slack for the 0.1-s sampling).
    modes = cc["mode"].to_numpy()
    first = {m: int(np.argmax(modes == m)) for m in (1, 2)}
    assert modes[0] == 0 and 0 < first[1] < first[2]
    assert cc["round_count"].iloc[first[2]] <= 12, cc[["mode", "round_count"]].iloc[: first[2] + 1]
    # The bandwidth estimate (payload bits) settles at the bottleneck's payload rate.
    bw = cc["bw_bps"].iloc[-1]
    spec = res.spec["flows"][0]
    assert bw == pytest.approx(C * (spec["packet_size"] - spec["header_size"]) / spec["packet_size"], rel=0.02)


def test_same_scenario_same_results():
    _, a = _run("bbr3", buffer="0.5BDP", duration="15s", n_flows=2)
    _, b = _run("bbr3", buffer="0.5BDP", duration="15s", n_flows=2)
    assert a.flows.equals(b.flows)
    assert a.cc_ts.equals(b.cc_ts)


def test_two_bbr_flows_share_and_conserve():
    _, res = _run("bbr", buffer="1BDP", duration="40s", n_flows=2)
    f = res.flows
    assert f.goodput_bps.sum() <= _ceiling(res) * 1.0001
    assert res.jain_index() >= 0.9


def test_bbr_needs_sack_and_defaults_to_it():
    # Under the rfc profile (NewReno by default) a BBR flow gets SACK recovery.
    sc = tcplab.Dumbbell(n_flows=1, algorithm="bbr", bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="2s")
    assert tcplab.run(sc).flows.iloc[0].recovery == "sack"
    # Aliases too (bbrv3 is bbr3's).
    f = tcplab.Flow(src="a", dst="b", algorithm="bbrv3").to_spec("flows[0]", "f")
    assert f["recovery"] == "sack"
    # Asked for NewReno explicitly, the error names the field: the dumbbell's key, the core's path.
    with pytest.raises(tcplab.ScenarioError, match=r"^recovery: bbr .* needs recovery = \"sack\""):
        tcplab.Dumbbell(n_flows=1, algorithm="bbr", bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP",
                        duration="2s", recovery="newreno")
    spec = tcplab.Dumbbell(n_flows=1, algorithm="bbr", bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP",
                           duration="2s").to_spec()
    spec["flows"][0]["recovery"] = "newreno"
    with pytest.raises(tcplab.SpecError, match=r"^flows\[0\]\.recovery: bbr .* needs recovery = \"sack\""):
        tcplab.run(spec)


def test_linux_pacing_option_paces_and_names_bad_ratios():
    # A paced CUBIC flow (tcp_update_pacing_rate) fills the path like an
    # unpaced one and its slow start overshoots the buffer by less.
    def run(pacing: bool):
        sc = tcplab.Dumbbell(n_flows=1, algorithm="cubic", bottleneck_rate="20Mbps", rtt="50ms", buffer="0.5BDP",
                             duration="20s", flow_options={"profile": "linux", "pacing": pacing})
        return tcplab.run(sc).flows.iloc[0]
    paced, bare = run(True), run(False)
    assert paced.goodput_bps >= 0.9 * bare.goodput_bps
    assert paced.data_packets_dropped < bare.data_packets_dropped, (paced.data_packets_dropped,
                                                                     bare.data_packets_dropped)
    with pytest.raises(tcplab.ScenarioError, match=r"^flow_options\.pacing_ss_ratio: must be a positive percentage"):
        tcplab.Dumbbell(n_flows=1, bottleneck_rate="20Mbps", rtt="50ms", buffer="0.5BDP", duration="1s",
                        flow_options={"pacing": True, "pacing_ss_ratio": 0})
