"""The component interface user code is written against."""

from .component import Bolt, BoltCollector, LoopOwner, Spout, SpoutCollector, Stateful
from .context import TopologyContext
from .tuple import SYSTEM_COMPONENT, TICK_STREAM, Tuple, tick_tuple, tuple_class

__all__ = ["SYSTEM_COMPONENT", "TICK_STREAM", "Bolt", "BoltCollector", "LoopOwner", "Spout",
           "SpoutCollector", "Stateful", "TopologyContext", "Tuple", "tick_tuple", "tuple_class"]
