"""The docs site's reference pages are generated from the code (scripts/generate_docs.py):
the checked-in pages are what the code gives now, and cover every verb, key and rule."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from heronbridge.cli import DOCS, DOCS_PAGE, build_parser, docs_anchor, verb_parsers

ROOT = Path(__file__).resolve().parents[2]


def generator():
    spec = importlib.util.spec_from_file_location("generate_docs",
                                                  ROOT / "scripts" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", sorted(generator().PAGES))
def test_the_checked_in_page_is_the_generated_one(path):
    render = generator().PAGES[path]
    assert (ROOT / path).read_text() == render(), \
        f"{path} is stale: run python scripts/generate_docs.py"


def test_the_pages_do_not_depend_on_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HERONBRIDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HERONBRIDGE_STATE", "zk://127.0.0.1:2181/x")
    assert generator().stale() == []


def anchors(page: str) -> set[str]:
    text = (ROOT / page).read_text()
    return set(re.findall(r"\{#([\w-]+)\}", text)) | {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ ([^{\n]+?)\s*(?:\{#[\w-]+\})?$", text, re.M)}


def test_every_verb_has_a_section_and_its_help_ends_with_a_link_to_it():
    verbs = verb_parsers(build_parser())
    assert {"run", "submit", "migrate", "conform", "bench", "ui", "nimbus", "update",
            "storm fetch"} <= set(verbs)
    found = anchors(DOCS)
    for command, parser in verbs.items():
        anchor = docs_anchor(command)
        assert anchor in found, command
        assert parser.format_help().rstrip().endswith(
            f"docs: heronbridge docs {DOCS_PAGE}#{anchor}"), command
    assert Path(ROOT, "docs", DOCS_PAGE + ".md") == ROOT / DOCS


def test_every_config_key_has_a_row():
    from heronbridge.runtime.config import KEYS

    page = (ROOT / "docs" / "reference" / "config.md").read_text()
    assert KEYS and all(f"| `{name}` |" in page for name in KEYS)
    # Storm's keys are shown with the key the runtime reads for them.
    assert "| `topology.workers` | `topology.stmgrs` |" in page


def test_every_codemod_rule_has_a_section_that_its_markers_name():
    from heronbridge.migrate.manual import MANUAL
    from heronbridge.migrate.rule import manual
    from heronbridge.migrate.rules import RULES

    assert set(MANUAL) == {rule.ID for rule in RULES}
    found = anchors("docs/reference/codemod.md")
    for rule in RULES:
        page, anchor = manual(rule.ID, rule.NAME).split("'s ", 1)[1].split()[0].split("#")
        assert page == "docs/reference/codemod.md"
        assert anchor in found, (rule.ID, anchor)


def test_a_stale_page_is_found(tmp_path, monkeypatch):
    module = generator()
    monkeypatch.setattr(module, "ROOT", tmp_path)
    for source in ("docs/benchmarks.md", "docs/bench/bench.json"):  # what it renders from
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source).write_text((ROOT / source).read_text())
    for path, render in module.PAGES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(render())
    assert module.stale() == []
    page = tmp_path / "docs" / "reference" / "config.md"
    page.write_text(page.read_text().replace("| `topology.debug` |", "| `topology.dbg` |"))
    assert module.stale() == ["docs/reference/config.md"]


def test_the_benchmarks_page_shows_the_table_of_the_run_that_drew_its_plots():
    import json

    from heronbridge.conformance.bench.report import markdown

    result = json.loads((ROOT / "docs" / "bench" / "bench.json").read_text())
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    run = page.split(generator().BENCH_RUN[0], 1)[1].split(generator().BENCH_RUN[1], 1)[0]
    assert run.strip() == markdown(result).strip()
    assert list(result["systems"]) == ["storm", "runtime"]  # both, in the order they ran
    for plot in ("throughput.png", "latency.png"):
        assert (ROOT / "docs" / "bench" / plot).is_file() and f"(bench/{plot})" in page
