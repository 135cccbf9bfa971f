"""A small, dependency-free helper for Storm multilang components (JSON).

Wire format: each message is JSON text followed by a line containing only
``end``. After the handshake the parent sends tuples (to bolts) and, in reply
to emits that ask for them, JSON arrays of task ids; the two can arrive
interleaved, so whichever kind is not wanted right now is queued.

Usage::

    from multilang import Bolt

    class Upper(Bolt):
        def process(self, tup):
            self.emit([tup.values[0].upper()], anchors=[tup])
            self.ack(tup)

    Upper().run()
"""

import io
import json
import os
import sys
import traceback
from collections import deque

LOG_TRACE, LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR = range(5)

HEARTBEAT_STREAM = "__heartbeat"
TICK_COMPONENT = "__system"
TICK_STREAM = "__tick"


class ParentGone(Exception):
    """The parent process closed our stdin."""


class Tuple:
    __slots__ = ("id", "component", "stream", "task", "values")

    def __init__(self, id, component, stream, task, values):
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values

    def __repr__(self):
        return (
            f"Tuple(id={self.id!r}, component={self.component!r}, stream={self.stream!r},"
            f" task={self.task!r}, values={self.values!r})"
        )

    @property
    def is_heartbeat(self):
        return self.task == -1 and self.stream == HEARTBEAT_STREAM

    @property
    def is_tick(self):
        return self.component == TICK_COMPONENT and self.stream == TICK_STREAM


class Connection:
    """Reads and writes protocol messages on a pair of text streams."""

    def __init__(self, infile, outfile):
        self.infile = infile
        self.outfile = outfile
        self.pending_commands = deque()
        self.pending_task_ids = deque()

    def read_message(self):
        lines = []
        while True:
            line = self.infile.readline()
            if not line:
                raise ParentGone()
            line = line.rstrip("\r\n")
            if line == "end":
                break
            lines.append(line)
        text = "\n".join(lines).strip()
        if not text:
            # Tolerate a stray "end" with nothing before it.
            return self.read_message()
        return json.loads(text)

    def send(self, message):
        self.outfile.write(json.dumps(message))
        self.outfile.write("\nend\n")
        self.outfile.flush()

    def next_command(self):
        """The next object message; task id arrays met on the way are queued."""
        if self.pending_commands:
            return self.pending_commands.popleft()
        while True:
            message = self.read_message()
            if isinstance(message, list):
                self.pending_task_ids.append(message)
            else:
                return message

    def next_task_ids(self):
        """The next task id array; object messages met on the way are queued."""
        if self.pending_task_ids:
            return self.pending_task_ids.popleft()
        while True:
            message = self.read_message()
            if isinstance(message, list):
                return message
            self.pending_commands.append(message)


class Component:
    def __init__(self, infile=None, outfile=None):
        # By default talk over stdin/stdout, as UTF-8 whatever the locale says.
        self.uses_stdout = outfile is None
        if infile is None:
            infile = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
        if outfile is None:
            outfile = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
        self.connection = Connection(infile, outfile)
        self.conf = {}
        self.context = {}
        self.task_id = None
        self.component_name = None

    def handshake(self):
        setup = self.connection.next_command()
        pid = os.getpid()
        open(os.path.join(setup["pidDir"], str(pid)), "w").close()
        self.connection.send({"pid": pid})
        self.conf = setup.get("conf") or {}
        self.context = setup.get("context") or {}
        self.task_id = self.context.get("taskid")
        self.component_name = self.context.get("componentid")
        return self.conf, self.context

    def log(self, msg, level=LOG_INFO):
        self.connection.send({"command": "log", "msg": str(msg), "level": level})

    def sync(self):
        self.connection.send({"command": "sync"})


class Bolt(Component):
    """Subclass and implement ``process``; call ``run()`` to start."""

    def initialize(self, conf, context):
        pass

    def process(self, tup):
        raise NotImplementedError

    def process_tick(self, tup):
        self.ack(tup)

    def emit(self, values, anchors=None, stream=None, direct_task=None, need_task_ids=False):
        """Emit a tuple. Returns the receiving task ids if ``need_task_ids``."""
        message = {
            "command": "emit",
            "anchors": [a.id if isinstance(a, Tuple) else a for a in (anchors or [])],
            "tuple": list(values),
        }
        if stream is not None:
            message["stream"] = stream
        if direct_task is not None:
            message["task"] = direct_task
        message["need_task_ids"] = bool(need_task_ids)
        self.connection.send(message)
        if need_task_ids:
            if direct_task is not None:
                return [direct_task]
            return self.connection.next_task_ids()
        return None

    def ack(self, tup):
        self.connection.send({"command": "ack", "id": tup.id if isinstance(tup, Tuple) else tup})

    def fail(self, tup):
        self.connection.send({"command": "fail", "id": tup.id if isinstance(tup, Tuple) else tup})

    def read_tuple(self):
        message = self.connection.next_command()
        return Tuple(
            message["id"],
            message.get("comp"),
            message.get("stream"),
            message.get("task"),
            message.get("tuple", []),
        )

    def run(self):
        # Anything printed by user code must not reach the protocol channel.
        if self.uses_stdout:
            sys.stdout = sys.stderr
        try:
            conf, context = self.handshake()
            self.initialize(conf, context)
            while True:
                tup = self.read_tuple()
                if tup.is_heartbeat:
                    self.sync()
                elif tup.is_tick:
                    self.process_tick(tup)
                else:
                    self.process(tup)
        except ParentGone:
            return
        except Exception:
            try:
                self.log(traceback.format_exc(), LOG_ERROR)
            finally:
                raise
