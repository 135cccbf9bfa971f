"""The state manager: where a topology's plans and locations are published.

The node layout is Heron's, the same for every backend:
`<root>/{topologies,packingplans,pplans,executionstate,tmasters,schedulers,
statefulcheckpoints}/<topology>`, each node one serialized protobuf message, plus
`<root>/secrets/<topology>`: the topology's link secret, readable by its owner only, and
`<root>/actions/<topology>`: the health manager's action log (JSON lines, the latest few),
and `<root>/checkpointkeys/<topology>`: the key its checkpoint files are authenticated
with, owner-only too, kept (as the consistent checkpoints are) when it is killed.

Processes follow nodes with `watch`: ZooKeeper pushes changes, the local backend polls.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, cast

from google.protobuf.message import Message

from ..errors import StateManagerError
from ..proto import control_pb2, plans_pb2, topology_pb2

log = logging.getLogger("heronbridge.runtime.statemgr")

# A ZooKeeper digest identity, `user:password`, for processes that open ZooKeeper state.
ZK_DIGEST_ENV = "HERONBRIDGE_ZK_DIGEST"

M = TypeVar("M", bound=Message)


class Kind(str, Generic[M]):
    """A kind of node, named as its folder, that holds one message type: `get` and
    `watch` of TOPOLOGIES give a topology_pb2.Topology."""

    __slots__ = ()


TOPOLOGIES: Kind[topology_pb2.Topology] = Kind("topologies")
PACKING_PLANS: Kind[plans_pb2.PackingPlan] = Kind("packingplans")
PHYSICAL_PLANS: Kind[plans_pb2.PhysicalPlan] = Kind("pplans")
EXECUTION_STATE: Kind[plans_pb2.ExecutionState] = Kind("executionstate")
TMASTERS: Kind[plans_pb2.TopologyMasterLocation] = Kind("tmasters")
SCHEDULERS: Kind[plans_pb2.SchedulerLocation] = Kind("schedulers")
SECRETS = "secrets"
ACTIONS = "actions"
# The consistent checkpoints, newest first.
STATEFUL_CHECKPOINTS: Kind[control_pb2.ConsistentCheckpoints] = Kind("statefulcheckpoints")
CHECKPOINT_KEYS = "checkpointkeys"
SAMPLING: Kind[control_pb2.SamplingPlan] = Kind("sampling")
KEY_BYTES = 32  # a topology's secret and its checkpoint key

NODE_TYPES: dict[str, type[Message]] = {
    TOPOLOGIES: topology_pb2.Topology,
    PACKING_PLANS: plans_pb2.PackingPlan,
    PHYSICAL_PLANS: plans_pb2.PhysicalPlan,
    EXECUTION_STATE: plans_pb2.ExecutionState,
    TMASTERS: plans_pb2.TopologyMasterLocation,
    SCHEDULERS: plans_pb2.SchedulerLocation,
    STATEFUL_CHECKPOINTS: control_pb2.ConsistentCheckpoints,
    SAMPLING: control_pb2.SamplingPlan,
}
# Where a backend has sessions (ZooKeeper), these nodes live only as long as the process
# that wrote them: a dead master or scheduler is noticed at once.
EPHEMERAL = frozenset({TMASTERS, SCHEDULERS})
KINDS = (*NODE_TYPES, SECRETS, ACTIONS, CHECKPOINT_KEYS)
OWNER_ONLY = frozenset({SECRETS, CHECKPOINT_KEYS})
KEPT = frozenset({STATEFUL_CHECKPOINTS, CHECKPOINT_KEYS})  # outlive a kill
MAY_BE_EMPTY = frozenset({STATEFUL_CHECKPOINTS, SAMPLING})  # none yet, or none any more



class NodeExistsError(StateManagerError):
    """`claim` found the node held by another process (another primary)."""


class Watch:
    """A registered watch; `cancel()` stops its callbacks."""

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class StateManager(ABC):
    """Read, write and follow the nodes of one state root."""

    uri: str
    _until: float | None = None  # hurry's deadline (time.monotonic())

    @abstractmethod
    def _read(self, kind: str, name: str) -> bytes | None: ...

    @abstractmethod
    def _write(self, kind: str, name: str, data: bytes) -> None: ...

    @abstractmethod
    def _claim(self, kind: str, name: str, data: bytes) -> None:
        """Create the node; NodeExistsError if a live holder has it."""

    @abstractmethod
    def _watch(self, kind: str, name: str, changed: Callable[[bytes | None], None],
               watch: Watch) -> None:
        """Call `changed(data)` now and whenever the node's bytes change (None: missing),
        from a thread of the backend's, until `watch` is cancelled."""

    @abstractmethod
    def delete(self, kind: str, name: str) -> None: ...

    @abstractmethod
    def names(self, kind: str) -> list[str]: ...

    def stamp(self, kind: str, name: str) -> object | None:
        """Something that changes whenever the node is written, cheaper to learn than its
        bytes, or None where a backend has no such thing (then read the node)."""
        return None

    def close(self) -> None:  # noqa: B027 - optional for backends without connections
        """Release connections."""

    def unreachable_secs(self) -> float:
        """How long the backend has been unable to reach its servers (0 while it can, and
        always for backends without servers)."""
        return 0.0

    @contextlib.contextmanager
    def hurry(self, secs: float) -> Iterator[None]:
        """Calls made meanwhile, from any thread, end within `secs` from now, answered or
        not (StateManagerError): what a stopping process still tells the state must not
        keep it from stopping while the state is unreachable. Backends whose calls cannot
        wait on a server ignore it."""
        previous = self._until
        until = time.monotonic() + secs
        self._until = until if previous is None else min(previous, until)
        try:
            yield
        finally:
            self._until = previous

    def child_env(self) -> dict[str, str]:
        """Environment a child process needs to open this state with the same rights."""
        return {}

    def _parse(self, kind: str, name: str, data: bytes) -> Message:
        message = NODE_TYPES[kind]()
        if not data and kind not in MAY_BE_EMPTY:
            msg = (f"state node {kind}/{name} is empty (0 bytes): expected a "
                   f"{message.DESCRIPTOR.name}; a truncated write, or not this runtime's")
            raise StateManagerError(msg)
        try:
            message.ParseFromString(data)
        except Exception as exc:
            msg = f"state node {kind}/{name} is not a valid {message.DESCRIPTOR.name}: {exc}"
            raise StateManagerError(msg) from exc
        return message

    def _serialize(self, kind: str, name: str, message: Message) -> bytes:
        expected = NODE_TYPES[kind]
        if not isinstance(message, expected):
            msg = f"state node {kind}/{name} expects {expected.__name__}, received {type(message)}"
            raise StateManagerError(msg)
        return message.SerializeToString()

    def get(self, kind: Kind[M], name: str) -> M | None:
        data = self._read(kind, name)
        return None if data is None else cast("M", self._parse(kind, name, data))

    def put(self, kind: Kind[M], name: str, message: M) -> None:
        self._write(kind, name, self._serialize(kind, name, message))

    def claim(self, kind: Kind[M], name: str, message: M) -> None:
        """Publish a node that one process at a time may hold (the topology master's
        location). On ZooKeeper it is ephemeral and NodeExistsError means another primary
        holds it; the local backend has no sessions and simply replaces it."""
        self._claim(kind, name, self._serialize(kind, name, message))

    def watch(self, kind: Kind[M], name: str, callback: Callable[[M | None], object]) -> Watch:
        """Call `callback(message or None)` now and on every change of the node, from a
        backend thread (asyncio code follows nodes with `state.follow.Follower`). A
        value that does not parse is logged and skipped."""
        watch = Watch()

        def changed(data: bytes | None) -> None:
            if watch.cancelled:
                return
            message: M | None = None
            if data is not None:
                try:
                    message = cast("M", self._parse(kind, name, data))
                except StateManagerError as exc:
                    log.warning("%s; ignoring this version", exc)
                    return
            callback(message)

        self._watch(kind, name, changed, watch)
        return watch

    def wait_for(self, kind: Kind[M], name: str, timeout: float) -> M | None:
        """The node once it exists, or None after `timeout` seconds."""
        found: list[M] = []
        event = threading.Event()

        def seen(message: M | None) -> None:
            if message is not None and not found:
                found.append(message)
                event.set()

        watch = self.watch(kind, name, seen)
        try:
            event.wait(timeout)
        finally:
            watch.cancel()
        return found[0] if found else None

    # -- the topology's link secret ------------------------------------------------

    def put_secret(self, name: str, secret: bytes) -> None:
        self._write(SECRETS, name, secret)

    def get_secret(self, name: str) -> bytes | None:
        return self._key(SECRETS, name)

    def put_checkpoint_key(self, name: str, key: bytes) -> None:
        self._write(CHECKPOINT_KEYS, name, key)

    def get_checkpoint_key(self, name: str) -> bytes | None:
        return self._key(CHECKPOINT_KEYS, name)

    def _key(self, kind: str, name: str) -> bytes | None:
        """A key node, read afresh each time (a bad one is never kept)."""
        data = self._read(kind, name)
        if data is not None and len(data) != KEY_BYTES:
            msg = (f"state node {kind}/{name} is corrupt: expected {KEY_BYTES} random bytes, "
                   f"received {len(data)}; submit the topology again to make a new one")
            raise StateManagerError(msg)
        return data

    # -- the health manager's action log ---------------------------------------------

    def put_actions(self, name: str, lines: list[str]) -> None:
        self._write(ACTIONS, name, "".join(f"{line}\n" for line in lines).encode())

    def get_actions(self, name: str) -> list[str]:
        data = self._read(ACTIONS, name)
        return data.decode(errors="replace").splitlines() if data else []

    def clear(self, name: str) -> None:
        """Delete every node of one topology but its consistent checkpoints: submitted
        again, a stateful topology goes on from them (unless
        topology.stateful.start.clean), and the key they are authenticated with."""
        for kind in KINDS:
            if kind not in KEPT:
                self.delete(kind, name)
