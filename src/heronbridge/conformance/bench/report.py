"""The benchmark's table and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from heronbridge.runtime.telemetry import Histogram


def _n(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def table(result: dict[str, Any]) -> Table:
    acking = "acking on" if result["acking"] else "acking off"
    par = "project's" if result["par"] is None else str(result["par"])
    grid = Table(title=f"{result['topology']}: {acking}, bolt parallelism {par}, sink "
                       f"{', '.join(result['sink'])}, {result['cores']} cores, "
                       f"{result['seconds']:g}s windows after {result['warmup_s']:g}s warm-up")
    grid.add_column("measure")
    systems = result["systems"]
    for name in systems:
        grid.add_column(name, justify="right")
    if "fused" in result:
        grid.add_column("fused ceiling", justify="right")
    fused = result.get("fused") or {}

    def row(label: str, values: list[str], ceiling: str = "") -> None:
        grid.add_row(label, *values, *([ceiling] if "fused" in result else []))

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
        row("  the same without the probe", ["" for _ in systems],
            _n(bare["cpu_s_per_million"], "{:.1f}"))
    floor = result.get("floor")
    if floor:
        row("  user-code floor (own methods only): sink tuples/s", ["" for _ in systems],
            _n(floor["sink_per_s"]))
        row("  user-code floor: CPU seconds per million", ["" for _ in systems],
            _n(floor["cpu_s_per_million"], "{:.1f}"))
    kinds = sorted({k for r in systems.values() for k in r["memory"]})
    for kind in kinds:
        row(f"peak RSS MB, {kind} (processes)",
            [_memory(r["memory"].get(kind)) for r in systems.values()])
    row("seconds to the first sink tuple", [_n(r["startup_s"], "{:.1f}")
                                            for r in systems.values()])
    for key, value in result["ratios"].items():
        grid.add_row(f"[bold]{key}[/]", f"[bold]{_n(value, '{:.2f}')}[/]",
                     *[""] * (len(systems) - 1 + ("fused" in result)))
    return grid


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
    if result.get("fused"):
        ax.axhline(result["fused"]["sink_per_s"], ls="--", color="grey", label="fused ceiling")
    ax.set_xlabel("seconds since launch")
    ax.set_ylabel("sink tuples/s")
    # symlog, not log: a system's rate can drop to 0 for a second (Storm's did).
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(bottom=0)
    _legend(ax)
    ax.set_title(f"{result['topology']}: sink throughput (shaded in each system's colour: "
                 "saturated, then fixed load)", fontsize=10)
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
