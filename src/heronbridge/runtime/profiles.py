"""A look inside a running task, without restarting it: every thread's stack and a flame
graph (py-spy, attached without pausing the task), and a memory summary (the kernel's).

Taken on the task's host by its stream manager (which knows its tasks' pids from their
registration), asked over a link that proved the topology's secret; only a process of
this user's is looked at.

py-spy runs niced, so that on a busy host it takes the CPU the task leaves rather than the
task's, and follows subprocesses only for a task that has some (a multilang component's):
scanning for them doubles py-spy's own CPU.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .errors import RuntimeKernelError

KINDS = ("stacks", "flame", "memory")
MAX_SECONDS = 60
RATE = 100  # samples a second
NICE = 10  # py-spy's niceness: a tenth of the task's CPU weight when both want a core
_busy = threading.Lock()  # one profile at a time on a host's stream manager
MEMORY_FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmSwap", "Threads")


class ProfileError(RuntimeKernelError):
    """A profile that could not be taken (the message says why)."""


def take(pid: int, kind: str, seconds: int = 5) -> bytes:
    """stacks: text; flame: an SVG sampled for `seconds`; memory: JSON of kB."""
    try:
        owner = os.stat(f"/proc/{pid}").st_uid
    except OSError as exc:
        msg = f"process {pid}: {exc}"
        raise ProfileError(msg) from exc
    if owner != os.getuid():
        msg = f"process {pid} is not this user's"
        raise ProfileError(msg)
    if kind == "memory":
        return json.dumps(memory(pid)).encode()
    if kind == "stacks":
        return stacks(pid).encode()
    if kind == "flame":
        return flame_graph(pid, seconds)
    msg = f"expected a profile kind among {', '.join(KINDS)}, received {kind!r}"
    raise ProfileError(msg)


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(found).exists():
        msg = "profiles need py-spy on the task's host (pip install 'heronbridge[profile]')"
        raise ProfileError(msg)
    return found


def has_children(pid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        if stat[stat.rindex(")") + 2:].split()[1] == str(pid):  # fields: state, ppid
            return True
    return False


def _follow(pid: int) -> list[str]:
    return ["--subprocesses"] if has_children(pid) else []


def stacks(pid: int) -> str:
    return _run([py_spy(), "dump", "--pid", str(pid), "--nonblocking", *_follow(pid)],
                30).decode()


def flame_graph(pid: int, seconds: int) -> bytes:
    """An SVG flame graph sampled for `seconds` at RATE samples a second."""
    if not 1 <= seconds <= MAX_SECONDS:
        msg = f"expected a sampling time of 1 to {MAX_SECONDS} seconds, received {seconds}"
        raise ProfileError(msg)
    with tempfile.TemporaryDirectory(prefix="hb-profile-") as folder:
        out = Path(folder) / "flame.svg"
        _run([py_spy(), "record", "--pid", str(pid), "--duration", str(seconds), "--rate",
              str(RATE), "--nonblocking", *_follow(pid), "--format", "flamegraph",
              "--output", str(out)],
             seconds + 30)
        return out.read_bytes()


def memory(pid: int) -> dict[str, int]:
    """The kernel's view of the process's memory (kB) and its threads."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in MEMORY_FIELDS:
                out[key] = int(value.split()[0])
    except OSError as exc:
        msg = f"process {pid}: {exc}"
        raise ProfileError(msg) from exc
    return out


def _run(argv: list[str], timeout: float) -> bytes:
    if not _busy.acquire(blocking=False):
        msg = "another profile is being taken on this host: try again when it is done"
        raise ProfileError(msg)
    try:
        done = subprocess.run(["nice", "-n", str(NICE), *argv], capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        msg = f"{Path(argv[0]).name} {argv[1]} took over {timeout:.0f}s"
        raise ProfileError(msg) from exc
    finally:
        _busy.release()
    if done.returncode != 0:
        msg = f"py-spy {argv[1]} failed: {done.stderr.decode(errors='replace').strip()[-500:]}"
        raise ProfileError(msg)
    return done.stdout
