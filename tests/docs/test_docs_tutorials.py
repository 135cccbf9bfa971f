"""The tutorials cannot drift from what the commands print: each ```output block shows,
trimmed, what the bash block before it prints, and the tutorials that need nothing but
heronbridge (no Storm, Spark or ZooKeeper: those run in their own envs) are run here as
shown, once each, in order, and their output compared with the blocks.

An output block's lines must appear in the real output in that order; a line `...`
stands for any lines, `…` within a line for any text, a number for any number, a
12-digit hex id for any such id; table borders and runs of spaces do not count. Runs
use `-t 3` for the tutorial's `-t 10` (the same output, seconds sooner), a home and /tmp
of their own."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from testkit import HERONBRIDGE

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
BOX = re.compile(r"[\u2500-\u257f]+")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
HEX_ID = re.compile(r"[0-9a-f]{12}")
# Each tutorial that runs here: what it needs beyond heronbridge's own environment.
HERE = ("run-streamparse", "migrate-to-heronpy", "exactly-once")
# Commands that need what this env lacks (Storm, the conformance extra): not run here.
ELSEWHERE = ("heronbridge conform", "heronbridge bench", "heronbridge storm")


@dataclass
class Step:
    commands: list[str]
    output: str | None  # the block shown after them, if any


def steps(page: Path) -> list[Step]:
    found: list[Step] = []
    for lang, body in BLOCK.findall(page.read_text()):
        if lang == "bash":
            found.append(Step([c for c in body.splitlines() if c.strip()], None))
        elif lang == "output":
            assert found and found[-1].output is None, f"{page.name}: output without commands"
            found[-1].output = body
    return found


def normal(line: str) -> str:
    return " ".join(BOX.sub(" ", line).split())


def pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern: numbers, hex ids and `…` stand for what varies."""
    parts = []
    for piece in re.split(r"(…|[0-9a-f]{12}|\d[\d,]*(?:\.\d+)?)", normal(shown)):
        if piece == "…":
            parts.append(".*")
        elif HEX_ID.fullmatch(piece):
            parts.append("[0-9a-f]{12}")
        elif NUMBER.fullmatch(piece):
            parts.append(r"(?:\d[\d,]*(?:\.\d+)?|-)")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def missing(shown: str, printed: str) -> list[str]:
    """The shown lines the printed output lacks (in order); [] when it has them all."""
    lines = [normal(line) for line in printed.splitlines()]
    at, lacking = 0, []
    for line in shown.splitlines():
        if not line.strip() or line.strip() == "...":
            continue
        wanted = pattern(line)
        found = next((i for i in range(at, len(lines)) if wanted.fullmatch(lines[i])), None)
        if found is None:
            lacking.append(line)
        else:
            at = found + 1
    return lacking


def test_a_shown_output_matches_what_varies_and_nothing_else():
    printed = ("wordcount running: every task registered in 2.3s; logs in /h/x\n"
               "┃ component  ┃ tasks ┃ emitted ┃\n│ count_bolt │     2 │ 612,345 │\n"
               "submitted wc (wc-0123456789ab): running\nkilled wc\n")
    shown = ("wordcount running: every task registered in 49.2s; logs in …\n...\n"
             "│ count_bolt │ 2 │ 6,007 │\nsubmitted wc (wc-b27587075dee): running\n")
    assert missing(shown, printed) == []
    assert missing("killed wc\nsubmitted wc (wc-b27587075dee): running\n", printed) == \
        ["submitted wc (wc-b27587075dee): running"]  # out of order
    assert missing("│ count_bolt │ 3 │ 6,007 │\n", printed) == []  # a number is any number
    assert missing("│ count_bolt │ x │ 6,007 │\n", printed) == ["│ count_bolt │ x │ 6,007 │"]
    assert missing("killed wordcount\n", printed) == ["killed wordcount"]


def test_every_tutorial_opens_with_what_it_needs_and_shows_output():
    for page in sorted(TUTORIALS.glob("*.md")):
        text = page.read_text()
        assert "**You need**" in text.split("\n## ", 1)[0], page.name
        if page.stem in HERE:
            assert any(s.output for s in steps(page)), page.name


class Shell:
    """The tutorial's commands, as a user types them: heronbridge with a home of its own,
    /tmp inside the test's folder."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        # Unbuffered: stdout and stderr interleave as on a terminal.
        self.env = {**os.environ, "HERONBRIDGE_HOME": str(self.home), "PYTHONUNBUFFERED": "1"}

    def words(self, command: str) -> list[str]:
        words = [w.replace("/tmp/", f"{self.tmp}/") for w in shlex.split(command)]
        if words[0] == "heronbridge":
            words[0] = HERONBRIDGE
            if "-t" in words:
                words[words.index("-t") + 1] = "3"
        elif words[:2] == ["pip", "install"]:
            words = [sys.executable, "-m", "pip", *words[1:]]
        return words

    def run(self, command: str) -> str:
        done = subprocess.run(self.words(command), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=self.env,
                              timeout=600, check=False)
        assert done.returncode == 0, f"{command}\n{done.stdout[-4000:]}"
        return done.stdout.replace(str(self.home), "~/.heronbridge") \
            .replace(f"{self.tmp}/", "/tmp/")


def run_tutorial(name: str, tmp_path: Path) -> Shell:
    shell = Shell(tmp_path)
    for step in steps(TUTORIALS / f"{name}.md"):
        if any(c.startswith(ELSEWHERE) for c in step.commands):
            assert step.output is None, f"{name}: its output is checked where it can run"
            continue
        printed = "".join(shell.run(c) for c in step.commands)
        if step.output is not None:
            assert missing(step.output, printed) == [], f"{name}: printed\n{printed}"
    return shell


@pytest.mark.integration
def test_run_your_streamparse_project(tmp_path):
    run_tutorial("run-streamparse", tmp_path)


@pytest.mark.integration
def test_migrate_it_to_heronpy(tmp_path):
    before = (ROOT / "examples" / "storm_topologies" / "wordcount" / "src" / "bolts" /
              "wordcount.py").read_text()
    run_tutorial("migrate-to-heronpy", tmp_path)
    after = (tmp_path / "wordcount-heronpy" / "src" / "bolts" / "wordcount.py").read_text()
    assert after != before and "heronpy" in after
    assert json.loads((tmp_path / "wordcount-migrate.json").read_text())["summary"]


@pytest.mark.integration
def test_exactly_once_with_checkpoints(tmp_path):
    run_tutorial("exactly-once", tmp_path)


def test_compare_throughput_and_latency_shows_the_run_the_benchmarks_page_has():
    """Its `bench` step needs Storm (the conformance env's); what it shows is the run
    whose table and plots docs/benchmarks.md has: the table bench prints from that run's
    result (docs/bench/bench.json) carries every shown line."""
    from rich.console import Console

    from heronbridge.conformance.bench.report import table

    [step] = [s for s in steps(TUTORIALS / "throughput-and-latency.md") if s.output]
    assert step.commands == ["heronbridge bench --project examples/storm_topologies/wordcount "
                             "-o wordcount.rounds=1000000000"]
    console = Console(width=200, record=True)
    console.print(table(json.loads((ROOT / "docs" / "bench" / "bench.json").read_text())))
    assert missing(step.output, console.export_text()) == []
