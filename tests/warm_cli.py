"""The installed `heronbridge` command with its imports done once: this process imports what
the console script imports (the CLI and what every parse of its arguments loads), then
forks a child per request that runs the command as the script would, in the request's
folder, environment and files for stdin, stdout and stderr; its exit status goes back.
A fork costs milliseconds where the imports cost about 1.5 CPU-seconds a command.
testkit.heronbridge() starts one per test process and speaks to it (JSON lines on two
pipes whose numbers are its arguments)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# As the console script has it: its own folder first on sys.path, not this one.
SCRIPT = str(Path(sys.executable).parent / "heronbridge")
sys.path[0] = str(Path(SCRIPT).parent)


def serve(requests: int, replies: int) -> dict | None:
    """Fork for each request; returns in the child, with its request."""
    with os.fdopen(requests) as inbox, os.fdopen(replies, "w") as outbox:
        for line in inbox:
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                return request  # leaving the `with` closes the pipes in the child
            print(json.dumps({"pid": pid}), file=outbox, flush=True)
            _, status = os.waitpid(pid, 0)
            print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), file=outbox,
                  flush=True)
    return None  # the test process went away


def become(request: dict) -> None:
    """This child's folder, environment, arguments and standard files: the request's."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [SCRIPT, *request["args"]]
    for fd, (path, flags) in enumerate(((request["stdin"], os.O_RDONLY),
                                        (request["stdout"], os.O_WRONLY),
                                        (request["stderr"], os.O_WRONLY))):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)


if __name__ == "__main__":
    from heronbridge.cli import build_parser, main

    build_parser()  # every command parses its arguments first: the verbs' lazy imports
    asked = serve(int(sys.argv[1]), int(sys.argv[2]))
    if asked is not None:
        become(asked)
        sys.exit(main())
