"""The trace files of both systems as one cached Spark DataFrame, and each system's tasks.

The driver reads only the files' heads (see `trace.tracefile`): the tasks, when each
file began, where each block lies, and what was cut short. The blocks themselves are
turned into Parquet by Spark's Python workers, a chunk of blocks each, in parallel
(`columns.convert`), and Spark reads the Parquet: no record passes through the driver.

Values and msg ids stay the hook's canonical JSON text, so that equal values compare
equal as strings. Records are ordered within a task by `ord`, made of the place of the
record's file among the task's files (a restarted task writes a new file, and seq
restarts) and its seq; `file` numbers the files.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..trace import schema, tracefile
from . import columns

CHUNK_BYTES = 16 << 20  # trace bytes per Parquet file (and conversion task)
BYTES_PER_PARTITION = 8 << 20  # some 200,000 records
COLUMNS = "columns"  # <run dir>/columns/: the Parquet files of the last analysis
# What the checks read (the Parquet files hold every field): kept in memory while they run.
USED = ("system", "file", "ord", "t", "ev", "component", "task", "id", "src", "stream",
        "src_task", "values", "direct", "msg_id")


@dataclass
class Traces:
    records: DataFrame  # columns.SCHEMA's USED fields
    systems: tuple[str, ...]  # the systems that left trace files
    tasks: dict[str, dict[str, list[int]]]  # system -> component -> sorted task ids
    unreadable: dict[str, int]  # system -> blocks that are cut short or do not decode
    span: dict[str, tuple[float, float]]  # system -> (first, last) record time
    # (system, component) -> records per event, from the block heads; None for a file
    # whose heads do not say
    counts: dict[tuple[str, str], dict[str, int] | None] = field(default_factory=dict)

    def count(self, ev: str, components: list[str]) -> int | None:
        """Records of event `ev` by `components` on both systems; None when a head of
        theirs does not say."""
        total = 0
        for (_, component), counts in self.counts.items():
            if component in components:
                if counts is None:
                    return None
                total += counts.get(ev, 0)
        return total

    def unpersist(self) -> None:
        self.records.unpersist()


def files(run_dir: Path, system: str) -> list[Path]:
    return tracefile.files(Path(run_dir) / system / schema.TRACES)


def size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def partitions(paths: list[Path], cores: int) -> int:
    """Partitions for this much trace data: one per BYTES_PER_PARTITION, at most four per
    core. Most runs are small, and on Spark each partition and shuffle costs more than
    the work it would share."""
    return max(1, min(4 * cores, -(-size(paths) // BYTES_PER_PARTITION)))


def load(spark: SparkSession, run_dir: Path, parts: int = 1) -> Traces:
    run_dir = Path(run_dir).resolve()
    out = run_dir / COLUMNS
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    found = {system: files(run_dir, system) for system in schema.SYSTEMS}
    chunks: list[columns.Chunk] = []
    tasks: dict[str, dict[str, set[int]]] = {}
    unreadable: dict[str, int] = {}
    span: dict[str, tuple[float, float]] = {}
    counts: dict[tuple[str, str], dict[str, int] | None] = {}
    scans = []
    for system, paths in found.items():
        for path in paths:
            scan = tracefile.Scan(path)
            scan.more(keep=True)
            if scan.bad or scan.unread or scan.file is None:
                unreadable[system] = unreadable.get(system, 0) + 1
            if scan.file is not None:
                scans.append((system, scan))
    # A task's files in the order they were opened: a restarted task writes a new one.
    scans.sort(key=lambda item: (item[0], str(item[1].file["component"]),
                                 int(item[1].file["task"]), float(item[1].file["t"])))
    ranks: dict[tuple[str, str, int], int] = {}
    for number, (system, scan) in enumerate(scans):
        head = scan.file
        task_key = (system, str(head["component"]), int(head["task"]))
        rank = ranks[task_key] = ranks.get(task_key, -1) + 1
        comps = tasks.setdefault(system, {})
        comps.setdefault(str(head["component"]), set()).add(int(head["task"]))
        for component, ids in (head.get("tasks") or {}).items():
            if component != schema.SYSTEM_COMPONENT:
                comps.setdefault(component, set()).update(ids)
        known = scan.last is not None and bool(scan.last.totals)
        key = (system, str(head["component"]))
        mine = counts.setdefault(key, {})
        if not known or mine is None:
            counts[key] = None
        else:
            for ev, n in scan.last.totals.items():
                mine[ev] = mine.get(ev, 0) + n
        if scan.blocks:
            first, last = span.get(system, (head["t"], scan.blocks[-1].head["t1"]))
            span[system] = (min(first, head["t"]), max(last, scan.blocks[-1].head["t1"]))
        chunks += _chunks(system, number, rank, scan, out)
    written = _convert(spark, chunks, unreadable)
    if written:
        raw = spark.read.schema(_spark_schema()).parquet(*written)
    else:
        raw = spark.createDataFrame([], _spark_schema())
    records = raw.select(*USED).coalesce(parts).cache()

    return Traces(
        records=records,
        systems=tuple(s for s in schema.SYSTEMS if found[s]),
        tasks={s: {c: sorted(ids) for c, ids in comps.items()} for s, comps in tasks.items()},
        unreadable=unreadable,
        span=span,
        counts=counts,
    )


def _chunks(system: str, number: int, rank: int, scan: tracefile.Scan,
            out: Path) -> list[columns.Chunk]:
    head = scan.file
    found, blocks, size = [], [], 0
    for frame in scan.blocks:
        blocks.append((frame.body_offset, frame.body_length, int(frame.head["seq"])))
        size += frame.body_length
        if size >= CHUNK_BYTES or frame is scan.blocks[-1]:
            target = out / f"{system}-{scan.path.stem}-{len(found)}.parquet"
            found.append(columns.Chunk(system, str(scan.path), number, rank,
                                       str(head["component"]), int(head["task"]),
                                       tuple(blocks), str(target)))
            blocks, size = [], 0
    return found


def _convert(spark: SparkSession, chunks: list[columns.Chunk],
             unreadable: dict[str, int]) -> list[str]:
    """Each chunk to Parquet in Spark's Python workers; the files written."""
    if not chunks:
        return []
    slices = min(len(chunks), max(1, spark.sparkContext.defaultParallelism))
    results = spark.sparkContext.parallelize(chunks, slices).map(columns.convert).collect()
    written = []
    for chunk, (path, n, bad) in zip(chunks, results, strict=True):
        if bad:
            unreadable[chunk.system] = unreadable.get(chunk.system, 0) + bad
        if n:
            written.append(path)
    return written


def _spark_schema() -> str:
    kinds = {"string": "string", "double": "double", "int64": "bigint", "int32": "int",
             "bool": "boolean",
             "list<item: string>": "array<string>", "list<item: int64>": "array<bigint>"}
    return ", ".join(f"`{f.name}` {kinds[str(f.type)]}" for f in columns.SCHEMA)


def inputs(records: DataFrame) -> DataFrame:
    """Bolt input tuples: recv records without ticks."""
    return records.filter((F.col("ev") == schema.RECV) & ~is_tick())


def is_tick() -> Column:
    return ((F.col("src") == schema.SYSTEM_COMPONENT) | (F.col("stream") == schema.TICK_STREAM))
