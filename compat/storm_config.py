"""Storm config keys, as the runtime reads them."""

from __future__ import annotations

from typing import Any

from heronbridge.runtime import config as rt

ACKER_EXECUTORS = "topology.acker.executors"
WORKERS = "topology.workers"


def runtime_config(storm_options: dict[str, Any], serializer: str) -> dict[str, Any]:
    """The topology config for the runtime: Storm's keys stay (components read them),
    and the runtime's own keys are derived from them as Storm means them."""
    conf = dict(storm_options)
    # Storm acks unless ackers are explicitly 0 (StormCommon.hasAckers).
    acking = conf.get(ACKER_EXECUTORS) != 0
    conf[rt.RELIABILITY_MODE] = rt.ATLEAST_ONCE if acking else rt.ATMOST_ONCE
    conf[rt.CONTAINERS] = conf.get(WORKERS) or 1
    conf[rt.SERIALIZER] = serializer
    return conf


def acker_tasks(storm_options: dict[str, Any]) -> int:
    """How many `__acker` task ids Storm would number (one per worker unless set)."""
    ackers = storm_options.get(ACKER_EXECUTORS)
    if ackers is None:
        return int(storm_options.get(WORKERS) or 1)
    return int(ackers)
