"""A mocked source on Apache Storm: a streamparse spout that emits the tuples the
topology option `heronbridge.testing.mocked` gives its component, as MockedSpout does
on the runtime (message ids 0, 1, ...; no replays). Storm starts it with
`streamparse_run heronbridge.testing.storm_spout.StormMockedSpout`."""

from __future__ import annotations

import json
import time
from collections import deque
from typing import Any

from streamparse import Spout

from .mocked import MOCKED


class StormMockedSpout(Spout):
    def initialize(self, stormconf: dict[str, Any], context: dict[str, Any]) -> None:
        given = stormconf.get(MOCKED) or {}
        if isinstance(given, str):
            given = json.loads(given)
        self.queue = deque(given.get(self.component_name, []))
        self.next_id = 0

    def next_tuple(self) -> None:
        if not self.queue:
            time.sleep(0.05)  # Storm calls again at once; nothing is left to emit
            return
        stream, values = self.queue.popleft()
        self.emit(values, tup_id=self.next_id, stream=stream)
        self.next_id += 1
