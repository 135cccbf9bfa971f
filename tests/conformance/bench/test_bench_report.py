"""`heronbridge bench`'s table, in the terminal and as the Markdown a page shows beside the
run's plots: the same rows from one result, and plots that mark the windows and the
drain between them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from heronbridge.conformance.bench.report import columns, markdown, plots, rows, table

RUN = Path(__file__).resolve().parents[3] / "docs" / "bench" / "bench.json"


def test_the_terminal_and_the_markdown_table_show_the_same_rows():
    result = json.loads(RUN.read_text())
    console = Console(width=240, record=True)
    console.print(table(result))
    terminal = " ".join(console.export_text().split())
    text = markdown(result)
    assert f"| measure | {' | '.join(columns(result))} |" in text
    for label, values in rows(result):
        assert f"| {label.strip()} | {' | '.join(values)} |" in text
        assert label.strip() in terminal
        assert all(v in terminal for v in values if v)
    assert text.count("\n|") == len(rows(result)) + 2  # the header, its rule, a row each


@pytest.mark.conformance  # matplotlib: the conformance extra
def test_plots_are_written_from_the_same_result(tmp_path):
    result = json.loads(RUN.read_text())
    written = plots(result, tmp_path)
    assert [p.name for p in written] == ["throughput.png", "latency.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)
