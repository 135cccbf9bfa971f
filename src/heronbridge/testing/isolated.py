"""One component on its own: the test hands a bolt its input tuples (or calls a spout's
next_tuple and settles its trees) and reads what it emitted, acked, failed and logged.

The component is one task of its topology, hosted as the runtime hosts it, so its API's
semantics hold: a streamparse component runs under pystorm's own logic (auto-ack,
auto-anchor, auto-fail, BatchingBolt's batches on ticks, ReliableSpout's replays on
fail). Nothing downstream runs: what it sends is noted and dropped. Time is simulated
as in SimulatedTopology: `advance` fires the bolt's tick tuples, and fails a spout's
trees older than the message timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

from heronbridge.runtime.api.tuple import Tuple, tick_tuple
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.errors import where
from heronbridge.runtime.instance.bolt_driver import BoltDriver
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.plan.tasks import TaskLayout

from .errors import TestingError
from .loading import load_sandboxed
from .recorder import Recorder
from .result import ComponentRecord


class Isolated:
    def __init__(self, source: Any, component: str, *, name: str | None = None,
                 config: dict[str, Any] | None = None, env: str | None = None,
                 task_index: int = 0, workdir: str | Path | None = None) -> None:
        self._stack = ExitStack()
        self.clock = 0.0
        try:
            loaded = load_sandboxed(self._stack, source, name, env, config, workdir)
            self.plan = plan = loaded.plan
            layout = TaskLayout.of(plan)
            tasks = layout.component_tasks.get(component)
            if tasks is None or component not in plan.components:
                msg = (f"topology {plan.name!r}: expected a component among "
                       f"{sorted(plan.components)}, received {component!r}")
                raise TestingError(msg)
            if not 0 <= task_index < len(tasks):
                msg = (f"topology {plan.name!r}, component {component!r}: expected a "
                       f"task_index among 0..{len(tasks) - 1}, received {task_index}")
                raise TestingError(msg)
            self.component = component
            self.recorder = Recorder()
            self._stack.enter_context(self.recorder.listening())
            task = self.task = Task(f"{plan.name}-isolated", tasks[task_index], 0, "", "",
                                    secret=b"")
            task.attach(plan, frozenset(layout.task_component), seed=task.task)
            task.send = lambda frames: None  # nothing downstream runs
            self.recorder.watch(task)
            with self._calling("starting"):
                task.start_component()
            self.recorder.reattach()
            self._stack.callback(self._stop)
            self.tick_every: float | None = None
            if task.is_spout:
                self.recorder.watch_spout(task)
                conf = task.conf
                self.timeout = conf.message_timeout_secs \
                    if conf.acking and conf.message_timeouts else None
                with self._calling("activating"):
                    task.active = True
                    task.user.activate()
            else:
                self._driver = BoltDriver(task)
                self.tick_every = TopologyConfig.read(task.user.config, plan.name,
                                                      component).tick_freq_secs
                self.next_tick = self.tick_every or 0.0
        except BaseException:
            self._stack.close()
            raise

    @contextmanager
    def _calling(self, doing: str) -> Iterator[None]:
        with self.recorder.running(self.task, doing):
            yield
            self.task.flush()

    # -- a bolt ---------------------------------------------------------------------

    def execute(self, values: list[Any], source: str | None = None,
                stream: str = "default") -> None:
        """Hand the bolt one input tuple from `source` (default: its only input
        component) on `stream`, with the values as the topology's serializer carries
        them."""
        self._need(spout=False, what="execute")
        plan, spec = self.plan, self.plan.components[self.component]
        sources = sorted({i.component for i in spec.inputs})
        source = source or (sources[0] if len(sources) == 1 else None)
        if source is None or not any(i.component == source and i.stream == stream
                                     for i in spec.inputs):
            heard = sorted({(i.component, i.stream) for i in spec.inputs})
            msg = (f"{self._where()}: expected an input it subscribes to among {heard}, "
                   f"received source {source!r}, stream {stream!r}")
            raise TestingError(msg)
        fields = plan.components[source].outputs[stream].fields
        if not isinstance(values, (list, tuple)) or len(values) != len(fields):
            msg = (f"{self._where()}: expected {len(fields)} values for {source}:{stream}'s "
                   f"fields {list(fields)}, received {values!r}")
            raise TestingError(msg)
        serializer = self.task.serializer
        carried = serializer.decode(serializer.encode([(list(values),)]))[0][0]
        src_task = TaskLayout.of(plan).component_tasks[source][0]
        tup = Tuple.make(source, stream, src_task, list(carried), fields)
        with self._calling(f"executing {list(values)!r}"):
            self._driver.run_tuples([tup])

    def tick(self) -> None:
        """One tick tuple, now (whatever the bolt's tick frequency)."""
        self._need(spout=False, what="tick")
        with self._calling("executing a tick tuple"):
            self._driver.run_tuples([tick_tuple(self.tick_every or 1)])
        self.recorder.of(self.component).ticks += 1

    # -- a spout --------------------------------------------------------------------

    def next_tuple(self, calls: int = 1) -> None:
        """Call the spout's next_tuple `calls` times."""
        self._need(spout=True, what="next_tuple")
        em = cast("SpoutEmitter", self.task.emitter)
        em.now = self.clock
        with self._calling("in next_tuple"):
            for _ in range(calls):
                self.task.user.next_tuple()
            if em.ack_now:  # at-most-once: acked as soon as emitted
                acked, em.ack_now = em.ack_now, []
                for msg_id in acked:
                    self.task.user.ack(msg_id)

    def ack(self, msg_id: Any) -> None:
        """Tell the spout the tree of `msg_id` completed."""
        self._settle(msg_id, "ack")

    def fail(self, msg_id: Any) -> None:
        """Tell the spout the tree of `msg_id` failed (a ReliableSpout replays it)."""
        self._settle(msg_id, "fail")

    @property
    def pending(self) -> list[Any]:
        """A spout's message ids whose trees are neither acked nor failed yet."""
        self._need(spout=True, what="pending")
        return [msg_id for msg_id, _ in cast("SpoutEmitter", self.task.emitter).pending.values()]

    def _settle(self, msg_id: Any, how: str) -> None:
        self._need(spout=True, what=how)
        pending = cast("SpoutEmitter", self.task.emitter).pending
        root = next((r for r, (m, _) in pending.items() if m == msg_id), None)
        if root is None:
            msg = (f"{self._where()}: {how} of message id {msg_id!r}, which has no pending "
                   f"tree; pending: {self.pending}")
            raise TestingError(msg)
        del pending[root]
        cast("SpoutEmitter", self.task.emitter).now = self.clock  # for what it replays
        with self._calling(f"in {how}({msg_id!r})"):
            getattr(self.task.user, how)(msg_id)

    # -- both -----------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Let `seconds` simulated seconds pass: a bolt's ticks fire on time; a spout's
        trees older than the message timeout fail."""
        end = self.clock + seconds
        if self.task.is_spout:
            self.clock = end
            if self.timeout is not None:
                pending = cast("SpoutEmitter", self.task.emitter).pending
                for root, (msg_id, at) in sorted(pending.items(), key=lambda kv: kv[1][1]):
                    if at + self.timeout <= end and root in pending:
                        self._settle(msg_id, "fail")
            return
        while self.tick_every and self.next_tick <= end:
            self.clock = self.next_tick
            self.tick()
            self.next_tick += self.tick_every
        self.clock = end

    @property
    def record(self) -> ComponentRecord:
        return self.recorder.of(self.component)

    def emitted(self, stream: str = "default") -> list[list[Any]]:
        return list(self.record.emitted.get(stream, []))

    def anchors(self, stream: str = "default") -> list[list[list[Any]]]:
        """For each emit on `stream`, the values of the inputs it was anchored to."""
        return list(self.record.anchors.get(stream, []))

    @property
    def acked(self) -> list[Any]:
        return list(self.record.acked)

    @property
    def failed(self) -> list[Any]:
        return list(self.record.failed)

    @property
    def logs(self) -> list[str]:
        return list(self.record.logs)

    def _need(self, spout: bool, what: str) -> None:
        if self.task.is_spout != spout:
            kind = "a spout" if self.task.is_spout else "a bolt"
            msg = f"{self._where()}: {what} applies to {'spouts' if spout else 'bolts'}; " \
                  f"this is {kind}"
            raise TestingError(msg)

    def _where(self) -> str:
        return where(self.task.topology, self.task.component, self.task.task)

    def _stop(self) -> None:
        with self._calling("closing"):
            self.task.stop_component()

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Isolated:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def isolate(source: Any, component: str, **options: Any) -> Isolated:
    """One component of a topology on its own (see Isolated); close it when done, or use
    it as a context manager."""
    return Isolated(source, component, **options)
