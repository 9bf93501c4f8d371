"""Packet traces (docs/pcap.md): the pcap file a run writes, read back by
hand (its header and records against the run's packet_trace) and by tshark
(Wireshark's dissectors) against tcplab's own counters.

tshark comes from Debian's package (scripts/setup-system.sh installs it as
root). Without it the tshark tests skip and say how to install it; under
CI=true they fail.
"""

from __future__ import annotations

import struct
import subprocess

import numpy as np
import pytest

import tcplab
from conftest import require_program
from tcplab.cli import main

FILE = 400_000  # bytes each flow sends: done well before the end, so nothing is left in the network
MSS = 1460


def scenario(**kw) -> tcplab.Dumbbell:
    """Three flows (NewReno, NewReno, SACK) through a 15-packet buffer that
    drops, each sending one file; the bottleneck captured both ways."""
    args = dict(n_flows=3, bottleneck_rate="10Mbps", rtt="40ms", buffer=15, duration="5s",
                recovery=["newreno", "newreno", "sack"], start=[0.0, 0.05, 0.1], accounting="payload",
                flow_options={"files": [{"size": FILE, "start": 0.0}]}, pcap=["bottleneck"], loss_trace=True)
    args.update(kw)
    return tcplab.Dumbbell(**args)


@pytest.fixture(scope="module")
def run():
    res = tcplab.run(scenario())
    assert (res.flows["bytes_delivered"] == FILE).all(), "every file must finish for the counts below"
    assert (res.flows["data_packets_in_network"] == 0).all()
    assert (res.flows["data_packets_dropped"] > 0).all(), "every flow must lose packets for this test"
    return res


def read_pcap(path):
    """The global header and the records (header fields, captured bytes) of a pcap file."""
    data = open(path, "rb").read()
    header = struct.unpack("<IHHiIII", data[:24])
    records, off = [], 24
    while off < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        records.append((sec, nsec, incl, orig, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    assert off == len(data)
    return header, records


def test_file_header_and_records_match_the_trace(run, tmp_path):
    path = tmp_path / "b.pcap"
    assert run.write_pcap(path, "r1-r2") == (run.packet_trace["link_name"] == "r1-r2").sum()
    n = run.write_pcap(path, ["r1-r2", "r2-r1"])
    (magic, major, minor, zone, sigfigs, snaplen, linktype), records = read_pcap(path)
    assert (magic, major, minor, linktype) == (0xA1B23C4D, 2, 4, 101)  # nanoseconds, raw IPv4
    assert len(records) == n == len(run.packet_trace)
    order = np.argsort(run.packet_trace["time_ps"].to_numpy(), kind="stable")
    t = run.packet_trace.iloc[order].reset_index()
    sacks = run.packet_sacks.groupby("packet")
    nodes = [n["name"] for n in run.spec["nodes"]]
    for i in range(0, n, 7):  # every 7th record, in full
        sec, nsec, incl, orig, b = records[i]
        row = t.iloc[i]
        assert sec * 10**9 + nsec == row["time_ps"] // 1000
        ihl, tos, total, ip_id, frag, ttl, proto, csum, src, dst = struct.unpack(">BBHHHBBHII", b[:20])
        assert (ihl, proto, total, orig) == (0x45, 6, orig, total)
        assert tos & 3 == row["ecn"]
        words = struct.unpack(">10H", b[:20])
        s = sum(words)
        assert (s & 0xFFFF) + (s >> 16) == 0xFFFF  # a valid IP header checksum
        sport, dport, seq, ack, off_flags = struct.unpack(">HHIIH", b[20:34])
        doff = (off_flags >> 12) * 4
        assert incl == 20 + doff  # headers only
        flow = int(row["flow"])
        f = run.spec["flows"][flow]
        sender, receiver = nodes.index(f["src"]) + 1, nodes.index(f["dst"]) + 1
        if row["packet"] == "data":
            assert (src & 0xFFFFFF, dst & 0xFFFFFF, sport, dport) == (sender, receiver, 10000 + flow, 5001)
            assert seq == row["byte_seq"] and total == 40 + row["payload"] == row["size"]
        else:
            assert (src & 0xFFFFFF, dst & 0xFFFFFF, sport, dport) == (receiver, sender, 5001, 10000 + flow)
            assert ack == row["byte_seq"] and total == 20 + doff
            opts = b[40:20 + doff]
            if row["sack_count"]:
                blocks = sacks.get_group(row["index"])
                assert opts[:4] == bytes([1, 1, 5, 2 + 8 * len(blocks)])
                got = struct.unpack(f">{2 * len(blocks)}I", opts[4:])
                assert list(got) == [int(x) for lr in zip(blocks["left"], blocks["right"], strict=True) for x in lr]
            else:
                assert opts == b""


def test_pcap_errors_name_the_field(run, tmp_path):
    with pytest.raises(ValueError, match=r"^link: unknown link 'r9-r2'"):
        run.write_pcap(tmp_path / "x.pcap", "r9-r2")
    with pytest.raises(ValueError, match=r"^link\[1\]: link 's1-r1' was not captured"):
        run.write_pcap(tmp_path / "x.pcap", ["r1-r2", "s1-r1"])
    with pytest.raises(tcplab.ScenarioError, match=r"^pcap\[0\]: unknown link 'r1-r3'"):
        scenario(pcap=["r1-r3"]).to_spec()
    with pytest.raises(tcplab.ScenarioError, match=r"^pcap: expected a list"):
        scenario(pcap="r1-r2").to_spec()
    with pytest.raises(tcplab.ScenarioError, match=r"^pcap_limit: expected a positive"):
        scenario(pcap_limit=0).to_spec()
    plain = tcplab.run(scenario(pcap=None, duration="0.2s"))
    with pytest.raises(ValueError, match="no packet capture in this run"):
        plain.write_pcap(tmp_path / "x.pcap")


def test_capture_changes_no_result(run):
    plain = tcplab.run(scenario(pcap=None))
    for t in ("flows", "links"):
        a, b = getattr(plain, t), getattr(run, t)
        assert a.drop(columns=["wall_s"], errors="ignore").equals(b.drop(columns=["wall_s"], errors="ignore"))
    assert "pcap" not in plain.spec and run.spec["pcap"] == ["r1-r2", "r2-r1"]


def test_the_limit_is_reported(tmp_path):
    res = tcplab.run(scenario(pcap_limit=50, duration="1s"))
    assert len(res.packet_trace) == 50 and res.packet_trace.attrs["overflow"] > 0


def tshark_fields(path, fields, filt=None):
    exe = require_program("tshark", "tshark", "reading packet traces with Wireshark's dissectors")
    cmd = [exe, "-r", str(path), "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"]
    if filt:
        cmd += ["-Y", filt]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return [line.split("|") for line in out.stdout.splitlines()]


def test_tshark_reads_what_tcplab_counted(run, tmp_path):
    path = tmp_path / "bottleneck.pcap"
    run.write_pcap(path, ["r1-r2", "r2-r1"])
    rows = tshark_fields(path, ["frame.time_epoch", "ip.src", "tcp.srcport", "tcp.dstport", "tcp.seq_raw",
                                "tcp.ack_raw", "tcp.len", "tcp.options.sack_le", "tcp.options.sack_re"])
    assert len(rows) == len(run.packet_trace)
    times = np.array([float(r[0]) for r in rows])
    assert (np.diff(times) >= 0).all() and times[0] >= 0 and times[-1] < 5.0
    flows = run.flows.set_index("flow")
    drops = run.drop_trace
    first_drop = drops.groupby("flow")["time"].min()
    for f, fr in flows.iterrows():
        data = [r for r in rows if int(r[2]) == 10000 + f]
        acks = [r for r in rows if int(r[3]) == 10000 + f]
        # Every data packet the flow sent crossed the bottleneck but the ones its queue dropped.
        assert len(data) == fr["data_packets_sent"] - fr["data_packets_dropped"]
        seqs = [int(r[4]) for r in data]
        assert len(set(seqs)) == -(-FILE // MSS)  # every segment, at least once
        # The copies past the first of each segment: retransmissions less the originals dropped.
        assert len(seqs) - len(set(seqs)) == fr["retransmits"] - fr["data_packets_dropped"]
        assert fr["retransmits"] > 0
        top = max(int(r[4]) + int(r[6]) for r in data)
        assert top == fr["bytes_delivered"] == FILE
        assert max(int(r[5]) for r in acks) == FILE
        assert len(acks) == fr["acks_sent"] - fr["acks_dropped"]
        with_sack = [r for r in acks if r[7]]
        if fr["recovery"] == "sack":
            assert with_sack and min(float(r[0]) for r in with_sack) > first_drop[f]
            for r in with_sack:
                left = [int(x) for x in r[7].split(",")]
                right = [int(x) for x in r[8].split(",")]
                assert all(int(r[5]) < lo < hi <= FILE for lo, hi in zip(left, right, strict=True))
        else:
            assert not with_sack


def test_cli_writes_the_pcap(tmp_path, capsys):
    toml = tmp_path / "s.toml"
    scenario(pcap=None, duration="1s").save_toml(str(toml))
    out = tmp_path / "out"
    assert main(["run", str(toml), "--pcap", "bottleneck", "--pcap", "r1-r2", "-o", str(out), "--no-plot"]) == 0
    assert "packet trace: " in capsys.readouterr().out
    for name in ("bottleneck.pcap", "r1-r2.pcap"):
        (magic, *_), records = read_pcap(out / name)
        assert magic == 0xA1B23C4D and records
    assert main(["run", str(toml), "--pcap", "r1-r3", "-o", str(tmp_path / "o2")]) == 2
    assert "error: --pcap: unknown link 'r1-r3'" in capsys.readouterr().err
    # --json without -o writes nothing: a capture there would be lost, so it is refused
    assert main(["run", str(toml), "--json", "--pcap", "r2-r1"]) == 2
    err = capsys.readouterr()
    assert err.err.strip().splitlines() == ["error: --pcap: with --json, give -o OUT for the pcap files "
                                            "(--json alone writes nothing)"] and not err.out
    assert main(["run", str(toml), "--json", "--pcap", "r2-r1", "-o", str(tmp_path / "o3"), "--no-plot"]) == 0
    assert '"flows"' in capsys.readouterr().out and read_pcap(tmp_path / "o3" / "r2-r1.pcap")[1]
    rows = tshark_fields(out / "bottleneck.pcap", ["ip.src"])
    assert len(rows) == len(read_pcap(out / "bottleneck.pcap")[1])


def test_ecn_marks_and_echoes_reach_the_headers(tmp_path):
    """A CoDel bottleneck that marks classic-ECN flows: the CE codepoint on
    data (set by the queue, so seen after it) and ECE on the ACKs, in the
    trace and as tshark decodes them."""
    res = tcplab.run(tcplab.Dumbbell(n_flows=2, bottleneck_rate="10Mbps", rtt="40ms", buffer=100, duration="3s",
                                     recovery="sack", accounting="payload", flow_options={"ecn": "classic"},
                                     queue={"discipline": "codel", "target": "2ms", "ecn": True},
                                     pcap=["bottleneck"]))
    t = res.packet_trace
    data, acks = t[t["packet"] == "data"], t[t["packet"] == "ack"]
    assert (data["ecn"] == 3).sum() == res.links.set_index("name").loc["r1-r2", "marks"] > 0
    first = data[~data["retransmit"]]
    assert ((first["ecn"] == 2) | (first["ecn"] == 3)).all()  # ECT(0), or CE once marked
    assert (data[data["retransmit"]]["ecn"] == 0).all()  # RFC 3168 6.1.5: retransmissions are not ECT
    assert (acks["tcp_flags"] & 1).sum() > 0
    path = tmp_path / "ecn.pcap"
    res.write_pcap(path)
    rows = tshark_fields(path, ["ip.dsfield.ecn", "tcp.flags.ece", "tcp.flags.cwr", "tcp.len"])
    ecn = [int(r[0]) for r in rows]
    ece = [r[1] in ("1", "True") for r in rows]
    assert ecn.count(3) == (data["ecn"] == 3).sum()
    assert sum(ece) == (t["tcp_flags"] & 1).astype(bool).sum()
    assert sum(r[2] in ("1", "True") for r in rows) == (t["tcp_flags"] & 2).astype(bool).sum() > 0


def test_saved_results_still_write_the_pcap(run, tmp_path):
    run.save(tmp_path / "out")
    loaded = tcplab.Results.load(tmp_path / "out")
    assert len(loaded.packet_trace) == len(run.packet_trace) and len(loaded.packet_sacks) == len(run.packet_sacks)
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    run.write_pcap(a)
    loaded.write_pcap(b)
    assert a.read_bytes() == b.read_bytes()


def test_campaigns_refuse_a_capture():
    from tcplab.sweep import Sweep, SweepError

    with pytest.raises(SweepError, match=r"^base\.run\.pcap: the packet capture is for single runs"):
        Sweep(scenario(loss_trace=False), grid={"buffer": [10, 20]})


def test_scenario_files_carry_the_capture(tmp_path):
    path = tmp_path / "s.toml"
    scenario(pcap=["bottleneck", "s1-r1"], pcap_limit=1000).save_toml(str(path))
    assert "pcap_limit = 1000" in path.read_text()
    sc = tcplab.load_scenario(str(path))
    spec = sc.to_spec()
    assert spec["pcap"] == ["r1-r2", "r2-r1", "s1-r1"] and spec["pcap_limit"] == 1000
    assert sc.pcap_groups() == {"bottleneck": ["r1-r2", "r2-r1"], "s1-r1": ["s1-r1"]}


def chain(**kw) -> tcplab.Scenario:
    """a - r1 - r2 - r3 - b, two bottleneck links in series (r1-r2 drops:
    a 10-packet buffer), one NewReno flow sending one file."""
    sc = tcplab.Scenario(duration="3s", bottleneck=["r1-r2", "r2-r3"], pcap=["bottleneck"], **kw)
    for n in ("a", "r1", "r2", "r3", "b"):
        sc.add_node(n)
    sc.add_duplex_link("a", "r1", "100Mbps", "1ms")
    sc.add_duplex_link("r1", "r2", "10Mbps", "10ms", buffer=10)
    sc.add_duplex_link("r2", "r3", "10Mbps", "5ms", buffer=100)
    sc.add_duplex_link("r3", "b", "100Mbps", "1ms")
    sc.add_flow(tcplab.Flow("a", "b", files=[(FILE, 0)]))
    return sc


def test_bottleneck_links_in_series_each_get_their_own_file(tmp_path):
    """With two bottleneck links in series every packet crosses both: one
    file for both held each packet twice, and tshark counted twice the
    retransmissions tcplab did. Now one file per link, each packet once."""
    sc = chain()
    assert sc.pcap_groups() == {"bottleneck-r1-r2": ["r1-r2", "r2-r1"], "bottleneck-r2-r3": ["r2-r3", "r3-r2"]}
    res = tcplab.run(sc)
    fr = res.flows.iloc[0]
    assert fr["bytes_delivered"] == FILE and fr["retransmits"] > 0
    paths = res.write_pcaps(tmp_path)
    assert [p.rsplit("/", 1)[1] for p in paths] == ["bottleneck-r1-r2.pcap", "bottleneck-r2-r3.pcap"]
    t = res.packet_trace
    for path, fwd in zip(paths, ("r1-r2", "r2-r3"), strict=True):
        _, records = read_pcap(path)
        mine = t[t["link_name"].isin([fwd, fwd.split("-")[1] + "-" + fwd.split("-")[0]])]
        assert len(records) == len(mine)
        # data (to port 5001): the copies of a segment past its first are the retransmissions this link carried
        seqs = [struct.unpack(">I", r[4][24:28])[0] for r in records if struct.unpack(">H", r[4][22:24])[0] == 5001]
        here = mine[(mine["link_name"] == fwd) & (mine["packet"] == "data")]
        assert len(seqs) == len(here) and len(set(seqs)) == -(-FILE // MSS)
        # (the originals r1-r2's queue dropped are on neither link's wire)
        assert len(seqs) - len(set(seqs)) == here["retransmit"].sum() - fr["data_packets_dropped"]
        assert here["retransmit"].sum() == fr["retransmits"]
    assert res.links.set_index("name").loc["r2-r3", "drops"] == 0
    with pytest.raises(ValueError, match=r"^link: 'r1-r2' and 'r2-r3' both carry flow 0's data packets"):
        res.write_pcap(tmp_path / "all.pcap")
    # one bottleneck link: one file named bottleneck, as before
    assert chain().pcap_groups()["bottleneck-r1-r2"] == ["r1-r2", "r2-r1"]
    single = chain()
    single.bottleneck = ["r2-r3"]
    assert single.pcap_groups() == {"bottleneck": ["r2-r3", "r3-r2"]}


def test_packets_too_large_for_ipv4_are_refused_not_wrapped(tmp_path):
    """IPv4's total length is 16 bits: 65,535-byte ns2 packets (65,575 with the
    captured headers) were written with ip.len 39, a malformed packet."""
    big = dict(n_flows=1, bottleneck_rate="1Gbps", rtt="20ms", buffer=10, duration="0.2s", pcap=["bottleneck"])
    with pytest.raises(tcplab.ScenarioError, match=r"^pcap: flow 'flow1' \(flows\[0\]\): its 65,535-byte packets "
                                                   r"are 65,575-byte IPv4 packets .*at most 65,535 bytes: make "
                                                   r"packet_size at most 65,495 or capture no link$"):
        tcplab.Dumbbell(packet_size=65535, **big).to_spec()
    tcplab.Dumbbell(packet_size=65535, **{**big, "pcap": None}).to_spec()  # no capture: no limit
    for kw in (dict(packet_size=65495), dict(packet_size=65535, accounting="payload"),
               dict(packet_size=65535, accounting="payload", header_size=52)):
        res = tcplab.run(tcplab.Dumbbell(**kw, **big))
        path = tmp_path / "big.pcap"
        res.write_pcap(path)
        lengths = {struct.unpack(">H", r[4][2:4])[0] for r in read_pcap(path)[1]}
        assert max(lengths) == 65535, kw  # the largest packet IPv4 carries, exactly
    # a trace that holds such packets anyway (written some other way) is refused when written
    trace = res.packet_trace.copy()
    trace.loc[trace.index[0], "payload"] = 65536
    from tcplab.pcap import write_pcap
    with pytest.raises(ValueError, match=r"^pcap: a packet of 65,576 bytes .*at most 65,535"):
        write_pcap(tmp_path / "x.pcap", trace, res.packet_sacks, res.spec)
