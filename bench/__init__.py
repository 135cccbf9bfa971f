"""`heronbridge bench`: one topology on Apache Storm and on the runtime, measured alike.

The same streamparse components run on both systems under the same in-process probe
(`probe.py`), which paces the spouts for a fixed offered load and records sink tuples
and complete latencies per interval; a fused ceiling runs the same components in one
process with no transport at all. Depends on `conformance` (its Storm launcher),
`compat` and `runtime`; nothing depends on it but the CLI.
"""


class BenchError(Exception):
    """A benchmark that cannot run, or whose run says nothing: names what and why."""
