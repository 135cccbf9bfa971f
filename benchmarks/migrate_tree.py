"""The codemod over a generated tree of modules: lines per second.

    python benchmarks/migrate_tree.py [--modules 2000] [--jobs N]

The tree is a set of streamparse projects (a spout, bolts in the import styles users
write, a helper module, a topology), plus plain modules that import nothing of Storm,
as in a real repository. Each configuration runs on a fresh copy; the first line of
each result is the whole run (index + rewrite + write), with the one-process run next to
the pool's so the ratio is measured in one go.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from heronbridge.migrate.runner import migrate

SPOUT = '''"""Project {p}: numbers."""
import time

from streamparse import Spout


class Numbers{p}(Spout):
    outputs = ["n", "key"]

    def initialize(self, stormconf, context):
        self.n = 0
        self.limit = int(stormconf.get("limit", 100))

    def next_tuple(self):
        if self.n >= self.limit:
            time.sleep(0.01)
            return
        self.emit([self.n, self.n % 7], tup_id=self.n)
        self.n += 1
'''
BOLT = '''"""Project {p}: bolt {b}."""
import streamparse as sp

from .helpers{p} import scale


class Bolt{p}_{b}(sp.Bolt):
    outputs = [sp.Stream(["n", "key"], "default")]
    par = 2

    def initialize(self, conf, ctx):
        self.seen = 0
        self.name = f"{{self.component_name}}-{{self.task_id}}"

    def process(self, tup):
        n = tup.values.n
        if n < 0:
            return
        self.seen += 1
        self.emit([scale(n), tup.values.key])
'''
HELPER = '''"""Project {p}: helpers."""


def scale(n):
    return n * 2
'''
TOPOLOGY = '''"""Project {p}: the topology."""
from streamparse import Grouping, Topology

from .spout{p} import Numbers{p}
{imports}


class Chain{p}(Topology):
    config = {{"topology.workers": 1}}
    numbers = Numbers{p}.spec()
{specs}
'''
PLAIN = '''"""Module {i}: nothing to do with Storm."""
import json


def load(text):
    return json.loads(text)
'''
BOLTS_PER_PROJECT = 5


def generate(root: Path, modules: int) -> int:
    """Write about `modules` modules under root; returns how many."""
    per_project = BOLTS_PER_PROJECT + 4  # spout, bolts, helper, topology, __init__
    projects = max(1, modules * 3 // 4 // per_project)
    written = 0
    for p in range(projects):
        package = root / f"project{p}"
        package.mkdir(parents=True)
        files = {"__init__.py": "", f"spout{p}.py": SPOUT.format(p=p),
                 f"helpers{p}.py": HELPER.format(p=p)}
        for b in range(BOLTS_PER_PROJECT):
            files[f"bolt{p}_{b}.py"] = BOLT.format(p=p, b=b)
        imports = "\n".join(f"from .bolt{p}_{b} import Bolt{p}_{b}"
                            for b in range(BOLTS_PER_PROJECT))
        specs, source = [], "numbers"
        for b in range(BOLTS_PER_PROJECT):
            grouping = 'Grouping.fields("key")' if b % 2 else "Grouping.SHUFFLE"
            specs.append(f"    bolt{b} = Bolt{p}_{b}.spec(inputs={{{source}: {grouping}}})")
            source = f"bolt{b}"
        files[f"topology{p}.py"] = TOPOLOGY.format(p=p, imports=imports,
                                                   specs="\n".join(specs))
        for name, text in files.items():
            (package / name).write_text(text)
        written += len(files)
    plain = root / "plain"
    plain.mkdir()
    for i in range(max(0, modules - written)):
        (plain / f"module{i}.py").write_text(PLAIN.format(i=i))
        written += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        count = generate(template, args.modules)
        lines = sum(p.read_text().count("\n") for p in template.rglob("*.py"))
        print(f"{count} modules, {lines} lines; {os.cpu_count()} CPUs")
        results = {}
        for jobs in (1, args.jobs):
            tree = Path(tmp) / f"run-{jobs}"
            shutil.copytree(template, tree)
            started = time.perf_counter()
            outcome = migrate(tree, jobs=jobs)
            secs = time.perf_counter() - started
            summary = outcome.summary()
            results[jobs] = lines / secs
            print(f"jobs={jobs}: {secs:.2f} s, {lines / secs:,.0f} lines/s; "
                  f"{summary['changed']} changed, {summary['converted']} rewrites, "
                  f"{summary['todo']} todo, {summary['failed']} failed")
        if args.jobs != 1:
            print(f"pool speed-up: {results[args.jobs] / results[1]:.2f}x")


if __name__ == "__main__":
    main()
