"""Where each task says which semver it imported: a log line, and with the Storm option
``pins.output.dir`` a file ``<component>-<task>.json`` there (and, for a bolt, the time
it received its first tuple in ``<component>-<task>.first``)."""

import json
import os
import sys
import time

import semver

OUTPUT_DIR_KEY = "pins.output.dir"


def report(component):
    """Log, and write when asked, the semver this task runs with and its interpreter."""
    record = {"component": component.component_name, "task": component.task_id,
              "semver": semver.__version__, "python": sys.executable, "prefix": sys.prefix}
    component.logger.info("semver %s (python %s)", semver.__version__, sys.executable)
    folder = component.storm_conf.get(OUTPUT_DIR_KEY)
    if folder:
        name = f"{component.component_name}-{component.task_id}.json"
        with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
            json.dump(record, out)


def first_tuple(component):
    """Write when this task received its first tuple (with ``pins.output.dir``)."""
    folder = component.storm_conf.get(OUTPUT_DIR_KEY)
    if folder:
        name = f"{component.component_name}-{component.task_id}.first"
        with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
            out.write(f"{time.time()}\n")
