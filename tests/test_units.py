"""Unit parsing: values, conventions, and error messages that name the field."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.errors import ScenarioError, UnitError
from tcplab.units import (
    Buffer,
    bdp_packets,
    format_rate,
    format_size,
    format_time,
    parse_buffer,
    parse_rate,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize(
    "text, bps",
    [
        ("200Mbps", 200e6),
        ("1Gbps", 1e9),
        ("10 Gbit/s", 10e9),
        ("1.5e6bps", 1.5e6),
        ("100kbps", 100e3),
        ("100Kbps", 100e3),
        ("2 Mb/s", 2e6),
        ("40 Mbit/s", 40e6),
        ("1Tbps", 1e12),
        ("123", 123.0),
        (5e6, 5e6),
        (10, 10.0),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text, "r") == pytest.approx(bps, rel=1e-15)


@pytest.mark.parametrize(
    "text, s",
    [
        ("100ms", 0.1),
        ("2.5 ms", 2.5e-3),
        ("10s", 10.0),
        ("50us", 50e-6),
        ("50µs", 50e-6),
        ("1ns", 1e-9),
        ("2min", 120.0),
        (0.25, 0.25),
        (3, 3.0),
    ],
)
def test_times(text, s):
    assert parse_time(text, "t") == pytest.approx(s, rel=1e-15)


@pytest.mark.parametrize(
    "text, b",
    [
        ("1500B", 1500),
        ("2MB", 2_000_000),
        ("1.5KB", 1500),
        ("1.5kB", 1500),
        ("1KiB", 1024),
        ("1MiB", 1_048_576),
        ("1GB", 10**9),
        ("40 bytes", 40),
        (1500, 1500),
        ("1500", 1500),
    ],
)
def test_sizes(text, b):
    v = parse_size(text, "s")
    assert v == b and isinstance(v, int)


def test_rate_error_names_field_and_gives_examples():
    with pytest.raises(UnitError) as e:
        parse_rate("200Mbsp", "bottleneck_rate")
    assert str(e.value) == "bottleneck_rate: cannot parse '200Mbsp' as a rate (expected e.g. '200Mbps', '1Gbps')"
    assert e.value.field == "bottleneck_rate"
    assert isinstance(e.value, ScenarioError) and isinstance(e.value, ValueError)


def test_bytes_per_second_rejected():
    with pytest.raises(UnitError, match=r"^link\.rate: .*bytes per second"):
        parse_rate("25MBps", "link.rate")


@pytest.mark.parametrize("bad", ["100 furlongs", "ms", "", "1e", "fast"])
def test_time_errors(bad):
    with pytest.raises(UnitError, match=r"^rtt: cannot parse"):
        parse_time(bad, "rtt")


@pytest.mark.parametrize("bad", ["50", "0.25", " 3 "])
def test_time_string_without_unit_refused(bad):
    # A plain number is seconds, but "50" as text could as well mean 50 ms (issue 30): refused, naming the field.
    with pytest.raises(UnitError) as e:
        parse_time(bad, "dumbbell.rtt")
    msg = str(e.value)
    assert msg.startswith("dumbbell.rtt: ") and "needs a unit, e.g. '" + bad.strip() + "ms'" in msg
    assert "\n" not in msg


def test_size_bits_rejected_and_fractional_bytes():
    with pytest.raises(UnitError, match="lowercase 'b' means bits"):
        parse_size("1500b", "packet_size")
    with pytest.raises(UnitError, match="^packet_size: .*not a whole number of bytes"):
        parse_size("1.0005KB", "packet_size")


def test_bool_and_other_types_rejected():
    with pytest.raises(UnitError, match="^x: .*boolean"):
        parse_rate(True, "x")
    with pytest.raises(UnitError, match="^x: "):
        parse_time([1], "x")


def test_bdp_packets():
    assert bdp_packets(200e6, 0.1, 1500) == 1667
    assert bdp_packets(200e6, 0.1, 1500, 0.1) == 167  # 166.67 rounds up
    assert bdp_packets(1e3, 1e-3, 1500) == 1  # at least one packet
    assert bdp_packets(200e6, 0.3, 1500) == 5000


@pytest.mark.parametrize(
    "text, buf",
    [
        (100, Buffer(packets=100)),
        ("100p", Buffer(packets=100)),
        ("100 packets", Buffer(packets=100)),
        ("100", Buffer(packets=100)),
        ("64KB", Buffer(bytes=64000)),
        ("1500B", Buffer(bytes=1500)),
        ("0.1BDP", Buffer(bdp=0.1)),
        ("1 BDP", Buffer(bdp=1.0)),
        ("0.5 x BDP", Buffer(bdp=0.5)),
        ("BDP", Buffer(bdp=1.0)),
        ("unlimited", Buffer()),
        (None, Buffer()),
    ],
)
def test_buffers(text, buf):
    assert parse_buffer(text, "buffer") == buf


def test_buffer_resolution():
    assert parse_buffer("0.1BDP").resolve(200e6, 0.1, 1500) == {"limit_packets": 167, "limit_bytes": None}
    assert parse_buffer("1BDP").resolve(200e6, 0.1, 1500) == {"limit_packets": 1667, "limit_bytes": None}
    assert parse_buffer("2BDP").resolve(200e6, 0.1, 1500) == {"limit_packets": 3333, "limit_bytes": None}
    assert parse_buffer("64KB").resolve() == {"limit_packets": None, "limit_bytes": 64000}
    assert parse_buffer(None).resolve() == {"limit_packets": None, "limit_bytes": None}
    with pytest.raises(UnitError, match="^links\\[0\\].buffer: .*fraction of the BDP"):
        parse_buffer("0.1BDP").resolve(field="links[0].buffer")


@pytest.mark.parametrize("bad, msg", [(0, "at least 1"), ("0p", "at least 1"), ("0BDP", "positive fraction"),
                                      ("", "empty"), ("1.5p", "whole number"), ("lots", "cannot parse"),
                                      (-3, "at least 1")])
def test_buffer_errors(bad, msg):
    with pytest.raises(UnitError, match=f"^buffer: .*{msg}"):
        parse_buffer(bad, "buffer")


@given(st.floats(min_value=1.0, max_value=1e13, allow_nan=False))
def test_rate_format_round_trip(x):
    assert parse_rate(format_rate(x), "r") == pytest.approx(x, rel=1e-11)


@given(st.floats(min_value=1e-10, max_value=1e6, allow_nan=False))
def test_time_format_round_trip(x):
    assert parse_time(format_time(x), "t") == pytest.approx(x, rel=1e-11)


@given(st.integers(min_value=1, max_value=10**12))
def test_size_format_round_trip(x):
    assert parse_size(format_size(x), "s") == x


def test_nan_rejected():
    with pytest.raises(UnitError):
        parse_time(math.nan, "t")
