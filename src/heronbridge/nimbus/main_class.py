"""A topology jar's main class run as `storm jar` runs it, for a local run (`heronbridge
run --jar JAR --class MAIN`): its StormSubmitter talks to an endpoint of this process
that keeps what it submits (the name, config and StormTopology) instead of starting it;
the caller plans it (topology.plan_of_upload) and runs it in the foreground."""

from __future__ import annotations

import json
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.runtime.errors import where
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import StateManager

from . import NimbusError
from .server import NimbusServer
from .service import NAME, NimbusService
from .topology import conf_of

FLUX_MAIN = "org.apache.storm.flux.Flux"  # Storm's Flux: builds a YAML topology, submits it
MAIN_TIMEOUT_SECS = 300.0
SHOWN_LINES = 40  # of a main class's output, when it fails


@dataclass(frozen=True)
class Submission:
    name: str
    conf: dict[str, Any]
    topology: Any  # the StormTopology, as Thrift read it


class KeepingService(NimbusService):
    """Nimbus's service whose submit keeps the topology rather than starting it."""

    def __init__(self, home: Home, statemgr: StateManager) -> None:
        super().__init__(home, statemgr)
        self.submitted: list[Submission] = []

    def submitTopologyWithOpts(self, name: str, location: str, json_conf: str,  # noqa: N802
                               topology: Any, options: Any) -> None:
        if not name or not NAME.match(name):
            raise self.t.InvalidTopologyException(
                msg=f"Topology name '{name}' is not valid. It can't be null and it must "
                    f"match {NAME.pattern}")
        self.inbox.jar(location, name)  # a finished upload, as Nimbus requires
        self.submitted.append(Submission(name, conf_of(json_conf, name), topology))


def empty_jar(path: Path) -> Path:
    """A jar of no classes (a manifest only), for a main whose classes are all Storm's:
    StormSubmitter uploads a jar, whatever is in it."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
    return path


def submission_of_main(home: Home, statemgr: StateManager, java: Path, classpath: list[Path],
                       jar: Path, main: str, args: list[str]) -> Submission:
    """Run `main` with `args` as `storm jar JAR MAIN ARGS` does (the jar after Storm's
    jars on its classpath, -Dstorm.jar naming it) against a keeping endpoint; the one
    topology it submitted."""
    if not jar.is_file():
        msg = f"expected a topology jar, received {str(jar)!r}, which is not a file"
        raise NimbusError(msg)
    service = KeepingService(home, statemgr)
    server = NimbusServer(service, port=0).start()
    try:
        options = (f"nimbus.seeds={json.dumps([server.host])},"
                   f"nimbus.thrift.port={server.port}")
        command = [str(java), "-cp", ":".join(map(str, [*classpath, jar])),
                   f"-Dstorm.jar={jar}", f"-Dstorm.options={options}", main, *args]
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  timeout=MAIN_TIMEOUT_SECS)
        except subprocess.TimeoutExpired as exc:
            msg = (f"{main} (in {jar.name}) ran for more than {MAIN_TIMEOUT_SECS:.0f}s "
                   "without exiting; expected a main that submits with StormSubmitter "
                   "and returns")
            raise NimbusError(msg) from exc
    finally:
        server.close()
    shown = "\n".join((done.stdout + done.stderr).splitlines()[-SHOWN_LINES:])
    if done.returncode != 0:
        msg = f"{main} (in {jar.name}) exited with code {done.returncode}:\n{shown}"
        raise NimbusError(msg)
    if len(service.submitted) != 1:
        names = [s.name for s in service.submitted]
        msg = (f"{main} (in {jar.name}): expected one topology submitted through "
               f"StormSubmitter, received {len(names)} {names}; its output:\n{shown}")
        raise NimbusError(msg)
    submission = service.submitted[0]
    if submission.topology is None:
        msg = f"{where(submission.name)}: expected a StormTopology, received none"
        raise NimbusError(msg)
    return submission
