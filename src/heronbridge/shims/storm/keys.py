"""Config keys the shim reads from a component's config (set by the compat loader).

They never reach the hosted component: Storm would not show them.
"""

from ..common import keys as common_keys

CLASS = "heronbridge.storm.class"  # "module.Class" of a Python component, hosted in-process
COMMAND = "heronbridge.storm.command"  # a shell component's command ...
SCRIPT = "heronbridge.storm.script"  # ... and its script (run in the resources folder)
SERIALIZER = "heronbridge.storm.serializer"  # the project's multilang serializer
RESOURCES = common_keys.RESOURCES  # the topology's copy of the project's src/

ALL = (CLASS, COMMAND, SCRIPT, SERIALIZER, RESOURCES)

STREAMPARSE_RUN = "streamparse_run"  # the COMMAND sparse gives its Python components

# Topology-level and visible to components (as any option): "module:factory" of a
# message hook (common/hooks.py).
HOOK = common_keys.HOOK

# Topology-level (or a component's): false hosts every in-process component under
# pystorm's own loop (inprocess.py) instead of the lean host (lean.py); for comparison.
LEAN = "heronbridge.storm.lean"

# Topology-level (or a component's): the configured pystorm.log.path the loader found
# unusable (see common/logs.py).
LOG_FALLBACK = common_keys.LOG_FALLBACK
