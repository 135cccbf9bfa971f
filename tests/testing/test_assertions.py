"""assert_emitted's diff: what is missing and what was not expected, with counts; or a
line diff for an ordered comparison."""

from __future__ import annotations

import pytest

from heronbridge.testing import ComponentRecord, Result, assert_emitted
from heronbridge.testing.assertions import emitted_diff


def result(*emits):
    return Result("words", {"count": ComponentRecord(emitted={"default": list(emits)})})


def test_passes_on_the_same_tuples_in_any_order_and_tuples_as_lists():
    assert_emitted(result(["a", 1], ["b", 1]), "count", [("b", 1), ["a", 1]])


def test_says_what_is_missing_and_what_was_not_expected():
    with pytest.raises(AssertionError) as caught:
        assert_emitted(result(["a", 1], ["a", 1], ["c", 1]), "count",
                       [["a", 1], ["b", 1]])
    assert str(caught.value) == (
        "topology 'words' (runtime), component 'count', stream 'default':\n"
        "expected 2 tuples, emitted 3\n"
        "missing (expected, not emitted):\n"
        '  - ["b", 1]\n'
        "unexpected (emitted, not expected):\n"
        '  - ["a", 1]\n'
        '  - ["c", 1]')


def test_an_ordered_comparison_shows_a_line_diff():
    diff = emitted_diff([["a"], ["b"]], [["b"], ["a"]], ordered=True)
    assert diff.splitlines()[:2] == ["--- expected", "+++ emitted"]
    assert diff.splitlines()[3:] == ['+["b"]', ' ["a"]', '-["b"]']
    assert emitted_diff([["a"]], [["a"]], ordered=True) == ""


def test_an_unknown_component_is_named():
    with pytest.raises(Exception, match=r"expected a component among \['count'\], "
                       "received 'nope'"):
        assert_emitted(result(), "nope", [])
