"""Every grouping's routing property, end to end: two containers, real processes."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from rt_components import DirectSpout, KeySpout, RecordingBolt, choose_even_tasks
from testkit import read_jsonl, wait_until

from heronbridge.runtime import Grouping, Stream, TopologyBuilder
from heronbridge.runtime.grouping.javahash import PartialKeyChooser, fields_index
from heronbridge.runtime.plan import TaskLayout, round_robin

pytestmark = pytest.mark.integration

COUNT = 300  # tuples per spout task
KEYS = 10

GROUPINGS = {
    "shuffled": (Grouping.SHUFFLE, 2),
    "fielded": (Grouping.by_fields("key"), 3),
    "everyone": (Grouping.ALL, 2),
    "globaled": (Grouping.GLOBAL, 2),
    "noned": (Grouping.NONE, 2),
    "localed": (Grouping.LOCAL_OR_SHUFFLE, 2),
    "partialed": (Grouping.partial_key("key"), 2),
    "customed": (Grouping.custom_grouping(choose_even_tasks), 3),
}


def groupings_plan(out, containers=2):
    """Two spouts, a bolt per grouping, and a sink for direct tuples."""
    b = TopologyBuilder("groupings", {"topology.reliability.mode": "ATLEAST_ONCE",
                                      "topology.stmgrs": containers, "test.out": str(out),
                                      "test.count": COUNT, "test.keys": KEYS})
    b.spout("keys", KeySpout, par=2)
    b.spout("directs", DirectSpout, outputs=[Stream("to", ("seq",), direct=True)])
    for name, (grouping, par) in GROUPINGS.items():
        b.bolt(name, RecordingBolt, inputs={"keys": grouping}, par=par)
    b.bolt("sink", RecordingBolt, inputs={"directs:to": Grouping.DIRECT}, par=2)
    return b.build()


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    """Run the topology once; return what every task recorded."""
    from testkit import Running

    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.statemgr import open_statemgr

    out = tmp_path_factory.mktemp("records")
    plan = groupings_plan(out)
    home = Home(tmp_path_factory.mktemp("hb"))
    with Running(plan, home, open_statemgr(home.state_uri)) as running:
        def all_acked():
            spouts = read_jsonl(out, "spout-keys-*.jsonl").values()
            return sum(r["event"] == "ack" for rs in spouts for r in rs) == 2 * COUNT

        wait_until(all_acked, 90, "every spout tuple to be acked", on_timeout=running.logs)
        wait_until(lambda: sum(len(v) for k, v in read_jsonl(out).items()
                               if k.startswith("received-sink")) == 60, 30, "direct tuples",
                   on_timeout=running.logs)
    layout = TaskLayout.of(plan)
    packing = round_robin(plan, 2)
    return read_jsonl(out), layout, packing


def received(records, component):
    """{task: [(source task, values)]} for one bolt."""
    out = defaultdict(list)
    for name, rows in records.items():
        if name.startswith(f"received-{component}-"):
            task = int(name.rsplit("-", 1)[1])
            if rows:
                out[task] += [(r["task"], tuple(r["values"])) for r in rows]
    return out


def sent(records):
    return [(int(n.rsplit("-", 1)[1]), r) for n, rows in records.items()
            if n.startswith("spout-keys-") for r in rows if r["event"] == "emit"]


def test_every_tuple_reaches_each_subscriber_once_and_is_acked(outcome):
    records, layout, _ = outcome
    emitted = Counter((task, r["seq"]) for task, r in sent(records))
    assert len(emitted) == 2 * COUNT
    for name in GROUPINGS:
        got = Counter((src, v[1]) for rows in received(records, name).values() for src, v in rows)
        expected = Counter()
        for src, seq in emitted:
            if name == "everyone":
                expected[(src, seq)] = len(layout.component_tasks[name])
            elif name == "customed":  # odd seqs go to every task but the first
                expected[(src, seq)] = 1 if seq % 2 == 0 else len(layout.component_tasks[name]) - 1
            else:
                expected[(src, seq)] = 1
        assert got == expected, name
    acks = [r for n, rows in records.items() if n.startswith("spout-keys") for r in rows
            if r["event"] == "ack"]
    fails = [r for n, rows in records.items() if n.startswith("spout-keys") for r in rows
             if r["event"] == "fail"]
    assert len(acks) == 2 * COUNT and not fails


@pytest.mark.compat("api/task ids (need_task_ids)")
def test_emit_returns_the_tasks_that_really_received_the_tuple(outcome):
    records, _, _ = outcome
    where = defaultdict(set)
    for name in GROUPINGS:
        for task, rows in received(records, name).items():
            for src, values in rows:
                where[(src, values[1])].add(task)
    for task, r in sent(records):
        assert set(r["tasks"]) == where[(task, r["seq"])]


@pytest.mark.compat("grouping/shuffle")
def test_shuffle_balances(outcome):
    counts = [len(rows) for rows in received(outcome[0], "shuffled").values()]
    assert len(counts) == 2 and abs(counts[0] - counts[1]) <= 2


@pytest.mark.compat("grouping/fields")
def test_fields_sends_a_key_to_the_one_task_storm_would_choose(outcome):
    records, layout, _ = outcome
    tasks = layout.component_tasks["fielded"]
    for task, rows in received(records, "fielded").items():
        for _src, (key, _seq) in rows:
            assert task == tasks[fields_index((key,), len(tasks))]


@pytest.mark.compat("grouping/all", "grouping/global", "grouping/none")
def test_all_and_global_and_none(outcome):
    records, layout, _ = outcome
    assert set(received(records, "everyone")) == set(layout.component_tasks["everyone"])
    assert set(received(records, "globaled")) == {min(layout.component_tasks["globaled"])}
    assert set(received(records, "noned")) == set(layout.component_tasks["noned"])


@pytest.mark.compat("grouping/local_or_shuffle")
def test_local_or_shuffle_stays_in_the_senders_container(outcome):
    records, _, packing = outcome
    for task, rows in received(records, "localed").items():
        for src, _values in rows:
            assert packing.container_of(src) == packing.container_of(task)


@pytest.mark.compat("grouping/partial_key")
def test_partial_key_uses_only_a_keys_two_candidates(outcome):
    records, layout, _ = outcome
    tasks = layout.component_tasks["partialed"]
    chooser = PartialKeyChooser(len(tasks))
    for task, rows in received(records, "partialed").items():
        for _src, (key, _seq) in rows:
            assert task in {tasks[i] for i in chooser.candidates([key])}


@pytest.mark.compat("grouping/custom")
def test_custom_grouping_routes_as_the_function_says(outcome):
    records, layout, _ = outcome
    tasks = layout.component_tasks["customed"]
    for task, rows in received(records, "customed").items():
        for _src, (_key, seq) in rows:
            assert (task == tasks[0]) == (seq % 2 == 0)


@pytest.mark.compat("grouping/direct", "api/direct emits", "api/named streams")
def test_direct_tuples_reach_the_task_they_were_sent_to(outcome):
    records, _, _ = outcome
    targets = {r["seq"]: r["target"] for rows in records.values() for r in rows
               if r.get("event") == "direct"}
    got = {values[0]: task for task, rows in received(records, "sink").items()
           for _src, values in rows}
    assert got == targets and len(got) == 60
