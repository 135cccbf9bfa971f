"""What a spout's code reads besides its options and files: a clock or an external source.

When a spout emits different values on the two systems although both seeded its random
numbers alike, parity of what it and everything downstream emitted cannot be judged; if
its code reads the time or an outside source, that explains it, and the analysis falls
back to the checks that hold whatever the input. This module finds such reads in the
module of each Python spout class (its calls and imports, with `ast`), and keeps them in
`<run dir>/inputs.json`: {spout: ["time.time() (spouts/words.py:31)", ...]}.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

INPUTS_FILE = "inputs.json"

CLOCKS = {"time.time", "time.time_ns", "time.localtime", "time.gmtime", "time.ctime",
          "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
          "datetime.date.today", "uuid.uuid1", "uuid.uuid4", "os.urandom", "os.getpid",
          "random.SystemRandom"}
# Modules whose use means data from outside the topology's input.
SOURCES = ("socket", "urllib.request", "http.client", "requests", "httpx", "aiohttp",
           "kafka", "confluent_kafka", "pykafka", "pika", "redis", "boto3", "pymongo",
           "psycopg2", "pymysql", "sqlalchemy", "zmq", "nats", "paho", "secrets",
           "subprocess", "select", "sys.stdin", "fileinput", "queue", "multiprocessing")


def scan_module(path: Path, shown: str) -> list[str]:
    """The clock reads and outside sources in one Python file, as "name() (shown:line)"."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = \
                    alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    # One finding per name used: a call comes before the attributes it is made of.
    found: dict[tuple[int, int], str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Call, ast.Attribute)):
            continue
        call = isinstance(node, ast.Call)
        root, dotted = _dotted(node.func if call else node, names)
        if dotted is None or (root.lineno, root.col_offset) in found:
            continue
        if (call and dotted in CLOCKS) or any(dotted == s or dotted.startswith(s + ".")
                                               for s in SOURCES):
            found[(root.lineno, root.col_offset)] = \
                f"{dotted}{'()' if call else ''} ({shown}:{root.lineno})"
    return [found[at] for at in sorted(found)]


def _dotted(node: ast.AST, names: dict[str, str]) -> tuple[ast.AST, str | None]:
    """The name a chain of attributes starts from, and the dotted name it means."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return node, None
    return node, ".".join([names[node.id], *reversed(parts)])


def scan_project(project: Any) -> dict[str, list[str]]:
    """{spout: reads} for the Python spouts of a loaded project (compat's Project)."""
    from heronbridge.shims.storm import keys

    found = {}
    for name, spec in sorted(project.plan.components.items()):
        class_path = spec.config.get(keys.CLASS)
        if not spec.is_spout or not class_path:
            continue
        module = class_path.replace(":", ".").rsplit(".", 1)[0]
        rel = Path(*module.split("."))
        for candidate in (rel.with_suffix(".py"), rel / "__init__.py"):
            path = Path(project.source) / candidate
            if path.is_file():
                found[name] = scan_module(path, candidate.as_posix())
                break
    return found


def write(run_dir: Path, reads: dict[str, list[str]]) -> None:
    (Path(run_dir) / INPUTS_FILE).write_text(json.dumps(reads, indent=1))


def read(run_dir: Path) -> dict[str, list[str]] | None:
    """None when the run did not record its spouts' reads."""
    try:
        return json.loads((Path(run_dir) / INPUTS_FILE).read_text())
    except (OSError, ValueError):
        return None
