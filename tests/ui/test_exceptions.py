"""The page's exceptions, without processes: the same error from the same place in any
task of a component shows once, with its count, first and last seen, and the tasks."""

from __future__ import annotations

from heronbridge.runtime.proto import control_pb2
from heronbridge.ui.page import exceptions
from heronbridge.ui.tracker import Nodes, Topology

TRACE = ('Traceback (most recent call last):\n  File "bolts.py", line 9, in execute\n'
         '    raise ValueError(msg)\nValueError: {}')
OTHER = 'Traceback (most recent call last):\n  File "bolts.py", line 20, in execute\n' \
    '    1 / 0\nZeroDivisionError: division by zero'


def test_the_same_error_from_the_same_place_shows_once():
    report = control_pb2.MetricsReport(all_ready=True)
    for task, n, first, last in ((3, 2, 1000, 5000), (4, 5, 2000, 9000)):
        record = report.tasks.add(component="work", task_id=task).exceptions.add(
            class_name="ValueError", message=f"bad {task}", stacktrace=TRACE.format(task),
            count=n, first_ms=first, last_ms=last)
        assert record.count == n
    report.tasks[0].exceptions.add(class_name="ZeroDivisionError", message="division by zero",
                                   stacktrace=OTHER, count=1, first_ms=7000, last_ms=7000)
    t = Topology("shown", Nodes(), None)
    t.report = report
    [value_error, zero] = exceptions(t)
    assert value_error["tasks"] == [3, 4] and value_error["count"] == 7
    assert (value_error["first"], value_error["last"]) == (1.0, 9.0)
    assert value_error["message"] == "bad 4"  # the latest
    assert zero["tasks"] == [3] and zero["count"] == 1
