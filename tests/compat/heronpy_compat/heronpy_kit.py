"""heronpy plans built in the test process, and their components hosted in it on the
runtime's real collectors (no processes, no sockets)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from heronbridge.compat.heronpy.loader import file_plan, heron_options, topologies_in
from heronbridge.runtime.api.context import TopologyContext
from heronbridge.runtime.api.tuple import tuple_class
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.instance.emitter import BoltEmitter, SpoutEmitter
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer
from heronbridge.shims.heronpy.host import HeronpyBolt, HeronpySpout

HERE = Path(__file__).resolve().parent


def build_plan(name: str, build: Callable[[Any], None], config: dict | None = None,
               options: dict | None = None) -> LogicalPlan:
    """The plan of a heronpy TopologyBuilder that `build(builder)` fills in."""
    from heronpy.api.topology import TopologyBuilder

    with tempfile.TemporaryDirectory() as defn_dir, heron_options(defn_dir):
        builder = TopologyBuilder(name)
        build(builder)
        builder.set_config(config or {})
        proto, _ = topologies_in(SimpleNamespace(builder=builder), defn_dir)[name]
    return file_plan(proto, options, [str(HERE)])


class Hosted:
    """One task of `plan`'s `component`, hosted here."""

    def __init__(self, plan: LogicalPlan, component: str, index: int = 0) -> None:
        self.plan = plan
        self.task = TaskLayout.of(plan).component_tasks[component][index]
        spec = plan.components[component]
        self.config = plan.component_config(component)
        conf = TopologyConfig.read(self.config, plan.name, component)
        self.context = TopologyContext.build(plan, "test-id", self.task)
        kind = SpoutEmitter if spec.is_spout else BoltEmitter
        self.emitter = kind(plan, self.task, make_serializer(conf.serializer), conf.acking,
                            frozenset(), self.context, seed=self.task)
        self.host = HeronpySpout() if spec.is_spout else HeronpyBolt()
        self.host.config, self.host.context = self.config, self.context
        self.host.collector = self.emitter
        start = self.host.open if spec.is_spout else self.host.prepare
        start(self.config, self.context, self.emitter)
        self.user = self.host.user

    def runtime_tuple(self, source: str, values: list, stream: str = "default",
                      root: int = 0, edge: int = 0) -> Any:
        task = TaskLayout.of(self.plan).component_tasks[source][0]
        fields = self.plan.components[source].outputs[stream].fields
        return tuple_class(source, stream, task, fields)(values, root, edge)

    def receive(self, source: str, values: list, stream: str = "default", root: int = 0,
                edge: int = 0) -> Any:
        """Execute one input tuple; returns the runtime tuple."""
        tup = self.runtime_tuple(source, values, stream, root, edge)
        self.host.execute(tup)
        return tup

    def sent(self) -> list[tuple[int, tuple]]:
        """(destination task, record) for everything emitted and not yet flushed."""
        return [(b.task, r) for b in self.emitter._buffers for r in b.records]

    def settled(self) -> dict[str, list[int]]:
        """The ack (root, xor) pairs and failed roots the next flush sends."""
        out: dict[str, list[int]] = {"ack": [], "fail": [], "init": []}
        names = {frames.ACK: "ack", frames.FAIL: "fail", frames.INIT: "init"}
        for frame in self.emitter.flush():
            _, kind, _ = frames.HEADER.unpack_from(frame)
            if kind in names:
                out[names[kind]] += frames.ints_from(
                    memoryview(frame)[frames.HEADER_SIZE:]).tolist()
        return out
