"""Starting a project through a Nimbus endpoint, as `sparse submit` starts it: the jar of
its src/ under `resources/` uploaded in chunks, then `submitTopologyWithOpts` with the
Topology class's Thrift StormTopology and the resolved options, over streamparse's own
Thrift client (the older IDL). The conformance suite runs a project this way to show that
its verdicts do not depend on how it was started.
"""

from __future__ import annotations

import copy
import json
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heronbridge.runtime import control
from heronbridge.runtime.errors import where
from heronbridge.runtime.scheduler import Home, running_scheduler

from . import NimbusError
from .server import NimbusServer
from .service import NimbusService
from .topology import RESOURCES

CHUNK = 307200  # sparse's THRIFT_CHUNK_SIZE
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = {".pyc", ".pyo"}
STOP_SECS = 60.0


def write_jar(src: Path, jar: Path) -> Path:
    """A jar with `src` under `resources/`, the layout `sparse jar` gives (lein packs the
    `_resources/` folder sparse copies src/ into)."""
    jar.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src)
            if SKIP_DIRS & set(rel.parts) or path.suffix in SKIP_SUFFIXES:
                continue
            z.write(path, f"{RESOURCES}/{rel.as_posix()}" + ("/" if path.is_dir() else ""))
    return jar


def nimbus_client(host: str, port: int, timeout_ms: int = 60000) -> Any:
    """A Nimbus client as sparse makes it (framed transport, binary protocol, the Storm
    1.1.1 IDL streamparse bundles)."""
    from streamparse.thrift import Nimbus
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.rpc import make_client
    from thriftpy2.transport import TFramedTransportFactory

    return make_client(Nimbus, host=host, port=port, proto_factory=TBinaryProtocolFactory(),
                       trans_factory=TFramedTransportFactory(), timeout=timeout_ms)


def upload(client: Any, jar: Path) -> str:
    """beginFileUpload, uploadChunk in sparse's chunk size, finishFileUpload."""
    location = client.beginFileUpload()
    with jar.open("rb") as f:
        while chunk := f.read(CHUNK):
            client.uploadChunk(location, chunk)
    client.finishFileUpload(location)
    return location


def thrift_topology(topology_class: Any, serializer: str, env: str | None) -> Any:
    """The Topology class's StormTopology as sparse submits it: the serializer in front of
    each shell script, a parallelism given per environment resolved for `env`."""
    topology = copy.deepcopy(topology_class.thrift_topology)
    components = [*(s.spout_object for s in topology.spouts.values()),
                  *(b.bolt_object for b in topology.bolts.values())]
    for obj in components:
        if obj.shell is not None:
            obj.shell.script = f"-s {serializer} {obj.shell.script}"
    for common in [*(s.common for s in topology.spouts.values()),
                   *(b.common for b in topology.bolts.values())]:
        if isinstance(common.parallelism_hint, dict):
            common.parallelism_hint = common.parallelism_hint.get(env)
    return topology


class NimbusLaunch:
    """A streamparse project submitted through an endpoint of its own (on loopback), with
    runtime.scheduler.launch.Launch's surface: `start()`, `check()`, `stop()`, `workdir`.
    `install(folder)` puts the project's files (src/ and any inputs) in `folder`."""

    def __init__(self, project: Any, home: Home, install: Callable[[Path], object]) -> None:
        topology = project.topology
        if topology is None or not hasattr(topology, "thrift_topology"):
            msg = (f"{where(project.name)}: only streamparse topologies are submitted to "
                   "Nimbus (sparse submit); expected a streamparse Topology class")
            raise NimbusError(msg)
        self.project = project
        self.name = project.plan.name
        self.home = home
        self.install = install
        self.workdir = home.workdir(self.name)
        self.statemgr = home.open_statemgr()
        self.server: NimbusServer | None = None
        self.client: Any = None

    def start(self, timeout: float = 60.0) -> float:
        """Upload and submit, then wait until every task has registered."""
        began = time.monotonic()
        self.server = NimbusServer(NimbusService(self.home, self.statemgr), port=0).start()
        self.client = nimbus_client(self.server.host, self.server.port)
        from streamparse.thrift import SubmitOptions, TopologyInitialStatus

        with tempfile.TemporaryDirectory(prefix="heronbridge-jar-") as tmp:
            src = Path(tmp) / "src"
            self.install(src)
            location = upload(self.client, write_jar(src, Path(tmp) / "topology.jar"))
        self.client.submitTopologyWithOpts(
            self.name, location, json.dumps(self.project.options),
            thrift_topology(self.project.topology, self.project.serializer,
                            self.project.env),
            SubmitOptions(initial_status=TopologyInitialStatus.ACTIVE))
        service = self.server.service
        control.wait_running(self.statemgr, self.name, timeout,
                             lambda: self.name in service.launches)
        return time.monotonic() - began

    def check(self) -> list[int]:
        return []  # the detached scheduler restarts its containers itself

    def stop(self) -> None:
        """Kill it through Nimbus (no wait) and wait until its scheduler is gone."""
        if self.server is None:
            return
        from streamparse.thrift import KillOptions, NotAliveException

        try:
            try:
                self.client.killTopologyWithOpts(self.name, KillOptions(wait_secs=0))
            except NotAliveException:
                pass
            deadline = time.monotonic() + STOP_SECS
            service = self.server.service
            while time.monotonic() < deadline and (
                    self.name in service.killing or
                    running_scheduler(self.statemgr, self.name) is not None):
                time.sleep(0.1)
        finally:
            self.client.close()
            self.server.close()
            self.server = None
            self.statemgr.close()
