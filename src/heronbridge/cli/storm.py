"""`heronbridge storm fetch`: Apache Storm's jars (from Maven Central), which Java
components, `run --jar`/`--flux` and `conform` run with."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from heronbridge.jvm import storm

from .options import Parents, add_fetch_verb
from .terminal import console


def add_verb(verbs: Any, parents: Parents) -> None:
    verb = verbs.add_parser("storm", help="Apache Storm's jars, for Java components and conform",
                            description="Manage Apache Storm's jars (from Maven Central), "
                                        "which Java components, `run --jar`/`--flux` and "
                                        "`conform` run with.")
    storm_verbs = verb.add_subparsers(dest="storm_verb", metavar="VERB", required=True)
    add_fetch_verb(storm_verbs, parents, "Storm", cmd_storm_fetch)


def cmd_storm_fetch(args: argparse.Namespace) -> int:
    with console.status("resolving Apache Storm with Maven"):
        jars = storm.fetch(Path(args.home))
    console.print(f"Apache Storm {jars.version}: {len(jars.jars) + len(jars.singles)} jars, "
                  f"java {jars.java}")
    return 0
