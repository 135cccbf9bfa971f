"""Storm UI's REST API read by a consumer nobody here wrote: streamparse's own `sparse
stats`, `sparse worker_uptime` and `sparse slot_usage` code (streamparse 5.0.1, which
heronbridge depends on), pointed at `heronbridge ui` as at Storm's UI. It prints MISSING
for a field it asks for and does not find, and fails on a missing structure."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from testkit import wait_until

pytestmark = pytest.mark.integration

CLIENT = """
import sys, types
from packaging.version import parse

# streamparse's CLI modules import pkg_resources, which setuptools 81 removed; they use
# only its parse_version, and not in the functions run here.
sys.modules.setdefault("pkg_resources", types.SimpleNamespace(parse_version=parse))
from streamparse.cli.stats import display_stats
from streamparse.cli.worker_uptime import display_worker_uptime
from streamparse.cli.slot_usage import display_slot_usage

display_stats("ui")                                   # cluster, topologies, supervisors
display_stats("ui", topology_name="shown")            # topology page
for component in ("numbers", "work", "sink"):        # component pages
    display_stats("ui", topology_name="shown", component_name=component)
display_worker_uptime("ui")
display_slot_usage("ui")
"""
# What Storm 2.8 itself no longer sends, so streamparse prints MISSING against Storm too.
GONE_IN_STORM_2 = {"nimbusUptime"}


@pytest.mark.compat("sparse/sparse stats", "sparse/sparse slot_usage",
                    "sparse/sparse worker_uptime")
def test_streamparse_reads_every_field_it_reads_from_storm(served, tmp_path):
    wait_until(lambda: len(served.json("/ui/api/topology/shown")["tasks"]) == 4, 30,
               "metrics of every task")
    (tmp_path / "config.json").write_text(json.dumps({"envs": {"ui": {
        "nimbus": served.server.host, "use_ssh_for_nimbus": False,
        "ui.port": served.server.port}}}))
    done = subprocess.run([sys.executable, "-c", CLIENT], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    tables = _tables(done.stdout)
    missing = _missing(tables)
    assert missing == {("Cluster summary", c) for c in GONE_IN_STORM_2}, done.stdout
    assert {"Cluster summary", "Topology summary", "Supervisor summary", "Topology stats",
            "Spouts (All time)", "Bolt (All time)", "Component summary", "Spout stats",
            "Bolt stats", "Input stats (All time)", "Output stats (All time)",
            "Executors (All time)", "Worker Stats",
            "Slot (and Executor) Counts by Topology"} <= set(tables)
    _, rows = tables["Bolt (All time)"]
    assert {row[0] for row in rows if row[0]} == {"work", "sink"}  # (not wrapped lines)
    assert "ACTIVE" in done.stdout and "All time" in done.stdout
    assert "127.0.0.1" in done.stdout  # the workers' host, from executorStats


def _missing(tables: dict[str, tuple[list[str], list[list[str]]]]) -> set[tuple[str, str]]:
    """(table, column) of every cell streamparse printed as MISSING."""
    return {(title, column) for title, (header, rows) in tables.items()
            for row in rows for column, cell in zip(header, row, strict=False)
            if cell == "MISSING"}


def _tables(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """streamparse's Texttable output: `# Title` then a grid; later tables of the same
    title (one per component) are merged."""
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            continue
        if title is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        header, rows = tables.setdefault(title, (cells, []))
        if cells != header:
            rows.append(cells)
    return tables


# The fields the most used Prometheus exporter for Storm (storm_exporter.py) and the
# Datadog Storm check read, by route (their code is not on the package index, so the
# test names their fields instead of running them).
EXPORTER_FIELDS = {
    "topology/summary": ("topologies", ["name", "id", "uptimeSeconds", "tasksTotal",
                                        "workersTotal", "executorsTotal", "replicationCount",
                                        "requestedMemOnHeap", "requestedMemOffHeap",
                                        "requestedTotalMem", "requestedCpu",
                                        "assignedMemOnHeap", "assignedMemOffHeap",
                                        "assignedTotalMem", "assignedCpu"]),
}
TOPOLOGY_FIELDS = ["name", "debug", "status", "assignedCpu", "assignedMemOnHeap",
                   "assignedMemOffHeap", "assignedTotalMem", "requestedCpu",
                   "requestedMemOnHeap", "requestedMemOffHeap", "executorsTotal", "msgTimeout",
                   "replicationCount", "samplingPct", "tasksTotal", "uptimeSeconds",
                   "workersTotal"]
STATS_FIELDS = ["window", "transferred", "emitted", "completeLatency", "acked", "failed"]
SPOUT_FIELDS = ["spoutId", "executors", "emitted", "completeLatency", "transferred", "tasks",
                "acked", "failed", "errorLapsedSecs"]
BOLT_FIELDS = ["boltId", "processLatency", "capacity", "executeLatency", "executors", "tasks",
               "acked", "failed", "emitted", "executed", "transferred", "errorLapsedSecs"]
WORKER_FIELDS = ["host", "port", "supervisorId", "assignedCpu", "assignedMemOnHeap",
                 "assignedMemOffHeap", "executorsTotal", "uptimeSeconds", "componentNumTasks"]
CLUSTER_FIELDS = ["executorsTotal", "slotsFree", "slotsTotal", "slotsUsed", "supervisors",
                  "tasksTotal", "topologies", "availCpu", "availMem", "cpuAssignedPercentUtil",
                  "memAssignedPercentUtil", "totalCpu", "totalMem", "stormVersion"]
SUPERVISOR_FIELDS = ["host", "id", "slotsTotal", "slotsUsed", "uptimeSeconds", "totalCpu",
                     "totalMem", "usedCpu", "usedMem"]


def test_the_fields_prometheus_and_datadog_checks_read_are_there(served):
    for field in CLUSTER_FIELDS:
        assert field in served.json("/api/v1/cluster/summary"), field
    assert {"status", "host", "nimbusUpTimeSeconds"} <= set(
        served.json("/api/v1/nimbus/summary")["nimbuses"][0])
    assert set(SUPERVISOR_FIELDS) <= set(
        served.json("/api/v1/supervisor/summary")["supervisors"][0])
    for route, (key, fields) in EXPORTER_FIELDS.items():
        for entry in served.json(f"/api/v1/{route}")[key]:
            assert set(fields) <= set(entry), set(fields) - set(entry)
    topology_id = served.json("/api/v1/topology/summary")["topologies"][0]["id"]
    page = served.json(f"/api/v1/topology/{topology_id}?window=60")  # Datadog asks for 60
    assert set(TOPOLOGY_FIELDS) <= set(page)
    assert page["status"] == "ACTIVE"  # anything else is CRITICAL to Datadog
    for stats in page["topologyStats"]:
        assert set(STATS_FIELDS) <= set(stats)
    for spout in page["spouts"]:
        assert set(SPOUT_FIELDS) <= set(spout)
    for bolt in page["bolts"]:
        assert set(BOLT_FIELDS) <= set(bolt)
        float(bolt["capacity"]), float(bolt["executeLatency"])  # strings that parse
    for worker in page["workers"]:
        assert set(WORKER_FIELDS) <= set(worker)
    status, headers, _ = served.get(f"/api/v1/topology/{topology_id}")
    assert status == 200 and "application/json" in headers["Content-Type"]
