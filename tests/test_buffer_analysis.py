"""Buffer-sizing analysis of mv-buffers (tcplab.analysis) against values
computed by hand. C = 40 Mbit/s with 1500-byte packets is c = 3333.33
packets/s; RTT_m = 100 ms gives the pipe P = 333.33 packets."""

import math

import pytest

from tcplab import analysis as an

C = 40e6
T = 0.1
c = C / 12000.0  # packets/s
P = c * T


def test_full_utilization_rule_is_bdp_plus_losses():
    assert an.reno_full_utilization_buffer(C, T) == pytest.approx(334.3333, abs=1e-3)
    assert an.reno_full_utilization_buffer(C, "50ms", epsilon=4) == pytest.approx(166.6667 + 4, abs=1e-3)
    # The rule is where the Reno idle time reaches zero.
    b = an.reno_full_utilization_buffer(C, T, epsilon=3)
    assert an.reno_idle_time(C, T, b, epsilon=3) == pytest.approx(0.0, abs=1e-12)
    assert an.reno_idle_time(C, T, b - 1, epsilon=3) > 0


def test_reno_idle_time_by_hand():
    # RTT_m/2 + eps/(2c) - B/(2c) = 0.05 + 0.00015 - 0.015
    assert an.reno_idle_time(C, T, 100) == pytest.approx(0.03515, abs=1e-9)
    assert an.reno_idle_time(C, T, 0, epsilon=0) == pytest.approx(0.05)
    assert an.reno_idle_time(C, T, 400) == 0.0  # [.]^+
    with pytest.raises(ValueError):
        an.reno_idle_time(C, T, -1)


def test_westwood_idle_time_is_eps_over_c_whatever_the_buffer():
    assert an.westwood_idle_time(C) == pytest.approx(0.0003)
    assert an.westwood_idle_time(C, epsilon=5) == pytest.approx(0.0015)
    assert an.westwood_idle_time("40Mbps", 1, "1000B") == pytest.approx(0.0002)


def test_utilization_from_idle_time():
    assert an.utilization_from_idle_time(1.0, 10.0) == pytest.approx(0.9)
    assert an.utilization_from_idle_time(0.0, 3.0) == 1.0
    assert an.utilization_from_idle_time(20.0, 10.0) == 0.0
    with pytest.raises(ValueError):
        an.utilization_from_idle_time(1.0, 0.0)


def test_reno_cycle_time_by_hand():
    # B = 0: W_max = P + 1 = 334.33, W_0 = 167.17: phase 1 T (P - W_0) = 16.617 s,
    # phase 2 (W_max^2 - P^2) / (2c) = 0.10015 s.
    assert an.reno_cycle_time(C, T, 0) == pytest.approx(16.71682, abs=1e-4)
    # B = 500 > P: phase 2 only, (834.33^2 - 417.17^2) / (2c) = 78.3126 s.
    assert an.reno_cycle_time(C, T, 500) == pytest.approx(78.3126, abs=1e-3)


def test_reno_idle_utilization_matches_the_sawtooth_and_the_single_gap_reading_does_not():
    for b in (0, 17, 50, 100, 200, 300):
        saw = an.reno_sawtooth_utilization(C, T, b)
        assert an.reno_idle_utilization(C, T, b) == pytest.approx(saw, rel=0.01)
    assert an.reno_idle_utilization(C, T, 0) == pytest.approx(0.75, abs=0.01)
    # One gap per cycle only: 1 - 0.05015 / 16.7168.
    assert an.reno_idle_utilization(C, T, 0, recurring=False) == pytest.approx(1 - 0.05015 / 16.71682, abs=1e-6)
    assert an.reno_idle_utilization(C, T, 400) == 1.0


def test_westwood_idle_utilization_by_hand():
    # B = 0: cycle = ((P+1)^2 - P^2)/(2c) + 1/c = 0.10015 + 0.0003 s; U = 1 - 0.0003 / 0.10045
    assert an.westwood_idle_utilization(C, T, 0) == pytest.approx(1 - 0.0003 / 0.10045, abs=1e-6)
    assert an.westwood_idle_utilization(C, T, 0) == pytest.approx(0.997013, abs=1e-6)
    for b in (10, 100, 1000):
        assert 0.999 < an.westwood_idle_utilization(C, T, b) < 1.0


def test_window_spread_to_utilization():
    # erf(B / (2 sqrt 2 sigma)) with B = 2 sqrt 2, sigma = 1: erf(1)
    assert an.utilization_from_window_spread(2 * math.sqrt(2), 1.0) == pytest.approx(0.842701, abs=1e-6)
    assert an.utilization_from_window_spread(10, 0.0) == 1.0


def test_reno_sigma_and_eq9_by_hand():
    # (B + P) / (3 sqrt 3 sqrt n) with B + P = 9, n = 3: 9 / 9 = 1
    assert an.reno_window_sum_sigma(3, 4, 5) == pytest.approx(1.0)
    # n = 2, B = P: erf(3 sqrt 3 sqrt 2 / (2 sqrt 2 x 2)) = erf(3 sqrt 3 / 4) = erf(1.29904) = 0.933807
    assert an.reno_desync_utilization_bound(2, 10, 10) == pytest.approx(0.933807, abs=1e-6)
    # Fig. 8: n = 200, B = 0.05 BDP of 1667: erf(1.2372) = 0.91982
    assert an.reno_desync_utilization_bound(200, 0.05 * 1667, 1667) == pytest.approx(0.91982, abs=1e-4)
    # More flows or more buffer: a higher bound.
    assert an.reno_desync_utilization_bound(200, 50, 1667) > an.reno_desync_utilization_bound(50, 50, 1667)
    assert an.reno_desync_utilization_bound(200, 100, 1667) > an.reno_desync_utilization_bound(200, 50, 1667)
    assert an.reno_desync_utilization_bound(200, 0, 1667) == 0.0


def test_westwood_bound_derived_and_printed():
    # derived erf(sqrt(3n/2)), printed erf(sqrt(3/2) n)
    assert an.westwood_desync_utilization_bound(1) == pytest.approx(0.916735, abs=1e-6)
    assert an.westwood_desync_utilization_bound(1, "printed") == pytest.approx(0.916735, abs=1e-6)
    assert an.westwood_desync_utilization_bound(2) == pytest.approx(0.985694, abs=1e-6)
    assert an.westwood_desync_utilization_bound(2, "printed") == pytest.approx(0.999468, abs=1e-6)
    assert an.westwood_desync_utilization_bound(200) == an.westwood_desync_utilization_bound(200, "printed") == 1.0
    with pytest.raises(ValueError):
        an.westwood_desync_utilization_bound(2, "other")
