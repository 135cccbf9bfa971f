"""Properties every case must have, and the examples too: the output compiles, a second
run changes nothing (no marker twice), and no comment of the input is lost."""

from __future__ import annotations

import io
import shutil
import tokenize
from pathlib import Path

import pytest
from cases import CASES, Case
from test_rules import run_case

from heronbridge.migrate.runner import migrate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def comments(text: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [t.string for t in tokens if t.type == tokenize.COMMENT]


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def check_properties(root: Path, before: dict[str, str]) -> None:
    after = tree(root)
    for rel, text in after.items():
        compile(text, rel, "exec")
        kept = comments(text)
        for comment in comments(before.get(rel, "")):
            assert comment in kept, f"{rel}: lost {comment!r}"
    again = migrate(root, jobs=1)
    assert not again.changed, [f.path for f in again.changed]
    assert tree(root) == after
    for rel, text in after.items():
        for block in marker_blocks(text):  # one statement's markers: none twice
            assert len(block) == len(set(block)) or rel.endswith("cases.py"), (rel, block)


def marker_blocks(text: str) -> list[list[str]]:
    """The TODO markers above each statement: runs of consecutive marker lines."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip().startswith("# TODO(heronbridge:"):
            blocks[-1].append(line.strip())
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_properties(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
    check_properties(tmp_path, {**case.before, **case.extra})


def test_examples_properties(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".ruff_cache", "__pycache__"))
    before = tree(root)
    outcome = migrate(root, jobs=2)
    assert not outcome.failed
    assert {Path(f.path).parent.parent.name for f in outcome.changed} >= {
        "wordcount", "batching", "reliable", "direct", "multistream", "rtac", "shellbolt"}
    check_properties(root, before)
