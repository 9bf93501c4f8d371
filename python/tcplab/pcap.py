"""Packet traces: a run's captured packets as tables and as pcap files.

A run captures the links its scenario names in ``pcap`` (``Scenario(...,
pcap=["r1-r2"])``, ``[run] pcap = ["bottleneck"]`` in a scenario file,
``tcplab run --pcap LINK``). The core records every packet as it starts
onto a captured link's wire, after the link's queue: what a capture on the
sending side of that link would see (drops at the queue are not in it;
losses on the wire are, since the packet was sent). See docs/pcap.md.

The records become two tables of :class:`~tcplab.Results`:

``packet_trace``
    one row per packet: ``time`` (s), ``time_ps`` (the simulator's exact
    picoseconds), ``link``, ``link_name``, ``flow``, ``flow_name``,
    ``packet`` (``data`` or ``ack``), ``seq`` (tcplab's segment number, or
    the ACK's next expected segment), ``byte_seq`` (the same in bytes: the
    application bytes before it, so a flow's first data byte is byte 0),
    ``payload`` (bytes of data), ``size`` (bytes on the wire, as the link
    charged them), ``retransmit``, ``ecn`` (the IP ECN field, 0-3),
    ``tcp_flags`` (tcplab's bits: ECE 1, CWR 2, AccECN's ACE counter in
    bits 2-4), ``sack_count``;
``packet_sacks``
    the SACK blocks: ``packet`` (the row of ``packet_trace``), ``left``,
    ``right`` (byte ranges ``[left, right)``).

:func:`write_pcap` turns them into a pcap file (nanosecond timestamps,
magic 0xa1b23c4d, link type raw IPv4) with synthetic IPv4/TCP headers;
only the headers are captured, the original length is the packet's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._files import write_bytes_atomically

__all__ = ["frames", "write_pcap", "PCAP_MAGIC_NS", "LINKTYPE_RAW"]

#: The pcap magic number of nanosecond-resolution files.
PCAP_MAGIC_NS = 0xA1B23C4D
#: Link type "raw IP": each packet starts with its IPv4 header.
LINKTYPE_RAW = 101
#: The receivers' port (every flow's destination port); a flow's source port
#: is ``SRC_PORT_BASE + flow`` (modulo the port space above it).
DST_PORT = 5001
SRC_PORT_BASE = 10000
#: The advertised window every header carries (tcplab models no receive
#: window in packets; see docs/pcap.md).
WINDOW = 65535

# TCP header flag bits.
_ACK, _ECE, _CWR, _AE = 0x10, 0x40, 0x80, 0x100


def frames(raw: Mapping[str, Any] | None, flow_names: Sequence[str], link_names: Sequence[str]):
    """The core's ``packet_trace`` dict as the two DataFrames
    (``packet_trace``, ``packet_sacks``); empty frames for a run without
    capture."""
    import pandas as pd

    if not raw:
        return _empty_trace(), pd.DataFrame({"packet": np.zeros(0, "int64"), "left": np.zeros(0, "uint64"),
                                             "right": np.zeros(0, "uint64")})
    t = {k: np.asarray(v) for k, v in raw.items() if k not in ("overflow", "limit")}
    flow = t["flow"].astype("int64")
    link = t["link"].astype("int64")
    df = pd.DataFrame({
        "time": t["time_ps"] / 1e12,
        "time_ps": t["time_ps"],
        "link": t["link"],
        "link_name": pd.Categorical.from_codes(link, categories=list(link_names)) if len(link_names) else link,
        "flow": t["flow"],
        "flow_name": pd.Categorical.from_codes(flow, categories=list(flow_names)) if len(flow_names) else flow,
        "packet": pd.Categorical.from_codes(t["ack"].astype("int8"), categories=["data", "ack"]),
        "seq": t["seq"],
        "byte_seq": t["byte_seq"],
        "payload": t["payload"],
        "size": t["size"],
        "retransmit": t["retransmit"],
        "ecn": t["ecn"],
        "tcp_flags": t["tcp_flags"],
        "sack_count": t["sack_count"],
    })
    counts = t["sack_count"].astype("int64")
    sacks = pd.DataFrame({"packet": np.repeat(np.arange(len(counts), dtype="int64"), counts),
                          "left": t["sack_left"], "right": t["sack_right"]})
    df.attrs["overflow"] = int(raw.get("overflow", 0))
    return df, sacks


def _empty_trace():
    import pandas as pd

    cols = {"time": "float64", "time_ps": "uint64", "link": "uint32", "link_name": "object", "flow": "uint32",
            "flow_name": "object", "packet": "object", "seq": "uint64", "byte_seq": "uint64", "payload": "uint32",
            "size": "uint32", "retransmit": "bool", "ecn": "uint8", "tcp_flags": "uint8", "sack_count": "uint8"}
    return pd.DataFrame({k: np.zeros(0, v) for k, v in cols.items()})


def _addresses(spec: Mapping[str, Any] | None, n_flows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per flow: sender and receiver IPv4 addresses (10.0.0.0 + the node's
    index in the run description + 1) and header bytes (``header_size``;
    40 when unknown)."""
    src = np.arange(n_flows, dtype="uint32") * 2 + 1
    dst = src + 1
    hdr = np.full(n_flows, 40, dtype="int64")
    if spec is not None:
        index = {n["name"]: i for i, n in enumerate(spec.get("nodes", []))}
        fl = spec.get("flows", [])
        if len(fl) == n_flows:
            src = np.array([index.get(f["src"], 2 * i) + 1 for i, f in enumerate(fl)], dtype="uint32")
            dst = np.array([index.get(f["dst"], 2 * i + 1) + 1 for i, f in enumerate(fl)], dtype="uint32")
            hdr = np.array([int(f.get("header_size", 40)) for f in fl], dtype="int64")
    base = np.uint32(10 << 24)
    return base + src, base + dst, hdr


def _header_dtype(opt_len: int) -> np.dtype:
    """One pcap record: its 16-byte record header, then the 20-byte IPv4
    and 20-byte TCP headers (big-endian, as on the wire), then the options."""
    fields: list[tuple[str, str] | tuple[str, str, tuple[int]]] = [
        ("ts_sec", "<u4"), ("ts_nsec", "<u4"), ("incl_len", "<u4"), ("orig_len", "<u4"),
        ("ver_ihl", "u1"), ("tos", "u1"), ("total_len", ">u2"), ("ip_id", ">u2"), ("frag", ">u2"),
        ("ttl", "u1"), ("proto", "u1"), ("ip_sum", ">u2"), ("src", ">u4"), ("dst", ">u4"),
        ("sport", ">u2"), ("dport", ">u2"), ("seq", ">u4"), ("ack", ">u4"), ("off_flags", ">u2"),
        ("window", ">u2"), ("tcp_sum", ">u2"), ("urgent", ">u2")]
    if opt_len:
        fields.append(("options", "u1", (opt_len,)))
    return np.dtype(fields)


def write_pcap(path: str | os.PathLike, trace, sacks, spec: Mapping[str, Any] | None = None,
               links: Sequence[int] | None = None, n_flows: int | None = None) -> int:
    """Writes the packets of ``trace`` (a ``packet_trace`` frame) on the link
    indices ``links`` (all when None), merged in time order, to a pcap file at
    ``path``; ``sacks`` is the ``packet_sacks`` frame, ``spec`` the run
    description (node indices for the addresses, each flow's header size).
    Returns the number of packets written."""
    rows = np.arange(len(trace))
    if links is not None:
        rows = rows[np.isin(trace["link"].to_numpy(), np.asarray(list(links), dtype="int64"))]
    # Stable sort by time: each link's packets are already in order; merged
    # links interleave (ties keep the table's order).
    time_ps = trace["time_ps"].to_numpy().astype("uint64")
    rows = rows[np.argsort(time_ps[rows], kind="stable")]
    flow = trace["flow"].to_numpy().astype("int64")[rows]
    n_flows = n_flows if n_flows is not None else (int(flow.max()) + 1 if len(flow) else 0)
    if spec is not None:
        n_flows = max(n_flows, len(spec.get("flows", [])))
    src_ip, dst_ip, hdr_size = _addresses(spec, n_flows)

    packet = trace["packet"]
    ack = (packet.cat.codes.to_numpy() == list(packet.cat.categories).index("ack") if hasattr(packet, "cat")
           else packet.to_numpy() == "ack")[rows]
    payload = trace["payload"].to_numpy().astype("int64")[rows]
    size = trace["size"].to_numpy().astype("int64")[rows]
    n_sack = trace["sack_count"].to_numpy().astype("int64")[rows]
    sack_start = (np.cumsum(trace["sack_count"].to_numpy().astype("int64")) - trace["sack_count"].to_numpy())[rows]
    sack_left = sacks["left"].to_numpy().astype("uint64")
    sack_right = sacks["right"].to_numpy().astype("uint64")

    # Options: the SACK blocks (two NOPs, kind 5, length 2 + 8n), then NOPs
    # up to the flow's header size where that is 40 bytes plus a multiple
    # of 4 and fits in the 40 bytes of TCP options (Linux's 52-byte headers
    # hold a timestamp option, here 12 NOPs).
    sack_len = np.where(n_sack > 0, 4 + 8 * n_sack, 0)
    want = size - payload - 40  # option bytes the simulated header has room for
    pad = want - sack_len
    pad = np.where((pad > 0) & (pad % 4 == 0) & (sack_len + pad <= 40), pad, 0)
    opt_len = sack_len + pad
    hlen = 40 + opt_len
    total_len = hlen + payload
    if len(total_len) and int(total_len.max()) > 65535:  # (such a scenario refuses pcap: scenario/scenario.py)
        raise ValueError(f"pcap: a packet of {int(total_len.max()):,} bytes with its IPv4 and TCP headers; IPv4 "
                         "carries at most 65,535 bytes (its total length is 16 bits)")

    # Every record in a row of one table as wide as the longest, then the
    # rows' leading bytes (each record's own length) one after the other.
    rec_len = 16 + hlen
    table = np.zeros((len(rows), int(rec_len.max()) if len(rows) else 0), dtype="uint8")
    header = np.array([(PCAP_MAGIC_NS, 2, 4, 0, 0, 0xFFFF, LINKTYPE_RAW)],
                      dtype=[("magic", "<u4"), ("major", "<u2"), ("minor", "<u2"), ("zone", "<i4"),
                             ("sigfigs", "<u4"), ("snaplen", "<u4"), ("linktype", "<u4")]).tobytes()

    ns = time_ps[rows] // 1000
    tcp_flags = trace["tcp_flags"].to_numpy().astype("int64")[rows]
    ace = (tcp_flags >> 2) & 7
    flags = (_ACK | np.where(((tcp_flags & 1) | (ace & 1)) != 0, _ECE, 0)
             | np.where(((tcp_flags & 2) | (ace & 2)) != 0, _CWR, 0) | np.where((ace & 4) != 0, _AE, 0))
    byte_seq = trace["byte_seq"].to_numpy().astype("uint64")[rows] & np.uint64(0xFFFFFFFF)
    ecn = trace["ecn"].to_numpy().astype("uint8")[rows]

    for n, p in sorted(set(zip(n_sack.tolist(), pad.tolist(), strict=True))):
        g = np.flatnonzero((n_sack == n) & (pad == p))
        ol = (4 + 8 * n if n else 0) + p
        rec = np.zeros(len(g), dtype=_header_dtype(ol))
        rec["ts_sec"] = ns[g] // 1_000_000_000
        rec["ts_nsec"] = ns[g] % 1_000_000_000
        rec["incl_len"] = 40 + ol
        rec["orig_len"] = total_len[g]
        rec["ver_ihl"] = 0x45
        rec["tos"] = ecn[g]
        rec["total_len"] = total_len[g]
        rec["frag"] = 0x4000  # don't fragment; the IP id is then 0 (RFC 6864)
        rec["ttl"] = 64
        rec["proto"] = 6
        f = flow[g]
        fwd_src, fwd_dst = src_ip[f], dst_ip[f]
        is_ack = ack[g]
        port = (SRC_PORT_BASE + f % (65536 - SRC_PORT_BASE)).astype("uint16")
        rec["src"] = np.where(is_ack, fwd_dst, fwd_src)
        rec["dst"] = np.where(is_ack, fwd_src, fwd_dst)
        rec["sport"] = np.where(is_ack, DST_PORT, port)
        rec["dport"] = np.where(is_ack, port, DST_PORT)
        # Data: its bytes' sequence number; the receiver sends no data, so
        # its own sequence number stays 0 and data packets acknowledge 0.
        rec["seq"] = np.where(is_ack, 0, byte_seq[g])
        rec["ack"] = np.where(is_ack, byte_seq[g], 0)
        rec["off_flags"] = ((40 + ol - 20) // 4) << 12 | flags[g]
        rec["window"] = WINDOW
        if ol:
            opts = rec["options"]
            opts[:, :p] = 1  # NOP
            if n:
                opts[:, p:p + 4] = (1, 1, 5, 2 + 8 * n)
                for k in range(n):
                    s = sack_start[g] + k
                    pair = np.stack([sack_left[s], sack_right[s]], axis=1) & np.uint64(0xFFFFFFFF)
                    opts[:, p + 4 + 8 * k:p + 12 + 8 * k] = pair.astype(">u4").view("uint8").reshape(len(g), 8)
        raw = rec.view("uint8").reshape(len(g), rec.dtype.itemsize)
        rec["ip_sum"] = _ip_checksum(raw[:, 16:36])
        table[g, :rec.dtype.itemsize] = raw
    body = table[np.arange(table.shape[1]) < rec_len[:, None]]
    write_bytes_atomically(path, header + body.tobytes())
    return len(rows)


def _ip_checksum(header: np.ndarray) -> np.ndarray:
    """The IPv4 header checksum of each row (20 bytes, checksum field zero)."""
    words = header.reshape(len(header), 10, 2).astype("uint32")
    s = (words[:, :, 0] << 8 | words[:, :, 1]).sum(axis=1)
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s & 0xFFFF).astype("uint16")
