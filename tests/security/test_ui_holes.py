"""Hole 5 and the UI's smaller ones: a page of another site that rebinds its name to
loopback is refused (Host), and JSONP answers only a request that carries the token;
another local user reads nothing without the token; slow clients hold no worker (the UI
answers while many connections trickle their requests); a query value of the wrong kind
is answered 400, not a dropped connection."""

from __future__ import annotations

import http.client
import json
import time

import pytest
from rt_components import KeySpout

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.local import submit_plan
from heronbridge.ui.server import UIServer
from heronbridge.ui.tracker import Tracker

TOKEN = "the-ui-token"

READ = r'''
import json, sys, urllib.request, urllib.error
port, paths = int(sys.argv[1]), sys.argv[2:]
out = {}
for path in paths:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            out[path] = [r.status, r.read(200).decode(errors="replace")]
    except urllib.error.HTTPError as exc:
        out[path] = [exc.code, exc.read(200).decode(errors="replace")]
print(json.dumps(out))
'''

TRICKLE = r'''
import json, socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    socks.append(s)
end = time.monotonic() + seconds
while time.monotonic() < end:
    for s in socks:
        try:
            s.sendall(b"X")  # one byte at a time, never the end of the head
        except OSError:
            pass
    time.sleep(0.5)
print(json.dumps({"held": len(socks)}))
'''


@pytest.fixture
def ui(tmp_path):
    home = Home(tmp_path / "home")
    state = home.open_state()
    b = TopologyBuilder("listed", {})
    b.spout("s", KeySpout)
    submit_plan(state, home, b.build())  # known to the state, not running
    tracker = Tracker(state, interval=0.5)
    server = UIServer(tracker, home.root, port=0, token=TOKEN).start()
    tracker.start()
    yield server
    server.close()
    tracker.stop()
    state.close()


def get(server, path, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, reply.getheader("Content-Type"), reply.read()
    finally:
        conn.close()


def test_a_rebound_name_and_jsonp_without_the_token_read_nothing(ui):
    status, _, _ = get(ui, "/api/v1/cluster/summary", {"Host": "attacker.example:8889"})
    assert status == 421
    status, kind, body = get(ui, "/api/v1/cluster/summary?callback=steal")
    assert status == 200 and kind.startswith("application/json") and body.startswith(b"{")
    status, kind, body = get(ui, f"/api/v1/cluster/summary?callback=mine&token={TOKEN}")
    assert kind == "application/javascript" and body.startswith(b"mine(")
    assert get(ui, "/health", {"Host": f"localhost:{ui.port}"})[0] == 200


def test_another_local_user_reads_nothing_without_the_token(ui, attacker):
    paths = ["/api/v1/cluster/summary", "/api/v1/topology/summary", "/topologies",
             "/topology/listed/logs/1", "/topologies/container/filedata?cluster=local"
             "&environ=default&topology=listed&container=0&path=logs/x.log",
             f"/api/v1/topology/summary?token={TOKEN}"]
    got = attacker.run(READ, ui.port, *paths)
    for path in paths[:-1]:
        assert got[path][0] == 401, (path, got[path])
    assert got[paths[-1]][0] == 200  # only with the token, which it cannot read
    assert get(ui, "/api/v1/topology/summary")[0] == 200  # this user's own processes


def test_slow_clients_hold_no_worker(ui, attacker):
    trickle = attacker.start(TRICKLE, ui.port, 40, 6)  # five times the workers
    time.sleep(1.5)
    took = []
    for _ in range(5):
        began = time.monotonic()
        assert get(ui, "/health")[0] == 200
        took.append(time.monotonic() - began)
    out, err = trickle.communicate(timeout=60)
    assert json.loads(out)["held"] == 40, err
    assert max(took) < 5  # answered while every slow connection was still open


@pytest.mark.parametrize("path", ["/topology/listed/logs/1?lines=many",
                                  "/topologies/container/filedata?cluster=local"
                                  "&environ=default&topology=listed&container=0&path=x"
                                  "&offset=first",
                                  "/topologies/metrics?cluster=local&environ=default"
                                  "&topology=listed&component=s&interval=soon"])
def test_a_bad_query_value_is_answered_400(ui, path):
    status, _, body = get(ui, path)
    assert status == 400, body
    assert b"expected" in body or b"bad query" in body


def test_the_token_comes_from_a_file_or_the_environment_never_the_command_line(
        tmp_path, monkeypatch, capsys):
    from heronbridge.cli import main
    from heronbridge.errors import HeronbridgeError
    from heronbridge.ui_verb import TOKEN_ENV, read_token

    path = tmp_path / "token"
    path.write_text("from-a-file\n")
    monkeypatch.setenv(TOKEN_ENV, "from-the-environment")
    assert read_token(str(path)) == "from-a-file"
    assert read_token(None) == "from-the-environment"
    path.write_text("")
    with pytest.raises(HeronbridgeError, match="expected a token on the first line"):
        read_token(str(path))
    with pytest.raises(SystemExit):
        main(["ui", "--help"])
    usage = capsys.readouterr().out
    assert "--token-file" in usage and "--token " not in usage and "--token\n" not in usage
