"""Errors raised by the runtime kernel.

Every message says where (topology, component, task), what was expected and what was
received, so a user can act on it without reading the runtime's code.
"""

from __future__ import annotations

from heronbridge.errors import HeronbridgeError


class RuntimeKernelError(HeronbridgeError):
    """Root of every error the runtime raises."""


class PlanError(RuntimeKernelError):
    """A topology definition the runtime refuses to run."""


class ConfigError(PlanError):
    """A configuration value of the wrong type or out of range."""


class ComponentError(RuntimeKernelError):
    """A component misused the runtime's API (bad emit, unknown stream, ...)."""


class SerializationError(ComponentError):
    """A tuple's values cannot be encoded by the topology's serializer."""

    frames: list[bytes]  # the frames that could be built, set by the emitter's flush


class ProtocolError(RuntimeKernelError):
    """A peer sent a frame or message the receiver cannot accept."""


class StateManagerError(RuntimeKernelError):
    """The state manager could not read or write a node."""


class CheckpointError(RuntimeKernelError):
    """A checkpoint could not be saved, found or restored."""


class SchedulerError(RuntimeKernelError):
    """Starting, stopping or reaching a topology's processes failed."""


def where(topology: str | None = None, component: str | None = None,
          task: int | None = None) -> str:
    """Render the location part of an error message: `topology 't', component 'c', task 3`."""
    parts = []
    if topology is not None:
        parts.append(f"topology {topology!r}")
    if component is not None:
        parts.append(f"component {component!r}")
    if task is not None:
        parts.append(f"task {task}")
    return ", ".join(parts)
