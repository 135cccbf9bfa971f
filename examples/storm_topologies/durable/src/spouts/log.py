"""A spout over a durable log, as a Kafka spout reads a partition: it commits its offset
only once every line before it has been acked, and starts from the committed offset
after a restart (so lines acked after that point are read again: at least once)."""

import os
import time
from pathlib import Path

from streamparse import Spout

from output_files import JsonLinesOutput

LOG = Path(__file__).resolve().parent.parent / "data" / "log.txt"


class LogSpout(Spout):
    """Emits ``[line_no, line]`` with tuple id ``line_no``; a failed line is read again."""

    outputs = ["offset", "line"]

    def initialize(self, stormconf, context):
        path = stormconf.get("durable.log") or str(LOG)
        self.lines = Path(path).read_text().splitlines()
        folder = stormconf.get("durable.offsets") or "offsets"
        os.makedirs(folder, exist_ok=True)
        # One offset per spout instance, named by its index: stable across restarts.
        tasks = sorted(int(t) for t, c in context["task->component"].items()
                       if c == self.component_name)
        self.offset_file = os.path.join(
            folder, f"{self.component_name}-{tasks.index(self.task_id)}.offset")
        self.committed = self._read_offset()
        self.next_line = self.committed
        self.acked = set()
        self.replay = []
        self.output = JsonLinesOutput(self, stormconf)
        self.output.write({"event": "start", "offset": self.committed})

    def _read_offset(self):
        try:
            with open(self.offset_file) as f:
                return int(f.read().strip() or 0)
        except FileNotFoundError:
            return 0

    def _commit(self):
        tmp = self.offset_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(self.committed))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.offset_file)

    def next_tuple(self):
        if self.replay:
            n = self.replay.pop()
        elif self.next_line < len(self.lines):
            n = self.next_line
            self.next_line += 1
        else:
            time.sleep(0.01)
            return
        self.emit([n, self.lines[n]], tup_id=n)

    def ack(self, tup_id):
        n = int(tup_id)
        self.acked.add(n)
        self.output.write({"event": "ack", "id": n})
        if n == self.committed:
            while self.committed in self.acked:
                self.acked.discard(self.committed)
                self.committed += 1
            self._commit()

    def fail(self, tup_id):
        n = int(tup_id)
        self.output.write({"event": "fail", "id": n})
        self.replay.append(n)
