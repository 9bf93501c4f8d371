"""Analytical models: the Reno saw-tooth utilization, Jain's index, BDP."""

import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.analysis import bdp_packets, jain_index, reno_sawtooth_goodput, reno_sawtooth_utilization

C = 200e6
S = 1500


def by_hand(c_pps, T, B, beta=0.5):
    """Direct numerical integration of the fluid model (independent check)."""
    P = c_pps * T
    w = beta * (P + B + 1)
    w_max = P + B + 1
    n = 200_000
    ws = np.linspace(w, w_max, n + 1)
    mid = (ws[:-1] + ws[1:]) / 2
    dw = (w_max - w) / n
    rtt = np.maximum(T, mid / c_pps)
    dt = rtt * dw  # dW/dt = 1/RTT
    rate = mid / rtt
    return float((rate * dt).sum() / (c_pps * dt.sum()))


def test_full_utilization_when_buffer_at_least_bdp():
    for T in (0.1, 0.11, 0.3):
        pipe = C * T / (8 * S)
        for B in (pipe, pipe * 1.0001, 2 * pipe, 10 * pipe):
            assert reno_sawtooth_utilization(C, T, B, S) == pytest.approx(1.0, abs=1e-9)
    # just below the threshold B + 1 >= P it is no longer 1
    pipe = C * 0.1 / (8 * S)
    assert reno_sawtooth_utilization(C, 0.1, pipe - 10, S) < 1.0


def test_zero_buffer_is_three_quarters():
    # classic result: Reno without buffer gets 3/4 of the link (the +1 in
    # W_max shifts it by O(1/P))
    assert reno_sawtooth_utilization(C, 0.1, 0, S) == pytest.approx(0.75, abs=1e-3)
    assert reno_sawtooth_utilization(1e9, 0.3, 0, S) == pytest.approx(0.75, abs=1e-4)


def test_hand_computed_case():
    # c = 10 pkts/s... choose P = 100, B = 0: W_max = 101, W0 = 50.5
    # packets = (101^2 - 50.5^2)/2 = 3825.375; c x time = 100 * 49.5 + (101^2 - 100^2)/2 = 5050.5
    c_bps = 100 * 8 * 1500  # 100 packets/s
    u = reno_sawtooth_utilization(c_bps, 1.0, 0, 1500)
    assert u == pytest.approx(3825.375 / 5050.5, rel=1e-12)


@pytest.mark.parametrize("T, B", [(0.1, 0), (0.11, 166.7), (0.11, 500), (0.3, 1000), (0.05, 30)])
def test_matches_numerical_integration(T, B):
    c_pps = C / (8 * S)
    assert reno_sawtooth_utilization(C, T, B, S) == pytest.approx(by_hand(c_pps, T, B), abs=2e-5)


def test_monotone_in_buffer():
    T = 0.11
    pipe = C * T / (8 * S)
    bs = np.linspace(0, 1.2 * pipe, 400)
    us = [reno_sawtooth_utilization(C, T, b, S) for b in bs]
    assert all(b >= a - 1e-15 for a, b in pairwise(us))
    assert us[0] < 0.76 and us[-1] == 1.0


@given(st.floats(0, 5000), st.floats(0, 5000), st.floats(0.01, 0.5))
def test_monotone_property(b1, b2, T):
    lo, hi = sorted((b1, b2))
    assert reno_sawtooth_utilization(C, T, lo, S) <= reno_sawtooth_utilization(C, T, hi, S) + 1e-12


def test_beta_larger_needs_less_buffer():
    # with beta = 0.875 (STCP-like), B >= b/(1-b) C T = C T / 7 suffices
    T = 0.1
    pipe = C * T / (8 * S)
    assert reno_sawtooth_utilization(C, T, pipe / 7, S, beta=0.875) == pytest.approx(1.0, abs=1e-9)
    assert reno_sawtooth_utilization(C, T, pipe / 7, S, beta=0.5) < 0.99


def test_goodput_and_units():
    u = reno_sawtooth_utilization(C, 0.11, 167, S)
    assert reno_sawtooth_goodput(C, 0.11, 167, S) == pytest.approx(u * C)
    assert reno_sawtooth_goodput("200Mbps", "110ms", 167, "1500B") == pytest.approx(u * C)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        reno_sawtooth_utilization(0, 0.1, 10)
    with pytest.raises(ValueError):
        reno_sawtooth_utilization(C, 0.1, -1)
    with pytest.raises(ValueError):
        reno_sawtooth_utilization(C, 0.1, 10, beta=1.0)


def test_jain_index():
    assert jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([1, 3]) == pytest.approx(16 / 20)
    assert math.isnan(jain_index([0, 0]))
    assert jain_index(np.array([2.0, 2.0])) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        jain_index([])
    with pytest.raises(ValueError):
        jain_index([1, -1])


def test_bdp_packets():
    assert bdp_packets(200e6, 0.1, 1500) == 1667
    assert bdp_packets("200Mbps", "100ms", "1500B") == 1667
    assert bdp_packets("1Gbps", "100ms") == 8333
    assert bdp_packets(200e6, 0.1, 1500, exact=True) == pytest.approx(1666.6667, abs=1e-3)
