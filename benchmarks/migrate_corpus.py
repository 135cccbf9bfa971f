"""The codemod over a corpus of public streamparse projects: what it rewrote and marked,
and whether each topology that ran before migration runs after it with the same output.

    python benchmarks/migrate_corpus.py FOLDER [--calls N] [--timeout S] [--json FILE]

FOLDER holds one checkout per repository (kept out of this repository). For each, the
codemod migrates a copy; the report gives the files rewritten, the markers by rule, the
files that do not parse (Python 2 files among them: counted, never stopping the run) and
the repository's commit. Each streamparse project in it (a folder with `topologies/*.py`
importing streamparse) has each topology run on the in-memory topology before and after
migration (conformance/in_memory.py, each run a process of its own): "same" when every
component received the same tuples and every spout heard the same acks and fails,
"refuses" when the migrated topology refuses to load with a marker's text, "differs" or
"fails after" otherwise. A topology that cannot run before (a spout reading Kafka or
Twitter, a file outside src/, Python 2) is counted as such.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from heronbridge.conformance.in_memory import differences, record_apart
from heronbridge.migrate.runner import migrate

MARKER = re.compile(r"TODO\(heronbridge:HB\d{3}\)")


def commit_of(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "?"


def projects_in(root: Path) -> list[Path]:
    """Folders holding a streamparse topology in the Python DSL."""
    found = set()
    for topology in root.rglob("topologies/*.py"):
        if "streamparse" in topology.read_text(errors="replace"):
            found.add(topology.parent.parent)
    return sorted(found)


def run_topologies(before_root: Path, after_root: Path, work: Path, calls: int,
                   timeout: float) -> Counter:
    tally: Counter = Counter()
    for project in projects_in(before_root):
        rel = project.relative_to(before_root)
        for topology in sorted((project / "topologies").glob("*.py")):
            if topology.stem.startswith("_"):
                continue
            tally["topologies"] += 1
            where = work / str(rel).replace("/", "_") / topology.stem
            before = record_apart(project, topology.stem, where / "before", calls,
                                  timeout=timeout)
            if "error" in before or not before.get("tuples"):
                tally["did not run before"] += 1
                continue
            tally["ran before"] += 1
            after = record_apart(after_root / rel, topology.stem, where / "after", calls,
                                 timeout=timeout)
            if "error" in after:
                key = "refuses (marked)" if MARKER.search(after["error"]) else "fails after"
                tally[key] += 1
                print(f"  {rel}/{topology.stem}: {key}: {after['error'][-300:]}",
                      file=sys.stderr)
            elif differences(before, after):
                tally["differs"] += 1
                print(f"  {rel}/{topology.stem}: differs: {differences(before, after)[:2]}",
                      file=sys.stderr)
            else:
                tally["same"] += 1
    return tally


def survey(repo: Path, calls: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        before, after = Path(tmp) / "before", Path(tmp) / "after"
        ignore = shutil.ignore_patterns(".git", "__pycache__")
        shutil.copytree(repo, before, ignore=ignore, symlinks=True)
        shutil.copytree(repo, after, ignore=ignore, symlinks=True)
        outcome = migrate(after, jobs=1)
        summary = outcome.summary()
        parse = [f for f in outcome.failed if f.error.startswith("does not parse")]
        runs = run_topologies(before, after, Path(tmp) / "runs", calls, timeout)
    return {"repository": repo.name.replace("+", "/"), "commit": commit_of(repo),
            "files": summary["files"], "rewritten": summary["changed"],
            "markers": summary["marked"], "parse_failures": len(parse),
            "other_failures": len(outcome.failed) - len(parse), "runs": dict(runs)}


def table(rows: list[dict]) -> str:
    lines = ["| repository | commit | .py files | rewritten | markers by rule | do not "
             "parse | topologies | ran before | same after | refuses (marked) | differs "
             "or fails |", "|" + "---|" * 11]
    for r in rows:
        runs = r["runs"]
        markers = ", ".join(f"{k} {v}" for k, v in r["markers"].items()) or "none"
        lines.append(
            f"| {r['repository']} | {r['commit']} | {r['files']} | {r['rewritten']} | "
            f"{markers} | {r['parse_failures']} | {runs.get('topologies', 0)} | "
            f"{runs.get('ran before', 0)} | {runs.get('same', 0)} | "
            f"{runs.get('refuses (marked)', 0)} | "
            f"{runs.get('differs', 0) + runs.get('fails after', 0)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="one checkout per repository")
    parser.add_argument("--calls", type=int, default=50, help="next_tuple calls per spout")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--json", type=Path, help="write the rows as JSON")
    args = parser.parse_args()
    rows = []
    for repo in sorted(p for p in args.folder.iterdir() if p.is_dir()):
        print(f"{repo.name} ...", file=sys.stderr)
        rows.append(survey(repo, args.calls, args.timeout))
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    bad = sum(r["runs"].get("differs", 0) + r["runs"].get("fails after", 0) for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
