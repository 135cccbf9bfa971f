"""`streamparse_run` with the probe inside the component's process, for Storm's side:

    python -m heronbridge.conformance.bench.probe_run [-s json] module.Class

Storm starts it where it would start `streamparse_run`; it loads the class as
streamparse does and passes every message through a `Probe` before pystorm sees it (and
after pystorm writes it), so Storm's components pay what the runtime's do for the probe
and nothing more: no extra process, no extra pipe.
"""

from __future__ import annotations

import sys
from typing import Any

MODULE = "heronbridge.conformance.bench.probe_run"


class ProbedSerializer:
    """Wraps pystorm's serializer: messages pass the probe in both directions."""

    def __init__(self, inner: Any, probe: Any) -> None:
        self.inner = inner
        self.probe = probe
        self.pending: list[Any] = []

    def read_message(self) -> Any:
        while not self.pending:
            mine, back = self.probe.down(self.inner.read_message())
            for msg in back:
                self.inner.send_message(msg)
            self.pending.extend(mine)
        return self.pending.pop(0)

    def send_message(self, msg: Any) -> None:
        for out in self.probe.up(msg):
            self.inner.send_message(out)

    def __getattr__(self, name: str) -> Any:  # streams, locks: pystorm reads them
        return getattr(self.inner, name)


def main() -> None:
    import streamparse.run
    from pystorm.component import Component

    from .probe import Probe

    init = Component.__init__

    def probed_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.serializer = ProbedSerializer(self.serializer, Probe())

    # streamparse's own main: its argument handling and import path, unchanged.
    Component.__init__ = probed_init
    sys.argv[0] = MODULE
    streamparse.run.main()


if __name__ == "__main__":
    main()
