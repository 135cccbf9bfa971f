"""The totals table `run` prints when it stops."""

from __future__ import annotations

from rich.console import Console

from heronbridge.cli.status import STMGR, ComponentTotals, totals_table
from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    FAIL_COUNT,
    RSS_BYTES,
)


def rendered(totals: dict[str, ComponentTotals], seconds: float) -> list[list[str]]:
    console = Console(width=250, record=True)
    console.print(totals_table("totals", totals, seconds))
    out = []
    for line in console.export_text().splitlines():
        bar = "┃" if "┃" in line else "│"  # the header's bars are heavy
        if bar in line:
            out.append([cell.strip() for cell in line.strip(f"{bar} ").split(bar)])
    return out


def test_totals_sum_a_components_tasks_and_count_its_reported_errors():
    count = ComponentTotals("count")
    count.add({EXECUTE_COUNT: 600, ACK_COUNT: 590, FAIL_COUNT: 10, ERROR_COUNT: 2}, {}, {})
    count.add({EXECUTE_COUNT: 400, ACK_COUNT: 400, ERROR_COUNT: 1}, {RSS_BYTES: 2**25}, {})
    stmgr = ComponentTotals(STMGR)
    stmgr.add({}, {RSS_BYTES: 2**24}, {})
    spout = ComponentTotals("spout")
    spout.add({EMIT_COUNT: 1000, ACK_COUNT: 1000}, {}, {})
    header, *rows = rendered({STMGR: stmgr, "spout": spout, "count": count}, 10.0)
    assert header[:9] == ["component", "tasks", "emitted", "executed", "acked", "failed",
                          "timed out", "errors", "exec/s"]
    by_name = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert [row[0] for row in rows] == ["count", "spout", STMGR]  # stream managers last
    assert by_name["count"]["tasks"] == "2"
    assert by_name["count"]["executed"] == "1,000"
    assert by_name["count"]["failed"] == "10"
    assert by_name["count"]["errors"] == "3"
    assert by_name["count"]["exec/s"] == "100"
    assert by_name["count"]["max RSS MB"] == "32"
    assert by_name["spout"]["errors"] == "0"
    assert by_name[STMGR]["max RSS MB"] == "16"
