"""`tcplab bench --profile`: folding perf's stacks, the flamegraph, the command.

Linux perf is not installed in CI, so where the command runs end to end a
stand-in `perf` (written here) runs the real benchmark child under
`record` and prints a fixed `perf script` text, in perf's own format (lines
copied from perf 6.1 on a tcplab run), under `script`.
"""

import json
import os
import stat
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from tcplab import _core
from tcplab.devtools import profile as prof
from tcplab.devtools.bench import main as bench_main

CORE = "/work/x/python/tcplab/_core.abi3.so"
PY = "/usr/lib/libpython3.11.so.1.0"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"

# The frames from the extension's entry point to the event loop, root last
# (perf prints the leaf first), with the glue perf shows between them.
_ENTRY = f"""\
\t          4a827c tcplab_core::world::World::dispatch+0x133c (inlined)
\t          4a827c tcplab_core::world::World::run_with_progress+0x133c (inlined)
\t          4a827c tcplab_core::world::World::run+0x133c ({CORE})
\t          12e107 _core::run::{{{{closure}}}}::{{{{closure}}}}+0x807 (inlined)
\t          12e107 core::ops::function::FnOnce::call_once+0x807 (inlined)
\t          12e107 <core::panic::unwind_safe::AssertUnwindSafe<F> as core::ops::function::FnOnce<()>>::call_once+0x807 (inlined)
\t          12e107 std::panicking::catch_unwind::do_call+0x807 (inlined)
\t          12e107 std::panic::catch_unwind+0x807 (inlined)
\t          12e107 _core::run::{{{{closure}}}}+0x807 (inlined)
\t          12e107 pyo3::marker::Python::allow_threads+0x807 (inlined)
\t          12e107 _core::run+0x807 (inlined)
\t          12e107 _core::__pyfunction_run+0x807 ({CORE})
\t          128be4 pyo3::impl_::trampoline::trampoline::{{{{closure}}}}+0x84 (inlined)
\t          128be4 pyo3::impl_::trampoline::trampoline+0x84 ({CORE})
\t          132040 _core::<impl _core::run::MakeDef>::_PYO3_DEF::trampoline+0x50 ({CORE})
\t          1a6ce2 cfunction_call+0x62 ({PY})
\t          2508e3 PyEval_EvalCode+0x223 ({PY})
\t           27249 __libc_start_call_main+0x79 ({LIBC})
"""  # noqa: E501 (perf's frame lines as they are)

# `perf script` ends each sample's first line with a space, written \x20 here so that it shows (and stays).
SCRIPT = (
    # Outside tcplab: the interpreter starting.
    f"""python 19121 36980.631666:     200040 cpu-clock:\x20
\t          1f00aa _PyEval_EvalFrameDefault+0x2e52 ({PY})
\t          2508e3 PyEval_EvalCode+0x223 ({PY})
\t           27249 __libc_start_call_main+0x79 ({LIBC})

"""
    # The event loop, twice: a link's queue walk inlined into sampling.
    + 2 * (f"""python 19121 36980.706380:     200040 cpu-clock:\x20
\t          4aadfe tcplab_core::net::link::Link::advance+0x7de (inlined)
\t          4aadfe tcplab_core::world::World::sample+0x7de ({CORE})
""" + _ENTRY + "\n")
    # A page fault in the kernel under a FIFO write: the stack ends at the kernel's first frame.
    + f"""python 19121 36980.707000:     200040 cpu-clock:\x20
\t ffffffff8100abcd clear_page_erms+0x7 ([kernel.kallsyms])
\t ffffffff8100bcde asm_exc_page_fault+0x26 ([kernel.kallsyms])
\t          4aadfe tcplab_core::net::link::Ring::push_back+0x1e (inlined)
\t          4aadfe tcplab_core::world::World::flush+0x1e ({CORE})
""" + _ENTRY + "\n"
    # malloc under a ring's growth: the stack ends at the C library's frame.
    + f"""python 19121 36980.706980:     200040 cpu-clock:\x20
\t           a1234 _int_malloc+0x1ff ({LIBC})
\t           a2345 malloc+0x2a ({LIBC})
\t          4b0000 alloc::raw_vec::finish_grow+0x12 (inlined)
\t          4b0000 tcplab_core::tcp::sender::SegMetas::resize+0x40 ({CORE})
""" + _ENTRY + "\n")

LOOP = ("_core::__pyfunction_run;_core::run;tcplab_core::world::World::run;"
        "tcplab_core::world::World::run_with_progress;tcplab_core::world::World::dispatch")


def test_fold_starts_at_tcplab_drops_glue_and_ends_at_the_first_foreign_frame():
    folded = prof.fold(SCRIPT)
    assert dict(folded) == {
        prof.OUTSIDE: 1,
        LOOP + ";tcplab_core::world::World::sample;tcplab_core::net::link::Link::advance": 2,
        LOOP + ";tcplab_core::tcp::sender::SegMetas::resize;alloc::raw_vec::finish_grow;malloc [libc.so.6]": 1,
        LOOP + ";tcplab_core::world::World::flush;tcplab_core::net::link::Ring::push_back;"
               "asm_exc_page_fault [kernel.kallsyms]": 1,
    }


def test_tops_count_a_sample_once_per_function_and_inlined_library_code_as_its_caller():
    t = prof.tops(prof.fold(SCRIPT))
    assert t["samples"] == 5
    own = {r["function"]: r["share"] for r in t["self"]}
    # finish_grow and malloc are library code, the page fault the kernel's:
    # those samples are SegMetas::resize's and Ring::push_back's.
    assert own == {"tcplab_core::net::link::Link::advance": 0.4, prof.OUTSIDE: 0.2,
                   "tcplab_core::tcp::sender::SegMetas::resize": 0.2, "tcplab_core::net::link::Ring::push_back": 0.2}
    total = {r["function"]: r["samples"] for r in t["total"]}
    assert total["tcplab_core::world::World::run"] == 4
    assert total["tcplab_core::world::World::sample"] == 2
    assert total["_core::run"] == 4  # the extension's own functions are tcplab's
    # tcplab's functions only: not library code, and not the outside samples' label.
    assert "alloc::raw_vec::finish_grow" not in total and prof.OUTSIDE not in total


def test_the_flamegraph_is_svg_with_widths_in_proportion_to_samples():
    folded = prof.fold(SCRIPT)
    doc = ET.fromstring(prof.svg(folded, "t & <title>", width=1000))
    ns = {"s": "http://www.w3.org/2000/svg"}
    frames = {}
    for g in doc.findall("s:g", ns):
        name = g.find("s:title", ns).text.rsplit(" (", 1)[0]
        rect = g.find("s:rect", ns)
        frames.setdefault(name, []).append((float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))))
    scale = (1000 - 20) / 5
    (outside,) = frames[prof.OUTSIDE]
    (root,) = frames["_core::__pyfunction_run"]
    assert outside[2] == pytest.approx(1 * scale, abs=0.01) and root[2] == pytest.approx(4 * scale, abs=0.01)
    assert root[0] == pytest.approx(outside[0] + outside[2], abs=0.01)  # side by side, sorted by name
    (adv,) = frames["tcplab_core::net::link::Link::advance"]
    (mal,) = frames["malloc [libc.so.6]"]
    assert adv[2] == pytest.approx(2 * scale, abs=0.01) and mal[2] == pytest.approx(scale, abs=0.01)
    assert adv[1] < root[1]  # callees above their callers
    assert "t &amp; &lt;title&gt;" in prof.svg(folded, "t & <title>")


def test_a_frame_narrower_than_a_tenth_of_a_pixel_is_left_out_with_its_callees():
    folded = {"a;b": 100_000, "a;c;d;e;f": 1}
    doc = prof.svg(folded, "x", width=1000)
    assert "<title>a (100001 samples" in doc and "<title>b (100000 samples" in doc
    assert "<title>c (" not in doc and "<title>f (" not in doc
    assert 'height="' + str(2 * 16 + 8 + 2 * 16 + 10) + '"' in doc.split("\n")[0]


@pytest.fixture(autouse=True)
def _no_host_sampling_limit(monkeypatch):
    """The stand-in perfs sample nothing: this host's perf limit must not
    refuse the default 499 Hz (the kernel can lower it at run time)."""
    monkeypatch.setattr(prof, "max_frequency", lambda: None)


def _stand_in(tmp_path, body: str) -> str:
    """An executable `perf` in `tmp_path` running Python `body`."""
    exe = tmp_path / "perf"
    exe.write_text(f"#!{sys.executable}\n{body}")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


@pytest.fixture
def fake_perf(tmp_path):
    """A `perf` that runs the command it is given under `record` (the real
    benchmark child) and prints SCRIPT under `script`."""
    text = tmp_path / "script.txt"
    text.write_text(SCRIPT)
    return _stand_in(tmp_path, textwrap.dedent(f"""\
        import subprocess, sys
        args = sys.argv[1:]
        if args[0] == "record":
            out = args[args.index("-o") + 1]
            rc = subprocess.call(args[args.index("--") + 1:])
            open(out, "w").write("fake perf data")
            sys.exit(rc)
        if args[0] == "script":
            sys.stdout.write(open({str(text)!r}).read())
            sys.exit(0)
        sys.exit(3)
        """))


def test_the_command_writes_the_flamegraph_and_reports_the_run(fake_perf, tmp_path, capsys):
    svg, folded, js = tmp_path / "f.svg", tmp_path / "f.folded", tmp_path / "p.json"
    rc = bench_main(["--profile", "S1", "--quick", "--perf", fake_perf, "--svg", str(svg), "--folded", str(folded),
                     "--json", str(js)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "profile of S1" in out and "Link::advance" in out and str(svg) in out
    res = json.loads(js.read_text())
    # The run's figures are the real child's (S1 quick: 20 s simulated).
    assert res["simulated_s"] == 20 and res["events"] > 0 and res["packet_hops"] > 0
    assert res["ns_per_packet_hop"] == pytest.approx(res["wall_s"] * 1e9 / res["packet_hops"])
    assert res["samples"] == 5 and res["frequency"] == 499
    ET.fromstring(svg.read_text())
    lines = folded.read_text().splitlines()
    assert sorted(int(ln.rsplit(" ", 1)[1]) for ln in lines) == [1, 1, 1, 2]


def test_a_scaling_point_takes_seconds_and_says_so(fake_perf, tmp_path):
    res = prof.profile("window=100", seconds=3.0, perf=fake_perf, svg_path=str(tmp_path / "w.svg"))
    assert res["simulated_s"] == 3.0 and res["description"].endswith(", 3 s")
    res = prof.profile("algorithm=vegas", quick=True, perf=fake_perf, svg_path=str(tmp_path / "v.svg"))
    assert "vegas" in res["description"] and res["simulated_s"] == 2.0


def test_a_flows_point_is_measured_after_its_warm_up_as_in_the_curve(fake_perf, tmp_path, capsys):
    res = prof.profile("flows=10", quick=True, perf=fake_perf, svg_path=str(tmp_path / "f.svg"))
    assert res["warmup_s"] == 1.0 and res["simulated_s"] == 3.0
    # The event loop's figure is over the packet-hops after the warm-up:
    # those of the whole run less those of its first second.
    (sc,) = [r for r in _core.bench_scaling("flows", quick=True) if r["name"] == "flows=10"]
    first = _core.run(json.dumps(dict(json.loads(sc["spec_json"]), duration=1.0, measure_start=0.5)))
    measured = res["packet_hops"] - int(sum(first["links"]["packets_out"]))
    assert 0 < measured < res["packet_hops"]
    assert res["core_ns_per_packet_hop"] == pytest.approx(res["core_wall_s"] * 1e9 / measured)
    prof.print_report(res)
    out = capsys.readouterr().out
    assert "after the 1 s warm-up" in out and "warm-up included" in out
    # A duration given runs from the start.
    res = prof.profile("flows=10", quick=True, seconds=2.0, perf=fake_perf, svg_path=str(tmp_path / "g.svg"))
    assert res["warmup_s"] == 0.0
    assert res["core_ns_per_packet_hop"] == pytest.approx(res["core_wall_s"] * 1e9 / res["packet_hops"])


def test_errors_name_the_option(tmp_path, capsys, fake_perf):
    assert bench_main(["--profile", "S9", "--perf", fake_perf]) == 2
    err = capsys.readouterr().err
    assert "--profile: unknown scenario 'S9'" in err and "flows=10000" in err and "algorithm=cubic" in err
    assert bench_main(["--profile", "S1", "--quick", "--perf", str(tmp_path / "no-perf")]) == 2
    assert "--perf:" in capsys.readouterr().err
    assert bench_main(["--profile", "S1", "--quick", "--perf", fake_perf, "--frequency", "0"]) == 2
    assert "--frequency: must be a positive" in capsys.readouterr().err
    assert bench_main(["--profile", "S1", "--perf", fake_perf, "--seconds", "-1"]) == 2
    assert "--seconds: must be a positive number of seconds, got -1.0" in capsys.readouterr().err
    assert bench_main(["--profile", "S1", "--perf", fake_perf, "--seconds", "inf"]) == 2
    assert "--seconds: must be a positive number of seconds, got inf" in capsys.readouterr().err
    assert bench_main(["--profile", "", "--perf", fake_perf]) == 2
    assert "--profile: give a scenario name" in capsys.readouterr().err
    assert bench_main(["--svg", "x.svg", "--profile", "", "--perf", fake_perf]) == 2  # given, if empty
    assert "--profile: give a scenario name" in capsys.readouterr().err
    # A point the quick curves do not have is named as such, not as unknown.
    assert bench_main(["--profile", "flows=10000", "--quick", "--perf", fake_perf]) == 2
    err = capsys.readouterr().err
    assert "not a point of the curves with --quick" in err and "flows=100," in err
    for argv, msg in ((["--svg", "x.svg"], "--svg: applies to --profile"),
                      (["--frequency", "99"], "--frequency: applies to --profile"),
                      (["--profile", "S1", "--scaling", "flows"], "--profile: profiles one scenario on its own; "
                                                                  "drop --scaling")):
        with pytest.raises(SystemExit):
            bench_main(argv)
        assert msg in capsys.readouterr().err


def test_a_perf_that_may_not_sample_is_explained(tmp_path, capsys):
    exe = _stand_in(tmp_path, "import sys\nsys.stderr.write('Error: Access to performance monitoring and "
                              "observability operations is limited. perf_event_paranoid setting is 4\\n')\n"
                              "sys.exit(255)\n")
    assert bench_main(["--profile", "S1", "--quick", "--perf", exe, "--svg", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert "`perf record` failed (exit 255)" in err and "perf_event_paranoid" in err
    assert not os.path.exists(tmp_path / "x.svg")


def test_no_samples_is_an_error_not_an_empty_picture(tmp_path, capsys):
    exe = _stand_in(tmp_path, textwrap.dedent("""\
        import subprocess, sys
        args = sys.argv[1:]
        if args[0] == "record":
            rc = subprocess.call(args[args.index("--") + 1:])
            open(args[args.index("-o") + 1], "w").write("")
            sys.exit(rc)
        sys.exit(0)
        """))
    assert bench_main(["--profile", "S1", "--quick", "--perf", exe, "--svg", str(tmp_path / "x.svg")]) == 2
    assert "perf recorded no samples" in capsys.readouterr().err


def test_output_paths_are_checked_before_the_run_and_written_all_or_none(tmp_path, capsys):
    missing = tmp_path / "no-such-dir"
    svg = tmp_path / "ok.svg"
    # A perf that leaves a mark if it is run at all: the paths are checked first.
    mark = tmp_path / "perf-ran"
    exe = _stand_in(tmp_path, f"open({str(mark)!r}, 'w').close()\nraise SystemExit(1)\n")
    for argv, msg in ((["--svg", str(missing / "f.svg")], "--svg: the directory of"),
                      (["--svg", str(svg), "--folded", str(tmp_path)], "--folded:"),
                      (["--svg", str(svg), "--json", str(missing / "p.json")], "--json: the directory of")):
        assert bench_main(["--profile", "S1", "--quick", "--perf", exe] + argv) == 2
        assert msg in capsys.readouterr().err
        assert not svg.exists() and not missing.exists() and not mark.exists()
    # A write that fails midway leaves neither file (nor a temporary one).
    ro = tmp_path / "ro"
    ro.mkdir()
    with pytest.raises(prof.ProfileError, match="--folded: cannot write"):
        prof.write_all([("--svg", str(tmp_path / "a.svg"), "x"), ("--folded", str(ro / "sub" / "f.txt"), "y")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["perf", "ro"]


def test_truncated_glue_only_and_foreign_paths_are_folded_sensibly():
    # A stack perf cut short starts inside tcplab: marked, not a root of its own.
    cut = f"""python 1 1.0:     200040 cpu-clock:\x20
\t          4aadfe tcplab_core::net::link::Link::advance+0x7de (inlined)
\t          4aadfe tcplab_core::world::World::sample+0x7de ({CORE})
\tffffffffffffffff [unknown] ([unknown])
"""
    # A sample in pass-through frames alone keeps the last of them.
    glue = f"""python 1 1.0:     200040 cpu-clock:\x20
\t          128be4 pyo3::impl_::trampoline::trampoline+0x84 ({CORE})
\t          1a6ce2 cfunction_call+0x62 ({PY})
"""
    # An interpreter installed under a path that says "tcplab" is still the interpreter.
    env = "/home/u/envs/tcplab/lib/libpython3.11.so.1.0"
    foreign = SCRIPT.replace(PY, env)
    folded = prof.fold(cut + "\n" + glue + "\n" + foreign, ext="_core.abi3.so")
    assert folded[prof.TRUNCATED + ";tcplab_core::world::World::sample;tcplab_core::net::link::Link::advance"] == 1
    assert folded["pyo3::impl_::trampoline::trampoline"] == 1
    assert folded[prof.OUTSIDE] == 1
    assert folded[LOOP + ";tcplab_core::world::World::sample;tcplab_core::net::link::Link::advance"] == 2
    assert all(k for k in folded)


def test_a_failing_benchmark_child_is_not_blamed_on_perf(tmp_path, capsys):
    exe = _stand_in(tmp_path, "import sys\nsys.stderr.write('Traceback (most recent call last):\\n  x\\n"
                              "tcplab.SimulationError: boom\\n')\nsys.exit(1)\n")
    assert bench_main(["--profile", "S1", "--quick", "--perf", exe, "--svg", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert "--profile: the benchmark run failed: tcplab.SimulationError: boom" in err and "--perf" not in err


def test_a_frequency_above_perfs_limit_is_refused(fake_perf, monkeypatch, capsys):
    monkeypatch.setattr(prof, "max_frequency", lambda: 1000)
    assert bench_main(["--profile", "S1", "--quick", "--perf", fake_perf, "--frequency", "5000"]) == 2
    assert "--frequency: 5000 Hz is above this machine's limit for perf, 1000 Hz" in capsys.readouterr().err
