"""Config keys both hosts read (set by the compat loaders); like every `heronbridge.*` key,
they never reach the hosted component."""

RESOURCES = "heronbridge.storm.resources"  # the topology's copy of the project's src/

# Topology-level and visible to components (as any option): "module:factory" of a
# message hook (hooks.MessageHook).
HOOK = "heronbridge.storm.hook"

# Topology-level (or a component's): the configured pystorm.log.path the loader found
# unusable; each task's own log folder takes its place (see logs.py).
LOG_FALLBACK = "heronbridge.storm.log.fallback"
