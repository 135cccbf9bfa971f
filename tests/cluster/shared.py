"""A server that one pytest run starts once for all its xdist workers (a Spark cluster
costs three JVM starts, and idles beside the tests): the first worker to ask starts it
and writes down how to reach it, the others attach to that, and the last to leave stops
it. Without xdist the one process starts and stops it. The run's workers share the
folder their own temporary folders are in (the Storm install is shared the same way)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from heronbridge.jvm.maven import locked


@contextlib.contextmanager
def one_for_all_workers(factory: pytest.TempPathFactory, name: str,
                        start: Callable[[Path], dict], stop: Callable[[dict], None]
                        ) -> Iterator[dict]:
    """Yields what `start(folder)` returned (JSON: how to reach the server and stop it),
    in every worker; `stop(that)` runs once the last worker using it is done."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        described = start(factory.mktemp(name))
        try:
            yield described
        finally:
            stop(described)
        return
    base = factory.getbasetemp().parent
    users = base / f"{name}.json"
    with locked(base / f"{name}.lock"):
        if users.is_file():
            shared = json.loads(users.read_text())
        else:  # the first, or the first after the last user stopped the previous one
            folder = base / name
            folder.mkdir(exist_ok=True)
            shared = {"server": start(folder), "users": 0}
        shared["users"] += 1
        users.write_text(json.dumps(shared))
    try:
        yield shared["server"]
    finally:
        with locked(base / f"{name}.lock"):
            shared = json.loads(users.read_text())
            shared["users"] -= 1
            if shared["users"]:
                users.write_text(json.dumps(shared))
            else:
                users.unlink()
                stop(shared["server"])
