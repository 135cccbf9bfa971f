"""The options verbs share, as parent parsers: where topologies live (--home, --state),
which topology (FILE, --project, -n, -e, -o, ...), a submitted topology's name, and
where its containers run (--scheduler, shared by run, submit and the Nimbus endpoint)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from heronbridge.runtime.health.config import ENABLED as HEALTH
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import default_home, default_state
from heronbridge.runtime.scheduler.spark import SparkOptions, parse_conf

from ..errors import HeronbridgeError


@dataclass(frozen=True)
class Parents:
    """The parent parsers a verb builds its own from."""

    home: argparse.ArgumentParser
    state: argparse.ArgumentParser
    topology: argparse.ArgumentParser
    named: argparse.ArgumentParser
    scheduler: argparse.ArgumentParser


def parents() -> Parents:
    home = argparse.ArgumentParser(add_help=False)
    home.add_argument("--home", default=str(default_home()),
                      help="where topologies keep state and logs [env: HERONBRIDGE_HOME] "
                           "(default: %(default)s)")
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state", metavar="URI", default=default_state(),
                       help="the state manager: zk://HOST:PORT[,HOST:PORT]/ROOT for "
                            "ZooKeeper [env: HERONBRIDGE_STATE] (default: the home's state/ "
                            "folder)")
    topo = argparse.ArgumentParser(add_help=False)
    topo.add_argument("topology", nargs="?", metavar="FILE",
                      help="a Python file defining a TopologyBuilder; without it, the "
                           "streamparse project in --project or the current folder")
    topo.add_argument("--project", metavar="PATH",
                      help="a streamparse project folder (the one holding config.json)")
    topo.add_argument("-n", "--name", help="which topology (streamparse: topologies/NAME.py)")
    topo.add_argument("-e", "--environment",
                      help="the config.json environment whose options apply (streamparse)")
    topo.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                      help="set a topology config key, seen by the components too "
                           "(value read as JSON if it parses)")
    topo.add_argument("--multilang", action="store_true",
                      help="run Python components as subprocesses speaking Storm's multilang "
                           "protocol, byte for byte as under Storm (streamparse)")
    topo.add_argument("--java-jars", metavar="DIR",
                      help="a folder of jars with the project's Java code (JavaSpout/JavaBolt "
                           "classes), besides lein's jar in the project's target/")
    topo.add_argument("--rebuild-virtualenv", action="store_true",
                      help="build the streamparse topology's virtualenv (virtualenvs/NAME.txt) "
                           "again even if it is cached")
    topo.add_argument("--containers", type=int,
                      help="number of containers (stream managers); topology.stmgrs")
    add_health_option(topo)
    named = argparse.ArgumentParser(add_help=False)
    named.add_argument("topology_name", help="name of a submitted topology")
    return Parents(home, state, topo, named, scheduler_options())


def add_fetch_verb(verbs: Any, parents: Parents, system: str,
                   func: Callable[[argparse.Namespace], int]) -> None:
    """`heronbridge SYSTEM fetch`: the system's jars resolved with Maven into the cache."""
    fetch = verbs.add_parser("fetch", parents=[parents.home],
                             help=f"resolve {system}'s jars with Maven into the cache",
                             description=f"Resolve {system}'s jars with Maven into the "
                                         "cache under --home (done on first use).")
    fetch.set_defaults(func=func)


def add_health_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--health", choices=("on", "off"),
                        help="the health manager, which scales up under-provisioned bolts "
                             "and restarts slow instances (default: on; config "
                             f"{HEALTH})")


def apply_health_option(args: argparse.Namespace, plan: LogicalPlan) -> None:
    if getattr(args, "health", None):
        plan.config[HEALTH] = args.health


def scheduler_options() -> argparse.ArgumentParser:
    """A parent parser: --scheduler, --spark-master, --spark-conf."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--scheduler", choices=("local", "spark"), default="local",
                        help="where the containers run: processes on this host (default), "
                             "or long-running tasks on a Spark cluster (needs --state zk://)")
    parent.add_argument("--spark-master", metavar="URL",
                        help="the Spark master of --scheduler spark (spark://HOST:7077, "
                             "yarn, k8s://...)")
    parent.add_argument("--spark-conf", action="append", metavar="KEY=VALUE",
                        help="a Spark setting for the topology's application (secrets go "
                             "in the cluster's spark-defaults.conf, not here)")
    return parent


def spark_of(args: argparse.Namespace) -> SparkOptions | None:
    """The Spark cluster `--scheduler spark` runs on; None for the local scheduler."""
    if args.scheduler != "spark":
        if args.spark_master or args.spark_conf:
            msg = "--spark-master and --spark-conf apply to --scheduler spark"
            raise HeronbridgeError(msg)
        return None
    if not args.spark_master:
        msg = "--scheduler spark needs --spark-master URL (e.g. spark://HOST:7077)"
        raise HeronbridgeError(msg)
    return SparkOptions(args.spark_master, parse_conf(args.spark_conf))
