"""One benchmark: the fused ceiling, then Storm, then the runtime (each alone on the
machine), each measured at saturation and then at one fixed offered load."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heronbridge.runtime.procfs import cpu_by_kind, descendants, memory_by_kind

from . import BenchError, spouts_ran_dry
from .fused import MODULE as FUSED
from .probe import RATE_FILE
from .readings import Lines, Window, timeline, window
from .systems import RuntimeSystem, StormSystem

SYSTEMS = ("storm", "runtime")
STARTUP_TIMEOUT = 180.0
POLL = 0.25
DRAIN_TIMEOUT = 120.0
QUIET = 1.0  # seconds without a sink tuple: the saturation's queues are empty
FIXED_SHARE = 0.5  # the default offered load: this share of Storm's saturated spout rate
DEFAULT_MAX_PENDING = 1000
KINDS = ((FUSED, "fused"),)  # besides the runtime's and Storm's own process kinds

Display = Callable[[str], None]


@dataclass
class Settings:
    project: Path
    topology: str | None = None
    environment: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    par: int | None = None  # every bolt's parallelism (None: the project's)
    acking: bool = True
    sink: tuple[str, ...] = ()  # default: the bolts nothing subscribes to
    rate: float | None = None  # fixed offered load, spout tuples/s (default: FIXED_SHARE)
    warmup: float = 5.0
    seconds: float = 10.0
    systems: tuple[str, ...] = SYSTEMS
    fused: bool = True
    home: Path | None = None  # Storm's jar cache

    def run_options(self, out: Path) -> dict[str, Any]:
        options = {"topology.max.spout.pending": DEFAULT_MAX_PENDING,
                   "example.output.dir": str(out / "output"), **self.options}
        if not self.acking:
            options["topology.acker.executors"] = 0
        return options


def run_bench(settings: Settings, out: Path, display: Display | None = None) -> dict[str, Any]:
    from heronbridge.compat.streamparse import load_project

    show = display or (lambda text: None)
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    settings.options = settings.run_options(out)
    plan = load_project(settings.project, settings.topology, settings.environment,
                        settings.options, False, out / "resources").plan
    spouts = {n for n, s in plan.components.items() if s.is_spout}
    sink = set(settings.sink) or _leaves(plan)
    unknown = sink - set(plan.components)
    if unknown:
        msg = (f"topology {plan.name!r}: expected --sink among its bolts "
               f"{sorted(set(plan.components) - spouts)}, received {sorted(unknown)}")
        raise BenchError(msg)
    settings.sink = tuple(sorted(sink))
    settings.topology = plan.name
    result: dict[str, Any] = {
        "topology": plan.name, "project": str(settings.project), "par": settings.par,
        "acking": settings.acking, "sink": list(settings.sink), "warmup_s": settings.warmup,
        "seconds": settings.seconds, "cores": _cores(), "systems": {}}
    if settings.fused:
        show("fused ceiling: the components in one process")
        result["fused"] = _fused(settings, out / "fused", probe=True)
        # The same without the probe: what measuring costs, shown beside the ceiling.
        result["fused_unprobed"] = _fused(settings, out / "fused-unprobed", probe=False)
        show("user-code floor: the components' own methods, a collector that does nothing")
        result["floor"] = _fused(settings, out / "floor", probe=False, floor=True)
    rate = settings.rate
    for name in settings.systems:
        system = (StormSystem if name == "storm" else RuntimeSystem)(
            settings, out, out / name / "probes")
        show(f"{name}: starting")
        run = _measure(system, settings, sink, spouts, rate, show)
        rate = run["fixed"]["offered_per_s"]
        result["systems"][name] = run
    result["ratios"] = ratios(result)
    (out / "bench.json").write_text(json.dumps(result, indent=2))
    return result


def _leaves(plan: Any) -> set[str]:
    fed = {i.component for s in plan.components.values() for i in s.inputs}
    return {n for n, s in plan.components.items() if not s.is_spout and n not in fed}


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


def _fused(settings: Settings, workdir: Path, probe: bool, floor: bool = False) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    args = {"workdir": str(workdir), "project": str(settings.project),
            "topology": settings.topology, "environment": settings.environment,
            "options": settings.options, "sink": list(settings.sink),
            "seconds": settings.seconds, "warmup": min(settings.warmup, 2.0), "probe": probe,
            "floor": floor}
    done = subprocess.run([sys.executable, "-m", FUSED, json.dumps(args)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        msg = f"the fused ceiling failed: {done.stderr.strip()[-2000:]}"
        raise BenchError(msg)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _measure(system: Any, settings: Settings, sink: set[str], spouts: set[str],
             rate: float | None, show: Display) -> dict[str, Any]:
    probes = system.probes
    probes.mkdir(parents=True, exist_ok=True)
    (probes / RATE_FILE).unlink(missing_ok=True)
    launched = time.time()
    system.start()
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while Lines.read(probes).first(sink, "in") is None:
            system.check()
            if time.monotonic() > deadline:
                msg = (f"{system.name}: expected the sink {sorted(sink)} to receive tuples "
                       f"within {STARTUP_TIMEOUT:g}s of the start, received none")
                raise BenchError(msg)
            time.sleep(POLL)
        startup = time.time() - launched
        show(f"{system.name}: up after {startup:.1f}s; warming up {settings.warmup:g}s")
        time.sleep(settings.warmup)
        system.check()
        before, t0 = descendants(kinds=KINDS), time.time()
        show(f"{system.name}: at saturation for {settings.seconds:g}s")
        time.sleep(settings.seconds)
        t1, after = time.time(), descendants(kinds=KINDS)
        system.check()
        saturated = window(Lines.read(probes), t0, t1, sink, spouts)
        offered = rate if rate is not None else max(
            1.0, round(FIXED_SHARE * saturated.spout_emits / (t1 - t0)))
        show(f"{system.name}: draining what the saturation left queued")
        _drain(system, probes, sink)
        (probes / RATE_FILE).write_text(f"{offered}\n")
        settle = max(2.0, settings.warmup / 2)
        show(f"{system.name}: at {offered:,.0f} spout tuples/s for {settings.seconds:g}s")
        time.sleep(settle)
        t2 = time.time()
        time.sleep(settings.seconds)
        t3 = time.time()
        system.check()
        memory = memory_by_kind(descendants(kinds=KINDS))
    finally:
        show(f"{system.name}: stopping")
        system.stop()
    lines = Lines.read(probes)
    saturated = window(lines, t0, t1, sink, spouts)
    fixed = window(lines, t2, t3, sink, spouts)
    for what, (a, b) in (("the saturation window", (t0, t1)), ("the fixed-load window", (t2, t3))):
        if not window(lines, b - max(1.0, (b - a) / 10), b, sink, spouts).spout_emits:
            raise spouts_ran_dry(settings.topology, f"{system.name}'s {what}", spouts)
    cpu = cpu_by_kind(before, after)
    cpu.pop("fused", None)
    sunk = saturated.sink_per_s * (t1 - t0)
    return {
        "startup_s": startup,
        "saturation": {**_summary(saturated, settings.acking, t1 - t0),
                       "cpu_s_per_million": sum(cpu.values()) / sunk * 1e6 if sunk else None,
                       "cpu_s_per_million_by_kind": {k: v / sunk * 1e6 for k, v in cpu.items()}
                       if sunk else {}},
        "fixed": {"offered_per_s": offered, **_summary(fixed, settings.acking, t3 - t2)},
        "memory": memory,
        "timeline": timeline(lines, sink, launched),
        "phases": {"saturation": [t0 - launched, t1 - launched],
                   "fixed": [t2 - launched, t3 - launched]},
        "latency_histogram": fixed.latency.counts if settings.acking else None,
    }


def _drain(system: Any, probes: Path, sink: set[str]) -> None:
    """Hold the spouts (offered load 0) until the sink has received nothing for QUIET
    seconds. At most once, and without max spout pending, only the backpressure
    watermarks bound what a saturated spout leaves queued (seconds of work for a slower
    bolt); the fixed-load window must not count it."""
    (probes / RATE_FILE).write_text("0\n")
    deadline = time.monotonic() + DRAIN_TIMEOUT
    quiet_since = time.time()
    while time.monotonic() < deadline:
        time.sleep(POLL)
        system.check()
        now = time.time()
        if window(Lines.read(probes), now - POLL * 2, now, sink, set()).sink_tuples:
            quiet_since = now
        elif now - quiet_since >= QUIET:
            return
    msg = (f"{system.name}: expected the sink {sorted(sink)} to drain within "
           f"{DRAIN_TIMEOUT:g}s of the spouts being held, received tuples throughout")
    raise BenchError(msg)


def _summary(w: Window, acking: bool, span: float) -> dict[str, Any]:
    out: dict[str, Any] = {"sink_per_s": w.sink_per_s, "spout_per_s": w.spout_emits / span,
                           "acks": w.acks, "fails": w.fails}
    for name, q in (("p50_ms", 0.5), ("p99_ms", 0.99), ("p999_ms", 0.999)):
        out[name] = w.percentile_ms(q) if acking else None
    return out


def ratios(result: dict[str, Any]) -> dict[str, float | None]:
    systems, fused, floor = result["systems"], result.get("fused"), result.get("floor")
    storm, runtime = systems.get("storm"), systems.get("runtime")

    def div(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    out: dict[str, float | None] = {}
    if storm and runtime:
        out["throughput_runtime_over_storm"] = div(runtime["saturation"]["sink_per_s"],
                                                   storm["saturation"]["sink_per_s"])
        for q in ("p50", "p99", "p999"):
            out[f"{q}_latency_storm_over_runtime"] = div(storm["fixed"][f"{q}_ms"],
                                                         runtime["fixed"][f"{q}_ms"])
        out["p99_latency_at_saturation_storm_over_runtime"] = div(
            storm["saturation"]["p99_ms"], runtime["saturation"]["p99_ms"])
        out["cpu_per_tuple_storm_over_runtime"] = div(
            storm["saturation"]["cpu_s_per_million"], runtime["saturation"]["cpu_s_per_million"])
    for name, run in systems.items():
        if fused:
            out[f"throughput_{name}_over_fused"] = div(run["saturation"]["sink_per_s"],
                                                       fused["sink_per_s"])
        if floor:  # the framework's cost: CPU per tuple over the user code's own
            out[f"cpu_per_tuple_{name}_over_user_code"] = div(
                run["saturation"]["cpu_s_per_million"], floor["cpu_s_per_million"])
    return out
