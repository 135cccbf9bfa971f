"""The Storm side of the conformance suite: Apache Storm in local mode, from Maven
Central's jars, running a streamparse project under the tracing hook."""

from .errors import StormError
from .install import StormInstall, fetch
from .run import StormRun, run_on_storm
from .traps import Trap

__all__ = ["StormError", "StormInstall", "StormRun", "Trap", "fetch", "run_on_storm"]
