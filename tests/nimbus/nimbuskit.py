"""Helpers the Nimbus tests import by name (`from nimbuskit import ...`): a `heronbridge
nimbus` started as a user starts it, the word count example as a streamparse project whose
config.json env points at it, streamparse's own `sparse` command."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
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
