"""Marker alignment at a task with more than one input task (Heron's checkpoint gateway).

The first marker of a checkpoint starts alignment. From then on, frames from input tasks
whose marker has arrived belong after the checkpoint: they are held, while frames from
the others are still processed. When every input task's marker has arrived the task
saves its state and sends its own markers, then the held frames run. A newer checkpoint's
marker ends the older alignment (its frames run, the older checkpoint is given up); past
the byte limit the checkpoint is given up too, as Heron's stream manager does.
"""

from __future__ import annotations

import logging

log = logging.getLogger("heronbridge.runtime.checkpoint")


class Aligner:
    def __init__(self, inputs: frozenset[int], limit_bytes: int, where: str) -> None:
        self.inputs = inputs
        self.limit = limit_bytes
        self.where = where
        self.checkpoint: str | None = None  # the one aligning
        self.arrived: set[int] = set()
        self.held: list[bytes] = []
        self.held_bytes = 0
        self.holding = False  # fast check on the data path: is anything being held?
        self.last = ""  # newest checkpoint completed or given up: older markers are late

    def marker(self, src: int, checkpoint_id: str) -> tuple[str | None, list[bytes]]:
        """A marker arrived: returns (checkpoint to save now or None, frames to run)."""
        if checkpoint_id <= self.last or src not in self.inputs \
                or (self.checkpoint is not None and checkpoint_id < self.checkpoint):
            return None, []
        released: list[bytes] = []
        if self.checkpoint is not None and checkpoint_id > self.checkpoint:
            log.warning("%s: checkpoint %s given up: %s began before every input's marker "
                        "arrived", self.where, self.checkpoint, checkpoint_id)
            released = self._release()
        if self.checkpoint is None:
            self.checkpoint, self.arrived = checkpoint_id, set()
        self.arrived.add(src)
        if self.arrived >= self.inputs:
            done = self.checkpoint
            self.last = done
            return done, released + self._release()
        self.holding = True
        return None, released

    def hold(self, frame: bytes) -> tuple[str | None, list[bytes]]:
        """Keep a frame from an input past its marker; past the limit the checkpoint is
        given up: returns (the checkpoint given up or None, frames to run now)."""
        self.held.append(frame)
        self.held_bytes += len(frame)
        if self.held_bytes <= self.limit:
            return None, []
        log.warning("%s: checkpoint %s given up: %d bytes held while markers aligned, more "
                    "than heronbridge.checkpoint.buffer.bytes (%d)", self.where,
                    self.checkpoint, self.held_bytes, self.limit)
        given_up = self.checkpoint
        self.last = given_up or self.last
        return given_up, self._release()

    def reset(self) -> None:
        """A rollback: what was held is from before it, and is dropped."""
        self._release()
        self.last = ""

    def _release(self) -> list[bytes]:
        held = self.held
        self.checkpoint, self.arrived, self.held, self.held_bytes = None, set(), [], 0
        self.holding = False
        return held
