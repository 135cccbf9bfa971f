"""Mocked sources: a spout replaced by fixed input, keeping the streams it declares.

A test gives each mocked spout its tuples as a list of values (the default stream) or
as {stream: [values, ...]}. The spout emits them in that order, one task of it, each
tuple tracked with its position as message id (0, 1, ...), and replays nothing: what
fails stays failed, as with Storm's own mocked sources.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Mapping
from typing import Any

from heronbridge.runtime.api import Spout
from heronbridge.runtime.plan.logical import LogicalPlan

from .errors import TestingError

# A mocked spout's input in its config: [[stream, values], ...].
MOCKED = "heronbridge.testing.mocked"
RUNTIME_CLASS = "heronbridge.testing.mocked:MockedSpout"


def mocked_input(plan: LogicalPlan, spout: str, given: Any) -> list[list[Any]]:
    """[[stream, values], ...] of what a test gives a spout, checked against the streams
    the spout declares."""
    where = f"topology {plan.name!r}, mocked source {spout!r}"
    spec = plan.components.get(spout)
    if spec is None or not spec.is_spout:
        spouts = sorted(n for n, c in plan.components.items() if c.is_spout)
        msg = f"{where}: expected the name of one of the topology's spouts {spouts}"
        raise TestingError(msg)
    by_stream = given if isinstance(given, Mapping) else {"default": given}
    out: list[list[Any]] = []
    for stream, tuples in by_stream.items():
        declared = spec.outputs.get(stream)
        if declared is None:
            msg = (f"{where}: tuples for stream {stream!r}, which the spout does not "
                   f"declare; it declares {sorted(spec.outputs)}")
            raise TestingError(msg)
        if isinstance(tuples, (str, bytes)) or not hasattr(tuples, "__iter__"):
            msg = f"{where}, stream {stream!r}: expected a list of tuples, received {tuples!r}"
            raise TestingError(msg)
        for i, values in enumerate(tuples):
            if not isinstance(values, (list, tuple)) or len(values) != len(declared.fields):
                msg = (f"{where}, stream {stream!r}, tuple {i}: expected a list of "
                       f"{len(declared.fields)} values for fields {list(declared.fields)}, "
                       f"received {values!r}")
                raise TestingError(msg)
            out.append([stream, list(values)])
    return out


def with_mocked_sources(plan: LogicalPlan, mocked: Mapping[str, Any] | None) -> LogicalPlan:
    """The plan with each mocked spout replaced by a MockedSpout of one task with the
    same streams."""
    if not mocked:
        return plan
    components = dict(plan.components)
    for spout, given in mocked.items():
        spec = components[spout] if spout in components else None
        tuples = mocked_input(plan, spout, given)
        assert spec is not None
        components[spout] = dataclasses.replace(
            spec, class_path=RUNTIME_CLASS, parallelism=1,
            config={**spec.config, MOCKED: tuples})
    return dataclasses.replace(plan, components=components)


class MockedSpout(Spout):
    """The runtime spout a mocked source runs as."""

    def open(self, config: dict, context: Any, collector: Any) -> None:
        self.collector = collector
        self.queue: deque[tuple[str, list[Any]]] = deque()
        self.next_id = 0
        self.add(config.get(MOCKED) or [])

    def add(self, tuples: list[list[Any]]) -> None:
        """More input, after what is queued (SimulatedTopology.feed)."""
        self.queue.extend((stream, values) for stream, values in tuples)

    def next_tuple(self) -> None:
        if self.queue:
            stream, values = self.queue.popleft()
            self.collector.emit(values, msg_id=self.next_id, stream=stream)
            self.next_id += 1
