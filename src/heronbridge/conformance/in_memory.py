"""One topology of a project run on the in-memory topology (runtime/testing.py), and a
record of what each component received and each spout heard back.

The codemod's tests and `benchmarks/migrate_corpus.py` run a project and its migrated
copy this way and compare the records: the same tuples reaching each component from
the same sources and streams, and the same acks and fails at each spout, whichever API
the components were written in. Each run has a process of its own
(`python -m heronbridge.conformance.in_memory`): a project's modules and its migrated
copy's share names, and a project's code may hang, exit or crash its process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from heronbridge.runtime.testing import InMemoryTopology
from heronbridge.runtime.wire import frames

from . import ConformanceError


class Recording(InMemoryTopology):
    """The in-memory topology, noting every tuple delivered and every spout settle."""

    def __init__(self, plan: Any, seed: int = 0) -> None:
        self.received: Counter[tuple[str, str, str, str]] = Counter()
        self.settled: Counter[tuple[str, str]] = Counter()
        super().__init__(plan, seed)

    def _deliver(self, frame: bytes, completed: list[int], failed: list[int]) -> None:
        (_, kind, dest) = frames.HEADER.unpack_from(frame)
        if kind == frames.DATA:
            runner = self.runners[dest]
            for tup in runner.decode(frame, 0, len(frame)):
                self.received[(runner.component, tup.component, tup.stream,
                               _canonical(tup.values))] += 1
        super()._deliver(frame, completed, failed)

    def _settle(self, kind: int, roots: list[int]) -> None:
        for root in roots:
            task = root >> frames.ROOT_TASK_SHIFT
            self.settled[(self.runners[task].component, frames.KIND_NAMES[kind])] += 1
        super()._settle(kind, roots)


def _canonical(values: Any) -> str:
    """Values as JSON would carry them (tuples as lists, keys as strings), so that a
    streamparse run (JSON) and a heronpy run (msgpack) compare."""
    return json.dumps(json.loads(json.dumps(list(values), default=repr)), sort_keys=True)


def record(root: Path, topology: str, workdir: Path, calls: int = 200,
           options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run `topology` of the project at `root` in this process: each spout task gets
    `calls` next_tuple calls, and everything they cause is delivered. Raises what
    loading or running raises."""
    from heronbridge.compat.projects import load_project

    resources = workdir / "resources"
    if resources.exists():
        shutil.rmtree(resources)
    src = root / "src"
    if src.is_dir():
        shutil.copytree(src, resources, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        resources.mkdir(parents=True)
    project = load_project(root, topology, options=options or {}, resources=resources)
    topo = Recording(project.plan)
    try:
        topo.run(calls, batch=10)
    finally:
        topo.close()
    received: dict[str, list[list[Any]]] = {}
    for (component, source, stream, values), n in sorted(topo.received.items()):
        received.setdefault(component, []).append([source, stream, values, n])
    settled: dict[str, dict[str, int]] = {}
    for (component, what), n in sorted(topo.settled.items()):
        settled.setdefault(component, {})[what] = n
    return {"received": received, "settled": settled,
            "tuples": sum(topo.received.values())}


def record_apart(root: Path, topology: str, workdir: Path, calls: int = 200,
                 options: dict[str, Any] | None = None, timeout: float = 120.0,
                 env: dict[str, str] | None = None) -> dict[str, Any]:
    """`record` in a process of its own. A run that fails, exits or does not end in
    `timeout` seconds gives {"error": why} (with the end of its output)."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "record.json"
    out.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "heronbridge.conformance.in_memory", str(root), topology,
            "--workdir", str(workdir), "--calls", str(calls), "--json", str(out),
            "--options", json.dumps(options or {})]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              cwd=workdir, env={**os.environ, **(env or {})}, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"did not end within {timeout:.0f}s"}
    if done.returncode != 0 or not out.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        return {"error": f"exit {done.returncode}: " + "\n".join(tail)}
    return json.loads(out.read_text())


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What `after` (a record) did differently from `before`: by component, the tuples
    received and the settles; empty when they match."""
    said: list[str] = []
    for what in ("received", "settled"):
        a, b = before.get(what, {}), after.get(what, {})
        for component in sorted(set(a) | set(b)):
            if a.get(component) != b.get(component):
                said.append(f"{component}: {what} {_short(a.get(component))} before, "
                            f"{_short(b.get(component))} after")
    return said


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:197] + "..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("topology")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--options", default="{}")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        result = record(args.root.resolve(), args.topology, args.workdir.resolve(),
                        args.calls, json.loads(args.options))
    except Exception as exc:  # noqa: BLE001 - the caller reads why from the output
        traceback.print_exc()
        msg = f"{args.topology}: {type(exc).__name__}: {exc}"
        raise ConformanceError(msg) from exc
    args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
