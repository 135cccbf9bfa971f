"""The word count's own tests, written with heronbridge's pytest plugin.

    pytest tests/               # in memory, simulated time: well under a second
    pytest tests/ --on-storm    # the same tests of the whole topology on Apache Storm
"""

from pathlib import Path

from heronbridge.testing import assert_emitted

PROJECT = Path(__file__).resolve().parents[1]
WORDS = [["dog"], ["cat"], ["dog"]]


def test_counts_every_word_and_logs_totals_on_ticks(complete_topology):
    result = complete_topology(PROJECT, mocked_sources={"word_spout": WORDS},
                               config={"topology.tick.tuple.freq.secs": 10}, seconds=10)
    assert_emitted(result, "count_bolt", [["dog", 1], ["cat", 1], ["dog", 2]])
    assert sorted(result.anchors("count_bolt")) == [[["cat"]], [["dog"]], [["dog"]]]
    assert sorted(result.acked("word_spout")) == [0, 1, 2]
    assert result.failed("word_spout") == []
    # Storm's fields grouping sends "dog" and "cat" to the same one of count_bolt's two tasks
    assert result.logged("count_bolt", "3 words counted so far, 2 distinct")
    assert result.logged("count_bolt", "0 words counted so far, 0 distinct")


def test_count_bolt_alone(isolate):
    bolt = isolate(PROJECT, "count_bolt")
    for word in ["dog", "dog", "cat"]:
        bolt.execute([word])
    assert bolt.emitted() == [["dog", 1], ["dog", 2], ["cat", 1]]
    assert bolt.anchors() == [[["dog"]], [["dog"]], [["cat"]]]  # pystorm's auto-anchor
    assert bolt.acked == [["dog"], ["dog"], ["cat"]]  # pystorm's auto-ack
    bolt.tick()
    assert bolt.logs[-1] == "3 words counted so far, 2 distinct"
