"""The README: a short landing page whose links resolve, and its two set-up commands (CI
runs the test command verbatim)."""

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


def test_the_readme_is_a_landing_page_of_150_lines_or_fewer():
    assert len(ROOT.joinpath("README.md").read_text().splitlines()) <= 150


def test_the_readme_s_links_reach_files_and_headings_that_exist():
    text = ROOT.joinpath("README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(link.startswith("docs/tutorials/") for link in links)
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            headings = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                        for h in re.findall(r"^#+ (.+)$", target.read_text(), re.M)}
            assert anchor in headings, link
