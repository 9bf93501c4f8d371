"""The Linux receiver ACK policy (``ack_policy="linux"``) and D-SACK, end to
end on a small dumbbell, and the rfc default left exactly as it was.

Rule-by-rule checks are in crates/tcplab-core/tests/linux_receiver.rs.
"""

import json

import pandas as pd
import pytest

import tcplab
from tcplab import _core
from tcplab.errors import ScenarioError

C = 10e6


def dumbbell(**flow_options):
    return tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="5s",
                           recovery="sack", flow_options=flow_options or None)


def test_a_linux_receiver_acks_about_every_second_segment():
    f = tcplab.run(dumbbell(ack_policy="linux", dsack=True)).flows.iloc[0]
    ratio = f.acks_sent / f.data_packets_received
    # Linux ACKs once more than one full segment is unacknowledged
    # (__tcp_ack_snd_check), so an ACK covers at most two new in-order
    # segments: at least ~0.5 ACK per segment received. Above 0.5: the 16
    # quick ACKs of the start, one ACK per out-of-order segment and per
    # duplicate around each loss (a window of at most 2 BDP, ~34 segments,
    # a handful of times in 5 s), and a timer ACK for an odd segment when the
    # sender pauses: a few percent of ~4,000 segments. An ACK for every
    # segment (the rfc policy without delayed ACKs) would give 1.0.
    assert 0.45 <= ratio <= 0.65, ratio
    # The receiver changes when ACKs go out, not what the link can carry.
    assert f.goodput_bps <= C
    # With a 1 BDP buffer the queue does not drain when the window halves:
    # the link stays busy (payload accounting off: ns2 counts whole packets).
    assert f.goodput_bps >= 0.9 * C, f.goodput_bps


def test_the_linux_receiver_sends_fewer_acks_than_the_rfc_one():
    rfc = tcplab.run(dumbbell()).flows.iloc[0]
    linux = tcplab.run(dumbbell(ack_policy="linux")).flows.iloc[0]
    assert rfc.acks_sent >= rfc.data_packets_received  # one per segment (no delayed ACKs)
    assert linux.acks_sent < 0.7 * rfc.acks_sent


def test_the_rfc_default_is_unchanged():
    """Spelling out the defaults gives the same spec (so the same run keys)
    and the same flows table as leaving them out."""
    plain = dumbbell()
    spelled = dumbbell(ack_policy="rfc", dsack=False, delack_min="40ms", delack_max="200ms", quickacks=16)
    assert plain.to_spec() == spelled.to_spec()
    flow_spec = plain.to_spec()["flows"][0]
    for key in ("ack_policy", "delack_min", "delack_max", "quickacks", "dsack"):
        assert key not in flow_spec
    a, b = tcplab.run(plain).flows, tcplab.run(spelled).flows
    pd.testing.assert_frame_equal(a, b)


def test_linux_parameters_reach_the_core():
    spec = dumbbell(ack_policy="linux", delack_min="10ms", delack_max="0.5s", quickacks=0, dsack=True).to_spec()
    f = spec["flows"][0]
    got = (f["ack_policy"], f["delack_min"], f["delack_max"], f["quickacks"], f["dsack"])
    assert got == ("linux", 0.01, 0.5, 0, True)


@pytest.mark.parametrize("opts, acks", [
    # One ACK per segment.
    ({}, 20),
    # 16 quick ACKs (tcp_incr_quickack at the first data), then segments
    # 16-19 arrive back to back (1.2 ms apart, the second flight is clocked
    # by the quick ACKs): an ACK at 17 and at 19 (rcv_nxt - rcv_wup > rcv_mss).
    ({"ack_policy": "linux"}, 18),
    # No quick ACKs: every second segment, 10 pairs, each pair's second
    # segment well within the 40 ms timer of its first.
    ({"ack_policy": "linux", "quickacks": 0}, 10),
])
def test_acks_for_a_20_segment_file(opts, acks):
    """A 20-packet file (ns2 accounting: 1500 B a segment) on an idle path."""
    f = tcplab.run(dumbbell(files=[{"size": 20 * 1500, "start": 0}], **opts)).flows.iloc[0]
    assert (f.data_packets_received, f.acks_sent) == (20, acks)


@pytest.mark.parametrize("opts, field, message", [
    ({"ack_policy": "bsd"}, "ack_policy", "unknown ack_policy 'bsd'"),
    ({"dsack": "yes"}, "dsack", "expected true or false"),
])
def test_bad_ack_policy_settings_name_the_field(opts, field, message):
    with pytest.raises(ScenarioError) as e:
        tcplab.Flow("a", "b", recovery="sack", **opts).to_spec("flows[0]", "f")
    assert str(e.value).startswith(f"flows[0].{field}: ")
    assert message in str(e.value)


@pytest.mark.parametrize("opts, field, message", [
    ({"ack_policy": "linux", "delack_min": "300ms"}, "delack_max", "must be at least delack_min"),
    ({"ack_policy": "linux", "delack_max": 0}, "delack_max", "must be a time from 1e-12 s"),
    ({"ack_policy": "linux", "quickacks": -1}, "quickacks", "expected a whole number from 0 to 4294967295"),
    ({"delack_max": "100ms"}, "delack_max", 'applies only with ack_policy = "linux"'),
    ({"quickacks": 2}, "quickacks", 'applies only with ack_policy = "linux"'),
])
def test_the_core_refuses_ack_policy_settings_in_the_scenarios_words(opts, field, message):
    """The ranges and the rules between the ACK-policy fields are the core's (World::check); a scenario
    names the field as its user wrote it: the dumbbell's ``flow_options``."""
    with pytest.raises(ScenarioError) as e:
        tcplab.Dumbbell(1, "10Mbps", "20ms", 10, duration="1s", recovery="sack", flow_options=opts)
    assert e.value.field == f"flow_options.{field}", str(e.value)
    assert message in e.value.problem


@pytest.mark.parametrize("change, message", [
    # serde's message for an unknown enum value names no field (as for recovery).
    ({"ack_policy": "bsd"}, "unknown variant `bsd`, expected `rfc` or `linux`"),
    ({"ack_policy": "linux", "delack_min": 0.3}, "flows[0].delack_max: must be at least delack_min"),
    ({"delack_max": 0.1}, 'flows[0].delack_max: applies only with ack_policy = "linux"'),
])
def test_the_core_checks_the_fields_too(change, message):
    spec = dumbbell().to_spec()
    spec["flows"][0].update(change)
    with pytest.raises(_core.SpecError) as e:
        _core.run(json.dumps(spec))
    assert message in str(e.value)


def test_the_ack_policy_in_a_toml_file(tmp_path):
    """The TOML path: `[dumbbell.flow_options]` and `[[flows]]` take the new keys
    and a saved scenario reads back to the same spec."""
    from tcplab import load_scenario

    p = tmp_path / "sc.toml"
    p.write_text('[run]\nduration = "5s"\n[dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\nrtt = "20ms"\n'
                 'buffer = "1BDP"\nrecovery = "sack"\n[dumbbell.flow_options]\nack_policy = "linux"\n'
                 'delack_max = "100ms"\nquickacks = 8\ndsack = true\n')
    sc = load_scenario(p)
    f = sc.to_spec()["flows"][0]
    assert (f["ack_policy"], f["delack_max"], f["quickacks"], f["dsack"]) == ("linux", 0.1, 8, True)
    sc.save_toml(tmp_path / "rt.toml")
    assert load_scenario(tmp_path / "rt.toml").to_spec() == sc.to_spec()
    generic = tcplab.Scenario(nodes=[tcplab.Node("a"), tcplab.Node("b")],
                              links=[tcplab.Link("ab", "a", "b", "10Mbps", "10ms"),
                                     tcplab.Link("ba", "b", "a", "10Mbps", "10ms")],
                              flows=[tcplab.Flow("a", "b", recovery="sack", ack_policy="linux", dsack=True)],
                              duration=5)
    generic.save_toml(tmp_path / "g.toml")
    assert load_scenario(tmp_path / "g.toml").to_spec() == generic.to_spec()
