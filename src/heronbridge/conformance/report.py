"""What a conformance run tells its reader: the verdict table in the terminal, an HTML
page with plots next to the traces, and the verdicts as JSON."""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.table import Table

from .trace import schema

REPORT_FILE = "report.html"
STYLES = {"pass": "green", "fail": "bold red", "known divergence": "yellow", "info": "cyan"}
COLOURS = {schema.STORM: "#1f77b4", schema.RUNTIME: "#d62728"}


def verdict_table(outcome: Any) -> Table:
    table = Table(title=f"conformance: {outcome.scenario.name}", show_lines=False)
    for column in ("check", "subject", "Storm", "runtime", "verdict"):
        table.add_column(column, overflow="fold")
    for v in outcome.verdicts:
        style = STYLES.get(v.verdict, "")
        verdict = f"[{style}]{v.verdict}[/]" if style else v.verdict
        if v.detail and v.verdict != "pass":
            verdict += f"\n[dim]{v.detail}[/]"
        table.add_row(v.check, v.subject, v.storm, v.runtime, verdict)
    return table


def write_json(outcome: Any, path: Path) -> None:
    Path(path).write_text(json.dumps({
        "scenario": outcome.scenario.name,
        "ok": outcome.ok,
        "run_dir": str(outcome.run_dir),
        "runs": {s: {**asdict(r), "logs": str(r.logs) if r.logs else None}
                 for s, r in outcome.runs.items()},
        "verdicts": [asdict(v) for v in outcome.verdicts],
        "notes": outcome.notes,
    }, indent=2))


def write_html(outcome: Any) -> Path:
    """report.html in the run folder: verdicts, the runs, and the plots."""
    stats = outcome.analysis.stats
    rows = "\n".join(
        f'<tr class="{html.escape(v.verdict.replace(" ", "-"))}"><td>{_e(v.check)}</td>'
        f"<td>{_e(v.subject)}</td><td>{_e(v.storm)}</td><td>{_e(v.runtime)}</td>"
        f"<td>{_e(v.verdict)}<div class=detail>{_e(v.detail)}</div></td></tr>"
        for v in outcome.verdicts)
    runs = "\n".join(
        f"<tr><td>{_e(s)}</td><td>{'yes' if r.finished else 'no'}</td>"
        f"<td>{r.seconds:.1f}</td><td>{_seconds(r.startup)}</td><td>{r.records:,}</td>"
        f"<td>{r.bytes:,}</td>"
        f"<td>{_e(r.explanation)}</td>"
        f"<td>{_link(outcome.run_dir, r.logs)}</td></tr>"
        for s, r in outcome.runs.items())
    notes = "\n".join(f"<li>{_e(n)}</li>" for n in outcome.notes)
    plots = "\n".join(f'<figure><img alt="{_e(title)}" src="data:image/png;base64,{png}">'
                      f"<figcaption>{_e(title)}</figcaption></figure>"
                      for title, png in _plots(stats))
    verdict = "every check passes" if outcome.ok else "some checks fail"
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>conformance: {_e(outcome.scenario.name)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 2em; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }}
tr.pass td:last-child {{ background: #e3f6e3; }}
tr.fail td:last-child {{ background: #fbdada; font-weight: bold; }}
tr.known-divergence td:last-child {{ background: #fff4cc; }}
tr.info td:last-child {{ background: #e6f0fa; }}
.detail {{ font-size: 85%; color: #555; font-weight: normal; }}
figure {{ display: inline-block; margin: 0 2em 2em 0; }}
</style></head><body>
<h1>conformance: {_e(outcome.scenario.name)}</h1>
<p id="summary" class="{'ok' if outcome.ok else 'failed'}">{_e(verdict)}: topology
{_e(_topology(outcome))}, Apache Storm and the runtime, written
{datetime.now().isoformat(timespec='seconds')}.</p>
<ul id="notes">
{notes}
</ul>
<h2>Runs</h2>
<table id="runs"><tr><th>system</th><th>finished</th><th>seconds</th>
<th>first emit after (s)</th><th>trace records</th><th>trace bytes</th>
<th>explanation</th><th>logs</th></tr>
{runs}
</table>
<h2>Verdicts</h2>
<table id="verdicts"><tr><th>check</th><th>subject</th><th>Storm</th><th>runtime</th>
<th>verdict</th></tr>
{rows}
</table>
<h2>Plots</h2>
{plots}
</body></html>
"""
    path = Path(outcome.run_dir) / REPORT_FILE
    path.write_text(page, encoding="utf-8")
    return path


def _plots(stats: dict[str, Any]) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    out = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for system, s in stats.items():
        if s.throughput:
            xs, ys = zip(*s.throughput, strict=True)
            # Markers: a run shorter than a second is a single point, which a line hides.
            ax.plot(xs, ys, label=system, color=COLOURS.get(system), drawstyle="steps-post",
                    marker="o", markersize=4)
    ax.set_xlabel("seconds since the first record")
    ax.set_ylabel("bolt input tuples / s")
    _legend(ax)
    out.append(("throughput over time", _png(fig)))

    fig, ax = plt.subplots(figsize=(6, 3.5))
    drawn = False
    for system, s in stats.items():
        if s.latency_hist:
            bounds, counts = zip(*s.latency_hist, strict=True)
            ax.step(bounds, counts, where="pre", label=_latency_label(system, s),
                    color=COLOURS.get(system))
            drawn = True
    ax.set_xscale("log")
    ax.set_xlabel("complete latency (ms)")
    ax.set_ylabel("spout tuples")
    _legend(ax)
    if not drawn:
        ax.text(0.5, 0.5, "no acked spout tuples", ha="center", transform=ax.transAxes)
    out.append(("complete latency distribution", _png(fig)))

    tasks = sorted({(c, t) for s in stats.values() for c, ts in s.load.items() for t in ts})
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(tasks) + 2), 3.5))
    width = 0.8 / max(1, len(stats))
    for i, (system, s) in enumerate(stats.items()):
        ax.bar([x + i * width for x in range(len(tasks))],
               [s.load.get(c, {}).get(t, 0) for c, t in tasks], width, label=system,
               color=COLOURS.get(system))
    ax.set_xticks([x + width * (len(stats) - 1) / 2 for x in range(len(tasks))],
                  [f"{c}[{t}]" for c, t in tasks], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("input tuples")
    _legend(ax)
    out.append(("load per task", _png(fig)))
    return out


def _latency_label(system: str, stats: Any) -> str:
    p = stats.latency_ms
    return f"{system} (p50 {p['p50']:.1f} ms, p99 {p['p99']:.1f} ms)" if p else system


def _png(fig: Any) -> str:
    from matplotlib import pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _topology(outcome: Any) -> str:
    return outcome.scenario.topology or Path(outcome.scenario.project).name


def _link(base: Path, target: Path | None) -> str:
    if target is None:
        return ""
    try:
        rel = Path(target).resolve().relative_to(Path(base).resolve())
    except ValueError:
        rel = Path(target)
    return f'<a href="{_e(str(rel))}">{_e(str(rel))}</a>'


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _e(text: Any) -> str:
    return html.escape(str(text))


def _legend(ax: Any) -> None:
    """A legend only where something is labelled (matplotlib warns on an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
