"""How far a run has got, read from its trace files while they are being written.

A runner polls `Progress(traces_dir).poll()` and stops when the snapshot is `done`:
something was traced, no reliable spout message is waiting for its ack or fail, and
nothing has happened for the scenario's quiet time (longer before any spout emitted).
Tick tuples (and the acks of them) are not activity: a bolt ticked every second would
otherwise never be quiet.

Only the block heads are read (see `tracefile`): each sums its task up so far, so a
poll costs a few small reads per file however many records the run has traced.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from . import schema, tracefile

EMITTING_SECS = 2.0  # a spout that emitted this recently is still emitting
# The quiet that ends a run before any spout emitted: starting can take longer than a
# scenario's quiet time (an effectively-once topology's first rollback took 5 s on a
# loaded machine), and a run judged over then has nothing to compare.
STARTING_SECS = 30.0


@dataclass(frozen=True)
class Snapshot:
    records: int  # every record written so far
    quiet_for: float  # seconds since the newest activity (by its `t`), wall clock
    pending: int  # reliable spout messages emitted and not yet called back
    per_component: dict[str, dict[str, int]]  # {component: {ev: count}}
    exits: int  # exit records (injected faults ending a task's process)
    errors: int  # error records (components reporting errors)
    files: int  # trace files (task processes) seen
    bad_files: int = 0  # files that are not trace files, or hold a frame that is not one
    pending_ids: list[tuple[str, int, str]] = field(default_factory=list)  # a few, to show
    first_emit: float | None = None  # wall clock of the earliest emit: the topology is up
    bytes: int = 0  # the trace files' sizes
    spout_tasks: int = 0  # spout task processes seen
    stopped: int = 0  # ... that the run's bound stopped
    spout_emits: int = 0  # emits of spout tasks, replays included
    last_spout_emit: float | None = None
    # {(component, task): processes after the first that no injected exit fault ended}:
    # the task crashed (or was killed) and was started again
    restarts: dict[tuple[str, int], int] = field(default_factory=dict)
    exited: dict[tuple[str, int], int] = field(default_factory=dict)  # by injected exits
    # tasks whose latest process an injected exit ended, not yet started again: the run
    # is not over while one comes back (under effectively-once every task then rolls back)
    awaiting: int = 0
    taken: float = field(default_factory=time.time)  # when the snapshot was read

    def done(self, quiet: float) -> bool:
        if not self.spout_emits and not 0 < self.spout_tasks == self.stopped:
            quiet = max(quiet, STARTING_SECS)
        return self.records > 0 and self.pending == 0 and self.awaiting == 0 and \
            self.quiet_for >= quiet

    @property
    def still_emitting(self) -> bool:
        """Spouts were emitting new tuples up to this snapshot, none stopped by a bound."""
        return self.last_spout_emit is not None and self.stopped < self.spout_tasks and \
            self.taken - self.last_spout_emit < EMITTING_SECS

    def endless(self) -> str:
        """What to add to a time limit's error when the spouts were still emitting."""
        if not self.still_emitting:
            return ""
        return (f". The spouts were still emitting when the time was up ("
                f"{self.spout_emits:,} emits so far, {self.stopped} of {self.spout_tasks} "
                "spout tasks stopped): their input looks endless. Bound the run: "
                "`heronbridge conform --tuples N` (or `tuples: N` in the scenario) stops "
                "each spout task after N emits, `--seconds S` after S seconds")

    def summary(self) -> str:
        counts = "; ".join(f"{c}: " + ", ".join(f"{ev} {n}" for ev, n in sorted(evs.items()))
                           for c, evs in sorted(self.per_component.items()))
        text = (f"{self.records} records ({_size(self.bytes)}) in {self.files} files, "
                f"{self.pending} spout messages pending, quiet for {self.quiet_for:.1f}s, "
                f"{self.exits} exits, {self.errors} errors")
        if self.pending_ids:
            text += f"; pending e.g. {self.pending_ids}"
        return text + (f" ({counts})" if counts else "")

    def line(self) -> str:
        """What the live display shows."""
        text = (f"{self.records:,} trace records ({_size(self.bytes)}), {self.pending:,} "
                f"spout tuples pending, quiet {self.quiet_for:.1f}s")
        if self.spout_tasks:
            text += f", {self.stopped} of {self.spout_tasks} spout tasks stopped"
        return text


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


class Progress:
    def __init__(self, traces_dir: str | Path) -> None:
        self.dir = Path(traces_dir)
        self.scans: dict[Path, tracefile.Scan] = {}
        self.created = time.time()

    def poll(self) -> Snapshot:
        if self.dir.is_dir():
            for path in tracefile.files(self.dir):
                self.scans.setdefault(path, tracefile.Scan(path)).more()
        per_component: dict[str, dict[str, int]] = {}
        newest: dict[tuple[str, int], tracefile.Scan] = {}  # a task's latest process
        processes: dict[tuple[str, int], int] = {}  # minus the injected exits among them
        exited: dict[tuple[str, int], int] = {}
        records = size = bad = spout_emits = 0
        active = first_emit = last_spout_emit = None
        for scan in self.scans.values():
            size += scan.size
            bad += scan.bad
            if scan.file is None:
                continue
            key = (str(scan.file["component"]), int(scan.file["task"]))
            if key not in newest or scan.file["t"] > newest[key].file["t"]:
                newest[key] = scan
            processes[key] = processes.get(key, 0) + 1
            # A process starting is activity: a task restarted after a fault may take
            # longer than the quiet time to trace its first record.
            active = _latest(active, float(scan.file["t"]))
            head = scan.last
            if head is None:
                continue
            if head.totals.get(schema.EXIT):
                processes[key] -= head.totals[schema.EXIT]
                exited[key] = exited.get(key, 0) + head.totals[schema.EXIT]
            mine = per_component.setdefault(key[0], {})
            for ev, n in head.totals.items():
                mine[ev] = mine.get(ev, 0) + n
                records += n
            active = _latest(active, head.active)
            if head.first_emit is not None and (first_emit is None or
                                                head.first_emit < first_emit):
                first_emit = head.first_emit
            if scan.file.get("spout"):
                spout_emits += head.totals.get(schema.EMIT, 0)
                last_spout_emit = _latest(last_spout_emit, head.last_emit)
        # Spout tasks, not their processes: a task that was restarted is still one.
        spout_scans = [scan for scan in newest.values() if scan.file.get("spout")]
        spouts = len(spout_scans)
        stopped = sum(scan.last is not None and scan.last.stopped is not None
                      for scan in spout_scans)
        awaiting = sum(scan.last is not None and bool(scan.last.totals.get(schema.EXIT))
                       for scan in newest.values())
        pending, pending_ids = 0, []
        for (component, task), scan in sorted(newest.items()):
            if scan.last is not None and scan.last.pending:
                pending += scan.last.pending
                pending_ids += [(component, task, i) for i in scan.last.pending_ids]
        since = active if active is not None else self.created
        return Snapshot(
            records=records,
            quiet_for=max(0.0, time.time() - since),
            pending=pending,
            per_component=dict(sorted(per_component.items())),
            exits=sum(c.get(schema.EXIT, 0) for c in per_component.values()),
            errors=sum(c.get(schema.ERROR, 0) for c in per_component.values()),
            files=len(self.scans),
            bad_files=bad,
            pending_ids=pending_ids[:5],
            first_emit=first_emit,
            bytes=size,
            spout_tasks=spouts,
            stopped=stopped,
            spout_emits=spout_emits,
            last_spout_emit=last_spout_emit,
            restarts={k: n - 1 for k, n in sorted(processes.items()) if n > 1},
            exited=exited,
            awaiting=awaiting,
        )

    def exits(self) -> list[tuple[str, int]]:
        """(component, task) of every file with an exit record: tasks an exit fault ended."""
        self.poll()
        return sorted((str(s.file["component"]), int(s.file["task"]))
                      for s in self.scans.values()
                      if s.file is not None and s.last is not None and
                      s.last.totals.get(schema.EXIT))

    def stops(self) -> dict[str, dict[int, int]]:
        """{spout: {task index: emits}} of the spout tasks the bound stopped, in each
        task's latest process."""
        self.poll()
        found: dict[str, dict[int, int]] = {}
        for scan in self.scans.values():
            if scan.file is None or scan.last is None or scan.last.stopped is None:
                continue
            component, task = str(scan.file["component"]), int(scan.file["task"])
            ids = (scan.file.get("tasks") or {}).get(component) or [task]
            index = ids.index(task) if task in ids else 0
            found.setdefault(component, {})[index] = int(scan.last.stopped["emits"])
        return found


def _latest(a: float | None, b: float | None) -> float | None:
    if b is None:
        return a
    return b if a is None or b > a else a
