"""Helpers the Nimbus tests import by name (`from nimbuskit import ...`): a `heronbridge
nimbus` started as a user starts it, the word count example as a streamparse project whose
config.json env points at it, streamparse's own `sparse` command."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from heronbridge.runtime.scheduler import Home, pid_alive, running_scheduler
from heronbridge.runtime.statemgr import SCHEDULERS

ROOT = Path(__file__).resolve().parents[2]
WORDCOUNT = ROOT / "examples" / "storm_topologies" / "wordcount"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Endpoint:
    home: Path
    port: int
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), 0.5):
        return True


@contextmanager
def running_nimbus(home: Path, log: Path) -> Iterator[Endpoint]:
    """`heronbridge nimbus` on a free loopback port with `home`, as a user starts it;
    stopped afterwards, with whatever it left running."""
    from testkit import HERONBRIDGE, wait_until

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "HERONBRIDGE_STATE"}
    with log.open("wb") as out:
        process = subprocess.Popen([HERONBRIDGE, "nimbus", "--home", str(home), "--port",
                                    str(port)], stdout=out, stderr=subprocess.STDOUT, env=env)
    endpoint = Endpoint(home, port, process, log)
    try:
        wait_until(lambda: _listening(port), 30, "heronbridge nimbus to listen",
                   on_timeout=endpoint.output)
        yield endpoint
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        stop_topologies(home)


# storm-core holds the command classes and needs commons-cli, and SetLogLevel Guava (the
# version Storm 2.8.3 builds with): single jars, as the suite takes flux-core (storm-core's
# own dependencies include artifacts Central lacks).
COMMAND_JARS = (("org.apache.storm", "storm-core"), ("commons-cli", "commons-cli", "1.10.0"),
                ("com.google.guava", "guava", "33.5.0-jre"))


def command_classpath(install) -> tuple[Path, list[Path]]:
    """(java, classpath) of Storm's command classes: the suite's Storm install and
    COMMAND_JARS."""
    from heronbridge.jvm import JvmError, maven

    jars = [maven.single_jar(install.directory, group, artifact,
                             rest[0] if rest else install.version, "Storm's commands",
                             JvmError, lambda text: None)
            for group, artifact, *rest in COMMAND_JARS]
    return install.java, [*install.classpath, *jars]


def storm(classpath, command: str, *args: str, **options: object) -> tuple[int, str]:
    """`storm <command>` as Storm's launcher runs it: the class's main with the options
    in -Dstorm.options (what `storm -c k=v` passes)."""
    return storm_class(classpath, f"org.apache.storm.command.{command}", *args, **options)


def storm_jar(classpath, jar: Path, main: str, *args: str, jars: tuple[Path, ...] = (),
              artifacts: dict[str, Path] | None = None,
              **options: object) -> tuple[int, str]:
    """`storm jar [--jars A,B] [--artifacts G:A:V] JAR MAIN ARGS` as Storm's launcher runs
    it: the jar, then the --jars, then the resolved artifacts' jars on the classpath after
    Storm's; the jar named by -Dstorm.jar (what StormSubmitter uploads), the others by
    -Dstorm.dependency.jars and -Dstorm.dependency.artifacts (what it uploads as blobs)."""
    java, classes = classpath
    artifacts = artifacts or {}
    return storm_class(
        (java, [*classes, jar, *jars, *artifacts.values()]), main, *args,
        jvm_options=[f"-Dstorm.jar={jar}",
                     f"-Dstorm.dependency.jars={','.join(map(str, jars))}",
                     "-Dstorm.dependency.artifacts="
                     + json.dumps({k: str(v) for k, v in artifacts.items()})],
        **options)


def storm_class(classpath, main: str, *args: str, jvm_options: tuple[str, ...] | list[str] = (),
                **options: object) -> tuple[int, str]:
    java, jars = classpath
    conf = ",".join(f"{k}={v}" for k, v in options.items())
    # tox's JAVA_TOOL_OPTIONS as options on the command line: from the environment the
    # JVM would say "Picked up ..." on stderr, among the output the tests read.
    env = dict(os.environ)
    tool_options = shlex.split(env.pop("JAVA_TOOL_OPTIONS", ""))
    done = subprocess.run([str(java), *tool_options, "-cp", ":".join(map(str, jars)),
                           *jvm_options, f"-Dstorm.options={conf}", main, *args],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    return done.returncode, done.stdout + done.stderr


def listed(output: str) -> list[list[str]]:
    """ListTopologies's rows: name, status, tasks, workers, uptime, id, owner."""
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Topology_name"))
    assert lines[header].split() == ["Topology_name", "Status", "Num_tasks", "Num_workers",
                                     "Uptime_secs", "Topology_Id", "Owner"]
    assert set(lines[header + 1]) == {"-"}
    return [line.split() for line in lines[header + 2:] if line.strip()]


def kill_with_storm(classpath, nimbus: Endpoint, name: str, **seeds: object) -> None:
    """Storm's KillTopology (-w 1), then ListTopologies until it lists nothing, and no
    process of the topology left."""
    from testkit import wait_until

    code, out = storm(classpath, "KillTopology", "-w", "1", name, **seeds)
    assert code == 0 and f"Killed topology: {name}" in out, out
    wait_until(lambda: "No topologies running." in storm(classpath, "ListTopologies",
                                                         **seeds)[1],
               60, "ListTopologies to show no topology", on_timeout=nimbus.output)
    wait_until(lambda: not leftovers(nimbus.home, {nimbus.process.pid}), 30,
               "no process of the topology left")


def stop_topologies(home: Path) -> list[str]:
    """Stop what a failed test left running under `home`; returns their names."""
    state = Home(home).open_statemgr()
    left = []
    try:
        for name in state.names(SCHEDULERS):
            location = running_scheduler(state, name)
            if location is not None:
                left.append(name)
                os.kill(location.pid, signal.SIGTERM)
                deadline = time.monotonic() + 60
                while pid_alive(location.pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
    finally:
        state.close()
    return left


def wordcount_project(folder: Path, port: int, out: Path, **env: object) -> Path:
    """The word count example as a user's project: config.json's env `test` names the
    endpoint, with no SSH and no virtualenv; one pass over its text (wordcount.rounds)."""
    project = folder / "wordcount"
    shutil.copytree(WORDCOUNT, project, ignore=shutil.ignore_patterns("__pycache__"))
    config = json.loads((project / "config.json").read_text())
    config["envs"] = {"test": {
        "nimbus": f"127.0.0.1:{port}", "workers": [], "use_ssh_for_nimbus": False,
        "use_virtualenv": False,
        "options": {"example.output.dir": str(out), "wordcount.rounds": 1}, **env}}
    (project / "config.json").write_text(json.dumps(config, indent=2))
    return project


def sparse(project: Path, *args: str, timeout: float = 300,
           **env_vars: str) -> subprocess.CompletedProcess:
    """streamparse's `sparse` console script, run in the project as a user runs it (as
    root it wants LEIN_ROOT, whatever the verb)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "LEIN_ROOT": "1", **env_vars}
    return subprocess.run([str(BIN / "sparse"), *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of a table sparse prints (texttable, cells wrapped over several lines)."""
    rows: list[list[str]] = []
    header: list[str] | None = None
    cells: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("+"):
            if cells is not None and any(cells):
                if header is None:
                    header = cells
                else:
                    rows.append(cells)
            cells = None
        elif line.startswith("|"):
            parts = [p.strip() for p in line.strip().strip("|").split("|")]
            cells = parts if cells is None else [a + b for a, b in zip(cells, parts,
                                                                       strict=True)]
    return [dict(zip(header, row, strict=True)) for row in rows] if header else []


def words_in_text() -> int:
    """How many words the spout emits in one pass (its own rule: runs of a-z)."""
    text = (WORDCOUNT / "src" / "data" / "words.txt").read_text(encoding="utf-8")
    return len(re.findall(r"[a-z]+", text.lower()))


def leftovers(home: Path, but: set[int] = frozenset()) -> list[str]:
    """Live processes started for topologies under `home` (their command lines or working
    folders name it), other than `but`."""
    from testkit import storm_leftovers

    return [p for p in storm_leftovers(home) if int(p.split()[0]) not in but]


# Every method Storm's clients read a running topology with, and the second submission
# path: the compatibility rows the Nimbus tests decide with the helpers below.
READS = ("nimbus/getTopologySummaries", "nimbus/getTopologySummaryByName",
         "nimbus/getTopologySummary", "nimbus/getTopologyInfo", "nimbus/getTopologyInfoWithOpts",
         "nimbus/getTopologyInfoByName", "nimbus/getTopologyInfoByNameWithOpts",
         "nimbus/getTopologyConf", "nimbus/getUserTopology", "nimbus/getTopology",
         "nimbus/getNimbusConf", "nimbus/getLeader", "nimbus/isTopologyNameAllowed",
         "nimbus/activate", "nimbus/deactivate")
AGAIN = ("nimbus/beginFileUpload", "nimbus/uploadChunk", "nimbus/finishFileUpload",
         "nimbus/submitTopologyWithOpts", "nimbus/killTopology")


def storm28(port: int):
    """A client on Storm 2.8's IDL, as Storm's own classes hold it."""
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.rpc import make_client
    from thriftpy2.transport import TFramedTransportFactory

    from heronbridge.nimbus import idl

    return make_client(idl().Nimbus, host="127.0.0.1", port=port,
                       proto_factory=TBinaryProtocolFactory(),
                       trans_factory=TFramedTransportFactory(), timeout=60000)


def reads_agree(port: int, name: str, components: set[str]) -> tuple[object, dict]:
    """Every read of a running topology agrees with the others, by name and by id, and
    deactivate then activate show in its status; returns the StormTopology and conf
    Nimbus kept for it."""
    from heronbridge.nimbus import idl

    t, client = idl(), storm28(port)
    try:
        [summary] = [s for s in client.getTopologySummaries() if s.name == name]
        key = lambda s: (s.id, s.name, s.status, s.num_workers, s.num_tasks)  # noqa: E731
        assert summary.status == "ACTIVE" and summary.num_tasks > 0, summary
        assert key(client.getTopologySummaryByName(name)) == key(summary)
        assert key(client.getTopologySummary(summary.id)) == key(summary)
        infos = [client.getTopologyInfo(summary.id),
                 client.getTopologyInfoWithOpts(summary.id, t.GetInfoOptions()),
                 client.getTopologyInfoByName(name),
                 client.getTopologyInfoByNameWithOpts(name, t.GetInfoOptions())]
        for info in infos:
            assert (info.id, info.name, info.status) == (summary.id, name, "ACTIVE"), info
            assert {e.component_id for e in info.executors} >= components, info.executors
        conf = json.loads(client.getTopologyConf(summary.id))
        assert (conf["storm.id"], conf["topology.name"]) == (summary.id, name), conf
        kept = client.getUserTopology(summary.id)
        for topology in (kept, client.getTopology(summary.id)):
            assert set(topology.spouts) | set(topology.bolts) == components, topology
        assert json.loads(client.getNimbusConf())["nimbus.thrift.port"] == port
        assert client.getLeader().port == port
        assert client.isTopologyNameAllowed(name) is False  # taken while it runs
        client.deactivate(name)
        assert client.getTopologySummaryByName(name).status == "INACTIVE"
        client.activate(name)
        assert client.getTopologySummaryByName(name).status == "ACTIVE"
        return kept, conf
    finally:
        client.close()


def submit_again_and_kill(port: int, kept: tuple[object, dict], name: str, jar: Path) -> None:
    """A topology's StormTopology and conf as Nimbus kept them (`reads_agree`), submitted
    under another name with SubmitOptions (inactive) from a fresh upload, then killed with
    killTopology: it shows INACTIVE, then is gone."""
    from heronbridge.nimbus import idl
    from heronbridge.nimbus.submit import upload

    t, client = idl(), storm28(port)
    try:
        topology, conf = kept
        conf = {k: v for k, v in conf.items() if k not in ("storm.id", "topology.name")}
        conf["topology.message.timeout.secs"] = 1  # what killTopology waits, as in Storm
        location = upload(client, jar)
        client.submitTopologyWithOpts(name, location, json.dumps(conf), topology,
                                      t.SubmitOptions(t.TopologyInitialStatus.INACTIVE))
        assert client.getTopologySummaryByName(name).status == "INACTIVE"
        client.killTopology(name)

        def gone() -> bool:
            return name not in {s.name for s in client.getTopologySummaries()}

        deadline = time.monotonic() + 120
        while not gone() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert gone(), f"{name} still listed after killTopology"
    finally:
        client.close()


def blob_round_trip(client, key: str) -> bytes:
    """Every blob-store method as StormSubmitter's DependencyUploader and `storm blobstore`
    call them: create in chunks (then createStateInZookeeper), read back, update, meta,
    replication, list, an upload cancelled. Leaves `key` in the store; returns its bytes."""
    from heronbridge.nimbus import idl

    t = idl()
    acl = [t.AccessControl(type=t.AccessControlType.USER, access=7)]

    def put(data: bytes, session: str) -> None:
        for i in range(0, len(data), 1000):
            client.uploadBlobChunk(session, data[i:i + 1000])
        client.finishBlobUpload(session)

    def get() -> bytes:
        begun, parts = client.beginBlobDownload(key), []
        while chunk := client.downloadBlobChunk(begun.session):
            parts.append(chunk)
        return b"".join(parts)

    put(b"first", client.beginCreateBlob(key, t.SettableBlobMeta(acl=acl)))
    client.createStateInZookeeper(key)
    data = bytes(range(256)) * 20  # more than one chunk each way
    put(data, client.beginUpdateBlob(key))
    assert get() == data and client.getBlobMeta(key).settable.acl == acl
    client.setBlobMeta(key, t.SettableBlobMeta(acl=[*acl, t.AccessControl(
        type=t.AccessControlType.OTHER, access=1)]))
    assert len(client.getBlobMeta(key).settable.acl) == 2
    assert client.updateBlobReplication(key, 2) == 1 == client.getBlobReplication(key)
    cancelled = client.beginCreateBlob(f"{key}.cancelled", t.SettableBlobMeta(acl=[]))
    client.uploadBlobChunk(cancelled, b"x")
    client.cancelBlobUpload(cancelled)
    assert client.isRemoteBlobExists(key) and not client.isRemoteBlobExists(f"{key}.cancelled")
    assert key in client.listBlobs("").keys
    return data
