"""heronpy's spouts and bolts hosted on the runtime through heronpy's delegate interface
(host.py, with its context, tuples, windows and state), the Streamlet API repaired, and
what migrated code imports besides heronpy (`migrated`, `extras`).

Importing this package installs the import hook (`imports.py`) that lets heronpy 0.20.5
load under the runtime's protobuf; every heronpy import the runtime makes goes through
this package first.
"""

from __future__ import annotations

import importlib.util

from .. import ShimError
from . import imports

INSTALL_HINT = ("install it with `pip install --no-deps heronpy==0.20.5` (--no-deps: its "
                "protobuf==3.16.0 pin would downgrade the runtime's protobuf; heronbridge "
                "already brings cloudpickle)")

imports.install()


class HeronpyError(ShimError):
    """A heronpy component the runtime cannot host as written."""


class HeronpyMissing(HeronpyError):
    """heronpy is not installed."""


def heronpy_installed() -> bool:
    # heronpy's API module, not just a folder named heronpy somewhere on the path.
    try:
        return importlib.util.find_spec("heronpy.api.topology") is not None
    except ImportError:
        return False


def require_heronpy(what: str) -> None:
    """Raise a clear error if heronpy cannot be imported; `what` names who needs it."""
    if not heronpy_installed():
        msg = f"{what} needs heronpy, which is not installed; {INSTALL_HINT}"
        raise HeronpyMissing(msg)
