"""Where a topology's processes listen on this host.

Instances reach their stream manager and metrics manager over Unix sockets (in the
abstract namespace on Linux: no files to clean up, no path-length limit); stream
managers and the topology master use TCP on loopback, so containers could be split
across hosts later.
"""

from __future__ import annotations

import os
import sys
import tempfile

LOOPBACK = "127.0.0.1"


def _unix(name: str) -> str:
    if sys.platform.startswith("linux"):
        return "\0" + name
    return os.path.join(tempfile.gettempdir(), name.replace("/", "_"))


def stmgr_address(topology_id: str, container: int) -> str:
    return _unix(f"heronbridge/{topology_id}/{container}/stmgr")


def metrics_address(topology_id: str, container: int) -> str:
    return _unix(f"heronbridge/{topology_id}/{container}/metrics")


def stmgr_id(container: int) -> str:
    return f"stmgr-{container}"
