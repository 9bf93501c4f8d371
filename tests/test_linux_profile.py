"""The Linux TCP profile (`Flow(profile="linux")`): what it switches on, and that it leaves classic flows alone."""

from __future__ import annotations

import pytest

import tcplab
from tcplab.errors import ScenarioError
from tcplab.scenario import Flow


def flow_spec(**kw) -> dict:
    return Flow(src="a", dst="b", **kw).to_spec("flows[0]", "f")


def test_linux_profile_sets_linux_defaults_and_each_switch_can_be_overridden():
    s = flow_spec(profile="linux")
    assert (s["recovery"], s["header_size"], s["ack_size"]) == ("sack", 52, 52)
    assert all(s[k] for k in ("prr", "rack", "tlp", "frto", "undo", "dsack")) and s["ack_policy"] == "linux"
    assert 1500 - s["header_size"] == 1448  # Linux's MSS with timestamps on a 1500-byte MTU
    s = flow_spec(profile="linux", prr=False, header_size=40)
    assert "prr" not in s and s["rack"] and s["header_size"] == 40


def test_classic_flows_keep_their_spec_so_their_store_keys():
    s = flow_spec()
    assert not {"prr", "rack", "tlp", "frto", "undo", "ack_policy", "dsack"} & set(s)
    assert (s["recovery"], s["header_size"], s["ack_size"], s["delayed_ack"]) == ("newreno", 40, 40, False)


def test_bad_profile_and_contradictions_name_the_field():
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.profile"):
        flow_spec(profile="bsd")
    with pytest.raises(ScenarioError, match=r"^flow_options\.prr: needs recovery = \"sack\""):
        tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="1s",
                        recovery="newreno", flow_options={"profile": "linux"})


def test_linux_profile_dumbbell_obeys_physics():
    """A Linux-profile CUBIC flow: goodput below C x MSS/packet, retransmissions only for losses."""
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="20Mbps", rtt="50ms", buffer="1BDP", duration="20s",
                         algorithm="cubic", accounting="payload", flow_options={"profile": "linux"}, loss_trace=True)
    r = tcplab.run(sc)
    f = r.flows.iloc[0]
    assert f["recovery"] == "sack"
    cap = 20e6 * 1448 / 1500
    window = r.duration - r.measure_start
    # The window may cut one packet's delivery either way: one MSS of slack.
    assert 0.9 * cap < f["goodput_bps"] <= cap + 1448 * 8 / window
    drops = int(f["data_packets_dropped"])
    # Without a timeout every retransmission repairs a drop (none needless),
    # and every drop is repaired except those still unnoticed at the end.
    assert drops > 0 and f["timeouts"] == 0
    assert drops - 2 * 84 <= int(f["retransmits"]) <= drops  # BDP = 84 packets
    # RACK marks a segment lost only when one sent after it was delivered: on a FIFO path that
    # segment was dropped, so no resend started by ACKs is needless.
    acc = r.retransmission_accounting().iloc[0]
    assert acc["needless_dupack"] == 0 and acc["needless_rto"] == 0


@pytest.mark.parametrize("buffer", ["1BDP", "0.1BDP"])
@pytest.mark.parametrize("algorithm", ["newreno", "cubic"])
def test_linux_profile_resends_only_what_was_lost(algorithm, buffer):
    """Every mechanism on (PRR, RACK-TLP, F-RTO, undo, Linux ACKs): two flows sharing a small or
    large buffer; every retransmission started by ACKs repairs a loss, and none is left undone."""
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="50Mbps", rtt="40ms", buffer=buffer, duration="30s",
                         algorithm=algorithm, access_delay="uniform", accounting="payload",
                         flow_options={"profile": "linux"}, loss_trace=True, seed=3)
    r = tcplab.run(sc)
    acc = r.retransmission_accounting()
    assert (acc["needless_dupack"] == 0).all(), acc
    # Every loss repaired, but for those of the last window (BDP = 167 packets) still unnoticed at the end.
    assert ((acc["lost_copies"] - acc["repairs"]).between(0, 167)).all(), acc
    assert r.flows["goodput_bps"].sum() <= 50e6 * 1448 / 1500 * 1.001
