"""Effectively-once: checkpoints of every task's state, and rollback to the newest one.

coordinator.py runs in the topology master (rounds, consistency, rollbacks);
alignment.py in each task with several input tasks; storage.py is where state lives.
The stream managers route markers as they route data and forward only frames sent after
the current rollback (runtime/stream_manager).
"""

from .alignment import Aligner
from .coordinator import CheckpointCoordinator
from .storage import CheckpointStorage

__all__ = ["Aligner", "CheckpointCoordinator", "CheckpointStorage"]
