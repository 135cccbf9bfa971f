"""`heronbridge conform`: one streamparse project on Apache Storm and on the runtime,
traced and compared.

The conformance package (Spark, Maven, matplotlib) is imported only when it runs, so the
other verbs start fast and work without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from ..errors import HeronbridgeError
from . import extras
from .options import Parents
from .terminal import console, out, parse_options

if TYPE_CHECKING:
    from heronbridge.nimbus.submit import NimbusLaunch


def add_verb(verbs: Any, parents: Parents) -> None:
    conform = verbs.add_parser(
        "conform", parents=[parents.home],
        help="run a streamparse project on Apache Storm and on the runtime, and compare",
        description="Run the same streamparse project (or a scenario) on Apache Storm in "
                    "local mode and on the runtime, trace every task on both, compare "
                    "the traces on Spark and print a verdict per check. Exit status 0 "
                    "only when every check that applies passes.")
    conform.add_argument("--project", metavar="PATH",
                         help="the streamparse project (default: the current folder)")
    conform.add_argument("-n", "--name", help="which topology (topologies/NAME.py)")
    conform.add_argument("--scenario", metavar="FILE",
                         help="a scenario YAML: project, config, input, faults, checks, "
                              "known divergences")
    conform.add_argument("--spark-master", metavar="URL",
                         help="run the analysis on this Spark master (default: embedded "
                              "local[*])")
    conform.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON")
    conform.add_argument("--out", metavar="DIR",
                         help="where traces and the report go (default: under --home)")
    conform.add_argument("--multilang", action="store_true",
                         help="on the runtime, run Python components as multilang "
                              "subprocesses too")
    conform.add_argument("--via-nimbus", action="store_true",
                         help="on the runtime, submit the project through a Nimbus endpoint "
                              "as `sparse submit` does (heronbridge nimbus), instead of "
                              "starting it as `heronbridge run` does")
    conform.add_argument("--migrated", action="store_true",
                         help="on the runtime, run a copy of the project migrated to heronpy "
                              "by `heronbridge migrate` (kept under the run dir)")
    conform.add_argument("--tuples", type=int, metavar="N",
                         help="ask each spout task for tuples until it has emitted N, on "
                              "both systems, then let the topology drain (default: the "
                              "scenario's, else 10,000; 0: until the spouts stop by "
                              "themselves)")
    conform.add_argument("--seconds", type=float, metavar="S",
                         help="... or for S seconds (Storm's; the runtime's spouts then stop "
                              "at the emits Storm's made)")
    conform.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                         help="set a topology config key on both systems, over the "
                              "project's and the scenario's (value read as JSON if it "
                              "parses), e.g. -o pystorm.log.path=DIR")
    conform.add_argument("--java-jars", metavar="DIR",
                         help="a folder of jars with the project's Java code (JavaSpout/"
                              "JavaBolt classes), besides lein's jar in the project's "
                              "target; on both systems' classpaths")
    conform.add_argument("--storm-from", metavar="DIR",
                         help="take Storm's side from an earlier run dir of the same "
                              "scenario instead of running Storm again")
    conform.set_defaults(func=cmd_conform)


def cmd_conform(args: argparse.Namespace) -> int:
    conform = extras.load("heronbridge.conformance.conform", "conformance",
                          "heronbridge conform").conform
    from heronbridge.conformance import scenario as scenarios
    from heronbridge.conformance.report import verdict_table, write_html, write_json

    if args.via_nimbus and (args.multilang or args.migrated):
        msg = "--via-nimbus submits the streamparse project as it is: no --multilang or --migrated"
        raise HeronbridgeError(msg)
    if args.scenario:
        if args.project or args.name:
            console.print("[yellow]note:[/] --project and -n are ignored: the scenario "
                          "names its project and topology")
        scenario = scenarios.load(args.scenario)
    else:
        scenario = scenarios.default(args.project or ".", args.name)
    scenario = scenarios.bounded(scenario, args.tuples, args.seconds)
    if args.option:
        scenario = dataclasses.replace(scenario, config={**scenario.config,
                                                         **parse_options(args.option)})
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_dir = Path(args.out) if args.out else \
        Path(args.home) / "conformance" / f"{scenario.name}-{stamp}"
    lines: dict[str, str] = {}

    def render() -> Table:
        grid = Table.grid(padding=(0, 2))
        for system, text in lines.items():
            grid.add_row(f"[bold]{system}[/]", text)
        return grid

    launcher: type[NimbusLaunch] | None = None
    if args.via_nimbus:  # through the Nimbus front door, as `sparse submit` would
        from heronbridge.nimbus.submit import NimbusLaunch as launcher
    with Live(render(), console=console, refresh_per_second=4, transient=True) as live:
        def display(system: str, text: str) -> None:
            lines[system] = text
            live.update(render())

        outcome = conform(scenario, run_dir, multilang=args.multilang,
                          spark_master=args.spark_master, home=Path(args.home),
                          display=display, migrated=args.migrated,
                          storm_from=Path(args.storm_from) if args.storm_from else None,
                          launcher=launcher,
                          java_jars=Path(args.java_jars) if args.java_jars else None)
    out.print(verdict_table(outcome))
    for note in outcome.notes:
        console.print(f"[dim]note:[/] {escape(note)}")
    if outcome.migration is not None:
        summary = outcome.migration.summary()
        console.print(f"migrated copy: {summary['changed']} files rewritten, "
                      f"{summary['todo']} TODO markers, in {run_dir / 'migrated'}")
    report = write_html(outcome)
    if args.json:
        write_json(outcome, Path(args.json))
    verdict = "[green]every check passes[/]" if outcome.ok else "[red]some checks fail[/]"
    console.print(f"{verdict}; report: {report}")
    return 0 if outcome.ok else 1
