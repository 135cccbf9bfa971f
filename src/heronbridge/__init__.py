"""heronbridge: leave Apache Storm without rewriting first.

Run streamparse topologies unchanged on a Heron-architecture runtime, migrate them to
heronpy, prove parity against real Storm, and compare throughput and latency.
"""

__version__ = "0.1.0"

from .errors import HeronbridgeError

__all__ = ["HeronbridgeError", "__version__"]
