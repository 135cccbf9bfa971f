"""The javamix example (a Java spout -> a Python bolt -> a Java bolt -> a Python sink)
under `heronbridge conform`: on Apache Storm 2.8.3 and on the runtime, every task traced
(the Java ones by the JVM host's tracing wrappers, on both systems), every check passing,
with the runtime's Python components in-process and as multilang subprocesses."""

from __future__ import annotations

import pytest
from conftest import ROOT

from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.conform import conform
from heronbridge.conformance.report import verdict_table

pytestmark = [pytest.mark.jvm, pytest.mark.integration, pytest.mark.conformance]

JAVAMIX = ROOT / "examples" / "storm_topologies" / "javamix"


def table(outcome) -> str:
    from rich.console import Console

    console = Console(width=220, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(verdict_table(outcome))
    return console.export_text()


@pytest.fixture(scope="module")
def storm_run(tmp_path_factory):
    return tmp_path_factory.mktemp("javamix-storm") / "run"


@pytest.mark.parametrize("multilang", [False, True], ids=["inprocess", "multilang"])
def test_javamix_conforms_with_storm(multilang, storm_run, java_jars, spark, storm_home):
    scenario = scenarios.default(JAVAMIX, "javamix")
    earlier = storm_run if (storm_run / "storm" / "run.json").is_file() else None
    run_dir = storm_run if earlier is None else storm_run.parent / "multilang"
    outcome = conform(scenario, run_dir, multilang=multilang, spark=spark, home=storm_home,
                      java_jars=java_jars, storm_from=earlier)
    assert outcome.ok, table(outcome)
    verdicts = {(v.check, v.subject): v for v in outcome.verdicts}
    # every component's emits compared, the Java ones included, and each spout id's fate
    for stream in ("sentences/default", "split/default", "count/default"):
        assert verdicts[("parity", stream)].verdict == "pass", table(outcome)
    assert verdicts[("delivery", "sentences")].verdict == "pass", table(outcome)
    assert "100 acked" in verdicts[("delivery", "sentences")].storm, table(outcome)
    # the Java bolt ran as its spec says, two tasks on both systems
    assert "each on one task" in verdicts[("grouping", "split -> count (fields word)")].storm
