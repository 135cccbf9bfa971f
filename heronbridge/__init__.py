"""heronbridge: leave Apache Storm without rewriting first.

Run streamparse topologies unchanged on a Heron-architecture runtime, migrate them to
heronpy, prove parity against real Storm, and compare throughput and latency.
"""

__version__ = "0.1.0"


class HeronbridgeError(Exception):
    """Root of the errors the command line reports (without a traceback)."""
