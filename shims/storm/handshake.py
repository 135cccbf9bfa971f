"""What Storm shows a multilang component when it starts: its conf and context."""

from __future__ import annotations

from typing import Any

from heronbridge.runtime.api.context import TopologyContext
from heronbridge.runtime.plan.logical import (
    ALL,
    CUSTOM,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    PARTIAL_KEY,
    SHUFFLE,
    Grouping,
)

from . import keys

# Storm's Grouping thrift union member names, as its JSON context spells them.
_GROUPING_TYPES = {SHUFFLE: "SHUFFLE", FIELDS: "FIELDS", ALL: "ALL", GLOBAL: "FIELDS",
                   NONE: "NONE", DIRECT: "DIRECT", LOCAL_OR_SHUFFLE: "LOCAL_OR_SHUFFLE",
                   PARTIAL_KEY: "CUSTOM_OBJECT", CUSTOM: "CUSTOM_OBJECT"}


def storm_grouping(grouping: Grouping) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _GROUPING_TYPES[grouping.kind]}
    if grouping.kind in (FIELDS, GLOBAL):
        out["fields"] = list(grouping.fields)
    return out


def storm_conf(context: TopologyContext) -> dict[str, Any]:
    """The component's conf as Storm merges it: topology conf, then component conf."""
    conf = {k: v for k, v in context.config.items() if k not in keys.ALL}
    conf.setdefault("topology.name", context.topology_name)
    return conf


def storm_context(context: TopologyContext) -> dict[str, Any]:
    me = context.component_id
    streams = context.streams.get(me, {})
    targets: dict[str, dict[str, Any]] = {s: {} for s in streams}
    for stream, subs in context.target_groupings.items():
        for bolt, grouping in subs:
            targets.setdefault(stream, {})[bolt] = storm_grouping(grouping)
    sources: dict[str, dict[str, Any]] = {}
    source_fields: dict[str, dict[str, list[str]]] = {}
    for inp in context.sources:
        sources.setdefault(inp.component, {})[inp.stream] = storm_grouping(inp.grouping)
        fields = context.streams[inp.component][inp.stream].fields
        source_fields.setdefault(inp.component, {})[inp.stream] = list(fields)
    return {
        "task->component": {str(t): c for t, c in sorted(context.task_to_component.items())},
        "taskid": context.task_id,
        "componentid": me,
        "streams": sorted(streams),
        "stream->outputfields": {s: list(stream.fields) for s, stream in streams.items()},
        "stream->target->grouping": targets,
        "source->stream->grouping": sources,
        "source->stream->fields": source_fields,
    }


def handshake(context: TopologyContext, pid_dir: str) -> dict[str, Any]:
    return {"pidDir": pid_dir, "conf": storm_conf(context), "context": storm_context(context)}
