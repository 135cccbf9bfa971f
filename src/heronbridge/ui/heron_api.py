"""Heron's tracker API (the FastAPI tracker of Heron 0.20.5+): its routes and JSON shapes,
for what the runtime has. No envelope; values of /topologies/metrics are strings, as the
tracker relays them; an unknown topology is HTTP 500 `"request failed: ..."`, as there.

Instances are named as Heron names them, `container_<c>_<component>_<task>`; metric names
are Heron's (`__emit-count`, `__execute-latency` in nanoseconds, ...) or the runtime's own
counter and gauge names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from heronbridge.runtime.addresses import stmgr_id
from heronbridge.runtime.plan.logical import BOLT
from heronbridge.runtime.proto import topology_pb2

from . import BadRequest, NotFound
from .history import Point
from .stats import COLUMNS, WIDTH, TaskStats
from .tracker import Topology, Tracker

# Heron's metric name -> (how it is computed from a task's window stats, counter or not).
HERON_METRICS: dict[str, Callable[[TaskStats], float | None]] = {
    "__emit-count": lambda t: t.emitted,
    "__ack-count": lambda t: t.acked,
    "__fail-count": lambda t: t.failed,
    "__timeout-count": lambda t: t.timed_out,
    "__execute-count": lambda t: t.executed,
    "__execute-time-ns": lambda t: t.exec_ns,
    "__next-tuple-count": lambda t: t.next_tuple,
    "__execute-latency": lambda t: t.execute_ms * 1e6 if t.execute_ms is not None else None,
    "__process-latency": lambda t: t.execute_ms * 1e6 if t.execute_ms is not None else None,
    "__complete-latency": lambda t: t.complete_ms * 1e6 if t.complete_ms is not None else None,
    "__py-physical-memory-byte": lambda t: t.rss_bytes,
    "__time-spent-back-pressure-ms": lambda t: t.bp_ms,
    "__restarts": lambda t: float(t.restarts),
}
# Timelines come from the history, which keeps these columns.
TIMELINE_COLUMNS = {"__emit-count": "emitted", "__ack-count": "acked", "__fail-count": "failed",
                    "__timeout-count": "timed_out", "__execute-count": "executed",
                    "__execute-time-ns": "exec_ns", "__next-tuple-count": "next_tuple",
                    "__time-spent-back-pressure-ms": "bp_ms"}


def instance_id(container: int, component: str, task: int) -> str:
    return f"container_{container}_{component}_{task}"


def failure(message: str) -> str:
    return f"request failed: {message}"


class HeronAPI:
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    # -- selection ------------------------------------------------------------------

    def _matching(self, q: dict[str, list[str]]) -> list[Topology]:
        cluster = _one(q, "cluster")
        environ = _one(q, "environ")
        role = _one(q, "role")
        return [t for t in self.tracker.all()
                if (cluster is None or t.cluster == cluster)
                and (environ is None or t.environ == environ)
                and (role is None or t.role == role)]

    def topology(self, q: dict[str, list[str]]) -> Topology:
        for param in ("cluster", "environ", "topology"):
            if not _one(q, param):
                msg = f"missing query parameter {param!r}"
                raise BadRequest(msg)
        name = _one(q, "topology")
        for t in self._matching(q):
            if t.name == name:
                return t
        msg = (f"'Topology not found for {_one(q, 'cluster')}.{_one(q, 'environ')}."
               f"{name}'")
        raise NotFound(msg)

    # -- topology lists ------------------------------------------------------------------

    def clusters(self, q: dict) -> list[str]:
        return sorted({t.cluster for t in self.tracker.all()})

    def machines(self, q: dict) -> dict:
        names = set(q.get("topology", []))
        out: dict = {}
        for t in self._matching(q):
            if names and t.name not in names:
                continue
            hosts = sorted({s.host for s in t.nodes.pplan.stmgrs}) if t.nodes.pplan else []
            out.setdefault(t.cluster, {}).setdefault(t.environ, {})[t.name] = hosts
        return out

    def topologies(self, q: dict) -> dict:
        out: dict = {}
        for t in self._matching(q):
            out.setdefault(t.cluster, {}).setdefault(t.role, {}).setdefault(
                t.environ, []).append(t.name)
        return out

    def states(self, q: dict) -> dict:
        out: dict = {}
        for t in self._matching(q):
            out.setdefault(t.cluster, {}).setdefault(t.environ, {})[t.name] = \
                self.execution_state(t)
        return out

    # -- one topology ---------------------------------------------------------------------

    def execution_state(self, t: Topology) -> dict[str, Any]:
        e = t.nodes.execution
        return {
            "cluster": t.cluster, "environ": t.environ, "role": t.role, "jobname": t.name,
            "submission_time": e.submission_time if e is not None else None,
            "submission_user": t.role, "release_username": t.role,
            "release_tag": "heronbridge", "release_version": e.release_version
            if e is not None else "", "instances": self._instances_total(t),
            "extra_links": [], "has_physical_plan": t.nodes.pplan is not None,
            "has_packing_plan": t.nodes.packing is not None,
            "has_tmanager_location": t.nodes.tmaster is not None,
            "has_scheduler_location": t.nodes.scheduler is not None,
            "status": "Running" if t.running else "Paused"
            if t.state == topology_pb2.PAUSED else "Unknown",
        }

    def _instances_total(self, t: Topology) -> int:
        packing = t.nodes.packing
        return sum(len(c.instances) for c in packing.containers) if packing else 0

    def metadata(self, t: Topology) -> dict[str, Any]:
        state = self.execution_state(t)
        keys = ("cluster", "environ", "role", "jobname", "submission_time", "submission_user",
                "release_username", "release_tag", "release_version", "instances",
                "extra_links")
        return {k: state[k] for k in keys}

    def config(self, t: Topology) -> dict[str, Any]:
        return dict(t.plan.config) if t.plan is not None else {}

    def packing_plan(self, t: Topology) -> dict[str, Any]:
        packing = t.nodes.packing
        if packing is None:
            return {"id": "", "container_plans": []}
        none = {"cpu": 0.0, "ram": 0, "disk": 0}
        return {"id": packing.id, "container_plans": [{
            "id": c.id, "instances": [{
                "component_name": i.component, "task_id": i.task_id,
                "component_index": i.component_index, "instance_resources": none}
                for i in c.instances],
            "required_resources": none, "scheduled_resources": none}
            for c in packing.containers]}

    def physical_plan(self, t: Topology) -> dict[str, Any]:
        pplan = t.nodes.pplan
        out: dict[str, Any] = {"instances": {}, "instance_groups": {}, "stmgrs": {},
                               "spouts": {}, "bolts": {}, "config": self.config(t),
                               "components": {}}
        if t.plan is not None:
            for name, spec in t.components.items():
                out["components"][name] = {"config": spec.config}
                out["spouts" if spec.is_spout else "bolts"][name] = []
        if pplan is None:
            return out
        containers = {s.id: s.container for s in pplan.stmgrs}
        cwd = t.nodes.scheduler.working_dir if t.nodes.scheduler is not None else ""
        for inst in sorted(pplan.instances, key=lambda i: i.task_id):
            container = containers.get(inst.stmgr_id, 0)
            iid = instance_id(container, inst.component, inst.task_id)
            out["instances"][iid] = {
                "id": iid, "name": inst.component, "stmgr_id": inst.stmgr_id,
                "logfile": f"container-{container}/logs/task-{inst.task_id}-"
                           f"{inst.component}.log"}
            out["instance_groups"].setdefault(inst.component, []).append(iid)
            kind = "spouts" if inst.component in t.spouts else "bolts"
            out[kind].setdefault(inst.component, []).append(iid)
        for s in pplan.stmgrs:
            out["stmgrs"][s.id] = {
                "id": s.id, "host": s.host, "port": s.data_port, "shell_port": None,
                "cwd": f"{cwd}/container-{s.container}" if cwd else "", "pid": s.pid,
                "joburl": "", "logfiles": f"container-{s.container}/logs",
                "instance_ids": [iid for iid, i in out["instances"].items()
                                 if i["stmgr_id"] == s.id]}
        return out

    def logical_plan(self, t: Topology) -> dict[str, Any]:
        out: dict[str, Any] = {"spouts": {}, "bolts": {}, "stages": 0}
        if t.plan is None:
            return out
        for name, spec in sorted(t.components.items()):
            outputs = [{"stream_name": s} for s in sorted(spec.outputs)]
            if spec.is_spout:
                out["spouts"][name] = {"config": spec.config, "spout_type": "default",
                                       "spout_source": spec.class_path, "version": "",
                                       "outputs": outputs, "extra_links": []}
            else:
                inputs = [{"stream_name": i.stream, "component_name": i.component,
                           "grouping": str(i.grouping).upper()} for i in spec.inputs]
                out["bolts"][name] = {"config": spec.config, "outputs": outputs,
                                      "inputs": inputs,
                                      "inputComponents": sorted({i.component
                                                                 for i in spec.inputs})}
        out["stages"] = _stages(t)
        return out

    def scheduler_location(self, t: Topology) -> dict[str, Any]:
        s = t.nodes.scheduler
        return {"name": t.name, "http_endpoint": f"pid {s.pid}" if s is not None else "",
                "job_page_link": s.working_dir if s is not None else ""}

    def tmanager_location(self, t: Topology) -> dict[str, Any] | None:
        m = t.nodes.tmaster
        if m is None:
            return None
        return {"name": t.name, "id": m.topology_id, "host": m.host, "controller_port": None,
                "server_port": m.server_port, "stats_port": None}

    def runtime_state(self, t: Topology) -> dict[str, Any]:
        state = self.execution_state(t)
        flags = {k: v for k, v in state.items() if k.startswith("has_")}
        registered = {s.id for s in t.nodes.pplan.stmgrs} if t.nodes.pplan else set()
        ready = t.report is not None and t.report.all_ready
        packing = t.nodes.packing
        expected = [stmgr_id(c.id) for c in packing.containers] if packing else []
        flags["stmgrs"] = {sid: {"is_registered": sid in registered and ready}
                           for sid in expected}
        return flags

    def info(self, t: Topology) -> dict[str, Any]:
        return {"execution_state": self.execution_state(t), "id": t.id,
                "logical_plan": self.logical_plan(t), "metadata": self.metadata(t),
                "name": t.name, "packing_plan": self.packing_plan(t),
                "physical_plan": self.physical_plan(t), "runtime_state": self.runtime_state(t),
                "scheduler_location": self.scheduler_location(t),
                "tmanager_location": self.tmanager_location(t)}

    # -- metrics --------------------------------------------------------------------------

    def _component(self, t: Topology, q: dict) -> str:
        component = _one(q, "component")
        if not component:
            msg = "missing query parameter 'component'"
            raise BadRequest(msg)
        if component not in t.kinds:
            msg = f"'topology {t.name!r} has no component {component!r}'"
            raise NotFound(msg)
        return component

    def metrics(self, t: Topology, q: dict) -> dict[str, Any]:
        component = self._component(t, q)
        interval = int(float(_one(q, "interval") or -1))
        names = q.get("metricname") or sorted(HERON_METRICS)
        wanted = set(q.get("instance", []))
        tasks = [s for s in t.stats(interval if interval > 0 else None)
                 if s.component == component]
        raw = {(task.task_id): task for task in t.report.tasks} if t.report else {}
        metrics: dict[str, dict[str, str]] = {}
        for name in names:
            values: dict[str, str] = {}
            for s in tasks:
                iid = instance_id(s.container, component, s.task)
                if wanted and iid not in wanted:
                    continue
                value = _metric(name, s, raw.get(s.task))
                if value is not None:
                    values[iid] = repr(float(value))
            if values:
                metrics[name] = values
        return {"interval": interval if interval > 0 else int(t.uptime),
                "component": component, "metrics": metrics}

    def timeline(self, t: Topology, q: dict, as_strings: bool = False) -> dict[str, Any]:
        component = self._component(t, q)
        try:
            start = int(_one(q, "starttime") or 0)
            end = int(_one(q, "endtime") or time.time() + 1)
        except ValueError as exc:
            msg = f"starttime and endtime expect epoch seconds: {exc}"
            raise BadRequest(msg) from exc
        names = q.get("metricname") or sorted(TIMELINE_COLUMNS)
        wanted = set(q.get("instance", []))
        points = t.history.between(start, end)
        timeline: dict[str, dict[str, dict[str, Any]]] = {}
        for name in names:
            column = TIMELINE_COLUMNS.get(name)
            if column is None:
                continue
            series = _deltas(points, component, COLUMNS.index(column))
            for (container, task), data in series.items():
                iid = instance_id(container, component, task)
                if wanted and iid not in wanted:
                    continue
                timeline.setdefault(name, {})[iid] = {
                    str(ts): (repr(v) if as_strings else v) for ts, v in data.items()}
        return {"component": component, "starttime": start, "endtime": end,
                "timeline": timeline}

    # -- exceptions -----------------------------------------------------------------------

    def _exceptions(self, t: Topology, q: dict) -> list[tuple[Any, Any]]:
        component = self._component(t, q)
        wanted = set(q.get("instance", []))
        out: list[tuple[Any, Any]] = []
        for task in t.report.tasks if t.report else []:
            iid = instance_id(task.container, task.component, task.task_id)
            if task.component != component or (wanted and iid not in wanted):
                continue
            out.extend((task, e) for e in task.exceptions)
        return out

    def exceptions(self, t: Topology, q: dict) -> list[dict[str, Any]]:
        hosts = {s.container: s.host for s in t.nodes.pplan.stmgrs} if t.nodes.pplan else {}
        return [{"hostname": hosts.get(task.container, ""),
                 "instance_id": instance_id(task.container, task.component, task.task_id),
                 "stacktrace": e.stacktrace, "lasttime": _stamp(e.last_ms),
                 "firsttime": _stamp(e.first_ms), "count": str(e.count),
                 "logging": e.message}
                for task, e in self._exceptions(t, q)]

    def exception_summary(self, t: Topology, q: dict) -> list[dict[str, Any]]:
        by_class: dict[str, dict[str, Any]] = {}
        for _task, e in self._exceptions(t, q):
            s = by_class.setdefault(e.class_name, {"class_name": e.class_name,
                                                   "lasttime": e.last_ms, "firsttime": e.first_ms,
                                                   "count": 0})
            s["count"] += e.count
            s["lasttime"] = max(s["lasttime"], e.last_ms)
            s["firsttime"] = min(s["firsttime"], e.first_ms)
        return [{**s, "lasttime": _stamp(s["lasttime"]), "firsttime": _stamp(s["firsttime"]),
                 "count": str(s["count"])} for s in by_class.values()]


def _metric(name: str, s: TaskStats, raw: Any) -> float | None:
    compute = HERON_METRICS.get(name)
    if compute is not None:
        return compute(s)
    if name in COLUMNS:
        return s.values[name]
    if raw is not None:  # a counter or gauge of the runtime's own, as the task last sent it
        if name in raw.counters:
            return raw.counters[name]
        if name in raw.gauges:
            return raw.gauges[name]
    return None


def _deltas(points: list[Point], component: str,
            column: int) -> dict[tuple[int, int], dict[int, float]]:
    """Per task: the counter's increase from each point to the next, at the later time."""
    out: dict[tuple[int, int], dict[int, float]] = {}
    before: dict[tuple[int, int], float] = {}
    for p in points:
        for i, (comp, task, container) in enumerate(p.keys):
            if comp != component:
                continue
            value = p.values[i * WIDTH + column]
            key = (container, task)
            if key in before:
                series = out.setdefault(key, {})
                series[int(p.ts)] = series.get(int(p.ts), 0.0) + max(0.0, value - before[key])
            before[key] = value
    return out


def _stages(t: Topology) -> int:
    """The number of layers of the graph: a spout is 1, a bolt 1 + its deepest input."""
    depth: dict[str, int] = {}
    specs = t.components

    def of(name: str, seen: frozenset = frozenset()) -> int:
        if name not in depth:
            spec = specs[name]
            inputs = [i.component for i in spec.inputs if i.component in specs
                      and i.component not in seen]
            depth[name] = 1 + max((of(i, seen | {name}) for i in inputs), default=0) \
                if spec.kind == BOLT else 1
        return depth[name]

    return max((of(n) for n in specs), default=0)


def _stamp(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _one(q: dict, key: str) -> str | None:
    values = q.get(key)
    return values[0] if values else None


def dumps(value: Any) -> bytes:
    return json.dumps(value, default=str).encode()
