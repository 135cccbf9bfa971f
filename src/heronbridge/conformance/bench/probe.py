"""The probe: a message hook that measures one task, identical on Storm and the runtime.

It sits where the tracing hook sits (the runtime's in-process `heronbridge.storm.hook`;
on Storm, inside the component's own process, see `probe_run`), so both systems pay a
few dict lookups per message. On the runtime's lean host (shims/storm/lean.py), which
has no messages, the host calls the same counts directly (`tuple_in`, `emitted`,
`acked`, `failed`, `next_allowed`). Every `INTERVAL` it appends one JSON line to
`<dir>/<component>-<task>-<pid>.jsonl`: input tuples, emits, acks, fails and the
latency histogram of the acks in that interval. A spout is paced when `<dir>/rate`
holds a number (tuples/s for the whole component): a `next` that comes early is answered
with `sync` at once, as a spout with nothing to emit answers, so each system idles its
spout its own way (Storm's wait strategy, the runtime's poll).
"""

from __future__ import annotations

import atexit
import json
import os
import time
from pathlib import Path
from typing import Any

from heronbridge.runtime.telemetry import Histogram

from . import BenchError

DIR_OPTION = "heronbridge.bench.dir"
RATE_FILE = "rate"  # in the bench dir: the offered load, tuples/s per spout component
HOOK_PATH = "heronbridge.conformance.bench.probe:Probe"
INTERVAL = 0.25  # seconds between lines
HEARTBEAT_STREAM = "__heartbeat"
SYSTEM = "__system"
NOTHING: list[Any] = []  # never changed: what goes back, mostly
SYNC = [{"command": "sync"}]
monotonic = time.monotonic


class Probe:
    """A `MessageHook`: `down` sees what Storm's side sends the component, `up` the reverse."""

    def __init__(self, conf: dict[str, Any] | None = None) -> None:
        self.conf = dict(conf or {})
        self.started = False
        self.dir: Path | None = None
        self.component = ""
        self.task = 0
        self.spout_tasks = 1
        self.is_spout = False
        self.sent: dict[Any, float] = {}  # spout msg id -> when it was emitted
        self.rate: float | None = None  # this task's share of the offered load
        self.paced_from = 0.0
        self.paced_emits = 0
        self.file: Any = None
        self._zero()
        self.next_line = 0.0  # set by the handshake, the first message
        self.next_rate_check = 0.0

    def _zero(self) -> None:
        self.inputs = self.emits = self.acks = self.fails = 0
        self.latency = Histogram()

    # -- MessageHook --------------------------------------------------------------------

    def down(self, msg: Any) -> tuple[list[Any], list[Any]]:
        if not self.started:
            self.started = True
            self._handshake(msg)
            return [msg], NOTHING
        if type(msg) is dict:
            command = msg.get("command")
            if command is None:  # a tuple: heartbeats and ticks come from __system
                self.tuple_in(msg.get("comp"), msg.get("stream"))
            elif command == "next":
                if not self.next_allowed():
                    return NOTHING, SYNC
            elif command == "ack":
                self.acked(msg.get("id"))
            elif command == "fail":
                self.failed(msg.get("id"))
            else:
                self._tick()
        else:
            self._tick()
        return [msg], NOTHING

    def up(self, msg: Any) -> list[Any]:
        if msg.get("command") == "emit":  # pystorm sends dicts only
            self.emitted(msg.get("id"))
        return [msg]

    # -- the same counts, called directly by the runtime's lean host ---------------------

    def _tick(self) -> float:
        now = monotonic()
        if now >= self.next_line:
            self._line(now)
        return now

    def tuple_in(self, component: str, stream: str) -> None:
        self._tick()
        if component != SYSTEM and stream != HEARTBEAT_STREAM:
            self.inputs += 1

    def next_allowed(self) -> bool:
        now = self._tick()
        return self.rate is None or not self._early(now)

    def emitted(self, msg_id: Any) -> None:
        self.emits += 1
        if self.is_spout:
            self.paced_emits += 1
            if msg_id is not None:
                self.sent[_key(msg_id)] = monotonic()

    def acked(self, msg_id: Any) -> None:
        now = self._tick()
        self.acks += 1
        began = self.sent.pop(_key(msg_id), None)
        if began is not None:
            self.latency.add(now - began)

    def failed(self, msg_id: Any) -> None:
        self._tick()
        self.fails += 1
        self.sent.pop(_key(msg_id), None)

    def close(self) -> None:
        if self.file is not None:
            self._line(time.monotonic())
            self.file.close()
            self.file = None

    # -- inside -------------------------------------------------------------------------

    def _handshake(self, msg: Any) -> None:
        conf, context = msg.get("conf") or {}, msg.get("context") or {}
        self.component = str(context.get("componentid"))
        self.task = int(context.get("taskid", 0))
        tasks = [t for t, c in (context.get("task->component") or {}).items()
                 if c == self.component]
        self.spout_tasks = max(1, len(tasks))
        sources = context.get("source->stream->grouping") or {}
        self.is_spout = not any(not str(s).startswith("__") for s in sources)
        where = conf.get(DIR_OPTION) or self.conf.get(DIR_OPTION)
        if not where:
            msg = (f"component {self.component!r}, task {self.task}: the bench probe "
                   f"expected option {DIR_OPTION!r} naming its folder, received none")
            raise BenchError(msg)
        self.dir = Path(where)
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"{self.component}-{self.task}-{os.getpid()}.jsonl"
        self.file = path.open("a", buffering=1, encoding="utf-8")
        atexit.register(self.close)
        self.next_line = monotonic() + INTERVAL
        self._write({"t": time.time(), "start": True, "component": self.component,
                     "task": self.task, "spout": self.is_spout})

    def _early(self, now: float) -> bool:
        return self.paced_emits >= (now - self.paced_from) * self.rate

    def _line(self, now: float) -> None:
        self.next_line = now + INTERVAL
        line: dict[str, Any] = {"t": time.time(), "in": self.inputs, "emit": self.emits,
                                "ack": self.acks, "fail": self.fails}
        if self.latency.total:
            counts = self.latency.counts
            last = max(i for i, c in enumerate(counts) if c)
            line["lat"] = counts[:last + 1]
        self._write(line)
        self._zero()
        if self.is_spout and now >= self.next_rate_check:
            self.next_rate_check = now + 1.0
            self._read_rate(now)

    def _read_rate(self, now: float) -> None:
        try:
            text = (self.dir / RATE_FILE).read_text().strip()
        except OSError:
            text = ""
        rate = float(text) / self.spout_tasks if text else None
        if rate != self.rate:
            self.rate, self.paced_from, self.paced_emits = rate, now, 0

    def _write(self, record: dict[str, Any]) -> None:
        if self.file is not None:
            self.file.write(json.dumps(record, separators=(",", ":")) + "\n")


def _key(msg_id: Any) -> Any:
    """A msg id as a dict key: JSON round trips keep ints and strings, not lists."""
    kind = type(msg_id)
    return msg_id if kind is int or kind is str else json.dumps(msg_id, sort_keys=True)
