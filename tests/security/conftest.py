"""The security tests attack topologies built from the runtime tests' components, as a
second, unprivileged local user that the tests create (CI runs as root)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

ATTACKER = "hb-attacker"
USERADD_EXISTS = 9  # useradd's exit status for a user that exists
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "/usr/bin/python3"


class Attacker:
    """Runs standard-library Python as the unprivileged user, from `/`, with an empty
    environment: nothing of ours is readable to it that is not readable to any user."""

    def __init__(self, user: pwd.struct_passwd) -> None:
        self.user = user
        self.uid = user.pw_uid

    def start(self, code: str, *args: object) -> subprocess.Popen:
        return subprocess.Popen(
            [PYTHON, "-c", code, *map(str, args)], user=self.uid, group=self.user.pw_gid,
            extra_groups=[], cwd="/", env={"PATH": "/usr/bin:/bin"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, code: str, *args: object, timeout: float = 60) -> dict:
        """Run `code`, which prints one JSON object last; returns it."""
        proc = self.start(code, *args)
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0 or not out.strip():
            pytest.fail(f"the attacker's script failed ({proc.returncode}):\n{out}\n{err}")
        return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def attacker() -> Attacker:
    if os.geteuid() != 0:
        pytest.skip("creating the unprivileged attacker user needs root (CI runs as root)")
    try:
        user = pwd.getpwnam(ATTACKER)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                               "/usr/sbin/nologin", ATTACKER], check=False)
        if made.returncode not in (0, USERADD_EXISTS):  # another xdist worker's, meanwhile
            made.check_returncode()
        user = pwd.getpwnam(ATTACKER)
    return Attacker(user)
