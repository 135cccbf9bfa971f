"""The Nimbus calls, answered from the state manager and the local scheduler.

Topologies are the state manager's (whoever started them: this endpoint, `heronbridge
submit` or another host on ZooKeeper); a submit starts one detached, as `heronbridge
submit` does. Errors are Nimbus's own exceptions with Nimbus's messages where a client
shows them ("NAME is not alive", "NAME is already alive"), so clients print what they
print against Storm. Kill follows Storm: the topology is deactivated at once, shows as
KILLED, and is stopped `wait_secs` later (default: its message timeout). A rebalance
is `heronbridge update`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thriftpy2.thrift import TApplicationException

from heronbridge.runtime import admin, control
from heronbridge.runtime.errors import RuntimeKernelError, StateManagerError, where
from heronbridge.runtime.plan.codec import topology_from_proto
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.proto import topology_pb2
from heronbridge.runtime.scheduler import Home, running_scheduler
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.scheduler.spark import SparkOptions
from heronbridge.runtime.statemgr import (
    EXECUTION_STATE,
    PACKING_PLANS,
    PHYSICAL_PLANS,
    TOPOLOGIES,
    StateManager,
)

from . import STORM_VERSION, NimbusError, idl
from .blobstore import BlobExists, BlobNotFound, BlobStore, append, check_key
from .topology import InvalidTopology, JavaClasspath, conf_of, plan_of_upload

log = logging.getLogger("heronbridge.nimbus")

NAME = re.compile(r"^[^/.:\\]+$")  # Storm's Utils.validateTopologyName
STATUS = {topology_pb2.RUNNING: "ACTIVE", topology_pb2.PAUSED: "INACTIVE",
          topology_pb2.KILLED: "KILLED"}
DEFAULT_KILL_WAIT_SECS = 30  # Storm's topology.message.timeout.secs
START_WAIT_SECS = 300.0  # a call waiting for a topology's start (Java tasks take longest)
INBOX_EXPIRY_SECS = 3600  # Storm's nimbus.inbox.jar.expiration.secs
MAX_UPLOADS = 16  # unfinished at once
UPLOAD_IDLE_SECS = 600.0  # Storm's socket timeout: an upload idle this long is given up
STORM_CODE = "stormtopology.thrift"  # the topology as submitted, beside its resources
SYSTEM_PREFIX = "__"  # Storm's system components (__acker, ...)


class Connection(threading.local):
    """The connection the current call came in on (each connection has its thread)."""

    local_host: str | None = None
    peer: str = ""


CONNECTION = Connection()


@dataclass
class Known:
    """A topology the state manager knows, as Nimbus describes it."""

    name: str
    topology: Any  # topology_pb2.Topology
    status: str

    @property
    def plan(self) -> LogicalPlan:
        return topology_from_proto(self.topology)


class Inbox:
    """Uploaded jars: Nimbus hands out a location, the client appends chunks there and
    finishes it; a submit names a finished location. Only locations handed out here are
    written or read; no file stays open between calls, and at most MAX_UPLOADS are
    unfinished at once (one idle for UPLOAD_IDLE_SECS is given up)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.open: dict[str, float] = {}  # unfinished location -> its last write
        self.finished: set[str] = set()
        self.lock = threading.Lock()

    def begin(self) -> str:
        self._expire()
        path = self.folder / f"stormjar-{uuid.uuid4()}.jar"
        with self.lock:
            if len(self.open) >= MAX_UPLOADS:
                msg = (f"{MAX_UPLOADS} uploads are unfinished (beginFileUpload without "
                       f"finishFileUpload); finish one, or wait {UPLOAD_IDLE_SECS:g}s for "
                       "an idle one to be given up")
                raise NimbusError(msg)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o600))
            self.open[str(path)] = time.monotonic()
        return str(path)

    def write(self, location: str, chunk: bytes) -> None:
        with self.lock:
            if location not in self.open:
                raise _missing(location)
            append(location, chunk)
            self.open[location] = time.monotonic()

    def finish(self, location: str) -> None:
        with self.lock:
            if self.open.pop(location, None) is None:
                raise _missing(location)
            self.finished.add(location)

    def jar(self, location: str, topology: str) -> Path:
        with self.lock:
            if location in self.finished and Path(location).is_file():
                return Path(location)
        msg = (f"{where(topology)}: {location!r} is not a jar uploaded to this Nimbus and "
               "finished (beginFileUpload, uploadChunk, finishFileUpload)")
        raise InvalidTopology(msg)

    def _expire(self) -> None:
        """Jars older than Storm's inbox expiry go, as Storm's cleaner removes them, and so
        do uploads left unfinished for UPLOAD_IDLE_SECS."""
        cutoff = time.time() - INBOX_EXPIRY_SECS
        idle = time.monotonic() - UPLOAD_IDLE_SECS
        with self.lock:
            for location, last in list(self.open.items()):
                if last < idle:
                    del self.open[location]
                    with contextlib.suppress(OSError):
                        os.unlink(location)
            for location in list(self.finished):
                path = Path(location)
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        self.finished.discard(location)


def _missing(location: str) -> Exception:
    # Storm answers an unknown location with a RuntimeException (an internal error).
    msg = f"File for that location does not exist (or timed out): {location}"
    return _internal(msg)


def _internal(message: str) -> Exception:
    from thriftpy2.thrift import TApplicationException

    return TApplicationException(TApplicationException.INTERNAL_ERROR, message)


class NimbusService:
    """The handler: one method per Nimbus call (thriftpy2 dispatches by name)."""

    def __init__(self, home: Home, statemgr: StateManager,
                 spark: SparkOptions | None = None,
                 java_classpath: JavaClasspath | None = None) -> None:
        self.home = home
        # Sets a plan's JVM classpath (the host's jar, Storm's, then the jars given);
        # None: topologies with Java components are refused.
        self.java_classpath = java_classpath
        self.statemgr = statemgr
        self.spark = spark  # the Spark cluster submissions run on; None: this host
        # Where the endpoint listens: set by the server once its ports are bound.
        self.host = "127.0.0.1"
        self.port = 0
        self.tls_port: int | None = None
        self.started = time.monotonic()
        self.inbox = Inbox(home.root / "nimbus" / "inbox")
        self.blobs = BlobStore(home.root / "nimbus" / "blobs",
                               home.root / "nimbus" / "blob-uploads")
        self.staging = home.root / "nimbus" / "staging"
        self.launches: dict[str, Launch] = {}  # started here, still running
        self.starting: dict[str, threading.Event] = {}  # set once its start is over
        self.killing: dict[str, float] = {}  # name -> when it is stopped
        self.rebalancing: set[str] = set()  # an update under way
        self.lock = threading.RLock()
        self.submit_lock = threading.Lock()  # one submit at a time: it imports user code
        self.t = idl()

    # -- what is running ------------------------------------------------------------

    def _reap(self) -> None:
        """Forget launches whose scheduler has exited (killed by another client)."""
        with self.lock:
            for name, launch in list(self.launches.items()):
                if launch.process is None or launch.process.poll() is not None:
                    del self.launches[name]

    def _known(self) -> list[Known]:
        self._reap()
        out = []
        for name in sorted(self.statemgr.names(TOPOLOGIES)):
            known = self._find(name)
            if known is not None:
                out.append(known)
        return out

    def _find(self, name: str) -> Known | None:
        topology = self.statemgr.get(TOPOLOGIES, name)
        if topology is None:
            return None
        with self.lock:
            starting = name in self.launches
            killed = name in self.killing
            rebalancing = name in self.rebalancing
        if not starting and running_scheduler(self.statemgr, name) is None:
            return None  # stale state of a topology that died
        status = "KILLED" if killed else "REBALANCING" if rebalancing else \
            STATUS.get(topology.state, "INACTIVE")
        return Known(name, topology, status)

    def _alive(self, name: str, by_id: bool = False) -> Known:
        """The topology (by name, or by id where Storm's call takes an id), else Nimbus's
        NotAliveException."""
        if by_id:
            for known in self._known():
                if name in (known.topology.id, known.name):
                    return known
        else:
            found = self._find(name)
            if found is not None:
                return found
        raise self.t.NotAliveException(msg=f"{name} is not alive")

    def _uptime(self, name: str) -> int:
        execution = self.statemgr.get(EXECUTION_STATE, name)
        if execution is None or not execution.submission_time:
            return 0
        return max(0, int(time.time() - execution.submission_time))

    def _owner(self, name: str) -> str:
        execution = self.statemgr.get(EXECUTION_STATE, name)
        return execution.submission_user if execution is not None else ""

    def _hosts(self, name: str) -> dict[int, tuple[str, int]]:
        """container -> (host, port) of its stream manager."""
        pplan = self.statemgr.get(PHYSICAL_PLANS, name)
        return {s.container: (s.host, s.data_port) for s in pplan.stmgrs} if pplan else {}

    def _instances(self, name: str) -> list[tuple[int, str, int]]:
        """(container, component, task) of every task."""
        packing = self.statemgr.get(PACKING_PLANS, name)
        if packing is None:
            return []
        return [(c.id, i.component, i.task_id) for c in packing.containers
                for i in c.instances]

    def _summary(self, known: Known) -> Any:
        packing = self.statemgr.get(PACKING_PLANS, known.name)
        tasks = len(self._instances(known.name))
        return self.t.TopologySummary(
            id=known.topology.id, name=known.name, num_tasks=tasks, num_executors=tasks,
            num_workers=len(packing.containers) if packing else 0,
            uptime_secs=self._uptime(known.name), status=known.status,
            storm_version=STORM_VERSION, owner=self._owner(known.name), replication_count=1)

    def _info(self, known: Known) -> Any:
        hosts = self._hosts(known.name)
        uptime = self._uptime(known.name)
        executors = []
        for container, component, task in self._instances(known.name):
            host, port = hosts.get(container, ("", 0))
            executors.append(self.t.ExecutorSummary(
                executor_info=self.t.ExecutorInfo(task_start=task, task_end=task),
                component_id=component, host=host, port=port, uptime_secs=uptime))
        errors: dict[str, list] = {c: [] for c in known.plan.components}
        for task in self._metrics(known.name):
            host, port = hosts.get(task.container, ("", 0))
            for e in task.exceptions:
                errors.setdefault(task.component, []).append(self.t.ErrorInfo(
                    error=f"{e.class_name}: {e.message}\n{e.stacktrace}",
                    error_time_secs=int(e.last_ms / 1000), host=host, port=port))
        return self.t.TopologyInfo(
            id=known.topology.id, name=known.name, uptime_secs=uptime, executors=executors,
            status=known.status, errors=errors, storm_version=STORM_VERSION,
            owner=self._owner(known.name), replication_count=1)

    def _metrics(self, name: str) -> list[Any]:
        try:
            return list(control.metrics(self.statemgr, name, timeout=2.0).tasks)
        except RuntimeKernelError:
            return []  # starting or stopping: no errors to report

    def _leader(self) -> Any:
        return self.t.NimbusSummary(
            host=CONNECTION.local_host or self.host, port=self.port,
            uptime_secs=int(time.monotonic() - self.started), isLeader=True,
            version=STORM_VERSION, tlsPort=self.tls_port)

    def _supervisors(self, known: list[Known]) -> list[Any]:
        """One per host running containers (this host when none does), as Storm has one
        supervisor per host; sparse takes their hosts as the workers list."""
        slots: dict[str, int] = {}
        for k in known:
            for host, _port in self._hosts(k.name).values():
                slots[host] = slots.get(host, 0) + 1
        if not slots:
            slots[socket.gethostname()] = 0
        uptime = int(time.monotonic() - self.started)
        return [self.t.SupervisorSummary(host=host, uptime_secs=uptime, num_workers=n,
                                         num_used_workers=n, supervisor_id=host,
                                         version=STORM_VERSION, blacklisted=False)
                for host, n in sorted(slots.items())]

    # -- cluster and topology summaries ---------------------------------------------------

    def getLeader(self) -> Any:  # noqa: N802 - Nimbus's method names
        return self._leader()

    def getClusterInfo(self) -> Any:  # noqa: N802
        known = self._known()
        return self.t.ClusterSummary(supervisors=self._supervisors(known),
                                     topologies=[self._summary(k) for k in known],
                                     nimbuses=[self._leader()])

    def getTopologySummaries(self) -> list[Any]:  # noqa: N802
        return [self._summary(k) for k in self._known()]

    def getTopologySummaryByName(self, name: str) -> Any:  # noqa: N802
        return self._summary(self._alive(name))

    def getTopologySummary(self, topology_id: str) -> Any:  # noqa: N802
        return self._summary(self._alive(topology_id, by_id=True))

    def getTopologyInfo(self, topology_id: str) -> Any:  # noqa: N802
        return self._info(self._alive(topology_id, by_id=True))

    def getTopologyInfoWithOpts(self, topology_id: str, options: Any) -> Any:  # noqa: N802
        return self.getTopologyInfo(topology_id)

    def getTopologyInfoByName(self, name: str) -> Any:  # noqa: N802
        return self._info(self._alive(name))

    def getTopologyInfoByNameWithOpts(self, name: str, options: Any) -> Any:  # noqa: N802
        return self.getTopologyInfoByName(name)

    def setLogConfig(self, topology_id: str, config: Any) -> None:  # noqa: N802
        """`storm set_log_level`: each named logger's level (log4j's ROOT is the root
        logger) in every task, back to the level before after its timeout; REMOVE puts
        the level before back now."""
        known = self._alive(topology_id, by_id=True)
        levels = (config.named_logger_level if config is not None else None) or {}
        for logger, level in levels.items():
            name = "" if logger in ("", "ROOT") else logger
            if level.action == self.t.LogLevelAction.REMOVE:
                admin.set_log_level(self.statemgr, known.name, "", "", 0, name)
            elif level.action == self.t.LogLevelAction.UPDATE:
                admin.set_log_level(self.statemgr, known.name, "",
                                    level.target_log_level or "",
                                    level.reset_log_level_timeout_secs or 0, name)

    def debug(self, name: str, component: str, enable: bool, sampling_pct: float) -> None:
        """Storm UI's Debug: sample `sampling_pct` of a component's (every one's, with no
        component) emitted tuples; `enable` false stops it. Storm's IDL lets debug throw
        only NotAliveException and AuthorizationException: other refusals go back as a
        TApplicationException with the message."""
        known = self._alive(name)
        percent = float(sampling_pct or 0) if enable else 0.0
        if not 0 <= percent <= 100:
            msg = (f"{where(known.name, component or None)}: expected a sampling percentage "
                   f"from 0 to 100, received {percent:g}")
            raise TApplicationException(TApplicationException.UNKNOWN, msg)
        try:
            admin.set_sampling(self.statemgr, known.name, component or "", percent)
        except RuntimeKernelError as exc:  # the master refused, or is not up
            raise TApplicationException(TApplicationException.UNKNOWN, str(exc)) from exc

    def getTopologyConf(self, topology_id: str) -> str:  # noqa: N802
        known = self._alive(topology_id, by_id=True)
        conf = {**known.plan.config, "storm.id": known.topology.id,
                "topology.name": known.name}
        return json.dumps(conf, default=str)

    def getUserTopology(self, topology_id: str) -> Any:  # noqa: N802
        known = self._alive(topology_id, by_id=True)
        path = self.home.workdir(known.name) / STORM_CODE
        try:
            data = path.read_bytes()
        except OSError as exc:
            msg = (f"{where(known.name)}: no StormTopology kept for it ({exc}); only "
                   "topologies submitted through Nimbus have one")
            raise _internal(msg) from exc
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.utils import deserialize

        return deserialize(self.t.StormTopology(), data, TBinaryProtocolFactory())

    def getTopology(self, topology_id: str) -> Any:  # noqa: N802
        return self.getUserTopology(topology_id)

    def getNimbusConf(self) -> str:  # noqa: N802
        host = CONNECTION.local_host or self.host
        conf = {"storm.version": STORM_VERSION, "nimbus.seeds": [host],
                "nimbus.thrift.port": self.port, "storm.cluster.mode": "distributed",
                "storm.log.dir": str(self.home.root / "topologies"),
                "topology.message.timeout.secs": DEFAULT_KILL_WAIT_SECS,
                "heronbridge.state": self.statemgr.uri}
        if self.tls_port is not None:
            conf["nimbus.thrift.tls.port"] = self.tls_port
        return json.dumps(conf)

    def isTopologyNameAllowed(self, name: str) -> bool:  # noqa: N802
        return bool(name and NAME.match(name)) and self._find(name) is None

    # -- uploads --------------------------------------------------------------------------

    def beginFileUpload(self) -> str:  # noqa: N802
        return self.inbox.begin()

    def uploadChunk(self, location: str, chunk: bytes) -> None:  # noqa: N802
        self.inbox.write(location, chunk)

    def finishFileUpload(self, location: str) -> None:  # noqa: N802
        self.inbox.finish(location)

    # -- the blob store (storm jar --jars/--artifacts, storm blobstore) ---------------------

    @contextlib.contextmanager
    def _keyed(self) -> Any:
        """The store's refusals as the Thrift exceptions the call declares."""
        try:
            yield
        except BlobNotFound as exc:
            raise self.t.KeyNotFoundException(msg=str(exc)) from exc
        except BlobExists as exc:
            raise self.t.KeyAlreadyExistsException(msg=str(exc)) from exc

    def _readable(self, key: str) -> Any:
        meta = self.blobs.meta(key)
        acl = [self.t.AccessControl(type=a["type"], name=a["name"], access=a["access"])
               for a in meta.acl]
        return self.t.ReadableBlobMeta(
            settable=self.t.SettableBlobMeta(acl=acl,
                                             replication_factor=meta.replication_factor),
            version=meta.version)

    def beginCreateBlob(self, key: str, meta: Any) -> str:  # noqa: N802
        with self._keyed():
            return self.blobs.begin_create(key, meta.acl if meta else [],
                                           meta.replication_factor if meta else None)

    def beginUpdateBlob(self, key: str) -> str:  # noqa: N802
        with self._keyed():
            return self.blobs.begin_update(key)

    def uploadBlobChunk(self, session: str, chunk: bytes) -> None:  # noqa: N802
        self.blobs.write(session, chunk)

    def finishBlobUpload(self, session: str) -> None:  # noqa: N802
        self.blobs.finish(session)

    def cancelBlobUpload(self, session: str) -> None:  # noqa: N802
        self.blobs.cancel(session)

    def getBlobMeta(self, key: str) -> Any:  # noqa: N802
        with self._keyed():
            return self._readable(key)

    def setBlobMeta(self, key: str, meta: Any) -> None:  # noqa: N802
        with self._keyed():
            self.blobs.set_meta(key, meta.acl if meta else [],
                                meta.replication_factor if meta else None)

    def beginBlobDownload(self, key: str) -> Any:  # noqa: N802
        with self._keyed():
            session, version, size = self.blobs.begin_download(key)
        return self.t.BeginDownloadResult(version=version, session=session, data_size=size)

    def downloadBlobChunk(self, session: str) -> bytes:  # noqa: N802
        return self.blobs.read(session)

    def deleteBlob(self, key: str) -> None:  # noqa: N802
        with self._keyed():
            self.blobs.delete(key)

    def listBlobs(self, session: str) -> Any:  # noqa: N802
        keys, after = self.blobs.list_page(session or "")
        return self.t.ListBlobsResult(keys=keys, session=after)

    def getBlobReplication(self, key: str) -> int:  # noqa: N802
        with self._keyed():
            self.blobs.meta(key)
        return 1  # one copy: this Nimbus's

    def updateBlobReplication(self, key: str, replication: int) -> int:  # noqa: N802
        """The factor asked for is kept in the blob's meta; the copies stay one."""
        with self._keyed():
            self.blobs.set_replication(key, replication)
        return 1

    def createStateInZookeeper(self, key: str) -> None:  # noqa: N802
        """Storm records which Nimbus holds a blob; here one does, and its store is that
        record."""
        check_key(key)

    def isRemoteBlobExists(self, key: str) -> bool:  # noqa: N802
        return self.blobs.exists(key)

    # -- submit ---------------------------------------------------------------------------

    def submitTopology(self, name: str, location: str, json_conf: str,  # noqa: N802
                       topology: Any) -> None:
        self.submitTopologyWithOpts(name, location, json_conf, topology,
                                    self.t.SubmitOptions(self.t.TopologyInitialStatus.ACTIVE))

    def submitTopologyWithOpts(self, name: str, location: str, json_conf: str,  # noqa: N802
                               topology: Any, options: Any) -> None:
        t = self.t
        if options is None:
            raise t.InvalidTopologyException(
                msg="Cannot submitTopologyWithOpts: SubmitOptions parameter value is null")
        if not name or not NAME.match(name):
            raise t.InvalidTopologyException(
                msg=f"Topology name '{name}' is not valid. It can't be null and it must "
                    f"match {NAME.pattern}")
        with self.submit_lock:
            if self._find(name) is not None:
                raise t.AlreadyAliveException(msg=f"{name} is already alive")
            try:
                launch = self._launch(name, location, json_conf, topology, options)
            except InvalidTopology as exc:
                raise t.InvalidTopologyException(msg=str(exc)) from exc
            with self.lock:
                self.launches[name] = launch
                self.starting[name] = threading.Event()
        threading.Thread(target=self._start, args=(launch,), name=f"nimbus-start-{name}",
                         daemon=True).start()
        log.info("%s: submitted (%s), starting", where(name), launch.topology_id)

    def _launch(self, name: str, location: str, json_conf: str, topology: Any,
                options: Any) -> Launch:
        jar = self.inbox.jar(location, name)
        conf = conf_of(json_conf, name)
        self.staging.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.staging))
        try:
            plan = plan_of_upload(name, jar, conf, topology, self.home.workdir(name), staging,
                                  self.java_classpath, self.blobs.copy)
            initial = topology_pb2.PAUSED if \
                options.initial_status == self.t.TopologyInitialStatus.INACTIVE \
                else topology_pb2.RUNNING

            def install(resources: Path) -> None:
                shutil.move(staging, resources)
                from thriftpy2.protocol import TBinaryProtocolFactory
                from thriftpy2.utils import serialize

                (resources.parent / STORM_CODE).write_bytes(
                    serialize(topology, TBinaryProtocolFactory()))

            try:
                return admin.submit(self.statemgr, self.home, plan, install,
                                    initial == topology_pb2.RUNNING, self.spark,
                                    wait=False).launch
            except RuntimeKernelError as exc:
                raise InvalidTopology(str(exc)) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _start(self, launch: Launch) -> None:
        try:
            took = launch.start()
            log.info("%s: running, every task registered in %.1fs", where(launch.name), took)
        except RuntimeKernelError as exc:
            log.error("%s: did not start: %s (logs in %s)", where(launch.name), exc,
                      launch.workdir)
            with self.lock:
                self.launches.pop(launch.name, None)
        finally:
            with self.lock:
                self.starting.pop(launch.name).set()

    def _started(self, name: str) -> None:
        """Storm takes activate, deactivate and rebalance as soon as submit returns; here
        the topology's master is asked, so a call made while it starts waits for it."""
        with self.lock:
            starting = self.starting.get(name)
        if starting is not None and not starting.wait(START_WAIT_SECS):
            msg = f"{where(name)}: still starting after {START_WAIT_SECS:.0f}s"
            raise _internal(msg)

    # -- kill, activate, deactivate, rebalance ---------------------------------------------------

    def killTopology(self, name: str) -> None:  # noqa: N802
        self.killTopologyWithOpts(name, self.t.KillOptions())

    def killTopologyWithOpts(self, name: str, options: Any) -> None:  # noqa: N802
        with self.lock:
            known = self._alive(name)
            if known.status == "KILLED":
                raise self.t.NotAliveException(msg=f"{name} is not alive")
            self._check_may_stop(name)
            wait = options.wait_secs if options is not None and \
                options.wait_secs is not None else \
                int(known.plan.config.get("topology.message.timeout.secs",
                                          DEFAULT_KILL_WAIT_SECS))
            self.killing[name] = time.time() + max(0, wait)
        if wait > 0:
            with contextlib.suppress(RuntimeKernelError):
                control.set_state(self.statemgr, name, False)  # Storm deactivates first
        threading.Thread(target=self._kill_after, args=(name, max(0, wait)),
                         name=f"nimbus-kill-{name}", daemon=True).start()
        log.info("%s: killed; stopping in %ds", where(name), wait)

    def _check_may_stop(self, name: str) -> None:
        with self.lock:
            if name in self.launches:
                return
        location = running_scheduler(self.statemgr, name)
        if location is None:
            return
        if location.host and location.host != socket.gethostname():
            msg = (f"{where(name)}: its scheduler runs on {location.host}; kill it "
                   "through a Nimbus (or heronbridge kill) there")
            raise _internal(msg)
        try:
            os.kill(location.pid, 0)
        except PermissionError as exc:
            raise self.t.AuthorizationException(
                msg=f"killTopology on topology {name} is not authorized: its scheduler "
                    f"(pid {location.pid}) belongs to another user") from exc
        except ProcessLookupError:
            pass

    def _kill_after(self, name: str, wait: float) -> None:
        time.sleep(wait)
        try:
            self._stop(name)
        except Exception:
            log.exception("%s: stopping it failed", where(name))
        finally:
            with self.lock:
                self.killing.pop(name, None)

    def _stop(self, name: str) -> None:
        try:
            admin.kill(self.statemgr, name)
        finally:
            with self.lock:
                launch = self.launches.pop(name, None)
            if launch is not None:
                launch.stop()  # reaps the scheduler started here (it has stopped)

    def activate(self, name: str) -> None:
        self._set_running(name, True)

    def deactivate(self, name: str) -> None:
        self._set_running(name, False)

    def _set_running(self, name: str, running: bool) -> None:
        known = self._alive(name)
        if known.status == "KILLED":
            # Storm has no transition out of KILLED: a RuntimeException, an internal error.
            event = "ACTIVATE" if running else "INACTIVATE"
            msg = f"No transition for event: {event}, status: KILLED storm-id: {known.topology.id}"
            raise _internal(msg)
        self._started(name)
        try:
            (admin.activate if running else admin.deactivate)(self.statemgr, name)
        except StateManagerError as exc:
            if _denied(exc):
                action = "activate" if running else "deactivate"
                raise self.t.AuthorizationException(
                    msg=f"{action} on topology {name} is not authorized: {exc}") from exc
            raise

    def rebalance(self, name: str, options: Any) -> None:
        """Validated as Storm validates it, then applied as `heronbridge update`: new
        executor counts are the components' parallelism, `num_workers` the containers.
        As Nimbus does, it returns at once and the topology shows REBALANCING until the
        update is done; what the update refuses is refused here (InvalidTopologyException).
        The spouts pause only while the trees in flight drain, not for `wait_secs`."""
        known = self._alive(name)
        components = sorted(known.plan.components)
        executors = (options.num_executors if options is not None else None) or {}
        for component, count in executors.items():
            if not component.startswith(SYSTEM_PREFIX) and component not in components:
                raise self.t.InvalidTopologyException(
                    msg=f"Invalid component {component} for topology {name}, valid values "
                        f"are {','.join(components)}")
            if count is None or count <= 0:
                raise self.t.InvalidTopologyException(
                    msg="Number of executors must be greater than 0")
        parallelism = {c: n for c, n in executors.items() if not c.startswith(SYSTEM_PREFIX)}
        workers = options.num_workers if options is not None else None
        if workers is not None and workers <= 0:
            raise self.t.InvalidTopologyException(
                msg="Number of workers must be greater than 0")
        if not parallelism and workers is None:
            return
        with self.lock:
            if name in self.rebalancing:
                raise self.t.InvalidTopologyException(
                    msg=f"{where(name)}: a rebalance is already under way")
        self._started(name)
        if not parallelism:  # the update needs a component: one at its current size
            first = components[0]
            parallelism = {first: known.plan.components[first].parallelism}
        try:
            admin.update(self.statemgr, name, parallelism, workers, dry_run=True)
        except RuntimeKernelError as exc:
            raise self.t.InvalidTopologyException(msg=str(exc)) from exc
        with self.lock:
            self.rebalancing.add(name)
        threading.Thread(target=self._rebalance, args=(name, parallelism, workers),
                         name=f"nimbus-rebalance-{name}", daemon=True).start()

    def _rebalance(self, name: str, parallelism: dict[str, int], workers: int | None) -> None:
        try:
            report = admin.update(self.statemgr, name, parallelism, workers,
                                  reason="Nimbus rebalance")
            log.info("%s: rebalanced to packing %s; spouts paused %.2fs", where(name),
                     report.new_packing_id, report.paused_secs)
        except RuntimeKernelError as exc:
            log.error("%s: rebalance failed: %s", where(name), exc)
        finally:
            with self.lock:
                self.rebalancing.discard(name)


def _denied(exc: BaseException) -> bool:
    """A state manager refusal for lack of rights (a file mode, a ZooKeeper ACL)."""
    cause = exc.__cause__
    return isinstance(cause, PermissionError) or type(cause).__name__ == "NoAuthError"
