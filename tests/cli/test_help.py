"""The command line lists every verb, each with its own --help."""

from __future__ import annotations

import argparse

import pytest
from testkit import heronbridge

from heronbridge.cli import build_parser


def verbs_of(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Every verb the parser knows, sub-verbs as 'storm fetch'."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(prefix + name)
                found += verbs_of(sub, f"{prefix}{name} ")
    return found


VERBS = verbs_of(build_parser())


def test_the_verb_list_is_read_from_the_parser():
    assert {"run", "submit", "list", "kill", "activate", "deactivate", "migrate", "conform",
            "bench", "storm", "storm fetch"} <= set(VERBS)


def test_help_lists_every_verb():
    result = heronbridge("--help")
    assert result.returncode == 0
    for verb in VERBS:
        assert verb.split()[0] in result.stdout


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_has_its_own_help(verb):
    result = heronbridge(*verb.split(), "--help")
    assert result.returncode == 0
    assert f"usage: heronbridge {verb}" in result.stdout


def test_a_missing_topology_file_is_a_clear_error(tmp_path):
    result = heronbridge("run", str(tmp_path / "nope.py"), "--home", str(tmp_path))
    assert result.returncode == 1
    assert "expected a topology file" in result.stderr and "nope.py" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_topology_file_that_fails_to_import_is_a_clear_error(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("import no_such_module_here\n")
    result = heronbridge("run", str(bad), "--home", str(tmp_path))
    assert result.returncode == 1
    assert "failed to import" in result.stderr and "no_such_module_here" in result.stderr


def test_bad_options_are_clear_errors(tmp_path):
    result = heronbridge("run", "examples/runtime/wordcount.py", "-o", "novalue",
                         "--home", str(tmp_path))
    assert result.returncode == 1
    assert "-o expects KEY=VALUE, received 'novalue'" in result.stderr
