"""Running one topology on Apache Storm and on the runtime, and comparing what happened."""


from heronbridge.errors import HeronbridgeError


class ConformanceError(HeronbridgeError):
    """Root of the errors the conformance suite raises."""
