"""`heronbridge storm fetch`: the Apache Storm (from Maven Central) that `conform` runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import extras
from .options import Parents
from .terminal import console


def add_verb(verbs: Any, parents: Parents) -> None:
    home = parents.home
    storm = verbs.add_parser("storm", help="the Apache Storm the conformance suite runs",
                             description="Manage the Apache Storm (from Maven Central) "
                                         "that `conform` runs in local mode.")
    storm_verbs = storm.add_subparsers(dest="storm_verb", metavar="VERB", required=True)
    fetch = storm_verbs.add_parser("fetch", parents=[home],
                                   help="resolve Storm's jars with Maven into the cache",
                                   description="Resolve Storm's jars with Maven into the "
                                               "cache under --home (done on first use).")
    fetch.set_defaults(func=cmd_storm_fetch)


def cmd_storm_fetch(args: argparse.Namespace) -> int:
    fetch = extras.load("heronbridge.conformance.storm", "conformance",
                        "heronbridge storm fetch").fetch

    with console.status("resolving Apache Storm with Maven"):
        install = fetch(Path(args.home))
    console.print(f"Apache Storm {install.version}: {len(install.classpath)} jars, "
                  f"java {install.java}")
    return 0
