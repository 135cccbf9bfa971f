"""One component on its own: the test hands a bolt its input tuples (or calls a spout's
next_tuple and settles its trees) and reads what it emitted, acked, failed and logged.

The component is one task of its topology, hosted as the runtime hosts it, so its API's
semantics hold: a streamparse component runs under pystorm's own logic (auto-ack,
auto-anchor, auto-fail, BatchingBolt's batches on ticks, ReliableSpout's replays on
fail), and the task's step (runtime/instance/step.py) calls it under the policy its
process would: the in-flight window, acks and fails as the stream manager sends them.
Nothing downstream runs: what it sends is noted and dropped. Time is simulated as in
SimulatedTopology: `advance` fires the bolt's tick tuples, and times out a spout's trees
older than the message timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

from heronbridge.runtime.api.tuple import Tuple, tick_tuple
from heronbridge.runtime.errors import where
from heronbridge.runtime.instance.bolt_step import BoltStep
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.instance.spout_step import SpoutStep
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.wire import frames

from .errors import TestingError
from .loading import load_sandboxed
from .recorder import Recorder
from .result import ComponentRecord


class _Dropped:
    """The link of a component on its own: nothing downstream runs."""

    out_bytes = 0

    def send(self, out: list[bytes]) -> None:
        pass


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
            task.link = _Dropped()
            self.recorder.watch(task)
            with self._calling("starting"):
                task.start_component()
            self.recorder.reattach()
            self._stack.callback(self._stop)
            clock = self._now
            self.step: SpoutStep | BoltStep = SpoutStep(task, clock) if task.is_spout \
                else BoltStep(task, clock)
            self.step.resume()  # a bolt's tick period, as its prepare left it
            if isinstance(self.step, SpoutStep):
                self.recorder.watch_spout(task)
                conf = task.conf
                self.timeout = conf.message_timeout_secs \
                    if conf.acking and conf.message_timeouts else None
                with self._calling("activating"):
                    self.step.control(control_pb2.TopologyStateChange(
                        state=topology_pb2.RUNNING))
        except BaseException:
            self._stack.close()
            raise

    def _now(self) -> float:
        return self.clock

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
        step = self._bolt("execute")
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
        serializer = self.task.attachment.serializer
        carried = serializer.decode(serializer.encode([(list(values),)]))[0][0]
        src_task = TaskLayout.of(plan).component_tasks[source][0]
        tup = Tuple.make(source, stream, src_task, list(carried), fields)
        with self._calling(f"executing {list(values)!r}"):
            step.run_tuples([tup])

    def tick(self) -> None:
        """One tick tuple, now (whatever the bolt's tick frequency)."""
        step = self._bolt("tick")
        with self._calling("executing a tick tuple"):
            step.run_tuples([tick_tuple(step.freq or 1)])
        self.recorder.of(self.component).ticks += 1

    # -- a spout --------------------------------------------------------------------

    def next_tuple(self, calls: int = 1) -> None:
        """Let the runtime call the spout's next_tuple `calls` times, as its task would:
        not while its in-flight window is full (topology.max.spout.pending, or without
        it a window that starts at one tree and grows as trees are acked)."""
        step = self._spout("next_tuple")
        em = cast("SpoutEmitter", self.task.emitter)
        with self._calling("in next_tuple"):
            for i in range(calls):
                step.wait(self.clock)
                if not step.begin(self.clock):
                    msg = (f"{self._where()}: next_tuple call {i + 1} of {calls} is held by "
                           f"its in-flight window: {len(em.pending)} trees pending, limit "
                           f"{step.window.limit:g}; expected room in it (ack or fail "
                           "trees, let them time out with advance, or set "
                           "topology.max.spout.pending)")
                    raise TestingError(msg)
                self.task.user.next_tuple()
                step.returned(self.clock)

    def ack(self, msg_id: Any) -> None:
        """Tell the spout the tree of `msg_id` completed."""
        self._settle(msg_id, frames.ACKED, "ack")

    def fail(self, msg_id: Any) -> None:
        """Tell the spout the tree of `msg_id` failed (a ReliableSpout replays it)."""
        self._settle(msg_id, frames.FAILED, "fail")

    @property
    def pending(self) -> list[Any]:
        """A spout's message ids whose trees are neither acked nor failed yet."""
        self._spout("pending")
        return [msg_id for msg_id, _ in cast("SpoutEmitter", self.task.emitter).pending.values()]

    def _settle(self, msg_id: Any, kind: int, how: str) -> None:
        """What the stream manager says of the tree of `msg_id`, to the spout's step."""
        step = self._spout(how)
        pending = cast("SpoutEmitter", self.task.emitter).pending
        root = next((r for r, (m, _) in pending.items() if m == msg_id), None)
        if root is None:
            msg = (f"{self._where()}: {how} of message id {msg_id!r}, which has no pending "
                   f"tree; pending: {self.pending}")
            raise TestingError(msg)
        frame = frames.int_frame(kind, self.task.task, [root])
        with self._calling(f"in {how}({msg_id!r})"):
            step.received(frame, frames.split_frames(frame)[0])

    # -- both -----------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Let `seconds` simulated seconds pass: a bolt's ticks fire on time; a spout's
        trees older than the message timeout fail."""
        end = self.clock + seconds
        step = self.step
        if isinstance(step, SpoutStep):
            self.clock = end
            if self.timeout is not None:
                pending = cast("SpoutEmitter", self.task.emitter).pending
                for root, (msg_id, at) in sorted(pending.items(), key=lambda kv: kv[1][1]):
                    if at + self.timeout <= end and root in pending:
                        frame = frames.int_frame(frames.EXPIRED, self.task.task, [root])
                        with self._calling(f"in fail({msg_id!r}) (timed out)"):
                            step.received(frame, frames.split_frames(frame)[0])
            return
        while step.next_tick <= end:
            self.clock = step.next_tick
            with self._calling("executing a tick tuple"):
                step.done(self.clock)
            self.recorder.of(self.component).ticks += 1
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

    def _spout(self, what: str) -> SpoutStep:
        if not isinstance(self.step, SpoutStep):
            msg = f"{self._where()}: {what} applies to spouts; this is a bolt"
            raise TestingError(msg)
        return self.step

    def _bolt(self, what: str) -> BoltStep:
        if not isinstance(self.step, BoltStep):
            msg = f"{self._where()}: {what} applies to bolts; this is a spout"
            raise TestingError(msg)
        return self.step

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
