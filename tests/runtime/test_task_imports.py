"""What a task process imports from heronbridge's environment: few third-party packages,
and exactly those a topology's own virtualenv is judged on (requirements.
TASK_DISTRIBUTIONS). A package the tasks do not import (kazoo, which only the stream
manager and the master use) is the project's to pin."""

from __future__ import annotations

import json
import subprocess
import sys

from heronbridge.compat.heronpy import heronpy_installed
from heronbridge.runtime.scheduler.requirements import TASK_DISTRIBUTIONS

# A task's entry point, then each host it may load: the Storm host in-process and under
# multilang (with `import streamparse`, as the user's component does), and the heronpy host.
HOSTS = ["heronbridge.runtime.instance.__main__", "heronbridge.runtime.instance.runner",
         "heronbridge.shims.storm.lean", "heronbridge.shims.storm.inprocess",
         "heronbridge.shims.storm.subprocess", "streamparse"]
HERONPY = ["heronbridge.shims.heronpy.host", "heronpy.api.bolt.bolt",
           "heronpy.api.spout.spout", "heronpy.api.topology"]
# Not the tasks' doing: setuptools' distutils shim (a .pth file imports it at start-up);
# msgspec imports typing_extensions when it is there, and does without it.
NOT_NEEDED = {"setuptools", "typing-extensions"}

MEASURE = """
import importlib, json, re, sys
from importlib import metadata
for module in sys.argv[1:]:
    importlib.import_module(module)
owners = metadata.packages_distributions()
print(json.dumps(sorted({re.sub(r"[-_.]+", "-", d).lower() for m in list(sys.modules)
                         for d in owners.get(m.split(".")[0], ())})))
"""


def test_a_task_imports_only_what_its_environment_is_judged_on():
    modules = HOSTS + (HERONPY if heronpy_installed() else [])
    done = subprocess.run([sys.executable, "-c", MEASURE, *modules], capture_output=True,
                          text=True, check=True, cwd="/")
    imported = set(json.loads(done.stdout)) - NOT_NEEDED
    assert imported <= TASK_DISTRIBUTIONS, imported - TASK_DISTRIBUTIONS
    unused = TASK_DISTRIBUTIONS - imported
    assert unused <= ({"heronpy", "cloudpickle"} if not heronpy_installed() else set()), unused
    assert not imported & {"kazoo", "rich", "libcst", "prometheus-client", "uvloop", "uv"}
