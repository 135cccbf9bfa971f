"""Every example scenario, on Apache Storm and on the runtime: every check that applies
passes (or differs only where the scenario declares why), and the report is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.conform import conform
from heronbridge.conformance.report import verdict_table, write_html, write_json

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

EARLIER: dict[Path, Path] = {}  # scenario -> the run dir of its test above, this session
SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"
                    / "scenarios").glob("*.yaml"))
# A scenario's two tests run on one xdist worker (--dist loadgroup), the migrated one after
# the other: it reuses the Storm run the first left in EARLIER.
PER_SCENARIO = [pytest.param(p, id=p.stem, marks=pytest.mark.xdist_group(f"scenario-{p.stem}"))
                for p in SCENARIOS]
# The compatibility-matrix rows each scenario exercises: a passing run shows them on Storm
# and on the runtime alike (and, migrated, in heronpy, where the scenario loads there).
SPOUT_BOLT = ("api/spouts", "api/bolts")
RELIABLE = ("api/ReliableSpout", "api/anchoring", "api/ack", "api/fail")
SHELL = ("multilang/handshake", "multilang/tuple (to a bolt)", "multilang/emit (from a component)",
         "multilang/ack (from a component)", "multilang/log (from a component)",
         "multilang/sync (from a component)", "multilang/heartbeat (to a bolt)")
FEATURES: dict[str, tuple[str, ...]] = {
    "attributes": SPOUT_BOLT,
    "batching": ("api/BatchingBolt", "api/tick tuples"),
    "direct": ("api/direct emits", "grouping/direct", "api/task ids (need_task_ids)"),
    "multistream": ("api/named streams", "grouping/fields", "grouping/shuffle"),
    "reliable": RELIABLE,
    "reliable-injected-fails": RELIABLE,
    "reliable-timeouts": ("api/ReliableSpout", "api/message timeouts"),
    "replays": ("api/anchoring", "api/fail", "grouping/shuffle"),
    "rtac": ("grouping/shuffle", "grouping/fields"),
    "shellbolt": ("api/ShellBolt (a non-Python bolt)",),
    "wordcount": (*SPOUT_BOLT, "grouping/fields", "grouping/shuffle"),
    "wordcount-random": (*SPOUT_BOLT, "grouping/fields"),
}
MIGRATED = ("heronpy/Spout and Bolt", "heronpy/TopologyBuilder and Topology")
NOT_IN_HERONPY = {"direct", "shellbolt"}  # the migrated copy refuses to load (HB006, HB007)


def matrix(path: Path, migrated: bool) -> list:
    rows = FEATURES[path.stem]
    if not migrated:
        marks = [pytest.mark.compat(*rows, on=("storm", "inprocess"))]
        if path.stem == "shellbolt":  # Storm's ShellBolt, and the runtime's, speak multilang
            marks.append(pytest.mark.compat(*rows, *SHELL, on=("storm", "multilang")))
        return marks
    if path.stem in NOT_IN_HERONPY:
        return []
    # The codemod's output is heronpy's Spout, Bolt and TopologyBuilder, its groupings too.
    heronpy = [*MIGRATED, *(("heronpy/groupings",) if any(r.startswith("grouping/") for r in rows)
                            else ())]
    return [pytest.mark.compat(*rows, *heronpy, on="heronpy")]


def per_scenario(migrated: bool) -> list:
    return [pytest.param(p.values[0], id=p.id, marks=[*p.marks, *matrix(p.values[0], migrated)])
            for p in PER_SCENARIO]


def table(outcome) -> str:
    from rich.console import Console

    console = Console(width=220, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(verdict_table(outcome))
    return console.export_text()


def fails(said: str) -> int:
    """The spout's fail callbacks in a delivery verdict's text ("...; 3 replays, 5 fails")."""
    found = re.search(r"\b(\d[\d,]*) fails\b", said)
    assert found, said
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize("path", per_scenario(migrated=False))
def test_the_example_conforms(path, tmp_path_factory, spark, storm_home, storm_install):
    scenario = scenarios.load(path)
    tmp_path = tmp_path_factory.mktemp(path.stem)  # kept: the migrated test reuses Storm's run
    outcome = conform(scenario, tmp_path / "run", spark=spark, home=storm_home)
    EARLIER[path] = tmp_path / "run"
    assert outcome.ok, table(outcome)
    for run in outcome.runs.values():
        assert 0 < run.startup < run.seconds, run
    checks = {v.check for v in outcome.verdicts}
    assert {"run", "parity"} <= checks, table(outcome)
    if path.stem.startswith("wordcount"):  # an endless spout, stopped by the run's bound
        assert all(r.stopped == r.spout_tasks > 0 for r in outcome.runs.values()), outcome.runs
    if scenario.faults:
        # The faults hit: the spout saw fails on both systems.
        delivery = next(v for v in outcome.verdicts if v.check == "delivery")
        assert fails(delivery.storm) > 0 and fails(delivery.runtime) > 0, table(outcome)
    report = write_html(outcome)
    assert report.is_file() and report.parent == tmp_path / "run"
    write_json(outcome, tmp_path / "verdicts.json")
    saved = json.loads((tmp_path / "verdicts.json").read_text())
    assert saved["ok"] is True and len(saved["verdicts"]) == len(outcome.verdicts)


@pytest.mark.parametrize("path", per_scenario(migrated=True))
def test_the_migrated_example_conforms(path, tmp_path, spark, storm_home, storm_install):
    """The project migrated to heronpy by the codemod, on the runtime, against the
    original on Storm: the same verdicts, or divergences its TODO markers explain."""
    scenario = scenarios.load(path)
    earlier = EARLIER.get(path)
    if earlier is None:  # this scenario's Storm side was not run in this session yet
        earlier = tmp_path / "storm-run"
        conform(scenario, earlier, spark=spark, home=storm_home)
    outcome = conform(scenario, tmp_path / "run", spark=spark, home=storm_home,
                      migrated=True, storm_from=earlier)
    assert outcome.ok, table(outcome)
    assert outcome.migration.changed and not outcome.migration.failed
    marked = {e.rule for e in outcome.migration.todos}
    assert {d.marker for d in scenario.migrated_divergences} <= marked
