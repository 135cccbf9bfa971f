"""The plan an update runs: refusals by name, which tasks stop and start, and fields
grouping's choice of Storm's task for the new parallelism."""

from __future__ import annotations

import pytest
from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import repack, round_robin
from heronbridge.runtime.plan.rescale import UpdateError, changes, rescaled
from heronbridge.runtime.wire.serde import make_serializer


def plan(**config):
    b = TopologyBuilder("t", config)
    words = b.spout("words", KeySpout)
    b.bolt("count", RecordingBolt, inputs={words: Grouping.by_fields("key")}, par=2)
    b.bolt("zsink", RecordingBolt, inputs=["count"])
    return b.build()


def test_refuses_by_name():
    with pytest.raises(UpdateError, match=r"component 'cnt': no such component; expected "
                                          r"one of \['count', 'words', 'zsink'\]"):
        rescaled(plan(), {"cnt": 2})
    with pytest.raises(UpdateError, match=r"component 'count': parallelism must be an integer "
                                          r">= 1, received 0"):
        rescaled(plan(), {"count": 0})
    with pytest.raises(UpdateError, match=r"component 'words': a spout of a stateful "
                                          r"topology keeps its parallelism"):
        rescaled(plan(**{"topology.stateful": True}), {"words": 2})
    assert rescaled(plan(**{"topology.stateful": True}), {"count": 3}) \
        .components["count"].parallelism == 3
    with pytest.raises(UpdateError, match=r"component 'zsink': in a stateful topology a "
                                          r"bolt's state is repartitioned by key.*it reads "
                                          r"count \(shuffle"):
        rescaled(plan(**{"topology.reliability.mode": "EFFECTIVELY_ONCE"}), {"zsink": 2})
    assert rescaled(plan(), {"words": 2}).components["words"].parallelism == 2


def test_only_tasks_whose_view_changed_restart():
    old = plan()
    old_packing = round_robin(old, 2)
    # zsink sorts last: growing it changes no other id; count sends to it, so restarts.
    new = rescaled(old, {"zsink": 2})
    delta = changes(old, old_packing, new, repack(old_packing, new))
    assert delta.stopped_tasks == [1, 2, 4]  # count 1-2, zsink 4; words (3) keeps running
    assert delta.started_tasks == [1, 2, 4, 5]
    # Growing count shifts the ids of words and zsink: every task restarts.
    new = rescaled(old, {"count": 4})
    delta = changes(old, old_packing, new, repack(old_packing, new))
    assert delta.stopped_tasks == [1, 2, 3, 4] and delta.started_tasks == [1, 2, 3, 4, 5, 6]


def _java_string_hash(s: str) -> int:
    h = 0
    for unit in [int.from_bytes(s.encode("utf-16-be")[i:i + 2], "big")
                 for i in range(0, len(s) * 2, 2)]:
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_fields_grouping_picks_storms_task_for_the_new_parallelism():
    new = rescaled(plan(), {"count": 4})
    layout = TaskLayout.of(new)
    targets = layout.component_tasks["count"]
    emitter = SpoutEmitter(new, layout.component_tasks["words"][0], make_serializer("msgpack"),
                           False, frozenset())
    for key in ("ember", "maple", "k7", "hot", "north"):
        # Storm: floorMod(Arrays.deepHashCode([key]), n) = floorMod(31 + key.hashCode(), n).
        h = (31 + _java_string_hash(key) + (1 << 31)) % (1 << 32) - (1 << 31)
        assert list(emitter.emit([key, 1])) == [targets[h % 4]], key
