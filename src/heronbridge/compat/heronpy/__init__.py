"""heronpy topologies loaded into the runtime's logical plan (loader.py); their spouts and
bolts run in the heronpy host (heronbridge.shims.heronpy), whose import hook lets heronpy
0.20.5 load under the runtime's protobuf.
"""

from __future__ import annotations

from heronbridge.shims import heronpy as host

from .. import CompatError

INSTALL_HINT = host.INSTALL_HINT
heronpy_installed = host.heronpy_installed


class HeronpyError(CompatError, host.HeronpyError):
    """A heronpy topology the runtime cannot load as written."""


class HeronpyMissing(HeronpyError, host.HeronpyMissing):
    """heronpy is not installed."""


def require_heronpy(what: str) -> None:
    """Raise a clear error if heronpy cannot be imported; `what` names who needs it."""
    if not heronpy_installed():
        msg = f"{what} needs heronpy, which is not installed; {INSTALL_HINT}"
        raise HeronpyMissing(msg)
