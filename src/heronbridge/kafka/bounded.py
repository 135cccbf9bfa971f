"""A blocking call given up after a time: for a librdkafka call whose own timeout is not
enforced. The call runs in a daemon thread that only waits for it (it never touches the
component's collector, so the component still emits from its task's loop alone; kept
out of the component's module, whose source the lean host reads for threads); if it
has not returned in time, the caller must stop using the object it was called on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def call_within(seconds: float, call: Callable[[], Any], name: str) -> tuple[bool, Any]:
    """(True, what `call()` returned) once it returns within `seconds` (what it raises
    is raised here); else (False, None), the call left running."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            outcome.append((False, exc))

    waiter = threading.Thread(target=run, name=name, daemon=True)
    waiter.start()
    waiter.join(seconds)
    if not outcome:
        return False, None
    returned, value = outcome[0]
    if not returned:
        raise value
    return True, value
