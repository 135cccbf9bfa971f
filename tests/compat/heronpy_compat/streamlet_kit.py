"""A Streamlet topology run in the test process: every task hosted here (heronpy_kit's
Hosted, on the runtime's real collectors and groupings), tuples carried between tasks
through the topology's serializer, ticks when the test says."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from heronpy_kit import Hosted, build_plan

from heronbridge.runtime import config as rt
from heronbridge.runtime.api.tuple import tick_tuple, tuple_class
from heronbridge.runtime.instance.emitter import stream_table
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.wire.serde import make_serializer


class InProcess:
    def __init__(self, streamlets: Any, config: dict | None = None,
                 name: str = "streamlets") -> None:
        self.plan = build_plan(name, streamlets.build, config)
        layout = TaskLayout.of(self.plan)
        self.component_tasks = layout.component_tasks
        self.hosted = {task: Hosted(self.plan, component, i)
                       for component, tasks in layout.component_tasks.items()
                       if component in self.plan.components  # not __acker
                       for i, task in enumerate(tasks)}
        self.task_component = layout.task_component
        self.streams = stream_table(self.plan)
        self.serializer = make_serializer(self.plan.config[rt.SERIALIZER])
        # (source component, destination component) -> the first values delivered
        self.delivered: dict[tuple[str, str], list] = defaultdict(list)
        self.inputs: dict[int, list] = defaultdict(list)  # task -> runtime tuples executed

    def user(self, component: str, index: int = 0) -> Any:
        return self.hosted[self.component_tasks[component][index]].user

    def out(self, source: str, to: str) -> list:
        return self.delivered[(source, to)]

    def run(self, rounds: int = 10_000) -> None:
        """Call every spout's next_tuple, carrying what follows, until none emits."""
        spouts = [h for h in self.hosted.values() if self.plan.components[
            self.task_component[h.task]].is_spout]
        for _ in range(rounds):
            before = [s.emitter.emitted for s in spouts]
            for spout in spouts:
                spout.host.next_tuple()
            self.carry()
            if [s.emitter.emitted for s in spouts] == before:
                return

    def tick(self, component: str) -> None:
        for task in self.component_tasks[component]:
            self.hosted[task].host.execute(tick_tuple(1))
        self.carry()

    def carry(self) -> None:
        """Deliver everything emitted, and what that emits, until nothing is left."""
        moved = True
        while moved:
            moved = False
            for hosted in list(self.hosted.values()):
                source = self.task_component[hosted.task]
                for buf in hosted.emitter._buffers:
                    records, buf.records = buf.records, []
                    if not records:
                        continue
                    moved = True
                    component, stream, fields = self.streams[buf.stream]
                    cls = tuple_class(component, stream, hosted.task, fields)
                    dest = self.hosted[buf.task]
                    for record in self.serializer.decode(self.serializer.encode(records)):
                        tup = cls(record[0], *(record[1:] or (0, 0)))
                        self.delivered[(source, self.task_component[buf.task])].append(
                            record[0][0])
                        self.inputs[buf.task].append(tup)
                        dest.host.execute(tup)
