"""The fault suite's results: one row per case, printed as a table when the session ends
and, with $HERONBRIDGE_FAULTS_TABLE, written there as Markdown (docs/benchmarks.md's table)."""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from pathlib import Path

import pytest

RESULTS: list[dict] = []
ROWS: list = []  # suite.Row: the nemeses' table (what came out of each run)
LOAD: list[float] = []  # the host's 1-minute load average when the session began and ended


def pytest_sessionstart(session):
    LOAD.append(os.getloadavg()[0])


@pytest.fixture
def record_recovery(request):
    return lambda result: request.node.user_properties.append((RECOVERY, result))


@pytest.fixture
def record_row(request):
    return lambda row: request.node.user_properties.append((ROW, dataclasses.asdict(row)))


RECOVERY, ROW = "faults-recovery", "faults-row"


def pytest_runtest_logreport(report):
    """A test's rows travel with its report, so that the session that prints the tables
    has them, whether the test ran in it or in an xdist worker."""
    if report.when != "call" or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    from suite import Row

    for key, value in report.user_properties:
        if key == ROW:
            ROWS.append(Row(**value))
        elif key == RECOVERY:
            RESULTS.append(value)


def rows_markdown(rows: list) -> str:
    from suite import HEAD

    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def markdown(results: list[dict]) -> str:
    by_case = {(r["kind"], r["containers"]): r for r in results}
    kinds = list(dict.fromkeys(r["kind"] for r in results))
    layouts = sorted({r["containers"] for r in results})
    head = ["process killed"] + [f"{n} container{'s' * (n > 1)}: back / flowing"
                                 for n in layouts]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind in kinds:
        cells = [kind]
        for n in layouts:
            r = by_case.get((kind, n))
            cells.append("-" if r is None else f"{r['back_s']:.1f} s / {r['flowing_s']:.1f} s")
        rows.append("| " + " | ".join(cells) + " |")
    cpus = os.cpu_count()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = " to ".join(f"{x:.1f}" for x in [*LOAD[:1], os.getloadavg()[0]])
    rows.append("")
    rows.append(f"Measured {when} by the fault suite (tests/faults) on {platform.system()} "
                f"{platform.machine()}, {cpus} cores, Python {platform.python_version()}; the "
                f"host's load average went from {load} during the run.")
    return "\n".join(rows)


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller prints and writes the tables
    if ROWS:
        table = rows_markdown(ROWS)
        terminalreporter.section("what came out, per nemesis (recovery: seconds from the heal)")
        terminalreporter.write_line(table)
        for row in ROWS:
            if row.seed is not None:
                terminalreporter.write_line(f"seed {row.seed}: {row.detail}")
        target = os.environ.get("HERONBRIDGE_NEMESES_TABLE")
        if target:
            Path(target).write_text(table + "\n")
    if not RESULTS:
        return
    table = markdown(RESULTS)
    terminalreporter.section("recovery after SIGKILL (seconds from the kill)")
    terminalreporter.write_line(table)
    target = os.environ.get("HERONBRIDGE_FAULTS_TABLE")
    if target:
        Path(target).write_text(table + "\n")
