"""The tracker: every topology the state manager knows, its plans, and its metrics.

A sampler thread reads each topology's nodes and asks its master for the latest metrics
every `interval` seconds (through `runtime.control`, the one way to reach a master), and
appends them to the topology's history. Request handlers read the views it keeps
without locks: a view's fields are reassigned, never edited in place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from heronbridge.runtime import admin, control
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.health.actions import read_actions
from heronbridge.runtime.plan.codec import topology_from_proto
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.statemgr import (
    ACTIONS,
    EXECUTION_STATE,
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SCHEDULERS,
    TMASTERS,
    TOPOLOGIES,
    StateManager,
)

from .history import History
from .stats import LIVE_WINDOW, WIDTH, report_latencies, report_rows, task_stats

log = logging.getLogger("heronbridge.ui")

DEFAULT_INTERVAL = 3.0
ASK_TIMEOUT = 2.0


@dataclass
class Nodes:
    """What the state manager holds for one topology (any may be missing)."""

    topology: Any = None
    packing: Any = None
    pplan: Any = None
    execution: Any = None
    tmaster: Any = None
    scheduler: Any = None
    actions: list = field(default_factory=list)  # the health manager's, oldest first


@dataclass
class Topology:
    """One topology as the tracker last saw it."""

    name: str
    nodes: Nodes
    plan: LogicalPlan | None
    history: History = field(default_factory=lambda: History(WIDTH))
    report: control_pb2.MetricsReport | None = None
    report_time: float = 0.0  # wall clock of `report`
    error: str | None = None  # why the last metrics request failed
    updates: tuple = ()  # (wall clock, packing plan id) of each new packing plan seen

    @property
    def id(self) -> str:
        return self.nodes.topology.id if self.nodes.topology is not None else ""

    @property
    def sampling(self) -> dict[str, float]:
        """Component -> the percent of its emitted tuples sampled, as the master said last."""
        return dict(self.report.sampling) if self.report is not None else {}

    @property
    def state(self) -> int:
        t = self.nodes.topology
        return t.state if t is not None else topology_pb2.STATE_UNSPECIFIED

    @property
    def running(self) -> bool:
        return self.state == topology_pb2.RUNNING

    @property
    def submitted(self) -> float:
        e = self.nodes.execution
        return float(e.submission_time) if e is not None and e.submission_time else time.time()

    @property
    def uptime(self) -> float:
        return max(0.0, (self.report_time or time.time()) - self.submitted)

    @property
    def cluster(self) -> str:
        e = self.nodes.execution
        return (e.cluster if e is not None else "") or "local"

    @property
    def environ(self) -> str:
        e = self.nodes.execution
        return (e.environ if e is not None else "") or "default"

    @property
    def role(self) -> str:
        e = self.nodes.execution
        return (e.submission_user if e is not None else "") or "heronbridge"

    @property
    def components(self) -> dict[str, Any]:
        """The logical plan's components by name; none before its plan is read."""
        return self.plan.components if self.plan is not None else {}

    @property
    def kinds(self) -> dict[str, str]:
        """component -> "spout" | "bolt", spouts first then bolts, each sorted by name."""
        specs = sorted(self.components.values(), key=lambda s: (not s.is_spout, s.name))
        return {s.name: s.kind for s in specs}

    @property
    def spouts(self) -> set[str]:
        return {n for n, k in self.kinds.items() if k == "spout"}

    def stats(self, window: float | None) -> list:
        """Every task's stats over the window (None: all-time); [] before any report."""
        if self.report is None:
            return []
        return task_stats(self.report, self.history, self.uptime, window, self.report_time,
                          self.spouts)

    def live(self) -> list:
        return self.stats(LIVE_WINDOW)


def _newest(report: control_pb2.MetricsReport | None) -> int:
    return max((t.timestamp_ms for t in report.tasks), default=0) if report is not None else -1


MAX_UPDATES = 50


def _updates(old: Topology, nodes: Nodes) -> tuple:
    """`update`s show as a new packing plan (the charts mark them on their time axis)."""
    before, now = old.nodes.packing, nodes.packing
    if before is None or now is None or before.id == now.id:
        return old.updates
    return (*old.updates, (time.time(), now.id))[-MAX_UPDATES:]


class Tracker:
    def __init__(self, statemgr: StateManager, interval: float = DEFAULT_INTERVAL,
                 workers: int = 4) -> None:
        self.statemgr = statemgr
        self.interval = interval
        self.topologies: dict[str, Topology] = {}
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ui-poll")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._sessions: dict[str, control.MasterSession] = {}  # kept between polls
        self._asking: dict[str, threading.Lock] = {}  # one request per master at a time
        self._nodes: dict[tuple[str, str], tuple[object, Any]] = {}  # -> (stamp, value)

    # -- lookup -----------------------------------------------------------------

    def all(self) -> list[Topology]:
        return sorted(self.topologies.values(), key=lambda t: t.name)

    def find(self, key: str) -> Topology | None:
        """By name, or by id (Storm's API names topologies by id)."""
        found = self.topologies.get(key)
        if found is None:
            found = next((t for t in self.topologies.values() if t.id == key), None)
        return found

    # -- sampling ---------------------------------------------------------------

    def start(self) -> None:
        self.poll()
        self._thread = threading.Thread(target=self._run, name="ui-tracker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.interval + ASK_TIMEOUT + 1)
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for session in self._sessions.values():
                session.close()
            self._sessions.clear()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - the tracker outlives any one bad poll
                log.exception("polling the state manager failed")

    def poll(self) -> None:
        """Read every topology's nodes, then ask each running master for its metrics."""
        names = set(self.statemgr.names(TOPOLOGIES))
        with self._lock:
            for gone in set(self.topologies) - names:
                del self.topologies[gone]
                self._asking.pop(gone, None)
            for key in [k for k in self._nodes if k[1] not in names]:
                del self._nodes[key]
            for gone in set(self._sessions) - names:
                self._sessions.pop(gone).close()
        futures = [self._pool.submit(self.refresh, name) for name in sorted(names)]
        for f in futures:
            f.result()

    def refresh(self, name: str) -> Topology | None:
        """Re-read one topology's nodes and metrics now."""
        try:
            def node(kind: Any) -> Any:
                return self._node(kind, name, self.statemgr.get)

            nodes = Nodes(topology=node(TOPOLOGIES), packing=node(PACKING_PLANS),
                          pplan=node(PHYSICAL_PLANS), execution=node(EXECUTION_STATE),
                          tmaster=node(TMASTERS), scheduler=node(SCHEDULERS),
                          actions=self._node(ACTIONS, name, lambda _, n: read_actions(
                              self.statemgr, n)))
        except RuntimeKernelError as exc:
            log.warning("topology %r: cannot read its state: %s", name, exc)
            return None
        if nodes.topology is None:
            return None
        with self._lock:
            old = self.topologies.get(name)
            if old is not None and old.id == nodes.topology.id:
                view = Topology(name, nodes, old.plan, old.history, old.report,
                                old.report_time, old.error, _updates(old, nodes))
            else:  # new, or submitted again: a fresh history
                view = Topology(name, nodes, topology_from_proto(nodes.topology))
            self.topologies[name] = view
        if nodes.tmaster is None:
            view.error = "no topology master is running"
            return view
        try:
            report = self._metrics(name, nodes)
        except RuntimeKernelError as exc:
            view.error = str(exc)
            return view
        now = time.time()
        if _newest(report) != _newest(view.report):  # the master has heard something new
            view.history.append(now, report_rows(report), report_latencies(report))
        view.report, view.report_time, view.error = report, now, None
        return view

    def _node(self, kind: Any, name: str, read: Callable[[Any, str], Any]) -> Any:
        """The node as last read while its stamp is the same: most never change between
        polls, and 20 topologies' seven nodes every 3 s were a sixth of the UI's time.
        Views share what is cached, and never edit it."""
        stamp = self.statemgr.stamp(kind, name)
        cached = self._nodes.get((kind, name))
        if stamp is not None and cached is not None and cached[0] == stamp:
            return cached[1]
        value = read(kind, name)  # a write after the stamp is seen by the next poll
        if stamp is not None:
            self._nodes[(kind, name)] = (stamp, value)
        return value

    def _metrics(self, name: str, nodes: Nodes) -> control_pb2.MetricsReport:
        """Asked over the master's kept session: a new one when the master moved or the
        topology was submitted again, and once more when a kept one failed (a restarted
        master closed it)."""
        with self._lock:
            asking = self._asking.setdefault(name, threading.Lock())
        request = control_pb2.ControllerRequest(metrics=control_pb2.MetricsQuery())
        address = (nodes.tmaster.host, nodes.tmaster.server_port)
        with asking:
            while True:
                session = self._sessions.get(name)
                fresh = session is None or session.closed or session.address != address \
                    or session.topology_id != nodes.topology.id
                if session is None or fresh:
                    if session is not None:
                        session.close()
                    session = control.MasterSession(self.statemgr, name, ASK_TIMEOUT)
                    with self._lock:
                        self._sessions[name] = session
                try:
                    return session.ask(request, time.monotonic() + ASK_TIMEOUT).metrics
                except RuntimeKernelError:
                    if fresh:
                        raise

    # -- control ----------------------------------------------------------------

    def set_running(self, topology: Topology, running: bool) -> int:
        """Activate or deactivate (runtime.admin); returns the topology's new state."""
        state = (admin.activate if running else admin.deactivate)(self.statemgr, topology.name)
        self.refresh(topology.name)
        return state
