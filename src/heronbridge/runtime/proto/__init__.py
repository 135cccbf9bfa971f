"""Generated protobuf modules for the runtime's control plane.

Regenerate with `python scripts/regenerate_protos.py`; never edit the *_pb2.py files.
"""

from . import control_pb2, plans_pb2, topology_pb2

__all__ = ["control_pb2", "plans_pb2", "topology_pb2"]
