"""The trace files of both systems as one cached Spark DataFrame, and each system's tasks.

Values and msg ids stay the hook's canonical JSON text, so that equal values compare
equal as strings. Records are ordered within a task by `ord`: (the time of the first record in the
record's file, its seq), since a restarted task writes a new file and seq restarts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from ..trace import schema

CORRUPT = "_corrupt_record"
BYTES_PER_PARTITION = 64 << 20

RECORD = StructType([
    StructField("t", DoubleType()),
    StructField("seq", LongType()),
    StructField("ev", StringType()),
    StructField("component", StringType()),
    StructField("task", LongType()),
    StructField("pid", LongType()),
    StructField("tasks", MapType(StringType(), ArrayType(LongType()))),
    StructField("id", StringType()),
    StructField("src", StringType()),
    StructField("stream", StringType()),
    StructField("src_task", LongType()),
    StructField("values", StringType()),
    StructField("anchors", ArrayType(StringType())),
    StructField("direct", LongType()),
    StructField("msg_id", StringType()),
    StructField("targets", ArrayType(LongType())),
    StructField("injected", BooleanType()),
    StructField("msg", StringType()),
    StructField("reason", StringType()),
    StructField(CORRUPT, StringType()),
])


@dataclass
class Traces:
    records: DataFrame  # the readable records: RECORD's fields plus system, file, ord
    cached: DataFrame  # every line as read, kept in memory while the checks run
    systems: tuple[str, ...]  # the systems that left trace files
    tasks: dict[str, dict[str, list[int]]]  # system -> component -> sorted task ids
    unreadable: dict[str, int]  # system -> lines that are not a record
    span: dict[str, tuple[float, float]]  # system -> (first, last) record time

    def unpersist(self) -> None:
        self.cached.unpersist()


def files(run_dir: Path, system: str) -> list[Path]:
    return sorted((Path(run_dir) / system / schema.TRACES).glob("*.jsonl"))


def partitions(paths: list[Path]) -> int:
    """Partitions for this much trace data: one per BYTES_PER_PARTITION. Runs are small,
    and on Spark each partition and shuffle costs more than the work it would share."""
    size = sum(p.stat().st_size for p in paths)
    return max(1, -(-size // BYTES_PER_PARTITION))


def load(spark: SparkSession, run_dir: Path, parts: int = 1) -> Traces:
    found = {system: files(run_dir, system) for system in schema.SYSTEMS}
    paths = [p for system in schema.SYSTEMS for p in found[system]]
    if paths:
        raw = (spark.read.schema(RECORD).option("mode", "PERMISSIVE")
               .option("columnNameOfCorruptRecord", CORRUPT).json([str(p) for p in paths])
               .withColumn("file", F.col("_metadata.file_path")))
    else:
        raw = spark.createDataFrame([], RECORD).withColumn("file", F.lit(None).cast("string"))
    # Spark names files by URI: match them on their last three parts, decoded.
    tail = f"(({'|'.join(schema.SYSTEMS)})/{schema.TRACES}/[^/]*)$"
    began = F.from_json(F.lit(json.dumps({"/".join(p.parts[-3:]): _began(p) for p in paths})),
                        "map<string,double>")
    records = (raw.withColumn("file", F.url_decode("file"))
               .withColumn("system", F.regexp_extract("file", tail, 2))
               .withColumn("ord", F.struct(
                   F.coalesce(F.try_element_at(began, F.regexp_extract("file", tail, 1)),
                              F.lit(0.0)).alias("file_t"),
                   F.col("seq").alias("seq")))
               .coalesce(parts)
               .cache())
    # One small collect: per task, its times and unreadable lines, and the tasks each
    # handshake named (a task's component mates, with those that never wrote a record).
    named = (records.filter(F.col("ev") == schema.START)
             .select("system", F.explode("tasks").alias("component", "ids"))
             .select("system", "component", F.explode("ids").alias("task")))
    per_task = records.groupBy("system", "component", "task").agg(
        F.count_if(F.col(CORRUPT).isNotNull() | F.col("ev").isNull()).alias("bad"),
        F.min("t").alias("first"), F.max("t").alias("last"))
    rows = per_task.unionByName(named, allowMissingColumns=True).collect()
    tasks: dict[str, dict[str, set[int]]] = {}
    unreadable: dict[str, int] = {}
    span: dict[str, tuple[float, float]] = {}
    for row in rows:
        system = row["system"]
        if row["bad"]:
            unreadable[system] = unreadable.get(system, 0) + row["bad"]
        if row["first"] is not None:
            first, last = span.get(system, (row["first"], row["last"]))
            span[system] = (min(first, row["first"]), max(last, row["last"]))
        if row["task"] is not None and row["component"] is not None and \
                row["component"] != schema.SYSTEM_COMPONENT:
            comps = tasks.setdefault(system, {})
            comps.setdefault(row["component"], set()).add(row["task"])
    return Traces(
        records=records.filter(F.col(CORRUPT).isNull() & F.col("ev").isNotNull()),
        cached=records,
        systems=tuple(s for s in schema.SYSTEMS if found[s]),
        tasks={s: {c: sorted(ids) for c, ids in comps.items()} for s, comps in tasks.items()},
        unreadable=unreadable,
        span=span,
    )


def _began(path: Path) -> float:
    """The time of a file's first record: orders a restarted task's files."""
    with path.open("rb") as lines:
        for line in lines:
            try:
                return float(json.loads(line)["t"])
            except (ValueError, KeyError, TypeError):
                continue
    return 0.0


def inputs(records: DataFrame) -> DataFrame:
    """Bolt input tuples: recv records without ticks."""
    return records.filter((F.col("ev") == schema.RECV) & ~is_tick())


def is_tick() -> Column:
    return ((F.col("src") == schema.SYSTEM_COMPONENT) | (F.col("stream") == schema.TICK_STREAM))
