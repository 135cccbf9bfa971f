"""Effectively once from Kafka to Kafka under fire: the word count over three containers,
SIGKILLs at random (spout task, bolt task, stream manager, whole container) and a
broker restart; every word's counts 1..N each exactly once in the count topic, as a
read_committed consumer sees it. $HERONBRIDGE_FAULTS_SIZE=full reads 1,000,000 lines
through ten kills on three brokers (the default, `ci`, 10,000 lines through three kills
on one); the seed is printed, and HERONBRIDGE_FAULTS_SEED repeats it."""

from __future__ import annotations

import os
import random

import pytest
from kafkafaults import KILLS, SIZES, KafkaExactRun
from kafkakit import exactly_once
from suite import size  # tests/faults, on the path once kafkafaults is imported

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


@pytest.mark.timeout(7200 if size() == "full" else 900)
def test_every_count_exactly_once_through_kills_and_a_broker_restart(
        request, home, state, tmp_path, capsys):
    # Three brokers for the full run; CI's restarts its one broker (a full stop).
    cluster = request.getfixturevalue("kafka3" if size() == "full" else "kafka")
    seed = int(os.environ.get("HERONBRIDGE_FAULTS_SEED") or random.randrange(1 << 30))
    with capsys.disabled():
        print(f"\nkafka word count: seed {seed} (HERONBRIDGE_FAULTS_SEED={seed} repeats it)")
    run = KafkaExactRun(home, state, tmp_path, cluster, SIZES[size()], seed)
    with run.running:
        records = run.run(KILLS[size()])
    with capsys.disabled():
        print(run.summary())
    assert len([e for e in run.events if e.what != "broker restart"]) == KILLS[size()]
    assert exactly_once(records, run.expected) == [], run.summary()
