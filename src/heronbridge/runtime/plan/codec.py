"""Plans to and from their protobuf form (what the state manager stores)."""

from __future__ import annotations

import json
from typing import cast

from ..proto import plans_pb2, topology_pb2
from .logical import (
    ALL,
    BOLT,
    CUSTOM,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    PARTIAL_KEY,
    SHUFFLE,
    SPOUT,
    ComponentSpec,
    Grouping,
    Input,
    LogicalPlan,
    Stream,
)
from .packing import ContainerPlan, InstancePlan, PackingPlan
from .relocate import relocated

_GROUPING_TO_PROTO = {
    SHUFFLE: topology_pb2.SHUFFLE, FIELDS: topology_pb2.FIELDS, ALL: topology_pb2.ALL,
    GLOBAL: topology_pb2.GLOBAL, NONE: topology_pb2.NONE, DIRECT: topology_pb2.DIRECT,
    LOCAL_OR_SHUFFLE: topology_pb2.LOCAL_OR_SHUFFLE, PARTIAL_KEY: topology_pb2.PARTIAL_KEY,
    CUSTOM: topology_pb2.CUSTOM,
}
_GROUPING_FROM_PROTO = {v: k for k, v in _GROUPING_TO_PROTO.items()}
_KIND_TO_PROTO = {SPOUT: topology_pb2.SPOUT, BOLT: topology_pb2.BOLT}
_KIND_FROM_PROTO = {v: k for k, v in _KIND_TO_PROTO.items()}


def _dump_config(config: dict) -> str:
    # Configs cross processes as JSON, as Storm's do; repr() keeps odd values visible.
    return json.dumps(config, sort_keys=True, default=repr)


def topology_to_proto(plan: LogicalPlan, topology_id: str,
                      state: int = topology_pb2.RUNNING) -> topology_pb2.Topology:
    msg = topology_pb2.Topology(id=topology_id, name=plan.name,
                                config_json=_dump_config(plan.config),
                                python_path=plan.python_path,
                                state=cast("topology_pb2.TopologyState", state))
    for name, tasks in sorted(plan.reserved.items()):
        msg.reserved.add(name=name, tasks=tasks)
    for name in sorted(plan.components):
        spec = plan.components[name]
        comp = msg.components.add(name=name, kind=_KIND_TO_PROTO[spec.kind],
                                  class_path=spec.class_path, parallelism=spec.parallelism,
                                  config_json=_dump_config(spec.config))
        for stream in spec.outputs.values():
            comp.outputs.add(name=stream.name, fields=stream.fields, direct=stream.direct)
        for inp in spec.inputs:
            comp.inputs.add(component=inp.component, stream=inp.stream,
                            grouping=_GROUPING_TO_PROTO[inp.grouping.kind],
                            fields=inp.grouping.fields, custom=inp.grouping.custom or "")
    return msg


def topology_from_proto(msg: topology_pb2.Topology) -> LogicalPlan:
    components = {}
    for comp in msg.components:
        outputs = {s.name: Stream(s.name, tuple(s.fields), s.direct) for s in comp.outputs}
        inputs = [Input(i.component, i.stream,
                        Grouping(_GROUPING_FROM_PROTO[i.grouping], tuple(i.fields),
                                 i.custom or None))
                  for i in comp.inputs]
        components[comp.name] = ComponentSpec(comp.name, _KIND_FROM_PROTO[comp.kind],
                                              comp.class_path, comp.parallelism, outputs, inputs,
                                              json.loads(comp.config_json or "{}"))
    # Folders a scheduler shipped to this host are read where they are here.
    return relocated(LogicalPlan(msg.name, components, json.loads(msg.config_json or "{}"),
                                 list(msg.python_path), {r.name: r.tasks for r in msg.reserved}))


def packing_to_proto(packing: PackingPlan) -> plans_pb2.PackingPlan:
    msg = plans_pb2.PackingPlan(id=packing.id)
    for container in packing.containers:
        c = msg.containers.add(id=container.id)
        for inst in container.instances:
            c.instances.add(component=inst.component, task_id=inst.task_id,
                            component_index=inst.component_index)
    return msg


def packing_from_proto(msg: plans_pb2.PackingPlan) -> PackingPlan:
    return PackingPlan(msg.id, tuple(
        ContainerPlan(c.id, tuple(InstancePlan(i.component, i.task_id, i.component_index)
                                  for i in c.instances))
        for c in msg.containers))
