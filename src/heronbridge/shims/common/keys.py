"""Config keys both hosts read (set by the compat loaders); like every `heronbridge.*` key,
they never reach the hosted component."""

# Topology-level (or a component's): the configured pystorm.log.path the loader found
# unusable; each task's own log folder takes its place (see logs.py).
LOG_FALLBACK = "heronbridge.storm.log.fallback"
