"""The HTTP server: the standard library's, with a bounded pool of worker threads.

A request is read whole (head and body, within REQUEST_SECS) by one thread that watches
every connection at once, and only then given to a worker: slow clients hold no worker.

Who may read: on loopback, processes of this user (the peer socket's owner, from the
kernel's tables) or whoever sends the token (header, `Authorization: Bearer`, or the
cookie that `?token=` sets); beyond loopback, the token only. The buttons that change a
topology (activate, deactivate, kill) always need it, in a header, so a page of another
site cannot fire them through the browser's cookie. The Host header must name this
server (a page of another site that rebinds its name to 127.0.0.1 is refused), and JSONP
(`?callback=`) answers only a request that carries the token.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import json
import logging
import mimetypes
import os
import re
import secrets
import selectors
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
from heronbridge.runtime.procfs import tcp_peer_owner

from . import (
    BadRequest,
    Forbidden,
    NotFound,
    UIError,
    compatibility,
    events,
    page,
    profiles,
    series,
)
from . import files as topology_files
from . import logs as task_logs
from .heron_api import HeronAPI, dumps, failure
from .prometheus import CONTENT_TYPE, Exposition
from .storm_api import StormAPI, error_body
from .tracker import Tracker

log = logging.getLogger("heronbridge.ui")

TOKEN_HEADER = "X-Heronbridge-Token"
COOKIE = "heronbridge_token"
LOCATION_FILE = "ui.json"  # under the home: where `run` and `submit` find the UI
JSON = "application/json;charset=utf-8"
REQUEST_SECS = 10.0  # to send a whole request
MAX_REQUEST = 1 << 16  # bytes of head, and of body
MAX_WAITING = 512  # connections still sending their request


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
        address = self.httpd.server_address  # (host, port[, ...]) on an AF_INET(6) socket
        self.host, self.port = str(address[0]), int(address[1])
        self.hosts = _host_names(self.host, self.port)
        self.heron = HeronAPI(tracker)
        self.storm = StormAPI(tracker, self.url.rstrip("/"))
        self.prometheus = Exposition(tracker)
        self.routes = self._routes()
        self._series_cache: dict[tuple, tuple[tuple, Any]] = {}
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
            ("GET", "/compatibility", "page", lambda q: self._html(compatibility.page())),
            ("GET", f"/ui/api/topology/{topo}", "page", self._page_data),
            ("GET", f"/ui/api/topology/{topo}/series", "page", self._series),
            ("POST", f"/ui/api/topology/{topo}/(?P<action>activate|deactivate|kill)", "page",
             self._page_control),
            ("POST", f"/ui/api/topology/{topo}/loglevel", "page", self._log_level),
            ("GET", f"/ui/api/topology/{topo}/events", "page", self._events),
            ("POST", f"/ui/api/topology/{topo}/sampling", "page", self._sampling),
            ("POST", f"/ui/api/topology/{topo}/tasks/(?P<task>\\d+)/(?P<kind>stacks|flame|memory)",
             "page", self._profile),
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
            ("GET", f"/api/v1/topology/{topo}/lag", "storm",
             lambda q, topology: s.lag(unquote(topology))),
            ("GET", f"/api/v1/topology/{topo}/component/(?P<component>[^/]+)", "storm",
             lambda q, topology, component: s.component_page(
                 unquote(topology), unquote(component), _one(q, "window"))),
            ("POST", f"/api/v1/topology/{topo}/(?P<action>activate|deactivate)", "storm",
             self._storm_control),
            ("POST", f"/api/v1/topology/{topo}/kill/(?P<wait>\\d+)", "storm",
             lambda q, topology, wait: self._storm_control(q, topology, "kill")),
            ("POST", f"/api/v1/topology/{topo}/debug/(?P<action>enable|disable)/(?P<pct>[0-9.]+)",
             "storm", self._storm_debug),
            ("POST", f"/api/v1/topology/{topo}/component/(?P<component>[^/]+)/debug/"
                     "(?P<action>enable|disable)/(?P<pct>[0-9.]+)", "storm", self._storm_debug),
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

    def handle(self, method: str, target: str, headers: Any,
               peer_uid: int | None = None) -> Reply:
        """Answer one request; `peer_uid`: the owner of the client's socket, if known."""
        host = (headers.get("Host") or "").strip().lower()
        if host and host not in self.hosts:
            return Reply(json.dumps({"error": "Misdirected Request", "host": host}).encode(),
                         status=HTTPStatus.MISDIRECTED_REQUEST)
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
            self._authorize(method, headers, query, peer_uid)
            result = fn(query, **params)
            reply = result if isinstance(result, Reply) else Reply(dumps(result))
            if kind == "storm" and _one(query, "callback") \
                    and self._token_ok(_one(query, "token")):
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
        except ValueError as exc:  # a query value of the wrong kind
            reply = self._error(kind, BadRequest(f"bad query {parts.query!r}: {exc}"), 400)
        except (UIError, RuntimeKernelError) as exc:
            reply = self._error(kind, exc, 500)
        except Exception as exc:  # answered, and logged: never a dropped connection
            log.exception("%s %s failed", method, path)
            reply = self._error(kind, UIError(f"{type(exc).__name__}: {exc}"), 500)
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
        return offered is not None and offered != "" and \
            hmac.compare_digest(offered.encode(), self.token.encode())

    def _authorize(self, method: str, headers: Any, query: dict,
                   peer_uid: int | None = None) -> None:
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
        if not self.reads_need_token and peer_uid in (0, os.getuid()):
            return  # a process of this user's (or root's), on loopback
        cookie = _cookie(headers.get("Cookie") or "", COOKIE)
        if not any(self._token_ok(t) for t in (offered, cookie, _one(query, "token"))):
            who = ("this server listens beyond loopback" if self.reads_need_token
                   else "this server serves its own user's processes only")
            msg = (f"{who}: send its token (header {TOKEN_HEADER} or Authorization: "
                   "Bearer, or ?token= once in a browser)")
            raise Forbidden(msg)

    # -- page handlers ------------------------------------------------------------------

    def _html(self, body: bytes) -> Reply:
        return Reply(body, "text/html; charset=utf-8")

    def _topology_page(self, q: dict, topology: str) -> Reply:
        name = unquote(topology)
        return self._html(page.topology_page(self.tracker.find(name), name, self.home))

    def _page_data(self, q: dict, topology: str) -> Any:
        return page.topology_data(self._find(topology), self.home)

    def _series(self, q: dict, topology: str) -> Any:
        """The charts' data; computed once per new sample, window and task asked."""
        t = self._find(topology)
        window = _one(q, "window") or series.DEFAULT_WINDOW
        task = _int(q, "task", -1)
        latest = t.history.latest()
        key = (t.name, t.id, window, task, latest.ts if latest else 0.0,
               len(t.nodes.actions), len(t.updates))
        cached = self._series_cache.get(key[:4])
        if cached is not None and cached[0] == key:
            return cached[1]
        found = series.series(t, window, time.time(), None if task < 0 else task)
        if len(self._series_cache) > 256:  # topologies gone, tasks asked once
            self._series_cache.clear()
        self._series_cache[key[:4]] = (key, found)
        return found

    def _find(self, topology: str) -> Any:
        t = self.tracker.find(unquote(topology))
        if t is None:
            msg = f"{where(unquote(topology))} is not known to the state manager"
            raise NotFound(msg)
        return t

    def _log_tail(self, q: dict, topology: str, task: str) -> Reply:
        t = self._find(topology)
        lines = _int(q, "lines", 200)
        text = task_logs.task_tail(self.tracker.statemgr, t, self.home, int(task),
                                   max(1, min(lines, 5000)))
        return Reply(text.encode(), "text/plain; charset=utf-8")

    def _static(self, q: dict, name: str) -> Reply:
        resource = package_files("heronbridge.ui") / "static" / name
        if not resource.is_file():
            msg = f"no static file {name!r}"
            raise NotFound(msg)
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return Reply(resource.read_bytes(), f"{kind}; charset=utf-8",
                     headers={"Cache-Control": "max-age=60"})

    def _report(self, q: dict, kind: str, folder: str, path: str) -> Reply:
        if self.home is None:
            msg = "this UI serves no reports: it was started without a home"
            raise NotFound(msg)
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

    def _log_level(self, q: dict, topology: str) -> Any:
        """Storm UI's log level, for one component (or all): ?component=&level=&timeout="""
        t = self._find(topology)
        component, level = _one(q, "component") or "", _one(q, "level") or ""
        timeout, logger = _int(q, "timeout", 30), _one(q, "logger") or ""
        if component and component not in t.kinds:
            msg = f"topology {t.name!r} has no component {component!r}"
            raise BadRequest(msg)
        admin.set_log_level(self.tracker.statemgr, t.name, component, level, timeout, logger)
        return {"topology": t.name, "component": component, "logger": logger,
                "level": level, "timeout": timeout}

    def _events(self, q: dict, topology: str) -> Any:
        """The sampled tuples: ?component= to one component's, ?after= (epoch ms)."""
        t = self._find(topology)
        component = _one(q, "component") or None
        if component and component not in t.kinds:
            msg = f"topology {t.name!r} has no component {component!r}"
            raise NotFound(msg)
        return {"topology": t.name, "sampling": t.sampling,
                "events": events.sampled(t, self.home, component, _int(q, "after", 0),
                                         self.tracker.statemgr)}

    def _sampling(self, q: dict, topology: str) -> Any:
        """Storm UI's Debug: ?component=&percent= (0 stops; no component: every one)."""
        t = self._find(topology)
        component = _one(q, "component") or ""
        percent = _float(q, "percent", 10.0)
        return self._sample(t, component, percent)

    def _sample(self, t: Any, component: str, percent: float) -> dict[str, Any]:
        if component and component not in t.kinds:
            msg = f"topology {t.name!r} has no component {component!r}"
            raise BadRequest(msg)
        if not 0 <= percent <= 100:
            msg = f"topology {t.name!r}: expected a sampling percentage from 0 to 100, " \
                  f"received {percent:g}"
            raise BadRequest(msg)
        admin.set_sampling(self.tracker.statemgr, t.name, component, percent)
        return {"topology": t.name, "component": component, "percent": percent}

    def _storm_debug(self, q: dict, topology: str, action: str, pct: str,
                     component: str = "") -> Any:
        """Storm UI's debug/enable|disable/PCT, for the topology or one component."""
        t = self.storm.topology(unquote(topology))
        try:
            percent = float(pct) if action == "enable" else 0.0
        except ValueError as exc:
            msg = f"topology {t.name!r}: expected a sampling percentage, received {pct!r}"
            raise BadRequest(msg) from exc
        self._sample(t, unquote(component), percent)
        return self.storm.operation(t.id, "debug")

    def _profile(self, q: dict, topology: str, task: str, kind: str) -> Any:
        """A live task's stacks, flame graph (?seconds=) or memory, from its own host: a
        POST, so always with the token in a header, as the buttons that change a topology."""
        found = profiles.take(self.tracker, self._find(topology), int(task), kind,
                              _int(q, "seconds", 5))
        if kind == "memory":
            return found
        if kind == "stacks":
            return Reply(found, "text/plain; charset=utf-8")
        # py-spy's SVG carries a script: never run it in this origin
        return Reply(found, "image/svg+xml", headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"})

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
        offset, length = _int(q, "offset", -1), _int(q, "length", -1)
        folder = self._container(t, q)
        path = topology_files.inside(folder, _one(q, "path") or "")
        return topology_files.read_chunk(path, offset, length)

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


def _int(q: dict, key: str, default: int) -> int:
    return int(_number(q, key, default, int))


def _float(q: dict, key: str, default: float) -> float:
    return _number(q, key, default, float)


def _number(q: dict, key: str, default: float, kind: type) -> float:
    text = _one(q, key)
    try:
        return default if text is None or text == "" else kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        msg = f"expected {what} as query parameter {key!r}, received {text!r}"
        raise BadRequest(msg) from None


def _host_names(host: str, port: int) -> frozenset[str]:
    """The Host headers a request for this server may carry: its own address, and
    loopback's or this machine's names when it listens there."""
    names = {host}
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "::1"}
    if host in ("0.0.0.0", "::"):
        names |= {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
    out = set()
    for name in names:
        shown = f"[{name}]" if ":" in name else name
        out |= {shown.lower(), f"{shown}:{port}".lower()}
    return frozenset(out)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class _PooledServer(HTTPServer):
    """Each request, once read whole, is served by one of a fixed number of threads."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type, ui: UIServer,
                 workers: int) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self.ui = ui
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ui-http")
        self.requests: dict[Any, bytes] = {}  # connection -> its whole request
        self.reader = _RequestReader(self)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.reader.add(request, client_address)

    def dispatch(self, request: Any, client_address: Any, data: bytes) -> None:
        self.requests[request] = data
        self.pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - one bad connection never stops the server
            self.handle_error(request, client_address)
        finally:
            self.requests.pop(request, None)
            self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.reader.close()


class _RequestReader:
    """One thread reads every connection's request until it is whole (its head, and the
    body its Content-Length announces), then hands it to the pool; a connection that has
    not sent it within REQUEST_SECS, or sends more than MAX_REQUEST, is closed."""

    def __init__(self, server: _PooledServer) -> None:
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.lock = threading.Lock()
        self.waiting: dict[Any, tuple[Any, float, bytearray]] = {}
        self.wake_r, self.wake_w = socket.socketpair()
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        self.closed = False
        threading.Thread(target=self._run, name="ui-http-reader", daemon=True).start()

    def add(self, conn: Any, address: Any) -> None:
        with self.lock:
            if len(self.waiting) >= MAX_WAITING:
                conn.close()  # too many still sending: this one waits its turn elsewhere
                return
            conn.setblocking(False)
            self.waiting[conn] = (address, time.monotonic() + REQUEST_SECS, bytearray())
            self.selector.register(conn, selectors.EVENT_READ)
        self.wake_w.send(b"\0")

    def close(self) -> None:
        self.closed = True
        self.wake_w.send(b"\0")

    def _run(self) -> None:
        while not self.closed:
            for key, _ in self.selector.select(timeout=1.0):
                if key.fileobj is self.wake_r:
                    self.wake_r.recv(4096)
                else:
                    self._read(key.fileobj)
            now = time.monotonic()
            with self.lock:
                late = [c for c, (_, deadline, _) in self.waiting.items() if deadline < now]
            for conn in late:
                self._drop(conn)
        with self.lock:
            for conn in list(self.waiting):
                self._drop(conn)

    def _read(self, conn: Any) -> None:
        try:
            chunk = conn.recv(MAX_REQUEST)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        with self.lock:
            address, _, buf = self.waiting[conn]
        buf += chunk
        whole = _whole_request(buf)
        if not chunk or whole is False:
            self._drop(conn)
        elif whole:
            with self.lock:
                del self.waiting[conn]
                self.selector.unregister(conn)
            conn.setblocking(True)
            conn.settimeout(REQUEST_SECS)
            self.server.dispatch(conn, address, bytes(buf))

    def _drop(self, conn: Any) -> None:
        with self.lock:
            if self.waiting.pop(conn, None) is None:
                return
            self.selector.unregister(conn)
        conn.close()


def _whole_request(buf: bytearray) -> bool | None:
    """True once a request's head and body are all there; None while they may still
    come; False for one too big."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False if len(buf) > MAX_REQUEST else None
    if end > MAX_REQUEST:
        return False
    found = re.search(rb"\r\ncontent-length:[ \t]*(\d+)", bytes(buf[:end]), re.IGNORECASE)
    length = int(found.group(1)) if found else 0
    if length > MAX_REQUEST:
        return False
    return len(buf) - end - 4 >= length or None


class _Handler(BaseHTTPRequestHandler):
    server: _PooledServer
    protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
    timeout = 10

    def setup(self) -> None:
        super().setup()
        self.rfile = io.BytesIO(self.server.requests.get(self.request, b""))  # read already

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._reply(self.server.ui.handle("GET", self.path, self.headers, self._peer_uid()))

    def do_POST(self) -> None:  # noqa: N802
        self._reply(self.server.ui.handle("POST", self.path, self.headers, self._peer_uid()))

    def _peer_uid(self) -> int | None:
        return tcp_peer_owner(self.request)

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
