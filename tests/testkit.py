"""Helpers tests import by name (`from testkit import ...`): a topology running for a
`with` block, polling with a clear failure, reading JSON-lines output."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import psutil
import pytest

from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.statemgr import StateManager

# The installed console script, as a user runs it (`python -m heronbridge` from the
# repository root would import the source folder `heronbridge/` instead of the package).
HERONBRIDGE = str(Path(sys.executable).parent / "heronbridge")
# What a Python process reads as it starts: a forked command has the forking process's.
STARTUP_ENV = ("PYTHON", "LC_", "LANG")


def startup_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_ENV)}


class WarmCli:
    """tests/warm_cli.py, started once per test process: `heronbridge` commands forked from
    a process that has done their imports."""

    def __init__(self) -> None:
        requests, self._requests = os.pipe()
        self._replies, replies = os.pipe()
        self.startup = startup_env(os.environ)
        # Its standard files are no terminal, as a captured command's are not: what the
        # CLI decides on import from them (the tables' width) is what the command decides.
        self.log = tempfile.NamedTemporaryFile(prefix="warm-cli-", suffix=".log")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("warm_cli.py")), str(requests),
             str(replies)], pass_fds=(requests, replies), stdin=subprocess.DEVNULL,
            stdout=self.log, stderr=self.log)
        os.close(requests)
        os.close(replies)
        self._buffer = b""
        self.lock = threading.Lock()
        atexit.register(self.stop)

    def stop(self) -> None:
        """Its requests end: it exits (a command still running ends with its timeout)."""
        with contextlib.suppress(OSError):
            os.close(self._requests)
        self.process.wait(timeout=30)
        self.log.close()

    def _reply(self, deadline: float | None) -> dict | None:
        """The next reply; None when the deadline passes first."""
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._replies], [], [], wait)[0]:
                return None
            chunk = os.read(self._replies, 4096)
            if not chunk:
                said = Path(self.log.name).read_text(errors="replace")[-3000:]
                msg = f"tests/warm_cli.py exited with {self.process.wait()}: {said}"
                raise RuntimeError(msg)
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def run(self, args: list[str], cwd: str, env: dict[str, str], stdin: str, stdout: str,
            stderr: str, timeout: float | None) -> int | None:
        """The command's exit status; None (the command killed) when it outlives
        `timeout`."""
        request = {"args": args, "cwd": cwd, "env": env, "stdin": stdin, "stdout": stdout,
                   "stderr": stderr}
        with self.lock:
            os.write(self._requests, (json.dumps(request) + "\n").encode())
            pid = self._reply(None)["pid"]
            deadline = None if timeout is None else time.monotonic() + timeout
            done = self._reply(deadline)
            if done is None:
                os.kill(pid, 9)
                self._reply(None)
                return None
            return done["returncode"]


_warm: WarmCli | None = None


def heronbridge(*args: str, cwd: str | Path | None = None, env: dict[str, str] | None = None,
                timeout: float | None = 120, text: bool = True,
                input: str | bytes | None = None) -> subprocess.CompletedProcess:
    """`heronbridge ARGS` run to its end, as subprocess.run(..., capture_output=True) runs
    the installed command, but forked from a process that has its imports done (a
    command whose environment changes how Python starts runs as a plain subprocess)."""
    global _warm
    env = dict(os.environ if env is None else env)
    cwd = str(cwd or os.getcwd())
    if _warm is None or _warm.process.poll() is not None:
        _warm = WarmCli()
    if startup_env(env) != _warm.startup:
        return subprocess.run([HERONBRIDGE, *args], cwd=cwd, env=env, timeout=timeout,
                              text=text, input=input, capture_output=True, check=False)
    with tempfile.TemporaryDirectory(prefix="heronbridge-cli-") as folder:
        files = {name: Path(folder) / name for name in ("stdin", "stdout", "stderr")}
        data = input.encode() if isinstance(input, str) else input or b""
        for name, path in files.items():
            path.write_bytes(data if name == "stdin" else b"")
        code = _warm.run(list(args), cwd, env, *map(str, files.values()), timeout)
        out, err = (files[n].read_bytes() for n in ("stdout", "stderr"))
    if text:  # decoded as subprocess decodes: the locale's encoding, universal newlines
        out, err = (io.TextIOWrapper(io.BytesIO(b)).read() for b in (out, err))
    if code is None:  # what it wrote goes with the error, as subprocess.run gives it
        raise subprocess.TimeoutExpired([HERONBRIDGE, *args], timeout, out, err)
    return subprocess.CompletedProcess([HERONBRIDGE, *args], code, out, err)


class Running(Launch):
    """A topology running for the duration of a `with` block (its tasks' logs at hand)."""

    def __init__(self, plan: LogicalPlan, home: Home, state: StateManager,
                 project: object = None, spark: object = None) -> None:
        super().__init__(plan, home, state,
                         project.install_resources if project is not None else None,
                         spark=spark)

    def __enter__(self) -> Running:
        self.start(timeout=90 if self.spark is None else None)  # Spark: its own default
        return self

    def logs(self) -> str:
        return "\n".join(
            f"--- {p}\n{p.read_text(errors='replace')}"
            for p in sorted(self.workdir.glob("container-*/logs/*.log"))
        )


def wait_until(
    condition: Callable[[], object],
    timeout: float,
    what: str,
    interval: float = 0.1,
    on_timeout: Callable[[], str] | None = None,
) -> object:
    """Poll `condition` until it returns something truthy; fail with `what` on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            last = condition()
            if last:
                return last
        time.sleep(interval)
    detail = on_timeout() if on_timeout else ""
    pytest.fail(f"timed out after {timeout}s waiting for {what} (last: {last!r})\n{detail}")


def read_jsonl(folder: Path, pattern: str = "*.jsonl") -> dict[str, list]:
    """{file stem: [records]} for every JSON-lines file under `folder`."""
    out: dict[str, list] = {}
    for path in sorted(folder.glob(pattern)):
        records = []
        for line in path.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                records.append(json.loads(line))
        out[path.stem] = records
    return out


def storm_leftovers(run_dir: Path, pids: set[int] = frozenset()) -> list[str]:
    """Live processes of a Storm run: the JVM names the run folder on its command line,
    the components run in a folder under it; `pids`: the components' own, from traces."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status", "cwd"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cmd = " ".join(proc.info["cmdline"] or [])
        if proc.pid in pids or str(run_dir) in cmd or str(run_dir) in (proc.info["cwd"] or ""):
            found.append(f"{proc.pid} {cmd[:160]}")
    return found


def bench_verb(tmp_path: Path, project: Path, *args: str,
               timeout: float = 400) -> tuple[dict, str]:
    """Run `heronbridge bench` on `project` into tmp_path/out: (its JSON, its table)."""
    out = tmp_path / "result.json"
    done = heronbridge("bench", "--project", str(project), "--out", str(tmp_path / "out"),
                       "--json", str(out), *args, timeout=timeout, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def start_chromium(window_size: str = "1400,1000"):
    """Debian's headless Chromium under selenium (tox's conformance env installs both)."""
    import shutil

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail(f"{CHROMIUM} and {CHROMEDRIVER} are needed (tox's conformance env "
                    "installs Debian's chromium and chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 f"--window-size={window_size}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@contextlib.contextmanager
def ui_verb(home: Path, *args: str):
    """`heronbridge ui --home HOME --port 0 ARGS...` as a user starts it; yields a function
    that GETs a path from it as JSON. Stopped with SIGTERM; it takes its address back."""
    import signal
    import urllib.request

    process = subprocess.Popen([HERONBRIDGE, "ui", "--home", str(home), "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={k: v for k, v in os.environ.items()
                                    if k != "HERONBRIDGE_STATE"})
    location = home / "ui.json"
    try:
        found = wait_until(lambda: location.is_file() and json.loads(location.read_text()), 60,
                           "heronbridge ui to publish its address",
                           on_timeout=lambda: str(process.poll()))

        def get(path: str) -> object:
            with urllib.request.urlopen(found["url"] + path.lstrip("/"), timeout=30) as reply:
                return json.loads(reply.read())

        yield get
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    assert not location.exists()
