"""heronpy's window bolts with exact windows, driven by the runtime's ticks.

heronpy's SlidingWindowBolt and TumblingWindowBolt ask for ticks at the slide interval
inside `initialize` (the host passes that on) and call `processWindow` at each tick.
As shipped, the sliding bolt stamps tuples with whole seconds and drops them only once
they are more than a window old, so the Streamlet's "tumbling" windows (a sliding bolt
whose slide is its duration) hand most tuples to two windows. Driven here instead:

- a window ends at a tick and holds the tuples that arrived in the `duration` seconds
  before it, by the task's monotonic clock; a tumbling window holds each tuple once;
- a window's start and end are epoch seconds (floats; heronpy gives whole seconds,
  which made neighbouring windows overlap): a tumbling window starts where the one
  before it ended;
- a tuple is acked when it has left its last window (heronpy's own rule);
- the Streamlet's reductions on a tumbling window fold each value as it arrives: the
  same left fold, in the same order, that their `processWindow` runs over the window,
  so a window costs one accumulator per key rather than every tuple it held (the tuples
  are kept only under at-least-once, to be acked).

A bolt that overrides `process` or `process_tick` keeps heronpy's behaviour.

Under EFFECTIVELY_ONCE a window is checkpointed (state.py): `save()` gives what it holds
(its tuples detached from the runtime's, a fold's accumulators, when the last window
ended; a sliding window's arrival times as ages, since the clock they were read on may
not be the one they come back to) and `restore()` puts that back into a new driver.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt, WindowContext
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.window import Window

from .tuples import HeronTuple

OUTPUT = "output"  # the Streamlet bolts' stream


class Detached:
    """Where a checkpointed tuple came from: what a HeronTuple reads of the runtime's
    tuple it holds (that one does not pickle), and nothing left to ack."""

    __slots__ = ("component", "stream", "task")
    _root = 0  # what the runtime's collector reads to ack or fail: no tree

    def __init__(self, component: str, stream: str, task: int) -> None:
        self.component, self.stream, self.task = component, stream, task

    def __getstate__(self) -> tuple:
        return self.component, self.stream, self.task

    def __setstate__(self, state: tuple) -> None:
        self.component, self.stream, self.task = state


def detach(tup: Any) -> HeronTuple:
    """A copy of a received tuple that pickles into a checkpoint."""
    if tup.roots.__class__ is Detached:
        return tup
    return HeronTuple(Detached(tup.component, tup.stream, tup.task), tup.values,
                      tup.creation_time)


def driver(user: Any, acking: bool) -> Any:
    """The window driver for a heronpy window bolt (after its `initialize`), or None."""
    cls = type(user)
    for base in (SlidingWindowBolt, TumblingWindowBolt):
        if isinstance(user, base):
            break
    else:
        return None
    if cls.process is not base.process or cls.process_tick is not base.process_tick:
        return None
    duration = getattr(user, "window_duration", None)
    if duration is None:  # no duration configured: heronpy's own code fails as on Heron
        return None
    slide = getattr(user, "slide_interval", duration)
    if slide < duration:
        return Sliding(user, duration)
    # The Streamlet's bolts, imported only for window bolts (they pull in its whole API).
    from heronpy.streamlet.impl.reducebykeyandwindowbolt import ReduceByKeyAndWindowBolt
    from heronpy.streamlet.impl.reducebywindowbolt import ReduceByWindowBolt

    for reduction, fold in ((ReduceByKeyAndWindowBolt, KeyedFold),
                            (ReduceByWindowBolt, Fold)):
        if isinstance(user, reduction) and cls.processWindow is reduction.processWindow:
            return fold(user, duration, acking)
    return Tumbling(user, duration)


class Tumbling:
    def __init__(self, user: Any, duration: int) -> None:
        self.user = user
        self.duration = duration
        self.tuples: list[Any] = []
        self.end: float | None = None  # when the last window ended

    def _context(self) -> WindowContext:
        """This window's times: it began when the last one ended (or `duration` ago)."""
        end = time.time()
        start, self.end = end - self.duration if self.end is None else self.end, end
        return WindowContext(start, end)

    def process(self, tup: Any) -> None:
        self.tuples.append(tup)

    def save(self) -> dict:
        return {"tuples": [detach(tup) for tup in self.tuples], "end": self.end}

    def restore(self, saved: dict) -> None:
        self.tuples = list(saved["tuples"])
        self.end = saved["end"]

    def process_tick(self, tick: Any) -> None:
        tuples, self.tuples = self.tuples, []
        self.user.processWindow(self._context(), tuples)
        ack = self.user.ack
        for tup in tuples:
            ack(tup)


class Sliding:
    clock = staticmethod(time.monotonic)  # when tuples arrive and windows end

    def __init__(self, user: Any, duration: int) -> None:
        self.user = user
        self.duration = duration
        self.tuples: deque[tuple[float, Any]] = deque()

    def process(self, tup: Any) -> None:
        self.tuples.append((self.clock(), tup))

    def save(self) -> dict:
        now = self.clock()
        return {"tuples": [(now - arrived, detach(tup)) for arrived, tup in self.tuples]}

    def restore(self, saved: dict) -> None:
        now = self.clock()
        self.tuples = deque((now - age, tup) for age, tup in saved["tuples"])

    def process_tick(self, tick: Any) -> None:
        tuples, ack = self.tuples, self.user.ack
        gone = self.clock() - self.duration  # arrived then or before: out of the window
        while tuples and tuples[0][0] <= gone:
            ack(tuples.popleft()[1])
        end = time.time()
        self.user.processWindow(WindowContext(end - self.duration, end),
                                [tup for _, tup in tuples])


class Fold(Tumbling):
    """ReduceByWindowBolt: result = f(None, v1), then f(result, v2), ...; one result
    per window, emitted even for an empty one (as heronpy does)."""

    def __init__(self, user: Any, duration: int, acking: bool) -> None:
        super().__init__(user, duration)
        self.acking = acking
        self.result: Any = None

    def process(self, tup: Any) -> None:
        self.result = self.user.reduce_function(self.result, tup.values[0])
        if self.acking:
            self.tuples.append(tup)

    def save(self) -> dict:
        return {**super().save(), "result": self.result}

    def restore(self, saved: dict) -> None:
        super().restore(saved)
        self.result = saved["result"]

    def process_tick(self, tick: Any) -> None:
        result, self.result = self.result, None
        window = self._context()
        self.user.emit([(Window(window.start, window.end), result)], stream=OUTPUT)
        self._ack()

    def _ack(self) -> None:
        tuples, self.tuples = self.tuples, []
        ack = self.user.ack
        for tup in tuples:
            ack(tup)


class KeyedFold(Fold):
    """ReduceByKeyAndWindowBolt: per key, the first value, then f(result, value) for
    each next one; one (KeyedWindow, result) per key seen, in the order keys first came."""

    def __init__(self, user: Any, duration: int, acking: bool) -> None:
        super().__init__(user, duration, acking)
        self.results: dict[Any, Any] = {}

    def process(self, tup: Any) -> None:
        try:
            key, value = tup.values[0]
        except (TypeError, ValueError):
            msg = "ReduceByWindow tuples must be iterable of length 2"  # heronpy's words
            raise RuntimeError(msg) from None
        results = self.results
        results[key] = self.user.reduce_function(results[key], value) if key in results \
            else value
        if self.acking:
            self.tuples.append(tup)

    def save(self) -> dict:
        return {**super().save(), "results": self.results}

    def restore(self, saved: dict) -> None:
        super().restore(saved)
        self.results = saved["results"]

    def process_tick(self, tick: Any) -> None:
        results, self.results = self.results, {}
        window = self._context()
        emit = self.user.emit
        for key, result in results.items():
            emit([(KeyedWindow(key, Window(window.start, window.end)), result)],
                 stream=OUTPUT)
        self._ack()
