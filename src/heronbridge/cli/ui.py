"""The command line's `ui` verb: one web server for every topology the state manager
knows (Heron's tracker API, Storm UI's REST API v1, Prometheus /metrics, a page)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

from heronbridge.errors import HeronbridgeError
from heronbridge.runtime.scheduler import Home, default_home, pid_alive

from .options import Parents
from .terminal import console

TOKEN_ENV = "HERONBRIDGE_UI_TOKEN"


def add_verb(verbs: Any, parents: Parents) -> None:
    ui = verbs.add_parser(
        "ui", parents=[parents.home, parents.state],
        help="serve a web UI, Heron's tracker API, Storm UI's REST API and Prometheus "
             "metrics for every topology",
        description="Serve every topology the state manager knows: a web page (graph "
                    "coloured by capacity and backpressure, per-task metrics, exceptions, "
                    "logs, activate/deactivate/kill), Heron's tracker API, Storm UI's REST "
                    "API v1 under /api/v1, Prometheus metrics at /metrics and Storm "
                    "compatibility (the matrix the tests decide) at /compatibility. It listens on "
                    "loopback unless --host says otherwise; then every request needs the "
                    "token. The buttons that change a topology always need it.")
    ui.add_argument("--port", type=int, default=8889, help="port (default: %(default)s; "
                    "0 picks a free one)")
    ui.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default: %(default)s)")
    ui.add_argument("--token-file", metavar="FILE",
                    help=f"read the token requests must carry from FILE (first line), or set "
                         f"${TOKEN_ENV}; never on the command line, where `ps` shows it "
                         "(default: a new random one, printed and kept in HOME/ui.json)")
    ui.add_argument("--interval", type=float, default=3.0,
                    help="seconds between two samples of each topology's metrics "
                         "(default: %(default)s)")
    ui.set_defaults(func=cmd_ui)


def cmd_ui(args: argparse.Namespace) -> int:
    from heronbridge.ui.server import UIServer
    from heronbridge.ui.tracker import Tracker

    token = read_token(args.token_file)
    home = Home(Path(args.home), args.state)
    statemgr = home.open_statemgr()
    tracker = Tracker(statemgr, args.interval)
    server = UIServer(tracker, home.root, args.host, args.port, token)
    tracker.start()
    server.publish()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    console.print(f"heronbridge ui: {server.url} (state {statemgr.uri})")
    console.print(f"token: {server.token}" + ("" if server.reads_need_token else
                                              "  (needed for activate, deactivate, kill)"))
    try:
        stop.wait()
    finally:
        server.unpublish()
        server.close()
        tracker.stop()
        statemgr.close()
    return 0


def read_token(path: str | None) -> str | None:
    """The token from --token-file, else $HERONBRIDGE_UI_TOKEN, else None (a new one)."""
    if path is None:
        return os.environ.get(TOKEN_ENV) or None
    try:
        token = Path(path).read_text().splitlines()[0].strip() if Path(path).stat().st_size \
            else ""
    except OSError as exc:
        msg = f"--token-file: cannot read {path}: {exc.strerror or exc}"
        raise HeronbridgeError(msg) from exc
    if not token:
        msg = f"--token-file: expected a token on the first line of {path}, received none"
        raise HeronbridgeError(msg)
    return token


def ui_address(home: Path | str) -> str | None:
    """The URL of a `heronbridge ui` serving this home, if one is running."""
    try:
        found = json.loads((Path(home) / "ui.json").read_text())
    except (OSError, ValueError):
        return None
    return found.get("url") if pid_alive(int(found.get("pid", 0))) else None


def print_ui_address(home: Path | str, topology: str) -> None:
    """What `run` and `submit` print: the topology's page on the UI serving this home, or
    the command that serves it."""
    url = ui_address(home)
    if url:
        console.print(f"UI: {url}topology/{topology}")
        return
    home_option = "" if Path(home) == default_home() else f" --home {home}"
    console.print(f"UI: none running; `heronbridge ui{home_option}` (in another terminal) "
                  f"serves this topology's page at http://127.0.0.1:8889/topology/{topology}",
                  markup=False, highlight=False)
