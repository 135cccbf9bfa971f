"""`streamparse_run` with the tracing hook inside the component's own process:

    python -m heronbridge.conformance.trace.traced_run [--conf JSON] [-s json] module.Class

Wherever a streamparse component runs as a multilang subprocess (on Storm, or on the
runtime with --multilang), it is started this way instead of by `streamparse_run`, with
the `TraceHook` inside (`conformance.hooked_run`); the hook seeds the process itself at
the handshake. Components in other languages, or written without pystorm, run
under the tracing proxy (`proxy.py`) instead.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODULE = "heronbridge.conformance.trace.traced_run"


def traced_argv(args: list[str], conf: dict[str, Any] | None = None) -> list[str]:
    """The command line running `streamparse_run ARGS` traced with this interpreter.
    `conf`: options for the hook that the handshake's conf will not carry."""
    extra = ["--conf", json.dumps(conf, separators=(",", ":"))] if conf else []
    return [sys.executable, "-m", MODULE, *extra, *args]


def main(args: list[str] | None = None) -> None:
    from ..hooked_run import run_streamparse
    from .hook import TraceHook

    args = list(sys.argv[1:] if args is None else args)
    conf: dict[str, Any] = {}
    if args[:1] == ["--conf"]:
        conf, args = json.loads(args[1]), args[2:]
    run_streamparse(lambda: TraceHook(conf), MODULE, args)


if __name__ == "__main__":
    main()
