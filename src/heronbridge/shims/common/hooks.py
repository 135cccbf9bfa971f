"""What a host lets see or steer its component, declared once for both hosts.

A message hook (the topology option `heronbridge.storm.hook`, "module:factory") sees every
multilang message between Storm's side and one component, as a proxy on its pipes would,
and may change them: the conformance tracer records components so, fault tests inject
faults so. A probe is a hook that also takes the lean host's direct calls (no messages
on the per-tuple path): `heronbridge bench` measures both systems with one.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from heronbridge.runtime.plan.logical import resolve_import_path

from .. import ShimError
from . import keys


class MessageHook(Protocol):
    """Sees every multilang message between Storm's side and one component (the
    handshake first), and may change them. The factory is called with the component's
    config, name and task."""

    def down(self, msg: Any) -> tuple[list[Any], list[Any]]:
        """A message for the component: what it gets instead, and what goes back."""

    def up(self, msg: Any) -> list[Any]:
        """A message from the component: what Storm's side gets instead."""


@runtime_checkable
class Probe(MessageHook, Protocol):
    """A hook the lean host calls directly on the per-tuple path."""

    def next_allowed(self) -> bool:
        """Whether a spout's next `next_tuple` may run now (the probe paces spouts)."""

    def tuple_in(self, component: str, stream: str) -> None:
        """A bolt is about to process an input tuple of `component`'s `stream`."""

    def emitted(self, msg_id: Any) -> None:
        """The component emitted a tuple (a spout's, with its message id)."""

    def acked(self, msg_id: Any) -> None: ...

    def failed(self, msg_id: Any) -> None: ...

    def close(self) -> None:
        """The component stops: write out what was measured."""


def message_hook(config: dict[str, Any], loc: str,
                 error: type[ShimError] = ShimError) -> MessageHook | None:
    """The hook the config names (`keys.HOOK`: "module:factory", called with the config),
    or None; `error` (naming `loc`) if it cannot be set up."""
    path = config.get(keys.HOOK)
    if not path:
        return None
    try:
        return resolve_import_path(path)(config)
    except Exception as exc:
        msg = (f"{loc}: cannot set up the message hook {keys.HOOK}={path!r}: "
               f"{type(exc).__name__}: {exc}")
        raise error(msg) from exc
