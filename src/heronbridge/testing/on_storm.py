"""`complete_topology` on Apache Storm 2.8's local mode, through the conformance suite's
machinery (its Storm install, Flux topology and tracing hook), for the pytest plugin's
`--on-storm`: the same test, and Storm agrees.

Each mocked spout becomes `storm_spout.StormMockedSpout` in the Flux topology, with one
task and the streams it declared; the run ends when the traces show every tree settled
and the topology quiet. The Result is read from the traces (emits, acks, fails, ticks)
and from Storm's log (the lines each component logged). Time is Storm's own wall clock:
`seconds` keeps the topology running that long after its last activity.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import TestingError
from .mocked import MOCKED, mocked_input
from .result import ComponentRecord, Result

STORM_CLASS = "heronbridge.testing.storm_spout.StormMockedSpout"
QUIET = 3.0  # seconds without activity that end a run, besides the test's `seconds`
# pystorm's prefix on the records it sends to Storm (pystorm.log.format's default).
PYSTORM_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - \S+ - ")


class _MockedFlux:
    """A streamparse Topology class whose Flux topology runs the mocked spouts."""

    def __init__(self, topology: Any, mocked: set[str]) -> None:
        self.topology = topology
        self.mocked = mocked

    def to_flux_dict(self, name: str) -> dict[str, Any]:
        flux = copy.deepcopy(self.topology.to_flux_dict(name))
        for spout in flux.get("spouts", []):
            if spout["id"] in self.mocked:
                argv = spout["constructorArgs"][0]
                words = str(argv[1]).split()
                argv[1] = " ".join([*words[:-1], STORM_CLASS])
                spout["parallelism"] = 1
        return flux

    def __getattr__(self, name: str) -> Any:
        return getattr(self.topology, name)


def complete_on_storm(source: Any, name: str | None = None, *,
                      mocked_sources: Mapping[str, Any] | None = None,
                      config: dict[str, Any] | None = None, env: str | None = None,
                      seconds: float = 0.0, workdir: str | Path,
                      home: Path | None = None, timeout: float = 300.0) -> Result:
    """Run a streamparse project on Storm's local mode until its trees settle."""
    from heronbridge.compat.streamparse import load_project, topology_name
    from heronbridge.conformance.scenario import Scenario
    from heronbridge.conformance.storm import fetch, run_on_storm

    root = Path(source) if isinstance(source, (str, Path)) else None
    if root is None or not (root / "config.json").is_file():
        msg = ("Storm runs streamparse projects: expected a project folder (with a "
               f"config.json) for --on-storm, received {source!r}")
        raise TestingError(msg)
    root = root.resolve()
    run_dir = Path(workdir) / "storm-run"
    name = topology_name(root, name)
    probe = load_project(root, name, env, dict(config or {}), False,
                         run_dir / "probe" / "resources")
    mocked = {spout: mocked_input(probe.plan, spout, given)
              for spout, given in (mocked_sources or {}).items()}
    options = {**(config or {}), **({MOCKED: mocked} if mocked else {})}
    scenario = Scenario(name=f"{name}-test", project=root, topology=name, environment=env,
                        config=options, tuples=None, seconds=None, timeout=timeout,
                        quiet=QUIET + seconds)
    project = load_project(root, name, env, scenario.storm_options(), False,
                           run_dir / "storm" / "resources")
    project.topology = _MockedFlux(project.topology, set(mocked))
    run = run_on_storm(project, scenario, run_dir, install=fetch(home))
    if not run.finished:
        raise TestingError(run.explanation)
    spouts = {c for c, spec in project.plan.components.items() if spec.is_spout}
    result = read_traces(name, list(project.plan.components), run_dir / "storm" / "traces",
                         spouts)
    for component, line in shell_logs(run.java_log):
        if component in result.components:
            result.components[component].logs.append(line)
    result.seconds = run.ended - run.started
    return result


def read_traces(topology: str, components: list[str], traces: Path,
                spouts: set[str]) -> Result:
    """A Result of one system's trace files."""
    from heronbridge.conformance.trace import schema, tracefile

    records = {c: ComponentRecord() for c in sorted(components)}
    events: list[dict[str, Any]] = []
    for path in tracefile.files(traces):
        events += tracefile.read(path)
    events.sort(key=lambda e: (e["t"], e["component"], e["task"], e["seq"]))
    received: dict[tuple[str, int, str], Any] = {}  # (component, task, id) -> values
    held: dict[tuple[str, int, str], Any] = {}  # ... the same, kept after their ack
    for event in events:
        record = records.get(event["component"])
        if record is None:
            continue
        ev, key = event["ev"], (event["component"], event["task"], event.get("id"))
        if ev == schema.RECV:
            if event["stream"] == schema.TICK_STREAM and event["src"] == schema.SYSTEM_COMPONENT:
                record.ticks += 1
            else:
                received[key] = held[key] = json.loads(event["values"])
        elif ev == schema.EMIT:
            record.emitted.setdefault(event["stream"], []).append(json.loads(event["values"]))
            if event["component"] not in spouts:  # a bolt's anchors: input tuple ids
                where = (event["component"], event["task"])
                record.anchors.setdefault(event["stream"], []).append(
                    [held[(*where, a)] for a in event["anchors"] if (*where, a) in held])
        elif ev in (schema.ACK, schema.FAIL) and key in received:
            (record.acked if ev == schema.ACK else record.failed).append(received.pop(key))
        elif ev in (schema.SPOUT_ACK, schema.SPOUT_FAIL):
            msg_id = json.loads(event["msg_id"]) if event["msg_id"] is not None else None
            (record.acked if ev == schema.SPOUT_ACK else record.failed).append(msg_id)
    return Result(topology, records, system="storm")


def shell_logs(java_log: Path) -> list[tuple[str, str]]:
    """(component, message) of each line a multilang component logged through Storm."""
    from heronbridge.conformance.storm.traps import SHELL_LOG

    found = []
    try:
        text = java_log.read_text(errors="replace")
    except OSError:
        return found
    for line in text.splitlines():
        at = line.find("ShellLog pid:")
        match = SHELL_LOG.match(line[at:]) if at >= 0 else None
        if match:
            found.append((match["component"], PYSTORM_PREFIX.sub("", match["msg"])))
    return found
