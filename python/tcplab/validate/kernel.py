"""The kernel side of ``tcplab validate``: one or a few bulk TCP flows on this machine's Linux kernel.

The sender and the receiver run in network namespaces of their own
(``tcplab-<pid>-<token>-snd`` / ``-rcv``) joined by two TUN devices; between
the TUNs a user-space forwarder (crates/tcplab-py/src/netem.rs, started as
``python -m tcplab.validate.forwarder``) is the bottleneck: rate C, a
drop-tail queue of B packets excluding the one in service, and the
propagation delay, all in virtual time (docs/validation.md, "The kernel
path"). ``tbf`` is not used: it releases bursts of a bucket's depth.

``run_kernel`` builds the path, runs the flows (``n_flows``, 1 to
:data:`MAX_FLOWS`: one sender process and one receiver process per flow,
flow i on port ``PORT + i`` from source port ``SPORT + i``, all connecting
at one common instant), tears everything down (in ``finally`` blocks, also
on Ctrl-C) and writes ``out_dir``:

- ``meta.json``: kernel, algorithm, n_flows, rate_bps, rtt_s, buffer_packets,
  duration_s, mss, mtu, sysctls (the sender namespace's ``net.ipv4.tcp_*``
  and ``net.core.default_qdisc``), ``pacing`` (the sender device's qdisc and
  who paces: bbr without fq paces inside TCP), nstat (every SNMP counter's delta in the
  sender namespace over the run, nstat's names), forwarder (late_mean_s,
  late_p99_s, late_max_s, late_over_1ms, stalls [[t, length_s]],
  packets_fwd, packets_dropped, bytes_fwd, and more), t0_monotonic,
  ``sender`` (flow 0's), ``flows`` (one such block per flow) and
  ``disturbances``: one line per thing that disturbed the run (nstat is
  the sender namespace's, so it counts all flows);
- ``tcp_info.csv``: time, cwnd, ssthresh, srtt_s, rttvar_s, rto_s,
  min_rtt_s, ca_state, retransmits, lost, retrans, unacked, sacked,
  bytes_acked, bytes_sent, bytes_retrans, delivered, delivery_rate_bps,
  pacing_rate_bps, segs_out, data_segs_out (``struct tcp_info``,
  include/uapi/linux/tcp.h; cwnd and ssthresh in segments, ssthresh
  2147483647 while infinite; retransmits is tcpi_total_retrans, retrans the
  current tcpi_retrans; data_segs_out counts retransmissions too), for bbr
  runs also bbr_bw_bps, bbr_min_rtt_s, bbr_pacing_gain, bbr_cwnd_gain and
  bbr_mode (``TCP_CC_INFO``'s struct tcp_bbr_info; the mode, tcp_bbr.c's
  enum bbr_mode with 3 = PROBE_RTT, is read off the gains), flow;
- ``rx.csv``: time, bytes (cumulative payload read by the receiver), flow;
- ``drops.csv``: time, seq (TCP sequence number minus the ISN of the
  packet's connection, so the first data byte is 1), payload_bytes,
  queue_packets (waiting at the drop), flow (from the TCP source port;
  empty for a packet of no flow);
- ``queue.csv``: time, packets, bytes (waiting, excluding the one in
  service, every ``sample_interval``).

Times are seconds since t0, the arrival at the forwarder of the first data
packet carrying payload; every process logs CLOCK_MONOTONIC and the tables
are rebased here. Rows before t0 are left out of tcp_info, rx and queue.
The raw logs stay in ``out_dir/raw``.

The ``flow`` column (0 .. n_flows - 1) is the last of tcp_info.csv, rx.csv
and drops.csv, so a one-flow directory is the old one plus a column of 0s;
readers of directories without it (older runs) take every row as flow 0.

``check_forwarder`` checks the path itself (a UDP stream above C, an idle
ping). ``check_environment`` (:mod:`tcplab.validate.kernel_host`, with the
commands, the namespaces and the child processes this module starts and
tears down) says why this machine cannot run any of it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from .kernel_host import (
    PREFIX,
    KernelRunError,
    _child_env,
    _delete_namespace,
    _run,
    _stop,
    _wait_file,
    check_environment,
    clean_stale_namespaces,
    our_namespaces,
)

SND_ADDR = "10.200.0.1"
RCV_ADDR = "10.200.0.2"
MTU = 1500
PORT = 5201
#: Flow i's sender binds source port SPORT + i: the forwarder logs the source
#: port of every drop, which names the flow.
SPORT = 40000
#: More flows than this are refused: each flow is two real-time Python
#: processes, and the host has few CPUs.
MAX_FLOWS = 4
# Linux's own defaults (net/ipv4/tcp_ipv4.c, tcp_sk_init; net/ipv4/tcp.c,
# tcp_init), set explicitly: a new namespace copies tcp_rmem/tcp_wmem from the
# host's, which may have been tuned.
SYSCTLS = {
    "net.ipv4.tcp_no_metrics_save": "1",
    "net.ipv4.tcp_sack": "1",
    "net.ipv4.tcp_timestamps": "1",
    "net.ipv4.tcp_window_scaling": "1",
    "net.ipv4.tcp_ecn": "0",
    "net.ipv4.tcp_slow_start_after_idle": "1",
    "net.ipv4.tcp_rmem": "4096 131072 6291456",
    "net.ipv4.tcp_wmem": "4096 16384 4194304",
}
IPV6_OFF = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
# struct tcp_info field (endpoints.TCP_INFO_FIELDS) -> tcp_info.csv column, scale.
TCP_INFO_COLUMNS = [
    ("cwnd", "snd_cwnd", 1), ("ssthresh", "snd_ssthresh", 1), ("srtt_s", "rtt_us", 1e-6),
    ("rttvar_s", "rttvar_us", 1e-6), ("rto_s", "rto_us", 1e-6), ("min_rtt_s", "min_rtt_us", 1e-6),
    ("ca_state", "ca_state", 1), ("retransmits", "total_retrans", 1), ("lost", "lost", 1),
    ("retrans", "retrans", 1), ("unacked", "unacked", 1), ("sacked", "sacked", 1),
    ("bytes_acked", "bytes_acked", 1), ("bytes_sent", "bytes_sent", 1), ("bytes_retrans", "bytes_retrans", 1),
    ("delivered", "delivered", 1), ("delivery_rate_bps", "delivery_rate", 8), ("pacing_rate_bps", "pacing_rate", 8),
    ("segs_out", "segs_out", 1), ("data_segs_out", "data_segs_out", 1),
]
# bbr's own state (getsockopt TCP_CC_INFO, struct tcp_bbr_info; endpoints.CC_INFO_FIELDS) -> column, scale;
# written only for bbr runs. Gains in units of 1 (BBR_UNIT = 256), bbr_mode as enum bbr_mode (3 = PROBE_RTT).
BBR_COLUMNS = [
    ("bbr_bw_bps", "bbr_bw", 8), ("bbr_min_rtt_s", "bbr_min_rtt_us", 1e-6),
    ("bbr_pacing_gain", "bbr_pacing_gain", 1 / 256), ("bbr_cwnd_gain", "bbr_cwnd_gain", 1 / 256),
    ("bbr_mode", "bbr_mode", 1),
]


class EmulatedPath:
    """Two namespaces joined through the forwarder; a context manager that
    builds the path on entry and removes all of it (processes, namespaces,
    TUNs) on exit. ``work`` receives the forwarder's logs."""

    def __init__(self, rate_bps: float, rtt_s: float, buffer_packets: int, work: Path, *,
                 reverse_rate_bps: float | None = None, realtime: bool = True,
                 sysctls: dict[str, str] | None = None, spin_s: float | None = None,
                 snd_sysctls: dict[str, str] | None = None):
        for name, v in (("rate_bps", rate_bps), ("rtt_s", rtt_s)):
            if not (isinstance(v, (int, float)) and v > 0):
                raise ValueError(f"{name}: must be a number > 0, got {v!r}")
        if not (isinstance(buffer_packets, int) and buffer_packets >= 0):
            raise ValueError(f"buffer_packets: must be an integer >= 0, got {buffer_packets!r}")
        self.rate_bps, self.rtt_s, self.buffer_packets = float(rate_bps), float(rtt_s), buffer_packets
        self.work = Path(work)
        self.reverse_rate_bps, self.realtime, self.spin_s = reverse_rate_bps, realtime, spin_s
        self.sysctls = dict(SYSCTLS if sysctls is None else sysctls)
        self.snd_sysctls = dict(snd_sysctls or {})  # the sender namespace's only, on top of ``sysctls``
        token = secrets.token_hex(3)
        self.snd = f"{PREFIX}{os.getpid()}-{token}-snd"
        self.rcv = f"{PREFIX}{os.getpid()}-{token}-rcv"
        self.tun_snd, self.tun_rcv = f"tl{token}s", f"tl{token}r"
        self.procs: list[subprocess.Popen] = []
        self.forwarder: subprocess.Popen | None = None
        self.summary: dict[str, Any] | None = None
        self.sysctl_values: dict[str, dict[str, str]] = {}
        self.tun_info: dict[str, Any] = {}

    # -- building -----------------------------------------------------------------
    def __enter__(self) -> EmulatedPath:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        clean_stale_namespaces()
        self.work.mkdir(parents=True, exist_ok=True)
        for f in ("forwarder.ready", "forwarder.stop", "forwarder.json"):
            (self.work / f).unlink(missing_ok=True)
        cfg = {
            "tun_snd": self.tun_snd, "tun_rcv": self.tun_rcv, "rate_bps": self.rate_bps,
            "delay_s": self.rtt_s / 2, "buffer_packets": self.buffer_packets,
            "reverse_rate_bps": self.reverse_rate_bps, "ready_file": str(self.work / "forwarder.ready"),
            "stop_file": str(self.work / "forwarder.stop"), "out_dir": str(self.work),
            "realtime": self.realtime,
        }
        if self.spin_s is not None:
            cfg["spin_s"] = self.spin_s
        (self.work / "forwarder_config.json").write_text(json.dumps(cfg, indent=1))
        self.forwarder = subprocess.Popen(
            [sys.executable, "-m", "tcplab.validate.forwarder", str(self.work / "forwarder_config.json")],
            env=_child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _wait_file(self.work / "forwarder.ready", self.forwarder, "the forwarder")
        for ns, tun, addr, peer in ((self.snd, self.tun_snd, SND_ADDR, RCV_ADDR),
                                    (self.rcv, self.tun_rcv, RCV_ADDR, SND_ADDR)):
            _run(["ip", "netns", "add", ns])
            # Before the TUN arrives: no IPv6 on it, so no router solicitations or MLD
            # reports share the bottleneck with the flow.
            own = self.snd_sysctls if ns == self.snd else {}
            out = self.exec_py(ns, "sysctl", {"set": {**IPV6_OFF, **self.sysctls, **own}}, timeout=30)
            self.sysctl_values[ns] = json.loads(out)
            # The forwarder keeps its fd of the TUN across the move (drivers/net/tun.c).
            _run(["ip", "link", "set", "dev", tun, "netns", ns])
            _run(["ip", "-n", ns, "link", "set", "dev", "lo", "up"])
            _run(["ip", "-n", ns, "link", "set", "dev", tun, "mtu", str(MTU), "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{addr}/32", "peer", f"{peer}/32", "dev", tun])
            # Global, not per namespace (net/core/sysctl_net_core.c): read in the initial one.
            self.sysctl_values[ns]["net.core.default_qdisc"] = \
                Path("/proc/sys/net/core/default_qdisc").read_text().strip()
            qd = _run(["ip", "-n", ns, "-d", "link", "show", "dev", tun], check=False).stdout
            tc = _run(["ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", tun], check=False).stdout \
                if shutil.which("tc") else ""
            self.tun_info[ns] = {"link": qd.strip(), "qdisc": tc.strip()}

    # -- running things in the namespaces --------------------------------------------
    def command(self, ns: str, role: str, cfg: dict[str, Any]) -> list[str]:
        return ["ip", "netns", "exec", ns, sys.executable, "-m", "tcplab.validate.endpoints", role, json.dumps(cfg)]

    def exec_py(self, ns: str, role: str, cfg: dict[str, Any], timeout: float) -> str:
        p = subprocess.run(self.command(ns, role, cfg), capture_output=True, text=True, env=_child_env(),
                           timeout=timeout)
        if p.returncode != 0:
            raise KernelRunError(f"{role} in {ns}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
        return p.stdout

    def spawn(self, ns: str, role: str, cfg: dict[str, Any]) -> subprocess.Popen:
        p = subprocess.Popen(self.command(ns, role, cfg), env=_child_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    # -- tearing down ------------------------------------------------------------------
    def stop_forwarder(self) -> dict[str, Any] | None:
        """Stops the forwarder (stop file, then signals) and reads its summary."""
        if self.forwarder is None:
            return self.summary
        (self.work / "forwarder.stop").touch()
        _stop(self.forwarder, grace=5.0)
        err = self.forwarder.stderr.read() if self.forwarder.stderr else ""
        rc = self.forwarder.returncode
        self.forwarder = None
        f = self.work / "forwarder.json"
        if not f.exists():
            raise KernelRunError(f"the forwarder wrote no summary (exit {rc}): {err.strip()[-2000:]}")
        self.summary = json.loads(f.read_text())
        return self.summary

    def close(self) -> None:
        """Removes everything this path made; safe to call more than once."""
        for p in self.procs:
            try:
                _stop(p, grace=0.0)
            except Exception:  # noqa: BLE001 - keep tearing down
                pass
        self.procs.clear()
        try:
            if self.forwarder is not None:
                self.stop_forwarder()
        except Exception:  # noqa: BLE001 - keep tearing down; the run reports the missing summary
            pass
        finally:
            if self.forwarder is not None:
                _stop(self.forwarder, grace=0.0)
                self.forwarder = None
        for ns in (self.snd, self.rcv):
            if ns in our_namespaces():
                _delete_namespace(ns)
        for tun in (self.tun_snd, self.tun_rcv):  # only if the move never happened
            if Path(f"/sys/class/net/{tun}").exists():
                _run(["ip", "link", "del", tun], check=False)


def _host_cpu() -> dict[str, float]:
    """Cumulative steal and total CPU time of all CPUs (s), /proc/stat's ``cpu``
    line (Documentation/filesystems/proc.rst: user nice system idle iowait irq
    softirq steal ..., in USER_HZ ticks)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    return {"steal_s": f[7] / hz, "busy_s": (sum(f) - f[3] - f[4]) / hz}


def _bdp_packets(rate_bps: float, rtt_s: float, packet_bytes: int = 1500) -> int:
    return round(rate_bps * rtt_s / (packet_bytes * 8))


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _fmt(t: float) -> str:
    return f"{t:.6f}"


def _scaled(v: str | None, k: float) -> str:
    """A raw integer column scaled by ``k`` ("" where the sample had none)."""
    if v is None or v == "":
        return ""
    return str(int(v) * k) if k == int(k) else f"{int(v) * k:.9g}"


def run_kernel(algorithm: str, rate_bps: float, rtt_s: float, buffer_packets: int, duration_s: float,
               out_dir: str | os.PathLike, *, mss: int = 1448, sample_interval: float = 0.01,
               realtime: bool = True, reverse_rate_bps: float | None = None, n_flows: int = 1) -> Path:
    """Runs ``n_flows`` bulk flows of ``algorithm`` over the emulated path for
    ``duration_s`` and writes ``out_dir`` (schema: the module docstring).
    The flows connect at one instant (a common CLOCK_MONOTONIC start time,
    so the processes' start-up does not stagger them). Raises
    ``KernelRunError`` naming the reason when the environment cannot run it
    (``check_environment``) or the run produced no data."""
    if mss != MTU - 52:
        raise ValueError(f"mss: only {MTU - 52} (MTU {MTU} minus 40 bytes of headers and 12 of timestamps) "
                         f"is supported, got {mss}")
    if not (duration_s > 0):
        raise ValueError(f"duration_s: must be > 0, got {duration_s!r}")
    if isinstance(n_flows, bool) or not isinstance(n_flows, int) or not 1 <= n_flows <= MAX_FLOWS:
        raise ValueError(f"n_flows: must be an integer from 1 to {MAX_FLOWS}, got {n_flows!r}")
    reason = check_environment(algorithm)
    if reason:
        raise KernelRunError(reason)
    out = Path(out_dir)
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for i in range(n_flows):
        for f in (_raw_tcp(raw, i), _raw_rx(raw, i), raw / f"receiver{_sfx(i)}.ready"):
            f.unlink(missing_ok=True)
    cpu0, load0 = _host_cpu(), os.getloadavg()[0]
    rt = 40 if realtime else 0
    with EmulatedPath(rate_bps, rtt_s, buffer_packets, raw, realtime=realtime,
                      reverse_rate_bps=reverse_rate_bps,
                      sysctls=SYSCTLS, snd_sysctls=_default_cc_sysctl(algorithm)) as path:
        # The algorithm is the socket's (TCP_CONGESTION). The sender namespace's default is set too where
        # the kernel lets it: outside the initial namespace only "allowed" algorithms may be the default
        # (tcp_set_default_congestion_control, net/ipv4/tcp_cong.c); bbr is one here, cubic is not.
        rxs = []
        for i in range(n_flows):
            rx = path.spawn(path.rcv, "receiver", {
                "port": PORT + i, "ready_file": str(raw / f"receiver{_sfx(i)}.ready"), "out": str(_raw_rx(raw, i)),
                "sample_interval": sample_interval, "idle_timeout_s": duration_s + 30, "rt_priority": rt})
            _wait_file(raw / f"receiver{_sfx(i)}.ready", rx, f"the receiver of flow {i}")
            rxs.append(rx)
        # A common start, far enough ahead for every sender's interpreter to be up.
        start = time.monotonic() + (0.0 if n_flows == 1 else 1.0 + 0.25 * n_flows)
        txs = [path.spawn(path.snd, "sender", {
            "dst": RCV_ADDR, "port": PORT + i, "src_port": SPORT + i, "algorithm": algorithm,
            "duration_s": duration_s, "sample_interval": sample_interval, "out": str(_raw_tcp(raw, i)),
            "rt_priority": rt, "start_monotonic": start if n_flows > 1 else None}) for i in range(n_flows)]
        for i, tx in enumerate(txs):
            try:
                _, err = tx.communicate(timeout=duration_s + 60)
            except subprocess.TimeoutExpired:
                raise KernelRunError(f"the sender of flow {i} did not finish within {duration_s + 60} s") from None
            if tx.returncode != 0:
                raise KernelRunError(f"the sender of flow {i} failed (exit {tx.returncode}): {err.strip()[-2000:]}")
        for i, rx in enumerate(rxs):
            try:
                _, err = rx.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                raise KernelRunError(f"the receiver of flow {i} did not end after the sender closed") from None
            if rx.returncode != 0:
                raise KernelRunError(f"the receiver of flow {i} failed (exit {rx.returncode}): {err.strip()[-2000:]}")
        summary = path.stop_forwarder()
        sysctls = path.sysctl_values.get(path.snd, {})
        tun_info = path.tun_info
    cpu1 = _host_cpu()
    host = {"cpus": os.cpu_count(), "loadavg_1m_before": load0, "loadavg_1m_after": os.getloadavg()[0],
            "steal_s": cpu1["steal_s"] - cpu0["steal_s"], "cpu_busy_s": cpu1["busy_s"] - cpu0["busy_s"]}
    assert summary is not None
    return _write_outputs(out, raw, summary, sysctls, tun_info, host, algorithm=algorithm, n_flows=n_flows,
                          rate_bps=rate_bps, rtt_s=rtt_s, buffer_packets=buffer_packets, duration_s=duration_s,
                          mss=mss, sample_interval=sample_interval)


def _default_cc_sysctl(algorithm: str) -> dict[str, str]:
    """net.ipv4.tcp_congestion_control = ``algorithm`` for the sender's namespace when the
    kernel allows it as a namespace's default (tcp_allowed_congestion_control); else nothing
    (the socket's TCP_CONGESTION still selects it)."""
    try:
        allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text().split()
    except OSError:
        return {}
    return {"net.ipv4.tcp_congestion_control": algorithm} if algorithm in allowed else {}


def pacing_info(algorithm: str, qdisc: str) -> dict[str, Any]:
    """Who paces the sender: the qdisc of its device (``tc qdisc show``), whether it is fq,
    and what that means. bbr asks for pacing (sk_pacing_status = SK_PACING_NEEDED,
    bbr_init); without fq on the device TCP paces itself (tcp_internal_pacing, an
    hrtimer per socket, net/ipv4/tcp_output.c)."""
    fq = any(ln.split()[1:2] == ["fq"] for ln in qdisc.splitlines() if ln.startswith("qdisc"))
    if algorithm != "bbr":
        how = "not paced (the algorithm does not ask for pacing)" + ("; fq on the device" if fq else "")
    else:
        how = "fq paces (SK_PACING_FQ)" if fq else "TCP's internal pacing (no fq on the sender's device)"
    return {"qdisc": qdisc or "unknown (no tc)", "fq": fq, "paced_by": how}


def _sfx(flow: int) -> str:
    """Suffix of flow ``flow``'s raw files: none for flow 0 (the one-flow names), ``_<i>`` otherwise."""
    return "" if flow == 0 else f"_{flow}"


def _raw_tcp(raw: Path, flow: int) -> Path:
    return raw / f"sender_tcp_info{_sfx(flow)}.csv"


def _raw_rx(raw: Path, flow: int) -> Path:
    return raw / f"receiver_rx{_sfx(flow)}.csv"


def _write_outputs(out: Path, raw: Path, fw: dict[str, Any], sysctls: dict[str, str], tun_info: dict[str, Any],
                   host: dict[str, Any], **params: Any) -> Path:
    t0 = fw.get("t0_monotonic")
    if t0 is None:
        raise KernelRunError("no data packet with payload reached the forwarder: the flow never started "
                             f"(forwarder: {fw['data']['packets_in']} packets in from the sender)")
    n_flows = int(params.get("n_flows", 1))
    interval = params["sample_interval"]
    snds = [json.loads(_raw_tcp(raw, i).with_name(_raw_tcp(raw, i).name + ".json").read_text())
            for i in range(n_flows)]
    ends = [snd["stopped_monotonic"] - t0 for snd in snds]

    tcp_rows, rx_rows, gaps = [], [], []
    bbr = params.get("algorithm") == "bbr"
    for i in range(n_flows):
        rows = []
        for r in _read_csv(_raw_tcp(raw, i)):
            t = float(r["time_monotonic"]) - t0
            if t < 0:
                continue
            rows.append([_fmt(t)] + [_fmt(int(r[f]) * k) if k < 1 else int(r[f]) * k
                                     for _, f, k in TCP_INFO_COLUMNS]
                        + ([_scaled(r.get(f), k) for _, f, k in BBR_COLUMNS] if bbr else []) + [i])
        gaps += [float(b[0]) - float(a[0]) for a, b in pairwise(rows)]
        tcp_rows += rows
        rx_rows += [[_fmt(float(r["time_monotonic"]) - t0), int(r["bytes"]), i] for r in _read_csv(_raw_rx(raw, i))
                    if 0 <= float(r["time_monotonic"]) - t0 <= ends[i] + interval]
    _write_csv(out / "tcp_info.csv", ["time"] + [c for c, _, _ in TCP_INFO_COLUMNS]
               + ([c for c, _, _ in BBR_COLUMNS] if bbr else []) + ["flow"], tcp_rows)
    _write_csv(out / "rx.csv", ["time", "bytes", "flow"], rx_rows)

    # The forwarder logs each drop's TCP source port; flow i sent from SPORT + i.
    port_flow = {str(SPORT + i): i for i in range(n_flows)}
    for i, snd in enumerate(snds):
        if snd.get("src_port") is not None:
            port_flow[str(snd["src_port"])] = i
    drops = [[_fmt(float(r["time_monotonic"]) - t0), r["seq"], int(r["payload_bytes"]), int(r["queue_packets"]),
              port_flow.get(r.get("sport") or "", "")]
             for r in _read_csv(raw / "forwarder_drops.csv")]
    _write_csv(out / "drops.csv", ["time", "seq", "payload_bytes", "queue_packets", "flow"], drops)

    end = max(ends)
    queue = [[_fmt(float(r["time_monotonic"]) - t0), int(r["packets"]), int(r["bytes"])]
             for r in _read_csv(raw / "forwarder_queue.csv") if 0 <= float(r["time_monotonic"]) - t0 <= end + interval]
    _write_csv(out / "queue.csv", ["time", "packets", "bytes"], queue)

    stalls = [[t - t0, length] for t, length in fw["stalls"]]
    forwarder = {
        "late_mean_s": fw["late_mean_s"], "late_p99_s": fw["late_p99_s"], "late_max_s": fw["late_max_s"],
        "late_over_1ms": fw["late_over_1ms"], "stalls": stalls, "packets_fwd": fw["packets_fwd"],
        "packets_dropped": fw["packets_dropped"], "bytes_fwd": fw["bytes_fwd"],
        "scheduling": fw["scheduling"], "stall_threshold_s": fw["stall_threshold_s"],
        "overhead_bytes": fw["overhead_bytes"], "data": fw["data"], "reverse": fw["reverse"],
        "read_errors_before_setup": fw["read_errors"],
    }
    sampler = {"rows": len(tcp_rows), "interval_median_s": statistics.median(gaps) if gaps else None,
               "interval_max_s": max(gaps) if gaps else None,
               "gaps_over_2x": sum(g > 2 * interval for g in gaps)}
    flows = [{"congestion_control": snd["congestion_control"], "connected_s": snd["connected_monotonic"] - t0,
              "stopped_s": snd["stopped_monotonic"] - t0, "bytes_written": snd["bytes_written"],
              "scheduling": snd["scheduling"], "src_port": snd.get("src_port"), **_chrono(snd)} for snd in snds]
    meta = {
        "kernel": os.uname().release, **params, "n_flows": n_flows, "mtu": MTU, "sysctls": sysctls,
        "nstat": snds[0]["nstat"], "forwarder": forwarder, "t0_monotonic": t0, "sender": flows[0], "flows": flows,
        "tcp_info_sampler": sampler, "tun": tun_info, "host": host,
        "pacing": pacing_info(str(params.get("algorithm")),
                              next((str(v.get("qdisc", "")) for k, v in tun_info.items() if k.endswith("-snd")), "")),
        "default_congestion_control": snds[0].get("default_congestion_control"),
        "wire_bytes": "IP packet length (no L2 overhead)",
    }
    meta["disturbances"] = disturbances(meta)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return out


def _chrono(snd: dict[str, Any]) -> dict[str, float]:
    """The sender's time in each tcp_info chronograph over the connection, and the
    rest (``app_limited_s``: the application did not keep the socket full)."""
    last = snd.get("last_tcp_info")
    if not last:
        return {}
    busy, rwnd, sndbuf = (last[k] * 1e-6 for k in ("busy_time_us", "rwnd_limited_us", "sndbuf_limited_us"))
    span = snd["stopped_monotonic"] - snd["connected_monotonic"]
    return {"busy_s": busy, "rwnd_limited_s": rwnd, "sndbuf_limited_s": sndbuf,
            "app_limited_s": max(0.0, span - busy - rwnd - sndbuf)}


def disturbances(meta: dict[str, Any]) -> list[str]:
    """One line per thing that disturbed the kernel run, so that a bad
    measurement is not blamed on the model; empty when nothing did."""
    fw, out = meta["forwarder"], []
    if fw["late_over_1ms"]:
        out.append(f"forwarder: {fw['late_over_1ms']} packets written more than 1 ms after their scheduled time "
                   f"(max {fw['late_max_s'] * 1e3:.2f} ms, p99 {fw['late_p99_s'] * 1e3:.3f} ms)")
    during = [s for s in fw["stalls"] if s[0] + s[1] >= 0]  # those that ended before t0 hit only the setup
    if during:
        t, longest = max(during, key=lambda s: s[1])
        out.append(f"host: {len(during)} stalls of the forwarder loop over {fw['stall_threshold_s'] * 1e3:g} ms "
                   f"(longest {longest * 1e3:.1f} ms at t = {t:.3f} s)")
    h = meta["host"]
    if h["steal_s"] > 0.01:
        out.append(f"host: the hypervisor took {h['steal_s']:.2f} CPU-seconds (steal) during the run")
    if h["loadavg_1m_after"] > h["cpus"]:
        out.append(f"host: load average {h['loadavg_1m_after']:.1f} on {h['cpus']} CPUs (other work competed)")
    if not fw["scheduling"].startswith("SCHED_FIFO"):
        out.append(f"forwarder not real-time: {fw['scheduling']}")
    for d in ("data", "reverse"):
        if fw[d]["write_errors"]:
            out.append(f"forwarder: {fw[d]['write_errors']} failed writes ({d}): {fw[d]['last_write_error']}")
    if fw["data"]["max_packet_bytes"] > meta["mtu"]:
        out.append(f"packets above the MTU reached the forwarder ({fw['data']['max_packet_bytes']} bytes): "
                   "segmentation offload was not undone")
    s = meta["tcp_info_sampler"]
    if s["gaps_over_2x"]:
        out.append(f"tcp_info sampler: {s['gaps_over_2x']} gaps over twice the interval "
                   f"(longest {s['interval_max_s'] * 1e3:.1f} ms)")
    flows = meta.get("flows") or [meta["sender"]]
    for i, snd in enumerate(flows):
        who = f"flow {i}: " if len(flows) > 1 else ""
        if snd.get("app_limited_s", 0) > 0.01 * meta["duration_s"]:
            out.append(f"{who}sender application: the socket ran short of data for {snd['app_limited_s']:.3f} s "
                       "(tcp_info chronographs): the host did not run the sender")
        if snd.get("rwnd_limited_s", 0) > 0.01 * meta["duration_s"]:
            out.append(f"{who}receiver: the flow was limited by the receive window for {snd['rwnd_limited_s']:.3f} s")
        if not snd["scheduling"].startswith("SCHED_FIFO"):
            out.append(f"{who}sender not real-time: {snd['scheduling']}")
        if snd["congestion_control"] != meta["algorithm"]:
            out.append(f"{who}the socket ran {snd['congestion_control']}, not {meta['algorithm']}")
    return out


PING_IP_BYTES = 84  # 20 (IP) + 8 (ICMP) + 56 (data), as ping sends; see endpoints.ping


def check_forwarder(rate_bps: float = 20e6, rtt_s: float = 0.05, buffer_packets: int = 100, *,
                    udp_factor: float = 1.3, udp_seconds: float = 3.0, payload: int = 1472,
                    pings: int = 20, ping_interval: float = 0.05, work: str | os.PathLike | None = None,
                    realtime: bool = True, spin_s: float | None = None) -> dict[str, Any]:
    """The forwarder's self-checks (the issue's point 2), on one path:

    - an idle ping (``pings`` ICMP echoes ``ping_interval`` apart, 84-byte IP
      packets, timed as iputils' ping times them): the median RTT must be
      the configured RTT within 0.5 ms. The expected value is ``rtt_s`` plus
      the echo request's serialization at C (the reply's direction has no
      rate limit): what an idle path of that RTT and rate gives;
    - a UDP stream at ``udp_factor`` x C of ``payload``-byte datagrams: the
      payload rate at the receiver must be C x payload / wire within 0.5 %,
      wire = payload + 28 (the IP packet length; no L2 overhead is modelled).

    Returns the figures and ``ping_ok`` / ``udp_ok``."""
    import tempfile

    reason = check_environment()
    if reason:
        raise KernelRunError(reason)
    tmp = None
    if work is None:
        tmp = tempfile.TemporaryDirectory(prefix="tcplab-fwcheck-")
        work = tmp.name
    work = Path(work)
    try:
        with EmulatedPath(rate_bps, rtt_s, buffer_packets, work, realtime=realtime, spin_s=spin_s) as path:
            # Idle ping.
            out = path.exec_py(path.snd, "ping", {"dst": RCV_ADDR, "count": pings, "interval_s": ping_interval},
                               timeout=pings * ping_interval + 30)
            rtts = json.loads(out)["rtts"]
            got = [r for r in rtts if r is not None]
            # UDP above C.
            (work / "udp.ready").unlink(missing_ok=True)
            rx = path.spawn(path.rcv, "udp_recv", {"port": 9000, "ready_file": str(work / "udp.ready"),
                                                    "out": str(work / "udp_recv.json"),
                                                    "rt_priority": 40 if realtime else 0})
            _wait_file(work / "udp.ready", rx, "the UDP receiver")
            sent = json.loads(path.exec_py(
                path.snd, "udp_send", {"dst": RCV_ADDR, "port": 9000, "rate_bps": udp_factor * rate_bps,
                                       "payload": payload, "duration_s": udp_seconds,
                                       "rt_priority": 40 if realtime else 0}, timeout=udp_seconds + 30))
            rx.communicate(timeout=30)
            summary = path.stop_forwarder()
        udp = json.loads((work / "udp_recv.json").read_text())
    finally:
        if tmp is not None:
            tmp.cleanup()
    assert summary is not None
    udp["sent"], udp["send_seconds"] = sent["sent"], sent["seconds"]
    return _check_figures(rtts, got, udp, summary, rate_bps=rate_bps, rtt_s=rtt_s, payload=payload,
                          buffer_packets=buffer_packets)


def _check_figures(rtts, got, udp, summary, *, rate_bps, rtt_s, payload, buffer_packets) -> dict[str, Any]:
    res: dict[str, Any] = {"rate_bps": rate_bps, "rtt_s": rtt_s, "buffer_packets": buffer_packets,
                           "pings_sent": len(rtts), "pings_answered": len(got)}
    if got:
        med = statistics.median(got)
        expected = rtt_s + PING_IP_BYTES * 8 / rate_bps
        res.update(ping_min_s=min(got), ping_median_s=med, ping_max_s=max(got), ping_expected_s=expected,
                   ping_error_s=med - expected, ping_ok=abs(med - expected) <= 0.5e-3 and len(got) == len(rtts))
    else:
        res.update(ping_ok=False)
    wire = payload + 28
    expected = rate_bps * payload / wire
    res["udp_expected_bps"] = expected
    if udp and len(udp["times"]) > 10:
        times = udp["times"]
        # Skip the first 10 % (start-up of the receiver's loop); the link is busy throughout.
        i0 = len(times) // 10
        n = len(times) - 1 - i0
        rate = n * payload * 8 / (times[-1] - times[i0])
        res.update(udp_received=len(times), udp_rate_bps=rate, udp_error=rate / expected - 1,
                   udp_ok=abs(rate / expected - 1) <= 0.005, udp_rcvbuf_errors=udp["rcvbuf_errors"],
                   udp_sizes=sorted(set(udp["sizes"])),
                   udp_offered_bps=udp["sent"] * wire * 8 / udp["send_seconds"])
    else:
        res.update(udp_ok=False, udp_received=len(udp["times"]) if udp else 0)
    res["forwarder"] = {k: summary[k] for k in ("late_mean_s", "late_p99_s", "late_max_s", "late_over_1ms",
                                                "stalls", "packets_fwd", "packets_dropped", "scheduling")}
    return res


def _print_check(res: dict[str, Any]) -> None:
    if "ping_median_s" in res:
        print(f"ping ({res['pings_answered']}/{res['pings_sent']}): min {res['ping_min_s'] * 1e3:.3f} ms, "
              f"median {res['ping_median_s'] * 1e3:.3f} ms, max {res['ping_max_s'] * 1e3:.3f} ms "
              f"(configured {res['rtt_s'] * 1e3:g} ms, expected {res['ping_expected_s'] * 1e3:.3f} ms with the "
              f"request's serialization) -> {'ok' if res['ping_ok'] else 'FAIL'}")
    if "udp_rate_bps" in res:
        print(f"UDP: {res['udp_rate_bps'] / 1e6:.4f} Mbit/s of payload, expected {res['udp_expected_bps'] / 1e6:.4f} "
              f"({res['udp_error'] * 100:+.3f} %; offered {res['udp_offered_bps'] / 1e6:.2f} Mbit/s of IP packets, "
              f"{res['udp_rcvbuf_errors']} receive-buffer drops) -> {'ok' if res['udp_ok'] else 'FAIL'}")
    fw = res["forwarder"]
    print(f"forwarder: late mean {fw['late_mean_s'] * 1e6:.1f} us, p99 {fw['late_p99_s'] * 1e6:.1f} us, "
          f"max {fw['late_max_s'] * 1e6:.1f} us, {fw['late_over_1ms']} over 1 ms, {len(fw['stalls'])} stalls, "
          f"{fw['packets_dropped']} drops, {fw['scheduling']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tcplab.validate.kernel",
                                 description="Run one bulk TCP flow on the kernel through the emulated bottleneck, "
                                             "or (--check) the forwarder's self-checks.")
    ap.add_argument("--algorithm", default="reno")
    ap.add_argument("--rate", type=float, default=20e6, help="bottleneck rate, bit/s")
    ap.add_argument("--rtt", type=float, default=0.05, help="round-trip propagation delay, s")
    ap.add_argument("--buffer", type=int, default=None, help="queue, packets (default: the BDP in 1500-byte packets)")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--flows", type=int, default=1, help=f"number of flows (1 to {MAX_FLOWS})")
    ap.add_argument("--out", default=None, help="output directory (required unless --check)")
    ap.add_argument("--check", action="store_true", help="run the forwarder's self-checks instead")
    ap.add_argument("--repeat", type=int, default=1, help="with --check: how many times")
    ap.add_argument("--spin", type=float, default=None, help="forwarder's final spin before an event, s")
    ap.add_argument("--no-realtime", action="store_true", help="do not ask for SCHED_FIFO for the forwarder")
    a = ap.parse_args(argv)

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    # SIGTERM tears down like Ctrl-C (the finally blocks); so does SIGINT where a shell ignored it.
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    buffer = a.buffer if a.buffer is not None else _bdp_packets(a.rate, a.rtt)
    reason = check_environment(a.algorithm)
    if reason:
        print(f"cannot run the kernel path: {reason}", file=sys.stderr)
        return 2
    if a.check:
        ok = True
        for _ in range(a.repeat):
            res = check_forwarder(a.rate, a.rtt, buffer, realtime=not a.no_realtime, spin_s=a.spin)
            _print_check(res)
            ok = ok and res["ping_ok"] and res["udp_ok"]
        return 0 if ok else 1
    if not a.out:
        ap.error("--out is required")
    try:
        out = run_kernel(a.algorithm, a.rate, a.rtt, buffer, a.duration, a.out, realtime=not a.no_realtime,
                         n_flows=a.flows)
    except (ValueError, KernelRunError) as e:  # bad input or a path that could not run: say so, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    meta = json.loads((out / "meta.json").read_text())
    fw = meta["forwarder"]
    good = []
    for i in range(meta["n_flows"]):
        rx = [r for r in _read_csv(out / "rx.csv") if int(r["flow"]) == i]
        good.append(int(rx[-1]["bytes"]) * 8 / float(rx[-1]["time"]) if rx and float(rx[-1]["time"]) > 0 else 0.0)
    per = f" ({', '.join(f'{g / 1e6:.3f}' for g in good)})" if len(good) > 1 else ""
    print(f"{out}: goodput {sum(good) / 1e6:.3f} Mbit/s{per}, {fw['packets_dropped']} drops, "
          f"{meta['nstat'].get('TcpRetransSegs', 0)} retransmitted segments, late p99 {fw['late_p99_s'] * 1e6:.0f} us")
    if meta["algorithm"] == "bbr" and meta["n_flows"] == 1:
        from .metrics import kernel_bbr_figures

        f = kernel_bbr_figures(out)
        print(f"bbr over [{f['window'][0]:g}, {f['window'][1]:g}] s: goodput {f['goodput_bps'] / 1e6:.3f} Mbit/s, "
              f"mean srtt {f['srtt_mean_s'] * 1e3:.2f} ms, cwnd mean {f['cwnd_mean']:.1f}; whole run: "
              f"{f['retransmissions']:g} retransmitted of {f['data_segments_sent']:g} data segments "
              f"({f['retrans_rate'] * 100:.3f} %); ProbeRTT at "
              + (", ".join(f"{a:.2f}-{b + 0.01:.2f}" for a, b in f["probe_rtt"]) or "none")
              + f" s (mean interval {f['probe_rtt_interval_s']:.2f} s); pacing: {meta['pacing']['paced_by']}")
    for d in meta["disturbances"]:
        print("disturbance:", d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
