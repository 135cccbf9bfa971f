"""The command line's `nimbus` verb: Nimbus's Thrift service, so that `sparse submit`,
`sparse list`, `sparse kill` and Storm's `storm list/kill/activate/deactivate` work
against heronbridge by changing one host name."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from functools import partial
from pathlib import Path
from typing import Any

from heronbridge.runtime.scheduler import Home

from ..errors import HeronbridgeError
from .options import Parents, spark_of
from .terminal import console


def add_verb(verbs: Any, parents: Parents) -> None:
    nimbus = verbs.add_parser(
        "nimbus", parents=[parents.home, parents.state, parents.scheduler],
        help="serve Nimbus's Thrift API, for sparse and Storm's own commands",
        description="Serve Apache Storm's Nimbus Thrift service (Storm 2.8's; streamparse's "
                    "older copy too): sparse submit/list/kill and storm list/kill/activate/"
                    "deactivate/rebalance, storm jar (with --jars/--artifacts) and storm "
                    "blobstore talk to it as to Nimbus. Submitted topologies run, "
                    "detached, on --scheduler (this host, or a Spark cluster), with their "
                    "state in --state. The plain port listens on loopback only; beyond it, "
                    "Nimbus's TLS port with client certificates (mutual TLS) is required.")
    nimbus.add_argument("--port", type=int, default=6627,
                        help="the plain Thrift port, on loopback (nimbus.thrift.port; "
                             "default: %(default)s; 0 picks a free one)")
    nimbus.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s); beyond "
                             "loopback only the TLS port listens there, and TLS is required")
    nimbus.add_argument("--tls-port", type=int, default=6628,
                        help="the TLS port (nimbus.thrift.tls.port; default: %(default)s)")
    nimbus.add_argument("--tls-cert", metavar="PEM", help="this endpoint's certificate")
    nimbus.add_argument("--tls-key", metavar="PEM", help="its private key")
    nimbus.add_argument("--tls-ca", metavar="PEM",
                        help="the CA that signs the clients' certificates (each client "
                             "must present one)")
    nimbus.set_defaults(func=cmd_nimbus)


def cmd_nimbus(args: argparse.Namespace) -> int:
    from heronbridge.jvm.storm import give_classpath
    from heronbridge.nimbus.server import NimbusServer
    from heronbridge.nimbus.service import NimbusService

    files = (args.tls_cert, args.tls_key, args.tls_ca)
    if any(files) and not all(files):
        msg = ("--tls-cert, --tls-key and --tls-ca go together: received "
               f"{dict(zip(('cert', 'key', 'ca'), files, strict=True))}")
        raise HeronbridgeError(msg)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    spark = spark_of(args)
    home = Home(Path(args.home), args.state)
    statemgr = home.open_statemgr()
    try:
        service = NimbusService(home, statemgr, spark, partial(give_classpath, home=home.root))
        server = NimbusServer(service, args.host, args.port,
                              files if all(files) else None, args.tls_port).start()
    except BaseException:
        statemgr.close()
        raise
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    console.print(f"heronbridge nimbus: {server.host}:{server.port} (framed Thrift)"
                  + (f", TLS on {args.host}:{server.tls_port}" if server.tls_port else "")
                  + f"; state {statemgr.uri}")
    try:
        stop.wait()
    finally:
        server.close()
        statemgr.close()
    console.print("heronbridge nimbus: stopped (submitted topologies keep running)")
    return 0
