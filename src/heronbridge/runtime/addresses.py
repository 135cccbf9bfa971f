"""Where a topology's processes listen on this host.

Instances reach their stream manager and metrics manager over Unix sockets: files in a
folder the container's executor makes afresh (0700, an unguessable name under the
temporary folder), so no other user can take a socket's name before it is bound or while
its process restarts; stream managers and the topology master use TCP on the host's
address: loopback unless $HERONBRIDGE_HOST (set per host) or the topology's
`heronbridge.host` says otherwise. They bind port 0 and publish the port they got.
"""

from __future__ import annotations

import os
import socket
import tempfile

from .errors import SchedulerError

LOOPBACK = "127.0.0.1"
HOST_ENV = "HERONBRIDGE_HOST"
RUN_DIR_ENV = "HERONBRIDGE_RUN_DIR"  # the container's socket folder, set by its executor
_WILDCARDS = ("0.0.0.0", "::")
MASTER = "master"  # listener names, as the handshake binds them (wire.auth.Identity)
METRICS = "metrics"


def host_address(configured: str | None = None) -> tuple[str, str]:
    """(address to listen on, address to publish) for this host's TCP listeners."""
    bind = os.environ.get(HOST_ENV) or configured or LOOPBACK
    return bind, socket.getfqdn() if bind in _WILDCARDS else bind


def make_run_dir() -> str:
    """A new socket folder for one container (its executor's), readable by us only; the
    processes it starts find it in their environment."""
    path = tempfile.mkdtemp(prefix="hb-")  # mode 0700, created here or not at all
    os.environ[RUN_DIR_ENV] = path
    return path


def run_dir() -> str:
    path = os.environ.get(RUN_DIR_ENV, "")
    if not path:
        msg = (f"expected the container's socket folder in ${RUN_DIR_ENV} (its executor "
               "sets it), received none")
        raise SchedulerError(msg)
    return path


def stmgr_address(topology_id: str, container: int) -> str:
    return os.path.join(run_dir(), f"stmgr-{container}.sock")


def metrics_address(topology_id: str, container: int) -> str:
    return os.path.join(run_dir(), f"metrics-{container}.sock")


def stmgr_id(container: int) -> str:
    return f"stmgr-{container}"
