#!/usr/bin/env python3
"""Render the compatibility matrix from the tests' results.

    python scripts/compatibility.py RESULTS_DIR [--check]

RESULTS_DIR holds the files the test runs wrote (`--compat-results`, one folder per tox
env: heronbridge.testing.matrix). The rows come from the lists that define them where
such lists exist (Nimbus's Thrift IDL, the UI's route table, the config keys, the CLI's
parser, sparse's own parser, the multilang commands the runtime answers, heronpy's
Streamlet class), so a row no test decides says "no test" instead of vanishing; a cell
says yes only when every test that decides it passed. Writes docs/compatibility.md and
the UI's copy (src/heronbridge/ui/compatibility.json); with --check, writes nothing and
exits 1 when either differs from what is checked in.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from heronbridge.testing.matrix import COLUMNS, FAILED, PASSED, SKIPPED

ROOT = Path(__file__).resolve().parents[1]
MARKDOWN = ROOT / "docs" / "compatibility.md"
UI_DATA = ROOT / "src" / "heronbridge" / "ui" / "compatibility.json"
ALL = tuple(COLUMNS)
RUNTIME = ("inprocess", "spark")  # a front door's rows: the runtime, on either scheduler


def storm_api() -> list[str]:
    # Storm's component API as streamparse and pystorm expose it (no list to read it from).
    return ["spouts", "bolts", "named streams", "direct emits", "task ids (need_task_ids)",
            "anchoring", "ack", "fail", "message timeouts", "max spout pending",
            "tick tuples", "BatchingBolt", "ReliableSpout", "ShellBolt (a non-Python bolt)",
            "component logs", "stateful bolts", "bytes values (as UTF-8 text)"]


def groupings() -> list[str]:
    from heronbridge.runtime.plan.logical import GROUPING_KINDS

    return list(GROUPING_KINDS)


def multilang() -> list[str]:
    from heronbridge.shims.common.peer import _HANDLERS

    # What a component sends (the commands Storm's side answers), then what Storm sends.
    return [f"{name} (from a component)" for name in _HANDLERS] + [
        f"{name} (to a spout)" for name in ("next", "ack", "fail", "activate", "deactivate")
    ] + ["tuple (to a bolt)", "heartbeat (to a bolt)", "handshake"]


def heronpy_api() -> list[str]:
    import ast
    from importlib.util import find_spec

    # The operators heronpy 0.20.5's Streamlet class defines, read from its source (importing
    # it as shipped fails under today's protobuf).
    folder = Path(find_spec("heronpy").submodule_search_locations[0])
    tree = ast.parse((folder / "streamlet" / "streamlet.py").read_text())
    streamlet = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Streamlet")
    operators = [f"Streamlet.{n.name}" for n in streamlet.body
                 if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return ["Spout and Bolt", "TopologyBuilder and Topology", "groupings",
            "stateful components", "Streamlet Builder and Runner", *operators]


def cli_verbs() -> list[str]:
    from heronbridge.cli import build_parser, verb_parsers

    return [f"heronbridge {command}" for command in verb_parsers(build_parser())]


def sparse_commands() -> list[str]:
    from streamparse.cli.sparse import load_subparsers

    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    load_subparsers(commands)
    return [f"sparse {name}" for name in sorted(commands.choices)]


def nimbus_methods() -> list[str]:
    from importlib.resources import files

    idl = files("heronbridge.nimbus").joinpath("nimbus.thrift").read_text()
    service = idl[idl.index("service Nimbus"):]
    return re.findall(r"^\s+[\w<>, ]+?\s(\w+)\(", service, re.M)


def rest_routes() -> list[str]:
    from heronbridge.ui.server import UIServer

    class Anything:  # stands for the server and the APIs the table's entries are bound to
        def __getattr__(self, name: str) -> Anything:
            return self

        def __call__(self, *args: object, **kwargs: object) -> None:
            return None

    table = UIServer._routes(Anything())  # type: ignore[arg-type]
    return [f"{method} {_readable(pattern.pattern)}" for method, pattern, kind, _ in table
            if kind in ("storm", "heron")]


def _readable(pattern: str) -> str:
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern.rstrip("$"))
    return path.replace("(?:/metrics)?", "[/metrics]").replace("\\d", "")


def config_keys() -> list[str]:
    from heronbridge.runtime.config import KEYS

    return sorted(KEYS)


@dataclass(frozen=True)
class Section:
    key: str  # a row's id is "key/name"
    title: str
    columns: tuple[str, ...]
    rows: Callable[[], list[str]]
    # (row name, column) -> why the feature cannot exist there: rendered "n/a", never "no
    # test"; a test that decides such a cell is an error (the reason would be wrong).
    not_applicable: Mapping[tuple[str, str], str] = field(default_factory=dict)


# Cells whose feature cannot exist on their column, each with why (sparingly: anything that
# can run there is tested there).
NO_SCHEDULER = "no scheduler is involved: {}"
CLI_NOT_APPLICABLE = {
    ("heronbridge migrate", "spark"): NO_SCHEDULER.format("it rewrites source files"),
    ("heronbridge storm", "spark"): NO_SCHEDULER.format("it manages Apache Storm's jars on "
                                                        "this machine"),
    ("heronbridge docs", "spark"): NO_SCHEDULER.format("it serves the docs this install "
                                                       "carries"),
    ("heronbridge storm fetch", "spark"): NO_SCHEDULER.format("it resolves Storm's jars "
                                                              "with Maven"),
    ("heronbridge conform", "spark"): "it runs the runtime's side on the local scheduler "
                                      "(`--spark-master` places the trace analysis)",
    ("heronbridge bench", "spark"): "it measures the local scheduler beside Storm's local "
                                    "mode, on one machine",
    **{(f"heronbridge kafka{verb}", "spark"): NO_SCHEDULER.format(
        "it runs Kafka brokers on this machine for development")
       for verb in ("", " fetch", " start")},
}
SPARSE_NOT_APPLICABLE = {
    ("sparse jar", "spark"): NO_SCHEDULER.format("lein packs the project into a jar"),
    ("sparse quickstart", "spark"): NO_SCHEDULER.format("it writes a new project's files"),
    **{("sparse visualize", column): NO_SCHEDULER.format("it draws the topology's graph "
                                                         "from its definition")
       for column in RUNTIME},
    **{("sparse run", column): "it runs Apache Storm's own local mode (`storm jar`), never "
                               "a Nimbus; `heronbridge run` is its counterpart"
       for column in RUNTIME},
}
NO_STREAMLETS = "the codemod writes heronpy Spouts and Bolts; migrated code has no Streamlets"
HERONPY_NOT_APPLICABLE = {
    (name, "heronpy"): NO_STREAMLETS for name in heronpy_api() if name.startswith("Streamlet")}
# heronpy has direct emits, task ids and the direct grouping, so the codemod's refusal of
# them (HB005, HB006) leaves those cells open; it has no multilang at all.
API_NOT_APPLICABLE = {
    ("ShellBolt (a non-Python bolt)", "heronpy"): "heronpy runs no multilang subprocess; the "
                                                  "codemod marks a ShellBolt (HB007)",
}
GROUPING_NOT_APPLICABLE: dict[tuple[str, str], str] = {}
IN_PROCESS = "an in-process component has no subprocess whose life a heartbeat checks"
MULTILANG_NOT_APPLICABLE = {("heartbeat (to a bolt)", "inprocess"): IN_PROCESS,
                            ("sync (from a component)", "inprocess"): IN_PROCESS}
CONFIG_NOT_APPLICABLE = {
    ("heronbridge.host", "spark"): "the Spark scheduler gives each container its worker's "
                                   "address ($HERONBRIDGE_HOST, which wins over the key)",
}

SECTIONS = (
    Section("api", "Storm and streamparse API", ALL, storm_api, API_NOT_APPLICABLE),
    Section("grouping", "Groupings", ALL, groupings, GROUPING_NOT_APPLICABLE),
    Section("multilang", "Multilang protocol", ("storm", "inprocess", "multilang"), multilang,
            MULTILANG_NOT_APPLICABLE),
    Section("heronpy", "heronpy API and Streamlet operators", ("inprocess", "heronpy", "spark"),
            heronpy_api, HERONPY_NOT_APPLICABLE),
    Section("cli", "Command line", RUNTIME, cli_verbs, CLI_NOT_APPLICABLE),
    Section("sparse", "streamparse's sparse", RUNTIME, sparse_commands, SPARSE_NOT_APPLICABLE),
    Section("nimbus", "Nimbus Thrift methods", RUNTIME, nimbus_methods),
    Section("rest", "REST: Storm UI and Heron tracker", ("inprocess",), rest_routes),
    Section("config", "Config keys", RUNTIME, config_keys, CONFIG_NOT_APPLICABLE),
)


def read_results(folder: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(row, column) -> {node id: outcome}; a node run in several envs or workers failed if
    it failed anywhere, and passed if it passed somewhere and failed nowhere."""
    rank = {SKIPPED: 0, PASSED: 1, FAILED: 2}
    found: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    partly: dict[tuple[str, str, str], str] = {}
    for path in sorted(folder.rglob("*.json")):
        for cell in json.loads(path.read_text())["cells"]:
            cell["nodeid"] = _without_group(cell["nodeid"])
            key = (cell["row"], cell["column"])
            before = found[key].get(cell["nodeid"], SKIPPED)
            if rank[cell["outcome"]] >= rank[before]:
                found[key][cell["nodeid"]] = cell["outcome"]
            if cell.get("partly"):
                partly[(*key, cell["nodeid"])] = cell["partly"]
    for (row, column, nodeid), note in partly.items():
        if found[(row, column)][nodeid] == PASSED:
            found[(row, column)][nodeid] = f"{PASSED}:{note}"
    return found


def _without_group(nodeid: str) -> str:
    """xdist's loadgroup appends "@GROUP" to a node id: the test is the same one."""
    path, _, name = nodeid.rpartition("::")
    closing = name.rfind("]")
    if closing >= 0:
        name = name[:closing + 1]
    return f"{path}::{name.split('@')[0] if closing < 0 else name}"


def decide(outcomes: dict[str, str]) -> dict[str, str]:
    """One cell: its verdict, a short qualifier and the test that decides it."""
    if not outcomes:
        return {"verdict": "no test", "note": "", "test": ""}
    by = defaultdict(list)
    for nodeid, outcome in sorted(outcomes.items()):
        by[outcome.split(":")[0]].append((nodeid, outcome.partition(":")[2]))
    passed, failed = by[PASSED], by[FAILED]
    notes = sorted({note for _, note in passed if note})
    if failed and passed:
        return {"verdict": "partly", "test": failed[0][0],
                "note": f"{len(passed)} of {len(passed) + len(failed)} tests pass"}
    if failed:
        return {"verdict": "no", "note": "its test fails", "test": failed[0][0]}
    whole = [nodeid for nodeid, note in passed if not note]
    if whole:
        return {"verdict": "yes", "note": "", "test": whole[0]}
    if passed:  # every passing test shows the feature in part
        return {"verdict": "partly", "note": "; ".join(notes), "test": passed[0][0]}
    return {"verdict": "not run", "note": "its test was skipped", "test": by[SKIPPED][0][0]}


def build(results: dict[tuple[str, str], dict[str, str]]) -> dict:
    known: set[tuple[str, str]] = set()
    sections = []
    for section in SECTIONS:
        rows = []
        for name in section.rows():
            row = f"{section.key}/{name}"
            cells = {}
            for column in section.columns:
                reason = section.not_applicable.get((name, column))
                if reason is None:
                    known.add((row, column))
                    cells[column] = decide(results.get((row, column), {}))
                else:
                    cells[column] = {"verdict": "n/a", "note": reason, "test": ""}
            rows.append({"name": name, "cells": cells})
        sections.append({"key": section.key, "title": section.title,
                         "columns": [COLUMNS[c] for c in section.columns],
                         "column_keys": list(section.columns), "rows": rows})
    stray = sorted(f"{row} on {column} (by {', '.join(sorted(tests))})"
                   for (row, column), tests in results.items() if (row, column) not in known)
    if stray:
        raise SystemExit("compat markers name cells the matrix has no row or column for, or "
                         "says are not applicable:\n  "
                         + "\n  ".join(stray))
    return {"sections": sections}


def markdown(matrix: dict) -> str:
    from heronbridge.ui.compatibility import hover, not_yet, summary

    out = ["# Compatibility matrix", "",
           "What works where, decided by heronbridge's own test suite: each test names the",
           "cells it decides (`@pytest.mark.compat(\"grouping/fields\", on=\"storm\")`), each",
           "tox env records their outcomes, and `scripts/compatibility.py` renders this page",
           "from them (`tox -e matrix -- --write`); CI fails when it differs from what the",
           "tests produce. **yes**: every test that decides the cell passed; **partly**: some",
           "did, or the passing tests show the feature in part; **no**: its tests fail;",
           "**no test**: nothing decides it yet; **n/a**: the feature cannot exist there.",
           "Hover a mark for the test that decides it and why. Rows come from the lists that",
           "define them (Nimbus's Thrift IDL, the UI's routes, the config keys, the",
           "command-line parsers, the multilang commands, heronpy's Streamlet class). The",
           "same matrix is served by `heronbridge ui` at `/compatibility`.", "",
           f"**{summary(matrix)}.**", "",
           "## What does not work yet", ""]
    gaps = not_yet(matrix)
    if gaps:
        out += ["| section | feature | on | | why | decided by |", "|---|---|---|---|---|---|"]
        out += [f"| {_escape(c['section'])} | {_escape(c['feature'])} | {c['column']} | "
                f"**{c['verdict']}** | {_escape(c['why'])} | `{c['test']}` |" for c in gaps]
    else:
        out.append("Every cell that can apply is decided yes.")
    out.append("")
    for section in matrix["sections"]:
        out += [f"## {section['title']}", "",
                "| | " + " | ".join(section["columns"]) + " |",
                "|---" * (len(section["columns"]) + 1) + "|"]
        for row in section["rows"]:
            cells = [_md_cell(row["cells"][c], hover) for c in section["column_keys"]]
            out.append(f"| {_escape(row['name'])} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _md_cell(cell: dict[str, str], hover: Callable[[dict[str, str]], str]) -> str:
    """A short mark; what decides it in its title (the docs site shows it on hover)."""
    mark = f"**{cell['verdict']}**" if cell["verdict"] in ("no", "partly") else cell["verdict"]
    title = hover(cell)
    if not title:
        return mark
    quoted = title.replace("&", "&amp;").replace('"', "&quot;").replace("|", "&#124;")
    return f'<abbr title="{quoted}">{mark}</abbr>'


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="the folder of the tests' results")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when the checked-in files differ; write nothing")
    mode.add_argument("--write", action="store_true", help="write them (the default)")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        parser.error(f"{args.results}: no such folder of results (run the tox envs first)")
    matrix = build(read_results(args.results))
    wanted = {MARKDOWN: markdown(matrix), UI_DATA: json.dumps(matrix, indent=1) + "\n"}
    if not args.check:
        for path, text in wanted.items():
            path.write_text(text)
        return 0
    stale = 0
    for path, text in wanted.items():
        have = path.read_text() if path.exists() else ""
        if have != text:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), text.splitlines(True), str(path.relative_to(ROOT)),
                "from the tests' results"))
    if stale:
        print("docs/compatibility.md differs from what the tests decided (the diff above): "
              "regenerate it with `tox -e matrix -- --write` after the test envs and commit "
              "it", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
