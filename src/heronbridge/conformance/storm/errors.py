"""The Storm side's errors."""

from __future__ import annotations

from .. import ConformanceError


class StormError(ConformanceError):
    """Storm could not be fetched, set up or started for a run."""
