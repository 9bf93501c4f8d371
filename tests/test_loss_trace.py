"""The drop and retransmission trace (``loss_trace``): off by default, and
when on, one row per drop, loss and retransmission, agreeing with the
counters, saved and reloaded as Parquet."""

import numpy as np
import pandas as pd

import tcplab
from tcplab.results import Results


def lossy(**kw):
    # Two flows, a small buffer (queue drops), random loss in both
    # directions (wire losses of data and ACKs), an ACK link slower than the
    # ACKs with a small queue (ACK drops), one flow with scripted losses:
    # every kind of row.
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="20Mbps", rtt="40ms", buffer=12, duration="8s",
                         recovery=["newreno", "sack"], loss=0.002, reverse_loss=0.002, **kw)
    links = sc.to_generic()
    for ln in links.links:
        if ln.name == "r2-r1":
            ln.rate, ln.buffer = "0.5Mbps", 3
    links.flows[0].drop_segments = [40, 41, 300]
    return links


def test_the_trace_is_off_by_default_and_leaves_the_run_unchanged():
    plain = tcplab.run(lossy())
    traced = tcplab.run(lossy(loss_trace=True))
    assert len(plain.drop_trace) == 0 and len(plain.retransmit_trace) == 0
    assert "loss_trace" not in lossy().to_spec()
    pd.testing.assert_frame_equal(plain.flows, traced.flows)
    pd.testing.assert_frame_equal(plain.flow_ts, traced.flow_ts)


def test_every_drop_loss_and_retransmission_has_a_row_that_agrees_with_the_counters():
    res = tcplab.run(lossy(loss_trace=True))
    d, x = res.drop_trace, res.retransmit_trace
    assert list(d.columns) == ["time", "link", "link_name", "flow", "flow_name", "packet", "seq", "retransmit",
                               "cause", "queue_packets"]
    assert list(x.columns) == ["time", "flow", "flow_name", "seq", "cause", "outstanding"]
    for _, ln in res.links.iterrows():
        on = d[d["link"] == ln["link"]]
        assert (on["cause"] == "queue").sum() == ln["drops"], ln["name"]
        assert (on["cause"] == "wire").sum() == ln["losses"], ln["name"]
    for _, f in res.flows.iterrows():
        mine = d[d["flow"] == f["flow"]]
        data, acks = mine[mine["packet"] == "data"], mine[mine["packet"] == "ack"]
        assert (data["cause"] == "queue").sum() == f["data_packets_dropped"]
        assert (data["cause"] != "queue").sum() == f["data_packets_lost"]
        assert (acks["cause"] == "queue").sum() == f["acks_dropped"]
        assert (acks["cause"] == "wire").sum() == f["acks_lost"]
        assert (x["flow"] == f["flow"]).sum() == f["retransmits"]
    # Each kind of row occurred, so the checks above were not vacuous.
    assert {"queue", "wire", "scripted"} <= set(d["cause"].astype(str))
    assert {"data", "ack"} <= set(d["packet"].astype(str))
    scripted = d[d["cause"] == "scripted"]
    assert sorted(scripted["seq"]) == [40, 41, 300] and (scripted["flow_name"] == "flow1").all()
    # Queue drops happen at a full queue: its length then is the buffer.
    q = d[(d["cause"] == "queue") & (d["link_name"] == "r1-r2")]
    assert (q["queue_packets"] == 12).all()
    assert (x.groupby("flow", observed=True)["time"].apply(lambda t: t.is_monotonic_increasing)).all()
    assert x["time"].is_monotonic_increasing and d["time"].is_monotonic_increasing
    assert set(x["cause"].astype(str)) <= {"fast_retransmit", "partial_ack", "sack", "rto", "after_rto"}
    # NewReno repairs with partial ACKs, SACK with NextSeg.
    assert set(x[x["flow"] == 0]["cause"].astype(str)) & {"partial_ack", "fast_retransmit"}
    assert "sack" in set(x[x["flow"] == 1]["cause"].astype(str))
    assert "partial_ack" not in set(x[x["flow"] == 1]["cause"].astype(str))


def test_the_trace_is_saved_as_parquet_and_reloaded(tmp_path):
    res = tcplab.run(lossy(loss_trace=True))
    res.save(tmp_path)
    assert (tmp_path / "drop_trace.parquet").exists() and (tmp_path / "retransmit_trace.parquet").exists()
    back = Results.load(tmp_path)
    pd.testing.assert_frame_equal(back.drop_trace, res.drop_trace)
    pd.testing.assert_frame_equal(back.retransmit_trace, res.retransmit_trace)
    # A run without the trace saves no trace files and reloads empty frames.
    plain = tcplab.run(lossy())
    plain.save(tmp_path / "plain")
    assert not (tmp_path / "plain" / "drop_trace.parquet").exists()
    back = Results.load(tmp_path / "plain")
    assert len(back.drop_trace) == 0 and list(back.retransmit_trace.columns)[:4] == ["time", "flow", "seq", "cause"]


def test_accounting_needs_the_trace_and_sorts_every_retransmission():
    res = tcplab.run(lossy(loss_trace=True))
    acc = res.retransmission_accounting()
    assert list(acc["flow"]) == [0, 1]
    total = (acc["repairs"] + acc["needless_rto"] + acc["needless_after_rto"] + acc["needless_dupack"]
             + acc["needless_tlp"])
    assert np.array_equal(total.to_numpy(), res.flows["retransmits"].to_numpy())
    assert (acc["needless_dupack"] == 0).all()
    try:
        tcplab.run(lossy()).retransmission_accounting()
    except ValueError as e:
        assert "loss_trace=True" in str(e)
    else:
        raise AssertionError("accounting without a trace must say how to get one")


def test_a_sweep_refuses_the_trace_rather_than_lose_it():
    import pytest

    from tcplab.sweep.grid import SweepError

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="1s", loss_trace=True)
    with pytest.raises(SweepError) as e:
        tcplab.Sweep(base, grid={"dumbbell.buffer": [5, 10]})
    assert e.value.field == "base.run.loss_trace" and "single runs" in e.value.problem
    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="1s")
    with pytest.raises(SweepError) as e:
        tcplab.Sweep(base, grid={"run.loss_trace": [True, False]})
    assert e.value.field == "run.loss_trace"
