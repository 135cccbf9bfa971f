"""What a stream manager does with a data frame it cannot deliver now, under at-least-once.

Failing such a frame's trees back at once turned a destination that was down for a
second into a fail/replay loop: a spout that replays in `fail` (pystorm's ReliableSpout)
went round it hundreds of times per id, and past its `max_fails` acked ids nobody had
processed. So, sans-IO (times are passed in):

- a frame for a task the physical plan still has (its process or its stream manager is
  restarting) is *held*, in order, and delivered when the task can be reached again;
  the caller pauses every spout while anything is held, so that a replay waits in its
  spout, untracked, rather than timing out again;
- a frame is held at most `hold_secs` (long enough for a restart), and held frames take
  at most `limit_bytes`: beyond that the oldest are given up;
- the trees of a frame given up, or of one for a task no plan has, fail back to their
  spouts `fail_after_secs` (the message timeout) after the frame was held or dropped:
  no sooner than Storm would have failed them, and also with message timeouts off.

A restart within `hold_secs` therefore costs an in-flight tree at most one fail: at its
message timeout, if its tuples were lost inside the process that died.
"""

from __future__ import annotations

import heapq
from collections import deque


class Undelivered:
    def __init__(self, hold_secs: float, fail_after_secs: float, limit_bytes: int) -> None:
        self.hold_secs = hold_secs
        self.fail_after_secs = fail_after_secs
        self.limit_bytes = limit_bytes
        self.bytes = 0
        self.held = self.released = self.given_up = 0  # frames, since the start
        self._frames: dict[int, deque[tuple[float, bytes]]] = {}  # task -> (held at, frame)
        self._fails: list[tuple[float, int, list[int]]] = []  # (due, seq, roots), a heap
        self._seq = 0

    def __bool__(self) -> bool:
        return bool(self._frames or self._fails)

    def tasks(self) -> list[int]:
        """Tasks that have frames held."""
        return list(self._frames)

    def hold(self, task: int, frame: bytes, now: float) -> list[tuple[float, bytes]]:
        """Keep `frame` for `task`; returns the (held at, frame) pairs given up to stay
        under the limit (the oldest first; possibly this one)."""
        self._frames.setdefault(task, deque()).append((now, frame))
        self.bytes += len(frame)
        self.held += 1
        evicted = []
        while self.bytes > self.limit_bytes:
            oldest = min(self._frames, key=lambda t: self._frames[t][0][0])
            evicted.append(self._pop(oldest))
        self.given_up += len(evicted)
        return evicted

    def release(self, task: int) -> list[bytes]:
        """The frames held for `task`, in the order they came, to deliver now."""
        queue = self._frames.pop(task, None)
        if not queue:
            return []
        self.bytes -= sum(len(f) for _, f in queue)
        self.released += len(queue)
        return [f for _, f in queue]

    def forget(self, task: int) -> list[tuple[float, bytes]]:
        """Give up the frames held for `task` (it is in no plan any more)."""
        queue = self._frames.pop(task, None) or deque()
        self.bytes -= sum(len(f) for _, f in queue)
        self.given_up += len(queue)
        return list(queue)

    def expired(self, now: float) -> list[tuple[float, bytes]]:
        """Frames held `hold_secs` or longer: given up."""
        out = []
        for task in list(self._frames):
            queue = self._frames[task]
            while queue and queue[0][0] + self.hold_secs <= now:
                out.append(self._pop(task))
        self.given_up += len(out)
        return out

    def fail_later(self, roots: list[int], since: float) -> None:
        """Fail `roots` back to their spouts `fail_after_secs` after `since`."""
        if roots:
            self._seq += 1
            heapq.heappush(self._fails, (since + self.fail_after_secs, self._seq, roots))

    def fails_due(self, now: float) -> list[int]:
        due: list[int] = []
        while self._fails and self._fails[0][0] <= now:
            due += heapq.heappop(self._fails)[2]
        return due

    def _pop(self, task: int) -> tuple[float, bytes]:
        queue = self._frames[task]
        entry = queue.popleft()
        if not queue:
            del self._frames[task]
        self.bytes -= len(entry[1])
        return entry
