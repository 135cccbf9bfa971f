"""When a spout's task calls it, and how long it waits: shared by the runtime's spout
loop (runner.py) and the pulled host (pull.py)."""

IDLE_WAIT = 0.001  # a spout with nothing to emit waits this long for acks (Storm: 1 ms)
# A next_tuple that emits nothing and takes this long is a spout that sleeps when idle
# (as streamparse examples do): for EAGER_SECS after one, and after each activation, its
# bursts end at every emit, so a tuple is not held while the next call sleeps.
SLOW_IDLE = 0.001
EAGER_SECS = 0.05
# After such a call, while its tuples are in flight, the spout waits for their acks as
# long as that call took (at most this long) before its next call: their callbacks run
# as they come instead of after its next sleep (Storm's spout wait strategy idles so too).
MAX_ACK_WAIT = 0.01
