"""`streamparse_run` with a message hook inside the component's own process.

Storm starts the component where it would start `streamparse_run`; streamparse's own
main loads the class, and every message passes the hook as pystorm reads it (and as
pystorm writes one), as on the runtime's in-process components: no process or pipe sits
between Storm and the component. The bench's probe and the conformance suite's tracing
hook run this way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


class HookedSerializer:
    """Wraps pystorm's serializer: messages pass the hook in both directions (its
    `down(msg) -> (to the component, back to Storm)` and `up(msg) -> to Storm`)."""

    def __init__(self, inner: Any, hook: Any) -> None:
        self.inner = inner
        self.hook = hook
        self.pending: list[Any] = []

    def read_message(self) -> Any:
        while not self.pending:
            mine, back = self.hook.down(self.inner.read_message())
            for msg in back:
                self.inner.send_message(msg)
            self.pending.extend(mine)
        return self.pending.pop(0)

    def send_message(self, msg: Any) -> None:
        for out in self.hook.up(msg):
            self.inner.send_message(out)

    def __getattr__(self, name: str) -> Any:  # streams, locks: pystorm reads them
        return getattr(self.inner, name)


def run_streamparse(make_hook: Callable[[], Any], module: str, args: list[str]) -> None:
    """streamparse's own main (its argument handling and import path, unchanged) with
    `make_hook()` around the component's serializer."""
    import streamparse.run
    from pystorm.component import Component

    init = Component.__init__

    def hooked_init(self: Any, *a: Any, **kw: Any) -> None:
        init(self, *a, **kw)
        self.serializer = HookedSerializer(self.serializer, make_hook())

    Component.__init__ = hooked_init
    sys.argv = [module, *args]
    streamparse.run.main()
