"""Storm's own Java topologies on the runtime: a Java-only word count (tests/jvm/java's
jvmtests.stormjar, on javamix's components, its last grouping a serialized custom one)
submitted with `storm jar --jars --artifacts` (StormSubmitter: the jar uploaded, the
classes of its last bolt and of its grouping only in dependency jars it uploads to the
blob store, every component a serialized Java object) to `heronbridge nimbus`, counted
exactly, routed by Storm's fields hash, its blobs read back with `storm blobstore`, then
listed, rebalanced and killed with Storm's own command classes; and the same
jar run locally with `heronbridge run --jar`, its spout a ShellSpout and its split a
ShellBolt; and a Flux YAML topology of storm-client's Java test components, built by
Storm's Flux, submitted to `heronbridge nimbus` with `storm jar flux-core.jar
org.apache.storm.flux.Flux --remote` and run with `heronbridge run --flux`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, wait_until

from heronbridge.runtime.grouping.javahash import fields_index

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nimbus"))
from nimbuskit import (  # noqa: E402
    command_classpath,
    kill_with_storm,
    listed,
    running_nimbus,
    storm,
    storm28,
    storm_jar,
)

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
SPOUT = ROOT / "examples" / "storm_topologies" / "javamix" / "src" / "jvm" / "javamix" / \
    "SentenceSpout.java"
MAIN = "jvmtests.stormjar.WordCountTopology"
RESOURCES = Path(__file__).with_name("java") / "resources"  # the shell scripts, the Flux file
ROUNDS = 4
COUNT_TASKS = 2


def expected_counts() -> dict[str, int]:
    """Each word of SentenceSpout's text, times ROUNDS (SplitBolt's rule: runs of a-z)."""
    text = SPOUT.read_text()
    block = re.search(r"SENTENCES = \{(.*?)\};", text, re.S).group(1)
    counts: dict[str, int] = defaultdict(int)
    for sentence in re.findall(r'"([^"]*)"', block):
        for word in re.findall(r"[a-z]+", sentence.lower()):
            counts[word] += ROUNDS
    return dict(counts)


def recorded(out: Path) -> tuple[dict[str, int], dict[str, set[int]]]:
    """RecordBolt's lines: each word's highest count, and the count tasks (by index) it
    came from."""
    file = out / "counts.txt"
    counts: dict[str, int] = {}
    senders: dict[str, set[int]] = defaultdict(set)
    for line in file.read_text().splitlines() if file.is_file() else []:
        index, word, count = line.split()
        counts[word] = max(counts.get(word, 0), int(count))
        senders[word].add(int(index))
    return counts, senders


def split_jar(jar: Path, folder: Path) -> tuple[Path, Path, Path]:
    """`jar` in three: the topology's jar without RecordBolt and LowestTaskGrouping, a jar
    of RecordBolt (for --jars), and one of LowestTaskGrouping (an artifact's jar, as
    Storm's resolver hands it over)."""
    paths = [folder / "topology.jar", folder / "record.jar", folder / "grouping-1.0.jar"]
    with zipfile.ZipFile(jar) as source, zipfile.ZipFile(paths[0], "w") as rest, \
            zipfile.ZipFile(paths[1], "w") as record, zipfile.ZipFile(paths[2], "w") as grouping:
        for name in source.namelist():
            target = record if name.startswith("jvmtests/stormjar/RecordBolt") else \
                grouping if name.startswith("jvmtests/stormjar/LowestTaskGrouping") else rest
            target.writestr(name, source.read(name))
    return paths[0], paths[1], paths[2]


@pytest.fixture(scope="module")
def nimbus(tmp_path_factory, storm_home):
    """`heronbridge nimbus` whose home shares the suite's resolved Storm jars (its Java
    tasks' classpath), rather than resolving them again; one for the module's tests that
    submit to a Nimbus (starting one costs seconds)."""
    folder = tmp_path_factory.mktemp("nimbus")
    home = folder / "home"
    home.mkdir()
    (home / "storm").symlink_to(Path(storm_home) / "storm")
    with running_nimbus(home, folder / "nimbus.log") as endpoint:
        yield endpoint


@pytest.mark.compat("nimbus/createStateInZookeeper")
def test_storm_jar_word_count_listed_rebalanced_killed(nimbus, tmp_path, storm_install,
                                                        java_jars):
    classpath = command_classpath(storm_install)
    seeds = {"nimbus.seeds": '["127.0.0.1"]', "nimbus.thrift.port": nimbus.port}
    out = tmp_path / "out"
    jar, record, grouping = split_jar(java_jars / "components.jar", tmp_path)
    code, said = storm_jar(classpath, jar, MAIN, "javawords", str(out), str(ROUNDS),
                           jars=(record,), artifacts={"jvmtests:grouping:1.0": grouping},
                           **seeds)
    assert code == 0, said + nimbus.output()
    assert "Finished submitting topology: javawords" in said, said
    # StormSubmitter's keys: the --jars one made unique, the artifact's named by it.
    [key] = re.findall(r"Dependency Blob keys - jars : \[(dep-record-[-0-9a-f]{36}\.jar)\] / "
                        r"artifacts : \[dep-jvmtests-grouping-1\.0\.jar\]", said)
    # While the tasks start, the blobs as `storm blobstore` reads them: listed with their
    # ACL, a copy byte for byte.
    code, said = storm(classpath, "Blobstore", "list", **seeds)
    assert code == 0, said
    assert sorted(re.findall(r"(dep-\S+) \d+ \[(u:.*?)\]", said)) == \
        [("dep-jvmtests-grouping-1.0.jar", "u::rwa, o::r--"), (key, "u::rwa, o::r--")], said
    code, said = storm(classpath, "Blobstore", "cat", "-f", str(tmp_path / "copy.jar"), key,
                       **seeds)
    assert code == 0, said
    assert (tmp_path / "copy.jar").read_bytes() == record.read_bytes()

    [row] = listed(storm(classpath, "ListTopologies", **seeds)[1])
    assert row[:4] == ["javawords", "ACTIVE", "6", "1"] and row[5].startswith("javawords-")

    expected = expected_counts()
    wait_until(lambda: recorded(out)[0] == expected, 180, "every word counted",
               on_timeout=lambda: f"{recorded(out)[0]}\n{nimbus.output()}")
    _, senders = recorded(out)
    # Storm's fields grouping: a word goes to one count task, the one Storm's hash picks.
    assert {w: s for w, s in senders.items() if len(s) != 1} == {}
    assert {w: next(iter(s)) for w, s in senders.items()} == \
        {w: fields_index([w], COUNT_TASKS) for w in senders}

    code, said = storm(classpath, "Rebalance", "javawords", "-e", "count=3", **seeds)
    assert code == 0, said
    # Polled over Thrift (a JVM per poll costs seconds), then shown by Storm's command.
    client = storm28(nimbus.port)

    def rebalanced() -> bool:
        summary = client.getTopologySummaryByName("javawords")
        return (summary.status, summary.num_tasks) == ("ACTIVE", 7)

    wait_until(rebalanced, 180, "the rebalanced topology", on_timeout=nimbus.output)
    client.close()
    assert listed(storm(classpath, "ListTopologies", **seeds)[1])[0][1:3] == ["ACTIVE", "7"]

    kill_with_storm(classpath, nimbus, "javawords", **seeds)


def fluxwords_counts(out: Path) -> tuple[dict[str, list[int]], dict[str, set[int]]]:
    """fluxwords.yaml's RecordBolt lines: each word's counts in order, and the count tasks
    (by index) they came from."""
    file = out / "counts.txt"
    counts: dict[str, list[int]] = defaultdict(list)
    senders: dict[str, set[int]] = defaultdict(set)
    for line in file.read_text().splitlines() if file.is_file() else []:
        index, word, count = line.split()
        counts[word].append(int(count))
        senders[word].add(int(index))
    return counts, senders


def assert_fluxwords_counted(out: Path, lines: int) -> None:
    counts, senders = fluxwords_counts(out)
    assert set(counts) <= {"nathan", "mike", "jackson", "golda", "bertels"}, counts
    assert sum(map(len, counts.values())) >= lines, counts
    # Each word's running count, every one of them once and in order, from the count task
    # Storm's fields hash picks for it.
    assert {w: c for w, c in counts.items() if c != list(range(1, len(c) + 1))} == {}
    assert {w: s for w, s in senders.items() if s != {fields_index([w], COUNT_TASKS)}} == {}


def test_storm_jar_flux_remote_submits_to_nimbus(nimbus, tmp_path, storm_install, java_jars,
                                                  monkeypatch):
    """`storm jar flux-core.jar org.apache.storm.flux.Flux --jars components.jar --remote
    fluxwords.yaml`: Storm's Flux builds the YAML topology and its StormSubmitter submits
    it (flux-core's jar uploaded as the topology's, the components' as a dependency blob)
    to `heronbridge nimbus`, which runs it; killed with Storm's KillTopology."""
    classpath = command_classpath(storm_install)
    seeds = {"nimbus.seeds": '["127.0.0.1"]', "nimbus.thrift.port": nimbus.port}
    out = tmp_path / "out"
    monkeypatch.setenv("FLUXWORDS_OUT", str(out))  # for Flux's --env-filter, in storm jar's JVM
    [flux] = [j for j in storm_install.classpath if j.name.startswith("flux-core-")]
    code, said = storm_jar(classpath, flux, "org.apache.storm.flux.Flux",
                           "--remote", "--env-filter", str(RESOURCES / "fluxwords.yaml"),
                           jars=(java_jars / "components.jar",), **seeds)
    assert code == 0, said + nimbus.output()
    assert "Finished submitting topology: fluxwords" in said, said
    [row] = listed(storm(classpath, "ListTopologies", **seeds)[1])
    assert row[:4] == ["fluxwords", "ACTIVE", "4", "1"], row
    # TestWordSpout emits a random word each 100 ms, without end.
    wait_until(lambda: sum(map(len, fluxwords_counts(out)[0].values())) >= 20, 180,
               "20 counts recorded", on_timeout=nimbus.output)
    assert_fluxwords_counted(out, 20)
    kill_with_storm(classpath, nimbus, "fluxwords", **seeds)


def test_run_jar_runs_what_its_main_class_submits(tmp_path, storm_home, java_jars):
    # The same word count, its spout a ShellSpout and its split a ShellBolt, each running
    # pystorm from the jar's resources/.
    jar = tmp_path / "shellwords.jar"
    shutil.copyfile(java_jars / "components.jar", jar)
    with zipfile.ZipFile(jar, "a") as z:
        for script in ("sentences.py", "split.py"):
            z.write(RESOURCES / script, f"resources/{script}")
    out = tmp_path / "out"
    done = subprocess.run(
        [HERONBRIDGE, "run", "--jar", str(jar), "--class", MAIN, "--arg", "localwords",
         "--arg", str(out), "--arg", str(ROUNDS), "--arg", "shell",
         "--home", str(storm_home), "-t", "10"],
        capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "localwords: totals over" in done.stdout, done.stdout
    assert recorded(out)[0] == expected_counts()

    done = subprocess.run(
        [HERONBRIDGE, "run", "--jar", str(java_jars / "components.jar"), "--class",
         "jvmtests.NoSuchMain", "--home", str(storm_home)],
        capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode != 0
    assert "jvmtests.NoSuchMain (in components.jar) exited with code 1" in done.stderr, \
        done.stdout + done.stderr


def test_run_flux_runs_a_yaml_topology_of_java_components(tmp_path, storm_home, java_jars):
    out = tmp_path / "out"
    done = subprocess.run(
        [HERONBRIDGE, "run", "--flux", str(RESOURCES / "fluxwords.yaml"), "--jar",
         str(java_jars / "components.jar"), "--arg=--env-filter", "--home",
         str(storm_home), "-t", "5"],
        capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "FLUXWORDS_OUT": str(out)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fluxwords: totals over" in done.stdout, done.stdout
    assert_fluxwords_counted(out, 10)  # TestWordSpout emits one word each 100 ms
