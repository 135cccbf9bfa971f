"""The options that say where a topology's containers run, shared by the verbs that start
topologies (run, submit, and the Nimbus endpoint's submissions)."""

from __future__ import annotations

import argparse

from heronbridge.runtime.scheduler.spark import SparkOptions, parse_conf

from .errors import HeronbridgeError


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
