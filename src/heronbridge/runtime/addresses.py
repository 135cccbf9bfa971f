"""Where a topology's processes listen on this host.

Instances reach their stream manager and metrics manager over Unix sockets (in the
abstract namespace on Linux: no files to clean up, no path-length limit); stream
managers and the topology master use TCP on the host's address: loopback unless
$HERONBRIDGE_HOST (set per host) or the topology's `heronbridge.host` says otherwise.
They bind port 0 and publish the port they got.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile

LOOPBACK = "127.0.0.1"
HOST_ENV = "HERONBRIDGE_HOST"
_WILDCARDS = ("0.0.0.0", "::")


def host_address(configured: str | None = None) -> tuple[str, str]:
    """(address to listen on, address to publish) for this host's TCP listeners."""
    bind = os.environ.get(HOST_ENV) or configured or LOOPBACK
    return bind, socket.getfqdn() if bind in _WILDCARDS else bind


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
