"""testkit.heronbridge(): a command forked from tests/warm_cli.py gives what the installed
command gives when run as a plain subprocess."""

from __future__ import annotations

import os
import subprocess

import psutil
import pytest
import testkit
from testkit import HERONBRIDGE, heronbridge


def test_a_forked_command_reads_its_folder_and_environment_and_answers_as_the_script(tmp_path):
    env = {**os.environ, "HERONBRIDGE_HOME": str(tmp_path / "home")}
    args = ("run", "missing.py", "-o", "novalue")  # a relative path: read from the folder
    plain = subprocess.run([HERONBRIDGE, *args], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    forked = heronbridge(*args, cwd=tmp_path, env=env)
    assert plain.returncode == 1, plain.stderr
    assert "-o expects KEY=VALUE, received 'novalue'" in plain.stderr
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)
    listed = heronbridge("list", cwd=tmp_path, env=env, text=False)
    assert listed.returncode == 0 and (tmp_path / "home").is_dir(), listed.stderr


def test_a_command_past_its_timeout_is_killed_with_what_it_wrote_and_the_next_one_runs(
        tmp_path):
    stuck = tmp_path / "stuck.py"  # `run` imports a topology file: this one never returns
    stuck.write_text("import time\nprint('importing', flush=True)\ntime.sleep(600)\n")
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        heronbridge("run", str(stuck), "--home", str(tmp_path / "home"), timeout=10)
    assert timed_out.value.stdout == "importing\n"
    server = psutil.Process(testkit._warm.process.pid)
    assert not [p for p in server.children() if p.status() != psutil.STATUS_ZOMBIE]
    assert heronbridge("--version").stdout.startswith("heronbridge ")


def test_an_environment_that_changes_how_python_starts_runs_the_command_afresh(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("print('started afresh')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert heronbridge("--version", env=env).stdout.startswith("started afresh\n")
