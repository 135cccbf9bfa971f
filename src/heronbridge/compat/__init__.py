"""Loading what users already have into the runtime's logical plan: streamparse projects,
heronpy topologies (their components run in heronbridge.shims), Storm config keys."""


from heronbridge.errors import HeronbridgeError


class CompatError(HeronbridgeError):
    """Root of the errors raised while loading or translating a user's topology."""
