"""The user-code floor: the components' own methods, nothing of pystorm's loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from heronbridge.conformance.bench.fused import MODULE

PROJECT = Path(__file__).parents[3] / "examples" / "storm_topologies" / "wordcount"


def test_the_floor_runs_the_project_components_own_methods(tmp_path):
    settings = {"workdir": str(tmp_path / "floor"), "project": str(PROJECT), "topology": None,
                "environment": None, "sink": ["count_bolt"], "seconds": 0.3, "warmup": 0.1,
                "options": {"wordcount.rounds": 10**9, "example.output.dir": str(tmp_path / "out")},
                "probe": False, "floor": True}
    done = subprocess.run([sys.executable, "-m", MODULE, json.dumps(settings)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["sink_tuples"] > 0 and result["cpu_s_per_million"] > 0
    # The count bolts' own process() ran: they wrote their counts.
    counted = [json.loads(line) for f in (tmp_path / "out").glob("count_bolt-*.jsonl")
               for line in f.open()]
    assert len(counted) >= result["sink_tuples"]
    assert {"word", "count"} <= set(counted[0])
