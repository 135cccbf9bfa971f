"""StatefulMixin (shims/storm/state.py): an ordinary dict under plain streamparse; on the
runtime, the stateful contract forwarded by the in-process hosts to the pystorm
component, its state saved, and a new instance of it given that state back."""

from __future__ import annotations

import json
import logging
import pickle
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

# Log handlers, working folder and sys.path put back after each test (autouse).
from test_lean_host import PROJECT, task_process_state  # noqa: F401

from heronbridge.compat import CompatError
from heronbridge.compat.streamparse import load_project
from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.runtime.checkpoint import CheckpointStorage
from heronbridge.runtime.checkpoint.partitions import key_partition, restored_state
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.testing import InMemoryTopology
from heronbridge.shims.storm import ShimError, keys
from heronbridge.shims.storm.inprocess import PendingKey, PystormComponent
from heronbridge.shims.storm.state import StatefulMixin, before_save, is_stateful

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / \
    "stateful_wordcount"
WORD = re.compile(r"[a-z]+")
LINES = (EXAMPLE / "src" / "data" / "lines.txt").read_text().splitlines()
BATCHING = EXAMPLE.parent / "batching"


@pytest.fixture(autouse=True)
def project_modules():
    """The example's modules go after each test: other projects' have the same names."""
    yield
    for name in [m for m in sys.modules if m.split(".")[0] in ("bolts", "spouts",
                                                                "output_files")]:
        del sys.modules[name]


def test_the_module_imports_nothing_but_the_standard_library():
    code = ("import sys; before = set(sys.modules)\n"
            "import heronbridge.shims.storm.state\n"
            "print(sorted({m.split('.')[0] for m in set(sys.modules) - before}"
            " - set(sys.stdlib_module_names)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["['heronbridge']"]


COUNTER = '''
from streamparse import Bolt
from heronbridge.shims.storm.state import StatefulMixin

class Counter(StatefulMixin, Bolt):
    def initialize(self, conf, ctx):
        self.seen_in_initialize = dict(self.state)
        self.state["calls"] = 0

    def process(self, tup):
        import sys
        self.state["calls"] += 1
        word = tup.values[0]
        self.state[word] = self.state.get(word, 0) + 1
        self.emit([word, self.state[word], self.state["calls"], self.seen_in_initialize,
                   "heronbridge.runtime" in sys.modules])
'''


def test_under_plain_streamparse_the_state_is_an_ordinary_dict(tmp_path):
    """streamparse_run and pystorm's own loop over real pipes, as Storm runs a component:
    `self.state` is there, empty, in initialize; nothing of the runtime is loaded."""
    (tmp_path / "counter.py").write_text(COUNTER)
    handshake = {"conf": {}, "pidDir": str(tmp_path), "context": {
        "taskid": 3, "componentid": "count", "task->component": {"3": "count"}}}
    tuples = [{"id": str(i), "comp": "split", "stream": "default", "task": 2, "tuple": [w]}
              for i, w in enumerate(["a", "b", "a"])]
    stdin = "".join(json.dumps(m) + "\nend\n" for m in [handshake, *tuples])
    done = subprocess.run([sys.executable, "-m", "streamparse.run", "counter.Counter"],
                          input=stdin, capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr  # pystorm's exit when Storm goes away
    messages = [json.loads(m) for m in done.stdout.split("\nend\n") if m.strip()]
    emits = [m["tuple"] for m in messages if m.get("command") == "emit"]
    assert emits == [["a", 1, 1, {}, False], ["b", 1, 2, {}, False], ["a", 2, 3, {}, False]]
    assert [m["id"] for m in messages if m.get("command") == "ack"] == ["0", "1", "2"]


class Base:
    """A stand-in for pystorm's Component, whose constructor takes its streams."""

    def __init__(self, *args, **kwargs):
        self.args = (args, kwargs)


class Recorder(StatefulMixin, Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.saves = []

    def pre_save(self, checkpoint_id):
        self.saves.append(checkpoint_id)
        self.state["last"] = checkpoint_id


def test_init_state_keeps_the_runtimes_dict_and_before_save_calls_pre_save():
    component = Recorder(1, serializer="json")
    assert component.args == ((1,), {"serializer": "json"})  # passed on to the component
    assert component.state == {} and is_stateful(component)
    assert not is_stateful(object())
    held = {"offset": 7}
    component.init_state(held)
    assert component.state is held
    before_save(component, held, "c-1")
    assert component.saves == ["c-1"] and held == {"offset": 7, "last": "c-1"}
    # A rebound state is what the component means: the runtime's dict is made to hold it.
    component.state = {"offset": 9}
    before_save(component, held, "c-2")
    assert held == {"offset": 9, "last": "c-2"} and component.state is not held
    component.state, component.pre_save = 3, lambda checkpoint_id: None
    with pytest.raises(ShimError, match=r"component 'Recorder', task None: expected "
                       r"`self.state` to be a dict at checkpoint 'c-3', received int"):
        before_save(component, held, "c-3")


def test_herons_reliability_mode_in_a_topology_config_reaches_the_runtime(tmp_path):
    plan = load_project(EXAMPLE, None, None, {}, False, tmp_path / "a").plan
    assert plan.config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
    assert plan.config["topology.stateful.checkpoint.interval.secs"] == 5
    options = {"topology.reliability.mode": "ATMOST_ONCE"}  # as `-o` gives it
    plan = load_project(EXAMPLE, None, None, options, False, tmp_path / "b").plan
    assert plan.config["topology.reliability.mode"] == "ATMOST_ONCE"
    # What cannot be checkpointed is refused before anything starts: a subprocess's
    # state, a class whose threads emit beside the task's loop.
    with pytest.raises(CompatError, match=r"topology 'stateful_wordcount': EFFECTIVELY_ONCE "
                       r"checkpoints components that their task calls in its own process; "
                       r"\['count', 'lines', 'split'\] run as multilang subprocesses "
                       r"\(--multilang\); expected"):
        load_project(EXAMPLE, None, None, {}, True, tmp_path / "c")
    assert load_project(EXAMPLE, None, None, options, True, tmp_path / "d").plan
    once = {"topology.reliability.mode": "EFFECTIVELY_ONCE"}
    with pytest.raises(CompatError, match=r"topology 'ticks': .*; \['timed'\] run threads "
                       r"of their own; expected Python components without threads"):
        load_project(PROJECT, "ticks", None, once, False, tmp_path / "e")


@pytest.mark.compat("api/stateful bolts", on="multilang")
@pytest.mark.xfail(strict=True, raises=CompatError,
                   reason="a multilang child's state is not its task's: EFFECTIVELY_ONCE "
                          "refuses components run as subprocesses")
def test_a_stateful_project_runs_effectively_once_with_multilang(tmp_path):
    plan = load_project(EXAMPLE, None, None, {}, True, tmp_path).plan
    assert plan.config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"


def test_the_migrated_stateful_project_stays_effectively_once(tmp_path):
    """The codemod keeps a topology's own reliability mode (its counts under kills:
    tests/faults/test_effectively_once.py's migrated case)."""
    from heronbridge.compat.heronpy.loader import HOST_BOLT, STATEFUL_HOSTS
    from heronbridge.compat.projects import load_project as load_any
    from heronbridge.migrate.runner import migrate

    copy = tmp_path / "project"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    outcome = migrate(copy, jobs=1)
    assert outcome.changed and not outcome.failed, outcome.failed
    plan = load_any(copy, resources=tmp_path / "resources").plan
    assert plan.components["count"].class_path == STATEFUL_HOSTS[HOST_BOLT]  # heronpy's now
    assert plan.config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"


def test_a_class_that_needs_pystorms_own_loop_is_refused_under_effectively_once():
    """Its threads may emit beside the task's loop, which a rollback rebuilds between
    two calls: the runtime cannot checkpoint it."""
    def hosted(mode: str) -> PystormComponent:
        component = PystormComponent()
        component.config = {keys.CLASS: "pystorm.bolt.TicklessBatchingBolt",
                            "topology.reliability.mode": mode}
        component.context = SimpleNamespace(topology_name="t", component_id="batch",
                                            task_id=3)
        return component

    assert hosted("ATLEAST_ONCE").owns_loop
    with pytest.raises(ShimError, match=r"topology 't', component 'batch', task 3: "
                       r"TicklessBatchingBolt needs pystorm's own loop \(it runs threads "
                       r"of its own\), which EFFECTIVELY_ONCE cannot checkpoint"):
        _ = hosted("EFFECTIVELY_ONCE").owns_loop


# -- the runtime's contract through the in-process hosts, on the in-memory topology ----


def words(rounds: int) -> Counter:
    return Counter({w: c * rounds for w, c in
                    Counter(w for line in LINES for w in WORD.findall(line.lower())).items()})


def records(out: Path, component: str) -> list[dict]:
    return [json.loads(line) for f in sorted(out.glob(f"{component}-*.jsonl"))
            for line in f.open()]


def final_counts(out: Path) -> dict[str, int]:
    final: dict[str, int] = {}
    for r in records(out, "count"):
        if "word" in r:
            final[r["word"]] = max(final.get(r["word"], 0), r["count"])
    return final


START = Task.start_component


def stateful_topology(tmp_path: Path, states: dict[int, dict], monkeypatch,
                      project: Path = EXAMPLE, **options) -> InMemoryTopology:
    """A project on the in-memory topology, each task given `states[task]` through
    `init_state` before its open/prepare, as the runtime does under checkpoints. (Acks
    are off, as under EFFECTIVELY_ONCE.)"""
    resources = tmp_path / "resources"
    if not resources.exists():
        shutil.copytree(project / "src", resources)
    opts = {"topology.reliability.mode": "ATMOST_ONCE", "example.output.dir": str(tmp_path /
            "out"), "stateful_wordcount.lines_per_sec": 10**6, **options}
    plan = load_project(project, None, None, opts, False, resources).plan

    def start_with_state(runner: Task) -> None:
        runner.user.init_state(states.setdefault(runner.task, {}))
        START(runner)

    monkeypatch.setattr(Task, "start_component", start_with_state)
    return InMemoryTopology(plan)


def checkpoint(topo: InMemoryTopology, states: dict[int, dict], checkpoint_id: str) -> dict:
    """What the runtime does for one checkpoint: pre_save, then pickle each task's dict."""
    saved = {}
    for task, runner in topo.tasks.items():
        runner.user.pre_save(checkpoint_id)
        saved[task] = pickle.dumps(states[task])
    return saved


def pystorm_handlers() -> list[logging.Handler]:
    return [h for name in ("", "heronbridge") for h in logging.getLogger(name).handlers
            if type(h).__module__.startswith(("pystorm", "logging.handlers"))]


def test_a_rollback_restores_every_task_and_the_counts_come_out_exact(tmp_path, monkeypatch):
    """Run, checkpoint, run on (work the rollback discards), then a NEW instance of every
    component, in this same process, given the checkpoint's state: the spout rewinds to
    its saved offset, the counters count on from their saved counts, exactly."""
    out, stdout = tmp_path / "out", sys.stdout
    states: dict[int, dict] = {}
    topo = stateful_topology(tmp_path, states, monkeypatch, **{"pystorm.log.path": str(out)})
    handlers = len(pystorm_handlers())
    topo.run(250)
    counters = [r.user._component for r in topo.tasks.values() if r.component == "count"]
    seen = []
    counters[0].pre_save = seen.append  # the user's hook, on the instance
    saved = checkpoint(topo, states, "ckpt-1")
    assert seen == ["ckpt-1"]
    # A plain component takes part, saving nothing.
    assert all(states[r.task] == {} for r in topo.tasks.values() if r.component == "split")
    spout = next(r for r in topo.tasks.values() if r.is_spout)
    assert pickle.loads(saved[spout.task]) == {"offset": 250}
    counted_at_checkpoint = sum(sum(pickle.loads(saved[r.task]).values())
                                for r in topo.tasks.values() if r.component == "count")
    assert counted_at_checkpoint == sum(len(WORD.findall(line.lower())) for line in LINES) + \
        sum(len(WORD.findall(line.lower())) for line in LINES[:50])
    topo.run(100)  # lost in the rollback below

    states = {task: pickle.loads(data) for task, data in saved.items()}
    again = stateful_topology(tmp_path, states, monkeypatch, **{"pystorm.log.path": str(out)})
    assert all(r.user._component is not old.user._component
               for r, old in zip(again.tasks.values(), topo.tasks.values(), strict=True))
    again.run(400)
    assert final_counts(out) == words(3)
    starts = [r["offset"] for r in records(out, "lines")]
    assert starts == [0, 250]
    restored = [r["restored"] for r in records(out, "count") if r.get("event") == "start"]
    assert sorted(restored)[:2] == [0, 0] and sum(restored) == counted_at_checkpoint
    # The first instances' log handlers went with them: one set, not two; stdout is the
    # process's own (pystorm swaps it only when it writes its protocol there).
    assert len(pystorm_handlers()) == handlers
    assert sys.stdout is stdout


def batching_checkpoint(tmp_path: Path, monkeypatch) -> tuple[dict, dict, list]:
    """The batching example run for 20 records (no tick yet: all in batches), then
    checkpointed: (each task's saved blob, the states, the `totals` tasks)."""
    states: dict[int, dict] = {}
    topo = stateful_topology(tmp_path, states, monkeypatch, BATCHING)
    topo.run(20, batch=5)
    return checkpoint(topo, states, "ckpt-1"), states, \
        [r for r in topo.tasks.values() if r.component == "totals"]


RECORDS = [["abcde"[i % 5], (i * 37 + 11) % 100] for i in range(20)]


def test_a_batching_bolts_pending_batches_are_saved_and_fed_again_after_a_rollback(
        tmp_path, monkeypatch):
    """Tuples a BatchingBolt holds in batches at a checkpoint are past every spout's
    saved offset: the host saves them with the task's state, and puts them back into the
    new instance's batches, whose next ticks process them."""
    out = tmp_path / "out"
    saved, _, totals = batching_checkpoint(tmp_path, monkeypatch)
    held = [pickle.loads(saved[r.task]) for r in totals]
    # Saved under the values the fields grouping (on `category`) hashes.
    assert {k for state in held for k in state} == {PendingKey([c]) for c in "abcde"}
    assert all(PendingKey(["a"]) != k for k in ["a", ("a",), ["a"]])
    assert sorted(t[4] for state in held for ts in state.values() for t in ts) == \
        sorted(RECORDS)
    assert not records(out, "totals")

    states = {task: pickle.loads(data) for task, data in saved.items()}
    again = stateful_topology(tmp_path, states, monkeypatch, BATCHING)
    assert not any(states[r.task] for r in again.tasks.values())  # none left for the bolt
    for runner in again.tasks.values():
        if runner.component == "totals":
            for _ in range(2):  # BatchingBolt processes its batches from the second tick
                runner.user.execute(tick_tuple(1))
            runner.flush()
    got = Counter()
    for r in records(out, "totals"):
        got[r["category"]] += r["sum"]
    assert got == Counter({c: sum(v for k, v in RECORDS if k == c) for c in "abcde"})
    processed = checkpoint(again, states, "ckpt-2")
    assert all(pickle.loads(processed[r.task]) == {} for r in totals)


def test_pending_batches_follow_their_key_to_a_new_parallelism(tmp_path, monkeypatch):
    """Repartitioned by the runtime for 3 tasks instead of 2, each new task's pending
    tuples are those the fields grouping now routes to it."""
    saved, _, totals = batching_checkpoint(tmp_path, monkeypatch)
    storage = CheckpointStorage(str(tmp_path / "checkpoints"), "batching", b"k" * 32)
    for runner in totals:
        storage.save("ckpt-1", "totals", runner.task, saved[runner.task])
    seen = []
    for index in range(3):
        component = PystormComponent()
        component.init_state(restored_state(storage, "ckpt-1", "totals", index, 3, True))
        values = [t[4] for t in component._pending]
        assert all(key_partition(category, 3) == index for category, _ in values)
        seen += values
    assert sorted(seen) == sorted(RECORDS)
