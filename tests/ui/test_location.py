"""Where `run` and `submit` find a running UI: HOME/ui.json, written by the server (owner
only), trusted while the pid in it is alive."""

from __future__ import annotations

import json
import os
import stat

import pytest
from testkit import ui_verb

from heronbridge.cli.ui import print_ui_address, ui_address
from heronbridge.runtime.statemgr import open_statemgr
from heronbridge.ui.server import UIServer, is_loopback
from heronbridge.ui.tracker import Tracker


def test_the_server_publishes_its_address_for_run_and_submit(tmp_path, capsys):
    home = tmp_path / "home"
    tracker = Tracker(open_statemgr(str(home / "state")))
    server = UIServer(tracker, home, port=0, token="t0k3n")
    try:
        path = server.publish()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the token
        saved = json.loads(path.read_text())
        assert saved["token"] == "t0k3n" and saved["pid"] == os.getpid()
        assert ui_address(home) == server.url
        print_ui_address(home, "words")
        assert f"UI: {server.url}topology/words" in capsys.readouterr().err
        path.write_text(json.dumps({**saved, "pid": 2**22 + 12345}))  # no such process
        assert ui_address(home) is None
        print_ui_address(home, "words")  # none running: the command that serves it
        assert (f"UI: none running; `heronbridge ui --home {home}` (in another terminal) "
                "serves this topology's page at http://127.0.0.1:8889/topology/words") in \
            " ".join(capsys.readouterr().err.split())
        server.unpublish()  # not ours any more: left alone
        assert path.exists()
    finally:
        server.close()
    assert ui_address(tmp_path / "nowhere") is None


def test_loopback_is_recognised():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")


@pytest.mark.compat("cli/heronbridge ui", "rest/GET /api/v1/cluster/configuration")
@pytest.mark.integration
def test_the_ui_verb_serves_storms_api_and_takes_its_address_back(tmp_path):
    with ui_verb(tmp_path / "home") as get:
        assert get("/api/v1/cluster/configuration")["storm.version"] == "2.8.3"
        assert get("/api/v1/topology/summary")["topologies"] == []
