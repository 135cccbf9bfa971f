"""Hosting a multilang program (Storm's storm.py, a streamparse component under
--multilang, any other language) as a subprocess speaking Storm's protocol over pipes.

As Storm's ShellBolt does, a writer thread feeds a bolt's stdin, and no new tuple is
taken while `topology.shellbolt.max.pending` of them wait to be written; the main thread
reads the child's stdout through the runtime's poll, so neither side can block the
other. Bolts get a heartbeat every second and must answer within
`topology.subprocess.timeout.secs`, counted from the child's answer to the handshake (as
Storm's ShellProcess.launch, which waits for it however long its imports take); with
`heronbridge.multilang.wake.secs`, a bolt that holds unsettled input gets ticks, one at a
time, until it holds none. A spout's child has at most one command to read at a time (the
next waits for its `sync`), so, as in Storm's ShellSpout, it is written to directly: no
thread hand-off per command.
"""

from __future__ import annotations

import os
import queue
import random
import shlex
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

from heronbridge.runtime.api import LoopOwner
from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.scheduler.processes import die_with_parent

from ..common.peer import StormPeer, reported_origin
from . import ShimError, keys
from .protocol import framing

HEARTBEAT_SECS = 1.0
DEFAULT_TIMEOUT_SECS = 30
DEFAULT_MAX_PENDING = 100
READ_SIZE = 1 << 16
# A child that exits this soon after reporting an error exits because of it (pystorm
# reports, fails the tuple, then exits): one crash, counted once.
REPORTED_EXIT_SECS = 5.0
# How long a stopping spout's child gets to answer the deactivate the kill sends it: 2 s
# was too short on a loaded machine; it stays under the executor's 5 s before SIGKILL.
STOP_GRACE_SECS = 4.0
_STOP = object()


class ChildExited(ShimError):
    """The multilang subprocess ended; `reported`: it had just reported why."""

    def __init__(self, msg: str, reported: bool) -> None:
        super().__init__(msg)
        self.reported = reported
        # What it died of where it did not report it (see telemetry.ExceptionLog).
        self.origin: tuple[str, str, str] | None = None


def child_argv(command: str, script: str) -> list[str]:
    """The child's command line. Python components run with this interpreter, so the
    child sees the same packages as the task."""
    args = shlex.split(script)
    if command == keys.STREAMPARSE_RUN:
        return [sys.executable, "-m", "streamparse.run", *args]
    if command in ("python", "python3"):
        return [sys.executable, *args]
    return [command, *args]


class StderrTail:
    """Copies a child's stderr to the task's (its log) and keeps the end of it: a
    Python child that dies outside pystorm's loop (in `initialize`, at import) says why
    only there."""

    KEEP = 200  # lines

    def __init__(self, pipe: Any) -> None:
        self.lines: deque[str] = deque(maxlen=self.KEEP)
        self.thread = threading.Thread(target=self._copy, args=(pipe,),
                                       name="multilang-stderr", daemon=True)
        self.thread.start()

    def _copy(self, pipe: Any) -> None:
        out = sys.stderr
        for raw in iter(pipe.readline, b""):
            line = raw.decode(errors="replace")
            self.lines.append(line.rstrip("\n"))
            try:
                out.write(line)
                out.flush()
            except (OSError, ValueError):
                pass

    def last_traceback(self) -> str | None:
        """The last Python traceback the child wrote, once its stderr is closed."""
        self.thread.join(1.0)
        lines = list(self.lines)
        starts = [i for i, line in enumerate(lines)
                  if line.startswith("Traceback (most recent call last)")]
        return "\n".join(lines[starts[-1]:]) if starts else None


class ShellComponent(LoopOwner):
    """The runtime component that hosts one multilang subprocess."""

    peer: StormPeer  # from run() on

    def run(self, host: Any) -> None:
        conf = host.config
        self.host = host
        self.peer = StormPeer(host, pystorm=conf[keys.COMMAND] == keys.STREAMPARSE_RUN)
        self.framing = framing(conf.get(keys.SERIALIZER, "json"))
        self.timeout = float(conf.get("topology.subprocess.timeout.secs") or DEFAULT_TIMEOUT_SECS)
        self.max_pending = int(conf.get("topology.shellbolt.max.pending") or DEFAULT_MAX_PENDING)
        resources = conf.get(keys.RESOURCES) or os.getcwd()
        argv = child_argv(conf[keys.COMMAND], conf.get(keys.SCRIPT, ""))
        self.where = f"{self.peer.loc} (multilang subprocess {' '.join(argv)!r})"
        try:
            # If the task dies, even by SIGKILL, its child goes too, as a Storm worker's.
            self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, cwd=resources,
                                          preexec_fn=die_with_parent())
        except OSError as exc:
            msg = f"{self.where}: cannot start: {exc}"
            raise ShimError(msg) from exc
        self.stderr = StderrTail(self.child.stderr)
        stdin, stdout = self.child.stdin, self.child.stdout
        if stdin is None or stdout is None:  # never: both are pipes
            msg = f"{self.where}: started without pipes"
            raise ShimError(msg)
        self.stdin = stdin
        self.out = stdout.fileno()
        os.set_blocking(self.out, False)
        host.watch(self.out)
        self.inbox: list[Any] = []
        self.writes: queue.Queue = queue.Queue()
        # Tuples handed to the writer and tuples it wrote: each counter has one writer.
        self.queued = self.written = 0
        if not host.is_spout:
            threading.Thread(target=self._write_loop, name="multilang-writer",
                             daemon=True).start()
        try:
            self._handshake(resources)
            if host.is_spout:
                self._spout_loop()
            else:
                self._bolt_loop()
        finally:
            self._stop_child()

    # -- the child's pipes ----------------------------------------------------------

    def _send(self, msg: Any) -> None:
        if self.host.is_spout:
            self._write(self.framing.encode(msg))
        else:
            self.writes.put((self.framing.encode(msg), 0))

    def _write(self, data: bytes) -> bool:
        """Write to the child's stdin; False once it has gone away (its stdout closing
        then says how it ended)."""
        try:
            self.stdin.write(data)
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _write_loop(self) -> None:
        while True:
            data, tuples = self.writes.get()
            if data is _STOP or not self._write(data):
                return
            self.written += tuples

    def _read_child(self) -> None:
        """Take what the child wrote; raise if it has gone away."""
        while True:
            try:
                chunk = os.read(self.out, READ_SIZE)
            except BlockingIOError:
                return
            if not chunk:
                self._exited()
            self.inbox.extend(self.framing.feed(chunk))
            self.last_heard = time.monotonic()
            if len(chunk) < READ_SIZE:  # the pipe is empty: spare a read that would fail
                return

    def _exited(self) -> None:
        self._deliver()  # its last words first: the error it reported, the tuple it failed
        code = self.child.wait()
        self._unfinished()
        said = self.peer.last_error_at
        reported = code != 0 and said is not None and \
            time.monotonic() - said < REPORTED_EXIT_SECS
        msg = f"{self.where}: the subprocess exited with code {code}" + \
            (" after reporting the error above" if reported else "")
        exited = ChildExited(msg, reported)
        trace = self.stderr.last_traceback()  # what it died of, where it did not report it
        if trace is not None and not reported:
            exited.origin = reported_origin(trace)
        raise exited

    def _deliver(self) -> None:
        """Carry out the child's messages, then answer the task ids it asked for."""
        inbox, self.inbox = self.inbox, []
        with self.host.lock:
            for msg in inbox:
                self.peer.receive(msg)
        while self.peer.replies:
            self._send(self.peer.replies.popleft())

    def _wait_child(self, done: Any, until: float | None = None, timed: bool = True) -> None:
        """Pump the runtime and read the child until `done()` holds; while the task
        stops, no longer, unless `until` (a time.monotonic()) gives the child a grace;
        `timed`: a child silent for the timeout is killed."""
        while not done():
            if until is None and self.host.stopping or \
                    until is not None and time.monotonic() >= until:
                return
            if self.host.pump(0.1) == self.out:
                self._read_child()
                self._deliver()
            if timed:
                self._check_alive()

    def _check_alive(self) -> None:
        silent = time.monotonic() - self.last_heard
        if silent > self.timeout:
            msg = (f"{self.where}: no message for {silent:.0f}s (topology.subprocess."
                   f"timeout.secs is {self.timeout:.0f}); killing it")
            raise ShimError(msg)

    def _handshake(self, resources: str) -> None:
        pid_dir = os.path.join(resources, ".pids")
        os.makedirs(pid_dir, exist_ok=True)
        self._send(self.peer.handshake(pid_dir))
        self._wait_child(lambda: self.peer.pid is not None or bool(self.inbox), timed=False)
        self._deliver()
        self.last_heard = time.monotonic()  # the timeout counts from here
        if self.peer.pid is None and not self.host.stopping:
            msg = f"{self.where}: expected {{\"pid\": ...}} after the handshake"
            raise ShimError(msg)

    def _unfinished(self) -> None:
        """The input tuples the child still holds are not executed: it will not answer."""
        if not self.host.is_spout:
            self.host.not_executed(self.peer.forget_held())

    def _stop_child(self) -> None:
        self._unfinished()
        self.writes.put((_STOP, 0))
        self.host.unwatch(self.out)
        if self.child.poll() is None:
            self.child.terminate()
            try:
                self.child.wait(5)
            except subprocess.TimeoutExpired:
                self.child.kill()

    # -- bolts ----------------------------------------------------------------------

    def _bolt_loop(self) -> None:
        host = self.host
        # The child is set up once it answers a heartbeat (pystorm initializes the
        # component after the handshake): the first goes at once, and the task counts as
        # started when its sync comes back.
        host.hold_start()
        next_heartbeat = time.monotonic()
        wake_secs = TopologyConfig.read(host.config, host.topology,
                                        host.component).multilang_wake_secs
        next_wake, wake_id = float("inf"), None
        while not host.stopping:
            now = time.monotonic()
            if now >= next_heartbeat:
                self._send({"id": str(random.getrandbits(64) - (1 << 63)), "comp": None,
                            "stream": "__heartbeat", "task": -1, "tuple": []})
                next_heartbeat = now + HEARTBEAT_SECS
                self._check_alive()
            if wake_secs is not None:
                # One wake tick at a time, while the child holds input it has not settled.
                tuples = self.peer.tuples  # a new dict at each generation
                if wake_id in tuples or not tuples:
                    next_wake = float("inf")
                elif next_wake == float("inf"):
                    next_wake = now + wake_secs
                elif now >= next_wake:
                    wake_id = self._send_wake(wake_secs)
                    next_wake = float("inf")
            until = min(next_heartbeat, next_wake)
            if self.queued - self.written >= self.max_pending:  # the child is not reading
                event = host.pump(max(0.0, min(0.1, until - now)))
            else:
                event = host.next_tuple(timeout=max(0.0, until - now))
            if event is None:
                continue
            if event == self.out:
                self._read_child()
                self._deliver()
                if self.peer.syncs:
                    host.started()
            elif not isinstance(event, int):
                self._send_tuples(event)

    def _send_wake(self, wake_secs: float) -> str:
        """A tick (heronbridge.multilang.wake.secs) to a child that holds input tuples:
        its process_tick serves what it waits for. Returns the tick's id."""
        msg = self.peer.tuple_message(tick_tuple(wake_secs))
        self.queued += 1
        self.writes.put((self.framing.encode(msg), 1))
        return msg["id"]

    def _send_tuples(self, first: Any) -> None:
        """Hand `first` and the input tuples already here to the writer in one piece:
        one thread wake-up per batch, not per tuple."""
        encode, tuple_message = self.framing.encode, self.peer.tuple_message
        room = self.max_pending - (self.queued - self.written) - 1
        data = [encode(tuple_message(t)) for t in [first, *self.host.buffered(room)]]
        self.queued += len(data)
        self.writes.put((b"".join(data), len(data)))

    # -- spouts ---------------------------------------------------------------------

    def _spout_loop(self) -> None:
        host, peer = self.host, self.peer
        # pystorm initializes the component after the handshake, and says nothing until
        # it answers a command: the task is up once the first sync comes back (a child
        # that dies in `initialize` never starts, as an in-process spout never does).
        host.up_when_told()
        up = False
        while True:
            event = host.next_command(timeout=0.1)
            if event is None:
                if not host.stopping:
                    continue
                # The stop may have come after next_command looked: asked again, it says
                # "deactivate" to a spout still active, as a kill must.
                event = host.next_command(timeout=0)
                if event is None:
                    return
            if event == self.out:
                self._read_child()
                self._deliver()
                continue
            if host.stopping:
                # A kill deactivates the spout first, as Storm's does: the child hears it
                # (within a grace) before it is stopped; nothing else goes to it now.
                if event[0] == "deactivate":
                    self._send(peer.command_message(*event))
                    self._wait_child(lambda: peer.synced,
                                     until=time.monotonic() + STOP_GRACE_SECS)
                continue
            self.last_heard = time.monotonic()
            self._send(peer.command_message(*event))
            self._wait_child(lambda: peer.synced)
            if not up and peer.synced:
                up = True
                host.started()
