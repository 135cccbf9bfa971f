"""What a topology (or one component) did in a test: per component, the tuples it
emitted on each stream, what it acked and failed, and the lines it logged.

A spout's acks and fails are the message ids whose trees completed or failed (a timeout
is a fail); a bolt's are the values of the input tuples it acked or failed (tick tuples
left out). Values are as the topology's serializer carries them, the way the next
component (or Storm) sees them: under JSON, tuples come back as lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import TestingError


@dataclass
class ComponentRecord:
    """What one component's tasks did, in the order they did it."""

    emitted: dict[str, list[list[Any]]] = field(default_factory=dict)  # stream -> values
    # stream -> for each emit, the values of the input tuples it was anchored to (a bolt's)
    anchors: dict[str, list[list[list[Any]]]] = field(default_factory=dict)
    acked: list[Any] = field(default_factory=list)
    failed: list[Any] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    ticks: int = 0  # tick tuples executed


@dataclass
class Result:
    topology: str
    components: dict[str, ComponentRecord]
    system: str = "runtime"  # or "storm", under the pytest plugin's --on-storm
    seconds: float = 0.0  # simulated seconds that passed (wall seconds on Storm)

    def record(self, component: str) -> ComponentRecord:
        found = self.components.get(component)
        if found is None:
            msg = (f"topology {self.topology!r}: expected a component among "
                   f"{sorted(self.components)}, received {component!r}")
            raise TestingError(msg)
        return found

    def emitted(self, component: str, stream: str = "default") -> list[list[Any]]:
        return list(self.record(component).emitted.get(stream, []))

    def anchors(self, component: str, stream: str = "default") -> list[list[list[Any]]]:
        """For each of a bolt's emits on `stream`, the values of the inputs it was anchored
        to ([] for an unanchored emit)."""
        return list(self.record(component).anchors.get(stream, []))

    def acked(self, component: str) -> list[Any]:
        return list(self.record(component).acked)

    def failed(self, component: str) -> list[Any]:
        return list(self.record(component).failed)

    def logs(self, component: str) -> list[str]:
        return list(self.record(component).logs)

    def logged(self, component: str, text: str) -> bool:
        """Whether a line `component` logged contains `text`."""
        return any(text in line for line in self.record(component).logs)
