"""Loading what users already have into the runtime's logical plan: streamparse
projects, Flux YAML, heronpy topologies, Storm config keys."""


class CompatError(Exception):
    """Root of the errors raised while loading or translating a user's topology."""
