"""scripts/diff_reproductions.py: which cells of a reproduction changed between two outputs."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("diff_reproductions",
                                               os.path.join(ROOT, "scripts", "diff_reproductions.py"))
dr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dr)

HEAD = "protocol,rtt_ms,buffer_bdp,goodput_mbps,drops,wall_s\n"


def write(d, rows):
    d.mkdir()
    (d / "table1.csv").write_text(HEAD + "".join(rows))


def test_only_the_changed_cells_are_listed_and_wall_clock_is_ignored(tmp_path, capsys):
    write(tmp_path / "a", ["NewReno,100,0.1,162.5,577,9.0\n", "CUBIC,100,0.1,194.8,1255,8.0\n"])
    write(tmp_path / "b", ["NewReno,100,0.1,162.5,403,3.0\n", "CUBIC,100,0.1,194.81234567,1255,1.0\n"])
    assert dr.main([str(tmp_path / "a"), str(tmp_path / "b"), "--cells"]) == 1
    out = capsys.readouterr().out.splitlines()
    # 2 rows x 2 metric columns; protocol, rtt_ms and buffer_bdp name the row, wall_s is not compared;
    # one line per changed row, numbers to 5 significant digits
    assert out == ["table1.csv: 2 of 4 cells changed, in 2 of 2 rows",
                   "  - protocol=NewReno, rtt_ms=100, buffer_bdp=0.1: drops 577→403",
                   "  - protocol=CUBIC, rtt_ms=100, buffer_bdp=0.1: goodput_mbps 194.8→194.81"]


def test_identical_outputs_exit_0_and_bad_input_exits_2(tmp_path, capsys):
    rows = ["NewReno,100,0.1,162.5,577,9.0\n", "NewReno,300,0.1,161.6,886,9.0\n"]
    write(tmp_path / "a", rows)
    write(tmp_path / "b", [r.replace("9.0", "1.0") for r in rows])
    assert dr.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out == "table1.csv: 0 of 4 cells changed, in 0 of 2 rows\n"
    assert dr.main([str(tmp_path / "a"), str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "table1.csv").write_text("protocol,goodput_mbps\nNewReno,1.0\n")
    assert dr.main([str(tmp_path / "a"), str(tmp_path / "c")]) == 1
    assert "the tables differ in rows: 2 against 1" in capsys.readouterr().out


def test_reordered_rows_new_columns_and_a_unit_change_compare_like_with_like(tmp_path, capsys):
    write(tmp_path / "a", ["NewReno,100,1.0,162.5,577,9.0\n", "NewReno,100,0.1,150.0,886,9.0\n"])
    (tmp_path / "b").mkdir()
    # the new version lists B = 0.1 BDP first, writes goodput in kbit/s and adds an interval column
    (tmp_path / "b" / "table1.csv").write_text(
        "protocol,rtt_ms,buffer_bdp,goodput_kbps,drops,wall_s,goodput_kbps_ci_low\n"
        "NewReno,100,0.1,150000.0,886,1.0,149000\nNewReno,100,1.0,162600.0,577,1.0,162000\n")
    assert dr.main([str(tmp_path / "a"), str(tmp_path / "b"), "--cells"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["table1.csv: 1 of 4 cells changed, in 1 of 2 rows; columns only in the new table: "
                   "goodput_kbps_ci_low",
                   "  - protocol=NewReno, rtt_ms=100, buffer_bdp=1.0: goodput_kbps 162500→162600"]
