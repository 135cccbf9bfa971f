"""`heronbridge conform` on the Kafka word count (examples/storm_topologies/kafka_wordcount):
Storm with storm-kafka-client's KafkaSpout against the runtime with heronbridge's Python
Kafka spout (through the command line, a scenario file and --storm-from), and against the
runtime with storm-kafka-client's spout as a Java task; both comparisons give the same
verdicts, every check passing. The broker is the session's, the
topic filled here (four partitions, a spout task's two of them read to their end)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml
from kafkakit import create_topics, lines, produce, unique

from heronbridge.cli import build_parser
from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.kafka import storm_kafka

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / \
    "kafka_wordcount"
PARTITIONS = 4
SPOUT_TASKS = 2
LINES = 2000  # a spout task reads two partitions: LINES / 2 records
# The example with storm-kafka-client's spout in place of the Python one: same component
# name, parallelism and tuple (topic, partition, offset, key, value).
JAVA_TOPOLOGY = '''"""The Kafka word count, its spout storm-kafka-client's KafkaSpout."""

from streamparse import Grouping, JavaSpout, Topology

from bolts.sink import CountSink
from bolts.words import CountBolt, SplitBolt


class KafkaWordCountJava(Topology):
    lines = JavaSpout.spec(
        name="lines", full_class_name="heronbridge.jvm.kafka.JsonKafkaSpout",
        args_list=[{config!r}], outputs={fields!r}, par={tasks})
    split = SplitBolt.spec(inputs={{lines: Grouping.SHUFFLE}}, par=2)
    count = CountBolt.spec(inputs={{split: Grouping.fields("word")}}, par=2)
    sink = CountSink.spec(inputs={{count: Grouping.SHUFFLE}}, par=1,
                          config={{"kafka.bolt.key.field": "word",
                                  "kafka.bolt.message.field": "count"}})
'''


@pytest.fixture(scope="module")
def spark():
    """Spark for the analysis, stopped after this module (the session's would keep its
    JVM beside the fault tests that follow)."""
    from heronbridge.conformance.analysis import session

    made = session("local[2]")
    yield made
    made.stop()


def table(outcome) -> str:
    from rich.console import Console

    console = Console(width=220, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    from heronbridge.conformance.report import verdict_table

    console.print(verdict_table(outcome))
    return console.export_text()


def verdicts(outcome) -> dict[tuple[str, str], str]:
    return {(v.check, v.subject): v.verdict for v in outcome.verdicts}


@pytest.mark.compat("cli/heronbridge conform")
@pytest.mark.timeout(1500)
def test_kafka_word_count_conforms_with_storm_kafka_client(kafka, host_jar, storm_home,
                                                          spark, tmp_path):
    from heronbridge.conformance.conform import conform

    bootstrap = kafka.bootstrap_servers
    source, sink = unique("conform-lines"), unique("conform-counts")
    create_topics(bootstrap, {source: PARTITIONS, sink: 1})
    produce(bootstrap, source, lines(LINES, seed=5), PARTITIONS)
    project = tmp_path / "kafka_wordcount"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    jars = tmp_path / "jars"  # storm-kafka-client and kafka-clients, on both systems
    jars.mkdir()
    for jar in storm_kafka.jars(storm_home):
        (jars / jar.name).symlink_to(jar)

    def java_topology(run: str) -> str:
        """storm-kafka-client's spout from the topic's start, a consumer group per run."""
        config = json.dumps({"bootstrap.servers": bootstrap, "topics": [source],
                             "group.id": unique(f"conform-{run}"),
                             "first.poll.offset.strategy": "EARLIEST"})
        name = f"kafka_wordcount_java_{run}"
        (project / "topologies" / f"{name}.py").write_text(JAVA_TOPOLOGY.format(
            config=config, fields=storm_kafka.FIELDS, tasks=SPOUT_TASKS))
        return name

    config = {"kafka.bootstrap.servers": bootstrap, "kafka.spout.topics": source,
              "kafka.bolt.topic": sink, "kafka.spout.first.poll.offset.strategy": "EARLIEST",
              "kafka.spout.group.id": unique("conform-python")}
    # A run ends after `quiet` seconds without trace activity: a Java spout task's first
    # poll (kafka-clients' classes loaded on a loaded host) came more than 5 s after
    # its activation.
    base = dataclasses.replace(scenarios.default(project), config=config,
                               tuples=LINES // SPOUT_TASKS, timeout=300.0, quiet=20.0)
    storm_run = tmp_path / "storm-kafka-client"
    with_java = conform(dataclasses.replace(base, name="kafka-wordcount-java",
                                            topology=java_topology("storm")),
                        storm_run, spark=spark, home=storm_home, java_jars=jars)
    # The same comparison as a user asks for it; the verb's analysis takes the active
    # Spark session.
    scenario = tmp_path / "python-spout.yaml"
    scenario.write_text(yaml.safe_dump({
        "name": "kafka-wordcount-python", "project": str(project),
        "topology": "kafka_wordcount", "config": config, "tuples": base.tuples,
        "timeout": base.timeout, "quiet": base.quiet}))
    report = tmp_path / "python-spout.json"
    args = build_parser().parse_args([
        "conform", "--scenario", str(scenario), "--home", str(storm_home),
        "--out", str(tmp_path / "python-spout"), "--java-jars", str(jars),
        "--storm-from", str(storm_run), "--json", str(report)])
    status = args.func(args)
    with_python = json.loads(report.read_text())
    python_verdicts = {(v["check"], v["subject"]): v["verdict"]
                       for v in with_python["verdicts"]}
    assert with_java.ok, table(with_java)
    assert status == 0 and with_python["ok"], json.dumps(with_python["verdicts"], indent=1)
    assert python_verdicts == verdicts(with_java), \
        f"{table(with_java)}\n{json.dumps(with_python['verdicts'], indent=1)}"
    found = verdicts(with_java)
    for stream in ("lines/default", "split/default", "count/default"):
        assert found[("parity", stream)] == "pass", table(with_java)
    assert found[("delivery", "lines")] == "pass", table(with_java)
    assert f"{LINES:,} acked" in next(v.storm for v in with_java.verdicts
                                      if (v.check, v.subject) == ("delivery", "lines"))
