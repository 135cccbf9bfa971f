"""When a spout's task calls it, and how long it waits: one SpoutPacer per spout task,
asked by its step (spout_step.py), whichever host drives it.

A burst of next_tuple calls ends after emit.batch.time or about emit.batch.size.bytes of
tuples. A next_tuple that emits nothing and takes SLOW_IDLE or more is a spout that
sleeps when idle (as streamparse examples do): for EAGER_SECS after one, and after each
activation, its bursts end at every emit, so a tuple is not held while the next call
sleeps; and while its tuples are in flight, the spout waits for their acks as long as
that call took (at most MAX_ACK_WAIT) before its next call, so their callbacks run as
they come instead of after its next sleep (Storm's spout wait strategy idles so too).
"""

from __future__ import annotations

from ..config import TopologyConfig

IDLE_WAIT = 0.001  # a spout with nothing to emit waits this long for acks (Storm: 1 ms)
SLOW_IDLE = 0.001
EAGER_SECS = 0.05
MAX_ACK_WAIT = 0.01


class SpoutPacer:
    __slots__ = ("acks_until", "burst", "burst_bytes", "burst_secs", "eager_until")

    def __init__(self, conf: TopologyConfig) -> None:
        self.burst = conf.spout_burst  # next_tuple calls in one burst, at most
        self.burst_secs = conf.emit_batch_secs
        self.burst_bytes = conf.emit_batch_bytes
        self.eager_until = 0.0  # until then, a burst ends at each emit
        self.acks_until = 0.0  # until then, in-flight trees are waited for

    def activated(self, now: float) -> None:
        self.eager_until = now + EAGER_SECS

    def idle(self, called: float, now: float) -> None:
        """A next_tuple called at `called` returned at `now` having emitted nothing."""
        took = now - called
        if took > SLOW_IDLE:
            self.eager_until = now + EAGER_SECS
            self.acks_until = now + min(took, MAX_ACK_WAIT)

    def burst_end(self, emitted: int, bytes_per_emit: float) -> int:
        """The emit count at which a burst beginning at `emitted` has sent its bytes."""
        return emitted + max(1, int(self.burst_bytes / bytes_per_emit))

    def awaiting_acks(self, now: float) -> bool:
        return now < self.acks_until
