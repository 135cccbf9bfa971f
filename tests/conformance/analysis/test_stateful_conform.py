"""A stateful topology on Apache Storm (at least once: Storm has no effectively-once for
Python components) and on the runtime under EFFECTIVELY_ONCE with a counting task killed
mid-run: the runtime's final counts are exact after its rollback, Storm's overcount after
its replays, and the report says both without calling either a failure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.analysis import PASS
from heronbridge.conformance.analysis.run import REWINDS, STATE_PARITY
from heronbridge.conformance.conform import conform
from heronbridge.conformance.report import write_html, write_json

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

SCENARIO = (Path(__file__).resolve().parents[3] / "examples" / "storm_topologies"
            / "stateful_replays" / "scenario.yaml")


@pytest.mark.compat("api/stateful bolts", on="storm",
                    partly="the mixin's code runs, its state in memory only: Storm checkpoints "
                           "no Python component, so its counts go over after replays")
def test_effectively_once_counts_exactly_where_storm_overcounts(tmp_path, spark, storm_home,
                                                                storm_install):
    outcome = conform(scenarios.load(SCENARIO), tmp_path / "run", spark=spark,
                      home=storm_home)
    said = "\n".join(f"{v.check} {v.subject} {v.verdict}: {v.storm} | {v.runtime} | "
                     f"{v.detail}" for v in outcome.verdicts)

    assert outcome.ok, said
    state = next(v for v in outcome.verdicts if v.check == "state")
    assert state.verdict == PASS, said
    # 5 rounds of 20 lines, 220 words a round, 140 distinct
    assert state.runtime.startswith("effectively once: exact: 140 keys, 1,100 counted"), said
    # the killed task's rollback, to a checkpoint taken before the kill
    rolled = re.search(r"after (\d+) rollbacks? \(([\d,]+) to a consistent checkpoint\)$",
                       state.runtime)
    assert rolled and int(rolled.group(1)) >= 1 and int(rolled.group(2)) >= 1, said
    # Each first sighting failed a line on Storm, which replayed and counted it again.
    assert state.storm.startswith("at least once: overcount: "), said
    assert "undercount" not in state.storm, said
    delivery = next(v for v in outcome.verdicts if v.check == "delivery")
    assert delivery.verdict == PASS and "re-emit" in delivery.runtime, said
    assert "replays" in delivery.storm, said
    assert REWINDS in outcome.notes and STATE_PARITY in outcome.notes
    assert any(n.startswith("state of count") and "Storm overcounts" in n
               for n in outcome.notes), outcome.notes

    write_json(outcome, tmp_path / "verdicts.json")
    saved = json.loads((tmp_path / "verdicts.json").read_text())
    assert saved["ok"] is True and REWINDS in saved["notes"]
    assert "Storm overcounts" in write_html(outcome).read_text()
