"""Writes what a component saw as JSON lines under the `test.out` folder."""

import json
import os


class Recorder:
    def open_record(self, conf, kind="seen"):
        folder = conf["test.out"]
        os.makedirs(folder, exist_ok=True)
        name = f"{kind}-{self.component_name}-{self.task_id}.jsonl"
        self._record = open(os.path.join(folder, name), "a", buffering=1)

    def record(self, **fields):
        fields["pid"] = os.getpid()
        self._record.write(json.dumps(fields) + "\n")
