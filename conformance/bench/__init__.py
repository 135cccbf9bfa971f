"""`heronbridge bench`: one topology on Apache Storm and on the runtime, measured alike.

The same streamparse components run on both systems under the same in-process probe
(`probe.py`), which paces the spouts for a fixed offered load and records sink tuples
and complete latencies per interval; a fused ceiling runs the same components in one
process with no transport at all. Uses the conformance suite's Storm launcher, `compat`
and `runtime`; nothing but the CLI uses it.
"""

from heronbridge.conformance import ConformanceError


class BenchError(ConformanceError):
    """A benchmark that cannot run, or whose run says nothing: names what and why."""
