"""The component interface user code is written against."""

from .component import Bolt, BoltCollector, Spout, SpoutCollector
from .context import TopologyContext
from .tuple import SYSTEM_COMPONENT, TICK_STREAM, Source, Tuple, tick_tuple

__all__ = ["SYSTEM_COMPONENT", "TICK_STREAM", "Bolt", "BoltCollector", "Spout",
           "Source", "SpoutCollector", "TopologyContext", "Tuple", "tick_tuple"]
