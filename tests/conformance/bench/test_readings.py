"""Reading probe lines into windows; classifying processes; the ratios."""

from __future__ import annotations

import json

import pytest

from heronbridge.conformance.bench.bench import ratios
from heronbridge.conformance.bench.readings import Lines, timeline, window
from heronbridge.runtime.procfs import kind_of


def write(folder, component, task, spout, rows):
    path = folder / f"{component}-{task}-1.jsonl"
    out = [{"t": 0, "start": True, "component": component, "task": task, "spout": spout}]
    out += [{"t": t, "in": n, "emit": e, "ack": a, "fail": 0, **({"lat": lat} if lat else {})}
            for t, n, e, a, lat in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in out) + '{"t": 9, "in"')  # cut


def test_a_window_sums_each_sink_tasks_rate_over_the_span_its_lines_cover(tmp_path):
    # Two sink tasks: one steady at 100/s, one that only started at t=12 at 50/s.
    write(tmp_path, "count", 2, False, [(t / 4, 25, 0, 0, None) for t in range(40, 81)])
    write(tmp_path, "count", 3, False, [(t / 4, 12.5, 0, 0, None) for t in range(48, 81)])
    write(tmp_path, "words", 1, True, [(t / 4, 0, 30, 30, [0, 2, 1]) for t in range(40, 81)])
    lines = Lines.read(tmp_path)
    w = window(lines, 11.0, 19.0, {"count"}, {"words"})
    assert w.sink_per_s == pytest.approx(150, rel=0.01)
    assert w.spout_emits == 32 * 30 and w.acks == 32 * 30
    assert w.latency.total == 32 * 3
    assert lines.first({"count"}, "in") == 10.0
    assert timeline(lines, {"count"}, 10.0)[0] == (0.0, 100.0)


def test_process_kinds_come_from_command_lines():
    assert kind_of(["/usr/bin/java", "-cp", "x", "org.apache.storm.LocalCluster"]) == "storm jvm"
    probe = ["python", "-m", "heronbridge.conformance.bench.probe_run", "-s json a.B"]
    assert kind_of(probe, "storm jvm") == "storm component"
    assert kind_of(probe, "task") == "task subprocess"
    assert kind_of(["python", "-m", "heronbridge.runtime.instance", "--task", "3"]) == "task"
    assert kind_of(["python", "-m", "heronbridge.runtime.stream_manager"]) == "stream manager"
    assert kind_of(["python", "-m", "heronbridge.runtime.scheduler.executor"]) == "executor"
    assert kind_of(["python", "-m", "heronbridge.runtime.scheduler"]) == "scheduler"


def test_ratios_compare_saturated_throughput_and_fixed_load_latency():
    def run(sink, p99):
        return {"saturation": {"sink_per_s": sink, "p99_ms": p99, "cpu_s_per_million": 10.0},
                "fixed": {"p50_ms": p99 / 2, "p99_ms": p99, "p999_ms": p99 * 2}}
    result = {"systems": {"storm": run(5_000, 10.0), "runtime": run(60_000, 1.0)},
              "fused": {"sink_per_s": 75_000}}
    r = ratios(result)
    assert r["throughput_runtime_over_storm"] == pytest.approx(12)
    assert r["p99_latency_storm_over_runtime"] == pytest.approx(10)
    assert r["throughput_runtime_over_fused"] == pytest.approx(0.8)
    result["systems"]["runtime"]["fixed"]["p99_ms"] = None  # acking off: no trees
    assert ratios(result)["p99_latency_storm_over_runtime"] is None
