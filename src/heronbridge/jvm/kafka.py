"""Apache Kafka brokers in KRaft mode from Maven Central's jars: one, or a cluster of
several, on loopback, for the tests, the benchmarks and a user's development
(`heronbridge kafka start`).

Each node is broker and controller at once (`process.roles=broker,controller`), every
node a voter of the controller quorum. A cluster's folder holds `cluster.id` and one
folder per node: `server.properties`, `data/` (formatted once by Kafka's StorageTool,
kept across restarts), `logs/server.log`, `stderr.log`. The jars are resolved by Maven
from the pom beside this module into `<home>/kafka/<version>/`, once.
"""

from __future__ import annotations

import base64
import os
import random
import signal
import socket
import subprocess
import time
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import JvmError, maven

PACKAGE = Path(__file__).resolve().parent
POM = PACKAGE / "kafka-pom.xml"
LOG_CONFIG = PACKAGE / "kafka-log4j2.properties"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
JVM_OPTIONS = ["-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
STARTED = "Kafka Server started"
START_TIMEOUT = 180.0  # a loaded 2-core machine takes 15 s for one JVM to start a broker
STOP_GRACE = 30.0  # a controlled shutdown moves leadership away first
PORT_IN_USE = "Address already in use"
START_TRIES = 4  # chosen ports taken before the broker bound them: new ones, this often
BIND_WAIT = 30.0  # a restarted node's port held by another socket: retry this long


class KafkaBrokerError(JvmError):
    """A Kafka broker could not be fetched, set up, started or stopped."""


@dataclass(frozen=True)
class KafkaInstall:
    version: str
    classpath: list[Path]
    java: Path
    directory: Path  # <home>/kafka/<version>


def kafka_version(pom: Path | None = None) -> str:
    node = ET.parse(pom or POM).getroot().find("m:properties/m:kafka.version", NS)
    if node is None or not (node.text or "").strip():
        msg = f"{str(pom or POM)!r}: expected a kafka.version property, found none"
        raise KafkaBrokerError(msg)
    return (node.text or "").strip()


def fetch(home: Path | None = None, log: maven.Log | None = None) -> KafkaInstall:
    """Kafka's jars: resolved with Maven on first use, then reused."""
    from heronbridge.runtime.scheduler import default_home

    say = log or (lambda text: None)
    java = maven.find_java("Apache Kafka", KafkaBrokerError)
    version = kafka_version()
    directory = Path(home or default_home()) / "kafka" / version
    jars, _ = maven.fetch(directory, POM, f"Apache Kafka {version}", KafkaBrokerError, say)
    return KafkaInstall(version, jars, java, directory)


def free_ports(host: str, count: int) -> list[int]:
    """`count` consecutive ports free on `host` now, below the kernel's ephemeral range:
    the port 0 gives is one a client connection may take as its own before the broker
    binds it, a port below that range only a listener of someone else's."""
    low = _ephemeral_low()
    rng = random.SystemRandom()
    for _ in range(1000):
        first = rng.randrange(10000, low - count)
        held = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                held.append(s)
                s.bind((host, port))
            return list(range(first, first + count))
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    msg = f"no {count} consecutive free ports on {host} between 10000 and {low}"
    raise KafkaBrokerError(msg)


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


@dataclass
class Node:
    """One KRaft node: a broker and a voter of the controller quorum."""

    node_id: int
    host: str
    port: int
    controller_port: int
    folder: Path
    process: subprocess.Popen | None = field(default=None, repr=False)
    log_offset: int = 0  # the log's size at the last launch: "started" is looked for after

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "logs" / "server.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def launched(self) -> subprocess.Popen:
        """The node's process; only asked of a node that was started."""
        if self.process is None:
            msg = f"Kafka node {self.node_id} was never started"
            raise KafkaBrokerError(msg)
        return self.process


class KafkaCluster:
    """`brokers` KRaft nodes on `host`, their data under `folder`.

    `settings` are added to every node's server.properties (over the defaults below).
    `ports` gives each node's broker port (its controller port is the next one); by
    default free ports are chosen, and chosen again if another process binds one before
    the broker does (start() tries START_TRIES times). `hosts` spreads the nodes over
    several loopback addresses (node i on hosts[i % len(hosts)]). Use as a context
    manager, or start() and stop().
    """

    def __init__(self, folder: Path, brokers: int = 1, host: str = "127.0.0.1",
                 ports: list[int] | None = None, settings: dict[str, Any] | None = None,
                 hosts: list[str] | None = None,
                 home: Path | None = None, install: KafkaInstall | None = None,
                 jvm_options: list[str] | None = None) -> None:
        if brokers < 1:
            msg = f"a Kafka cluster needs at least one broker, received {brokers}"
            raise KafkaBrokerError(msg)
        self.folder = Path(folder)
        where = [(hosts or [host])[i % len(hosts or [host])] for i in range(brokers)]
        self.settings = dict(settings or {})
        self.home = home
        self.install = install
        self.jvm_options = list(jvm_options or JVM_OPTIONS)
        self.chosen_ports = ports is None
        if ports is None:
            pairs = [tuple(free_ports(h, 2)) for h in where]
        else:
            if len(ports) != brokers:
                msg = f"expected {brokers} broker ports, received {len(ports)}: {ports}"
                raise KafkaBrokerError(msg)
            pairs = [(p, p + 1) for p in ports]
        self.nodes = [Node(i + 1, h, port, cport, self.folder / f"node-{i + 1}")
                      for i, (h, (port, cport)) in enumerate(zip(where, pairs, strict=True))]

    # -- what users read -----------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.address for n in self.nodes)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        msg = f"no Kafka node {node_id}: this cluster has nodes {[n.node_id for n in self.nodes]}"
        raise KafkaBrokerError(msg)

    # -- life ------------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT, log: maven.Log | None = None) -> KafkaCluster:
        """Fetch Kafka if needed, format new nodes, start every node and wait until
        each says it started."""
        self.install = self.install or fetch(self.home, log)
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        deadline = time.monotonic() + timeout
        attempt = 1
        while True:
            for n in self.nodes:
                self._write_config(n)
            self._format([n for n in self.nodes
                          if not (n.folder / "data" / "meta.properties").exists()])
            for n in self.nodes:
                self._launch(n)
            try:
                for n in self.nodes:
                    self._await_started(n, deadline)
                return self
            except PortTakenError as exc:
                self.stop()
                if not self.chosen_ports or attempt == START_TRIES:
                    raise
                if log:
                    log(f"{exc}; starting again on other ports")
                for n in self.nodes:  # the voters list names every node's: all anew
                    n.port, n.controller_port = free_ports(n.host, 2)
                attempt += 1

    def stop(self) -> None:
        """Stop every node: SIGTERM (a controlled shutdown), SIGKILL after a grace."""
        for n in self.nodes:
            if n.running:
                n.launched.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for n in self.nodes:
            self._reap(n, deadline)

    def kill(self, node_id: int) -> None:
        """SIGKILL one node (a crash: no controlled shutdown)."""
        n = self.node(node_id)
        if n.running:
            n.launched.kill()
            n.launched.wait(30)

    def stop_node(self, node_id: int) -> None:
        n = self.node(node_id)
        if n.running:
            n.launched.send_signal(signal.SIGTERM)
        self._reap(n, time.monotonic() + STOP_GRACE)

    def start_node(self, node_id: int, timeout: float = START_TIMEOUT) -> None:
        """Start a stopped node on its ports (the other voters know them): while
        another socket holds one, launched again, for BIND_WAIT seconds."""
        n = self.node(node_id)
        if n.running:
            return
        deadline = time.monotonic() + timeout
        bind_deadline = time.monotonic() + BIND_WAIT
        while True:
            self._launch(n)
            try:
                self._await_started(n, deadline)
                return
            except PortTakenError:
                if time.monotonic() > bind_deadline:
                    raise
                time.sleep(1.0)

    def restart_node(self, node_id: int, timeout: float = START_TIMEOUT) -> None:
        self.stop_node(node_id)
        self.start_node(node_id, timeout)

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inside ------------------------------------------------------------------------

    def _properties(self, n: Node) -> dict[str, Any]:
        replicas = min(3, len(self.nodes))
        voters = ",".join(f"{m.node_id}@{m.host}:{m.controller_port}" for m in self.nodes)
        props: dict[str, Any] = {
            "process.roles": "broker,controller",
            "node.id": n.node_id,
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://{n.host}:{n.port},CONTROLLER://{n.host}:{n.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{n.host}:{n.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(n.folder / "data"),
            # Internal topics replicated as far as the cluster allows; a write needs a
            # majority of them (one broker may be down in a cluster of three).
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": max(1, replicas - 1),
            "default.replication.factor": replicas,
            "min.insync.replicas": max(1, replicas - 1),
            # Small internal topics: they are created on first use, faster so.
            "offsets.topic.num.partitions": 8,
            "transaction.state.log.num.partitions": 8,
            "group.initial.rebalance.delay.ms": 0,
            "num.partitions": 1,
            "auto.create.topics.enable": "true",
        }
        props.update(self.settings)
        return props

    def _write_config(self, n: Node) -> None:
        (n.folder / "logs").mkdir(parents=True, exist_ok=True)
        text = "".join(f"{k}={v}\n" for k, v in self._properties(n).items())
        (n.folder / "server.properties").write_text(text)

    def _java(self, main: str, *args: str, node: Node | None = None) -> list[str]:
        logs = node.folder / "logs" if node else self.folder
        if self.install is None:
            msg = "the Kafka cluster's jars are fetched when it starts, not before"
            raise KafkaBrokerError(msg)
        return [str(self.install.java), *self.jvm_options,
                f"-Dkafka.logs.dir={logs}", f"-Dlog4j2.configurationFile={LOG_CONFIG}",
                "-cp", os.pathsep.join(map(str, self.install.classpath)), main, *args]

    def _cluster_id(self) -> str:
        path = self.folder / "cluster.id"
        if path.is_file():
            return path.read_text().strip()
        cluster_id = random_cluster_id()
        path.write_text(cluster_id + "\n")
        return cluster_id

    def _format(self, nodes: list[Node]) -> None:
        """Kafka's StorageTool on each new node's data folder, the nodes in parallel."""
        if not nodes:
            return
        cluster_id = self._cluster_id()
        running = [(n, subprocess.Popen(
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id,
                       "-c", str(n.folder / "server.properties"), node=n),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True)) for n in nodes]
        for n, proc in running:
            out, _ = proc.communicate(timeout=START_TIMEOUT)
            if proc.returncode != 0:
                msg = (f"formatting Kafka node {n.node_id}'s storage in {n.folder / 'data'} "
                       f"failed (exit code {proc.returncode}): {out.strip()[-2000:]}")
                raise KafkaBrokerError(msg)

    def _launch(self, n: Node) -> None:
        from heronbridge.runtime.scheduler.processes import die_with_parent

        n.log.parent.mkdir(parents=True, exist_ok=True)
        n.log_offset = n.log.stat().st_size if n.log.exists() else 0
        with (n.folder / "stderr.log").open("ab") as err:
            n.process = subprocess.Popen(
                self._java("kafka.Kafka", str(n.folder / "server.properties"), node=n),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                cwd=n.folder, start_new_session=True, preexec_fn=die_with_parent())

    def _await_started(self, n: Node, deadline: float) -> None:
        """Until the node's log says it started (after its launch) and its port answers."""
        while True:
            if n.launched.poll() is not None:
                msg = (f"Kafka node {n.node_id} exited with code {n.launched.returncode} "
                       f"while starting; the last lines of {n.log}:\n{maven.tail(n.log)}\n"
                       f"{maven.tail(n.folder / 'stderr.log', 5)}")
                if _logged_since(n.log, n.log_offset, PORT_IN_USE):
                    msg = (f"Kafka node {n.node_id} could not bind {n.host}:{n.port} or "
                           f"{n.controller_port}: another process holds it")
                    raise PortTakenError(msg)
                raise KafkaBrokerError(msg)
            if _logged_since(n.log, n.log_offset, STARTED) and _listening(n.host, n.port):
                return
            if time.monotonic() > deadline:
                msg = (f"Kafka node {n.node_id} did not start within its time (log: {n.log}); "
                       f"the last lines:\n{maven.tail(n.log)}")
                raise KafkaBrokerError(msg)
            time.sleep(0.2)

    @staticmethod
    def _reap(n: Node, deadline: float) -> None:
        if n.process is None:
            return
        try:
            n.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            n.launched.kill()
            n.launched.wait(30)


class PortTakenError(KafkaBrokerError):
    """A node's port was bound by another process before the node bound it."""


def random_cluster_id() -> str:
    """A cluster id as Kafka's StorageTool makes one: a random UUID in unpadded URL-safe
    base64, not starting with "-" (saves a JVM start)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _logged_since(log: Path, offset: int, text: str) -> bool:
    try:
        with log.open("rb") as f:
            if f.seek(0, os.SEEK_END) < offset:
                offset = 0  # rotated since
            f.seek(offset)
            return text.encode() in f.read()
    except FileNotFoundError:
        return False


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False
