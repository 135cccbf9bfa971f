"""One task's process: its Task and its step, driven by the spout driver, the bolt driver
or the pulled host, with a Checkpointer under effectively-once; `run` is the process's
life."""

from __future__ import annotations

import logging
import os
import signal
import time
import traceback

from ..errors import ComponentError
from .bolt_driver import BoltDriver
from .bolt_step import BoltStep
from .checkpointer import Checkpointer
from .connection import ConnectionLost
from .pull import PullHost
from .spout_driver import SpoutDriver
from .spout_step import SpoutStep
from .step import TaskStep
from .task import EXIT_COMPONENT_ERROR, EXIT_LOST_STREAM_MANAGER, RolledBack, Task

log = logging.getLogger("heronbridge.runtime.instance")


def run(task: Task) -> int:
    """Register, set the component up, drive it until the task stops; the exit code."""
    signal.signal(signal.SIGTERM, task.stop)
    signal.signal(signal.SIGINT, task.stop)
    step: TaskStep | None = None
    try:
        response, backlog = task.register(time.monotonic() + 60)
        task.setup(response.pplan)
        log.info("%s: started (incarnation %d, pid %d)", task.loc(), task.incarnation,
                 os.getpid())
        if getattr(task.user, "owns_loop", False):
            host = PullHost(task, backlog)
            step = host.step
            task.user.run(host)
            task.finish(step)
            return 0
        checkpointer = Checkpointer(task) if task.conf.stateful else None
        if task.is_spout:
            step = SpoutStep(task, checkpoints=checkpointer)
            driver: SpoutDriver | BoltDriver = SpoutDriver(step)
        else:
            step = BoltStep(task, checkpoints=checkpointer)
            driver = BoltDriver(step)
        step.keep(*backlog)
        if checkpointer is not None:
            checkpointer.await_restore(step)
        else:
            task.start_component()
            task.announce_started()
        while True:
            try:
                driver.run()
                break
            except RolledBack as rollback:
                if checkpointer is None:  # only effectively-once rolls back
                    raise
                checkpointer.restore(rollback.message, step)
        task.shutdown(step)
        return 0
    except SystemExit as exc:  # the component chose to exit: what it sent goes first
        log.info("%s: the component exits with %s", task.loc(), exc.code)
        code = exc.code if isinstance(exc.code, int) else 1
        if code and not task.stopping:  # pystorm's exit after an exception it reported
            task.crashed()
        if task.link is None or task.emitter is None:
            task.salvage(step)
        else:
            task.finish(step)
        return code
    except ConnectionLost as exc:
        log.error("%s: lost the stream manager (%s); exiting to be restarted",
                  task.loc(), exc)
        return EXIT_LOST_STREAM_MANAGER
    except Exception as exc:  # noqa: BLE001 - a component failure ends only this task
        task.crashed()
        if not getattr(exc, "reported", False):  # else counted when it was reported
            task.died_of(exc)
        log.error("%s: %s\n%s", task.loc(), _describe(exc), traceback.format_exc())
        task.salvage(step)
        return EXIT_COMPONENT_ERROR


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ComponentError):
        return str(exc)
    return f"the component raised {type(exc).__name__}: {exc}"
