"""A whole topology in this process under simulated time, to completion.

Every task runs as the runtime's in-memory topology runs it (runtime/testing.py: the real
collectors, decoders and stream manager router, XOR acking included), driven by the step
its process would run: the same in-flight window, bursts, ticks and wake-ups. Time is the
harness's: it starts at 0 and moves only to the next event (a bolt's tick tuple or
wake-up, a spout's full window that heard nothing back for a second, or the rotation of
the router's timeout buckets, which fails trees older than the message timeout), so
ticks and timeouts come in order and a test of a 60 s window takes milliseconds.
Components that read the wall clock themselves still read it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

from heronbridge.runtime.instance.bolt_step import BoltStep
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.testing import InMemoryTopology

from .errors import TestingError
from .loading import load_sandboxed
from .mocked import MockedSpout, mocked_input, with_mocked_sources
from .recorder import Recorder
from .result import Result

BURST = 100  # next_tuple calls per spout between deliveries, at most
MAX_CALLS = 100_000  # next_tuple calls a spout task may take to run out of input
MAX_SECONDS = 3600.0  # simulated seconds a run may take to settle its trees


class _Run(InMemoryTopology):
    """The in-memory topology, recorded, on simulated time."""

    def __init__(self, plan: LogicalPlan, recorder: Recorder) -> None:
        self.recorder = recorder
        self.now = 0.0
        super().__init__(plan, clock=lambda: self.now)
        self.calls = dict.fromkeys((s.task for s in self.spouts), 0)

    # -- InMemoryTopology's hooks -----------------------------------------------------

    def attached(self, task: Task) -> None:
        self.recorder.watch(task)
        self.recorder.current = task.component  # open / prepare log as the component

    def started(self, task: Task) -> None:
        self.recorder.current = None
        self.recorder.reattach()
        if task.is_spout:
            self.recorder.watch_spout(task)

    def _deliver(self, task: int, data: bytes) -> None:
        one = self.tasks[task]
        with self._turn(one, "taking what it was sent"):
            super()._deliver(task, data)

    def timer(self, step: BoltStep, now: float) -> None:
        with self._turn(step.task, "executing a tick tuple"):
            super().timer(step, now)

    # -- running ----------------------------------------------------------------------

    @contextmanager
    def _turn(self, task: Task, doing: str) -> Iterator[None]:
        """Calling `task`'s component; the tick tuples it ran meanwhile are recorded."""
        step = self.steps[task.task]
        ticks = step.ticks if isinstance(step, BoltStep) else 0
        with self.recorder.running(task, f"{doing} at simulated second {self.now:g}"):
            yield
        if isinstance(step, BoltStep):
            self.recorder.of(task.component).ticks += step.ticks - ticks

    def pending(self) -> int:
        return sum(len(cast("SpoutEmitter", s.emitter).pending) for s in self.spouts)

    def pump(self) -> None:
        """Let the spouts' steps call them until none emits any more (each stops when it
        runs out of input, or its in-flight window holds it), delivering everything
        that follows."""
        while True:
            emitted = False
            for spout in self.spouts:
                emitted |= self._burst(spout)
            self.drain()
            if not emitted:
                return

    def _burst(self, spout: Task) -> bool:
        em = cast("SpoutEmitter", spout.emitter)
        start = em.emitted
        with self._turn(spout, "in next_tuple"):
            self.calls[spout.task] += self.burst(spout, BURST)
        if self.calls[spout.task] > MAX_CALLS:
            msg = (f"{spout.loc()}: still emitting after {MAX_CALLS:,} next_tuple calls; "
                   "expected a spout that runs out of input (mock it with mocked_sources, "
                   "or give it an option that bounds it)")
            raise TestingError(msg)
        return em.emitted != start

    def advance_to(self, when: float) -> None:
        """Move the clock to `when`, firing each tick, timeout and timer due on the way."""
        while (due := self.next_timer()) <= when:
            self.now = due
            self.fire(due)
            self.pump()
        self.now = max(self.now, when)


class SimulatedTopology:
    """A topology loaded for a test, run step by step under simulated time:

        with SimulatedTopology("wordcount", mocked_sources={"word_spout": [["a"]]}) as t:
            t.complete()                  # input in, every tree settled
            t.advance(60)                 # a minute of ticks and timeouts
            t.feed("word_spout", [["b"]]) # more input, in at the current time
            result = t.result()
    """

    def __init__(self, source: Any, name: str | None = None, *,
                 mocked_sources: Mapping[str, Any] | None = None,
                 config: dict[str, Any] | None = None, env: str | None = None,
                 workdir: str | Path | None = None) -> None:
        self._stack = ExitStack()
        try:
            loaded = load_sandboxed(self._stack, source, name, env, config, workdir)
            self.plan = with_mocked_sources(loaded.plan, mocked_sources)
            self.recorder = Recorder()
            self._stack.enter_context(self.recorder.listening())
            self._run = _Run(self.plan, self.recorder)
            self._stack.callback(self._close_run)
        except BaseException as exc:
            self._stack.close()
            if isinstance(exc, (TestingError, KeyboardInterrupt)):
                raise
            if isinstance(exc, (Exception, SystemExit)):
                msg = f"cannot start {source!r} for a test: {type(exc).__name__}: {exc}"
                raise TestingError(msg) from exc
            raise

    def _close_run(self) -> None:
        for one in self._run.tasks.values():
            with self.recorder.running(one, "closing"):
                one.stop_component()

    @property
    def clock(self) -> float:
        """Simulated seconds since the topology started."""
        return self._run.now

    def complete(self, seconds: float = 0.0) -> Result:
        """Run the spouts until they have no more input and every tuple tree is acked or
        failed (moving time on only as far as that needs: ticks for batching bolts,
        timeouts for trees nobody acks), and at least `seconds` more simulated seconds."""
        run = self._run
        run.pump()
        end = run.now + seconds
        limit = run.now + max(seconds, MAX_SECONDS)
        while run.pending() or run.now < end:
            nxt = run.next_timer()
            if not run.pending():
                run.advance_to(min(nxt, end))
                continue
            if nxt > limit:
                why = ("no tick or timeout is due to settle them (message timeouts are off)"
                       if nxt == math.inf else f"within {MAX_SECONDS:g} simulated seconds")
                msg = (f"topology {self.plan.name!r}: {run.pending()} tuple trees still "
                       f"pending at simulated second {run.now:g}, {why}")
                raise TestingError(msg)
            run.advance_to(nxt)
        return self.result()

    def advance(self, seconds: float) -> Result:
        """Let `seconds` simulated seconds pass: ticks and timeouts fire in order, and
        what they cause is delivered."""
        run = self._run
        run.pump()
        run.advance_to(run.now + seconds)
        return self.result()

    def feed(self, spout: str, tuples: Any) -> None:
        """More input for a mocked spout (a list of values, or {stream: [values]}), emitted
        at the current simulated time by the next complete or advance."""
        task = next((t for t in self._run.spouts if t.component == spout), None)
        user = getattr(task, "user", None)
        if not isinstance(user, MockedSpout):
            mocked = sorted(t.component for t in self._run.spouts
                            if isinstance(t.user, MockedSpout))
            msg = (f"topology {self.plan.name!r}: expected a mocked spout among {mocked}, "
                   f"received {spout!r}")
            raise TestingError(msg)
        user.add(mocked_input(self.plan, spout, tuples))

    def result(self) -> Result:
        return self.recorder.result(self.plan.name, list(self.plan.components), self.clock)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> SimulatedTopology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def complete_topology(source: Any, name: str | None = None, *,
                      mocked_sources: Mapping[str, Any] | None = None,
                      config: dict[str, Any] | None = None, env: str | None = None,
                      seconds: float = 0.0, workdir: str | Path | None = None) -> Result:
    """Run a topology in this process until its spouts have no more input and every tuple
    tree is acked or failed, then `seconds` more simulated seconds; return what each
    component emitted (per stream), acked, failed and logged.

    `source`: a project folder in streamparse's layout (streamparse or heronpy
    components; `name` picks its topology and `env` its environment), a topology file
    (heronpy, or the runtime's API) or a LogicalPlan. `mocked_sources`: {spout: tuples}
    (see heronbridge.testing.mocked). `config`: options over the topology's (a project's
    as `-o` would give them)."""
    with SimulatedTopology(source, name, mocked_sources=mocked_sources, config=config,
                           env=env, workdir=workdir) as topo:
        return topo.complete(seconds)
