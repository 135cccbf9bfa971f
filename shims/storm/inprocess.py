"""Hosting a pystorm (or streamparse) component in the task's process.

pystorm's own `run()` loop runs unchanged in the main thread. Only its serializer is
replaced: instead of JSON lines on stdin and stdout, messages are Python objects handed
to and taken from the StormPeer, which pulls the next tuple or command from the runtime
when pystorm asks for its next message. Auto-ack, auto-anchor, auto-fail, batching,
ticks and ReliableSpout's replays are therefore pystorm's own code.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
from typing import Any

from pystorm.exceptions import StormWentAwayError
from pystorm.serializers.serializer import Serializer

from heronbridge.runtime.api import LoopOwner
from heronbridge.runtime.plan.logical import resolve_import_path

from . import ShimError, keys
from .peer import StormPeer

# pystorm's exit code when Storm goes away; after an orderly stop the task exits 0.
STORM_WENT_AWAY = 2


class Bridge(Serializer):
    """A pystorm serializer that exchanges messages with the StormPeer in-process."""

    def __init__(self, peer: StormPeer, host: Any, reader_lock: Any, writer_lock: Any) -> None:
        super().__init__(None, None, reader_lock, writer_lock)
        self.peer = peer
        self.host = host
        self.pending: list[dict] = []  # the handshake, before the runtime's first event
        self.main = threading.main_thread()

    def read_message(self) -> Any:
        peer, host = self.peer, self.host
        if peer.replies:
            return peer.replies.popleft()
        if self.pending:
            return self.pending.pop(0)
        if host.is_spout:
            event = host.next_command()
            if event is None:
                raise StormWentAwayError
            return peer.command_message(*event)
        tup = host.next_tuple()
        if tup is None:
            raise StormWentAwayError
        return peer.tuple_message(tup)

    def send_message(self, msg_dict: dict) -> None:
        with self._writer_lock, self.host.lock:
            self.peer.receive(msg_dict)
        if threading.current_thread() is not self.main:
            self.host.wake()  # e.g. TicklessBatchingBolt's batcher thread emitted


class PystormComponent(LoopOwner):
    """The runtime component that hosts one pystorm Spout or Bolt class."""

    def run(self, host: Any) -> None:
        conf = host.config
        class_path = conf.get(keys.CLASS)
        resources = conf.get(keys.RESOURCES)
        if resources:
            os.chdir(resources)  # Storm runs a component in its resources folder
            if resources not in sys.path:
                sys.path.insert(0, resources)
        _keep_runtime_logs_apart()
        try:
            cls = resolve_import_path(class_path.replace(":", ".") if class_path else "")
        except Exception as exc:
            msg = (f"{host.component!r} (task {host.task}): cannot load class "
                   f"{class_path!r}: {type(exc).__name__}: {exc}")
            raise ShimError(msg) from exc
        peer = StormPeer(host)
        # pystorm builds its own serializer around the streams it is given; it is replaced
        # before anything is read or written.
        component = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(),
                        serializer="json")
        bridge = Bridge(peer, host, component._reader_lock, component._writer_lock)
        component.serializer = bridge
        pid_dir = os.path.join(os.getcwd(), ".pids")
        os.makedirs(pid_dir, exist_ok=True)
        bridge.pending.append(peer.handshake(pid_dir))

        def leave(code: int) -> None:
            host.exit(0 if code == STORM_WENT_AWAY and host.stopping else code)

        component._exit = leave  # pystorm's exits go through the host, which flushes first
        component.run()


def _keep_runtime_logs_apart() -> None:
    """pystorm sends every record reaching the root logger to Storm (here: to the peer,
    which logs it). The runtime's own records must not take that loop, so its handlers
    move from the root logger to the `heronbridge` logger."""
    root = logging.getLogger()
    ours = logging.getLogger("heronbridge")
    for handler in list(root.handlers):
        root.removeHandler(handler)
        ours.addHandler(handler)
    ours.propagate = False
    if ours.level == logging.NOTSET:
        ours.setLevel(logging.INFO)
