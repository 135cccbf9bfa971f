"""The Spark session the analysis runs on.

Starting Spark costs about ten seconds, so a caller that analyses several runs makes one
session with `session()` and passes it to each `analyse`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from pyspark.sql import SparkSession

LOCAL = "local[*]"
LOCAL_MEMORY = "4g"
APP_NAME = "heronbridge-conformance"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


def session(master: str | None = None) -> SparkSession:
    """A session on `master` (embedded `local[*]` by default): no UI, few shuffle
    partitions (the traces are small), quiet logs."""
    master = master or LOCAL
    builder = (SparkSession.builder.master(master).appName(APP_NAME)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               # The Python workers that turn trace blocks into Parquet import this
               # package: not a folder of the same name in the JVM's working directory.
               .config("spark.executorEnv.PYTHONSAFEPATH", "1")
               .config("spark.log.level", "ERROR")
               # Recording the Python call site of every column expression costs
               # JVM round trips that outweigh the analysis of a small trace set.
               .config("spark.python.sql.dataFrameDebugging.enabled", "false"))
    if master.startswith("local"):
        # An embedded driver serves nobody else: keep its ports on loopback (the
        # variable also spares the warning about the host name), and its log quiet.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Its Python workers convert the traces: this interpreter has what they need.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (builder.config("spark.driver.host", "127.0.0.1")
                   # The driver is the executor: room to keep a large trace set cached.
                   .config("spark.driver.memory", LOCAL_MEMORY)
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.extraJavaOptions",
                           f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"))

    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def using(spark: SparkSession | None, master: str | None) -> Iterator[SparkSession]:
    """`spark` if given; else a session on `master`, stopped afterwards if this made it."""
    if spark is not None:
        yield spark
        return
    existing = SparkSession.getActiveSession()
    made = session(master)
    try:
        yield made
    finally:
        if existing is None:
            made.stop()


@contextlib.contextmanager
def tuned(spark: SparkSession, partitions: int, small: bool = False) -> Iterator[int]:
    """SQL settings for the analysis's size while it runs, restored afterwards. On a
    `small` trace set every query is new and runs once over a few thousand rows, so
    compiling it to Java and re-planning each shuffle cost more than they save."""
    wanted = {"spark.sql.adaptive.enabled": "false",
              "spark.sql.shuffle.partitions": str(partitions),
              # The records are cached for the checks: compressing them took five times
              # as long as the checks then saved reading them.
              "spark.sql.inMemoryColumnarStorage.compressed": "false"}
    if small:
        wanted |= {"spark.sql.codegen.wholeStage": "false",
                   "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    before = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, value)
    try:
        yield partitions
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
