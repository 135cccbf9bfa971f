"""The runtime kernel: Heron's architecture in Python.

Topology master, one stream manager and metrics manager per container, one process per
task; every Storm grouping; at-most-once, at-least-once and effectively-once (checkpoints
and rollback) processing; backpressure.
It knows nothing of Storm's or heronpy's APIs: loaders in `heronbridge.compat` turn
those into a LogicalPlan.
"""

from .api import Bolt, Spout, Stateful, TopologyContext, Tuple
from .errors import (
    CheckpointError,
    ComponentError,
    ConfigError,
    PlanError,
    ProtocolError,
    RuntimeKernelError,
    SchedulerError,
    SerializationError,
    StateManagerError,
)
from .plan import Grouping, LogicalPlan, Stream, TopologyBuilder

__all__ = [
    "Bolt", "CheckpointError", "ComponentError", "ConfigError", "Grouping", "LogicalPlan",
    "PlanError", "ProtocolError", "RuntimeKernelError", "SchedulerError", "SerializationError",
    "Spout", "StateManagerError", "Stateful", "Stream", "TopologyBuilder", "TopologyContext",
    "Tuple",
]
