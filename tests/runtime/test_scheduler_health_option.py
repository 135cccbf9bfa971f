"""The health manager is one of container 0's processes unless switched off
(`--health off` on run and submit, or heronbridge.health: off)."""

from __future__ import annotations

import argparse

from rt_components import EndlessSpout, RecordingBolt

from heronbridge.cli.options import add_health_option, apply_health_option
from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.scheduler.executor import Executor
from heronbridge.runtime.scheduler.local import submit_plan


def plan(tmp_path, **config):
    b = TopologyBuilder("healthy", {"test.out": str(tmp_path), **config})
    b.spout("source", EndlessSpout)
    b.bolt("sink", RecordingBolt, inputs=["source"])
    return b.build()


def children(state, home, tmp_path, p) -> list[str]:
    submit_plan(state, home, p)
    return [c.name for c in Executor(state, p.name, 0, tmp_path / "c0").children]


def test_the_health_manager_runs_in_container_0_unless_off(home, state, tmp_path):
    assert "health-manager" in children(state, home, tmp_path, plan(tmp_path))
    parser = argparse.ArgumentParser()
    add_health_option(parser)
    off = plan(tmp_path)
    apply_health_option(parser.parse_args(["--health", "off"]), off)
    assert off.config["heronbridge.health"] == "off"
    assert "health-manager" not in children(state, home, tmp_path, off)
