"""`heronbridge run` of a streamparse project with a JavaBolt, as a user runs it: the
classpath assembled by the CLI (the host's jar, Storm's, the project's), and a class
that is not on it named by topology, component and task."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from testkit import HERONBRIDGE

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

PROJECT = Path(__file__).resolve().parents[1] / "shims" / "project"


def test_run_names_a_java_bolt_whose_class_is_not_on_the_classpath(tmp_path, storm_home,
                                                                   java_jars):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    (project / "topologies" / "jvm.py").write_text("""
from parts.spouts import NumberSpout
from streamparse import JavaBolt, Topology


class Jvm(Topology):
    numbers = NumberSpout.spec()
    java = JavaBolt.spec(full_class_name="org.example.Bolt", args_list=[7], inputs=[numbers],
                         outputs=["x"])
""")
    result = subprocess.run(
        [HERONBRIDGE, "run", "--project", str(project), "-n", "jvm", "--home", str(storm_home),
         "--java-jars", str(java_jars), "-o", f"test.out={tmp_path / 'out'}",
         "-o", "heronbridge.restart.backoff.secs=0.2", "-t", "5"],
        capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"topology 'jvm', component 'java', task \d+: .*expected a class on the "
                     r"task's classpath, received 'org.example.Bolt'", result.stderr), \
        result.stderr
