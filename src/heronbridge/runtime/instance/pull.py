"""The runtime as seen by a component that runs its own loop.

Most components are called by the runtime (`execute`, `next_tuple`). Some bring their
own loop and must keep it, in the main thread: pystorm's `Component.run()` reads one
message at a time and decides what to do with it. Such a component sets
`owns_loop = True` and gets a PullHost in `run(host)`; it asks the host for the next
input tuple (bolts) or the next command (spouts), and the host does everything else in
between: reading and writing the socket, flushing output per batch, acks, ticks,
backpressure, max spout pending and metrics.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Any, Protocol, runtime_checkable

from ..api.tuple import Tuple
from ..errors import ProtocolError
from .bolt_step import BoltStep
from .spout_step import SpoutStep
from .step import MAX_WAIT
from .task import Task


@runtime_checkable
class Watched(Protocol):
    """The link a pulled host waits on: the stream manager's frames and the component's
    own descriptors (connection.py's Connection)."""

    ready_fds: list[int]

    def poll(self, timeout: float | None, read: bool = True) -> tuple[bytes, list]: ...

    def watch(self, fd: int) -> None: ...

    def unwatch(self, fd: int) -> None: ...


class _Commands:
    """The spout as its step calls it: each call becomes a command for `next_command`."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: deque[tuple[str, Any]] = deque()

    def ack(self, msg_id: Any) -> None:
        self.events.append(("ack", msg_id))

    def fail(self, msg_id: Any) -> None:
        self.events.append(("fail", msg_id))

    def activate(self) -> None:
        self.events.append(("activate", None))

    def deactivate(self) -> None:
        self.events.append(("deactivate", None))


class PullHost:
    """What `run(host)` of a loop-owning component talks to.

    `collector`, `config` and `context` are as for other components. Another thread may
    emit, ack or fail while holding `lock`, then call `wake()` so the output goes out
    without waiting for the main thread's next call.
    """

    def __init__(self, task: Task, backlog: tuple[bytes, list] = (b"", [])) -> None:
        self._task = task
        self.config = task.user.config
        self.context = task.context
        self.collector = task.emitter
        self.topology = task.topology
        self.component = task.component
        self.task = task.task
        self.is_spout = task.is_spout
        self.lock = threading.RLock()
        conn: object = task.link
        if not isinstance(conn, Watched):
            msg = f"{task.loc()}: a component owns its loop only in a registered task"
            raise ProtocolError(msg)
        self._conn: Watched = conn
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._conn.watch(self._wake_r)
        self._commands = _Commands()
        self.step: SpoutStep | BoltStep = SpoutStep(
            task, flush=self.flush, component=self._commands) if task.is_spout \
            else BoltStep(task, flush=self.flush, pulled=True)
        self._calling = False  # the last command was "next"
        self._more = False  # ... and the step's burst goes on
        self._started = False
        self._holding = False
        self._up_when_told = False
        self.step.keep(*backlog)  # what came with the registration's reply
        with self.lock:
            self.step.resume()

    def _announce(self) -> None:
        """The component asks for its first event: it is set up (see InstanceStarted)."""
        self._started = True
        self._task.announce_started()
        if not self._up_when_told:
            self._task.mark_up()

    def hold_start(self) -> None:
        """The component says itself when it is set up (`started`), not by asking for its
        first event: a multilang bolt is once its subprocess has initialized."""
        self._holding = True

    def up_when_told(self) -> None:
        """The component starts when it asks for its first event, as usual, but is up (its
        uptime counts) only once it says so (`started`): a multilang spout's subprocess
        answers its first command only once every task has started."""
        self._up_when_told = True

    def started(self) -> None:
        self._holding = False
        if not self._started:
            self._announce()
        self._task.mark_up()

    # -- for the component --------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._task.stopping

    def wake(self) -> None:
        """From any thread: have the main thread's pending call return soon and flush."""
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:
            pass  # already signalled

    def watch(self, fd: int) -> None:
        """Also return from next_tuple / next_command (with this fd) when it is readable."""
        self._conn.watch(fd)

    def unwatch(self, fd: int) -> None:
        self._conn.unwatch(fd)

    def next_tuple(self, timeout: float | None = None) -> Tuple | int | None:
        """A bolt's next input (or tick) tuple; a watched fd that became readable; or
        None when `timeout` passed or the task is stopping. A tuple counts as executed
        when it is handed out."""
        step = self.step
        if not isinstance(step, BoltStep):
            msg = f"{self._task.loc()}: next_tuple is a bolt's; a spout asks next_command"
            raise ProtocolError(msg)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            tup = step.take()
            if tup is not None:
                return tup
            if not self._started and not self._holding:
                self._announce()
            if self._task.stopping:
                return None
            now = time.monotonic()
            ready = self._pump(self._wait(now, deadline, step.wait(now)), step.reading)
            if ready is not None:
                return ready
            if deadline is not None and time.monotonic() >= deadline and not step.inbox:
                return None

    def buffered(self, limit: int) -> list[Tuple]:
        """Up to `limit` more input tuples that are already here, without waiting: what
        the next calls of `next_tuple` would return at once."""
        return self.step.take_buffered(limit) if isinstance(self.step, BoltStep) else []

    def not_executed(self, n: int) -> None:
        """`n` input tuples handed out never finished: the subprocess they went to died
        holding them. Executed counts only what the component got through."""
        if isinstance(self.step, BoltStep):
            self.step.not_executed(n)

    def next_command(self, timeout: float | None = None) -> tuple[str, Any] | int | None:
        """A spout's next command: ("activate"|"deactivate"|"next", None) or
        ("ack"|"fail", msg_id); a watched fd that became readable; or None when
        `timeout` passed or the task is stopping."""
        step = self.step
        if not isinstance(step, SpoutStep):
            msg = f"{self._task.loc()}: next_command is a spout's; a bolt asks next_tuple"
            raise ProtocolError(msg)
        events = self._commands.events
        if not self._started and not self._holding:
            self._announce()
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._calling:  # the step's burst: does it go on after that call?
            self._calling = False
            with self.lock:
                self._more = step.returned(time.monotonic())
        while True:
            if events:
                return events.popleft()
            if self._task.stopping:
                self.flush()
                with self.lock:
                    step.stop()  # Storm deactivates a spout when its topology is killed
                self._more = False
                if events:
                    continue
                return None
            if self._more:
                self._more, self._calling = False, True
                return ("next", None)
            now = time.monotonic()
            with self.lock:
                wait = step.wait(now)
            if events:
                continue
            self.flush()
            ready = self._pump(self._wait(now, deadline, wait))
            if ready is not None:
                return ready
            if events:
                continue
            if step.begin(time.monotonic()):
                self._calling = True
                return ("next", None)
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def pump(self, timeout: float) -> int | None:
        """Run the runtime's side for up to `timeout` seconds without taking an event:
        returns a watched fd that became readable, or None."""
        now = time.monotonic()
        self.flush()
        step = self.step
        if isinstance(step, BoltStep):
            wait, reading = step.wait(now), step.reading
        else:
            wait, reading = max(0.0, min(MAX_WAIT, step.next_metrics - now)), True
        return self._pump(self._wait(now, now + timeout, wait), reading)

    def flush(self) -> None:
        with self.lock:
            self._task.flush()

    def exit(self, code: int) -> None:
        """Leave the process now with `code`, after sending what was emitted and acked
        (pystorm's exit after an exception it reported is a crash, as in the runner)."""
        try:
            with self.lock:
                if code and not self._task.stopping:
                    self._task.crashed()
                self._task.finish(self.step)
        finally:
            os._exit(code)

    # -- the loop's insides ---------------------------------------------------------

    @staticmethod
    def _wait(now: float, deadline: float | None, wait: float) -> float:
        """The step's wait, within the caller's deadline."""
        if deadline is not None:
            wait = min(wait, deadline - now)
        return max(0.0, wait)

    def _pump(self, wait: float, reading: bool = True) -> int | None:
        """Read and handle what arrived within `wait`; return a ready watched fd. Input
        waits in the socket while the step does not read it (so backpressure reaches the
        stream manager)."""
        data, found = self._conn.poll(wait, read=reading)
        if found:
            with self.lock:
                self.step.received(data, found)
        self.step.publish_due(time.monotonic())
        for fd in self._conn.ready_fds:
            if fd == self._wake_r:
                try:
                    os.read(self._wake_r, 4096)
                except BlockingIOError:
                    pass
                self.flush()
            else:
                return fd
        return None
