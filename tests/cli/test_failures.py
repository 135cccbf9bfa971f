"""When a user's code fails, the command line says so at once: the component, the task,
the exception's type and message and the line of the user's file, for every kind of
topology (streamparse in-process and --multilang, heronpy, the runtime's API) and with
several containers; a crash after start is printed while the topology runs, and the end
says which components never stayed up. Crashes, executed tuples and memory count the
same way in-process and under multilang; a healthy run drops nothing."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, heronbridge

from heronbridge.runtime.metrics_manager.sink import latest_samples

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "shims" / "project"

COMPONENTS = '''\
import os

from streamparse import Bolt, Spout


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.n = 0

    def next_tuple(self):
        if self.n < conf_limit(self):
            self.emit([f"w{self.n}"], tup_id=self.n)
            self.n += 1


def conf_limit(component):
    return component.storm_conf.get("test.words", 1000000)


class Sink(Bolt):
    def process(self, tup):
        pass


class InitFails(Bolt):
    def initialize(self, conf, ctx):
        self.data = open("/nonexistent/heronbridge-test/data.csv")

    def process(self, tup):
        pass


class ConstructorFails(Bolt):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        raise RuntimeError("no database configured")

    def process(self, tup):
        pass


class Python2Spout(Spout):
    """Emits a few lines, then calls Python 2's file.next()."""

    outputs = ["line"]

    def initialize(self, conf, ctx):
        self.file = open(os.path.abspath(__file__))
        self.sent = 0

    def next_tuple(self):
        if self.sent < 3:
            self.emit([str(self.sent)])
            self.sent += 1
            return
        self.emit([self.file.next()])


class ThirdTupleFails(Bolt):
    """Processes two tuples, raises on the third."""

    def initialize(self, conf, ctx):
        self.seen = 0

    def process(self, tup):
        self.seen += 1
        if self.seen == 3:
            raise ValueError(f"cannot parse {tup.values[0]!r}")


class FailsOnce(Bolt):
    """Raises in its first initialize in the topology's life; its restart runs on."""

    def initialize(self, conf, ctx):
        if not os.path.exists("failed-once"):
            open("failed-once", "w").close()
            raise ValueError("a one-off")

    def process(self, tup):
        pass


class SpoutInitFails(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        raise ConnectionError("no broker at kafka.invalid:9092")

    def next_tuple(self):
        pass
'''

TOPOLOGY = '''\
from parts.failing import {imports}
from streamparse import Topology


class {cls}(Topology):
{body}
'''

LINES = {name: i + 1 for i, line in enumerate(COMPONENTS.splitlines())
         for name in ("self.data = open", "raise RuntimeError", "self.emit([self.file.next()])",
                      "raise ValueError") if name in line}


def project(tmp_path: Path, name: str, imports: str, body: str,
            options: dict | None = None) -> Path:
    copy = tmp_path / "project"
    if not copy.exists():
        shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__"))
        (copy / "src" / "parts" / "failing.py").write_text(COMPONENTS)
    (copy / "topologies" / f"{name}.py").write_text(
        TOPOLOGY.format(imports=imports, cls=name.title().replace("_", ""), body=body))
    if options:
        config = json.loads((copy / "config.json").read_text())
        config["envs"]["test"]["options"].update(options)
        (copy / "config.json").write_text(json.dumps(config))
    return copy


class Watched:
    """`heronbridge run` in the background, for a test that stops it."""

    def __init__(self, tmp_path: Path, *args: str, cwd: Path | None = None) -> None:
        self.home = tmp_path / "home"
        self.process = subprocess.Popen(
            [HERONBRIDGE, "run", *args, "--home", str(self.home)], cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, timeout: float = 240) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            pytest.fail(f"heronbridge run did not end within {timeout}s:\n{err[-4000:]}")
        return self.process.returncode, out, err


def run(tmp_path: Path, *args: str, timeout: float = 240,
        cwd: Path | None = None) -> tuple[int, str, str]:
    """`heronbridge run ARGS` to its end: (exit code, stdout, stderr)."""
    try:
        done = heronbridge("run", *args, "--home", str(tmp_path / "home"), cwd=cwd,
                           timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"heronbridge run did not end within {timeout}s:\n{exc.stderr[-4000:]}")
    return done.returncode, done.stdout, done.stderr


def first_error(err: str, component: str) -> str:
    found = [line for line in err.splitlines()
             if line.startswith("error:") and f"component {component!r}" in line]
    assert found, err[-4000:]
    return found[0]


def workdir(tmp_path: Path, name: str) -> Path:
    return tmp_path / "home" / "topologies" / name / "current"


# -- a component that dies at start -------------------------------------------------------


@pytest.mark.parametrize(("multilang", "containers"), [(False, 1), (True, 1), (False, 2)],
                         ids=["in-process", "multilang", "two-containers"])
def test_a_streamparse_component_raising_in_initialize(tmp_path, multilang, containers):
    folder = project(tmp_path, "dies", "InitFails, Words",
                     "    words = Words.spec()\n    bad = InitFails.spec(inputs=[words], par=2)")
    args = ["--project", str(folder), "-n", "dies", "-t", "60",
            "--containers", str(containers), *(["--multilang"] if multilang else [])]
    code, _out, err = run(tmp_path, *args)
    assert code == 1, err[-4000:]
    line = first_error(err, "bad")
    source = folder / "src" / "parts" / "failing.py"
    assert re.search(r"topology 'dies', component 'bad', task [23] raised FileNotFoundError: "
                     r"\[Errno 2\] No such file or directory: '/nonexistent/heronbridge-test/"
                     r"data.csv' \(at " + re.escape(f"{source}:{LINES['self.data = open']}")
                     + r", in initialize\); its log: ", line), line
    # It gives up on the task that keeps dying, long before the 60 s registration wait.
    assert "died 3 times before it started" in err and "not every task registered" not in err
    log = Path(line.rsplit("its log: ", 1)[1])
    assert log.is_file() and "FileNotFoundError" in log.read_text()
    if containers == 2:
        assert log.parent.parent.name in ("container-0", "container-1")


def test_a_streamparse_component_raising_in_its_constructor(tmp_path):
    folder = project(tmp_path, "ctor", "ConstructorFails, Words",
                     "    words = Words.spec()\n    bad = ConstructorFails.spec(inputs=[words])")
    code, _out, err = run(tmp_path, "--project", str(folder), "-n", "ctor", "-t", "60")
    assert code == 1
    line = first_error(err, "bad")
    assert "task 2 raised RuntimeError: no database configured (at " in line, line
    assert f"failing.py:{LINES['raise RuntimeError']}, in __init__)" in line, line


HERONPY = '''\
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout
from heronpy.api.topology import TopologyBuilder


class Words(Spout):
    outputs = ["word"]

    def initialize(self, config, context):
        pass

    def next_tuple(self):
        self.emit(["a"])


class Bad(Bolt):
    def initialize(self, config, context):
        raise ValueError("missing setting 'db.url'")

    def process(self, tup):
        pass


builder = TopologyBuilder("hpdies")
words = builder.add_spout("words", Words, par=1)
builder.add_bolt("bad", Bad, par=1, inputs=[words])
'''

RUNTIME = '''\
from heronbridge.runtime import Bolt, Spout, TopologyBuilder


class Words(Spout):
    outputs = ["word"]

    def next_tuple(self):
        self.collector.emit(["a"])


class Bad(Bolt):
    def prepare(self, config, context, collector):
        raise KeyError("db.url")

    def execute(self, tup):
        pass


builder = TopologyBuilder("rtdies")
words = builder.spout("words", Words)
builder.bolt("bad", Bad, inputs=[words])
'''


@pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
def test_a_streamparse_spout_raising_in_initialize_ends_the_run(tmp_path, multilang):
    """Both modes agree: in-process the spout dies in its task's start; under --multilang
    its subprocess dies after the handshake, so the task is up only once its child
    answers a command, which a child that died in `initialize` never does."""
    folder = project(tmp_path, "spoutdies", "Sink, SpoutInitFails",
                     "    bad = SpoutInitFails.spec()\n    sink = Sink.spec(inputs=[bad])",
                     {"heronbridge.restart.backoff.secs": 0.2})
    code, out, err = run(tmp_path, "--project", str(folder), "-n", "spoutdies", "-t", "240",
                         *(["--multilang"] if multilang else []), timeout=280)
    assert code == 1, err[-4000:]
    line = first_error(err, "bad")
    assert "raised ConnectionError: no broker at kafka.invalid:9092 (at " in line, line
    assert re.search(r"error: topology 'spoutdies', component 'bad', task \d+: died \d+ times "
                     r"before it started; ConnectionError: no broker", err), err[-4000:]
    assert "totals over" not in out  # it ended there, not after its 240 s


@pytest.mark.parametrize(("source", "name", "expected", "function"), [
    (HERONPY, "hpdies", "ValueError: missing setting 'db.url'", "initialize"),
    (RUNTIME, "rtdies", "KeyError: 'db.url'", "prepare")], ids=["heronpy", "runtime-api"])
def test_a_file_topology_component_raising_at_start(tmp_path, source, name, expected, function):
    topology = tmp_path / f"{name}.py"
    topology.write_text(source)
    code, _out, err = run(tmp_path, str(topology), "-t", "60")
    assert code == 1, err[-4000:]
    line = first_error(err, "bad")
    raising = 1 + next(i for i, text in enumerate(source.splitlines()) if "raise " in text)
    assert f"topology {name!r}, component 'bad', task 1 raised {expected} (at " \
           f"{topology}:{raising}, in {function})" in line, line
    assert "died 3 times before it started" in err


# -- a crash after start, counted alike in both modes -------------------------------------


@pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
def test_a_crash_after_start_is_told_while_running_and_counted_once(tmp_path, multilang):
    folder = project(tmp_path, "py2", "FailsOnce, Python2Spout, Sink, ThirdTupleFails, Words",
                     "    lines = Python2Spout.spec(par=2)\n    sink = Sink.spec(inputs=[lines])\n"
                     "    words = Words.spec()\n    third = ThirdTupleFails.spec(inputs=[words])\n"
                     "    once = FailsOnce.spec(inputs=[words])",
                     {"test.words": 40})
    watched = Watched(tmp_path, "--project", str(folder), "-n", "py2",
                      *(["--multilang"] if multilang else []))
    # Until both spout tasks crashed twice and the bolt failed once (however slowly a
    # loaded machine restarts them), then Ctrl-C, as a user stops it.
    deadline = time.monotonic() + 240
    while watched.process.poll() is None and time.monotonic() < deadline:
        samples = latest_samples(workdir(tmp_path, "py2"))
        crashed = [r["counters"].get("crash-count", 0) for (c, _t, _n), r in samples.items()
                   if c == "lines"]
        failed = [r["counters"].get("fail-count", 0) for (c, _t, _n), r in samples.items()
                  if c == "third"]
        if len(crashed) == 2 and min(crashed) >= 2 and failed and max(failed) >= 1:
            break
        time.sleep(0.5)
    watched.process.send_signal(signal.SIGINT)
    code, out, err = watched.finish()
    assert code == 3, err[-4000:]  # it ran, and user code kept it from staying up
    source = folder / "src" / "parts" / "failing.py"
    spout = first_error(err, "lines")
    assert re.search(r"component 'lines', task \d+ raised AttributeError: '_io.TextIOWrapper' "
                     r"object has no attribute 'next' \(at " + re.escape(
                         f"{source}:{LINES['self.emit([self.file.next()])']}, in next_tuple)"),
                     spout), spout
    bolt = first_error(err, "third")
    assert "raised ValueError: cannot parse 'w2' (at " in bolt, bolt
    assert len([line for line in err.splitlines() if "component 'lines'" in line
                and " raised " in line]) == 1  # the first exception, once
    # Printed while it ran: before the totals.
    assert err.index(spout) < len(err) and "totals over" in out
    [end] = [line for line in err.splitlines() if "never stayed up" in line]
    # Both of the spout's tasks, each with what it raised.
    assert "component 'lines' (" in end, end
    lines = end[end.index("component 'lines' ("):]
    assert len(re.findall(r"task \d+: crashed \d+ times?, longest run \d+\.\ds; "
                          r"AttributeError: '_io.TextIOWrapper' object has no attribute 'next' "
                          r"\(at " + re.escape(f"{source}:{LINES['self.emit([self.file.next()])']}"
                                              ", in next_tuple)"), lines)) == 2, end
    # One crash (at its start, so its restart is up before the run, however loaded the
    # machine), told as it came, then a run that goes on: no crash loop.
    assert "raised ValueError: a one-off (at " in first_error(err, "once")
    assert "component 'once'" not in end, end

    samples = latest_samples(workdir(tmp_path, "py2"))
    for (component, _task, _c), record in samples.items():
        counters = record["counters"]
        if component == "lines":
            crashes = counters["crash-count"]
            assert crashes >= 2, record
            assert counters["error-count"] == crashes, record  # once per crash, both modes
            assert record["gauges"]["peak-rss-bytes"] > 10 << 20, record  # never 0 MB
        if component == "once":
            assert counters["crash-count"] == 1, record
        if component == "third":
            # It died on its third tuple once in each life: executed counts what it got
            # through (two acked, the third failed), never what went to a dead child.
            done = counters["ack-count"] + counters["fail-count"]
            assert counters["execute-count"] == done, record
            assert counters["fail-count"] == counters["crash-count"] >= 1, record
    table = out[out.index("totals over"):]
    row = next(line for line in table.splitlines() if line.strip("│ ").startswith("lines"))
    assert not row.rstrip(" │").endswith(" 0"), row  # its max RSS MB


# -- a healthy run ----------------------------------------------------------------------


def test_a_healthy_run_ends_with_nothing_dropped(tmp_path):
    code, out, err = run(tmp_path, "--project",
                         str(ROOT / "examples" / "storm_topologies" / "wordcount"), "-t", "8")
    assert code == 0, err[-4000:]
    assert "stream managers dropped" not in out, out
    stmgr = next(line for line in out.splitlines() if "__stmgr__" in line)
    assert stmgr.split("│")[-3].strip() == "0", stmgr
    assert "error:" not in err, err


# -- the start-up import check sees imports as the tasks will -----------------------------


def test_python_m_heronbridge_in_the_project_folder_refuses_an_import_of_src(tmp_path):
    folder = tmp_path / "wordcount"
    shutil.copytree(ROOT / "examples" / "storm_topologies" / "wordcount", folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    topology = folder / "topologies" / "wordcount.py"
    topology.write_text(topology.read_text().replace("from bolts.", "from src.bolts.")
                        .replace("from spouts.", "from src.spouts."))
    (folder / "src" / "__init__.py").write_text("")
    done = subprocess.run([sys.executable, "-m", "heronbridge", "run", "-t", "5", "--home",
                           str(tmp_path / "home")], cwd=folder, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "No module named 'src'" in done.stderr and "expected `from X import ...`" in \
        done.stderr, done.stderr
    assert not (tmp_path / "home" / "topologies" / "wordcount").exists()  # nothing started
