"""Each rule on before/after cases (tests/migrate/cases.py), through the runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import CASES, Case

from heronbridge.migrate.runner import migrate


def materialise(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_case(case: Case, root: Path):
    materialise(root, {**case.before, **case.extra})
    return migrate(root, jobs=1, rule_ids=list(case.rules) or None)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert not outcome.failed, [f.error for f in outcome.failed]
    for rel, before in {**case.before, **case.extra}.items():
        expected = case.after.get(rel, before)
        assert (tmp_path / rel).read_text() == expected, rel
    assert sorted(e.rule for e in outcome.todos) == sorted(case.todos)
