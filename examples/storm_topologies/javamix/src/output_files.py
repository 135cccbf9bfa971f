"""Helpers shared by the components of this project.

Results are written as JSON lines into the directory named by the Storm option
``example.output.dir``; each task writes its own file called
``<component_name>-<task_id>.jsonl``. Without that option the records are only
logged.
"""

import json
import os

OUTPUT_DIR_KEY = "example.output.dir"


def int_option(conf, key, default):
    """Read an integer Storm option, falling back to ``default``."""
    value = conf.get(key)
    if value is None or value == "":
        return default
    return int(value)


class JsonLinesOutput:
    """Appends one JSON object per line to this task's result file."""

    def __init__(self, component, conf):
        self.logger = component.logger
        self.path = None
        self._file = None
        out_dir = conf.get(OUTPUT_DIR_KEY)
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
            name = f"{component.component_name}-{component.task_id}.jsonl"
            self.path = os.path.join(out_dir, name)
            # Line buffered, so every record is visible as soon as it is written.
            self._file = open(self.path, "a", buffering=1, encoding="utf-8")
            self.logger.info("writing results to %s", self.path)
        else:
            self.logger.info("%s is not set; results are only logged", OUTPUT_DIR_KEY)

    def write(self, record):
        line = json.dumps(record)
        if self._file is not None:
            self._file.write(line + "\n")
        else:
            self.logger.info("result %s", line)
