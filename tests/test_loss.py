"""Random loss on links, from the Python side: the measured rate matches the
configured one, losses are reported apart from queue drops, packets are
conserved, bad input names the field, and TOML keeps the model."""

import math

import pytest

import tcplab
from tcplab.errors import ScenarioError


def _run(**kw):
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="20Mbps", rtt="40ms", buffer="0.5BDP", recovery="sack",
                         duration="30s", measure_window="15s", **kw)
    return sc, tcplab.run(sc)


def test_bernoulli_loss_rate_and_accounting():
    sc, r = _run(loss=0.02, reverse_loss=0.01)
    links = r.links.set_index("name")
    for name, p in (("r1-r2", 0.02), ("r2-r1", 0.01)):
        link = links.loc[name]
        n = link.losses + link.packets_out
        assert n > 5_000
        assert abs(link.losses / n - p) < 4 * math.sqrt(p * (1 - p) / n), (name, link.losses / n)
    f = r.flows
    assert f.data_packets_lost.sum() == links.loc["r1-r2"].losses
    assert f.acks_lost.sum() == links.loc["r2-r1"].losses
    assert (f.data_packets_sent == f.data_packets_received + f.data_packets_dropped + f.data_packets_lost
            + f.data_packets_in_network).all()
    assert (r.links.packets_in == r.links.drops + r.links.losses + r.links.packets_out + r.links.packets_in_link).all()


def test_gilbert_elliott_through_the_builder():
    _, r = _run(loss={"kind": "gilbert_elliott", "p_gb": 0.005, "p_bg": 0.2})
    link = r.links.set_index("name").loc["r1-r2"]
    rate = link.losses / (link.losses + link.packets_out)
    assert abs(rate - 0.005 / 0.205) / (0.005 / 0.205) < 0.25  # short run: a few hundred bursts


@pytest.mark.parametrize("loss, field", [
    (1.5, "loss: must be a probability in [0, 1]"),  # (a bare probability: the field the user wrote)
    ({"kind": "bernouli", "p": 0.1}, "loss.kind"),
    ({"kind": "gilbert_elliott", "p_gb": 0.1}, "loss.p_bg"),
    ({"kind": "bernoulli", "p": 0.1, "q": 2}, "loss.q"),
])
def test_bad_loss_names_the_field(loss, field):
    with pytest.raises(ScenarioError) as e:
        tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, loss=loss)
    assert str(e.value).startswith(field), str(e.value)


def test_loss_survives_a_toml_round_trip(tmp_path):
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10,
                         loss={"kind": "gilbert_elliott", "p_gb": 0.001, "p_bg": 0.3, "loss_good": 0.0001},
                         reverse_loss=0.001)
    sc.save_toml(tmp_path / "s.toml")
    assert tcplab.load_scenario(tmp_path / "s.toml").to_spec() == sc.to_spec()
