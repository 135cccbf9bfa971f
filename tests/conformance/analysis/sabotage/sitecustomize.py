"""Makes the runtime misbehave on purpose, in every process it starts, for the tests
that check the conformance harness notices. PYTHONPATH names this folder and
SABOTAGE says how:

- ``fields-as-shuffle``: every fields grouping routes round robin, as shuffle would;
- ``drop-one:COMPONENT:N``: the lowest task of COMPONENT loses the Nth tuple it receives
  (never executed, acked or failed, as if lost in transport).
"""

import os

SABOTAGE = os.environ.get("SABOTAGE", "")


def _fields_as_shuffle() -> None:
    import itertools

    from heronbridge.runtime.grouping import Target
    from heronbridge.runtime.instance import emitter
    from heronbridge.runtime.plan.logical import FIELDS

    make_router = emitter.make_router

    def router(grouping, buffers, *args, **kwargs):
        if grouping.kind != FIELDS or len(buffers) < 2:
            return make_router(grouping, buffers, *args, **kwargs)
        turn = itertools.cycle([Target([b]) for b in buffers])
        return lambda values: next(turn)

    emitter.make_router = router


def _drop_one(component: str, nth: int) -> None:
    from heronbridge.runtime.instance.task import Task

    decode = Task.decode
    seen = 0

    def lossy(self, data, start, end):
        nonlocal seen
        batch = decode(self, data, start, end)
        if self.component != component:
            return batch
        lowest = min(t for t, c in self.attachment.layout.task_component.items()
                     if c == component)
        if self.task != lowest or seen >= nth:
            return batch
        if nth <= seen + len(batch):
            batch = list(batch)
            del batch[nth - seen - 1]
            seen = nth  # once
        else:
            seen += len(batch)
        return batch

    Task.decode = lossy


if SABOTAGE == "fields-as-shuffle":
    _fields_as_shuffle()
elif SABOTAGE.startswith("drop-one:"):
    _, name, n = SABOTAGE.split(":")
    _drop_one(name, int(n))
