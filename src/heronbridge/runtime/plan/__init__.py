"""Logical plan, task ids, packing, and their stored (protobuf) form."""

from .builder import ComponentRef, StreamRef, TopologyBuilder
from .logical import (
    BOLT,
    DEFAULT_STREAM,
    SPOUT,
    ComponentSpec,
    Grouping,
    Input,
    LogicalPlan,
    Stream,
)
from .packing import ContainerPlan, InstancePlan, PackingPlan, round_robin
from .tasks import TaskLayout

__all__ = [
    "BOLT", "DEFAULT_STREAM", "SPOUT", "ComponentRef", "ComponentSpec", "ContainerPlan",
    "Grouping", "Input", "InstancePlan", "LogicalPlan", "PackingPlan", "Stream", "StreamRef",
    "TaskLayout", "TopologyBuilder", "round_robin",
]
