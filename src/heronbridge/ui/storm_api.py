"""Storm UI's REST API v1, the parts monitoring tools read, with Storm 2.8's field names,
units and quirks: latencies in milliseconds as "%.3f" strings (except a spout page's
`spoutSummary`, where completeLatency is a number), capacity as a string, errors as
`{"error", "errorMessage"}` with HTTP 500, and any `window` accepted.

What maps how: a container is a worker (its port is its stream manager's), a host with
containers is a supervisor, a task is an executor. The runtime counts emits, not copies
sent, so `transferred` equals `emitted`; it times `execute`, so `processLatency` is the
execute latency; a spout's timed-out tuples count as failed, as Storm counts them.
"""

from __future__ import annotations

import json
import os
import socket
import time
from importlib.metadata import version
from typing import Any
from urllib.parse import quote

from heronbridge.runtime.proto import topology_pb2

from . import NotFound
from .custom import custom_metrics
from .kafka_lag import storm_lag
from .stats import (
    ALL_TIME,
    CAPACITY_WINDOW,
    WINDOWS,
    ComponentStats,
    TaskStats,
    by_component,
    window_seconds,
)
from .tracker import Topology, Tracker

# The Storm release whose UI API this serves (clients parse X.Y.Z).
STORM_VERSION = "2.8.3"
STATUS: dict[int, str] = {topology_pb2.RUNNING: "ACTIVE", topology_pb2.PAUSED: "INACTIVE",
          topology_pb2.KILLED: "KILLED"}
_DIVIDERS = (("s", 60), ("m", 60), ("h", 24), ("d", None))


def pretty_uptime(seconds: float) -> str:
    """Storm's prettyUptimeSec: `1d 2h 3m 4s`, leading zero units left out."""
    left = int(seconds)
    parts: list[str] = []
    for unit, div in _DIVIDERS:
        if left <= 0:
            break
        if div is None:
            parts.insert(0, f"{left}{unit}")
        else:
            parts.insert(0, f"{left % div}{unit}")
            left //= div
    return " ".join(parts)


def window_hint(window: str) -> str:
    return "All time" if window == ALL_TIME else pretty_uptime(float(window))


def float_str(value: float | None) -> str:
    """Storm's StatsUtil.floatStr: "0" for nothing, else three decimals."""
    return "0" if value is None else f"{value:.3f}"


def _count(value: float) -> int:
    return int(round(value))


def status(t: Topology) -> str:
    return STATUS.get(t.state, "INACTIVE")


class StormAPI:
    def __init__(self, tracker: Tracker, base_url: str = "") -> None:
        self.tracker = tracker
        self.base_url = base_url  # for log links: the server's own address

    # -- helpers ------------------------------------------------------------------

    def topology(self, key: str) -> Topology:
        t = self.tracker.find(key)
        if t is None:
            msg = f"topology {key!r} is not known to the state manager (NotAliveException)"
            raise NotFound(msg)
        return t

    def _hosts(self, t: Topology) -> dict[int, tuple[str, int]]:
        """container -> (host, port) of its stream manager."""
        pplan = t.nodes.pplan
        if pplan is None:
            return {}
        return {s.container: (s.host, s.data_port) for s in pplan.stmgrs}

    def _containers(self, t: Topology) -> dict[int, list[Any]]:
        packing = t.nodes.packing
        return {c.id: list(c.instances) for c in packing.containers} if packing else {}

    def log_link(self, t: Topology, task: int) -> str:
        return f"{self.base_url}/topology/{quote(t.name)}/logs/{task}"

    def _memory_mb(self, t: Topology) -> float:
        return sum(task.gauges.get("rss-bytes", 0.0) for task in t.report.tasks) / 2**20 \
            if t.report is not None else 0.0

    # -- cluster --------------------------------------------------------------------

    def cluster_summary(self) -> dict[str, Any]:
        tops = self.tracker.all()
        supervisors = self.supervisors()
        total_mem = sum(s["totalMem"] for s in supervisors)
        total_cpu = sum(s["totalCpu"] for s in supervisors)
        used_mem = sum(s["usedMem"] for s in supervisors)
        used_cpu = sum(s["usedCpu"] for s in supervisors)
        slots = sum(s["slotsTotal"] for s in supervisors)
        tasks = sum(self._tasks_total(t) for t in tops)
        return {
            "user": None, "stormVersion": STORM_VERSION,
            "stormVersionInfo": {"version": STORM_VERSION,
                                 "revision": f"heronbridge {version('heronbridge')}"},
            "supervisors": len(supervisors), "topologies": len(tops),
            "slotsUsed": slots, "slotsTotal": slots, "slotsFree": 0,
            "tasksTotal": tasks, "executorsTotal": tasks,
            "totalMem": total_mem, "totalCpu": total_cpu,
            "availMem": total_mem - used_mem, "availCpu": total_cpu - used_cpu,
            "fragmentedMem": 0.0, "fragmentedCpu": 0.0, "schedulerDisplayResource": False,
            "memAssignedPercentUtil": float_str(used_mem * 100 / total_mem)
            if total_mem else "0.0",
            "cpuAssignedPercentUtil": float_str(used_cpu * 100 / total_cpu)
            if total_cpu else "0.0",
            "bugtracker-url": None, "central-log-url": None,
            "availGenerics": "", "totalGenerics": "",
        }

    def cluster_configuration(self) -> dict[str, Any]:
        return {"storm.version": STORM_VERSION, "ui.port": None,
                "topology.message.timeout.secs": 30}

    def nimbus_summary(self) -> dict[str, Any]:
        host = socket.gethostname()
        uptime = int(time.monotonic() - self.tracker_started)
        return {"nimbuses": [{
            "host": host, "port": 0, "status": "Leader", "version": STORM_VERSION,
            "nimbusUpTimeSeconds": uptime, "nimbusUpTime": pretty_uptime(uptime),
            "nimbusLogLink": ""}]}

    tracker_started = time.monotonic()

    def supervisors(self) -> list[dict[str, Any]]:
        """One per host that runs containers (this host when none does)."""
        hosts: dict[str, dict[str, Any]] = {}
        for t in self.tracker.all():
            for container, (host, _port) in self._hosts(t).items():
                entry = hosts.setdefault(host, {"slots": 0, "mem": 0.0})
                entry["slots"] += 1
                if t.report is not None:
                    entry["mem"] += sum(task.gauges.get("rss-bytes", 0.0)
                                        for task in t.report.tasks
                                        if task.container == container) / 2**20
        if not hosts:
            hosts[socket.gethostname()] = {"slots": 0, "mem": 0.0}
        uptime = int(time.monotonic() - self.tracker_started)
        total_mem = _machine_memory_mb()
        total_cpu = float(os.cpu_count() or 1) * 100
        return [{
            "id": host, "host": host, "uptime": pretty_uptime(uptime), "uptimeSeconds": uptime,
            "blacklisted": False, "slotsTotal": e["slots"], "slotsUsed": e["slots"],
            "slotsFree": 0, "totalMem": total_mem, "totalCpu": total_cpu,
            "usedMem": e["mem"], "usedCpu": 0.0, "availMem": total_mem - e["mem"],
            "availCpu": total_cpu, "logLink": "", "version": STORM_VERSION,
            "totalGenericResources": "", "usedGenericResources": "",
            "availGenericResources": ""} for host, e in sorted(hosts.items())]

    def supervisor_summary(self) -> dict[str, Any]:
        return {"logviewerPort": None, "logviewerScheme": "http",
                "supervisors": self.supervisors(), "schedulerDisplayResource": False}

    # -- topologies -----------------------------------------------------------------

    def _tasks_total(self, t: Topology) -> int:
        return sum(len(c) for c in self._containers(t).values())

    def _summary(self, t: Topology) -> dict[str, Any]:
        mem = self._memory_mb(t)
        tasks = self._tasks_total(t)
        return {
            "id": t.id, "encodedId": quote(t.id), "owner": t.role, "name": t.name,
            "status": status(t), "uptime": pretty_uptime(t.uptime),
            "uptimeSeconds": int(t.uptime), "tasksTotal": tasks,
            "workersTotal": len(self._containers(t)), "executorsTotal": tasks,
            "replicationCount": 1, "schedulerInfo": None,
            "requestedMemOnHeap": 0.0, "requestedMemOffHeap": 0.0, "requestedTotalMem": 0.0,
            "requestedCpu": 0.0, "requestedGenericResources": "",
            "assignedMemOnHeap": mem, "assignedMemOffHeap": 0.0, "assignedTotalMem": mem,
            "assignedCpu": 0.0, "assignedGenericResources": "", "topologyVersion": None,
            "stormVersion": STORM_VERSION,
        }

    def topology_summary(self) -> dict[str, Any]:
        return {"topologies": [self._summary(t) for t in self.tracker.all()],
                "schedulerDisplayResource": False}

    def _components(self, t: Topology, window: str) -> dict[str, ComponentStats]:
        return by_component(t.stats(window_seconds(window)), t.kinds)

    def _last_error(self, t: Topology, component: str) -> dict[str, Any]:
        errors = self._errors(t, component)
        if not errors:
            return {"lastError": "", "errorHost": "", "errorPort": None,
                    "errorWorkerLogLink": "", "errorTime": None, "errorLapsedSecs": None}
        last = dict(errors[-1])
        last["lastError"] = last.pop("error")[:200]
        return last

    def _errors(self, t: Topology, component: str) -> list[dict[str, Any]]:
        """Storm's componentErrors, oldest first: one per distinct exception."""
        if t.report is None:
            return []
        hosts = self._hosts(t)
        now = time.time()
        out = []
        for task in t.report.tasks:
            if task.component != component:
                continue
            host, port = hosts.get(task.container, ("", None))
            for e in task.exceptions:
                when = int(e.last_ms / 1000)
                out.append({"errorTime": when, "errorHost": host, "errorPort": port,
                            "errorLapsedSecs": max(0, int(now - when)),
                            "errorWorkerLogLink": self.log_link(t, task.task_id),
                            # As Java prints it: the exception first, then the trace.
                            "error": f"{e.class_name}: {e.message}\n{e.stacktrace}"})
        return sorted(out, key=lambda e: e["errorTime"])

    def _capacity(self, t: Topology) -> dict[str, ComponentStats]:
        return self._components(t, str(int(CAPACITY_WINDOW)))

    def topology_page(self, key: str, window: str | None) -> dict[str, Any]:
        t = self.topology(key)
        window = window or ALL_TIME
        stats = self._components(t, window)
        capacity = self._capacity(t)
        page = self._summary(t)
        conf = t.plan.config if t.plan is not None else {}
        page.update({
            "user": None, "window": window, "windowHint": window_hint_safe(window),
            "msgTimeout": conf.get("topology.message.timeout.secs", 30),
            "configuration": conf, "visualizationTable": [],
            "schedulerDisplayResource": False, "bugtracker-url": None,
            "central-log-url": None, **self._debug(t, list(t.kinds)),
            "requestedRegularOnHeapMem": 0.0, "requestedSharedOnHeapMem": 0.0,
            "requestedRegularOffHeapMem": 0.0, "requestedSharedOffHeapMem": 0.0,
            "assignedRegularOnHeapMem": page["assignedMemOnHeap"],
            "assignedSharedOnHeapMem": 0.0, "assignedRegularOffHeapMem": 0.0,
            "assignedSharedOffHeapMem": 0.0,
            "topologyStats": [self._topology_stats(t, w) for w in WINDOWS],
            "workers": self._workers(t),
            "spouts": [self._spout(t, c) for c in stats.values() if c.kind == "spout"],
            "bolts": [self._bolt(t, c, capacity.get(c.name)) for c in stats.values()
                      if c.kind == "bolt"],
        })
        return page

    def _topology_stats(self, t: Topology, window: str) -> dict[str, Any]:
        stats = self._components(t, window)
        spouts = [c for c in stats.values() if c.kind == "spout"]
        latency_sum = sum(c.total("lat_sum_ms") for c in spouts)
        latency_count = sum(c.total("lat_count") for c in spouts)
        return {
            "windowPretty": window_hint(window), "window": window,
            "emitted": _count(sum(c.total("emitted") for c in stats.values())),
            "transferred": _count(sum(c.total("emitted") for c in stats.values())),
            "completeLatency": float_str(latency_sum / latency_count
                                         if latency_count else None),
            "acked": _count(sum(c.total("acked") for c in spouts)),
            "failed": _count(sum(c.failed_total for c in spouts)),
        }

    def _workers(self, t: Topology) -> list[dict[str, Any]]:
        hosts = self._hosts(t)
        out = []
        rss: dict[int, float] = {}
        if t.report is not None:
            for task in t.report.tasks:
                rss[task.container] = rss.get(task.container, 0.0) + \
                    task.gauges.get("rss-bytes", 0.0) / 2**20
        for container, instances in sorted(self._containers(t).items()):
            host, port = hosts.get(container, ("", 0))
            counts: dict[str, int] = {}
            for inst in instances:
                counts[inst.component] = counts.get(inst.component, 0) + 1
            out.append({
                "supervisorId": host, "host": host, "port": port, "topologyId": t.id,
                "topologyName": t.name, "executorsTotal": len(instances),
                "assignedMemOnHeap": rss.get(container, 0.0), "assignedMemOffHeap": 0.0,
                "assignedCpu": 0.0, "componentNumTasks": counts,
                "uptime": pretty_uptime(t.uptime), "uptimeSeconds": int(t.uptime),
                "workerLogLink": f"{self.base_url}/topology/{quote(t.name)}",
                "owner": t.role})
        return out

    def _common(self, c: ComponentStats) -> dict[str, Any]:
        emitted = _count(c.total("emitted"))
        return {"executors": len(c.tasks), "tasks": len(c.tasks), "emitted": emitted,
                "transferred": emitted, "acked": _count(c.total("acked")),
                "failed": _count(c.failed_total)}

    def _spout(self, t: Topology, c: ComponentStats) -> dict[str, Any]:
        out = self._common(c)
        out.update({"spoutId": c.name, "encodedSpoutId": quote(c.name),
                    "completeLatency": float_str(c.complete_ms)})
        out.update(self._last_error(t, c.name))
        return out

    def _bolt(self, t: Topology, c: ComponentStats,
              capacity: ComponentStats | None) -> dict[str, Any]:
        out = self._common(c)
        out.update({"boltId": c.name, "encodedBoltId": quote(c.name),
                    "capacity": float_str(capacity.capacity if capacity else 0.0),
                    "executeLatency": float_str(c.execute_ms),
                    "executed": _count(c.total("executed")),
                    "processLatency": float_str(c.execute_ms)})
        out.update(self._last_error(t, c.name))
        return out

    # -- one component ----------------------------------------------------------------

    def component_page(self, key: str, component: str, window: str | None) -> dict[str, Any]:
        t = self.topology(key)
        kind = t.kinds.get(component)
        if kind is None:
            msg = f"topology {t.name!r} has no component {component!r}"
            raise NotFound(msg)
        window = window or ALL_TIME
        per_window = {w: self._components(t, w)[component] for w in WINDOWS}
        chosen = self._components(t, window)[component]
        capacity = self._capacity(t)[component]
        spec = t.components[component]
        page: dict[str, Any] = {
            "user": None, "id": component, "encodedId": quote(component), "name": t.name,
            "executors": len(chosen.tasks), "tasks": len(chosen.tasks),
            "requestedMemOnHeap": None, "requestedMemOffHeap": None, "requestedCpu": None,
            "requestedGenericResources": "", "schedulerDisplayResource": False,
            "topologyId": t.id, "topologyStatus": status(t), "encodedTopologyId": quote(t.id),
            "window": window, "componentType": kind, "windowHint": window_hint_safe(window),
            **self._debug(t, [component]),
            "eventLogLink": f"{self.base_url}/ui/api/topology/{quote(t.name)}/events"
                            f"?component={quote(component)}",
            "profilingAndDebuggingCapable": False,
            "profileActionEnabled": False, "profilerActive": [],
            "componentErrors": self._errors(t, component),
            # not in Storm's page: the component's own metrics (runtime.api.metrics)
            "customMetrics": [{k: v for k, v in m.items() if k != "component"}
                              for m in custom_metrics(t, component)],
        }
        streams = sorted(spec.outputs) or ["default"]
        if kind == "spout":
            page["spoutSummary"] = [{
                "window": w, "windowPretty": window_hint(w),
                "emitted": _count(s.total("emitted")), "transferred": _count(s.total("emitted")),
                "acked": _count(s.total("acked")), "failed": _count(s.failed_total),
                "completeLatency": round(s.complete_ms or 0.0, 3),
                "lastError": self._last_error(t, component)["lastError"],
            } for w, s in per_window.items()]
            page["outputStats"] = [{
                "stream": stream, "emitted": _count(chosen.total("emitted")),
                "transferred": _count(chosen.total("emitted")),
                "completeLatency": float_str(chosen.complete_ms),
                "acked": _count(chosen.total("acked")), "failed": _count(chosen.failed_total),
            } for stream in _one_row(streams)]
            page["executorStats"] = [self._spout_executor(t, task) for task in chosen.tasks]
        else:
            page["boltStats"] = [{
                "window": w, "windowPretty": window_hint(w),
                "emitted": _count(s.total("emitted")), "transferred": _count(s.total("emitted")),
                "acked": _count(s.total("acked")), "failed": _count(s.failed_total),
                "executeLatency": float_str(s.execute_ms), "executed": _count(s.total("executed")),
                "processLatency": float_str(s.execute_ms),
                "capacity": float_str(capacity.capacity),
            } for w, s in per_window.items()]
            inputs = [(i.component, i.stream) for i in spec.inputs]
            page["inputStats"] = [{
                "component": source, "encodedComponentId": quote(source), "stream": stream,
                "executeLatency": float_str(chosen.execute_ms),
                "processLatency": float_str(chosen.execute_ms),
                "executed": _count(chosen.total("executed")),
                "acked": _count(chosen.total("acked")), "failed": _count(chosen.failed_total),
            } for source, stream in _one_row(inputs)]
            page["outputStats"] = [{
                "stream": stream, "emitted": _count(chosen.total("emitted")),
                "transferred": _count(chosen.total("emitted")),
            } for stream in _one_row(streams)]
            capacities = {task.task: task.capacity for task in capacity.tasks}
            page["executorStats"] = [self._bolt_executor(t, task, capacities.get(task.task))
                                     for task in chosen.tasks]
        return page

    def _executor(self, t: Topology, task: TaskStats) -> dict[str, Any]:
        host, port = self._hosts(t).get(task.container, ("", 0))
        executor = f"[{task.task}-{task.task}]"
        return {"id": executor, "encodedId": quote(executor),
                "uptime": pretty_uptime(t.uptime), "uptimeSeconds": int(t.uptime),
                "host": host, "port": port, "emitted": _count(task.emitted),
                "transferred": _count(task.emitted), "acked": _count(task.acked),
                "failed": _count(task.failed_total),
                "workerLogLink": self.log_link(t, task.task)}

    def _spout_executor(self, t: Topology, task: TaskStats) -> dict[str, Any]:
        out = self._executor(t, task)
        out["completeLatency"] = float_str(task.complete_ms)
        return out

    def _bolt_executor(self, t: Topology, task: TaskStats,
                       capacity: float | None) -> dict[str, Any]:
        out = self._executor(t, task)
        out.update({"capacity": float_str(capacity or 0.0),
                    "executeLatency": float_str(task.execute_ms),
                    "executed": _count(task.executed),
                    "processLatency": float_str(task.execute_ms)})
        return out

    def lag(self, key: str) -> dict[str, Any]:
        """`/api/v1/topology/:id/lag`: each Kafka spout's lag per topic and partition."""
        return storm_lag(self.topology(key).report)

    @staticmethod
    def _debug(t: Topology, components: list[str]) -> dict[str, Any]:
        """Storm's debug fields: on when each of `components` is sampled (at the lowest of
        their percentages), else off at Storm's default 10%."""
        sampling = t.sampling
        on = bool(components) and all(c in sampling for c in components)
        return {"debug": on, "samplingPct": min(sampling[c] for c in components) if on else 10}

    @staticmethod
    def operation(topology_id: str, op: str) -> dict[str, Any]:
        return {"topologyOperation": op, "topologyId": topology_id, "status": "success"}


def _one_row(items: list) -> list:
    """Per-stream rows: the runtime counts per component, so a component with one stream
    (or input) gets its totals there, and one with several gets a single `(all)` row."""
    if len(items) == 1:
        return items
    if items and isinstance(items[0], tuple):
        return [("(all)", "(all)")]
    return ["(all)"]


def window_hint_safe(window: str) -> str:
    try:
        return window_hint(window)
    except ValueError:
        return window


def error_body(exc: Exception, code: int = 500) -> bytes:
    """Storm's exceptionToJson."""
    reason = {500: "500 Server Error", 401: "401 Unauthorized", 404: "404 Not Found"}
    return json.dumps({"error": reason.get(code, f"{code} Error"),
                       "errorMessage": str(exc)}).encode()


def _machine_memory_mb() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
