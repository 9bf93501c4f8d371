"""Parse quantities written the way the papers write them into SI numbers.

The Rust core only understands SI base units: seconds, bits per second and
bytes. Scenario files and builders accept friendlier strings, converted here:

========  ==========================================  =====================
kind      accepted examples                           result
========  ==========================================  =====================
rate      ``"200Mbps"``, ``"1Gbps"``, ``"10 Gbit/s"``, float, bit/s
          ``"1.5e6bps"``, ``"100kbps"``, ``"2 Mb/s"``
time      ``"100ms"``, ``"2.5 ms"``, ``"10s"``,        float, seconds
          ``"50us"``, ``"50µs"``, ``"1ns"``, ``"1min"``
size      ``"1500B"``, ``"2MB"``, ``"1.5KB"``,         int, bytes
          ``"1KiB"``, ``"1MiB"``, ``"40 bytes"``
buffer    ``100``, ``"100p"``, ``"100 packets"``,      :class:`Buffer`
          ``"64KB"``, ``"0.1BDP"``, ``"1 BDP"``,
          ``"unlimited"``
param     ``"5ms"``, ``"1514B"``, ``"10Mbps"``,       seconds, bytes, bit/s
          ``0.1``, ``true``, ``"auto"``                (by the unit), or as given
========  ==========================================  =====================

Conventions (decided here, used everywhere in tcplab):

* Rate prefixes are decimal and case-insensitive (``k``/``K`` = 1e3, ``M`` =
  1e6, ``G`` = 1e9, ``T`` = 1e12). The unit must be *bits*: ``bps``,
  ``bit/s``, ``bits/s`` or ``b/s``. ``"MBps"``/``"MB/s"`` (bytes per second)
  are rejected rather than silently multiplied by 8.
* Size prefixes ``kB``/``KB``, ``MB``, ``GB``, ``TB`` are decimal (1e3, 1e6,
  1e9, 1e12 bytes), ``KiB``, ``MiB``, ``GiB``, ``TiB`` binary (1024**k). A
  lowercase ``b`` means bits and is rejected for sizes. A size must come out
  as a whole number of bytes.
* A plain number (``int``/``float`` or a numeric string such as ``"0.1"``) is
  taken in the SI base unit: seconds, bit/s, bytes; for a buffer, packets.
  A *time* written as a string needs its unit: ``"50"`` is refused (``needs a
  unit, e.g. '50ms'``), as it could mean milliseconds; the number ``0.05``
  (TOML ``rtt = 0.05``) is seconds.
* Buffers: an integer or ``"<n>p"``/``"<n> packets"`` is a limit in packets;
  a size string is a limit in bytes; ``"<f> BDP"`` (also ``"<f>xBDP"``,
  ``"BDP"``) is a fraction of the bandwidth-delay product, resolved by the
  scenario builder: ``round(f * C * RTT / (8 * packet_size))`` packets
  (half rounds up), at least 1. ``"unlimited"`` (or ``None``) means no limit.

Every parser takes the name of the field being parsed and raises
:class:`tcplab.errors.UnitError` naming it::

    >>> parse_rate("200Mbsp", "bottleneck_rate")
    Traceback (most recent call last):
    ...
    tcplab.errors.UnitError: bottleneck_rate: cannot parse '200Mbsp' as a rate (expected e.g. '200Mbps', '1Gbps')
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import UnitError, shown

__all__ = [
    "Buffer",
    "Number",
    "bdp_packets",
    "format_rate",
    "format_size",
    "format_time",
    "parse_buffer",
    "parse_count",
    "parse_number",
    "parse_param",
    "parse_rate",
    "parse_size",
    "parse_time",
    "python_scalar",
    "check_text",
]

Number = int | float
#: What the parsers accept: a number in SI base units or a string with units.
Quantity = int | float | str

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_QTY_RE = re.compile(rf"^\s*({_NUM})\s*(.*?)\s*$")

_RATE_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_RATE_UNIT_RE = re.compile(r"^([kKmMgGtT]?)(bps|b/s|bit/s|bits/s|bit/sec|bits/sec)$")
_RATE_BYTES_RE = re.compile(r"^([kKmMgGtT]?)(Bps|B/s|[Bb]ytes?/s)$")

_TIME_UNITS = {
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msec": 1e-3, "msecs": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
    "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "usec": 1e-6, "usecs": 1e-6,
    "microsecond": 1e-6, "microseconds": 1e-6,
    "ns": 1e-9, "nsec": 1e-9, "nanosecond": 1e-9, "nanoseconds": 1e-9,
    "ps": 1e-12,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hour": 3600.0, "hours": 3600.0,
}

#: Largest size in bytes: the core holds sizes (file sizes, byte limits) in a u64.
MAX_SIZE = 2**64 - 1

_SIZE_DEC = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_SIZE_BIN = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE_UNIT_RE = re.compile(r"^(?:([kKmMgGtT]?)(i?)B|([kKmMgGtT]?)(i?)bytes?|bytes?)$")
_PACKETS_RE = re.compile(r"^(p|pkt|pkts|packet|packets)$", re.IGNORECASE)
_BDP_RE = re.compile(rf"^\s*(?:({_NUM})\s*(?:x|\*|×)?\s*)?bdps?\s*$", re.IGNORECASE)
_UNLIMITED = {"unlimited", "inf", "infinite", "none"}


def _quote(value: object) -> str:
    return shown(value) if isinstance(value, (str, int, float)) else str(value)


def _split(value: str) -> tuple[float, str] | None:
    m = _QTY_RE.match(value)
    if not m:
        return None
    return float(m.group(1)), m.group(2)


def python_scalar(value: object) -> object:
    """A numpy scalar as the plain Python value it holds: ``numpy.int64(2)``
    -> ``2``, ``numpy.float32(0.5)`` -> ``0.5``, ``numpy.bool_(True)`` ->
    ``True``; anything else unchanged. Sweep grids hand numpy values to
    the scenario model, which then checks the *kind* (a boolean is not a
    count, a float is not a whole number) as for Python values."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    np = _numpy()
    if np is None or not isinstance(value, np.generic):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def check_text(value: str, field: str) -> str:
    """``value`` if it is valid Unicode text; a lone surrogate (which Python
    strings may hold, from a file name or ``surrogateescape``) cannot be
    written as UTF-8 JSON or TOML, so it is a UnitError naming ``field``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UnitError(field, f"not valid Unicode text (a lone surrogate {value[e.start]!a} at position "
                               f"{e.start})") from None
    return value


def _numpy():
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    return numpy


def _numpy_generic() -> tuple:
    np = _numpy()
    return (np.generic,) if np is not None else ()


def _plain_number(value: object, field: str, what: str, example: str) -> float | None:
    """Return a float for int/float input, None for strings, raise otherwise."""
    value = python_scalar(value)
    if isinstance(value, bool):
        raise UnitError(field, f"expected a {what}, got a boolean {value} (e.g. {example})")
    if isinstance(value, (int, float)):
        try:
            v = float(value)
        except OverflowError:  # an int beyond the largest float (about 1.8e308)
            raise UnitError(field, f"expected a {what}, got an integer of {int(value).bit_length()} bits: "
                                   f"beyond the largest 64-bit float (about 1.8e308)") from None
        if math.isnan(v):
            raise UnitError(field, f"expected a {what}, got NaN")
        return v
    if isinstance(value, str):
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, _numpy_generic()):
        return _plain_number(float(value), field, what, example)  # e.g. fractions.Fraction
    raise UnitError(field, f"expected a {what} such as {example}, got {type(value).__name__} {shown(value)}")


def parse_number(value: Quantity, field: str = "value") -> float:
    """Parse a plain number (int, float or numeric string) without units."""
    v = _plain_number(value, field, "number", "'0.5'")
    if v is not None:
        return v
    s = _split(str(value))
    if s is None or s[1] != "":
        raise UnitError(field, f"cannot parse {_quote(value)} as a number")
    return s[0]


def parse_count(value: Quantity, field: str = "value") -> int:
    """Parse a whole number (e.g. a packet count): ``10``, ``"10"``, ``10.0``.

    At most 64 bits (-2^63 to 2^64 - 1): every count the core holds is a
    u64 or smaller; callers check their own tighter ranges."""
    scalar = python_scalar(value)
    if isinstance(scalar, int) and not isinstance(scalar, bool):
        n = scalar  # exact: no detour through a float, which rounds above 2^53
    else:
        v = parse_number(value, field)
        if not math.isfinite(v) or v != round(v):
            raise UnitError(field, f"expected a whole number, got {_quote(scalar)}")
        n = int(round(v))
    if not -(2**63) <= n < 2**64:
        raise UnitError(field, "expected a whole number of at most 64 bits (the core's counters), "
                               f"got {_quote(scalar)}")
    return n


def parse_rate(value: Quantity, field: str = "rate") -> float:
    """Parse a rate into bit/s: ``"200Mbps"`` -> ``2e8``; numbers are bit/s."""
    expected = "(expected e.g. '200Mbps', '1Gbps')"
    v = _plain_number(value, field, "rate", "'200Mbps'")
    if v is not None:
        return v
    s = _split(value)  # type: ignore[arg-type]
    if s is None:
        raise UnitError(field, f"cannot parse {_quote(value)} as a rate {expected}")
    num, unit = s
    unit = unit.replace(" ", "")
    if unit == "":
        return num
    m = _RATE_UNIT_RE.match(unit)
    if m:
        return num * _RATE_PREFIX[m.group(1).lower()]
    if _RATE_BYTES_RE.match(unit):
        raise UnitError(
            field,
            f"{_quote(value)} is in bytes per second; write rates in bits, "
            f"e.g. '200Mbps' or '1Gbit/s'",
        )
    raise UnitError(field, f"cannot parse {_quote(value)} as a rate {expected}")


#: The plain numbers parse_time reads as seconds, collected inside :func:`plain_times_read` (else None).
_PLAIN_TIMES: contextvars.ContextVar[list | None] = contextvars.ContextVar("tcplab_plain_times", default=None)


@contextlib.contextmanager
def plain_times_read() -> Iterator[list]:
    """Within it, every plain number :func:`parse_time` reads (as seconds) is added to the list it
    gives: ``tcplab run --set`` finds out so whether a key takes a time (tcplab.overrides)."""
    seen: list = []
    token = _PLAIN_TIMES.set(seen)
    try:
        yield seen
    finally:
        _PLAIN_TIMES.reset(token)


def parse_time(value: Quantity, field: str = "time") -> float:
    """Parse a duration into seconds: ``"100ms"`` -> ``0.1``; numbers are seconds."""
    expected = "(expected e.g. '100ms', '2.5s', '50us')"
    v = _plain_number(value, field, "time", "'100ms'")
    if v is not None:
        seen = _PLAIN_TIMES.get()
        if seen is not None:
            seen.append(value)
        return v
    text = str(value)  # a string: _plain_number took every number
    s = _split(text)
    if s is None:
        raise UnitError(field, f"cannot parse {_quote(value)} as a time {expected}")
    num, unit = s
    if unit == "":
        # "50" could mean 50 ms as easily as 50 s: a time written as text says its unit. (A plain number,
        # TOML's rtt = 0.05 or Python's 0.05, stays seconds; a command-line option, named "--...", has no
        # plain numbers: everything on it is text, so there the advice would mislead.)
        plain = "" if field.startswith("--") else " (a plain number, without quotes, is seconds)"
        raise UnitError(field, f"{_quote(value)} needs a unit, e.g. '{text.strip()}ms' or '{text.strip()}s'{plain}")
    key = unit if unit in _TIME_UNITS else unit.lower()
    if key not in _TIME_UNITS:
        raise UnitError(field, f"cannot parse {_quote(value)} as a time {expected}")
    return num * _TIME_UNITS[key]


def parse_size(value: Quantity, field: str = "size") -> int:
    """Parse a size into whole bytes: ``"1.5KB"`` -> ``1500``, ``"1KiB"`` -> ``1024``."""
    expected = "(expected e.g. '1500B', '64KB', '1MiB')"
    v = _plain_number(value, field, "size", "'1500B'")
    if v is None:
        s = _split(value)  # type: ignore[arg-type]
        if s is None:
            raise UnitError(field, f"cannot parse {_quote(value)} as a size {expected}")
        num, unit = s
        unit = unit.replace(" ", "")
        if unit == "":
            v = num
        else:
            m = _SIZE_UNIT_RE.match(unit)
            if not m:
                if re.match(r"^[kKmMgGtT]?i?(b|bit|bits)$", unit):
                    raise UnitError(
                        field,
                        f"{_quote(value)}: a lowercase 'b' means bits; sizes are in bytes, "
                        f"write e.g. '1500B' or '64KB'",
                    )
                raise UnitError(field, f"cannot parse {_quote(value)} as a size {expected}")
            prefix = (m.group(1) or m.group(3) or "").lower()
            binary = bool(m.group(2) or m.group(4))
            if binary and prefix == "":
                raise UnitError(field, f"cannot parse {_quote(value)} as a size {expected}")
            v = num * (_SIZE_BIN[prefix] if binary else _SIZE_DEC[prefix])
    if not math.isfinite(v):
        raise UnitError(field, f"size must be finite, got {_quote(value)}")
    r = round(v)
    if abs(v - r) > 1e-9 * max(1.0, abs(v)):
        raise UnitError(field, f"{_quote(value)} is not a whole number of bytes ({v:g} B)")
    if abs(r) > MAX_SIZE:
        raise UnitError(field, f"{_quote(value)} is beyond the largest size the core holds (2^64 - 1 bytes)")
    return int(r)


def parse_param(value: object, field: str = "value") -> bool | int | float | str:
    """A parameter whose unit the value itself says (a queue discipline's ``target = "5ms"``).

    A string with a time unit gives seconds (``"5ms"`` -> ``0.005``), with a
    size unit whole bytes (``"1514B"``), with a rate unit bit/s
    (``"10Mbps"``); a numeric string gives its number. Numbers pass through
    (an ``int`` stays an ``int``: counts must), as do booleans and strings
    that do not start with a number (an option such as ``"auto"``). A number
    followed by a unit none of these know raises :class:`UnitError` naming
    ``field``, as does a number that is not finite.
    """
    if hasattr(value, "item") and not isinstance(value, (str, bytes, bool, int, float)):
        value = value.item()  # numpy scalar
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise UnitError(field, f"expected a finite number, got {shown(value)}")
        return value
    if isinstance(value, str):
        check_text(value, field)
    if not isinstance(value, str):
        raise UnitError(field, f"expected a number, a boolean or a string such as '5ms', got {type(value).__name__} "
                               f"{shown(value)}")
    s = _split(value)
    if s is None:
        return value
    num, unit = s
    if unit == "":
        if not math.isfinite(num):
            raise UnitError(field, f"expected a finite number, got {shown(value)}")
        return int(num) if re.fullmatch(r"\s*[-+]?\d+\s*", value) else num
    if unit in _TIME_UNITS or unit.lower() in _TIME_UNITS:
        return parse_time(value, field)
    compact = unit.replace(" ", "")
    if _SIZE_UNIT_RE.match(compact):
        return parse_size(value, field)
    if _RATE_UNIT_RE.match(compact):
        return parse_rate(value, field)
    raise UnitError(field, f"cannot parse {_quote(value)} as a time, size or rate (expected e.g. '5ms', '1514B', "
                           f"'10Mbps', or a plain number)")


#: Largest queue limit in packets: the core holds it in a u64.
MAX_LIMIT_PACKETS = 2**64 - 1


def bdp_packets(rate_bps: float, rtt_s: float, packet_size: int, fraction: float = 1.0,
                field: str = "buffer") -> int:
    """``fraction`` x the bandwidth-delay product in packets, rounded to nearest, >= 1.

    ``C * RTT / (8 * packet_size)``: 200 Mbit/s x 100 ms / (1500 x 8) = 1667.
    The fraction is applied to the exact product before rounding (half up).
    A packet size below 1 byte, or a product beyond the core's u64 limit,
    is a :class:`UnitError` naming ``field`` (the buffer being resolved).
    """
    if not packet_size >= 1:  # (also NaN)
        raise UnitError(field, f"a buffer in BDP needs a packet size of at least 1 byte to count packets, "
                               f"got {shown(packet_size)} B")
    exact = fraction * rate_bps * rtt_s / (8.0 * packet_size)
    if not (math.isfinite(exact) and exact + 0.5 < MAX_LIMIT_PACKETS):
        raise UnitError(field, f"{fraction:g} BDP of {rate_bps:g} bit/s x {rtt_s:g} s is {exact:g} packets, "
                               f"beyond the largest queue limit (2^64 - 1 packets)")
    return max(1, int(math.floor(exact + 0.5)))


@dataclass(frozen=True)
class Buffer:
    """A queue limit: exactly one of ``packets``, ``bytes``, ``bdp`` or none (unlimited)."""

    packets: int | None = None
    bytes: int | None = None
    bdp: float | None = None

    @property
    def unlimited(self) -> bool:
        return self.packets is None and self.bytes is None and self.bdp is None

    def resolve(
        self,
        rate_bps: float | None = None,
        rtt_s: float | None = None,
        packet_size: int | None = None,
        field: str = "buffer",
    ) -> dict:
        """The core's ``QueueSpec`` dict ``{"limit_packets", "limit_bytes"}``.

        A BDP fraction needs the capacity, RTT and packet size (see
        :func:`bdp_packets`); without them it is an error naming ``field``.
        """
        if self.bdp is not None:
            if rate_bps is None or rtt_s is None or packet_size is None:
                raise UnitError(
                    field,
                    "a buffer given as a fraction of the BDP is only defined for a "
                    "scenario builder that knows C and RTT (e.g. Dumbbell); give packets or bytes",
                )
            return {"limit_packets": bdp_packets(rate_bps, rtt_s, packet_size, self.bdp, field), "limit_bytes": None}
        return {"limit_packets": self.packets, "limit_bytes": self.bytes}

    def packets_for(self, rate_bps: float, rtt_s: float, packet_size: int,
                    field: str = "buffer") -> float | None:
        """The limit in packets (bytes converted with ``packet_size``); None if unlimited."""
        if not packet_size >= 1:
            raise UnitError(field, "needs a packet size of at least 1 byte to count packets, "
                                   f"got {shown(packet_size)} B")
        if self.bdp is not None:
            return float(bdp_packets(rate_bps, rtt_s, packet_size, self.bdp, field))
        if self.packets is not None:
            return float(self.packets)
        if self.bytes is not None:
            return self.bytes / packet_size
        return None


def parse_buffer(value: Quantity | Buffer | None, field: str = "buffer") -> Buffer:
    """Parse a queue limit (see the module docstring); zero or negative is an error."""
    expected = "(expected e.g. 100, '100p', '64KB', '0.1BDP' or 'unlimited')"
    if value is None or isinstance(value, Buffer):
        return value if isinstance(value, Buffer) else Buffer()
    if isinstance(value, bool):
        raise UnitError(field, f"expected a buffer size {expected}, got a boolean")
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _UNLIMITED:
            return Buffer()
        if text == "":
            raise UnitError(field, f"empty buffer size {expected}")
        m = _BDP_RE.match(text)
        if m:
            frac = float(m.group(1)) if m.group(1) is not None else 1.0
            if not (math.isfinite(frac) and frac > 0):
                raise UnitError(field, f"buffer must be a positive fraction of the BDP, got {shown(value)}")
            return Buffer(bdp=frac)
        s = _split(text)
        if s is None:
            raise UnitError(field, f"cannot parse {shown(value)} as a buffer size {expected}")
        num, unit = s
        if unit == "" or _PACKETS_RE.match(unit.replace(" ", "")):
            n = num
            kind = "packets"
        else:
            try:
                n = parse_size(text, field)
            except UnitError:
                raise UnitError(field, f"cannot parse {shown(value)} as a buffer size {expected}") from None
            kind = "bytes"
    else:
        n = parse_number(value, field)
        kind = "packets"
    if not math.isfinite(n) or n != round(n):
        raise UnitError(field, f"buffer must be a whole number of {kind}, got {_quote(value)}")
    if n <= 0:
        raise UnitError(field, f"buffer must be at least 1 {kind[:-1]}, got {_quote(value)} "
                               "(a drop-tail queue needs room)")
    if n >= 2**64:
        raise UnitError(field, f"{_quote(value)} is beyond the largest queue limit (2^64 - 1 {kind})")
    return Buffer(packets=int(n)) if kind == "packets" else Buffer(bytes=int(n))


def _fmt(num: float) -> str:
    return f"{num:.12g}"


def format_rate(bps: float) -> str:
    """Format bit/s compactly: ``2e8`` -> ``'200Mbps'`` (exact round trip)."""
    for p, f in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(bps) >= f:
            return f"{_fmt(bps / f)}{p}bps"
    return f"{_fmt(bps)}bps"


def format_time(s: float) -> str:
    """Format seconds compactly: ``0.1`` -> ``'100ms'``."""
    for u, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= f:
            return f"{_fmt(s / f)}{u}"
    return f"{_fmt(s)}s"


def format_size(b: int) -> str:
    """Format bytes: ``1500`` -> ``'1500B'``, ``2000000`` -> ``'2MB'``."""
    for p, f in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if b >= f and b % f == 0:
            return f"{b // f}{p}"
    return f"{b}B"
