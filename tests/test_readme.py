"""The README's two set-up commands: CI runs the test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands() -> list[str]:
    section = ROOT.joinpath("README.md").read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, re.DOTALL)


def test_the_readme_has_exactly_two_setup_commands():
    found = commands()
    assert len(found) == 2 and all("\n" not in c for c in found)
    assert "heronbridge run" in found[0]
    assert "tox" in found[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = [line for line in ROOT.joinpath(".ci", "run").read_text().splitlines()
          if line and not line.startswith(("#", "set ", "cd "))]
    assert ci == [commands()[1]]


def test_the_main_job_command_names_a_streamparse_project_that_exists():
    path = re.search(r"heronbridge run --project (\S+)", commands()[0]).group(1)
    assert (ROOT / path / "config.json").is_file()
    assert (ROOT / path / "topologies").is_dir()
