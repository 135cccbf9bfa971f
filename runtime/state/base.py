"""The state manager: where a topology's plans and locations are published.

The node layout is Heron's, the same for every backend:
`<root>/{topologies,packingplans,pplans,executionstate,tmasters,schedulers}/<topology>`,
each node one serialized protobuf message.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from google.protobuf.message import Message

from ..errors import StateManagerError
from ..proto import plans_pb2, topology_pb2

TOPOLOGIES = "topologies"
PACKING_PLANS = "packingplans"
PHYSICAL_PLANS = "pplans"
EXECUTION_STATE = "executionstate"
TMASTERS = "tmasters"
SCHEDULERS = "schedulers"

NODE_TYPES: dict[str, type[Message]] = {
    TOPOLOGIES: topology_pb2.Topology,
    PACKING_PLANS: plans_pb2.PackingPlan,
    PHYSICAL_PLANS: plans_pb2.PhysicalPlan,
    EXECUTION_STATE: plans_pb2.ExecutionState,
    TMASTERS: plans_pb2.TopologyMasterLocation,
    SCHEDULERS: plans_pb2.SchedulerLocation,
}


class StateManager(ABC):
    """Read and write the nodes of one state root."""

    @abstractmethod
    def _read(self, kind: str, name: str) -> bytes | None: ...

    @abstractmethod
    def _write(self, kind: str, name: str, data: bytes) -> None: ...

    @abstractmethod
    def delete(self, kind: str, name: str) -> None: ...

    @abstractmethod
    def names(self, kind: str) -> list[str]: ...

    def close(self) -> None:  # noqa: B027 - optional for backends without connections
        """Release connections."""

    def get(self, kind: str, name: str) -> Message | None:
        data = self._read(kind, name)
        if data is None:
            return None
        message = NODE_TYPES[kind]()
        try:
            message.ParseFromString(data)
        except Exception as exc:
            msg = f"state node {kind}/{name} is not a valid {message.DESCRIPTOR.name}: {exc}"
            raise StateManagerError(msg) from exc
        return message

    def put(self, kind: str, name: str, message: Message) -> None:
        expected = NODE_TYPES[kind]
        if not isinstance(message, expected):
            msg = f"state node {kind}/{name} expects {expected.__name__}, received {type(message)}"
            raise StateManagerError(msg)
        self._write(kind, name, message.SerializeToString())

    def wait_for(self, kind: str, name: str, timeout: float,
                 interval: float = 0.05) -> Message | None:
        """Poll until the node exists (Heron's local state manager watches by polling too)."""
        deadline = time.monotonic() + timeout
        while True:
            node = self.get(kind, name)
            if node is not None or time.monotonic() >= deadline:
                return node
            time.sleep(interval)

    def clear(self, name: str) -> None:
        """Delete every node of one topology."""
        for kind in NODE_TYPES:
            self.delete(kind, name)
