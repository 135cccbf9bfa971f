"""What Linux's /proc says about processes: liveness, groups, trees, CPU and memory.

One reader for the scheduler (is a pid alive), the conformance suite (has Storm's whole
process group gone) and the benchmarks (CPU and peak memory by process kind), so that
every report names process kinds the same way.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

# The runtime's daemons, by the module each runs (`python -m heronbridge.runtime.X`).
RUNTIME_KINDS = (("heronbridge.runtime.instance", "task"),
                 ("heronbridge.runtime.stream_manager", "stream manager"),
                 ("heronbridge.runtime.metrics_manager", "metrics manager"),
                 ("heronbridge.runtime.topology_master", "topology master"),
                 ("heronbridge.runtime.scheduler.executor", "executor"),
                 ("heronbridge.runtime.scheduler", "scheduler"))


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgrp: int
    state: str  # R, S, Z, ...
    cpu: float  # seconds, user + system
    cmd: tuple[str, ...] = ()
    kind: str = "other"

    @property
    def peak_rss(self) -> int:
        """Bytes (VmHWM); 0 once the process is gone."""
        return peak_rss(self.pid)


def read(pid: int | str, with_cmd: bool = False) -> Proc | None:
    """One process, or None when it is gone (or there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if with_cmd else []
    except OSError:
        return None
    # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
    fields = stat[stat.rfind(")") + 2:].split()
    return Proc(int(pid), int(fields[1]), int(fields[2]), fields[0],
                (int(fields[11]) + int(fields[12])) / TICKS,
                tuple(c.decode(errors="replace") for c in cmd if c))


def every(with_cmd: bool = False) -> list[Proc]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = (read(e, with_cmd) for e in entries if e.isdigit())
    return [p for p in found if p is not None]


def pid_alive(pid: int) -> bool:
    """True for a live process; a zombie has exited (only its parent has not reaped it)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = read(pid)
    return proc is None or proc.state != "Z"


def group_members(group: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    if not os.path.isdir("/proc"):  # ask the kernel whether anyone is left
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [group]
    return [p.pid for p in every() if p.pgrp == group and p.state != "Z"]


def descendants(root: int | None = None,
                kinds: Iterable[tuple[str, str]] = ()) -> list[Proc]:
    """Every live process under `root` (default: this one), each with its kind: what its
    command line runs (`kinds` adds (text, kind) pairs, checked first), else what its
    parent is ('task subprocess' under a task, 'storm component' under Storm's JVM)."""
    root = os.getpid() if root is None else root
    kinds = (*kinds, *RUNTIME_KINDS)
    children: dict[int, list[Proc]] = {}
    for proc in every(with_cmd=True):
        children.setdefault(proc.ppid, []).append(proc)
    out: list[Proc] = []
    todo = [(p, "") for p in children.get(root, [])]
    while todo:
        proc, parent_kind = todo.pop()
        proc = replace(proc, kind=kind_of(proc.cmd, parent_kind, kinds))
        out.append(proc)
        todo.extend((child, proc.kind) for child in children.get(proc.pid, []))
    return out


def kind_of(cmd: Iterable[str], parent_kind: str = "",
            kinds: Iterable[tuple[str, str]] = RUNTIME_KINDS) -> str:
    """'task', 'stream manager', ..., 'storm jvm', 'storm component', 'task subprocess'
    or 'other'."""
    cmd = list(cmd)
    if cmd and os.path.basename(cmd[0]).startswith("java"):
        return "storm jvm"
    text = " ".join(cmd)
    found = next((kind for module, kind in kinds if module in text), None)
    if found is not None:
        return found
    if parent_kind in ("task", "task subprocess"):
        return "task subprocess"
    if parent_kind in ("storm jvm", "storm component"):
        return "storm component"
    return "other"


def peak_rss(pid: int | str = "self") -> int:
    """Peak resident memory in bytes (VmHWM), 0 where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss_bytes() -> int:
    """This process's resident memory now, 0 where there is no /proc."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def rss_bytes_with_children() -> int:
    """This process's resident memory and its children's (a task's multilang
    subprocess is the component's memory, as an in-process component's is the task's)."""
    total = rss_bytes()
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return total
    for tid in threads:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                children = f.read().split()
        except OSError:
            continue
        for pid in children:
            try:
                with open(f"/proc/{pid}/statm") as f:
                    total += int(f.read().split()[1]) * PAGE
            except (OSError, ValueError, IndexError):
                continue
    return total


def cpu_by_kind(before: list[Proc], after: list[Proc]) -> dict[str, float]:
    """CPU seconds each kind spent between two readings (processes new since count whole)."""
    earlier = {p.pid: p.cpu for p in before}
    out: dict[str, float] = {}
    for p in after:
        out[p.kind] = out.get(p.kind, 0.0) + p.cpu - earlier.get(p.pid, 0.0)
    return out


def memory_by_kind(procs: list[Proc]) -> dict[str, dict[str, float]]:
    """{kind: {processes, peak_rss_mb (the largest), total_mb}}."""
    out: dict[str, dict[str, float]] = {}
    for p in procs:
        rss = p.peak_rss / 2**20
        entry = out.setdefault(p.kind, {"processes": 0, "peak_rss_mb": 0.0, "total_mb": 0.0})
        entry["processes"] += 1
        entry["peak_rss_mb"] = max(entry["peak_rss_mb"], rss)
        entry["total_mb"] += rss
    return out


def tcp_peer_owner(conn: socket.socket) -> int | None:
    """The uid of the process that holds the other end of a loopback TCP connection, from
    the kernel's socket tables; None when it cannot be told, which callers treat as a
    stranger: the table lists a socket its process already closed (or one in TIME_WAIT)
    as root's, so only an entry that still has an inode (an open socket) counts."""
    try:
        peer, local = conn.getpeername()[:2], conn.getsockname()[:2]
    except OSError:
        return None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and _address(fields[1]) == peer and \
                    _address(fields[2]) == local:
                return int(fields[7]) if fields[9] != "0" else None
    return None


def _address(text: str) -> tuple[str, int]:
    """`0100007F:1F90` (each 32-bit word in host order) as ("127.0.0.1", 8080)."""
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port, 16)
