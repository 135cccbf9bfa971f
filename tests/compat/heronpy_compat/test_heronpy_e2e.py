"""heronpy topologies running on the runtime: the word count through the CLI, every
grouping and ticks under at-most-once from a TopologyBuilder script, and at-least-once
acks and fails reaching the spout."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from heronpy_kit import HERE, build_plan
from hp_components import JudgeBolt, NumberSpout, RecordBolt
from testkit import heronbridge, read_jsonl, wait_until

pytestmark = pytest.mark.integration

WORDCOUNT = Path(__file__).resolve().parents[3] / "examples" / "heronpy" / "wordcount.py"
SENTENCES = ["the cow jumped over the moon", "an apple a day keeps the doctor away",
             "four score and seven years ago", "snow white and the seven dwarfs",
             "i am at two with nature"]


def cli(tmp_path, *args):
    return heronbridge(*args, "--home", str(tmp_path / "home"), cwd=tmp_path)


@pytest.mark.compat("heronpy/Spout and Bolt", "heronpy/TopologyBuilder and Topology")
def test_the_word_count_example_counts_every_word_through_heronbridge_run(tmp_path):
    out, sentences = tmp_path / "out", 500
    out.mkdir()
    result = cli(tmp_path, "run", str(WORDCOUNT), "-t", "3", "-o",
                 f"wordcount.sentences={sentences}", "-o", f"wordcount.out={out}")
    assert result.returncode == 0, result.stderr
    assert "WordCount running" in result.stderr and "totals over" in result.stdout
    counts: Counter = Counter()
    for path in out.glob("counts-*.json"):
        counts.update(json.loads(path.read_text()))
    expected = Counter(w for i in range(sentences) for w in SENTENCES[i % 5].split())
    assert counts == expected


GROUPINGS = textwrap.dedent("""
    import sys

    from heronpy.api.stream import Grouping
    from heronpy.api.topology import TopologyBuilder

    from hp_components import ModGrouping, NumberSpout, RecordBolt

    if __name__ == "__main__":
        b = TopologyBuilder(sys.argv[1])
        numbers = b.add_spout("numbers", NumberSpout, 1)
        b.add_bolt("shuffled", RecordBolt, 2, inputs=[numbers])
        b.add_bolt("keyed", RecordBolt, 3, inputs={numbers: Grouping.fields("key")})
        b.add_bolt("everyone", RecordBolt, 2, inputs={numbers: Grouping.ALL})
        b.add_bolt("lowest", RecordBolt, 2, inputs={numbers: Grouping.GLOBAL})
        b.add_bolt("anyone", RecordBolt, 2, inputs={numbers: Grouping.NONE})
        b.add_bolt("custom", RecordBolt, 2, inputs={numbers: Grouping.custom(ModGrouping())})
        b.add_bolt("ticker", RecordBolt, 1, inputs={numbers: Grouping.GLOBAL},
                   config={"topology.tick.tuple.freq.secs": 0.5})
        b.set_config({"test.count": 30, "topology.stmgrs": 2})
        b.build_and_submit()
""")


def by_component(out: Path) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for name, rows in read_jsonl(out).items():
        found.setdefault(name.rsplit("-", 1)[0], []).extend(rows)
    return found


@pytest.mark.compat("heronpy/groupings")
def test_every_grouping_ticks_and_at_most_once_from_a_topology_builder_script(tmp_path):
    shutil.copy(HERE / "hp_components.py", tmp_path)
    (tmp_path / "groupings.py").write_text(GROUPINGS)
    out = tmp_path / "out"
    out.mkdir()
    result = cli(tmp_path, "run", str(tmp_path / "groupings.py"), "-n", "groupings", "-t", "3",
                 "-o", f"test.out={out}")
    assert result.returncode == 0, result.stderr
    groupings_ran_as_storm_routes(out)


def groupings_ran_as_storm_routes(out: Path) -> None:
    """What the GROUPINGS script's components recorded: each grouping routed each of the
    30 numbers as Storm would, the ticks came, and every tuple was acked at once."""
    seen = by_component(out)
    numbers = set(range(30))

    def tuples(component):
        return [(r["task"], r["values"][0], r["values"][1]) for r in seen[component]
                if r["event"] == "tuple"]

    def once_each(component, tasks):
        rows = tuples(component)
        assert sorted(n for _, n, _ in rows) == sorted(numbers), component
        assert {t for t, _, _ in rows} == set(tasks), component
        return rows

    # Task ids by Storm's rule: no ackers at most once; components sorted by name.
    once_each("shuffled", [13, 14])
    keyed = once_each("keyed", [7, 8, 9])
    assert all(len({t for t, _, k in keyed if k == key}) == 1 for key in {k for *_, k in keyed})
    everyone = tuples("everyone")
    assert Counter(t for t, _, _ in everyone) == {5: 30, 6: 30}
    assert {t for t, _, _ in tuples("lowest")} == {10} and len(tuples("lowest")) == 30
    assert sorted(n for _, n, _ in tuples("anyone")) == sorted(numbers)
    assert all(t == (3 if n % 2 == 0 else 4) for t, n, _ in once_each("custom", [3, 4]))
    ticks = [r for r in seen["ticker"] if r["event"] == "tick"]
    assert len(ticks) >= 2 and {(r["stream"], r["source"]) for r in ticks} == \
        {("__tick", "__system")}
    spout = seen["numbers"]
    assert sorted(r["n"] for r in spout if r["event"] == "ack") == sorted(numbers)
    assert not [r for r in spout if r["event"] == "fail"]  # at most once: acked at once


def test_at_least_once_explicit_acks_and_fails_reach_the_spout(run_topology, tmp_path):
    def build(b):
        from heronpy.api.stream import Grouping

        numbers = b.add_spout("numbers", NumberSpout, 1)
        judge = b.add_bolt("judge", JudgeBolt, 2, inputs={numbers: Grouping.fields("key")})
        b.add_bolt("record", RecordBolt, 1, inputs=[judge])

    count = 60
    plan = build_plan("judged-e2e", build, {
        "topology.reliability.mode": "ATLEAST_ONCE", "test.count": count,
        "test.fail.every": 3, "test.out": str(tmp_path), "topology.stmgrs": 2})

    def callbacks():
        return [r for r in read_jsonl(tmp_path, "numbers-*.jsonl").get(
            f"numbers-{plan_tasks['numbers'][0]}", []) if r["event"] in ("ack", "fail")]

    from heronbridge.runtime.plan.tasks import TaskLayout

    plan_tasks = TaskLayout.of(plan).component_tasks
    assert plan_tasks["__acker"] == (1, 2)
    with run_topology(plan) as running:
        wait_until(lambda: len(callbacks()) >= count, 30, "a callback per tuple",
                   on_timeout=running.logs)
    events = callbacks()
    assert len(events) == count
    assert {r["n"] for r in events if r["event"] == "fail"} == set(range(0, count, 3))
    assert {r["n"] for r in events if r["event"] == "ack"} == \
        set(range(count)) - set(range(0, count, 3))
