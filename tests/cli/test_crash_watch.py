"""What `heronbridge run` says of a user's code that fails: every task that never stayed
up named, by component, in its last line; the virtualenv line to add for a package the
tasks cannot import; and its exit codes, one table that `run --help` and the reference
show."""

from __future__ import annotations

from types import SimpleNamespace

from heronbridge.cli import build_parser, exit_codes, verb_parsers
from heronbridge.cli.crash_watch import CrashWatch
from heronbridge.runtime.telemetry import CRASH_COUNT, LONGEST_UPTIME_SECS


def task(task_id, component, crashes, longest, raised="ValueError"):
    trace = ('Traceback (most recent call last):\n  File "/home/u/project/src/bolts.py", '
             'line 9, in process\n    raise ValueError("bad")\n')
    return SimpleNamespace(
        task_id=task_id, component=component, container=1, incarnation=crashes,
        counters={CRASH_COUNT: crashes}, gauges={LONGEST_UPTIME_SECS: longest},
        exceptions=[SimpleNamespace(first_ms=1000 + task_id, class_name=raised,
                                    message="bad", stacktrace=trace)] if crashes else [])


def watch(files: SimpleNamespace | None = None) -> CrashWatch:
    launch = SimpleNamespace(name="counts", source_of=lambda path: path,
                             task_log=lambda container, component, t: f"task-{t}.log")
    return CrashWatch(launch, files)  # type: ignore[arg-type]


def test_the_last_line_names_every_task_that_never_stayed_up():
    report = SimpleNamespace(tasks=[task(1, "words", 0, 0.0), task(2, "every", 4, 0.3),
                                    task(3, "every", 3, 0.2), task(4, "once", 1, 42.0),
                                    task(5, "split", 2, 1.5, "KeyError")])
    line = watch().never_up(report)
    assert line.startswith("topology 'counts': never stayed up (a task kept crashing and none of "
                           "its runs lasted 10s): ")
    assert ("component 'every' (task 2: crashed 4 times, longest run 0.3s; ValueError: bad "
            "(at /home/u/project/src/bolts.py:9, in process); task 3: crashed 3 times, "
            "longest run 0.2s; ValueError: bad (at /home/u/project/src/bolts.py:9, in "
            "process))") in line
    assert "component 'split' (task 5: crashed 2 times, longest run 1.5s; KeyError" in line
    assert "'once'" not in line and "'words'" not in line  # it came back and ran on


def test_nothing_to_say_when_every_task_stayed_up_or_no_report_came():
    assert watch().never_up(SimpleNamespace(tasks=[task(1, "once", 1, 12.0)])) is None
    assert watch().never_up(None) is None


def test_a_package_the_tasks_cannot_import_says_which_line_to_add_where(tmp_path, capsys):
    (tmp_path / "src" / "parts").mkdir(parents=True)
    files = SimpleNamespace(root=tmp_path, requirements=tmp_path / "virtualenvs" / "counts.txt")
    missing = task(2, "store", 1, 0.1, "ModuleNotFoundError")
    missing.exceptions[0].message = "No module named 'redis.client'"
    watch(files).see(SimpleNamespace(tasks=[missing]))
    said = " ".join(capsys.readouterr().err.split())
    assert "component 'store', task 2 raised ModuleNotFoundError: No module named " \
           "'redis.client'" in said
    assert ("add a line for the package that provides 'redis' there (e.g. `redis`), then "
            "run again") in said and f"the packages {files.requirements} names" in said
    # Another exception, a module of the project's own, or no virtualenv file: no advice.
    watch(files).see(SimpleNamespace(tasks=[task(3, "other", 1, 0.1, "KeyError")]))
    missing.exceptions[0].message = "No module named 'parts.nothing'"
    watch(files).see(SimpleNamespace(tasks=[missing]))
    missing.exceptions[0].message = "No module named 'redis'"
    watch(None).see(SimpleNamespace(tasks=[missing]))
    assert "add a line" not in capsys.readouterr().err


def test_run_s_help_lists_its_exit_codes_and_the_reference_has_the_table():
    text = verb_parsers(build_parser())["run"].format_help()
    codes = text[text.index("exit codes:"):]
    for code, meaning in ((0, "every task stayed up"), (1, "could not start"),
                          (2, "the command line is wrong"), (3, "never stayed up")):
        assert f"  {code}  " in codes and meaning in " ".join(codes.split()), codes
    table = exit_codes.markdown()
    assert table.startswith("| code | verbs | meaning |")
    assert "| 3 | `run` | the topology ran, but user code kept raising" in table
