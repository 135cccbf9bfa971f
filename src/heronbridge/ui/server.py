"""The HTTP server: the standard library's, with a bounded pool of worker threads.

Reads need the token only when the server listens beyond loopback; the buttons that
change a topology (activate, deactivate, kill) always need it, in a header, so a page of
another site cannot fire them through the browser's cookie.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import mimetypes
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from heronbridge.runtime import admin
from heronbridge.runtime.errors import RuntimeKernelError, where

from . import BadRequest, Forbidden, NotFound, UIError, page
from . import files as topology_files
from .heron_api import HeronAPI, dumps, failure
from .prometheus import CONTENT_TYPE, Exposition
from .storm_api import StormAPI, error_body
from .tracker import Tracker

log = logging.getLogger("heronbridge.ui")

TOKEN_HEADER = "X-Heronbridge-Token"
COOKIE = "heronbridge_token"
LOCATION_FILE = "ui.json"  # under the home: where `run` and `submit` find the UI
JSON = "application/json;charset=utf-8"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class Reply:
    def __init__(self, body: bytes, content_type: str = JSON, status: int = 200,
                 headers: dict[str, str] | None = None) -> None:
        self.body = body
        self.content_type = content_type
        self.status = status
        self.headers = headers or {}


Route = tuple[str, re.Pattern, str, Callable[..., Reply]]


class UIServer:
    """`heronbridge ui`: serve until `close()`."""

    def __init__(self, tracker: Tracker, home: Path | None = None, host: str = "127.0.0.1",
                 port: int = 8889, token: str | None = None, workers: int = 8) -> None:
        self.tracker = tracker
        self.home = home
        self.token = token or secrets.token_urlsafe(24)
        self.reads_need_token = not is_loopback(host)
        self.httpd = _PooledServer((host, port), _Handler, self, workers)
        self.host, self.port = self.httpd.server_address[:2]
        self.heron = HeronAPI(tracker)
        self.storm = StormAPI(tracker, self.url.rstrip("/"))
        self.prometheus = Exposition(tracker)
        self.routes = self._routes()
        self._thread: threading.Thread | None = None
        self._serving = threading.Event()

    @property
    def url(self) -> str:
        host = socket.getfqdn() if self.host in ("0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    # -- life -----------------------------------------------------------------------

    def start(self) -> UIServer:
        """Serve from a background thread."""
        self._serving.set()
        self._thread = threading.Thread(target=self.serve_forever, name="ui-http",
                                        daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._serving.set()
        self.httpd.serve_forever()

    def close(self) -> None:
        if self._serving.is_set():  # shutdown() waits for a loop that must be running
            self.httpd.shutdown()
        self.httpd.server_close()
        self.httpd.pool.shutdown(wait=False, cancel_futures=True)

    def publish(self) -> Path | None:
        """Write HOME/ui.json (owner only): the URL, pid, state and token, so that `run` and
        `submit` can print the address and a user on this account can read the token."""
        if self.home is None:
            return None
        self.home.mkdir(parents=True, exist_ok=True)
        path = self.home / LOCATION_FILE
        tmp = path.with_name(f".{LOCATION_FILE}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"url": self.url, "pid": os.getpid(), "host": self.host,
                       "port": self.port, "state": self.tracker.statemgr.uri,
                       "token": self.token}, f)
        os.replace(tmp, path)
        return path

    def unpublish(self) -> None:
        if self.home is None:
            return
        path = self.home / LOCATION_FILE
        try:
            if json.loads(path.read_text()).get("pid") == os.getpid():
                path.unlink()
        except (OSError, ValueError):
            pass

    # -- routing --------------------------------------------------------------------

    def _routes(self) -> list[Route]:
        h, s = self.heron, self.storm
        topo = "(?P<topology>[^/]+)"
        heron_topology: dict[str, Callable] = {
            "info": h.info, "config": h.config, "packingplan": h.packing_plan,
            "physicalplan": h.physical_plan, "logicalplan": h.logical_plan,
            "executionstate": h.execution_state, "schedulerlocation": h.scheduler_location,
            "metadata": h.metadata, "runtimestate": h.runtime_state}
        heron_query: dict[str, Callable] = {
            "metrics": h.metrics, "metrics/timeline": h.timeline,
            "metricstimeline": lambda t, q: h.timeline(t, q, as_strings=True),
            "exceptions": h.exceptions, "exceptionsummary": h.exception_summary,
            "container/filedata": self._filedata, "container/filestats": self._filestats}
        routes: list[tuple[str, str, str, Callable[..., Any]]] = [
            ("GET", "/", "page", lambda q: self._html(page.index(self.tracker, self.home))),
            ("GET", f"/topology/{topo}", "page", self._topology_page),
            ("GET", f"/topology/{topo}/logs/(?P<task>-?\\d+)", "page", self._log_tail),
            ("GET", "/static/(?P<name>[a-z]+\\.(?:js|css))", "page", self._static),
            ("GET", "/reports/(?P<kind>[a-z]+)/(?P<folder>[^/]+)/?(?P<path>.*)", "page",
             self._report),
            ("GET", f"/ui/api/topology/{topo}", "page", self._page_data),
            ("POST", f"/ui/api/topology/{topo}/(?P<action>activate|deactivate|kill)", "page",
             self._page_control),
            ("GET", "/metrics", "prometheus",
             lambda q: Reply(self.prometheus.render(), CONTENT_TYPE)),
            # Storm UI REST API v1
            ("GET", "/api/v1/cluster/summary", "storm", lambda q: s.cluster_summary()),
            ("GET", "/api/v1/cluster/configuration", "storm",
             lambda q: s.cluster_configuration()),
            ("GET", "/api/v1/nimbus/summary", "storm", lambda q: s.nimbus_summary()),
            ("GET", "/api/v1/supervisor/summary", "storm", lambda q: s.supervisor_summary()),
            ("GET", "/api/v1/topology/summary", "storm", lambda q: s.topology_summary()),
            ("GET", f"/api/v1/topology/{topo}(?:/metrics)?", "storm",
             lambda q, topology: s.topology_page(unquote(topology), _one(q, "window"))),
            ("GET", f"/api/v1/topology/{topo}/component/(?P<component>[^/]+)", "storm",
             lambda q, topology, component: s.component_page(
                 unquote(topology), unquote(component), _one(q, "window"))),
            ("POST", f"/api/v1/topology/{topo}/(?P<action>activate|deactivate)", "storm",
             self._storm_control),
            ("POST", f"/api/v1/topology/{topo}/kill/(?P<wait>\\d+)", "storm",
             lambda q, topology, wait: self._storm_control(q, topology, "kill")),
            # Heron tracker
            ("GET", "/health", "heron", lambda q: "ok"),
            ("GET", "/clusters", "heron", h.clusters),
            ("GET", "/machines", "heron", h.machines),
            ("GET", "/topologies", "heron", h.topologies),
            ("GET", "/topologies/states", "heron", h.states),
            ("GET", "/topologies/container/filedownload", "heron", self._filedownload),
        ]
        for name, fn in heron_topology.items():
            routes.append(("GET", f"/topologies/{name}", "heron",
                           lambda q, fn=fn: fn(self.heron.topology(q))))
        for name, fn in heron_query.items():
            routes.append(("GET", f"/topologies/{name}", "heron",
                           lambda q, fn=fn: fn(self.heron.topology(q), q)))
        return [(m, re.compile(p + "$"), kind, fn) for m, p, kind, fn in routes]

    def handle(self, method: str, target: str, headers: Any) -> Reply:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        route = None
        matched_path = False
        for m, pattern, kind, fn in self.routes:
            found = pattern.match(path)
            if found:
                matched_path = True
                if m == method:
                    route = (kind, fn, found.groupdict())
                    break
        if route is None:
            status = HTTPStatus.METHOD_NOT_ALLOWED if matched_path else HTTPStatus.NOT_FOUND
            return Reply(json.dumps({"error": status.phrase, "path": path}).encode(),
                         status=status)
        kind, fn, params = route
        started = time.perf_counter()
        try:
            self._authorize(method, headers, query)
            result = fn(query, **params)
            reply = result if isinstance(result, Reply) else Reply(dumps(result))
            if kind == "storm" and _one(query, "callback"):
                callback = re.sub(r"[^\w.$]", "", _one(query, "callback") or "")
                reply = Reply(f"{callback}({reply.body.decode()});".encode(),
                              "application/javascript")
        except Forbidden as exc:
            reply = self._error(kind, exc, 401)
        except NotFound as exc:
            # Heron's tracker answers an unknown topology with 500, as does Storm's UI.
            reply = self._error(kind, exc, 500 if kind in ("heron", "storm") else 404)
        except BadRequest as exc:
            reply = self._error(kind, exc, 400)
        except (UIError, RuntimeKernelError) as exc:
            reply = self._error(kind, exc, 500)
        took = time.perf_counter() - started
        reply.headers["Server-Timing"] = f"app;dur={took * 1000:.2f}"
        if kind == "heron":
            reply.headers["x-process-time"] = f"{took:.6f}"
        if "token" in query and method == "GET" and self._token_ok(_one(query, "token")):
            reply.headers["Set-Cookie"] = (f"{COOKIE}={self.token}; HttpOnly; "
                                           "SameSite=Strict; Path=/")
        return reply

    def _error(self, kind: str, exc: Exception, code: int) -> Reply:
        if kind == "storm":
            return Reply(error_body(exc, code), status=code)
        if kind == "heron":
            return Reply(json.dumps(failure(str(exc))).encode(), status=code)
        return Reply(str(exc).encode(), "text/plain; charset=utf-8", code)

    # -- the token ------------------------------------------------------------------

    def _token_ok(self, offered: str | None) -> bool:
        return bool(offered) and hmac.compare_digest(offered.encode(), self.token.encode())

    def _authorize(self, method: str, headers: Any, query: dict) -> None:
        offered = headers.get(TOKEN_HEADER)
        auth = headers.get("Authorization") or ""
        if not offered and auth.lower().startswith("bearer "):
            offered = auth[7:].strip()
        if method != "GET":
            if not self._token_ok(offered):
                msg = (f"changing a topology needs the server's token in the {TOKEN_HEADER} "
                       "header (it is in HOME/ui.json, and `heronbridge ui` prints it)")
                raise Forbidden(msg)
            return
        if not self.reads_need_token:
            return
        cookie = _cookie(headers.get("Cookie") or "", COOKIE)
        if not any(self._token_ok(t) for t in (offered, cookie, _one(query, "token"))):
            msg = ("this server listens beyond loopback: send its token (header "
                   f"{TOKEN_HEADER} or Authorization: Bearer, or ?token= once in a browser)")
            raise Forbidden(msg)

    # -- page handlers ------------------------------------------------------------------

    def _html(self, body: bytes) -> Reply:
        return Reply(body, "text/html; charset=utf-8")

    def _topology_page(self, q: dict, topology: str) -> Reply:
        name = unquote(topology)
        return self._html(page.topology_page(self.tracker.find(name), name, self.home))

    def _page_data(self, q: dict, topology: str) -> Any:
        return page.topology_data(self._find(topology), self.home)

    def _find(self, topology: str) -> Any:
        t = self.tracker.find(unquote(topology))
        if t is None:
            msg = f"{where(unquote(topology))} is not known to the state manager"
            raise NotFound(msg)
        return t

    def _log_tail(self, q: dict, topology: str, task: str) -> Reply:
        t = self._find(topology)
        lines = int(_one(q, "lines") or 200)
        path = topology_files.task_log(t, self.home, int(task))
        return Reply(topology_files.tail(path, max(1, min(lines, 5000))).encode(),
                     "text/plain; charset=utf-8")

    def _static(self, q: dict, name: str) -> Reply:
        resource = package_files("heronbridge.ui") / "static" / name
        if not resource.is_file():
            msg = f"no static file {name!r}"
            raise NotFound(msg)
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return Reply(resource.read_bytes(), f"{kind}; charset=utf-8",
                     headers={"Cache-Control": "max-age=60"})

    def _report(self, q: dict, kind: str, folder: str, path: str) -> Reply:
        folder = unquote(folder)
        target = topology_files.report_file(self.home, kind, folder, unquote(path))
        if target.is_dir():
            return self._html(page.listing(kind, folder, target, self.home / kind / folder))
        kind_of = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return Reply(target.read_bytes(), kind_of)

    def _page_control(self, q: dict, topology: str, action: str) -> Any:
        t = self._find(topology)
        if action == "kill":
            return {"topology": t.name, "action": action, "result": self._kill(t)}
        state = self.tracker.set_running(t, action == "activate")
        return {"topology": t.name, "action": action, "state": state}

    def _storm_control(self, q: dict, topology: str, action: str) -> Any:
        t = self.storm.topology(unquote(topology))
        if action == "kill":
            self._kill(t)
        else:
            self.tracker.set_running(t, action == "activate")
        return self.storm.operation(t.id, action)

    def _kill(self, t: Any) -> str:
        """As `heronbridge kill` (runtime.admin): the topology stops and its state goes."""
        killed = admin.kill(self.tracker.statemgr, t.name)
        self.tracker.poll()
        return killed.outcome

    # -- Heron's container files ----------------------------------------------------------

    def _container(self, t: Any, q: dict) -> Path:
        try:
            container = int(_one(q, "container") or "")
        except ValueError as exc:
            msg = "expected an integer query parameter 'container'"
            raise BadRequest(msg) from exc
        return topology_files.container_dir(t, self.home, container)

    def _filedata(self, t: Any, q: dict) -> dict:
        folder = self._container(t, q)
        path = topology_files.inside(folder, _one(q, "path") or "")
        return topology_files.read_chunk(path, int(_one(q, "offset") or -1),
                                         int(_one(q, "length") or -1))

    def _filestats(self, t: Any, q: dict) -> dict:
        folder = self._container(t, q)
        return topology_files.file_stats(folder, topology_files.inside(
            folder, _one(q, "path") or "."))

    def _filedownload(self, q: dict) -> Reply:
        t = self.heron.topology(q)
        folder = self._container(t, q)
        path = topology_files.inside(folder, _one(q, "path") or "")
        if not path.is_file():
            msg = f"no file {_one(q, 'path')!r} in container {_one(q, 'container')}"
            raise NotFound(msg)
        return Reply(path.read_bytes(), "application/octet-stream",
                     headers={"Content-Disposition": f"attachment; filename={path.name}"})


def _one(q: dict, key: str) -> str | None:
    values = q.get(key)
    return values[0] if values else None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class _PooledServer(HTTPServer):
    """Each connection is served by one of a fixed number of threads."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type, ui: UIServer,
                 workers: int) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self.ui = ui
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ui-http")

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - one bad connection never stops the server
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


class _Handler(BaseHTTPRequestHandler):
    server: _PooledServer
    protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
    timeout = 10

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._reply(self.server.ui.handle("GET", self.path, self.headers))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 16))
        self._reply(self.server.ui.handle("POST", self.path, self.headers))

    def _reply(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("%s %s", self.address_string(), format % args)
