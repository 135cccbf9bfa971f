"""State managers: the local filesystem by default, ZooKeeper for several hosts."""

from .base import (
    EXECUTION_STATE,
    NODE_TYPES,
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SCHEDULERS,
    TMASTERS,
    TOPOLOGIES,
    StateManager,
)
from .localfs import LocalFileStateManager

__all__ = ["EXECUTION_STATE", "NODE_TYPES", "PACKING_PLANS", "PHYSICAL_PLANS", "SCHEDULERS",
           "TMASTERS", "TOPOLOGIES", "LocalFileStateManager", "StateManager", "open_state"]


def open_state(uri: str) -> StateManager:
    """A state manager from a location: a directory path, or `file:<path>`."""
    return LocalFileStateManager(uri.removeprefix("file:"))
