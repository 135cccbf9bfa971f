"""heronpy's TopologyContext on top of the runtime's, with task hooks."""

from __future__ import annotations

import time
from collections import namedtuple
from typing import Any

from heronpy.api.task_hook import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    ITaskHook,
    SpoutAckInfo,
    SpoutFailInfo,
)
from heronpy.api.topology_context import TopologyContext

from heronbridge.runtime.errors import ComponentError
from heronbridge.runtime.plan.logical import resolve_import_path

from . import HeronpyError, keys

# What Heron's get_sources keys its answer by: the StreamId protobuf's fields, hashable.
StreamId = namedtuple("StreamId", "id, component_name")
AUTO_TASK_HOOKS = "topology.auto.task.hooks"


class HeronpyContext(TopologyContext):
    """What `initialize(context=...)` gets: the task's place in the topology.

    Registered metrics are read every time bucket and published with the task's own
    (runtime.api.metrics), as `user/NAME`. Task hooks (added here or
    named by `topology.auto.task.hooks`) make the host call them on every emit, ack,
    fail and execute, as Heron's instance does.
    """

    def __init__(self, runtime: Any, cluster_config: dict[str, Any], loc: str) -> None:
        self.runtime = runtime  # the runtime's TopologyContext
        self.cluster_config = cluster_config
        self.loc = loc
        self.metrics: dict[str, tuple[Any, float]] = {}
        self.task_hooks: list[ITaskHook] = []
        for path in cluster_config.get(AUTO_TASK_HOOKS) or ():
            try:
                hook = resolve_import_path(path)()
            except Exception as exc:
                msg = (f"{loc}: {AUTO_TASK_HOOKS} names {path!r}, expected an importable "
                       f"ITaskHook class: {type(exc).__name__}: {exc}")
                raise HeronpyError(msg) from exc
            self.add_task_hook(hook)

    # -- heronpy's interface ----------------------------------------------------------

    def get_task_id(self) -> int:
        return self.runtime.task_id

    def get_component_id(self) -> str:
        return self.runtime.component_id

    def get_cluster_config(self) -> dict[str, Any]:
        return self.cluster_config

    def get_topology_name(self) -> str:
        return self.runtime.topology_name

    def get_sources(self, component_id: str) -> dict[StreamId, int] | None:
        inputs = self.runtime.config.get(keys.INPUTS) or {}
        if component_id not in inputs:
            return None
        return {StreamId(id=stream, component_name=source): gtype
                for source, stream, gtype in inputs[component_id]}

    def get_component_tasks(self, component_id: str) -> list[int] | None:
        tasks = self.runtime.component_to_tasks.get(component_id)
        return None if tasks is None else list(tasks)

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: float) -> None:
        if not hasattr(metric, "get_value_and_reset") or not time_bucket_in_sec > 0:
            msg = (f"{self.loc}: register_metric({name!r}) expects an IMetric and a time "
                   f"bucket > 0 seconds, received {metric!r} and {time_bucket_in_sec!r}")
            raise HeronpyError(msg)
        self.metrics[name] = (metric, time_bucket_in_sec)
        # heronpy's count metrics report counts per bucket: summed into a counter.
        counter = type(metric).__name__ in ("CountMetric", "MultiCountMetric")
        try:
            self.runtime.metrics.poll(name, metric, time_bucket_in_sec, counter=counter)
        except ComponentError as exc:
            raise HeronpyError(str(exc)) from exc

    def add_task_hook(self, task_hook: ITaskHook) -> None:
        if not isinstance(task_hook, ITaskHook):
            msg = (f"{self.loc}: add_task_hook expects an ITaskHook, received "
                   f"{type(task_hook).__name__} {task_hook!r}")
            raise HeronpyError(msg)
        self.task_hooks.append(task_hook)

    # -- what the host calls ----------------------------------------------------------

    def invoke_hook_prepare(self) -> None:
        for hook in self.task_hooks:
            hook.prepare(self.cluster_config, self)

    def invoke_hook_cleanup(self) -> None:
        for hook in self.task_hooks:
            hook.clean_up()

    def invoke_hook_emit(self, values: Any, stream: str, out_tasks: Any) -> None:
        info = EmitInfo(values=values, stream_id=stream, task_id=self.get_task_id(),
                        out_tasks=out_tasks)
        for hook in self.task_hooks:
            hook.emit(info)

    def invoke_hook_spout_ack(self, msg_id: Any, since: float | None) -> None:
        info = SpoutAckInfo(message_id=msg_id, spout_task_id=self.get_task_id(),
                            complete_latency_ms=_ms_since(since))
        for hook in self.task_hooks:
            hook.spout_ack(info)

    def invoke_hook_spout_fail(self, msg_id: Any, since: float | None) -> None:
        info = SpoutFailInfo(message_id=msg_id, spout_task_id=self.get_task_id(),
                             fail_latency_ms=_ms_since(since))
        for hook in self.task_hooks:
            hook.spout_fail(info)

    def invoke_hook_bolt_execute(self, tup: Any, started: float) -> None:
        info = BoltExecuteInfo(heron_tuple=tup, executing_task_id=self.get_task_id(),
                               execute_latency_ms=_ms_since(started))
        for hook in self.task_hooks:
            hook.bolt_execute(info)

    def invoke_hook_bolt_ack(self, tup: Any) -> None:
        info = BoltAckInfo(heron_tuple=tup, acking_task_id=self.get_task_id(),
                           process_latency_ms=_ms_since(tup.creation_time, time.time))
        for hook in self.task_hooks:
            hook.bolt_ack(info)

    def invoke_hook_bolt_fail(self, tup: Any) -> None:
        info = BoltFailInfo(heron_tuple=tup, failing_task_id=self.get_task_id(),
                            fail_latency_ms=_ms_since(tup.creation_time, time.time))
        for hook in self.task_hooks:
            hook.bolt_fail(info)


def _ms_since(start: float | None, clock: Any = time.monotonic) -> float:
    return 0.0 if start is None else (clock() - start) * 1000
