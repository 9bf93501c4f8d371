"""The documentation site (mkdocs.yml, docs/): it builds in strict mode, its
references are complete, and the repository's LICENSE and CITATION.cff agree
with the package.

- The site is built once (``mkdocs build --strict`` into a temporary
  directory, a few seconds): a broken link, a missing anchor, a page left out
  of the navigation or a docstring mkdocstrings cannot render fails it.
- docs/reference/scenario-file.md has one table per part of a scenario file;
  each must list exactly the keys the loader accepts there, read from the
  loader's own key lists (``tcplab.scenario.RUN_KEYS``, ``FLOW_KEYS``, ...),
  so a key added to the code and not to the reference fails here.
- The generated pages (command line, algorithms, disciplines) hold every
  subcommand and option, every algorithm and discipline and their parameters.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

import tcplab
from tcplab import cli, generate, scenario, topology, workload
from tcplab.sweep import grid

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference" / "scenario-file.md"
sys.path.insert(0, str(ROOT / "scripts"))
import mkdocs_hooks  # noqa: E402  (scripts/ is not a package)

# -- the build ---------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built with ``mkdocs build --strict``; its directory."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    # The hooks import tcplab: the same one this test imported.
    env["PYTHONPATH"] = os.pathsep.join([str(Path(tcplab.__file__).parent.parent), env.get("PYTHONPATH", "")])
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - t0
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}"
    print(f"mkdocs build --strict: {took:.1f} s")
    return out


def page_text(site: Path, page: str) -> str:
    """A built page's text: tags removed, entities decoded."""
    raw = (site / page).read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def test_site_builds_in_strict_mode_with_every_page(site):
    for page in ["index.html", "reference/scenario-file.html", "reference/api.html", "reference/cli.html",
                 "reference/algorithms.html", "reference/disciplines.html", "reference/cc-algorithms.html",
                 "papers/index.html", "papers/mv-highspeed.html", "tutorials/index.html"]:
        assert (site / page).is_file(), page
    # mkdocstrings rendered the API from the docstrings (Sphinx roles turned into code)
    api = page_text(site, "reference/api.html")
    assert "Simulate one run and return its Results" in api
    assert ":class:" not in api and ":meth:" not in api


def test_docstrings_are_rewritten_for_markdown():
    """scripts/griffe_sphinx_roles.py: Sphinx roles, literal-block markers and two-space nested lists."""
    import griffe_sphinx_roles as g

    assert g.markdown_of("Returns :class:`Results`, see :func:`~tcplab.units.parse_rate`.") == \
        "Returns `Results`, see `parse_rate`."
    assert g.markdown_of("Example::\n\n    x = 1\n") == "Example:\n\n    x = 1\n"
    assert g.markdown_of("* top\n  - nested\n    more\n") == "* top\n    - nested\n    more\n"
    assert g.markdown_of("no list\n  two spaces stay\n") == "no list\n  two spaces stay\n"


# -- the scenario-file reference ----------------------------------------------

def sections(markdown: str) -> dict[str, str]:
    """Heading text -> the text under it, up to the next heading of the same
    or a higher level (so a section includes its subsections)."""
    lines = markdown.splitlines()
    heads = [(i, len(m.group(1)), m.group(2).strip()) for i, line in enumerate(lines)
             if (m := re.match(r"^(#{1,6}) (.+)$", line))]
    out = {}
    for n, (i, level, title) in enumerate(heads):
        end = next((j for j, lv, _ in heads[n + 1:] if lv <= level), len(lines))
        out[title] = "\n".join(lines[i + 1:end])
    return out


def table_keys(text: str) -> list[str]:
    """The keys a section's tables document: the code spans in each row's first cell."""
    keys = []
    for line in text.splitlines():
        m = re.match(r"^\|([^|]*)\|", line)
        if m and not set(m.group(1).strip()) <= set("-"):
            keys += re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", m.group(1))
    return keys


def params_of(fn) -> list[str]:
    """A generator's keyword parameters as a description gives them (``seed`` is the top-level one)."""
    return [p for p in inspect.signature(fn).parameters if p != "seed"]


def accepted_keys() -> dict[str, list[str]]:
    """Section heading of scenario-file.md -> the keys the loader accepts there."""
    loss = ["kind"] + [k for req, opt in scenario.LOSS_KEYS.values() for k in (*req, *opt)]
    sources = ["kind"] + [k for keys in scenario.SOURCE_KINDS.values() for k in keys]
    delay = ["dist"] + [k for keys in topology.DELAY_LAW_KEYS.values() for k in keys]
    workloads = ["kind"] + [f.name for cls in (workload.ShortLived, workload.LongLived) for f in fields(cls)]
    size_laws = ["kind"] + [f.name for cls in workload.SIZE_LAWS.values() for f in fields(cls)]
    out = {
        "Top level": scenario.TOP_KEYS,
        "`[run]`": scenario.RUN_KEYS,
        "`[dumbbell]`": scenario.DUMBBELL_KEYS,
        "`[[nodes]]`": [f.name for f in fields(scenario.Node)],
        "`[[links]]`": [f.name for f in fields(scenario.Link)],
        "Random loss (`loss`)": loss,
        "Queue disciplines (`queue`)": list(scenario.QUEUE_KEYS),
        "`[[routes]]`": [f.name for f in fields(scenario.Route)],
        "`[[flows]]`": scenario.FLOW_KEYS,
        "Flow files (`files`)": scenario.FILE_KEYS,
        "Unresponsive sources (`source`)": sources,
        "Loss classifier (`loss_classifier`)": list(scenario.LOSS_CLASSIFIER_KEYS),
        "Generated scenarios": generate.GEN_KEYS,
        "Delay laws": delay,
        "`[[traffic]]`": generate.TRAFFIC_KEYS,
        "Workloads": workloads,
        "Size laws": size_laws,
        "`[access]`": generate.ACCESS_KEYS,
        "`[lossy]`": generate.LOSSY_KEYS,
        "Sweep files": grid.SWEEP_KEYS,
    }
    for kind, fn in topology.GENERATORS.items():
        out[f"`{kind}`"] = params_of(fn)
    return out


def test_scenario_reference_documents_exactly_the_keys_the_loader_accepts():
    secs = sections(REFERENCE.read_text(encoding="utf-8"))
    problems = []
    for title, keys in accepted_keys().items():
        if title not in secs:
            problems.append(f"no section {title!r}")
            continue
        documented = table_keys(secs[title])
        if title == "`[dumbbell]`":  # (its flow_options subsection lists no keys of its own)
            documented = table_keys(secs[title].split("### `[dumbbell.flow_options]`")[0])
        missing = [k for k in keys if k not in documented]
        extra = sorted(set(documented) - set(keys))
        twice = sorted({k for k in documented if documented.count(k) > 1})
        if missing:
            problems.append(f"{title}: accepted by the loader but not documented: {', '.join(missing)}")
        if extra:
            problems.append(f"{title}: documented but not accepted by the loader: {', '.join(extra)}")
        if twice:
            problems.append(f"{title}: documented twice: {', '.join(twice)}")
    assert not problems, "docs/reference/scenario-file.md is out of step with the loader:\n" + "\n".join(problems)


def test_every_topology_generator_has_its_section():
    topo = sections(REFERENCE.read_text(encoding="utf-8"))["`[topology]`"]
    headings = re.findall(r"^### `([a-z_]+)`$", topo, re.M)
    assert headings == list(topology.GENERATORS)


def test_flow_options_lists_the_flow_keys_the_dumbbell_sets_itself():
    text = sections(REFERENCE.read_text(encoding="utf-8"))["`[dumbbell.flow_options]`"]
    prose = text.split("```")[0]
    named = re.findall(r"`([a-z_]+)`", prose)
    assert set(named) - {"[[flows]]"} == set(scenario.FLOW_KEYS) - set(scenario.FLOW_OPTION_KEYS)


def test_the_table_check_catches_a_missing_key():
    """The check above can fail: a reference without a row misses that key."""
    text = sections(REFERENCE.read_text(encoding="utf-8"))["`[run]`"]
    cut = "\n".join(line for line in text.splitlines() if not line.startswith("| `loss_trace`"))
    assert "loss_trace" in table_keys(text)
    assert "loss_trace" not in table_keys(cut)


def test_scenario_reference_example_files_load(tmp_path):
    """The reference's TOML examples that are whole scenarios load with the loader."""
    blocks = re.findall(r"```toml\n(.*?)```", REFERENCE.read_text(encoding="utf-8"), re.S)
    loaded = 0
    for text in blocks:
        doc = tomllib.loads(text)
        if "dumbbell" in doc and "n_flows" in doc["dumbbell"]:
            sc = scenario.scenario_from_dict(doc)
            sc.validate()
            loaded += 1
    assert loaded >= 2


def test_generation_example_generates():
    text = sections(REFERENCE.read_text(encoding="utf-8"))["Generated scenarios"]
    doc = tomllib.loads(re.search(r"```toml\n(.*?)```", text, re.S).group(1))
    doc["duration"] = "1s"  # (only the description's keys are checked here, not a 600 s run)
    frozen = generate.generate_from_dict(doc)
    assert len(frozen.spec(generate.Mix.all("reno"))["flows"]) == 140


# -- the generated pages -------------------------------------------------------

def option_strings(parser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings]


def test_cli_reference_has_every_subcommand_and_option(site):
    text = page_text(site, "reference/cli.html")
    subs = mkdocs_hooks.subcommands()
    assert "run" in subs and "sweep" in subs
    missing = [opt for opt in option_strings(cli._parser()) if opt not in text]
    for name, sub in subs.items():
        if f"tcplab {name}" not in text:
            missing.append(f"tcplab {name}")
        if name == "bench":  # bench parses its own flags: take them from its --help
            opts = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", mkdocs_hooks._bench_help())
            assert "--quick" in opts
        else:
            opts = option_strings(sub)
        missing += [f"tcplab {name} {o}" for o in opts if o not in text]
    assert not missing, f"missing from the CLI reference: {missing}"


def test_algorithm_and_discipline_pages_list_every_parameter(site):
    from tcplab.scenario import algorithm_catalog, discipline_catalog

    algos = page_text(site, "reference/algorithms.html")
    discs = page_text(site, "reference/disciplines.html")
    keys = page_text(site, "reference/scenario-file.html")
    for page, catalog in ((algos, algorithm_catalog()), (discs, discipline_catalog())):
        assert len(catalog) > 1
        for entry in catalog:
            assert entry["name"] in page and entry["name"] in keys
            for p in entry.get("params") or []:
                assert p["name"] in page, (entry["name"], p["name"])
    assert "<!-- generated" not in (site / "reference" / "scenario-file.html").read_text(encoding="utf-8")


# -- paths, LICENSE, CITATION ---------------------------------------------------

def test_no_reference_to_files_outside_the_repository():
    """The papers' restatements are in docs/papers/ and docs/reference/; nothing
    points at the old ../shared/spec or shared/reference any more."""
    roots = [ROOT / d for d in ("docs", "python", "crates", "examples", "scripts", "tests")]
    files = [p for r in roots for p in r.rglob("*") if p.is_file()] + list(ROOT.glob("*.*"))
    hits = []
    for path in files:
        if path.suffix not in (".py", ".md", ".toml", ".rs", ".sh", ".yml", ".cff") or path.name == "test_docs_site.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if "shared/spec" in line or "shared/reference" in line:
                hits.append(f"{path.relative_to(ROOT)}:{n}")
    assert not hits, f"references to shared/spec or shared/reference: {hits}"


def test_license_is_mit():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the tcplab developers" in text
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_citation_cff_parses_and_matches_the_package():
    doc = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert doc["cff-version"] == "1.2.0"
    assert str(doc["version"]) == tcplab.__version__
    assert doc["license"] == "MIT"
    assert doc["title"].startswith("tcplab")
    assert doc["authors"] == [{"name": "The tcplab developers"}]
    assert doc["abstract"].strip() and doc["message"].strip()
