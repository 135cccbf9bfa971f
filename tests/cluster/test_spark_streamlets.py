"""Every operator of heronpy's Streamlet API on the Spark standalone cluster, through
`heronbridge run --scheduler spark`: one topology whose branches chain the operators, each
branch's output checked against what it should produce (worked out here by hand), then
the run stopped with Ctrl-C as a user stops it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.integration]

OPERATORS = ("map", "flat_map", "filter", "repartition", "clone", "union", "transform",
             "log", "consume", "reduce_by_window", "reduce_by_key_and_window", "join",
             "outer_left_join", "outer_right_join", "outer_join", "set_name", "get_name",
             "set_num_partitions", "get_num_partitions")
N = 30  # numbers 1..N
ROUNDS = 12  # the join sides' rounds, a quarter of a second apart

TOPOLOGY = textwrap.dedent("""
    import datetime, functools, json, logging, sys, time

    from heronpy.streamlet.builder import Builder
    from heronpy.streamlet.config import Config
    from heronpy.streamlet.generator import Generator
    from heronpy.streamlet.runner import Runner
    from heronpy.streamlet.transformoperator import TransformOperator
    from heronpy.streamlet.windowconfig import WindowConfig

    OUT = @OUT@
    LEFT, RIGHT = [("a", 1), ("b", 2), ("a", 3)], [("a", "x"), ("c", "y")]


    def write(branch, value):
        with open(f"{OUT}/{branch}.jsonl", "a") as f:
            f.write(json.dumps(value) + "\\n")


    def write_window(branch, element):
        keyed, result = element
        window = keyed._window
        write(branch, [window._start_time, window._end_time, keyed._key, result])


    class Items(Generator):
        \"\"\"The items in order, `rounds` times, a round every `every` seconds.\"\"\"

        def __init__(self, items, rounds=1, every=0.0):
            self.items, self.rounds, self.every = list(items), rounds, every

        def setup(self, context):
            self.left, self.round, self.next = [], 0, time.monotonic()

        def get(self):
            if not self.left:
                if self.round >= self.rounds or time.monotonic() < self.next:
                    return None
                self.round, self.next, self.left = self.round + 1, self.next + self.every, \\
                    list(self.items)
            return self.left.pop(0)


    class Tagged(TransformOperator):
        \"\"\"Each element with the task that saw it.\"\"\"

        def setup(self, context):
            self.context = context

        def transform(self, tup):
            self.context.emit([self.context.get_task_id(), tup.values[0]])


    def tumbling():
        return WindowConfig.create_tumbling_window(datetime.timedelta(seconds=1))


    def build():
        b = Builder()
        numbers = b.new_source(Items(range(1, @N@ + 1))).set_name("numbers")
        # map, flat_map, filter, clone, union, log, then repartition and a transform on
        # two tasks each (a stage's partitions are its children's too: so, at the end)
        both = (numbers.map(lambda x: 10 * x).set_name("tens")
                .flat_map(lambda x: [x, x + 1]).set_name("and_next")
                .filter(lambda x: x % 10 == 0).set_name("round_ones")
                .clone(2))
        both = both[0].set_name("first").union(both[1].set_name("second")).set_name("both")
        both.map(lambda x: f"logged-{x}-").set_name("to_log").log()
        tagged = (both.repartition(2, lambda x, n: 0 if x <= 100 else [0, 1]).set_name("routed")
                  .transform(Tagged()).set_name("tagged").set_num_partitions(2))
        assert (tagged.get_name(), tagged.get_num_partitions()) == ("tagged", 2)
        tagged.consume(functools.partial(write, "chain"))
        # windows: a sum over each window, and a sum per key
        numbers.reduce_by_window(tumbling(), lambda acc, v: (acc or 0) + v).set_name(
            "total").consume(lambda element: write("total", element[1]))
        (numbers.map(lambda x: ("odd" if x % 2 else "even", x)).set_name("parity")
         .reduce_by_key_and_window(tumbling(), lambda x, y: x + y).set_name("sums")
         .consume(functools.partial(write_window, "sums")))
        # each join over one-second windows, of two sources sending rounds together
        left = b.new_source(Items(LEFT, @ROUNDS@, 0.25)).set_name("left")
        right = b.new_source(Items(RIGHT, @ROUNDS@, 0.25)).set_name("right")
        for kind in ("join", "outer_left_join", "outer_right_join", "outer_join"):
            getattr(left, kind)(right, tumbling(), lambda lv, rv: [lv, rv]).set_name(
                kind).consume(functools.partial(write_window, kind))
        return b


    if __name__ == "__main__":
        Runner().run(sys.argv[1] if len(sys.argv) > 1 else "streamlets", Config(), build())
""")

JOINS = {
    "join": {("a", (1, "x")), ("a", (3, "x"))},
    "outer_left_join": {("a", (1, "x")), ("a", (3, "x")), ("b", (2, None))},
    "outer_right_join": {("a", (1, "x")), ("a", (3, "x")), ("c", (None, "y"))},
    "outer_join": {("a", (1, "x")), ("a", (3, "x")), ("b", (2, None)), ("c", (None, "y"))},
}


def rows(out: Path, branch: str) -> list:
    path = out / f"{branch}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] \
        if path.is_file() else []


def windows_of(out: Path, branch: str) -> dict[tuple, set]:
    found: dict[tuple, set] = defaultdict(set)
    for start, end, key, (lv, rv) in rows(out, branch):
        found[(start, end)].add((key, (lv, rv)))
    return found


@pytest.mark.compat("cli/heronbridge run", "heronpy/Streamlet Builder and Runner",
                    *(f"heronpy/Streamlet.{name}" for name in OPERATORS), on="spark")
def test_every_streamlet_operator_on_the_spark_cluster(spark, zookeeper, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "streamlets.py"
    script.write_text(TOPOLOGY.replace("@OUT@", repr(str(out))).replace("@N@", str(N))
                      .replace("@ROUNDS@", str(ROUNDS)))
    home = tmp_path / "home"
    env = {**os.environ, "HERONBRIDGE_STATE": ""}
    run = subprocess.Popen([HERONBRIDGE, "run", str(script), "--scheduler", "spark",
                            "--spark-master", spark.master, "--state",
                            zookeeper.uri("streamlets"), "--home", str(home), "--containers", "2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                           env=env)
    tens = [10 * x for x in range(1, N + 1)]
    chain = Counter({x: 2 * (1 if x <= 100 else 2) for x in tens})  # cloned: twice

    def logs() -> str:
        return spark.logs("work-*/**/container-*/**/*.log", tail=4000)

    def done() -> bool:
        parities = Counter()
        for _start, _end, key, total in rows(out, "sums"):
            parities[key] += total
        return (Counter(v for _, v in rows(out, "chain")) == chain
                and sum(t for t in rows(out, "total") if t is not None) == N * (N + 1) // 2
                and parities == {"odd": (N // 2) ** 2, "even": (N // 2) * (N // 2 + 1)}
                and all(expected in windows_of(out, kind).values()
                        for kind, expected in JOINS.items()))

    try:
        wait_until(lambda: run.poll() is not None or done(), 180, "every branch's output",
                   on_timeout=lambda: {b.name: b.read_text()[-400:] for b in out.iterdir()})
        assert run.poll() is None, run.communicate()
        logged = wait_until(lambda: (text := logs()) and all(
            f"logged-{x}-" in text for x in tens) and text, 60, "every element logged",
            on_timeout=logs)
    finally:
        run.send_signal(signal.SIGINT)
        stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    assert "streamlets: totals over" in " ".join(stdout.split()), stdout
    # The transform ran on its two tasks; an inner join never yields a side alone.
    tasks = {task for task, _ in rows(out, "chain")}
    assert len(tasks) == 2, tasks
    for found in windows_of(out, "join").values():
        assert found <= JOINS["join"], found
    assert len(re.findall(r"logged-\d+-", logged)) >= len(tens)
