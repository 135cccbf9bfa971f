"""Running one topology on Apache Storm and on the runtime, and comparing what happened."""


class ConformanceError(Exception):
    """Root of the errors the conformance suite raises."""
