"""`streamparse_run` with the probe inside the component's process, for Storm's side:

    python -m heronbridge.conformance.bench.probe_run [-s json] module.Class

Storm starts it where it would start `streamparse_run`; every message passes a `Probe`
before pystorm sees it (and after pystorm writes it), so Storm's components pay what the
runtime's do for the probe and nothing more: no extra process, no extra pipe.
"""

from __future__ import annotations

import sys

MODULE = "heronbridge.conformance.bench.probe_run"


def main() -> None:
    from ..hooked_run import run_streamparse
    from .probe import Probe

    run_streamparse(Probe, MODULE, sys.argv[1:])


if __name__ == "__main__":
    main()
