"""Test your topology: heronbridge's public test harness.

- `complete_topology(project_or_plan, ...)`: the whole topology in this process, its
  spouts mocked or not, until every tuple tree is acked or failed; time is simulated
  (tick tuples and message timeouts), so a test of a 60 s window takes milliseconds.
- `SimulatedTopology`: the same, step by step (`feed`, `advance`, `result`).
- `isolate(project_or_plan, component)`: one spout or bolt on its own, fed by the test,
  with its API's own semantics (pystorm's auto-ack, auto-anchor, batching bolts and
  ReliableSpout's replays for streamparse components).
- `assert_emitted`: compares emits and prints a readable diff.

The pytest plugin (`heronbridge.testing.plugin`, loaded by pytest when heronbridge is
installed) gives these as fixtures, and its `--on-storm` flag runs `complete_topology`
on Apache Storm's local mode instead, through the conformance suite's machinery.
"""

from .assertions import assert_emitted
from .errors import TestingError
from .isolated import Isolated, isolate
from .result import ComponentRecord, Result
from .simulated import SimulatedTopology, complete_topology

__all__ = ["ComponentRecord", "Isolated", "Result", "SimulatedTopology", "TestingError",
           "assert_emitted", "complete_topology", "isolate"]
