"""What a Kafka spout keeps per partition, without I/O: which partitions a task reads,
which offset it may commit, and when a failed record is emitted again.

- Partitions go to tasks as storm-kafka-client's RoundRobinManualPartitioner deals them:
  every partition of the spout's topics, sorted by topic and number, the i-th to the task
  of index i modulo the number of tasks.
- An offset is committed only once every record before it in its partition is acked
  (or given up after its retries): the commit point is the first emitted offset not yet
  acked, or past the last record read when none is pending.
- Failed records are emitted again after an exponential back-off, as storm-kafka-client's
  KafkaSpoutRetryExponentialBackoff schedules them: the first retry after
  `initial_delay`, the n-th after `delay_period * 2**(n-1)`, never later than `max_delay`;
  past `max_retries` a record is given up (counted done).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field


def assigned_partitions(partitions: Iterable[tuple[str, int]], task_index: int,
                        task_count: int) -> list[tuple[str, int]]:
    """The (topic, partition)s task `task_index` of `task_count` reads."""
    ordered = sorted(set(partitions))
    return ordered[task_index::task_count]


class PartitionOffsets:
    """Emitted and acked offsets of one partition; `commit_point` is the offset the
    group may commit (Kafka's convention: the next record to read)."""

    __slots__ = ("acked", "committed", "emitted", "position")

    def __init__(self, start: int | None) -> None:
        """`start`: the first offset to read, or None when Kafka decides (the group's
        committed offset, or the partition's first or last): then the first record read
        says where it started."""
        self.committed = -1 if start is None else start  # the last commit (or restore)
        self.position = self.committed  # past the last record read
        self.emitted: deque[int] = deque()  # emitted, not yet acked, in offset order
        self.acked: set[int] = set()  # acked, behind an earlier offset not yet acked

    def read(self, offset: int) -> None:
        """A record was read and emitted (records of a partition come in offset order)."""
        if self.committed < 0:
            self.committed = offset
        self.emitted.append(offset)
        self.position = offset + 1

    def skipped(self, offset: int) -> None:
        """A record was read but not emitted (it maps to no tuple): done at once."""
        if self.committed < 0:
            self.committed = offset
        if self.emitted:
            self.emitted.append(offset)
            self.ack(offset)
        self.position = max(self.position, offset + 1)

    def ack(self, offset: int) -> None:
        emitted, acked = self.emitted, self.acked
        if emitted and emitted[0] == offset:
            emitted.popleft()
            while emitted and emitted[0] in acked:
                acked.remove(emitted.popleft())
        else:
            acked.add(offset)

    @property
    def commit_point(self) -> int:
        return self.emitted[0] if self.emitted else self.position

    @property
    def uncommitted(self) -> int:
        """Offsets read past the last commit: bounded by max.uncommitted.offsets."""
        return self.position - self.committed

    @property
    def pending(self) -> int:
        return len(self.emitted) - len(self.acked)


@dataclass(frozen=True)
class RetryPolicy:
    initial_delay: float = 0.0  # seconds
    delay_period: float = 0.002
    max_retries: int | None = None  # None: retry for ever (storm-kafka-client's default)
    max_delay: float = 10.0

    def delay(self, fails: int) -> float:
        """Seconds from the `fails`-th failure to its retry."""
        wait = self.initial_delay if fails == 1 else self.delay_period * 2.0 ** (fails - 1)
        return min(wait, self.max_delay)


@dataclass
class RetrySchedule:
    """Failed messages waiting for their retry time."""

    policy: RetryPolicy
    fails: dict = field(default_factory=dict)  # msg id -> failures so far
    _due: list = field(default_factory=list)  # heap of (when, seq, msg id)
    _seq: int = 0

    def schedule(self, msg_id: object, now: float) -> bool:
        """Count a failure; False if the message has used up its retries."""
        fails = self.fails.get(msg_id, 0) + 1
        limit = self.policy.max_retries
        if limit is not None and fails > limit:
            self.fails.pop(msg_id, None)
            return False
        self.fails[msg_id] = fails
        self._seq += 1
        heapq.heappush(self._due, (now + self.policy.delay(fails), self._seq, msg_id))
        return True

    def done(self, msg_id: object) -> None:
        """The message was acked (or given up): it has no retries left to count."""
        self.fails.pop(msg_id, None)

    def due(self, now: float) -> list:
        """Messages whose retry time has come, earliest first."""
        out = []
        due = self._due
        while due and due[0][0] <= now:
            out.append(heapq.heappop(due)[2])
        return out

    def __len__(self) -> int:
        return len(self._due)
