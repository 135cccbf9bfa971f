"""A heronpy TopologyBuilder script on the Spark standalone cluster, through `heronbridge
run --scheduler spark`: the in-process test's script (every grouping, ticks, at most once)
in two containers on the two workers, checked as in-process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import HERONBRIDGE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat" / "heronpy_compat"))
from test_heronpy_e2e import GROUPINGS, HERE, groupings_ran_as_storm_routes  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.integration]


@pytest.mark.compat("heronpy/Spout and Bolt", "heronpy/TopologyBuilder and Topology",
                    "heronpy/groupings", on="spark")
def test_a_topology_builder_script_on_the_spark_cluster(spark, zookeeper, tmp_path):
    script = tmp_path / "script"  # shipped to the workers, and paths in it relocated there
    script.mkdir()
    shutil.copy(HERE / "hp_components.py", script)
    (script / "groupings.py").write_text(GROUPINGS)
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(
        [HERONBRIDGE, "run", str(script / "groupings.py"), "-n", "groupings", "-t", "3",
         "-o", f"test.out={out}", "--scheduler", "spark", "--spark-master", spark.master,
         "--state", zookeeper.uri("heronpy"), "--home", str(tmp_path / "home"),
         "--containers", "2"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, check=False,
        env={**os.environ, "HERONBRIDGE_STATE": ""})
    assert done.returncode == 0, done.stderr[-4000:] + spark.logs(
        "work-*/**/container-*/**/*.log", tail=3000)
    groupings_ran_as_storm_routes(out)
