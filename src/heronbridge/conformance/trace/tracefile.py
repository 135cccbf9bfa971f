"""The trace file format: msgpack records in length-prefixed blocks.

A task's hook buffers its records and writes them a block at a time, so that tracing
costs a tuple an append to a list, not a write, and the files stay small:

    file   = MAGIC, frame(file head, no body), frame(block head, block body)...
    frame  = u32 head length, u32 body length (little-endian), head, body

The file head (a msgpack map) names the task: `component`, `task`, `pid`, `t` (when
the file was opened), `spout`, `topology` and `tasks` ({component: [task ids]} from
the handshake). A block's head sums up the task so far, so that progress is read from
the heads alone: see `Head`. A block's body is a msgpack array of records, each an
array laid out as `FIELDS` (trailing nulls left out), where `ev` is an index into
`EVENTS`. A record's position in its file is its `seq`.

`key` holds the tuple id of recv/ack/fail/drop and the msg id (canonical JSON text) of
emit/spout_ack/spout_fail; `read` gives records back as the dicts `schema` documents.
A process killed mid-write leaves a last frame shorter than it says: readers stop there
and count the bytes as unreadable.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from . import schema

MAGIC = b"HBTRACE1"
FRAME = struct.Struct("<II")
SUFFIX = ".trace"

FIELDS = ("t", "ev", "key", "stream", "values", "src", "src_task", "anchors", "direct",
          "targets", "text", "extra")
T, EV, KEY, STREAM, VALUES, SRC, SRC_TASK, ANCHORS, DIRECT, TARGETS, TEXT, EXTRA = range(
    len(FIELDS))
# Events by code; a fail the hook injected has a code of its own.
INJECTED_FAIL = "fail!"
EVENTS = (schema.START, schema.RECV, schema.EMIT, schema.ACK, schema.FAIL, INJECTED_FAIL,
          schema.SPOUT_ACK, schema.SPOUT_FAIL, schema.ACTIVATE, schema.DEACTIVATE,
          schema.ERROR, schema.DROP, schema.EXIT, schema.STOP)
CODE = {ev: i for i, ev in enumerate(EVENTS)}
MSG_ID_EVENTS = (schema.EMIT, schema.SPOUT_ACK, schema.SPOUT_FAIL)  # key is a msg id
TEXT_FIELD = {schema.ERROR: "msg", schema.EXIT: "reason", schema.STOP: "reason"}

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


@dataclass
class Head:
    """A block's head: the task so far, as of this block's last record."""

    n: int = 0  # records in this block
    seq: int = 0  # the first one's position in the file
    t1: float = 0.0  # the last one's time
    active: float | None = None  # the time of the latest record that is activity
    totals: dict[str, int] = field(default_factory=dict)  # records per event, so far
    pending: int = 0  # a spout's msg ids emitted and not yet called back
    pending_ids: list[str] = field(default_factory=list)  # a few of them
    first_emit: float | None = None
    last_emit: float | None = None
    emitted: int = 0  # a spout's emits from next_tuple (replays left out)
    stopped: dict[str, Any] | None = None  # {"emits", "reason"} once a bound stopped it


@dataclass
class Frame:
    offset: int  # where the frame starts in the file
    head: dict[str, Any]
    body_offset: int
    body_length: int

    @property
    def end(self) -> int:
        return self.body_offset + self.body_length


class Writer:
    """One task process's trace file; each `block` is written with one write call."""

    def __init__(self, path: Path, head: dict[str, Any]) -> None:
        self.path = Path(path)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND,
                          0o600)
        self.bytes = 0
        self._write(MAGIC + _frame(head, b""))

    def block(self, head: dict[str, Any], rows: list[Any]) -> None:
        """`head`: `Head`'s fields; `rows`: records laid out as `FIELDS`."""
        self._write(_frame(head, _encode(rows)))

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        self.bytes += len(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _frame(head: dict[str, Any], body: bytes) -> bytes:
    data = _encode(head)
    return FRAME.pack(len(data), len(body)) + data + body


def file_name(component: str, task: int, pid: int) -> str:
    return f"{component}-{task}-{pid}{SUFFIX}"


def files(folder: Path) -> list[Path]:
    return sorted(Path(folder).glob(f"*{SUFFIX}"))


class Scan:
    """The frames of one file read so far; `more()` reads what was appended since,
    heads only (bodies are skipped), up to the last complete frame."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.offset = 0  # after the last complete frame read
        self.file: dict[str, Any] | None = None
        self.last: Head | None = None  # the newest block head
        self.blocks: list[Frame] = []
        self.bad = False  # not a trace file, or a frame that does not decode
        self.size = 0

    def more(self, keep: bool = False) -> list[Frame]:
        """New block frames (kept in `blocks` too with `keep`)."""
        found: list[Frame] = []
        try:
            with self.path.open("rb") as f:
                self.size = os.fstat(f.fileno()).st_size
                if self.offset == 0:
                    if f.read(len(MAGIC)) != MAGIC:
                        self.bad = self.size >= len(MAGIC)
                        return found
                    self.offset = len(MAGIC)
                f.seek(self.offset)
                while not self.bad:
                    frame = _next_frame(f, self.offset, self.size)
                    if frame is None:
                        break
                    if frame.head is None:
                        self.bad = True
                        break
                    self.offset = frame.end
                    if self.file is None:
                        self.file = frame.head
                        continue
                    found.append(frame)
        except OSError:
            return found
        if found:
            self.last = _head(found[-1].head)
            if keep:
                self.blocks.extend(found)
        return found

    @property
    def unread(self) -> int:
        """Bytes after the last complete frame: a block being written, or cut short."""
        return max(0, self.size - self.offset)


def _next_frame(f: BinaryIO, offset: int, size: int) -> Frame | None:
    if offset + FRAME.size > size:
        return None
    head_length, body_length = FRAME.unpack(f.read(FRAME.size))
    body_offset = offset + FRAME.size + head_length
    if body_offset + body_length > size:
        return None
    try:
        head = _decode(f.read(head_length))
    except msgspec.DecodeError:
        head = None
    f.seek(body_length, os.SEEK_CUR)
    return Frame(offset, head, body_offset, body_length)


def _head(data: dict[str, Any]) -> Head:
    known = {k: v for k, v in data.items() if k in Head.__dataclass_fields__}
    return Head(**known)


def rows(path: Path, frame: Frame) -> list[list[Any]]:
    with Path(path).open("rb") as f:
        f.seek(frame.body_offset)
        return _decode(f.read(frame.body_length))


def decode_rows(data: bytes) -> list[list[Any]]:
    return _decode(data)


def read(path: Path) -> Iterator[dict[str, Any]]:
    """Every complete record of a trace file as `schema` documents it (with `seq`, the
    file's component and task); for tests and small files: the analysis reads blocks
    into Spark instead."""
    scan = Scan(path)
    frames = scan.more()
    if scan.file is None:
        return
    component, task = scan.file["component"], scan.file["task"]
    seq = 0
    with Path(path).open("rb") as f:
        for frame in frames:
            f.seek(frame.body_offset)
            for row in _decode(f.read(frame.body_length)):
                yield record(row, seq, component, task)
                seq += 1


def record(row: list[Any], seq: int, component: str, task: int) -> dict[str, Any]:
    """One record array as the dict `schema` documents."""
    row = list(row) + [None] * (len(FIELDS) - len(row))
    ev = EVENTS[row[EV]]
    out: dict[str, Any] = {"t": row[T], "seq": seq, "ev": ev, "component": component,
                           "task": task}
    if ev == INJECTED_FAIL:
        return {**out, "ev": schema.FAIL, "id": row[KEY], "injected": True}
    if ev in (schema.ACK, schema.FAIL):
        return {**out, "id": row[KEY], "injected": False}
    if ev in (schema.SPOUT_ACK, schema.SPOUT_FAIL):
        return {**out, "msg_id": _text(row[KEY])}
    if ev == schema.DROP:
        return {**out, "id": row[KEY]}
    if ev == schema.RECV:
        return {**out, "id": row[KEY], "src": row[SRC], "stream": row[STREAM],
                "src_task": row[SRC_TASK], "values": _text(row[VALUES])}
    if ev == schema.EMIT:
        return {**out, "stream": row[STREAM], "values": _text(row[VALUES]),
                "anchors": row[ANCHORS] or [], "direct": row[DIRECT],
                "msg_id": _text(row[KEY]), "targets": row[TARGETS]}
    if ev in TEXT_FIELD:
        return {**out, TEXT_FIELD[ev]: row[TEXT], **(row[EXTRA] or {})}
    return {**out, **(row[EXTRA] or {})}


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def row(record: dict[str, Any]) -> list[Any]:
    """A record dict (as `schema` documents it) as the array a block holds: the inverse
    of `record`, for writing traces other than through the hook (tests, benchmarks)."""
    ev = record["ev"]
    code = CODE[INJECTED_FAIL if ev == schema.FAIL and record.get("injected") else ev]
    out: list[Any] = [None] * len(FIELDS)
    out[T], out[EV] = record["t"], code
    out[KEY] = record.get("msg_id") if ev in MSG_ID_EVENTS else record.get("id")
    out[STREAM], out[VALUES] = record.get("stream"), record.get("values")
    out[SRC], out[SRC_TASK] = record.get("src"), record.get("src_task")
    out[ANCHORS], out[DIRECT] = record.get("anchors"), record.get("direct")
    out[TARGETS], out[TEXT] = record.get("targets"), record.get(TEXT_FIELD.get(ev, ""))
    extra = {k: record[k] for k in ("pid", "tasks", "emits") if k in record}
    out[EXTRA] = extra or None
    while out and out[-1] is None:
        out.pop()
    return out


def write_records(path: Path, head: dict[str, Any], records: list[dict[str, Any]],
                  block_rows: int = 4096) -> None:
    """A trace file of `records` (dicts as `schema` documents them) under the file head
    `head`, in blocks of `block_rows`, with heads as the hook writes them."""
    writer = Writer(path, head)
    totals: dict[str, int] = {}
    active = None
    for start in range(0, len(records), block_rows):
        block = records[start:start + block_rows]
        for r in block:
            totals[r["ev"]] = totals.get(r["ev"], 0) + 1
            active = r["t"] if active is None else max(active, r["t"])
        writer.block({"n": len(block), "seq": start, "t1": block[-1]["t"], "active": active,
                      "totals": dict(totals)}, [row(r) for r in block])
    writer.close()
