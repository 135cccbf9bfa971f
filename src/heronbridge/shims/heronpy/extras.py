"""What streamparse (pystorm) offers and heronpy lacks, on heronpy's Bolt and Spout.

Migrated code imports these from `heronbridge.shims.heronpy.extras`. They keep pystorm's
behaviour: batches by `group_key`, processed every `ticks_between_batches` ticks or
`secs_between_batches` seconds, acked after `process_batch` and failed when it raises
(`auto_ack`, `auto_fail`), emits anchored to the batch (`auto_anchor`); failed spout
tuples replayed up to `max_fails` times.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from heronpy.api.api_constants import TOPOLOGY_TICK_TUPLE_FREQ_SECS
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout


class BatchingBolt(Bolt):
    """Groups input tuples into batches by `group_key(tup)` (default: one batch) and calls
    `process_batch(key, tups)` for each batch at the first tick after
    `ticks_between_batches` ticks (pystorm counts strictly more than that many), then
    acks the batch's tuples (`auto_ack`). Emits during `process_batch` are anchored to
    the whole batch unless `anchors` is given (`auto_anchor`). If `process_batch` raises,
    the tuples of every pending batch are failed (`auto_fail`) and the error goes on:
    the task dies, as pystorm's does. Ticks come from `topology.tick.tuple.freq.secs` in
    the component's config; do not override `process` or `process_tick`.
    """

    auto_anchor = True
    auto_ack = True
    auto_fail = True
    ticks_between_batches = 1

    def group_key(self, tup: Any) -> Any:
        """The batch a tuple belongs to; any hashable value (default None: one batch)."""
        return None

    def process_batch(self, key: Any, tups: list) -> None:
        """Process one batch; override."""
        raise NotImplementedError

    def process(self, tup: Any) -> None:
        self._pending_batches()[self.group_key(tup)].append(tup)

    def process_tick(self, tup: Any) -> None:
        self._ticks = getattr(self, "_ticks", 0) + 1
        if self._ticks > self.ticks_between_batches and self._pending_batches():
            self.process_batches()
            self._ticks = 0

    def process_batches(self) -> None:
        """Process and settle every pending batch (what a tick triggers)."""
        batches = self._pending_batches()
        try:
            for key in list(batches):
                batch = batches[key]
                self._current = batch
                self.process_batch(key, batch)
                if self.auto_ack:
                    for tup in batch:
                        self.ack(tup)
                del batches[key]
        except Exception:
            if self.auto_fail:
                for batch in batches.values():
                    for tup in batch:
                        self.fail(tup)
            batches.clear()
            raise
        finally:
            self._current = None

    def emit(self, tup: Any, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> None:
        if anchors is None and self.auto_anchor:
            anchors = getattr(self, "_current", None)
        super().emit(tup, stream=stream, anchors=anchors, direct_task=direct_task,
                     need_task_ids=False)

    def _pending_batches(self) -> defaultdict:
        batches = self.__dict__.get("_batches")
        if batches is None:
            batches = self._batches = defaultdict[Any, list](list)
        return batches


class TicklessBatchingBolt(BatchingBolt):
    """A BatchingBolt whose batches are processed every `secs_between_batches` seconds
    (fractions allowed) rather than every so many ticks. pystorm runs a timer thread;
    here the timer is the component's ticks, which `spec()` turns on at that period
    unless the config sets `topology.tick.tuple.freq.secs`, so everything runs in the
    task's thread: batches go at the first tick, then at the first tick that is (within
    a tenth of the period) `secs_between_batches` after the last time they were due.
    """

    secs_between_batches = 2

    @classmethod
    def spec(cls, name: str | None = None, inputs: Any = None, par: int = 1,
             config: dict | None = None, optional_outputs: Any = None) -> Any:
        config = dict(config or {})
        config.setdefault(TOPOLOGY_TICK_TUPLE_FREQ_SECS, cls.secs_between_batches)
        return super().spec(name=name, inputs=inputs, par=par, config=config,
                            optional_outputs=optional_outputs)

    def process_tick(self, tup: Any) -> None:
        now = time.monotonic()
        period = self.secs_between_batches
        due = getattr(self, "_due", None)
        if due is not None and now < due - period / 10:  # ticks run a little late or early
            return
        self._due = now + period
        if self._pending_batches():
            self.process_batches()


class ReliableSpout(Spout):
    """Remembers every tuple it emits (a `tup_id` is required) until acked; a failed
    tuple is emitted again, up to `max_fails` times, then treated as acked (pystorm's
    ReliableSpout). Subclasses that override `ack` or `fail` call super()'s.
    """

    max_fails = 3

    def _tracking(self) -> tuple[dict, Counter]:
        # Made on first use (subclasses need not call __init__ or initialize), and there
        # from the start, as pystorm's are: user code reads them.
        unacked = self.__dict__.get("_unacked")
        if unacked is None:
            unacked = self._unacked = dict[Any, Any]()
            self._failed = Counter[Any]()
        return unacked, self._failed

    @property
    def unacked_tuples(self) -> dict:
        return self._tracking()[0]

    @unacked_tuples.setter
    def unacked_tuples(self, value: dict) -> None:
        self._tracking()
        self._unacked = value

    @property
    def failed_tuples(self) -> Counter:
        return self._tracking()[1]

    @failed_tuples.setter
    def failed_tuples(self, value: Counter) -> None:
        self._tracking()
        self._failed = value

    def emit(self, tup: Any, tup_id: Any = None, stream: str = "default",
             direct_task: int | None = None, need_task_ids: bool = False) -> Any:
        if tup_id is None:
            msg = "ReliableSpout.emit needs a tup_id, to replay the tuple if it fails"
            raise ValueError(msg)
        self._tracking()[0][tup_id] = (tup, stream, direct_task, need_task_ids)
        return super().emit(tup, tup_id=tup_id, stream=stream, direct_task=direct_task,
                            need_task_ids=need_task_ids)

    def ack(self, tup_id: Any) -> None:
        unacked, failed = self._tracking()
        failed.pop(tup_id, None)
        if unacked.pop(tup_id, None) is None:
            self.logger.error("Received ack for unknown tuple ID: %r", tup_id)

    def fail(self, tup_id: Any) -> None:
        unacked, failed = self._tracking()
        saved = unacked.get(tup_id)
        if saved is None:
            self.logger.error("Received fail for unknown tuple ID: %r", tup_id)
            return
        if failed[tup_id] < self.max_fails:
            tup, stream, direct_task, need_task_ids = saved
            self.emit(tup, tup_id=tup_id, stream=stream, direct_task=direct_task,
                      need_task_ids=need_task_ids)
            failed[tup_id] += 1
        else:
            self.logger.info("Acking tuple ID %r after it exceeded retry limit (%r)", tup_id,
                             self.max_fails)
            self.ack(tup_id)
