"""What user code implements: spouts and bolts, and the collectors they emit through."""

from __future__ import annotations

from typing import Any, Protocol

from .context import TopologyContext
from .tuple import Tuple


class SpoutCollector(Protocol):
    def emit(self, values: list, msg_id: Any = None, stream: str = "default",
             direct_task: int | None = None) -> tuple[int, ...]:
        """Send a tuple; with a `msg_id` under at-least-once it is tracked, and the
        spout's `ack(msg_id)` or `fail(msg_id)` follows. Returns the target task ids."""

    def report_error(self, error: BaseException) -> None: ...


class BoltCollector(Protocol):
    def emit(self, values: list, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None) -> tuple[int, ...]:
        """Send a tuple anchored to `anchors` (a Tuple or a list of them). Returns the
        target task ids."""

    def ack(self, tup: Tuple) -> None: ...

    def fail(self, tup: Tuple) -> None: ...

    def report_error(self, error: BaseException) -> None: ...


class Spout:
    """A source of tuples. The runtime calls these methods from one thread only.

    `outputs` (optional) declares the streams: a list of field names for the default
    stream, or Stream objects; a topology declaration may override it.
    """

    outputs: Any = None
    config: dict
    context: TopologyContext
    collector: SpoutCollector

    def open(self, config: dict, context: TopologyContext, collector: SpoutCollector) -> None:
        """Called once before any other method."""

    def activate(self) -> None:
        """The topology is (again) running: next_tuple calls follow."""

    def deactivate(self) -> None:
        """The topology is paused: no next_tuple calls until activate."""

    def next_tuple(self) -> None:
        """Emit zero or more tuples; must not block."""
        raise NotImplementedError

    def ack(self, msg_id: Any) -> None:
        """The tuple tree rooted at `msg_id` was fully processed."""

    def fail(self, msg_id: Any) -> None:
        """The tuple tree rooted at `msg_id` failed or timed out."""

    def source_lag(self) -> float | None:
        """How much its source holds that it has not read yet (records, such as Kafka
        consumer lag), or None if it cannot tell; read at each metrics interval. The
        health manager takes a lag that keeps growing as a sign of too few tasks."""
        return None

    def close(self) -> None:
        """The task is shutting down."""


class Bolt:
    """A processor of tuples. Under at-least-once, ack or fail every input tuple."""

    outputs: Any = None
    config: dict
    context: TopologyContext
    collector: BoltCollector

    def prepare(self, config: dict, context: TopologyContext, collector: BoltCollector) -> None:
        """Called once before the first execute."""

    def execute(self, tup: Tuple) -> None:
        raise NotImplementedError

    def wake(self) -> float | None:
        """Called from the task's thread after each input batch, and again once the
        seconds it returned have passed (None: not before the next input batch). A bolt
        that acks or emits on an outside client's callbacks (a Kafka producer's delivery
        reports) serves them here, without a thread of its own and without waiting for
        its next input."""
        return None

    def cleanup(self) -> None:
        """The task is shutting down."""


class Stateful:
    """Mix into a Spout or Bolt to keep state under EFFECTIVELY_ONCE (Heron's
    StatefulComponent). The state of the newest consistent checkpoint comes back after
    any failure, and every task's state is from the same point of the input.

    At each (re)start the runtime builds the component anew and calls `init_state` before
    `open`/`prepare`, with a dict it keeps: change it in place, do not rebind it. Before a
    checkpoint it calls `pre_save`, then pickles that dict. A spout keeps its position in
    its source there, and emits again from it after a rollback.
    """

    def init_state(self, state: dict) -> None:
        self.state = state

    def pre_save(self, checkpoint_id: str) -> None:
        """About to save the state for `checkpoint_id`: put in it what is not yet there."""

    def post_save(self, checkpoint_id: str) -> None:
        """Checkpoint `checkpoint_id` is complete (every task saved it): what was
        prepared for it may now be published (Heron's ITwoPhaseStatefulComponent). Not
        called for every checkpoint: a task that misses it, or restarts, has the newest
        complete one's state back and publishes what that state holds."""


class LoopOwner:
    """A spout or bolt that keeps its own loop in the task's main thread.

    The runtime calls `run(host)` instead of the methods above. The component asks
    `host.next_tuple()` (bolts) or `host.next_command()` (spouts) for its next event, emits
    through `host.collector`, and returns from `run` when they answer None with
    `host.stopping` set. See runtime/instance/pull.py for the host.
    """

    owns_loop = True
    config: dict

    def run(self, host: Any) -> None:
        raise NotImplementedError
