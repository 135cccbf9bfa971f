"""A multilang component under the tracing hook, as a process between Storm's side and
the component's own process:

    python -m heronbridge.conformance.trace.proxy --serializer json -- CMD ARG...

starts CMD as its child, relays the protocol's messages both ways through a `TraceHook`
and exits with the child's exit code. Storm's side writes to a bolt while the bolt is
emitting, so each direction has its own thread. Nothing but protocol messages is ever
written to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from heronbridge.runtime.scheduler.processes import die_with_parent
from heronbridge.shims.storm.protocol import framing

from .. import ConformanceError
from .hook import TraceHook

MODULE = "heronbridge.conformance.trace.proxy"
READ_SIZE = 1 << 16


def proxy_argv(argv: list[str], serializer: str,
               conf: dict[str, Any] | None = None) -> list[str]:
    """The command line that runs `argv` under the proxy with this interpreter. `conf`:
    options for the hook that the handshake's conf will not carry (the runtime keeps its
    own `heronbridge.*` options from components; Storm shows them all)."""
    extra = ["--conf", json.dumps(conf, separators=(",", ":"))] if conf else []
    return [sys.executable, "-m", MODULE, "--serializer", serializer, *extra, "--", *argv]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Proxy:
    def __init__(self, argv: list[str], serializer: str, conf: dict[str, Any]) -> None:
        self.argv = argv
        self.serializer = serializer
        self.out_lock = threading.Lock()  # both directions answer Storm's side
        try:
            # If the proxy dies, even by SIGKILL, the component goes too.
            self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          preexec_fn=die_with_parent())
        except OSError as exc:
            msg = f"cannot start {' '.join(argv)!r} under the tracing proxy: {exc}"
            raise ConformanceError(msg) from exc
        self.hook = TraceHook(conf, exit_process=self.kill)
        self.to_child = self.child.stdin.fileno()
        self.from_child = self.child.stdout.fileno()

    def kill(self, code: int = 1) -> None:
        """End the component hard, and the proxy with it (non-zero: it did not finish)."""
        if self.child.poll() is None:
            self.child.kill()
        os._exit(code)

    def _to_storm(self, msgs: list[Any], encode: Any) -> None:
        if msgs:
            data = b"".join(encode(m) for m in msgs)
            with self.out_lock:
                _write_all(1, data)

    def down(self) -> None:
        """Storm's side -> the component. EOF closes the component's stdin, as Storm's
        side going away would."""
        frames = framing(self.serializer)
        try:
            while True:
                chunk = os.read(0, READ_SIZE)
                if not chunk:
                    break
                for msg in frames.feed(chunk):
                    mine, back = self.hook.down(msg)
                    if mine:
                        _write_all(self.to_child, b"".join(frames.encode(m) for m in mine))
                    self._to_storm(back, frames.encode)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the component went away; the other direction sees it end
        except Exception as exc:
            self._fail(exc)
        finally:
            try:
                self.child.stdin.close()
            except OSError:
                pass

    def up(self) -> None:
        """The component -> Storm's side; returns when the component closes its stdout."""
        frames = framing(self.serializer)
        try:
            while True:
                chunk = os.read(self.from_child, READ_SIZE)
                if not chunk:
                    return
                for msg in frames.feed(chunk):
                    self._to_storm(self.hook.up(msg), frames.encode)
        except BrokenPipeError:
            return  # Storm's side went away
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        where = self.hook.where() if self.hook.component else "tracing proxy"
        sys.stderr.write(f"{where}: {type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        self.hook.close()
        self.kill(1)

    def run(self) -> int:
        def on_term(signum: int, frame: Any) -> None:
            self.hook.close()
            self.kill(128 + signum)

        signal.signal(signal.SIGTERM, on_term)
        threading.Thread(target=self.down, name="proxy-down", daemon=True).start()
        up = threading.Thread(target=self.up, name="proxy-up", daemon=True)
        up.start()
        up.join()
        code = self.child.wait()
        self.hook.close()
        return code if code >= 0 else 128 - code


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m " + MODULE)
    parser.add_argument("--serializer", choices=("json", "msgpack"), default="json")
    parser.add_argument("--conf", default="{}", help="hook options as a JSON object")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    opts = parser.parse_args(args)
    argv = opts.command[1:] if opts.command[:1] == ["--"] else opts.command
    if not argv:
        parser.error("expected the component's command after --")
    try:
        conf = json.loads(opts.conf)
    except json.JSONDecodeError:
        parser.error(f"--conf: expected a JSON object, received {opts.conf!r}")
    try:
        return Proxy(argv, opts.serializer, conf).run()
    except ConformanceError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
