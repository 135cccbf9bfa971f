"""What an analysis hands back: one verdict per check and subject, and each system's
numbers for the report's plots."""

from __future__ import annotations

from dataclasses import dataclass, field

PASS = "pass"
FAIL = "fail"
KNOWN = "known divergence"
INFO = "info"

NO_TRACES = "no traces"


@dataclass
class Verdict:
    check: str  # one of scenario.CHECKS
    subject: str  # what it is about, e.g. "count_bolt/default"
    storm: str  # what Storm did, short
    runtime: str  # what the runtime did, short
    verdict: str  # PASS, FAIL, KNOWN or INFO
    detail: str = ""  # why it failed, or the divergence's reason


@dataclass
class SystemStats:
    tuples: int  # bolt input tuples, ticks excluded
    seconds: float  # first to last record
    # (seconds since the system's first record, bolt input tuples in that second)
    throughput: list[tuple[float, int]] = field(default_factory=list)
    # complete latency "p50", "p90", "p99", "max"; {} if no acked spout tuples
    latency_ms: dict[str, float] = field(default_factory=dict)
    # (bucket upper bound in ms, count), log-spaced buckets
    latency_hist: list[tuple[float, int]] = field(default_factory=list)
    load: dict[str, dict[int, int]] = field(default_factory=dict)  # component -> task -> tuples


@dataclass
class Analysis:
    verdicts: list[Verdict]
    stats: dict[str, SystemStats]  # by system; a system without traces has none
    notes: list[str] = field(default_factory=list)  # what was not judged, and why

    @property
    def ok(self) -> bool:
        return all(v.verdict != FAIL for v in self.verdicts)

    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == FAIL]
