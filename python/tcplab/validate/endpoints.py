"""The programs ``kernel.py`` runs inside the sender's and receiver's network namespaces.

``python -m tcplab.validate.endpoints ROLE CONFIG_JSON`` (via ``ip netns exec NS``), where ROLE is

- ``receiver``: accepts one TCP connection, reads and discards, and logs the
  cumulative payload bytes read every ``sample_interval`` seconds;
- ``sender``: connects with ``TCP_CONGESTION`` set (from ``src_port`` when
  given, so the forwarder's drop log names the flow; at ``start_monotonic``
  when given, so the flows of a multi-flow run start together), sends in bulk for
  ``duration_s`` and samples ``getsockopt(TCP_INFO)`` every ``sample_interval``
  seconds; it also reads the namespace's SNMP counters (what ``nstat`` reads)
  before and after;
- ``sysctl``: sets and then dumps the namespace's TCP sysctls;
- ``udp_send`` / ``udp_recv`` / ``ping``: the forwarder's self-checks.

Every time logged is CLOCK_MONOTONIC (``time.monotonic``), the clock the
forwarder logs too, so ``kernel.py`` can rebase all of them to one t0.
Results go to the files named in the config (JSON or CSV).
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

# struct tcp_info, include/uapi/linux/tcp.h (Linux 6.x; the fields used here
# have had these offsets since 4.19, and later kernels only append fields).
# Byte offsets of the fields written to tcp_info.csv: (name, offset, struct format).
TCP_INFO_FIELDS: list[tuple[str, int, str]] = [
    ("state", 0, "B"),
    ("ca_state", 1, "B"),
    ("rto_us", 8, "I"),
    ("unacked", 24, "I"),
    ("sacked", 28, "I"),
    ("lost", 32, "I"),
    ("retrans", 36, "I"),
    ("rtt_us", 68, "I"),
    ("rttvar_us", 72, "I"),
    ("snd_ssthresh", 76, "I"),
    ("snd_cwnd", 80, "I"),
    ("total_retrans", 100, "I"),
    ("pacing_rate", 104, "Q"),  # bytes per second
    ("bytes_acked", 120, "Q"),
    ("segs_out", 136, "I"),  # segments sent, retransmissions and pure ACKs included
    ("min_rtt_us", 148, "I"),
    ("data_segs_out", 156, "I"),  # segments with payload sent, retransmissions included
    ("delivery_rate", 160, "Q"),  # bytes per second
    ("delivered", 192, "I"),
    ("bytes_sent", 200, "Q"),
    ("bytes_retrans", 208, "Q"),
    # Chronographs (tcp_get_info_chrono_stats, net/ipv4/tcp.c), microseconds: sending
    # (cwnd-limited or pacing), limited by the peer's window, limited by the send buffer.
    # A bulk sender that the host never starved is always in one of the three.
    ("busy_time_us", 168, "Q"),
    ("rwnd_limited_us", 176, "Q"),
    ("sndbuf_limited_us", 184, "Q"),
]
# Up to and including tcpi_bytes_retrans (offset 208, 8 bytes).
TCP_INFO_LEN = 216
TCP_INFO = getattr(socket, "TCP_INFO", 11)  # include/uapi/linux/tcp.h
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
# getsockopt(TCP_CC_INFO): the algorithm's own state (union tcp_cc_info, include/uapi/linux/inet_diag.h).
# For bbr, struct tcp_bbr_info (tcp_bbr.c, bbr_get_info): bw_lo, bw_hi (the max-filtered bandwidth,
# bytes/s), min_rtt (us), pacing_gain, cwnd_gain (BBR_UNIT = 256 = 1.0). Algorithms without get_info
# (reno, cubic) return nothing.
TCP_CC_INFO = 26
BBR_INFO_LEN = 20
BBR_UNIT = 256
#: BBR's mode (enum bbr_mode, tcp_bbr.c) from its gains, as bbr_update_gains sets them:
#: STARTUP pacing = cwnd = bbr_high_gain (739); DRAIN pacing = bbr_drain_gain (88), cwnd = high gain;
#: PROBE_BW cwnd = bbr_cwnd_gain (512); PROBE_RTT pacing = cwnd = BBR_UNIT (256).
BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT = 0, 1, 2, 3
CC_INFO_FIELDS = ["bbr_bw", "bbr_min_rtt_us", "bbr_pacing_gain", "bbr_cwnd_gain", "bbr_mode"]


def bbr_mode(pacing_gain: int, cwnd_gain: int) -> int:
    """tcp_bbr.c's mode from the gains tcp_bbr_info reports (-1 if they match none)."""
    if cwnd_gain == BBR_UNIT and pacing_gain == BBR_UNIT:
        return BBR_PROBE_RTT
    if cwnd_gain == 2 * BBR_UNIT:
        return BBR_PROBE_BW
    if cwnd_gain > 2 * BBR_UNIT:
        return BBR_STARTUP if pacing_gain > BBR_UNIT else BBR_DRAIN
    return -1


def parse_bbr_info(raw: bytes) -> dict[str, int] | None:
    """The fields of ``CC_INFO_FIELDS`` from a ``getsockopt(TCP_CC_INFO)`` of a bbr socket; None
    when the kernel returned no tcp_bbr_info (another algorithm, or none yet)."""
    if len(raw) < BBR_INFO_LEN:
        return None
    lo, hi, min_rtt, pg, cg = struct.unpack_from("=5I", raw, 0)
    return {"bbr_bw": (hi << 32) | lo, "bbr_min_rtt_us": min_rtt, "bbr_pacing_gain": pg, "bbr_cwnd_gain": cg,
            "bbr_mode": bbr_mode(pg, cg)}


def parse_tcp_info(raw: bytes) -> dict[str, int]:
    """The fields of ``TCP_INFO_FIELDS`` from a ``getsockopt(TCP_INFO)`` result."""
    if len(raw) < TCP_INFO_LEN:
        raise ValueError(f"tcp_info: the kernel returned {len(raw)} bytes, fewer than the {TCP_INFO_LEN} needed "
                         "(a kernel older than 4.19?)")
    return {name: struct.unpack_from("=" + fmt, raw, off)[0] for name, off, fmt in TCP_INFO_FIELDS}


def read_counters() -> dict[str, int]:
    """The network namespace's SNMP counters, named as ``nstat`` names them
    (``TcpExtTCPHystartTrainDetect``): /proc/net/netstat and /proc/net/snmp
    hold pairs of lines ``Prefix: names...`` / ``Prefix: values...``."""
    out: dict[str, int] = {}
    for path in ("/proc/net/snmp", "/proc/net/netstat"):
        lines = Path(path).read_text().splitlines()
        for head, vals in zip(lines[::2], lines[1::2], strict=True):
            prefix, names = head.split(":", 1)
            _, values = vals.split(":", 1)
            for n, v in zip(names.split(), values.split(), strict=True):
                out[prefix + n] = int(v)
    return out


def _write_ready(path: str) -> None:
    tmp = path + ".tmp"
    Path(tmp).write_text(str(os.getpid()))
    os.replace(tmp, path)


def _sampler(interval: float, stop: threading.Event, sample) -> None:
    """Calls ``sample()`` at start + k * interval (absolute schedule) until ``stop``."""
    start = time.monotonic()
    k = 0
    while not stop.is_set():
        sample()
        k += 1
        now = time.monotonic()
        if start + k * interval < now:  # late: skip the missed ticks, keep the grid
            k = int((now - start) / interval) + 1
        stop.wait(max(0.0, start + k * interval - time.monotonic()))


def _realtime(cfg: dict[str, Any]) -> str:
    """SCHED_FIFO at ``cfg["rt_priority"]`` (below the forwarder's 50) for this
    process and the threads it starts, so that other load on the host does
    not starve the application; returns what it runs under."""
    prio = cfg.get("rt_priority")
    if not prio:
        return "SCHED_OTHER"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
    except OSError as e:
        return f"SCHED_OTHER (SCHED_FIFO refused: {e})"
    return f"SCHED_FIFO {prio}"


def receiver(cfg: dict[str, Any]) -> None:
    sched = _realtime(cfg)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", cfg["port"]))
    srv.listen(1)
    srv.settimeout(cfg.get("accept_timeout_s", 30.0))
    _write_ready(cfg["ready_file"])
    conn, _ = srv.accept()
    conn.settimeout(cfg.get("idle_timeout_s", 30.0))
    total = 0
    rows: list[tuple[float, int]] = []
    stop = threading.Event()
    th = threading.Thread(target=_sampler, args=(cfg["sample_interval"], stop,
                                                 lambda: rows.append((time.monotonic(), total))), daemon=True)
    th.start()
    buf = bytearray(1 << 20)
    end_reason = "eof"
    try:
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            total += n
    except ConnectionResetError:
        end_reason = "reset"
    except TimeoutError:
        end_reason = "idle timeout"
    stop.set()
    th.join()
    rows.append((time.monotonic(), total))
    with open(cfg["out"], "w") as f:
        f.write("time_monotonic,bytes\n")
        f.writelines(f"{t:.9f},{b}\n" for t, b in rows)
    Path(cfg["out"] + ".json").write_text(json.dumps({"end": end_reason, "bytes": total, "scheduling": sched}))


def sender(cfg: dict[str, Any]) -> None:
    sched = _realtime(cfg)
    before = read_counters()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cfg["algorithm"].encode())
    if cfg.get("src_port"):
        s.bind(("0.0.0.0", cfg["src_port"]))
    if cfg.get("start_monotonic"):
        time.sleep(max(0.0, cfg["start_monotonic"] - time.monotonic()))
    s.connect((cfg["dst"], cfg["port"]))
    connected = time.monotonic()
    cc = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()
    stop_at = connected + cfg["duration_s"]
    stop = threading.Event()
    sent = [0]

    def pump() -> None:
        chunk = b"\0" * 65536
        s.setblocking(False)
        while not stop.is_set():
            _, w, _ = select.select([], [s], [], 0.05)
            if not w:
                continue
            try:
                sent[0] += s.send(chunk)
            except BlockingIOError:
                pass
            except OSError:
                return

    rows: list[tuple[float, dict[str, int]]] = []
    cc_info = cc == "bbr"  # the only algorithm run here whose state TCP_CC_INFO reports

    def sample() -> None:
        raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN)
        t = time.monotonic()
        d: dict[str, Any] = parse_tcp_info(raw)
        if cc_info:
            d.update(parse_bbr_info(s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, BBR_INFO_LEN)) or {})
        rows.append((t, d))

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    samp_stop = threading.Event()
    st = threading.Thread(target=_sampler, args=(cfg["sample_interval"], samp_stop, sample), daemon=True)
    st.start()
    time.sleep(max(0.0, stop_at - time.monotonic()))
    samp_stop.set()
    st.join()
    stop.set()
    th.join()
    stopped = time.monotonic()
    s_port = s.getsockname()[1]
    # Abort (RST) rather than wait for the queued data to drain: the run is over.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    after = read_counters()
    names = [n for n, _, _ in TCP_INFO_FIELDS] + (CC_INFO_FIELDS if cc_info else [])
    with open(cfg["out"], "w") as f:
        f.write("time_monotonic," + ",".join(names) + "\n")
        for t, d in rows:
            f.write(f"{t:.9f}," + ",".join(str(d.get(n, "")) for n in names) + "\n")
    Path(cfg["out"] + ".json").write_text(json.dumps({
        "connected_monotonic": connected,
        "stopped_monotonic": stopped,
        "congestion_control": cc,
        "src_port": s_port,
        "bytes_written": sent[0],
        "scheduling": sched,
        "last_tcp_info": rows[-1][1] if rows else None,
        "default_congestion_control": Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip(),
        "nstat": {k: after[k] - before.get(k, 0) for k in sorted(after)},
    }))


def sysctl(cfg: dict[str, Any]) -> None:
    """Writes ``cfg["set"]`` ({"net.ipv4.tcp_sack": "1", ...}), then prints
    every ``net.ipv4.tcp_*`` value as JSON."""
    for key, value in cfg.get("set", {}).items():
        p = Path("/proc/sys") / key.replace(".", "/")
        try:
            p.write_text(str(value))
        except OSError as e:
            raise SystemExit(f"sysctl {key}={value}: {e}") from None
    out = {}
    for p in sorted(Path("/proc/sys/net/ipv4").glob("tcp_*")):
        try:
            out["net.ipv4." + p.name] = " ".join(p.read_text().split())
        except OSError:  # write-only or unreadable entries
            pass
    # net.core.default_qdisc is global (only the initial namespace has it): kernel.py reads it there.
    print(json.dumps(out))


def udp_recv(cfg: dict[str, Any]) -> None:
    sched = _realtime(cfg)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # 4 MiB (SO_RCVBUFFORCE, root): a late wake-up of this reader must not drop what the link delivered.
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 4 << 20)
    s.bind(("0.0.0.0", cfg["port"]))
    s.settimeout(cfg.get("first_timeout_s", 10.0))
    before = read_counters()
    _write_ready(cfg["ready_file"])
    times: list[float] = []
    sizes: list[int] = []
    buf = bytearray(65536)
    try:
        while True:
            n = s.recv_into(buf)
            times.append(time.monotonic())
            sizes.append(n)
            s.settimeout(cfg.get("idle_s", 0.5))
    except TimeoutError:
        pass
    after = read_counters()
    Path(cfg["out"]).write_text(json.dumps({
        "times": times, "sizes": sizes,
        "rcvbuf_errors": after.get("UdpRcvbufErrors", 0) - before.get("UdpRcvbufErrors", 0),
        "scheduling": sched,
    }))


def udp_send(cfg: dict[str, Any]) -> None:
    """Sends ``payload``-byte datagrams so that their IP packets (payload + 28)
    leave at ``rate_bps``, for ``duration_s``."""
    sched = _realtime(cfg)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"\0" * cfg["payload"]
    per_s = cfg["rate_bps"] / ((cfg["payload"] + 28) * 8)
    start = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic()
        if now - start >= cfg["duration_s"]:
            break
        due = int((now - start) * per_s) + 1
        while sent < due:
            s.sendto(payload, (cfg["dst"], cfg["port"]))
            sent += 1
        time.sleep(0.0005)
    print(json.dumps({"sent": sent, "seconds": time.monotonic() - start, "scheduling": sched}))


def _icmp_checksum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


# SO_TIMESTAMPNS(_OLD) from asm-generic/socket.h; Python's socket module does not name it.
SO_TIMESTAMPNS = 35


def ping(cfg: dict[str, Any]) -> None:
    """ICMP echo over a raw socket (iputils' ping is not assumed installed):
    ``count`` requests, ``interval_s`` apart, 56 bytes of data as ping sends
    (84-byte IP packets). Prints the round-trip times (s) as JSON, None for a lost one.

    Timed as iputils' ping times it: the clock is read just before the send,
    and the reply's arrival is the kernel's receive timestamp (SO_TIMESTAMPNS),
    so how late this process wakes up to read the reply is not counted."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    ident = os.getpid() & 0xFFFF
    timeout = cfg.get("timeout_s", 1.0)
    rtts: list[float | None] = []
    start = time.monotonic()
    for seq in range(cfg["count"]):
        time.sleep(max(0.0, start + seq * cfg["interval_s"] - time.monotonic()))
        body = b"\0" * 56
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, _icmp_checksum(hdr + body), ident, seq) + body
        sent_mono, sent = time.monotonic(), time.time_ns()  # the timestamp is CLOCK_REALTIME
        s.sendto(pkt, (cfg["dst"], 0))
        rtt = None
        while time.monotonic() - sent_mono < timeout:
            r, _, _ = select.select([s], [], [], timeout)
            if not r:
                break
            data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(16))
            got = time.time_ns()
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                    sec, nsec = struct.unpack_from("qq", value)
                    got = sec * 1_000_000_000 + nsec
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack_from("!BBHHH", data, ihl)
            if typ == 0 and rid == ident and rseq == seq:
                rtt = (got - sent) / 1e9
                break
        rtts.append(rtt)
    print(json.dumps({"rtts": rtts}))


ROLES = {"receiver": receiver, "sender": sender, "sysctl": sysctl, "udp_recv": udp_recv,
         "udp_send": udp_send, "ping": ping}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ROLES:
        print(f"usage: python -m tcplab.validate.endpoints {{{','.join(ROLES)}}} CONFIG_JSON", file=sys.stderr)
        return 2
    ROLES[argv[0]](json.loads(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
