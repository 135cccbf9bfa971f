"""The fused ceiling: the project's components in one process, one instance each, every
emit handed straight to the next component's `process` (no transport, no batching, no
acker), under pystorm's own loop code and the same probe the systems run under. What is
left is the cost of the measured code itself, which no system can go under.

With `"floor": true` it measures the user-code floor instead: the components' own
methods (`next_tuple`, `process`, the spout's `ack`) called directly, each emit building
the input Tuple of the subscribers' `process` and nothing else (no pystorm loop, no
messages, no probe); what separates a system from it is the framework's cost:

    python -m heronbridge.conformance.bench.fused SETTINGS_JSON   (prints the result as JSON)
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

from . import BenchError, spouts_ran_dry
from .probe import DIR_OPTION, Probe

MODULE = "heronbridge.conformance.bench.fused"
IGNORED = {"ack", "fail", "sync", "log", "metrics", "error"}


class _Inbox:
    """A pystorm serializer: messages come from a deque, go to the fused router, and
    pass the probe both ways."""

    output_stream = None  # not stdout: pystorm leaves print() alone

    def __init__(self, router: Fused, name: str) -> None:
        self.router = router
        self.name = name
        self.queue: deque[Any] = deque()
        self.probe = Probe(router.probe_conf) if router.probe_conf is not None else None

    def read_message(self) -> Any:
        if self.probe is None:
            return self.queue.popleft()
        while True:
            mine, back = self.probe.down(self.queue.popleft())
            for msg in back:
                self.router.route(self.name, msg)
            if mine:
                self.queue.extendleft(reversed(mine[1:]))
                return mine[0]

    def send_message(self, msg: dict[str, Any]) -> None:
        if self.probe is None:
            self.router.route(self.name, msg)
            return
        for out in self.probe.up(msg):
            self.router.route(self.name, out)


class Fused:
    def __init__(self, plan: Any, sink: set[str], probe_conf: dict[str, Any] | None) -> None:
        self.plan = plan
        self.probe_conf = probe_conf
        self.components: dict[str, Any] = {}  # name -> pystorm component, one each
        self.inboxes: dict[str, _Inbox] = {}
        self.sink = sink
        self.sunk = 0
        self.roots: list[Any] = []  # spout msg ids emitted by the current `next`
        self.ids = 0
        self.subscribers = {(name, stream): [bolt for bolt, _ in plan.subscribers(name, stream)]
                            for name, spec in plan.components.items() for stream in spec.outputs}
        self.bolts = [n for n in _depth_order(plan) if not plan.components[n].is_spout]

    def add(self, name: str, component: Any) -> None:
        """A pystorm component, its pipes replaced by an inbox of this router."""
        component.serializer = self.inboxes[name] = _Inbox(self, name)
        self.components[name] = component

    def route(self, source: str, msg: dict[str, Any]) -> None:
        command = msg.get("command")
        if command != "emit":
            if command in IGNORED or command is None:
                return
            msg = f"component {source!r}: unexpected message {msg!r}"
            raise BenchError(msg)
        stream = msg.get("stream") or "default"
        targets = self.subscribers.get((source, stream), [])
        for bolt in targets:
            self.ids += 1
            self.inboxes[bolt].queue.append({"id": str(self.ids), "comp": source,
                                            "stream": stream, "task": 1, "tuple": msg["tuple"]})
            if bolt in self.sink:
                self.sunk += 1
        if msg.get("id") is not None:
            self.roots.append(msg["id"])
        if msg.get("need_task_ids", True) and msg.get("task") is None:
            self.inboxes[source].queue.append([1] * len(targets))

    def step(self, spout: str) -> None:
        """One `next` of the spout, everything it caused, then the acks of its roots."""
        component, inbox = self.components[spout], self.inboxes[spout]
        inbox.queue.append({"command": "next"})
        component._run()
        busy = True
        while busy:
            busy = False
            for bolt in self.bolts:
                queue, run = self.inboxes[bolt].queue, self.components[bolt]._run
                while queue:
                    busy = True
                    run()
        roots, self.roots = self.roots, []
        for root in roots:
            inbox.queue.append({"command": "ack", "id": root})
            component._run()


class Floor:
    """The user-code floor: components' own methods, a collector that only hands the
    values on. Every component keeps its class; only emit, ack and fail are replaced."""

    def __init__(self, plan: Any, sink: set[str]) -> None:
        from pystorm.component import Tuple

        self.plan = plan
        self.sink = sink
        self.sunk = 0
        self.ids = 0
        self.components: dict[str, Any] = {}
        self.roots: list[Any] = []
        self._tuple = Tuple
        self.subscribers = {(name, stream): [bolt for bolt, _ in plan.subscribers(name, stream)]
                            for name, spec in plan.components.items() for stream in spec.outputs}

    def add(self, name: str, component: Any) -> None:
        self.components[name] = component

    def ready(self) -> None:
        """After initialize: bind each component's emit to its subscribers' process."""
        for name, component in self.components.items():
            is_spout = self.plan.components[name].is_spout
            component.emit = self._emitter(name, component, is_spout)
            if not is_spout:
                component.ack = component.fail = _nothing

    def _emitter(self, name: str, component: Any, is_spout: bool) -> Any:
        subscribers, components, sink = self.subscribers, self.components, self.sink
        tuple_cls = self._tuple

        def emit(tup: Any, tup_id: Any = None, stream: str | None = None, anchors: Any = None,
                 direct_task: Any = None, need_task_ids: bool = False) -> Any:
            stream = stream or "default"
            targets = subscribers.get((name, stream), ())
            for bolt in targets:
                self.ids += 1
                receiver = components[bolt]
                types = receiver._source_tuple_types[name]
                values_type = types.get(stream)
                values = tuple(tup) if values_type is None else values_type(*tup)
                if bolt in sink:
                    self.sunk += 1
                receiver.process(tuple_cls(str(self.ids), name, stream, 1, values))
            if is_spout and tup_id is not None:
                self.roots.append(tup_id)
            return [1] * len(targets) if need_task_ids else None

        return emit

    def step(self, spout: str) -> None:
        component = self.components[spout]
        component.next_tuple()
        roots, self.roots = self.roots, []
        for root in roots:
            component.ack(root)


def _nothing(*_: Any) -> None:
    """The floor's ack and fail."""


def _depth_order(plan: Any) -> list[str]:
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in depth:
            spec = plan.components[name]
            depth[name] = 1 + max((of(i.component) for i in spec.inputs), default=-1)
        return depth[name]

    return sorted(plan.components, key=lambda n: (of(n), n))


def run_fused(settings: dict[str, Any]) -> dict[str, Any]:
    from heronbridge.compat.streamparse import load_project
    from heronbridge.runtime.api.context import TopologyContext
    from heronbridge.runtime.plan.logical import resolve_import_path
    from heronbridge.shims.common.handshake import handshake
    from heronbridge.shims.storm import keys

    workdir = Path(settings["workdir"])
    project = load_project(settings["project"], settings.get("topology"),
                           settings.get("environment"), settings.get("options") or {},
                           False, workdir / "resources")
    project.install_resources(workdir / "resources")
    plan = project.plan
    single = {n: dataclasses.replace(s, parallelism=1) for n, s in plan.components.items()}
    plan = dataclasses.replace(plan, components=single)
    os.chdir(workdir / "resources")
    sys.path.insert(0, os.getcwd())
    pid_dir = tempfile.mkdtemp(prefix="pids-", dir=workdir)
    floor = settings.get("floor", False)
    probe = {DIR_OPTION: str(workdir / "probes")} \
        if settings.get("probe", True) and not floor else None
    fused = Floor(plan, set(settings["sink"])) if floor else Fused(plan, set(settings["sink"]),
                                                                   probe)
    for name in sorted(plan.components):
        spec = plan.components[name]
        class_path = spec.config.get(keys.CLASS)
        if not class_path:
            msg = (f"topology {plan.name!r}, component {name!r}: the fused ceiling runs "
                   "Python (streamparse) components only; this one is a shell command")
            raise BenchError(msg)
        cls = resolve_import_path(class_path)
        component = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(),
                        serializer="json")
        fused.add(name, component)
    for name, component in fused.components.items():
        context = TopologyContext.build(plan, plan.name, _task_of(plan, name))
        if floor:  # its own messages (logs) go nowhere
            component.serializer = _Inbox(Fused(plan, set(), None), name)
        component.serializer.queue.append(handshake(context, pid_dir,
                                                    plan.components[name].is_spout))
        conf, ctx = component.read_handshake()
        component._setup_component(conf, ctx)
        component.initialize(conf, ctx)
    if floor:
        fused.ready()
    spouts = [n for n, s in plan.components.items() if s.is_spout]
    warm_end = time.perf_counter() + settings.get("warmup", 0.5)
    while time.perf_counter() < warm_end:
        for spout in spouts:
            fused.step(spout)
    fused.sunk = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    end = t0 + settings["seconds"]
    tail = end - max(1.0, settings["seconds"] / 10)  # the spouts must still emit in here
    steps, emitted_by_tail = 0, None
    while True:
        for spout in spouts:
            fused.step(spout)
        steps += 1
        if steps % 64 == 0:
            now = time.perf_counter()
            if emitted_by_tail is None and now >= tail:
                emitted_by_tail = fused.ids
            if now >= end:
                break
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if not fused.sunk or fused.ids == emitted_by_tail:
        raise spouts_ran_dry(plan.name, f"the fused run's {seconds:.1f}s window", set(spouts))
    return {"sink_tuples": fused.sunk, "seconds": seconds,
            "sink_per_s": fused.sunk / seconds,
            "cpu_s_per_million": cpu / fused.sunk * 1e6}


def _task_of(plan: Any, name: str) -> int:
    from heronbridge.runtime.plan.tasks import TaskLayout

    return TaskLayout.of(plan).component_tasks[name][0]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        result = run_fused(json.loads(args[0]))
    except BenchError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
