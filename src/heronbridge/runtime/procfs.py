"""What Linux's /proc says about processes: liveness, groups, trees, CPU and memory.

One reader for the scheduler (is a pid alive), the conformance suite (has Storm's whole
process group gone) and the benchmarks (CPU and peak memory by process kind), so that
every report names process kinds the same way.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import struct
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
    """The uid of the process that holds the other end of a loopback TCP connection; None
    when it cannot be told, which callers treat as a stranger: a socket its process
    already closed (or one in TIME_WAIT) shows as root's, so only one that still has an
    inode (an open socket) counts. Asked of the kernel's socket diagnostics for that one
    socket (a fraction of a millisecond); without them, found in /proc/net/tcp*, which the
    kernel writes out whole for each read (tens of milliseconds on a busy host)."""
    try:
        peer, local = conn.getpeername()[:2], conn.getsockname()[:2]
    except OSError:
        return None
    try:
        return _diag_owner(conn.family, peer, local)
    except OSError:
        return _table_owner(peer, local)


# linux/sock_diag.h and inet_diag.h: one socket looked up by its addresses and ports.
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF


def _diag_owner(family: int, peer: tuple, local: tuple) -> int | None:
    def packed(host: str) -> bytes:
        return ipaddress.ip_address(host).packed.ljust(16, b"\0")

    # inet_diag_req_v2 for the peer's socket (its source is our destination), any state
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + \
        struct.pack("!HH16s16s", peer[1], local[1], packed(peer[0]), packed(local[0])) + \
        struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    header = struct.pack("=LHHLL", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST,
                         1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as link:
        link.settimeout(2.0)
        link.send(header + request)
        reply = link.recv(8192)
    kind = struct.unpack_from("=H", reply, 4)[0]
    if kind == _NLMSG_ERROR:
        error = -struct.unpack_from("=i", reply, 16)[0]
        if error in (errno.ENOENT, errno.ESRCH):
            return None  # no such socket: the peer has gone
        raise OSError(error, os.strerror(error))
    if kind != _SOCK_DIAG_BY_FAMILY or len(reply) < 88:
        msg = f"unexpected socket diagnostics reply (type {kind}, {len(reply)} bytes)"
        raise OSError(msg)
    uid, inode = struct.unpack_from("=II", reply, 80)  # inet_diag_msg's idiag_uid, inode
    return uid if inode else None


def _table_owner(peer: tuple, local: tuple) -> int | None:
    for table, words in (("/proc/net/tcp", 1), ("/proc/net/tcp6", 4)):
        try:
            wanted = f" {_table_address(peer, words)} {_table_address(local, words)} "
            text = Path(table).read_text()
        except (OSError, ValueError):
            continue  # no such table, or an IPv6 address, which the IPv4 table cannot hold
        at = text.find(wanted)
        if at >= 0:
            fields = text[text.rfind("\n", 0, at) + 1:text.find("\n", at)].split()
            if len(fields) > 9:
                return int(fields[7]) if fields[9] != "0" else None
    return None


def _table_address(address: tuple[str, int], words: int) -> str:
    """("127.0.0.1", 8080) as the table with `words` 32-bit words an address writes it
    (each word in host order): `0100007F:1F90`."""
    host, port = address
    ip = ipaddress.ip_address(host)
    if words == 1:
        if ip.version != 4:
            msg = f"{host} is not an IPv4 address"
            raise ValueError(msg)
        raw = ip.packed
    else:
        raw = ip.packed if ip.version == 6 else ipaddress.IPv6Address(f"::ffff:{host}").packed
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return f"{raw.hex().upper()}:{port:04X}"
