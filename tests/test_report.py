"""`tcplab report`: one self-contained HTML page, checked in a real headless Chromium.

Chromium comes from Debian's package (scripts/setup-system.sh, run by
scripts/setup.sh, installs it as root). Without it these tests skip and say
how to install it; under CI=true they fail.
"""

from __future__ import annotations

import os
import re
import subprocess

import tcplab
from conftest import require_program
from tcplab.cli import main
from tcplab.sweep import Campaign, Sweep


def chromium() -> str:
    return require_program(["chromium", "chromium-browser"], "chromium",
                           "the HTML report's test in a real headless browser")


def load_in_browser(html_path: str, tmp_path) -> str:
    """The DOM after the page loaded; also takes a screenshot and checks it is a real PNG."""
    exe = chromium()
    url = "file://" + os.path.abspath(html_path)
    # --disable-dev-shm-usage: Chromium dies by a signal when /dev/shm is small (containers often give 64 MB).
    # Debian's launcher means to add the flag then, but its test breaks when findmnt prints two lines.
    common = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
              "--disable-dev-shm-usage",
              f"--user-data-dir={tmp_path / 'chrome-profile'}", "--virtual-time-budget=5000"]
    dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = tmp_path / "shot.png"
    r = subprocess.run(common + [f"--screenshot={shot}", "--window-size=1200,1600", url], capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    return dom.stdout


def check_page(html_path: str, tmp_path, min_images: int = 1) -> str:
    text = open(html_path, encoding="utf-8").read()
    # self-contained: nothing fetched from anywhere
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", text)
    dom = load_in_browser(html_path, tmp_path)
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert "data-errors" not in body, f"JavaScript errors on load: {body}"
    n = int(re.search(r'data-images="(\d+)"', body).group(1))
    ok = int(re.search(r'data-images-ok="(\d+)"', body).group(1))
    assert n >= min_images and ok == n, f"{ok} of {n} figures decoded"
    return dom


def test_campaign_report_in_chromium(tmp_path):
    base = tcplab.Dumbbell(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="3s",
                           access_delay="uniform", seed=1, name="tiny")
    good = Sweep(base, grid={"buffer": ["0.5BDP", "1BDP", "2BDP"]}, zip={"rtt": ["20ms", "40ms"]}, seeds=2,
                 name="buffers")
    camp = Campaign(tmp_path / "camp")
    camp.run(good, workers=2, progress=False)
    spec = base.to_spec()
    bad = dict(spec, flows=[dict(f, cc={"algorithm": "nosuchcc", "params": {}}) for f in spec["flows"]])
    camp.run([({"case": "broken"}, bad)], workers=1, progress=False)
    camp.close()
    assert main(["report", str(tmp_path / "camp")]) == 0
    page = tmp_path / "camp" / "report.html"
    dom = check_page(str(page), tmp_path)
    assert "Sweep buffers" in dom and "tcplab " + tcplab.__version__ in dom
    assert "Seeds: 1, 2" in dom and "nosuchcc" in dom and "1 failed" in dom
    assert "bottleneck_rate" in dom  # the base scenario is shown


def test_run_output_report_in_chromium(tmp_path):
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="3s", name="one")
    path = tmp_path / "one.toml"
    sc.save_toml(path)
    assert main(["run", str(path), "-o", str(tmp_path / "run"), "--json"]) == 0
    assert main(["report", str(tmp_path / "run"), "-o", str(tmp_path / "r.html")]) == 0
    dom = check_page(str(tmp_path / "r.html"), tmp_path)
    assert "Run report: one" in dom and "r1-r2" in dom and "[dumbbell]" in dom


def test_reproduction_output_report_in_chromium(tmp_path):
    """The layout `tcplab reproduce ... --quick` writes: index.md, tables as CSV, figures as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = tmp_path / "mv-highspeed-quick"
    d.mkdir()
    (d / "index.md").write_text("# mv-highspeed reproduction\n\n**QUICK MODE: every run is shortened.**\n\n"
                                "tcplab 0.1.0; 2 runs.\n\n## Outputs\n\n- table1: table1.csv\n- figs: fig9.png\n")
    (d / "table1.csv").write_text("protocol,goodput_mbps\nNewReno,187.5\nCUBIC,190.1\n")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.savefig(d / "fig9.png")
    plt.close(fig)
    (d / "notes.png").write_text("not an image")
    assert main(["report", str(d)]) == 0
    dom = check_page(str(d / "report.html"), tmp_path)
    assert "QUICK MODE" in dom and "CUBIC" in dom and "fig9.png" in dom and "not a PNG file" in dom


def test_report_rejects_unknown_directories(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "neither a campaign" in capsys.readouterr().err
