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
from typing import Any, cast

from ..api.tuple import Tuple, tick_tuple
from ..errors import ProtocolError
from ..telemetry import ACK_COUNT, CRASH_COUNT, EXECUTE_COUNT, NEXT_TUPLE_COUNT
from ..wire import frames
from .connection import Connection
from .emitter import SpoutEmitter
from .pacing import IDLE_WAIT, SpoutPacer
from .spout_driver import settle
from .task import Task

MAX_WAIT = 0.1  # wake at least this often, to flush and publish metrics
MAX_BUFFERED = 10_000  # input tuples read but not yet taken by the component


class PullHost:
    """What `run(host)` of a loop-owning component talks to.

    `collector`, `config` and `context` are as for other components. Another thread may
    emit, ack or fail while holding `lock`, then call `wake()` so the output goes out
    without waiting for the main thread's next call.
    """

    def __init__(self, task: Task) -> None:
        self._task = task
        task.on_activation = self.state_changed
        self.config = task.user.config
        self.context = task.context
        self.collector = task.emitter
        self.topology = task.topology
        self.component = task.component
        self.task = task.task
        self.is_spout = task.is_spout
        self.lock = threading.RLock()
        conn = task.conn
        if conn is None:
            msg = f"{task.loc()}: a component owns its loop only in a registered task"
            raise ProtocolError(msg)
        self._conn: Connection = conn
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._conn.watch(self._wake_r)
        conf = task.conf
        self._interval = conf.metrics_interval_secs
        self._next_metrics = time.monotonic() + self._interval
        self._tick_freq = conf.tick_freq_secs or 0.0
        self._next_tick = time.monotonic() + self._tick_freq if self._tick_freq else float("inf")
        self._batch: deque[Tuple] = deque()
        self._events: deque[tuple[str, Any]] = deque()
        self._active = False
        task.reset_backpressure()
        self._window = task.window
        self._pacer = task.pacer  # a spout's
        self._execute_secs = conf.execute_batch_secs
        self._handed_since = 0.0  # when the first input tuple handed out unflushed went
        self._window_full = False
        self._held_at = 0.0  # when the window was last seen full (0: it was not)
        self._nexts = 0  # `next` commands since the last flush
        self._burst_began = 0.0
        self._burst_most = 0  # the emit count that ends the burst (its bytes bound)
        self._emitted_at_next: int | None = None
        self._next_at = 0.0  # when the last `next` went to the component
        self._started = False
        self._holding = False
        self._up_when_told = False
        data, found = task.backlog
        if found:
            self._frames(data, found)

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
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._batch:
                # A long batch sends its output every execute.batch.time, not at its end.
                now = time.monotonic()
                if not self._handed_since:
                    self._handed_since = now
                elif now - self._handed_since > self._execute_secs:
                    self.flush()
                    self._handed_since = now
                self._task.counts[EXECUTE_COUNT] += 1
                return self._batch.popleft()
            self.flush()  # a whole input batch is done: send its output on
            self._handed_since = 0.0
            if not self._started and not self._holding:
                self._announce()
            if self._task.stopping:
                return None
            now = time.monotonic()
            if now >= self._next_tick:
                self._next_tick = max(self._next_tick + self._tick_freq, now)
                self._task.counts[EXECUTE_COUNT] += 1
                return tick_tuple(self._tick_freq)
            ready = self._pump(self._wait(now, deadline, self._next_tick))
            if ready is not None:
                return ready
            if deadline is not None and time.monotonic() >= deadline and not self._batch:
                return None

    def buffered(self, limit: int) -> list[Tuple]:
        """Up to `limit` more input tuples that are already here, without waiting: what
        the next calls of `next_tuple` would return at once."""
        batch = self._batch
        n = min(limit, len(batch))
        self._task.counts[EXECUTE_COUNT] += n
        return [batch.popleft() for _ in range(n)]

    def not_executed(self, n: int) -> None:
        """`n` input tuples handed out never finished: the subprocess they went to died
        holding them. Executed counts only what the component got through."""
        self._task.counts[EXECUTE_COUNT] -= n

    def next_command(self, timeout: float | None = None) -> tuple[str, Any] | int | None:
        """A spout's next command: ("activate"|"deactivate"|"next", None) or
        ("ack"|"fail", msg_id); a watched fd that became readable; or None when
        `timeout` passed or the task is stopping."""
        em = cast("SpoutEmitter", self.collector)  # a spout's
        if not self._started and not self._holding:
            self._announce()
        deadline = None if timeout is None else time.monotonic() + timeout
        idle = False
        pacer = cast("SpoutPacer", self._pacer)
        if self._emitted_at_next is not None:
            idle = em.emitted == self._emitted_at_next  # the last `next` emitted nothing
            self._emitted_at_next = None
            if idle:
                pacer.idle(self._next_at, time.monotonic())
        while True:
            if em.ack_now:  # at-most-once: a msg id is acked as soon as it is emitted
                acked, em.ack_now = em.ack_now, []
                self._task.counts[ACK_COUNT] += len(acked)
                self._events.extend(("ack", msg_id) for msg_id in acked)
            if self._events:
                return self._events.popleft()
            if self._task.stopping:
                self.flush()
                if self._active:  # Storm deactivates a spout when its topology is killed
                    self._active = False
                    return ("deactivate", None)
                return None
            now = time.monotonic()
            self._window_full = len(em.pending) >= (
                self._window.resume_below(pacer.burst) if self._window_full
                else self._window.limit)
            if self._window_full:
                self._window.stalled(now)
                if self._held_at:
                    self._task.held_ms += (now - self._held_at) * 1000
                self._held_at = now
            elif self._held_at:
                self._task.held_ms += (now - self._held_at) * 1000
                self._held_at = 0.0
            waiting_acks = pacer.awaiting_acks(now) and em.pending
            if not idle and self._active and not self._window_full and not waiting_acks \
                    and not self._task.backpressured(now):
                if self._nexts >= pacer.burst or ((self._nexts or em.unflushed) and (
                        now - self._burst_began > pacer.burst_secs
                        or em.emitted >= self._burst_most or now < pacer.eager_until)):
                    # After a burst: send it, read what came.
                    self.flush()
                    ready = self._pump(0.0)
                    if ready is not None:
                        return ready
                    continue
                if not self._nexts:
                    self._burst_began = now
                    self._burst_most = pacer.burst_end(em.emitted, em.bytes_per_emit)
                self._nexts += 1
                self._task.counts[NEXT_TUPLE_COUNT] += 1
                em.now = self._next_at = now
                self._emitted_at_next = em.emitted
                return ("next", None)
            self.flush()
            wait = IDLE_WAIT if idle and self._active else None
            if waiting_acks and self._active:
                wait = max(wait or 0.0, pacer.acks_until - now)
            ready = self._pump(self._wait(now, deadline, now + wait if wait else None))
            idle = False
            if ready is not None:
                return ready
            if deadline is not None and time.monotonic() >= deadline and not self._events:
                return None

    def pump(self, timeout: float) -> int | None:
        """Run the runtime's side for up to `timeout` seconds without taking an event:
        returns a watched fd that became readable, or None."""
        now = time.monotonic()
        self.flush()
        return self._pump(self._wait(now, now + timeout, None))

    def flush(self) -> None:
        with self.lock:
            self._task.flush()
        self._nexts = 0

    def exit(self, code: int) -> None:
        """Leave the process now with `code`, after sending what was emitted and acked
        (pystorm's exit after an exception it reported is a crash, as in the runner)."""
        try:
            with self.lock:
                if code and not self._task.stopping:
                    self._task.counts[CRASH_COUNT] += 1
                self._task.finish()
        finally:
            os._exit(code)

    # -- the loop's insides ---------------------------------------------------------

    def _wait(self, now: float, deadline: float | None, until: float | None) -> float:
        limit = min(self._next_metrics, now + MAX_WAIT)
        if deadline is not None:
            limit = min(limit, deadline)
        if until is not None:
            limit = min(limit, until)
        return max(0.0, limit - now)

    def _pump(self, wait: float) -> int | None:
        """Read and handle what arrived within `wait`; return a ready watched fd."""
        task = self._task
        # Input waits in the socket (so backpressure reaches the stream manager) while this
        # task's output is over the watermark or its component has not taken what was read.
        blocked = not self.is_spout and (task.backpressured(time.monotonic())
                                         or len(self._batch) >= MAX_BUFFERED)
        data, found = self._conn.poll(wait, read=not blocked)
        if found:
            self._frames(data, found)
        now = time.monotonic()
        if now >= self._next_metrics:
            task.publish()
            self._next_metrics = now + self._interval
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

    def _frames(self, data: bytes, found: list) -> None:
        task = self._task
        if self.is_spout:
            with self.lock:
                settle(task, data, found, self._ack_event, self._fail_event)
            return
        for kind, _dest, start, end in found:
            if kind == frames.DATA:
                self._batch.extend(task.decode(data, start, end))
            elif kind == frames.CONTROL:
                task.control(task.parse_control(data, start, end))

    def _ack_event(self, msg_id: Any) -> None:
        self._events.append(("ack", msg_id))

    def _fail_event(self, msg_id: Any) -> None:
        self._events.append(("fail", msg_id))

    def state_changed(self, running: bool) -> None:
        """Called by the task when the topology is activated or deactivated."""
        if running != self._active:
            self._active = running
            if self._pacer is not None:
                self._pacer.activated(time.monotonic())
            self._events.append(("activate" if running else "deactivate", None))
