"""A Python task's Java custom groupings (Storm's CustomStreamGrouping), run in a JVM
beside the task, as Storm runs them in a ShellBolt's or ShellSpout's worker JVM.

The task starts one JVM (the JVM task host's jar, main `heronbridge.jvm.GroupingHost`)
for all the Java custom groupings on its streams, when its component is set up. The JVM
dials back a Unix socket in a 0700 folder of the task's own and proves, with the link
handshake (wire/PROTOCOL.md, role `grouping`), a key the task made for this link alone
and handed it through an inherited pipe. Then, on that link, in the runtime's frames:

    JVM  -> task   control RegisterInstanceRequest (topology id, the task, its pid)
    task -> JVM    control RegisterInstanceResponse (the physical plan)
    JVM  -> task   control Status: each grouping made and prepared (Storm's prepare:
                   the worker's context, the stream, the subscriber's tasks), or why not
    per emit:
    task -> JVM    data frame: dest = the subscriber's lowest task, stream = the stream's
                   index, one record [values] in the topology's serializer (what a
                   ShellBolt's JSON decodes to reaches chooseTasks)
    JVM  -> task   data frame, one record whose values are the task ids chosen; or a
                   control Status saying why there are none (chooseTasks threw)

Nothing is unpickled and nothing is Java-serialized on it. The JVM ends when the link
closes: when the task closes it, or when the task's process dies, however it dies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

from ..errors import PlanError, where
from ..plan.codec import topology_to_proto
from ..plan.java import classpath, java_command, java_groupings
from ..plan.logical import LogicalPlan
from ..plan.tasks import TaskLayout
from ..proto import control_pb2, plans_pb2
from ..wire import frames
from ..wire.auth import GROUPING, AuthError, Identity, accept_sync, secret_pipe
from ..wire.serde import Serializer

log = logging.getLogger("heronbridge.runtime.instance")

MAIN = "heronbridge.jvm.GroupingHost"
OPTIONS = ("-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")
START_SECS = 60.0  # a JVM loading Storm's classes on a loaded host
CHOOSE_SECS = 60.0  # one chooseTasks (Storm waits for ever; a hung JVM ends the task here)
SERIALIZERS = ("json", "msgpack")  # what the JVM reads (pickle carries Python objects)


class JavaGroupings:
    """The JVM of one task's Java custom groupings, and a chooser per subscription."""

    def __init__(self, plan: LogicalPlan, topology_id: str, task: int, container: int,
                 local: frozenset[int], serializer: Serializer) -> None:
        self.plan = plan
        self.topology_id = topology_id
        self.task = task
        self.container = container
        self.local = local
        self.serializer = serializer
        self.layout = TaskLayout.of(plan)
        self.component = self.layout.task_component[task]
        self.routes = java_groupings(plan, self.component)
        self.sock: socket.socket | None = None
        self.process: subprocess.Popen | None = None
        self.folder: str | None = None

    def loc(self) -> str:
        return where(self.plan.name, self.component, self.task)

    # -- start -------------------------------------------------------------------

    def start(self) -> None:
        """Start the JVM and wait until every grouping is prepared (or say why not)."""
        if self.serializer.name not in SERIALIZERS:
            msg = (f"{self.loc()}: its Java custom groupings {self._described()} read the "
                   f"values in the topology's serializer; expected one of {SERIALIZERS}, "
                   f"received {self.serializer.name!r}")
            raise PlanError(msg)
        self.folder = tempfile.mkdtemp(prefix="heronbridge-grouping-")  # 0700, ours
        path = os.path.join(self.folder, "link")
        identity = Identity.unix(self.topology_id, f"grouping-{self.task}", path)
        key = secrets.token_bytes(32)  # this link's alone: it grants nothing elsewhere
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(path)
            listener.listen(1)
            self.process = self._launch(path, key)
            self.sock = self._accept(listener, key, identity)
            self.sock.settimeout(CHOOSE_SECS)
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()
        try:
            self._register()
        except BaseException:
            self.close()  # a JVM that could not prepare its groupings goes with the error
            raise

    def _launch(self, path: str, key: bytes) -> subprocess.Popen:
        conf = self.plan.component_config(self.component)
        childopts = conf.get("topology.worker.childopts") or []
        opts = shlex.split(childopts) if isinstance(childopts, str) else \
            [str(o) for o in childopts]
        command = [java_command(self.plan), *OPTIONS, *opts, "-cp",
                   os.pathsep.join(classpath(self.plan)), MAIN, "--topology-id",
                   self.topology_id, "--task", str(self.task), "--container",
                   str(self.container), "--listener", path, "--code-dir", os.getcwd()]
        fd, env = secret_pipe(key)
        try:
            # stdout to the task's log (stderr): a grouping that prints must not write
            # into a multilang task's protocol or anywhere unseen.
            return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=2,
                                    pass_fds=(fd,), env={**os.environ, **env})
        except OSError as exc:
            msg = (f"{self.loc()}: cannot start the JVM of its Java custom groupings "
                   f"{self._described()}: expected {command[0]!r} to run, received {exc}")
            raise PlanError(msg) from exc
        finally:
            os.close(fd)

    def _accept(self, listener: socket.socket, key: bytes,
                identity: Identity) -> socket.socket:
        deadline = time.monotonic() + START_SECS
        listener.settimeout(0.2)
        while True:
            code = self.process.poll() if self.process is not None else None
            if code is not None:
                msg = (f"{self.loc()}: the JVM of its Java custom groupings "
                       f"{self._described()} exited with code {code} before it connected "
                       "(its log lines are above)")
                raise PlanError(msg)
            if time.monotonic() > deadline:
                msg = (f"{self.loc()}: expected the JVM of its Java custom groupings to "
                       f"connect within {START_SECS:g}s, received nothing")
                raise PlanError(msg)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.setblocking(True)
            try:
                accept_sync(conn, key, frozenset({GROUPING}), identity)
            except (AuthError, OSError) as exc:
                log.warning("%s: refused a connection to its grouping link: %s", self.loc(),
                            exc)
                conn.close()
                continue
            return conn

    def _register(self) -> None:
        hello = self._control()
        if not isinstance(hello, control_pb2.RegisterInstanceRequest) or \
                hello.task_id != self.task or hello.topology_id != self.topology_id:
            msg = (f"{self.loc()}: expected its grouping JVM to register for task "
                   f"{self.task} of {self.topology_id}, received {hello}")
            raise PlanError(msg)
        self._send(frames.control_frame(control_pb2.RegisterInstanceResponse(
            status=control_pb2.Status(ok=True), pplan=self._pplan())))
        status = self._control()
        if not isinstance(status, control_pb2.Status) or not status.ok:
            msg = getattr(status, "message", "") or (
                f"{self.loc()}: expected its grouping JVM's Status, received {status}")
            raise PlanError(msg)
        log.info("%s: Java custom groupings %s prepared (JVM pid %d)", self.loc(),
                 self._described(), hello.pid)

    def _pplan(self) -> plans_pb2.PhysicalPlan:
        """The plan as the JVM task host reads it: the tasks behind this task's stream
        manager are those local-or-shuffle and Storm's worker context count as local."""
        pplan = plans_pb2.PhysicalPlan(topology=topology_to_proto(self.plan,
                                                                  self.topology_id))
        here, elsewhere = f"stmgr-{self.container}", "elsewhere"
        for task, component in sorted(self.layout.task_component.items()):
            if component in self.plan.components:
                pplan.instances.add(task_id=task, component=component,
                                    component_index=self.layout.index_of(task),
                                    stmgr_id=here if task in self.local or task == self.task
                                    else elsewhere)
        return pplan

    # -- per emit ----------------------------------------------------------------

    def chooser(self, stream: str, stream_index: int, subscriber: str,
                first_task: int) -> Callable[[list], list[int]]:
        """chooseTasks of the grouping `subscriber` has on `stream`, as a function of an
        emit's values."""
        encode, decode = self.serializer.encode, self.serializer.decode
        header = frames.DATA_HEADER.pack
        size = frames.DATA_HEADER_SIZE - 4
        data = frames.DATA

        def choose(values: list) -> list[int]:
            records = encode([(values,)])
            self._send(header(size + len(records), data, first_task, self.task,
                              stream_index) + records)
            kind, body = self._frame()
            if kind == frames.DATA:
                [record] = decode(body[frames.DATA_HEADER_SIZE:])
                return record[0]
            status = frames.parse_control(body)
            msg = getattr(status, "message", "") or (
                f"{self.loc()}: expected the tasks the Java custom grouping on stream "
                f"{stream!r} to {subscriber!r} chose, received {status}")
            raise PlanError(msg)
        return choose

    # -- the link ----------------------------------------------------------------

    def _send(self, frame: bytes) -> None:
        try:
            self._link().sendall(frame)
        except OSError as exc:
            raise self._lost(exc) from exc

    def _frame(self) -> tuple[int, bytes]:
        """(kind, the whole frame) of the next frame from the JVM."""
        sock = self._link()
        try:
            head = self._exactly(sock, frames.HEADER_SIZE)
            length, kind, _ = frames.HEADER.unpack(head)
            if length > frames.MAX_FRAME or kind not in (frames.DATA, frames.CONTROL):
                msg = (f"{self.loc()}: expected a data or control frame from its grouping "
                       f"JVM, received kind {kind}, length {length}")
                raise PlanError(msg)
            return kind, head + self._exactly(sock, length + 4 - frames.HEADER_SIZE)
        except OSError as exc:
            raise self._lost(exc) from exc

    def _control(self) -> Any:
        kind, body = self._frame()
        return frames.parse_control(body) if kind == frames.CONTROL else None

    def _exactly(self, sock: socket.socket, size: int) -> bytes:
        buf = bytearray()
        while len(buf) < size:
            chunk = sock.recv(size - len(buf))
            if not chunk:
                raise self._lost(None)
            buf += chunk
        return bytes(buf)

    def _link(self) -> socket.socket:
        if self.sock is None:
            raise self._lost(None)
        return self.sock

    def _lost(self, exc: BaseException | None) -> PlanError:
        code = self.process.poll() if self.process is not None else None
        how = f"exited with code {code}" if code is not None else f"is unreachable ({exc})"
        return PlanError(f"{self.loc()}: the JVM of its Java custom groupings "
                         f"{self._described()} {how}; expected it to choose tasks")

    def _described(self) -> str:
        return ", ".join(f"{stream!r} to {sub!r}" for stream, sub in self.routes)

    # -- end ---------------------------------------------------------------------

    def close(self) -> None:
        """End the JVM with the task: the link closes, the JVM exits (killed if it
        does not within 5 s)."""
        linked = self.sock is not None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.process is not None:
            try:
                self.process.wait(5 if linked else 0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.folder is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.folder)
            self.folder = None
