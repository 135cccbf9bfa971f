"""The vectors the JVM task host's tests check are the ones the Python runtime writes
today: frames and records byte for byte, and the task step's policy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.mark.parametrize("script", ["jvm_vectors.py", "step_vectors.py"])
def test_jvm_vectors_are_current(script: str) -> None:
    done = subprocess.run([sys.executable, str(SCRIPTS / script), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr + f"\nrun: python scripts/{script}")
