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


# What to do when a spout's input runs out while a window is being measured.
ENDLESS_HINT = ("make the input endless for the benchmark with the project's own options "
                "(-o KEY=VALUE, or a config.json environment chosen with -e), e.g. -o "
                "wordcount.rounds=1000000000 for the example word count")


def spouts_ran_dry(topology: str, where: str, spouts: set[str]) -> BenchError:
    return BenchError(f"topology {topology!r}: the spouts {sorted(spouts)} stopped emitting "
                      f"during {where} (their input ran out?); {ENDLESS_HINT}")
