"""What a component did, as JSON lines under the option probes.out."""

import json
import os


class Recorder:
    def __init__(self, conf, kind, component, task):
        folder = conf.get("probes.out")
        self.path = os.path.join(folder, f"{component}-{task}.jsonl") if folder else None
        self.base = {"kind": kind, "component": component, "task": task}

    def record(self, event, **values):
        if self.path is not None:
            with open(self.path, "a") as out:
                out.write(json.dumps({**self.base, "event": event, **values}) + "\n")
