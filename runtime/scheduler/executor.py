"""The executor: one per container. It starts the container's processes, restarts any
that dies (keeping its log), and stops them all, in order, on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..addresses import metrics_address, stmgr_address
from ..config import TopologyConfig
from ..errors import SchedulerError
from ..plan.codec import topology_from_proto
from ..state import PACKING_PLANS, TOPOLOGIES, ZK_DIGEST_ENV, StateManager
from ..state.follow import Follower
from ..wire.aio import spawn
from ..wire.auth import secret_env
from .processes import argv_address, die_with_parent, module_command

log = logging.getLogger("heronbridge.runtime.executor")

STOP_GRACE_SECS = 5.0
STABLE_AFTER_SECS = 10.0  # a process that lived this long restarts without backoff


@dataclass
class Child:
    name: str
    argv_for: object  # callable incarnation -> argv
    log_path: Path
    tier: int  # stopped in descending tier order: tasks first, the master last
    incarnation: int = 0
    process: asyncio.subprocess.Process | None = None
    started_at: float = 0.0
    failures: int = 0
    restarts: list[int] = field(default_factory=list)


class Executor:
    def __init__(self, state: StateManager, topology_name: str, container: int,
                 workdir: Path) -> None:
        self.state = state
        topology = state.get(TOPOLOGIES, topology_name)
        packing = state.get(PACKING_PLANS, topology_name)
        if topology is None or packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan to execute"
            raise SchedulerError(msg)
        plan = topology_from_proto(topology)
        self.conf = TopologyConfig.read(plan.config, topology_name)
        self.name = topology_name
        self.container = container
        self.workdir = workdir
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.stopping = False
        self.topology_id = tid = topology.id
        secret = state.get_secret(topology_name)
        if secret is None:
            msg = (f"topology {topology_name!r}: no secret in the state manager "
                   f"({state.uri}); it was not submitted, or not by this user")
            raise SchedulerError(msg)
        # Children get the secret in their environment (readable by this user only), never
        # on their command line; each takes it out of its environment at once.
        self.env = {**os.environ, **secret_env(secret)}
        # Tasks (user code) never open the state: they get no ZooKeeper identity.
        self.task_env = {k: v for k, v in self.env.items() if k != ZK_DIGEST_ENV}
        common = ["--state", state.uri, "--topology", topology_name]
        self.children: list[Child] = []
        if container == 0:
            self._add("topology-master", 3, lambda n: module_command("topology_master", *common))
        self._add("metrics-manager", 2, lambda n: module_command(
            "metrics_manager", *common, "--container", str(container),
            "--sink", str(workdir / "metrics.jsonl"),
            "--interval", str(self.conf.metrics_interval_secs)))
        self._add("stream-manager", 1, lambda n: module_command(
            "stream_manager", *common, "--container", str(container)))
        instances = next((c.instances for c in packing.containers if c.id == container), None)
        if instances is None:
            msg = f"topology {topology_name!r}: the packing plan has no container {container}"
            raise SchedulerError(msg)
        for inst in instances:
            task = inst.task_id
            self._add(f"task-{task}-{inst.component}", 0, lambda n, task=task: module_command(
                "instance", "--topology-id", tid, "--task", str(task),
                "--container", str(container),
                "--stmgr", argv_address(stmgr_address(tid, container)),
                "--metrics", argv_address(metrics_address(tid, container)),
                "--incarnation", str(n)))

    def _add(self, name: str, tier: int, argv_for: object) -> None:
        self.children.append(Child(name, argv_for, self.logs / f"{name}.log", tier))

    async def _start(self, child: Child) -> None:
        with child.log_path.open("ab") as f:
            if child.incarnation:
                f.write(f"\n=== restart {child.incarnation} at {time.ctime()} ===\n".encode())
                f.flush()
            child.process = await asyncio.create_subprocess_exec(
                *child.argv_for(child.incarnation), stdin=asyncio.subprocess.DEVNULL,
                stdout=f, stderr=f, cwd=self.workdir,
                env=self.task_env if child.tier == 0 else self.env,
                preexec_fn=die_with_parent())
        child.started_at = time.monotonic()

    async def _watch(self, child: Child) -> None:
        while not self.stopping:
            code = await child.process.wait()
            if self.stopping:
                return
            lived = time.monotonic() - child.started_at
            child.failures = 0 if lived > STABLE_AFTER_SECS else child.failures + 1
            child.restarts.append(code)
            delay = self.conf.restart_backoff_secs * min(2 ** max(child.failures - 1, 0), 20)
            log.warning("container %d: %s exited with code %s after %.1fs; restarting in %.1fs "
                        "(log: %s)", self.container, child.name, code, lived, delay,
                        child.log_path)
            await asyncio.sleep(delay)
            if self.stopping:
                return
            child.incarnation += 1
            await self._start(child)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        # A container on another host learns that its topology was killed from the state.
        topology = Follower(self.state, TOPOLOGIES, self.name)
        spawn(self._until_killed(topology, stop), "topology watch")
        for child in sorted(self.children, key=lambda c: -c.tier):
            await self._start(child)
        watchers = [asyncio.create_task(self._watch(c)) for c in self.children]
        log.info("container %d of %r: started %d processes", self.container, self.name,
                 len(self.children))
        await stop.wait()
        topology.cancel()
        self.stopping = True
        for tier in sorted({c.tier for c in self.children}):
            await self._stop_tier([c for c in self.children if c.tier == tier])
        for w in watchers:
            w.cancel()
        log.info("container %d of %r: stopped", self.container, self.name)
        return 0

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
    import argparse
    import sys

    from ..state import open_state
    from ..wire.aio import run_loop

    parser = argparse.ArgumentParser(prog="heronbridge-executor",
                                     description="Run one container of a topology.")
    parser.add_argument("--state", required=True)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    executor = Executor(open_state(args.state), args.topology, args.container,
                        Path(args.workdir))

    async def start() -> int:
        return await executor.run()

    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run_loop(start())


if __name__ == "__main__":
    import sys

    sys.exit(main())
