"""Seeding a task's random numbers the same way on both systems.

A spout that draws from Python's `random` (or numpy's global generator) emits the same
values on Storm and on the runtime when both seed it alike at the same point: after the
component's module is imported, before `initialize`. The tracing hook knows that point
(the handshake) and the task's place among its component's tasks:

- in-process (the runtime), the hook seeds its own process when the handshake passes;
- under the multilang proxy (Storm, or the runtime with --multilang), the component is
  the proxy's child: the proxy starts it after the handshake has come, with the seed in
  `ENV` and `BOOT` on its PYTHONPATH, whose `sitecustomize` calls `boot`: it seeds at
  start (for components pystorm does not run) and again when pystorm has read the
  handshake.

String hashing is fixed too (PYTHONHASHSEED, `hash_env`), so that iterating over a set
of strings goes the same way on both.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import random
import sys
from pathlib import Path
from typing import Any

ENV = "HERONBRIDGE_TRACE_SEED"
BOOT = Path(__file__).with_name("seeding")  # holds the child's sitecustomize.py
HANDSHAKE_MODULE = "pystorm.component"


def task_seed(base: int, component: str, index: int) -> int:
    """The seed of one task: its component and index, never its task id (which may differ
    between the systems)."""
    digest = hashlib.sha256(f"{base}/{component}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def seed_process(seed: int) -> None:
    """Seed `random`, and numpy's global generator if numpy is imported."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (1 << 32))


def hash_env(base: int) -> dict[str, str]:
    return {"PYTHONHASHSEED": str(base % (1 << 32))}


def child_env(seed: int, env: dict[str, str]) -> dict[str, str]:
    """`env` for a component started with `seed`: `BOOT` first on its PYTHONPATH."""
    path = env.get("PYTHONPATH")
    return {**env, ENV: str(seed),
            "PYTHONPATH": os.pathsep.join([str(BOOT), *([path] if path else [])])}


def boot(seed: int) -> None:
    """In a component's process, at start: seed now, and again after pystorm's handshake."""
    seed_process(seed)
    module = sys.modules.get(HANDSHAKE_MODULE)
    if module is not None:
        _after_handshake(module, seed)
    else:
        sys.meta_path.insert(0, _OnImport(seed))


def _after_handshake(module: Any, seed: int) -> None:
    component = module.Component
    read = component.read_handshake

    def read_handshake(self: Any) -> Any:
        found = read(self)
        seed_process(seed)
        return found

    component.read_handshake = read_handshake


class _OnImport:
    """Patches pystorm's handshake once its module is imported, and steps aside."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != HANDSHAKE_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        execute, seed = spec.loader.exec_module, self.seed

        def exec_module(module: Any) -> None:
            execute(module)
            _after_handshake(module, seed)

        spec.loader.exec_module = exec_module
        return spec
