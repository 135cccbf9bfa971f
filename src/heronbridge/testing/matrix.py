"""The compatibility matrix's side of the pytest plugin: which cells a test decides, and
what it decided.

A test names its cells with a marker, rows first, then the columns it ran on:

    @pytest.mark.compat("grouping/fields", "grouping/shuffle", on=("inprocess", "multilang"))

`on` defaults to the runtime in-process; `partly="what is missing"` says that the test,
when it passes, shows the feature only in part. A parametrised test marks each case
(`pytest.param(..., marks=pytest.mark.compat(...))`), or gives each case the column its
rows default to with a marker without rows (`marks=pytest.mark.compat(on="multilang")`).

With `--compat-results DIR` (or $HERONBRIDGE_COMPAT_RESULTS), every process that runs
tests (each xdist worker too) writes the outcomes of the cells it decided to a file of its
own in DIR; `scripts/compatibility.py` renders docs/compatibility.md from all of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARKER = "compat"
RESULTS_ENV = "HERONBRIDGE_COMPAT_RESULTS"
# Column key -> its heading, in the matrix's order.
COLUMNS = {
    "storm": "Storm 2.8.3",
    "inprocess": "runtime, in-process",
    "multilang": "runtime, multilang",
    "heronpy": "migrated heronpy",
    "spark": "Spark scheduler",
}
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


def addoption(parser: pytest.Parser) -> None:
    parser.getgroup("heronbridge").addoption(
        "--compat-results", metavar="DIR", default=os.environ.get(RESULTS_ENV),
        help=f"write the outcomes of the compatibility cells the tests decide (their "
             f"`{MARKER}` markers) to a file in DIR (default ${RESULTS_ENV})")


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(*rows, on='inprocess', partly=None): the compatibility-matrix "
                   f"cells this test decides (rows such as 'grouping/fields'; columns: "
                   f"{', '.join(COLUMNS)})")
    folder = config.getoption("--compat-results")
    if folder:
        config.pluginmanager.register(Recorder(Path(folder)), "heronbridge-compat")


def cells(item: pytest.Item) -> Iterator[tuple[str, str, str | None]]:
    """(row, column, partly) for each cell the item's markers name."""
    marks = list(item.iter_markers(MARKER))
    default = next((m.kwargs["on"] for m in marks if not m.args and "on" in m.kwargs),
                   "inprocess")
    for mark in marks:
        on = mark.kwargs.get("on", default)
        columns = (on,) if isinstance(on, str) else tuple(on)
        unknown = [c for c in columns if c not in COLUMNS]
        if unknown or not (mark.args or "on" in mark.kwargs):
            msg = (f"{item.nodeid}: @pytest.mark.{MARKER} expects rows and on= one of "
                   f"{', '.join(COLUMNS)}; got rows {mark.args!r}, on={on!r}")
            raise pytest.UsageError(msg)
        for row in mark.args:
            for column in columns:
                yield row, column, mark.kwargs.get("partly")


class Recorder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.outcomes: dict[str, str] = {}  # node id -> its outcome so far
        self.cells: dict[str, list[tuple[str, str, str | None]]] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:  # a bad marker stops the run before any test
            list(cells(item))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Iterator[None]:
        report = (yield).get_result()
        found = self.cells.get(item.nodeid)
        if found is None:
            found = self.cells[item.nodeid] = list(cells(item))
        if not found:
            return
        before = self.outcomes.get(item.nodeid)
        # An expected failure is the feature not working; a failed teardown fails the test.
        if report.failed or hasattr(report, "wasxfail"):
            self.outcomes[item.nodeid] = FAILED
        elif report.skipped and before != FAILED:
            self.outcomes[item.nodeid] = SKIPPED
        elif report.when == "call" and before is None:
            self.outcomes[item.nodeid] = PASSED

    def pytest_sessionfinish(self) -> None:
        decided = [{"row": row, "column": column, "partly": partly, "nodeid": nodeid,
                    "outcome": self.outcomes.get(nodeid, SKIPPED)}
                   for nodeid, found in self.cells.items() for row, column, partly in found]
        if not decided:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        path = self.folder / f"{worker}-{os.getpid()}.json"
        path.write_text(json.dumps({"cells": decided}, indent=0, sort_keys=True))
