"""Other systems' component APIs, hosted on the runtime: Storm's (pystorm, streamparse)
in `storm/`, heronpy's in `heronpy/`, and what both hosts share in `common/`."""

from heronbridge.errors import HeronbridgeError


class ShimError(HeronbridgeError):
    """Root of the errors the hosts raise."""


__all__ = ["ShimError"]
