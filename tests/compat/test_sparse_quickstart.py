"""`sparse quickstart`'s new project, as streamparse writes it, run by `heronbridge run`
with nothing changed: its word count counts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import HERONBRIDGE

pytestmark = pytest.mark.integration


@pytest.mark.compat("sparse/sparse quickstart")
def test_a_quickstart_project_runs_as_written(tmp_path):
    env = {**os.environ, "LEIN_ROOT": "1", "HERONBRIDGE_STATE": ""}  # sparse wants it as root
    made = subprocess.run([str(Path(sys.executable).parent / "sparse"), "quickstart", "demo"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert made.returncode == 0, made.stdout + made.stderr
    ran = subprocess.run([HERONBRIDGE, "run", "--project", "demo", "-t", "3", "--home",
                          str(tmp_path / "home")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [row] = [line for line in ran.stdout.splitlines() if "count_bolt" in line]
    tasks, emitted, executed, acked = (int(n.replace(",", "")) for n in
                                       re.findall(r"[\d,]+", row)[:4])
    assert tasks == 2 and executed > 0 and acked == executed, row
