"""Storm config keys, as the runtime reads them."""

from __future__ import annotations

from typing import Any

from heronbridge.runtime import config as rt
from heronbridge.runtime.errors import where

from . import CompatError

ACKER_EXECUTORS = "topology.acker.executors"
WORKERS = "topology.workers"


# Storm's keys that the runtime derives its own from: (key, what it expects, minimum).
COUNTS = ((ACKER_EXECUTORS, "an integer >= 0", 0), (WORKERS, "an integer >= 1", 1))


def check_storm_options(storm_options: dict[str, Any], topology: str) -> dict[str, Any]:
    """Storm's keys the runtime reads, checked under the names the user wrote (a count
    given as a string, as CLIs and YAML give it, is read as Storm reads it)."""
    out = dict(storm_options)
    for key, what, minimum in COUNTS:
        value = out.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            msg = f"{where(topology)}: config {key!r} expects {what}, received {out[key]!r}"
            raise CompatError(msg)
        out[key] = value
    return out


def runtime_config(storm_options: dict[str, Any], serializer: str) -> dict[str, Any]:
    """The topology config for the runtime: Storm's keys stay (components read them),
    and the runtime's own keys are derived from them as Storm means them."""
    conf = dict(storm_options)
    # Storm acks unless ackers are explicitly 0 (StormCommon.hasAckers). Heron's own key,
    # which Storm ignores, wins when given: it alone can ask for EFFECTIVELY_ONCE.
    acking = conf.get(ACKER_EXECUTORS) != 0
    conf.setdefault(rt.RELIABILITY_MODE, rt.ATLEAST_ONCE if acking else rt.ATMOST_ONCE)
    conf[rt.CONTAINERS] = conf.get(WORKERS) or 1
    conf[rt.SERIALIZER] = serializer
    return conf


def acker_tasks(storm_options: dict[str, Any]) -> int:
    """How many `__acker` task ids Storm would number (one per worker unless set)."""
    ackers = storm_options.get(ACKER_EXECUTORS)
    if ackers is None:
        return int(storm_options.get(WORKERS) or 1)
    return int(ackers)
