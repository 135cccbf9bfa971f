"""Following a state node from asyncio code: the watch's thread hands each new value to
the event loop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Generic

from .base import Kind, M, StateManager


class Follower(Generic[M]):
    """The latest value of one node (`value`, None while it is missing); `await
    changed(timeout)` returns once it changes, or after `timeout` seconds."""

    def __init__(self, statemgr: StateManager, kind: Kind[M], name: str) -> None:
        self.loop = asyncio.get_running_loop()
        self.value: M | None = None
        self._changed = asyncio.Event()
        self._watch = statemgr.watch(kind, name, self._from_thread)

    def _from_thread(self, message: M | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is following
            self.loop.call_soon_threadsafe(self._set, message)

    def _set(self, message: M | None) -> None:
        self.value = message
        self._changed.set()

    async def changed(self, timeout: float | None = None) -> M | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
        self._changed.clear()
        return self.value

    def cancel(self) -> None:
        self._watch.cancel()
