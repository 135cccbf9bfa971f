"""The executor: one per container. It starts the container's processes, restarts any
that dies (keeping its log), and stops them all, in order, on SIGTERM.

A process that keeps failing is restarted less and less often: the wait doubles with
each failure in a row, up to a cap, and starts over once the process has run for a
while. The executor says so in its log and, for a task, in the task's metrics (the
`restart-wait-secs` gauge, with the incarnation it is waiting to start). An executor
that itself keeps failing backs off the same way across its own restarts.

Every process's output goes through a pipe to its log file, which the executor rotates
(`heronbridge.log.max.bytes`, `heronbridge.log.backup.count`).

The executor follows its topology's packing plan: on an update it stops the tasks the
new plan no longer runs here (or runs under another identity) and starts the new ones,
leaving every other process alone; a container the plan drops stops.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..addresses import METRICS, make_run_dir, metrics_address, stmgr_address
from ..config import TopologyConfig
from ..errors import SchedulerError
from ..health.config import HealthConfig
from ..logfiles import LOG_DIR_ENV, RotatingOutput
from ..plan.codec import packing_from_proto, topology_from_proto
from ..plan.rescale import changes
from ..proto import control_pb2
from ..statemgr import PACKING_PLANS, TOPOLOGIES, ZK_DIGEST_ENV, StateManager
from ..statemgr.follow import Follower
from ..telemetry import RESTART_WAIT_SECS
from ..wire import auth
from ..wire.aio import FramedProtocol, spawn
from . import jvm
from .environments import TASK_PYTHON
from .processes import argv_address, die_with_parent, module_command
from .restarts import Backoff

log = logging.getLogger("heronbridge.runtime.executor")

STOP_GRACE_SECS = 5.0
OUTPUT_CHUNK = 1 << 16


@dataclass
class Child:
    name: str
    argv_for: Callable[[int], list[str]]  # incarnation -> argv
    log_path: Path
    tier: int  # stopped in descending tier order: tasks first, the master last
    backoff: Backoff
    output: RotatingOutput  # its log
    task: tuple[str, int] | None = None  # (component, task id) of a task
    incarnation: int = 0
    process: asyncio.subprocess.Process | None = None
    copying: asyncio.Task | None = None  # its output, from the pipe to the log
    started_at: float = 0.0
    restarts: int = 0
    retired: bool = False  # stopped by an update: not to be restarted


class Executor:
    def __init__(self, statemgr: StateManager, topology_name: str, container: int,
                 workdir: Path) -> None:
        self.statemgr = statemgr
        topology = statemgr.get(TOPOLOGIES, topology_name)
        packing = statemgr.get(PACKING_PLANS, topology_name)
        if topology is None or packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan to execute"
            raise SchedulerError(msg)
        self.plan = plan = topology_from_proto(topology)
        self.packing = packing_from_proto(packing)
        self.conf = TopologyConfig.read(plan.config, topology_name)
        self.name = topology_name
        self.container = container
        self.workdir = workdir
        self.logs = workdir / "logs"
        self.logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.stopping = False
        self.topology_id = topology.id
        secret = statemgr.get_secret(topology_name)
        if secret is None:
            msg = (f"topology {topology_name!r}: no secret in the state manager "
                   f"({statemgr.uri}); it was not submitted, or not by this user")
            raise SchedulerError(msg)
        self.secret = secret
        self.checkpoint_key = statemgr.get_checkpoint_key(topology_name)
        # The container's Unix sockets live in a folder of its own, made afresh.
        self.run_dir = make_run_dir()
        # Children get the secret through an inherited pipe, never in their environment
        # or on their command line (which /proc shows for their whole life).
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # Tasks (user code) never open the state: they get no ZooKeeper identity.
        self.task_env = {k: v for k, v in self.env.items() if k != ZK_DIGEST_ENV}
        self.task_env[LOG_DIR_ENV] = str(self.logs)
        common = ["--state", statemgr.uri, "--topology", topology_name]
        self.children: list[Child] = []
        if container == 0:
            self._add("topology-master", 3, lambda n: module_command("topology_master", *common))
            if HealthConfig.read(plan.config, topology_name).enabled:
                self._add("health-manager", 3, lambda n: module_command("health", *common))
        self._add("metrics-manager", 2, lambda n: module_command(
            "metrics_manager", *common, "--container", str(container),
            "--sink", str(workdir / "metrics.jsonl"),
            "--interval", str(self.conf.metrics_interval_secs)))
        self._add("stream-manager", 1, lambda n: module_command(
            "stream_manager", *common, "--container", str(container), "--logs", str(self.logs)))
        instances = next((c.instances for c in packing.containers if c.id == container), None)
        if instances is None:
            msg = f"topology {topology_name!r}: the packing plan has no container {container}"
            raise SchedulerError(msg)
        for inst in instances:
            self._add_task(inst.component, inst.task_id)
        self._metrics: FramedProtocol | None = None
        self._watchers: list[asyncio.Task] = []

    def _add_task(self, component: str, task: int) -> Child:
        tid, container = self.topology_id, self.container
        # A topology with a virtualenv of its own runs its tasks with that interpreter.
        python = self.plan.config.get(TASK_PYTHON) or None

        def args(n: int) -> list[str]:
            return ["--topology-id", tid, "--task", str(task), "--container", str(container),
                    "--stmgr", argv_address(stmgr_address(tid, container)),
                    "--metrics", argv_address(metrics_address(tid, container)),
                    "--incarnation", str(n)]

        if jvm.is_java(self.plan, component):  # one JVM, the same arguments
            plan = self.plan
            code_dir = plan.python_path[0] if plan.python_path else str(self.workdir)
            jvm.task_command(plan, component, [], code_dir)  # a bad option fails here, once
            return self._add(f"task-{task}-{component}", 0, lambda n: jvm.task_command(
                plan, component, args(n), code_dir), (component, task))
        return self._add(f"task-{task}-{component}", 0, lambda n: module_command(
            "instance", *args(n), python=python), (component, task))

    def _add(self, name: str, tier: int, argv_for: Callable[[int], list[str]],
             task: tuple[str, int] | None = None) -> Child:
        conf = self.conf if task is None else TopologyConfig.read(
            self.plan.component_config(task[0]), self.name, task[0])
        log_path = self.logs / f"{name}.log"
        child = Child(name, argv_for, log_path, tier, Backoff(conf.restart_backoff_secs),
                      RotatingOutput(log_path, conf.log_max_bytes, conf.log_backup_count), task)
        self.children.append(child)
        return child

    async def _start(self, child: Child) -> None:
        if child.incarnation:
            child.output.write(f"\n=== restart {child.incarnation} at {time.ctime()} ===\n"
                               .encode())
        fd, secret_env = auth.secret_pipe(
            self.secret, self.checkpoint_key if child.tier == 0 else None)
        try:
            child.process = await asyncio.create_subprocess_exec(
                *child.argv_for(child.incarnation), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                cwd=self.workdir, pass_fds=(fd,),
                env={**(self.task_env if child.tier == 0 else self.env), **secret_env},
                preexec_fn=die_with_parent())
        finally:
            os.close(fd)
        child.started_at = time.monotonic()
        stdout = child.process.stdout
        if stdout is not None:  # always: a pipe was asked for
            child.copying = asyncio.create_task(self._copy_output(stdout, child.output))

    async def _copy_output(self, pipe: asyncio.StreamReader, output: RotatingOutput) -> None:
        failed = False
        while chunk := await pipe.read(OUTPUT_CHUNK):
            try:
                output.write(chunk)
            except OSError as exc:  # keep draining the pipe, or the process would block
                if not failed:
                    log.error("container %d: cannot write %s: %s", self.container,
                              output.baseFilename, exc)
                failed = True

    async def _watch(self, child: Child) -> None:
        while not self.stopping and child.process is not None:
            code = await child.process.wait()
            # The rest of its output first (its own children may hold the pipe a moment).
            if child.copying is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(child.copying), 2.0)
            if self.stopping or child.retired:
                return
            lived = time.monotonic() - child.started_at
            child.restarts += 1
            delay = child.backoff.after_exit(lived)
            log.warning("container %d: %s exited with code %s after %.1fs; restarting in "
                        "%.1fs%s (log: %s)", self.container, child.name, code, lived, delay,
                        child.backoff.why(), child.log_path)
            if child.task is not None:
                await self._publish_wait(child, delay)
            await asyncio.sleep(delay)
            if self.stopping or child.retired:
                return
            child.incarnation += 1
            await self._start(child)

    async def _publish_wait(self, child: Child, delay: float) -> None:
        """Tell the metrics manager that a task waits to be restarted: a sample of the
        incarnation to come, with no counters of its own (the metrics manager keeps the
        earlier ones), whose gauge says how long the wait is."""
        if child.task is None:
            return
        component, task = child.task
        sample = control_pb2.TaskMetrics(
            component=component, task_id=task, container=self.container,
            timestamp_ms=int(time.time() * 1000), incarnation=child.incarnation + 1,
            gauges={RESTART_WAIT_SECS: delay})
        link = self._metrics
        if link is None or link.closed.done():
            try:  # it publishes task metrics, as a task does
                _, link = await asyncio.wait_for(auth.dial(
                    FramedProtocol, self.secret, auth.TASK, auth.Identity.unix(
                        self.topology_id, METRICS,
                        metrics_address(self.topology_id, self.container))), 2.0)
            except (OSError, auth.AuthError, TimeoutError):
                return  # the metrics manager is away: the log has it
            self._metrics = link
        if link is not None:
            link.send(control_pb2.MetricsPublish(tasks=[sample]))

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        # A container on another host learns that its topology was killed from the state.
        topology = Follower(self.statemgr, TOPOLOGIES, self.name)
        spawn(self._until_killed(topology, stop), "topology watch")
        for child in sorted(self.children, key=lambda c: -c.tier):
            await self._start(child)
        watchers = self._watchers
        watchers += [asyncio.create_task(self._watch(c)) for c in self.children]
        packing = Follower(self.statemgr, PACKING_PLANS, self.name)
        spawn(self._follow_packing(packing, stop), "packing watch")
        log.info("container %d of %r: started %d processes", self.container, self.name,
                 len(self.children))
        await stop.wait()
        topology.cancel()
        packing.cancel()
        self.stopping = True
        for tier in sorted({c.tier for c in self.children}):
            await self._stop_tier([c for c in self.children if c.tier == tier])
        for w in watchers:
            w.cancel()
        for child in self.children:
            if child.copying is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(child.copying, 2.0)
            child.output.close()
        if self._metrics is not None and self._metrics.transport is not None:
            self._metrics.transport.close()
        shutil.rmtree(self.run_dir, ignore_errors=True)
        log.info("container %d of %r: stopped", self.container, self.name)
        return 0

    async def _follow_packing(self, packing: Follower, stop: asyncio.Event) -> None:
        """Apply each new packing plan of an update to this container."""
        while not stop.is_set():
            node = await packing.changed()
            if node is None or node.id == self.packing.id or self.stopping:
                continue
            topology = await asyncio.to_thread(self.statemgr.get, TOPOLOGIES, self.name)
            if topology is None or topology.id != self.topology_id:
                continue  # killed or replaced: _until_killed stops us
            new_plan, new_packing = topology_from_proto(topology), packing_from_proto(node)
            delta = changes(self.plan, self.packing, new_plan, new_packing)
            self.plan, self.packing = new_plan, new_packing
            if self.container in delta.removed:
                log.warning("container %d: packing %s has no container %d; stopping",
                            self.container, new_packing.id, self.container)
                stop.set()
                return
            await self._retire(delta.stop.get(self.container, frozenset()))
            started = []
            for inst in next(c.instances for c in new_packing.containers
                             if c.id == self.container):
                if inst.task_id in delta.start.get(self.container, ()):
                    child = self._add_task(inst.component, inst.task_id)
                    await self._start(child)
                    self._watchers.append(asyncio.create_task(self._watch(child)))
                    started.append(inst.task_id)
            log.info("container %d: packing %s: stopped tasks %s, started %s", self.container,
                     new_packing.id, sorted(delta.stop.get(self.container, ())), started)

    async def _retire(self, tasks: frozenset[int]) -> None:
        leaving = [c for c in self.children if c.task is not None and c.task[1] in tasks]
        for child in leaving:
            child.retired = True
            self.children.remove(child)
        await self._stop_tier(leaving)
        for child in leaving:
            if child.copying is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(child.copying, 2.0)
            child.output.close()

    async def _until_killed(self, topology: Follower, stop: asyncio.Event) -> None:
        seen = False
        while not stop.is_set():
            node = await topology.changed()
            if node is not None and node.id == self.topology_id:
                seen = True
            elif seen or node is not None:
                log.warning("container %d: topology %r was %s; stopping", self.container,
                            self.name, "killed" if node is None else f"replaced by {node.id}")
                stop.set()

    async def _stop_tier(self, children: list[Child]) -> None:
        running = [c.process for c in children
                   if c.process is not None and c.process.returncode is None]
        for p in running:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        if running:
            await asyncio.wait([asyncio.create_task(p.wait()) for p in running],
                                         timeout=STOP_GRACE_SECS)
            for p in running:
                if p.returncode is None:
                    log.warning("container %d: pid %d ignored SIGTERM; killing", self.container,
                                p.pid)
                    try:
                        p.kill()
                    except ProcessLookupError:
                        pass
                    await p.wait()


def main(argv: list[str] | None = None) -> int:
    from ..process import start
    from ..wire.aio import run_loop

    process = start("heronbridge-executor", "Run one container of a topology.", argv,
                    _arguments)
    args = process.args
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    executor = Executor(process.statemgr(), args.topology, args.container, workdir)
    return run_loop(executor.run())


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--workdir", required=True)


if __name__ == "__main__":
    import sys

    sys.exit(main())
