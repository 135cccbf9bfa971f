"""Starting child processes that never outlive their parent."""

from __future__ import annotations

import ctypes
import ctypes.util
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to SIGTERM the child when its parent dies.

    With it, even a parent killed by SIGKILL leaves no orphan behind.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    return preexec


def module_command(module: str, *args: str, python: str | None = None) -> list[str]:
    """`python -m heronbridge.runtime.MODULE ARGS`, with this interpreter by default."""
    return [python or sys.executable, "-m", f"heronbridge.runtime.{module}", *args]


def argv_address(address: str) -> str:
    """Abstract Unix socket names start with NUL, which argv cannot carry: use '@'."""
    return "@" + address[1:] if address.startswith("\0") else address
