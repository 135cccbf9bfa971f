"""A message hook: records what crosses; in the judge, fails every 5th tuple itself."""

import json
import os


class Recording:
    def __init__(self, conf):
        self.folder = conf["test.out"]
        self.file = None
        self.tuples = 0
        self.judge = False

    def _write(self, direction, msg):
        self.file.write(json.dumps({"dir": direction, "msg": msg}) + "\n")

    def down(self, msg):
        if self.file is None:  # the handshake comes first
            context = msg["context"]
            self.judge = context["componentid"] == "judge"
            name = f"hook-{context['componentid']}-{context['taskid']}.jsonl"
            os.makedirs(self.folder, exist_ok=True)
            self.file = open(os.path.join(self.folder, name), "a", buffering=1)
        self._write("down", msg)
        if self.judge and isinstance(msg, dict) and msg.get("stream") == "default":
            self.tuples += 1
            if self.tuples % 5 == 0:
                return [], [{"command": "fail", "id": msg["id"]}]
        return [msg], []

    def up(self, msg):
        self._write("up", msg)
        return [msg]
