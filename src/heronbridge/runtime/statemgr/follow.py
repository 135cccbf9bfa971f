"""Following a state node from asyncio code: the watch's thread hands each new value to
the event loop."""

from __future__ import annotations

import asyncio
import contextlib

from google.protobuf.message import Message

from .base import StateManager


class Follower:
    """The latest value of one node (`value`, None while it is missing); `await
    changed(timeout)` returns once it changes, or after `timeout` seconds."""

    def __init__(self, statemgr: StateManager, kind: str, name: str) -> None:
        self.loop = asyncio.get_running_loop()
        self.value: Message | None = None
        self._changed = asyncio.Event()
        self._watch = statemgr.watch(kind, name, self._from_thread)

    def _from_thread(self, message: Message | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is following
            self.loop.call_soon_threadsafe(self._set, message)

    def _set(self, message: Message | None) -> None:
        self.value = message
        self._changed.set()

    async def changed(self, timeout: float | None = None) -> Message | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
        self._changed.clear()
        return self.value

    def cancel(self) -> None:
        self._watch.cancel()
