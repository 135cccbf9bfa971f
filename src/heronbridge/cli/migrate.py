"""The command line's `migrate` verb: the codemod from Storm-era Python to heronpy."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .options import Parents

console = Console(stderr=True, soft_wrap=True)

EXIT_PENDING = 1  # --check: files would change
EXIT_FAILED = 2  # some files could not be migrated (they are listed)


def add_verb(verbs: Any, parents: Parents) -> None:
    from heronbridge.migrate.rules import RULES

    rules = "\n".join(f"  {r.ID}  {r.NAME:14} {r.DESCRIPTION}" for r in RULES)
    migrate = verbs.add_parser(
        "migrate", help="rewrite streamparse, pystorm and storm.py code to heronpy",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Rewrite the Python files under PATH from streamparse, pystorm and "
                    "Storm's storm.py to heronpy's API, in place. What cannot be rewritten "
                    "is left with a '# TODO(heronbridge:RULE): reason' comment, a warning "
                    "and a report entry; a second run changes nothing.",
        epilog=f"rules, in the order they run:\n{rules}\n\nexit status: 0 done; 1 with "
               "--check, files would change; 2 some files failed (others were migrated); "
               "3 both")
    migrate.add_argument("path", metavar="PATH", help="a file or a folder (searched for *.py)")
    migrate.add_argument("--diff", action="store_true",
                         help="print the changes as a unified diff (paths a/REL, b/REL from PATH: "
                              "git apply or patch -p1 in PATH take it); write nothing")
    migrate.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 if anything would change")
    migrate.add_argument("--report", metavar="FILE",
                         help="write what each rule did (converted or todo) as JSON")
    migrate.add_argument("--rule", metavar="ID", action="append",
                         help="run only this rule (id or name; repeatable)")
    migrate.add_argument("--jobs", "-j", metavar="N", type=int,
                         help="worker processes (default: one per CPU)")
    migrate.set_defaults(func=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    from heronbridge.migrate.rules import select
    from heronbridge.migrate.runner import migrate

    dry = args.diff or args.check
    with console.status("migrating"):
        outcome = migrate(args.path, write=not dry, diff=args.diff, rule_ids=args.rule,
                          jobs=args.jobs)
    for result in outcome.files:
        if result.diff:
            sys.stdout.buffer.write(result.diff)
    sys.stdout.flush()
    for entry in outcome.todos:
        console.print(f"[yellow]todo[/] {escape(entry.path)}:{entry.line}: {entry.rule}: "
                      f"{escape(entry.message)}")
    for result in outcome.failed:
        console.print(f"[red]failed[/] {escape(result.path)}: {escape(result.error)}")
    summary = outcome.summary()
    verb = "would change" if dry else "changed"
    console.print(f"{summary['files']} files: {summary['changed']} {verb}, "
                  f"{summary['failed']} failed")
    if summary["converted"]:
        console.print(f"rewritten: {summary['converted']} ({_by_rule(summary['rewritten'])}); "
                      "each changed file compiled after rewriting")
    else:
        console.print("rewritten: nothing (no rule found anything to rewrite)")
    markers = "TODO marker" if summary["todo"] == 1 else "TODO markers"
    console.print(f"marked for you: {summary['todo']} {markers} "
                  f"({_by_rule(summary['marked'])})")
    if summary["refusing"]:
        console.print("refusing to run until their markers are resolved (a topology using "
                      f"one does not load): {escape(', '.join(summary['refusing']))}")
    if args.report:
        report = {"summary": summary, "written": not dry,
                  "rules": [{"id": r.ID, "name": r.NAME, "description": r.DESCRIPTION}
                            for r in select(args.rule)],
                  "entries": [e.as_dict() for e in outcome.entries],
                  "failed": [{"path": f.path, "error": f.error} for f in outcome.failed]}
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n")
    code = EXIT_FAILED if outcome.failed else 0
    if args.check and outcome.changed:
        code |= EXIT_PENDING
    return code


def _by_rule(counts: dict[str, int]) -> str:
    return ", ".join(f"{rule} {n}" for rule, n in counts.items()) or "none"
