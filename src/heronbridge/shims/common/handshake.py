"""What Storm shows a multilang component when it starts: its conf and context."""

from __future__ import annotations

import os
from typing import Any

from heronbridge.runtime.api.context import TopologyContext
from heronbridge.runtime.errors import where
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

from . import keys, logs

# Storm's Grouping thrift union member names, as its JSON context spells them (the
# partial key grouping is a serialized Java object there).
_GROUPING_TYPES = {SHUFFLE: "SHUFFLE", FIELDS: "FIELDS", ALL: "ALL", GLOBAL: "FIELDS",
                   NONE: "NONE", DIRECT: "DIRECT", LOCAL_OR_SHUFFLE: "LOCAL_OR_SHUFFLE",
                   PARTIAL_KEY: "CUSTOM_SERIALIZED", CUSTOM: "CUSTOM_SERIALIZED"}

# Storm defaults (defaults.yaml) a component may read, for the keys it always shows.
_STORM_DEFAULTS = {
    "topology.debug": False, "topology.workers": 1, "topology.acker.executors": None,
    "topology.message.timeout.secs": 30, "topology.max.spout.pending": None,
    "topology.tick.tuple.freq.secs": None, "topology.enable.message.timeouts": True,
    "topology.multilang.serializer": "org.apache.storm.multilang.JsonSerializer",
    "topology.shellbolt.max.pending": 100, "supervisor.worker.timeout.secs": 30,
    "storm.cluster.mode": "local",
}


def storm_grouping(grouping: Grouping) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _GROUPING_TYPES[grouping.kind]}
    if grouping.kind in (FIELDS, GLOBAL):
        out["fields"] = list(grouping.fields)
    return out


def storm_conf(context: TopologyContext, is_spout: bool = False) -> dict[str, Any]:
    """The component's conf as Storm merges it: defaults, topology conf, component conf."""
    conf = dict(_STORM_DEFAULTS)
    conf.update((k, v) for k, v in context.config.items()
                if not k.startswith("heronbridge."))
    conf["topology.name"] = context.topology_name
    conf["storm.id"] = context.topology_id
    folder = logs.log_folder(context.config, context.config.get(keys.RESOURCES) or os.getcwd(),
                             where(context.topology_name, context.component_id,
                                   context.task_id))
    if folder is not None:  # the folder the component's log files can go to
        conf[logs.PATH] = folder
    if is_spout and conf.get("topology.acker.executors") != 0:
        # Storm ticks spouts (internally) at the message timeout, and shows them that.
        conf["topology.tick.tuple.freq.secs"] = conf["topology.message.timeout.secs"]
    return conf


def storm_context(context: TopologyContext) -> dict[str, Any]:
    """Storm's TopologyContext as JSON: the user topology only, no system streams."""
    me = context.component_id
    streams = context.streams.get(me, {})
    targets: dict[str, dict[str, Any]] = {}
    for stream, subs in context.target_groupings.items():
        for bolt, grouping in subs:
            targets.setdefault(stream, {})[bolt] = storm_grouping(grouping)
    sources: dict[str, dict[str, Any]] = {}
    for inp in context.sources:
        sources.setdefault(inp.component, {})[inp.stream] = storm_grouping(inp.grouping)
    # Every declared stream of each source, subscribed or not, as Storm lists them.
    source_fields = {source: {s: list(stream.fields)
                              for s, stream in context.streams[source].items()}
                     for source in sources}
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


def handshake(context: TopologyContext, pid_dir: str, is_spout: bool) -> dict[str, Any]:
    return {"pidDir": pid_dir, "conf": storm_conf(context, is_spout),
            "context": storm_context(context)}
