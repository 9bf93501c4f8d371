"""scripts/ns2compare.py: the same dumbbell in ns-2 and in tcplab.

The Tcl generator and the error messages are checked without ns-2; two
short cells run against ns-2 (``ns`` on PATH, Debian package ``ns2``) and
are skipped, saying so, without it. The whole mv-highspeed Table I grid is
a slow test (2000 s runs; ``pytest -m slow``)."""

import importlib.util
import json
import os
import sys

import pytest

from conftest import require_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("ns2compare", os.path.join(ROOT, "scripts", "ns2compare.py"))
nc = importlib.util.module_from_spec(_spec)
sys.modules["ns2compare"] = nc  # pool workers find the module by name
_spec.loader.exec_module(nc)

def needs_ns(test):
    """Runs `test` only with ns-2 on PATH (skips saying why; fails under CI=true)."""
    import functools

    @functools.wraps(test)
    def wrapped(*args, **kwargs):
        require_program("ns", "ns2", "the side-by-side with ns-2")
        return test(*args, **kwargs)

    return wrapped

C20 = 20e6


# --------------------------------------------------------------------------
# without ns-2


def test_the_tcl_of_a_two_flow_cell_builds_the_dumbbell():
    cell = nc.Cell(["cubic", "newreno"], 100, 0.5, 30, 10, 200e6, 10)
    tcl = nc.tcl_script(cell)
    # B = 0.5 x 1667 (200 Mbit/s x 100 ms / 12000 bit = 1666.7) = 833.3 -> 833 packets waiting; ns-2's
    # DropTail keeps limit_ - 1 waiting, so limit_ = B + 1.
    assert cell.bdp_packets == 1667 and cell.buffer_packets == 833
    assert "$ns queue-limit $r1 $r2 834\n" in tcl
    # bottleneck: C, rtt/2 each way; access links at 10 C with 2.5 i / N ms ("spread"), N = 2
    assert "$ns simplex-link $r1 $r2 200000000 0.05 DropTail\n" in tcl
    assert "$ns simplex-link $r2 $r1 200000000 0.05 DropTail\n" in tcl
    for i, d in ((1, "0.00125"), (2, "0.0025")):
        assert f"$ns duplex-link $s({i}) $r1 2000000000 {d} DropTail\n" in tcl
        assert f"$ns duplex-link $r2 $d({i}) 2000000000 {d} DropTail\n" in tcl
    # every other queue (r2->r1 and the 4 queues of each flow's 2 access links) never drops
    assert tcl.count("queue-limit") == 1 + 1 + 4 * 2
    assert tcl.count(f" {nc.UNLIMITED}\n") == 1 + 4 * 2
    # flow 1: TCP-Linux cubic with timestamps and a SACK sink echoing them (RFC 1323); 1450 + 50 B header
    assert "set tcp(1) [new Agent/TCP/Linux]" in tcl and "set sink(1) [new Agent/TCPSink/Sack1]" in tcl
    assert "$sink(1) set ts_echo_rfc1323_ true" in tcl
    assert '$ns at 0 "$tcp(1) select_ca cubic"' in tcl
    assert tcl.index("select_ca cubic") < tcl.index('"$ftp(1) start"')  # the module before the first packet
    assert "Agent/TCP/Linux set packetSize_ 1450" in tcl and "Agent/TCP/Linux set timestamps_ true" in tcl
    # flow 2: ns-2 NewReno, plain sink, 1460 + 40 B header
    assert "set tcp(2) [new Agent/TCP/Newreno]" in tcl and "set sink(2) [new Agent/TCPSink]" in tcl
    assert "Agent/TCP/Newreno set packetSize_ 1460" in tcl and "Agent/TCP/Newreno set timestamps_ false" in tcl
    assert "$sink(2) set ts_echo_rfc1323_" not in tcl
    # the settings aligned with tcplab, on both sender classes
    assert "foreach cls {Agent/TCP/Linux Agent/TCP/Newreno} {" in tcl
    for var, val in (("syn_", "false"), ("delay_growth_", "false"), ("windowInit_", "10"), ("window_", "100000"),
                     ("tcpTick_", "0.001"), ("minrto_", "0.2"), ("maxrto_", "60"), ("singledup_", "0"),
                     ("numdupacks_", "3"), ("maxburst_", "0")):
        assert f"    $cls set {var:<17} {val} " in tcl, var
    assert "Agent/TCPSink set packetSize_ 40" in tcl
    # measurement: bytes_ from t = duration - window, polled (it is a 32-bit int), drops from a QueueMonitor
    assert '$ns at 20 "mark"' in tcl and '$ns at 30 "report"' in tcl and '$ns at 20 "poll"' not in tcl
    assert '$ns monitor-queue $r1 $r2 ""' in tcl
    assert "nrexmitpack_ [$tcp($i) set nrexmitpack_]" in tcl and "nrexmit_ [$tcp($i) set nrexmit_]" in tcl


def test_bytes_are_polled_often_enough_not_to_wrap():
    # TcpSink::bytes_ is a C int: at most 2^30 bytes may pass between two reads.
    tcl = nc.tcl_script(nc.Cell(["newreno"], 100, 1, 2000, 1000, 200e6))
    assert tcl.count('"poll"') == 99  # every 10 s in (1000, 2000)
    fast = nc.tcl_script(nc.Cell(["newreno"], 100, 1, 20, 10, 10e9))
    assert '$ns at 10.8589934592 "poll"' in fast  # 2^30 bytes at 10 Gbit/s: 0.859 s


def test_the_mapping_table_names_existing_tcplab_algorithms_and_variants():
    for name, p in nc.PROTOCOLS.items():
        sc = nc.tcplab_scenario(nc.Cell([name], 100, 1, 10, 5, C20))  # validates algorithm and parameters
        f = sc.to_spec()["flows"][0]
        assert f["cc"]["algorithm"] == p.algorithm and f["recovery"] == p.recovery
        assert f["packet_size"] == 1500 and f["header_size"] == (50 if p.timestamps else 40)
        assert f["accounting"] == "ns2" and f["init_cwnd"] == 10 and not f["limited_transmit"]
        assert p.timestamps == bool(p.select_ca) and p.ns2_sink.startswith("Agent/TCPSink")
    # a mixed cell keeps each flow's header (timestamps on the TCP-Linux flow only); 1500 B on the wire each
    flows = nc.tcplab_scenario(nc.Cell(["cubic", "newreno"], 100, 1, 10, 5, C20)).to_spec()["flows"]
    assert [(f["header_size"], f["packet_size"]) for f in flows] == [(50, 1500), (40, 1500)]


def test_a_counter_the_agent_does_not_keep_is_missing_not_zero(monkeypatch):
    p = nc.PROTOCOLS["newreno"]
    monkeypatch.setitem(nc.PROTOCOLS, "newreno", nc.Protocol(p.ns2_agent, p.ns2_sink, None, False, p.algorithm,
                                                              p.params, p.recovery, frozenset({"nrexmitpack_"})))
    cell = nc.Cell(["newreno"], 100, 1, 10, 5, C20)
    out = ("NS2COMPARE flow 1 bytes 1500000 nrexmit_ 0 nrexmitpack_ 7 ndatapack_ 1000\n"
           "NS2COMPARE queue pdrops_ 3 parrivals_ 1000\n")
    ns2 = nc.parse_ns2_output(out, cell)
    assert ns2["timeouts"] is None and ns2["retransmits"] == 7 and ns2["goodput_bps"] == 1500000 * 8 / 5
    lab = dict(ns2, timeouts=2, flow_timeouts=[2], cpu_s=1.0)
    row = nc.combine(cell, dict(ns2, cpu_s=2.0), lab)
    line = nc.render([row]).splitlines()[2].split()
    assert line[10:12] == ["missing", "2"]  # RTOs: ns-2 missing, tcplab 2


def test_an_earlier_json_output_prints_again_as_markdown_without_running(tmp_path, capsys):
    cell = nc.Cell(["newreno"], 100, 1, 10, 5, C20)
    ns2 = nc.parse_ns2_output("NS2COMPARE flow 1 bytes 1500000 nrexmit_ 1 nrexmitpack_ 7 ndatapack_ 1000\n"
                              "NS2COMPARE queue pdrops_ 3 parrivals_ 1000\n", cell)
    row = nc.combine(cell, dict(ns2, cpu_s=2.0), dict(ns2, goodput_bps=1.01 * ns2["goodput_bps"], cpu_s=0.5))
    js = tmp_path / "rows.json"
    js.write_text(json.dumps([row]))
    assert nc.main(["--from-json", str(js), "--markdown", "--ns", str(tmp_path / "no-ns-here")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| protocol") and lines[1].startswith("|---")
    assert [c.strip() for c in lines[2].split("|")[1:7]] == ["newreno", "100", "167", "2.40", "2.42", "+1.00"]
    js.write_text("[{}]")
    assert nc.main(["--from-json", str(js)]) == 2
    assert capsys.readouterr().err.startswith(f"cannot read {js} as an ns2compare --json output")


def test_errors_are_one_clear_line(tmp_path, capsys):
    assert nc.main(["--protocols", "newreno,foo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["unknown protocol 'foo': known protocols are " + ", ".join(nc.PROTOCOLS)]
    assert nc.main(["--ns", str(tmp_path / "no-ns-here"), "--duration", "1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["ns-2 not found: install it with apt-get install ns2"]
    bad = tmp_path / "ns"
    bad.write_text("#!/bin/sh\necho 'invalid command name \"bogus\"' >&2\nexit 3\n")
    bad.chmod(0o755)
    # A cell that fails is reported in its row and on stderr; the other cells still run (exit 1).
    assert nc.main(["--ns", str(bad), "--duration", "1", "--rate", "1Mbps", "--workers", "1", "--quiet",
                    "--protocols", "newreno,sack1"]) == 1
    out, err = capsys.readouterr()
    err = err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith('ns2: ns-2 failed on newreno (exit 3): invalid command name "bogus"')
    assert "error: sack1 rtt 100 ms B 8: ns2: ns-2 failed on sack1" in out
    row = [ln.split() for ln in out.splitlines() if ln.startswith("sack1")][0]
    assert row[3] == "failed" and float(row[4]) > 0  # the tcplab side that ran is kept


def test_a_slow_ns2_run_is_stopped_and_says_how_far_it_got(tmp_path, capsys):
    slow = tmp_path / "ns"
    slow.write_text("#!/bin/sh\necho NS2PROGRESS 5\nsleep 30\n")
    slow.chmod(0o755)
    assert nc.main(["--ns", str(slow), "--duration", "100", "--rate", "1Mbps", "--workers", "1", "--quiet",
                    "--ns-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "did not finish newreno within 1 s of wall time (simulated time reached: 5 of 100 s)" in err


def test_the_cache_keeps_finished_sides_and_a_rerun_reuses_them(tmp_path, capsys):
    # A stand-in for ns that prints a valid result and counts its runs.
    calls = tmp_path / "calls"
    fake = tmp_path / "ns"
    fake.write_text("#!/bin/sh\necho run >> " + str(calls) + "\n"
                    "echo NS2COMPARE flow 1 bytes 1000000 nrexmit_ 0 nrexmitpack_ 3 ndatapack_ 900\n"
                    "echo NS2COMPARE queue pdrops_ 3 parrivals_ 900\n")
    fake.chmod(0o755)
    args = ["--ns", str(fake), "--duration", "2", "--rate", "1Mbps", "--workers", "1", "--quiet",
            "--cache", str(tmp_path / "cache")]
    assert nc.main(args) == 0
    first = capsys.readouterr().out
    assert calls.read_text().count("run") == 1 and len(list((tmp_path / "cache").iterdir())) == 2
    assert nc.main(args) == 0
    assert capsys.readouterr().out == first and calls.read_text().count("run") == 1


# --------------------------------------------------------------------------
# against ns-2

#: Tolerance on the goodput of the two short cells below. Measured (ns-2.35 against tcplab, 60 s, goodput
#: over the last 30 s, 20 Mbit/s, rtt 100 ms, B = 1 BDP = 167 packets): newreno 19.9656 / 19.9800 Mbit/s
#: (+0.07 %), sack1 19.9644 / 19.9768 Mbit/s (+0.06 %); tcplab's rto_mode rfc6298 instead gives -12.7 % and
#: -9.9 % (see docs/validation-ns2-howto.md). 0.5 % is about 7 times what was measured: room for a small
#: change in either simulator, far below the differences a model mismatch makes here.
TOLERANCE = 0.005


@needs_ns
@pytest.mark.parametrize("protocol", ["newreno", "sack1"])
def test_a_short_cell_agrees_with_ns2(protocol):
    row = nc.compare_cell(protocol, 100, 1.0, 60, 30, rate=C20)
    a, b = row["ns2"], row["tcplab"]
    assert row["buffer_packets"] == 167 and row["flows"] == 1
    for side in (a, b):
        assert 0.95 * C20 < side["goodput_bps"] <= C20  # the bottleneck limits both
        assert side["drops"] > 0 and side["retransmits"] > 0 and side["cpu_s"] > 0
    assert abs(b["goodput_bps"] - a["goodput_bps"]) <= TOLERANCE * a["goodput_bps"], row["goodput_diff_pct"]
    assert row["goodput_diff_pct"] == pytest.approx((b["goodput_bps"] / a["goodput_bps"] - 1) * 100)


@needs_ns
def test_the_command_line_prints_a_row_per_cell_and_writes_json_and_csv(tmp_path, capsys):
    js, cs, keep = tmp_path / "o.json", tmp_path / "o.csv", tmp_path / "tcl"
    rc = nc.main(["--protocols", "reno,cubic", "--rtt", "100", "--buffer", "0.5", "--rate", "10Mbps",
                  "--duration", "10", "--window", "5", "--workers", "2", "--quiet", "--json", str(js), "--csv",
                  str(cs), "--keep-tcl", str(keep)])
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["protocol", "rtt", "ms"] and len(lines) == 4
    assert [ln.split()[0] for ln in lines[2:]] == ["reno", "cubic"]
    rows = json.loads(js.read_text())
    assert [r["protocol"] for r in rows] == ["reno", "cubic"] and all(r["buffer_packets"] == 42 for r in rows)
    assert len(cs.read_text().splitlines()) == 3
    kept = sorted(p.name for p in keep.iterdir() if p.suffix == ".tcl")
    assert kept == ["cubic_C10M_rtt100_B42.tcl", "reno_C10M_rtt100_B42.tcl"]


# --------------------------------------------------------------------------
# slow: the whole Table I grid

#: Table I cells allowed to differ by more than 2 % in goodput: (protocol, rtt_ms, buffer_bdp) -> the rule that
#: explains it (docs/validation.md, "Table I"). Measured 2026-11-28 (tcplab 0.2.0 against ns-2.35).
_MIN_CWND = ("ns-2's TCP-Linux sets cwnd = the module's min_cwnd, tcp_reno_min_cwnd = ssthresh / 2, on entering "
             "recovery; tcplab keeps ssthresh (7/8 of the window)")
_COMPLETE_CWR = ("tcplab's westwood linux variant sets cwnd = BWE x RTTmin at recovery exit (CA_EVENT_COMPLETE_CWR); "
                 "ns-2's TCP-Linux never raises the event and sets cwnd = min_cwnd on entry instead")
ALLOW: dict = {
    ("scalable", 100.0, 0.1): _MIN_CWND,    # +9.85 %
    ("scalable", 300.0, 0.1): _MIN_CWND,    # +9.86 %
    ("westwood", 100.0, 0.1): _COMPLETE_CWR,  # -38.32 %
    ("westwood", 300.0, 0.1): _COMPLETE_CWR,  # -28.30 %
}

#: Cells whose ns-2 side does not finish: after the slow-start overshoot, TCP-Linux retransmits the lost
#: segments many times over (no detection of lost retransmissions) and ns-2 had simulated 500 of 2000 s after
#: 40 minutes. They are left out of the slow test.
NS2_UNFINISHED = {("cubic", 300.0, 1.0), ("bic", 300.0, 1.0)}


@pytest.mark.slow
@needs_ns
def test_table1_goodputs_agree_within_2_percent():
    cells = [c for c in nc.matrix_cells("table1")
             if (c.label, c.rtt_ms, c.buffer_bdp) not in NS2_UNFINISHED]
    rows = nc.run_cells(cells, workers=2)
    assert len(rows) == 8 * 2 * 2 - len(NS2_UNFINISHED) and not [r["error"] for r in rows if "error" in r]
    diff = {(r["protocol"], r["rtt_ms"], r["buffer_bdp"]): r["goodput_diff_pct"] for r in rows}
    bad = {k: round(d, 2) for k, d in diff.items() if abs(d) > 2.0 and k not in ALLOW}
    assert not bad, f"cells beyond 2 % and not in ALLOW: {bad}"
    # An explanation that no longer has a difference to explain is stale.
    stale = {k: round(diff[k], 2) for k in ALLOW if abs(diff[k]) <= 2.0}
    assert not stale, f"cells in ALLOW now within 2 %: {stale}"
