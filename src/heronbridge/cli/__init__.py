"""The `heronbridge` command line: one module per verb, each presentation only (what it
does to a topology, it asks of runtime.admin or of the package that owns it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.markup import escape

from .. import __version__
from ..errors import HeronbridgeError
from . import (
    activate,
    bench,
    conform,
    deactivate,
    docs,
    kafka,
    kill,
    list,  # noqa: A004 - the verb's name
    log_level,
    logs,
    migrate,
    nimbus,
    run,
    storm,
    submit,
    ui,
    update,
)
from .options import parents
from .terminal import console

# In the order `heronbridge --help` lists them.
VERBS = (run, submit, list, logs, kill, activate, deactivate, update, log_level, migrate,
         conform, storm, kafka, bench, ui, nimbus, docs)
# Each verb's page in the docs site, generated from these parsers (scripts/generate_docs.py),
# and how `heronbridge docs` names it.
DOCS = "docs/reference/cli.md"
DOCS_PAGE = "reference/cli"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heronbridge",
        description="Run Storm-era Python topologies (streamparse projects, unchanged) on a "
                    "Heron-architecture runtime.",
        epilog="docs: `heronbridge docs` serves this version's docs site (tutorials, how-to "
               "guides, reference) on 127.0.0.1 and prints its address; each verb's --help "
               "ends with the page for it.")
    parser.add_argument("--version", action="version", version=f"heronbridge {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    shared = parents()
    for verb in VERBS:
        verb.add_verb(verbs, shared)
    link_docs(parser)
    return parser


def verb_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every verb's parser by its command (`run`, `storm fetch`), nested verbs included."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                command = sub.prog.removeprefix("heronbridge ")
                found[command] = sub
                found.update(verb_parsers(sub))
    return found


def docs_anchor(command: str) -> str:
    return "heronbridge-" + command.replace(" ", "-")


def link_docs(parser: argparse.ArgumentParser) -> None:
    """End every verb's --help with its page, as `heronbridge docs` opens it, here rather
    than in each verb's module."""
    for command, sub in verb_parsers(parser).items():
        link = f"docs: heronbridge docs {DOCS_PAGE}#{docs_anchor(command)}"
        sub.epilog = f"{sub.epilog}\n\n{link}" if sub.epilog else link


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HeronbridgeError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
