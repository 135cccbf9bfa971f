"""Storm's spout and bolt API (pystorm and streamparse semantics) on the runtime."""


class ShimError(Exception):
    """Root of the errors the Storm shim raises."""
