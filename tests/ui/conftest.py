"""A real topology (a paced spout, two bolt tasks, a sink) and a UI server over its state,
shared by a test module; flags in `flags` make a bolt slow or make it raise."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ui_components import Numbers, Sink, Work

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.ui.server import UIServer
from heronbridge.ui.tracker import Tracker

TOKEN = "a-test-token"


@dataclass
class Served:
    launch: Launch
    server: UIServer
    tracker: Tracker
    flags: Path
    home: Home

    @property
    def name(self) -> str:
        return self.launch.name

    def url(self, path: str) -> str:
        return self.server.url.rstrip("/") + path

    def get(self, path: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(self.url(path), headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def json(self, path: str) -> Any:
        status, _, body = self.get(path)
        assert status == 200, f"{path}: {status} {body[:500]!r}"
        return json.loads(body)

    def post(self, path: str, token: str | None = TOKEN) -> tuple[int, bytes]:
        headers = {"X-Heronbridge-Token": token} if token else {}
        request = urllib.request.Request(self.url(path), data=b"", headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=70) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def plan(name: str, flags: Path, interval: float = 0.002):
    b = TopologyBuilder(name, {
        "topology.reliability.mode": "ATLEAST_ONCE", "ui.flags": str(flags),
        "ui.interval": interval, "heronbridge.restart.backoff.secs": 0.2,
        "topology.max.spout.pending": 200})
    numbers = b.spout("numbers", Numbers)
    work = b.bolt("work", Work, inputs=[numbers], par=2)
    b.bolt("sink", Sink, inputs=[work])
    return b.build()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Served:
    """Submitted as `heronbridge submit` does (its own scheduler process, so the UI's kill
    button can stop it), with a UI sampling every half second."""
    root = tmp_path_factory.mktemp("ui")
    flags = root / "flags"
    flags.mkdir()
    home = Home(root / "home")
    launch = Launch(plan("shown", flags), home, detached=True)
    launch.start(timeout=90)
    tracker = Tracker(launch.statemgr, interval=0.5)
    server = UIServer(tracker, home.root, port=0, token=TOKEN).start()
    tracker.start()
    yield Served(launch, server, tracker, flags, home)
    server.close()
    tracker.stop()
    launch.stop()
