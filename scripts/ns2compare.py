#!/usr/bin/env python3
"""Run the same dumbbell in ns-2 (2.35, ``ns``) and in tcplab, side by side.

For every cell (protocol x RTT x buffer) both simulators run the single
bottleneck dumbbell of ``tcplab.Dumbbell``; the script prints, per cell,
goodput over the measurement window, bottleneck drops, data retransmissions,
retransmission timeouts and the CPU seconds of each simulator::

    python scripts/ns2compare.py --protocols newreno,cubic --rtt 100 --buffer 0.1 \\
        --duration 100 --window 50 [--flows N] [--rate 200Mbps] [--iw 10] \\
        [--workers 2] [--json out.json] [--csv out.csv] [--keep-tcl DIR] [--rto-mode linux|rfc6298]
        [--cache DIR] [--ns-timeout SECONDS]
    python scripts/ns2compare.py --matrix table1     # mv-highspeed Table I grid, 2000 s runs
    python scripts/ns2compare.py --matrix table2     # Linux protocols against NewReno, 2 flows

``--rtt`` and ``--buffer`` take comma-separated lists (ms; fractions of the
BDP). What is aligned between the two simulators, and what is not, is in
``docs/validation-ns2-howto.md``; the mapping of protocols is ``PROTOCOLS``
below. Tests: ``tests/test_ns2compare.py``.

Counting conventions (both sides): goodput = whole in-order packets (1500 B
on the wire) delivered to the receiving application in
[duration - window, duration], in bit/s; drops, retransmissions and timeouts
are totals over the whole run, summed over the flows.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

# The tables and the CSV file are written by ns2report.py beside this script (found also when a test
# loads this file by its path).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ns2report import render, write_csv  # noqa: E402

# --------------------------------------------------------------------------
# protocols


@dataclass(frozen=True)
class Protocol:
    """One compared protocol: the ns-2 agents and the tcplab flow that model it."""

    ns2_agent: str                 # sender class
    ns2_sink: str                  # receiver class
    select_ca: str | None       # TCP-Linux congestion-control module (``$tcp select_ca NAME``), or None
    timestamps: bool               # RFC 1323 timestamps on (ns-2 adds ts_option_size_ = 10 B to every data header)
    algorithm: str                 # tcplab algorithm
    params: dict                   # tcplab algorithm parameters
    recovery: str                  # tcplab loss recovery
    # ns-2 counters the sender maintains (tcp.cc TcpAgent::output() counts nrexmitpack_ for every data
    # packet sent with seqno <= maxseq_; TcpAgent::timeout() and LinuxTcpAgent::timeout() count nrexmit_
    # for every RTO with data outstanding). An agent without one of them prints it as missing, not 0.
    ns2_counters: frozenset = frozenset({"nrexmitpack_", "nrexmit_"})


_FLOAT = {"mode": "float"}  # ns-2's own TCPs: cwnd is a double, +1/cwnd per ACK (tcp.cc opencwnd, windowOption_ 1)

#: The one mapping table: name -> Protocol. ns-2.35's TCP-Linux carries the congestion-control modules of
#: Linux 2.6.22.6 (tcp/linux/src/*.c, "Modified Linux module source code from linux-2.6.22.6"); each
#: tcplab variant below is the one closest to that code.
PROTOCOLS: dict[str, Protocol] = {
    # ns-2 Agent/TCP/Newreno + Agent/TCPSink; tcplab newreno window rules in ns-2's floating-point form, NewReno
    # recovery (partial ACKs keep fast recovery going).
    "newreno": Protocol("Agent/TCP/Newreno", "Agent/TCPSink", None, False, "newreno", _FLOAT, "newreno"),
    # ns-2 Agent/TCP/Sack1 + Agent/TCPSink/Sack1 (3 SACK blocks); tcplab newreno window rules (float), SACK recovery.
    "sack1": Protocol("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", None, False, "newreno", _FLOAT, "sack"),
    # ns-2 Agent/TCP/Reno + Agent/TCPSink; tcplab newreno window rules (float), Reno recovery (one loss per fast
    # recovery, a partial ACK ends it).
    "reno": Protocol("Agent/TCP/Reno", "Agent/TCPSink", None, False, "newreno", _FLOAT, "reno"),
    # TCP-Linux "cubic" = tcp_cubic.c v2.1 (beta 819/1024, max_increment 16, no HyStart, initial_ssthresh 0);
    # tcplab cubic variant "2005" (v2.0 constants: beta 819, max_increment 16, no HyStart) with v2.1's
    # initial_ssthresh 0 instead of v2.0's 100.
    "cubic": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "cubic", True, "cubic",
                      {"variant": "2005", "initial_ssthresh": 0}, "sack"),
    # TCP-Linux "bic" = 2.6.22 tcp_bic.c (beta 819, max_increment 16, low_window 14, smooth_part 20,
    # initial_ssthresh 0): exactly tcplab's bic "linux" variant defaults.
    "bic": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "bic", True, "bic", {"variant": "linux"}, "sack"),
    # TCP-Linux "htcp" = 2.6.22 tcp_htcp.c (RTT scaling, bandwidth switch, beta in [0.5, 0.8]): tcplab htcp
    # "linux" variant (jiffies, x128 fixed point, the same switches on).
    "htcp": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "htcp", True, "htcp", {"variant": "linux"}, "sack"),
    # TCP-Linux "highspeed" = 2.6.22 tcp_highspeed.c (72-row AIMD table, cwnd += (ai+1)/cwnd): tcplab highspeed
    # "linux" variant.
    "highspeed": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "highspeed", True, "highspeed",
                          {"variant": "linux"}, "sack"),
    # TCP-Linux "scalable" = 2.6.22 tcp_scalable.c (TCP_SCALABLE_AI_CNT 50, +1 per min(cwnd, 50) ACKs, keep 7/8):
    # tcplab scalable "linux-pre-2020" (the 4.x-5.6 code, ai_cnt 50), not the 5.7+ default (ai_cnt 100).
    "scalable": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "scalable", True, "scalable",
                         {"variant": "linux-pre-2020"}, "sack"),
    # TCP-Linux "westwood" = 2.6.22 tcp_westwood.c (Westwood+, two cascaded EWMAs, 50 ms minimum sampling
    # interval, cwnd = BWE x RTTmin as min_cwnd at loss and at COMPLETE_CWR, an event ns-2 never raises):
    # tcplab westwood "linux" variant (BWE x RTTmin applied at recovery exit).
    "westwood": Protocol("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "westwood", True, "westwood",
                         {"variant": "linux"}, "sack"),
}

#: The TCP-Linux protocols (table2 pairs each with newreno).
LINUX_PROTOCOLS = [p for p, v in PROTOCOLS.items() if v.select_ca]

# --------------------------------------------------------------------------
# settings shared by both sides

PACKET = 1500          # bytes on the wire, every data packet, both sides
HEADER = 40            # TCP/IP header without options (ns-2 tcpip_base_hdr_size_)
TS_OPTION = 10         # ns-2 ts_option_size_: added to the header when timestamps_ is on
ACK = 40               # ACK size (ns-2 TCPSink packetSize_); ns-2's Sack1 sink adds 8 B per SACK block
UNLIMITED = 10_000_000  # ns-2 queue limit of every queue that must never drop
MIN_RTO, MAX_RTO, INIT_RTO = 0.2, 60.0, 1.0
DUPTHRESH = 3
SACK_BLOCKS = 3
ACCESS_FACTOR = 10.0   # access links at 10 x C (tcplab's default access_rate)
RTO_MODES = ("linux", "rfc6298")  # tcplab rto_mode choices (see the docs: why linux is the default)

#: ``--matrix`` grids: the mv-highspeed Table I and Table II setups.
MATRICES = {
    "table1": dict(protocols=["newreno", "sack1", "cubic", "bic", "htcp", "highspeed", "scalable", "westwood"],
                   rtts=[100.0, 300.0], buffers=[1.0, 0.1], rate=200e6, flows=1, duration=2000.0, window=1000.0),
    "table2": dict(rtts=[100.0], buffers=[1.0], rate=200e6, flows=2, duration=2000.0, window=1000.0),
}


class CompareError(RuntimeError):
    """A problem the user can fix; main() prints it as one line."""


class Ns2Unavailable(CompareError):
    pass


NS2_MISSING = "ns-2 not found: install it with apt-get install ns2"


# --------------------------------------------------------------------------
# a cell


@dataclass
class Cell:
    """One comparison: ``protocols`` has one entry per flow (flow i on hosts s<i>/d<i>)."""

    protocols: list
    rtt_ms: float
    buffer_bdp: float
    duration: float
    window: float
    rate_bps: float = 200e6
    iw: int = 10
    rto_mode: str = "linux"

    def __post_init__(self):
        self.protocols = [check_protocol(p) for p in self.protocols]
        if not self.protocols:
            raise CompareError("a cell needs at least one flow")
        if not (self.rtt_ms > 0 and self.rate_bps > 0 and self.buffer_bdp > 0):
            raise CompareError(f"rtt, rate and buffer must be positive (rtt {self.rtt_ms} ms, rate {self.rate_bps} "
                               f"bit/s, buffer {self.buffer_bdp} BDP)")
        if not 0 < self.window <= self.duration:
            raise CompareError(f"the window ({self.window:g} s) must be positive and at most the duration "
                               f"({self.duration:g} s)")
        if self.iw < 1:
            raise CompareError(f"--iw must be at least 1, got {self.iw}")
        if self.rto_mode not in RTO_MODES:
            raise CompareError(f"--rto-mode must be one of {', '.join(RTO_MODES)}, got {self.rto_mode!r}")

    @property
    def flows(self) -> int:
        return len(self.protocols)

    @property
    def label(self) -> str:
        return "/".join(self.protocols)

    @property
    def rtt_s(self) -> float:
        return self.rtt_ms / 1000.0

    @property
    def bdp_packets(self) -> int:
        return bdp_packets(self.rate_bps, self.rtt_s, 1.0)

    @property
    def buffer_packets(self) -> int:
        """B: packets waiting at r1 for r1->r2, the packet being transmitted excluded."""
        return bdp_packets(self.rate_bps, self.rtt_s, self.buffer_bdp)

    def access_delay(self, i: int) -> float:
        """One-way delay (s) of sender i's and receiver i's access links, i = 1..N ("spread")."""
        return 2.5e-3 * i / self.flows

    @property
    def tag(self) -> str:
        return f"{'-'.join(self.protocols)}_C{self.rate_bps / 1e6:g}M_rtt{self.rtt_ms:g}_B{self.buffer_packets}"


def bdp_packets(rate_bps: float, rtt_s: float, fraction: float) -> int:
    """fraction x C x rtt / (8 x 1500 B), rounded to nearest, at least 1 (tcplab.units.bdp_packets)."""
    return max(1, int(math.floor(fraction * rate_bps * rtt_s / (8.0 * PACKET) + 0.5)))


def check_protocol(name: str) -> str:
    key = str(name).strip().lower()
    if key not in PROTOCOLS:
        raise CompareError(f"unknown protocol {name!r}: known protocols are {', '.join(PROTOCOLS)}")
    return key


def payload_bytes(p: Protocol) -> int:
    return PACKET - HEADER - (TS_OPTION if p.timestamps else 0)


# --------------------------------------------------------------------------
# the ns-2 side


def _num(x: float) -> str:
    return f"{x:.12g}"


def tcl_script(cell: Cell) -> str:
    """The ns-2 (Tcl) script of ``cell``: prints ``NS2COMPARE ...`` result lines at the end of the run."""
    n = cell.flows
    c = cell.rate_bps
    protos = [PROTOCOLS[p] for p in cell.protocols]
    t0 = cell.duration - cell.window
    # TcpSink::bytes_ is a C int: it wraps after 2^31 bytes (86 s at 200 Mbit/s). Read it at least every
    # `poll` seconds (at most 2^30 bytes in between) and add the differences modulo 2^32.
    poll = min(10.0, cell.window, 2.0 ** 30 * 8 / c)
    L = []
    add = L.append
    add(f"# ns2compare.py cell {cell.label}: {n} flow(s), C = {_num(c)} bit/s, rtt = {_num(cell.rtt_s)} s, "
        f"B = {cell.buffer_packets} packets ({_num(cell.buffer_bdp)} BDP of {cell.bdp_packets})")
    add(f"# run {_num(cell.duration)} s, goodput over [{_num(t0)}, {_num(cell.duration)}] s. "
        "Rerun by hand: ns <this file>")
    add("set ns [new Simulator]")
    add("")
    add("# --- TCP settings aligned with tcplab (docs/validation-ns2-howto.md); set on each sender class used,")
    add("# --- before the agents are created (TcpAgent::reset() reads them when an agent is made)")
    classes = sorted({p.ns2_agent for p in protos})
    add(f"foreach cls {{{' '.join(classes)}}} {{")
    common = [
        ("syn_", "false", "no SYN packet: data from t = 0, as tcplab (which has no handshake)"),
        ("delay_growth_", "false", "no reset of cwnd to windowInit_ when the first ACK arrives"),
        ("windowInitOption_", "1", "initial window = windowInit_ segments"),
        ("windowInit_", str(cell.iw), "initial window (tcplab init_cwnd)"),
        ("window_", "100000", "receiver window: effectively unlimited (tcplab rwnd None)"),
        ("maxcwnd_", "0", "no cap on cwnd"),
        ("tcpTick_", "0.001", "RTT clock granularity 1 ms (tcplab has none; select_ca sets 1 ms too)"),
        ("minrto_", _num(MIN_RTO), "RTO = max(minrto_, srtt + 4 rttvar) (tcplab: min_rto, --rto-mode)"),
        ("maxrto_", _num(MAX_RTO), "(TCP-Linux's class default is 120)"),
        ("rtxcur_init_", _num(INIT_RTO), "initial RTO (tcplab init_rto)"),
        ("singledup_", "0", "no limited transmit (tcplab limited_transmit false)"),
        ("numdupacks_", str(DUPTHRESH), "fast retransmit on the 3rd duplicate ACK (tcplab dupthresh)"),
        ("maxburst_", "0", "no burst limit (tcplab has none)"),
    ]
    for var, val, why in common:
        add(f"    $cls set {var:<17} {val:<6} ;# {why}")
    add("}")
    for cls in classes:
        p = next(q for q in protos if q.ns2_agent == cls)
        hdr = PACKET - payload_bytes(p)
        add(f"{cls} set packetSize_ {payload_bytes(p)}   ;# payload: {PACKET} B on the wire with the {hdr} B header")
        add(f"{cls} set timestamps_ {'true' if p.timestamps else 'false'}"
            + ("   ;# RFC 1323 timestamps: the header grows by ts_option_size_ = 10 B" if p.timestamps else ""))
    add("Agent/TCPSink set packetSize_ 40   ;# ACK size")
    add("Agent/TCPSink/Sack1 set maxSackBlocks_ 3")
    add("")
    add("# --- dumbbell: r1 -> r2 is the only finite queue")
    add("set r1 [$ns node]")
    add("set r2 [$ns node]")
    add(f"$ns simplex-link $r1 $r2 {_num(c)} {_num(cell.rtt_s / 2)} DropTail")
    add(f"$ns simplex-link $r2 $r1 {_num(c)} {_num(cell.rtt_s / 2)} DropTail")
    add("# B + 1: DropTail drops an arrival when (waiting + 1) >= limit_ (queue/drop-tail.cc), so limit_ = B + 1")
    add("# holds B waiting packets plus the one being transmitted, as tcplab's limit of B")
    add(f"$ns queue-limit $r1 $r2 {cell.buffer_packets + 1}")
    add(f"$ns queue-limit $r2 $r1 {UNLIMITED}")
    for i in range(1, n + 1):
        d = _num(cell.access_delay(i))
        add(f"set s({i}) [$ns node]")
        add(f"set d({i}) [$ns node]")
        add(f"$ns duplex-link $s({i}) $r1 {_num(ACCESS_FACTOR * c)} {d} DropTail")
        add(f"$ns duplex-link $r2 $d({i}) {_num(ACCESS_FACTOR * c)} {d} DropTail")
        for a, b in ((f"$s({i})", "$r1"), ("$r1", f"$s({i})"), ("$r2", f"$d({i})"), (f"$d({i})", "$r2")):
            add(f"$ns queue-limit {a} {b} {UNLIMITED}")
    add('set qmon [$ns monitor-queue $r1 $r2 ""]   ;# QueueMonitor: pdrops_, parrivals_')
    add("")
    for i, (name, p) in enumerate(zip(cell.protocols, protos, strict=True), start=1):
        add(f"# --- flow {i}: {name} ({p.ns2_agent}{' select_ca ' + p.select_ca if p.select_ca else ''}, {p.ns2_sink})")
        add(f"set tcp({i}) [new {p.ns2_agent}]")
        add(f"$tcp({i}) set fid_ {i}")
        add(f"set sink({i}) [new {p.ns2_sink}]")
        if p.timestamps:
            add(f"$sink({i}) set ts_echo_rfc1323_ true")
        add(f"$ns attach-agent $s({i}) $tcp({i})")
        add(f"$ns attach-agent $d({i}) $sink({i})")
        add(f"$ns connect $tcp({i}) $sink({i})")
        add(f"set ftp({i}) [new Application/FTP]")
        add(f"$ftp({i}) attach-agent $tcp({i})")
        if p.select_ca:
            add(f'$ns at 0 "$tcp({i}) select_ca {p.select_ca}"')
        add(f'$ns at 0 "$ftp({i}) start"')
    add("")
    add("# --- measurement")
    add(f"set nflows {n}")
    counters = sorted({c_ for p in protos for c_ in p.ns2_counters})
    add("proc mark {} {")
    add("    global sink nflows last acc")
    add("    for {set i 1} {$i <= $nflows} {incr i} {")
    add("        set last($i) [$sink($i) set bytes_]")
    add("        set acc($i) 0")
    add("    }")
    add("}")
    add("proc poll {} {")
    add("    global sink nflows last acc")
    add("    for {set i 1} {$i <= $nflows} {incr i} {")
    add("        set b [$sink($i) set bytes_]")
    add("        set acc($i) [expr {$acc($i) + (($b - $last($i)) & 0xFFFFFFFF)}]")
    add("        set last($i) $b")
    add("    }")
    add("}")
    add("proc report {} {")
    add("    global tcp nflows acc qmon")
    add("    poll")
    add("    for {set i 1} {$i <= $nflows} {incr i} {")
    parts = " ".join(f"{v} [$tcp($i) set {v}]" for v in counters)
    add(f'        puts "NS2COMPARE flow $i bytes $acc($i) {parts} ndatapack_ [$tcp($i) set ndatapack_]"')
    add("    }")
    add('    puts "NS2COMPARE queue pdrops_ [$qmon set pdrops_] parrivals_ [$qmon set parrivals_]"')
    add("    exit 0")
    add("}")
    add(f'$ns at {_num(t0)} "mark"')
    k = 1
    while t0 + k * poll < cell.duration - 1e-9:
        add(f'$ns at {_num(t0 + k * poll)} "poll"')
        k += 1
    # Progress: the simulated time reached, so a run stopped by --ns-timeout says how far it got.
    add('proc progress {t} { puts "NS2PROGRESS $t"; flush stdout }')
    for k in range(1, 20):
        add(f'$ns at {_num(cell.duration * k / 20)} "progress {_num(cell.duration * k / 20)}"')
    add(f'$ns at {_num(cell.duration)} "report"')
    add("$ns run")
    return "\n".join(L) + "\n"


def ns2_binary(ns: str = "ns") -> str:
    path = shutil.which(ns)
    if path is None:
        raise Ns2Unavailable(NS2_MISSING)
    return path


_LINE = re.compile(r"^NS2COMPARE (flow (\d+)|queue) (.*)$")


def parse_ns2_output(text: str, cell: Cell) -> dict:
    """Per-flow and queue figures from the ``NS2COMPARE`` lines of an ns-2 run."""
    flows: dict[int, dict] = {}
    queue = None
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        kv = m.group(3).split()
        vals = {kv[j]: int(float(kv[j + 1])) for j in range(0, len(kv) - 1, 2)}
        if m.group(2):
            flows[int(m.group(2))] = vals
        else:
            queue = vals
    if queue is None or sorted(flows) != list(range(1, cell.flows + 1)):
        raise CompareError(f"ns-2 printed no results for {cell.label} (the run did not reach t = {cell.duration:g} s)")
    out = {"flow_goodput_bps": [], "flow_retransmits": [], "flow_timeouts": [], "flow_data_packets": []}
    for i in range(1, cell.flows + 1):
        v, p = flows[i], PROTOCOLS[cell.protocols[i - 1]]
        out["flow_goodput_bps"].append(v["bytes"] * 8.0 / cell.window)
        out["flow_retransmits"].append(v["nrexmitpack_"] if "nrexmitpack_" in p.ns2_counters else None)
        out["flow_timeouts"].append(v["nrexmit_"] if "nrexmit_" in p.ns2_counters else None)
        out["flow_data_packets"].append(v["ndatapack_"])
    out["goodput_bps"] = sum(out["flow_goodput_bps"])
    out["retransmits"] = _sum(out["flow_retransmits"])
    out["timeouts"] = _sum(out["flow_timeouts"])
    out["drops"] = queue["pdrops_"]
    out["bottleneck_arrivals"] = queue["parrivals_"]
    return out


def _sum(xs: Sequence[int | None]) -> int | None:
    return None if any(x is None for x in xs) else sum(xs)


def run_ns2(cell: Cell, ns: str = "ns", keep_tcl: str | None = None, timeout: float | None = None) -> dict:
    """Run ``cell`` in ns-2; its figures and the child's CPU seconds (user + sys, from wait4). With
    ``timeout`` (wall seconds), a run still going then is stopped and raises CompareError saying how far
    in simulated time it got."""
    binary = ns2_binary(ns)
    tmp = None
    if keep_tcl:
        os.makedirs(keep_tcl, exist_ok=True)
        directory = keep_tcl
    else:
        tmp = tempfile.TemporaryDirectory(prefix="ns2compare-")
        directory = tmp.name
    try:
        path = os.path.join(directory, cell.tag + ".tcl")
        with open(path, "w") as fh:
            fh.write(tcl_script(cell))
        out_path, err_path = path[:-4] + ".out", path[:-4] + ".err"
        with open(out_path, "w") as out, open(err_path, "w") as err:
            try:
                proc = subprocess.Popen([binary, os.path.basename(path)], cwd=directory, stdout=out, stderr=err,
                                        stdin=subprocess.DEVNULL)
            except OSError as e:
                raise Ns2Unavailable(f"ns-2 could not be started ({binary}): {e}") from None
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                pid, status, ru = os.wait4(proc.pid, 0 if deadline is None else os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    proc.kill()
                    os.wait4(proc.pid, 0)
                    with open(out_path) as fh:
                        reached = [ln.split()[1] for ln in fh if ln.startswith("NS2PROGRESS")]
                    last = reached[-1] if reached else 0
                    raise CompareError(f"ns-2 did not finish {cell.label} within {timeout:g} s of wall time "
                                       f"(simulated time reached: {last} of {cell.duration:g} s)")
                time.sleep(0.5)
            proc.returncode = os.waitstatus_to_exitcode(status)
        with open(out_path) as fh:
            text = fh.read()
        with open(err_path) as fh:
            errs = fh.read()
        if proc.returncode != 0:
            tail = (errs.strip().splitlines() or text.strip().splitlines() or ["no output"])[-1]
            hint = "" if keep_tcl else " (rerun with --keep-tcl DIR to keep the script)"
            raise CompareError(f"ns-2 failed on {cell.label} (exit {proc.returncode}): {tail.strip()}{hint}")
        res = parse_ns2_output(text, cell)
        res["cpu_s"] = ru.ru_utime + ru.ru_stime
        res["tcl"] = path if keep_tcl else None
        return res
    finally:
        if tmp is not None:
            tmp.cleanup()


# --------------------------------------------------------------------------
# the tcplab side


def tcplab_scenario(cell: Cell):
    """The tcplab Dumbbell of ``cell`` (settings as the ns-2 side's)."""
    import tcplab

    protos = [PROTOCOLS[p] for p in cell.protocols]
    options = dict(init_cwnd=float(cell.iw), min_rto=MIN_RTO, max_rto=MAX_RTO, init_rto=INIT_RTO,
                   rto_mode=cell.rto_mode, limited_transmit=False, delayed_ack=False, dupthresh=DUPTHRESH,
                   sack_blocks=SACK_BLOCKS, rwnd=None)
    headers = {PACKET - payload_bytes(p) for p in protos}
    sc = tcplab.Dumbbell(
        cell.flows, cell.rate_bps, cell.rtt_s, cell.buffer_packets,
        algorithm=[p.algorithm for p in protos], params=[dict(p.params) for p in protos],
        recovery=[p.recovery for p in protos], duration=cell.duration, measure_window=cell.window,
        access_rate=ACCESS_FACTOR * cell.rate_bps,
        access_delay=[cell.access_delay(i) for i in range(1, cell.flows + 1)],
        packet_size=PACKET, header_size=headers.pop() if len(headers) == 1 else HEADER, ack_size=ACK,
        accounting="ns2", flow_options=options, sample_interval=0, name=cell.tag)
    if len({PACKET - payload_bytes(p) for p in protos}) > 1:
        # Mixed cell (timestamps on some flows only): the header split per flow, as ns-2's. Goodput counts
        # whole packets either way; the wire size is 1500 B for every flow.
        sc = sc.to_generic()
        for f, p in zip(sc.flows, protos, strict=True):
            f.header_size = PACKET - payload_bytes(p)
    return sc


def run_tcplab(cell: Cell) -> dict:
    """Run ``cell`` in tcplab; its figures and CPU seconds (time.process_time() around tcplab.run)."""
    import pandas  # noqa: F401  (imported before timing: the results are pandas frames)

    import tcplab

    sc = tcplab_scenario(cell)
    t = time.process_time()
    res = tcplab.run(sc)
    cpu = time.process_time() - t
    fl = res.flows.sort_values("flow")
    links = res.links.set_index("name")
    return {
        "flow_goodput_bps": [float(x) for x in fl["goodput_bps"]],
        "flow_retransmits": [int(x) for x in fl["retransmits"]],
        "flow_timeouts": [int(x) for x in fl["timeouts"]],
        "flow_data_packets": [int(x) for x in fl["data_packets_sent"]],
        "goodput_bps": float(fl["goodput_bps"].sum()),
        "retransmits": int(fl["retransmits"].sum()),
        "timeouts": int(fl["timeouts"].sum()),
        "drops": int(links.loc["r1-r2", "drops"]),
        "bottleneck_arrivals": int(links.loc["r1-r2", "packets_in"]),
        "cpu_s": cpu,
    }


# --------------------------------------------------------------------------
# comparing


def _side(job: tuple) -> tuple:
    """One simulator's run of one cell: ``(kind, figures)``, or ``(kind, {"error": message})`` when it
    failed or timed out, so that one cell does not stop the others."""
    kind, cell, ns, keep_tcl, timeout = job
    try:
        return kind, (run_ns2(cell, ns, keep_tcl, timeout) if kind == "ns2" else run_tcplab(cell))
    except CompareError as e:
        return kind, {"error": str(e)}


def _cache_path(cache: str, cell: Cell, kind: str) -> str:
    """Where one side's figures are kept: keyed by the cell's Tcl (ns-2) or by the cell and the tcplab
    version (tcplab), so a changed script or a new tcplab runs again."""
    import hashlib

    if kind == "ns2":
        key = hashlib.sha256(tcl_script(cell).encode()).hexdigest()[:16]
    else:
        import tcplab

        key = hashlib.sha256((tcl_script(cell) + tcplab.__version__).encode()).hexdigest()[:16]
    return os.path.join(cache, f"{cell.tag}.{kind}.{key}.json")


def combine(cell: Cell, ns2: dict, lab: dict) -> dict:
    if "error" in ns2 or "error" in lab:
        return {"protocol": cell.label, "protocols": list(cell.protocols), "rtt_ms": cell.rtt_ms,
                "buffer_bdp": cell.buffer_bdp, "buffer_packets": cell.buffer_packets, "flows": cell.flows,
                "error": "; ".join(f"{k}: {d['error']}" for k, d in (("ns2", ns2), ("tcplab", lab)) if "error" in d),
                "ns2": ns2, "tcplab": lab}
    g0, g1 = ns2["goodput_bps"], lab["goodput_bps"]
    return {
        "protocol": cell.label, "protocols": list(cell.protocols), "rtt_ms": cell.rtt_ms,
        "buffer_bdp": cell.buffer_bdp, "buffer_packets": cell.buffer_packets, "bdp_packets": cell.bdp_packets,
        "rate_bps": cell.rate_bps, "flows": cell.flows, "duration": cell.duration, "window": cell.window,
        "iw": cell.iw, "rto_mode": cell.rto_mode,
        "goodput_diff_pct": (g1 - g0) / g0 * 100.0 if g0 > 0 else None,
        "flow_goodput_diff_pct": [(b - a) / a * 100.0 if a > 0 else None
                                  for a, b in zip(ns2["flow_goodput_bps"], lab["flow_goodput_bps"], strict=True)],
        "cpu_ratio": ns2["cpu_s"] / lab["cpu_s"] if lab["cpu_s"] > 0 else None,
        "ns2": ns2, "tcplab": lab,
    }


def _cell(protocol: str | Sequence[str], rtt_ms: float, buffer_bdp: float, duration: float, window: float,
          rate: float | str = 200e6, flows: int = 1, iw: int = 10, rto_mode: str = "linux") -> Cell:
    protos = [protocol] * flows if isinstance(protocol, str) else list(protocol)
    if not isinstance(protocol, str) and flows not in (1, len(protos)):
        raise CompareError(f"{len(protos)} protocols given for {flows} flows")
    return Cell(protos, float(rtt_ms), float(buffer_bdp), float(duration), float(window), parse_rate(rate), int(iw),
                rto_mode)


def compare_cell(protocol: str | Sequence[str], rtt_ms: float, buffer_bdp: float, duration: float,
                 window: float, *, rate: float | str = 200e6, flows: int = 1, iw: int = 10,
                 rto_mode: str = "linux", ns: str = "ns", keep_tcl: str | None = None) -> dict:
    """Run one cell in ns-2 and in tcplab (one after the other, in this process) and compare.

    ``protocol`` is a name of ``PROTOCOLS`` (every flow runs it) or a list with one per flow.
    Returns the dict that ``--json`` writes per cell: the cell, ``ns2`` and ``tcplab`` figures
    (``goodput_bps``, ``drops``, ``retransmits``, ``timeouts``, ``cpu_s``, per-flow lists; ``None`` for
    a counter the ns-2 agent does not maintain), ``goodput_diff_pct`` = (tcplab - ns2) / ns2 x 100 and
    ``cpu_ratio`` = ns-2 CPU / tcplab CPU.
    """
    cell = _cell(protocol, rtt_ms, buffer_bdp, duration, window, rate, flows, iw, rto_mode)
    ns2_binary(ns)
    return combine(cell, run_ns2(cell, ns, keep_tcl), run_tcplab(cell))


def run_cells(cells: Sequence[Cell], workers: int = 2, ns: str = "ns", keep_tcl: str | None = None,
              log=None, cache: str | None = None, timeout: float | None = None) -> list:
    """Every cell, both simulators, as 2 x len(cells) jobs in a process pool of ``workers``. With
    ``cache`` (a directory), each side's figures are written there as soon as it finishes and a side
    found there is not run again (failed sides are not kept), so a long matrix resumes."""
    ns2_binary(ns)
    done: dict = {}
    jobs = []
    for c in cells:
        for kind in ("ns2", "tcplab"):
            path = _cache_path(cache, c, kind) if cache else None
            if path and os.path.exists(path):
                with open(path) as fh:
                    done[(id(c), kind)] = json.load(fh)
                if log:
                    log(f"cached: {kind} {c.tag}")
            else:
                jobs.append((kind, c, ns, keep_tcl, timeout))
    if cache:
        os.makedirs(cache, exist_ok=True)

    def finished(job: tuple, r: dict) -> None:
        done[(id(job[1]), job[0])] = r
        if cache and "error" not in r:
            path = _cache_path(cache, job[1], job[0])
            with open(path + ".tmp", "w") as fh:
                json.dump(r, fh)
            os.replace(path + ".tmp", path)
        if log:
            why = f": {r['error']}" if "error" in r else ""
            log(f"{'failed' if 'error' in r else 'done'}: {job[0]} {job[1].tag}{why}")

    if workers <= 1:
        for job in jobs:
            finished(job, _side(job)[1])
    else:
        with cf.ProcessPoolExecutor(max_workers=workers) as pool:
            futs = {pool.submit(_side, job): job for job in jobs}
            for fut in cf.as_completed(futs):
                finished(futs[fut], fut.result()[1])
    return [combine(c, done[(id(c), "ns2")], done[(id(c), "tcplab")]) for c in cells]


def matrix_cells(name: str, duration: float | None = None, window: float | None = None, iw: int = 10,
                 rto_mode: str = "linux") -> list:
    """The cells of ``--matrix table1`` or ``table2``."""
    if name not in MATRICES:
        raise CompareError(f"unknown matrix {name!r}: known matrices are {', '.join(MATRICES)}")
    m = MATRICES[name]
    dur = m["duration"] if duration is None else duration
    win = m["window"] if window is None else window
    if window is None and duration is not None:
        win = dur / 2
    cells = []
    if name == "table1":
        for p in m["protocols"]:
            for rtt in m["rtts"]:
                for b in m["buffers"]:
                    cells.append(Cell([p], rtt, b, dur, win, m["rate"], iw, rto_mode))
    else:
        for p in LINUX_PROTOCOLS:
            for pair in ([p, "newreno"], ["newreno", p]):
                cells.append(Cell(pair, m["rtts"][0], m["buffers"][0], dur, win, m["rate"], iw, rto_mode))
    return cells


def parse_rate(v: float | str) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    try:
        from tcplab.units import parse_rate as tl_parse_rate

        return float(tl_parse_rate(v, "--rate"))
    except Exception as e:  # noqa: BLE001 - any unit error becomes one line
        raise CompareError(f"--rate: cannot read {v!r} as a rate (e.g. 200Mbps): {e}") from None


# --------------------------------------------------------------------------
# command line


def _list(text: str, conv, what: str) -> list:
    try:
        return [conv(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise CompareError(f"{what}: expected a comma-separated list of numbers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ns2compare.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Protocols: " + ", ".join(PROTOCOLS) + ". See docs/validation-ns2-howto.md.")
    ap.add_argument("--protocols", default="newreno", help="comma-separated protocols (default newreno)")
    ap.add_argument("--rtt", default="100", help="bottleneck round-trip propagation delays, ms (comma-separated)")
    ap.add_argument("--buffer", default="1", help="bottleneck buffers as fractions of the BDP (comma-separated)")
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds (default 100; matrices 2000)")
    ap.add_argument("--window", type=float, default=None,
                    help="goodput window at the end of the run, s (default half the duration; matrices 1000)")
    ap.add_argument("--flows", type=int, default=1, help="flows per cell, all of the same protocol (default 1)")
    ap.add_argument("--rate", default="200Mbps", help="bottleneck capacity C (default 200Mbps)")
    ap.add_argument("--iw", type=int, default=10, help="initial window, segments, both sides (default 10)")
    ap.add_argument("--rto-mode", default="linux", choices=RTO_MODES,
                    help="tcplab's RTO formula (default linux; see docs/validation-ns2-howto.md for why)")
    ap.add_argument("--matrix", choices=sorted(MATRICES), help="run a fixed grid instead (table1, table2)")
    ap.add_argument("--workers", type=int, default=2, help="parallel simulator runs (default 2)")
    ap.add_argument("--json", help="write every cell's figures to this JSON file")
    ap.add_argument("--csv", help="write one row per cell to this CSV file")
    ap.add_argument("--keep-tcl", metavar="DIR", help="keep the ns-2 scripts (and their output) in DIR")
    ap.add_argument("--cache", metavar="DIR", help="keep each finished side's figures in DIR and reuse them: "
                    "an interrupted matrix resumes (keyed by the Tcl script and the tcplab version)")
    ap.add_argument("--ns-timeout", type=float, metavar="SECONDS",
                    help="stop an ns-2 run after this much wall time; its cell reports how far it got")
    ap.add_argument("--ns", default="ns", help="the ns-2 binary (default: ns on PATH)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--from-json", metavar="FILE", help="print the table of an earlier --json output; run nothing")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    tablefmt = "github" if args.markdown else "simple"
    if args.from_json:
        try:
            with open(args.from_json) as fh:
                rows = json.load(fh)
            print(render(rows, tablefmt))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"cannot read {args.from_json} as an ns2compare --json output: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        if args.matrix:
            cells = matrix_cells(args.matrix, args.duration, args.window, args.iw, args.rto_mode)
        else:
            dur = 100.0 if args.duration is None else args.duration
            win = dur / 2 if args.window is None else args.window
            rate = parse_rate(args.rate)
            if args.flows < 1:
                raise CompareError(f"--flows must be at least 1, got {args.flows}")
            cells = [Cell([p] * args.flows, rtt, b, dur, win, rate, args.iw, args.rto_mode)
                     for p in _list(args.protocols, check_protocol, "--protocols")
                     for rtt in _list(args.rtt, float, "--rtt")
                     for b in _list(args.buffer, float, "--buffer")]
        if not cells:
            raise CompareError("nothing to run: no protocol, RTT or buffer given")
        ns2_binary(args.ns)
        log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
        rows = run_cells(cells, max(1, args.workers), args.ns, args.keep_tcl, log, args.cache, args.ns_timeout)
    except CompareError as e:
        print(str(e), file=sys.stderr)
        return 2
    print(render(rows, tablefmt))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if args.csv:
        write_csv(rows, args.csv)
    failed = [r for r in rows if "error" in r]
    for r in failed:
        print(r["error"], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
