"""The health manager's loop: sense every `interval`, diagnose, resolve, log.

After an action that changes the topology (a scale-up, a restart) it waits out the
cool-down and starts a fresh window, as Heron's policies wait after acting; a decision
to do nothing is logged once per cool-down per component. Then, as Dhalion does, it
checks the action against the figures before it (throughput, tuples lost, whether the
diagnosis still holds); an action that did not help is blacklisted for that diagnosis
of that component for `blacklist.secs`, and logged."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import control
from ..errors import RuntimeKernelError, where
from ..plan.codec import topology_from_proto
from ..plan.tasks import TaskLayout
from ..proto import control_pb2
from ..statemgr import PACKING_PLANS, TOPOLOGIES, StateManager
from .actions import BLACKLISTED, NONE, RESTART, SCALE_UP, VERIFIED, Action, append_action
from .config import HealthConfig
from .diagnosis import (
    DATA_SKEW,
    FAILING_TASK,
    SLOW_INSTANCE,
    UNDER_PROVISIONED,
    Diagnosis,
    diagnose_topology,
    scaled_parallelism,
)
from .sensors import SpoutView, Window

log = logging.getLogger("heronbridge.runtime.health")

COMPONENT = "__healthmgr__"
HELPED = 1.1  # throughput after / before that shows an action helped
HALVED = 0.5  # ... or tuples lost after / before


@dataclass(frozen=True)
class Figures:
    """What an operator judges an action by: the spouts' acks per second (emits, when
    nothing is acked), their timeouts and fails per second, the time their in-flight
    window held them (ms/s, the most held spout's), and the component's capacity and
    backpressure (ms/s)."""

    throughput: float
    lost: float
    held: float
    capacity: float
    backpressure: float

    @classmethod
    def of(cls, spouts: dict[str, SpoutView], view: Any) -> Figures:
        acked = sum(v.total("acked") for v in spouts.values())
        emitted = sum(v.total("emitted") for v in spouts.values())
        lost = sum(v.total("failed") + v.total("timed_out") for v in spouts.values())
        held = max((v.held for v in spouts.values()), default=0.0)
        return cls(acked or emitted, lost, held,
                   view.capacity if view is not None else 0.0,
                   view.backpressure if view is not None else 0.0)

    def served(self, conf: HealthConfig) -> bool:
        """The spouts emit what their sources offer: nothing holds them, nothing is
        lost, and the component has time to spare and does not backpressure."""
        return self.held < conf.held_ms and self.capacity < conf.capacity \
            and self.backpressure < conf.noise_ms \
            and self.lost <= conf.failure_ratio * self.throughput

    def text(self) -> str:
        return (f"throughput {self.throughput:.0f}/s, lost {self.lost:.1f}/s, "
                f"spouts held {self.held:.0f} ms/s, capacity {self.capacity:.2f}, "
                f"backpressure {self.backpressure:.0f} ms/s")


def judged(before: Figures, after: Figures, conf: HealthConfig) -> tuple[bool, str]:
    """Whether an action helped, and why, as an operator reads the figures: throughput
    up, or tuples lost down, or the spouts now served in full; and not at the cost of
    throughput. A diagnosis that merely went away proves nothing (demand may have)."""
    rose = after.throughput > 0 and after.throughput >= HELPED * before.throughput
    fewer_lost = before.lost > 0 and after.lost <= HALVED * before.lost
    served = after.served(conf) and not before.served(conf) \
        and after.throughput >= before.throughput
    fell = after.throughput * HELPED < before.throughput
    if fell:
        return False, "throughput fell"
    why = [w for w, seen in (("throughput rose", rose), ("fewer tuples lost", fewer_lost),
                             ("the spouts run at what they offer", served)) if seen]
    if why:
        return True, ", ".join(why)
    still = "the spouts are still held" if after.held >= conf.held_ms else \
        "tuples are still lost" if after.lost > conf.failure_ratio * after.throughput else \
        "it still backpressures" if after.backpressure >= conf.noise_ms else "no better"
    return False, f"throughput did not rise and {still}"


@dataclass(frozen=True)
class Check:
    """An action to verify once its cool-down is over."""

    action: Action
    before: Figures


def upstream_order(plan: Any) -> list[str]:
    """The bolts, nearest the spouts first (by their shortest path from one)."""
    depth = {n: 0 for n, s in plan.components.items() if s.is_spout}
    changed = True
    while changed:
        changed = False
        for name, spec in plan.components.items():
            reach = [depth[i.component] + 1 for i in spec.inputs if i.component in depth]
            if reach and min(reach) < depth.get(name, 1 << 30):
                depth[name], changed = min(reach), True
    bolts = [n for n, s in plan.components.items() if not s.is_spout]
    return sorted(bolts, key=lambda n: (depth.get(n, 1 << 30), n))


class HealthManager:
    def __init__(self, statemgr: StateManager, name: str, publish: Any = None) -> None:
        self.statemgr = statemgr
        self.name = name
        topology = statemgr.get(TOPOLOGIES, name)
        if topology is None:
            msg = f"{where(name)}: not submitted; no health to manage"
            raise RuntimeKernelError(msg)
        self.conf = HealthConfig.read(topology_from_proto(topology).config, name)
        self.window = Window(self.conf.window)
        self.quiet_until = 0.0  # the cool-down after an action
        self.said: dict[tuple[str, str, int | None], float] = {}  # when a no-op was logged
        self.packing_id = ""
        self.counts: Counter[str] = Counter()
        self.publish = publish  # callable(TaskMetrics), or None
        self.check: Check | None = None  # the last action, until verified
        self.blacklist: dict[tuple[str, str], tuple[float, str]] = {}  # until, why

    def run(self, stop: threading.Event) -> None:
        log.info("health manager of %r: every %.1fs over %.0fs windows, cool-down %.0fs, "
                 "parallelism ceiling %d", self.name, self.conf.interval, self.conf.window,
                 self.conf.cooldown, self.conf.max_parallelism)
        while not stop.wait(self.conf.interval):
            try:
                self.step()
            except RuntimeKernelError as exc:
                log.warning("%s", exc)
            self._publish()

    def step(self, now: float | None = None) -> list[Action]:
        """One round: sense, and once the window is full, diagnose and resolve."""
        now = time.monotonic() if now is None else now
        report = control.metrics(self.statemgr, self.name, timeout=5.0)
        packing = self.statemgr.get(PACKING_PLANS, self.name)
        if not report.all_ready or packing is None:
            self.window.clear()
            return []
        if packing.id != self.packing_id:  # started, or updated: tasks changed
            self.packing_id = packing.id
            self.window.clear()
        self.window.add(report, now)
        if self.window.span < self.conf.window - self.conf.interval / 2 \
                or now < self.quiet_until:
            return []
        topology = self.statemgr.get(TOPOLOGIES, self.name)
        if topology is None:  # killed meanwhile
            return []
        plan = topology_from_proto(topology)
        layout = TaskLayout.of(plan)
        tasks = {n: layout.component_tasks[n] for n in plan.components}
        order = upstream_order(plan)
        bolts = self.window.components({n: tasks[n] for n in order})
        spouts = self.window.spouts({n: tasks[n] for n, s in plan.components.items()
                                     if s.is_spout})
        diagnoses = diagnose_topology(bolts, spouts, order, self.conf, self.window.span)
        taken = []
        if self.check is not None:
            taken.append(self.verify(self.check, diagnoses, bolts, spouts, now))
            self.check = None
        for diagnosis in diagnoses:
            self.counts[f"health-diagnoses/{diagnosis.kind}"] += 1
            view = bolts[diagnosis.component]
            acted = self.quiet_until
            action = self.resolve(diagnosis, view, plan, now)
            if action is not None:
                taken.append(action)
                if self.quiet_until != acted:  # it changed the topology: verify it later
                    self.check = Check(action, Figures.of(spouts, view))
                if action.action != NONE:
                    return taken  # one change at a time; the window starts again
        return taken

    def verify(self, check: Check, diagnoses: list[Diagnosis], bolts: dict, spouts: dict,
               now: float) -> Action:
        """Dhalion's check of an action, a window after its cool-down, by the figures
        before and after it (judged); one that did not help is blacklisted."""
        done = check.action
        after = Figures.of(spouts, bolts.get(done.component))
        before = check.before
        still = any(d.kind == done.diagnosis and d.component == done.component
                    for d in diagnoses)
        helped, why = judged(before, after, self.conf)
        d = Diagnosis(done.diagnosis, done.component, done.task,
                      f"before: {before.text()}; after: {after.text()}"
                      + ("; the diagnosis still holds" if still else "; the diagnosis is gone"))
        if helped:
            return self._record(VERIFIED, d, f"{done.action} helped: {why}")
        until = now + self.conf.blacklist
        self.blacklist[(done.diagnosis, done.component)] = (
            until, f"{done.action} at {time.strftime('%H:%M:%S', time.localtime(done.time))} "
                   f"did not help")
        return self._record(BLACKLISTED, d, f"{done.action} did not help ({why}): not done "
                                            f"again for {done.diagnosis} of {done.component} "
                                            f"for {self.conf.blacklist:.0f}s")

    def resolve(self, d: Diagnosis, view: Any, plan: Any, now: float) -> Action | None:
        banned = self.blacklist.get((d.kind, d.component))
        banned_for = f"blacklisted: {banned[1]}; not acting for {banned[0] - now:.0f}s" \
            if banned is not None and now < banned[0] else ""
        if d.kind == UNDER_PROVISIONED:
            current = plan.components[d.component].parallelism
            target = scaled_parallelism(view, self.conf.max_parallelism, d.pressure)
            if target <= current:
                return self._none(d, now, f"parallelism {current} is at the ceiling "
                                          f"({self.conf.max_parallelism}); not scaling")
            if banned_for:
                return self._none(d, now, banned_for)
            report = control.update(self.statemgr, self.name, {d.component: target},
                                    reason=f"health manager: {d.kind}")
            return self._act(SCALE_UP, d, now,
                             f"parallelism {current} -> {target}; spouts paused "
                             f"{report.paused_secs:.2f}s")
        if d.kind == SLOW_INSTANCE and banned_for:
            return self._none(d, now, banned_for)
        if d.kind == SLOW_INSTANCE and d.task is not None:
            control.restart_task(self.statemgr, self.name, d.task, f"health manager: {d.symptoms}")
            return self._act(RESTART, d, now, "restarted the task: its queue is the longest "
                                              "while its rate is no higher than the others'")
        if d.kind == DATA_SKEW:
            return self._none(d, now, "one task receives most of the keys of a fields "
                                      "grouping: more tasks would not share them; not scaling")
        if d.kind == FAILING_TASK:
            # Its executor restarts it with a back-off; scaling would not help.
            return self._logged(RESTART, d, now, "its executor restarts it after each crash "
                                                 "(with a back-off); not scaling")
        return None

    def _act(self, kind: str, d: Diagnosis, now: float, detail: str) -> Action:
        self.quiet_until = now + self.conf.cooldown
        self.window.clear()
        return self._record(kind, d, detail)

    def _none(self, d: Diagnosis, now: float, detail: str) -> Action | None:
        return self._logged(NONE, d, now, detail)

    def _logged(self, kind: str, d: Diagnosis, now: float, detail: str) -> Action | None:
        """Log a decision that changes nothing once per cool-down per target."""
        key = (d.kind, d.component, d.task)
        if now - self.said.get(key, -1e9) < max(self.conf.cooldown, self.conf.window):
            return None
        self.said[key] = now
        return self._record(kind, d, detail)

    def _record(self, kind: str, d: Diagnosis, detail: str) -> Action:
        action = Action(kind, d.kind, d.component, d.task, d.symptoms, detail, time.time())
        self.counts[f"health-actions/{kind}"] += 1
        log.warning("%s", action.text())
        append_action(self.statemgr, self.name, action)
        return action

    def _publish(self) -> None:
        if self.publish is None:
            return
        self.publish(control_pb2.TaskMetrics(
            component=COMPONENT, task_id=-2, container=0,
            timestamp_ms=int(time.time() * 1000),
            counters={k: float(v) for k, v in self.counts.items()},
            gauges={"health-cooldown-secs": max(0.0, self.quiet_until - time.monotonic())}))
