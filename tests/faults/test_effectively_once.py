"""Effectively once under fire: a word count in three containers, EFFECTIVELY_ONCE with a
checkpoint every second, SIGKILLed at random moments (a counting task, a stream manager
or a whole container, the master's included), each kill waited out until the topology
processes again. Every word's final count equals the input's exactly, in each of the
three APIs a stateful word count can be written in, and in the streamparse one migrated to
heronpy by the codemod: five kills each at CI's size, ten with
HERONBRIDGE_FAULTS_SIZE=full. The seed is printed; set HERONBRIDGE_FAULTS_SEED to run the
same kills again."""

from __future__ import annotations

import os
import random

import pytest
from checkpointkit import ExactRun, heronpy, migrated, runtime_api, streamparse
from suite import size

pytestmark = [pytest.mark.faults, pytest.mark.integration]

KILLS = 10 if size() == "full" else 5
CASES = {  # api: (its word count, kills)
    "runtime-api": (lambda tmp, home: runtime_api(tmp, lines=40_000), KILLS),
    "heronpy": (lambda tmp, home: heronpy(tmp, lines=40_000), KILLS),
    "streamparse": (lambda tmp, home: streamparse(tmp, rounds=200, home=home), KILLS),
    "migrated": (lambda tmp, home: migrated(tmp, rounds=200, home=home), KILLS),
}
ON = {"migrated": "heronpy"}  # the matrix's column of each case (default: in-process)


@pytest.mark.parametrize("api", [
    pytest.param(api, marks=pytest.mark.compat(
        "api/stateful bolts",
        *(["heronpy/stateful components"] if api == "migrated" else
          ["config/topology.reliability.mode"]),
        on=ON.get(api, "inprocess"))) for api in CASES])
def test_every_count_is_exact_after_random_kills(home, state, tmp_path, api, capsys):
    build, kills = CASES[api]
    seed = int(os.environ.get("HERONBRIDGE_FAULTS_SEED") or random.randrange(1 << 30))
    with capsys.disabled():
        print(f"\n{api}: seed {seed} (HERONBRIDGE_FAULTS_SEED={seed} repeats these kills)")
    run = ExactRun(build(tmp_path, home), home, state, seed)
    with run.running:
        counted = run.run(kills)
        rollbacks = run.rollbacks()
    with capsys.disabled():
        print(run.summary())
    assert len(run.kills) == kills
    assert rollbacks >= kills + 1, run.summary()  # the first start's, then one a kill
    extra = {w: counted[w] - n for w, n in run.count.expected.items() if counted[w] != n}
    assert counted == run.count.expected, f"counted minus expected: {extra}"
