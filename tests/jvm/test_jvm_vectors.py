"""The frames and records the JVM task host's tests check byte for byte are the ones the
Python runtime writes today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "jvm_vectors.py"


def test_jvm_frame_vectors_are_current() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, (done.stdout + done.stderr +
                                  "\nrun: python scripts/jvm_vectors.py")
