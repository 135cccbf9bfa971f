"""State managers: the local filesystem by default, ZooKeeper for several hosts."""

from .base import (
    ACTIONS,
    CHECKPOINT_KEYS,
    EPHEMERAL,
    EXECUTION_STATE,
    KEY_BYTES,
    NODE_TYPES,
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SAMPLING,
    SCHEDULERS,
    SECRETS,
    STATEFUL_CHECKPOINTS,
    TMASTERS,
    TOPOLOGIES,
    ZK_DIGEST_ENV,
    NodeExistsError,
    StateManager,
    Watch,
)
from .localfs import LocalFileStateManager

__all__ = ["ACTIONS", "CHECKPOINT_KEYS", "EPHEMERAL", "EXECUTION_STATE", "KEY_BYTES", "NODE_TYPES",
           "PACKING_PLANS", "PHYSICAL_PLANS",
           "SAMPLING", "SCHEDULERS", "SECRETS", "STATEFUL_CHECKPOINTS", "TMASTERS", "TOPOLOGIES",
           "ZK_DIGEST_ENV",
           "LocalFileStateManager", "NodeExistsError", "StateManager", "Watch", "open_statemgr"]


def open_statemgr(uri: str, credential: str | None = None) -> StateManager:
    """A state manager from a location: `zk://HOST:PORT[,...]/ROOT` (ZooKeeper, written
    under the digest identity `credential`, else $HERONBRIDGE_ZK_DIGEST), or a directory
    path, or `file:<path>`."""
    if uri.startswith("zk://"):
        from .zk import ZooKeeperStateManager

        return ZooKeeperStateManager(uri, credential)
    return LocalFileStateManager(uri.removeprefix("file:"))
