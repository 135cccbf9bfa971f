"""Scenarios are data: one YAML file names the project, what to change, what to break
and what to check.

    name: reliable-fails-every-7th        # default: the file's stem
    project: ../reliable                  # relative to this file
    topology: reliable                    # default: the project's only topology
    environment: prod                     # default: the project's only environment
    config:                               # Storm options on both systems
      topology.message.timeout.secs: 10
    input:                                # what the spouts read
      options: {reliable.count: 500}      #   options the project's spouts read
      files: {data/words.txt: words.txt}  #   files put over src/ (relative to this file)
    faults:                               # injected by the tracing hook, on both systems
      - {component: checker, kind: fail, every: 7}
      - {component: counter, task_index: 0, kind: exit, after: 100}
      - {component: count, kind: exit, after: 250, system: runtime}  # on one system only
    checks: [parity, grouping, delivery, order]   # default: every check that applies
    state:                                # a stateful topology's final state, on each
      component: count                    #   system, against the input's exact counts:
      key: word                           #   its emits carry a key and its count (the
      count: count                        #   last per key is the state at the end)
      input: {component: lines, field: line, split: "[a-z]+", lower: true}
                                          #   each distinct spout msg id's tuple once;
                                          #   keys: the field, or its regex matches
    delivery: strict                      # compare each spout id's history across the
                                          #   systems even after fails or replays (when
                                          #   the topology replays deterministically)
    divergences:                          # known differences, each with its reason
      - {check: parity, subject: "sink/*", reason: "..."}
    migrated:                             # when the runtime runs the codemod's copy:
      divergences:                        #   differences a TODO marker of that rule
        - {check: run, marker: HB006, reason: "..."}   # in the copy explains
    tuples: 5000                          # each spout task is asked for tuples until it
                                          #   has emitted this many (default DEFAULT_TUPLES;
                                          #   0: until it stops by itself) ...
    seconds: 30                           # ... or for this long (default: no limit)
    seed: 0                               # random (and numpy) seeded per task from this;
                                          #   false: not seeded
    timeout: 180                          # seconds each system may take, at most
    quiet: 5                              # seconds without trace activity that end a run
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from . import ConformanceError
from .trace import schema

CHECKS = ("parity", "grouping", "delivery", "order", "latency", "throughput")
STATE = "state"  # the final state: checked where the scenario's `state` says it shows
CHOSEN = (*CHECKS, STATE)  # what `checks` and divergences may name, besides RUN
RUN = "run"  # did each system finish the run: always checked, may carry a divergence
FAULT_KINDS = {"fail": "every", "drop": "every", "exit": "after"}
KEYS = ("name", "project", "topology", "environment", "config", "input", "faults", "checks",
        "delivery", "divergences", "migrated", "tuples", "seconds", "seed", "timeout",
        "quiet", "state")
DEFAULT_TUPLES = 10_000  # per spout task: a few seconds of tuples on Storm's local mode
DELIVERY_MODES = ("auto", "strict")  # auto: per-id histories compared only undisturbed


@dataclass(frozen=True)
class Divergence:
    check: str
    subject: str  # a glob over the verdict's subject
    reason: str
    system: str | None = None  # the system that departs, when one does
    marker: str | None = None  # migrated runs: the rule whose TODO marker explains it


@dataclass(frozen=True)
class StateSpec:
    """Where a stateful topology's state shows in the traces, and what it must count."""

    component: str  # keeps the state; emits (key, count) on `stream`
    key: str
    count: str
    source: str  # the spout whose distinct msg ids are the input
    field: str  # the field of its tuples that holds the keys
    split: str | None = None  # a regular expression: its matches in the field are keys
    lower: bool = False  # the field lowercased first
    stream: str = "default"
    source_stream: str = "default"


@dataclass
class Scenario:
    name: str
    project: Path
    topology: str | None = None
    environment: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # input options
    files: dict[str, Path] = field(default_factory=dict)  # src/-relative path -> file
    faults: list[dict[str, Any]] = field(default_factory=list)  # as schema.FAULTS says
    checks: tuple[str, ...] | None = None  # None: every check that applies
    delivery: str = "auto"  # one of DELIVERY_MODES
    state: StateSpec | None = None  # the final state to check, for a stateful topology
    divergences: list[Divergence] = field(default_factory=list)
    migrated_divergences: list[Divergence] = field(default_factory=list)
    tuples: int | None = DEFAULT_TUPLES  # None: spouts are asked until they stop
    seconds: float | None = None
    seed: int | None = 0  # None: random numbers are not seeded
    timeout: float = 180.0
    quiet: float = 5.0
    source: Path | None = None  # the YAML file, if any
    # Set by a run, not by the file: {spout: [emits per task index, None where the task
    # was not stopped]} of Storm's run, which the runtime's spouts then follow.
    counts: dict[str, list[int | None]] | None = None

    def faults_on(self, system: str) -> list[dict[str, Any]]:
        """The faults the tracing hook injects on `system`."""
        return [{k: v for k, v in f.items() if k != "system"} for f in self.faults
                if f.get("system") in (None, system)]

    def storm_options(self) -> dict[str, Any]:
        """What both systems get on top of the project's own options."""
        return {**self.options, **self.config}

    def bound(self) -> dict[str, Any]:
        """The tracing hook's bound option (trace/schema.BOUND)."""
        found = {"tuples": self.tuples, "seconds": self.seconds, "counts": self.counts}
        return {k: v for k, v in found.items() if v is not None}

    @property
    def bounded(self) -> bool:
        return self.tuples is not None or self.seconds is not None or bool(self.counts)


def input_files(files: Mapping[str, Path],
                error: type[ConformanceError] = ConformanceError) -> dict[str, Path]:
    """A scenario's input files as {src/-relative POSIX path: file}, checked by one rule
    for both systems: each path stays inside src/, each file exists."""
    checked = {}
    for rel, path in files.items():
        name = PurePosixPath(rel)
        if name.is_absolute() or ".." in name.parts:
            msg = (f"input file {rel!r}: expected a path inside the project's src/, "
                   "received one outside it")
            raise error(msg)
        if not Path(path).is_file():
            msg = f"input file {rel!r}: expected a file at {str(path)!r}, found none"
            raise error(msg)
        checked[name.as_posix()] = Path(path)
    return checked


def default(project: str | Path, topology: str | None = None) -> Scenario:
    """The scenario of a bare `heronbridge conform`: the project as it is, every check."""
    path = Path(project).resolve()
    return Scenario(name=topology or path.name, project=path, topology=topology)


def bounded(scenario: Scenario, tuples: int | None = None,
            seconds: float | None = None) -> Scenario:
    """`scenario` with the command line's bound over its own (0: no bound of that kind)."""
    where = f"scenario {scenario.name!r}"
    changes: dict[str, Any] = {}
    if tuples is not None:
        changes["tuples"] = _count(where, "--tuples", tuples, int)
    if seconds is not None:
        changes["seconds"] = _count(where, "--seconds", seconds, float)
    return replace(scenario, **changes)


def load(path: str | Path) -> Scenario:
    import yaml

    path = Path(path).resolve()
    where = f"scenario {str(path)!r}"
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        msg = f"{where}: cannot read it: {exc}"
        raise ConformanceError(msg) from exc
    except yaml.YAMLError as exc:
        msg = f"{where}: not valid YAML: {exc}"
        raise ConformanceError(msg) from exc
    if not isinstance(data, dict):
        _bad(where, "a mapping at the top", data)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        _bad(where, f"keys among {list(KEYS)}", unknown)
    if "project" not in data:
        _bad(where, "a 'project' (the streamparse project's folder)", None)
    base = path.parent
    inputs = _mapping(where, "input", data.get("input"))
    unknown = sorted(set(inputs) - {"options", "files"})
    if unknown:
        _bad(where, "input keys 'options' and 'files'", unknown)
    checks = data.get("checks")
    if checks is not None:
        if not isinstance(checks, list) or not all(c in CHOSEN for c in checks):
            _bad(where, f"checks: a list among {list(CHOSEN)}", checks)
        checks = tuple(checks)
    delivery = data.get("delivery", "auto")
    if delivery not in DELIVERY_MODES:
        _bad(where, f"delivery: one of {list(DELIVERY_MODES)}", delivery)
    return Scenario(
        name=str(data.get("name") or path.stem),
        project=(base / str(data["project"])).resolve(),
        topology=data.get("topology"),
        environment=data.get("environment"),
        config=_mapping(where, "config", data.get("config")),
        options=_mapping(where, "input.options", inputs.get("options")),
        files={str(k): (base / str(v)).resolve()
               for k, v in _mapping(where, "input.files", inputs.get("files")).items()},
        faults=[_fault(where, f) for f in data.get("faults") or []],
        checks=checks,
        delivery=delivery,
        state=_state(where, data.get("state")),
        divergences=[_divergence(where, d) for d in data.get("divergences") or []],
        migrated_divergences=_migrated(where, data.get("migrated")),
        tuples=_count(where, "tuples", data.get("tuples", DEFAULT_TUPLES), int),
        seconds=_count(where, "seconds", data.get("seconds"), float),
        seed=_seed(where, data.get("seed", 0)),
        timeout=float(data.get("timeout", 180)),
        quiet=float(data.get("quiet", 5)),
        source=path,
    )


def _count(where: str, key: str, value: Any, kind: type) -> Any:
    """A bound: a positive number, or None (0 and null: no bound)."""
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or \
            (kind is int and not float(value).is_integer()):
        _bad(where, f"{key}: a {'whole ' if kind is int else ''}number >= 0", value)
    return kind(value)


def _seed(where: str, value: Any) -> int | None:
    if value is False or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        _bad(where, "seed: a whole number, or false", value)
    return value


def _fault(where: str, fault: Any) -> dict[str, Any]:
    if not isinstance(fault, dict) or fault.get("kind") not in FAULT_KINDS:
        _bad(where, f"each fault a mapping with kind among {sorted(FAULT_KINDS)}", fault)
    count = FAULT_KINDS[fault["kind"]]
    allowed = {"component", "task_index", "kind", count, "system"}
    if not isinstance(fault.get("component"), str) or set(fault) - allowed:
        _bad(where, f"a {fault['kind']} fault with keys {sorted(allowed)} and a component",
             fault)
    if fault.get("system") not in (None, *schema.SYSTEMS):
        _bad(where, f"a fault's system among {list(schema.SYSTEMS)} (default: both)", fault)
    if not isinstance(fault.get(count), int) or fault[count] < 1:
        _bad(where, f"a {fault['kind']} fault's '{count}' to be a whole number >= 1", fault)
    if fault.get("task_index") is not None and not isinstance(fault["task_index"], int):
        _bad(where, "a fault's task_index to be a whole number (0 for the first task)", fault)
    found = {"component": fault["component"], "task_index": fault.get("task_index"),
             "kind": fault["kind"], count: fault[count]}
    return {**found, "system": fault["system"]} if fault.get("system") else found


def _state(where: str, value: Any) -> StateSpec | None:
    if value is None:
        return None
    state = _mapping(where, "state", value)
    source = _mapping(where, "state.input", state.get("input"))
    wanted = {"component", "key", "count"}
    if not wanted <= set(state) or set(state) - {*wanted, "stream", "input"} or \
            not {"component", "field"} <= set(source) or \
            set(source) - {"component", "field", "stream", "split", "lower"}:
        _bad(where, "state: {component, key, count, stream?, input: {component, field, "
             "stream?, split?, lower?}}", value)
    split = source.get("split")
    if split is not None:
        try:
            re.compile(str(split))
        except re.error as exc:
            _bad(where, f"state.input.split: a regular expression ({exc})", split)
    return StateSpec(component=str(state["component"]), key=str(state["key"]),
                     count=str(state["count"]), stream=str(state.get("stream", "default")),
                     source=str(source["component"]), field=str(source["field"]),
                     source_stream=str(source.get("stream", "default")),
                     split=None if split is None else str(split),
                     lower=bool(source.get("lower", False)))


def _divergence(where: str, item: Any) -> Divergence:
    if not isinstance(item, dict) or not {"check", "reason"} <= set(item) or \
            item["check"] not in (RUN, *CHOSEN):
        _bad(where, f"each divergence a mapping with a check among {[RUN, *CHOSEN]} and a "
             "reason", item)
    system = item.get("system")
    if system is not None and system not in schema.SYSTEMS:
        _bad(where, f"a divergence's system among {list(schema.SYSTEMS)}", item)
    return Divergence(item["check"], str(item.get("subject", "*")), str(item["reason"]),
                      system)


def _migrated(where: str, value: Any) -> list[Divergence]:
    migrated = _mapping(where, "migrated", value)
    if set(migrated) - {"divergences"}:
        _bad(where, "migrated: a mapping with 'divergences'", migrated)
    found = []
    for item in migrated.get("divergences") or []:
        divergence = _divergence(where, item)
        if not isinstance(item.get("marker"), str):
            _bad(where, "each migrated divergence to name the marker's rule (marker: HBnnn)",
                 item)
        found.append(replace(divergence, marker=item["marker"]))
    return found


def _mapping(where: str, key: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _bad(where, f"'{key}' to be a mapping", value)
    return dict(value)


def _bad(where: str, expected: str, received: Any) -> None:
    msg = f"{where}: expected {expected}, received {received!r}"
    raise ConformanceError(msg)
