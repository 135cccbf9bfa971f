"""One task's process: its Task, driven by the spout driver, the bolt driver or the pulled
host, with a Checkpointer under effectively-once; `run` is the process's life."""

from __future__ import annotations

import logging
import os
import signal
import time
import traceback

from ..errors import ComponentError
from ..telemetry import CRASH_COUNT, ERROR_COUNT
from .bolt_driver import BoltDriver
from .checkpointer import Checkpointer
from .connection import ConnectionLost
from .pull import PullHost
from .spout_driver import SpoutDriver
from .task import EXIT_COMPONENT_ERROR, EXIT_LOST_STREAM_MANAGER, RolledBack, Task

log = logging.getLogger("heronbridge.runtime.instance")


def run(task: Task) -> int:
    """Register, set the component up, drive it until the task stops; the exit code."""
    signal.signal(signal.SIGTERM, task.stop)
    signal.signal(signal.SIGINT, task.stop)
    try:
        response = task.register(time.monotonic() + 60)
        task.setup(response.pplan)
        log.info("%s: started (incarnation %d, pid %d)", task.loc(), task.incarnation,
                 os.getpid())
        if getattr(task.user, "owns_loop", False):
            task.user.run(PullHost(task))
            task.finish()
            return 0
        checkpointer = Checkpointer(task) if task.stateful else None
        driver = SpoutDriver(task) if task.is_spout else BoltDriver(task, checkpointer)
        if checkpointer is not None:
            checkpointer.await_restore()
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
                checkpointer.restore(rollback.message)
        task.shutdown()
        return 0
    except SystemExit as exc:  # the component chose to exit: what it sent goes first
        log.info("%s: the component exits with %s", task.loc(), exc.code)
        code = exc.code if isinstance(exc.code, int) else 1
        if code and not task.stopping:  # pystorm's exit after an exception it reported
            task.counts[CRASH_COUNT] += 1
        if task.conn is None or task.emitter is None:
            task.salvage()
        else:
            task.finish()
        return code
    except ConnectionLost as exc:
        log.error("%s: lost the stream manager (%s); exiting to be restarted",
                  task.loc(), exc)
        return EXIT_LOST_STREAM_MANAGER
    except Exception as exc:  # noqa: BLE001 - a component failure ends only this task
        task.counts[CRASH_COUNT] += 1
        if not getattr(exc, "reported", False):  # else counted when it was reported
            task.counts[ERROR_COUNT] += 1
            task.exceptions.add(exc)
        log.error("%s: %s\n%s", task.loc(), _describe(exc), traceback.format_exc())
        task.salvage()
        return EXIT_COMPONENT_ERROR


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ComponentError):
        return str(exc)
    return f"the component raised {type(exc).__name__}: {exc}"
