"""`heronbridge kafka fetch|start`: Apache Kafka brokers (KRaft, Maven Central's jars) on
loopback for development, the brokers the Kafka tests and benchmark run."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any

from .options import Parents, add_fetch_verb
from .terminal import console


def add_verb(verbs: Any, parents: Parents) -> None:
    home = parents.home
    kafka = verbs.add_parser("kafka", help="Apache Kafka brokers for development",
                             description="Apache Kafka brokers in KRaft mode from Maven "
                                         "Central's jars, on loopback (Java 17 and Maven).")
    kafka_verbs = kafka.add_subparsers(dest="kafka_verb", metavar="VERB", required=True)
    add_fetch_verb(kafka_verbs, parents, "Kafka", cmd_kafka_fetch)
    start = kafka_verbs.add_parser(
        "start", parents=[home], help="run brokers until interrupted",
        description="Start KRaft brokers on loopback and keep them until Ctrl-C; prints "
                    "their bootstrap servers. Their data stays in --folder across starts.")
    start.add_argument("--brokers", type=int, default=1, help="how many nodes (default 1)")
    start.add_argument("--port", type=int, default=9092,
                       help="the first node's broker port; its controller listens on the "
                            "next, each further node two ports up (default 9092)")
    start.add_argument("--folder", default=None,
                       help="where the nodes keep their data and logs (default: the "
                            "home's kafka/cluster-PORT)")
    start.set_defaults(func=cmd_kafka_start)


def _broker() -> Any:
    from heronbridge.jvm import kafka  # Java and Maven's, no Python extra

    return kafka


def cmd_kafka_fetch(args: argparse.Namespace) -> int:
    with console.status("resolving Apache Kafka with Maven"):
        install = _broker().fetch(Path(args.home))
    console.print(f"Apache Kafka {install.version}: {len(install.classpath)} jars, "
                  f"java {install.java}")
    return 0


def cmd_kafka_start(args: argparse.Namespace) -> int:
    broker = _broker()
    folder = Path(args.folder) if args.folder else Path(args.home) / "kafka" / \
        f"cluster-{args.port}"
    ports = [args.port + 2 * i for i in range(args.brokers)]
    cluster = broker.KafkaCluster(folder, brokers=args.brokers, ports=ports,
                                  home=Path(args.home))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with console.status(f"starting {args.brokers} Kafka node(s) in {folder}"):
        cluster.start()
    try:
        console.print(f"Kafka {cluster.install.version} running: bootstrap servers "
                      f"[bold]{cluster.bootstrap_servers}[/] (Ctrl-C stops it; logs in "
                      f"{folder}/node-*/logs)", highlight=False)
        while not stop.wait(1.0):
            dead = [n.node_id for n in cluster.nodes if not n.running]
            if dead:
                console.print(f"[red]Kafka node(s) {dead} exited[/]: see {folder}")
                return 1
    finally:
        cluster.stop()
    return 0
