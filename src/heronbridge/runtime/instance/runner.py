"""One task's process: the task core with the spout loop or the bolt loop, and
checkpoints under effectively-once; `run` is the process's life."""

from __future__ import annotations

import logging
import os
import signal
import time
import traceback

from ..errors import ComponentError
from ..telemetry import CRASH_COUNT, ERROR_COUNT
from .bolt_loop import BoltLoop
from .connection import ConnectionLost
from .spout_loop import SpoutLoop
from .stateful import Checkpoints, RolledBack
from .task import EXIT_COMPONENT_ERROR, EXIT_LOST_STREAM_MANAGER, TaskCore

log = logging.getLogger("heronbridge.runtime.instance")


class InstanceRunner(SpoutLoop, BoltLoop, Checkpoints, TaskCore):
    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        try:
            response = self._register(time.monotonic() + 60)
            self._setup(response.pplan)
            log.info("%s: started (incarnation %d, pid %d)", self.loc(), self.incarnation,
                     os.getpid())
            if getattr(self.user, "owns_loop", False):
                from .pull import PullHost

                self.user.run(PullHost(self))
                self.finish()
                return 0
            if self.stateful:
                self._await_restore()
            else:
                self.start_component()
                self.announce_started()
            while True:
                try:
                    if self.is_spout:
                        self._spout_loop()
                    else:
                        self._bolt_loop()
                    break
                except RolledBack as rollback:
                    self.restore(rollback.message)
            self._shutdown()
            return 0
        except SystemExit as exc:  # the component chose to exit: what it sent goes first
            log.info("%s: the component exits with %s", self.loc(), exc.code)
            code = exc.code if isinstance(exc.code, int) else 1
            if code and not self.stopping:  # pystorm's exit after an exception it reported
                self.counts[CRASH_COUNT] += 1
            if self.conn is None or self.emitter is None:
                self._salvage()
            else:
                self.finish()
            return code
        except ConnectionLost as exc:
            log.error("%s: lost the stream manager (%s); exiting to be restarted",
                      self.loc(), exc)
            return EXIT_LOST_STREAM_MANAGER
        except Exception as exc:  # noqa: BLE001 - a component failure ends only this task
            self.counts[CRASH_COUNT] += 1
            if not getattr(exc, "reported", False):  # else counted when it was reported
                self.counts[ERROR_COUNT] += 1
                self.exceptions.add(exc)
            log.error("%s: %s\n%s", self.loc(), _describe(exc), traceback.format_exc())
            self._salvage()
            return EXIT_COMPONENT_ERROR


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ComponentError):
        return str(exc)
    return f"the component raised {type(exc).__name__}: {exc}"
