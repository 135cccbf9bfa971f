"""A multilang component under the tracing hook, as a process between Storm's side and
the component's own process:

    python -m heronbridge.conformance.trace.proxy --serializer json -- CMD ARG...

starts CMD as its child once the handshake has come (with the task's seed, see `seed`),
relays the protocol's messages both ways through a `TraceHook` and exits with the
child's exit code. Storm's side writes to a bolt while the bolt is
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
import time
from typing import Any

from heronbridge.runtime.scheduler.processes import die_with_parent
from heronbridge.shims.storm.protocol import framing

from .. import ConformanceError
from . import seed
from .hook import TraceHook

MODULE = "heronbridge.conformance.trace.proxy"
READ_SIZE = 1 << 16
IDLE_SECS = 0.005  # after answering a stopped spout's `next`


def proxy_argv(argv: list[str], serializer: str,
               conf: dict[str, Any] | None = None) -> list[str]:
    """The command line that runs `argv` under the proxy with this interpreter. `conf`:
    options for the hook that the handshake's conf will not carry (the runtime keeps its
    own `heronbridge.*` options from components; Storm shows them all)."""
    extra = ["--conf", json.dumps(conf, separators=(",", ":"))] if conf else []
    return [sys.executable, "-m", MODULE, "--serializer", serializer, *extra, "--", *argv]


class Frames:
    """The protocol's messages with the bytes each came as: a message the hook passes
    on unchanged is relayed as it came, not encoded again. JSON messages are found by
    their `end` line; msgpack ones (no such mark) are encoded again."""

    def __init__(self, serializer: str) -> None:
        self.frames = framing(serializer)
        self.encode = self.frames.encode
        self.json = serializer == "json"
        self.rest = b""

    def feed(self, chunk: bytes) -> list[tuple[Any, bytes | None]]:
        if not self.json:
            return [(msg, None) for msg in self.frames.feed(chunk)]
        data = self.rest + chunk if self.rest else chunk
        out, pos = [], 0
        while True:
            end = data.find(b"\nend\n", pos)
            if end < 0:
                break
            raw = data[pos:end + 5]
            pos = end + 5
            out += [(msg, raw) for msg in self.frames.feed(raw)]
        self.rest = data[pos:]
        return out

    def relay(self, msgs: list[Any], came: Any, raw: bytes | None) -> bytes:
        """The bytes for `msgs`, which the hook made of `came` (which arrived as `raw`)."""
        if raw is not None and len(msgs) == 1 and msgs[0] is came:
            return raw
        return b"".join(self.encode(m) for m in msgs)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Proxy:
    """The component starts once the handshake has come through the hook: the hook then
    knows the task, and so the seed its random numbers get (see `seed`). It starts from
    the main thread, which outlives the relays: the component dies with the thread that
    started it (PR_SET_PDEATHSIG)."""

    def __init__(self, argv: list[str], serializer: str, conf: dict[str, Any]) -> None:
        self.argv = argv
        self.serializer = serializer
        self.out_lock = threading.Lock()  # both directions answer Storm's side
        self.child: subprocess.Popen[bytes] | None = None
        self.hook = TraceHook(conf, exit_process=self.kill, seeded=self.start_child)

    def start_child(self, task_seed: int | None) -> None:
        env = dict(os.environ)
        if task_seed is not None:
            env = seed.child_env(task_seed, env)
        try:
            # If the proxy dies, even by SIGKILL, the component goes too.
            self.child = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=env,
                                          preexec_fn=die_with_parent())
        except OSError as exc:
            msg = f"cannot start {' '.join(self.argv)!r} under the tracing proxy: {exc}"
            raise ConformanceError(msg) from exc

    def kill(self, code: int = 1) -> None:
        """End the component hard, and the proxy with it (non-zero: it did not finish)."""
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
        os._exit(code)

    def _to_storm(self, data: bytes) -> None:
        if data:
            with self.out_lock:
                _write_all(1, data)

    def handshake(self, frames: Frames) -> list[tuple[Any, bytes | None]] | None:
        """Read up to the handshake and pass it on (the hook starts the component): the
        messages that came after it, or None when Storm's side went away first."""
        while True:
            chunk = os.read(0, READ_SIZE)
            if not chunk:
                return None
            msgs = frames.feed(chunk)
            if msgs:
                break
        self._down(msgs[:1], frames)
        return msgs[1:]

    def _down(self, msgs: list[tuple[Any, bytes | None]], frames: Frames) -> None:
        """Messages from Storm's side through the hook; one write each way."""
        to_child, to_storm = [], []
        answered = False
        for msg, raw in msgs:
            mine, back = self.hook.down(msg)
            if mine:
                to_child.append(frames.relay(mine, msg, raw))
            if back:
                to_storm.append(frames.relay(back, None, None))
                answered = answered or (not mine and self.hook.answering)
        if to_child:
            _write_all(self.child.stdin.fileno(), b"".join(to_child))
        self._to_storm(b"".join(to_storm))
        if answered:
            time.sleep(IDLE_SECS)  # as a spout with nothing to emit would

    def down(self, frames: Frames, early: list[tuple[Any, bytes | None]]) -> None:
        """Storm's side -> the component. EOF closes the component's stdin, as Storm's
        side going away would."""
        try:
            self._down(early, frames)
            while True:
                chunk = os.read(0, READ_SIZE)
                if not chunk:
                    break
                self._down(frames.feed(chunk), frames)
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
        frames = Frames(self.serializer)
        from_child = self.child.stdout.fileno()
        try:
            while True:
                chunk = os.read(from_child, READ_SIZE)
                if not chunk:
                    return
                self._to_storm(b"".join(frames.relay(self.hook.up(msg), msg, raw)
                                        for msg, raw in frames.feed(chunk)))
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
        frames = Frames(self.serializer)
        try:
            early = self.handshake(frames)
        except Exception as exc:
            self._fail(exc)
        if early is None:
            return 1  # Storm's side went away before the handshake
        threading.Thread(target=self.down, args=(frames, early), name="proxy-down",
                         daemon=True).start()
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
    return Proxy(argv, opts.serializer, conf).run()


if __name__ == "__main__":
    sys.exit(main())
