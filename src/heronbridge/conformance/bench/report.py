"""The benchmark's table and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from heronbridge.runtime.telemetry import Histogram


def _n(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def title(result: dict[str, Any]) -> str:
    acking = "acking on" if result["acking"] else "acking off"
    par = "project's" if result["par"] is None else str(result["par"])
    return (f"{result['topology']}: {acking}, bolt parallelism {par}, sink "
            f"{', '.join(result['sink'])}, {result['cores']} cores, "
            f"{result['seconds']:g}s windows after {result['warmup_s']:g}s warm-up")


def columns(result: dict[str, Any]) -> list[str]:
    """The table's columns after the measure: the systems in the order they ran, then the
    fused ceiling when it was measured."""
    return [*result["systems"], *(["fused ceiling"] if "fused" in result else [])]


def rows(result: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(measure, a value per column) of the result: what the terminal's table and the
    Markdown one both show."""
    systems = result["systems"]
    fused = result.get("fused") or {}
    out: list[tuple[str, list[str]]] = []

    def row(label: str, values: list[str], ceiling: str = "") -> None:
        out.append((label, [*values, *([ceiling] if "fused" in result else [])]))

    blank = ["" for _ in systems]
    row("sink tuples/s, saturated",
        [_n(r["saturation"]["sink_per_s"]) for r in systems.values()],
        _n(fused.get("sink_per_s")))
    for label, key in (("p50", "p50_ms"), ("p99", "p99_ms"), ("p999", "p999_ms")):
        row(f"complete latency {label} ms, saturated",
            [_n(r["saturation"][key], "{:.1f}") for r in systems.values()])
    offered = next(iter(systems.values()))["fixed"]["offered_per_s"] if systems else None
    row(f"sink tuples/s at {_n(offered)} spout tuples/s",
        [_n(r["fixed"]["sink_per_s"]) for r in systems.values()])
    for label, key in (("p50", "p50_ms"), ("p99", "p99_ms"), ("p999", "p999_ms")):
        row(f"complete latency {label} ms, fixed load",
            [_n(r["fixed"][key], "{:.1f}") for r in systems.values()])
    row("CPU seconds per million sink tuples",
        [_n(r["saturation"]["cpu_s_per_million"], "{:.1f}") for r in systems.values()],
        _n(fused.get("cpu_s_per_million"), "{:.1f}"))
    bare = result.get("fused_unprobed")
    if bare:
        row("  the same without the probe", blank, _n(bare["cpu_s_per_million"], "{:.1f}"))
    floor = result.get("floor")
    if floor:
        row("  user-code floor (own methods only): sink tuples/s", blank,
            _n(floor["sink_per_s"]))
        row("  user-code floor: CPU seconds per million", blank,
            _n(floor["cpu_s_per_million"], "{:.1f}"))
    kinds = sorted({k for r in systems.values() for k in r["memory"]})
    for kind in kinds:
        row(f"peak RSS MB, {kind} (processes)",
            [_memory(r["memory"].get(kind)) for r in systems.values()])
    row("seconds to the first sink tuple", [_n(r["startup_s"], "{:.1f}")
                                            for r in systems.values()])
    for key, value in result["ratios"].items():
        out.append((key, [_n(value, "{:.2f}"), *[""] * (len(columns(result)) - 1)]))
    return out


def table(result: dict[str, Any]) -> Table:
    grid = Table(title=title(result))
    grid.add_column("measure")
    for name in columns(result):
        grid.add_column(name, justify="right")
    ratios = set(result["ratios"])
    for label, values in rows(result):
        if label in ratios:
            grid.add_row(f"[bold]{label}[/]", *[f"[bold]{v}[/]" if v else v for v in values])
        else:
            grid.add_row(label, *values)
    return grid


def markdown(result: dict[str, Any]) -> str:
    """The same table in Markdown, for a page that shows the run's plots beside it."""
    lines = [f"{title(result)}.", "",
             "| measure | " + " | ".join(columns(result)) + " |",
             "|---|" + "---:|" * len(columns(result))]
    lines += [f"| {label.strip()} | " + " | ".join(values) + " |"
              for label, values in rows(result)]
    return "\n".join(lines) + "\n"


def _memory(entry: dict[str, float] | None) -> str:
    if not entry:
        return "-"
    return f"{entry['peak_rss_mb']:.0f} ({entry['processes']:.0f})"


def plots(result: dict[str, Any], out: Path) -> list[Path]:
    """Sink throughput over time, and the latency distribution at the fixed load."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    written = []
    fig, ax = plt.subplots(figsize=(8, 4))
    for name, run in result["systems"].items():
        points = run["timeline"]
        line, = ax.plot([t for t, _ in points], [v for _, v in points], label=name)
        for phase, (a, b) in run["phases"].items():
            ax.axvspan(a, b, alpha=0.10 if phase == "saturation" else 0.05,
                       color=line.get_color())
        # Between the windows the spouts are held until the sink drains: the rate falls,
        # to 0 when nothing was left queued.
        held = run["phases"]["saturation"][1], run["phases"]["fixed"][0]
        ax.axvspan(*held, fill=False, hatch="//", lw=0, color=line.get_color(), alpha=0.4)
    if result.get("fused"):
        ax.axhline(result["fused"]["sink_per_s"], ls="--", color="grey",
                   label="fused ceiling (one process, one core)")
    ax.set_xlabel("seconds since each system's own launch (they ran alone, in the legend's "
                  "order)", fontsize=9)
    ax.set_ylabel("sink tuples/s")
    # symlog, not log: a system's rate can drop to 0 for a second (Storm's did).
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(bottom=0)
    _legend(ax)
    ax.set_title(f"{result['topology']}: sink throughput (shaded: saturated, then fixed "
                 "load; hatched: spouts held while the sink drains)", fontsize=9)
    fig.tight_layout()
    path = out / "throughput.png"
    fig.savefig(path)
    plt.close(fig)
    written.append(path)
    if result["acking"]:
        fig, ax = plt.subplots(figsize=(8, 4))
        for name, run in result["systems"].items():
            counts = run.get("latency_histogram")
            if not counts or not sum(counts):
                continue
            hist = Histogram(counts)
            qs = [i / 1000 for i in range(1, 1000)]
            ax.plot([hist.percentile(q) * 1000 for q in qs], qs, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("complete latency, ms")
        ax.set_ylabel("fraction of tuple trees")
        _legend(ax)
        ax.set_title(f"{result['topology']}: complete latency at the fixed offered load")
        fig.tight_layout()
        path = out / "latency.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


def _legend(ax: Any) -> None:
    """A legend only where something is labelled (matplotlib warns on an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
