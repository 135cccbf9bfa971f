"""`to_sink` of the Streamlet API (Heron's Java `toSink`), which heronpy 0.20.5 lacks.

`streamlet.to_sink(sink)` adds a bolt that hands each element to `sink.put(element)`,
after `sink.setup(context)` once in each task (the Streamlet's Context: task id, config,
partitions). The sink is pickled with the topology, as the Streamlet's functions are.
"""

from __future__ import annotations

from typing import Any

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.component.component_spec import GlobalStreamId
from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.contextimpl import ContextImpl
from heronpy.streamlet.impl.streamletboltbase import StreamletBoltBase
from heronpy.streamlet.streamlet import Streamlet

from .stages import build_bolt


class Sink:
    """Where a streamlet's elements end: subclass it."""

    def setup(self, context: Any) -> None:
        """Called once in the task, before the first `put`."""

    def put(self, element: Any) -> None:
        raise NotImplementedError


class SinkBolt(Bolt, StreamletBoltBase):
    SINK = "sink"

    def initialize(self, config: dict, context: Any) -> None:
        sink = config.get(SinkBolt.SINK)
        if not isinstance(sink, Sink):
            msg = f"SinkBolt needs a Sink in its config, received {sink!r}"
            raise RuntimeError(msg)
        self._sink: Sink = sink
        sink.setup(ContextImpl(context, None, self))

    def process(self, tup: Any) -> None:
        self._sink.put(tup.values[0])
        self.ack(tup)


class SinkStreamlet(Streamlet):
    def __init__(self, sink: Sink, parent: Streamlet) -> None:
        super().__init__()
        if not isinstance(sink, Sink):
            msg = f"to_sink expects a Sink, received {sink!r}"
            raise RuntimeError(msg)
        if not isinstance(parent, Streamlet):
            msg = "Parent of Sink Streamlet has to be a Streamlet"
            raise RuntimeError(msg)
        self._sink = sink
        self._parent = parent
        self.set_num_partitions(parent.get_num_partitions())

    def _calculate_inputs(self) -> dict:
        return {GlobalStreamId(self._parent.get_name(), self._parent._output): Grouping.SHUFFLE}

    def _build_this(self, builder: Any, stage_names: set) -> bool:
        return build_bolt(self, builder, stage_names, "sink", SinkBolt,
                          {SinkBolt.SINK: self._sink})
