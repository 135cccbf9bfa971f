"""How long to wait before starting again a process, or a container, that just ended:
one rule for the executor's processes, the local scheduler's executors and the Spark
scheduler's containers, so a crash loop costs little and says so."""

from __future__ import annotations

from dataclasses import dataclass

STABLE_AFTER_SECS = 10.0  # one that lived this long restarts without waiting longer
MAX_BACKOFF_SECS = 30.0


@dataclass
class Backoff:
    base: float  # the first wait: heronbridge.restart.backoff.secs
    cap: float = MAX_BACKOFF_SECS
    stable_after: float = STABLE_AFTER_SECS
    failures: int = 0  # quick exits in a row

    def after_exit(self, lived: float) -> float:
        """The wait before the next start of what just ended after `lived` seconds."""
        self.failures = 0 if lived >= self.stable_after else self.failures + 1
        return min(self.cap, self.base * 2 ** max(self.failures - 1, 0))

    def why(self) -> str:
        """Why the wait is what it is, for the log line that announces it."""
        if self.failures <= 1:
            return ""
        return (f" (failure {self.failures} in a row: the wait doubles with each, up to "
                f"{self.cap:.0f}s, until it runs {self.stable_after:.0f}s)")
