"""`heronbridge update` on the Spark scheduler: the durable word count, submitted to a
Spark standalone cluster with its state on ZooKeeper, goes from 2 to 4 counting tasks
and back through the command line while lines flow; no line is lost, every word
occurrence is counted, and the spouts' pause is printed."""

from __future__ import annotations

import re
import time

import pytest
from test_spark import DURABLE, WORD, cli
from testkit import read_jsonl, wait_until

from heronbridge.runtime import control
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.codec import topology_from_proto
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import TOPOLOGIES

pytestmark = [pytest.mark.cluster, pytest.mark.integration]
PAUSED = re.compile(r"spouts paused (\d+\.\d+)s")


@pytest.mark.compat("cli/heronbridge update", on="spark")
def test_durable_word_count_rescaled_on_spark(spark, zookeeper, tmp_path, capsys):
    lines = (DURABLE / "src" / "data" / "log.txt").read_text().splitlines()
    expected = {(n, i) for n, line in enumerate(lines)
                for i, _ in enumerate(WORD.findall(line.lower()))}
    out, offsets = tmp_path / "out", tmp_path / "offsets"
    uri = zookeeper.uri("durable-update")
    home = Home(tmp_path / "home", uri)
    common = ["--state", uri, "--home", home.root]
    cli(tmp_path, "submit", "--project", DURABLE, "-e", "prod", "--containers", 2,
        "--scheduler", "spark", "--spark-master", spark.master, *common,
        "-o", f"durable.offsets={offsets}", "-o", f"example.output.dir={out}",
        "-o", "topology.max.spout.pending=10", "--health", "off")
    state = home.open_statemgr()
    try:
        def acks() -> set[int]:
            return {r["id"] for rs in read_jsonl(out, "log-*.jsonl").values() for r in rs
                    if r["event"] == "ack"}

        def on_timeout() -> str:
            return tasks_now() + spark.logs("work-*/**/container-*/**/*.log", tail=3000)

        def tasks_now() -> str:
            """Each task's counters and gauges as the master has them: where trees stop."""
            try:
                report = control.metrics(state, "durable")
            except Exception as exc:  # noqa: BLE001 - a diagnosis must not hide the failure
                return f"(no metrics: {exc})\n"
            return "".join(f"task {t.task_id} ({t.component}, incarnation {t.incarnation}): "
                           f"{dict(t.counters)} {dict(t.gauges)}\n" for t in report.tasks)

        def counts() -> tuple[int, ...]:
            plan = topology_from_proto(state.get(TOPOLOGIES, "durable"))
            return TaskLayout.of(plan).component_tasks["count"]

        wait_until(lambda: len(acks()) >= 200, 90, "the first lines acked",
                   on_timeout=on_timeout)
        paused = []
        for n, more in ((4, 200), (2, 0)):
            said = cli(tmp_path, "update", "durable", "--component-parallelism",
                       f"count:{n}", *common)
            paused.append(float(PAUSED.search(said).group(1)))
            assert len(counts()) == n
            seen = len(acks())
            if more:
                wait_until(lambda seen=seen, more=more: len(acks()) >= seen + more, 90,
                           "lines acked after the update", on_timeout=on_timeout)

        def done() -> bool:
            counted = {(r["offset"], r["position"])
                       for rs in read_jsonl(out, "count-*.jsonl").values() for r in rs}
            return expected <= counted and \
                (offsets / "log-0.offset").read_text() == str(len(lines))

        began = time.monotonic()
        wait_until(done, 240, "every word counted and the offset at the end", interval=1.0,
                   on_timeout=on_timeout)
        assert acks() == set(range(len(lines)))
        with capsys.disabled():
            print(f"\ndurable word count on Spark: count 2 -> 4 paused the spouts "
                  f"{paused[0]:.2f}s, 4 -> 2 {paused[1]:.2f}s; the rest of the log took "
                  f"{time.monotonic() - began:.1f}s")
        cli(tmp_path, "kill", "durable", *common)
    finally:
        state.close()
