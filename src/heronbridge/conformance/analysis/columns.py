"""Trace blocks to Parquet, the columns Spark reads: one `Chunk` (consecutive blocks of
one trace file) becomes one Parquet file, decoded with msgspec and built column by
column with pyarrow, never a Python object per value for Spark to convert.

`convert` runs in Spark's Python workers (see `traces.load`), so that the chunks of a
large run are converted in parallel, by a cluster's executors as well as by the
embedded driver's cores; it needs only msgspec and pyarrow.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..trace import schema, tracefile
from ..trace.tracefile import (
    ANCHORS,
    CODE,
    DIRECT,
    EV,
    FIELDS,
    KEY,
    SRC,
    SRC_TASK,
    STREAM,
    TARGETS,
    TEXT,
    VALUES,
    T,
)

SCHEMA = pa.schema([
    ("system", pa.string()), ("file", pa.int32()), ("ord", pa.int64()),
    ("seq", pa.int64()), ("t", pa.float64()), ("ev", pa.string()),
    ("component", pa.string()), ("task", pa.int64()), ("id", pa.string()),
    ("src", pa.string()), ("stream", pa.string()), ("src_task", pa.int64()),
    ("values", pa.string()), ("anchors", pa.list_(pa.string())), ("direct", pa.int64()),
    ("msg_id", pa.string()), ("targets", pa.list_(pa.int64())), ("injected", pa.bool_()),
    ("text", pa.string()),
])
DICTIONARY = ("system", "ev", "component", "src", "stream")
# An injected fail is a fail with `injected` set.
NAMES = pa.array([schema.FAIL if e == tracefile.INJECTED_FAIL else e
                  for e in tracefile.EVENTS])
MSG_ID_CODES = pa.array([CODE[e] for e in tracefile.MSG_ID_EVENTS], pa.int8())
SETTLE_CODES = pa.array([CODE[schema.ACK], CODE[schema.FAIL], CODE[tracefile.INJECTED_FAIL]],
                        pa.int8())


ORD_SHIFT = 40  # ord = (the file's place among its task's files) << ORD_SHIFT | seq


@dataclass(frozen=True)
class Chunk:
    system: str
    path: str  # the trace file
    file: int  # its number among the run's trace files
    rank: int  # its place among its task's files (a restarted task writes a new one)
    component: str
    task: int
    blocks: tuple[tuple[int, int, int], ...]  # (body offset, body length, first seq)
    out: str  # the Parquet file to write


def convert(chunk: Chunk) -> tuple[str, int, int]:
    """Write `chunk.out`; (its path, records, blocks that did not decode)."""
    columns: list[list] = [[] for _ in FIELDS]
    seqs: list[int] = []
    bad = 0
    with Path(chunk.path).open("rb") as f:
        for offset, length, first in chunk.blocks:
            f.seek(offset)
            try:
                rows = tracefile.decode_rows(f.read(length))
            except msgspec.DecodeError:
                bad += 1
                continue
            for column, values in zip(columns, itertools.zip_longest(
                    *rows, fillvalue=None), strict=False):
                column.extend(values)
            n = len(rows)
            for column in columns[max(map(len, rows), default=0):]:
                column.extend([None] * n)  # fields no record of this block has
            seqs.extend(range(first, first + n))
    table = _table(chunk, columns, seqs)
    # Dictionaries only where few values repeat: building them for ids and values costs
    # more than it saves, in time and in space.
    pq.write_table(table, chunk.out, use_dictionary=list(DICTIONARY))
    return chunk.out, table.num_rows, bad


def _table(chunk: Chunk, columns: list[list], seqs: list[int]) -> pa.Table:
    n = len(seqs)
    codes = pa.array(columns[EV], pa.int8())
    key = pa.array(columns[KEY], pa.string())
    by_msg_id = pc.is_in(codes, value_set=MSG_ID_CODES)
    settles = pc.is_in(codes, value_set=SETTLE_CODES)
    none = pa.scalar(None, pa.string())
    seq = pa.array(seqs, pa.int64())
    arrays = {
        "system": pa.repeat(chunk.system, n), "file": pa.repeat(chunk.file, n),
        "ord": pc.add(seq, chunk.rank << ORD_SHIFT), "seq": seq,
        "t": pa.array(columns[T], pa.float64()), "ev": NAMES.take(codes),
        "component": pa.repeat(chunk.component, n), "task": pa.repeat(chunk.task, n),
        "id": pc.if_else(by_msg_id, none, key),
        "src": pa.array(columns[SRC], pa.string()),
        "stream": pa.array(columns[STREAM], pa.string()),
        "src_task": pa.array(columns[SRC_TASK], pa.int64()),
        "values": pa.array(columns[VALUES], pa.string()),
        "anchors": pa.array(columns[ANCHORS], pa.list_(pa.string())),
        "direct": pa.array(columns[DIRECT], pa.int64()),
        "msg_id": pc.if_else(by_msg_id, key, none),
        "targets": pa.array(columns[TARGETS], pa.list_(pa.int64())),
        "injected": pc.if_else(settles, pc.equal(codes, CODE[tracefile.INJECTED_FAIL]),
                               pa.scalar(None, pa.bool_())),
        "text": pa.array(columns[TEXT], pa.string()),
    }
    return pa.table([arrays[f.name].cast(f.type) for f in SCHEMA], schema=SCHEMA)
